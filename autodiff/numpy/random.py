"""``anp.random`` is numpy's stateful ``numpy.random``: concrete draws, numpy's numbers.

A stateful draw cannot be traced: under ``jit`` (or ``vmap``, ``make_jaxpr``: any
abstract trace) it happens once, while tracing, and its numbers are frozen into the
program as constants, so every later call returns the same ones. Such a call warns, once
per source line, naming the line and :mod:`autodiff.random` (functional keys, traced
like any other computation) as the fix. Outside abstract traces nothing changes.

>>> import warnings, numpy as np, autodiff as ad, autodiff.numpy as anp
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     f = ad.jit(lambda x: x + anp.random.normal(size=2))
...     _ = f(np.zeros(2))
>>> "ad.random" in str(w[0].message)
True
"""
import functools
import warnings

import numpy.random as _npr
from numpy.random import *  # noqa: F401,F403
from numpy.random import Generator, RandomState, SeedSequence, get_state, set_state, seed  # noqa: F401

from ..core import trace_state, user_source


class FrozenRandomWarning(UserWarning):
    """A ``numpy.random`` draw made while tracing abstractly: it is frozen into the program."""


_NOT_DRAWS = {"seed", "get_state", "set_state"}
_warned = set()


def _abstract_trace_active():
    return any(not t.concrete for t in trace_state.stack)


def _warn_if_tracing(name):
    if trace_state.stack and _abstract_trace_active():
        where = str(user_source())
        if where not in _warned:
            _warned.add(where)
            warnings.warn(FrozenRandomWarning(
                f"anp.random.{name} (numpy's stateful generator) was called while "
                f"tracing (jit/vmap/make_jaxpr): its numbers are drawn once and frozen into "
                f"the program, so every call returns the same ones. Use ad.random with a key "
                f"argument instead, e.g. ad.random.normal(key, shape) with "
                f"key = ad.random.key(seed) split per call (at {where})."), stacklevel=3)


def _guard(name, fn):
    @functools.wraps(fn)
    def draw(*args, **kwargs):
        _warn_if_tracing(name)
        return fn(*args, **kwargs)
    return draw


class _GuardedGenerator(Generator):
    """numpy's ``Generator`` (same bit generator, same numbers) whose draws warn when
    made while tracing abstractly."""

    def __getattribute__(self, name):
        attr = super().__getattribute__(name)
        if not name.startswith("_") and callable(attr) and name not in ("spawn",):
            _warn_if_tracing(f"default_rng().{name}")
        return attr


for _name in _npr.__all__:
    _obj = getattr(_npr, _name)
    if callable(_obj) and not isinstance(_obj, type) and _name not in _NOT_DRAWS:
        globals()[_name] = _guard(_name, _obj)
del _name, _obj


def default_rng(seed=None):
    """``numpy.random.default_rng``: the same generator and numbers; its draws warn when
    made while ``jit``/``vmap`` trace (they would be frozen into the program)."""
    return _GuardedGenerator(_npr.default_rng(seed).bit_generator)


# ----------------------------------------------------------------------------
# numpy.random itself (not anp.random) in a function jit traces: found in its code
# ----------------------------------------------------------------------------

_NOT_DRAW_ATTRS = _NOT_DRAWS | {"Generator", "RandomState", "SeedSequence", "BitGenerator",
                                "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "spawn",
                                "bit_generator"}
_LIBRARIES = ("autodiff", "numpy", "scipy", "jax", "numba")


def _is_rng(obj):
    # anp.random.default_rng's generators warn by themselves, at the draw
    return isinstance(obj, (RandomState, Generator)) and not isinstance(obj, _GuardedGenerator)


def _draw_name(owner, name):
    """``"numpy.random.<name>"`` if ``owner.<name>`` is a stateful draw, else None."""
    if name.startswith("_") or name in _NOT_DRAW_ATTRS:
        return None
    if owner is _npr:
        return f"numpy.random.{name}"
    if _is_rng(owner):
        return f"{type(owner).__name__}.{name}"
    return None


def _scan_code(code, globals_, cells, found, seen, depth):
    import dis
    import types
    if code in seen:
        return
    seen.add(code)
    prev, line = None, code.co_firstlineno
    for ins in dis.get_instructions(code):
        pos = getattr(ins, "positions", None)
        if pos is not None and pos.lineno is not None:
            line = pos.lineno
        elif ins.starts_line:
            line = ins.starts_line
        op = ins.opname
        if op in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"):
            name = ins.argval
            obj = cells.get(name) if op.endswith("DEREF") else globals_.get(name)
            owner = getattr(obj, "__self__", None)     # from numpy.random import normal
            if callable(obj) and _is_rng(owner) and _draw_name(owner, obj.__name__):
                found.append((code.co_filename, line, f"numpy.random.{obj.__name__}"))
            if isinstance(obj, types.FunctionType) and depth < 3 and not (
                    getattr(obj, "__module__", None) or "").startswith(_LIBRARIES):
                _scan_function(obj, found, seen, depth + 1)     # a helper it calls
            prev = obj if (obj is _npr or isinstance(obj, types.ModuleType)
                           or _is_rng(obj)) else None
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and prev is not None:
            what = _draw_name(prev, ins.argval)
            if what is not None:
                found.append((code.co_filename, line, what))
            nxt = getattr(prev, ins.argval, None) if isinstance(prev, types.ModuleType) else None
            prev = nxt if (nxt is _npr or _is_rng(nxt)) else None
        elif op not in ("CACHE", "EXTENDED_ARG", "PUSH_NULL", "PRECALL", "NOP"):
            prev = None
    for c in code.co_consts:
        if isinstance(c, type(code)):
            _scan_code(c, globals_, {}, found, seen, depth)


def _scan_function(fn, found, seen, depth=0):
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    cells = {}
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            cells[name] = cell.cell_contents
        except ValueError:                  # an empty cell
            pass
    _scan_code(code, getattr(fn, "__globals__", {}), cells, found, seen, depth)


def warn_numpy_random_calls(fun):
    """Warn (``FrozenRandomWarning``, once per line) for each use of ``numpy.random`` (or a
    numpy ``Generator`` / ``RandomState``) that the code of ``fun``, the functions nested in
    it and the user helpers it names would run while ``jit`` traces it: the draw would be
    made once and frozen into the compiled program. ``jit`` calls this on each new trace.

    >>> import warnings, numpy as np, autodiff as ad
    >>> def noisy(x):
    ...     return x + np.random.normal(size=2)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     _ = ad.jit(noisy)(np.zeros(2))
    >>> "numpy.random.normal" in str(w[0].message) and "ad.random" in str(w[0].message)
    True
    """
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = getattr(fun, "__func__", fun)
    found = []
    try:
        _scan_function(fun, found, set())
    except Exception:                   # an unusual code object: no warning, never a failure
        return
    for filename, line, what in found:
        where = f"{filename}:{line}"
        if where in _warned:
            continue
        _warned.add(where)
        warnings.warn_explicit(FrozenRandomWarning(
            f"{what} (numpy's stateful generator) is called in a function traced by jit: its "
            f"numbers are drawn once, while tracing, and frozen into the program, so every "
            f"call returns the same ones. Use ad.random with a key argument instead, e.g. "
            f"ad.random.normal(key, shape) with key = ad.random.key(seed) split per call "
            f"(at {where})."), FrozenRandomWarning, filename, line)
