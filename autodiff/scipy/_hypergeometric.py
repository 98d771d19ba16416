"""The hypergeometric functions ``hyp1f1`` (Kummer's series with Kummer's transformation for
negative arguments) and ``hyp2f1`` (Gauss's series, Pfaff's and the connection formulas).

>>> from autodiff.scipy.special import hyp2f1
>>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 12)         # -log(1 - z)/z
1.38629436112
"""

import numpy as np

from .. import numpy as anp
from .._lax_control_flow import fori_loop
from ..numpy._base import npfunc, dtype_of
from ._special_base import broadcast_float, quiet_eval
from ._gamma_functions import gamma


# ----------------------------------------------------------------------------
# hyp1f1, owens_t, bessel_jn
# ----------------------------------------------------------------------------

_HYP_ITERS = 500


def _hyp1f1_series(a, b, x):
    def body(k, c):
        term, s = c
        kf = anp.astype(k, dtype_of(x))
        term = anp.multiply(term, anp.divide(anp.multiply(anp.add(a, kf), x), anp.multiply(anp.add(b, kf), kf + 1.0)))
        return term, anp.add(s, term)
    one = anp.ones_like(x)
    return fori_loop(0, _HYP_ITERS, body, (one, one))[1]


@npfunc(None)
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric ``₁F₁(a; b; x) = Σ (a)_k/(b)_k x^k/k!`` (series;
    Kummer's transformation ``e^x ₁F₁(b-a; b; -x)`` for x < 0 keeps the terms positive
    when a > 0). Meant for moderate |x| (≲ 50); differentiable in all arguments."""
    a, b, x = broadcast_float(a, b, x)

    def run(a, b, x):
        neg = anp.less(x, 0.0)
        aa = anp.where(neg, anp.subtract(b, a), a)
        xx = anp.abs(x)
        s = _hyp1f1_series(aa, b, xx)
        return anp.where(neg, anp.multiply(anp.exp(x), s), s)
    return quiet_eval(run, a, b, x)


# 40-point Gauss–Legendre nodes and weights on [0, 1]

# ----------------------------------------------------------------------------
# Gauss hypergeometric function
# ----------------------------------------------------------------------------

def _hyp2f1_series(a, b, c, z):
    def body(k, st):
        term, s = st
        kf = anp.astype(k, dtype_of(z))
        term = anp.multiply(term, anp.divide(anp.multiply(anp.multiply(anp.add(a, kf), anp.add(b, kf)), z),
                                             anp.multiply(anp.add(c, kf), kf + 1.0)))
        return term, anp.add(s, term)
    one = anp.ones_like(z)
    return fori_loop(0, _HYP_ITERS, body, (one, one))[1]


def _hyp2f1_transformed(a, b, c, x):
    """₂F₁ for x < 1 by the series, Pfaff's transformation and the 1 - z connection
    formula; nan where that formula is degenerate (its c - a - b an integer)."""
    a0, b0 = a, b
    # x < 0: Pfaff, ₂F₁(a,b;c;x) = (1-x)^{-a} ₂F₁(a, c-b; c; x/(x-1)), argument in (0, 1)
    neg = anp.less(x, 0.0)
    xn = anp.where(neg, x, -1.0)
    z = anp.where(neg, anp.divide(xn, anp.subtract(xn, 1.0)), x)
    bb = anp.where(neg, anp.subtract(c, b), b)
    pref = anp.where(neg, anp.exp(anp.multiply(anp.negative(a), anp.log1p(anp.negative(xn)))), 1.0)
    # z > 0.9: the 1 - z connection formula (c - a - b not an integer; nan if it is)
    far = anp.greater(z, 0.9)
    zn = anp.where(far, 0.5, z)
    direct = _hyp2f1_series(a, bb, c, zn)
    # the connection formula's lanes get harmless parameters elsewhere: its gammas have
    # poles, and a pole in an unused lane would still poison reverse-mode derivatives
    s_true = anp.subtract(anp.subtract(c, a), bb)
    ok = anp.logical_and(far, anp.greater_equal(anp.abs(anp.subtract(s_true, anp.rint(s_true))), 1e-6))
    # polynomials (see _hyp2f1_body) skip it too: Γ(a), Γ(b) have poles there
    ok = anp.logical_and(ok, anp.logical_not(anp.logical_or(_nonpos_int(a0), _nonpos_int(b0))))
    zf = anp.where(ok, z, 0.95)
    a, bb, c = anp.where(ok, a, 0.3), anp.where(ok, bb, 0.6), anp.where(ok, c, 1.7)
    w = anp.subtract(1.0, zf)
    s = anp.subtract(anp.subtract(c, a), bb)
    g = gamma
    t1 = anp.multiply(anp.divide(anp.multiply(g(c), g(s)), anp.multiply(g(anp.subtract(c, a)), g(anp.subtract(c, bb)))),
                      _hyp2f1_series(a, bb, anp.subtract(1.0, s), w))
    t2 = anp.multiply(anp.multiply(anp.exp(anp.multiply(s, anp.log(w))),
                                   anp.divide(anp.multiply(g(c), g(anp.negative(s))), anp.multiply(g(a), g(bb)))),
                      _hyp2f1_series(anp.subtract(c, a), anp.subtract(c, bb), anp.add(s, 1.0), w))
    out = anp.multiply(pref, anp.where(far, anp.add(t1, t2), direct))
    return anp.where(anp.logical_and(far, anp.logical_not(ok)), np.nan, out)     # Γ(±s) blow up and cancel


# Where the connection formula is degenerate (c - a - b, or b - a after Pfaff, within
# _HYP_NEAR of an integer), F is still analytic in b: it is extrapolated from b ± h and
# b ± 2h, F ≈ (4·avg(±h) - avg(±2h))/3 with error O(h⁴) (Richardson), while each shifted
# value keeps the formula's cancellation to ~eps/h.
_HYP_H = 1e-3
_HYP_NEAR = 5e-4


def _hyp2f1_body(a, b, c, x):
    a0, b0, c0 = a, b, c
    poly = anp.logical_or(_nonpos_int(a0), _nonpos_int(b0))
    neg = anp.less(x, 0.0)
    xn = anp.where(neg, x, -1.0)
    far = anp.where(neg, anp.greater(anp.divide(xn, anp.subtract(xn, 1.0)), 0.9), anp.greater(x, 0.9))
    s_true = anp.where(neg, anp.subtract(b, a), anp.subtract(anp.subtract(c, a), b))
    near = anp.less(anp.abs(anp.subtract(s_true, anp.rint(s_true))), _HYP_NEAR)
    degen = anp.logical_and(anp.logical_and(far, near), anp.logical_not(poly))
    nd = anp.ndim(x)
    shifts = np.array([0.0, _HYP_H, -_HYP_H, 2 * _HYP_H, -2 * _HYP_H], dtype=dtype_of(x)).reshape((5,) + (1,) * nd)
    five = (5,) + anp.shape(x)
    B = anp.add(anp.broadcast_to(b, five), anp.where(degen, shifts, 0.0))
    F = _hyp2f1_transformed(anp.broadcast_to(a, five), B, anp.broadcast_to(c, five), anp.broadcast_to(x, five))
    rich = anp.divide(anp.subtract(anp.multiply(anp.add(F[1], F[2]), 2.0), anp.multiply(anp.add(F[3], F[4]), 0.5)), 3.0)
    out = anp.where(degen, rich, F[0])
    # a or b a non-positive integer: a polynomial, whose terminating series is exact for
    # every x; used where the connection formula would be (it divides by Γ at its poles).
    # Elsewhere the ordinary path keeps the full series, whose derivative in a (or b) at
    # the integer is the analytic one (the terminated series' is not)
    poly = anp.logical_and(poly, far)
    xp = anp.where(poly, x, 0.5)
    deg = anp.minimum(anp.where(_nonpos_int(a0), anp.negative(a0), np.inf),
                      anp.where(_nonpos_int(b0), anp.negative(b0), np.inf))
    out = anp.where(poly, _hyp2f1_poly(anp.where(poly, a0, 0.3), anp.where(poly, b0, 0.6),
                                       anp.where(poly, c0, 1.7), xp, deg), out)
    return anp.where(anp.equal(x, 0.0), 1.0, out)


def _hyp2f1_edges(a, b, c, x):
    """scipy's values where the series and the connection formula do not apply: 1 when a
    or b is 0 (or x is 0); inf at a pole c ∈ {0, -1, ...} that a terminating series does
    not stop short of; at x = 1 Gauss's Γ(c)Γ(c-a-b)/(Γ(c-a)Γ(c-b)) when c - a - b > 0,
    inf otherwise; inf for x > 1 (a polynomial excepted: its value, for every x)."""
    ab0 = anp.logical_or(anp.equal(a, 0.0), anp.equal(b, 0.0))
    poly = anp.logical_or(_nonpos_int(a), _nonpos_int(b))
    # the series stops (at -a or -b terms) before its c + k reaches 0
    stops = anp.logical_or(anp.logical_and(_nonpos_int(a), anp.greater(a, c)),
                           anp.logical_and(_nonpos_int(b), anp.greater(b, c)))
    c_pole = anp.logical_and(_nonpos_int(c), anp.logical_not(stops))
    at1 = anp.logical_and(anp.equal(x, 1.0), anp.logical_not(poly))
    above = anp.logical_and(anp.greater(x, 1.0), anp.logical_not(poly))
    one = anp.logical_or(ab0, anp.equal(x, 0.0))
    special = anp.logical_or(anp.logical_or(one, c_pole), anp.logical_or(at1, above))
    s = anp.subtract(anp.subtract(c, a), b)
    conv = anp.logical_and(at1, anp.greater(s, 0.0))
    ag, bg, cg = anp.where(conv, a, 0.5), anp.where(conv, b, 0.5), anp.where(conv, c, 2.0)
    sg = anp.subtract(anp.subtract(cg, ag), bg)
    gauss = anp.divide(anp.multiply(gamma(cg), gamma(sg)),
                       anp.multiply(gamma(anp.subtract(cg, ag)), gamma(anp.subtract(cg, bg))))
    val = anp.where(conv, gauss, np.inf)
    val = anp.where(c_pole, np.inf, val)
    val = anp.where(one, 1.0, val)
    return special, val


def _hyp2f1_all(a, b, c, x):
    special, val = _hyp2f1_edges(a, b, c, x)
    # the general path on harmless arguments where an edge value applies (no nan there,
    # in values or derivatives)
    out = _hyp2f1_body(anp.where(special, 0.5, a), anp.where(special, 0.5, b),
                       anp.where(special, 2.0, c), anp.where(special, 0.5, x))
    # c a non-positive integer that a terminating series stops short of: the polynomial
    short = anp.logical_and(anp.logical_and(_nonpos_int(c), anp.logical_not(special)),
                            anp.logical_or(_nonpos_int(a), _nonpos_int(b)))
    deg = anp.minimum(anp.where(_nonpos_int(a), anp.negative(a), np.inf),
                      anp.where(_nonpos_int(b), anp.negative(b), np.inf))
    poly = _hyp2f1_poly(anp.where(short, a, 0.3), anp.where(short, b, 0.6),
                        anp.where(short, c, 1.7),
                        anp.where(short, x, 0.5), anp.where(short, deg, 1.0))
    return anp.where(special, val, anp.where(short, poly, out))


def _hyp2f1_poly(a, b, c, z, deg):
    """The terminating series of degree ``deg``: the term ratio is cut to 0 from the
    last term on, so that the backward pass does not multiply the cotangent by |z| > 1
    at every one of the remaining steps (inf · 0 = nan after a few hundred)."""
    def body(k, st):
        term, s = st
        kf = anp.astype(k, dtype_of(z))
        live = anp.less(kf, deg)
        # past the last term c + k may reach 0 (c a pole the series stops short of)
        den = anp.where(live, anp.multiply(anp.add(c, kf), kf + 1.0), 1.0)
        r = anp.divide(anp.multiply(anp.multiply(anp.add(a, kf), anp.add(b, kf)), z), den)
        term = anp.multiply(term, anp.where(live, r, 0.0))
        return term, anp.add(s, term)
    one = anp.ones_like(z)
    return fori_loop(0, _HYP_ITERS, body, (one, one))[1]


def _nonpos_int(v):
    return anp.logical_and(anp.less_equal(v, 0.0),
                           anp.logical_and(anp.equal(v, anp.rint(v)), anp.greater(v, -float(_HYP_ITERS - 1))))


@npfunc(None)
def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric ``₂F₁(a, b; c; x)`` for real x < 1: the series (500 terms)
    for 0 ≤ x ≤ 0.9, Pfaff's transformation for x < 0, and the 1 - x connection formula
    above 0.9; a polynomial (a or b a non-positive integer) is summed directly for every
    x. Where the connection formula is degenerate — x > 0.9 with c - a - b an integer
    (``hyp2f1(0.5, 0.5, 1.0, x)``, the elliptic integral K, among them), or x < -9 with
    b - a an integer (a = b included) — the value is extrapolated from b ± h, b ± 2h
    (Richardson, h = 1e-3). Differentiable in all arguments. At the edges it gives scipy's
    values: 1 when a or b is 0, inf at c = 0, -1, ... (unless the series terminates
    first), Gauss's sum at x = 1 (inf when c - a - b ≤ 0) and inf for x > 1 (but a
    polynomial's value there). float32 is computed in float64.

    Accuracy, measured on a grid (a, b in [-2.7, 6.5], c in [0.35, 9.1], x in [-50, 0.999],
    ``tests/test_special_accuracy.py``): relative error below 2e-12 against scipy away
    from the degenerate cases; in them below 1e-9 against mpmath (scipy's own result is
    wrong at some of them; the error grows like log(1 - x)⁴ closer to 1: 1.5e-9 at
    1 - 1e-6), first derivatives to ~1e-7 and second derivatives only to ~1e-3. At a
    polynomial's integer a (or b), the derivative in that a (or b) is the analytic one
    for -9 ≤ x ≤ 0.9; beyond, the terminated series gives the polynomial's.

    >>> from autodiff.scipy.special import hyp2f1
    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 10)          # -log(1 - x)/x
    1.3862943611
    """
    a, b, c, x = broadcast_float(a, b, c, x)
    dt = dtype_of(x)
    if dt != np.float64:
        # float32 (and float16) in float64: the connection formula's cancellation near
        # x = 1 would cost float32 its last three digits
        up = [anp.astype(v, np.float64) for v in (a, b, c, x)]
        return anp.astype(quiet_eval(_hyp2f1_all, *up), dt)
    return quiet_eval(_hyp2f1_all, a, b, c, x)


__all__ = ["hyp1f1", "hyp2f1"]
