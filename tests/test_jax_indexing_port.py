"""Port of JAX's indexing tests (``tests/lax_numpy_indexing_test.py`` of jax-ml/jax, and the
``take``/``take_along_axis``/``put``/``put_along_axis`` tests of ``tests/lax_numpy_test.py``)
to autodiff.

``jax`` became ``ad``, ``jnp`` became ``anp``; ``x.at[idx]`` on a traced value is spelled
the same, on a numpy array ``anp.at(x)[idx]``. Every case compares with numpy (JAX's own
reference) under ``ad.jit`` and, where it applies, on traced values outside ``jit``
(``ad.jvp``'s primal output, ``ad.vmap``), and derivatives with ``ad.check_grads``. Each test
cites the JAX test it ports. The index tables are JAX's; dtypes are a representative
rotation over JAX's lists (float32/float64/int32/uint8/bool...) so the file stays fast.

Not ported: the IndexingStrategy / static_slice / ``jax.ds`` tests (JAX internals with no
counterpart), jaxpr-shape tests (``testSimpleIndexingUsesSlice``,
``testTrivialGatherIsntGenerated``, ``testIndicesNormalizationByType``, the make_jaxpr
``take_along_axis`` ones), weak types, dtype-promotion modes (``numpy_dtype_promotion``),
``out_sharding``, ``mode='one_hot'``, and the tests that check JAX's refusal of a list used
as a multidimensional index (numpy, which ``autodiff.numpy`` follows, accepts it).
Where numpy and JAX differ, autodiff follows numpy (docs/porting.md): a concrete index out
of bounds with the default mode raises numpy's ``IndexError`` (JAX clamps reads and drops
updates); those cases use a traced index or an explicit ``mode=``.
"""
import math
from typing import Any, NamedTuple

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import ConcretizationError

jit, grad, vmap, jvp = ad.jit, ad.grad, ad.vmap, ad.jvp

FLOAT = [np.float32, np.float64]
INT = [np.int32, np.int64, np.int8, np.uint8]
ALL = FLOAT + INT + [np.bool_]


class IndexSpec(NamedTuple):
    shape: tuple
    indexer: Any
    out_shape: Any = None


def rand(rng, shape, dtype):
    """jtu.rand_default: scaled normals, rounded for integers, signs for booleans."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    v = np.asarray(rng.standard_normal(shape) * 3)
    if dtype.kind in "iu":
        v = np.abs(v) if dtype.kind == "u" else v
        v = np.round(v)
    return np.asarray(v.astype(dtype))


def assert_same(got, want, tol=None):
    """Same shape and dtype as numpy's result, equal values (NaN equal NaN)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        rtol = tol if tol is not None else (1e-5 if want.dtype.itemsize <= 8 else 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def check_traced(np_fun, anp_fun, args, *, tol=None, eager=True, vmap_argnums=(0,)):
    """numpy's result against ``anp_fun`` under ``jit``, on eager tracers (jvp's primal, for
    float operands) and under ``vmap`` over the arguments ``vmap_argnums`` (two draws: the
    arguments and the arguments reversed along their flat order)."""
    want = np_fun(*args)
    assert_same(jit(anp_fun)(*args), want, tol)
    if eager and np.asarray(args[0]).dtype.kind == "f":
        def g(x):
            return anp_fun(x, *args[1:])
        out, _ = jvp(g, (args[0],), (np.ones_like(args[0]),))
        assert_same(out, want, tol)
    if vmap_argnums:
        other = [np.asarray(a).ravel()[::-1].reshape(np.shape(a)) if k in vmap_argnums else a
                 for k, a in enumerate(args)]
        stacked = [np.stack([np.asarray(a), np.asarray(b)]) if k in vmap_argnums else a
                   for k, (a, b) in enumerate(zip(args, other))]
        axes = tuple(0 if k in vmap_argnums else None for k in range(len(args)))
        got = vmap(anp_fun, in_axes=axes)(*stacked)
        assert_same(np.asarray(got)[0], want, tol)
        assert_same(np.asarray(got)[1], np_fun(*other), tol)


def _cases(table, dtypes=None):
    """(name, shape, indexer[, dtype]) parameters of an IndexSpec table; with ``dtypes`` each
    case gets the next dtype of the rotation."""
    out = []
    k = 0
    for name, specs in table:
        for spec in specs:
            if dtypes is None:
                out.append(pytest.param(spec.shape, spec.indexer, id=f"{name}-{len(out)}"))
            else:
                dt = dtypes[k % len(dtypes)]
                k += 1
                out.append(pytest.param(spec.shape, spec.indexer, dt,
                                        id=f"{name}-{len(out)}-{np.dtype(dt).name}"))
    return out


# ------------------------------------------------------------------------------------------
# JAX's index tables
# ------------------------------------------------------------------------------------------

STATIC_SLICE_TESTS = [
    ("OneIntIndex", [
        IndexSpec((3,), 1, ()), IndexSpec((3, 3), 0, (3,)), IndexSpec((3, 4, 5), 2, (4, 5)),
        IndexSpec((3,), -1, ()), IndexSpec((3,), -2, ())]),
    ("TwoIntIndices", [
        IndexSpec((3, 3), (2, 1), ()), IndexSpec((3, 4, 5), (1, 2), (5,)),
        IndexSpec((3, 4, 5), (-1, 2), (5,))]),
    ("ThreeIntIndices", [IndexSpec((3, 4, 5), (1, 2, 3), ())]),
    ("OneSliceIndex", [
        IndexSpec((10,), slice(1, 3), (2,)), IndexSpec((10,), slice(1, -1), (8,)),
        IndexSpec((10,), slice(None, -1), (9,)), IndexSpec((10,), slice(None), (10,)),
        IndexSpec((10, 8), slice(1, 3), (2, 8)), IndexSpec((10, 8), slice(1, None), (9, 8)),
        IndexSpec((10, 8), slice(None, 3), (3, 8)), IndexSpec((10, 8), slice(-3, None), (3, 8))]),
    ("OneSliceIndexNegativeStride", [
        IndexSpec((10,), slice(3, 1, -1), (2,)), IndexSpec((10,), slice(1, 8, -1), (0,)),
        IndexSpec((10,), slice(None, 1, -2), (4,)), IndexSpec((10,), slice(None, None, -1), (10,)),
        IndexSpec((10, 8), slice(3, 1, -1), (2, 8)), IndexSpec((10, 8), slice(0, 8, -1), (0, 8)),
        IndexSpec((10, 8), slice(None, None, -1), (10, 8)),
        IndexSpec((10, 8), slice(12, 12, -4), (0, 8)),
        IndexSpec((10, 8), slice(12, 4, -4), (2, 8))]),
    ("OneSliceIndexNonUnitStride", [
        IndexSpec((10,), slice(0, 8, 2), (4,)), IndexSpec((10,), slice(0, 8, 3), (3,)),
        IndexSpec((10,), slice(1, 3, 2), (1,)), IndexSpec((10,), slice(1, None, 2), (5,)),
        IndexSpec((10,), slice(None, 1, -2), (4,)), IndexSpec((10, 8), slice(1, 8, 3), (3, 8)),
        IndexSpec((10, 8), slice(None, None, 2), (5, 8)),
        IndexSpec((10, 8), slice(None, 1, -2), (4, 8)),
        IndexSpec((10, 8), slice(None, None, -2), (5, 8))]),
    ("TwoSliceIndices", [
        IndexSpec((10, 8), (slice(1, 3), slice(0, 2)), (2, 2)),
        IndexSpec((10, 8), (slice(1, None), slice(None, 2)), (9, 2)),
        IndexSpec((10, 8), (slice(None, None, -1), slice(None, 2)), (10, 2)),
        IndexSpec((10, 8, 3), (slice(1, 3), slice(0, 2)), (2, 2, 3)),
        IndexSpec((10, 8, 3), (slice(1, 3), slice(0, None)), (2, 8, 3)),
        IndexSpec((10, 8, 3), (slice(1, None), slice(0, 2)), (9, 2, 3))]),
    ("OneColonIndex", [IndexSpec((3,), slice(None), (3,)),
                       IndexSpec((3, 4), slice(None), (3, 4))]),
    ("MultipleColonIndices", [IndexSpec((3, 4), (slice(None), slice(None)), (3, 4)),
                              IndexSpec((3, 4, 5), (slice(None), slice(None)), (3, 4, 5))]),
    ("MixedSliceIndices", [IndexSpec((10, 4), (slice(None), slice(0, 2)), (10, 2)),
                           IndexSpec((10, 4), (1, slice(None)), (4,))]),
    ("EllipsisIndex", [
        IndexSpec((3,), Ellipsis, (3,)), IndexSpec((3, 4), Ellipsis, (3, 4)),
        IndexSpec((3, 4, 5), (0, Ellipsis), (4, 5)),
        IndexSpec((3, 4, 5), (Ellipsis, 2, 3), (3,))]),
    ("SliceIndexClamping", [
        IndexSpec((10,), slice(2, 11, 1), (8,)), IndexSpec((10,), slice(11, 12, 1), (0,)),
        IndexSpec((10,), slice(-11, -2, 1), (8,)), IndexSpec((10,), slice(-2, -12, -1), (9,)),
        IndexSpec((10,), slice(12, -12, -1), (10,))]),
    ("NoneIndex", [
        IndexSpec((), None, (1,)), IndexSpec((), (None, None), (1, 1)),
        IndexSpec((), (Ellipsis, None), (1,)), IndexSpec((3,), None, (1, 3)),
        IndexSpec((3, 4), None, (1, 3, 4)), IndexSpec((3, 4), (Ellipsis, None), (3, 4, 1)),
        IndexSpec((3, 4), (0, None, Ellipsis), (1, 4)),
        IndexSpec((3, 4, 5), (1, None, Ellipsis), (1, 4, 5)),
        IndexSpec((3, 4, 5), (1, None, slice(None), None), (1, 4, 1, 5))]),
    ("EmptyIndex", [IndexSpec((), (), ()), IndexSpec((3,), (), (3,)),
                    IndexSpec((3, 4), (), (3, 4))]),
]

STATIC_INDEXING_TESTS = STATIC_SLICE_TESTS + [
    ("TupleOfIntAndSliceAndIntArray", [
        IndexSpec((3, 2, 3), (0, slice(None), np.arange(3)), (3, 2)),
        IndexSpec((3, 2, 3), (np.int32(1), slice(None), np.arange(3)), (3, 2)),
        IndexSpec((3, 2, 3), (np.array(2), slice(None), np.arange(3)), (3, 2))]),
]

STATIC_INDEXING_OUT_OF_BOUNDS_TESTS = [
    ("OneIntIndex", [IndexSpec((3,), -4, ()), IndexSpec((3, 3), 3, (3,)),
                     IndexSpec((3, 4, 5), 4, (4, 5))]),
    ("TwoIntIndices", [IndexSpec((3, 3), (2, -4), ()), IndexSpec((3, 4, 5), (3, 2), ()),
                       IndexSpec((3, 4, 5), (-4, 4), (5,))]),
]

ADVANCED_INDEXING_TESTS = [
    ("One1DIntArrayIndex", [
        IndexSpec((3,), np.array([0, 1]), (2,)), IndexSpec((3, 3), np.array([1, 2, 1]), (3, 3)),
        IndexSpec((3, 4, 5), np.array([0, 2, 0, 1]), (4, 4, 5)),
        IndexSpec((3,), np.array([-1, 1]), (2,)), IndexSpec((3,), np.array([-2, -1]), (2,)),
        IndexSpec((0,), np.array([], dtype=np.int32), (0,))]),
    ("One2DIntArrayIndex", [
        IndexSpec((3,), np.array([[0, 0]]), (1, 2)),
        IndexSpec((3, 3), np.array([[1, 2, 1], [0, 1, -1]]), (2, 3, 3)),
        IndexSpec((3, 4, 5), np.array([[0, 2, 0, 1], [-1, -2, 1, 0]]), (2, 4, 4, 5))]),
    ("Two1DIntArrayIndicesNoBroadcasting", [
        IndexSpec((3, 3), (np.array([0, 1]), np.array([1, 2])), (2,)),
        IndexSpec((3, 4, 5), (np.array([0, 2, 0, 1]), np.array([-1, 0, -1, 2])), (4, 5))]),
    ("Two1DIntArrayIndicesWithBroadcasting", [
        IndexSpec((3, 3), (np.array([[0, 1]]), np.array([1, 2])), (1, 2)),
        IndexSpec((3, 4, 5), (np.array([[0, 2, 0, 1]]), np.array([-1, 0, -1, 2])), (1, 4, 5))]),
    ("ArrayOfInts", [IndexSpec((3,), np.array([0, 1, 0]), (3,)),
                     IndexSpec((3, 4, 5), np.array([0, -1]), (2, 4, 5))]),
    ("TupleOfEmptyList", [IndexSpec((3, 4), ([],), (0, 4)), IndexSpec((3, 4), ([], 0), (0,)),
                          IndexSpec((3, 4), ([], []), (0,))]),
    ("TupleOfListsOfPythonInts", [
        IndexSpec((3, 4, 5), ([0, 1],), (2, 4, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], [[2, 3, 0, 3]]), (2, 4, 5))]),
    ("TupleOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), (0, np.array([0, 1])), (2, 5)),
        IndexSpec((3, 4, 5), (0, 1, np.array([[2, 3, 0, 3]])), (1, 4))]),
    ("TupleOfListsOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), ([0, 1], np.array([0])), (2, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], np.array([[2, 3, 0, 3]])), (2, 4, 5))]),
]

ADVANCED_INDEXING_TESTS_NO_REPEATS = [
    ("One1DIntArrayIndex", [
        IndexSpec((3,), np.array([0, 1]), (2,)), IndexSpec((3, 3), np.array([1, 2, 0]), (3, 3)),
        IndexSpec((3, 4, 5), np.array([0, 2, 1]), (3, 4, 5)),
        IndexSpec((3,), np.array([-1, 1]), (2,)), IndexSpec((3,), np.array([-2, -1]), (2,)),
        IndexSpec((0,), np.array([], dtype=np.int32), (0,))]),
    ("One2DIntArrayIndex", [
        IndexSpec((3,), np.array([[0, 1]]), (1, 2)),
        IndexSpec((6, 6), np.array([[1, 2, 0], [3, 4, -1]]), (2, 3, 6))]),
    ("Two1DIntArrayIndicesNoBroadcasting", [
        IndexSpec((3, 3), (np.array([0, 1]), np.array([1, 2])), (2,)),
        IndexSpec((4, 5, 6), (np.array([0, 2, 1, 3]), np.array([-1, 0, -2, 1])), (4, 6))]),
    ("Two1DIntArrayIndicesWithBroadcasting", [
        IndexSpec((3, 3), (np.array([[0, 1]]), np.array([1, 2])), (1, 2)),
        IndexSpec((4, 5, 6), (np.array([[0, 2, -1, 1]]), np.array([-1, 0, -2, 2])), (1, 4, 6))]),
    ("ArrayOfInts", [IndexSpec((3,), np.array([0, 2, 1]), (3,)),
                     IndexSpec((3, 4, 5), np.array([0, -1]), (2, 4, 5))]),
    ("TupleOfListsOfPythonInts", [
        IndexSpec((3, 4, 5), ([0, 1],), (2, 4, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], [[2, 3, 0]]), (2, 3, 5))]),
    ("TupleOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), (0, np.array([0, 1])), (2, 5)),
        IndexSpec((3, 4, 5), (0, 1, np.array([[2, 3, 0]])), (1, 3))]),
    ("TupleOfListsOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), ([0, 1], np.array([0])), (2, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], np.array([[2, 3, 0]])), (2, 3, 5))]),
]

ADVANCED_INDEXING_TESTS_NO_REPEATS_SORTED = [
    ("One1DIntArrayIndex", [
        IndexSpec((3,), np.array([0, 1]), (2,)), IndexSpec((3, 3), np.array([0, 1, 2]), (3, 3)),
        IndexSpec((3, 4, 5), np.array([0, 1, 2]), (3, 4, 5)),
        IndexSpec((3,), np.array([-1, 1]), (2,)), IndexSpec((3,), np.array([-2, -1]), (2,)),
        IndexSpec((0,), np.array([], dtype=np.int32), (0,))]),
    ("One2DIntArrayIndex", [
        IndexSpec((3,), np.array([[0, 1]]), (1, 2)),
        IndexSpec((6, 6), np.array([[-1, 0, 1], [2, 3, 4]]), (2, 3, 6))]),
    ("Two1DIntArrayIndicesNoBroadcasting", [
        IndexSpec((3, 3), (np.array([0, 1]), np.array([1, 2])), (2,)),
        IndexSpec((4, 5, 6), (np.array([0, 1, 2, 3]), np.array([-2, -1, 0, 1])), (4, 6))]),
    ("Two1DIntArrayIndicesWithBroadcasting", [
        IndexSpec((3, 3), (np.array([[0, 1]]), np.array([1, 2])), (1, 2)),
        IndexSpec((4, 5, 6), (np.array([[-1, 0, 1, 2]]), np.array([-2, -1, 0, 2])), (1, 4, 6))]),
    ("TupleOfListsOfPythonInts", [
        IndexSpec((3, 4, 5), ([0, 1],), (2, 4, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], [[0, 2, 3]]), (2, 3, 5))]),
    ("TupleOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), (0, np.array([0, 1])), (2, 5)),
        IndexSpec((3, 4, 5), (0, 1, np.array([[0, 2, 3]])), (1, 3))]),
    ("TupleOfListsOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), ([0, 1], np.array([0])), (2, 5)),
        IndexSpec((3, 4, 5), ([[0], [-1]], np.array([[0, 2, 3]])), (2, 3, 5))]),
]

MIXED_ADVANCED_INDEXING_TESTS_NO_REPEATS = [
    ("SlicesAndOneIntArrayIndex", [
        IndexSpec((2, 3), (np.array([0, 1]), slice(1, 2)), (2, 1)),
        IndexSpec((2, 3), (slice(0, 2), np.array([0, 2])), (2, 2)),
        IndexSpec((3, 4, 5), (Ellipsis, np.array([0, 2]), slice(None)), (3, 2, 5)),
        IndexSpec((3, 4, 5), (Ellipsis, np.array([[0, 2], [1, 3]]), slice(None)),
                  (3, 2, 2, 5))]),
    ("SlicesAndTwoIntArrayIndices", [
        IndexSpec((3, 4, 5), (Ellipsis, np.array([0, 2]), np.array([-1, 2])), (3, 2)),
        IndexSpec((3, 4, 5), (np.array([0, 2]), Ellipsis, np.array([-1, 2])), (2, 4)),
        IndexSpec((3, 4, 5), (np.array([0, 2]), np.array([-1, 2]), Ellipsis), (2, 5)),
        IndexSpec((3, 4, 5), (np.array([0, 2]), np.array([-1, 2]), slice(1, 3)), (2, 2)),
        IndexSpec((3, 4, 5), (np.array([0, 2]), slice(1, 3), np.array([-1, 2])), (2, 2)),
        IndexSpec((3, 4, 5), (np.array([0, 2, -2]), slice(None, None, 2),
                              np.array([-1, 2, 1])), (3, 2))]),
    ("NonesAndIntArrayIndices", [
        IndexSpec((3, 4, 5), (np.array([0, 2]), None, np.array([-1, 2])), (2, 1, 5)),
        IndexSpec((3, 4, 5), (np.array([0, 2]), None, None, np.array([-1, 2])), (2, 1, 1, 5)),
        IndexSpec((3, 4, 5), (Ellipsis, np.array([0, 2]), None, None, np.array([-1, 2])),
                  (2, 3, 1, 1))]),
    ("IntArrayWithInt32Type", [
        IndexSpec((3, 4), (Ellipsis, np.array(1, dtype=np.int32)), (3,))]),
    ("EllipsisWithArrayIndices", [
        IndexSpec((3, 4, 5), (np.array([0, 1]), ..., np.array([0, 1])), (2, 4)),
        IndexSpec((3, 4, 5), (slice(None), np.array([0, 1]), ..., np.array([0, 1])), (2, 3)),
        IndexSpec((3, 4, 5), (slice(None), ..., np.array([0, 1]), np.array([0, 1])), (3, 2))]),
]

MIXED_ADVANCED_INDEXING_TESTS = MIXED_ADVANCED_INDEXING_TESTS_NO_REPEATS + [
    ("SlicesAndOneIntArrayIndex", [
        IndexSpec((3, 4, 5), (Ellipsis, np.array([[0, 2], [1, 1]]), slice(None)),
                  (3, 2, 2, 5))]),
    ("SlicesAndTwoIntArrayIndices", [
        IndexSpec((3, 4, 5), (np.array([0, 2, -2]), slice(None, None, 2),
                              np.array([-1, 2, -1])), (3, 2)),
        IndexSpec((3, 4, 5), (np.array([[0, 2], [2, 0]]), Ellipsis,
                              np.array([[1, 0], [1, 0]])), (2, 2, 4))]),
]

MODES = ["clip", "drop", "promise_in_bounds"]


def _tol(dtype):
    return 1e-2 if np.dtype(dtype) == np.float32 else None


# ------------------------------------------------------------------------------------------
# IndexingTest: reads
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,indexer,dtype", _cases(STATIC_INDEXING_TESTS, ALL))
def test_static_indexing(shape, indexer, dtype):
    """IndexingTest.testStaticIndexing (also ValidateIndicesTest.test_simple_indexing):
    ``x[idx]`` and ``x.at[idx].get()``."""
    x = rand(np.random.default_rng(0), shape, dtype)
    np_fun = lambda x: np.asarray(x)[indexer]
    check_traced(np_fun, lambda x: anp.asarray(x)[indexer], (x,))
    check_traced(np_fun, lambda x: anp.asarray(x).at[indexer].get(), (x,), vmap_argnums=())
    assert_same(anp.at(x)[indexer].get(), np_fun(x))


@pytest.mark.parametrize("shape", [(3, 4), (3, 5, 2)])
@pytest.mark.parametrize("indexer", [(-2,), (-1, -2), (10,), (10, 1)])
@pytest.mark.parametrize("wrap", [True, False])
def test_simple_indexing_oob_clip(shape, indexer, wrap):
    """IndexingStrategyTest.test_simple_indexing_oob: ``mode='clip'`` with and without
    ``wrap_negative_indices`` (JAX's ``normalize_indices``), concrete and traced indices."""
    x = rand(np.random.default_rng(1), shape, np.float32)
    lo = (lambda n: -n) if wrap else (lambda n: 0)
    np_idx = tuple(np.clip(i, lo(n), n - 1) for i, n in zip(indexer, shape))
    np_fun = lambda x: x[np_idx]
    get = lambda x: anp.asarray(x).at[indexer].get(mode="clip", wrap_negative_indices=wrap)
    check_traced(np_fun, get, (x,))
    assert_same(anp.at(x)[indexer].get(mode="clip", wrap_negative_indices=wrap), np_fun(x))
    traced = jit(lambda x, i: anp.asarray(x).at[tuple(i)].get(mode="clip",
                                                              wrap_negative_indices=wrap))
    assert_same(traced(x, [np.int32(i) for i in indexer]), np_fun(x))


_GRAD_CASES = [pytest.param(s, i, m, id=f"{m}-{p.id}")
               for m in MODES
               for p in _cases(STATIC_INDEXING_TESTS if m == "promise_in_bounds"
                               else STATIC_INDEXING_TESTS + STATIC_INDEXING_OUT_OF_BOUNDS_TESTS)
               for s, i in [p.values]]


@pytest.mark.parametrize("shape,indexer,mode", _GRAD_CASES)
def test_static_indexing_grads(shape, indexer, mode):
    """IndexingTest.testStaticIndexingGrads: ``x.at[idx].get(mode=..., fill_value=7)**2``,
    second order, against finite differences."""
    x = rand(np.random.default_rng(2), shape, np.float64)
    fun = lambda x: anp.at(x)[indexer].get(mode=mode, fill_value=7) ** 2
    ad.check_grads(fun, (x,), order=2)


_INT_CASES = [
    ("OneIntIndex", [IndexSpec((3,), 1), IndexSpec((3, 3), 0), IndexSpec((3, 4, 5), 2),
                     IndexSpec((3,), -1), IndexSpec((3,), -2)]),
    ("TwoIntIndices", [IndexSpec((3, 3), (2, 1)), IndexSpec((3, 4, 5), (1, 2)),
                       IndexSpec((3, 4, 5), (-1, 2))]),
    ("ThreeIntIndices", [IndexSpec((3, 4, 5), (1, 2, 3))]),
]


@pytest.mark.parametrize("shape,indexer,dtype", _cases(_INT_CASES, ALL))
def test_dynamic_indexing_with_integers(shape, indexer, dtype):
    """IndexingTest.testDynamicIndexingWithIntegers: the integers are traced arguments."""
    x = rand(np.random.default_rng(3), shape, dtype)
    unpacked = indexer if isinstance(indexer, tuple) else (indexer,)
    np_fun = lambda x, i: np.asarray(x)[tuple(i)]
    anp_fun = lambda x, i: anp.asarray(x)[tuple(i)]
    check_traced(np_fun, anp_fun, (x, list(unpacked)), vmap_argnums=(0,))
    # a batch of scalar indices (vmap over the index)
    idx = [np.array([i, 0]) for i in unpacked]
    got = vmap(lambda x, i: x[tuple(i)], in_axes=(None, 0))(x, idx)
    for b in range(2):
        assert_same(got[b], x[tuple(int(i[b]) for i in idx)])


@pytest.mark.parametrize("shape,indexer,dtype", _cases(_INT_CASES, FLOAT))
def test_dynamic_indexing_with_integers_grads(shape, indexer, dtype):
    """IndexingTest.testDynamicIndexingWithIntegersGrads."""
    x = rand(np.random.default_rng(4), shape, dtype)
    unpacked = list(indexer) if isinstance(indexer, tuple) else [indexer]
    fun = jit(lambda i, x: x[tuple(i)])
    ad.check_grads(lambda x: fun(unpacked, x), (x,), order=2, atol=_tol(dtype),
                   rtol=_tol(dtype), eps=_tol(dtype))


_DYN_SLICE_CASES = [
    IndexSpec((5,), slice(1, 3)), IndexSpec((5, 4), slice(1, 3)),
    IndexSpec((5, 4), (slice(1, 3), slice(0, 2))),
    IndexSpec((5, 4, 3), (slice(1, 3), slice(0, 2))),
    IndexSpec((3,), slice(None, None, -1)), IndexSpec((3, 3), slice(0, 3, -2)),
    IndexSpec((3, 4, 5), slice(0, 4, 2)), IndexSpec((5, 4), (slice(None, 3), slice(0, 2))),
    IndexSpec((5, 4, 3), (slice(1, 3), slice(0, None))),
]


def _unpack_slices(idx):
    """JAX's _ReplaceSlicesWithTuples: slices become (start, stop, step) tuples of ints (None
    parts 0), to be passed traced; returns them and the function rebuilding the index."""
    if isinstance(idx, slice):
        triple = (idx.start, idx.stop, idx.step)
        nones = [k for k, e in enumerate(triple) if e is None]
        vals = tuple(0 if e is None else e for e in triple)
        return vals, lambda t: slice(*(None if k in nones else t[k] for k in range(3)))
    parts = [_unpack_slices(i) for i in idx]
    return tuple(p[0] for p in parts), lambda t: tuple(p[1](e) for p, e in zip(parts, t))


@pytest.mark.parametrize("shape,indexer", [pytest.param(s.shape, s.indexer, id=str(k))
                                           for k, s in enumerate(_DYN_SLICE_CASES)])
def test_dynamic_indexing_with_slices_errors(shape, indexer):
    """IndexingTest.testDynamicIndexingWithSlicesErrors: slice bounds traced under ``jit``
    make a data-dependent shape: a clear error, an ``IndexError`` as in JAX."""
    unpacked, pack = _unpack_slices(indexer)
    fun = jit(lambda x, u: x[pack(u)])
    with pytest.raises(IndexError):
        fun(np.zeros(shape), unpacked)


@pytest.mark.parametrize("shape,indexer,dtype", _cases(ADVANCED_INDEXING_TESTS, ALL))
def test_advanced_integer_indexing(shape, indexer, dtype):
    """IndexingTest.testAdvancedIntegerIndexing: the index (arrays, lists of ints) is a
    traced argument."""
    x = rand(np.random.default_rng(5), shape, dtype)
    np_fun = lambda x, idx: np.asarray(x)[idx]
    anp_fun = lambda x, idx: anp.asarray(x)[idx]
    check_traced(np_fun, anp_fun, (x, indexer))
    assert_same(anp_fun(x, indexer), np_fun(x, indexer))


_ADV_GRAD_CASES = [
    ("One1DIntArrayIndex", [
        IndexSpec((3,), np.array([0, 1])), IndexSpec((3, 3), np.array([1, 2, 1])),
        IndexSpec((3, 4, 5), np.array([0, 2, 0, 1])), IndexSpec((3,), np.array([-1, 1])),
        IndexSpec((3,), np.array([-2, -1]))]),
    ("One2DIntArrayIndex", [
        IndexSpec((3,), np.array([[0, 0]])), IndexSpec((3, 3), np.array([[1, 2, 1], [0, 1, -1]])),
        IndexSpec((3, 4, 5), np.array([[0, 2, 0, 1], [-1, -2, 1, 0]]))]),
    ("Two1DIntArrayIndicesNoBroadcasting", [
        IndexSpec((3, 3), (np.array([0, 1]), np.array([1, 2]))),
        IndexSpec((3, 4, 5), (np.array([0, 2, 0, 1]), np.array([-1, 0, -1, 2])))]),
    ("Two1DIntArrayIndicesWithBroadcasting", [
        IndexSpec((3, 3), (np.array([[0, 1]]), np.array([1, 2]))),
        IndexSpec((3, 4, 5), (np.array([[0, 2, 0, 1]]), np.array([-1, 0, -1, 2])))]),
    ("TupleOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), (0, np.array([0, 1]))),
        IndexSpec((3, 4, 5), (0, 1, np.array([[2, 3, 0, 3]])))]),
    ("TupleOfListsOfPythonIntsAndIntArrays", [
        IndexSpec((3, 4, 5), ([0, 1], np.array([0]))),
        IndexSpec((3, 4, 5), ([[0], [-1]], np.array([[2, 3, 0, 3]])))]),
]


@pytest.mark.parametrize("shape,indexer,dtype", _cases(_ADV_GRAD_CASES, FLOAT))
def test_advanced_integer_indexing_grads(shape, indexer, dtype):
    """IndexingTest.testAdvancedIntegerIndexingGrads (also with the index traced)."""
    x = rand(np.random.default_rng(6), shape, dtype)
    tol = _tol(dtype)
    ad.check_grads(lambda x: anp.asarray(x)[indexer], (x,), order=2, atol=tol, rtol=tol, eps=1.)
    ad.check_grads(lambda x: jit(lambda x, i: x[i])(x, indexer), (x,), order=2, atol=tol,
                   rtol=tol, eps=1.)


@pytest.mark.parametrize("shape,indexer,dtype", _cases(MIXED_ADVANCED_INDEXING_TESTS, ALL))
def test_mixed_advanced_integer_indexing(shape, indexer, dtype):
    """IndexingTest.testMixedAdvancedIntegerIndexing: the index arrays traced, the slices,
    Nones and Ellipses static."""
    x = rand(np.random.default_rng(7), shape, dtype)
    arrays = [e if isinstance(e, np.ndarray) else () for e in indexer]

    def build(arrs):
        return tuple(a if isinstance(e, np.ndarray) else e for a, e in zip(arrs, indexer))

    check_traced(lambda x, a: np.asarray(x)[build(a)], lambda x, a: anp.asarray(x)[build(a)],
                 (x, arrays))
    ad.check_grads(lambda x: anp.asarray(x)[indexer], (rand(np.random.default_rng(8), shape,
                                                            np.float64),), order=1)


def test_advanced_indexing_manually():
    """IndexingTest.testAdvancedIndexingManually."""
    x = np.random.default_rng(9).standard_normal((3, 4, 5))
    index_array = np.array([0, 2, -1, 0])
    for op in [lambda x, i: x[..., i, :], lambda x, i: x[..., i, :, i, None],
               lambda x, i: x[i, ..., i[:, None], None]]:
        assert_same(jit(op)(x, index_array), op(x, index_array))
        assert_same(jvp(lambda x: op(x, index_array), (x,), (x,))[0], op(x, index_array))


def test_unpacking():
    """IndexingTest.testUnpacking."""
    def foo(x):
        a, b, c = x
        return a + b + c

    assert_same(jit(foo)(np.arange(3)), foo(np.arange(3)))


@pytest.mark.parametrize("x,idx", [
    (np.arange(3), np.array([True, True, False])),
    (np.arange(8).reshape(4, 2), np.array([True, True, False, True])),
    (np.arange(8).reshape(4, 2), np.array([[True, False], [False, True], [False, False],
                                           [True, True]])),
    (np.arange(24).reshape(4, 3, 2), (..., np.array([True, False]))),
    (np.arange(3), (..., np.array([True, False, True]))),
    (np.arange(6).reshape(2, 3), (0, ..., np.array([True, False, True]))),
    (np.arange(24).reshape(4, 3, 2), (..., np.array([[True, False], [True, False],
                                                     [False, False]]))),
    (np.arange(24).reshape(4, 3, 2), (np.array([True, False, True, False]), ...)),
    (np.array([-1]), np.array([False])),
    (np.arange(6).reshape(2, 3), (None, np.array([True, False]))),
    (np.arange(6).reshape(2, 3), (None, ..., np.array([True, False, False]))),
    (np.arange(6).reshape(2, 3), (..., None, np.array([True, False, False]))),
], ids=["1D", "2DBroadcast", "2D", "1DEllipsis", "1DEllipsis2", "1DEllipsis3", "2DEllipsis",
        "1DTrailingEllipsis", "EmptyResult", "WithNone", "NoneAndEllipsis", "EllipsisAndNone"])
def test_boolean_indexing(x, idx):
    """IndexingTest.testBooleanIndexing* (Array1D, Array2DBroadcast, Array2D,
    Boolean1DIndexingWithEllipsis 1-3, Boolean2DIndexingWithEllipsis,
    Boolean1DIndexingWithTrailingEllipsis, WithEmptyResult, WithNone, WithNoneAndEllipsis,
    WithEllipsisAndNone): a concrete mask on a traced array, eagerly and under ``jit``."""
    x = x.astype(np.float64)
    want = x[idx]
    assert_same(jit(lambda x: x[idx])(x), want)
    assert_same(jvp(lambda x: x[idx], (x,), (x,))[0], want)
    assert_same(anp.at(x)[idx].get(), want)
    g = grad(lambda x: anp.sum(anp.sin(x[idx])))(x)
    ref = np.zeros_like(x)
    ref[idx] = np.cos(x[idx])
    assert_same(g, ref)


def test_boolean_indexing_dynamic_shape_error():
    """IndexingTest.testBooleanIndexingDynamicShapeError: a traced mask under ``jit`` has a
    data-dependent shape; autodiff's ``ConcretizationError`` (a ``TypeError``) names the fix,
    where JAX raises ``IndexError``."""
    x = np.zeros(3)
    i = np.array([True, True, False])
    with pytest.raises(ConcretizationError, match="boolean mask"):
        jit(lambda x, i: x[i])(x, i)


def test_issue187():
    """IndexingTest.testIssue187."""
    x = np.arange(25.0).reshape((5, 5))
    assert_same(jit(lambda x: x[[0, 2, 4], [0, 2, 4]])(x), x[[0, 2, 4], [0, 2, 4]])
    assert_same(jvp(lambda x: x[[0, 2, 4], [0, 2, 4]], (x,), (x,))[0], x[[0, 2, 4], [0, 2, 4]])


def test_jvp_of_grad_of_indexing():
    """IndexingTest.testJVPOfGradOfIndexing: differentiating with respect to an integer
    index argument gives zero (JAX's float0 tangent)."""
    x = np.ones((3, 4), np.float32)
    i = np.ones((3,), np.int32)
    f = lambda x, i: anp.sum(x[i])
    primals, tangents = jvp(grad(f), (x, i), (x, np.zeros(i.shape, np.int32)))
    expected = np.broadcast_to(np.array([0, 3, 0], dtype=np.float32)[:, None], (3, 4))
    assert_same(primals, expected)
    assert_same(tangents, np.zeros_like(x))


def test_oob_empty_slice():
    """IndexingTest.testOOBEmptySlice."""
    for x, idx in [(np.arange(4.0), slice(1, 0)), (np.arange(4.0), slice(-2, -10)),
                   (np.arange(4.0), slice(5, 10)),
                   (np.arange(6.0).reshape(2, 3), slice(-1, -4)),
                   (np.arange(6.0).reshape(2, 3), (slice(None), slice(3, 2)))]:
        assert_same(jit(lambda x: x[idx])(x), x[idx])


def test_indexing_empty_dimension():
    """IndexingTest.testIndexingEmptyDimension."""
    x = np.ones((2, 0))
    f = lambda x: x[0, :] + x[0, None] + x[0, 1:] + x[0, 1:3:2]
    assert_same(jit(f)(x), f(x))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
        jvp(lambda x: x[0, 0], (x,), (x,))
    with pytest.raises(IndexError):
        jit(lambda x: x[0, 0])(x)


def test_non_static_slice_error_message():
    """IndexingTest.testNonStaticSliceErrorMessage: traced slice bounds raise an
    ``IndexError`` that points at ``lax.dynamic_slice``."""
    x = np.arange(5.0)
    with pytest.raises(IndexError, match="dynamic_slice"):
        jit(lambda x, i: x[i:i + 2])(x, 2)
    with pytest.raises(IndexError, match="dynamic_slice"):
        jit(lambda x, i: x.at[i:i + 2].set(0))(x, 2)


def test_boolean_indexing_shape_mismatch():
    """IndexingTest.testBooleanIndexingShapeMismatch."""
    with pytest.raises(IndexError, match="boolean index did not match"):
        jvp(lambda x: x[np.array([True, False])], (np.arange(4.0),), (np.ones(4),))


def test_nontrivial_boolean_indexing():
    """IndexingTest.testNontrivialBooleanIndexing: two masks, (2, 3) and (6,)."""
    rng = np.random.default_rng(10)
    index = (rng.random((2, 3)) < 0.5, rng.random((6,)) < 0.5)
    index[0][0, 0], index[0][1, 2] = True, True      # two True entries each: the shapes match
    index[1][:] = False
    index[1][[1, 4]] = True
    x = rand(rng, (2, 3, 6), np.int32)
    n = int(index[0].sum())
    index[1][:] = False
    index[1][np.arange(n) % 6] = True
    if index[1].sum() not in (1, n):
        pytest.skip("mask counts do not broadcast")
    assert_same(jit(lambda x: x[index])(x), x[index])


@pytest.mark.parametrize("x_shape,m_shape", [((3,), (0,)), ((3, 4), (0,)), ((3, 4), (0, 4)),
                                             ((3, 4), (3, 0)), ((3, 4, 5), (3, 0))])
def test_empty_boolean_indexing(x_shape, m_shape):
    """IndexingTest.testEmptyBooleanIndexing: the numpy reference raises here too for
    mismatched shapes; compare whatever numpy does."""
    x = rand(np.random.default_rng(11), x_shape, np.float64)
    m = np.empty(m_shape, dtype=bool)
    try:
        want = x[m]
    except IndexError:
        with pytest.raises(IndexError):
            jvp(lambda x: x[m], (x,), (x,))
        return
    assert_same(jvp(lambda x: x[m], (x,), (x,))[0], want)
    assert_same(jit(lambda x: x[m])(x), want)


_SCALAR_BOOL_IDX = [
    np.index_exp[True], np.index_exp[False], np.index_exp[..., True], np.index_exp[..., False],
    np.index_exp[0, :2, True], np.index_exp[0, :2, False], np.index_exp[:2, 0, True],
    np.index_exp[:2, 0, False], np.index_exp[:2, np.array([0, 2]), True],
    np.index_exp[np.array([1, 0]), :, True], np.index_exp[True, :, True, :, np.array(True)],
]


@pytest.mark.parametrize("idx", _SCALAR_BOOL_IDX, ids=[str(k) for k in range(11)])
def test_scalar_boolean_indexing(idx):
    """IndexingTest.testScalarBooleanIndexing."""
    x = rand(np.random.default_rng(12), (2, 3, 4, 5), np.int32)
    assert_same(jit(lambda x: x[idx])(x), x[idx])
    xf = x.astype(np.float64)
    assert_same(jvp(lambda x: x[idx], (xf,), (xf,))[0], xf[idx])


@pytest.mark.parametrize("idx", _SCALAR_BOOL_IDX, ids=[str(k) for k in range(11)])
@pytest.mark.parametrize("update_ndim", [0, 1, 2])
def test_scalar_bool_update(idx, update_ndim):
    """IndexingTest.testScalarBoolUpdate."""
    shape = (2, 3, 4, 5)
    update_shape = np.zeros(shape)[idx].shape[-update_ndim:] if update_ndim else ()
    rng = np.random.default_rng(13)
    x, u = rand(rng, shape, np.int32), rand(rng, update_shape, np.int32)
    want = x.copy()
    want[idx] = u
    assert_same(anp.at(x)[idx].set(u), want)
    assert_same(jit(lambda x, u: x.at[idx].set(u))(x, u), want)


@pytest.mark.parametrize("k", [0, 1])
def test_scalar_bool_with_traced_index_array(k):
    """IndexingTest.testScalarBooleanIndexing / testScalarBoolUpdate with the integer array
    traced: the 0-d mask broadcasts with it and is placed with it, as in numpy."""
    x = np.arange(120.).reshape(2, 3, 4, 5)
    i = np.array([0, 2]) if k == 0 else np.array([1, 0])
    build = [lambda i: (slice(None, 2), i, True), lambda i: (i, slice(None), True)][k]
    want = x[build(i)]
    assert_same(jit(lambda x, i: x[build(i)])(x, i), want)
    assert_same(jit(lambda x, i: x.at[build(i)].get(mode="fill"))(x, i), want)
    u = np.arange(want.size, dtype=float).reshape(want.shape)
    w = x.copy()
    w[build(i)] = u
    assert_same(jit(lambda x, i, u: x.at[build(i)].set(u))(x, i, u), w)


def test_float_indexing_error():
    """IndexingTest.testFloatIndexingError: a float index is refused (numpy's
    ``IndexError``; JAX's ``TypeError``), reads and updates, under ``jit`` too."""
    z = np.zeros((2, 2))
    for f in [lambda x: x[0.], lambda x: x[(0, 0.)], lambda x: x.at[0.].add(1.),
              lambda x: x.at[0.].set(1.), lambda x: x[np.arange(2), 1.0],
              lambda x: x[np.arange(2), 1 + 1j]]:
        with pytest.raises((IndexError, TypeError)):
            jit(f)(z)
    with pytest.raises((IndexError, TypeError)):
        jit(lambda x, i: x[i])(z, (0, 0.))


def test_str_indexing_error():
    """IndexingTest.testStrIndexingError."""
    with pytest.raises((IndexError, TypeError)):
        jit(lambda x: x['abc'])(np.zeros(2))
    with pytest.raises((IndexError, TypeError)):
        jit(lambda x: x[:, 'abc'])(np.zeros((2, 3)))


@pytest.mark.parametrize("mode", ["promise_in_bounds", "fill", "clip", "drop"])
@pytest.mark.parametrize("wrap", [True, False])
@pytest.mark.parametrize("shape", [(5,), (10,)])
def test_wrap_negative_indices_1d_get(mode, wrap, shape):
    """IndexingTest.testWrapNegativeIndices1D: ``.at[idx].get(mode=, fill_value=99,
    wrap_negative_indices=)`` with indices in [-12, 12)."""
    rng = np.random.default_rng(14)
    data = rand(rng, shape, np.float32)
    idx = rng.integers(-12, 12, (5,)).astype(np.int32)
    idx[:2] = [-1, 11]

    def np_fun(data, idx):
        if wrap:
            idx = np.where(idx < 0, idx + len(data), idx)
        oob = (idx < 0) | (idx >= len(data))
        result = data[np.where(oob, 0, idx)]
        if mode in ("fill", "drop"):
            return np.where(oob, np.float32(99), result)
        return np.where(idx < 0, data[0], np.where(idx >= len(data), data[-1], result))

    def anp_fun(data, idx):
        return anp.at(data)[idx].get(mode=mode, fill_value=99, wrap_negative_indices=wrap)

    # the index traced (promise_in_bounds with a concrete index out of bounds raises
    # numpy's IndexError, where JAX clamps)
    check_traced(np_fun, anp_fun, (data, idx), eager=mode != "promise_in_bounds",
                 vmap_argnums=(0, 1))
    if mode != "promise_in_bounds":
        assert_same(anp_fun(data, idx), np_fun(data, idx))


def test_index_out_of_bounds():
    """IndexingTest.testIndexOutOfBounds: ``mode='clip'`` and ``mode='fill'`` (NaN, the
    lowest int32, the highest uint32, or ``fill_value``)."""
    x = np.arange(5, dtype=np.int32) + 1
    assert_same(jit(lambda x: x[:10])(x), x)
    idx = np.array([-10, -6, -5, -4, 0, 3, 4, 5, 6, 100])
    nan, imin, umax = np.nan, np.iinfo(np.int32).min, np.iinfo(np.uint32).max
    cases = [
        (x, dict(mode="clip"), np.array([1, 1, 1, 2, 1, 4, 5, 5, 5, 5], np.int32)),
        (x.astype(np.float32), dict(mode="fill"),
         np.array([nan, nan, 1, 2, 1, 4, 5, nan, nan, nan], np.float32)),
        (x, dict(mode="fill"), np.array([imin, imin, 1, 2, 1, 4, 5, imin, imin, imin], np.int32)),
        (x.astype(np.uint32), dict(mode="fill"),
         np.array([umax, umax, 1, 2, 1, 4, 5, umax, umax, umax], np.uint32)),
        (x, dict(mode="fill", fill_value=7), np.array([7, 7, 1, 2, 1, 4, 5, 7, 7, 7], np.int32)),
    ]
    for arr, kw, want in cases:
        assert_same(anp.at(arr)[idx].get(**kw), want)
        assert_same(jit(lambda a, i: a.at[i].get(**kw))(arr, idx), want)


def test_indexing_type_promotion():
    """IndexingTest.testIndexingTypePromotion: ``.at[].set`` keeps the operand's dtype."""
    for xt, yt in [(np.int32, np.int32), (np.float32, np.float32), (np.complex64, np.complex64),
                   (np.int32, int), (np.float32, int), (np.float32, float),
                   (np.complex64, int), (np.complex64, float), (np.complex64, complex),
                   (np.int32, np.int16), (np.float32, np.float16), (np.float32, np.int32),
                   (np.complex64, np.int32), (np.complex64, np.float32)]:
        x = np.arange(5, dtype=xt)
        assert anp.at(x)[0].set(yt(0)).dtype == x.dtype
        assert jit(lambda x: x.at[0].set(yt(0)))(x).dtype == x.dtype


def test_wrong_number_of_indices():
    """IndexingTest.testWrongNumberOfIndices."""
    with pytest.raises(IndexError, match="too many indices"):
        jit(lambda x: x[0])(np.array(1.0))
    with pytest.raises(IndexError, match="too many indices"):
        jit(lambda x: x[:, 5])(np.zeros(3))


@pytest.mark.parametrize("shape", [(), (1,)])
def test_index_dtype_promotion(shape):
    """IndexingTest.testIndexDtypePromotion: an int8 index next to 999 (no overflow)."""
    numbers = np.arange(1000)[:, None]
    idx = np.int8(0).reshape(shape)
    want = np.array(999).reshape(shape)
    assert_same(jit(lambda n, i: n[999, i])(numbers, idx), want)
    assert_same(jit(lambda n: n[999, idx])(numbers), want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # log/sqrt of negative entries
@pytest.mark.parametrize("funcname", ["negative", "sin", "cos", "square", "sqrt", "log", "exp"])
def test_index_apply(funcname):
    """IndexingTest.testIndexApply: ``x.at[idx].apply(f)`` is ``f.at(x, idx)`` (repeated
    indices apply ``f`` repeatedly), with a traced integer index array and a slice."""
    size = 10
    rng = np.random.default_rng(15)
    x = rand(rng, size, np.float32)
    idx = rng.integers(-size, size, size)
    np_func, anp_func = getattr(np, funcname), getattr(anp, funcname)

    def np_op(x, idx):
        y = x.copy()
        with np.errstate(all="ignore"):
            np_func.at(y, idx)
        return y

    apply = lambda x, i: anp.asarray(x).at[i].apply(anp_func)
    if funcname == "sin":          # (each compiles a loop: one function under jit and vmap)
        check_traced(np_op, apply, (x, idx), eager=False, vmap_argnums=(0, 1))
    assert_same(anp.at(x)[idx].apply(anp_func), np_op(x, idx))
    sl = slice(1, 5)
    assert_same(anp.at(x)[sl].apply(anp_func), np_op(x, sl))
    assert_same(jit(lambda x: x.at[sl].apply(anp_func))(x), np_op(x, sl))


def test_index_apply_batching_bug():
    """IndexingTest.testIndexApplyBatchingBug."""
    arr = np.array([[1, 2, 3, 4, 5, 6]])
    ind = np.array([3])
    func = lambda a, i: a.at[i].apply(lambda x: x - 1)
    want = np.array([[1, 2, 3, 3, 5, 6]])
    assert_same(vmap(func)(arr, ind), want)
    assert_same(jit(vmap(func))(arr, ind), want)


def test_index_update_scalar_bug():
    """IndexingTest.testIndexUpdateScalarBug."""
    a = np.arange(10.)
    assert_same(anp.at(a)[0].apply(anp.cos), anp.at(a)[0].set(1))
    assert_same(jit(lambda a: a.at[0].apply(anp.cos))(a), anp.at(a)[0].set(1))


# ------------------------------------------------------------------------------------------
# IndexedUpdateTest: x.at[idx].set/add/subtract/multiply/divide/power/min/max
# ------------------------------------------------------------------------------------------

OPS = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]


def np_update(op, indexer, x, y):
    """JAX's UpdateOps.np_fn: numpy's assignment and ufunc.at."""
    x = np.array(x, copy=True)
    y = np.asarray(y)
    with np.errstate(all="ignore"):
        if op == "set":
            x[indexer] = y
        elif op in ("min", "max"):
            getattr(np, {"min": "minimum", "max": "maximum"}[op]).at(x, indexer,
                                                                    y.astype(x.dtype))
        else:
            getattr(np, op).at(x, indexer, y)
    return x


def at_update(op, indexer, x, y, **kw):
    """JAX's UpdateOps.jax_fn."""
    ref = (x.at if hasattr(x, "at") else anp.at(x))[indexer]
    return getattr(ref, op)(y, **kw)


def _op_dtypes(op, k):
    """(dtype, update dtype) for case ``k``: JAX's UpdateOps.dtypes and _compatible_dtypes
    (same dtype for add/subtract; a dtype that casts safely otherwise), rotated."""
    if op in ("divide", "power"):
        pairs = [(np.float32, np.float32), (np.float64, np.float32), (np.float64, np.float64),
                 (np.complex128, np.float64)]
    elif op in ("add", "subtract"):
        pairs = [(np.float32, np.float32), (np.int32, np.int32), (np.float64, np.float64),
                 (np.uint8, np.uint8)]
    elif op == "set":
        pairs = [(np.float32, np.float32), (np.int32, np.int8), (np.bool_, np.bool_),
                 (np.float64, np.int32), (np.uint8, np.uint8)]
    else:
        pairs = [(np.float32, np.float32), (np.int32, np.int8), (np.float64, np.float32),
                 (np.int8, np.int8), (np.uint8, np.bool_)]
    return pairs[k % len(pairs)]


def _broadcastable_shapes(shape):
    """Shapes that broadcast to ``shape`` (JAX's helper): the shape itself, its trailing
    part, and with size-1 axes."""
    def f(rshape):
        yield []
        if rshape:
            for s in f(rshape[1:]):
                yield rshape[0:1] + s
            if rshape[0] != 1:
                for s in f(rshape[1:]):
                    yield [1] + s
    for x in f(list(reversed(shape))):
        yield tuple(reversed(x))


def _update_cases(table, modes=(None,), per_spec=2):
    """``per_spec`` ops per index spec (every op over the table); the dtypes, the update
    shape and the mode rotate over the candidates."""
    out = []
    k = 0
    for name, specs in table:
        for spec in specs:
            shapes = list(_broadcastable_shapes(spec.out_shape))
            for j in range(per_spec):
                op = OPS[(k + j * 3) % len(OPS)]
                dt, ut = _op_dtypes(op, k)
                mode = modes[k % len(modes)]
                ush = shapes[k % len(shapes)]
                out.append(pytest.param(spec.shape, spec.indexer, op, dt, ut, ush, mode,
                                        id=f"{name}-{len(out)}-{op}-{mode}"))
                k += 1
    return out


def _check_update(shape, indexer, op, dtype, update_dtype, update_shape, traced_index=False,
                  **kw):
    rng = np.random.default_rng(len(shape) * 8 + OPS.index(op))
    x, y = rand(rng, shape, dtype), rand(rng, update_shape, update_dtype)
    if op in ("divide", "power"):
        y = np.abs(y) + np.asarray(1, y.dtype)          # keep numpy's reference finite
        x = (np.abs(x) + 1).astype(x.dtype)             # (and real: no negative ** fraction)
    want = np_update(op, indexer, x, y)
    tol = 1e-5 if op == "power" else None
    assert_same(at_update(op, indexer, x, y, **kw), want, tol)
    assert_same(jit(lambda x, y: at_update(op, indexer, x, y, **kw))(x, y), want, tol)
    if traced_index:
        assert_same(jit(lambda x, y, i: at_update(op, i, x, y, **kw))(x, y, indexer), want, tol)
    xs = np.stack([x, x])
    got = vmap(lambda x, y: at_update(op, indexer, x, y, **kw), in_axes=(0, None))(xs, y)
    assert_same(got[1], want, tol)


@pytest.mark.parametrize("shape,indexer,op,dtype,update_dtype,update_shape,mode",
                         _update_cases(STATIC_INDEXING_TESTS, modes=MODES, per_spec=1))
def test_update_static_indexing(shape, indexer, op, dtype, update_dtype, update_shape, mode):
    """IndexedUpdateTest.testStaticIndexing (every op; modes clip/drop/promise_in_bounds)."""
    _check_update(shape, indexer, op, dtype, update_dtype, update_shape, mode=mode)


@pytest.mark.parametrize("shape,indexer,op,dtype,update_dtype,update_shape,mode",
                         _update_cases(ADVANCED_INDEXING_TESTS_NO_REPEATS, per_spec=2))
def test_update_advanced_indexing(shape, indexer, op, dtype, update_dtype, update_shape, mode):
    """IndexedUpdateTest.testAdvancedIndexing (``unique_indices=True``), the index traced
    too."""
    _check_update(shape, indexer, op, dtype, update_dtype, update_shape, traced_index=True,
                  unique_indices=True)


@pytest.mark.parametrize("shape,indexer,op,dtype,update_dtype,update_shape,mode",
                         _update_cases(ADVANCED_INDEXING_TESTS_NO_REPEATS_SORTED, per_spec=2))
def test_update_advanced_indexing_sorted(shape, indexer, op, dtype, update_dtype, update_shape,
                                         mode):
    """IndexedUpdateTest.testAdvancedIndexingSorted (``indices_are_sorted=True``,
    ``unique_indices=True``)."""
    _check_update(shape, indexer, op, dtype, update_dtype, update_shape, traced_index=True,
                  indices_are_sorted=True, unique_indices=True)


@pytest.mark.parametrize("shape,indexer,op,dtype,update_dtype,update_shape,mode",
                         _update_cases(MIXED_ADVANCED_INDEXING_TESTS_NO_REPEATS, per_spec=2))
def test_update_mixed_advanced_indexing(shape, indexer, op, dtype, update_dtype, update_shape,
                                        mode):
    """IndexedUpdateTest.testMixedAdvancedIndexing; the index arrays also traced."""
    _check_update(shape, indexer, op, dtype, update_dtype, update_shape)
    rng = np.random.default_rng(1)
    x, y = rand(rng, shape, dtype), rand(rng, update_shape, update_dtype)
    if op in ("divide", "power"):
        x, y = (np.abs(x) + 1).astype(x.dtype), np.abs(y) + np.asarray(1, y.dtype)
    arrays = [e if isinstance(e, np.ndarray) else () for e in indexer]
    build = lambda a: tuple(t if isinstance(e, np.ndarray) else e for t, e in zip(a, indexer))
    got = jit(lambda x, y, a: at_update(op, build(a), x, y))(x, y, arrays)
    assert_same(got, np_update(op, indexer, x, y), 1e-5 if op == "power" else None)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", ["fill", "clip"])
@pytest.mark.parametrize("wrap", [True, False])
@pytest.mark.parametrize("size", [5, 10])
def test_update_wrap_negative_indices_1d(op, mode, wrap, size):
    """IndexedUpdateTest.testWrapNegativeIndices1D: unique indices, some negative, one past
    each end; ``wrap_negative_indices`` decides whether negatives count from the end."""
    rng = np.random.default_rng(size)
    data = rand(rng, (size,), np.float32).round(1)
    update = rand(rng, (5,), np.float32).round(1)
    if op in ("divide", "power"):
        data, update = np.abs(data) + 1, np.abs(update) + 1
    idx = rng.permutation(size)[:5].astype(np.int32)
    idx = np.where(rng.random(5) < 0.5, idx, idx - size)
    idx[idx == size - 1] = size + 2
    idx[idx == -size] = -(size + 2)

    def np_fun(data, idx, values):
        if wrap:
            idx = np.where(idx < 0, idx + len(data), idx)
        if mode == "fill":
            ok = (idx >= 0) & (idx < len(data))
            idx, values = idx[ok], values[ok]
        else:
            idx = np.clip(idx, 0, len(data) - 1)
        return np_update(op, idx, data, values)

    def anp_fun(data, idx, values):
        return at_update(op, idx, data, values, mode=mode, wrap_negative_indices=wrap)

    want = np_fun(data, idx, update)
    if mode == "clip" and len(set(np.clip(np.where(idx < 0, idx + size, idx) if wrap else idx,
                                          0, size - 1))) < 5 and op == "set":
        want = None          # clipped duplicates: which write wins is unspecified
    for got in [anp_fun(data, idx, update), jit(anp_fun)(data, idx, update)]:
        if want is not None:
            assert_same(got, want, 1e-5)


_UPDATE_GRAD_CASES = [
    pytest.param(s, i, op, mode, id=f"{op}-{mode}-{p.id}")
    for m, mode in enumerate([None] + MODES)
    for k, p in enumerate(_cases(STATIC_INDEXING_TESTS if mode in ("promise_in_bounds", None)
                                 else STATIC_INDEXING_TESTS + STATIC_INDEXING_OUT_OF_BOUNDS_TESTS))
    for s, i in [p.values]
    for op in [["add", "subtract", "multiply", "set"][(k + m) % 4]]
]


@pytest.mark.parametrize("shape,indexer,op,mode", _UPDATE_GRAD_CASES)
def test_update_static_indexing_grads(shape, indexer, op, mode):
    """IndexedUpdateTest.testStaticIndexingGrads (one op per (case, mode), rotating over
    add/subtract/multiply/set), second order, in the operand and the updates."""
    rng = np.random.default_rng(3)
    x = rand(rng, shape, np.float64)
    y = rand(rng, anp.at(np.zeros(shape))[indexer].get(mode="clip").shape, np.float64)
    fun = lambda x, y: at_update(op, indexer, x, y, mode=mode, unique_indices=True)
    ad.check_grads(fun, (x, y), order=2, rtol=1e-3, atol=1e-3, eps=1.)


def _adv_update_grad_cases():
    out = []
    for unique in (False, True):
        table = ADVANCED_INDEXING_TESTS_NO_REPEATS if unique else ADVANCED_INDEXING_TESTS
        ops = ["add", "subtract", "multiply", "set"] if unique else ["add", "subtract"]
        k = 0
        for p in _cases(table):
            s, i = p.values
            op = ops[k % len(ops)]
            k += 1
            out.append(pytest.param(s, i, op, unique, id=f"{op}-{unique}-{p.id}"))
    return out


@pytest.mark.parametrize("shape,indexer,op,unique", _adv_update_grad_cases())
def test_update_advanced_indexing_grads(shape, indexer, op, unique):
    """IndexedUpdateTest.testAdvancedIndexingGrads."""
    rng = np.random.default_rng(4)
    x = rand(rng, shape, np.float64)
    y = rand(rng, np.zeros(shape)[indexer].shape, np.float64)
    fun = lambda x, y: at_update(op, indexer, x, y, unique_indices=unique)
    ad.check_grads(fun, (x, y), order=2, rtol=1e-3, atol=1e-3, eps=1.)


def test_index_mul_grad_with_repeated_indices():
    """IndexedUpdateTest.testIndexMulGradFailsIfNotUnique: JAX refuses the derivative of a
    multiply with repeated indices; autodiff computes it (every factor of a position)."""
    y = np.ones((10,), np.int32)
    rng = np.random.default_rng(5)
    x, z = rng.standard_normal(100), rng.standard_normal(10)
    f = lambda x, z: x.at[y].multiply(z) if hasattr(x, "at") else anp.at(x)[y].multiply(z)
    ad.check_grads(f, (x, z), order=2, modes=("fwd", "rev"))
    want = x.copy()
    np.multiply.at(want, y, z)
    assert_same(jit(f)(x, z), want)


def test_segment_sum_behavior():
    """IndexedUpdateTest.testSegmentSumBehavior: ``.at[ids].add`` with repeated ids."""
    data = np.array([5, 1, 7, 2, 3, 4, 1, 3], dtype=float)
    segment_ids = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    want = np.array([13, 2, 7, 4], dtype=float)
    assert_same(anp.at(np.zeros(4))[segment_ids].add(data), want)
    assert_same(jit(lambda d, s: anp.zeros(4).at[s].add(d))(data, segment_ids), want)


def test_segment_sum():
    """IndexedUpdateTest.testSegmentSum."""
    data = np.array([5, 1, 7, 2, 3, 4, 1, 3])
    ids = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    assert_same(ad.ops.segment_sum(data, ids, num_segments=4), np.array([13, 2, 7, 4]))
    assert_same(ad.ops.segment_sum(data, ids, num_segments=5), np.array([13, 2, 7, 4, 0]))
    assert_same(ad.ops.segment_sum(data, ids), np.array([13, 2, 7, 4]))
    assert_same(jit(lambda d, s: ad.ops.segment_sum(d, s, num_segments=4))(data, ids),
                np.array([13, 2, 7, 4]))


def test_segment_sum_out_of_bounds():
    """IndexedUpdateTest.testSegmentSumOutOfBounds: out-of-range ids are dropped, and so is
    their gradient."""
    def fn(data, segment_ids):
        return ad.ops.segment_sum(data, segment_ids, 2).sum()

    data = np.array([0, 0], dtype=np.float32)
    val, g = ad.value_and_grad(fn)(data, np.array([2, 3]))
    assert_same(val, np.array(0., np.float32))
    assert_same(g, np.array([0., 0.], np.float32))


def test_index_dtype_error():
    """IndexedUpdateTest.testIndexDtypeError: no warning for a strided slice update."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(anp.at(np.zeros(5))[::2].set(1), np.array([1., 0, 1, 0, 1]))
        assert_same(jit(lambda x: x.at[::2].set(1))(np.zeros(5)), np.array([1., 0, 1, 0, 1]))


def test_indexed_update_aliasing_bug():
    """IndexedUpdateTest.testIndexedUpdateAliasingBug: the update reads the old array."""
    fn = lambda x: x.at[1:].set(1 + x[:-1]) if hasattr(x, "at") else \
        anp.at(x)[1:].set(1 + x[:-1])
    y = np.zeros(8)
    assert_same(jit(fn)(y), fn(y))
    assert_same(fn(y), np.array([0., 1, 1, 1, 1, 1, 1, 1]))


def test_scatter_values_cast_to_target_dtype():
    """IndexedUpdateTest.testScatterValuesCastToTargetDType: 2**32 - 1 into uint32."""
    a = np.zeros(1, dtype=np.uint32)
    val = 2**32 - 1
    for v in (np.uint32(val), val):
        assert int(anp.at(a)[0].set(v)[0]) == val
        assert int(jit(lambda a: a.at[0].set(v))(a)[0]) == val


def test_grad_of_vmap_of_scatter():
    """IndexedUpdateTest.testGradOfVmapOfScatter: jacrev of a clipped read, vmapped."""
    def f(x, i):
        return x.at[i].get(mode='clip') if hasattr(x, "at") else anp.at(x)[i].get(mode='clip')

    x = np.array([1.0])
    i = np.array([1])
    want = np.array([[1.0]])
    assert_same(ad.jacrev(f)(x, i), want)
    assert_same(ad.jacrev(vmap(f, (None, 0)))(x, i), want)


@pytest.mark.parametrize("shape,idx", [
    ((2,), -4), ((2,), 4), ((2, 3), np.index_exp[:, 4]), ((2, 3), np.index_exp[..., -4]),
    ((2, 3, 5), np.index_exp[3, :, 0]), ((2, 3, 5), np.index_exp[:5, :, 6]),
    ((2, 3, 5), np.index_exp[:, [1, 2], 6]), ((2, 3, 5), np.index_exp[np.arange(3), 6, None]),
])
def test_out_of_bound_indices(shape, idx):
    """ValidateIndicesTest.test_out_of_bound_indices: a concrete index out of bounds raises
    numpy's ``IndexError`` (eagerly on traced values, under jit, and from ``.at[].get()``),
    JAX's behaviour under ``jax_check_static_indices``."""
    arr = np.zeros(shape)
    with pytest.raises(IndexError, match="out of bounds"):
        jvp(lambda x: x[idx], (arr,), (arr,))
    with pytest.raises(IndexError, match="out of bounds"):
        jit(lambda x: x[idx])(arr)
    with pytest.raises(IndexError, match="out of bounds"):
        anp.at(arr)[idx].get()
    with pytest.raises(IndexError, match="out of bounds"):
        jit(lambda x: x.at[idx].get())(arr)


# ------------------------------------------------------------------------------------------
# lax_numpy_test.py: take, take_along_axis, put, put_along_axis
# ------------------------------------------------------------------------------------------

_TAKE_CASES = [pytest.param(shape, axis, ishape, dt, it, mode,
                            id=f"{shape}-{axis}-{ishape}-{np.dtype(dt).name}-{mode}")
               for k, (shape, axis, ishape, mode) in enumerate(
                   (shape, axis, ishape, mode)
                   for shape in [(3,), (3, 4), (3, 4, 5)]
                   for axis in list(range(-len(shape), len(shape))) + [None]
                   for ishape in [(), (3,), (2, 1, 3)]
                   for mode in [None, "wrap", "clip"])
               if k % 3 == 0
               for dt, it in [((np.float32, np.int32, np.bool_, np.int64, np.float64)[k % 5],
                               (np.int32, np.int64, np.int8, np.uint8)[k % 4])]]


@pytest.mark.parametrize("shape,axis,index_shape,dtype,index_dtype,mode", _TAKE_CASES)
def test_take(shape, axis, index_shape, dtype, index_dtype, mode):
    """LaxBackedNumpyTests.testTake (a third of the (shape, axis, index shape, mode)
    products): modes None (indices in bounds), 'wrap' and 'clip' (indices in [-5, 5))."""
    rng = np.random.default_rng(20)
    x = rand(rng, shape, dtype)
    n = shape[axis or 0] if axis is not None else math.prod(shape)
    lo, hi = (-n, n) if mode is None else (-5, 5)
    if np.dtype(index_dtype).kind == "u":
        lo = 0
    i = np.asarray(rng.integers(lo, hi, index_shape)).astype(index_dtype)
    np_op = lambda x, i: np.take(x, i, axis=axis, mode=mode or "raise")
    anp_op = lambda x, i: anp.take(x, i, axis=axis, mode=mode)
    check_traced(np_op, anp_op, (x, i), vmap_argnums=(0, 1))
    assert_same(anp_op(x, i), np_op(x, i))


def test_take_empty():
    """LaxBackedNumpyTests.testTakeEmpty."""
    f = jit(lambda x, i: anp.take(x, i))
    assert_same(f(np.array([], np.float32), np.array([], np.int32)), np.array([], np.float32))
    f1 = jit(lambda x, i: anp.take(x, i, axis=1))
    assert_same(f1(np.ones((2, 0, 4), np.float32), np.array([], np.int32)),
                np.ones((2, 0, 4), np.float32))
    with pytest.raises(IndexError):
        f1(np.ones((2, 0, 4), np.float32), np.array([0], np.int32))


def test_take_optional_args():
    """LaxBackedNumpyTests.testTakeOptionalArgs: ``fill_value`` fills the index 6."""
    x = np.arange(5.0)
    ind = np.array([0, 2, 4, 6])
    want = np.array([0.0, 2.0, 4.0, 10.0])
    kw = dict(unique_indices=True, indices_are_sorted=True, fill_value=10.0)
    assert_same(anp.take(x, ind, **kw), want)
    assert_same(jit(lambda x, i: anp.take(x, i, **kw))(x, ind), want)


_TAL_SHAPES = [((3,), (3,)), ((3, 4), (3, 4)), ((3, 4), (1, 4)), ((3, 4), (3, 1)),
               ((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (1, 3, 1)), ((1, 4), (3, 4))]


@pytest.mark.parametrize("x_shape,i_shape", _TAL_SHAPES)
@pytest.mark.parametrize("axis_k", [0, 1, 2])
def test_take_along_axis(x_shape, i_shape, axis_k):
    """LaxBackedNumpyTests.testTakeAlongAxis: axis in range, -1 or None; the index axis
    three times as long; int and uint index dtypes."""
    axes = list(range(len(x_shape))) + [-1, None]
    axis = axes[(axis_k * 2 + len(x_shape)) % len(axes)]
    k = len(x_shape) + axis_k
    dtype = (np.float32, np.int32, np.float64, np.int8)[k % 4]
    index_dtype = (np.int32, np.uint8, np.int64, np.int16)[k % 4]
    rng = np.random.default_rng(k)
    i_shape = list(i_shape)
    if axis is None:
        i_shape = [math.prod(i_shape)]
    else:
        i_shape[axis] *= 3
    x = rand(rng, x_shape, dtype)
    n = math.prod(x_shape) if axis is None else x_shape[axis]
    lo = 0 if np.dtype(index_dtype).kind == "u" else -n
    i = rng.integers(lo, n, i_shape).astype(index_dtype)
    np_op = lambda x, i: np.take_along_axis(x, i, axis=axis)
    anp_op = lambda x, i: anp.take_along_axis(x, i, axis=axis)
    check_traced(np_op, anp_op, (x, i), vmap_argnums=(0, 1))


def test_take_along_axis_default_axis():
    """LaxBackedNumpyTests.testTakeAlongAxisDefaultAxis (numpy 2's default ``axis=-1``)."""
    rng = np.random.default_rng(21)
    arr = rand(rng, (10, 20), np.float32)
    indices = rng.integers(0, 20, (10, 30)).astype(np.uint8)
    q0 = jit(lambda a, i: anp.take_along_axis(a, i, axis=-1))(arr, indices)
    q1 = jit(lambda a, i: anp.take_along_axis(a, i))(arr, indices)
    assert_same(q0, q1)
    assert_same(q1, np.take_along_axis(arr, indices, axis=-1))


@pytest.mark.parametrize("idx_dtype,lo", [(np.int8, -100), (np.uint8, 0)])
def test_take_along_axis_small_int_indices(idx_dtype, lo):
    """LaxBackedNumpyTests.testTakeAlongAxisWithInt8Indices,
    ...PromiseInBoundsWithInt8Indices, ...WithUint8IndicesDoesNotOverflow (smaller shapes):
    indices near the axis length of 100 in a narrow dtype."""
    rng = np.random.default_rng(22)
    h = rand(rng, (4, 5, 100), np.float32)
    g = rng.integers(lo, 99, (4, 5, 1)).astype(idx_dtype)
    want = np.take_along_axis(h, g, axis=-1)
    assert_same(jit(lambda h, g: anp.take_along_axis(h, g, axis=-1))(h, g), want)
    assert_same(jit(lambda h, g: anp.take_along_axis(h, g, axis=-1, mode="promise_in_bounds",
                                                     wrap_negative_indices=True))(h, g), want)


def test_take_along_axis_singleton_dimension():
    """LaxBackedNumpyTests.testTakeAlongAxisInputTensorHasSingletonDimension."""
    rng = np.random.default_rng(23)
    h = rand(rng, (2, 1, 5, 7, 13), np.float32)
    g = rng.integers(0, 7, (2, 3, 5, 11, 1)).astype(np.uint8)
    assert_same(jit(lambda h, g: anp.take_along_axis(h, g, axis=-2))(h, g),
                np.take_along_axis(h, g, axis=-2))


@pytest.mark.parametrize("mode,wrap,want", [
    (None, None, [30, 20]), ("clip", True, [30, 20]), ("promise_in_bounds", True, [30, 20]),
    ("clip", False, [10, 10])])
def test_take_along_axis_wrap_negative_indices(mode, wrap, want):
    """LaxBackedNumpyTests.testTakeAlongAxisWrapNegativeIndices and
    ...ClipNoWrapNegativeIndices."""
    x = np.array([10, 20, 30])
    idx = np.array([-1, -2])
    kw = {} if mode is None else dict(mode=mode)
    if wrap is not None:
        kw["wrap_negative_indices"] = wrap
    assert_same(anp.take_along_axis(x, idx, axis=0, **kw), np.array(want))
    assert_same(jit(lambda x, i: anp.take_along_axis(x, i, axis=0, **kw))(x, idx),
                np.array(want))


def test_take_along_axis_out_of_bounds():
    """LaxBackedNumpyTests.testTakeAlongAxisOutOfBounds: ``mode='fill'`` (NaN) and
    ``'clip'``; JAX's default mode is 'fill', autodiff's is numpy's (a concrete index out
    of bounds raises ``IndexError``, a traced one is clamped)."""
    x = np.arange(10, dtype=np.float32)
    idx = np.array([-11, -10, -9, -5, -1, 0, 1, 5, 9, 10, 11])
    nan = np.nan
    fill = np.array([nan, 0, 1, 5, 9, 0, 1, 5, 9, nan, nan], np.float32)
    clip = np.array([0, 0, 1, 5, 9, 0, 1, 5, 9, 9, 9], np.float32)
    for mode, want in [("fill", fill), ("clip", clip)]:
        assert_same(anp.take_along_axis(x, idx, axis=0, mode=mode), want)
        assert_same(jit(lambda x, i: anp.take_along_axis(x, i, axis=0, mode=mode))(x, idx),
                    want)
        assert_same(vmap(lambda x, i: anp.take_along_axis(x, i, axis=0, mode=mode))(
            np.stack([x, x]), np.stack([idx, idx]))[1], want)
    with pytest.raises(IndexError):
        jvp(lambda x: anp.take_along_axis(x, idx, axis=0), (x,), (x,))
    assert_same(jit(lambda x, i: anp.take_along_axis(x, i, axis=0))(x, idx), clip)
    # a filled entry has a zero derivative
    g = grad(lambda x: anp.sum(anp.take_along_axis(x, idx, axis=0, mode="fill",
                                                   fill_value=0.0)))(x)
    assert_same(g, np.array([2, 2, 0, 0, 0, 2, 0, 0, 0, 2], np.float32))


def test_take_along_axis_requires_int_indices():
    """LaxBackedNumpyTests.testTakeAlongAxisRequiresIntIndices (also under jit)."""
    x = np.arange(5)
    idx = np.array([3.], np.float32)
    with pytest.raises((TypeError, IndexError)):
        anp.take_along_axis(x, idx, axis=0)
    with pytest.raises(TypeError, match="integer type, got float32"):
        jit(lambda x, i: anp.take_along_axis(x, i, axis=0))(x, idx)


def test_take_along_axis_with_empty_args():
    """LaxBackedNumpyTests.testTakeAlongAxisWithEmptyArgs."""
    x = np.ones((4, 0, 3), dtype=np.int32)
    assert_same(jit(lambda x: anp.take_along_axis(x, x, axis=1))(x), x)


def test_take_along_axis_optional_args():
    """LaxBackedNumpyTests.testTakeAlongAxisOptionalArgs."""
    x = np.arange(5.0)
    ind = np.array([0, 2, 4, 6])
    want = np.array([0.0, 2.0, 4.0, 10.0])
    assert_same(anp.take_along_axis(x, ind, axis=None, mode='fill', fill_value=10.0), want)
    assert_same(jit(lambda x, i: anp.take_along_axis(x, i, axis=None, mode='fill',
                                                     fill_value=10.0))(x, ind), want)


def test_take_along_axis_issue1521():
    """LaxBackedNumpyTests.testTakeAlongAxisIssue1521: gradient through repeated indices."""
    idx = np.repeat(np.arange(3), 10).reshape((30, 1))

    def f(x):
        y = x * anp.arange(3.).reshape((1, 3))
        return anp.sum(anp.take_along_axis(y, idx, -1))

    ad.check_grads(f, (1.,), order=1)
    assert_same(grad(f)(1.), np.float64(30.0))


_PUT_SHAPES = [((4,), (), ()), ((4,), (3,), (3,)), ((3, 4), (2, 3), (1,)), ((3, 4), (5,), (5,)),
               ((2, 3, 4), (2, 2), (2, 2)), ((3, 4), (0,), ())]


@pytest.mark.parametrize("a_shape,i_shape,v_shape", _PUT_SHAPES)
@pytest.mark.parametrize("mode", [None, "wrap", "clip"])
def test_put(mode, a_shape, i_shape, v_shape):
    """LaxBackedNumpyTests.testPut: unique indices, some out of range for 'clip' and
    'wrap'; ``inplace=False``."""
    size = math.prod(a_shape)
    k = len(a_shape) + len(i_shape)
    dtype = (np.float32, np.int32, np.float64, np.bool_, np.complex64)[k % 5]
    rng = np.random.default_rng(24 + k)
    a, v = rand(rng, a_shape, dtype), rand(rng, v_shape, dtype)
    i = np.asarray(rng.permutation(size)[:math.prod(i_shape)].reshape(i_shape), np.int32)
    if mode == "clip" and i.size:
        np.put(i, np.argmax(i), size + 2)
        np.put(i, np.argmin(i), -2)
    if mode == "wrap" and i.size:
        np.put(i, 0, np.take(i, 0) + size)
    want = a.copy()
    np.put(want, i, v, mode=mode or "raise")
    f = lambda a, i, v: anp.put(a, i, v, mode=mode, inplace=False)
    assert_same(f(a, i, v), want)
    assert_same(jit(f)(a, i, v), want)


_PAL_CASES = [((4,), 0, (2,)), ((3, 4), 1, (3, 2)), ((3, 4), -2, (1, 4)),
              ((2, 3, 4), 2, (2, 3, 3)),
              ((3, 4), None, (5,)), ((2, 3), 0, (0, 3))]


@pytest.mark.parametrize("a_shape,axis,i_shape", _PAL_CASES)
@pytest.mark.parametrize("v_kind", ["scalar", "one", "full"])
@pytest.mark.parametrize("mode", [None, "promise_in_bounds", "clip"])
def test_put_along_axis(a_shape, axis, i_shape, v_kind, mode):
    """LaxBackedNumpyTests.testPutAlongAxis: indices unique along the axis,
    ``inplace=False``."""
    k = len(a_shape) + len(i_shape)
    dtype = (np.float32, np.int32, np.float64, np.bool_)[k % 4]
    rng = np.random.default_rng(30 + k)
    size = math.prod(a_shape) if axis is None else a_shape[axis]
    ax = 0 if axis is None else axis % len(a_shape)
    a = rand(rng, a_shape, dtype)
    perm = np.argsort(rng.random(i_shape[:ax] + (size,) + i_shape[ax + 1:]), axis=ax)
    i = np.take(perm, np.arange(i_shape[ax]), axis=ax)
    v = rand(rng, {"scalar": (), "one": (1,), "full": i_shape}[v_kind], dtype)
    want = a.copy()
    np.put_along_axis(want, i, v, axis=axis)
    f = lambda a, i, v: anp.put_along_axis(a, i, v, axis=axis, inplace=False, mode=mode)
    assert_same(f(a, i, v), want)
    assert_same(jit(f)(a, i, v), want)


def test_scatter_apply_repeated_indices():
    """``lax.scatter_apply`` (what ``.at[].apply`` lowers to in JAX) applies ``func`` once
    per update: an element written twice gets it twice, as numpy's ``ufunc.at``."""
    dn = ad.lax.ScatterDimensionNumbers((), (0,), (0,))
    f = lambda x, i: ad.lax.scatter_apply(x, i, lambda v: v * 10, dn, update_shape=(3,))
    x, i = np.arange(4.0), np.array([[1], [3], [3]])
    want = np.array([0., 10., 2., 300.])
    assert_same(f(x, i), want)
    assert_same(jit(f)(x, i), want)
    ad.check_grads(lambda x: f(x, i), (x,), order=2)


def test_index_apply_grad():
    """``.at[idx].apply`` is differentiable (JAX's is not): repeated and traced indices."""
    x = np.random.default_rng(25).standard_normal(6)
    for idx in [np.array([1, 3, 3, 0, 3]), slice(1, 4)]:
        ad.check_grads(lambda x: anp.at(x)[idx].apply(anp.sin), (x,), order=2)
    i = np.array([1, 3, 3, 0, 3, 5, 5])
    f = jit(lambda x, i: x.at[i].apply(anp.sin))
    ad.check_grads(lambda x: f(x, i), (x,), order=1)
    y = x.copy()
    np.sin.at(y, i)
    assert_same(f(x, i), y)


def test_traced_index_into_empty_axis():
    """IndexingTest.testIndexingEmptyDimension / testTakeEmpty under ``jit``: a traced index
    into an axis of length 0 is out of bounds whatever its value; the compiled gather used
    to read past the empty buffer and return garbage of shape (2, 1, 4)."""
    x = np.ones((2, 0, 4), np.float32)
    i = np.array([0], np.int32)
    for f in [lambda x, i: anp.take(x, i, axis=1), lambda x, i: x[:, i],
              lambda x, i: x[0, i[0]]]:
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
            jit(f)(x, i)
    filled = jit(lambda x, i: x.at[:, i].get(mode="fill", fill_value=3.0))(x, i)
    assert_same(filled, np.full((2, 1, 4), 3.0, np.float32))


def test_put_along_axis_clip_out_of_bounds():
    """LaxBackedNumpyTests.testPutAlongAxis's ``mode='clip'`` with an index past the end
    (JAX clamps it, as ``.at[].set(mode='clip')``)."""
    a = np.zeros((2, 3))
    i, v = np.array([[0], [5]]), np.array([[1.], [2.]])
    want = np.array([[1., 0, 0], [0, 0, 2]])
    f = lambda a, i, v: anp.put_along_axis(a, i, v, axis=1, inplace=False, mode="clip")
    assert_same(jit(f)(a, i, v), want)
    assert_same(f(a, i, v), want)


@pytest.mark.parametrize("reducer,op,identity", [
    ("segment_sum", np.add, 0), ("segment_prod", np.multiply, 1),
    ("segment_min", np.minimum, np.inf), ("segment_max", np.maximum, -np.inf),
    ("segment_min", np.minimum, True), ("segment_max", np.maximum, False)])
@pytest.mark.parametrize("shape,num_segments,bucket_size", [
    ((8,), None, None), ((7, 4), 1, 2), ((6, 4, 2), 3, None), ((7, 4), 3, 2)])
def test_segment_reduce(reducer, op, identity, shape, num_segments, bucket_size):
    """IndexedUpdateTest.testSegmentReduce and testSegmentReduceBoolean (the booleans are
    the rows with a boolean identity); ids in [-2, 3), out-of-range ones dropped."""
    dtype = np.bool_ if isinstance(identity, bool) else (np.float32, np.int32)[len(shape) % 2]
    rng = np.random.default_rng(len(shape) + (num_segments or 0))
    data = rand(rng, shape, dtype)
    ids = rng.integers(-2, 3, shape[:1]).astype(np.int32)
    if np.dtype(dtype).kind in "iu" and np.isinf(identity):
        identity = np.iinfo(dtype).max if identity > 0 else np.iinfo(dtype).min
    size = num_segments if num_segments is not None else ids.max() + 1
    want = np.full((size,) + shape[1:], identity, dtype)
    for i, val in zip(ids, data):
        if 0 <= i < size:
            want[i] = op(want[i], val).astype(dtype)
    f = getattr(ad.ops, reducer)
    g = lambda d, s: f(d, s, num_segments=num_segments, bucket_size=bucket_size)
    assert_same(g(data, ids), want)
    if num_segments is not None:
        assert_same(jit(g)(data, ids), want)
