"""The Hurwitz zeta function (Euler–Maclaurin with Bernoulli numbers), the dilogarithm
``spence`` and the Bernoulli numbers.

>>> from autodiff.scipy.special import zeta
>>> round(float(zeta(2.0)), 12)                          # π²/6
1.644934066848
"""
import math

import numpy as np

from .. import numpy as anp
from ..api import jvp
from ..custom_derivatives import custom_jvp
from ..numpy._base import npfunc, dtype_of
from ..numpy._special_functions import real_float
from ._special_base import broadcast_float, quiet_eval
from ._gamma_functions import gammaln

from fractions import Fraction


# ----------------------------------------------------------------------------
# zeta, spence, bernoulli
# ----------------------------------------------------------------------------

def _bernoulli_numbers(n):
    """B_0..B_n exactly (B_1 = -1/2), by the Akiyama–Tanigawa algorithm."""
    out = []
    a = [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    if n >= 1:
        out[1] = -out[1]
    return out


_BN = _bernoulli_numbers(40)
_ZETA_N = 12


def _zeta_em(s, q):
    """Hurwitz ζ(s, q) = Σ_{k<N} (q+k)^{-s} + (q+N)^{1-s}/(s-1) + (q+N)^{-s}/2
    + Σ_j B_2j/(2j)! · s(s+1)…(s+2j-2) · (q+N)^{-s-2j+1} (Euler–Maclaurin; the analytic
    continuation too, accurate to ~1e-13 down to s = -1)."""
    ks = np.arange(_ZETA_N, dtype=np.float64)
    qk = anp.add(anp.expand_dims(q, -1), ks.astype(dtype_of(q)))
    head = anp.sum(anp.exp(anp.multiply(anp.negative(anp.expand_dims(s, -1)), anp.log(qk))), axis=-1)
    a = anp.add(q, float(_ZETA_N))
    la = anp.log(a)
    tail = anp.add(anp.divide(anp.exp(anp.multiply(anp.subtract(1.0, s), la)), anp.subtract(s, 1.0)),
                   anp.multiply(anp.exp(anp.multiply(anp.negative(s), la)), 0.5))
    # term_j = s(s+1)…(s+2j-2) · a^{-s-2j+1}, by its ratio (s+2j-1)(s+2j)/a²: once a^{-s}
    # underflows (s ≫ a) it stays 0, where the Pochhammer product alone would overflow
    term = anp.multiply(s, anp.exp(anp.multiply(anp.negative(anp.add(s, 1.0)), la)))
    inv_a2 = anp.divide(1.0, anp.multiply(a, a))
    for j in range(1, 14):
        tail = anp.add(tail, anp.multiply(term, float(_BN[2 * j] / math.factorial(2 * j))))
        ratio = anp.multiply(anp.multiply(anp.add(s, 2 * j - 1.0), anp.add(s, 2 * j + 0.0)),
                             inv_a2)
        term = anp.where(anp.equal(term, 0.0), 0.0, anp.multiply(term, ratio))
    return anp.where(anp.equal(s, 1.0), np.inf, anp.add(head, tail))


def _zeta_body(s, q):
    inf = anp.equal(s, np.inf)
    out = _zeta_em(anp.where(inf, 2.0, s), q)
    # ζ(inf, q) = lim q^{-s}: 1 at q = 1, 0 above, inf below
    out = anp.where(inf,
                    anp.where(anp.equal(q, 1.0), 1.0,
                              anp.where(anp.greater(q, 1.0), anp.zeros_like(q), np.inf)), out)
    return anp.where(anp.logical_or(anp.less(s, 1.0), anp.less_equal(q, 0.0)), np.nan, out)


def _riemann_body(s):
    """Riemann's ζ(s) for every real s (scipy's one-argument ``zeta``): Euler–Maclaurin
    for s ≥ -1, below it the functional equation
    ζ(s) = 2^s π^{s-1} sin(πs/2) Γ(1-s) ζ(1-s), in logs (exact zeros at -2, -4, ...)."""
    one = anp.ones_like(s)
    near = anp.greater_equal(s, -1.0)
    direct = _zeta_em(anp.where(near, s, 0.5), one)
    sr = anp.where(near, -2.5, s)
    t = anp.subtract(1.0, sr)                              # > 2
    h = anp.multiply(sr, 0.5)
    n = anp.rint(h)
    sinv = anp.multiply(anp.sin(anp.multiply(anp.subtract(h, n), math.pi)),
                        anp.where(anp.equal(anp.mod(n, 2.0), 1.0), -one, 1.0))
    zero = anp.equal(sinv, 0.0)
    sv = anp.where(zero, 1.0, sinv)
    logmag = anp.add(anp.add(anp.multiply(sr, math.log(2.0)),
                             anp.multiply(anp.subtract(sr, 1.0), math.log(math.pi))),
                     anp.add(anp.log(anp.abs(sv)), anp.add(gammaln(t), anp.log(_zeta_em(t, one)))))
    refl = anp.where(zero, 0.0, anp.multiply(anp.sign(sv), anp.exp(logmag)))
    out = anp.where(near, direct, refl)
    return anp.where(anp.equal(s, -np.inf), np.nan, anp.where(anp.equal(s, np.inf), 1.0, out))


@custom_jvp
def _zeta_cj(s, q):
    return _zeta_body(s, q)


@_zeta_cj.defjvp
def _zeta_jvp(primals, tangents):
    s, q = primals
    ts, tq = tangents
    out = _zeta_cj(s, q)
    _, ds = jvp(lambda ss: _zeta_body(ss, q), (s,), (ts,))
    # ∂ζ(s, q)/∂q = -s ζ(s+1, q)
    return out, anp.add(ds, anp.multiply(tq, anp.multiply(anp.negative(s), _zeta_cj(anp.add(s, 1.0), q))))


@npfunc(None)
def zeta(x, q=None):
    """Riemann ``ζ(x)`` or Hurwitz ``ζ(x, q) = Σ_k (k + q)^{-x}`` by Euler–Maclaurin
    summation. Hurwitz's is for ``x > 1`` (nan below, as scipy's); Riemann's (no ``q``)
    is continued analytically to every x, as scipy's (JAX's is nan below 1).

    >>> from autodiff.scipy.special import zeta
    >>> round(float(zeta(-1.0)), 12), round(float(zeta(0.5)), 12)     # -1/12
    (-0.083333333333, -1.46035450881)
    """
    if q is None:
        (x,) = broadcast_float(x)
        if dtype_of(x) != np.float64:     # (float32's Euler–Maclaurin loses 4 digits below 0)
            return anp.astype(quiet_eval(_riemann_body, anp.astype(x, np.float64)), dtype_of(x))
        return quiet_eval(_riemann_body, x)
    x, q = broadcast_float(x, q)
    return quiet_eval(_zeta_cj, x, q)


def _li2_core(x):
    """Li₂(x) for -1 ≤ x ≤ 1/2: Σ B_n uⁿ⁺¹/(n+1)!, u = -log(1 - x) ∈ [-log 2, log 2]."""
    u = anp.negative(anp.log1p(anp.negative(x)))
    s = anp.zeros_like(u)
    p = u
    for n in range(0, 36):
        if _BN[n] != 0:
            s = anp.add(s, anp.multiply(p, float(_BN[n] / math.factorial(n + 1))))
        p = anp.multiply(p, u)
    return s


def _spence_body(z):
    # spence(z) = Li₂(1 - z); x = 1 - z ≤ 1 for z ≥ 0
    x = anp.subtract(1.0, z)
    pi2_6 = math.pi ** 2 / 6
    mid = anp.logical_and(anp.greater_equal(x, -1.0), anp.less_equal(x, 0.5))
    hi = anp.greater(x, 0.5)
    lo = anp.less(x, -1.0)
    xm = anp.where(mid, x, 0.0)
    xh = anp.where(hi, x, 0.75)
    xl = anp.where(lo, x, -2.0)
    # Li₂(x) = π²/6 - log x log(1-x) - Li₂(1-x)   (1/2 < x ≤ 1; z = 1 - x computed exactly)
    zh = anp.where(hi, z, 0.25)
    v_hi = anp.subtract(anp.subtract(pi2_6, anp.multiply(anp.log(xh), anp.where(anp.equal(zh, 0.0), 0.0,
                                                                                anp.log(anp.where(anp.equal(zh, 0.0), 1.0, zh))))),
                        _li2_core(zh))
    # Li₂(x) = -π²/6 - ½ log²(-x) - Li₂(1/x)   (x < -1)
    lx = anp.log(anp.negative(xl))
    v_lo = anp.subtract(anp.subtract(-pi2_6, anp.multiply(anp.multiply(lx, lx), 0.5)), _li2_core(anp.divide(1.0, xl)))
    out = anp.where(mid, _li2_core(xm), anp.where(hi, v_hi, v_lo))
    # nan below 0, for nan and at inf (scipy)
    bad = anp.logical_or(anp.logical_or(anp.less(z, 0.0), anp.isnan(z)), anp.equal(z, np.inf))
    return anp.where(bad, np.nan, out)


@npfunc(None)
def spence(z):
    """Spence's function (scipy's convention) ``∫₁^z log t/(1 - t) dt = Li₂(1 - z)``, z ≥ 0.

    >>> from autodiff.scipy.special import spence
    >>> round(float(spence(0.0)), 12)          # π²/6
    1.644934066848
    """
    return quiet_eval(_spence_body, real_float(z))


def bernoulli(n):
    """The Bernoulli numbers ``B_0 … B_n`` as a float array (``B_1 = -1/2``, as scipy)."""
    n = int(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    return np.array([float(b) for b in _bernoulli_numbers(max(n, 1))[:n + 1]])


__all__ = ["zeta", "spence", "bernoulli"]
