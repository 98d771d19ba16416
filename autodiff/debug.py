"""``ad.debug.print`` and ``ad.debug.callback``: look at values inside transformed code.

Eagerly and under ``grad``/``jvp``/``vjp``/``hessian`` without ``jit`` (where traced
values carry their numbers) the values are printed or passed to the callback as numpy
arrays, at each call, as in JAX:

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> def f(x):
...     ad.debug.print("x = {x}, sum = {}", anp.sum(x), x=x)
...     return anp.sum(x ** 2)
>>> g = ad.grad(f)(np.array([1.0, 2.0]))
x = [1. 2.], sum = 3.0

Under ``jit``, ``vmap`` and ``make_jaxpr`` the function is traced with shapes only, once
per signature, and the compiled kernel cannot call back into Python yet. There the
values do not exist: ``debug.print`` prints the shapes and dtypes once, at trace time,
and warns (:class:`DebugTraceWarning`) that it will not print at each call; ``callback``
raises :class:`~autodiff.errors.UnsupportedError`, since a silently skipped callback
would be worse. To see values, call the function without ``jit``.
"""
import functools
import warnings

import numpy as np

from .core import Tracer, is_concrete, user_source
from .errors import UnsupportedError
from .tree_util import tree_map, tree_leaves

__all__ = ["print", "callback", "DebugTraceWarning"]

_builtin_print = print
_warned = set()


class DebugTraceWarning(UserWarning):
    """``debug.print`` under an abstract trace (jit, vmap): printed once, with shapes."""


def _value(x):
    if isinstance(x, Tracer):
        return np.asarray(x.concrete_value("ad.debug"))
    return x


def _all_concrete(tree):
    return all(is_concrete(l) for l in tree_leaves(tree))


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - JAX's name
    """``print(fmt.format(*args, **kwargs))`` with the values of (traced) arrays.

    >>> import numpy as np, autodiff as ad
    >>> ad.debug.print("{a} and {b:.2f}", a=np.arange(2), b=np.float64(1.0 / 3))
    [0 1] and 0.33
    """
    if _all_concrete((args, kwargs)):
        args, kwargs = tree_map(_value, (args, kwargs))
        _builtin_print(fmt.format(*args, **kwargs))
        return
    where = str(user_source())
    shapes = tree_map(lambda l: l.aval.str_short() if isinstance(l, Tracer) else l, (args, kwargs))
    _builtin_print(fmt.format(*shapes[0], **shapes[1]))
    if where not in _warned:
        _warned.add(where)
        warnings.warn(DebugTraceWarning(
            f"ad.debug.print under jit/vmap (at {where}) printed the traced shapes once, while "
            f"tracing: compiled kernels cannot call back into Python yet, so it will not print "
            f"values at each call. Call the function without jit to see them."), stacklevel=2)


def callback(fn, *args, ordered=False, **kwargs):
    """Call ``fn(*args, **kwargs)`` with numpy values, for its side effects.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> seen = []
    >>> _ = ad.grad(lambda x: (ad.debug.callback(seen.append, x), anp.sum(x * x))[1])(np.ones(2))
    >>> seen
    [array([1., 1.])]
    """
    if not _all_concrete((args, kwargs)):
        raise UnsupportedError(
            f"ad.debug.callback({getattr(fn, '__name__', fn)}) under jit/vmap/make_jaxpr: the "
            f"values exist only when the compiled kernel runs, and kernels cannot call back "
            f"into Python yet. Call the function without jit, or return the values.",
            source=user_source())
    args, kwargs = tree_map(_value, (args, kwargs))
    fn(*args, **kwargs)


@functools.wraps(breakpoint)
def breakpoint(*args, **kwargs):  # noqa: A001
    """Python's ``breakpoint()``; traced values can be inspected with ``np.asarray`` where
    they are concrete (outside ``jit``)."""
    import builtins
    return builtins.breakpoint(*args, **kwargs)
