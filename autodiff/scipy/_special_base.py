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


def per_order(fun, name, n, x):
    """``fun(k, x)`` for an array of integer orders ``n`` (scipy's and JAX's broadcasting of
    ``polygamma(n, x)``, ``expn(n, x)``): one evaluation per distinct order, chosen
    elementwise; a non-integer order gives nan, as scipy's. ``n`` must be concrete.

    >>> import numpy as np
    >>> from autodiff.scipy.special import polygamma
    >>> polygamma(np.array([0, 1]), 1.0).round(6)      # -γ, π²/6
    array([-0.577216,  1.644934])
    """
    if isinstance(n, Tracer):
        from ..core import user_source
        from ..errors import UnsupportedError
        raise UnsupportedError(f"{name}: the order n must be concrete (an integer or an array "
                               f"of integers), not a traced value", source=user_source())
    n = np.asarray(n)
    shape = np.broadcast_shapes(n.shape, np.shape(x))
    ok = np.isfinite(n) & (n == np.floor(n)) if n.dtype.kind == "f" else np.ones(n.shape, bool)
    out = None
    for k in np.unique(n[ok]):
        r = fun(int(k), x)
        out = r if out is None else anp.where(np.equal(n, k), r, out)
    if out is None:
        out = anp.multiply(x, np.nan)
    else:
        out = anp.where(ok, out, np.nan) if not ok.all() else out
    return anp.broadcast_to(out, shape)
