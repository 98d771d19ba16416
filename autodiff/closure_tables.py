"""Closed-over numpy arrays indexed by traced values.

numpy's ``ndarray.__getitem__`` (C, not overridable) converts an index object with
``__index__`` and, when that fails, with ``__array__``; both must produce real numbers,
and its result is always an ndarray. So ``table[i]`` for a plain numpy ``table`` and a
traced ``i`` can never return a traced value. Two routes make it work anyway:

* concrete traces (grad/jvp/vjp without jit): an integer tracer converts to its value
  (``Tracer.__index__`` / ``__array__``): integers carry no derivative, and the table
  is a constant, so the entries are the right constant;
* every trace: while a user function is traced, the numpy arrays in its closure cells
  and the module globals its code names are replaced by :class:`TableView` s (a view of
  the same memory whose ``__getitem__`` sends a traced index to the numpy layer's gather),
  and put back afterwards (:func:`swap_in_table_views`, :func:`restore_tables`, called
  by ``tracing.trace_flat``). That covers lookup tables, images and grids read inside
  ``jit``, ``fori_loop``/``scan``/``while_loop`` bodies and ``vmap``. Arrays reached
  another way (an attribute, a dict entry, a non-differentiated argument under jit)
  stay plain, and their error names ``anp.take``. (Another thread running the same
  function untraced meanwhile sees the view, which behaves as the array itself.)

>>> import numpy as np, autodiff as ad
>>> table = np.array([10.0, 20.0, 30.0])
>>> ad.jit(lambda i: table[i] * 2.0)(np.int64(1))
np.float64(40.0)
"""
import functools
import itertools
import types

import numpy as np

from ._tracer_methods import ArrayMethods, array_getitem
from .avals import _VALID_KINDS
from .cache import ProgramCache
from .source_info import is_internal_file

__all__ = ["TableView", "plain_array", "index_has_tracer", "table_view", "code_names_cache",
           "code_global_names", "swap_in_table_views", "restore_tables"]


class TableView(np.ndarray):
    """A view of a user's numpy array, live only while a function that closes over it is
    traced: indexing it by a traced value records a gather; every other use is numpy's
    (results are plain ndarrays, writes go to the user's array)."""

    def __getitem__(self, idx):
        base = self.__dict__.get("_ad_base")
        if base is None:
            base = self.view(np.ndarray)
        if index_has_tracer(idx):
            return array_getitem(base, idx)
        return base[idx]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(plain_array(x) for x in inputs)
        if kwargs.get("out") is not None:
            kwargs["out"] = tuple(plain_array(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        args = tuple(plain_array(x) for x in args)
        kwargs = {k: plain_array(v) for k, v in kwargs.items()}
        for x in itertools.chain(args, kwargs.values()):
            if isinstance(x, ArrayMethods):
                # a traced operand numpy's dispatcher does not consult (np.take's indices)
                return x.__array_function__(func, types, args, kwargs)
        return func(*args, **kwargs)

    def __reduce__(self):
        return plain_array(self).__reduce__()


def plain_array(x):
    """The user's array behind a :class:`TableView` (or an array type that is plain on
    output); lists and tuples of them element by element; anything else as it is."""
    if isinstance(x, TableView):
        base = x.__dict__.get("_ad_base")
        return base if base is not None else x.view(np.ndarray)
    if getattr(type(x), "_ad_plain_on_output", False):    # autodiff.numpy's FreshArray
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)) and any(isinstance(e, TableView) for e in x):
        return type(x)(plain_array(e) for e in x)
    return x


def index_has_tracer(idx):
    """Whether an index (a tracer, or a tuple/list holding one) is traced."""
    if isinstance(idx, ArrayMethods):
        return True
    if isinstance(idx, (tuple, list)):
        return any(index_has_tracer(i) for i in idx)
    return False


def table_view(a):
    """A :class:`TableView` of ``a``, remembering ``a`` as its base."""
    v = a.view(TableView)
    v.__dict__["_ad_base"] = a
    return v


# id(code object) -> (the code object, the global names it or a nested function reads);
# keyed by id as source_info's code cache (a code object's hash is costly), the entry
# holding the code object so the id is not reused while it lives
code_names_cache = ProgramCache("source", "source_cache_size")
_code_names_get = code_names_cache.table.get


def code_global_names(code):
    """The global names ``code`` or a function nested in it reads (cached per code object)."""
    entry = _code_names_get(id(code))
    if entry is not None and entry[0] is code:
        return entry[1]
    found = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            found |= code_global_names(c)
    names = frozenset(found)
    code_names_cache.misses += 1
    code_names_cache.put(id(code), (code, names))
    return names


def _liftable(x):
    return type(x) is np.ndarray and x.ndim > 0 and x.dtype.kind in _VALID_KINDS


def swap_in_table_views(fun):
    """Replace the numpy arrays ``fun`` (a user function, found through the closures of
    autodiff's own wrappers) closes over or names as globals by ``TableView`` s.
    Returns the undo list ``[(setter, original, view)]``."""
    undo = []
    seen = set()
    stack = [(fun, 0)]
    while stack:
        f, depth = stack.pop()
        if id(f) in seen or depth > 6:
            continue
        seen.add(id(f))
        if isinstance(f, functools.partial):
            stack.append((f.func, depth + 1))
            continue
        f = getattr(f, "__func__", f)                  # bound methods
        if not isinstance(f, types.FunctionType):
            f = getattr(f, "__wrapped__", None)
            if f is not None:
                stack.append((f, depth + 1))
            continue
        code = f.__code__
        user = not is_internal_file(code.co_filename)
        for cell in f.__closure__ or ():
            try:
                x = cell.cell_contents
            except ValueError:                          # an empty cell (not yet assigned)
                continue
            if user and _liftable(x):
                v = table_view(x)
                cell.cell_contents = v
                undo.append((cell, None, x, v))
            elif callable(x) and not isinstance(x, type):
                stack.append((x, depth + 1))
        if user:
            g = f.__globals__
            for name in code_global_names(code):
                x = g.get(name)
                if _liftable(x):
                    v = table_view(x)
                    g[name] = v
                    undo.append((g, name, x, v))
        w = f.__dict__.get("__wrapped__")
        if w is not None:
            stack.append((w, depth + 1))
    return undo


def restore_tables(undo):
    """Put back the arrays :func:`swap_in_table_views` replaced, unless the function rebound
    a name or cell meanwhile."""
    for holder, name, orig, view in reversed(undo):
        if name is None:
            if holder.cell_contents is view:        # unless the function rebound it
                holder.cell_contents = orig
        elif holder.get(name) is view:
            holder[name] = orig
