"""Port of JAX's ``tests/nn_test.py`` (jax-ml/jax; classes ``NNFunctionsTest`` and
``NNInitializersTest``) to autodiff: activations and their derivatives at edge values,
softmax/log_softmax with ``where=``, ``standardize``, ``one_hot``, ``logmeanexp``,
``log1mexp``, ``dot_product_attention`` (the ``"xla"`` implementation: masks, bias, causal,
padding, local windows, grouped heads, ``return_residual``, vmap) and the initializers.

``jax.nn`` became ``ad.nn``, ``jnp`` ``anp``, ``jtu.check_grads`` ``ad.check_grads``; each
test cites the JAX test it ports. JAX compares ``implementation='xla'`` with ``None`` (the
same code); here both are compared with a numpy reference of the attention formula and the
derivatives with finite differences. Values are checked eagerly and traced
(``ad.jit(..., backend="interpret")``), a few under the Numba ``jit``. Shapes are small and
the default dtype is float64 (JAX's x64 mode).

Not ported: cuDNN (``implementation='cudnn'``, checked to raise a typed error instead),
float8 (mxfp8) quantization in ``scaled_matmul`` (ported with float64 block scales) and
``scaled_dot_general`` (absent here; no float8 dtypes), bfloat16/float16 variants,
jaxpr-size and residual-count checks (``testReluGrad``'s jaxpr,
``testSoftmaxGradResiduals``, ``testSoftmaxGradFlag``), memory tests on 10¹² element
jaxprs, ``checking_leaks`` (ported as a value check), and ``jax.debug_infs`` (ported as
"no floating-point warning").
"""
import warnings
import zlib
from functools import partial

import numpy as np
import pytest
import scipy.stats

import autodiff as ad
import autodiff.numpy as anp
from autodiff import nn
from autodiff.errors import ConcretizationError, UnsupportedError
from autodiff.tree_util import tree_flatten

INF, NAN = float("inf"), float("nan")


def rng_for(*key):
    """A generator seeded from the test's parameters (reproducible, distinct per case)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def traced(f, **kw):
    """``f`` through the tracer, run by the reference interpreter."""
    return ad.jit(f, backend="interpret", **kw)


def assert_close(got, want, tol=1e-8, atol=None):
    gl, _ = tree_flatten(got)
    wl, _ = tree_flatten(want)
    assert len(gl) == len(wl)
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol if atol is None else atol,
                                   equal_nan=True)


def both(f, *args):
    """``f(*args)`` eagerly and traced (which must agree): the eager value."""
    eager = f(*args)
    assert_close(traced(f)(*args), eager, 1e-12)
    return eager


# ---------------------------------------------------------------------------------------
# Activations at edge values
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [nn.softplus, nn.squareplus, nn.mish])
@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_smooth_activation_grads_order4(fn, mode):
    """testSoftplusGrad, testSquareplusGrad, testMishGrad: order-4 derivatives at 1e-8."""
    ad.check_grads(fn, (1e-8,), order=4, modes=[mode])


@pytest.mark.parametrize("fn", [nn.softplus, nn.squareplus, nn.mish, nn.sparse_plus])
@pytest.mark.parametrize("x", [0.0, -INF, NAN, -2.0])
def test_activation_grads_at_edges(fn, x):
    """testSoftplusGradZero/NegInf/Nan, testSquareplusGrad*, testMishGrad*,
    testSparseplusGradZero, testSparseplusGrad."""
    with np.errstate(all="ignore"):
        ad.check_grads(fn, (x,), order=1)


def test_softplus_grad_inf():
    """testSoftplusGradInf."""
    assert float(ad.grad(nn.softplus)(INF)) == 1.0
    assert float(traced(ad.grad(nn.softplus))(INF)) == 1.0


@pytest.mark.parametrize("dtype", [int, float, np.float32, np.float64, np.int32, np.int64])
def test_softplus_zero(dtype):
    """testSoftplusZero: softplus(0) == log 2 in the input's float type."""
    got = nn.softplus(dtype(0))
    assert float(got) == float(np.log(dtype(2)))


def test_sparse_plus_grad_is_sparse_sigmoid():
    """testSparseplusAndSparseSigmoid."""
    for x in (0.0, 2.0, -2.0):
        assert_close(ad.grad(nn.sparse_plus)(x), nn.sparse_sigmoid(x))
        assert_close(traced(ad.grad(nn.sparse_plus))(x), nn.sparse_sigmoid(x))


@pytest.mark.parametrize("dtype", [float, np.float32, np.float64])
def test_squareplus_and_mish_zero(dtype):
    """testSquareplusZero, testMishZero."""
    assert nn.squareplus(dtype(0), dtype(4)) == dtype(1)
    assert nn.mish(dtype(0)) == dtype(0)


def test_relu_grads():
    """testReluGrad, testReluGradAtZero, testRelu6Grad."""
    for fn in (nn.relu, nn.relu6):
        ad.check_grads(fn, (1.0,), order=3)
        ad.check_grads(fn, (-1.0,), order=3)
    assert float(ad.grad(nn.relu)(0.0)) == 0.0
    assert float(traced(ad.grad(nn.relu))(0.0)) == 0.0
    assert float(ad.grad(nn.relu6)(0.0)) == 0.0
    assert float(ad.grad(nn.relu6)(6.0)) == 0.0


def test_large_values():
    """testSoftplusValue, testSparseplusValue, testSparsesigmoidValue, testSquareplusValue,
    testMishValue, testEluValue."""
    assert_close(both(nn.softplus, 89.0), 89.0)
    assert_close(both(nn.sparse_plus, 89.0), 89.0)
    assert_close([both(nn.sparse_sigmoid, v) for v in (-2.0, 2.0, 0.0)], [0.0, 1.0, 0.5])
    assert_close(both(nn.squareplus, 1e3), 1e3, atol=1e-3)
    assert_close(both(nn.mish, 1e3), 1e3, atol=1e-3)
    assert_close(both(nn.elu, 1e4), 1e4)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_elu_grad(mode):
    """testEluGrad."""
    ad.check_grads(nn.elu, (1e4,), order=4, eps=1.0, modes=[mode])


def test_glu_value():
    """testGluValue."""
    assert_close(both(lambda x: nn.glu(x, axis=0), np.array([1.0, 0.0])), np.array([0.5]))


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_int_type(approximate):
    """testGeluIntType."""
    f = partial(nn.gelu, approximate=approximate)
    assert_close(both(f, np.array(-1)), both(f, np.array(-1.0)))


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu(approximate):
    """testGelu: x·Φ(x) from scipy (the tanh approximation within 1e-3)."""
    x = np.linspace(-12, 5, 1000)
    want = x * scipy.stats.norm.cdf(x)
    f = partial(nn.gelu, approximate=approximate)
    assert_close(both(f, x), want, tol=2e-5 if approximate else 1e-12,
                 atol=1e-3 if approximate else 0)


@pytest.mark.parametrize("fn", [partial(nn.gelu, approximate=False),
                                partial(nn.gelu, approximate=True), nn.relu, nn.identity,
                                nn.softplus, nn.sparse_plus, nn.sigmoid, nn.squareplus,
                                nn.mish, nn.silu, nn.celu, nn.elu, nn.selu, nn.log_sigmoid])
def test_dtype_matches_input(fn):
    """testDtypeMatchesInput (float32; bfloat16/float16 are not ported)."""
    x = np.zeros((), np.float32)
    assert np.asarray(fn(x)).dtype == np.float32
    assert np.asarray(traced(fn)(x)).dtype == np.float32


_ACTS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "silu": (nn.silu, lambda x: x / (1 + np.exp(-x))),
    "celu": (partial(nn.celu, alpha=0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x / 0.5))),
    "elu": (partial(nn.elu, alpha=2.0), lambda x: np.where(x > 0, x, 2.0 * np.expm1(x))),
    "selu": (nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -np.logaddexp(0, -x)),
    "softplus": (nn.softplus, lambda x: np.logaddexp(0, x)),
    "sparse_plus": (nn.sparse_plus, lambda x: np.where(
        x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "soft_sign": (nn.soft_sign, lambda x: x / (1 + np.abs(x))),
}


@pytest.mark.parametrize("name", sorted(_ACTS))
def test_activation_values_and_grads(name):
    """The activation formulas (jax.nn docstrings) on a grid avoiding the kinks, with
    derivatives (relu/silu/celu/elu/selu/glu/log_sigmoid of the brief)."""
    fn, ref = _ACTS[name]
    x = np.array([-30.0, -3.0, -1.5, -0.5, -0.1, 0.2, 0.7, 1.5, 4.0, 40.0])
    assert_close(both(fn, x), ref(x), 1e-12)
    ad.check_grads(fn, (x[1:-1],), order=2, modes=["fwd", "rev"])


def test_log_sigmoid_extremes():
    """log_sigmoid keeps its digits far out: log σ(-800) = -800, log σ(40) ≈ -e⁻⁴⁰."""
    x = np.array([-800.0, -40.0, 40.0, 800.0])
    assert_close(both(nn.log_sigmoid, x), -np.logaddexp(0, -x), 1e-14)
    assert_close(ad.vmap(ad.grad(nn.log_sigmoid))(x), 1 / (1 + np.exp(x)), 1e-14)


def test_glu_grad():
    """glu = a·σ(b) of the halves along axis; derivative by finite differences."""
    x = rng_for("glu").standard_normal((3, 4))
    a, b = x[:, :2], x[:, 2:]
    assert_close(both(nn.glu, x), a / (1 + np.exp(-b)))
    ad.check_grads(partial(nn.glu, axis=0), (x[:2],), order=2)


# ---------------------------------------------------------------------------------------
# softmax / log_softmax / logsumexp
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax])
def test_softmax_empty_array(fn):
    """testSoftmaxEmptyArray (and an empty axis of a 2-d array, and its gradient)."""
    x = np.array([], dtype=float)
    assert_close(both(fn, x), x)
    y = np.zeros((3, 0))
    assert_close(both(fn, y), y)
    assert_close(both(lambda v: fn(v, axis=0), y), y)
    assert_close(ad.grad(lambda v: anp.sum(fn(v)))(x), x)


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax])
def test_softmax_empty_mask(fn):
    """testSoftmaxEmptyMask: nothing kept -> 0 (softmax) / -inf (log_softmax)."""
    x = np.array([5.5, 1.3, -4.2, 0.9])
    m = np.zeros_like(x, dtype=bool)
    want = np.full_like(x, 0.0 if fn is nn.softmax else -np.inf)
    np.testing.assert_array_equal(both(lambda x: fn(x, where=m), x), want)


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax])
def test_softmax_where_mask(fn):
    """testSoftmaxWhereMask (with check_grads of the kept entries, log_softmax too)."""
    x = np.array([5.5, 1.3, -4.2, 0.9])
    m = np.array([True, False, True, True])
    out = both(lambda x: fn(x, where=m), x)
    assert_close(out[m], fn(x[m]))
    probs = out if fn is nn.softmax else np.exp(out)
    assert_close(probs.sum(), 1.0)
    g = lambda x: anp.take(fn(x, where=m), np.array([0, 2, 3]))   # noqa: E731
    ad.check_grads(g, (x,), order=2)


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax])
def test_softmax_where_grad(fn):
    """testSoftmaxWhereGrad (jax#19490): a masked-out huge entry gives no nan."""
    x = np.array([36.0, 10000.0])
    f = lambda x, mask: fn(x, where=mask)[0]   # noqa: E731
    assert_close(ad.grad(f)(x, x < 1000), np.zeros_like(x))
    assert_close(traced(ad.grad(f))(x, x < 1000), np.zeros_like(x))


def test_softmax_grad():
    """testSoftmaxGrad."""
    ad.check_grads(nn.softmax, (np.array([5.5, 1.3, -4.2, 0.9]),), order=2)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
def test_softmax_log_softmax_logsumexp_values(axis):
    """softmax/log_softmax/logsumexp over axes against scipy, with derivatives."""
    import scipy.special as ss
    x = rng_for("sm", axis).standard_normal((2, 3, 4)) * 3
    assert_close(both(partial(nn.softmax, axis=axis), x), ss.softmax(x, axis=axis))
    assert_close(both(partial(nn.log_softmax, axis=axis), x), ss.log_softmax(x, axis=axis))
    assert_close(both(partial(nn.logsumexp, axis=axis), x), ss.logsumexp(x, axis=axis))
    ad.check_grads(partial(nn.log_softmax, axis=axis), (x,), order=2, modes=["rev"])


def test_softmax_jit():
    """softmax and log_softmax under the Numba jit equal the eager values."""
    x = rng_for("smjit").standard_normal((3, 5))
    m = x > -0.5
    f = lambda x: (nn.softmax(x, where=m), nn.log_softmax(x))   # noqa: E731
    assert_close(ad.jit(f)(x), f(x), 1e-12)


# ---------------------------------------------------------------------------------------
# standardize, one_hot, logmeanexp, log1mexp, identity
# ---------------------------------------------------------------------------------------

def test_standardize_where_mask():
    """testStandardizeWhereMask."""
    x = np.array([5.5, 1.3, -4.2, 0.9])
    m = np.array([True, False, True, True])
    got = both(lambda x: nn.standardize(x, where=m), x)[[0, 2, 3]]
    assert_close(got, nn.standardize(x[[0, 2, 3]]))


def test_standardize_negative_variance():
    """testStandardizeNegativeVariance (jax#30426): the fast variance is clipped at 0."""
    x = np.array([-11.0, -11.0, -11.0]) + 3e-6
    for alg in ("fast", "stable"):
        assert not np.any(np.isnan(both(partial(nn.standardize, algorithm=alg), x)))


def test_standardize_stable_algorithm():
    """testStandardizeStableAlgorithm (jax#37281), plus the values: [-1, 0, 1]·√(3/2),
    to the last digits with "stable", to ~1e-4 with "fast" (mean(x²) - mean² cancels 12
    digits here); a bad name is a ValueError."""
    x = np.array([1e6, 1e6 + 1, 1e6 + 2])
    want = np.array([-1.0, 0.0, 1.0]) * np.sqrt(1.5)
    for alg, tol in (("stable", 1e-12), ("fast", 1e-3)):
        f = partial(nn.standardize, algorithm=alg, epsilon=0.0)
        assert_close(both(f, x), want, tol)
    x32 = x.astype(np.float32)
    f = partial(nn.standardize, algorithm="stable")
    assert_close(ad.jit(f)(x32), f(x32), 1e-5)
    assert not np.any(np.isnan(nn.standardize(x32, algorithm="fast")))
    # the default is the accurate one (JAX's is "fast"; a deliberate difference)
    assert_close(nn.standardize(x, epsilon=0.0), want, 1e-12)
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(x, algorithm="welford")


def test_standardize_grad():
    """standardize's derivative (both algorithms) by finite differences."""
    x = rng_for("std").standard_normal((2, 5))
    for alg in ("fast", "stable"):
        ad.check_grads(partial(nn.standardize, algorithm=alg), (x,), order=2)


def test_one_hot():
    """testOneHot, testOneHotOutOfBound, testOneHotNonArrayInput, testOneHotCustomDtype,
    testOneHotAxis."""
    eye = np.eye(3)
    assert_close(both(lambda l: nn.one_hot(l, 3), np.array([0, 1, 2])), eye)
    perm = eye[[1, 2, 0]]
    assert_close(both(lambda l: nn.one_hot(l, 3), np.array([1, 2, 0])), perm)
    assert_close(both(lambda l: nn.one_hot(l, 3), np.array([-1, 3])), np.zeros((2, 3)))
    assert_close(nn.one_hot([0, 1, 2], 3), eye)
    b = nn.one_hot(np.array([0, 1, 2]), 3, dtype=np.bool_)
    assert b.dtype == np.bool_
    np.testing.assert_array_equal(b, eye.astype(bool))
    for axis in (0, -2):
        assert_close(both(lambda l: nn.one_hot(l, 3, axis=axis), np.array([1, 2, 0])), perm.T)


def test_one_hot_concretization_error():
    """testOneHotConcretizationError (jax#3654): a traced num_classes is a typed error
    naming the argument."""
    with pytest.raises(ConcretizationError, match="one_hot argument `num_classes`"):
        traced(nn.one_hot)(3, 5)


def test_one_hot_non_integer():
    """testOneHotNonInteger: float labels warn (DeprecationWarning, as JAX)."""
    with pytest.warns(DeprecationWarning, match="one_hot input should be integer-typed"):
        nn.one_hot(np.array([1.0]), 3)


@pytest.mark.parametrize("shape", [(5,), (3, 5), (2, 3, 5)])
@pytest.mark.parametrize("use_where", [True, False])
@pytest.mark.parametrize("keepdims", [True, False])
def test_logmeanexp(shape, use_where, keepdims):
    """testLogMeanExp."""
    rng = rng_for("lme", shape, use_where, keepdims)
    x = rng.random(shape) * 2 - 1
    axis = int(rng.integers(0, x.ndim))
    where = rng.integers(0, 2, size=shape).astype(bool) if use_where else None
    if where is not None:
        first = [slice(None)] * x.ndim
        first[axis] = 0
        where[tuple(first)] = True            # every slice keeps an element
    f = lambda x: nn.logmeanexp(x, axis=axis, where=where, keepdims=keepdims)   # noqa: E731
    with np.errstate(all="ignore"):
        want = np.log(np.mean(np.exp(x), axis=axis, keepdims=keepdims,
                              where=True if where is None else where))
    assert_close(both(f, x), want, 1e-12)


def test_log1mexp():
    """testLog1mExp."""
    x, want = np.array([
        [0.1, np.log(1 - np.exp(-0.1))], [1.1, np.log(1 - np.exp(-1.1))], [0, -np.inf],
        [1, -0.45867515], [1e2, 0.0], [1e-5, np.log(1e-5)], [-1, np.nan], [-1e-2, np.nan],
        [-1e2, np.nan], [np.inf, 0.0]]).T
    with np.errstate(all="ignore"):
        assert_close(both(nn.log1mexp, x), want, 1e-3, 1e-3)


def test_log1mexp_grad():
    """testLog1mExpGrad."""
    ad.check_grads(nn.log1mexp, (np.array([1e-2, 1e-1, 1e0, 1e1, 1e2]),), order=1,
                   rtol=1e-3, atol=1e-3)


def test_identity():
    """testIdentity, testTanhExists."""
    x = np.array([1.0, 2.0, 3.0])
    assert_close(both(nn.identity, x), x)
    assert float(ad.grad(nn.identity)(6.0)) == 1.0
    assert_close(nn.tanh(x), np.tanh(x))


def test_sigmoid_in_scan_under_jit():
    """testCustomJVPLeak/testCustomJVPLeak2 (jax#8171), as values: sigmoid in a scan
    body under jit, and its derivative."""
    def fwd(a):
        def f(hx, _):
            return nn.sigmoid(hx + a), None
        return ad.lax.scan(f, anp.zeros(()), None, length=2)[0]
    sig = lambda v: 1 / (1 + np.exp(-v))   # noqa: E731
    assert_close(ad.jit(fwd)(1.0), sig(sig(1.0) + 1.0))
    ad.check_grads(fwd, (1.0,), order=1)


# ---------------------------------------------------------------------------------------
# dot_product_attention (the "xla" implementation)
# ---------------------------------------------------------------------------------------

def attention_ref(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False,
                  q_len=None, kv_len=None, window=None):
    """numpy's attention per head: softmax of the scaled, biased, masked logits times v;
    masked logits -0.7·f32max; query rows past q_len zero. Returns (out, lse)."""
    squeeze = q.ndim == 3
    if squeeze:
        q, k, v = q[None], k[None], v[None]
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    G = N // K
    kk, vv = np.repeat(k, G, axis=2), np.repeat(v, G, axis=2)
    scale = 1 / np.sqrt(H) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, kk) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= np.broadcast_to(mask, logits.shape)
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep &= s <= t
    if window is not None:
        keep &= (s >= t - window[0]) & (s <= t + window[1])
    if kv_len is not None:
        keep &= s[None, None] < np.asarray(kv_len)[:, None, None, None]
    if q_len is not None:
        keep &= t[None, None] < np.asarray(q_len)[:, None, None, None]
    logits = np.where(keep, logits, -0.7 * float(np.finfo(np.float32).max))
    mx = logits.max(-1, keepdims=True)
    e = np.exp(logits - mx)
    p = e / e.sum(-1, keepdims=True)
    lse = (mx + np.log(e.sum(-1, keepdims=True)))[..., 0].transpose(0, 2, 1)
    out = np.einsum("bnts,bsnh->btnh", p, vv)
    if q_len is not None:
        out = out * (np.arange(T)[None, :] < np.asarray(q_len)[:, None])[:, :, None, None]
    if squeeze:
        return out[0], lse[0]
    return out, lse


def _qkv(key, B, T, S, N, K, H):
    rng = rng_for(*key)
    return (rng.standard_normal((B, T, N, H)), rng.standard_normal((B, S, K, H)),
            rng.standard_normal((B, S, K, H)))


@pytest.mark.parametrize("group_num", [1, 2, 4])
@pytest.mark.parametrize("use_vmap", [False, True])
def test_dot_product_attention(group_num, use_vmap):
    """testDotProductAttention (xla; grouped heads): values, residual and vjp against the
    reference with repeated key/value heads (dK, dV summed over each group)."""
    B, S, T, N, H, G = 2, 5, 4, 4, 3, group_num
    Q, K, V = _qkv(("dpa", G, use_vmap), B, T, S, N, N // G, H)
    out_ref, lse_ref = attention_ref(Q, K, V)
    for impl in (None, "xla"):
        sdpa = partial(nn.dot_product_attention, implementation=impl)
        if use_vmap:
            sdpa = ad.vmap(sdpa, in_axes=(0, 0, 0))
        assert_close(sdpa(Q, K, V), out_ref, 1e-10)
        o, lse = partial(nn.dot_product_attention, return_residual=True,
                         implementation=impl)(Q, K, V)
        assert_close((o, lse), (out_ref, lse_ref), 1e-10)
    # derivatives: the grouped version's dK is the repeated version's summed over groups
    g = rng_for("ct", G).standard_normal((B, T, N, H))
    _, pull = ad.vjp(nn.dot_product_attention, Q, K, V)
    _, pull_ref = ad.vjp(nn.dot_product_attention, Q, np.repeat(K, G, 2), np.repeat(V, G, 2))
    dq, dk, dv = pull(g)
    dq_r, dk_r, dv_r = pull_ref(g)
    assert_close(dq, dq_r, 1e-10)
    assert_close(dk, dk_r.reshape(B, S, N // G, G, H).sum(3), 1e-10)
    assert_close(dv, dv_r.reshape(B, S, N // G, G, H).sum(3), 1e-10)
    ad.check_grads(nn.dot_product_attention, (Q[:1], K[:1], V[:1]), order=1, modes=["rev"])


def test_dot_product_attention_residual_vjp_and_broadcasting():
    """testDotProductAttention's ``return_residual`` vjp: the logsumexp residual carries no
    gradient (its cotangent is ignored); a 2-d (T, S) bias and mask broadcast over batch
    and heads; vmap with ``in_axes=(0, 0, 0, None, None)``; a traced ``scale``."""
    B, S, T, N, H = 2, 4, 3, 2, 2
    Q, K, V = _qkv(("res",), B, T, S, N, N, H)
    rng = rng_for("res2")
    bias, mask = rng.standard_normal((T, S)), rng.random((T, S)) < 0.7
    mask[:, 0] = True
    g, g_lse = rng.standard_normal((B, T, N, H)), rng.standard_normal((B, T, N))
    f = partial(nn.dot_product_attention, return_residual=True)
    (o, lse), pull = ad.vjp(f, Q, K, V, bias, mask)
    _, pull_plain = ad.vjp(nn.dot_product_attention, Q, K, V, bias, mask)
    want_o, want_lse = attention_ref(Q, K, V, bias, mask)
    assert_close((o, lse), (want_o, want_lse), 1e-10)
    for a, b in zip(pull((g, g_lse))[:4], pull_plain(g)[:4]):
        assert_close(a, b, 1e-12)
    vm = ad.vmap(nn.dot_product_attention, in_axes=(0, 0, 0, None, None))
    assert_close(vm(Q, K, V, bias, mask), want_o, 1e-10)
    sc = lambda s: nn.dot_product_attention(Q, K, V, scale=s)   # noqa: E731
    assert_close(traced(sc)(0.3), attention_ref(Q, K, V, scale=0.3)[0], 1e-10)
    ad.check_grads(lambda s: anp.sum(sc(s) ** 2), (0.3,), order=2)


_MASK_MODES = ["bias", "causal", "padding", "custom", ("causal", "padding"),
               ("custom", "padding"), ("bias", "causal"), ("causal", "sliding_window"),
               "sliding_window"]


@pytest.mark.parametrize("mask_mode", _MASK_MODES, ids=str)
def test_dot_product_attention_mask(mask_mode):
    """testDotProductAttentionMask: values against the reference (eager and traced) and
    derivatives (q, k, v, bias) by finite differences."""
    mask_mode = (mask_mode,) if isinstance(mask_mode, str) else mask_mode
    B, S, T, N, H = 2, 6, 5, 2, 3
    rng = rng_for("mask", mask_mode)
    Q, K, V = _qkv(("mask", mask_mode), B, T, S, N, N, H)
    bias = mask = q_len = kv_len = window = None
    is_causal = "causal" in mask_mode
    if "padding" in mask_mode:
        q_len, kv_len = np.array([T // 2, T - 1], np.int32), np.array([S // 2, S - 1], np.int32)
    if "custom" in mask_mode:
        mask = np.tril(np.ones((T, S), bool))[None, None]
    if "bias" in mask_mode:
        bias = rng.standard_normal((1, N, T, S))
    if "sliding_window" in mask_mode:
        window = (2, 1) if not is_causal else (2, 0)
    want, _ = attention_ref(Q, K, V, bias, mask, q_len=q_len, kv_len=kv_len,
                            is_causal=is_causal, window=window)

    def f(q, k, v, b):
        return nn.dot_product_attention(q, k, v, b, mask, query_seq_lengths=q_len,
                                        key_value_seq_lengths=kv_len, is_causal=is_causal,
                                        local_window_size=window)
    assert_close(f(Q, K, V, bias), want, 1e-10)
    assert_close(traced(f)(Q, K, V, bias), want, 1e-10)
    if bias is None:
        ad.check_grads(lambda q, k, v: f(q, k, v, None), (Q, K, V), order=1, modes=["rev"])
    else:
        ad.check_grads(f, (Q, K, V, bias), order=1, modes=["rev"])


def test_dot_product_attention_jit():
    """dot_product_attention under the Numba jit (causal + padding + bias + window) equals
    the eager value, and so does its gradient."""
    B, S, T, N, H = 2, 5, 4, 2, 3
    Q, K, V = _qkv(("jit",), B, T, S, N, 1, H)
    bias = rng_for("jitb").standard_normal((B, N, T, S))
    q_len = np.array([3, 4], np.int32)

    def f(q, k, v, b):
        return nn.dot_product_attention(q, k, v, b, is_causal=True, query_seq_lengths=q_len,
                                        local_window_size=2, scale=0.7)
    want = attention_ref(Q, K, V, bias, scale=0.7, is_causal=True, q_len=q_len,
                         window=(2, 2))[0]
    assert_close(ad.jit(f)(Q, K, V, bias), want, 1e-10)
    loss = lambda *a: anp.sum(anp.sin(f(*a)))   # noqa: E731
    assert_close(ad.jit(ad.grad(loss, argnums=(0, 3)))(Q, K, V, bias),
                 ad.grad(loss, argnums=(0, 3))(Q, K, V, bias), 1e-10)


def test_dot_product_attention_float64_mask_no_infs():
    """testDotProductAttentionFloat64MaskDebugInfs (jax#37422): a float64 masked attention
    on 3-d inputs raises no floating-point warning (JAX: debug_infs) and its output is
    finite; the 1-d mask broadcasts over the leading axes."""
    T, S, K, N, H = 5, 7, 3, 6, 11
    mask = np.arange(S) <= S // 2
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise",
                                                          divide="raise"):
        warnings.simplefilter("error")
        out = nn.dot_product_attention(np.zeros((T, N, H)), np.zeros((S, K, H)),
                                       np.zeros((S, K, H)), mask=mask)
    assert out.shape == (T, N, H)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("batch_size", [1, 3])
@pytest.mark.parametrize("use_vmap", [False, True])
def test_dot_product_attention_bias_gradient(batch_size, use_vmap):
    """testDotProductAttentionBiasGradient: self-attention with a (B, N, S, S) bias and a
    (1, 1, S) mask; the bias cotangent is compared with the reference's by finite
    differences (and with/without vmap)."""
    B, S, N, H = batch_size, 4, 2, 3
    rng = rng_for("bias", B, use_vmap)
    x = rng.standard_normal((B, S, N, H))
    bias = rng.standard_normal((B, N, S, S))
    mask = np.ones((1, 1, S), bool)

    def attention(x, bias, mask):
        return nn.dot_product_attention(x, x, x, bias, mask, is_causal=False)
    f = ad.vmap(attention, in_axes=(0, 0, None)) if use_vmap else attention
    y = f(x, bias, mask)
    want = attention_ref(x, x, x, bias, mask)[0]
    assert_close(y, want, 1e-10)
    _, pull = ad.vjp(lambda b: f(x, b, mask), bias)
    (dbias,) = pull(x)
    eps = 1e-6
    e = np.zeros_like(bias)
    e.flat[5] = eps
    fd = (np.sum(attention_ref(x, x, x, bias + e, mask)[0] * x)
          - np.sum(attention_ref(x, x, x, bias - e, mask)[0] * x)) / (2 * eps)
    assert_close(dbias.flat[5], fd, 1e-6)


def test_dot_product_attention_local_window_without_mask():
    """testDotProductAttention_localWindowSizeWithoutMask."""
    B, S, T, N, H = 1, 8, 8, 2, 3
    Q, K, V = _qkv(("lw",), B, T, S, N, N, H)
    big = nn.dot_product_attention(Q, K, V, mask=None, local_window_size=(32, 32))
    small = nn.dot_product_attention(Q, K, V, mask=None, local_window_size=(1, 1))
    assert not np.allclose(big, small)
    assert_close(big, attention_ref(Q, K, V)[0], 1e-10)
    assert_close(small, attention_ref(Q, K, V, window=(1, 1))[0], 1e-10)


def test_dot_product_attention_errors():
    """The argument checks of jax.nn.dot_product_attention: typed errors."""
    Q, K, V = _qkv(("err",), 1, 2, 3, 4, 2, 2)
    with pytest.raises(UnsupportedError, match="cudnn"):
        nn.dot_product_attention(Q, K, V, implementation="cudnn")
    with pytest.raises(ValueError, match="Unsupported implementation"):
        nn.dot_product_attention(Q, K, V, implementation="flash")
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(np.ones((1, 2, 3, 2)), K, V)
    with pytest.raises(ValueError, match="value"):
        nn.dot_product_attention(Q, K, V[:, :2])
    with pytest.raises(TypeError, match="mask must be boolean"):
        nn.dot_product_attention(Q, K, V, mask=np.ones((1, 1, 2, 3)))


def test_scaled_matmul():
    """testScaledMatmul without float8 quantization: block-scaled operands (scales of
    blocks of 4 along K) against the dequantized matmul, and the derivative in all four
    arguments."""
    rng = rng_for("scaled_matmul")
    B, M, N, K = 2, 3, 4, 8
    a, b = rng.standard_normal((B, M, K)), rng.standard_normal((B, N, K))
    sa, sb = rng.random((B, M, K // 4)) + 0.5, rng.random((B, N, K // 4)) + 0.5
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, -1), b * np.repeat(sb, 4, -1))
    assert_close(both(nn.scaled_matmul, a, b, sa, sb), want, 1e-12)
    assert_close(nn.scaled_matmul(a, b, np.ones((B, M, 1)), np.ones((B, N, 1))),
                 a @ np.swapaxes(b, 1, 2), 1e-12)
    ad.check_grads(nn.scaled_matmul, (a, b, sa, sb), order=1, modes=["rev"])


# ---------------------------------------------------------------------------------------
# Initializers
# ---------------------------------------------------------------------------------------

I = nn.initializers
FLOATING = [np.float32, np.float64]
INEXACT = FLOATING + [np.complex64, np.complex128]
ALL_SHAPES = [(), (2,), (2, 2), (2, 3), (3, 2), (2, 3, 4), (4, 3, 2), (2, 3, 4, 5)]


def _rec(name, init, dtypes, min_dims=2, max_dims=4):
    return (name, init, [s for s in ALL_SHAPES if min_dims <= len(s) <= max_dims], dtypes)


INITIALIZER_RECS = [
    _rec("uniform", I.uniform, FLOATING, 1),
    _rec("normal", I.normal, INEXACT, 1),
    _rec("he_normal", I.he_normal, INEXACT),
    _rec("he_uniform", I.he_uniform, INEXACT),
    _rec("glorot_normal", I.glorot_normal, INEXACT),
    _rec("glorot_uniform", I.glorot_uniform, INEXACT),
    _rec("lecun_normal", I.lecun_normal, INEXACT),
    _rec("lecun_uniform", I.lecun_uniform, INEXACT),
    _rec("orthogonal", I.orthogonal, FLOATING, 2, 2),
    _rec("truncated_normal", I.truncated_normal, FLOATING, 1),
    _rec("delta_orthogonal", I.delta_orthogonal, FLOATING, 4, 4),
    _rec("variance_scaling_fan_geo_avg",
         partial(I.variance_scaling, 1, "fan_geo_avg", "normal"), FLOATING),
    _rec("variance_scaling_fan_in_in", partial(I.variance_scaling, 1, "fan_in", "normal",
                                               in_axis=[0], out_axis=[]), FLOATING, 1),
    _rec("variance_scaling_fan_in_out", partial(I.variance_scaling, 1, "fan_in", "normal",
                                                in_axis=[], out_axis=[0]), FLOATING, 1),
    _rec("variance_scaling_fan_in_none", partial(I.variance_scaling, 1, "fan_in", "normal",
                                                 in_axis=[], out_axis=[]), FLOATING, 0),
]
# a rotation through the shapes and dtypes of each record, not their full product
_INIT_CASES = [(name, init, shapes[i % len(shapes)], dtypes[i % len(dtypes)])
               for name, init, shapes, dtypes in INITIALIZER_RECS
               for i in range(max(len(shapes), len(dtypes)))]


@pytest.mark.parametrize("name,init,shape,dtype", _INIT_CASES,
                         ids=[f"{c[0]}-{c[2]}-{np.dtype(c[3])}" for c in _INIT_CASES])
def test_initializer(name, init, shape, dtype):
    """testInitializer, testInitializerProvider: shape and dtype (given at the call or to
    the builder)."""
    key = ad.random.PRNGKey(0)
    val = init()(key, shape, dtype)
    assert np.shape(val) == shape and np.asarray(val).dtype == dtype
    val = init(dtype=dtype)(key, shape)
    assert np.shape(val) == shape and np.asarray(val).dtype == dtype
    assert np.all(np.isfinite(val))


def test_variance_scaling_statistics():
    """The variance of each mode/distribution is scale/fan (large draws), complex included:
    fan_in = 40·3, fan_out = 30·3 (receptive field 3)."""
    key = ad.random.PRNGKey(1)
    shape = (3, 40, 300)
    fan_in, fan_out = 40 * 3, 300 * 3
    for mode, n in (("fan_in", fan_in), ("fan_out", fan_out),
                    ("fan_avg", (fan_in + fan_out) / 2),
                    ("fan_geo_avg", np.sqrt(fan_in * fan_out))):
        for dist in ("truncated_normal", "normal", "uniform"):
            for dt in (np.float64, np.complex128):
                w = np.asarray(I.variance_scaling(2.0, mode, dist, dtype=dt)(key, shape))
                assert w.dtype == dt
                np.testing.assert_allclose(np.mean(np.abs(w) ** 2), 2.0 / n, rtol=0.05)


@pytest.mark.parametrize("rows", range(4))
@pytest.mark.parametrize("cols", range(4))
def test_initializer_orthogonal_zero_size(rows, cols):
    """testInitializerOrthogonalZeroSize."""
    val = I.orthogonal()(ad.random.PRNGKey(0), (rows, cols), np.float32)
    assert val.shape == (rows, cols) and val.dtype == np.float32
    if rows <= cols:
        assert_close(val @ val.T, np.eye(rows), 1e-5)
    if cols <= rows:
        assert_close(val.T @ val, np.eye(cols), 1e-5)


def test_variance_scaling_multi_axis_and_batch_axis():
    """testVarianceScalingMultiAxis, testVarianceScalingBatchAxis."""
    key = ad.random.PRNGKey(0)
    shape = (2, 3, 4, 5)
    a = I.variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=(0, 1),
                           out_axis=(-2, -1))(key, shape)
    b = I.variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis=0, out_axis=(2, 3),
                           batch_axis=1)(key, shape)
    assert np.shape(a) == shape and np.shape(b) == shape


def test_variance_scaling_error():
    """testVarianceScalingError."""
    init = I.variance_scaling(1.0, "fan_avg", "truncated_normal")
    with pytest.raises(ValueError, match="Can't compute input and output sizes of a "
                       "1-dimensional weights tensor with default in_axis"):
        init(ad.random.PRNGKey(0), (5,))


@pytest.mark.parametrize("shape", [(2, 3, 3), (4, 3, 2, 3), (2, 2, 3, 2, 2)])
def test_delta_orthogonal_centre(shape):
    """delta_orthogonal (a record of testInitializer, plus its values): the orthogonal
    block sits at index (k - 1) // 2 of each spatial axis, zeros elsewhere; fan_in >
    fan_out and a 2-d shape are ValueErrors."""
    w = np.asarray(I.delta_orthogonal()(ad.random.PRNGKey(3), shape))
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    block = w[centre]
    assert_close(block @ block.T, np.eye(shape[-2]), 1e-12)
    rest = w.copy()
    rest[centre] = 0
    assert not rest.any()
    with pytest.raises(ValueError):
        I.delta_orthogonal()(ad.random.PRNGKey(0), (3, 3, 2))
    with pytest.raises(ValueError):
        I.delta_orthogonal()(ad.random.PRNGKey(0), (3, 3))


def test_accidental_upcasting():
    """testAccidentalUpcasting (float32 instead of bfloat16): a float32 scalar parameter
    keeps the requested dtype."""
    key = ad.random.PRNGKey(0)
    p = np.array(1.0, dtype=np.float32)
    for init in (I.uniform(p, np.float32), I.normal(p, np.float32),
                 I.truncated_normal(p, np.float32)):
        key, sub = ad.random.split(key)
        assert np.asarray(init(sub, (4, 4))).dtype == np.float32
