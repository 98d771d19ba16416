"""jax.random's remaining samplers (issue 36). The bit streams are not JAX's (module
docstring of autodiff.random), so, as for the other samplers, the distributions are tested
against scipy.stats with fixed keys (KS / chi-square tests, moments) and jit against eager."""
import numpy as np
import pytest
import scipy.stats as st

import autodiff as ad
import autodiff.numpy as anp

R = ad.random
N = 4000


def _chi2_pvalue(draws, pmf):
    """Chi-square goodness of fit of integer draws to a pmf over 0..len(pmf)-1 (tails merged)."""
    counts = np.bincount(draws.astype(np.int64), minlength=len(pmf))[:len(pmf)]
    expected = pmf * len(draws)
    keep = expected >= 5
    obs = np.append(counts[keep], len(draws) - counts[keep].sum())
    exp = np.append(expected[keep], len(draws) - expected[keep].sum())
    if exp[-1] < 1e-9:
        obs, exp = obs[:-1], exp[:-1]
    return st.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("n,p", [(7, 0.3), (40, 0.3), (200, 0.85), (1000, 0.02)])
def test_binomial_matches_scipy(n, p):
    k = R.binomial(R.key(1), n, p, (N,))
    assert k.dtype == np.float64 and k.shape == (N,)
    assert np.all(k == np.floor(k)) and k.min() >= 0 and k.max() <= n
    assert _chi2_pvalue(k, st.binom.pmf(np.arange(n + 1), n, p)) > 1e-3
    assert abs(k.mean() - n * p) < 5 * np.sqrt(n * p * (1 - p) / N)


def test_binomial_edges_and_broadcast():
    k = R.binomial(R.key(2), np.array([0.0, 5.0, 5.0, 300.0]), np.array([0.5, 0.0, 1.0, 1.0]))
    assert k.tolist() == [0.0, 0.0, 5.0, 300.0]
    k = R.binomial(R.key(3), np.array([[10.0], [500.0]]), np.array([0.2, 0.7]), dtype=np.float32)
    assert k.shape == (2, 2) and k.dtype == np.float32


def test_binomial_jit_and_vmap_agree_with_eager():
    key = R.key(5)
    eager = R.binomial(key, np.array([3.0, 80.0]), 0.4)
    jitted = ad.jit(lambda k: R.binomial(k, np.array([3.0, 80.0]), 0.4))(key)
    assert np.array_equal(eager, jitted)
    keys = R.split(R.key(6), 3)
    mapped = ad.vmap(lambda k: R.binomial(k, 20.0, 0.5, (2,)))(keys)
    assert np.array_equal(mapped, np.stack([R.binomial(k, 20.0, 0.5, (2,)) for k in keys]))


def test_multinomial():
    p = np.array([0.2, 0.3, 0.5])
    c = R.multinomial(R.key(7), 12, p, shape=(N, 3))
    assert c.shape == (N, 3) and np.all(c.sum(-1) == 12)
    # each marginal is Binomial(12, p_i)
    for i in range(3):
        assert _chi2_pvalue(c[:, i], st.binom.pmf(np.arange(13), 12, p[i])) > 1e-3
    # covariance -n p_i p_j
    cov = np.cov(c[:, 0], c[:, 1])[0, 1]
    assert abs(cov - (-12 * 0.2 * 0.3)) < 0.15
    # default shape: p's, with n broadcast against p's batch
    d = R.multinomial(R.key(8), np.array([5.0, 50.0]), np.array([[0.5, 0.5], [0.1, 0.9]]))
    assert d.shape == (2, 2) and d.sum(-1).tolist() == [5.0, 50.0]
    with pytest.raises(ad.errors.ShapeError, match="number of categories"):
        R.multinomial(R.key(8), 5, p, shape=(4,))


@pytest.mark.parametrize("sampler,args,dist", [
    (R.wald, (2.0,), st.invgauss(2.0)),                   # wald(mean) = invgauss(mu=mean, scale=1)
    (R.wald, (0.3,), st.invgauss(0.3)),
    (R.f, (4.0, 10.0), st.f(4.0, 10.0)),
    (R.double_sided_maxwell, (1.0, 2.0), None),
])
def test_continuous_samplers_ks(sampler, args, dist):
    x = sampler(R.key(11), *args, shape=(N,))
    assert x.shape == (N,) and x.dtype == np.float64
    if dist is None:      # double-sided Maxwell: |X - loc| / scale ~ Maxwell, sign symmetric
        loc, scale = args
        cdf = lambda v: 0.5 + 0.5 * np.sign(v - loc) * st.maxwell.cdf(np.abs(v - loc) / scale)
    else:
        cdf = dist.cdf
    assert st.kstest(x, cdf).pvalue > 1e-3


def test_f_is_differentiable_in_dof():
    # E[F] = d2 / (d2 - 2): the reparameterized gradient of the sample mean follows it
    g = ad.grad(lambda d2: anp.mean(R.f(R.key(12), 5.0, d2, (20000,))))(10.0)
    assert abs(g - (-2.0 / 8.0 ** 2)) < 0.01


def test_key_helpers():
    k = R.key(3)
    assert np.array_equal(R.clone(k), k)
    assert R.key_impl(k) == "threefry2x32"
    assert R.key_dtype() == np.dtype(np.uint32) == k.dtype
    with pytest.raises(ValueError, match="threefry2x32"):
        R.key_dtype("rbg")
