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

Under ``jit``, ``vmap`` and ``make_jaxpr`` the values do not exist while tracing, so the
call becomes a ``debug_callback`` equation (effectful: never removed as dead code, kept in
program order) that runs wherever the program runs: on the interpreter, and inside the
compiled kernel through a Numba object-mode call back into Python; under ``vmap`` once
per batch element.
"""
import functools

import numpy as np

from .cache import ProgramCache
from .core import Tracer, is_concrete
from .tree_util import tree_map, tree_leaves

__all__ = ["print", "callback", "DebugTraceWarning"]

_builtin_print = print


class DebugTraceWarning(UserWarning):
    """Kept for code that filters it: ``debug.print`` no longer falls back to printing
    shapes at trace time (it prints values at every call, inside ``jit`` too)."""


def _value(x):
    if isinstance(x, Tracer):
        return np.asarray(x.concrete_value("ad.debug"))
    return x


def _all_concrete(tree):
    return all(is_concrete(l) for l in tree_leaves(tree))


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - JAX's name
    """``print(fmt.format(*args, **kwargs))`` with the values of (traced) arrays, at every
    call: eagerly, under ``grad``/``vmap`` (once per batch element) and inside ``jit``.

    >>> import numpy as np, autodiff as ad
    >>> ad.debug.print("{a} and {b:.2f}", a=np.arange(2), b=np.float64(1.0 / 3))
    [0 1] and 0.33
    """
    callback(_printer(fmt), *args, ordered=ordered, **kwargs)


# format string -> its printer (autodiff.cache, listed as "debug.print")
_printers = ProgramCache("debug.print", "debug_print_cache_size")


def _printer(fmt):
    # one function object per format string: equations of equal traces stay equal (the
    # printer is a param of the callback equation), so jit's and linearize's caches hit
    p = _printers.get(fmt)
    if p is None:
        with _printers.lock:             # two threads must get the same function
            p = _printers.table.get(fmt)
            if p is None:
                def p(*args, **kwargs):
                    _builtin_print(fmt.format(*args, **kwargs))
                p.__name__ = "debug.print"
                _printers.put(fmt, p)
    return p


def callback(fn, *args, ordered=False, **kwargs):
    """Call ``fn(*args, **kwargs)`` with numpy values, for its side effects, wherever the
    program runs: eagerly and under ``grad`` at once; under ``jit`` each time the compiled
    kernel (or, on a first call, the interpreter) reaches it; under ``vmap`` once per batch
    element. Calls run in program order (``ordered`` is accepted: they always are).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> seen = []
    >>> _ = ad.grad(lambda x: (ad.debug.callback(seen.append, x), anp.sum(x * x))[1])(np.ones(2))
    >>> seen
    [array([1., 1.])]
    >>> f = ad.jit(lambda x: (ad.debug.callback(seen.append, x * 2), x + 1)[1])
    >>> _ = f(np.ones(2)); _ = f(np.zeros(2))
    >>> seen[1:]
    [array([2., 2.]), array([0., 0.])]
    """
    if _all_concrete((args, kwargs)):
        args, kwargs = tree_map(_value, (args, kwargs))
        fn(*args, **kwargs)
        return
    from .callback import debug_callback
    debug_callback(fn, *args, **kwargs)


@functools.wraps(breakpoint)
def breakpoint(*args, **kwargs):  # noqa: A001
    """Python's ``breakpoint()``; traced values can be inspected with ``np.asarray`` where
    they are concrete (outside ``jit``)."""
    import builtins
    return builtins.breakpoint(*args, **kwargs)
