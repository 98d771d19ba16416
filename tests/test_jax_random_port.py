"""Port of the value-level tests of JAX's ``tests/random_lax_test.py`` and
``tests/random_test.py`` (jax-ml/jax) to ``autodiff.random``.

Each sampler's draws are checked against ``scipy.stats`` with a Kolmogorov-Smirnov test
(continuous) or a chi-square test (discrete), as JAX's ``_CheckKolmogorovSmirnovCDF`` and
``_CheckChiSquared`` do, at p > 0.01, with fixed keys (so the tests are deterministic) and
sample sizes of 2,000-10,000 (a 1% test fails for 1% of keys: the keys are arbitrary
fixed values, and the samplers' p-values were checked to be uniform over 100 keys).
Shapes, dtypes and ranges, key ``split``/``fold_in``/
``PRNGKey``/``key_data``/``wrap_key_data`` determinism and independence, permutation/choice
properties, gradients through reparameterised samplers (``normal``, ``gamma``, ``beta``,
``dirichlet``; the gamma gradient against JAX's implicit reference ``-dF/da / f``) and
``jit``/``vmap`` of sampling equal to eager sampling.

Not ported: tests that pin JAX's bit streams (``testThreefry2x32``, ``testPRNGValues``,
``testRandomDistributionValues``, ``testRngRandomBits`` values): autodiff's counter layout
differs by design, so seeds do not reproduce JAX's numbers; typed key arrays
(``jax.random.key`` with a key dtype, ``key_impl`` names other than threefry, rbg/philox,
``jax_enable_custom_prng``), sharding/devices/``out_sharding``, bfloat16/float16 variants,
``method='approximate'`` total-variation bounds, and error tests of JAX-only argument checks.
"""
import numpy as np
import pytest
import scipy.stats

import autodiff as ad
import autodiff.numpy as anp
from autodiff import random

N = 5000


def key(seed=0):
    return random.PRNGKey(seed)


def check_ks(samples, cdf, pval=0.01):
    """JAX's ``_CheckKolmogorovSmirnovCDF``."""
    samples = np.asarray(samples, np.float64).ravel()
    assert scipy.stats.kstest(samples, cdf).pvalue > pval


def check_chi2(samples, pmf, pval=0.01):
    """JAX's ``_CheckChiSquared``: frequencies of every value of non-zero probability."""
    samples = np.asarray(samples).astype(np.int64).ravel()
    actual = np.bincount(samples, minlength=samples.max() + 100)
    expected = pmf(np.arange(len(actual))) * samples.size
    valid = expected > 0
    expected = expected[valid] * actual[valid].sum() / expected[valid].sum()
    assert scipy.stats.chisquare(actual[valid], expected).pvalue > pval


def interp(f):
    """``f`` traced and run by the reference interpreter (a jit without compiling)."""
    return ad.jit(f, backend="interpret")


# --------------------------------------------------------------------------- keys

@pytest.mark.parametrize("num", [None, 6, (6,), (2, 3), (2, 3, 4)])
def test_split_size_shape(num):
    """CommonRandomTest.test_split_size_shape."""
    k = key(0)
    ks = random.split(k) if num is None else random.split(k, num)
    expected = (2,) if num is None else ((num,) if isinstance(num, int) else num)
    assert np.shape(ks) == expected + (2,)
    flat = np.asarray(ks).reshape(-1, 2)
    assert len(np.unique(flat, axis=0)) == len(flat)


def test_prng_seeds_and_keys():
    """test_prng_jit_invariance, test_prng_seeds_and_keys, testIssue756: a key is a
    uint32[2] pure function of the seed, the same under jit."""
    for seed in (0, 1, 2**31 - 1, -1, 2**32 - 1, np.int32(7), np.uint32(7)):
        k = random.PRNGKey(seed)
        assert k.shape == (2,) and k.dtype == np.uint32
        np.testing.assert_array_equal(k, random.PRNGKey(seed))
        np.testing.assert_array_equal(random.key(seed), k)
    np.testing.assert_array_equal(interp(random.PRNGKey)(np.int64(5)), random.PRNGKey(5))
    np.testing.assert_array_equal(ad.jit(random.PRNGKey)(np.int64(5)), random.PRNGKey(5))
    assert not np.array_equal(random.PRNGKey(0), random.PRNGKey(1))
    assert random.normal(key(0), ()).dtype == np.float64


def test_key_data_wrap_roundtrip():
    """test_random_unwrap, test_wrap_key_default, test_random_clone: key_data and
    wrap_key_data invert each other and a wrapped key draws the same numbers."""
    k = random.split(key(3), 4)
    data = random.key_data(k)
    assert data.shape == (4, 2) and data.dtype == np.uint32
    wrapped = random.wrap_key_data(data)
    np.testing.assert_array_equal(random.key_data(wrapped), data)
    np.testing.assert_array_equal(random.normal(wrapped[1], (3,)), random.normal(k[1], (3,)))
    np.testing.assert_array_equal(random.clone(k[0]), k[0])
    assert "threefry" in str(random.key_impl(k[0]))


def test_fold_in():
    """testFoldIn, testFoldInBig, test_threefry_split_fold_in_symmetry (distinctness):
    fold_in gives distinct, deterministic keys, different from the parent's splits."""
    k = key(0)
    keys = [random.key_data(random.fold_in(k, i)) for i in range(10)]
    assert np.unique(keys, axis=0).shape[0] == 10
    keys = [random.key_data(random.fold_in(k, s)) for s in (2**32 - 2, 2**32 - 1)]
    assert np.unique(keys, axis=0).shape[0] == 2
    np.testing.assert_array_equal(random.fold_in(k, 7), random.fold_in(k, 7))
    splits = np.asarray(random.split(k, 10))
    folds = np.stack(keys + [random.fold_in(k, i) for i in range(10)])
    assert not any((folds == s).all(-1).any() for s in splits)


def test_vmap_fold_in_and_split():
    """test_threefry_split_vmapped_fold_in_symmetry, test_vmap_fold_in_shape,
    test_vmap_split_mapped_key_values: vmap over keys/data equals the Python loop."""
    k = key(72)
    data = np.arange(5, dtype=np.uint32)
    folded = ad.vmap(random.fold_in, in_axes=(None, 0))(k, data)
    np.testing.assert_array_equal(folded, np.stack([random.fold_in(k, d) for d in data]))
    ks = random.split(k, 3)
    split_v = ad.vmap(random.split)(ks)
    assert split_v.shape == (3, 2, 2)
    np.testing.assert_array_equal(split_v, np.stack([random.split(x) for x in ks]))
    norm_v = ad.vmap(lambda kk: random.normal(kk, (4,)))(ks)
    np.testing.assert_array_equal(norm_v, np.stack([random.normal(x, (4,)) for x in ks]))


def test_split_independence():
    """Draws from split keys are independent: near-zero correlation, distinct streams."""
    k1, k2 = random.split(key(1))
    a, b = random.normal(k1, (N,)), random.normal(k2, (N,))
    assert abs(np.corrcoef(a, b)[0, 1]) < 4 / np.sqrt(N)
    assert scipy.stats.pearsonr(a[:-1], a[1:]).pvalue > 0.01


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_random_bits_shape_dtype(dtype):
    """testRngRandomBitsShapeDtype, test_random_bits_error, test_vmap_random_bits_distribution
    (chi-square of the low byte)."""
    bits = random.bits(key(2), (N,), dtype)
    assert bits.shape == (N,) and bits.dtype == dtype
    low = (np.asarray(bits) & np.array(255, dtype)).astype(np.int64)
    nbins = min(256, 2 ** (8 * np.dtype(dtype).itemsize))
    check_chi2(low, lambda x: np.where(x < nbins, 1.0 / nbins, 0.0))
    assert random.bits(key(2), (2, 3), dtype).shape == (2, 3)


def test_random_bits_vmap_equals_loop():
    """test_vmap_random_bits_value."""
    ks = random.split(key(4), 3)
    got = ad.vmap(lambda k: random.bits(k, (5,)))(ks)
    np.testing.assert_array_equal(got, np.stack([random.bits(k, (5,)) for k in ks]))


# ------------------------------------------------------------------ continuous

@pytest.mark.parametrize("dtype,use_jit", [(np.float32, False), (np.float64, True)])
def test_rng_uniform(dtype, use_jit):
    """testRngUniform."""
    f = random.uniform if not use_jit else interp(lambda k: random.uniform(k, (N,), dtype))
    x = f(key(0), (N,), dtype) if not use_jit else f(key(0))
    assert x.dtype == dtype and x.shape == (N,)
    assert np.all((0 <= x) & (x < 1))
    check_ks(x, scipy.stats.uniform().cdf)
    y = random.uniform(key(1), (N,), dtype, minval=-2.0, maxval=3.0)
    assert np.all((-2 <= y) & (y < 3))
    check_ks(y, scipy.stats.uniform(-2, 5).cdf)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_rng_randint(dtype):
    """testRngRandint, test_randint_bounds, testIssue222."""
    lo, hi = 5, 40
    x = random.randint(key(0), (N,), lo, hi, dtype)
    assert x.dtype == dtype and np.all((lo <= x) & (x < hi))
    check_chi2(x, lambda v: np.where((v >= lo) & (v < hi), 1.0 / (hi - lo), 0.0))
    info = np.iinfo(dtype)
    y = random.randint(key(1), (1000,), info.min, info.max, dtype)
    assert np.all((info.min <= y) & (y < info.max))
    assert int(random.randint(key(10003), (), 0, 0)) == 0


def test_randint_out_of_range():
    """test_randint_out_of_range: bounds outside the dtype's range are clipped to it."""
    r = random.randint(key(0), (1000,), -1000, 1000, np.uint8)
    assert r.dtype == np.uint8 and (r == 0).sum() > 0 and (r == 255).sum() > 0
    r = random.randint(key(0), (1000,), -(2**40), 2**40, np.int32)
    assert r.dtype == np.int32 and (r < 0).sum() > 0 and (r > 2**30).sum() > 0


@pytest.mark.parametrize("dtype,use_jit", [(np.float32, False), (np.float64, False),
                                           (np.float64, True)])
def test_normal(dtype, use_jit):
    """testNormal."""
    f = (lambda k: random.normal(k, (N,), dtype))
    x = (interp(f) if use_jit else f)(key(0))
    assert x.dtype == dtype
    check_ks(x, scipy.stats.norm().cdf)


def test_normal_complex():
    """testNormalComplex: real and imaginary parts are independent N(0, 1/2)."""
    x = random.normal(key(0), (N,), np.complex128)
    assert x.dtype == np.complex128
    check_ks(np.real(x), scipy.stats.norm(scale=1 / np.sqrt(2)).cdf)
    check_ks(np.imag(x), scipy.stats.norm(scale=1 / np.sqrt(2)).cdf)
    assert abs(np.corrcoef(np.real(x), np.imag(x))[0, 1]) < 4 / np.sqrt(N)
    y = interp(lambda k: random.normal(k, (N,), np.complex128))(key(0))
    np.testing.assert_allclose(y, x, rtol=1e-12)
    assert random.normal(key(0), (3,), np.complex64).dtype == np.complex64


@pytest.mark.parametrize("lower,upper", [(-0.3, 0.3), (-1.0, 2.0), (1.5, 4.0)])
def test_truncated_normal(lower, upper):
    """testTruncatedNormal: values in [lower, upper], KS against scipy's truncnorm."""
    x = random.truncated_normal(key(0), lower, upper, (N,))
    assert np.all((lower <= x) & (x <= upper))
    check_ks(x, scipy.stats.truncnorm(lower, upper).cdf)
    y = interp(lambda k: random.truncated_normal(k, lower, upper, (N,)))(key(0))
    np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("a,b", [(0.2, 0.3), (1.0, 1.0), (3.0, 5.0)])
def test_beta(a, b):
    """testBeta, testBetaSmallParameters."""
    x = random.beta(key(0), a, b, (N,))
    assert np.all((0 <= x) & (x <= 1))
    check_ks(x, scipy.stats.beta(a, b).cdf)


def test_cauchy():
    """testCauchy."""
    check_ks(random.cauchy(key(0), (N,)), scipy.stats.cauchy().cdf)


@pytest.mark.parametrize("alpha", [np.array([0.2, 1.0, 5.0]), np.array([2.0, 3.0])])
def test_dirichlet(alpha):
    """testDirichlet: rows on the simplex, marginals Beta(alpha_i, sum - alpha_i)."""
    x = random.dirichlet(key(0), alpha, (N,))
    assert x.shape == (N, len(alpha))
    np.testing.assert_allclose(x.sum(-1), 1.0, atol=1e-12)
    assert np.all(x >= 0)
    for i, a in enumerate(alpha):
        check_ks(x[:, i], scipy.stats.beta(a, alpha.sum() - a).cdf)


def test_dirichlet_small_alpha():
    """testDirichletSmallAlpha: tiny concentrations give no NaN and stay on the simplex."""
    x = random.dirichlet(key(0), np.array([1e-3, 1e-3, 1e-3]), (200,))
    assert not np.any(np.isnan(x))
    np.testing.assert_allclose(np.sum(x, -1), 1.0, atol=1e-9)


def test_exponential():
    """testExponential."""
    x = random.exponential(key(0), (N,))
    assert np.all(x >= 0)
    check_ks(x, scipy.stats.expon().cdf)


@pytest.mark.parametrize("a", [0.1, 1.0, 10.0])
def test_gamma(a):
    """testGamma."""
    x = random.gamma(key(0), a, (N,))
    assert np.all(x >= 0)
    check_ks(x, scipy.stats.gamma(a).cdf)


@pytest.mark.parametrize("a", [0.1, 1.0, 10.0])
def test_gamma_vs_loggamma(a):
    """testGammaVsLogGamma: exp(loggamma) and gamma agree for the same key."""
    np.testing.assert_allclose(random.gamma(key(0), a, (50,)),
                               np.exp(random.loggamma(key(0), a, (50,))), rtol=1e-6)
    check_ks(np.exp(random.loggamma(key(1), a, (N,))), scipy.stats.gamma(a).cdf)


@pytest.mark.parametrize("name", ["gamma", "loggamma", "beta", "chisquare", "poisson"])
def test_invalid_method(name):
    """testGammaInvalidMethod, testBetaInvalidMethod, testChisquareInvalidMethod,
    testPoissonInvalidMethod."""
    args = {"beta": (1.0, 1.0)}.get(name, (1.0,))
    with pytest.raises(ValueError, match=f"method argument to `{name}`"):
        getattr(random, name)(key(0), *args, method="nonsense")


def test_approximate_method_distribution():
    """testGamma/testPoisson/testChisquare with method='approximate': still the law."""
    check_ks(random.gamma(key(0), 2.0, (N,), method="approximate"), scipy.stats.gamma(2).cdf)
    check_ks(random.chisquare(key(1), 3.0, (N,), method="approximate"),
             scipy.stats.chi2(3).cdf)
    check_ks(random.beta(key(2), 2.0, 3.0, (N,), method="approximate"),
             scipy.stats.beta(2, 3).cdf)
    check_chi2(random.poisson(key(3), 7.0, (N,), method="approximate"),
               scipy.stats.poisson(7).pmf)
    check_chi2(random.bernoulli(key(4), 0.3, (N,), mode="high"), scipy.stats.bernoulli(0.3).pmf)
    check_ks(random.gumbel(key(5), (N,), mode="high"), scipy.stats.gumbel_r().cdf)


def test_gamma_jit_equals_eager():
    """testGamma with use_jit: the rejection sampler gives the same draws traced."""
    f = lambda k: random.gamma(k, np.array([0.5, 2.0, 7.0]), (4, 3))  # noqa: E731
    np.testing.assert_allclose(interp(f)(key(5)), f(key(5)), rtol=1e-12)


@pytest.mark.parametrize("alpha", [1e-2, 1e-1, 1e0, 1e1, 1e2])
def test_gamma_grad(alpha):
    """testGammaGrad: d sample / d alpha = -(dF/dalpha)(z) / f(z) (implicit
    reparameterisation), F and f scipy's gamma cdf and pdf; also through loggamma."""
    alphas = np.full((40,), alpha)
    z = np.asarray(random.gamma(key(0), alphas))
    got = ad.grad(lambda a: random.gamma(key(0), a).sum())(alphas)
    got_log = ad.grad(lambda a: anp.exp(random.loggamma(key(0), a)).sum())(alphas)
    eps = 0.01 * alpha / (1.0 + np.sqrt(alpha))
    cdf_dot = (scipy.stats.gamma.cdf(z, alpha + eps)
               - scipy.stats.gamma.cdf(z, alpha - eps)) / (2 * eps)
    with np.errstate(over="ignore"):
        expected = -cdf_dot / scipy.stats.gamma.pdf(z, alpha)
    ok = np.isfinite(expected)
    np.testing.assert_allclose(np.asarray(got)[ok], expected[ok], rtol=2e-3)
    np.testing.assert_allclose(np.asarray(got_log)[ok], expected[ok], rtol=2e-3)


def test_gamma_grad_type_and_vmap():
    """testGammaGradType, testIssue1789: vjp through gamma in float32, grad of vmap(gamma)."""
    f = lambda x, y: random.gamma(key(0), x, dtype=np.float32) / y  # noqa: E731
    out, vjp = ad.vjp(f, np.float32(1.0), np.float32(3.0))
    ga, gb = vjp(np.float32(1.0))
    assert np.isfinite(ga) and np.isfinite(gb)
    g = ad.grad(lambda x: anp.sum(ad.vmap(lambda a: random.gamma(key(0), a))(x)))(np.ones(2))
    assert g.shape == (2,) and np.all(np.isfinite(g)) and np.all(g > 0)


def test_normal_reparam_grad():
    """Gradients through ``mu + sigma * normal``: d/dmu = n, d/dsigma = sum(z)."""
    z = random.normal(key(3), (20,))
    f = lambda mu, s: anp.sum(mu + s * random.normal(key(3), (20,)))  # noqa: E731
    gmu, gs = ad.grad(f, argnums=(0, 1))(0.5, 2.0)
    np.testing.assert_allclose([gmu, gs], [20.0, np.sum(z)], rtol=1e-12)
    gm = ad.grad(lambda m: anp.sum(random.multivariate_normal(
        key(1), m, np.eye(2), (10,))))(np.zeros(2))
    np.testing.assert_allclose(gm, [10.0, 10.0])


@pytest.mark.parametrize("a,b", [(0.5, 2.0), (3.0, 4.0)])
def test_beta_grad(a, b):
    """Reparameterised beta: the mean of d sample / d a over many draws is
    d E[x] / d a = b / (a + b)^2 (and -a / (a + b)^2 in b), within 5 standard errors."""
    n = 4000
    ga = np.asarray(ad.jacfwd(lambda a_: random.beta(key(0), a_, b, (n,)))(a))
    gb = np.asarray(ad.jacfwd(lambda b_: random.beta(key(0), a, b_, (n,)))(b))
    for g, want in [(ga, b / (a + b) ** 2), (gb, -a / (a + b) ** 2)]:
        assert np.all(np.isfinite(g))
        assert abs(g.mean() - want) < 5 * g.std() / np.sqrt(n)


def test_dirichlet_grad():
    """Reparameterised Dirichlet: each draw's Jacobian in alpha has columns summing to zero
    (the simplex is kept) and its mean over draws is d E[x_i] / d alpha_j =
    (delta_ij A - alpha_i) / A^2, A = sum(alpha)."""
    alpha = np.array([1.5, 2.0, 3.0])
    n = 3000
    jac = np.asarray(ad.jacfwd(lambda al: random.dirichlet(key(0), al, (n,)))(alpha))
    assert jac.shape == (n, 3, 3)
    np.testing.assert_allclose(jac.sum(1), 0.0, atol=1e-9)
    A = alpha.sum()
    want = (np.eye(3) * A - alpha[:, None]) / A ** 2
    se = jac.std(0) / np.sqrt(n)
    assert np.all(np.abs(jac.mean(0) - want) < 5 * se + 1e-12)
    g = ad.grad(lambda al: anp.sum(random.dirichlet(key(0), al, (n,))[:, 0]))(alpha)
    np.testing.assert_allclose(g, jac[:, 0, :].sum(0), rtol=1e-10)


def test_gumbel_laplace_logistic():
    """testGumbel, testLaplace, testLogistic."""
    check_ks(random.gumbel(key(0), (N,)), scipy.stats.gumbel_r().cdf)
    check_ks(random.laplace(key(1), (N,)), scipy.stats.laplace().cdf)
    check_ks(random.logistic(key(2), (N,)), scipy.stats.logistic().cdf)


def test_low_probability_gumbel():
    """testLowProbabilityGumbel: gumbel samples are finite (no -inf from log(0))."""
    x = random.gumbel(key(0), (10000,), np.float32)
    assert np.all(np.isfinite(x))


@pytest.mark.parametrize("n,shape", [(1, ()), (3, ()), (4, (2,)), (5, (3, 2))])
def test_orthogonal(n, shape):
    """testOrthogonal: Q^T Q = I, and random signs (not a fixed matrix)."""
    q = random.orthogonal(key(0), n, shape)
    assert q.shape == shape + (n, n)
    qtq = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(qtq, np.broadcast_to(np.eye(n), qtq.shape), atol=1e-12)


def test_orthogonal_haar():
    """testOrthogonal's distribution: the first column of a Haar matrix is uniform on the
    sphere, so the square of its (0, 0) entry is Beta(1/2, (n - 1)/2)."""
    q = random.orthogonal(key(3), 3, (2000,))
    check_ks(q[:, 0, 0] ** 2, scipy.stats.beta(0.5, 1.0).cdf)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 5.0])
def test_generalized_normal(p):
    """testGeneralizedNormal, testGeneralizedNormalKS."""
    x = random.generalized_normal(key(0), p, (N,))
    check_ks(x, scipy.stats.gennorm(p).cdf)


@pytest.mark.parametrize("d,p", [(1, 1), (2, 2), (3, 1.5), (5, 2)])
def test_ball(d, p):
    """testBall, testBallKS: inside the unit p-ball; the p-norm's d-th power is uniform."""
    x = random.ball(key(0), d, p, (2000,))
    assert x.shape == (2000, d)
    r = np.sum(np.abs(x) ** p, -1) ** (1 / p)
    assert np.all(r <= 1 + 1e-12)
    check_ks(r ** d, scipy.stats.uniform().cdf)


@pytest.mark.parametrize("b", [0.1, 1.0, 10.0])
def test_pareto(b):
    """testPareto, testParetoShape."""
    x = random.pareto(key(0), b, (N,))
    check_ks(x, scipy.stats.pareto(b).cdf)
    assert random.pareto(key(0), np.array([1.0, 2.0]), (3, 2)).shape == (3, 2)


@pytest.mark.parametrize("df", [0.1, 1.0, 10.0])
def test_t(df):
    """testT."""
    check_ks(random.t(key(0), df, (N,)), scipy.stats.t(df).cdf)


@pytest.mark.parametrize("dim", [1, 2, 4])
def test_multivariate_normal(dim):
    """testMultivariateNormal: whitened samples are standard normal; mean/covariance."""
    rng = np.random.default_rng(dim)
    mean = rng.normal(size=dim)
    f = rng.normal(size=(dim, dim))
    cov = f @ f.T + np.eye(dim)
    for method in ("cholesky", "eigh", "svd"):
        x = random.multivariate_normal(key(1), mean, cov, (N,), method=method)
        assert x.shape == (N, dim)
        white = np.linalg.solve(np.linalg.cholesky(cov), (x - mean).T)
        check_ks(white.ravel(), scipy.stats.norm().cdf)


@pytest.mark.parametrize("dim,mean_batch,cov_batch,shape", [
    (1, (), (), None), (2, (3,), (), None), (3, (), (4,), (4,)), (2, (5,), (5,), (2, 5))])
def test_multivariate_normal_shapes(dim, mean_batch, cov_batch, shape):
    """testMultivariateNormalShapes."""
    mean = np.zeros(mean_batch + (dim,))
    cov = np.broadcast_to(np.eye(dim), cov_batch + (dim, dim))
    x = random.multivariate_normal(key(0), mean, cov, shape)
    expected = (shape if shape is not None else np.broadcast_shapes(mean_batch, cov_batch))
    assert x.shape == tuple(expected) + (dim,)


def test_multivariate_normal_covariance():
    """testMultivariateNormalCovariance: empirical mean and covariance."""
    mean, cov = np.array([1.0, -2.0]), np.array([[2.0, 0.6], [0.6, 0.5]])
    x = random.multivariate_normal(key(0), mean, cov, (10000,))
    np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


@pytest.mark.parametrize("method", ["eigh", "svd"])
def test_multivariate_normal_singular_covariance(method):
    """testMultivariateNormalSingularCovariance: a rank-1 covariance gives x1 == x0."""
    x = random.multivariate_normal(key(0), np.zeros(2), np.ones((2, 2)), (100,),
                                   method=method)
    assert not np.any(np.isnan(x))
    np.testing.assert_allclose(x[:, 0], x[:, 1], atol=1e-6)


def test_maxwell_weibull_double_sided_maxwell():
    """testMaxwellSample, testWeibullSample, testDoublesidedMaxwellSample."""
    check_ks(random.maxwell(key(1), (N,)), scipy.stats.maxwell().cdf)
    for conc, scale in [(1.0, 1.0), (2.0, 0.5), (0.5, 3.0)]:
        check_ks(random.weibull_min(key(1), scale, conc, (N,)),
                 scipy.stats.weibull_min(c=conc, scale=scale).cdf)
    loc, scale = 1.5, 2.0
    x = random.double_sided_maxwell(key(3), loc, scale, (N,))
    z = np.abs(x - loc) / scale
    check_ks(z, scipy.stats.maxwell().cdf)
    assert abs(np.mean(x > loc) - 0.5) < 4 * 0.5 / np.sqrt(N)


@pytest.mark.parametrize("df", [0.5, 1.0, 5.0])
def test_chisquare(df):
    """testChisquare."""
    check_ks(random.chisquare(key(0), df, (N,)), scipy.stats.chi2(df).cdf)


@pytest.mark.parametrize("dfnum,dfden", [(1.0, 1.0), (3.0, 10.0)])
def test_f(dfnum, dfden):
    """testF."""
    check_ks(random.f(key(0), dfnum, dfden, (N,)), scipy.stats.f(dfnum, dfden).cdf)


def test_rayleigh_wald_lognormal_triangular():
    """testRayleigh, testWald, testLogNormal, testTriangular."""
    check_ks(random.rayleigh(key(0), 2.0, (N,)), scipy.stats.rayleigh(scale=2.0).cdf)
    check_ks(random.wald(key(1), 0.5, (N,)), scipy.stats.invgauss(0.5).cdf)
    check_ks(random.lognormal(key(2), 0.7, (N,)), scipy.stats.lognorm(0.7).cdf)
    left, mode, right = -1.0, 0.5, 2.0
    x = random.triangular(key(3), left, mode, right, (N,))
    assert np.all((left <= x) & (x <= right))
    check_ks(x, scipy.stats.triang((mode - left) / (right - left), left, right - left).cdf)


# -------------------------------------------------------------------- discrete

@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_bernoulli(p):
    """testBernoulli, testBernoulliShape."""
    x = random.bernoulli(key(0), p, (N,))
    assert x.dtype == np.bool_
    check_chi2(x, scipy.stats.bernoulli(p).pmf)
    assert random.bernoulli(key(0), np.array([0.2, 0.8]), (3, 2)).shape == (3, 2)


def test_bernoulli_small_probability():
    """testBernoulliSmallProbabilty: p = 1e-8 gives no ones in 10,000 draws (no bias to
    a float's resolution), p = 0 none and p = 1 all."""
    assert not np.any(random.bernoulli(key(0), 1e-8, (10000,)))
    assert not np.any(random.bernoulli(key(0), 0.0, (100,)))
    assert np.all(random.bernoulli(key(0), 1.0, (100,)))


@pytest.mark.parametrize("p,axis", [(np.array([0.2, 0.3, 0.5]), -1),
                                    (np.array([[0.1, 0.9], [0.6, 0.4]]), 0),
                                    (np.array([[0.1, 0.9], [0.6, 0.4]]), 1)])
def test_categorical(p, axis):
    """testCategorical: chi-square of each batch member's draws against softmax(logits)."""
    logits = np.log(p) - 42
    batch = np.delete(p.shape, axis % p.ndim)
    x = random.categorical(key(0), logits, axis=axis, shape=(3000,) + tuple(batch))
    assert x.shape == (3000,) + tuple(batch)
    pm = np.moveaxis(p, axis, -1).reshape(-1, p.shape[axis])
    xs = x.reshape(3000, -1)
    for i in range(pm.shape[0]):
        check_chi2(xs[:, i], lambda v, q=pm[i]: np.where(v < len(q), q[np.minimum(
            v, len(q) - 1)], 0.0))


@pytest.mark.parametrize("logits_shape,prefix", [((5,), (3,)), ((4, 6), (2,))])
def test_categorical_without_replacement(logits_shape, prefix):
    """testCategoricalWithoutReplacement: distinct indices within each draw."""
    logits = np.random.default_rng(0).normal(size=logits_shape)
    shape = prefix + logits_shape[:-1]
    x = random.categorical(key(0), logits, shape=shape, replace=False)
    assert x.shape == shape
    xs = np.moveaxis(np.asarray(x), 0, -1).reshape(-1, prefix[0])
    for row in xs:
        assert len(np.unique(row)) == len(row)


@pytest.mark.parametrize("base", [(3, 4), (3, 1), (1, 4)])
@pytest.mark.parametrize("axis", [-3, -2, -1, 0, 1, 2])
def test_categorical_shape_argument(base, axis):
    """test_categorical_shape_argument (issue 13124): logits' batch shape broadcasts to
    ``shape``."""
    lshape = list(base)
    lshape.insert(axis % (len(base) + 1), 10)
    x = random.categorical(key(0), np.ones(lshape), axis=axis, shape=(3, 4))
    assert x.shape == (3, 4) and np.all((0 <= x) & (x < 10))


@pytest.mark.parametrize("lam", [0.5, 3.0, 11.0, 50.0])
def test_poisson(lam):
    """testPoisson: chi-square against scipy's pmf, and the moments."""
    x = random.poisson(key(0), lam, (N,))
    assert np.issubdtype(x.dtype, np.integer)
    check_chi2(x, scipy.stats.poisson(lam).pmf)
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / N)


def test_poisson_batched_shape_and_corner_cases():
    """testPoissonBatched, testPoissonWithoutShape, testPoissonShape, testPoissonZeros,
    testPoissonCornerCases."""
    lam = np.concatenate([2 * np.ones(N), 20 * np.ones(N)])
    x = random.poisson(key(0), lam)
    check_chi2(x[:N], scipy.stats.poisson(2.0).pmf)
    check_chi2(x[N:], scipy.stats.poisson(20.0).pmf)
    assert random.poisson(key(0), np.array([1.0, 2.0])).shape == (2,)
    assert random.poisson(key(0), 1.0, (3, 4)).shape == (3, 4)
    np.testing.assert_array_equal(random.poisson(key(0), np.zeros(5)), np.zeros(5))
    out = random.poisson(key(0), np.array([-1.0, 0.0, np.nan]))
    np.testing.assert_array_equal(out, [-1, 0, -1])


@pytest.mark.parametrize("p", [0.2, 0.5, 0.95])
def test_geometric(p):
    """testGeometric, test_geometric_avoids_infs."""
    x = random.geometric(key(0), p, (N,))
    assert np.all(x >= 1)
    check_chi2(x, scipy.stats.geom(p).pmf)


def test_rademacher():
    """testRadamacher."""
    x = random.rademacher(key(0), (N,))
    assert set(np.unique(np.asarray(x))) == {-1, 1}
    check_chi2((np.asarray(x) + 1) // 2, scipy.stats.bernoulli(0.5).pmf)


@pytest.mark.parametrize("n,p", [(10.0, 0.3), (50.0, 0.7), (1000.0, 0.05)])
def test_binomial(n, p):
    """testBinomialSample."""
    x = random.binomial(key(0), n, p, (N,))
    assert np.all((x >= 0) & (x <= n))
    check_chi2(x, scipy.stats.binom(n, p).pmf)


def test_binomial_corner_cases():
    """testBinomialCornerCases: bad n or p give NaN, n = inf gives inf, n = 0 or p = 0
    give 0, p = 1 gives n."""
    nan, inf = np.nan, np.inf
    s1 = random.binomial(key(0), np.array([-1, 0, nan, inf]), 0.5, shape=(4,))
    s2 = random.binomial(key(0), 5, np.array([nan, 0, -0.1, 1.1]), shape=(4,))
    s3 = random.binomial(key(0), np.array([inf, -1, inf]), np.array([nan, nan, -0.1]),
                         shape=(3,))
    np.testing.assert_array_equal(s1, [nan, 0.0, nan, inf])
    np.testing.assert_array_equal(s2, [nan, 0.0, nan, nan])
    np.testing.assert_array_equal(s3, [nan, nan, nan])
    np.testing.assert_array_equal(
        random.binomial(key(0), np.array([0.0, 5.0, 5.0, 7.0]), np.array([0.5, 0, 1, 1])),
        [0, 0, 5, 7])


def test_multinomial():
    """testMultinomialExample, testMultinomialNumpy, testMultinomialShape: counts sum to n,
    per-outcome marginals are Binomial(n, p_i)."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n = 20.0
    x = random.multinomial(key(0), n, p, shape=(3000, 4))
    assert x.shape == (3000, 4)
    np.testing.assert_array_equal(x.sum(-1), n)
    for i, pi in enumerate(p):
        check_chi2(x[:, i], scipy.stats.binom(n, pi).pmf)
    y = random.multinomial(key(1), np.array([5.0, 10.0]), p, shape=(2, 4))
    np.testing.assert_array_equal(y.sum(-1), [5.0, 10.0])


# --------------------------------------------------------- permutation and choice

@pytest.mark.parametrize("x,axis,independent", [
    (10, 0, False), (np.arange(12.0).reshape(3, 4), 0, False),
    (np.arange(12.0).reshape(3, 4), 1, False), (np.arange(20).reshape(4, 5), 1, True)])
def test_permutation(x, axis, independent):
    """testPermutation: a permutation of the input along ``axis`` (same multiset)."""
    perm = random.permutation(key(0), x, axis=axis, independent=independent)
    xa = np.arange(x) if isinstance(x, int) else x
    assert perm.shape == xa.shape
    if independent:
        np.testing.assert_array_equal(np.sort(perm, axis), np.sort(xa, axis))
    else:
        a = np.moveaxis(np.asarray(perm), axis, 0)
        b = np.moveaxis(xa, axis, 0)
        assert sorted(map(tuple, a.reshape(len(a), -1))) == sorted(map(tuple, b.reshape(
            len(b), -1)))
    big = random.permutation(key(1), 100)
    assert not np.array_equal(big, np.arange(100))
    np.testing.assert_array_equal(np.sort(big), np.arange(100))


def test_permutation_uniform():
    """Every permutation of 3 items is equally likely (chi-square over the 6)."""
    ks = random.split(key(2), 3000)
    perms = ad.vmap(lambda k: random.permutation(k, 3))(ks)
    code = np.asarray(perms) @ np.array([9, 3, 1])
    codes = {c: i for i, c in enumerate(sorted(set(code.tolist())))}
    assert len(codes) == 6
    check_chi2(np.array([codes[c] for c in code]), lambda v: np.where(v < 6, 1 / 6, 0.0))


def test_permutation_errors():
    """testPermutationErrors: a 0-d array cannot be permuted."""
    with pytest.raises((TypeError, ValueError)):
        random.permutation(key(0), np.array(3.0))


@pytest.mark.parametrize("a,shape,replace,weighted,axis", [
    (10, (), True, False, 0), (10, (6,), False, False, 0), (10, (3, 2), True, True, 0),
    (np.arange(20.0).reshape(4, 5), (3,), False, True, 1),
    (np.arange(20.0).reshape(4, 5), (2,), True, False, 0)])
def test_choice(a, shape, replace, weighted, axis):
    """testChoice: shape, values from the input, no repeats without replacement."""
    arr = np.arange(a) if isinstance(a, int) else a
    n = arr.shape[axis]
    p = np.linspace(1, 2, n) / np.linspace(1, 2, n).sum() if weighted else None
    x = random.choice(key(0), a, shape, replace=replace, p=p, axis=axis)
    expected_shape = arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:]
    assert x.shape == expected_shape
    np.testing.assert_array_equal(interp(lambda k: random.choice(
        k, a, shape, replace=replace, p=p, axis=axis))(key(0)), x)
    x = np.asarray(x) if shape else np.expand_dims(np.asarray(x), axis)
    slices = np.moveaxis(x, axis, 0).reshape(int(np.prod(shape)), -1)
    pool = {tuple(r) for r in np.moveaxis(arr, axis, 0).reshape(n, -1)}
    assert all(tuple(r) in pool for r in slices)
    if not replace:
        assert len({tuple(r) for r in slices}) == len(slices)


def test_choice_distribution():
    """testChoice weighted: frequencies follow ``p`` (chi-square)."""
    p = np.array([0.1, 0.2, 0.3, 0.4])
    x = random.choice(key(0), 4, (N,), p=p)
    check_chi2(x, lambda v: np.where(v < 4, p[np.minimum(v, 3)], 0.0))


def test_choice_shape_is_not_sequence_error():
    """testChoiceShapeIsNotSequenceError."""
    with pytest.raises(TypeError):
        random.choice(key(0), 5, 2, replace=False)
    with pytest.raises(TypeError):
        random.choice(key(0), 5, 2, replace=True)


# --------------------------------------------------------------- misc behaviour

def test_dtype_error_message():
    """testDtypeErrorMessage: an integer dtype for a float sampler is a ValueError."""
    with pytest.raises(ValueError, match=r"dtype argument to"):
        random.normal(key(0), (), dtype=np.int32)


def test_random_broadcast():
    """testRandomBroadcast (issue 4033): array bounds broadcast against the shape."""
    x1 = random.uniform(key(0), (10, 2), minval=np.zeros(2), maxval=np.ones(2))
    x2 = random.randint(key(0), (10, 2), np.array([0, 1]), np.array([1, 2]))
    assert x1.shape == x2.shape == (10, 2)
    np.testing.assert_array_equal(x2, np.broadcast_to([0, 1], (10, 2)))


@pytest.mark.parametrize("sampler", [
    lambda k: random.normal(k, (3,)), lambda k: random.uniform(k, (2, 2)),
    lambda k: random.gamma(k, 2.5, (3,)), lambda k: random.beta(k, 2.0, 3.0, (3,)),
    lambda k: random.poisson(k, 4.0, (3,)), lambda k: random.permutation(k, 6),
    lambda k: random.choice(k, 7, (3,), replace=False),
    lambda k: random.categorical(k, np.log(np.array([0.2, 0.8])), shape=(4,)),
    lambda k: random.dirichlet(k, np.array([1.0, 2.0])),
    lambda k: random.truncated_normal(k, -1.0, 1.0, (3,))])
def test_vmap_and_jit_equal_eager(sampler):
    """test_cpp_dispatch_normal / test_prng_jit_invariance analogue: traced (jit) and
    vmapped draws equal eager ones for the same keys."""
    ks = random.split(key(11), 3)
    eager = np.stack([np.asarray(sampler(k)) for k in ks])
    np.testing.assert_allclose(interp(sampler)(ks[0]), eager[0], rtol=1e-12)
    np.testing.assert_allclose(ad.vmap(sampler)(ks), eager, rtol=1e-12)


def test_real_jit_sampling():
    """A compiled (Numba) jit of a sampler equals the eager draw."""
    f = lambda k: (random.normal(k, (4,)), random.randint(k, (3,), 0, 9))  # noqa: E731
    a, b = ad.jit(f)(key(9))
    ea, eb = f(key(9))
    np.testing.assert_allclose(a, ea, rtol=1e-12)
    np.testing.assert_array_equal(b, eb)


def test_static_shape_errors():
    """testStaticShapeErrors: a traced shape is a TypeError-family error, not a crash."""
    with pytest.raises(Exception):
        ad.jit(lambda n: random.normal(key(0), (n,)))(3)
