"""Bessel and Legendre functions: the modified Bessel functions ``i0``, ``i1``, ``i0e``,
``i1e`` (defined with ``numpy.i0`` in ``autodiff.numpy._special_functions``), the Bessel
functions of the first kind ``bessel_jn`` (Miller's recurrence), the associated Legendre
functions ``lpmv`` and the spherical harmonics ``sph_harm_y``.

>>> from autodiff.scipy.special import i1, lpmv
>>> round(float(i1(1.0)), 12)
0.565159103992
>>> round(float(lpmv(0, 2, 0.5)), 12)                   # P₂(x) = (3x² - 1)/2
-0.125
"""
import math

import numpy as np

from .. import numpy as anp
from ..core import Tracer, is_concrete, user_source
from ..errors import ConcretizationError, UnsupportedError
from .._lax_control_flow import fori_loop
from ..numpy._base import npfunc, asarray, dtype_of
from ..numpy._special_functions import real_float
from ._special_base import broadcast_float
from ._gamma_functions import gammaln
from ._hypergeometric import hyp2f1
from ..numpy._special_functions import (bessel_i0 as i0, bessel_i1 as i1, bessel_i0e as i0e,
                                       bessel_i1e as i1e)


@npfunc(None)
def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind ``J_0(z) … J_v(z)`` (stacked on a leading axis,
    as JAX), by Miller's backward recurrence from order ``n_iter`` normalized with
    ``J_0 + 2 Σ J_2k = 1``; accurate for ``|z|`` well below ``n_iter``."""
    z = real_float(z)
    dt = dtype_of(z)
    z = anp.astype(z, np.float64)          # the recurrence's scale factors need float64's range
    v = int(v)
    n = max(int(n_iter), v + 2)
    zero = anp.equal(z, 0.0)
    zs = anp.where(zero, 1.0, z)
    j_next = anp.zeros_like(zs)
    j_cur = anp.full_like(zs, 1e-30)
    vals = {n: j_cur}
    norm = anp.zeros_like(zs)
    for k in range(n, 0, -1):
        j_prev = anp.subtract(anp.multiply(anp.divide(2.0 * k, zs), j_cur), j_next)
        j_next, j_cur = j_cur, j_prev
        # rescale to keep the recurrence in range (a common factor, removed by the normalization)
        big = anp.greater(anp.abs(j_cur), 1e100)
        sc = anp.where(big, 1e-100, 1.0)
        j_cur, j_next = anp.multiply(j_cur, sc), anp.multiply(j_next, sc)
        norm = anp.multiply(norm, sc)
        vals = {kk: anp.multiply(vv, sc) for kk, vv in vals.items()}
        vals[k - 1] = j_cur
        if (k - 1) % 2 == 0 and k - 1 > 0:
            norm = anp.add(norm, anp.multiply(j_cur, 2.0))
    norm = anp.add(norm, vals[0])
    out = [anp.divide(vals[k], norm) for k in range(v + 1)]
    out = [anp.where(zero, 1.0 if k == 0 else 0.0, o) for k, o in enumerate(out)]
    return anp.astype(anp.stack(out, axis=0), dt)


# ----------------------------------------------------------------------------
# spherical harmonics (real and imaginary parts: complex numbers are issue 16)
# ----------------------------------------------------------------------------

def _sph_legendre_table(ct, st, n_max):
    """The orthonormal associated Legendre functions ``Q[l][k]`` (0 ≤ k ≤ l ≤ n_max) at
    ``cos θ = ct``, ``sin θ = st``, with the Condon–Shortley phase and the 1/√(4π) of
    the spherical harmonics (``Y_l^k = Q[l][k] e^{ikφ}``), by the stable recurrences
    ``Q_k^k = -√((2k+1)/2k) sin θ Q_{k-1}^{k-1}``, ``Q_{k+1}^k = √(2k+3) cos θ Q_k^k`` and
    ``Q_l^k = a (cos θ Q_{l-1}^k - b Q_{l-2}^k)`` with
    ``a = √((4l²-1)/(l²-k²))``, ``b = √(((l-1)²-k²)/(4(l-1)²-1))``."""
    Q = [[None] * (n_max + 1) for _ in range(n_max + 1)]
    Q[0][0] = anp.add(anp.multiply(ct, 0.0), 1.0 / math.sqrt(4.0 * math.pi))
    for k in range(1, n_max + 1):
        Q[k][k] = anp.multiply(anp.multiply(st, -math.sqrt((2 * k + 1) / (2.0 * k))), Q[k - 1][k - 1])
    for k in range(n_max):
        Q[k + 1][k] = anp.multiply(anp.multiply(ct, math.sqrt(2 * k + 3.0)), Q[k][k])
        for l in range(k + 2, n_max + 1):
            a = math.sqrt((4.0 * l * l - 1) / (l * l - k * k))
            b = math.sqrt(((l - 1.0) ** 2 - k * k) / (4.0 * (l - 1) ** 2 - 1))
            Q[l][k] = anp.multiply(anp.subtract(anp.multiply(ct, Q[l - 1][k]), anp.multiply(Q[l - 2][k], b)), a)
    return Q


@npfunc(None)
def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None, *, part="real"):
    """The spherical harmonic ``Y_n^m(θ, φ) = N_n^m P_n^m(cos θ) e^{imφ}`` of
    ``scipy.special.sph_harm_y`` (θ the polar angle, φ the azimuth, orthonormal on the
    sphere, Condon–Shortley phase), returned as its real part (``part='real'``, the
    default) or its imaginary part (``part='imag'``): autodiff has no complex numbers yet
    (issue 16), and ``re + 1j * im`` on the results gives scipy's value. ``n`` and ``m``
    are integers (``|m| ≤ n``; 0 beyond); ``n_max`` is JAX's static bound on ``n`` (needed
    when ``n`` is traced under ``jit``; larger ``n`` are clipped to it). Differentiable in
    ``theta`` and ``phi``.

    >>> import numpy as np, scipy.special
    >>> from autodiff.scipy.special import sph_harm_y
    >>> n, m, th, ph = np.array([2, 3]), np.array([1, -2]), np.array([0.3, 1.1]), np.array([0.7, 2.0])
    >>> y = scipy.special.sph_harm_y(n, m, th, ph)
    >>> bool(np.allclose(sph_harm_y(n, m, th, ph), y.real)), bool(np.allclose(sph_harm_y(n, m, th, ph, part="imag"), y.imag))
    (True, True)
    """
    if diff_n not in (None, 0):
        raise UnsupportedError("sph_harm_y: diff_n (derivatives in theta and phi as extra outputs) is "
                               "not supported; differentiate with ad.grad/ad.jacfwd instead",
                               source=user_source())
    if part not in ("real", "imag"):
        raise ValueError(f"sph_harm_y: part must be 'real' or 'imag', got {part!r}")
    n, m = asarray(n), asarray(m)
    if n_max is None:
        if isinstance(n, Tracer) and not is_concrete(n):
            raise ConcretizationError("sph_harm_y: the degree n is traced; pass n_max=... (a static bound "
                                      "on n, as in JAX)", source=user_source())
        n_max = int(np.max(np.asarray(n.concrete_value("sph_harm_y") if isinstance(n, Tracer) else n)))
    n_max = max(int(n_max), 0)
    theta, phi = broadcast_float(theta, phi)
    ni = anp.clip(anp.astype(n, np.int64), 0, n_max)
    mi = anp.astype(m, np.int64)
    k = anp.abs(mi)
    ni, k, mi, theta, phi = anp.broadcast_arrays(ni, k, mi, theta, phi)
    # sin θ as √(1 - cos²θ) ≥ 0, as scipy's: Y(-θ) = Y(θ) outside [0, π] (and at the poles
    # the derivative of sin θ itself)
    st = anp.sin(theta)
    Q = _sph_legendre_table(anp.cos(theta), anp.where(anp.less(st, 0.0), anp.negative(st), st),
                            n_max)
    zero = anp.zeros_like(theta)
    table = anp.stack([Q[l][kk] if kk <= l else zero for l in range(n_max + 1) for kk in range(n_max + 1)])
    idx = anp.add(anp.multiply(ni, n_max + 1), anp.minimum(k, n_max))
    q = anp.squeeze(anp.take_along_axis(table, anp.expand_dims(idx, 0), axis=0), 0)
    q = anp.where(anp.greater(k, ni), 0.0, q)
    # Y_n^{-k} = (-1)^k conj(Y_n^k): with the signed m, Re = s Q cos(mφ), Im = s Q sin(mφ)
    q = anp.where(anp.logical_and(anp.less(mi, 0), anp.equal(anp.mod(k, 2), 1)), anp.negative(q), q)
    ang = anp.multiply(anp.astype(mi, dtype_of(phi)), phi)
    return anp.multiply(q, anp.cos(ang) if part == "real" else anp.sin(ang))


@npfunc(None)
def lpmv(m, v, x):
    """The associated Legendre function ``P_v^m(x)`` of integer order ``m`` and real degree
    ``v`` on -1 ≤ x ≤ 1 (``scipy.special.lpmv``, Condon–Shortley phase included), from
    ``P_v^m(x) = (-1)^m (v-m+1)_{2m} (1-x²)^{m/2} / (2^m m!) ₂F₁(m-v, m+v+1; m+1; (1-x)/2)``
    for m ≥ 0 and ``P_v^{-m} = (-1)^m P_v^m / (v-m+1)_{2m}``. Integer degrees are
    polynomials (exact for every x); otherwise the accuracy is :func:`hyp2f1`'s, whose
    degenerate case this is as x → -1. Non-integer ``m`` or |x| > 1 give nan, as scipy;
    so does x = -1 at a non-integer degree (scipy: ±inf). Where scipy returns nan for
    m < 0 at an integer degree below |m|, this returns ``P_v^m``'s value (checked
    against mpmath). ``m`` must be concrete (its
    largest value sets the length of the Pochhammer product). Differentiable in ``v``
    and ``x``.

    >>> import numpy as np
    >>> from autodiff.scipy.special import lpmv
    >>> x = np.array([-0.5, 0.3, 0.9])
    >>> bool(np.allclose(lpmv(1, 2, x), -3 * x * np.sqrt(1 - x * x)))
    True
    """
    if isinstance(m, Tracer) and not is_concrete(m):
        raise ConcretizationError("lpmv: the order m is traced; pass it as a concrete integer (or array)",
                                  source=user_source())
    mc = np.asarray(m.concrete_value("lpmv") if isinstance(m, Tracer) else m, dtype=np.float64)
    v, x = broadcast_float(v, x)
    mf = anp.astype(anp.asarray(mc), dtype_of(x))
    mf, v, x = anp.broadcast_arrays(mf, v, x)
    kmax = int(np.max(np.abs(mc[np.isfinite(mc)]))) if np.isfinite(mc).any() else 0
    k = anp.abs(mf)
    # (v-k+1)_{2k} as a product (exactly 0 where it passes through 0, unlike Γ ratios)
    start = anp.add(anp.subtract(v, k), 1.0)

    def body(j, p):
        jf = anp.astype(j, dtype_of(x))
        return anp.where(anp.less(jf, anp.multiply(k, 2.0)), anp.multiply(p, anp.add(start, jf)), p)
    pochk = fori_loop(0, 2 * kmax, body, anp.ones_like(x)) if kmax else anp.ones_like(x)
    inside = anp.logical_and(anp.greater(x, -1.0), anp.less_equal(x, 1.0))
    xs = anp.where(inside, x, 0.0)
    one_m = anp.maximum(anp.subtract(1.0, anp.multiply(xs, xs)), 0.0)
    kfact = anp.exp(gammaln(anp.add(k, 1.0)))
    base = anp.divide(anp.multiply(anp.power(one_m, anp.multiply(k, 0.5)),
                                   hyp2f1(anp.subtract(k, v), anp.add(anp.add(k, v), 1.0), anp.add(k, 1.0),
                                          anp.multiply(anp.subtract(1.0, xs), 0.5))),
                      anp.multiply(anp.power(2.0, k), kfact))
    odd = anp.equal(anp.mod(k, 2.0), 1.0)
    pos = anp.where(odd, anp.negative(anp.multiply(pochk, base)), anp.multiply(pochk, base))
    out = anp.where(anp.greater_equal(mf, 0.0), pos, base)
    # x = -1: the polynomials' values (P_n(-1) = (-1)^n at order 0, 0 at the others)
    vint = anp.equal(v, anp.rint(v))
    one = anp.ones_like(x)
    at_m1 = anp.where(anp.logical_and(vint, anp.equal(k, 0.0)),
                      anp.where(anp.equal(anp.mod(anp.abs(v), 2.0), 1.0), anp.negative(one), one),
                      anp.where(vint, anp.zeros_like(x), np.nan))
    out = anp.where(anp.equal(x, -1.0), at_m1, out)
    bad = anp.logical_or(anp.logical_not(anp.equal(mf, anp.rint(mf))), anp.greater(anp.abs(x), 1.0))
    return anp.where(bad, np.nan, out)


__all__ = ["i0", "i1", "i0e", "i1e", "bessel_jn", "lpmv", "sph_harm_y"]
