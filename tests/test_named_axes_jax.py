"""JAX's own tests of named axes and collectives, ported.

From ``tests/batching_test.py`` (collectives under ``vmap(..., axis_name=...)``),
``tests/pmap_test.py`` (the collective tests that make sense on one device: our ``pmap`` is a
jitted named ``vmap`` and takes any axis size, so ``jax.device_count()`` becomes ``ND``),
``tests/api_test.py`` and ``tests/lax_control_flow_test.py`` (the tests that use
``axis_name``). Each test names the JAX test it ports; the expected values are JAX's own
reference computations (numpy over the whole batch). Translation: ``jnp`` -> ``anp``,
``jax.vmap`` -> ``ad.vmap``, ``jax.pmap`` -> ``ad.pmap``, ``jax.lax`` -> ``ad.lax``,
``jtu.check_grads`` -> ``ad.check_grads``.

Not ported (see the report in the change that added this file):
- ``testArgAllReduce`` (batching and pmap): ``parallel.pargmax``/``pargmin`` are private JAX
  functions (``jax._src.lax.parallel``) that autodiff does not provide.
- every test with ``axis_index_groups`` (``testPsum*ReplicaGroups``, ``testGatherReplicaGroups*``,
  ``testReduceScatterReplicaGroupsTiled``, ``testAllToAllReplicaGroups``,
  ``testGradOfAllToAllReplicaGroups``, ``testGradOf*IndexGroups``): refused under vmap in
  JAX too (we check the refusal once).
- ``test_make_jaxpr_axis_env``: ``make_jaxpr(axis_env=...)`` is not supported.
- tests of devices, shardings, lowering, HLO text, compilation counts, ``device_put_*``,
  PRNG key arrays sharded over devices, ``test_axis_env_length`` (JAX internals).
- errors about too few devices (``testDeviceCountError``, ``testBadAxisSize*``,
  ``test_while_loop_of_pmap_error_message``): our pmap takes any axis size.
- ``checkify_test`` (``test_pmap_collectives``, ``test_psum_nan_check``): no ``checkify``.
- ``custom_api_test.test_axis_index_in_rule_only_error``: a JAX-internal error message.

"""
import functools
import itertools as it
import math

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax
from autodiff.errors import UnsupportedError

ND = 4        # jax.device_count() in the pmap tests: our pmap takes any axis size
partial = functools.partial


def _rng(seed=0):
    return np.random.RandomState(seed)


def _close(a, b, **kw):
    kw.setdefault("rtol", 1e-6)
    kw.setdefault("atol", 1e-6)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), **kw)


def _tree_close(a, b, **kw):
    la, ta = ad.tree_util.tree_flatten(a)
    lb, tb = ad.tree_util.tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        _close(x, y, **kw)


# ============================================================================
# tests/batching_test.py
# ============================================================================

_COMM_CASES = [
    (name, vmap_names, collective_names)
    for name in ("psum", "pmax", "pmin")
    for vmap_names in [("i",), ("i", "j"), ("i", "j", "k")]
    for subset_size in range(1, len(vmap_names) + 1)
    for collective_subset in it.combinations(vmap_names, subset_size)
    for collective_names in it.permutations(collective_subset)]


@pytest.mark.parametrize("name,vmap_names,collective_names", _COMM_CASES)
def test_comm_assoc_collective(name, vmap_names, collective_names):
    """batching_test.testCommAssocCollective."""
    collective = getattr(lax, name)
    bulk_op = {"psum": np.sum, "pmax": np.max, "pmin": np.min}[name]
    shape = (2, 2, 2)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)

    f = lambda x: x - collective(x, collective_names)
    for i, axis_name in enumerate(vmap_names):
        f = ad.vmap(f, axis_name=axis_name, in_axes=i, out_axes=i)
    pos_axis = tuple(i for i, n in enumerate(vmap_names) if n in collective_names)
    _close(f(x), x - bulk_op(x, axis=pos_axis, keepdims=True))
    if name == "psum":
        ad.check_grads(f, (x,), 2, eps=1)


def test_ppermute_random_permutations():
    """batching_test.testPPermute."""
    nelem = 10
    x = np.arange(nelem)
    rng = _rng()
    for _ in range(10):
        perm = np.arange(nelem)
        rng.shuffle(perm)
        perm_pairs = np.stack([np.arange(nelem), perm], axis=-1)
        rng.shuffle(perm_pairs)
        _close(ad.vmap(lambda x: x - lax.ppermute(x, "i", list(perm_pairs)), axis_name="i")(x),
               x - x[np.argsort(perm)])


@pytest.mark.parametrize("split_axis,concat_axis,vmap_axis",
                         list(it.product(range(3), range(3), range(4))))
def test_all_to_all(vmap_axis, split_axis, concat_axis):
    """batching_test.testAllToAll."""
    shape = (4, 4, 4, 4)
    x = np.arange(np.prod(shape)).reshape(shape)
    f = ad.vmap(lambda x: lax.all_to_all(x, "i", split_axis, concat_axis),
                in_axes=vmap_axis, axis_name="i")
    y = f(x)
    ref = np.moveaxis(x, (vmap_axis, split_axis + (vmap_axis <= split_axis)),
                      (concat_axis + 1, 0))
    _close(y, ref)


@pytest.mark.parametrize("split_axis,concat_axis,vmap_axis",
                         list(it.product(range(2), range(2), range(3))))
def test_all_to_all_split_axis(vmap_axis, split_axis, concat_axis):
    """batching_test.testAllToAllSplitAxis: all_to_all over a tuple of names."""
    shape = (4, 4, 4)
    x = np.arange(np.prod(shape)).reshape(shape)

    @partial(ad.vmap, in_axes=vmap_axis, axis_name="i")
    @partial(ad.vmap, in_axes=vmap_axis, axis_name="j")
    def f(x):
        return lax.all_to_all(x, ("i", "j"), split_axis, concat_axis)

    unroll_shape = list(shape)
    unroll_shape[vmap_axis:vmap_axis + 1] = (2, 2)
    x_unroll = x.reshape(unroll_shape)
    y_unrolled = f(x_unroll)
    y = np.asarray(y_unrolled).reshape(shape)

    if vmap_axis <= split_axis:
        split_axis += 1
    ref = np.moveaxis(x, (vmap_axis, split_axis), (concat_axis + 1, 0))
    _close(y, ref)


def test_axis_index():
    """batching_test.testAxisIndex."""
    x = np.arange(10, dtype="int32")
    _close(ad.vmap(lambda x: x - lax.axis_index("i"), axis_name="i")(x),
           x - np.arange(x.shape[0], dtype="int32"))


def test_grad_of_psum():
    """batching_test.testGradOfPsum: the unmapped result equals its jaxpr evaluated."""
    a = np.ones(5)
    f = ad.vmap(ad.grad(lambda x: -lax.psum(x, "i")), out_axes=None, axis_name="i")
    closed = ad.make_jaxpr(f)(a)
    from autodiff import core
    via_jaxpr = core.eval_jaxpr(closed.jaxpr, closed.consts, a)[0]
    _close(f(a), via_jaxpr)
    _close(f(a), -5.0)       # psum transposes to psum: every element's cotangent summed


def test_all_gather_to_unmapped():
    """batching_test.testAllGatherToUnmapped."""
    x = np.arange(15).reshape((3, 5))
    f = lambda x: lax.all_gather(x, axis_name="i")
    _close(ad.vmap(f, axis_name="i", in_axes=1, out_axes=None)(x), x.T)


def test_batched_all_gather():
    """batching_test.testBatchedAllGather."""
    f = lambda x: lax.all_gather(x, axis_name="i")
    x = np.arange(15).reshape((3, 5))
    res = ad.vmap(ad.vmap(f, axis_name="i", out_axes=None), axis_name="j")(x)
    _close(res, x)
    res = ad.vmap(ad.vmap(f, axis_name="j"), axis_name="i", out_axes=None)(x)
    _close(res, x.T)


def test_all_gather_tiled():
    """batching_test.testAllGatherTiled."""
    f = lambda x: lax.all_gather(x, axis_name="i", tiled=True)
    x = np.arange(60).reshape((4, 3, 5))
    res = ad.vmap(f, axis_name="i", in_axes=(1,), out_axes=None)(x)
    _close(res, x.transpose((1, 0, 2)).reshape(-1, 5))


def test_batched_all_gather_tiled():
    """batching_test.testBatchedAllGatherTiled."""
    f = lambda x: lax.all_gather(x, axis_name="i", tiled=True)
    x = np.arange(60).reshape((4, 3, 5))
    res = ad.vmap(ad.vmap(f, in_axes=1, out_axes=1), axis_name="i", in_axes=1,
                  out_axes=None)(x)
    _close(res, x.transpose((1, 0, 2)).reshape(-1, 5))


def test_all_gather_vjp():
    """batching_test.testAllGatherVjp."""
    f = lambda x: lax.all_gather(x, axis_name="i")
    rng = _rng()
    x = rng.randn(3, 4)
    y_bar = rng.randn(3, 3, 4)
    x_bar, = ad.vmap(lambda x, y_bar: ad.vjp(f, x)[1](y_bar), axis_name="i")(x, y_bar)
    _close(x_bar, np.sum(y_bar, axis=0))


def test_all_gather_of_const():
    """batching_test.testAllGatherOfConst."""
    def f(x):
        a = lax.all_gather(anp.ones_like(x), axis_name="i")
        b = lax.all_gather(1, axis_name="i")
        return a, b
    x = np.arange(15).reshape((3, 5))
    a, b = ad.vmap(f, axis_name="i", in_axes=1, out_axes=None)(x)
    _close(a, np.ones(shape=(5, 3), dtype=x.dtype))
    assert a.dtype == x.dtype
    _close(b, np.ones(shape=(5,)))


def test_reduce_scatter_autodiff():
    """batching_test.testReduceScatterAutodiff."""
    f = ad.vmap(partial(lax.psum_scatter, axis_name="i"), axis_name="i")
    x = _rng().randn(3, 3, 4)
    ad.check_grads(f, (x,), 2, ["fwd", "rev"], eps=1.0, atol=1e-2, rtol=1e-2)
    _close(f(x), x.sum(0))


def test_ppermute_batcher_trivial():
    """batching_test.testPpermuteBatcherTrivial (JAX issue 8688)."""
    def ppermute(input):
        return lax.ppermute(input, axis_name="i", perm=[[0, 1], [1, 0]])
    grad_fn = ad.grad(ppermute)
    vmapped_gradients_fn = ad.vmap(grad_fn, axis_name="i")
    vector = anp.array([1., 2.])
    ans = vmapped_gradients_fn(vector)
    _close(ans, np.ones(2))


def test_axis_index_groups_refused_under_vmap():
    """The *ReplicaGroups / IndexGroups tests of pmap_test: JAX refuses axis_index_groups
    under vmap; so do we, with an error."""
    for op in (lax.psum, lax.pmean, lax.pmax, lax.pmin, lax.all_gather, lax.psum_scatter):
        with pytest.raises(UnsupportedError, match="axis_index_groups"):
            ad.vmap(lambda x: op(x, "i", axis_index_groups=[[0, 1], [2, 3]]),
                    axis_name="i")(np.ones((4, 4)))
    with pytest.raises(UnsupportedError, match="axis_index_groups"):
        ad.vmap(lambda x: lax.all_to_all(x, "i", 0, 0, axis_index_groups=[[0, 1], [2, 3]]),
                axis_name="i")(np.ones((4, 2)))


# ============================================================================
# tests/api_test.py and tests/lax_control_flow_test.py
# ============================================================================

def test_caches_depend_on_axis_env_jit():
    """api_test.test_caches_depend_on_axis_env (JAX issue 9187)."""
    f = lambda: lax.axis_size("i")
    g = ad.jit(f)
    expected = ad.vmap(f, axis_name="i", axis_size=2, out_axes=None)()
    ans = ad.vmap(g, axis_name="i", axis_size=2, out_axes=None)()
    assert ans == expected == 2
    expected = ad.vmap(f, axis_name="i", axis_size=3, out_axes=None)()
    ans = ad.vmap(g, axis_name="i", axis_size=3, out_axes=None)()
    assert ans == expected == 3


def test_jit_of_concrete_operands_under_named_vmap():
    """api_test.test_caches_depend_on_axis_env, its other face: a jitted collective of a
    concrete operand (the same for every element) inside a named vmap."""
    h = ad.jit(lambda c: lax.psum(c, "i"))
    c = np.ones(2)
    for n in (2, 3):
        _close(ad.vmap(lambda v: h(c) + 0 * v, axis_name="i")(np.zeros(n)), np.full((n, 2), n))


def test_caches_depend_on_axis_env_scan():
    """lax_control_flow_test.test_caches_depend_on_axis_env."""
    scanned_f = lambda _, __: (lax.axis_size("i"), None)
    f = lambda: lax.scan(scanned_f, 0, None, length=1)[0]
    ans = ad.vmap(f, axis_name="i", axis_size=2, out_axes=None)()
    assert ans == 2
    ans = ad.vmap(f, axis_name="i", axis_size=3, out_axes=None)()
    assert ans == 3


def test_vmap_mapped_output_with_out_axes_none_errors():
    """api_test.test_vmap_out_axes_errors (the axis_name case): a mapped output with
    out_axes=None is an error."""
    with pytest.raises(ValueError, match="out_axes=None"):
        ad.vmap(lambda x: x, out_axes=None, axis_name="foo")(anp.array([1., 2.]))


def test_while_loop_axis_index_batched():
    """lax_control_flow_test.testWhileLoopAxisIndexBatched."""
    def fun(x):
        return lax.while_loop(lambda x: x < lax.axis_index("i"), lambda x: x + 2, x)
    expected = np.array([0, 2, 2, 4])
    _close(ad.vmap(fun, axis_name="i")(np.array([0, 0, 0, 0], dtype="int32")), expected)
    fun = ad.jit(fun)
    _close(ad.vmap(fun, axis_name="i")(np.array([0, 0, 0, 0], dtype="int32")), expected)
    ans = ad.vmap(lambda _, x: fun(x), axis_name="i", in_axes=(0, None))(
        np.array([0, 0, 0, 0]), 0)
    _close(ans, expected)


def test_issue804_scan_psum_under_pmap():
    """lax_control_flow_test.testIssue804."""
    f = partial(lax.scan, lambda c, x: (c + lax.psum(x, "i"), c), 0.)
    carry, ys = ad.pmap(f, axis_name="i")(anp.ones((ND, 4)))
    _close(carry, np.full(ND, 4.0 * ND))
    _close(ys, np.broadcast_to(np.arange(4) * ND, (ND, 4)))


def test_while_loop_of_pmap():
    """lax_control_flow_test.test_while_loop_of_pmap."""
    count = ND

    def body(i, x):
        result = ad.pmap(lambda z: lax.psum(anp.sin(z), "i"), axis_name="i")(x)
        return result + x
    ans = lax.fori_loop(0, 3, body, anp.ones(count))

    def body2(i, x):
        return anp.broadcast_to(anp.sin(x).sum(), x.shape) + x
    expected = lax.fori_loop(0, 3, body2, anp.ones(count))
    _close(ans, expected)


def test_scan_vmap_collectives():
    """lax_control_flow_test.test_scan_vmap_collectives."""
    def scan_f(state, x):
        s = lax.psum(state, "i") * x
        return state, s

    def scan(state, xs):
        return lax.scan(scan_f, state, xs)
    scan_v = ad.vmap(scan, in_axes=0, out_axes=0, axis_name="i")
    carry, ys = scan_v(anp.ones([1]), anp.arange(5.).reshape((1, 5)))
    _close(carry, [1.])
    _close(ys, [[0., 1., 2., 3., 4.]])


# ============================================================================
# tests/pmap_test.py (PythonPmapTest, VmapOfPmapTest, VmapPmapCollectivesTest,
# PmapWithDevicesTest): pmap over an axis of size ND
# ============================================================================

def _arange(shape, dtype=np.float32):
    return np.arange(math.prod(shape), dtype=dtype).reshape(shape)


def test_pmap_mean():
    """pmap_test.testMean."""
    f = ad.pmap(lambda x: x - lax.pmean(x, "i"), axis_name="i")
    x = _arange((ND, 4))
    _close(f(x), x - np.broadcast_to(np.mean(x, 0), x.shape))


def test_pmap_gather():
    """pmap_test.testGather and testGatherBool."""
    f = ad.pmap(lambda x: lax.all_gather(x, "i"), axis_name="i")
    x = _arange((ND, 4))
    _close(f(x), np.array([x] * ND))
    xb = (x % 2).astype(np.bool_)
    ans = f(xb)
    assert np.asarray(ans).dtype == np.bool_
    np.testing.assert_array_equal(ans, np.array([xb] * ND))


def test_pmap_gather_negative_axis():
    """pmap_test.testGatherNegativeAxis."""
    f = ad.pmap(lambda x: lax.all_gather(x, "i", axis=-1), axis_name="i")
    x = _arange((ND, 4))
    _close(f(x), np.array([x.T] * ND))


def test_pmap_gather_tiled():
    """pmap_test.testGatherTiled and testGatherTiledNegativeAxis."""
    f = ad.pmap(lambda x: lax.all_gather(x, "i", tiled=True), axis_name="i")
    x = _arange((ND, 4))
    _close(f(x), np.array([x] * ND).reshape(ND, -1))
    f = ad.pmap(lambda x: lax.all_gather(x, "i", tiled=True, axis=-1), axis_name="i")
    x = _arange((ND, 4, 3))
    _close(f(x), np.array([x.transpose(1, 0, 2).reshape(4, -1)] * ND))


@pytest.mark.parametrize("prim", ["all_gather", "psum_scatter"])
def test_pmap_vmap_of(prim):
    """pmap_test.testVmapOf."""
    f = ad.pmap(partial(getattr(lax, prim), axis_name="i"), axis_name="i")
    x = _arange((4, ND, ND))
    _close(ad.vmap(f)(x), np.stack([f(xs) for xs in x], axis=0))
    want = (np.stack([np.stack([xs] * ND) for xs in x]) if prim == "all_gather"
            else x.sum(1))
    _close(ad.vmap(f)(x), want)


def test_pmap_reduce_scatter():
    """pmap_test.testReduceScatter, testReduceScatterTiled and
    testReduceScatterNegativeScatterDimension."""
    f = ad.pmap(lambda x: lax.psum_scatter(x, "i"), axis_name="i")
    x = _arange((ND, ND))
    expected = np.sum(x, axis=0)
    for i, actual in enumerate(f(x)):
        _close(actual, expected[i])

    f = ad.pmap(lambda x: lax.psum_scatter(x, "i", tiled=True), axis_name="i")
    x = _arange((ND, 4 * ND))
    expected = np.sum(x, axis=0)
    scatter_len = len(expected) // ND
    for i, actual in enumerate(f(x)):
        _close(actual, expected[i * scatter_len:(i + 1) * scatter_len])

    x = _arange((ND, ND, 4 * ND))
    pos = ad.pmap(lambda x: lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
                  axis_name="i")(x)
    neg = ad.pmap(lambda x: lax.psum_scatter(x, "i", scatter_dimension=-1, tiled=True),
                  axis_name="i")(x)
    _close(neg, pos)
    # element b keeps columns [4b, 4b + 4) of the sum (ND, 4 * ND)
    _close(pos, x.sum(0).reshape(ND, ND, 4).transpose(1, 0, 2))


def test_pmap_trees():
    """pmap_test.testTrees."""
    ptranspose = lambda x, axis_name: lax.all_to_all(x, axis_name, 0, 0)

    def protate(x, axis_name):
        n = lax.axis_size(axis_name)
        return lax.ppermute(x, axis_name, [(i, (i + 1) % n) for i in range(n)])

    tree_f = lambda f: partial(ad.tree_util.tree_map, f)
    jax_f = lambda p: ad.pmap(lambda x: p(x, "i"), "i")
    np_f = lambda p: tree_f(lambda x: np.broadcast_to(p(x, 0), x.shape))
    np_transpose = tree_f(np.transpose)
    np_rotate = tree_f(lambda x: np.concatenate([x[-1:], x[:-1]]))
    n = ND
    x = {"a": np.arange(1 * n * n, 2 * n * n).reshape([n, n]),
         "b": np.arange(2 * n * n, 3 * n * n).reshape([n, n]),
         "c": np.arange(4 * n * n, 5 * n * n).reshape([n, n])}
    _tree_close(jax_f(lax.pmax)(x), np_f(np.max)(x))
    _tree_close(jax_f(lax.pmin)(x), np_f(np.min)(x))
    _tree_close(jax_f(lax.psum)(x), np_f(np.sum)(x))
    _tree_close(jax_f(lax.pmean)(x), np_f(np.mean)(x))
    _tree_close(jax_f(ptranspose)(x), np_transpose(x))
    _tree_close(jax_f(protate)(x), np_rotate(x))


def test_pmap_collectives_with_trees_of_different_dtypes():
    """pmap_test.testCollectivesWithTreesOfDifferentDtypes."""
    n = ND
    x = {"a": np.arange(1 * n * n, 2 * n * n, dtype=np.float32).reshape([n, n]),
         "b": np.arange(2 * n * n, 3 * n * n, dtype=np.int32).reshape([n, n]),
         "c": np.arange(4 * n * n, 5 * n * n, dtype=np.float32).reshape([n, n]),
         "d": np.arange(6 * n * n, 7 * n * n, dtype=np.int32).reshape([n, n])}
    tree_f = lambda f: partial(ad.tree_util.tree_map, f)
    jax_f = lambda p: ad.pmap(lambda x: p(x, "i"), "i")
    np_f = lambda p: tree_f(lambda x: np.broadcast_to(p(x, 0), x.shape))
    _tree_close(jax_f(lax.pmax)(x), np_f(np.max)(x))
    _tree_close(jax_f(lax.pmin)(x), np_f(np.min)(x))
    _tree_close(jax_f(lax.psum)(x), np_f(np.sum)(x))
    _tree_close(jax_f(lax.pmean)(x), np_f(np.mean)(x))
    out = jax_f(lax.psum)(x)
    assert np.asarray(out["b"]).dtype == np.int32 and np.asarray(out["a"]).dtype == np.float32


def test_pmap_complex_psum():
    """pmap_test.testComplexPsum."""
    f = ad.pmap(lambda x: x - lax.psum(x, "i"), axis_name="i")
    x = _arange((ND, 4 * 2)).view(np.complex64)
    _close(f(x), x - np.sum(x, 0))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64])
@pytest.mark.parametrize("split_axis,concat_axis", list(it.product(range(2), range(2))))
def test_pmap_all_to_all(split_axis, concat_axis, dtype):
    """pmap_test.testAllToAll (a sample of lax_test_util.all_dtypes)."""
    pmap_in_axis = 0
    shape = (ND,) * 3
    x = (_rng().randn(*shape) * 3).astype(dtype)

    @partial(ad.pmap, axis_name="i")
    def f(x):
        return lax.all_to_all(x, "i", split_axis, concat_axis)
    y = f(x)
    if pmap_in_axis <= split_axis:
        split_axis += 1
    ref = np.moveaxis(x, (pmap_in_axis, split_axis), (concat_axis + 1, 0))
    np.testing.assert_array_equal(y, ref)
    assert np.asarray(y).dtype == dtype


def test_pmap_all_to_all_negative_axes():
    """pmap_test.testAllToAllNegativeAxes."""
    x = _rng().randn(ND, ND, ND).astype(np.float32)
    pos = ad.pmap(lambda x: lax.all_to_all(x, "i", 0, 1), axis_name="i")(x)
    neg = ad.pmap(lambda x: lax.all_to_all(x, "i", -2, -1), axis_name="i")(x)
    _close(neg, pos)
    _close(pos, np.moveaxis(x, (0, 1), (2, 0)))


def test_pmap_partially_mapped():
    """pmap_test.testPartiallyMapped."""
    f = ad.pmap(lambda x, y: x, in_axes=(None, 0))
    g = ad.pmap(lambda x, y: x - lax.psum(y, "i"), axis_name="i", in_axes=(None, 0))
    mesh_shape = (ND,)
    shape = mesh_shape + (4,)
    x = np.array(3., dtype=np.float32)
    y = _arange(shape)
    _close(f(x, y), np.broadcast_to(x, mesh_shape))
    _close(g(x, y), np.broadcast_to(x - np.sum(y, 0, keepdims=True), shape))


def test_pmap_jvp_and_partial_eval():
    """pmap_test.testJvpAndPartialEval."""
    f = ad.pmap(anp.sin, axis_name="i")

    def splitjvp(x):
        _, jvp = ad.linearize(f, x)
        return jvp(anp.ones_like(x))
    x = _arange((ND, 4))
    _close(splitjvp(x), np.cos(x), rtol=1e-5)
    ad.make_jaxpr(splitjvp)(x)


def test_pmap_grad_basic():
    """pmap_test.testGradBasic (and PmapWithDevicesTest.testGradBasic)."""
    f = ad.pmap(anp.sin, axis_name="i")
    x = _arange((ND, 4))
    ans = ad.grad(lambda x: anp.sum(anp.sin(x)))(x)
    expected = ad.grad(lambda x: anp.sum(f(x)))(x)
    _close(ans, expected)
    _close(ans, np.cos(x), rtol=1e-5)


def test_pmap_grad_of_psum():
    """pmap_test.testGradOfPsum."""
    f = ad.pmap(lambda x: lax.psum(x, axis_name="i"), axis_name="i")
    x = _arange((ND, 4))
    ad.check_grads(f, (x,), 2, ["fwd", "rev"], atol=1e-2, rtol=1e-2, eps=1.)
    _close(f(x), np.broadcast_to(x.sum(0), x.shape))


def test_pmap_grad_of_jvp():
    """pmap_test.testGradOfJvp."""
    f = ad.pmap(anp.sin, axis_name="i")

    def splitjvp(x):
        _, jvp = ad.linearize(f, x)
        return jvp(anp.ones_like(x))
    fun = lambda x: anp.sum(ad.jvp(anp.sin, (x,), (anp.ones_like(x),))[1])
    x = _arange((ND, 4))
    ans = ad.grad(lambda x: anp.sum(splitjvp(x)))(x)
    _close(ans, ad.grad(fun)(x))
    _close(ans, -np.sin(x), rtol=1e-5, atol=1e-6)


def test_pmap_two_args_grad():
    """pmap_test.testTwoArgsGrad (JAX compares g with itself; we compare the pmapped f)."""
    def f(x, y):
        return lax.psum(5. * anp.cos(x) * anp.sin(y), "i")
    f = ad.pmap(f, "i")

    def g(x, y):
        tot = anp.sum(5. * anp.cos(x) * anp.sin(y), axis=0)
        return tot * anp.ones_like(x)
    x = _arange((ND, 4))
    y = 4 + x
    ans = ad.grad(lambda x, y: anp.sum(f(x, y)), argnums=(0, 1))(x, y)
    expected = ad.grad(lambda x, y: anp.sum(g(x, y)), argnums=(0, 1))(x, y)
    _tree_close(ans, expected, rtol=1e-5, atol=1e-4)
    _close(ans[0], -5 * ND * np.sin(x) * np.sin(y), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("prim", ["all_gather", "psum_scatter"])
@pytest.mark.parametrize("tiled", [False, True])
def test_pmap_grad_of(prim, tiled):
    """pmap_test.testGradOf (Gather, GatherTiled, ReduceScatter, ReduceScatterTiled; the
    IndexGroups cases use axis_index_groups)."""
    f = ad.pmap(lambda x: getattr(lax, prim)(x, axis_name="i", tiled=tiled), axis_name="i")
    x = _arange((ND, ND))
    ad.check_grads(f, (x,), 2, ["fwd", "rev"], atol=1e-2, rtol=1e-2, eps=1.)
    if prim == "all_gather":
        want = np.stack([x.reshape(-1) if tiled else x] * ND)
    else:
        want = x.sum(0).reshape(ND, 1) if tiled else x.sum(0)
    _close(f(x), want)


def test_pmap_collective_broadcast():
    """pmap_test.testCollectiveBroadcast (GPU-only in JAX)."""
    f = ad.pmap(lambda x: lax.pbroadcast(x, source=0, axis_name="i"), "i")
    x = np.arange(4 * ND).reshape((ND, 4))
    _close(f(x), np.take(x, [0] * ND, axis=0))


def test_pmap_collective_broadcast_vmap():
    """pmap_test.testCollectiveBroadcastVmap."""
    f = lambda x: lax.pbroadcast(x, source=0, axis_name="i")
    x = np.arange(ND * 16, dtype=np.float32).reshape((ND, 4, 4))
    ans = ad.pmap(ad.vmap(f), "i")(x)
    _close(ans, np.broadcast_to(x[0:1], x.shape))


def test_pmap_collective_broadcast_grad():
    """pmap_test.testCollectiveBroadcastGrad."""
    f = lambda x: lax.pbroadcast(x, source=0, axis_name="i")
    x = np.arange(ND, dtype=np.float32)
    ans = ad.pmap(ad.grad(f), "i")(x)
    expected = np.zeros_like(x)
    expected[0] = ND
    _close(ans, expected)


def test_pmap_collective_permute():
    """pmap_test.testCollectivePermute."""
    rotation = [(i, (i + 1) % ND) for i in range(ND)]
    f = ad.pmap(lambda x: lax.ppermute(x, perm=rotation, axis_name="i"), "i")
    x = np.arange(4 * ND).reshape((ND, 4))
    _close(f(x), np.roll(x, shift=1, axis=0))


def test_pmap_collective_permute_grad():
    """pmap_test.testCollectivePermuteGrad (skipped on CPU in JAX for an XLA reason)."""
    shift_right = [(i, (i + 1)) for i in range(ND - 1)]
    f = lambda x: lax.ppermute(x, perm=shift_right, axis_name="i")
    y = np.pi + np.arange(ND, dtype=np.float32)
    g = lambda x: anp.sum(y * ad.pmap(f, "i")(x))
    x = np.arange(ND, dtype=np.float32)
    _close(ad.grad(g)(x), np.concatenate([np.pi + np.arange(1, ND), [0]]))


def test_pmap_collective_permute_cyclic_grad():
    """pmap_test.testCollectivePermuteCyclicGrad."""
    shift_right = [(i, (i + 1) % ND) for i in range(ND)]
    f = lambda x: lax.ppermute(x, perm=shift_right, axis_name="i")
    y = np.pi + np.arange(ND, dtype=np.float32)
    g = lambda x: anp.sum(y * ad.pmap(f, "i")(x))
    x = np.arange(ND, dtype=np.float32)
    _close(ad.grad(g)(x), np.roll(np.pi + np.arange(ND), -1))
    ad.check_grads(g, (x,), 2, ["fwd", "rev"], atol=1e-2, rtol=1e-2)


def test_pmap_collective_permute_cyclic_with_pshuffle():
    """pmap_test.testCollectivePermuteCyclicWithPShuffle."""
    values = np.arange(ND)
    shift_right = [(i - 1) % ND for i in range(ND)]
    f = lambda x: lax.pshuffle(x, perm=shift_right, axis_name="i")
    _close(np.asarray(ad.pmap(f, "i")(values)), np.roll(values, 1))


def test_pmap_pshuffle_with_bad_perm():
    """pmap_test.testPShuffleWithBadPerm."""
    bad_perm = list(range(ND))
    bad_perm[0] = 1
    f = lambda x: lax.pshuffle(x, perm=bad_perm, axis_name="i")
    with pytest.raises(ValueError, match=r"not a permutation"):
        ad.pmap(f, "i")(np.arange(ND))


def test_pmap_ppermute_with_zip_object():
    """pmap_test.testPpermuteWithZipObject (JAX issue 1703)."""
    perm = [ND - 1] + list(range(ND - 1))
    f = ad.pmap(lambda x: lax.ppermute(x, "i", zip(perm, range(ND))), "i")
    result = f(anp.arange(ND, dtype=anp.float32))
    _close(result, np.asarray(perm, dtype=np.float32))


@pytest.mark.parametrize("device_count", [4, 8])
def test_pmap_rule30(device_count):
    """pmap_test.testRule30: a halo exchange with ppermute."""
    def send_right(x, axis_name):
        left_perm = [(i, (i + 1) % device_count) for i in range(device_count)]
        return lax.ppermute(x, perm=left_perm, axis_name=axis_name)

    def send_left(x, axis_name):
        left_perm = [((i + 1) % device_count, i) for i in range(device_count)]
        return lax.ppermute(x, perm=left_perm, axis_name=axis_name)

    def update_board(board):
        left = board[:-2]
        right = board[2:]
        center = board[1:-1]
        return lax.bitwise_xor(left, lax.bitwise_or(center, right))

    @partial(ad.pmap, axis_name="i")
    def step(board_slice):
        left, right = board_slice[:1], board_slice[-1:]
        right, left = send_left(left, "i"), send_right(right, "i")
        enlarged_board_slice = anp.concatenate([left, board_slice, right])
        return update_board(enlarged_board_slice)

    board = np.zeros(40, dtype=bool)
    board[board.shape[0] // 2] = True
    reshaped_board = board.reshape((device_count, -1))
    boards = []

    def print_board(board):
        boards.append("".join("*" if x else " " for x in np.asarray(board).ravel()))
    print_board(reshaped_board)
    for _ in range(9):
        reshaped_board = step(reshaped_board)
        print_board(reshaped_board)
    expected = "\n".join((
        "                    *                   ",
        "                   ***                  ",
        "                  **  *                 ",
        "                 ** ****                ",
        "                **  *   *               ",
        "               ** **** ***              ",
        "              **  *    *  *             ",
        "             ** ****  ******            ",
        "            **  *   ***     *           ",
        "           ** **** **  *   ***          ",
    ))
    assert "\n".join(boards) == expected


def test_pmap_reduce_max_min():
    """pmap_test.testReduceMax and testReduceMin."""
    x = _arange((ND, 4))
    _close(ad.pmap(lambda x: x - lax.pmax(x, "i"), axis_name="i")(x), x - np.max(x, 0))
    _close(ad.pmap(lambda x: x - lax.pmin(x, "i"), axis_name="i")(x), x - np.min(x, 0))


def test_pmap_collective_constant():
    """pmap_test.testCollectiveConstant."""
    f = ad.pmap(lambda x: lax.axis_size("i"), "i")
    _close(f(np.arange(ND)), np.repeat(ND, ND))


def test_pmap_axis_index():
    """pmap_test.testAxisIndex and testAxisIndexInInitialStyle."""
    f = ad.pmap(lambda x: x + lax.axis_index("i"), "i")
    _close(f(np.ones(ND, dtype="int32")), 1 + np.arange(ND))

    @partial(ad.pmap, axis_name="i")
    def g(x):
        def body(carry, i):
            return carry + i + lax.axis_index("i"), None
        return lax.scan(body, 0, x)[0]
    _close(g(np.ones((ND, 10), dtype="int32")), (np.arange(ND, dtype="int32") + 1) * 10)


def test_vmap_of_pmap():
    """pmap_test.testVmapOfPmap, testVmapOfPmapNonLeadingAxis and testVmapOfPmapTuple."""
    f1 = ad.pmap(lambda x: x, axis_name="i")
    ax = _rng().randn(2, ND, 5, 6)
    _close(ad.vmap(f1)(ax), ax)
    ax = _rng(1).randn(ND, 2, 5, 6)
    _close(ad.vmap(f1, in_axes=2, out_axes=2)(ax), ax)

    f1 = ad.pmap(lambda *x: x, axis_name="i")
    rng = _rng(2)
    ax = rng.randn(ND, 2, 5, 6)
    ay = rng.randn(ND, 3, 2)
    az1 = rng.randn(ND, 2)
    az2 = rng.randn(2, ND, 2)
    bx, by, bz = ad.vmap(f1, in_axes=(1, 2, (None, 0)), out_axes=(1, 2, 0))(ax, ay, (az1, az2))
    _close(ax, bx)
    _close(ay, by)
    bz1, bz2 = bz
    _close(bz1, np.broadcast_to(az1, (2,) + az1.shape))
    _close(bz2, az2)


def test_vmap_of_pmap3():
    """pmap_test.testVmapOfPmap3 (JAX issue 3399)."""
    def func(q, pts):
        q_from_pmap = ad.pmap(lambda x, y: y, in_axes=(0, None))(pts, q)
        return q, q_from_pmap

    pts = anp.ones(ND)
    qs = anp.asarray(((0, 0), (3, 3), (2, 2)))
    _, expected = lax.map(lambda x: func(x, pts), qs)
    _, ans = ad.vmap(func, in_axes=(0, None))(qs, pts)
    _close(ans, expected)
    _close(ans, np.broadcast_to(np.asarray(qs)[:, None, :], (3, ND, 2)))


def test_pmap_pswapaxes():
    """pmap_test.testPswapaxes."""
    x = np.arange(ND * 3 * ND * 5).reshape((ND, 3, ND, 5))
    ans = ad.pmap(lambda x: lax.pswapaxes(x, "i", 1), axis_name="i")(x)
    _close(ans, np.swapaxes(x, 0, 2))


def test_pmap_grad_of_pswapaxes():
    """pmap_test.testGradOfPswapaxes."""
    shape = (ND, 1, ND)
    x = _arange(shape)
    w = np.arange(ND, dtype=np.float32)

    @partial(ad.pmap, axis_name="i")
    def f(x, w):
        g = lambda x: anp.sum(lax.pswapaxes(x, "i", 1) * w)
        return ad.grad(g)(x)
    _close(f(x, w), np.tile(w, reps=ND).reshape(shape))


def test_jit_pmap_composition():
    """pmap_test.testJitPmapComposition."""
    f = lambda x: x - lax.psum(x, "i")
    x = _arange((ND, 4))
    expected = x - np.sum(x, 0)
    _close(ad.jit(ad.pmap(f, "i"))(x), expected)
    _close(ad.pmap(ad.jit(f), "i")(x), expected)


def test_composition_with_jit_twice():
    """pmap_test.testCompositionWithJitTwice."""
    @ad.jit
    def f(x):
        y = anp.float32(2) * x

        @ad.jit
        def g(z):
            return ad.pmap(lambda x: x[anp.newaxis] * y)(z)
        return g(x)
    out = f(np.arange(1., dtype="float32").reshape((1, 1)))
    _close(out, np.zeros((1, 1, 1)))
    out = f(np.full((1, 1), 3.0, dtype="float32"))
    _close(out, np.full((1, 1, 1), 18.0))


def test_issue1065():
    """pmap_test.testIssue1065."""
    def multi_step_pmap(state, count):
        @partial(ad.pmap, axis_name="x")
        @ad.jit
        def exchange_and_multi_step(state):
            return state + lax.psum(state, "x")

        @ad.jit
        def time_evolution(state):
            return lax.fori_loop(0, count, lambda i, s: exchange_and_multi_step(s), state)
        return time_evolution(state)
    out = multi_step_pmap(anp.ones((ND,)), count=2)
    _close(out, np.full(ND, (1 + ND) ** 2))


def test_pmap_many_args():
    """pmap_test.testManyArgs (500 arguments)."""
    f = ad.pmap(lambda args_list: sum(args_list))
    vals = list(range(500))
    _close(f([np.array([i] * ND) for i in range(500)]), np.array([sum(vals)] * ND))


def test_axis_index_remat():
    """pmap_test.testAxisIndexRemat (JAX issue 2716)."""
    for remat in (ad.remat, ad.checkpoint):
        def f(key):
            key = ad.random.fold_in(key, lax.axis_index("i"))
            return ad.random.bernoulli(key, p=0.5)
        keys = ad.random.split(ad.random.PRNGKey(0), ND)
        out = ad.pmap(remat(f), axis_name="i")(keys)
        want = [ad.random.bernoulli(ad.random.fold_in(k, i), p=0.5) for i, k in enumerate(keys)]
        np.testing.assert_array_equal(out, np.asarray(want))


def test_pmap_map_vmap_combinations():
    """pmap_test.testPmapMapVmapCombinations (JAX issue 2822)."""
    def vv(x, y):
        return anp.dot(x, y)

    def matrix_vector(x, y, parallel=True):
        fv = lambda z: lax.map(lambda j: vv(j, y), z)
        if parallel:
            new_x = x.reshape((ND, -1, *x.shape[1:]))
            new_res = ad.pmap(fv)(new_x)
            res = new_res.reshape(x.shape[0], *new_res.shape[2:])
        else:
            res = fv(x)
        return res
    rng = _rng(1)
    x = anp.asarray(rng.randn(40, 5))
    y = anp.asarray(rng.randn(5, 5))
    result1 = ad.vmap(lambda b: matrix_vector(x, b, True))(y)
    result2 = lax.map(lambda b: matrix_vector(x, b, False), y)
    result3 = lax.map(lambda b: matrix_vector(x, b, True), y)
    result4 = anp.stack([matrix_vector(x, b, False) for b in y])
    expected = np.einsum("ij,nj->ni", np.asarray(x), np.asarray(y))
    for r in (result1, result2, result3, result4):
        _close(r, expected, atol=1e-10, rtol=1e-10)


def test_pmap_axis_name_error():
    """pmap_test.testPmapAxisNameError (JAX issue 3120)."""
    a = np.arange(4)[np.newaxis, :]

    def test(x):
        return lax.psum(x, axis_name="batch")
    with pytest.raises(NameError, match="unbound axis name 'batch'"):
        ad.pmap(test)(a)


@pytest.mark.parametrize("n", [1, 2])
def test_psum_on_boolean_dtype(n):
    """pmap_test.testPsumOnBooleanDtype (JAX issue 3123), one and two devices."""
    x = anp.array([True, False][:n])
    out = ad.pmap(lambda x: lax.psum(x, "i"), "i")(x)
    assert list(np.asarray(out)) == [1] * n
    out = ad.pmap(lambda x: lax.pmean(x, "i"), "i")(x)
    assert list(np.asarray(out)) == [1 / n] * n


def test_psum_zero_cotangents():
    """pmap_test.testPsumZeroCotangents (JAX issue 3651)."""
    def loss(params, meta_params):
        (net, mpo) = params
        return meta_params * mpo * net

    def inner(meta_params, params):
        grads = ad.grad(loss)(params, meta_params)
        grads = lax.psum(grads, axis_name="i")
        net_grads, mpo_grads = grads
        net = params[0] + net_grads
        mpo = params[1]
        return mpo * net

    def outer(params):
        meta_params = anp.array(4.0)
        return ad.grad(inner)(meta_params, params)

    params = (anp.array([2.0]), anp.array([3.0]))
    out = ad.pmap(outer, axis_name="i")(params)
    # inner = mpo * (net + psum(m * mpo)) over one element: d/dm = mpo * mpo
    _tree_close(out, np.array([9.0]))
    f = ad.pmap(outer, axis_name="i")
    ad.check_grads(f, (params,), 2, ["fwd", "rev"], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pmap_dtype(dtype):
    """pmap_test.testPmapDtype (JAX issue 6022)."""
    @partial(ad.pmap, axis_name="i")
    def func(_):
        return lax.psum(dtype(0), axis_name="i")
    out = func(anp.arange(ND))
    assert out.dtype == dtype
    _close(out, np.zeros(ND))


def test_static_argnum_on_method():
    """pmap_test.test_static_argnum_on_method."""
    class A:
        @partial(ad.pmap, static_broadcasted_argnums=(0,))
        def my_func_pmap(self, x):
            return x + 2
    _close(A().my_func_pmap(anp.asarray([3] * ND)), [5] * ND)


def test_pmap_error_on_non_hashable_static_argument():
    """pmap_test.test_pmap_error_on_non_hashable_static_argument."""
    pmapped_f = ad.pmap(lambda x, y: x + 3, static_broadcasted_argnums=(1,))
    inputs = np.asarray([1] * ND)
    with pytest.raises(ValueError, match="[Nn]on-hashable static argument"):
        pmapped_f(inputs, np.asarray(1))


def test_remat_of_pmap():
    """pmap_test.test_remat_of_pmap."""
    for remat in (ad.remat, ad.checkpoint):
        f = remat(ad.pmap(lambda x: anp.sin(anp.sin(x))))
        ad.check_grads(f, (anp.arange(1.),), order=2, modes=["rev"])
        x = anp.arange(1.)
        jaxpr = ad.make_jaxpr(ad.linearize(f, x)[1])(x)
        _close(ad.linearize(f, x)[1](anp.ones(1)), np.cos(np.sin(0.0)) * np.cos(0.0))
        del jaxpr


def test_axis_name_shadowing_with_vmap():
    """pmap_test.test_axis_name_shadowing_with_vmap."""
    for outer, inner in [(ad.vmap, ad.pmap), (ad.vmap, ad.vmap)]:
        for shape in [(2, 1), (1, 1)]:
            out = outer(inner(lambda x: 2 * x, axis_name="i"), axis_name="i")(anp.ones(shape))
            _close(out, 2 * np.ones(shape))
    # and the inner name shadows the outer one for collectives
    x = _arange((2, 3))
    out = ad.vmap(ad.vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")(x)
    _close(out, np.broadcast_to(x.sum(1, keepdims=True), x.shape))


def _add_bdim(bdim_size, bdim, shape):
    shape = list(shape)
    if bdim is not None:
        shape.insert(bdim, bdim_size)
    return tuple(shape)


def _slicer(x, bdim):
    if bdim is None:
        return lambda _: x
    return lambda i: np.take(x, i, axis=bdim)


@pytest.mark.parametrize("shapes,vmap_in_axes,pmap_in_axes,vmap_out_axes,pmap_out_axes", [
    ([(3,)], (0,), (0,), 0, 0),
    ([(3,)], (1,), (0,), 1, 0),
    ([(3, 4), (3, 1)], (0, None), (1, 0), 2, 1),
    ([(3, 4), (1, 4)], (2, 1), (None, 2), 0, 2),
    ([(2, 3, 4), (2, 1, 4)], (3, 0), (0, 3), 1, 3),
    ([(3, 4), (3, 1), (1, 4)], (1, 2, None), (0, None, 2), 2, 0),
])
def test_vmap_of_pmap_axes(shapes, vmap_in_axes, pmap_in_axes, vmap_out_axes, pmap_out_axes):
    """pmap_test.VmapOfPmapTest.testVmapOfPmap (a sample of its cases)."""
    vmapped_size, pmapped_size = 3, ND
    fun = lambda *args: sum(args)
    final_shapes = [_add_bdim(vmapped_size, v, _add_bdim(pmapped_size, p, s))
                    for v, p, s in zip(vmap_in_axes, pmap_in_axes, shapes)]
    rng = _rng()
    args = [rng.randn(*s).astype(np.float32) for s in final_shapes]

    def args_slice(vi, pi):
        outer = [_slicer(a, d)(vi) for a, d in zip(args, vmap_in_axes)]
        return [_slicer(a, d)(pi) for a, d in zip(outer, pmap_in_axes)]
    ans = ad.vmap(ad.pmap(fun, in_axes=pmap_in_axes, out_axes=pmap_out_axes),
                  in_axes=vmap_in_axes, out_axes=vmap_out_axes)(*args)
    expected = np.stack(
        [np.stack([fun(*args_slice(vi, pi)) for pi in range(pmapped_size)],
                  axis=pmap_out_axes) for vi in range(vmapped_size)], axis=vmap_out_axes)
    _close(ans, expected)


def _maps(name):
    return {"vmap": ad.vmap, "pmap": ad.pmap}[name]


@pytest.mark.parametrize("collective", ["psum", "pmean", "pmax", "pmin"])
@pytest.mark.parametrize("outer_size", [2, 4])
def test_collectives_with_vmap(collective, outer_size):
    """pmap_test.VmapPmapCollectivesTest.testCollectivesWithVmap (outer size 2, ones) and
    testCollectivesWithVmap2 (outer size 4, arange)."""
    op = getattr(lax, collective)

    def f(map1, map2):
        @partial(map1, axis_name="i")
        @partial(map2, axis_name="j")
        def f(x, y):
            return x + op(x.dot(y), ("i", "j"))
        return f
    shape = (outer_size, 2, 8, 8)
    x = (np.ones(shape) if outer_size == 2 else
         np.arange(math.prod(shape), dtype=float).reshape(shape) / 100)
    y = f(ad.vmap, ad.vmap)(x, x)
    prods = np.einsum("abij,abjk->abik", x, x)
    bulk = {"psum": np.sum, "pmean": np.mean, "pmax": np.max, "pmin": np.min}[collective]
    _close(y, x + bulk(prods, axis=(0, 1), keepdims=True), rtol=1e-10)
    _close(f(ad.pmap, ad.vmap)(x, x), y, rtol=1e-10)
    _close(f(ad.vmap, ad.pmap)(x, x), y, rtol=1e-10)


def test_ppermute_with_vmap():
    """pmap_test.VmapPmapCollectivesTest.testPPermuteWithVmap."""
    perm = [(0, 1), (1, 0)]

    def f(map1, map2):
        @partial(map1, axis_name="i")
        @partial(map2)
        def f(x, y):
            return x + lax.ppermute(x.dot(y), "i", perm)
        return f
    x = _rng().randn(2, 2, 8, 8)
    a = f(ad.vmap, ad.pmap)(x, x)
    _close(a, f(ad.pmap, ad.vmap)(x, x))
    prods = np.einsum("abij,abjk->abik", x, x)
    _close(a, x + prods[::-1], rtol=1e-10)


def test_ppermute_agrees_with_vmap():
    """pmap_test.VmapPmapCollectivesTest.testPPermuteAgreesWithVmap."""
    f = lambda x: lax.ppermute(x, "i", [[1, 0], [2, 1], [0, 2]])
    xs = anp.arange(3) * 10
    ys = ad.pmap(f, axis_name="i")(xs)
    zs = ad.vmap(f, axis_name="i")(xs)
    _close(ys, zs)
    assert ys.dtype == zs.dtype
    _close(ys, [10, 20, 0])


def _adj(axis, hidden_axes):
    for hax in sorted(hidden_axes):
        if hax <= axis:
            axis += 1
    return axis


def _all_to_all_in_vmap_reference(x, split_axis, concat_axis, vmap_axis):
    pmap_axis = 0
    vmap_axis = _adj(vmap_axis, [pmap_axis])
    ref = x
    split_axis = _adj(split_axis, [pmap_axis, vmap_axis])
    ref = np.moveaxis(ref, split_axis, pmap_axis + 1)
    vmap_axis = vmap_axis + (0 if split_axis < vmap_axis else 1)
    split_axis = pmap_axis + 1
    concat_axis = _adj(concat_axis, [pmap_axis, split_axis, vmap_axis]) - 1
    ref = np.moveaxis(ref, pmap_axis, concat_axis)
    pmap_axis = 0
    vmap_axis = vmap_axis - (1 if concat_axis >= vmap_axis else 0)
    return np.moveaxis(ref, vmap_axis, 1)


@pytest.mark.parametrize("split_axis,concat_axis,vmap_axis",
                         list(it.product(range(3), range(3), range(4))))
def test_all_to_all_in_vmap(split_axis, concat_axis, vmap_axis):
    """pmap_test.VmapPmapCollectivesTest.testAllToAllInVmap (with its verify_ref)."""
    def f(x):
        return lax.all_to_all(x, "i", split_axis=split_axis, concat_axis=concat_axis)

    start_shape = [2, 3, 4, 5, 6]
    instance_shape = start_shape.copy()
    pmap_dim_id = instance_shape.pop(0)
    vmap_dim_id = instance_shape.pop(vmap_axis)
    split_axis_id = instance_shape.pop(split_axis)
    instance_shape.insert(concat_axis, pmap_dim_id)
    expected_shape = (split_axis_id, vmap_dim_id, *instance_shape)
    assert _all_to_all_in_vmap_reference(np.ones(start_shape), split_axis, concat_axis,
                                         vmap_axis).shape == expected_shape

    shape = (3,) * 5
    x = np.arange(math.prod(shape)).reshape(shape)
    _close(ad.pmap(ad.vmap(f, in_axes=vmap_axis), axis_name="i")(x),
           _all_to_all_in_vmap_reference(x, split_axis, concat_axis, vmap_axis))


@pytest.mark.parametrize("split_axis,concat_axis", list(it.product(range(3), range(3))))
def test_all_to_all_vs_vmap(split_axis, concat_axis):
    """pmap_test.VmapPmapCollectivesTest.testAllToAllVsVmap."""
    def f(x):
        return lax.all_to_all(x, "i", split_axis=split_axis, concat_axis=concat_axis)
    shape = (ND,) * 4
    x = np.arange(math.prod(shape)).reshape(shape)
    a = ad.pmap(f, axis_name="i")(x)
    _close(a, ad.vmap(f, axis_name="i")(x))
    _close(a, np.moveaxis(x, (0, split_axis + 1), (concat_axis + 1, 0)))


@pytest.mark.parametrize("prim", ["all_gather", "psum_scatter"])
def test_with_vmap(prim):
    """pmap_test.VmapPmapCollectivesTest.testWithVmap."""
    def f(map1, map2):
        return map1(map2(partial(getattr(lax, prim), axis_name="i")), axis_name="i")
    x = _rng().randn(2, 2, 2, 16)
    a = f(ad.vmap, ad.pmap)(x)
    _close(a, f(ad.pmap, ad.vmap)(x))
    # the outer map names 'i'; the inner unnamed map runs over axis 1
    if prim == "all_gather":       # element (a, b) gathers x[:, b]
        want = np.stack([np.stack([x[:, j] for _ in range(2)]) for j in range(2)], axis=1)
    else:                           # element (a, b) keeps row a of sum_a' x[a', b]
        want = np.swapaxes(x.sum(0), 0, 1)
    _close(a, want)


@pytest.mark.parametrize("prim", ["all_gather", "psum_scatter"])
@pytest.mark.parametrize("tiled", [False, True])
def test_vs_vmap(prim, tiled):
    """pmap_test.VmapPmapCollectivesTest.testVsVmap."""
    x = np.arange(4 * 4 * 8).reshape((4, 4, 8))
    f = partial(getattr(lax, prim), axis_name="i", tiled=tiled)
    a = ad.vmap(f, axis_name="i")(x)
    _close(a, ad.pmap(f, axis_name="i")(x))
    if prim == "all_gather":
        g = x.reshape(16, 8) if tiled else x
        want = np.stack([g] * 4)
    else:
        want = x.sum(0).reshape(4, 1, 8) if tiled else x.sum(0)
    _close(a, want)


def test_pmap_with_devices_all_devices():
    """pmap_test.PmapWithDevicesTest.testAllDevices (devices= is accepted, ignored)."""
    f = ad.pmap(lambda x: x - lax.psum(x, "i"), axis_name="i", devices=None)
    x = _arange((ND, 4))
    _close(f(x), x - np.sum(x, 0))


def test_jit_in_pmap_and_pmap_in_jit():
    """pmap_test.PmapWithDevicesTest.testJitInPmap and testPmapInJit."""
    @partial(ad.pmap, axis_name="i")
    def foo(x):
        @ad.jit
        def bar(y):
            return y + 1
        return lax.psum(bar(x), "i")
    _close(foo(anp.ones((ND, 1))), np.ones((ND, 1)) * ND * 2)

    @ad.jit
    def foo2(x):
        @partial(ad.pmap, axis_name="i")
        def bar(y):
            return lax.psum(y, "i")
        return bar(x)
    _close(foo2(anp.ones((ND, 1))), np.ones((ND, 1)) * ND)


def test_pmap_static_argnums():
    """pmap_test.PmapWithDevicesTest.testPmapStaticArgnums."""
    @partial(ad.pmap, axis_name="i", static_broadcasted_argnums=1)
    def f(x, y):
        return anp.sin(x + y())
    x = _arange((ND, 4))
    _close(f(x, lambda: 3.), np.sin(x + 3.), rtol=1e-5)


def test_pmap_in_axes_basic_and_grad():
    """pmap_test.PmapWithDevicesTest.testPmapInAxesBasic and testPmapInAxesGrad."""
    f = ad.pmap(lambda x, y: anp.sin(x + y), in_axes=(1, 2))
    x = np.arange(2 * ND * 4).reshape((2, ND, 4))
    y = np.arange(2 * 4 * ND).reshape((2, 4, ND))
    _close(f(x, y), np.sin(x.transpose((1, 0, 2)) + y.transpose((2, 0, 1))))

    def g(x, y, z):
        return anp.sin(x + y + z)
    fp = ad.pmap(g, in_axes=(1, 2, None))
    fv = ad.vmap(g, in_axes=(1, 2, None))
    x, y, z = _arange((5, ND, 7)), _arange((5, 7, ND)), _arange((5, 7))
    dx, dy, dz = ad.grad(lambda args: fp(*args).sum())((x, y, z))
    assert dx.shape == x.shape and dy.shape == y.shape and dz.shape == z.shape
    _tree_close(ad.grad(lambda args: fp(*args).sum())((x, y, z)),
                ad.grad(lambda args: fv(*args).sum())((x, y, z)))
    s = np.cos(np.moveaxis(x, 1, 0) + np.moveaxis(y, 2, 0) + z)
    _close(dz, s.sum(0), rtol=1e-5, atol=1e-5)


def test_pmap_out_axes():
    """pmap_test.PmapWithDevicesTest.testPmapOutAxesBasic and testPmapDictOutAxes."""
    f = ad.pmap(lambda x, y: (anp.sin(x + y), y * 2), in_axes=(1, None), out_axes=(2, None))
    x = np.arange(2 * ND * 4).reshape((2, ND, 4))
    y = np.arange(2 * 4).reshape((2, 4))
    _tree_close(f(x, y), (np.sin(x.transpose((1, 0, 2)) + y).transpose((1, 2, 0)), y * 2))
    g = ad.pmap(lambda x: {"a": x}, out_axes={"a": 0})
    _tree_close(g(anp.arange(ND)), {"a": np.arange(ND)})


def test_pmap_post_process():
    """pmap_test.PmapWithDevicesTest.testPmapPostProcess."""
    def mk_case(map_fun):
        def f(x, y):
            @partial(map_fun, in_axes=1, out_axes=2)
            def h(y):
                return anp.sin(x + y)
            return h(y).sum()
        return f
    x = _arange((5, 7))
    y = _arange((5, ND, 7))
    a = ad.grad(mk_case(ad.pmap))(x, y)
    _close(a, ad.grad(mk_case(ad.vmap))(x, y))
    _close(a, np.cos(x[:, None] + y).sum(1), rtol=1e-5, atol=1e-5)


def test_vmap_of_pmap2():
    """pmap_test.testVmapOfPmap2: random draws inside a pmap inside a vmap."""
    keys = ad.random.split(ad.random.PRNGKey(1), 13)

    @ad.pmap
    def g(key):
        _ = ad.random.normal(key, ())
        return 0.

    @ad.vmap
    def s(keys):
        keys = ad.tree_util.tree_map(lambda x: anp.broadcast_to(x, (ND,) + x.shape), keys)
        return g(keys)
    ans = s(keys)
    assert ans.shape == (13, ND)
    _close(ans, np.zeros((13, ND)))


def test_post_process_map2():
    """pmap_test.testPostProcessMap2 (JAX issue 2787)."""
    def vv(x, y):
        return anp.dot(x, y)

    def distributed_matrix_vector(x, y):
        fv = lambda z: lax.map(lambda j: vv(j, y), z)
        res = ad.pmap(fv)(x.reshape((ND, -1) + tuple(x.shape[1:])))
        return res.reshape(res.shape[0] * res.shape[1], *res.shape[2:])
    rng = _rng(3)
    x = rng.randn(80, 50)
    batched_mvm = ad.vmap(lambda b: distributed_matrix_vector(x, b), in_axes=0)
    y = rng.randn(10, 50, 1)
    _close(batched_mvm(y), np.einsum("ij,njk->nik", x, y), atol=1e-10, rtol=1e-10)


def test_issue_1062():
    """pmap_test.test_issue_1062: jit of pmap of a jitted fori_loop."""
    @ad.jit
    def multi_step(state, count):
        return lax.fori_loop(0, count, lambda i, s: s + lax.pmean(s, "x"), state)

    @ad.jit
    def multi_step_pmap(state, count=2):
        @partial(ad.pmap, axis_name="x")
        def pmapped_multi_step(state):
            return multi_step(state, count)
        return pmapped_multi_step(state)
    u = np.ones((ND, 100)) * np.arange(1, ND + 1)[:, None]
    m = u.mean(0)
    want = (u + m) + (m + m)       # step 1: u + mean(u); step 2: that + its mean (2 m)
    _close(multi_step_pmap(u), want)


def test_num_replicas_with_switch():
    """pmap_test.test_num_replicas_with_switch (JAX issue 7411): cond of pmaps."""
    def identity(x):
        return x - lax.pmean(x, "i")
    x = _arange((ND, 2))
    for pred in (True, False):
        y = lax.cond(pred, ad.pmap(identity, "i"), ad.pmap(lambda v: v, "i"), x)
        _close(y, x - x.mean(0) if pred else x)


def test_pmap_of_prng_key():
    """pmap_test.test_pmap_of_prng_key (JAX issue 20392): pmap and jit of pmap agree."""
    keys = ad.random.split(ad.random.key(0), ND)
    result1 = ad.pmap(ad.random.bits)(keys)
    result2 = ad.jit(ad.pmap(ad.random.bits))(keys)
    np.testing.assert_array_equal(np.asarray(result1), np.asarray(result2))
    want = [ad.random.bits(k) for k in keys]
    np.testing.assert_array_equal(np.asarray(result1), np.asarray(want))


def test_nested_pmaps():
    """pmap_test.PmapWithDevicesTest.testNestedPmaps, testNestedPmapsBools and the program
    of testBadAxisSizeErrorNested (skipped in JAX since pmap became shard_map; on one
    machine nested pmaps are nested named vmaps)."""
    @partial(ad.pmap, axis_name="i")
    def foo(x):
        @partial(ad.pmap, axis_name="j")
        def bar(y):
            return lax.psum(y, "j")
        return bar(x)
    x = anp.ones((ND // 2, 2))
    _close(foo(x), np.asarray(x) * 2)

    @partial(ad.pmap, axis_name="i")
    def foo_b(x):
        return ad.pmap(anp.logical_not, axis_name="j")(x)
    np.testing.assert_array_equal(foo_b(anp.ones((ND // 2, 2), anp.bool_)),
                                  np.zeros((ND // 2, 2), np.bool_))

    f = ad.pmap(ad.pmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i")
    x = _arange((2, 4))
    _close(f(x), np.full((2, 4), x.sum()))


# ============================================================================
# tests/custom_api_test.py: custom rules under a named vmap
# ============================================================================

def _initial_style(f):
    def g(x):
        closed = ad.make_jaxpr(f)(x)
        from autodiff import core
        return core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]
    return g


def test_custom_jvp_initial_style_vmap_with_collective():
    """custom_api_test.CustomJVPTest.test_initial_style_vmap_with_collective."""
    @ad.custom_jvp
    def f(x):
        return lax.psum(x, "foo")

    @f.defjvp
    def f_jvp(xs, ts):
        x, = xs
        t, = ts
        return lax.psum(x, "foo"), t
    v = ad.vmap(lambda _, x: _initial_style(f)(x), axis_name="foo", in_axes=(0, None),
                out_axes=None)(anp.arange(4.), 2.)
    _close(v, 8.)


def test_custom_vjp_initial_style_vmap_with_collective():
    """custom_api_test.CustomVJPTest.test_initial_style_vmap_with_collective."""
    @ad.custom_vjp
    def f(x):
        return lax.psum(x, "foo")

    def f_fwd(x):
        return lax.psum(x, "foo"), None

    def f_bwd(res, dx):
        return (dx,)
    f.defvjp(f_fwd, f_bwd)
    out = ad.vmap(lambda _, x: _initial_style(f)(x), axis_name="foo", in_axes=(0, None),
                  out_axes=None)(anp.arange(4.), 2.)
    _close(out, 8.)


def test_custom_jvp_vmap_with_collective_traced_directly():
    """custom_api_test test_initial_style_vmap_with_collective, without make_jaxpr: the
    custom_jvp function called in the named vmap's trace."""
    @ad.custom_jvp
    def f(x):
        return lax.psum(x, "foo")

    @f.defjvp
    def f_jvp(xs, ts):
        return lax.psum(xs[0], "foo"), ts[0]
    v = ad.vmap(lambda _, x: f(x), axis_name="foo", in_axes=(0, None),
                out_axes=None)(anp.arange(4.), 2.)
    _close(v, 8.)


def test_axis_index_in_primal_under_vmap():
    """custom_api_test.CustomJVPTest.test_axis_index_in_primal_under_vmap, its primal."""
    @ad.custom_jvp
    def f(x):
        return x * lax.axis_index("i").astype(x.dtype)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * lax.axis_index("i").astype(t.dtype)
    _close(ad.vmap(f, axis_name="i")(anp.ones(3)), np.arange(3.))
    # the rule run inside the vmap (vmap of jvp) sees the axis
    _, t = ad.vmap(lambda x, t: ad.jvp(f, (x,), (t,)), axis_name="i")(anp.ones(3), anp.ones(3))
    _close(t, np.arange(3.))


def test_axis_index_in_rule_under_jvp_of_vmap():
    """custom_api_test.CustomJVPTest.test_axis_index_in_primal_under_vmap, its tangents:
    jvp of the named vmap runs the batched rule outside the vmap's trace."""
    @ad.custom_jvp
    def f(x):
        return x * lax.axis_index("i").astype(x.dtype)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * lax.axis_index("i").astype(t.dtype)
    _, tangents = ad.jvp(ad.vmap(f, axis_name="i"), (anp.ones(3),), (anp.ones(3),))
    _close(tangents, np.arange(3.))


def test_custom_vjp_rules_with_collectives_under_grad_of_vmap():
    """The custom_vjp face of the same: fwd and bwd use axis_index and psum, and grad of
    the named vmap runs the batched rules."""
    @ad.custom_vjp
    def f(x):
        return x * lax.axis_index("i")

    def fwd(x):
        return f(x), None

    def bwd(r, g):
        return (g * lax.axis_index("i") + lax.psum(g, "i"),)
    f.defvjp(fwd, bwd)
    g = ad.grad(lambda x: anp.sum(ad.vmap(f, axis_name="i")(x)))(np.ones(3))
    _close(g, np.arange(3.) + 3)
    _close(ad.vmap(ad.grad(f), axis_name="i")(np.ones(3)), np.arange(3.) + 3)
