"""Integrals: the exponential integrals ``exp1``, ``expn``, ``expi``, the sine and cosine
integrals ``sici`` and Owen's T function ``owens_t``.

>>> from autodiff.scipy.special import exp1, sici
>>> round(float(exp1(1.0)), 10)
0.2193839344
>>> [round(float(v), 12) for v in sici(1.0)]
[0.946083070367, 0.337403922901]
"""
import functools
import math

import numpy as np

from .. import numpy as anp
from ..core import Tracer, user_source
from ..custom_derivatives import custom_jvp
from ..errors import UnsupportedError
from .._lax_control_flow import fori_loop
from ..numpy._base import npfunc, dtype_of
from ..numpy._special_functions import real_float
from ._special_base import broadcast_float, quiet_eval, per_order
from ._error_functions import ndtr


@npfunc(None)
def exp1(x):
    """Exponential integral ``E₁(x) = ∫₁^∞ e^{-xt}/t dt`` for x > 0 (series below 1,
    continued fraction above)."""
    return expn(1, x)


@npfunc(None)
def expn(n, x):
    """Generalized exponential integral ``E_n(x)`` for integer n ≥ 0 (or a concrete array of
    them, broadcast against x) and x > 0
    (Numerical Recipes' expint: series for x ≤ 1, Lentz continued fraction above)."""
    if isinstance(n, Tracer) or np.ndim(n) > 0:
        # scipy truncates a fractional order to an integer
        return per_order(expn, "expn", n if isinstance(n, Tracer) else np.trunc(n), x)
    if n < 0:
        return anp.multiply(real_float(x), np.nan)       # scipy: nan for negative orders
    n = int(n)
    x = real_float(x)
    return quiet_eval(functools.partial(_expn_body, n), x)


def _expn_body(n, x):
    neg = anp.logical_or(anp.less(x, 0.0), anp.isnan(x))
    if n == 0:
        # e^{-x}/x: inf at ±0 (scipy), 0 at inf, nan below 0
        xs = anp.where(anp.equal(x, 0.0), 1.0, x)
        out = anp.where(anp.equal(x, 0.0), np.inf, anp.divide(anp.exp(anp.negative(xs)), xs))
        return anp.where(neg, np.nan, out)
    euler = 0.5772156649015329
    big = anp.logical_and(anp.greater(x, 1.0), anp.less(x, np.inf))
    xb = anp.where(big, x, 2.0)
    xs = anp.where(big, 0.5, x)
    tiny = 1e-300 if dtype_of(x) == np.float64 else 1e-30
    b = anp.add(xb, float(n))
    c = anp.full_like(xb, 1.0 / tiny)
    d = anp.divide(1.0, b)
    h = d

    def body(i, carry):
        b, c, d, h = carry
        k = anp.astype(i, dtype_of(x)) + 1.0
        an = anp.negative(anp.multiply(k, anp.add(k, float(n - 1))))
        b = anp.add(b, 2.0)
        d = anp.divide(1.0, anp.add(anp.multiply(an, d), b))
        c = anp.add(b, anp.divide(an, c))
        return b, c, d, anp.multiply(h, anp.multiply(c, d))
    _, _, _, h = fori_loop(0, 200, body, (b, c, d, h))
    v_big = anp.multiply(h, anp.exp(anp.negative(xb)))
    # series: E_n(x) = (-x)^{n-1}/(n-1)! (ψ(n) - log x) - Σ_{k≠n-1} (-x)^k / ((k-n+1) k!)
    psi = -euler + sum(1.0 / k for k in range(1, n))
    s = anp.full_like(xs, (1.0 / (n - 1)) if n > 1 else 0.0)
    if n == 1:
        s = anp.subtract(anp.negative(anp.log(xs)), euler)
    fact = anp.ones_like(xs)
    for k in range(1, 60):
        fact = anp.multiply(fact, anp.divide(anp.negative(xs), float(k)))
        if k != n - 1:
            s = anp.subtract(s, anp.divide(fact, float(k - n + 1)))
        else:
            s = anp.add(s, anp.multiply(fact, anp.subtract(psi, anp.log(xs))))
    out = anp.where(big, v_big, s)
    out = anp.where(anp.equal(x, 0.0), np.inf if n == 1 else 1.0 / (n - 1), out)
    out = anp.where(anp.equal(x, np.inf), 0.0, out)
    return anp.where(neg, np.nan, out)


@npfunc(None)
def expi(x):
    """Exponential integral ``Ei(x)`` for real x: ``-E₁(-x)`` for x < 0; a series below 40
    and the asymptotic expansion above for x > 0."""
    return quiet_eval(_expi_body, real_float(x))


def _expi_body(x):
    euler = 0.5772156649015329
    neg = anp.less(x, 0.0)
    e1 = exp1(anp.where(neg, anp.negative(x), 1.0))
    big = anp.logical_and(anp.greater(x, 40.0), anp.less(x, np.inf))
    xs = anp.where(anp.logical_or(neg, big), 1.0, x)
    term = anp.ones_like(xs)
    s = anp.zeros_like(xs)
    for k in range(1, 120):
        term = anp.multiply(term, anp.divide(xs, float(k)))
        s = anp.add(s, anp.divide(term, float(k)))
    small_v = anp.add(anp.add(s, euler), anp.log(xs))
    xb = anp.where(big, x, 50.0)
    a = anp.ones_like(xb)
    p = anp.ones_like(xb)
    for k in range(1, 40):
        p = anp.multiply(p, anp.divide(float(k), xb))
        a = anp.add(a, p)
    big_v = anp.multiply(anp.divide(anp.exp(xb), xb), a)
    out = anp.where(neg, anp.negative(e1), anp.where(big, big_v, small_v))
    # Ei(inf) = inf (Ei(-inf) = -E₁(inf) = -0 already)
    out = anp.where(anp.equal(x, np.inf), np.inf, out)
    return anp.where(anp.equal(x, 0.0), -np.inf, out)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(40)
_GL_X, _GL_W = (_GL_X + 1.0) / 2.0, _GL_W / 2.0


def _owens_t_small(h, a):
    """T(h, a) = 1/(2π) ∫₀^a e^{-h²(1+t²)/2}/(1+t²) dt for 0 ≤ a ≤ 1 (Gauss–Legendre)."""
    t = anp.multiply(anp.expand_dims(a, -1), _GL_X.astype(dtype_of(a)))   # (..., 40)
    h2 = anp.expand_dims(anp.multiply(h, h), -1)
    one_t2 = anp.add(1.0, anp.multiply(t, t))
    f = anp.divide(anp.exp(anp.multiply(anp.multiply(h2, one_t2), -0.5)), one_t2)
    return anp.multiply(anp.sum(anp.multiply(f, _GL_W.astype(dtype_of(a))), axis=-1), anp.divide(a, 2 * math.pi))


@npfunc(None)
def owens_t(h, a):
    """Owen's T function ``T(h, a)``: Gauss–Legendre quadrature for |a| ≤ 1, and for |a| > 1
    ``T(h, a) = (Φ(h)Q(ah) + Φ(ah)Q(h))/2 - T(ah, 1/a)`` (h ≥ 0; T is even in h, odd in a)."""
    h, a = broadcast_float(h, a)

    def run(h, a):
        ah_, aa = anp.abs(h), anp.abs(a)
        small = anp.less_equal(aa, 1.0)
        a_s = anp.where(small, aa, 0.5)
        a_b = anp.where(small, 2.0, aa)
        t_small = _owens_t_small(ah_, a_s)
        ahb = anp.multiply(a_b, ah_)
        p_h, q_h = ndtr(ah_), ndtr(anp.negative(ah_))
        p_ah, q_ah = ndtr(ahb), ndtr(anp.negative(ahb))
        t_big = anp.subtract(anp.multiply(anp.add(anp.multiply(p_h, q_ah), anp.multiply(p_ah, q_h)), 0.5),
                             _owens_t_small(ahb, anp.divide(1.0, a_b)))
        out = anp.where(small, t_small, t_big)
        # h = 0: T(0, a) = atan(a)/(2π), for every a (a·h would be inf·0 at a = ±inf)
        out = anp.where(anp.equal(h, 0.0), anp.divide(anp.arctan(aa), 2 * math.pi), out)
        return anp.where(anp.less(a, 0.0), anp.negative(out), out)
    return quiet_eval(run, h, a)


# ----------------------------------------------------------------------------
# sine and cosine integrals
# ----------------------------------------------------------------------------

_EULER = 0.5772156649015329


def _sici_series(x):
    """Si and Ci - γ - log x by their power series (x ≤ 2: at most one digit of cancellation)."""
    x2 = anp.multiply(x, x)
    term = x                                   # (-1)^k x^{2k+1}/(2k+1)!
    si = x
    ci = anp.zeros_like(x)
    t2 = anp.ones_like(x)                      # (-1)^k x^{2k}/(2k)!
    for k in range(1, 16):
        t2 = anp.multiply(t2, anp.divide(anp.negative(x2), float((2 * k - 1) * (2 * k))))
        ci = anp.add(ci, anp.divide(t2, float(2 * k)))
        term = anp.multiply(term, anp.divide(anp.negative(x2), float((2 * k) * (2 * k + 1))))
        si = anp.add(si, anp.divide(term, float(2 * k + 1)))
    return si, anp.add(anp.add(ci, _EULER), anp.log(x))


def _sici_cf(x):
    """Numerical Recipes' continued fraction for E₁(ix) in real arithmetic (x > 2):
    Ci = -Re h, Si = π/2 + Im h with h = e^{-ix}·CF."""
    tiny = 1e-300 if dtype_of(x) == np.float64 else 1e-30

    def cdiv(ar, ai, br, bi):
        den = anp.add(anp.multiply(br, br), anp.multiply(bi, bi))
        return (anp.divide(anp.add(anp.multiply(ar, br), anp.multiply(ai, bi)), den),
                anp.divide(anp.subtract(anp.multiply(ai, br), anp.multiply(ar, bi)), den))

    def cmul(ar, ai, br, bi):
        return (anp.subtract(anp.multiply(ar, br), anp.multiply(ai, bi)),
                anp.add(anp.multiply(ar, bi), anp.multiply(ai, br)))
    one, zero = anp.ones_like(x), anp.zeros_like(x)
    br, bi = one, x
    cr, ci = anp.full_like(x, 1.0 / tiny), zero
    dr, di = cdiv(one, zero, br, bi)
    hr, hi = dr, di

    def body(i, c):
        br, bi, cr, ci, dr, di, hr, hi = c
        k = anp.astype(i, dtype_of(x)) + 2.0
        a = anp.negative(anp.multiply(anp.subtract(k, 1.0), anp.subtract(k, 1.0)))
        br = anp.add(br, 2.0)
        dr, di = cdiv(one, zero, anp.add(anp.multiply(a, dr), br), anp.add(anp.multiply(a, di), bi))
        qr, qi = cdiv(anp.multiply(a, one), zero, cr, ci)
        cr, ci = anp.add(br, qr), anp.add(bi, qi)
        er, ei = cmul(cr, ci, dr, di)
        hr, hi = cmul(hr, hi, er, ei)
        return br, bi, cr, ci, dr, di, hr, hi
    _, _, _, _, _, _, hr, hi = fori_loop(0, 100, body, (br, bi, cr, ci, dr, di, hr, hi))
    hr, hi = cmul(anp.cos(x), anp.negative(anp.sin(x)), hr, hi)
    return anp.add(hi, math.pi / 2), anp.negative(hr)


def _sici_body(x):
    dt = dtype_of(x)
    if dt != np.float64:
        # float32 in float64: Ci and Si - π/2 are small differences of O(1) terms
        si, ci = _sici_body(anp.astype(x, np.float64))
        return anp.astype(si, dt), anp.astype(ci, dt)
    ax = anp.abs(x)
    inf = anp.equal(ax, np.inf)
    small = anp.less_equal(ax, 2.0)
    si_s, ci_s = _sici_series(anp.where(small, anp.where(anp.equal(ax, 0.0), 1.0, ax), 1.0))
    si_c, ci_c = _sici_cf(anp.where(anp.logical_or(small, inf), 3.0, ax))
    si = anp.where(small, si_s, si_c)
    ci = anp.where(small, ci_s, ci_c)
    si = anp.where(anp.equal(ax, 0.0), 0.0, si)
    ci = anp.where(anp.equal(ax, 0.0), -np.inf, ci)
    # Si(±inf) = ±π/2, Ci(inf) = 0; Ci(-inf) is nan (scipy)
    si = anp.where(inf, math.pi / 2, si)
    ci = anp.where(inf, anp.where(anp.greater(x, 0.0), 0.0, np.nan), ci)
    return anp.where(anp.less(x, 0.0), anp.negative(si), si), ci


_sici_cj = custom_jvp(_sici_body)


@_sici_cj.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    si, ci = _sici_cj(x)
    xs = anp.where(anp.equal(x, 0.0), 1.0, x)
    dsi = anp.where(anp.equal(x, 0.0), 1.0, anp.divide(anp.sin(xs), xs))      # Si' = sin x / x
    return (si, ci), (anp.multiply(t, dsi), anp.multiply(t, anp.divide(anp.cos(xs), xs)))   # Ci' = cos x / x


@npfunc(None)
def sici(x):
    """Sine and cosine integrals ``(Si(x), Ci(x))``: power series for |x| ≤ 2, the continued
    fraction of E₁(ix) above; Ci of negative x is Ci(|x|) (the real part, as scipy).

    >>> from autodiff.scipy.special import sici
    >>> [round(float(v), 10) for v in sici(1.0)]
    [0.9460830704, 0.3374039229]
    """
    x = real_float(x)
    if isinstance(x, Tracer):
        return _sici_cj(x)
    with np.errstate(all="ignore"):
        return _sici_body(x)


__all__ = ["exp1", "expn", "expi", "sici", "owens_t"]
