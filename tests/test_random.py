"""ad.random: the cipher against its published answers, wrap-around uint32 arithmetic in
every mode, bit-reproducibility across eager / jit / vmap, key independence, and every
distribution's law (Kolmogorov–Smirnov and moments at fixed keys) and gradients.

The draws are deterministic functions of fixed keys, so each statistical test has one
outcome; the thresholds are the 0.1% critical values, so a sampler with the wrong law (a
wrong constant, a dropped term, a biased rejection step) fails them."""
import math
import warnings

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as st

import autodiff as ad
import autodiff.numpy as anp
import autodiff.primitives as P
from autodiff import random as R
from autodiff.errors import ShapeError

KEY = R.key(20261201)
N = 20000


def ks_ok(x, cdf, n=None):
    """KS statistic below the 0.1% critical value 1.949/sqrt(n)."""
    x = np.asarray(x, np.float64).ravel()
    d = st.kstest(x, cdf).statistic
    assert d < 1.949 / math.sqrt(len(x)), f"KS statistic {d:.4f} (n={len(x)})"


# ---------------------------------------------------------------- the cipher
# Random123's known-answer vectors for threefry2x32_20 (kat_vectors)
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
       ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
       ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


def _kat_inputs():
    k = np.array([kv[0] for kv in KAT], np.uint32)
    c = np.array([kv[1] for kv in KAT], np.uint32)
    return k, c, np.array([kv[2] for kv in KAT], np.uint32)


@pytest.fixture(scope="module")
def threefry_jit():
    return ad.jit(lambda k, c0, c1: R.threefry_2x32(k, c0, c1))


def test_threefry_known_answers_eager_and_vmap():
    ks, cs, want = _kat_inputs()
    for k, c, w in zip(ks, cs, want):
        y = R.threefry_2x32(k, c[:1], c[1:])
        assert (int(y[0][0]), int(y[1][0])) == tuple(int(v) for v in w)
    y0, y1 = ad.vmap(lambda k, c: R.threefry_2x32(k, c[0], c[1]))(ks, cs)
    np.testing.assert_array_equal(np.stack([y0, y1], 1), want)


def test_threefry_known_answers_jit(threefry_jit):
    ks, cs, want = _kat_inputs()
    for k, c, w in zip(ks, cs, want):
        y = threefry_jit(k, c[:1], c[1:])
        assert (int(y[0][0]), int(y[1][0])) == tuple(int(v) for v in w)


def test_uint32_wraps_like_numpy_in_every_mode():
    """The cipher relies on wrap-around mul/add and shifts as mul/floor_divide by 2**k."""
    def ops(x, y):
        a, b = P.mul(x, y), P.add(x, y)
        c = P.xor_p.bind(a, b)
        rot = P.or_p.bind(P.mul(c, np.uint32(1 << 19)), P.floor_divide_p.bind(c, np.uint32(1 << 13)))
        return a, b, rot
    x = np.array([0xFFFFFFF0, 12345678, 0x80000001], np.uint32)
    y = np.array([0x9E3779B9, 0xDEADBEEF, 0xFFFFFFFF], np.uint32)
    xi, yi = [int(v) for v in x], [int(v) for v in y]
    M = 1 << 32
    want_a = [(p * q) % M for p, q in zip(xi, yi)]
    want_b = [(p + q) % M for p, q in zip(xi, yi)]
    c = [a ^ b for a, b in zip(want_a, want_b)]
    want_rot = [((v << 19) | (v >> 13)) % M for v in c]
    for mode, f in [("eager", ops), ("interpret", ad.jit(ops, backend="interpret")), ("jit", ad.jit(ops))]:
        a, b, rot = f(x, y)
        assert [int(v) for v in a] == want_a, mode
        assert [int(v) for v in b] == want_b, mode
        assert [int(v) for v in rot] == want_rot, mode
        assert a.dtype == np.uint32, mode


# ---------------------------------------------------------------- keys
def test_key_layout_and_seeds():
    np.testing.assert_array_equal(R.key(42), [0, 42])
    np.testing.assert_array_equal(R.PRNGKey(2 ** 40 + 7), [2 ** 8, 7])
    np.testing.assert_array_equal(R.key(-1), [0xFFFFFFFF, 0xFFFFFFFF])
    # a traced seed gives the same key
    np.testing.assert_array_equal(ad.jit(R.key, backend="interpret")(np.int64(-3)), R.key(-3))
    np.testing.assert_array_equal(ad.vmap(R.key)(np.array([5, 2 ** 33 + 1])),
                                  [R.key(5), R.key(2 ** 33 + 1)])
    assert R.key(0).dtype == np.uint32


def test_split_and_fold_in_give_distinct_independent_keys():
    ks = R.split(KEY, 64)
    assert ks.shape == (64, 2) and ks.dtype == np.uint32
    words = {int(w) for w in ks.ravel()} | {int(w) for w in KEY}
    assert len(words) == 130                     # no repeated word among 64 keys and the parent
    folds = np.stack([R.fold_in(KEY, i) for i in range(64)])
    assert len({tuple(f) for f in folds} | {tuple(k) for k in ks}) == 128
    # draws from sibling keys are uncorrelated: |r| < 4/sqrt(n) for all pairs of 8 streams
    u = np.stack([R.uniform(k, (4000,)) for k in ks[:8]])
    r = np.corrcoef(u)[np.triu_indices(8, 1)]
    assert np.abs(r).max() < 4 / math.sqrt(4000)
    # split is deterministic, and splitting twice differs from splitting once
    np.testing.assert_array_equal(R.split(KEY, 64), ks)
    assert not np.array_equal(R.split(ks[0])[0], ks[0])


def test_traced_fold_in_matches_eager():
    f = ad.jit(lambda k, i: R.fold_in(k, i), backend="interpret")
    for i in (0, 7, 2 ** 31 + 5):
        np.testing.assert_array_equal(f(KEY, np.uint32(i)), R.fold_in(KEY, i))


def test_key_shape_errors_name_vmap():
    with pytest.raises(ShapeError, match="vmap"):
        R.normal(R.split(KEY, 3), (2,))
    with pytest.raises(ShapeError, match="uint32"):
        R.uniform(np.array([1.0, 2.0]), (2,))


# ---------------------------------------------------------------- reproducibility
def _draws(k):
    return (R.bits(k, (5,)), R.uniform(k, (5,)), R.uniform(k, (5,), dtype=np.float32),
            R.randint(k, (5,), -3, 9), R.permutation(k, 7), R.normal(k, (5,)),
            R.gamma(k, np.array([0.3, 1.0, 2.5, 40.0])), R.poisson(k, np.array([0.5, 4.0, 25.0, 300.0])))


@pytest.fixture(scope="module")
def draws_jit():
    return ad.jit(_draws)


def test_same_key_same_bits_eager_jit_vmap(draws_jit):
    ks = R.split(KEY, 3)
    eager = [_draws(k) for k in ks]
    jitted = [draws_jit(k) for k in ks]
    vmapped = ad.vmap(_draws)(ks)
    for i in range(3):
        for j, (e, jt) in enumerate(zip(eager[i], jitted[i])):
            v = vmapped[j][i]
            assert e.dtype == jt.dtype == v.dtype
            if e.dtype.kind in "uib" or j < 3:      # integers and uniforms: identical bits
                np.testing.assert_array_equal(e, jt)
                np.testing.assert_array_equal(e, v)
            else:                                    # transcendental math may differ in an ulp
                np.testing.assert_allclose(jt, e, rtol=1e-13)
                np.testing.assert_allclose(v, e, rtol=1e-13)
    assert not np.array_equal(eager[0][0], eager[1][0])


def test_jit_permutation():
    np.testing.assert_array_equal(ad.jit(lambda k: R.permutation(k, 7))(KEY), R.permutation(KEY, 7))


def test_float_dtypes():
    for dt in (np.float32, np.float64, anp.float32):
        for f in (R.uniform, R.normal, R.exponential, R.laplace, R.logistic, R.gumbel, R.cauchy):
            assert f(KEY, (3,), dtype=dt).dtype == np.dtype(dt if dt is not anp.float32 else np.float32)
        assert R.gamma(KEY, 2.0, (3,), dtype=dt).dtype == np.dtype(np.float32 if dt is not np.float64 else dt)
    u = R.uniform(KEY, (N,), dtype=np.float32)
    assert u.min() >= 0 and u.max() < 1
    ks_ok(u, "uniform")


def test_uniform_resolution_and_range():
    u = R.uniform(KEY, (N,))
    assert np.all(u * 2.0 ** 53 == np.floor(u * 2.0 ** 53))   # multiples of 2^-53: 53 random bits
    assert len(np.unique(u)) == N
    v = R.uniform(KEY, (2, N), minval=-2.0, maxval=np.array([[1.0], [5.0]]))
    assert v.shape == (2, N) and v[0].max() < 1.0 and v[1].max() < 5.0 and v.min() >= -2.0
    ks_ok((v[1] + 2) / 7, "uniform")


# ---------------------------------------------------------------- laws of continuous samplers
CONTINUOUS = [
    ("uniform", lambda k: R.uniform(k, (N,)), st.uniform().cdf),
    ("normal", lambda k: R.normal(k, (N,)), st.norm().cdf),
    ("normal_f32", lambda k: R.normal(k, (N,), np.float32), st.norm().cdf),
    ("exponential", lambda k: R.exponential(k, (N,)), st.expon().cdf),
    ("laplace", lambda k: R.laplace(k, (N,)), st.laplace().cdf),
    ("logistic", lambda k: R.logistic(k, (N,)), st.logistic().cdf),
    ("gumbel", lambda k: R.gumbel(k, (N,)), st.gumbel_r().cdf),
    ("cauchy", lambda k: R.cauchy(k, (N,)), st.cauchy().cdf),
    ("gamma_0.3", lambda k: R.gamma(k, 0.3, (N,)), st.gamma(0.3).cdf),
    ("gamma_1", lambda k: R.gamma(k, 1.0, (N,)), st.gamma(1.0).cdf),
    ("gamma_4.5", lambda k: R.gamma(k, 4.5, (N,)), st.gamma(4.5).cdf),
    ("gamma_200", lambda k: R.gamma(k, 200.0, (N,)), st.gamma(200.0).cdf),
    ("beta", lambda k: R.beta(k, 0.7, 2.5, (N,)), st.beta(0.7, 2.5).cdf),
    ("t_3", lambda k: R.t(k, 3.0, (N,)), st.t(3.0).cdf),
    ("chisquare_5", lambda k: R.chisquare(k, 5.0, (N,)), st.chi2(5.0).cdf),
    ("pareto", lambda k: R.pareto(k, 2.5, (N,)), st.pareto(2.5).cdf),
    ("weibull", lambda k: R.weibull_min(k, 2.0, 1.5, (N,)), st.weibull_min(1.5, scale=2.0).cdf),
    ("lognormal", lambda k: R.lognormal(k, 0.5, (N,)), st.lognorm(0.5).cdf),
    ("truncnorm_mid", lambda k: R.truncated_normal(k, -1.0, 2.0, (N,)), st.truncnorm(-1.0, 2.0).cdf),
    ("truncnorm_tail", lambda k: R.truncated_normal(k, 5.0, 9.0, (N,)), st.truncnorm(5.0, 9.0).cdf),
    ("truncnorm_left", lambda k: R.truncated_normal(k, -np.inf, -6.0, (N,)), st.truncnorm(-np.inf, -6.0).cdf),
    ("rayleigh", lambda k: R.rayleigh(k, 2.0, (N,)), st.rayleigh(scale=2.0).cdf),
    ("maxwell", lambda k: R.maxwell(k, (N,)), st.maxwell().cdf),
    ("triangular", lambda k: R.triangular(k, -1.0, 0.5, 2.0, (N,)), st.triang(0.5, loc=-1.0, scale=3.0).cdf),
    ("gennorm_1.5", lambda k: R.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5).cdf),
]


@pytest.mark.parametrize("name,draw,cdf", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_laws_ks(name, draw, cdf):
    x = draw(R.fold_in(KEY, [c[0] for c in CONTINUOUS].index(name)))
    assert np.all(np.isfinite(x))
    ks_ok(x, cdf)


def test_truncated_normal_respects_bounds_and_broadcasts():
    lo, hi = np.array([-3.0, 0.0, 4.0]), np.array([-2.0, 0.5, 30.0])
    z = R.truncated_normal(KEY, lo, hi, (1000, 3))
    assert np.all((z > lo) & (z < hi))
    np.testing.assert_allclose(z.mean(0), st.truncnorm(lo, hi).mean(), atol=0.02)


def test_normal_moments():
    z = R.normal(KEY, (200000,))
    assert abs(z.mean()) < 4 / math.sqrt(2e5)
    assert abs(z.var() - 1) < 4 * math.sqrt(2 / 2e5)
    assert abs(st.skew(z)) < 0.02 and abs(st.kurtosis(z)) < 0.04


def test_multivariate_normal_moments_and_methods():
    mean = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, -0.5], [0.3, 1.0, 0.2], [-0.5, 0.2, 0.8]])
    for method in ("cholesky", "eigh", "svd"):
        x = R.multivariate_normal(KEY, mean, a, (50000,), method=method)
        assert x.shape == (50000, 3)
        np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(x.T), a, atol=0.04)
    # batched means broadcast against the sample shape
    x = R.multivariate_normal(KEY, np.zeros((4, 3)), a)
    assert x.shape == (4, 3)


def test_dirichlet_moments():
    alpha = np.array([0.5, 2.0, 3.5])
    x = R.dirichlet(KEY, alpha, (40000,))
    assert x.shape == (40000, 3)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    a0 = alpha.sum()
    np.testing.assert_allclose(x.mean(0), alpha / a0, atol=0.005)
    np.testing.assert_allclose(x.var(0), alpha * (a0 - alpha) / (a0 ** 2 * (a0 + 1)), rtol=0.05)


def test_orthogonal_is_orthogonal_and_haar():
    q = R.orthogonal(KEY, 4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-12)
    # Haar on O(2): the rotation angle is uniform and det = ±1 equally often
    qs = ad.vmap(lambda k: R.orthogonal(k, 2))(R.split(KEY, 4000))
    ang = np.arctan2(qs[:, 1, 0], qs[:, 0, 0])
    ks_ok((ang + np.pi) / (2 * np.pi), "uniform")
    dets = np.linalg.det(qs)
    assert abs((dets > 0).mean() - 0.5) < 4 * 0.5 / math.sqrt(4000)


# ---------------------------------------------------------------- discrete samplers
def _chi2_ok(counts, probs):
    counts, probs = np.asarray(counts, float), np.asarray(probs, float)
    n = counts.sum()
    stat = ((counts - n * probs) ** 2 / (n * probs)).sum()
    assert stat < st.chi2(len(probs) - 1).ppf(0.999), f"chi2 {stat:.1f}"


@pytest.mark.parametrize("lam", [0.7, 4.0, 9.9, 10.0, 35.0, 1000.0])
def test_poisson_law(lam):
    k = R.poisson(R.fold_in(KEY, int(lam * 10)), lam, (N,))
    assert k.dtype == np.int64 and k.min() >= 0
    d = st.poisson(lam)
    lo, hi = int(d.ppf(1e-3)), int(d.ppf(1 - 1e-3))       # bins: ≤ lo, lo+1 ... hi-1, ≥ hi
    mid = np.arange(lo + 1, hi)
    probs = np.concatenate([[d.cdf(lo)], d.pmf(mid), [d.sf(hi - 1)]])
    counts = np.concatenate([[np.sum(k <= lo)], [np.sum(k == v) for v in mid], [np.sum(k >= hi)]])
    _chi2_ok(counts, probs)


def test_poisson_mixed_rates_broadcast():
    lam = np.array([0.5, 3.0, 50.0, 400.0])
    k = R.poisson(KEY, lam, (N, 4))
    np.testing.assert_allclose(k.mean(0), lam, rtol=0.03)
    np.testing.assert_allclose(k.var(0), lam, rtol=0.06)


def test_randint_uniform_and_bounds():
    x = R.randint(KEY, (N,), -3, 4)
    assert x.dtype == np.int64 and x.min() == -3 and x.max() == 3
    _chi2_ok(np.bincount(x + 3), np.full(7, 1 / 7))
    big = R.randint(KEY, (N,), 0, 2 ** 40)
    ks_ok(big / 2.0 ** 40, "uniform")
    y = R.randint(KEY, (3, 2), np.array([0, 100]), np.array([1, 103]), dtype=np.int32)
    assert y.dtype == np.int32 and np.all(y[:, 0] == 0) and np.all((y[:, 1] >= 100) & (y[:, 1] < 103))


def test_bernoulli_and_categorical_frequencies():
    b = R.bernoulli(KEY, 0.3, (N,))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 4 * math.sqrt(0.21 / N)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    c = R.categorical(KEY, np.log(p), shape=(N, 2))
    assert c.shape == (N, 2)
    for j in range(2):
        _chi2_ok(np.bincount(c[:, j], minlength=3), p[j])
    c0 = R.categorical(KEY, np.log(p).T, axis=0)           # categories along axis 0
    assert c0.shape == (2,)


def test_permutation_and_choice():
    perms = ad.vmap(lambda k: R.permutation(k, 4))(R.split(KEY, 24000))
    assert all(sorted(p) == [0, 1, 2, 3] for p in perms[:50])
    codes = perms @ np.array([64, 16, 4, 1])
    _chi2_ok(np.unique(codes, return_counts=True)[1], np.full(24, 1 / 24))   # 24 orders equally
    x = np.arange(12.0).reshape(3, 4)
    px = R.permutation(KEY, x, axis=1)
    np.testing.assert_array_equal(np.sort(px, 1), x)
    pi = R.permutation(KEY, x, axis=1, independent=True)
    np.testing.assert_array_equal(np.sort(pi, 1), x)
    c = R.choice(KEY, 10, (10,), replace=False)
    assert sorted(c.tolist()) == list(range(10))
    p = np.array([0.1, 0.6, 0.3])
    cw = R.choice(KEY, np.array([5.0, 6.0, 7.0]), (N,), p=p)
    _chi2_ok([np.sum(cw == v) for v in (5.0, 6.0, 7.0)], p)
    # weighted, without replacement: first picks follow p; no repeats
    firsts = ad.vmap(lambda k: R.choice(k, 3, (2,), replace=False, p=p))(R.split(KEY, 6000))
    assert np.all(firsts[:, 0] != firsts[:, 1])
    _chi2_ok(np.bincount(firsts[:, 0], minlength=3), p)
    with pytest.raises(ValueError, match="larger sample"):
        R.choice(KEY, 3, (4,), replace=False)


def test_rademacher():
    r = R.rademacher(KEY, (N,))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 4 / math.sqrt(N)


# ---------------------------------------------------------------- gradients
def test_normal_reparameterization_gradient():
    z = R.normal(KEY, (1000,))
    f = lambda mu, s: anp.mean((mu + s * R.normal(KEY, (1000,))) ** 2)
    gm, gs = ad.grad(f, argnums=(0, 1))(0.3, 1.7)
    np.testing.assert_allclose(gm, np.mean(2 * (0.3 + 1.7 * z)), rtol=1e-12)
    np.testing.assert_allclose(gs, np.mean(2 * (0.3 + 1.7 * z) * z), rtol=1e-12)


@pytest.mark.parametrize("a", [0.4, 1.0, 3.0, 60.0])
def test_gamma_implicit_gradient_matches_cdf(a):
    """dz/da = -(∂F/∂a)/f at each sample, F from scipy (central difference in a)."""
    k = R.fold_in(KEY, int(a * 10))
    z = R.gamma(k, a, (200,))
    g = ad.jacfwd(lambda a: R.gamma(k, a, (200,)))(a)
    h = 1e-6 * max(a, 1.0)
    dF = (sps.gammainc(a + h, z) - sps.gammainc(a - h, z)) / (2 * h)
    want = -dF / st.gamma(a).pdf(z)
    np.testing.assert_allclose(g, want, rtol=2e-5, atol=1e-8)


def test_gamma_gradient_of_mean_is_one_and_reverse_mode():
    # E[z] = a, so the average pathwise derivative is ≈ 1; reverse mode equals forward mode
    for a in (0.5, 2.0, 9.0):
        g = ad.grad(lambda a: anp.mean(R.gamma(KEY, a, (N,))))(a)
        assert abs(g - 1.0) < 0.03, (a, g)
    f = lambda a: anp.sum(anp.sin(R.gamma(KEY, a, (5,))))
    np.testing.assert_allclose(ad.grad(f)(np.array([0.5, 1.5, 2.5, 3.5, 4.5])),
                               ad.jacfwd(f)(np.array([0.5, 1.5, 2.5, 3.5, 4.5])), rtol=1e-12)


def test_beta_and_dirichlet_gradients_closed_form():
    # d/da E[Beta(a, b)] = b / (a + b)^2
    a, b = 2.0, 3.0
    g = ad.grad(lambda a: anp.mean(R.beta(KEY, a, b, (N,))))(a)
    assert abs(g - b / (a + b) ** 2) < 0.006
    # d/dα_0 E[x_0] = (α₀ - α_0) / α₀²
    alpha = np.array([1.0, 2.0, 3.0])
    g = ad.grad(lambda al: anp.mean(R.dirichlet(KEY, al, (N,))[:, 0]))(alpha)
    want = np.array([5.0, -1.0, -1.0]) / 36
    np.testing.assert_allclose(g, want, atol=0.006)


def test_jit_and_vmap_of_gamma_gradient():
    f = lambda a: anp.sum(R.gamma(KEY, a, (3,)) ** 2)
    a = np.array([0.7, 2.0, 5.0])
    g = ad.grad(f)(a)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(a), g, rtol=1e-11)
    gv = ad.vmap(ad.grad(lambda a, k: anp.sum(R.gamma(k, a, (3,)))), in_axes=(None, 0))(a, R.split(KEY, 2))
    assert gv.shape == (2, 3) and np.all(np.isfinite(gv))


# ---------------------------------------------------------------- jit and traced use
def test_jitted_sampler_in_a_scan_loop():
    """The usual pattern: split a key in a loop carried through lax.scan."""
    def step(key, _):
        key, sub = R.split(key)
        return key, R.normal(sub, ())
    f = ad.jit(lambda k: ad.lax.scan(step, k, None, length=500)[1])
    xs = f(KEY)
    assert xs.shape == (500,) and len(np.unique(xs)) == 500
    ks_ok(xs, st.norm().cdf)
    # the same loop unrolled eagerly gives the same numbers
    k, want = KEY, []
    for _ in range(5):
        k, sub = R.split(k)
        want.append(R.normal(sub, ()))
    np.testing.assert_allclose(xs[:5], want, rtol=1e-13)


def test_numpy_random_under_jit_warns_once_naming_ad_random():
    import autodiff.numpy.random as nr
    f = ad.jit(lambda x: x + anp.random.normal(size=x.shape))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        a = f(np.zeros(3))
        b = f(np.zeros(3))
    msgs = [x for x in w if issubclass(x.category, nr.FrozenRandomWarning)]
    assert len(msgs) == 1 and "ad.random" in str(msgs[0].message)
    assert "test_random.py" in str(msgs[0].message)
    np.testing.assert_array_equal(a, b)                       # the frozen draw it warns about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        anp.random.normal(size=2)                             # eager: numpy, no warning
        ad.grad(lambda x: anp.sum(x * anp.random.normal(size=2)))(np.ones(2))


def test_truncated_normal_and_mvn_gradients():
    k = R.fold_in(KEY, 99)
    f = lambda lo: anp.mean(R.truncated_normal(k, lo, lo + 1.0, (4000,)))
    h = 1e-5
    np.testing.assert_allclose(ad.grad(f)(0.5), (f(0.5 + h) - f(0.5 - h)) / (2 * h), rtol=1e-6)
    # the pathwise average estimates d/dlo E[z | lo < z < lo + 1] (scipy's mean, differenced)
    m = lambda lo: st.truncnorm(lo, lo + 1.0).mean()
    assert abs(ad.grad(f)(0.5) - (m(0.5 + 1e-5) - m(0.5 - 1e-5)) / 2e-5) < 0.02
    np.testing.assert_allclose(ad.jit(lambda k: R.truncated_normal(k, -1.0, 2.0, (3,)))(k),
                               R.truncated_normal(k, -1.0, 2.0, (3,)), rtol=1e-12)
    # E[x xᵀ] = cov: d/dcov of the mean of x_i² sums over i → identity on the diagonal
    c = np.array([[2.0, 0.3], [0.3, 1.0]])
    g = ad.grad(lambda mu: anp.sum(anp.mean(R.multivariate_normal(k, mu, c, (20000,)), 0)))(np.zeros(2))
    np.testing.assert_allclose(g, [1.0, 1.0], rtol=1e-12)
    ad.check_grads(lambda c: anp.sum(R.multivariate_normal(k, np.zeros(2), c @ c.T + np.eye(2), (3,)) ** 2),
                   (c,), order=1, modes=("rev",))


def test_numpy_generator_draws_under_jit_warn_too():
    import autodiff.numpy.random as nr
    rng = anp.random.default_rng(5)
    assert isinstance(rng, np.random.Generator)
    np.testing.assert_array_equal(rng.normal(size=3), np.random.default_rng(5).normal(size=3))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ad.jit(lambda x: x + rng.normal(size=2))(np.zeros(2))
    assert any(issubclass(m.category, nr.FrozenRandomWarning) and "default_rng().normal" in str(m.message)
               for m in w)


def test_geometric_ball_and_split_shapes():
    g = R.geometric(KEY, 0.3, (N,))
    assert g.min() == 1 and g.dtype == np.int64
    ks = np.arange(1, 12)
    probs = np.append(st.geom(0.3).pmf(ks), st.geom(0.3).sf(11))
    _chi2_ok(np.append([np.sum(g == v) for v in ks], np.sum(g > 11)), probs)
    b = R.ball(KEY, 2, shape=(N,))
    r = np.linalg.norm(b, axis=-1)
    assert r.max() <= 1.0
    ks_ok(r ** 2, "uniform")                                  # uniform in the disk: r² ~ U(0, 1)
    ks_ok((np.arctan2(b[:, 1], b[:, 0]) + np.pi) / (2 * np.pi), "uniform")
    b1 = R.ball(KEY, 3, p=1, shape=(N,))
    assert np.abs(b1).sum(-1).max() <= 1.0
    ks_ok(np.abs(b1).sum(-1) ** 3, "uniform")                  # volume fraction of the ℓ¹ ball
    s = R.split(KEY, (2, 3))
    assert s.shape == (2, 3, 2)
    np.testing.assert_array_equal(s.reshape(6, 2), R.split(KEY, 6))
