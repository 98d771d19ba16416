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
