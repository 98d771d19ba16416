"""``scipy.special`` functions, differentiable to any order, without new primitives.

Each function is a composition of ``autodiff.numpy`` operations (rational and series
approximations evaluated with ``where`` branches), wrapped in :class:`ad.custom_jvp`
with its exact derivative — d erf = 2/√π·e^{-x²}, d gammaln = digamma, d digamma =
polygamma(1, ·), d polygamma(n, ·) = polygamma(n+1, ·) — itself such a composition.
So ``jit``, ``vmap`` and every transform get them for free, and no derivative ever
passes through an approximation's branches.

Accuracy (float64, against scipy): erf/erfc/ndtr ≲ 2e-15 relative; gammaln, digamma
and polygamma ≲ 3e-14 relative away from their zeros (absolute error ≲ 3e-14 near
them); polygamma(n ≥ 2, x) is accurate for x > 0 only.

>>> import numpy as np, autodiff as ad
>>> from autodiff.scipy import special
>>> round(float(special.gammaln(5.0)), 12)            # log 4!
3.178053830348
>>> round(float(ad.grad(special.gammaln)(1.0)), 12)   # digamma(1) = -γ
-0.577215664902
"""
import math

import numpy as np

from .. import numpy as anp
from ..core import Tracer
from ..custom_derivatives import custom_jvp
from ..numpy._base import npfunc, asarray, dtype_of, float_type, promote

__all__ = ["erf", "erfc", "ndtr", "log_ndtr", "gammaln", "gamma", "digamma", "psi",
           "polygamma", "betaln", "xlogy", "xlog1py", "expit", "logit", "logsumexp",
           "softmax", "log_softmax"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------

def _float(x):
    x = asarray(x)
    from ._special_more import _real_only
    _real_only(x)
    dt = float_type(dtype_of(x))
    return x if dtype_of(x) == dt else anp.astype(x, dt)


def _horner(x, coefs):
    """Σ coefs[i]·x^(n-i), highest power first."""
    p = anp.add(anp.multiply(x, coefs[0]), coefs[1])
    for c in coefs[2:]:
        p = anp.add(anp.multiply(p, x), c)
    return p


def _unary(cj):
    """The public face of a custom_jvp function of one float argument: traced values go
    through ``cj`` (one equation for every transform); concrete ones straight to its
    numpy body (no tracing); float16 is computed in float32."""
    @npfunc(None)
    def f(x):
        x = _float(x)
        if dtype_of(x) == np.float16:
            return anp.astype(f(anp.astype(x, np.float32)), np.float16)
        if isinstance(x, Tracer):
            return cj(x)
        with np.errstate(all="ignore"):
            return cj.fun(x)
    f.__name__ = cj.fun.__name__.lstrip("_")
    return f


def _split_square(x):
    """x² = hi + lo exactly (Veltkamp split of x): e^{-x²} = e^{-hi}·e^{-lo} then keeps
    full relative accuracy for large x, where rounding x² would cost x²·ε."""
    c = anp.multiply(x, 134217729.0 if dtype_of(x) == np.float64 else 4097.0)
    h = anp.subtract(c, anp.subtract(c, x))
    l = anp.subtract(x, h)
    return anp.multiply(h, h), anp.add(anp.multiply(anp.multiply(h, l), 2.0), anp.multiply(l, l))


# ----------------------------------------------------------------------------
# erf, erfc, ndtr, log_ndtr
# ----------------------------------------------------------------------------

# erfc(z) = t·exp(-z² + g(s)) for z ≥ 0, t = 2/(2+z), s = (2-z)/(2+z) ∈ (-1, 1]; g is
# smooth on [-1, 1] and is the Chebyshev series below (coefficients computed for this
# module by interpolation at 60 Chebyshev nodes in 40-digit arithmetic; max error 2e-16).
_G_CHEB = [
    -0.6513268598908547, 0.6419697923564902, 0.019476473204185836, -0.009561514786808632,
    -0.0009465953444820369, 0.00036683949785276145, 4.252332480690777e-05,
    -2.0278578112534242e-05, -1.6242900046470256e-06, 1.3036558355805232e-06,
    1.5626441722066142e-08, -8.523809591492654e-08, 6.5290544390988515e-09,
    5.059343495551469e-09, -9.91364156493033e-10, -2.273651222931836e-10,
    9.646791102015527e-11, 2.3940380830391146e-12, -6.886027526497553e-12,
    8.944879273090725e-13, 3.130921399342958e-13, -1.1270822361367252e-13,
    3.810905255189232e-16, 7.106097613609237e-15, -1.5230282014571043e-15,
    -9.457494571291233e-17, 1.210237189224279e-16, -2.816663087747177e-17]

# erf(x)/x = 2/√π Σ (-1)^n x^{2n} / (n! (2n+1)) for |x| < 1/2 (14 terms: < 1e-18)
_ERF_TAYLOR = [_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(13, -1, -1)]


def _g(s):
    """Clenshaw evaluation of Σ c_k T_k(s)."""
    s2 = anp.multiply(s, 2.0)
    b1, b2 = anp.full_like(s, _G_CHEB[-1]), 0.0
    for c in _G_CHEB[-2:0:-1]:
        b1, b2 = anp.add(anp.subtract(anp.multiply(s2, b1), b2), c), b1
    return anp.add(anp.subtract(anp.multiply(s, b1), b2), _G_CHEB[0])


def _t_s(z):
    d = anp.add(z, 2.0)
    return anp.divide(2.0, d), anp.divide(anp.subtract(2.0, z), d)


def _erfc_nonneg(z, sq_hi, sq_lo):
    """erfc(z) for 0 ≤ z ≤ 40, given z² = sq_hi + sq_lo."""
    t, s = _t_s(z)
    return anp.multiply(anp.multiply(t, anp.exp(anp.negative(sq_hi))),
                        anp.exp(anp.subtract(_g(s), sq_lo)))


def _erfc_abs(x):
    """erfc(|x|) (0 beyond |x| = 40, where it underflows anyway)."""
    z = anp.minimum(anp.abs(x), 40.0)
    hi, lo = _split_square(z)
    return _erfc_nonneg(z, hi, lo)


def _erf_body(x):
    small = anp.less(anp.abs(x), 0.5)
    xs = anp.where(small, x, 0.0)
    taylor = anp.multiply(xs, _horner(anp.multiply(xs, xs), _ERF_TAYLOR))
    e = _erfc_abs(x)
    big = anp.where(anp.less(x, 0.0), anp.subtract(e, 1.0), anp.subtract(1.0, e))
    return anp.where(small, taylor, big)


def _erfc_body(x):
    e = _erfc_abs(x)
    return anp.where(anp.less(x, 0.0), anp.subtract(2.0, e), e)


def _d_erf(x):
    return anp.multiply(anp.exp(anp.negative(anp.multiply(x, x))), _TWO_OVER_SQRT_PI)


_erf_cj = custom_jvp(_erf_body)
_erfc_cj = custom_jvp(_erfc_body)


@_erf_cj.defjvp
def _erf_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _erf_cj(x), anp.multiply(t, _d_erf(x))


@_erfc_cj.defjvp
def _erfc_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _erfc_cj(x), anp.negative(anp.multiply(t, _d_erf(x)))


def _ndtr_body(x):
    # ndtr(x) = erfc(-x/√2)/2; x²/2 split exactly from x (halving is exact)
    ax = anp.minimum(anp.abs(x), 57.0)
    hi, lo = _split_square(ax)
    e = _erfc_nonneg(anp.multiply(ax, _SQRT_HALF), anp.multiply(hi, 0.5), anp.multiply(lo, 0.5))
    half = anp.multiply(e, 0.5)
    return anp.where(anp.less(x, 0.0), half, anp.subtract(1.0, half))


def _phi(x):
    return anp.multiply(anp.exp(anp.multiply(anp.multiply(x, x), -0.5)), _INV_SQRT_2PI)


_ndtr_cj = custom_jvp(_ndtr_body)


@_ndtr_cj.defjvp
def _ndtr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _ndtr_cj(x), anp.multiply(t, _phi(x))


def _log_ndtr_body(x):
    # x < -1: log Φ(x) = log(t/2) - x²/2 + g(s) with z = -x/√2 (never underflows);
    # x ≥ -1: log1p(-Φ(-x)), accurate where Φ(x) is close to 1
    neg = anp.less(x, -1.0)
    xn = anp.minimum(x, -1.0)
    t, s = _t_s(anp.multiply(xn, -_SQRT_HALF))
    left = anp.add(anp.subtract(anp.log(anp.multiply(t, 0.5)), anp.multiply(anp.multiply(xn, xn), 0.5)), _g(s))
    xp = anp.maximum(x, -1.0)
    right = anp.log1p(anp.negative(_ndtr_body(anp.negative(xp))))
    return anp.where(neg, left, right)


def _log_ndtr_slope(x):
    """φ(x)/Φ(x), without cancellation: 2·e^{-g(s)}/(√(2π)·t) for x < -1."""
    neg = anp.less(x, -1.0)
    xn = anp.minimum(x, -1.0)
    t, s = _t_s(anp.multiply(xn, -_SQRT_HALF))
    left = anp.divide(anp.multiply(anp.exp(anp.negative(_g(s))), 2.0 * _INV_SQRT_2PI), t)
    xp = anp.maximum(x, -1.0)
    right = anp.divide(_phi(xp), _ndtr_cj(xp) if isinstance(xp, Tracer) else _ndtr_body(xp))
    return anp.where(neg, left, right)


_log_ndtr_cj = custom_jvp(_log_ndtr_body)


@_log_ndtr_cj.defjvp
def _log_ndtr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _log_ndtr_cj(x), anp.multiply(t, _log_ndtr_slope(x))


erf = _unary(_erf_cj)
erf.__doc__ = """Error function ``2/√π ∫₀ˣ e^{-t²} dt``.

>>> from autodiff.scipy.special import erf
>>> float(erf(1.0))
0.8427007929497149
"""
erfc = _unary(_erfc_cj)
erfc.__doc__ = """Complementary error function ``1 - erf(x)``, accurate where it is tiny.

>>> from autodiff.scipy.special import erfc
>>> float(erfc(10.0))
2.088487583762545e-45
"""
ndtr = _unary(_ndtr_cj)
ndtr.__doc__ = """Standard normal CDF ``Φ(x) = erfc(-x/√2)/2``.

>>> from autodiff.scipy.special import ndtr
>>> float(ndtr(0.0))
0.5
"""
log_ndtr = _unary(_log_ndtr_cj)
log_ndtr.__doc__ = """``log Φ(x)``, finite and accurate for very negative x (and its gradient too).

>>> from autodiff.scipy.special import log_ndtr
>>> round(float(log_ndtr(-40.0)), 6)
-804.608442
"""


# ----------------------------------------------------------------------------
# gammaln, digamma, polygamma
# ----------------------------------------------------------------------------

_SHIFT = 10          # asymptotic series are used at x + _SHIFT ≥ 10; recurrences undo the shift

# Bernoulli numbers B_2 .. B_16
_B = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def _ladder(x, n=_SHIFT):
    """x[..., None] + (0, 1, ..., n-1)."""
    return anp.add(anp.expand_dims(x, -1), np.arange(n, dtype=dtype_of(x)))


def _reduced(x):
    """x - round(x) ∈ [-1/2, 1/2]: sin(πx) and tan(πx) from it keep their accuracy."""
    return anp.subtract(x, anp.rint(x))


def _lgamma_pos(x):
    # Stirling at y = x + 10:  (y-½)log y - y + ½log 2π + Σ B_2k / (2k(2k-1) y^{2k-1}),
    # then log Γ(x) = log Γ(y) - Σ_{k<10} log(x + k)
    y = anp.add(x, float(_SHIFT))
    w = anp.divide(1.0, y)
    coefs = [_B[k - 1] / (2 * k * (2 * k - 1)) for k in range(len(_B), 0, -1)]
    series = anp.multiply(w, _horner(anp.multiply(w, w), coefs))
    st = anp.add(anp.subtract(anp.multiply(anp.subtract(y, 0.5), anp.log(y)), y),
                 anp.add(series, _LOG_SQRT_2PI))
    return anp.subtract(st, anp.sum(anp.log(_ladder(x)), axis=-1))


def _gammaln_body(x):
    # reflection for x < 0: log|Γ(x)| = log π - log|sin πx| - log Γ(1-x)
    neg = anp.less(x, 0.0)
    core = _lgamma_pos(anp.where(neg, anp.subtract(1.0, x), x))
    r = anp.where(neg, _reduced(x), 0.5)          # 0.5 off the branch: no log(0) warnings
    lsin = anp.log(anp.abs(anp.sin(anp.multiply(r, math.pi))))
    return anp.where(neg, anp.subtract(anp.subtract(math.log(math.pi), lsin), core), core)


def _digamma_pos(x):
    # ψ(y) = log y - 1/(2y) - Σ B_2k/(2k y^{2k}) at y = x + 10; ψ(x) = ψ(y) - Σ_{k<10} 1/(x+k)
    y = anp.add(x, float(_SHIFT))
    w = anp.divide(1.0, y)
    w2 = anp.multiply(w, w)
    coefs = [_B[k - 1] / (2 * k) for k in range(len(_B), 0, -1)]
    asym = anp.subtract(anp.subtract(anp.log(y), anp.multiply(w, 0.5)), anp.multiply(w2, _horner(w2, coefs)))
    return anp.subtract(asym, anp.sum(anp.divide(1.0, _ladder(x)), axis=-1))


def _digamma_body(x):
    # reflection for x < 0: ψ(x) = ψ(1-x) - π/tan(πx); nan at the poles x = 0, -1, -2, ...
    neg = anp.less(x, 0.0)
    core = _digamma_pos(anp.where(neg, anp.subtract(1.0, x), x))
    r = _reduced(x)
    pole = anp.equal(r, 0.0)
    r = anp.where(anp.logical_and(neg, anp.logical_not(pole)), r, 0.25)
    refl = anp.subtract(core, anp.divide(math.pi, anp.tan(anp.multiply(r, math.pi))))
    refl = anp.where(pole, np.nan, refl)
    return anp.where(neg, refl, core)


def _polygamma_pos(n, x):
    # ψ⁽ⁿ⁾(x) = (-1)^{n+1} n! Σ_{k<N} (x+k)^{-(n+1)} + ψ⁽ⁿ⁾(x+N), and at y = x+N ≥ 10+2n
    # ψ⁽ⁿ⁾(y) = (-1)^{n+1} w^n [(n-1)! + n!/2·w + Σ_k B_2k (2k+n-1)!/(2k)!·w^{2k}], w = 1/y
    N = _SHIFT + 2 * n
    sign = -1.0 if n % 2 == 0 else 1.0
    y = anp.add(x, float(N))
    w = anp.divide(1.0, y)
    w2 = anp.multiply(w, w)
    coefs = [_B[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
             for k in range(len(_B), 0, -1)]
    inner = anp.add(anp.add(anp.multiply(w2, _horner(w2, coefs)),
                            anp.multiply(w, math.factorial(n) / 2.0)), float(math.factorial(n - 1)))
    asym = anp.multiply(anp.power(w, n), inner)
    s = anp.sum(anp.power(_ladder(x, N), -(n + 1)), axis=-1)
    return anp.multiply(anp.add(asym, anp.multiply(s, float(math.factorial(n)))), sign)


def _polygamma_body(n, x):
    if n == 0:
        return _digamma_body(x)
    if n != 1:
        # x < 0: ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + s) - (-1)ⁿ n! Σ_{k<s} (x + k)^{-(n+1)}, s = ⌈-x⌉ (≤ 64),
        # from ψ⁽ⁿ⁾(x + 1) = ψ⁽ⁿ⁾(x) + (-1)ⁿ n! x^{-(n+1)}; nan at the poles
        neg = anp.less(x, 0.0)
        s = anp.where(neg, anp.minimum(anp.ceil(anp.negative(x)), 64.0), 0.0)
        y = anp.where(neg, anp.add(x, s), x)
        core = _polygamma_pos(n, anp.where(anp.greater(y, 0.0), y, 1.0))
        k = np.arange(64, dtype=np.float64).astype(dtype_of(x))
        xk = anp.add(anp.expand_dims(x, -1), k)
        use = anp.logical_and(anp.expand_dims(neg, -1), anp.less(k, anp.expand_dims(s, -1)))
        terms = anp.where(use, anp.power(anp.where(use, xk, 1.0), -(n + 1)), 0.0)
        corr = anp.multiply(anp.sum(terms, axis=-1), ((-1.0) ** n) * math.factorial(n))
        out = anp.where(neg, anp.subtract(core, corr), core)
        pole = anp.logical_and(anp.less_equal(x, 0.0), anp.equal(x, anp.floor(x)))
        return anp.where(pole, np.nan, out)
    # trigamma reflection for x < 0: ψ₁(x) = π²/sin²(πx) - ψ₁(1-x)
    neg = anp.less(x, 0.0)
    core = _polygamma_pos(1, anp.where(neg, anp.subtract(1.0, x), x))
    sn = anp.sin(anp.multiply(anp.where(neg, _reduced(x), 0.5), math.pi))
    refl = anp.subtract(anp.divide(math.pi ** 2, anp.multiply(sn, sn)), core)
    return anp.where(neg, refl, core)


_gammaln_cj = custom_jvp(_gammaln_body)
_digamma_cj = custom_jvp(_digamma_body)
_polygamma_cj = custom_jvp(_polygamma_body, nondiff_argnums=(0,))


@_gammaln_cj.defjvp
def _gammaln_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _gammaln_cj(x), anp.multiply(t, _digamma_cj(x))


@_digamma_cj.defjvp
def _digamma_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _digamma_cj(x), anp.multiply(t, _polygamma_cj(1, x))


@_polygamma_cj.defjvp
def _polygamma_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return _polygamma_cj(n, x), anp.multiply(t, _polygamma_cj(n + 1, x))


gammaln = _unary(_gammaln_cj)
gammaln.__doc__ = """``log|Γ(x)|`` (Stirling's series at x+10 with the recurrence; reflection
for x < 0). Its derivative is :func:`digamma`.

>>> from autodiff.scipy.special import gammaln
>>> round(float(gammaln(0.5)), 12)                   # log √π
0.572364942925
"""
loggamma = gammaln
digamma = _unary(_digamma_cj)
digamma.__doc__ = """``ψ(x) = d/dx log Γ(x)``; its derivative is ``polygamma(1, x)``.

>>> from autodiff.scipy.special import digamma
>>> round(float(digamma(1.0)), 12)
-0.577215664902
"""
psi = digamma


@npfunc(None)
def polygamma(n, x):
    """``ψ⁽ⁿ⁾(x)``, the n-th derivative of digamma (n a non-negative Python int), every
    order: reflection for x < 0 when n ≤ 1, the recurrence up from x ≥ -64 when n ≥ 2.

    >>> from autodiff.scipy.special import polygamma
    >>> round(float(polygamma(1, 1.0)), 12)             # π²/6
    1.644934066848
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"polygamma: the order n must be >= 0, got {n}")
    x = _float(x)
    if dtype_of(x) == np.float16:
        return anp.astype(polygamma(n, anp.astype(x, np.float32)), np.float16)
    if isinstance(x, Tracer):
        return _polygamma_cj(n, x)
    with np.errstate(all="ignore"):
        return _polygamma_body(n, x)


@npfunc(None)
def gamma(x):
    """``Γ(x) = ±exp(gammaln(x))``, the sign (-1)^⌊x⌋ for negative x.

    >>> from autodiff.scipy.special import gamma
    >>> round(float(gamma(5.0)), 10)
    24.0
    """
    x = _float(x)
    fl = anp.floor(x)
    sgn = anp.where(anp.greater(x, 0.0), 1.0,
                    anp.subtract(1.0, anp.multiply(anp.subtract(fl, anp.multiply(anp.floor(anp.multiply(fl, 0.5)), 2.0)), 2.0)))
    return anp.multiply(sgn, anp.exp(gammaln(x)))


@npfunc(None)
def betaln(a, b):
    """``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    >>> from autodiff.scipy.special import betaln
    >>> round(float(betaln(2.0, 3.0)), 12)              # log(1/12)
    -2.484906649788
    """
    a, b = promote(a, b, to_float=True)
    return anp.subtract(anp.add(gammaln(a), gammaln(b)), gammaln(anp.add(a, b)))


# ----------------------------------------------------------------------------
# xlogy, xlog1py, expit, logit, logsumexp, softmax
# ----------------------------------------------------------------------------

@npfunc(None)
def xlogy(x, y):
    """``x·log(y)``, 0 where x = 0 (for any y but nan). d/dx = log y, d/dy = x/y.

    >>> from autodiff.scipy.special import xlogy
    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    x, y = promote(x, y, to_float=True)
    # where x = 0 a y without a finite log is replaced by 1: the product is then exactly 0
    # and both partial derivatives stay finite (no 0·∞ through the where)
    bad = anp.logical_and(anp.equal(x, 0.0),
                          anp.logical_or(anp.less_equal(y, 0.0), anp.equal(y, np.inf)))
    return anp.multiply(x, anp.log(anp.where(bad, 1.0, y)))


@npfunc(None)
def xlog1py(x, y):
    """``x·log1p(y)``, 0 where x = 0 (for any y but nan).

    >>> from autodiff.scipy.special import xlog1py
    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    x, y = promote(x, y, to_float=True)
    bad = anp.logical_and(anp.equal(x, 0.0),
                          anp.logical_or(anp.less_equal(y, -1.0), anp.equal(y, np.inf)))
    return anp.multiply(x, anp.log1p(anp.where(bad, 0.0, y)))


def expit(x):
    """Logistic sigmoid ``1/(1 + e^{-x})``, stable for large |x|.

    >>> from autodiff.scipy.special import expit
    >>> float(expit(0.0))
    0.5
    """
    from ..nn import sigmoid
    return sigmoid(x)


@npfunc(None)
def logit(p):
    """``log(p/(1-p))``, the inverse of :func:`expit`.

    >>> from autodiff.scipy.special import logit
    >>> float(logit(0.5))
    0.0
    """
    p = _float(p)
    return anp.subtract(anp.log(p), anp.log1p(anp.negative(p)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log Σ b·e^a`` computed stably (scipy's signature).

    >>> import numpy as np
    >>> from autodiff.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    return anp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def softmax(x, axis=None):
    """``e^x / Σ e^x`` over ``axis`` (scipy's default ``axis=None``: all elements).

    >>> import numpy as np
    >>> from autodiff.scipy.special import softmax
    >>> softmax(np.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    if axis is None:
        x = asarray(x)
        return anp.reshape(anp.softmax(anp.ravel(x), axis=0), anp.shape(x))
    return anp.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (scipy's default ``axis=None``).

    >>> import numpy as np
    >>> from autodiff.scipy.special import log_softmax
    >>> log_softmax(np.array([0.0, 0.0]))
    array([-0.69314718, -0.69314718])
    """
    if axis is None:
        x = asarray(x)
        return anp.reshape(anp.log_softmax(anp.ravel(x), axis=0), anp.shape(x))
    return anp.log_softmax(x, axis=axis)


# the rest of scipy.special that autodiff has (issue 14): incomplete gamma/beta, inverse
# error functions, Bessel I0/I1, zeta, spence, entropies, combinatorics
from ._special_more import *  # noqa: E402,F401,F403
from ._special_more import __all__ as _more_all  # noqa: E402
# erf, erfc and ndtr of complex arguments (through the Faddeeva function, _special_more.wofz)
from ._special_more import (_complex_aware, _erf_complex_cj, _erfc_complex_cj,  # noqa: E402
                            _ndtr_complex_cj)
erf = _complex_aware(erf, _erf_complex_cj)
erfc = _complex_aware(erfc, _erfc_complex_cj)
ndtr = _complex_aware(ndtr, _ndtr_complex_cj)
__all__ = __all__ + _more_all
