"""Weighted minimax (Remez) fits: how the polynomial coefficients of
:mod:`autodiff.backends.numba_math` were derived.

Remez exchange on a dense Chebyshev grid in mpmath at 50 digits, rounding each coefficient
to the target precision and refitting the remaining ones. Not used by the library; needs
mpmath. ``python -m autodiff.backends.remez`` prints every coefficient tuple of numba_math
as Python source (about a minute).
"""
import mpmath as mp
import numpy as np

__all__ = ["remez", "fit_rounded", "derive_coefficients"]



def remez(g, w, powers, a, b, iters=40, grid=3000):
    """Weighted minimax fit: minimise max |w(x)*(g(x) - sum_j c_j x**p_j)| on [a, b].

    Remez exchange on a dense Chebyshev-distributed grid; returns (coeffs, max error).
    """
    n = len(powers)
    G = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * (i + 0.5) / grid) for i in range(grid)]
    gv, wv = [g(x) for x in G], [w(x) for x in G]
    ref = [G[int(round((grid - 1) * (1 - mp.cos(mp.pi * i / n)) / 2))] for i in range(n + 1)]
    best = None
    for _ in range(iters):
        A, rhs = mp.matrix(n + 1, n + 1), mp.matrix(n + 1, 1)
        for i, x in enumerate(ref):            # alternation: w*(g - p) = (-1)^i E
            for j, p in enumerate(powers):
                A[i, j] = w(x) * x ** p
            A[i, n] = (-1) ** i
            rhs[i] = w(x) * g(x)
        sol = mp.lu_solve(A, rhs)
        c, level = [sol[j] for j in range(n)], abs(sol[n])
        err = [wv[k] * (gv[k] - mp.fsum(cj * G[k] ** p for cj, p in zip(c, powers)))
               for k in range(grid)]
        m = max(abs(e) for e in err)
        if best is None or m < best[1]:
            best = (c, m)
        if m - level < level * mp.mpf("1e-6"):
            break
        segs, cur = [], [0]                    # one extremum per run of equal sign
        for k in range(1, grid):
            if (err[k] >= 0) == (err[cur[0]] >= 0):
                cur.append(k)
            else:
                segs.append(cur)
                cur = [k]
        segs.append(cur)
        ext = [max(s, key=lambda k: abs(err[k])) for s in segs]
        while len(ext) > n + 1:                # drop the smaller end extremum
            ext.pop(0 if abs(err[ext[0]]) < abs(err[ext[-1]]) else -1)
        if len(ext) < n + 1:
            break
        ref = [G[k] for k in ext]
    return best


def fit_rounded(g, w, degree, a, b, to):
    """Fit, round the lowest-order coefficient to the target format, refit the rest."""
    powers = list(range(degree + 1))
    fixed = []
    for j in range(degree + 1):
        def gj(x, fixed=tuple(fixed)):
            return g(x) - mp.fsum(c * x ** p for c, p in zip(fixed, powers))
        c, _ = remez(gj, w, powers[j:], a, b)
        fixed.append(to(c[0]))
    xs = [a + (b - a) * (mp.mpf(i) + mp.mpf(0.5)) / 6000 for i in range(6000)]
    m = max(abs(w(x) * (g(x) - mp.fsum(c * x ** p for c, p in zip(fixed, powers)))) for x in xs)
    return fixed, m


def derive_coefficients(out=print):
    """Re-derive every coefficient tuple of numba_math (about a minute; prints Python source)."""
    mp.mp.dps = 50
    f64 = float
    f32 = lambda v: float(np.float32(float(v)))  # noqa: E731
    sq = mp.sqrt
    R = mp.mpf("0.3466")                           # ln2/2 rounded up
    Z = ((sq(2) - 1) / (sq(2) + 1)) ** 2           # max s^2 for m in [sqrt(.5), sqrt(2))
    PZ = (mp.pi / 4) ** 2
    TZ = mp.mpf("0.5494") ** 2
    eps = mp.mpf("1e-40")
    exp_g = lambda r: (mp.exp(r) - 1 - r) / r ** 2                   # noqa: E731
    exp_w = lambda r: r ** 2 / abs(mp.expm1(r))    # relative error of expm1   # noqa: E731
    log_g = lambda z: (2 * mp.atanh(sq(z)) / sq(z) - 2) / z            # noqa: E731
    log_w = lambda z: z / 2                                             # noqa: E731
    sin_g = lambda z: (mp.sin(sq(z)) - sq(z)) / z ** mp.mpf(1.5)       # noqa: E731
    sin_w = lambda z: z ** mp.mpf(1.5) / mp.sin(sq(z))                 # noqa: E731
    cos_g = lambda z: (mp.cos(sq(z)) - 1 + z / 2) / z ** 2             # noqa: E731
    cos_w = lambda z: z ** 2 / mp.cos(sq(z))                           # noqa: E731
    tanh_g = lambda z: (mp.tanh(sq(z)) - sq(z)) / z ** mp.mpf(1.5)     # noqa: E731
    tanh_w = lambda z: z ** mp.mpf(1.5) / mp.tanh(sq(z))               # noqa: E731
    specs = [
        ("_EXP_Q", exp_g, exp_w, 10, -R * 1.0001, R * 1.0001, f64),
        ("_LOG_P", log_g, log_w, 6, eps, Z * 1.0001, f64),
        ("_SIN_S", sin_g, sin_w, 5, eps, PZ * 1.0001, f64),
        ("_COS_C", cos_g, cos_w, 5, eps, PZ * 1.0001, f64),
        ("_TANH_P", tanh_g, tanh_w, 10, eps, TZ, f64),
        ("_TANH_P_F32", tanh_g, tanh_w, 4, eps, TZ, f32),
        ("_EXP_Q_F32", exp_g, exp_w, 4, -R * 1.001, R * 1.001, f32),
        ("_LOG_P_F32", log_g, log_w, 2, eps, Z * 1.001, f32),
        ("_SIN_S_F32", sin_g, sin_w, 3, eps, PZ * 1.0001, f64),
        ("_COS_C_F32", cos_g, cos_w, 3, eps, PZ * 1.0001, f64),
    ]
    for name, g, w, deg, a, b, to in specs:
        c, m = fit_rounded(g, w, deg, mp.mpf(a), mp.mpf(b), to)
        text = ", ".join(repr(float(v)) if to is f32 else float(v).hex() for v in c)
        out(f"{name} = ({text})  # max weighted error 2^{float(mp.log(m, 2)):.1f}")


if __name__ == "__main__":
    derive_coefficients()
