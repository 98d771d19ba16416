"""Helpers of the ``autodiff.scipy.special`` modules (on top of the numpy layer's
``real_float``, ``real_only`` and ``unary_special``): broadcasting float arguments,
quiet evaluation on numpy input, Horner's rule, and the public face of a one-argument
``custom_jvp`` function that computes float16 in float32.

>>> import numpy as np
>>> from autodiff.scipy._special_base import horner
>>> float(horner(np.float64(2.0), [1.0, 0.0, -1.0]))        # x² - 1 at 2
3.0
"""
import numpy as np

from .. import numpy as anp
from ..core import Tracer
from ..numpy._base import npfunc, promote, dtype_of
from ..numpy._special_functions import real_float

__all__ = ["broadcast_float", "quiet_eval", "horner", "unary_with_float16"]


def broadcast_float(*xs):
    """The arguments as floats of one dtype, broadcast together; Python scalars stay weak
    (they do not promote float32 arrays)."""
    xs = promote(*[x if isinstance(x, (int, float)) and not isinstance(x, bool) else real_float(x) for x in xs],
                 to_float=True)
    return anp.broadcast_arrays(*xs)


def quiet_eval(fun, *xs):
    """Call ``fun`` on concrete inputs with floating-point warnings quieted."""
    if any(isinstance(x, Tracer) for x in xs):
        return fun(*xs)
    with np.errstate(all="ignore"):
        return fun(*xs)


def horner(x, coefs):
    """Σ coefs[i]·x^(n-i), highest power first."""
    p = anp.add(anp.multiply(x, coefs[0]), coefs[1])
    for c in coefs[2:]:
        p = anp.add(anp.multiply(p, x), c)
    return p


def unary_with_float16(cj):
    """The public face of a custom_jvp function of one float argument: traced values go
    through ``cj`` (one equation for every transform); concrete ones straight to its
    numpy body (no tracing); float16 is computed in float32."""
    @npfunc(None)
    def f(x):
        x = real_float(x)
        if dtype_of(x) == np.float16:
            return anp.astype(f(anp.astype(x, np.float32)), np.float16)
        if isinstance(x, Tracer):
            return cj(x)
        with np.errstate(all="ignore"):
            return cj.fun(x)
    f.__name__ = cj.fun.__name__.lstrip("_")
    return f
