"""The accuracy ``autodiff.scipy.special`` states for its iterative functions, measured
against scipy on fixed grids (issue 14): where a docstring gives a bound or a range
where the result is nan, a test here holds it to that."""
import mpmath
import numpy as np
import pytest
import scipy.special as sp

import autodiff as ad
import autodiff.scipy.special as S

# gammainc/gammaincc: a in [1e-3, 1e4], x in [1e-4, 3e4], log-spaced
GA = np.logspace(-3, 4, 29)
GX = np.logspace(-4, 4.5, 35)


@pytest.fixture(scope="module")
def gamma_errors():
    a, x = np.meshgrid(GA, GX, indexing="ij")
    with np.errstate(all="ignore"):
        p, q = S.gammainc(a, x), S.gammaincc(a, x)
    return np.maximum(np.abs(p - sp.gammainc(a, x)), np.abs(q - sp.gammaincc(a, x))).max(axis=1)


def test_gammainc_meets_its_stated_bounds(gamma_errors):
    err = gamma_errors                       # worst absolute error of P and Q for each a
    assert err[GA <= 1000].max() < 5e-13, err[GA <= 1000].max()
    assert err[GA <= 2000].max() < 2e-12, err[GA <= 2000].max()


def test_gammainc_degrades_beyond_a_2000_as_stated(gamma_errors):
    # the documented growth of the error (about 9√a terms are needed near x ≈ a)
    err = dict(zip(GA, gamma_errors))
    assert err[GA[26]] < 2e-7 and err[GA[28]] < 3e-3, (GA[26], err[GA[26]], err[GA[28]])
    assert err[GA[28]] > 1e-6           # the bound is a real limit, not slack: it would show a fix


# hyp2f1: a, b, c, x over a grid of 4160 points (no polynomial cases: see the next tests)
HV = np.array([-2.7, -1.3, -0.45, 0.25, 0.8, 1.6, 3.3, 6.5])
HC = np.array([0.35, 1.15, 2.6, 4.9, 9.1])
HX = np.array([-50.0, -9.5, -3.0, -0.9, -0.2, 0.1, 0.5, 0.8, 0.89, 0.91, 0.95, 0.99, 0.999])


@pytest.fixture(scope="module")
def hyp_grid():
    a, b, c, x = [g.ravel() for g in np.meshgrid(HV, HV, HC, HX, indexing="ij")]
    with np.errstate(all="ignore"):
        return a, b, c, x, S.hyp2f1(a, b, c, x), sp.hyp2f1(a, b, c, x)


def _is_int(v):
    return np.abs(v - np.rint(v)) < 1e-6


def _degenerate(a, b, c, x):
    """Where the 1 - z connection formula is degenerate (the docstring's cases)."""
    return ((x > 0.9) & _is_int(c - a - b)) | ((x / (x - 1) > 0.9) & (x < 0) & _is_int(b - a))


def test_hyp2f1_relative_error_away_from_the_degenerate_cases(hyp_grid):
    a, b, c, x, got, want = hyp_grid
    ok = ~_degenerate(a, b, c, x) & np.isfinite(want)
    assert np.isfinite(got[ok]).all()
    rel = np.abs(got[ok] - want[ok]) / np.abs(want[ok])
    assert rel.max() < 2e-12, rel.max()


def test_hyp2f1_degenerate_cases_against_mpmath(hyp_grid):
    # (mpmath, in the test extra: scipy is wrong at some of these points)
    a, b, c, x, got, want = hyp_grid
    deg = _degenerate(a, b, c, x)
    assert deg.sum() == 180
    mpmath.mp.dps = 30
    ref = np.array([float(mpmath.hyp2f1(*(mpmath.mpf(float(v)) for v in t)))
                    for t in zip(a[deg], b[deg], c[deg], x[deg])])
    rel = np.abs(got[deg] / ref - 1)
    assert rel.max() < 1e-9, rel.max()
    assert np.nanmax(np.abs(want[deg] / ref - 1)) > 0.1       # scipy 1.17 is off at some (or inf)


def test_hyp2f1_derivatives_in_the_degenerate_cases():
    mpmath.mp.dps = 30
    # K(m) = π/2 ₂F₁(½, ½; 1; m), a = b at x = -9.5, c - a - b = 1 at 0.93, = 0 at 0.999
    a, b = np.array([0.5, 3.3, 1.3, 1.6]), np.array([0.5, 3.3, 0.4, -0.45])
    c, x = np.array([1.0, 9.1, 2.7, 1.15]), np.array([0.95, -9.5, 0.93, 0.999])
    np.testing.assert_allclose(S.hyp2f1(0.5, 0.5, 1.0, np.array([0.95, 0.999999])) * np.pi / 2,
                               sp.ellipk(np.array([0.95, 0.999999])), rtol=3e-9)     # (log(1 - x)⁴ h⁴ near 1)
    # the lanes are independent: one reverse pass gives every elementwise derivative
    grads = ad.grad(lambda *t: S.hyp2f1(*t).sum(), argnums=(0, 1, 2, 3))(a, b, c, x)
    for k, g in enumerate(grads):
        ref = [float(mpmath.diff(lambda v: mpmath.hyp2f1(*[v if i == k else mpmath.mpf(float(t[i])) for i in range(4)]),
                                 mpmath.mpf(float(t[k])))) for t in zip(a, b, c, x)]
        np.testing.assert_allclose(g, ref, rtol=1e-7, err_msg=f"d/d{'abcx'[k]}")


def test_hyp2f1_polynomials_for_every_x_with_derivatives():
    a = np.array([-4.0, -2.0, 0.0, -7.0])
    b, c = np.array([1.3, -0.6, 2.2, 0.45]), np.array([2.1, 0.7, 1.4, 3.6])
    x = np.array([-40.0, 0.999, 0.97, -11.0])
    np.testing.assert_allclose(S.hyp2f1(a, b, c, x), sp.hyp2f1(a, b, c, x), rtol=1e-12)
    np.testing.assert_allclose(S.hyp2f1(b, a, c, x), sp.hyp2f1(a, b, c, x), rtol=1e-12)     # symmetric in a, b
    # the series stops at the polynomial's degree, so reverse mode stays finite at |x| > 1
    # (second order in both modes: the "hyp2f1 polynomial" case of test_scipy_all_modes.py)
    ad.check_grads(lambda b, c, x: S.hyp2f1(a, b, c, x), (b, c, x), order=1, modes=("rev",),
                   eps=1e-5, atol=1e-6, rtol=1e-5)


def test_bernoulli_numbers_match_scipy_and_are_static_under_jit():
    # exact rationals rounded once (scipy's own are off by up to ~2e-12 relative)
    np.testing.assert_array_equal(S.bernoulli(8), [1, -1 / 2, 1 / 6, 0, -1 / 30, 0, 1 / 42, 0, -1 / 30])
    assert S.bernoulli(30)[30] == 8615841276005 / 14322
    for n in (0, 1, 2, 7, 30):
        np.testing.assert_allclose(S.bernoulli(n), sp.bernoulli(n), rtol=1e-11)
    got = ad.jit(lambda x: x * S.bernoulli(6), backend="interpret")(np.float64(2.0))
    np.testing.assert_allclose(got, 2.0 * S.bernoulli(6), rtol=1e-15)
    with pytest.raises(ValueError):
        S.bernoulli(-1)


def test_hyp2f1_derivative_in_a_at_a_polynomial_integer_is_the_analytic_one():
    # ∂/∂a at a = -2 is not the terminated polynomial's: every later term of the series
    # carries the factor (a + 2), whose derivative is 1
    mpmath.mp.dps = 30
    x = np.array([-5.0, -0.5, 0.3, 0.85])
    g = ad.vmap(ad.grad(S.hyp2f1), in_axes=(None, None, None, 0))(-2.0, 0.7, 1.9, x)
    want = [float(mpmath.diff(lambda t: mpmath.hyp2f1(t, 0.7, 1.9, xx), -2)) for xx in x]
    np.testing.assert_allclose(g, want, rtol=1e-11)
