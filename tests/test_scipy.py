"""``autodiff.scipy`` against scipy itself (scipy is a test dependency only).

* values over wide ranges, eagerly, traced (make_jaxpr + interpreter) and jitted;
* derivatives of order 2 by ``check_grads`` (forward and reverse), float64 and float32;
* the custom derivatives are the closed forms (d erf = 2/√π e^{-x²}, d gammaln = digamma,
  d digamma = polygamma(1, ·), ...), checked against scipy at higher orders too;
* tails: log_ndtr and its gradient stay finite and accurate far into x → -∞.
"""
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.special as sp
import scipy.stats

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends.interpreter import run_closed
from autodiff.scipy import special as S
from autodiff.scipy import stats as SS
from autodiff.scipy import linalg as SL


def _rel_err(got, want, floor=1.0):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    fin = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), fin), (got[~fin], want[~fin])
    if not fin.any():
        return 0.0
    return float(np.max(np.abs(got[fin] - want[fin]) / np.maximum(np.abs(want[fin]), floor)))


def _traced(f, x):
    closed = ad.make_jaxpr(f)(x)
    return run_closed(closed, [x])[0]


WIDE = np.concatenate([np.linspace(-25.0, 25.0, 4001), np.geomspace(1e-300, 1.0, 60),
                       -np.geomspace(1e-300, 1.0, 60)])
POS = np.concatenate([np.geomspace(1e-8, 1e8, 401), np.linspace(0.05, 30.0, 600)])
NEG = -np.linspace(0.013, 20.013, 401)


# ----------------------------------------------------------------------------
# values against scipy
# ----------------------------------------------------------------------------

# (name, inputs, relative tolerance, floor of the relative error's denominator);
# scipy's own erfc/ndtr lose ~z²·ε in the far tail, where ours are the more accurate
VALUE_CASES = [
    ("erf", WIDE, 1e-14, 1e-300),
    ("erfc", WIDE, 2e-13, 1e-300),
    ("ndtr", np.concatenate([WIDE, np.linspace(-37.0, 37.0, 501)]), 5e-13, 1e-300),
    ("log_ndtr", np.concatenate([np.linspace(-1e4, 30.0, 2001), np.linspace(-6, 6, 301)]), 1e-13, 1e-300),
    ("gammaln", np.concatenate([POS, NEG]), 3e-14, 1.0),
    ("digamma", np.concatenate([POS, NEG]), 1e-12, 1.0),
]


@pytest.mark.parametrize("name,x,rtol,floor", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_scipy(name, x, rtol, floor):
    f, ref = getattr(S, name), getattr(sp, name)
    want = ref(x)
    assert _rel_err(f(x), want, floor) < rtol                      # eager (numpy)
    assert _rel_err(_traced(f, x), want, floor) < rtol            # traced, interpreted
    assert _rel_err(ad.jit(f)(x), want, floor) < rtol              # compiled by Numba


def test_special_values_and_poles():
    assert S.erf(0.0) == 0.0 and S.erf(np.inf) == 1.0 and S.erf(-np.inf) == -1.0
    assert np.isnan(S.erf(np.nan)) and S.erfc(40.0) == 0.0 and S.erfc(-40.0) == 2.0
    assert S.ndtr(0.0) == 0.5
    np.testing.assert_allclose(S.gammaln(np.array([1.0, 2.0, 0.5])), [0.0, 0.0, 0.5 * np.log(np.pi)],
                               atol=1e-14)
    assert S.gammaln(0.0) == np.inf and S.gammaln(-2.0) == np.inf
    assert np.isnan(S.digamma(-3.0))
    np.testing.assert_allclose(S.digamma(1.0), -np.euler_gamma, rtol=1e-15)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_matches_scipy(n):
    want = sp.polygamma(n, POS)
    assert _rel_err(S.polygamma(n, POS), want) < 1e-13
    assert _rel_err(ad.jit(lambda x: S.polygamma(n, x))(POS), want) < 1e-13
    if n == 1:       # the reflection formula covers negative x for trigamma
        assert _rel_err(S.polygamma(1, NEG), sp.polygamma(1, NEG)) < 1e-12


def test_gamma_betaln_xlogy_logit_expit():
    x = np.array([-2.5, -0.5, 0.3, 1.0, 4.5, 10.0])
    assert _rel_err(S.gamma(x), sp.gamma(x)) < 1e-13
    a, b = np.array([0.5, 2.0, 7.5]), np.array([1.5, 3.0, 0.2])
    assert _rel_err(S.betaln(a, b), sp.betaln(a, b)) < 1e-13
    xs = np.array([0.0, 0.0, 0.0, 0.0, 2.0, -1.5])
    ys = np.array([0.0, -1.0, np.inf, 3.0, 0.5, 4.0])
    np.testing.assert_array_equal(S.xlogy(xs, ys), sp.xlogy(xs, ys))
    np.testing.assert_allclose(S.xlog1py(xs, ys), sp.xlog1py(xs, ys), rtol=1e-15)
    p = np.array([1e-10, 0.2, 0.5, 0.9])
    np.testing.assert_allclose(S.logit(p), sp.logit(p), rtol=1e-14)
    np.testing.assert_allclose(S.expit(np.array([-800.0, 0.0, 3.0])), sp.expit([-800.0, 0.0, 3.0]))


def test_logsumexp_softmax_use_scipy_defaults():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4)) * 30
    np.testing.assert_allclose(S.logsumexp(a), sp.logsumexp(a), rtol=1e-14)
    np.testing.assert_allclose(S.logsumexp(a, axis=1, keepdims=True), sp.logsumexp(a, axis=1, keepdims=True))
    np.testing.assert_allclose(S.softmax(a), sp.softmax(a), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(S.softmax(a, axis=0), sp.softmax(a, axis=0), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(S.log_softmax(a), sp.log_softmax(a), rtol=1e-12)
    np.testing.assert_allclose(ad.jit(S.softmax)(a), sp.softmax(a), rtol=1e-12, atol=1e-300)


def test_logsumexp_primitive():
    # anp.logsumexp's common case is one primitive (logsumexp_p): eager, under grad, under
    # jit (inlined into its definition) and vmap, against scipy, with special values
    # (an all -inf row gives -inf, a +inf element +inf, a nan nan)
    inf, nan = np.inf, np.nan
    a = np.array([[0.5, -1.0, 2.0, 700.0], [-inf, -inf, -inf, -inf], [1.0, inf, 0.0, -2.0],
                  [nan, 0.0, 1.0, 2.0], [-800.0, -801.0, -inf, -799.5]])
    f = lambda x: S.logsumexp(x, axis=1)  # noqa: E731
    assert "logsumexp" in str(ad.make_jaxpr(f)(a))
    with np.errstate(all="ignore"):
        want = sp.logsumexp(a, axis=1)
    for got in (f(a), ad.jit(f)(a), ad.vmap(lambda r: S.logsumexp(r))(a)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    for dt in (np.float32, np.float64):
        x = np.random.default_rng(1).normal(size=(3, 4)).astype(dt) * 10
        for axis, keep in ((0, False), ((0, 1), True), (-1, True)):
            g = lambda v: S.logsumexp(v, axis=axis, keepdims=keep)  # noqa: E731
            assert g(x).dtype == ad.jit(g)(x).dtype == dt
            np.testing.assert_allclose(ad.jit(g)(x), sp.logsumexp(x, axis=axis, keepdims=keep),
                                       rtol=2e-6 if dt == np.float32 else 1e-14)
    # the derivative is the softmax, the second its Jacobian diag(s) - s s^T
    x = np.array([0.3, -1.2, 2.0, 0.0])
    s_ = sp.softmax(x)
    np.testing.assert_allclose(ad.grad(S.logsumexp)(x), s_, rtol=1e-14)
    np.testing.assert_allclose(ad.jit(ad.hessian(S.logsumexp))(x),
                               np.diag(s_) - np.outer(s_, s_), rtol=1e-12, atol=1e-15)
    ad.check_grads(lambda v: S.logsumexp(v * v, axis=0), (x.reshape(2, 2),), order=2)


def test_float32_stays_float32():
    x = np.linspace(-4, 4, 101).astype(np.float32)
    for name in ["erf", "erfc", "ndtr", "log_ndtr"]:
        got = getattr(S, name)(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, getattr(sp, name)(x.astype(np.float64)), rtol=2e-6, atol=1e-7)
        assert ad.jit(getattr(S, name))(x).dtype == np.float32
    xp = np.linspace(0.1, 20, 50).astype(np.float32)
    for name in ["gammaln", "digamma"]:
        got = getattr(S, name)(xp)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, getattr(sp, name)(xp.astype(np.float64)), rtol=1e-5, atol=1e-5)
    assert S.erf(np.float16(0.5)).dtype == np.float16
    assert type(S.erf(0.5)) is np.float64           # numpy scalar for a 0-d result


# ----------------------------------------------------------------------------
# derivatives
# ----------------------------------------------------------------------------

GRAD_X = np.array([-2.7, -0.8, -0.3, 0.2, 0.45, 0.6, 1.9, 4.0])
GRAD_POS = np.array([0.3, 0.9, 2.5, 7.0, 13.0])
GRAD_ALL = np.concatenate([GRAD_POS, [-0.3, -1.6, -2.5]])

GRAD_CASES = [
    ("erf", S.erf, GRAD_X), ("erfc", S.erfc, GRAD_X), ("ndtr", S.ndtr, GRAD_X),
    ("log_ndtr", S.log_ndtr, np.array([-30.0, -3.0, -1.2, -0.7, 0.3, 4.0])),
    ("gammaln", S.gammaln, GRAD_ALL), ("digamma", S.digamma, GRAD_ALL),
    ("polygamma1", lambda x: S.polygamma(1, x), GRAD_ALL),
    ("gamma", S.gamma, np.array([-1.5, -0.4, 0.7, 3.2])),
    ("xlogy", lambda x: S.xlogy(x, x * x + 0.5), GRAD_X),
    ("xlog1py", lambda x: S.xlog1py(x, x * x), GRAD_X),
    ("logit", S.logit, np.array([0.1, 0.5, 0.8])),
    ("expit", S.expit, GRAD_X),
    ("logsumexp", lambda x: S.logsumexp(x * x), GRAD_X),
    ("softmax", lambda x: S.softmax(anp.reshape(x, (2, 4)), axis=1), GRAD_X),
    ("norm.logpdf", lambda x: SS.norm.logpdf(x, 0.3, 1.7), GRAD_X),
    ("norm.cdf", lambda x: SS.norm.cdf(x, loc=-0.2, scale=0.8), GRAD_X),
    ("gelu", lambda x: ad.nn.gelu(x, approximate=False), GRAD_X),
]


@pytest.mark.parametrize("dt", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,f,x", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_order_2(name, f, x, dt):
    x = x.astype(dt)
    if dt == np.float64:
        ad.check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    else:
        ad.check_grads(f, (x,), order=2, modes=("fwd", "rev"), eps=1e-3, atol=5e-2, rtol=5e-2)


def test_derivatives_are_the_closed_forms():
    x = GRAD_X
    g = ad.vmap(ad.grad(S.erf))(x)
    np.testing.assert_allclose(g, 2 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-15)
    xp = GRAD_ALL
    np.testing.assert_allclose(ad.vmap(ad.grad(S.gammaln))(xp), sp.digamma(xp), rtol=1e-13)
    d2 = ad.vmap(ad.grad(ad.grad(S.gammaln)))(xp)
    np.testing.assert_allclose(d2, sp.polygamma(1, xp), rtol=1e-12)
    d4 = ad.grad(ad.grad(ad.grad(S.digamma)))(2.5)
    np.testing.assert_allclose(d4, sp.polygamma(3, 2.5), rtol=1e-12)
    # through jit, a Hessian: diag = trigamma
    h = ad.jit(ad.hessian(lambda v: anp.sum(S.gammaln(v))))(GRAD_POS)
    np.testing.assert_allclose(np.diag(h), sp.polygamma(1, GRAD_POS), rtol=1e-12)
    np.testing.assert_allclose(h - np.diag(np.diag(h)), 0.0, atol=0)


def test_log_ndtr_tail_gradient_is_finite_and_accurate():
    x = np.array([-1e4, -200.0, -37.0, -5.0])
    g = ad.vmap(ad.grad(S.log_ndtr))(x)
    # d/dx log Φ(x) = φ(x)/Φ(x) → -x - 1/x + ... (Mills ratio) as x → -∞
    np.testing.assert_allclose(g[:2], -x[:2] - 1 / x[:2] + 2 / x[:2] ** 3, rtol=1e-10)
    # moderate tail: the naive exp(log φ - log Φ) is still accurate enough to compare with
    want = np.exp(scipy.stats.norm.logpdf(x[2:]) - sp.log_ndtr(x[2:]))
    np.testing.assert_allclose(g[2:], want, rtol=1e-12)
    assert np.isfinite(ad.jit(ad.grad(ad.grad(S.log_ndtr)))(-300.0))


def test_xlogy_gradient_at_zero():
    # d/dx x·log y = log y, d/dy = x/y; at x = 0, y = 0 both stay finite (0)
    gx, gy = ad.grad(S.xlogy, argnums=(0, 1))(0.0, 2.0)
    assert np.isclose(gx, np.log(2.0)) and gy == 0.0
    gx, gy = ad.grad(S.xlogy, argnums=(0, 1))(0.0, 0.0)
    assert np.isfinite(gx) and gy == 0.0


def test_gelu_exact():
    x = np.linspace(-6, 6, 61)
    np.testing.assert_allclose(ad.nn.gelu(x, approximate=False), x * sp.ndtr(x), rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(ad.jit(lambda v: ad.nn.gelu(v, approximate=False))(x), x * sp.ndtr(x),
                               rtol=1e-14, atol=1e-300)
    g = ad.vmap(ad.grad(lambda v: ad.nn.gelu(v, approximate=False)))(x)
    np.testing.assert_allclose(g, sp.ndtr(x) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi), rtol=1e-13,
                               atol=1e-300)


# ----------------------------------------------------------------------------
# stats.norm and linalg
# ----------------------------------------------------------------------------

def test_norm_matches_scipy_stats():
    x = np.linspace(-40, 10, 201)
    for name in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        want = getattr(scipy.stats.norm, name)(x, loc=0.5, scale=2.0)
        got = getattr(SS.norm, name)(x, loc=0.5, scale=2.0)
        assert _rel_err(got, want, 1e-300) < 1e-12, name
    assert SS.norm.logpdf(np.float32(0.5)).dtype == np.float32


def test_cho_factor_cho_solve_solve_triangular():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(4, 4))
    a = m @ m.T + 4 * np.eye(4)
    b = rng.normal(size=(4, 2))
    for lower in (False, True):
        c, low = SL.cho_factor(a, lower=lower)
        assert low is lower
        np.testing.assert_allclose(SL.cho_solve((c, low), b), scipy.linalg.cho_solve((c, low), b), rtol=1e-12)
        np.testing.assert_allclose(SL.cholesky(a, lower=lower), scipy.linalg.cholesky(a, lower=lower),
                                   rtol=1e-12)
    t = np.triu(a)
    np.testing.assert_allclose(SL.solve_triangular(t, b), scipy.linalg.solve_triangular(t, b), rtol=1e-12)
    np.testing.assert_allclose(SL.solve_triangular(t, b, trans="T"),
                               scipy.linalg.solve_triangular(t, b, trans="T"), rtol=1e-12)

    def f(a_, b_):
        sym = (a_ + anp.swapaxes(a_, 0, 1)) * 0.5
        return SL.cho_solve(SL.cho_factor(sym), b_)
    ad.check_grads(f, (a, b), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(ad.jit(f)(a, b), np.linalg.solve(a, b), rtol=1e-12)


def test_autodiff_scipy_does_not_import_scipy():
    code = ("import sys, autodiff.scipy, autodiff.scipy.special, autodiff.scipy.stats, "
            "autodiff.scipy.linalg; print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["autodiff.scipy.special", "autodiff.scipy.stats", "autodiff.scipy.linalg"])
def test_docstring_examples(name):
    import doctest
    import importlib
    res = doctest.testmod(importlib.import_module(name),
                          optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted > 0 and res.failed == 0


# ----------------------------------------------------------------------------
# names whose results scipy cannot be compared with case by case: aliases, constant
# and structured matrices
# ----------------------------------------------------------------------------

RNG = np.random.default_rng(7)


def test_scipy_special_aliases():
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(S.psi(x), scipy.special.psi(x), rtol=1e-13)


def test_scipy_linalg_constant_matrices():
    np.testing.assert_allclose(SL.hilbert(4), scipy.linalg.hilbert(4))
    np.testing.assert_allclose(SL.invhilbert(5), scipy.linalg.invhilbert(5), rtol=1e-12)
    for kind in ("symmetric", "lower", "upper"):
        np.testing.assert_allclose(SL.pascal(5, kind), scipy.linalg.pascal(5, kind))
        np.testing.assert_allclose(SL.invpascal(5, kind), scipy.linalg.invpascal(5, kind))
    np.testing.assert_array_equal(SL.hadamard(8), scipy.linalg.hadamard(8))
    np.testing.assert_allclose(SL.helmert(5), scipy.linalg.helmert(5), atol=1e-15)
    np.testing.assert_allclose(SL.helmert(4, full=True), scipy.linalg.helmert(4, full=True), atol=1e-15)
    np.testing.assert_allclose(SL.dft(4, "sqrtn"), scipy.linalg.dft(4, "sqrtn"), atol=1e-15)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_scipy_linalg_structured_matrices(n):
    a = RNG.normal(size=n + 1)
    a[0] = 1.5
    np.testing.assert_allclose(SL.fiedler_companion(a), scipy.linalg.fiedler_companion(a), rtol=1e-14)
    np.testing.assert_allclose(SL.fiedler(a), scipy.linalg.fiedler(a))
    f, s = RNG.uniform(size=n), RNG.uniform(size=n - 1)
    np.testing.assert_allclose(SL.leslie(f, s), scipy.linalg.leslie(f, s))
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(SL.convolution_matrix(a[:3], n, mode), scipy.linalg.convolution_matrix(a[:3], n, mode))
    g = ad.grad(lambda v: anp.sum(SL.convolution_matrix(v, n) @ np.arange(n, dtype=float)))(a[:3])
    np.testing.assert_allclose(g, [np.arange(n).sum()] * 3)
    d, e = RNG.normal(size=n), RNG.normal(size=n - 1)
    w = ad.jit(lambda d, e: SL.eigh_tridiagonal(d, e, eigvals_only=True), backend="interpret")(d, e)
    np.testing.assert_allclose(w, scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True), rtol=1e-12, atol=1e-13)
    ad.check_grads(lambda d: SL.eigh_tridiagonal(d, e, eigvals_only=True), (d,), order=1, modes=("fwd", "rev"))
    w2, v2 = SL.eigh_tridiagonal(d, e, select="i", select_range=(0, 1))
    np.testing.assert_allclose(w2, scipy.linalg.eigh_tridiagonal(d, e, select="i", select_range=(0, 1))[0], rtol=1e-12)
