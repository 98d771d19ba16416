"""The scaffolding of the special functions, and the special functions that more than one
library above names.

A special function here is a composition of ``autodiff.numpy`` operations wrapped in a
``custom_jvp`` with its exact derivative (``autodiff.scipy.special`` builds on the helpers
below: ``real_float``, ``real_only``, ``unary_special``). The modified Bessel functions of
the first kind of orders 0 and 1, plain and exponentially scaled, live at this layer
because ``numpy.i0`` is one of them; ``autodiff.scipy.special`` names all four. The
logistic sigmoid and its logarithm, ``softplus`` and ``log1mexp`` are ``autodiff.nn``'s
(``sigmoid``, ``log_sigmoid``, ...) and ``autodiff.scipy``'s (``special.expit``,
``special.log_expit``, the logistic and exponential distributions) and ``lax.logistic``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> round(float(anp.i0(1.0)), 12)
1.266065877752
>>> round(float(ad.grad(anp.i0)(1.0)), 12)             # I0' = I1
0.565159103992
"""
import math

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, user_source
from ..custom_derivatives import custom_jvp
from ..errors import DTypeError
from ._base import npfunc, asarray, as_float, dtype_of, float_type

__all__ = ["real_float", "real_only", "unary_special", "bessel_i0", "bessel_i1", "bessel_i0e",
           "bessel_i1e", "i0", "sigmoid", "softplus", "log_sigmoid", "log1mexp"]


def real_float(x):
    """``x`` as an array of its floating dtype; a complex ``x`` raises (``real_only``)."""
    x = asarray(x)
    real_only(x)
    dt = float_type(dtype_of(x))
    return x if dtype_of(x) == dt else anp.astype(x, dt)


def real_only(x):
    """The special functions (but wofz, erf, erfc, erfcx, ndtr) are real-only: a complex
    argument raises instead of running a real algorithm on it."""
    if dtype_of(x).kind == "c":
        raise DTypeError(f"this scipy.special function is implemented for real input only, got "
                         f"{dtype_of(x)}; of complex arguments autodiff has wofz, erf, erfc, erfcx "
                         f"and ndtr (pass the real part, anp.real(z), if that is what you meant)",
                         source=user_source())


def unary_special(cj, name, doc):
    """The user's function ``name`` of one real argument: through the ``custom_jvp`` ``cj``
    on traced values, ``cj``'s own body with floating-point warnings quieted on numpy input."""
    @npfunc(None)
    def f(x):
        x = real_float(x)
        if isinstance(x, Tracer):
            return cj(x)
        with np.errstate(all="ignore"):
            return cj.fun(x)
    f.__name__ = name
    f.__doc__ = doc
    return f


# ----------------------------------------------------------------------------
# modified Bessel functions I0, I1 (and exponentially scaled)
# ----------------------------------------------------------------------------

_BESSEL_SWITCH = 20.0


def _bessel_series(y, nu):
    """e^{-|x|}·I_ν(|x|) by the power series Σ (y²/4)^k / (k!(k+ν)!) (positive terms)."""
    q = anp.multiply(anp.multiply(y, y), 0.25)
    term = anp.ones_like(y)
    s = anp.ones_like(y)
    for k in range(1, 64):
        term = anp.multiply(term, anp.divide(q, float(k * (k + nu))))
        s = anp.add(s, term)
    if nu == 1:
        s = anp.multiply(s, anp.multiply(y, 0.5))
    return anp.multiply(s, anp.exp(anp.negative(y)))


def _bessel_asym(y, nu):
    """e^{-x} I_ν(x) ~ 1/√(2πx) Σ_k (-1)^k a_k(ν)/x^k, a_k = Π_{j≤k} (4ν² - (2j-1)²)/(8j)."""
    mu = 4.0 * nu * nu
    w = anp.divide(1.0, y)
    coef = 1.0
    s = anp.ones_like(y)
    p = anp.ones_like(y)
    for k in range(1, 30):
        coef *= -(mu - (2 * k - 1) ** 2) / (8.0 * k)
        p = anp.multiply(p, w)
        s = anp.add(s, anp.multiply(p, coef))
    return anp.divide(s, anp.sqrt(anp.multiply(y, 2 * math.pi)))


def _bessel_e(x, nu):
    y = anp.absolute(x)
    small = anp.less(y, _BESSEL_SWITCH)
    ys = anp.where(small, y, 1.0)
    yl = anp.where(small, _BESSEL_SWITCH, y)
    out = anp.where(small, _bessel_series(ys, nu), _bessel_asym(yl, nu))
    if nu == 1:
        out = anp.where(anp.less(x, 0.0), anp.negative(out), out)
    return out


def _i0e_body(x):
    return _bessel_e(x, 0)


def _i1e_body(x):
    return _bessel_e(x, 1)


def _i0_body(x):
    return anp.multiply(_bessel_e(x, 0), anp.exp(anp.absolute(x)))


def _i1_body(x):
    return anp.multiply(_bessel_e(x, 1), anp.exp(anp.absolute(x)))


_i0_cj, _i1_cj = custom_jvp(_i0_body), custom_jvp(_i1_body)
_i0e_cj, _i1e_cj = custom_jvp(_i0e_body), custom_jvp(_i1e_body)


def _i1_over_x(x, i1):
    # I1(x)/x → 1/2 at 0
    small = anp.less(anp.absolute(x), 1e-8)
    xs = anp.where(small, 1.0, x)
    return anp.where(small, 0.5, anp.divide(i1, xs))


@_i0_cj.defjvp
def _i0_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _i0_cj(x), anp.multiply(t, _i1_cj(x))                      # I0' = I1


@_i1_cj.defjvp
def _i1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    i1 = _i1_cj(x)
    return i1, anp.multiply(t, anp.subtract(_i0_cj(x), _i1_over_x(x, i1)))     # I1' = I0 - I1/x


@_i0e_cj.defjvp
def _i0e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _i0e_cj(x)
    return y, anp.multiply(t, anp.subtract(_i1e_cj(x), anp.multiply(anp.sign(x), y)))


@_i1e_cj.defjvp
def _i1e_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _i1e_cj(x)
    d = anp.subtract(anp.subtract(_i0e_cj(x), _i1_over_x(x, y)), anp.multiply(anp.sign(x), y))
    return y, anp.multiply(t, d)


bessel_i0 = unary_special(_i0_cj, "i0", """Modified Bessel function of the first kind, order 0 (``I0' = I1``).

>>> from autodiff.scipy.special import i0
>>> round(float(i0(1.0)), 12)
1.266065877752
""")
bessel_i1 = unary_special(_i1_cj, "i1", """Modified Bessel function of the first kind, order 1.

>>> from autodiff.scipy.special import i1
>>> round(float(i1(1.0)), 12)
0.565159103992
""")
bessel_i0e = unary_special(_i0e_cj, "i0e", """Exponentially scaled ``e^{-|x|} I0(x)`` (no overflow).

>>> from autodiff.scipy.special import i0e
>>> round(float(i0e(1000.0)), 10)
0.0126172405
""")
bessel_i1e = unary_special(_i1e_cj, "i1e", """Exponentially scaled ``e^{-|x|} I1(x)``.

>>> from autodiff.scipy.special import i1e
>>> round(float(i1e(1.0)), 10)
0.2079104153
""")


@npfunc(np.i0)
def i0(x):
    """Modified Bessel function of the first kind, order 0 (``numpy.i0``)."""
    return bessel_i0(x)


# ----------------------------------------------------------------------------
# the logistic function, softplus and their relatives
# ----------------------------------------------------------------------------

@npfunc(None)
def sigmoid(x):
    """Logistic function ``1 / (1 + exp(-x))``, stable for large ``|x|``."""
    x = asarray(x)
    x = P.convert(x, np.float64 if P.dtype_of(x).kind not in "fc" else P.dtype_of(x))
    return P.logistic_p.bind(x)


@npfunc(None)
def softplus(x):
    """``log(1 + exp(x))``: ``x + log1p(e^{-x})`` for x > 0, ``log1p(e^x)`` otherwise; both
    branches smooth, so every derivative is right at 0 too (``max(x, 0) + log1p(e^{-|x|})``
    has kinks that cancel only in the first derivative)."""
    x = asarray(x)
    pos = anp.greater(x, 0)
    xp = anp.where(pos, x, 0)
    xn = anp.where(pos, 0, x)
    return anp.where(pos, anp.add(xp, anp.log1p(anp.exp(anp.negative(xp)))), anp.log1p(anp.exp(xn)))


@npfunc(None)
def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large |x|."""
    return anp.negative(softplus(anp.negative(as_float(x))))


@npfunc(None)
def log1mexp(x):
    """``log(1 - e^{-x})`` for x > 0: ``log(-expm1(-x))`` below log 2, ``log1p(-e^{-x})`` above."""
    x = as_float(x)
    small = anp.less(x, np.log(2.0))
    xs = anp.where(small, x, 1.0)
    xl = anp.where(small, 1.0, x)
    return anp.where(small, anp.log(anp.negative(anp.expm1(anp.negative(xs)))), anp.log1p(anp.negative(anp.exp(anp.negative(xl)))))


