"""``ad.nn`` (the whole of ``jax.nn``: activations, ``dot_product_attention``,
``initializers``) against closed forms, finite differences and loops."""
import numpy as np
import pytest
import scipy.special

import autodiff as ad

RNG = np.random.default_rng(7)
X = np.array([-7.0, -2.5, -1.0, -0.3, 0.4, 1.0, 2.2, 6.5, 30.0])
sig = scipy.special.expit

ACTIVATIONS = {
    "relu6": lambda x: np.clip(x, 0, 6),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "log_sigmoid": lambda x: np.log(sig(x)),
    "celu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "soft_sign": lambda x: x / (1 + np.abs(x)),
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "mish": lambda x: x * np.tanh(np.logaddexp(x, 0)),
    "softplus": lambda x: np.logaddexp(x, 0),
    "silu": lambda x: x * sig(x),
    "swish": lambda x: x * sig(x),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "relu": lambda x: np.maximum(x, 0),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "sigmoid": sig,
    "tanh": np.tanh,
    "identity": lambda x: x,
    "log1mexp": lambda x: np.log(-np.expm1(-x)),
}
# points away from kinks for the finite differences
SMOOTH = {"relu6": [-1.0, 2.0, 7.0], "hard_sigmoid": [-4.0, 1.0, 4.0], "hard_silu": [-4.0, 1.0, 4.0],
          "hard_swish": [-4.0, 1.0, 4.0], "hard_tanh": [-2.0, 0.5, 2.0], "celu": [-2.0, 1.0],
          "selu": [-2.0, 1.0], "elu": [-2.0, 1.0], "soft_sign": [-2.0, 1.0], "sparse_plus": [-2.0, 0.3, 2.0],
          "sparse_sigmoid": [-2.0, 0.3, 2.0], "relu": [-1.0, 1.0], "leaky_relu": [-1.0, 1.0],
          "log1mexp": [0.1, 0.5, 3.0]}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_values_derivatives_and_float32(name):
    f = getattr(ad.nn, name)
    x = X if name != "log1mexp" else np.abs(X) + 0.01
    with np.errstate(all="ignore"):
        want = ACTIVATIONS[name](x)
    np.testing.assert_allclose(f(x), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ad.jit(f, backend="interpret")(x), want, rtol=1e-12, atol=1e-14)
    assert ad.jit(f, backend="interpret")(x.astype(np.float32)).dtype == np.float32
    pts = np.array(SMOOTH.get(name, [-1.3, 0.2, 1.7]))
    ad.check_grads(f, (pts,), order=2, modes=("fwd", "rev"), eps=1e-5)


def test_softplus_and_log_sigmoid_second_derivative_at_zero():
    # σ'(0) = 1/4: the smooth branches give it exactly at 0 (no cancelling kinks)
    assert float(ad.grad(ad.grad(ad.nn.softplus))(0.0)) == pytest.approx(0.25, rel=1e-14)
    assert float(ad.grad(ad.grad(ad.nn.log_sigmoid))(0.0)) == pytest.approx(-0.25, rel=1e-14)


def test_logistic_is_sigmoid():
    np.testing.assert_allclose(ad.nn.logistic(X), sig(X), rtol=1e-14)
    ad.check_grads(ad.nn.logistic, (X[:4],), order=2, modes=("fwd", "rev"))


# one compiled program shared by the scaled_matmul checks
_SCALED = ad.jit(ad.nn.scaled_matmul, backend="interpret")


def test_scaled_matmul_is_the_block_scaled_formula():
    # the formula of jax.nn.scaled_matmul's documentation (JAX itself runs it only on GPUs)
    a, b = RNG.normal(size=(2, 3, 8)), RNG.normal(size=(2, 4, 8))
    sa, sb = RNG.uniform(0.5, 2.0, size=(2, 3, 2)), RNG.uniform(0.5, 2.0, size=(2, 4, 4))
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, axis=-1), b * np.repeat(sb, 2, axis=-1))
    np.testing.assert_allclose(ad.nn.scaled_matmul(a, b, sa, sb), want, rtol=1e-13)
    np.testing.assert_allclose(_SCALED(a, b, sa, sb), want, rtol=1e-13)
    ad.check_grads(ad.nn.scaled_matmul, (a[:1], b[:1], sa[:1], sb[:1]), order=2, modes=("fwd", "rev"))
    f32 = [v.astype(np.float32) for v in (a, b, sa, sb)]
    assert ad.nn.scaled_matmul(*f32).dtype == np.float32
    assert ad.nn.scaled_matmul(a, b, sa, sb, preferred_element_type=np.float32).dtype == np.float32
    got = ad.vmap(ad.nn.scaled_matmul)(a[:, None], b[:, None], sa[:, None], sb[:, None])
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-13)
    with pytest.raises(ad.errors.ShapeError, match="multiple"):
        ad.nn.scaled_matmul(a, b, sa[..., :1].repeat(3, -1), sb)
    with pytest.raises(ad.errors.ShapeError, match="3-d"):
        ad.nn.scaled_matmul(a[0], b[0], sa[0], sb[0])


def test_initializers_satisfy_the_initializer_protocol():
    I = ad.nn.initializers
    inits = [I.zeros, I.ones, I.glorot_uniform(), I.orthogonal(), I.constant(1.0)]
    assert all(isinstance(f, I.Initializer) for f in inits)
    assert not isinstance(3.0, I.Initializer)
    w = I.lecun_normal()(ad.random.key(1), (3, 2))
    assert isinstance(w, np.ndarray) and w.shape == (3, 2)


def test_glu_standardize_one_hot_logmeanexp():
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(ad.nn.glu(x), x[:, :2] * sig(x[:, 2:]), rtol=1e-14)
    ad.check_grads(ad.nn.glu, (x,), order=2, modes=("fwd", "rev"))
    s = ad.nn.standardize(x, axis=1)
    np.testing.assert_allclose(s, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5), rtol=1e-12)
    ad.check_grads(lambda v: ad.nn.standardize(v, axis=0), (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_array_equal(ad.nn.one_hot(np.array([0, 2]), 3), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(ad.nn.logmeanexp(x, axis=1), np.log(np.mean(np.exp(x), axis=1)), rtol=1e-13,
                               atol=1e-15)   # log of a mean near 1: absolute error


def _attention_ref(q, k, v, mask=None, causal=False):
    B, T, N, H = q.shape
    K = k.shape[2]
    k = np.repeat(k, N // K, axis=2)
    v = np.repeat(v, N // K, axis=2)
    lg = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(H)
    if causal:
        lg = np.where(np.tril(np.ones((T, k.shape[1]), bool)), lg, -np.inf)
    if mask is not None:
        lg = np.where(mask, lg, -np.inf)
    w = np.exp(lg - lg.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", w, v)


def test_dot_product_attention_matches_the_formula():
    q, k, v = RNG.normal(size=(2, 3, 4, 5)), RNG.normal(size=(2, 6, 2, 5)), RNG.normal(size=(2, 6, 2, 5))
    np.testing.assert_allclose(ad.nn.dot_product_attention(q, k, v), _attention_ref(q, k, v), rtol=1e-10, atol=1e-14)
    qc, kc, vc = q[:, :, :, :], k[:, :3], v[:, :3]
    np.testing.assert_allclose(ad.nn.dot_product_attention(qc, kc, vc, is_causal=True),
                               _attention_ref(qc, kc, vc, causal=True), rtol=1e-10, atol=1e-14)
    mask = RNG.uniform(size=(2, 1, 3, 6)) > 0.3
    mask[..., 0] = True
    np.testing.assert_allclose(ad.nn.dot_product_attention(q, k, v, mask=mask), _attention_ref(q, k, v, mask=mask),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ad.nn.dot_product_attention(q[0], k[0], v[0]), _attention_ref(q, k, v)[0], rtol=1e-10, atol=1e-14)
    ad.check_grads(lambda a, b, c: ad.nn.dot_product_attention(a, b, c), (q[:1], k[:1], v[:1]), order=1,
                   modes=("fwd", "rev"))
    got = ad.jit(lambda a, b, c: ad.nn.dot_product_attention(a, b, c, is_causal=True), backend="interpret")(qc, kc, vc)
    np.testing.assert_allclose(got, _attention_ref(qc, kc, vc, causal=True), rtol=1e-10, atol=1e-14)


INITS = {
    "glorot_uniform": ("uniform", 2 / (50 + 40)), "xavier_uniform": ("uniform", 2 / (50 + 40)),
    "glorot_normal": ("normal", 2 / (50 + 40)), "xavier_normal": ("normal", 2 / (50 + 40)),
    "lecun_uniform": ("uniform", 1 / 50), "lecun_normal": ("normal", 1 / 50),
    "he_uniform": ("uniform", 2 / 50), "kaiming_uniform": ("uniform", 2 / 50),
    "he_normal": ("normal", 2 / 50), "kaiming_normal": ("normal", 2 / 50),
}


@pytest.mark.parametrize("name", sorted(INITS))
def test_variance_scaling_initializers_have_their_variance(name):
    kind, var = INITS[name]
    w = np.asarray(getattr(ad.nn.initializers, name)()(ad.random.key(3), (50, 40)))
    assert w.shape == (50, 40)
    # 2000 draws: the sample variance is within ~10% of the target with overwhelming probability
    assert abs(w.var() / var - 1) < 0.12, (name, w.var(), var)
    if kind == "uniform":
        assert np.abs(w).max() <= np.sqrt(3 * var) + 1e-12
    else:
        assert np.abs(w).max() <= 2 * np.sqrt(var) / 0.8796256610342398 + 1e-12     # truncated at 2σ


def test_other_initializers():
    I = ad.nn.initializers
    k = ad.random.key(0)
    np.testing.assert_array_equal(I.zeros(k, (2, 3)), 0)
    np.testing.assert_array_equal(I.ones(k, (2,)), 1)
    np.testing.assert_array_equal(I.constant(2.5)(k, (2, 2)), 2.5)
    assert abs(np.asarray(I.normal(0.5)(k, (4000,))).std() / 0.5 - 1) < 0.05
    u = np.asarray(I.uniform(0.3)(k, (4000,)))
    assert u.min() >= 0 and u.max() < 0.3
    t = np.asarray(I.truncated_normal(1.0)(k, (4000,)))
    assert np.abs(t).max() <= 2.0
    vs = np.asarray(I.variance_scaling(3.0, "fan_out", "normal")(k, (30, 60)))
    assert abs(vs.var() / (3.0 / 60) - 1) < 0.1
    q = np.asarray(I.orthogonal()(k, (5, 3)))
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    q2 = np.asarray(I.orthogonal(scale=2.0)(k, (3, 5)))
    np.testing.assert_allclose(q2 @ q2.T, 4 * np.eye(3), atol=1e-12)
    d = np.asarray(I.delta_orthogonal()(k, (3, 3, 4, 4)))
    np.testing.assert_allclose(d[1, 1].T @ d[1, 1], np.eye(4), atol=1e-12)
    assert np.count_nonzero(d[0]) == 0
    w = ad.jit(lambda key: I.he_normal()(key, (4, 4)), backend="interpret")(k)
    np.testing.assert_allclose(w, I.he_normal()(k, (4, 4)))
