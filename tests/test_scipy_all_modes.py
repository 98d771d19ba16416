"""``autodiff.scipy`` against scipy itself, in every mode: ``special``,
``stats`` (every distribution, every function it has) and ``linalg``.

Each case runs eagerly and traced (``jit`` on the reference interpreter) against scipy,
batched with ``vmap`` against a loop, and differentiated against finite differences to
second order in both modes; one Numba-compiled program runs a selection together.
"""
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import autodiff as ad
import autodiff.numpy as anp
import autodiff.scipy.special as S
import autodiff.scipy.stats as ST
import autodiff.scipy.linalg as SL
from autodiff.tree_util import tree_flatten
from jit_util import assert_compiled

RNG = np.random.default_rng(1414)


def U(lo, hi, *shape):
    return RNG.uniform(lo, hi, size=shape or (5,))


class Case:
    def __init__(self, name, f, ref, args, diff=None, rtol=1e-12, atol=0.0, vmap=True, order=2, f32=True,
                 grad_rtol=1e-5):
        self.name, self.f, self.ref, self.args = name, f, ref, args
        self.diff = list(range(len(args))) if diff is None else diff    # differentiable argument positions
        self.rtol, self.atol, self.vmap, self.order, self.f32 = rtol, atol, vmap, order, f32
        self.grad_rtol = grad_rtol

    def __repr__(self):
        return self.name


sp, ss = scipy.special, scipy.stats
X = U(0.1, 8.0)
_SH_N, _SH_M = np.array([0, 1, 2, 3, 4, 6, 5]), np.array([0, -1, 2, -3, 1, -4, 5])
_LM = np.array([1, 2, 0, -3, -1, 2, 3])

SPECIAL = [
    Case("gammainc", S.gammainc, sp.gammainc, [U(0.3, 20.0), U(0.05, 30.0)], rtol=1e-12, atol=1e-14),
    Case("gammaincc", S.gammaincc, sp.gammaincc, [U(0.3, 20.0), U(0.05, 30.0)], rtol=1e-11, atol=1e-15),
    Case("gammainc large a", S.gammainc, sp.gammainc, [U(200.0, 900.0), U(200.0, 900.0)], rtol=1e-10, atol=1e-14,
         diff=[1], order=1),
    Case("betainc", S.betainc, sp.betainc, [U(0.3, 8.0), U(0.3, 8.0), U(0.02, 0.98)], rtol=1e-11, atol=1e-14),
    Case("ndtri", S.ndtri, sp.ndtri, [np.array([1e-300, 1e-20, 0.01, 0.3, 0.5, 0.72, 0.999, 1 - 1e-14])],
         rtol=1e-13, diff=[]),
    Case("ndtri diff", S.ndtri, sp.ndtri, [U(0.02, 0.98)], rtol=1e-13),
    Case("erfinv", S.erfinv, sp.erfinv, [np.array([-0.999999, -0.4, -1e-9, 1e-200, 0.3, 0.6, 1 - 1e-15])],
         rtol=1e-13, diff=[]),
    Case("erfinv diff", S.erfinv, sp.erfinv, [U(-0.95, 0.95)], rtol=1e-13),
    Case("erfcinv", S.erfcinv, sp.erfcinv, [np.array([1e-300, 1e-12, 0.3, 0.9, 1.0 - 1e-9, 1.2, 1.9])], rtol=1e-12,
         diff=[]),
    Case("erfcinv diff", S.erfcinv, sp.erfcinv, [U(0.05, 1.95)], rtol=1e-12),
    Case("erfcx", S.erfcx, sp.erfcx, [np.array([-5.0, -0.5, 0.0, 0.7, 3.0, 30.0, 1e5])], rtol=1e-13),
    Case("i0", S.i0, sp.i0, [np.array([-25.0, -3.0, 0.0, 0.1, 5.0, 19.9, 20.1, 100.0])], rtol=1e-13),
    Case("i1", S.i1, sp.i1, [np.array([-25.0, -3.0, 0.0, 0.1, 5.0, 19.9, 20.1, 100.0])], rtol=1e-13, atol=1e-300),
    # (i0e and i1e have a kink at 0: e^{-|x|})
    Case("i0e", S.i0e, sp.i0e, [np.array([-25.0, -3.0, -0.1, 0.1, 5.0, 19.9, 20.1, 1e4])], rtol=1e-13),
    Case("i1e", S.i1e, sp.i1e, [np.array([-25.0, -3.0, -0.1, 0.1, 5.0, 19.9, 20.1, 1e4])], rtol=1e-13, atol=1e-300),
    Case("i0e at 0", S.i0e, sp.i0e, [np.array([0.0, -0.0])], diff=[]),
    Case("zeta", S.zeta, sp.zeta, [U(1.2, 30.0)], rtol=1e-13),
    Case("zeta hurwitz", S.zeta, sp.zeta, [U(1.2, 12.0), U(0.1, 5.0)], rtol=1e-13),
    Case("spence", S.spence, sp.spence, [np.array([0.0, 0.05, 0.5, 0.99, 1.0, 1.7, 3.0, 50.0])], atol=1e-14,
         diff=[]),
    Case("spence diff", S.spence, sp.spence, [U(0.1, 4.0)], atol=1e-14),
    Case("entr", S.entr, sp.entr, [np.array([0.0, 1e-300, 0.3, 1.0, 7.0, -1.0])], diff=[]),
    Case("entr diff", S.entr, sp.entr, [U(0.1, 3.0)]),
    Case("rel_entr", S.rel_entr, sp.rel_entr, [np.array([0.0, 0.0, 0.5, 2.0, -1.0, 1.0]),
                                              np.array([0.0, 2.0, 0.1, 3.0, 1.0, -1.0])], diff=[]),
    Case("rel_entr diff", S.rel_entr, sp.rel_entr, [U(0.1, 3.0), U(0.1, 3.0)]),
    Case("kl_div", S.kl_div, sp.kl_div, [U(0.1, 3.0), U(0.1, 3.0)]),
    Case("multigammaln", lambda a: S.multigammaln(a, 3), lambda a: sp.multigammaln(a, 3), [U(1.5, 9.0)],
         rtol=1e-13),
    Case("polygamma 3", lambda x: S.polygamma(3, x), lambda x: sp.polygamma(3, x), [U(0.5, 9.0)], rtol=1e-12),
    Case("polygamma 2 negative", lambda x: S.polygamma(2, x), lambda x: sp.polygamma(2, x),
         [np.array([-30.3, -7.6, -2.5, -0.7, -0.2])], rtol=1e-12),
    Case("betaln", S.betaln, sp.betaln, [U(0.2, 9.0), U(0.2, 9.0)], rtol=1e-12),
    Case("beta", S.beta, sp.beta, [np.array([-0.5, 0.7, 2.5, -1.5]), np.array([2.3, 0.4, 1.5, 0.6])], rtol=1e-12),
    Case("poch", S.poch, sp.poch, [U(0.5, 6.0), U(-0.4, 3.0)], rtol=1e-12),
    Case("gammasgn", S.gammasgn, sp.gammasgn, [np.array([-2.5, -1.5, -0.5, 0.5, 3.0])], diff=[]),
    Case("factorial", S.factorial, sp.factorial, [np.array([0.0, 1.0, 5.0, 10.0, 3.5, -1.0])], rtol=1e-12, diff=[]),
    Case("comb", S.comb, sp.comb, [np.array([10.0, 50.0, 5.0, 3.5, 20.0]), np.array([3.0, 25.0, 7.0, 1.2, 0.0])],
         rtol=1e-12, diff=[]),
    Case("comb repetition", lambda n, k: S.comb(n, k, repetition=True), lambda n, k: sp.comb(n, k, repetition=True),
         [np.array([4.0, 10.0]), np.array([2.0, 3.0])], rtol=1e-12, diff=[]),
    Case("boxcox", S.boxcox, sp.boxcox, [U(0.2, 5.0), np.array([0.0, 0.5, -1.0, 2.0, 1e-9])], rtol=1e-12),
    Case("boxcox1p", S.boxcox1p, sp.boxcox1p, [U(-0.5, 5.0), np.array([0.0, 0.5, -1.0, 2.0, 1e-9])], rtol=1e-12),
    Case("log_expit", S.log_expit, sp.log_expit, [np.array([-800.0, -3.0, 0.0, 4.0, 800.0])], rtol=1e-14),
    Case("exp1", S.exp1, sp.exp1, [U(0.05, 30.0)], rtol=1e-12),
    Case("expn", lambda x: S.expn(3, x), lambda x: sp.expn(3, x), [U(0.05, 30.0)], rtol=1e-12),
    Case("expi", S.expi, sp.expi, [np.array([-30.0, -2.0, -0.1, 0.1, 1.5, 20.0, 39.0, 45.0, 300.0])], rtol=1e-12),
    Case("xlogy", S.xlogy, sp.xlogy, [U(0.1, 3.0), U(0.1, 3.0)]),
    Case("sici", S.sici, sp.sici, [np.array([-15.0, -3.0, -0.1, 1e-9, 1.0, 1.99, 2.01, 7.0, 30.0, 1e4])],
         rtol=1e-12, atol=1e-15, diff=[]),
    Case("sici diff", S.sici, sp.sici, [np.array([-15.0, -3.0, -0.4, 0.8, 1.99, 2.01, 7.0, 30.0])], rtol=1e-12,
         atol=1e-15),
    # (at z = 1e4 the phase πz²/2 ≈ 1.6e8 carries z²'s rounding: 1e-12 absolute)
    Case("fresnel", S.fresnel, sp.fresnel, [np.array([-12.0, -1.6, -0.3, 1e-9, 0.9, 1.49, 1.51, 4.0, 1e4])],
         rtol=1e-12, atol=1e-12, diff=[]),
    Case("fresnel diff", S.fresnel, sp.fresnel, [np.array([-6.0, -1.6, -0.3, 0.9, 1.49, 1.51, 4.0])], rtol=1e-12,
         atol=1e-14),
    Case("hyp2f1", S.hyp2f1, sp.hyp2f1, [np.array([0.3, 1.5, -0.7, 2.2, 0.5, 1.1, 0.4]),
                                         np.array([0.6, 0.2, 1.3, 0.95, 2.25, -1.4, 0.8]),
                                         np.array([1.7, 2.9, 0.4, 4.1, 3.3, 2.2, 1.1]),
                                         np.array([-20.0, -3.0, -0.5, 0.3, 0.85, 0.95, 0.99])], rtol=1e-12),
    Case("hyp2f1 diff", S.hyp2f1, sp.hyp2f1, [U(0.2, 1.5), U(0.2, 1.5) + 0.05, U(2.0, 3.0) + 0.01,
                                              np.array([-2.0, -0.4, 0.2, 0.6, 0.93])], rtol=1e-11, order=1),
    Case("dawsn", S.dawsn, sp.dawsn, [np.array([-15.0, -3.0, -0.1, 1e-9, 0.19, 0.21, 2.0, 9.9, 10.1, 1e4])],
         rtol=1e-13),
    Case("hyp1f1", S.hyp1f1, sp.hyp1f1, [U(-1.0, 3.0), U(0.5, 4.0), U(-20.0, 15.0)], rtol=1e-12),
    Case("owens_t", S.owens_t, sp.owens_t, [U(-3.0, 5.0), np.array([0.3, 1.0, 2.5, -0.7, 10.0])], rtol=1e-12),
    Case("bessel_jn", lambda z: S.bessel_jn(z, v=3), lambda z: np.stack([sp.jv(k, z) for k in range(4)]),
         [np.array([0.0, 0.5, 3.0, 9.0, 17.0])], atol=1e-13, diff=[]),
    Case("bessel_jn diff", lambda z: S.bessel_jn(z, v=2), lambda z: np.stack([sp.jv(k, z) for k in range(3)]),
         [U(0.5, 10.0)], atol=1e-13),
    Case("logsumexp b sign", lambda a, b: S.logsumexp(a, b=b, return_sign=True, axis=-1),
         lambda a, b: sp.logsumexp(a, b=b, return_sign=True, axis=-1), [U(-3.0, 3.0, 2, 4), U(-1.0, 1.0, 2, 4)],
         diff=[0]),
    Case("softmax", lambda a: S.softmax(a, axis=0), lambda a: sp.softmax(a, axis=0), [U(-3.0, 3.0, 3, 2)]),
    Case("log_softmax", lambda a: S.log_softmax(a, axis=1), lambda a: sp.log_softmax(a, axis=1), [U(-3.0, 3.0, 3, 2)]),
    # sph_harm_y: scipy's complex value as its real and imaginary parts (degrees 0..6, m < 0 included)
    Case("sph_harm_y", lambda t, p: S.sph_harm_y(_SH_N, _SH_M, t, p), lambda t, p: sp.sph_harm_y(_SH_N, _SH_M, t, p).real,
         [U(0.05, 3.1, 7), U(0.0, 6.2, 7)], rtol=1e-12, atol=1e-15),
    Case("sph_harm_y imag", lambda t, p: S.sph_harm_y(_SH_N, _SH_M, t, p, part="imag"),
         lambda t, p: sp.sph_harm_y(_SH_N, _SH_M, t, p).imag, [U(0.05, 3.1, 7), U(0.0, 6.2, 7)], rtol=1e-12,
         atol=1e-15),
    Case("sph_harm_y poles", lambda t: S.sph_harm_y(_SH_N, _SH_M, t, 0.4),
         lambda t: sp.sph_harm_y(_SH_N, _SH_M, t, 0.4).real, [np.array([0.0, np.pi, 0.0, np.pi, 1e-9, 0.0, np.pi])],
         atol=1e-15, diff=[]),
    # associated Legendre functions: integer degrees (polynomials) and real ones, m < 0 included
    Case("lpmv", lambda v, x: S.lpmv(_LM, v, x), lambda v, x: sp.lpmv(_LM, v, x),
         [np.array([2.0, 2.5, 0.3, 4.0, 1.7, 3.0, 5.5]), np.array([-0.7, 0.3, 0.9, -0.2, 0.55, 0.99, 0.1])],
         rtol=1e-11, atol=1e-14),
    Case("lpmv edges", lambda x: S.lpmv(_LM, 3.0, x), lambda x: sp.lpmv(_LM, 3.0, x),
         [np.array([-1.0, 1.0, -1.0, 1.0, 1.5, -0.9999, 0.0])], rtol=1e-10, atol=1e-14, diff=[]),
    # a polynomial (a or b a non-positive integer) beyond the connection formula's reach
    Case("hyp2f1 polynomial", S.hyp2f1, sp.hyp2f1, [np.array([-3.0, -1.0, -5.0, 0.0, -2.0]), U(0.3, 2.0),
                                                    U(0.6, 3.0), np.array([0.97, -30.0, 0.995, 0.93, -12.0])],
         rtol=1e-12, diff=[1, 2, 3]),
]


def _st(name, fname, args, shapes=(), diff=None, **kw):
    """A case for ``stats.<name>.<fname>(x, *shapes, loc, scale)`` against scipy's."""
    mod = getattr(ST, name)
    f = getattr(mod, fname)
    ref = getattr(getattr(ss, name), fname)
    return Case(f"{name}.{fname}", f, ref, args, diff=diff, **kw)


LOC, SCALE = 0.3, 1.7
XS = np.array([-2.5, -0.4, 0.35, 1.2, 3.9])
PX = np.array([0.35, 0.8, 1.9, 4.2, 9.0])           # positive points
QS = np.array([0.03, 0.2, 0.47, 0.77, 0.95])          # (laplace's ppf has a kink at 1/2)

STATS = []
for _name, _shapes, _x in [("norm", [], XS), ("expon", [], PX), ("laplace", [], XS), ("logistic", [], XS),
                           ("cauchy", [], XS), ("uniform", [], np.array([0.4, 0.9, 1.3, 1.8, 1.95])),
                           ("gumbel_r", [], XS), ("gumbel_l", [], XS), ("t", [np.full(5, 3.7)], XS),
                           ("chi2", [np.full(5, 3.3)], PX), ("gamma", [np.full(5, 2.4)], PX),
                           ("beta", [np.full(5, 2.2), np.full(5, 3.1)], np.array([0.35, 0.6, 0.9, 1.5, 1.8])),
                           ("lognorm", [np.full(5, 0.7)], PX), ("pareto", [np.full(5, 2.6)], PX + 1.5),
                           ("gennorm", [np.full(5, 1.6)], XS),
                           ("truncnorm", [np.full(5, -0.8), np.full(5, 1.9)], np.array([-0.9, -0.6, 0.5, 1.7, 3.1])),
                           ("vonmises", [np.full(5, 2.3)], np.array([-2.0, -0.5, 0.3, 1.0, 1.9])),
                           ("wrapcauchy", [np.full(5, 0.45)], np.array([0.2, 0.5, 1.3, 2.0, 2.9]))]:
    _mod = getattr(ST, _name)
    for _fn in _mod.__all__:
        if _fn in ("ppf", "isf"):
            STATS.append(_st(_name, _fn, [QS] + _shapes + [np.full(5, LOC), np.full(5, SCALE)], rtol=1e-11, atol=1e-13))
        else:
            STATS.append(_st(_name, _fn, [_x] + _shapes + [np.full(5, LOC), np.full(5, SCALE)], rtol=1e-11,
                             atol=1e-14))

_K = np.array([0.0, 1.0, 2.0, 3.0, 7.0])
for _name, _params, _k in [("poisson", [np.full(5, 2.6)], _K), ("binom", [np.full(5, 7.0), np.full(5, 0.35)], _K),
                           ("nbinom", [np.full(5, 3.5), np.full(5, 0.4)], _K),
                           ("bernoulli", [np.full(5, 0.3)], np.array([0.0, 1.0, 1.0, 0.0, 2.0])),
                           ("geom", [np.full(5, 0.3)], _K + 1),
                           ("betabinom", [np.full(5, 7.0), np.full(5, 1.5), np.full(5, 2.5)], _K)]:
    for _fn in getattr(ST, _name).__all__:
        if _fn == "entropy":
            continue
        _args = ([QS] if _fn == "ppf" else [_k]) + _params
        # the counts n of binom/betabinom are not differentiable (integers)
        _diff = [i for i in range(1, len(_args)) if not (_name in ("binom", "betabinom") and i == 1)]
        STATS.append(_st(_name, _fn, _args, diff=_diff, rtol=1e-11, atol=1e-14))

_COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]])
STATS += [
    Case("multivariate_normal.logpdf", ST.multivariate_normal.logpdf, ss.multivariate_normal.logpdf,
         [U(-2.0, 2.0, 4, 3), U(-1.0, 1.0, 3), _COV], rtol=1e-12, vmap=False),
    Case("multivariate_normal.pdf diag", lambda x, m, c: ST.multivariate_normal.pdf(x, m, c),
         lambda x, m, c: ss.multivariate_normal.pdf(x, m, np.diag(c)), [U(-2.0, 2.0, 4, 3), U(-1.0, 1.0, 3),
                                                                          U(0.5, 2.0, 3)], rtol=1e-12),
    Case("dirichlet.logpdf", ST.dirichlet.logpdf, ss.dirichlet.logpdf,
         [np.array([0.2, 0.5, 0.3]), np.array([1.5, 2.0, 0.7])], rtol=1e-12, vmap=False),
    Case("dirichlet.pdf points", ST.dirichlet.pdf, ss.dirichlet.pdf,
         [np.array([[0.2, 0.1], [0.5, 0.6], [0.3, 0.3]]), np.array([1.5, 2.0, 0.7])], rtol=1e-12, diff=[1],
         vmap=False),
    Case("multinomial.logpmf", ST.multinomial.logpmf, ss.multinomial.logpmf,
         [np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0], [1.0, 1.0, 1.0]]), 6, np.array([0.2, 0.5, 0.3])], diff=[2],
         rtol=1e-12, vmap=False),
    Case("wishart.logpdf", ST.wishart.logpdf, ss.wishart.logpdf, [_COV, 5.5, _COV * 0.5 + 0.5 * np.eye(3)],
         rtol=1e-12, diff=[0, 1, 2], vmap=False, order=1),
    Case("wishart.pdf", ST.wishart.pdf, ss.wishart.pdf, [_COV, 5.5, _COV * 0.5 + 0.5 * np.eye(3)],
         rtol=1e-11, diff=[0, 2], vmap=False, order=1),
    Case("multinomial.pmf", ST.multinomial.pmf, ss.multinomial.pmf,
         [np.array([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0], [1.0, 1.0, 1.0]]), 6, np.array([0.2, 0.5, 0.3])], diff=[2],
         rtol=1e-12, vmap=False),
    Case("poisson.entropy", ST.poisson.entropy, lambda mu: ss.poisson.entropy(mu), [np.array([0.5, 3.0, 40.0])],
         rtol=1e-11),
    Case("sem", ST.sem, ss.sem, [U(-2.0, 2.0, 6, 3)], rtol=1e-12),
    Case("rankdata", lambda a: ST.rankdata(a, axis=1), lambda a: ss.rankdata(a, axis=1),
         [np.array([[3.0, 1.0, 3.0, 2.0], [5.0, 5.0, 5.0, 1.0]])], diff=[]),
    *[Case(f"rankdata {m}", lambda a, m=m: ST.rankdata(a, m), lambda a, m=m: ss.rankdata(a, m),
           [np.array([3.0, 1.0, 3.0, 2.0, 1.0, 7.0])], diff=[]) for m in ("min", "max", "dense", "ordinal")],
    Case("mode", lambda a: tuple(ST.mode(a, axis=1)), lambda a: tuple(ss.mode(a, axis=1)),
         [np.array([[3.0, 1.0, 3.0, 2.0, 1.0], [4.0, 4.0, 0.0, 0.0, 4.0]])], diff=[]),
]

_A = RNG.normal(size=(4, 4))
_SPD = _A @ _A.T + 4 * np.eye(4)
_RANK2 = RNG.normal(size=(4, 2)) @ RNG.normal(size=(2, 3))
LINALG = [
    Case("linalg.solve", SL.solve, scipy.linalg.solve, [_A + 4 * np.eye(4), RNG.normal(size=(4, 2))], rtol=1e-11),
    Case("linalg.solve pos", lambda a, b: SL.solve(a, b, assume_a="pos"), lambda a, b: scipy.linalg.solve(a, b, assume_a="pos"),
         [_SPD, RNG.normal(size=4)], rtol=1e-11),
    Case("linalg.solve sym lower", lambda a, b: SL.solve(a, b, assume_a="sym", lower=True),
         lambda a, b: scipy.linalg.solve(a, b, assume_a="sym", lower=True), [np.tril(_SPD), RNG.normal(size=4)],
         rtol=1e-11),
    Case("linalg.inv", SL.inv, scipy.linalg.inv, [_A + 4 * np.eye(4)], rtol=1e-11),
    Case("linalg.det", SL.det, scipy.linalg.det, [_A + 4 * np.eye(4)], rtol=1e-11),
    Case("linalg.lu_factor solve", lambda a, b: SL.lu_solve(SL.lu_factor(a), b),
         lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b), [_A, RNG.normal(size=(4, 3))], rtol=1e-10),
    Case("linalg.lu", lambda a: tuple(SL.lu(a)), lambda a: tuple(scipy.linalg.lu(a)), [_A], rtol=1e-11, atol=1e-13,
         order=1),
    Case("linalg.lu wide permute_l", lambda a: tuple(SL.lu(a, permute_l=True)),
         lambda a: tuple(scipy.linalg.lu(a, permute_l=True)), [RNG.normal(size=(3, 5))], rtol=1e-11, atol=1e-13,
         order=1, vmap=False),
    Case("linalg.cho_solve", lambda a, b: SL.cho_solve(SL.cho_factor(a, lower=True), b),
         lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a, lower=True), b), [_SPD, RNG.normal(size=4)],
         rtol=1e-11),
    Case("linalg.qr", lambda a: tuple(SL.qr(a, mode="economic")), lambda a: tuple(scipy.linalg.qr(a, mode="economic")),
         [RNG.normal(size=(5, 3))], rtol=1e-10, atol=1e-12, order=1),
    Case("linalg.svd values", lambda a: SL.svd(a, compute_uv=False), lambda a: scipy.linalg.svd(a, compute_uv=False),
         [RNG.normal(size=(5, 3))], rtol=1e-11),
    Case("linalg.svdvals", SL.svdvals, scipy.linalg.svdvals, [RNG.normal(size=(3, 4))], rtol=1e-11),
    Case("linalg.qr_multiply", lambda a, c: tuple(SL.qr_multiply(a, c)), lambda a, c: tuple(scipy.linalg.qr_multiply(a, c)),
         [RNG.normal(size=(5, 3)), RNG.normal(size=(2, 5))], rtol=1e-10, atol=1e-12, order=1, vmap=False),
    Case("linalg.qr_multiply left", lambda a, c: tuple(SL.qr_multiply(a, c, "left")),
         lambda a, c: tuple(scipy.linalg.qr_multiply(a, c, "left")), [RNG.normal(size=(5, 3)), RNG.normal(size=(3, 2))],
         rtol=1e-10, atol=1e-12, order=1, vmap=False),
    Case("linalg.eigh values only", lambda a: SL.eigh(a, eigvals_only=True),
         lambda a: scipy.linalg.eigh(a, eigvals_only=True), [_SPD], rtol=1e-11),
    Case("linalg.eigh subset", lambda a: SL.eigh(a, eigvals_only=True, subset_by_index=(1, 2)),
         lambda a: scipy.linalg.eigh(a, eigvals_only=True, subset_by_index=(1, 2)), [_SPD], rtol=1e-11),
    Case("linalg.eigh upper", lambda a: SL.eigh(a, lower=False)[0], lambda a: scipy.linalg.eigh(a, lower=False)[0],
         [np.triu(_SPD)], rtol=1e-11),
    Case("linalg.expm", SL.expm, scipy.linalg.expm, [RNG.normal(size=(4, 4))], rtol=1e-11, atol=1e-13),
    Case("linalg.expm big", SL.expm, scipy.linalg.expm, [RNG.normal(size=(3, 3)) * 6], rtol=1e-9, order=1),
    Case("linalg.expm_frechet", lambda a, e: tuple(SL.expm_frechet(a, e)),
         lambda a, e: tuple(scipy.linalg.expm_frechet(a, e)), [RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))],
         rtol=1e-10, atol=1e-12, order=1, vmap=False),
    Case("linalg.sqrtm", SL.sqrtm, scipy.linalg.sqrtm, [_SPD], rtol=1e-10),
    Case("linalg.polar", lambda a: tuple(SL.polar(a)), lambda a: tuple(scipy.linalg.polar(a)),
         [_A + 4 * np.eye(4)], rtol=1e-10, atol=1e-12, order=1),
    Case("linalg.block_diag", SL.block_diag, scipy.linalg.block_diag,
         [RNG.normal(size=(2, 2)), RNG.normal(size=(1, 3)), RNG.normal(size=3)], vmap=False),
    Case("linalg.toeplitz", SL.toeplitz, scipy.linalg.toeplitz, [RNG.normal(size=4), RNG.normal(size=3)]),
    Case("linalg.toeplitz sym", SL.toeplitz, scipy.linalg.toeplitz, [RNG.normal(size=4)]),
    Case("linalg.circulant", SL.circulant, scipy.linalg.circulant, [RNG.normal(size=4)]),
    Case("linalg.hankel", SL.hankel, scipy.linalg.hankel, [RNG.normal(size=3), RNG.normal(size=4)]),
    Case("linalg.companion", SL.companion, scipy.linalg.companion, [np.array([2.0, -1.0, 3.0, 0.5])], vmap=False),
    Case("linalg.hessenberg", SL.hessenberg, scipy.linalg.hessenberg, [_A], rtol=1e-10, atol=1e-12, order=1),
    Case("linalg.solve_triangular", lambda a, b: SL.solve_triangular(a, b, lower=True, trans="T"),
         lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True, trans="T"),
         [np.tril(_A) + 4 * np.eye(4), RNG.normal(size=4)], rtol=1e-11),
    Case("linalg.solve_sylvester", SL.solve_sylvester, scipy.linalg.solve_sylvester,
         [_A + 3 * np.eye(4), RNG.normal(size=(2, 2)) + 3 * np.eye(2), RNG.normal(size=(4, 2))], rtol=1e-10,
         vmap=False),
    Case("linalg.funm exp", lambda a: SL.funm(a, anp.exp), lambda a: scipy.linalg.funm(a, np.exp), [_SPD * 0.1],
         rtol=1e-9, vmap=False, diff=[]),
    Case("linalg.pinv", SL.pinv, scipy.linalg.pinv, [RNG.normal(size=(4, 3))], rtol=1e-10, atol=1e-13),
    Case("linalg.pinv atol", lambda a: SL.pinv(a, atol=0.5), lambda a: scipy.linalg.pinv(a, atol=0.5),
         [_RANK2 + 1e-3 * RNG.normal(size=(4, 3))], rtol=1e-10, atol=1e-13, vmap=False, order=1),
    # real Schur form: _A has a complex pair (a 2x2 block) and two real eigenvalues
    Case("linalg.schur", lambda a: tuple(SL.schur(a)), lambda a: tuple(scipy.linalg.schur(a)), [_A], rtol=1e-12,
         atol=1e-14),
    Case("linalg.schur sym", lambda a: tuple(SL.schur(a)), lambda a: tuple(scipy.linalg.schur(a)), [_SPD],
         rtol=1e-12, atol=1e-14, order=1),
    Case("linalg.schur sort", lambda a: tuple(SL.schur(a, sort="lhp")), lambda a: tuple(scipy.linalg.schur(a, sort="lhp")),
         [_A], rtol=1e-12, atol=1e-14, order=1),
]

ALL = SPECIAL + STATS + LINALG


def _same(got, want, case, what, dt=np.float64):
    g, w = tree_flatten(got)[0], tree_flatten(tuple(want) if isinstance(want, tuple) else want)[0]
    assert len(g) == len(w), f"{case.name}{what}: {len(g)} outputs, scipy has {len(w)}"
    rtol = case.rtol if dt == np.float64 else max(case.rtol, 2e-5)
    atol = case.atol if dt == np.float64 else max(case.atol, 1e-6)
    for a, b in zip(g, w):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{case.name}{what}: shape {a.shape}, scipy's {b.shape}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{case.name}{what}")


def _ref(case, args):
    with np.errstate(all="ignore"):
        return case.ref(*args)


@pytest.mark.parametrize("case", ALL, ids=repr)
def test_values_match_scipy_eager_and_traced(case):
    want = _ref(case, case.args)
    _same(case.f(*case.args), want, case, " (eager)")
    _same(ad.jit(case.f, backend="interpret")(*case.args), want, case, " (traced)")


@pytest.mark.parametrize("case", [c for c in SPECIAL if c.f32], ids=repr)
def test_special_keeps_float32(case):
    a32 = [np.asarray(a, np.float32) if np.asarray(a).dtype == np.float64 else a for a in case.args]
    out = ad.jit(case.f, backend="interpret")(*a32)
    for o in tree_flatten(out)[0]:
        o = np.asarray(o)
        if o.dtype.kind == "f":
            assert o.dtype == np.float32, f"{case.name}: float32 inputs give {o.dtype}"
    finite = np.isfinite(np.asarray(tree_flatten(out)[0][0], np.float64))
    # the reference at the float32-rounded inputs
    want = np.asarray(tree_flatten(_ref(case, [np.asarray(a, np.float64) if np.asarray(a).dtype.kind == "f" else a
                                               for a in a32]))[0][0])
    np.testing.assert_allclose(np.asarray(tree_flatten(out)[0][0])[finite], want[finite], rtol=3e-4, atol=1e-6)


@pytest.mark.parametrize("case", [c for c in ALL if c.diff], ids=repr)
def test_derivatives_match_finite_differences(case):
    args = list(case.args)
    idx = [i for i in case.diff if np.asarray(args[i]).dtype.kind == "f" or isinstance(args[i], float)]

    def leaves_of(*vals):
        full = list(args)
        for i, v in zip(idx, vals):
            full[i] = v
        return [o for o in tree_flatten(case.f(*full))[0] if anp.asarray(o).dtype.kind == "f"]
    # derivatives where the function is finite (outside a support a log-density is -inf)
    masks = [np.isfinite(np.asarray(o)) for o in leaves_of(*[args[i] for i in idx])]

    def f(*vals):
        out = [anp.where(m, o, 0.0) for m, o in zip(masks, leaves_of(*vals))]
        return tuple(out) if len(out) > 1 else out[0]
    ad.check_grads(f, tuple(args[i] for i in idx), order=case.order, modes=("fwd", "rev"),
                   eps=1e-5, atol=1e-6, rtol=case.grad_rtol)


@pytest.mark.parametrize("case", [c for c in ALL if c.vmap], ids=repr)
def test_vmap_matches_a_loop(case):
    # batch the first argument over three copies; the rest are shared
    a0 = np.asarray(case.args[0])
    batch = np.stack([a0, a0 if a0.dtype.kind != "f" else a0 * 0.9 + 0.01, a0])
    got = ad.vmap(lambda x: case.f(x, *case.args[1:]))(batch)
    for j, g in enumerate(tree_flatten(got)[0]):
        want = np.stack([np.asarray(tree_flatten(_ref(case, [batch[k]] + list(case.args[1:])))[0][j]) for k in range(3)])
        np.testing.assert_allclose(g, want, rtol=max(case.rtol, 1e-11), atol=max(case.atol, 1e-13),
                                   equal_nan=True, err_msg=f"{case.name} (vmap)")


_JIT = {"gammainc", "betainc", "ndtri diff", "erfinv diff", "i0", "zeta hurwitz", "spence diff", "comb",
        "t.cdf", "truncnorm.logpdf", "poisson.cdf", "multivariate_normal.logpdf", "linalg.expm",
        "linalg.lu", "linalg.solve pos", "linalg.eigh subset", "owens_t", "linalg.schur"}
_JIT_CASES = [c for c in ALL if c.name in _JIT]


def test_every_selected_case_exists():
    assert len(_JIT_CASES) == len(_JIT), sorted(_JIT - {c.name for c in _JIT_CASES})


@pytest.mark.parametrize("case", _JIT_CASES, ids=lambda c: c.name)
def test_selected_cases_under_numba_jit(case):
    # one kernel per case: Numba and LLVM cost grows faster than linearly with the size of
    # one function, so the 17 cases compiled as one program took ~2x their sum (39 vs 21 s)
    jitted = ad.jit(case.f)
    jitted.lower(*case.args).compile()
    _same(assert_compiled(jitted, *case.args), _ref(case, case.args), case, " (numba jit)")


# ----------------------------------------------------------------------------
# properties beyond value matching
# ----------------------------------------------------------------------------

def test_gammainc_derivative_in_a_matches_finite_differences_over_both_branches():
    # x < a + 1 (series) and x > a + 1 (continued fraction)
    a = np.array([0.7, 3.0, 8.0, 2.0])
    x = np.array([0.2, 2.5, 20.0, 9.0])
    h = 1e-6
    fd = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
    g = ad.grad(lambda aa: anp.sum(S.gammainc(aa, x)))(a)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    gx = ad.grad(lambda xx: anp.sum(S.gammaincc(a, xx)))(x)
    np.testing.assert_allclose(gx, -np.exp(-x + (a - 1) * np.log(x) - sp.gammaln(a)), rtol=1e-12)


def test_ndtri_is_accurate_deep_in_the_tails_with_its_derivative():
    p = np.array([1e-300, 1e-100, 1e-30])
    np.testing.assert_allclose(S.ndtri(p), sp.ndtri(p), rtol=1e-14)
    x = sp.ndtri(p)
    np.testing.assert_allclose(ad.vmap(ad.grad(S.ndtri))(p), np.sqrt(2 * np.pi) * np.exp(x * x / 2), rtol=1e-12)


def test_stats_argument_conventions():
    # loc/scale positionally or by keyword; shape parameters by name
    a = ST.gamma.logpdf(2.0, 1.5, 0.5, 2.0)
    assert a == pytest.approx(ST.gamma.logpdf(2.0, a=1.5, loc=0.5, scale=2.0), rel=1e-15)
    assert a == pytest.approx(ss.gamma.logpdf(2.0, 1.5, 0.5, 2.0), rel=1e-13)
    assert ST.norm.logpdf(0.0, scale=-1.0) != ST.norm.logpdf(0.0, scale=-1.0)      # nan, as scipy
    assert ST.expon.logpdf(-1.0) == -np.inf and ST.expon.pdf(-1.0) == 0.0
    with pytest.raises(TypeError, match="missing shape parameter"):
        ST.gamma.pdf(1.0)


def test_stats_modules_import_as_modules():
    import importlib
    for name in ST.DISTRIBUTIONS:
        mod = importlib.import_module(f"autodiff.scipy.stats.{name}")
        assert mod is getattr(ST, name)
        assert mod.__doc__ and mod.__all__
    from autodiff.scipy.stats import t
    assert t.logpdf(0.5, 3.0) == pytest.approx(ss.t.logpdf(0.5, 3.0), rel=1e-13)


def test_gaussian_kde_matches_scipy_and_differentiates():
    data = RNG.normal(size=(2, 30))
    pts = RNG.normal(size=(2, 5))
    w = RNG.uniform(0.5, 1.5, 30)
    for kw in ({}, {"bw_method": "silverman"}, {"bw_method": 0.4}, {"weights": w}):
        k, kr = ST.gaussian_kde(data, **kw), ss.gaussian_kde(data, **kw)
        np.testing.assert_allclose(k(pts), kr(pts), rtol=1e-11)
        np.testing.assert_allclose(k.logpdf(pts), kr.logpdf(pts), rtol=1e-11)
    ad.check_grads(lambda p: ST.gaussian_kde(data).logpdf(p), (pts,), order=2, modes=("fwd", "rev"))
    g = ad.jit(lambda d, p: ST.gaussian_kde(d).logpdf(p), backend="interpret")(data, pts)
    np.testing.assert_allclose(g, ss.gaussian_kde(data).logpdf(pts), rtol=1e-11)


def test_expm_frechet_is_the_derivative_of_expm():
    a, e = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    _, d = ad.jvp(SL.expm, (a,), (e,))
    np.testing.assert_allclose(d, scipy.linalg.expm_frechet(a, e)[1], rtol=1e-10, atol=1e-12)


def test_lu_reconstructs_and_is_jittable_in_batches():
    a = RNG.normal(size=(3, 4, 4))
    p, l, u = ad.jit(lambda x: tuple(SL.lu(x)), backend="interpret")(a)
    np.testing.assert_allclose(p @ l @ u, a, atol=1e-12)
    np.testing.assert_allclose(np.tril(u, -1), 0)
    np.testing.assert_allclose(np.diagonal(l, axis1=-2, axis2=-1), 1)


def test_schur_derivative_matches_finite_differences_of_scipy_through_a_2x2_block():
    # T's 2x2 block (a complex pair) stays in standard form along the perturbation
    a, d = _A, RNG.normal(size=(4, 4))
    (t, z), (dt, dz) = ad.jvp(lambda m: tuple(SL.schur(m)), (a,), (d,))
    h = 1e-6
    (tp, zp), (tm, zm) = scipy.linalg.schur(a + h * d), scipy.linalg.schur(a - h * d)
    np.testing.assert_allclose(dt, (tp - tm) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(dz, (zp - zm) / (2 * h), atol=1e-7)
    assert abs(t[1, 0]) > 0.1 or abs(t[2, 1]) > 0.1 or abs(t[3, 2]) > 0.1      # the block is there
    assert np.count_nonzero(np.tril(dt, -2)) == 0                              # structure kept


def test_schur_under_numba_jit_vmap_float32_and_errors():
    a = RNG.normal(size=(3, 4, 4))
    t = ad.vmap(lambda m: SL.schur(m)[0])(a)
    np.testing.assert_allclose(t, np.stack([scipy.linalg.schur(m)[0] for m in a]), rtol=1e-12, atol=1e-14)
    f = ad.jit(lambda m: SL.schur(m, sort="iuc"))
    t2, z2, k = f(a[0])
    tr, zr, kr = scipy.linalg.schur(a[0], sort="iuc")
    np.testing.assert_allclose(z2, zr, rtol=1e-12, atol=1e-14)
    assert int(k) == kr
    # the derivative compiled by Numba (its backward pass contracts the Sylvester solution)
    g = ad.jit(ad.grad(lambda m: SL.schur(m)[0][0, 1]))(a[0])
    np.testing.assert_allclose(g, ad.grad(lambda m: SL.schur(m)[0][0, 1])(a[0]), rtol=1e-10, atol=1e-12)
    t32, z32 = SL.schur(a[0].astype(np.float32))
    assert t32.dtype == z32.dtype == np.float32
    assert ad.jit(lambda m: SL.schur(m)[1], backend="interpret")(a[0].astype(np.float32)).dtype == np.float32
    # issue 16: output='complex' is supported (tests/test_linalg_complex.py covers it)
    tc = ad.jit(lambda m: SL.schur(m, output="complex")[0], backend="interpret")(a[0])
    np.testing.assert_allclose(tc, scipy.linalg.schur(a[0], output="complex")[0], atol=1e-14)
    with pytest.raises(ValueError, match="square"):
        SL.schur(a[0, :3])
    # repeated eigenvalues: the Schur vectors are not differentiable (documented)
    with pytest.raises(np.linalg.LinAlgError):
        ad.jvp(lambda m: SL.schur(m)[1], (np.eye(3),), (RNG.normal(size=(3, 3)),))


def test_sph_harm_y_needs_a_static_degree_bound_under_jit():
    n, m, th, ph = np.array([3, 1, 2]), np.array([2, -1, 0]), U(0.1, 3.0, 3), U(0.0, 6.0, 3)
    got = ad.jit(lambda n, t, p: S.sph_harm_y(n, m, t, p, n_max=3), backend="interpret")(n, th, ph)
    np.testing.assert_allclose(got, sp.sph_harm_y(n, m, th, ph).real, rtol=1e-12, atol=1e-15)
    # n beyond n_max is clipped to it, as in JAX
    np.testing.assert_allclose(S.sph_harm_y(np.array([5]), 1, 0.4, 0.3, n_max=2), sp.sph_harm_y(2, 1, 0.4, 0.3).real,
                               rtol=1e-12)
    with pytest.raises(ad.errors.ConcretizationError, match="n_max"):
        ad.jit(lambda n, t, p: S.sph_harm_y(n, m, t, p), backend="interpret")(n, th, ph)
    with pytest.raises(ad.errors.UnsupportedError, match="diff_n"):
        S.sph_harm_y(n, m, th, ph, diff_n=1)
    # |Y|² integrates to 1 over the sphere (orthonormal): Gauss–Legendre in cos θ, uniform in φ
    xg, wg = np.polynomial.legendre.leggauss(12)
    T, Pp = np.meshgrid(np.arccos(xg), np.linspace(0, 2 * np.pi, 24, endpoint=False), indexing="ij")
    re = S.sph_harm_y(np.full(T.shape, 4), np.full(T.shape, -3), T, Pp)
    im = S.sph_harm_y(np.full(T.shape, 4), np.full(T.shape, -3), T, Pp, part="imag")
    assert np.sum((re ** 2 + im ** 2) * wg[:, None]) * (2 * np.pi / 24) == pytest.approx(1.0, rel=1e-12)


def test_lpmv_where_scipy_gives_nan_against_mpmath():
    import mpmath
    # m < 0 at an integer degree below |m|: scipy 1.17 returns nan; the function is finite
    m, v, x = np.array([-1, -2, -2, -3]), np.array([0.0, 0.0, 1.0, 1.0]), np.array([-0.6, 0.4, -0.95, 0.8])
    assert np.isnan(sp.lpmv(m, v, x)).all()
    want = [float(mpmath.legenp(vv, mm, xx, type=2)) for mm, vv, xx in zip(m, v, x)]
    np.testing.assert_allclose(S.lpmv(m, v, x), want, rtol=1e-9)
    with pytest.raises(ad.errors.ConcretizationError, match="order m"):
        ad.jit(lambda mm, xx: S.lpmv(mm, 2.0, xx), backend="interpret")(np.array([1]), np.array([0.3]))
    assert np.isnan(S.lpmv(0.5, 2.0, 0.3))              # non-integer order: nan, as scipy
