"""Regressions from porting a third round of JAX scripts by changing imports: flax-style
dataclasses with static fields, ``jax.nn`` masks (``softmax(where=)``, ``logsumexp(where=)``,
``standardize(where=)``, ``one_hot(axis=)``), JAX's ``where=None`` on numpy inputs, the
array API's ``cumulative_sum(include_initial=)``, ``random.categorical(replace=False)`` and
the top-level names old scripts call (``jax.tree_map``, ``jax.device_count``,
``jax.linear_transpose``)."""
import dataclasses

import numpy as np
import pytest
import scipy.special

import autodiff as ad
import autodiff.numpy as anp
from autodiff import nn, random, tree_util
from autodiff.scipy.special import logsumexp


def _fd(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# -- pytrees ------------------------------------------------------------------

@tree_util.register_dataclass
@dataclasses.dataclass
class _Dense:
    w: object
    b: object
    name: str = dataclasses.field(default="dense", metadata=dict(static=True))


def test_register_dataclass_reads_static_field_metadata():
    # JAX infers meta fields from metadata=dict(static=True); the str was a leaf before
    layer = _Dense(np.array([1.0, 2.0]), np.array(0.5))
    leaves, td = tree_util.tree_flatten(layer)
    assert len(leaves) == 2
    g = ad.grad(lambda l: anp.sum(l.w * 3.0) + l.b * 2.0)(layer)
    np.testing.assert_allclose(g.w, [3.0, 3.0])
    np.testing.assert_allclose(g.b, 2.0)
    assert g.name == "dense"
    out = ad.jit(lambda l: l.w * l.b)(layer)
    np.testing.assert_allclose(out, [0.5, 1.0])
    other = _Dense(np.zeros(2), np.array(0.0), name="other")
    assert tree_util.tree_structure(other) != td


# -- jax.nn -------------------------------------------------------------------

def test_one_hot_axis():
    lab = np.array([[0, 2], [1, 1]])
    ref = np.eye(3)[lab]                                 # (2, 2, 3)
    np.testing.assert_array_equal(nn.one_hot(lab, 3, axis=0), np.moveaxis(ref, -1, 0))
    np.testing.assert_array_equal(nn.one_hot(lab, 3, axis=1), np.moveaxis(ref, -1, 1))
    np.testing.assert_array_equal(ad.jit(lambda l: nn.one_hot(l, 3, axis=0))(lab),
                                  np.moveaxis(ref, -1, 0))


def _masked_softmax_ref(a, w):
    e = np.where(w, np.exp(a - a.max(-1, keepdims=True)), 0.0)
    return e / e.sum(-1, keepdims=True)


def test_softmax_and_log_softmax_where():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4))
    w = np.array([[True, True, False, True], [True, False, False, True],
                  [False, True, True, True]])
    ref = _masked_softmax_ref(a, w)
    np.testing.assert_allclose(nn.softmax(a, where=w), ref, rtol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda a: nn.softmax(a, where=w))(a), ref, rtol=1e-12)
    np.testing.assert_allclose(anp.softmax(a, axis=-1, where=w), ref, rtol=1e-12)
    lsm = nn.log_softmax(a, where=w)
    np.testing.assert_allclose(lsm[w], np.log(ref[w]), rtol=1e-12)
    assert np.all(np.isneginf(lsm[~w]))
    c = np.arange(4.0)
    g = ad.grad(lambda a: anp.sum(nn.softmax(a, where=w) * c))(a)
    fd = _fd(lambda a: np.sum(_masked_softmax_ref(a, w) * c), a)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(g[~w], 0.0)


def test_logsumexp_where():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 5))
    w = rng.uniform(size=(3, 5)) < 0.6
    w[:, 0] = True
    ref = np.log(np.sum(np.where(w, np.exp(a), 0.0), axis=1))
    np.testing.assert_allclose(logsumexp(a, axis=1, where=w), ref, rtol=1e-12)
    np.testing.assert_allclose(nn.logsumexp(a, axis=1, where=w), ref, rtol=1e-12)
    np.testing.assert_allclose(ad.jit(lambda a: logsumexp(a, axis=1, where=w))(a), ref,
                               rtol=1e-12)
    g = ad.grad(lambda a: anp.sum(logsumexp(a, axis=1, where=w)))(a)
    np.testing.assert_allclose(g, np.where(w, np.exp(a - ref[:, None]), 0.0), rtol=1e-12)
    b = rng.uniform(-1, 1, size=(3, 5))
    out, sgn = logsumexp(a, axis=1, b=b, return_sign=True, where=w)
    r, rs = scipy.special.logsumexp(a, axis=1, b=np.where(w, b, 0.0), return_sign=True)
    np.testing.assert_allclose(out, r, rtol=1e-12)
    np.testing.assert_array_equal(sgn, rs)


def test_standardize_where_and_normalize():
    x = np.array([[1.0, 3.0, 100.0], [2.0, 4.0, 6.0]])
    w = np.array([[True, True, False], [True, True, True]])
    out = nn.standardize(x, axis=-1, where=w, epsilon=0.0)
    m0, v0 = 2.0, 1.0                    # of the masked first row: [1, 3]
    np.testing.assert_allclose(out[0], (x[0] - m0) / np.sqrt(v0))
    np.testing.assert_allclose(out[1], (x[1] - 4.0) / np.sqrt(8.0 / 3.0))
    np.testing.assert_allclose(ad.jit(lambda x: nn.standardize(x, where=w, epsilon=0.0))(x),
                               out)
    np.testing.assert_allclose(nn.normalize(x, axis=0), nn.standardize(x, axis=0))
    np.testing.assert_allclose(
        nn.logmeanexp(np.log(x), axis=-1, where=w),
        np.log([2.0, 4.0]), rtol=1e-12)


# -- where=None, cumulative_sum --------------------------------------------------

def test_where_none_on_numpy_inputs_means_no_mask():
    # numpy reads where=None as an all-false mask: np.sum(x, where=None) is 0
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert anp.sum(x, where=None) == 11.0
    np.testing.assert_allclose(anp.sum(x, axis=0, where=None), [4.0, 7.0])
    assert anp.mean(x, where=None) == 2.75
    assert anp.max(x, where=None) == 5.0
    assert anp.prod(x, where=None) == 30.0
    np.testing.assert_allclose(anp.var(x, where=None), np.var(x))
    np.testing.assert_allclose(anp.nanmean(x, where=None), 2.75)
    assert bool(anp.any(x > 4, where=None))


def test_nanvar_nanstd_where():
    x = np.array([1.0, np.nan, 3.0, 50.0])
    w = np.arange(4) < 3
    assert anp.nanvar(x, where=w) == 1.0
    assert anp.nanstd(x, where=w) == 1.0
    np.testing.assert_allclose(ad.jit(lambda x: anp.nanvar(x, where=w))(x), 1.0)
    y = np.array([1.0, 2.0, 4.0, 50.0])
    g = ad.grad(lambda y: anp.nanvar(y, where=w))(y)
    np.testing.assert_allclose(g, _fd(lambda y: np.var(y[:3]) + 0 * y[3], y), atol=1e-8)


def test_cumulative_sum_prod_include_initial():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    ref = np.concatenate([np.zeros((2, 1)), np.cumsum(a, axis=1)], axis=1)
    np.testing.assert_allclose(anp.cumulative_sum(a, axis=1, include_initial=True), ref)
    np.testing.assert_allclose(
        ad.jit(lambda a: anp.cumulative_sum(a, axis=1, include_initial=True))(a), ref)
    refp = np.concatenate([np.ones((1, 3)), np.cumprod(a, axis=0)], axis=0)
    np.testing.assert_allclose(anp.cumulative_prod(a, axis=0, include_initial=True), refp)
    c = np.arange(9.0).reshape(3, 3)
    g = ad.grad(lambda a: anp.sum(anp.cumulative_prod(a, axis=0, include_initial=True) * c))(a)
    fd = _fd(lambda a: np.sum(np.concatenate([np.ones((1, 3)), np.cumprod(a, 0)]) * c), a)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    np.testing.assert_array_equal(anp.cumulative_sum(np.array([1, 2, 3])), [1, 3, 6])


# -- random -----------------------------------------------------------------------

def test_categorical_without_replacement():
    key = random.key(0)
    d = random.categorical(key, anp.zeros(6), shape=(6,), replace=False)
    assert sorted(np.asarray(d).tolist()) == list(range(6))
    d = random.categorical(key, np.zeros((2, 5)), shape=(4, 2), replace=False)
    assert d.shape == (4, 2)
    for j in range(2):
        assert len(set(np.asarray(d[:, j]).tolist())) == 4
    p = np.array([0.1, 0.2, 0.7])
    draws = ad.vmap(lambda k: random.categorical(k, anp.log(p), shape=(2,), replace=False))(
        random.split(key, 8000))
    assert np.all(draws[:, 0] != draws[:, 1])
    np.testing.assert_allclose(np.bincount(draws[:, 0], minlength=3) / 8000, p, atol=0.02)
    second = [sum(p[i] * p[j] / (1 - p[i]) for i in range(3) if i != j) for j in range(3)]
    np.testing.assert_allclose(np.bincount(draws[:, 1], minlength=3) / 8000, second,
                               atol=0.02)
    with pytest.raises(ValueError, match="without replacement"):
        random.categorical(key, np.zeros(3), shape=(4,), replace=False)


# -- top-level names ---------------------------------------------------------------

def test_old_top_level_jax_names():
    t = ad.tree_map(lambda a, b: a + b, {"x": 1.0, "y": (2.0,)}, {"x": 10.0, "y": (20.0,)})
    assert t == {"x": 11.0, "y": (22.0,)}
    leaves, td = ad.tree_flatten({"a": 1, "b": [2, 3]})
    assert leaves == [1, 2, 3] and ad.tree_leaves([1, [2]]) == [1, 2]
    assert ad.tree_unflatten(td, [4, 5, 6]) == {"a": 4, "b": [5, 6]}
    assert ad.tree_structure([0, 0]) == tree_util.tree_structure([1, 2])
    assert ad.device_count() >= 1 and ad.local_device_count("cpu") == 1
    assert ad.default_backend() == "cpu" and ad.process_index() == 0
    assert ad.named_call(lambda x: 2 * x, name="double")(3) == 6
    with ad.named_scope("layer"), ad.ensure_compile_time_eval():
        pass


def test_linear_transpose():
    A = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 5.0]])

    def f(x, y):
        return A @ x + 2.0 * y
    t = ad.linear_transpose(f, ad.ShapeDtypeStruct((3,), np.float64), np.zeros(2))
    ct = np.array([1.0, -1.0])
    gx, gy = t(ct)
    np.testing.assert_allclose(gx, A.T @ ct)
    np.testing.assert_allclose(gy, 2.0 * ct)
    gx2, = ad.jit(lambda c: ad.linear_transpose(lambda x: A @ x, np.zeros(3))(c))(ct)
    np.testing.assert_allclose(gx2, A.T @ ct)


def test_creation_functions_take_device_and_copy():
    # numpy 2's and JAX's keywords raised TypeError (the shown signature had them)
    cpu = ad.devices("cpu")[0]
    np.testing.assert_array_equal(anp.zeros(3, device=cpu), np.zeros(3))
    np.testing.assert_array_equal(anp.ones((2,), dtype=np.float32, device=None), np.ones(2))
    np.testing.assert_array_equal(anp.full((2,), 1.5, device=cpu), [1.5, 1.5])
    np.testing.assert_array_equal(anp.arange(3, device=cpu), [0, 1, 2])
    np.testing.assert_array_equal(anp.eye(2, device=cpu), np.eye(2))
    np.testing.assert_array_equal(anp.zeros_like(np.ones(2), device=cpu), [0.0, 0.0])
    np.testing.assert_array_equal(anp.array([1.0, 2.0], device=cpu), [1.0, 2.0])
    x = np.arange(3.0)
    y = anp.asarray(x, copy=True)
    assert y is not x and np.array_equal(y, x)
    assert anp.asarray(x) is x
    out = ad.jit(lambda v: anp.asarray(v, dtype=np.float32, copy=True) * 2
                 + anp.ones(3, np.float32, device=cpu))(x)
    np.testing.assert_allclose(out, 2 * x + 1)
    assert out.dtype == np.float32
    np.testing.assert_allclose(ad.grad(lambda v: anp.sum(anp.asarray(v, copy=True) ** 2))(x),
                               2 * x)


@pytest.mark.parametrize("name", ["he_normal", "lecun_normal", "glorot_normal",
                                  "xavier_normal", "kaiming_normal", "he_uniform"])
def test_variance_scaling_initializers_keep_float32(name):
    # the scale was a numpy float64 scalar, which promoted float32 draws to float64
    init = getattr(nn.initializers, name)()
    w = init(random.key(0), (400, 300), np.float32)
    assert w.dtype == np.float32
    fan_in = 400
    var = {"he": 2.0 / fan_in, "kaiming": 2.0 / fan_in, "lecun": 1.0 / fan_in,
           "glorot": 2.0 / 700, "xavier": 2.0 / 700}[name.split("_")[0]]
    np.testing.assert_allclose(np.std(w.astype(np.float64)), np.sqrt(var), rtol=0.02)
    w_vs = nn.initializers.variance_scaling(2.0, "fan_out", "normal", dtype=np.float32)(
        random.key(1), (200, 100))
    assert w_vs.dtype == np.float32
    np.testing.assert_allclose(np.std(w_vs.astype(np.float64)), np.sqrt(2.0 / 100), rtol=0.03)
