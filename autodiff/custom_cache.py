"""Cached traces of the functions behind custom rules (``custom_vjp``, ``custom_jvp``,
``misc.fixed_points``).

Without ``jit`` every ``grad`` call retraces its function, and with it each custom
function's body and rules. Those traces are cached here by everything that decides what
they compute:

* the function: its code object, what its closure cells hold, its defaults and the
  globals its code names (see :func:`function_key`);
* the static (non-differentiated) arguments and keyword arguments, by value;
* the abstract values and the pytree structure of the traced inputs;
* the ``no_grad`` state.

A trace is only cached when that key can be made *by value*: closure cells and globals
holding Python numbers, strings, tuples of them, numpy scalars and dtypes, small numpy
arrays (by content), modules, classes and functions (keyed again the same way). Anything
else (a list, a dict, an object, a large array, a tracer) makes the key ``None`` and the
function is traced on every call, as before: a changed Python value can never reuse a
stale trace. Attributes read off a module or a class are not part of the key (as under
``jit``, rebinding ``mymodule.scale`` is not seen).

The traces are abstract (shapes and dtypes only), so one serves every value. A function
whose trace needs values (Python ``if``/``while`` on them) raises ``ConcretizationError``
when traced abstractly; that is remembered and it is traced with values each call.
Python side effects in a cached function (``print``) run when it is traced, not on every
call, as under ``jit``.

The flat rule callables a call binds (``fwd``/``bwd`` of a ``custom_vjp``, the rule of a
``custom_jvp``) are cached too, as :class:`SharedRule` objects, when the body and rules
came from cached abstract traces: every call with the same key binds the same objects, so
``grad``'s linearized and transposed programs of the enclosing function are reused as for
any other function. A ``bwd`` that cannot be traced abstractly (Python control flow on its
cotangents) then runs on each call's values, as before.

>>> import autodiff as ad, autodiff.numpy as anp
>>> from autodiff import custom_cache
>>> @ad.custom_vjp
... def f(x):
...     return anp.sin(x)
>>> f.defvjp(lambda x: (anp.sin(x), anp.cos(x)), lambda c, g: (c * g,))
>>> before = custom_cache.cache_info().hits
>>> g = ad.grad(lambda x: 2.0 * f(x))
>>> round(float(g(0.5)), 12), round(float(g(0.7)), 12)      # 2 cos x; the second call hits
(1.755165123781, 1.529684374569)
>>> custom_cache.cache_info().hits > before
True
"""
import functools
import types

import numpy as np

from .cache import ProgramCache
from .errors import ConcretizationError
from .source_info import is_internal_code
from .ir import ClosedJaxpr
from .closure_tables import code_global_names
from .tracing import Tracer
from .named_axes import scope_key

__all__ = ["function_key", "value_key", "cached_trace", "shared_rules", "SharedRule",
           "cache_info", "NEEDS_VALUES"]

# (kind, function key, static key, avals, treedef, grad state) -> (ClosedJaxpr, out_tree, extra)
# or NEEDS_VALUES
_CACHE = ProgramCache("custom_rules", "custom_rule_cache_size")

NEEDS_VALUES = "needs values"      # the marker of a function that branches on its values

_MAX_DEPTH = 4                     # functions reached through closures and globals
_SMALL_ARRAY = 64                  # arrays up to this many elements are keyed by content


class _Unkeyable(Exception):
    """A closure cell, default or global that cannot be keyed by value."""


_MISSING = ("missing",)
_EMPTY_CELL = ("empty cell",)


def _key(v, depth, seen):
    t = type(v)
    if t is float:
        return ("f", v.hex())                      # keeps 0.0 and -0.0 (and nan) apart
    if t is int or t is bool or t is str or t is bytes or v is None:
        return (t, v)
    if t is complex:
        return ("c", v.real.hex(), v.imag.hex())
    if t is tuple or t is frozenset:
        keys = tuple(_key(x, depth, seen) for x in v)
        return (t, frozenset(keys) if t is frozenset else keys)
    if isinstance(v, np.generic):
        return ("g", v.dtype.str, v.tobytes())
    if isinstance(v, np.dtype):
        return ("dt", v.str)
    if isinstance(v, np.ndarray):
        # content, not identity: an array changed in place gives a new key (and the cached
        # trace holds copies of its constants, see cached_trace)
        if v.size <= _SMALL_ARRAY and v.dtype.kind in "biufc":
            return ("a", v.shape, v.dtype.str, v.tobytes())
        raise _Unkeyable
    if isinstance(v, types.ModuleType):
        return ("module", v.__name__)
    if isinstance(v, type):
        return ("type", v)
    if callable(v):
        return _fn_key(v, depth + 1, seen)
    raise _Unkeyable


def _fn_key(fn, depth, seen):
    if fn.__class__ is types.FunctionType:
        code = fn.__code__
        internal = is_internal_code(code)
        if internal and not fn.__closure__ and not fn.__defaults__:
            return ("fn", fn)           # autodiff's own functions: their globals do not change
        if id(fn) in seen:
            return ("recursive", code)
        if depth > _MAX_DEPTH:
            raise _Unkeyable
        seen = seen | {id(fn)}
        cells = []
        for cell in fn.__closure__ or ():
            try:
                c = cell.cell_contents
            except ValueError:          # a cell not assigned yet
                cells.append(_EMPTY_CELL)
                continue
            cells.append(_key(c, depth, seen))
        glob = ()
        if not internal:                # (autodiff's closures: by what they close over)
            g = fn.__globals__
            # (the names' set is cached per code object, so its order is the same each call)
            glob = tuple([(n, _key(g[n], depth, seen)) if n in g else _MISSING
                          for n in code_global_names(code)])
        defaults = tuple(_key(d, depth, seen) for d in fn.__defaults__ or ())
        kwdefaults = tuple(sorted((k, _key(d, depth, seen))
                                  for k, d in (fn.__kwdefaults__ or {}).items()))
        return ("fn", code, fn.__module__, tuple(cells), glob, defaults, kwdefaults)
    # a function with custom derivative rules (custom_jvp, custom_vjp) names its parts
    parts = getattr(type(fn), "key_parts", None)
    if parts is not None:
        fun, rules = parts(fn)
        return ("custom", fn, _fn_key(fun, depth, seen),
                tuple(None if r is None else _fn_key(r, depth + 1, seen) for r in rules))
    if isinstance(fn, functools.partial):
        return ("partial", _fn_key(fn.func, depth + 1, seen),
                tuple(_key(a, depth, seen) for a in fn.args),
                tuple(sorted((k, _key(a, depth, seen)) for k, a in fn.keywords.items())))
    if isinstance(fn, (types.BuiltinFunctionType, np.ufunc)):
        return ("builtin", fn)
    raise _Unkeyable                    # bound methods, callable objects: their state is open


def function_key(fn):
    """A hashable key of what ``fn`` computes, or ``None`` when it cannot be keyed by value.

    >>> from autodiff.custom_cache import function_key
    >>> def make(scale):
    ...     return lambda x: scale * x
    >>> function_key(make(2.0)) == function_key(make(2.0)), function_key(make(2.0)) == function_key(make(3.0))
    (True, False)
    >>> function_key(make([2.0])) is None          # a list in the closure: not keyed
    True
    """
    try:
        return _fn_key(fn, 0, frozenset())
    except _Unkeyable:
        return None


def value_key(v):
    """A hashable key of the value ``v`` (a static argument), or ``None``; see the module."""
    try:
        return _key(v, 0, frozenset())
    except _Unkeyable:
        return None


def cached_trace(kind, key, trace, values_ok=True):
    """The cached result of ``trace()`` under ``(kind,) + key``.

    ``trace()`` traces abstractly and returns ``(closed_jaxpr, *extra)``. When it raises
    ``ConcretizationError`` the function needs values: that is remembered, and with
    ``values_ok`` (the caller can trace it with values instead) :data:`NEEDS_VALUES` is
    returned; without, the error propagates. With ``values_ok`` any other error of the
    abstract trace also returns :data:`NEEDS_VALUES` (the trace with values then shows the
    function's own behaviour on values, its errors included). A trace whose constants hold
    tracers (it closed over a traced value the key could not see) is returned, not cached.
    """
    full = (kind,) + key + scope_key()     # a collective's trace depends on the axis sizes
    try:
        hit = _CACHE.get(full)
        hashable = True
    except TypeError:                   # a treedef with unhashable aux data
        hit, hashable = None, False
    if hit is not None:
        return hit
    try:
        result = trace()
    except ConcretizationError:
        if hashable:
            _CACHE.put(full, NEEDS_VALUES)
        if values_ok:
            return NEEDS_VALUES
        raise
    except Exception:
        if not values_ok:
            raise
        if hashable:
            _CACHE.put(full, NEEDS_VALUES)
        return NEEDS_VALUES
    closed = result[0]
    if not hashable or any(isinstance(c, Tracer) for c in closed.consts):
        return result
    # the entry owns its constants: an array the function closed over may change in place
    # (a plain ndarray: np.array drops a subclass such as the tracing-time table views)
    closed = ClosedJaxpr(closed.jaxpr, [np.array(c) if isinstance(c, np.ndarray) else c
                                        for c in closed.consts])
    result = (closed,) + tuple(result[1:])
    _CACHE.put(full, result)
    return result


class SharedRule:
    """A rule callable (a custom function's ``fwd``/``bwd``/``jvp`` in flat form) that every
    call with the same key shares: what it computes depends only on that key, so a program
    holding it may be cached and reused by later calls (``api._params_cacheable`` accepts it;
    its identity, stable across calls, is its part of the program's key).

    >>> from autodiff.custom_cache import SharedRule
    >>> r = SharedRule(lambda xs: [2 * x for x in xs])
    >>> r([1.0, 2.0])
    [2.0, 4.0]
    """

    __slots__ = ("fn", "__weakref__")

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)

    def __repr__(self):
        return f"SharedRule({getattr(self.fn, '__qualname__', self.fn)!r})"


def shared_rules(kind, key, make):
    """The rules cached under ``(kind,) + key``; ``make()`` builds them (a tuple of
    callables, wrapped here in :class:`SharedRule`) the first time.

    Only for rules whose behaviour is decided by ``key`` (a cached, abstract trace of the
    body and rules, see :func:`cached_trace`): every call with that key then binds the same
    rule objects, and the programs it appears in (``grad``'s linearized and transposed
    programs) are cached like any other.
    """
    full = ("shared rules", kind) + key + scope_key()
    try:
        hit = _CACHE.get(full)
    except TypeError:                   # a treedef with unhashable aux data
        return make()
    if hit is None:
        hit = tuple(SharedRule(r) for r in make())
        _CACHE.put(full, hit)
    return hit


def cache_info():
    """Counters of the cache (``hits``, ``misses``, ``size``, ``capacity``, ...)."""
    return _CACHE.info()
