"""Port of JAX's ``jax.numpy`` API tests: ``tests/lax_numpy_test.py`` (class
``LaxBackedNumpyTests`` and ``NumpyGradTests``), ``tests/lax_numpy_einsum_test.py`` and
``tests/polynomial_test.py`` of jax-ml/jax.

``jax`` became ``ad``, ``jnp`` ``anp``, ``jtu.check_grads`` ``ad.check_grads``; each test cites
the JAX test it ports. Every value is compared with numpy (JAX's own reference) eagerly and
traced (``ad.jit(f, backend="interpret")``: autodiff's implementation run by the reference
interpreter); a handful also under the Numba ``ad.jit``. Derivatives use ``ad.check_grads``
where JAX checks them, and where a function is differentiable and users differentiate it
(pad, concatenate, einsum, polyval, interp, ...). Shapes are small and dtypes a rotation
over JAX's lists (float64, float32, int32, bool, complex128) so the file stays fast.

Not ported: the ``take``/``take_along_axis``/``put``/``put_along_axis`` tests (in
``test_jax_indexing_port.py``); the reductions and elementwise op records and the
elementwise value tests (ldexp/frexp/logaddexp/hypot/integer power/special float values:
ported with ``lax_numpy_reducers_test``/``lax_numpy_operators_test``); tests of devices,
sharding, weak types, dtype-promotion and rank-promotion modes, jaxpr contents
(``testMatmulBothSize1BatchDimsSqueezedJaxpr``, ``testMixedPrecisionDot``,
``testArangeJaxpr``, ``testWhereExtraCode``, ``testReluGradientConstants``,
``testRepeatScalarFastPath``, ``test_no_unnecessary_transpose``,
``test_preferred_element_type``, ``test_einsum_mixed_precision``'s primitive list,
``testPrecision``/``testPreferredElementType``), ``numpy_dispatch``, transfer guards,
int4/bfloat16 views and byte-level methods (``view``, ``byteswap``, ``astype`` of intN),
the docstring/signature-matching tests of JAX's wrappers, deprecation warnings of JAX's
own API history, and ``testArangeComplex`` (JAX refuses complex bounds; numpy and
autodiff accept them).

Where numpy and JAX differ autodiff follows numpy (docs/porting.md): integer
``convolve``/``polyder`` keep numpy's integer dtype, ``searchsorted``/``digitize`` return
int64, ``roots`` is real when every root is. Deliberate differences and bugs in files
other than this port's are ``xfail(strict=True)`` with their reason.
"""
import itertools
import zlib
from functools import partial

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

F32, F64, C128, I32, I64 = np.float32, np.float64, np.complex128, np.int32, np.int64


def rng_for(*key):
    """A generator seeded from the test's parameters (reproducible, distinct per case)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def rand(rng, shape, dtype=F64, scale=3.0):
    """JAX's ``rand_default``: scaled normals, rounded for integers, coin flips for bools."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    x = rng.standard_normal(shape) * scale
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape) * scale
    if dtype.kind in "iu":
        x = np.round(np.abs(x) if dtype.kind == "u" else x)
    return np.asarray(x).astype(dtype)


def traced(f, **kw):
    """``f`` through the tracer (autodiff's implementation), run by the reference
    interpreter."""
    return ad.jit(f, backend="interpret", **kw)


def assert_close(got, want, tol=None, check_dtype=True):
    """Same structure, shape (and dtype) and values as numpy's result; NaN equals NaN."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_close(g, w, tol, check_dtype)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if check_dtype:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc" or got.dtype.kind in "fc":
        if tol is None:
            single = np.float32 in (got.dtype, want.dtype) or np.complex64 in (got.dtype,
                                                                               want.dtype)
            tol = 1e-5 if single else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def check(np_fun, anp_fun, args, tol=None, check_dtype=True, jit=False, eager=True):
    """``anp_fun(*args)`` against ``np_fun(*args)``: eagerly, traced, and (``jit``) under the
    Numba ``ad.jit``."""
    want = np_fun(*args)
    if eager:
        assert_close(anp_fun(*args), want, tol, check_dtype)
    assert_close(traced(anp_fun)(*args), want, tol, check_dtype)
    if jit:
        assert_close(ad.jit(anp_fun)(*args), want, tol, check_dtype)


def grads(f, args, order=2, tol=None, modes=("fwd", "rev")):
    """``ad.check_grads`` with JAX's float64 tolerance default for these tests."""
    ad.check_grads(f, args, order=order, modes=modes, atol=tol or 1e-5, rtol=tol or 1e-5)


# ------------------------------------------------------------------------ einsum
# tests/lax_numpy_einsum_test.py: EinsumTest

EINSUM_CASES = [
    ("i,j,k->ijk", [(3,), (4,), (5,)]),             # test_three_operands_1/2
    ("ij,j->i", [(3, 4), (4,)]),                    # test_two_operands_1
    ("ijk,j->i", [(3, 4, 5), (4,)]),                # test_two_operands_2
    ("iji,i->j", [(3, 4, 3), (3,)]),                # test_two_operands_3
    ("ij,ij->", [(3, 4), (3, 4)]),                  # test_two_operands_4
    ("nij,jk->nik", [(10, 2, 3), (3, 4)]),          # test_two_operands_5
    ("sa,shb->shab", [(2, 1), (2, 3, 4)]),          # test_two_operands_6
    ("ijk->j", [(3, 4, 5)]),                        # test_one_operand_1
    ("ijk->kij", [(3, 4, 5)]),                      # test_one_operand_2
    ("ijk->ki", [(3, 4, 5)]),                       # test_one_operand_3/4
    ("...ijk->...ki", [(2, 3, 4, 5)]),              # test_one_operand_5
    ("...ijk->ki", [(3, 4, 5)]),                    # test_one_operand_6
    ("ii->", [(3, 3)]),                             # test_one_operand_7
    ("ij->", [(3, 3)]),                             # test_one_operand_8
    ("iii->", [(3, 3, 3)]),                         # test_one_operand_9
    ("ii->i", [(3, 3)]),                            # test_one_operand_10
    ("iij->i", [(3, 3, 4)]),                        # test_one_operand_11
    ("iii->i", [(3, 3, 3)]),                        # test_one_operand_12
    ("iijkk->i", [(3, 3, 5, 4, 4)]),                # test_one_operand_13
    ("iijkk->ik", [(3, 3, 5, 4, 4)]),               # test_one_operand_14
    ("iijkl->il", [(3, 3, 5, 4, 4)]),               # test_one_operand_15
    ("ij->ij", [(3, 3)]),                           # test_one_operand_16
    ("ij...,jk...->ik...", [(2, 3, 5, 1), (3, 4, 5, 1)]),  # test_tf_unsupported_1
    ("ijj,k->ik", [(2, 3, 3), (4,)]),               # test_tf_unsupported_2
    ("ij,ij,jk->ik", [(2, 3), (2, 3), (3, 4)]),     # test_tf_unsupported_3
    ("ijkl,ijml->ijkm", [(1, 8, 20, 4), (1, 8, 20, 4)]),  # test_ordered_front_batch_dim_case
    ("cij,cjk->cik", [(3, 4, 5), (3, 5, 6)]),
    ("cij,cjk->cik", [(1, 4, 5), (3, 5, 6)]),       # test_batch_broadcasting
    ("...ij,...j", [(2, 1, 3, 3), (2, 4, 3)]),      # test_broadcasting_issue_2189
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_cases(spec, shapes):
    """EinsumTest.test_three_operands_*/two_operands_*/one_operand_*/tf_unsupported_*,
    test_ordered_front_batch_dim_case, test_batch_broadcasting, test_broadcasting_issue_2189:
    ``anp.einsum`` against ``np.einsum``."""
    rng = rng_for(spec, shapes)
    ops = [rng.standard_normal(s) for s in shapes]
    check(partial(np.einsum, spec), partial(anp.einsum, spec), ops)


@pytest.mark.parametrize("spec,shapes", [
    ("cij,cjk->cik", [(3, 4, 5), (3, 1, 6)]),
    ("cij,cjk->cik", [(1, 4, 5), (3, 1, 6)]),
])
def test_einsum_contraction_broadcasting(spec, shapes):
    """EinsumTest.test_contraction_broadcasting / test_batch_and_contraction_broadcasting: a
    size-1 contracted axis broadcasts against the other operand's (numpy refuses these, so the
    reference sums the broadcast operands by hand)."""
    rng = rng_for(spec, shapes)
    x, y = (rng.standard_normal(s) for s in shapes)
    n = max(x.shape[0], y.shape[0])
    j = max(x.shape[2], y.shape[1])
    xb = np.broadcast_to(x, (n, x.shape[1], j))
    yb = np.broadcast_to(y, (n, j, y.shape[2]))
    want = np.einsum(spec, xb, yb)
    assert_close(anp.einsum(spec, x, y), want)
    assert_close(traced(partial(anp.einsum, spec))(x, y), want)


DASK = ['abc,bad->abcd', 'abcdef,bcdfg->abcdeg', 'ea,fb,abcd,gc,hd->efgh', 'ab,b', 'aa',
        'a,a->', 'a,a->a', 'a,a', 'a,b', 'a,b,c', 'a', 'ba,b', 'ba,b->', 'defab,fedbc->defac',
        'ab...,bc...->ac...', 'a...a', 'abc...->cba...', '...ab->...a', 'a...a->a...',
        '...abc,...abcd->...d', 'ab...,b->ab...', 'aa->a', 'ab,ab,c->c', 'aab,bc->ac',
        'aab,bcc->ac', 'fdf,cdd,ccd,afe->ae', 'fff,fae,bef,def->abd']


@pytest.mark.parametrize("einstr", DASK)
def test_einsum_from_dask(einstr):
    """EinsumTest.test_from_dask: the dask patterns, dtypes rotated over float32/int32/
    complex128/bool."""
    dtype = [F32, I32, C128, np.bool_][DASK.index(einstr) % 4]
    rng = rng_for(einstr)
    inputs = einstr.split("->")[0].split(",")
    dims = itertools.cycle([2, 3, 4])
    sizes = {}
    ops = []
    for names in inputs:
        shape = []
        for c in names.replace("...", "01"):
            if c not in sizes:
                sizes[c] = next(dims)
            shape.append(sizes[c])
        ops.append(rand(rng, tuple(shape), dtype))
    check(partial(np.einsum, einstr), partial(anp.einsum, einstr), ops, tol=1e-4)


def test_einsum_kpmurphy_example():
    """EinsumTest.test_einsum_kpmurphy_example / test_einsum_path: a three-operand
    contraction along the path ``einsum_path`` picks, against explicit loops."""
    rng = rng_for("murphy")
    N, C, D, K, T = 2, 3, 4, 5, 6
    S, W, V = (rng.standard_normal(s) for s in [(N, T, K), (K, D), (D, C)])
    L = np.zeros((N, C))
    for n, c, d, k, t in itertools.product(range(N), range(C), range(D), range(K), range(T)):
        L[n, c] += S[n, t, k] * W[k, d] * V[d, c]
    path = anp.einsum_path('ntk,kd,dc->nc', S, W, V, optimize='optimal')[0]
    assert path[0] == 'einsum_path'
    assert_close(anp.einsum('ntk,kd,dc->nc', S, W, V, optimize=path), L)
    f = traced(lambda s, w, v: anp.einsum('ntk,kd,dc->nc', s, w, v, optimize=path))
    assert_close(f(S, W, V), L)


def test_einsum_inf_nan():
    """EinsumTest.test_inf_nan: a diagonal of infinities is taken, not multiplied by 0."""
    x = np.array([[[np.inf, np.inf], [1.0, 1.0]]])
    check(partial(np.einsum, 'baa->ba'), partial(anp.einsum, 'baa->ba'), [x])


@pytest.mark.parametrize("lhs,rhs", [(F32, I32), (I32, np.bool_), (F64, C128),
                                     (np.int8, np.uint8)])
def test_einsum_mixed_precision(lhs, rhs):
    """EinsumTest.test_einsum_mixed_precision: result dtype and values of mixed operands."""
    rng = rng_for(lhs, rhs)
    x, y = rand(rng, (10,), lhs), rand(rng, (10,), rhs)
    check(partial(np.einsum, 'a,a->a'), partial(anp.einsum, 'a,a->a'), [x, y])


OPT_SIGS = [('i->', [(3,)]), ('ii->i', [(4, 4)]), ('ij,jk', [(3, 4), (4, 3)]),
            ('ij,jkl,klm', [(2, 2), (2, 3, 4), (3, 4, 2)])]


@pytest.mark.parametrize("optimize", [True, False, 'optimal', 'auto', 'greedy', 'eager'])
@pytest.mark.parametrize("sig,shapes", OPT_SIGS, ids=[s for s, _ in OPT_SIGS])
def test_einsum_optimization_modes(sig, shapes, optimize):
    """EinsumTest.test_einsum_optimization_modes / test_einsum_path_optimization_modes."""
    rng = rng_for(sig, optimize)
    ops = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(sig, *ops)
    assert_close(anp.einsum(sig, *ops, optimize=optimize), want)
    assert_close(traced(lambda *a: anp.einsum(sig, *a, optimize=optimize))(*ops), want)
    path, _ = anp.einsum_path(sig, *ops, optimize=optimize)
    assert_close(traced(lambda *a: anp.einsum(sig, *a, optimize=path))(*ops), want)


def test_einsum_unsupported_optimization():
    """EinsumTest.test_einsum_unsupported_optimization: JAX refuses a path step that contracts
    three operands at once; autodiff follows numpy and computes it."""
    rng = rng_for("unsupported")
    arrs = [rng.standard_normal(s) for s in [(2, 3), (2, 4), (2, 5)]]
    want = np.einsum('ij,ik,il->jkl', *arrs)
    got = anp.einsum('ij,ik,il->jkl', *arrs, optimize=['einsum_path', (0, 1, 2)])
    assert_close(got, want)


@pytest.mark.parametrize("spec,shapes", [("ij,jk->ik", [(3, 4), (4, 2)]),
                                         ("ii->i", [(3, 3)]),
                                         ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                                         ("i,j,k->ijk", [(2,), (3,), (2,)])])
def test_einsum_grads(spec, shapes):
    """Derivatives of einsum (JAX checks them through the op's linearity in its
    ``_CompileAndCheck``): ``check_grads`` in both modes, second order."""
    rng = rng_for("grad", spec)
    ops = tuple(rng.standard_normal(s) for s in shapes)
    grads(partial(anp.einsum, spec), ops)


def test_einsum_jit():
    """A few einsum patterns under the Numba ``ad.jit``."""
    rng = rng_for("einsum-jit")
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    assert_close(ad.jit(partial(anp.einsum, "ij,jk->ik"))(x, y), x @ y)
    assert_close(ad.jit(partial(anp.einsum, "ij->ji"))(x), x.T)


# ------------------------------------------------------------------------ polynomial_test.py

def _sets_close(x, y, tol=1e-5):
    """The same multiset of (complex) values, NaN matching NaN: a greedy nearest match."""
    x, y = list(np.asarray(x).ravel()), list(np.asarray(y).ravel())
    assert len(x) == len(y), (x, y)
    for v in x:
        if np.isnan(v):
            k = next(i for i, w in enumerate(y) if np.isnan(w))
        else:
            d = [abs(v - w) if not np.isnan(w) else np.inf for w in y]
            k = int(np.argmin(d))
            assert d[k] <= tol * max(1.0, abs(v)), (x, y)
        y.pop(k)


@pytest.mark.parametrize("dtype", [F64, F32, I32, C128])
@pytest.mark.parametrize("length,leading,trailing",
                         [(0, 0, 0), (3, 0, 0), (5, 2, 0), (3, 0, 2), (5, 2, 2), (0, 2, 2)])
def test_roots(dtype, length, leading, trailing):
    """TestPolynomial.testRoots: roots of a polynomial with leading/trailing zeros."""
    rng = rng_for("roots", dtype, length, leading, trailing)
    p = rand(rng, (length,), dtype)
    if length:
        p[0] = p[0] if p[0] != 0 else 1
    p = np.concatenate([np.zeros(leading, p.dtype), p, np.zeros(trailing, p.dtype)])
    want = np.roots(p)
    tol = 1e-3 if dtype == F32 else 1e-6
    _sets_close(anp.roots(p), want, tol)


@pytest.mark.parametrize("dtype", [F64, I32, C128])
@pytest.mark.parametrize("length,leading,trailing",
                         [(3, 0, 0), (5, 2, 0), (3, 0, 2), (5, 2, 2)])
def test_roots_no_strip(dtype, length, leading, trailing):
    """TestPolynomial.testRootsNoStrip: ``strip_zeros=False`` gives ``len(p) - 1`` roots, the
    leading zeros' slots NaN; traceable (a fixed output shape)."""
    rng = rng_for("roots-nostrip", dtype, length, leading, trailing)
    p = rand(rng, (length,), dtype)
    p[0] = p[0] if p[0] != 0 else 1
    p = np.concatenate([np.zeros(leading, p.dtype), p, np.zeros(trailing, p.dtype)])
    want = np.roots(p).astype(np.complex128)
    want = np.pad(want, (0, len(p) - len(want) - 1), constant_values=complex(np.nan, np.nan))
    f = partial(anp.roots, strip_zeros=False)
    _sets_close(f(p), want)
    _sets_close(traced(f)(p), want)


# ------------------------------------------------------------------------ lax_numpy_test.py
# LaxBackedNumpyTests; dtypes rotate over a short list per case.

SHAPES = [(), (4,), (3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4)]
NONZERODIM = [(4,), (3, 4), (2, 3, 4), (0,), (0, 4), (3, 0)]
DTYPES = [F64, F32, I32, np.bool_, C128, np.uint8, I64]


def rot(seq, i):
    """The ``i``-th item of ``seq``, cycling: a rotation of dtypes over parametrized cases."""
    return seq[i % len(seq)]


def some_zero(rng, shape, dtype):
    """JAX's ``rand_some_zero``: about half the entries zero."""
    x = rand(rng, shape, dtype)
    return np.where(rng.random(shape) < 0.5, np.zeros((), x.dtype), x)


@pytest.mark.parametrize("shape", SHAPES)
def test_unstack(shape):
    """testUnstack: ``unstack`` splits along an axis; a scalar raises ValueError."""
    for i, axis in enumerate(range(-len(shape), len(shape))):
        x = rand(rng_for(shape, axis), shape, rot(DTYPES, i))
        want = tuple(np.moveaxis(x, axis, 0))
        check(lambda a: tuple(np.moveaxis(a, axis, 0)), partial(anp.unstack, axis=axis), [x])
        assert len(anp.unstack(x, axis=axis)) == len(want)
    if shape == ():
        with pytest.raises(ValueError):
            anp.unstack(np.float64(1.0))


def test_array_equal_examples():
    """testArrayEqualExamples / testArrayEquivExamples: numpy's docstring examples."""
    assert anp.array_equal([1, 2], [1, 2])
    assert anp.array_equal(np.array([1, 2]), np.array([1, 2]))
    assert not anp.array_equal([1, 2], [1, 2, 3])
    assert not anp.array_equal([1, 2], [1, 4])
    a = np.array([1, np.nan])
    assert not anp.array_equal(a, a)
    assert anp.array_equal(a, a, equal_nan=True)
    a = np.array([1 + 1j])
    b = a.copy()
    a.real = np.nan
    b.imag = np.nan
    assert anp.array_equal(a, b, equal_nan=True)
    f = traced(lambda x, y: anp.array_equal(x, y, equal_nan=True))
    assert bool(f(a, b))
    assert not bool(traced(anp.array_equal)(np.array([1.0, 2.0]), np.array([1.0, 3.0])))
    assert anp.array_equiv([1, 2], [1, 2])
    assert not anp.array_equiv([1, 2], [1, 3])
    assert anp.array_equiv([1, 2], [[1, 2], [1, 2]])
    assert not anp.array_equiv([1, 2], [[1, 2, 1, 2], [1, 2, 1, 2]])
    assert not anp.array_equiv([1, 2], [[1, 2], [1, 3]])
    assert bool(traced(anp.array_equiv)(np.array([1, 2]), np.array([[1, 2], [1, 2]])))


@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
@pytest.mark.parametrize("discont,period", [(None, 2 * np.pi), (np.pi, np.pi), (2, 2),
                                            (None, 4)])
def test_unwrap(shape, discont, period):
    """testUnwrap: ``unwrap`` along every axis, with ``discont`` and ``period``; a float
    derivative."""
    for i, axis in enumerate(range(-len(shape), len(shape))):
        dtype = rot([F64, I32, F32], i)
        x = rand(rng_for(shape, axis, discont, period), shape, dtype)
        f = partial(anp.unwrap, axis=axis, discont=discont, period=period)
        check(partial(np.unwrap, axis=axis, discont=discont, period=period), f, [x])
    if shape == (5,):
        x = np.array([0.1, 3.0, 6.1, -2.0, 0.5])
        grads(partial(anp.unwrap, discont=discont, period=period), (x,), order=1)


@pytest.mark.parametrize("shape", SHAPES + [(0,), (3, 0)])
def test_count_nonzero(shape):
    """testCountNonzero: over every axis and over all."""
    for i, axis in enumerate([None] + list(range(-len(shape), len(shape)))):
        x = some_zero(rng_for(shape, axis), shape, rot(DTYPES, i))
        check(lambda a: np.count_nonzero(a, axis), lambda a: anp.count_nonzero(a, axis), [x],
              check_dtype=False)


@pytest.mark.parametrize("shape", NONZERODIM)
def test_nonzero_flatnonzero_argwhere(shape):
    """testNonzero / testFlatNonzero / testArgWhere: concrete outputs; under a trace with a
    static ``size``."""
    for i, dtype in enumerate([F64, I32, np.bool_]):
        x = some_zero(rng_for(shape, i), shape, dtype)
        assert_close(anp.nonzero(x), np.nonzero(x), check_dtype=False)
        assert_close(anp.flatnonzero(x), np.flatnonzero(x), check_dtype=False)
        assert_close(anp.argwhere(x), np.argwhere(x), check_dtype=False)
        half = x.size // 2
        f = traced(lambda a: anp.flatnonzero(a, size=half))
        want = np.flatnonzero(x)[:half]
        want = np.concatenate([want, np.zeros(half - len(want), want.dtype)])
        assert_close(f(x), want, check_dtype=False)
        g = traced(lambda a: anp.argwhere(a, size=half))
        want = np.argwhere(x)[:half]
        want = np.concatenate([want, np.zeros((half - len(want), x.ndim), want.dtype)])
        assert_close(g(x), want, check_dtype=False)


def _pad_to(result, size, fill):
    """JAX's reference for ``size=``/``fill_value=``: truncate or fill each index array."""
    if size <= len(result[0]):
        return tuple(r[:size] for r in result)
    fills = fill if np.ndim(fill) else [fill or 0] * len(result)
    return tuple(np.concatenate([r, np.full(size - len(r), f, r.dtype)])
                 for f, r in zip(fills, result))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
@pytest.mark.parametrize("size", [1, 5, 10])
def test_nonzero_size(shape, size):
    """testNonzeroSize / testFlatNonzeroSize / testArgWhereSize: ``size`` and
    ``fill_value`` (scalar and per dimension), eager and traced."""
    for i, fill in enumerate([None, -1, shape]):
        x = some_zero(rng_for(shape, size, i), shape, rot([F64, I32, np.bool_], size + i))
        want = _pad_to(np.nonzero(x), size, fill)
        f = partial(anp.nonzero, size=size, fill_value=fill)
        check(lambda a: want, f, [x], check_dtype=False)
        if fill is not shape:
            flat = _pad_to((np.flatnonzero(x),), size, fill)[0]
            check(lambda a: flat, partial(anp.flatnonzero, size=size, fill_value=fill), [x],
                  check_dtype=False)
        aw = np.stack(want, axis=-1)
        check(lambda a: aw, partial(anp.argwhere, size=size, fill_value=fill), [x],
              check_dtype=False)


CROSS = [
    [(2,), (2,), (-1, -1, -1, None)], [(2, 4), (2, 4), (-1, -1, -1, 0)],
    [(3, 4), (3, 4), (-1, -1, -1, 0)], [(3, 4), (3, 6, 5, 4), (-1, -1, -1, 0)],
    [(2, 3), (2, 3), (-1, -1, -1, None)], [(3,), (3,), (-1, -1, -1, None)],
    [(4, 3), (4, 3), (-1, -1, -1, None)], [(6, 1, 3), (5, 3), (-1, -1, -1, None)],
    [(10, 5, 2, 8), (1, 5, 1, 3), (-2, -1, -3, None)], [(4, 5, 2), (4, 5, 2), (-1, -1, 0, None)],
    [(4, 5, 3), (4, 5, 3), (-1, -1, 0, None)],
]


@pytest.mark.parametrize("i", range(len(CROSS)))
def test_cross(i):
    """testCross: axisa/axisb/axisc/axis, broadcasting, 2-vectors; derivatives."""
    lhs, rhs, (axisa, axisb, axisc, axis) = CROSS[i]
    rng = rng_for("cross", i)
    dt = rot([F64, F32, I32, C128], i)
    a, b = rand(rng, lhs, dt), rand(rng, rhs, rot([F64, I32], i))
    f = lambda a, b: anp.cross(a, b, axisa, axisb, axisc, axis)  # noqa: E731

    def np_fun(a, b):
        ea, eb, ec = (axisa, axisb, axisc) if axis is None else (axis, axis, axis)
        a_m, b_m = np.moveaxis(a, ea, -1), np.moveaxis(b, eb, -1)
        if a_m.shape[-1] == 2 and b_m.shape[-1] == 2:
            return a_m[..., 0] * b_m[..., 1] - a_m[..., 1] * b_m[..., 0]
        return np.cross(a_m, b_m, axisc=ec)
    check(np_fun, f, [a, b], tol=1e-4)
    if dt == F64 and np.dtype(b.dtype) == F64:
        grads(f, (a, b), order=1)


DOT_SHAPES = [((3, 3), ()), ((), (3, 3)), ((4, 5), (5,)), ((6,), (6, 4)), ((3, 4), (4, 5)),
              ((4, 3, 2), (2,)), ((2,), (3, 2, 4)), ((4, 3, 2), (2, 5)), ((5, 2), (3, 2, 4)),
              ((2, 3, 4), (5, 4, 1))]
PAIRS = [(F64, F64), (F32, F32), (I32, I32), (C128, F64), (I32, F64), (np.bool_, np.bool_),
         (F32, I32)]


@pytest.mark.parametrize("k", range(len(DOT_SHAPES)))
def test_dot(k):
    """testDot: shapes from scalar to tensor, dtype pairs rotated; derivatives."""
    ls, rs = DOT_SHAPES[k]
    for j in range(2):
        ld, rd = rot(PAIRS, k + j)
        rng = rng_for("dot", k, j)
        x, y = rand(rng, ls, ld), rand(rng, rs, rd)
        check(np.dot, anp.dot, [x, y], tol=1e-4)
    x, y = rand(rng, ls), rand(rng, rs)
    grads(anp.dot, (x, y), order=1)


MATMUL = [((3,), (3,)), ((3, 3), (3,)), ((3,), (3, 3)), ((3, 3), (3, 3)), ((3,), (5, 3, 2)),
          ((5, 3, 2), (2,)), ((5, 2), (3, 2, 4)), ((5, 2, 3), (3, 2)), ((5, 3, 4), (5, 4, 1)),
          ((3, 1, 3, 4), (5, 4, 1)), ((1, 5, 4), (1, 4, 3))]


@pytest.mark.parametrize("k", range(len(MATMUL)))
def test_matmul(k):
    """testMatmul: vector/matrix/tensor operands with batch broadcasting; derivatives."""
    ls, rs = MATMUL[k]
    for j in range(2):
        ld, rd = rot(PAIRS, k + j)
        rng = rng_for("matmul", k, j)
        x, y = rand(rng, ls, ld), rand(rng, rs, rd)
        check(np.matmul, anp.matmul, [x, y], tol=1e-4)
    x, y = rand(rng, ls), rand(rng, rs)
    grads(anp.matmul, (x, y), order=1)
    if k in (3, 9):
        assert_close(ad.jit(anp.matmul)(x, y), np.matmul(x, y))




@pytest.mark.parametrize("lb,rb", [((), ()), ((1,), (3,)), ((1, 3), (4, 1)), ((4, 3), (3,)),
                                   ((4, 1), ())])
def test_vecdot_matvec_vecmat(lb, rb):
    """testVecdot / testMatvec / testVecmat: batch broadcasting, every axis, conjugation of
    the first operand for complex inputs."""
    rng = rng_for("vecdot", lb, rb)
    size = min(len(lb), len(rb))
    for i, axis in enumerate(range(-2, 2)):
        axis = int(np.clip(axis, -size - 1, size))
        if axis >= 0:
            ls, rs = (*lb[:axis], 3, *lb[axis:]), (*rb[:axis], 3, *rb[axis:])
        else:
            la, ra = axis + len(lb) + 1, axis + len(rb) + 1
            ls, rs = (*lb[:la], 3, *lb[la:]), (*rb[:ra], 3, *rb[ra:])
        dt = rot([F64, C128, I32], i)
        x, y = rand(rng, ls, dt), rand(rng, rs, dt)
        check(partial(np.vecdot, axis=axis), partial(anp.vecdot, axis=axis), [x, y])
    for dt in (F64, C128):
        m, v = rand(rng, (*lb, 2, 3), dt), rand(rng, (*rb, 3), dt)
        check(np.matvec, anp.matvec, [m, v])
        v2, m2 = rand(rng, (*lb, 2), dt), rand(rng, (*rb, 2, 3), dt)
        check(np.vecmat, anp.vecmat, [v2, m2])
    x, y = rand(rng, (*lb, 3)), rand(rng, (*rb, 3))
    grads(anp.vecdot, (x, y), order=1)


TENSORDOT = [[(3,), (), 0], [(2, 3, 4), (5, 6, 7), 0], [(2, 3, 4), (3, 4, 5, 6), 2],
             [(2, 3, 4), (5, 4, 3, 6), [1, 2]], [(2, 3, 4), (5, 4, 3, 6), [[1, 2], [2, 1]]],
             [(1, 2, 3, 4), (4, 5, 3, 6), [[2, 3], [2, 0]]]]


@pytest.mark.parametrize("k", range(len(TENSORDOT)))
def test_tensordot(k):
    """testTensordot: integer, pair and list-of-lists ``axes``; derivatives."""
    ls, rs, axes = TENSORDOT[k]
    ld, rd = rot(PAIRS, k)
    rng = rng_for("tensordot", k)
    x, y = rand(rng, ls, ld), rand(rng, rs, rd)
    check(lambda a, b: np.tensordot(a, b, axes), lambda a, b: anp.tensordot(a, b, axes), [x, y],
          tol=1e-4)
    x, y = rand(rng, ls), rand(rng, rs)
    grads(lambda a, b: anp.tensordot(a, b, axes), (x, y), order=1)


def test_tensordot_errors():
    """testTensordotErrors: bad ``axes`` raise TypeError (too many axes; unequal lists;
    non-integer entries; a string). Plain numpy inputs run numpy's own tensordot, whose
    errors are numpy's; the traced implementation raises JAX's TypeErrors."""
    a = np.ones((3, 2, 2))
    b = np.ones((2,))
    f = traced(lambda a, b, axes: anp.tensordot(a, b, axes), static_argnums=2)
    with pytest.raises(TypeError, match="exceeds input ranks"):
        f(a, b, 2)
    with pytest.raises(TypeError, match="equal length"):
        f(a, b, ((0,), (0, 1)))
    with pytest.raises(TypeError, match="ints"):
        f(a, b, ('bad', 'axes'))
    with pytest.raises(TypeError, match="must be an int"):
        f(a, b, 'badaxes')


@pytest.mark.parametrize("ls,rs", [((), ()), ((), (3, 4)), ((4,), (4,)), ((3, 4), (4,)),
                                   ((3, 4), (2, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 4))])
def test_inner_outer(ls, rs):
    """testInner (and ``outer``/``vdot``/``kron``, which JAX checks with its op records):
    values and derivatives."""
    rng = rng_for("inner", ls, rs)
    for dt in (F64, C128, F32):
        x, y = rand(rng, ls, dt), rand(rng, rs, dt)
        check(np.inner, anp.inner, [x, y], tol=1e-4)
        check(np.outer, anp.outer, [x, y], tol=1e-4)
        check(np.kron, anp.kron, [x, y], tol=1e-4)
        if ls == rs:
            check(np.vdot, anp.vdot, [x, y], tol=1e-4)
    x, y = rand(rng, ls), rand(rng, rs)
    grads(anp.inner, (x, y), order=1)
    grads(anp.kron, (x, y), order=1)


@pytest.mark.parametrize("deg", [1, 2, 3])
@pytest.mark.parametrize("num_rhs", [1, 5])
@pytest.mark.parametrize("w", [False, True])
def test_polyfit(deg, num_rhs, w):
    """testPolyfit: ``deg``, several right-hand sides, weights, ``rcond``, ``full=True``
    (coefficients, rank, singular values, rcond) and ``cov``."""
    rng = rng_for("polyfit", deg, num_rhs, w)
    shape = (12,)
    x = rand(rng, shape)
    y = rand(rng, shape + (num_rhs,) if num_rhs > 1 else shape)
    a = np.abs(rand(rng, shape)) if w else None
    for rcond in [None, 10e-5]:
        kw = dict(deg=deg, rcond=rcond, w=a)
        check(lambda x, y: np.polyfit(x, y, **kw), lambda x, y: anp.polyfit(x, y, **kw), [x, y],
              tol=1e-8)
    np_p, _, nrank, nsv, nrcond = np.polyfit(x, y, deg, full=True, w=a)
    for f in (anp.polyfit, traced(anp.polyfit, static_argnames=("deg", "full"))):
        p, _, rank, sv, rc = f(x, y, deg=deg, full=True, w=a)
        assert_close((p, rank, sv, rc), (np_p, nrank, nsv, nrcond), tol=1e-8, check_dtype=False)
    for cov in (True, "unscaled"):
        if num_rhs == 1 and len(x) > deg + 3:
            assert_close(anp.polyfit(x, y, deg, w=a, cov=cov), np.polyfit(x, y, deg, w=a, cov=cov),
                         tol=1e-8)
    grads(lambda y: anp.polyfit(x, y, deg, w=a), (y,), order=1)


CLIP_BOUNDS = [(-1, None), (None, 1), (-0.9, 1), (-np.ones(1), None), (None, np.ones(1)),
               (np.full(1, -0.9), np.ones(1))]


@pytest.mark.parametrize("k", range(len(CLIP_BOUNDS)))
@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4), (0, 4)])
def test_clip_static_bounds(k, shape):
    """testClipStaticBounds / testClipNone: ``min``/``max`` scalars and arrays, either
    absent; unsigned bounds taken absolute; derivative of the float case."""
    lo, hi = CLIP_BOUNDS[k]
    dtype = rot([F64, F32, I32, np.uint8], k + len(shape))
    if np.dtype(dtype).kind == "u":
        lo = None if lo is None else abs(lo)
        hi = None if hi is None else abs(hi)
    x = rand(rng_for("clip", k, shape), shape, dtype)
    check(lambda x: np.clip(x, lo, hi), lambda x: anp.clip(x, min=lo, max=hi), [x],
          check_dtype=False)
    assert_close(anp.clip(x), x)
    if dtype == F64 and x.size:
        grads(lambda x: anp.clip(x, min=lo, max=hi), (x,), order=1)


def test_clip_complex_and_precedence():
    """testClipUpperPrecedence: when ``min > max`` the upper bound wins, as in numpy."""
    x = np.ones(5, np.complex128)
    a_min, a_max, x = 3 * np.ones(1), 2 * np.ones(1), 4 * np.ones(1)
    check(lambda x: np.clip(x, a_min, a_max), lambda x: anp.clip(x, min=a_min, max=a_max), [x])


@pytest.mark.parametrize("shape", [(), (4,), (3, 4)])
@pytest.mark.parametrize("decimals", [0, 1, -2])
def test_round_static_decimals(shape, decimals):
    """testRoundStaticDecimals / testRoundLargeDecimals: ``round`` and ``around``, negative
    decimals, integers, complex; large decimals leave the values."""
    for i, dtype in enumerate([F64, F32, I32, C128]):
        if np.dtype(dtype).kind == "i" and decimals < 0:
            continue
        x = rand(rng_for("round", shape, decimals, i), shape, dtype)
        check(lambda x: np.round(x, decimals), lambda x: anp.round(x, decimals), [x])
        check(lambda x: np.around(x, decimals), lambda x: anp.around(x, decimals), [x])
    x = rand(rng_for("round-large"), (10,))
    np.testing.assert_allclose(anp.round(x, 10), x, atol=2e-10)
    for d in (10, 100):
        np.testing.assert_allclose(traced(lambda v: anp.round(v, d))(x), x, atol=2e-10)


def test_round_large_decimals_and_clip_complex():
    """testRoundLargeDecimals (decimals=1000: numpy gives NaN, JAX the input; traced, this
    round gives the input, as JAX's) and testClipComplexInputError (JAX raises ValueError
    for a complex input or bound; so does clip here, eagerly and traced)."""
    x = rand(rng_for("round-large"), (10,))
    np.testing.assert_allclose(traced(lambda v: anp.round(v, 1000))(x), x, atol=1e-10)
    np.testing.assert_allclose(traced(lambda v: anp.round(v, 400))(x), x, atol=1e-10)
    for f in (lambda v: anp.clip(v, max=1.0), lambda v: anp.clip(v.real, 0.0, 1j)):
        for g in (f, traced(f)):
            with pytest.raises(ValueError, match="[Cc]omplex"):
                g(np.ones(5, np.complex128))


def test_operator_round_and_reversed():
    """testOperatorRound / testRoundMethod / testOperatorReversed: Python's ``round`` on
    values, ``.round()`` on a traced array, and ``reversed`` of a traced array."""
    assert round(anp.float32(7.532), 1) == pytest.approx(round(np.float32(7.532), 1))
    np.testing.assert_allclose(traced(lambda x: x.round(1))(np.arange(3.) / 5.),
                               np.round(np.arange(3.) / 5., 1))
    for shape in [(5,), (5, 2)]:
        x = rand(rng_for("rev", shape), shape, F32)
        check(lambda x: np.array(list(reversed(x))), lambda x: anp.array(list(reversed(x))),
              [x])


PAD_SHAPES = [(), (4,), (3, 4), (2, 1, 4)]


def _pad_widths(shape, extra=()):
    """JAX's pad_width table: per axis, ((before, after),), (before, after), (pad,), pad."""
    widths = [tuple((i % 3, (i + 1) % 3) for i in range(len(shape))), ((1, 2),), ((2, 0),),
              (2, 0), (0, 0), (1,), (2,), 0, 1] + list(extra)
    return [w for w in widths if w != ()]


@pytest.mark.parametrize("mode", ["constant", "wrap", "edge"])
@pytest.mark.parametrize("shape", PAD_SHAPES)
def test_pad(mode, shape):
    """testPad: every pad_width spelling; ``constant_values`` scalar, per side, per axis."""
    consts = [None] if mode != "constant" else [
        0, 1, (0,), (2.718,), (0, 2), (-1, 3.14),
        tuple((i / 2, -3.14 * i) for i in range(len(shape)))]
    consts = [c for c in consts if c != ()]
    for i, (pw, cv) in enumerate(itertools.product(_pad_widths(shape), consts)):
        dtype = rot([F64, I32, F32, np.bool_, C128], i)
        if dtype == np.bool_ and cv is not None and cv not in (0, 1, (0,)):
            continue
        x = rand(rng_for("pad", mode, shape, i), shape, dtype)
        kw = {} if cv is None else {"constant_values": cv}
        check(partial(np.pad, pad_width=pw, mode=mode, **kw),
              partial(anp.pad, pad_width=pw, mode=mode, **kw), [x])
    if shape == (3, 4):
        x = rand(rng_for("pad-grad", mode), shape)
        grads(partial(anp.pad, pad_width=((1, 2), (2, 1)), mode=mode), (x,))


@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median"])
@pytest.mark.parametrize("shape", PAD_SHAPES)
def test_pad_stat_values(mode, shape):
    """testPadStatValues: the statistic modes with every stat_length spelling."""
    stats = [None, tuple(((i % 3 + 1), ((i + 1) % 3) + 1) for i in range(len(shape))),
             ((1, 2),), ((2, 2),), (1, 1), (3, 4), (1,), (2,), 1, 2]
    stats = [s for s in stats if s != ()]
    for i, (pw, sl) in enumerate(itertools.product(_pad_widths(shape), stats)):
        if i % 3:
            continue                       # a third of JAX's product: the file stays fast
        dtype = rot([F64, I32, F32, C128], i // 3)
        if mode == "median" and dtype == C128:
            continue
        x = rand(rng_for("padstat", mode, shape, i), shape, dtype)
        check(partial(np.pad, pad_width=pw, mode=mode, stat_length=sl),
              partial(anp.pad, pad_width=pw, mode=mode, stat_length=sl), [x])
    if shape == (3, 4):
        x = rand(rng_for("padstat-grad", mode), shape)
        grads(partial(anp.pad, pad_width=((1, 2), (2, 1)), mode=mode, stat_length=2), (x,),
              order=1)


@pytest.mark.parametrize("mode", ["symmetric", "reflect"])
@pytest.mark.parametrize("reflect_type", ["even", "odd"])
@pytest.mark.parametrize("shape", PAD_SHAPES)
def test_pad_symmetric_and_reflect(mode, reflect_type, shape):
    """testPadSymmetricAndReflect: widths beyond the axis length (several reflections)."""
    widths = _pad_widths(shape, [((2, 3),), (2, 1), (1, 2), (3,), 5, 7, 10])
    for i, pw in enumerate(widths):
        dtype = rot([F64, I32, F32, C128] + ([np.bool_] if reflect_type == "even" else []), i)
        x = rand(rng_for("padrefl", mode, reflect_type, shape, i), shape, dtype)
        check(partial(np.pad, pad_width=pw, mode=mode, reflect_type=reflect_type),
              partial(anp.pad, pad_width=pw, mode=mode, reflect_type=reflect_type), [x],
              tol=1e-4)
    if shape == (3, 4):
        x = rand(rng_for("padrefl-grad", mode, reflect_type), shape)
        grads(partial(anp.pad, pad_width=((2, 5), (3, 1)), mode=mode,
                      reflect_type=reflect_type), (x,))


@pytest.mark.parametrize("shape", PAD_SHAPES)
def test_pad_linear_ramp(shape):
    """testPadLinearRamp: every pad_width and end_values spelling."""
    ends = [tuple((i % 3, (i + 1) % 3) for i in range(len(shape))), ((1, 2),), ((2.0, 3.14),),
            (0, 0), (-8.0, 2.0), (1,), (2,), 0, 1, 100, 10.0, 3.5, 4.2, -5, -3]
    ends = [e for e in ends if e != ()]
    for i, (pw, ev) in enumerate(itertools.product(_pad_widths(shape), ends)):
        if i % 3:
            continue
        dtype = rot([F64, I32, F32, C128, I64], i // 3)
        x = rand(rng_for("padramp", shape, i), shape, dtype)
        check(partial(np.pad, pad_width=pw, mode="linear_ramp", end_values=ev),
              partial(anp.pad, pad_width=pw, mode="linear_ramp", end_values=ev), [x], tol=1e-5)
    if shape == (3, 4):
        x = rand(rng_for("padramp-grad"), shape)
        grads(partial(anp.pad, pad_width=((1, 2), (2, 1)), mode="linear_ramp",
                      end_values=((1.0, -2.0), (0.5, 3.0))), (x,))


def test_pad_empty_kwargs_function():
    """testPadEmpty / testPadKwargs / testPadFunction / testPadWithNumpyPadWidth: the
    ``empty`` mode's interior, keywords of another mode refused (ValueError), an unknown mode
    refused, a padding function, and a numpy array as ``pad_width`` under ``ad.jit``."""
    arr = np.arange(6).reshape(2, 3)
    pw = ((2, 3), (3, 1))
    for f in (anp.pad, traced(partial(anp.pad, pad_width=pw, mode="empty"))):
        res = f(arr, pw, "empty") if f is anp.pad else f(arr)
        assert res.shape == np.pad(arr, pw, mode="empty").shape
        np.testing.assert_equal(np.asarray(res)[2:-3, 3:-1], arr)
    modes = {'constant': {'constant_values': 0}, 'edge': {}, 'linear_ramp': {'end_values': 0},
             'maximum': {'stat_length': None}, 'mean': {'stat_length': None},
             'median': {'stat_length': None}, 'minimum': {'stat_length': None},
             'reflect': {'reflect_type': 'even'}, 'symmetric': {'reflect_type': 'even'},
             'wrap': {}, 'empty': {}}
    arr1 = np.array([1, 2, 3])
    g = traced(lambda a, mode, kw: anp.pad(a, 1, mode, **dict(kw)), static_argnums=(1, 2))
    for mode, allowed in modes.items():
        g(arr1, mode, tuple(allowed.items()))
        for kwargs in modes.values():
            for key, value in kwargs.items():
                if key not in allowed:
                    with pytest.raises(ValueError, match="unsupported keyword arguments"):
                        anp.pad(arr1, 1, mode, **{key: value})
                    with pytest.raises(ValueError, match="unsupported keyword arguments"):
                        g(arr1, mode, ((key, value),))
    for mode in ["foo", 1]:
        with pytest.raises((ValueError, TypeError, NotImplementedError)):
            g(arr1, mode, ())

    def np_pad_with(vector, pad_width, iaxis, kwargs):
        pad_value = kwargs.get('padder', 10)
        vector[:pad_width[0]] = pad_value
        vector[-pad_width[1]:] = pad_value

    def anp_pad_with(vector, pad_width, iaxis, kwargs):
        pad_value = kwargs.get('padder', 10)
        vector = vector.at[:pad_width[0]].set(pad_value)
        return vector.at[-pad_width[1]:].set(pad_value)

    arr = np.arange(6).reshape(2, 3)
    np.testing.assert_equal(anp.pad(arr, 2, anp_pad_with), np.pad(arr, 2, np_pad_with))
    arr = np.arange(24).reshape(2, 3, 4)
    want = np.pad(arr, 1, np_pad_with, padder=100)
    np.testing.assert_equal(anp.pad(arr, 1, anp_pad_with, padder=100), want)
    np.testing.assert_equal(traced(lambda a: anp.pad(a, 1, anp_pad_with, padder=100))(arr),
                            want)
    a = np.array([1, 2, 3, 4, 5])
    kw = dict(pad_width=np.asarray((2, 3)), mode="constant", constant_values=(4, 6))
    np.testing.assert_array_equal(ad.jit(partial(anp.pad, **kw))(a), np.pad(a, **kw))


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4)])
def test_tile(shape):
    """testTile: ``reps`` empty, scalar-like, longer and shorter than the rank, with a zero;
    derivatives."""
    for i, reps in enumerate([(), (2,), (3, 4), (2, 3, 4), (1, 0, 2), 2]):
        x = rand(rng_for("tile", shape, i), shape, rot([F64, I32, np.bool_, F32], i))
        check(lambda a: np.tile(a, reps), lambda a: anp.tile(a, reps), [x])
    x = rand(rng_for("tile-grad", shape), shape)
    grads(lambda a: anp.tile(a, (2, 1, 2)), (x,), order=1)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (0,)])
def test_extract_compress(shape):
    """testExtract / testExtractSize / testCompress / testCompressSize /
    testCompressMethod: concrete conditions; with a static ``size``/``fill_value`` the
    condition may be traced too."""
    rng = rng_for("extract", shape)
    for i, dtype in enumerate([F64, I32, np.bool_]):
        x = rand(rng, shape, dtype)
        cond = rand(rng, shape, np.bool_)
        check(lambda a: np.extract(cond, a), lambda a: anp.extract(cond, a), [x])
        for size, fill in [(2, 0), (7, -1), (1, 0)]:
            want = np.extract(cond, x)[:size]
            want = np.concatenate([want, np.full(size - len(want), fill, x.dtype)])
            check(lambda c, a: want, lambda c, a: anp.extract(c, a, size=size, fill_value=fill),
                  [cond, x])
        for axis in [None] + list(range(len(shape))):
            n = x.size if axis is None else x.shape[axis]
            c = rand(rng, (max(n - 1, 0),), np.bool_)
            check(lambda a: np.compress(c, a, axis), lambda a: anp.compress(c, a, axis), [x])
            want = np.compress(c, x, axis)
            if axis is None:
                want = np.concatenate([want, np.full(2, 7, x.dtype)])
            else:
                pad_shape = list(want.shape)
                pad_shape[axis] = 2
                want = np.concatenate([want, np.full(pad_shape, 7, x.dtype)], axis=axis)
            size = want.size if axis is None else want.shape[axis]
            check(lambda c, a: want,
                  lambda c, a: anp.compress(c, a, axis, size=size, fill_value=7), [c, x])
    x = rand(rng, (3, 4))
    c = np.array([True, False, True])
    grads(lambda a: anp.compress(c, a, axis=0), (x,), order=1)
    grads(lambda a: anp.extract(x > 0, a), (x,), order=1)


def test_array_methods_compress_choose_searchsorted():
    """testCompressMethod / testChoose (method form) / testSearchsorted's method /
    testArgpartition's method: JAX arrays have these methods, so do traced arrays."""
    x = np.arange(12.0).reshape(3, 4)
    c = np.array([True, False, True])
    check(lambda a: a.compress(c, axis=0), lambda a: a.compress(c, axis=0), [x])
    check(lambda a: a.searchsorted(3.5), lambda a: a.searchsorted(3.5), [x.ravel()])
    check(lambda i, a: i.choose([a[0, :3], a[1, :3]]),
          lambda i, a: i.choose([a[0, :3], a[1, :3]]), [np.array([0, 1, 0]), x])
    check(lambda i, a: i.choose([a[0, :3], a[1, :3]], mode="clip"),
          lambda i, a: i.choose([a[0, :3], a[1, :3]], mode="clip"), [np.array([0, 5, -1]), x])
    check(lambda a: a.searchsorted(np.array([0.5, 7.0]), side="right"),
          lambda a: a.searchsorted(np.array([0.5, 7.0]), side="right"), [x.ravel()])
    grads(lambda a: a.compress(c, axis=0), (x,), order=1)
    check(lambda a: np.sort(a.argpartition(2)[:2]), lambda a: anp.sort(a.argpartition(2)[:2]),
          [x.ravel()[::-1]])


def test_compress_mismatched_and_jit_errors():
    """testCompressMismatchedShapes / testCompressExtractJitErrorMessage: a condition longer
    than the axis raises; a traced condition without ``size`` raises a concretization
    error."""
    x = np.arange(6.0)
    with pytest.raises((ValueError, IndexError)):
        anp.compress(np.ones(8, bool), x)
    with pytest.raises(ad.errors.ConcretizationError):
        ad.jit(lambda c, a: anp.compress(c, a))(x > 2, x)
    with pytest.raises(ad.errors.ConcretizationError):
        ad.jit(lambda c, a: anp.extract(c, a))(x > 2, x)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4)])
def test_piecewise(shape):
    """testPiecewise / testPiecewiseRecompile: 1-3 conditions, with and without the extra
    "otherwise" entry, constants among the functions; derivatives."""
    rng = rng_for("piecewise", shape)
    k = 0
    for ncond in [1, 2, 3]:
        for nfunc in [ncond, ncond + 1]:
            funcs = [lambda x: x - 1, 1, lambda x: x, 0][:nfunc]
            dtype = rot([F64, I32, F32, C128], k)
            k += 1
            x = rand(rng, shape, dtype)
            conds = [rand(rng, shape, np.bool_) for _ in range(ncond)]
            check(partial(np.piecewise, funclist=funcs), partial(anp.piecewise, funclist=funcs),
                  [x, conds])
    x = rand(rng, shape)
    grads(lambda a: anp.piecewise(a, [a > 0], [anp.sin, anp.cos]), (x,))
    calls = []

    def g(v):
        calls.append(1)
        return v
    x = np.arange(10.0)
    f = traced(lambda v: anp.piecewise(v, [v < 3], [g, 0.0]))
    np.testing.assert_allclose(f(x), np.where(x < 3, x, 0.0))
    assert len(calls) == 1


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 3, 4)])
def test_transpose_permute_dims(shape):
    """testTransposeTuple / testPermuteDims / testMatrixTranspose / testSwapAxesStaticAxes /
    testRollaxis / moveaxis: every permutation (and the default reversal); ``matrix_transpose``
    and ``.mT``; derivatives."""
    rng = rng_for("transpose", shape)
    x = rand(rng, shape, rot([F64, I32, np.bool_, C128], len(shape)))
    for perm in list(itertools.permutations(range(len(shape)))) + [None]:
        check(lambda a: np.transpose(a, perm), lambda a: anp.transpose(a, perm), [x])
        if perm is not None:
            check(lambda a: np.permute_dims(a, perm), lambda a: anp.permute_dims(a, perm), [x])
            check(lambda a: a.transpose(*perm), lambda a: a.transpose(*perm), [x])
    if len(shape) >= 2:
        check(np.matrix_transpose, anp.matrix_transpose, [x])
        check(lambda a: a.mT, lambda a: a.mT, [x])
        for a1, a2 in itertools.product(range(-len(shape), len(shape)), repeat=2):
            check(lambda a: np.swapaxes(a, a1, a2), lambda a: anp.swapaxes(a, a1, a2), [x])
            check(lambda a: np.moveaxis(a, a1, a2), lambda a: anp.moveaxis(a, a1, a2), [x])
        for ax in range(-len(shape), len(shape)):
            for start in range(-len(shape), len(shape) + 1):
                check(lambda a: np.rollaxis(a, ax, start), lambda a: anp.rollaxis(a, ax, start),
                      [x])
        check(lambda a: np.moveaxis(a, (0, 1), (-1, 0)), lambda a: anp.moveaxis(a, (0, 1),
                                                                                (-1, 0)), [x])
    elif len(shape) < 2 and shape != ():
        with pytest.raises(ValueError):
            anp.matrix_transpose(traced(lambda v: v)(x))
    if shape:
        xf = rand(rng, shape)
        grads(lambda a: anp.transpose(a), (xf,), order=1)


@pytest.mark.parametrize("trim", ["f", "b", "fb"])
def test_trim_zeros(trim):
    """testTrimZeros / testTrimZerosAxis: leading/trailing zeros of 1-d arrays (all zero
    included) and along each axis of an n-d array (numpy >= 2.2's ``axis``). Concrete
    input only (the result's shape depends on the values), as in JAX."""
    for i, a in enumerate([np.array([0, 0, 1, 2, 0, 3, 0]), np.zeros(4), np.array([1., 0.]),
                           np.array([], float), np.array([0, 0, 0, 5])]):
        assert_close(anp.trim_zeros(a, trim), np.trim_zeros(a, trim))
    x = np.zeros((4, 5), int)
    x[1:3, 2:4] = np.arange(1, 5).reshape(2, 2)
    for axis in [None, 0, 1, (0, 1), -1]:
        assert_close(anp.trim_zeros(x, trim, axis=axis), np.trim_zeros(x, trim, axis=axis))


@pytest.mark.parametrize("rank", [1, 2])
@pytest.mark.parametrize("n", [1, 4, 6, 12])
def test_poly(rank, n):
    """testPoly: coefficients from roots (rank 1) and the characteristic polynomial of a
    square matrix (rank 2, general and symmetric); derivatives."""
    rng = rng_for("poly", rank, n)
    for i, dtype in enumerate([F64, I32, F64]):
        a = rand(rng, (n,) * rank, dtype, scale=1.0)
        if rank == 2 and i == 2:
            a = a + a.T
        check(np.poly, anp.poly, [a], tol=1e-6, check_dtype=False)
    if n < 12:
        grads(anp.poly, (rand(rng, (n,) * rank, scale=1.0),), order=1)


ONE_DIM = [(1,), (6,), (12,)]


@pytest.mark.parametrize("a_shape", ONE_DIM)
@pytest.mark.parametrize("b_shape", ONE_DIM)
def test_polyadd_polysub_polymul_polydiv(a_shape, b_shape):
    """testPolyAdd / testPolySub / testPolyMul / testPolyDiv (``trim_leading_zeros`` is a
    JAX-only keyword); derivatives of the traced results."""
    rng = rng_for("polyadd", a_shape, b_shape)
    for dtype in [F64, I32, F32]:
        a, b = rand(rng, a_shape, dtype), rand(rng, b_shape, dtype)
        check(np.polyadd, anp.polyadd, [a, b])
        check(np.polysub, anp.polysub, [a, b])
        assert_close(anp.polymul(a, b), np.polymul(a, b), tol=1e-4)
        assert_close(anp.polymul(a, b, trim_leading_zeros=True), np.polymul(a, b), tol=1e-4)
        assert_close(traced(anp.polymul)(a, b), np.convolve(a, b), tol=1e-4)
    a, b = rand(rng, a_shape), rand(rng, b_shape)
    b[0] = 2.0 + abs(b[0])
    q, r = np.polydiv(a, b)
    assert_close(anp.polydiv(a, b), (q, r), tol=1e-8)
    r_fixed = np.concatenate([np.zeros(max(len(b) - 1, 1) - len(r)), r])   # traced: fixed
    assert_close(traced(anp.polydiv)(a, b), (q, r_fixed), tol=1e-8)
    got = anp.polydiv(anp.asarray(a), anp.asarray(b), trim_leading_zeros=True)
    assert_close(got, (q, r), tol=1e-8)
    grads(anp.polymul, (a, b), order=1)
    grads(anp.polyadd, (a, b), order=1)
    grads(lambda u, v: anp.polydiv(u, v)[0], (a, b), order=1)


@pytest.mark.parametrize("order", range(5))
@pytest.mark.parametrize("a_shape", ONE_DIM)
def test_polyint_polyder(order, a_shape):
    """testPolyInt / testPolyDer: any order, integration constants ``k`` as an array, a
    single value, or None; derivatives."""
    rng = rng_for("polyint", order, a_shape)
    for i, dtype in enumerate([F64, I32, F32]):
        a = rand(rng, a_shape, dtype)
        for k in [np.arange(order, dtype=dtype), np.ones(1, dtype), None]:
            check(lambda p: np.polyint(p, m=order, k=k), lambda p: anp.polyint(p, m=order, k=k),
                  [a], check_dtype=False, tol=1e-5)
        check(lambda p: np.polyder(p, m=order), lambda p: anp.polyder(p, m=order), [a],
              check_dtype=False)
    a = rand(rng, a_shape)
    grads(lambda p: anp.polyint(p, m=order, k=None), (a,), order=1)
    grads(lambda p: anp.polyder(p, m=order), (a,), order=1)


@pytest.mark.parametrize("p_shape,x_shape", [((4,), ()), ((1,), (3,)), ((5,), (2, 3)),
                                             ((3,), (4,))])
def test_polyval(p_shape, x_shape):
    """polyval (JAX checks it among its op records): values and derivatives in both
    arguments."""
    rng = rng_for("polyval", p_shape, x_shape)
    for dtype in [F64, I32, C128]:
        p, x = rand(rng, p_shape, dtype), rand(rng, x_shape, dtype)
        check(np.polyval, anp.polyval, [p, x], tol=1e-8)
    p, x = rand(rng, p_shape), rand(rng, x_shape)
    grads(anp.polyval, (p, x))


@pytest.mark.parametrize("base_shape", [(4,), (3, 4), (2, 3, 4)])
def test_concatenate(base_shape):
    """testConcatenate / testConcat / testConcatenateArray / testConcatenateAxisNone /
    testConcatenateScalarAxisNone: mixed dtypes, ``dtype=``, ``axis=None``, an array as the
    sequence; derivatives."""
    rng = rng_for("concat", base_shape)
    k = 0
    for axis in (None, *range(-len(base_shape) + 1, len(base_shape))):
        wrapped = 0 if axis is None else axis % len(base_shape)
        shapes = [base_shape[:wrapped] + (size,) + base_shape[wrapped + 1:] for size in [3, 1, 4]]
        for dtypes in [(F64, F64, F64), (I32, F32, np.bool_), (I32, I32, I64)]:
            for dtype in [None, F64, I32]:
                k += 1
                if k % 2:
                    continue
                args = [rand(rng, s, d) for s, d in zip(shapes, dtypes)]
                kw = {} if dtype is None else dict(dtype=dtype, casting="unsafe")
                check(lambda *a: np.concatenate(a, axis=axis, **kw),
                      lambda *a: anp.concatenate(a, axis=axis, **({} if dtype is None
                                                                  else dict(dtype=dtype))),
                      args)
        args = [rand(rng, s) for s in shapes]
        check(lambda *a: np.concat(a, axis=axis), lambda *a: anp.concat(a, axis=axis), args)
        grads(lambda *a: anp.concatenate(a, axis=axis), tuple(args), order=1)
    x = rand(rng, base_shape + (2,))
    for axis in [None] + list(range(-len(base_shape), len(base_shape))):
        check(lambda x: np.concatenate(x, axis=axis), lambda x: anp.concatenate(x, axis=axis),
              [x])
    a, b = np.array([[1, 2], [3, 4]]), np.array([[5]])
    check(lambda a, b: np.concatenate((a, b), axis=None),
          lambda a, b: anp.concatenate((a, b), axis=None), [a, b])
    arrays = [np.int32(0), np.int32(1)]
    check(lambda *a: np.concatenate(a, axis=None), lambda *a: anp.concatenate(a, axis=None),
          arrays)


@pytest.mark.parametrize("base_shape", [(4,), (3, 4), (2, 3, 4)])
def test_append(base_shape):
    """testAppend: along every axis and flattened (axis=None), mixed dtypes; derivatives."""
    rng = rng_for("append", base_shape)
    for i, axis in enumerate([None] + list(range(-len(base_shape) + 1, len(base_shape)))):
        wrapped = 0 if axis is None else axis % len(base_shape)
        shapes = [base_shape[:wrapped] + (s,) + base_shape[wrapped + 1:] for s in [3, 1]]
        dts = rot([(F64, F64), (I32, F32), (I32, I64), (np.bool_, I32)], i)
        arr, vals = (rand(rng, s, d) for s, d in zip(shapes, dts))
        check(lambda a, v: np.append(a, v, axis=axis), lambda a, v: anp.append(a, v, axis=axis),
              [arr, vals])
    grads(lambda a, v: anp.append(a, v, axis=0), (rand(rng, base_shape), rand(rng, base_shape)),
          order=1)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
def test_delete(shape):
    """testDeleteInteger / testDeleteSlice / testDeleteIndexArray / testDeleteUniqueIndices /
    testDeleteMaskArray: every integer index, slices, index arrays (repeats, negatives),
    ``assume_unique_indices``, boolean masks; derivatives."""
    rng = rng_for("delete", shape)
    for j, axis in enumerate([None] + list(range(-len(shape), len(shape)))):
        x = rand(rng, shape, rot([F64, I32, np.bool_, C128], j))
        n = x.size if axis is None else x.shape[axis]
        for idx in range(-n, n):
            check(lambda a: np.delete(a, idx, axis=axis), lambda a: anp.delete(a, idx, axis=axis),
                  [x])
        for slc in [slice(None), slice(1, 3), slice(1, 5, 2)]:
            check(lambda a: np.delete(a, slc, axis=axis), lambda a: anp.delete(a, slc, axis=axis),
                  [x])
        for idx_shape in [(), (1,), (3,), (2, 2)]:
            idx = rng.integers(-n, n, idx_shape)
            check(lambda a: np.delete(a, idx, axis=axis), lambda a: anp.delete(a, idx, axis=axis),
                  [x])
            if np.prod(idx_shape) <= n:
                u = rng.choice(n, idx_shape, replace=False)
                check(lambda a: np.delete(a, u, axis=axis),
                      lambda a: anp.delete(a, u, axis=axis, assume_unique_indices=True), [x])
        mask = rng.random(n) < 0.5
        check(lambda a: np.delete(a, mask, axis=axis), lambda a: anp.delete(a, mask, axis=axis),
              [x])
    xf = rand(rng, shape)
    grads(lambda a: anp.delete(a, 1 if xf.size > 1 else 0, axis=None), (xf,), order=1)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
def test_insert(shape):
    """testInsertInteger / testInsertSlice: an integer (traced too) or a slice position, a
    scalar value; derivatives in the array and the values."""
    rng = rng_for("insert", shape)
    for j, axis in enumerate([None] + list(range(-len(shape), len(shape)))):
        dtype = rot([F64, I32, np.bool_, F32], j)
        x = rand(rng, shape, dtype)
        n = x.size if axis is None else x.shape[axis]
        val = rand(rng, (), dtype)
        for i in range(-n, n + 1):
            check(lambda a, v: np.insert(a, i, v, axis=axis),
                  lambda a, v: anp.insert(a, i, v, axis=axis), [x, val])
        i = np.int32(rng.integers(-n, n))
        check(lambda a, i, v: np.insert(a, i, v, axis=axis),
              lambda a, i, v: anp.insert(a, i, v, axis=axis), [x, i, val])
        for _ in range(3):
            slc = slice(int(rng.integers(-n, n)), int(rng.integers(-n, n)))
            check(lambda a, v: np.insert(a, slc, v, axis=axis),
                  lambda a, v: anp.insert(a, slc, v, axis=axis), [x, val])
    xf = rand(rng, shape)
    grads(lambda a, v: anp.insert(a, 1, v, axis=0), (xf, np.float64(2.5)), order=1)


@pytest.mark.parametrize("k", range(8))
def test_insert_examples(k):
    """testInsertExamples: numpy's docstring examples."""
    arr, index, values, axis = [
        [[[1, 1], [2, 2], [3, 3]], 1, 5, None],
        [[[1, 1], [2, 2], [3, 3]], 1, 5, 1],
        [[[1, 1], [2, 2], [3, 3]], 1, [1, 2, 3], 1],
        [[[1, 1], [2, 2], [3, 3]], [1], [[1], [2], [3]], 1],
        [[1, 1, 2, 2, 3, 3], [2, 2], [5, 6], None],
        [[1, 1, 2, 2, 3, 3], slice(2, 4), [5, 6], None],
        [[1, 1, 2, 2, 3, 3], [2, 2], [7.13, False], None],
        [[[0, 1, 2, 3], [4, 5, 6, 7]], (1, 3), 999, 1]][k]
    arr = np.asarray(arr)
    index = index if isinstance(index, slice) else np.array(index)
    values = np.asarray(values)
    check(lambda a, v: np.insert(a, index, v, axis), lambda a, v: anp.insert(a, index, v, axis),
          [arr, values])


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4)])
@pytest.mark.parametrize("out_dims", [0, 1, 2])
def test_apply_along_axis(shape, out_dims):
    """testApplyAlongAxis: functions returning a scalar, a vector and a matrix; derivatives."""
    def func(x, out_dims):
        if out_dims == 0:
            return x.sum(dtype=x.dtype)
        if out_dims == 1:
            return x * x[0]
        return x[:, None] + x[None, :]
    rng = rng_for("apply_along", shape, out_dims)
    for i, axis in enumerate(range(-len(shape), len(shape))):
        x = rand(rng, shape, rot([F64, I32, F32], i))
        check(lambda a: np.apply_along_axis(func, axis, a, out_dims=out_dims),
              lambda a: anp.apply_along_axis(func, axis, a, out_dims=out_dims), [x])
        if i == 0:
            xf = rand(rng, shape)
            grads(lambda a: anp.apply_along_axis(func, axis, a, out_dims=out_dims), (xf,),
                  order=1)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 1, 4)])
@pytest.mark.parametrize("keepdims", [True, False])
def test_apply_over_axes(shape, keepdims):
    """testApplyOverAxes: ``sum`` over pairs of axes."""
    rng = rng_for("apply_over", shape, keepdims)
    for i, axes in enumerate(itertools.combinations(range(len(shape)), 2)):
        dtype = rot([F64, I32], i)
        f = lambda x, axis: x.sum(axis=axis, keepdims=keepdims, dtype=dtype)  # noqa: E731
        x = rand(rng, shape, dtype)
        check(lambda a: np.apply_over_axes(f, a, axes), lambda a: anp.apply_over_axes(f, a, axes),
              [x])
    x = rand(rng, shape)
    axes = tuple(range(len(shape)))
    check(lambda a: np.apply_over_axes(np.sum, a, axes),
          lambda a: anp.apply_over_axes(anp.sum, a, axes), [x])


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4)])
@pytest.mark.parametrize("repeats", [0, 1, 2])
def test_repeat(shape, repeats):
    """testRepeat: every axis and ``axis=None``; ``total_repeat_length`` with traced
    repeats; derivatives."""
    rng = rng_for("repeat", shape, repeats)
    for i, axis in enumerate([None] + list(range(-len(shape), max(1, len(shape))))):
        x = rand(rng, shape, rot([F64, I32, np.bool_, F32], i))
        check(lambda a: np.repeat(a, repeats, axis), lambda a: anp.repeat(a, repeats, axis), [x])
        total = np.repeat(np.zeros(shape), repeats, axis).shape[axis or 0]
        f = lambda a, r: anp.repeat(a, r, axis=axis, total_repeat_length=total)  # noqa: E731
        want = np.repeat(x, repeats, axis)
        assert_close(traced(f)(x, repeats), want)
    xf = rand(rng, shape)
    grads(lambda a: anp.repeat(a, repeats, axis=None), (xf,), order=1)


@pytest.mark.parametrize("fixed_size", [False, True])
def test_non_scalar_repeats(fixed_size):
    """testNonScalarRepeats: numpy's own repeat tests, array ``repeats`` (traced with
    ``total_repeat_length``)."""
    def single(m, repeats, axis):
        want = np.repeat(m, repeats, axis)
        assert_close(anp.repeat(m, repeats, axis), want)
        if fixed_size:
            n = want.shape[axis or 0]
            f = traced(lambda a, r: anp.repeat(a, r, axis=axis, total_repeat_length=n))
            assert_close(f(m, repeats), want)
        else:
            assert_close(traced(lambda a: anp.repeat(a, repeats, axis=axis))(m), want)
    m = np.array([1, 2, 3, 4, 5, 6])
    for repeats in [2, np.array([1, 3, 0, 1, 1, 2]), np.array([1, 3, 2, 1, 1, 2]), np.array([2])]:
        single(m, repeats, None)
        single(m, repeats, 0)
    m_rect = m.reshape((2, 3))
    for repeats in [2, np.array([2, 1]), np.array([2])]:
        single(m_rect, repeats, 0)
    for repeats in [2, np.array([1, 3, 2]), np.array([2])]:
        single(m_rect, repeats, 1)


def test_concatenate_no_side_effect():
    """testIssue2330: ``concatenate`` returns a new array; in-place ops on it leave the
    input alone."""
    x = np.ones(1)
    out = anp.concatenate([x])
    out -= 1.0
    np.testing.assert_allclose(x, np.ones(1))


@pytest.mark.parametrize("op", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolutions(op, mode):
    """testConvolutions / testConvolutionsPreferredElementType: every length pair and mode
    (numpy swaps the operands when the second is longer), integer and complex dtypes;
    derivatives."""
    anp_op, np_op = getattr(anp, op), getattr(np, op)
    k = 0
    for xs, ys in itertools.product(ONE_DIM, ONE_DIM):
        dtype = rot([F64, I32, C128, F32], k)
        k += 1
        rng = rng_for(op, mode, xs, ys)
        x, y = rand(rng, xs, dtype), rand(rng, ys, dtype)
        check(partial(np_op, mode=mode), partial(anp_op, mode=mode), [x, y], tol=1e-4)
        check(lambda a, b: np_op(a, b, mode=mode).astype(dtype),
              partial(anp_op, mode=mode, preferred_element_type=dtype), [x, y], tol=1e-4)
    x, y = rand(rng, (6,)), rand(rng, (3,))
    grads(partial(anp_op, mode=mode), (x, y), order=1)
    grads(partial(anp_op, mode=mode), (y, x), order=1)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4)])
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
def test_cumsum_cumprod(shape, op):
    """testCumSumProd / testNanCumSumProd: every axis and ``axis=None``, ``dtype=``, NaNs for
    the nan-variants; derivatives."""
    anp_op, np_op = getattr(anp, op), getattr(np, op)
    rng = rng_for(op, shape)
    for i, axis in enumerate([None] + list(range(-len(shape), len(shape)))):
        dtype = rot([F64, I32, np.bool_, F32], i)
        out_dtype = rot([None, F64, I64, F32], i + 1)
        x = rand(rng, shape, dtype, scale=1.0)
        if op.startswith("nan") and dtype in (F64, F32) and x.ndim:
            x[rng.random(shape) < 0.3] = np.nan
        check(lambda a: np_op(a, axis=axis, dtype=out_dtype),
              lambda a: anp_op(a, axis=axis, dtype=out_dtype), [x], tol=1e-5)
    xf = rand(rng, shape, scale=1.0)
    grads(lambda a: anp_op(a, axis=None), (xf,), order=1)


@pytest.mark.parametrize("n", [0, 4])
@pytest.mark.parametrize("m", [None, 0, 1, 3, 4])
def test_eye_tri_identity(n, m):
    """testEye / testEyeDynamicK / testTri / testIdentity: every diagonal offset, huge
    offsets, a traced ``k``; dtypes rotated."""
    for i, k in enumerate([*range(-4, 4), -2**33, 2**33]):
        dtype = rot([F64, I32, np.bool_, F32, None], i)
        assert_close(anp.eye(n, M=m, k=k, dtype=dtype), np.eye(n, M=m, k=k, dtype=dtype))
        assert_close(traced(lambda: anp.eye(n, M=m, k=k, dtype=dtype))(),
                     np.eye(n, M=m, k=k, dtype=dtype))
        assert_close(anp.tri(n, M=m, k=k, dtype=dtype), np.tri(n, M=m, k=k, dtype=dtype))
        if abs(k) < 5:
            want = np.eye(n, M=m, k=k, dtype=dtype)
            assert_close(traced(lambda k: anp.eye(n, M=m, k=k, dtype=dtype))(k), want)
            want = np.tri(n, M=m, k=k, dtype=dtype)
            assert_close(traced(lambda k: anp.tri(n, M=m, k=k, dtype=dtype))(k), want)
    for n in range(4):
        for dtype in [F64, I32, np.bool_]:
            assert_close(anp.identity(n, dtype), np.identity(n, dtype))
    with pytest.raises((TypeError, ad.errors.ConcretizationError)):
        ad.jit(anp.tri)(3, M=3, k=0)


@pytest.mark.parametrize("shape", [(3, 4), (3, 1), (1, 4), (2, 3, 4), (0, 4), (3, 0)])
@pytest.mark.parametrize("op", ["tril", "triu"])
def test_tril_triu(shape, op):
    """testTriLU: offsets -3..2, stacked matrices; derivatives."""
    rng = rng_for(op, shape)
    for i, k in enumerate(range(-3, 3)):
        x = rand(rng, shape, rot([F64, I32, np.bool_], i))
        check(lambda a: getattr(np, op)(a, k=k), lambda a: getattr(anp, op)(a, k=k), [x])
    grads(lambda a: getattr(anp, op)(a, k=1), (rand(rng, shape),), order=1)


def test_tri_indices():
    """testTrilIndices / testTriuIndices / testTrilIndicesFrom / testTriuIndicesFrom /
    testMaskIndices / testDiagIndices / testDiagIndicesFrom."""
    for n, k, m in itertools.product(range(5), range(-3, 3), [None, *range(5)]):
        assert_close(anp.tril_indices(n, k=k, m=m), np.tril_indices(n, k=k, m=m))
        assert_close(anp.triu_indices(n, k=k, m=m), np.triu_indices(n, k=k, m=m))
    for shape in [(1, 1), (1, 2), (2, 2), (2, 3), (3, 2), (3, 3), (4, 4)]:
        for k in [-1, 0, 1]:
            a = np.zeros(shape)
            assert_close(anp.triu_indices_from(a, k=k), np.triu_indices_from(a, k=k))
            assert_close(anp.tril_indices_from(a, k=k), np.tril_indices_from(a, k=k))
            assert_close(traced(lambda a: anp.tril_indices_from(a, k=k))(a),
                         np.tril_indices_from(a, k=k))
    for n in [2, 3, 4]:
        for k in [None, -1, 0, 1]:
            kw = {} if k is None else {'k': k}
            for name in ["triu", "tril"]:
                assert_close(anp.mask_indices(n, getattr(anp, name), **kw),
                             np.mask_indices(n, getattr(np, name), **kw), check_dtype=False)
    for ndim, n in itertools.product([0, 1, 4], [0, 1, 7]):
        assert_close(anp.diag_indices(n, ndim), np.diag_indices(n, ndim))
    for n in range(1, 6):
        a = np.zeros((n, n))
        assert_close(anp.diag_indices_from(a), np.diag_indices_from(a))


@pytest.mark.parametrize("a_shape", [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2),
                                     (1, 2), (0, 2), (2, 3), (2, 2, 2), (2, 2, 2, 2)])
def test_fill_diagonal(a_shape):
    """testFillDiagonal: ``inplace=False`` returns the filled copy; values cycle; wrap
    for tall matrices; derivatives."""
    rng = rng_for("fill_diag", a_shape)
    for i, val_shape in enumerate([(), (1,), (2,), (1, 2), (3, 2)]):
        dtype = rot([F64, I32, F32], i)
        a, val = rand(rng, a_shape, dtype), rand(rng, val_shape, dtype)

        def np_fun(a, val):
            a = a.copy()
            np.fill_diagonal(a, val)
            return a
        check(np_fun, partial(anp.fill_diagonal, inplace=False), [a, val])
    if a_shape == (2, 3):
        grads(lambda a, v: anp.fill_diagonal(a, v, inplace=False),
              (rand(rng, a_shape), rand(rng, (2,))), order=1)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (3, 1), (1, 4)])
def test_diag_diagflat(shape):
    """testDiag / testDiagFlat: offsets -4..3 (a scalar is a length-1 array for
    ``diagflat``, as in JAX); derivatives."""
    rng = rng_for("diag", shape)
    for i, k in enumerate(range(-4, 4)):
        x = rand(rng, shape, rot([F64, I32, np.bool_], i))
        if len(shape) in (1, 2):
            check(lambda a: np.diag(a, k), lambda a: anp.diag(a, k), [x])
        check(lambda a: np.diagflat(np.atleast_1d(a), k), lambda a: anp.diagflat(a, k), [x])
    if shape:
        grads(lambda a: anp.diag(a, 1), (rand(rng, shape),), order=1)
        grads(lambda a: anp.diagflat(a, -1), (rand(rng, shape),), order=1)


@pytest.mark.parametrize("shape", [(3, 4), (3, 1), (1, 4), (2, 3, 4), (0, 4)])
def test_diagonal_trace(shape):
    """testDiagonal / testTrace / testTraceMethod: every offset and axis pair; ``trace``'s
    ``dtype``; derivatives."""
    rng = rng_for("diagonal", shape)
    nd = len(shape)
    k = 0
    for a1 in range(-nd, nd):
        for a2 in [a for a in range(-nd, nd) if a % nd != a1 % nd]:
            for offset in range(-4, 4):
                k += 1
                x = rand(rng, shape, rot([F64, I32, np.bool_, C128], k))
                check(lambda a: np.diagonal(a, offset, a1, a2),
                      lambda a: anp.diagonal(a, offset, a1, a2), [x])
                if x.dtype != np.bool_:
                    out_dtype = rot([None, F64, I64], k)
                    check(lambda a: np.trace(a, offset, a1, a2, out_dtype),
                          lambda a: anp.trace(a, offset, a1, a2, out_dtype), [x])
    x = rand(rng, shape)
    check(lambda a: a.trace(), lambda a: a.trace(), [x])
    grads(lambda a: anp.trace(a, 1), (x,), order=1)
    grads(lambda a: anp.diagonal(a, -1, 0, -1), (x,), order=1)
    with pytest.raises(ValueError):            # testTraceSameAxesError
        traced(lambda a: anp.trace(a, axis1=0, axis2=0))(x)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4)])
@pytest.mark.parametrize("period,left,right", [(None, None, None), (0.59, None, None),
                                               (None, 0, 1), (0.59, 0, 1), (None, None, 1)])
def test_interp(shape, period, left, right):
    """testInterp / testInterpGradNan: sorted unique sample points, ``period``, ``left`` and
    ``right``; integer and complex data; finite derivatives where x and xp nearly
    coincide."""
    rng = rng_for("interp", shape, period, left, right)
    kw = dict(period=period, left=left, right=right)
    for i, (dtype, target) in enumerate([(F64, F64), (I32, F32), (F32, C128)]):
        x = rand(rng, shape, dtype, scale=10)
        xp = np.unique(rand(rng, (100,), dtype, scale=10))[:20]
        fp = rand(rng, (len(xp),), target)
        check(partial(np.interp, **kw), partial(anp.interp, **kw), [x, xp, fp], tol=1e-5,
              check_dtype=False)
    x = np.exp(np.linspace(-90, -20, 1000))
    g = ad.grad(lambda z: anp.sum(anp.interp(z, z, anp.ones_like(z), **kw)))(x)
    assert np.all(np.isfinite(g))
    xs = np.array([-1.0, 0.3, 1.7, 2.2, 5.0])
    xp, fp = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, -1.0, 2.0, 0.5])
    grads(lambda a, b: anp.interp(a, xp, b, **kw), (xs, fp), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("x,side,expected", [(0.5, "left", 5), (1.5, "left", 15),
                                             (3.5, "left", 30), (3.9, "right", 39)])
def test_interp_extrapolate(x, side, expected):
    """testInterpExtrapoate: JAX's ``left``/``right='extrapolate'``."""
    xp, fp = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0])
    kw = {side: "extrapolate"}
    assert float(anp.interp(x, xp, fp, **kw)) == pytest.approx(expected)
    assert float(traced(lambda x: anp.interp(x, xp, fp, **kw))(x)) == pytest.approx(expected)


def test_interp_errors():
    """testInterpErrors: mismatched sample arrays, a bad ``left``/``right`` string, complex
    x, a non-scalar period all raise ValueError."""
    f = traced(lambda x, xp, fp: anp.interp(x, xp, fp))
    with pytest.raises(ValueError, match="equal size|same length"):
        f(0.0, np.arange(2.0), np.arange(3.0))
    with pytest.raises(ValueError, match="extrapolate"):
        anp.interp(0.0, np.arange(3.0), np.arange(3.0), left='interpolate')
    with pytest.raises(ValueError, match="extrapolate"):
        anp.interp(0.0, np.arange(3.0), np.arange(3.0), right='interpolate')
    with pytest.raises((ValueError, TypeError), match="[Cc]omplex"):
        f(1j, 1j * np.arange(3.0), np.arange(3.0))
    with pytest.raises(ValueError, match="period"):
        anp.interp(0.0, np.arange(3.0), np.arange(3.0), period=np.array([1.0]))


@pytest.mark.parametrize("ashape", [(15,), (16,), (17,)])
@pytest.mark.parametrize("vshape", [(), (5,), (5, 5)])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(ashape, vshape, side):
    """testSearchsorted: every ``method`` JAX offers, with and without ``sorter``;
    dtypes rotated (JAX returns int32, autodiff numpy's int64)."""
    rng = rng_for("searchsorted", ashape, vshape, side)
    for i, method in enumerate(['sort', 'scan', 'scan_unrolled', 'compare_all']):
        dtype = rot([F64, I32, F32, I64], i)
        a, v = rand(rng, ashape, dtype), rand(rng, vshape, dtype)
        sorter = np.argsort(a)
        check(lambda a, v: np.searchsorted(np.sort(a), v, side=side),
              lambda a, v: anp.searchsorted(anp.sort(a), v, side=side, method=method), [a, v],
              check_dtype=False)
        check(lambda a, v: np.searchsorted(a, v, side=side, sorter=sorter),
              lambda a, v: anp.searchsorted(a, v, side=side, method=method, sorter=sorter),
              [a, v], check_dtype=False)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["sort", "scan", "compare_all"])
def test_searchsorted_nans(side, method):
    """testSearchsortedNans: -0.0 sorts with 0.0 and NaNs last, for each method."""
    x = np.array([-np.inf, -1.0, 0.0, -0.0, 1.0, np.inf, np.nan, -np.nan])
    x_equiv = np.array([0, 1, 2, 2, 3, 4, 5, 5])
    f = partial(anp.searchsorted, side=side, method=method)
    want = np.asarray(f(x_equiv, x_equiv))
    assert_close(f(x, x), want, check_dtype=False)
    assert_close(traced(f)(x, x), want, check_dtype=False)


@pytest.mark.parametrize("xshape", [(20,), (5, 4)])
@pytest.mark.parametrize("binshape", [(0,), (1,), (5,)])
@pytest.mark.parametrize("right", [True, False])
@pytest.mark.parametrize("reverse", [True, False])
def test_digitize(xshape, binshape, right, reverse):
    """testDigitize / testDigitizeMethod: increasing and decreasing bins, ``right``, every
    method."""
    rng = rng_for("digitize", xshape, binshape, right, reverse)
    for i, method in enumerate([None, 'scan', 'scan_unrolled', 'sort', 'compare_all']):
        dtype = rot([F64, I32, F32], i)
        x = rand(rng, xshape, dtype)
        bins = np.sort(rand(rng, binshape, dtype))
        bins = bins[::-1] if reverse else bins
        kw = {} if method is None else {"method": method}
        check(lambda x, b: np.digitize(x, b, right=right),
              lambda x, b: anp.digitize(x, b, right=right, **kw), [x, bins], check_dtype=False)


STACK_DTYPES = [[F32], [F32, F32], [F32, I32, F32], [F32, I64, F32], [F32, I32, F64]]


@pytest.mark.parametrize("shape", [(), (2,), (3, 4), (1, 5)])
@pytest.mark.parametrize("array_input", [True, False])
def test_column_stack_and_stack(shape, array_input):
    """testColumnStack / testStack / testStackArrayArgument: lists and arrays of inputs,
    every axis, ``dtype=``; derivatives."""
    rng = rng_for("stack", shape, array_input)
    for i, dts in enumerate(STACK_DTYPES):
        args = [rand(rng, shape, d) for d in dts]
        arg = np.array(args) if array_input else args
        check(np.column_stack, anp.column_stack, [arg])
        for axis in range(-len(shape) - 1, len(shape) + 1):
            check(lambda a: np.stack(a, axis=axis), lambda a: anp.stack(a, axis=axis), [arg])
            out_dtype = rot([F32, I32], i + axis)
            check(lambda a: np.stack(a, axis=axis, dtype=out_dtype, casting="unsafe"),
                  lambda a: anp.stack(a, axis=axis, dtype=out_dtype), [arg])
    args = tuple(rand(rng, shape) for _ in range(3))
    grads(lambda *a: anp.stack(a, axis=-1), args, order=1)
    grads(lambda *a: anp.column_stack(a), args, order=1)


@pytest.mark.parametrize("op", ["hstack", "vstack", "dstack"])
@pytest.mark.parametrize("shape", [(), (2,), (3, 4), (1, 5), (2, 3, 4)])
def test_hvdstack(op, shape):
    """testHVDStack: list and array inputs, ``dtype=``; derivatives."""
    rng = rng_for(op, shape)
    for i, dts in enumerate(STACK_DTYPES):
        args = [rand(rng, shape, d) for d in dts]
        for arg in (args, np.array(args)):
            check(getattr(np, op), getattr(anp, op), [arg])
            out_dtype = rot([F32, I32], i)
            if op == "dstack":
                np_fun = lambda a: np.dstack(a).astype(out_dtype)  # noqa: E731
            else:
                np_fun = partial(getattr(np, op), dtype=out_dtype, casting="unsafe")
            check(np_fun, partial(getattr(anp, op), dtype=out_dtype), [arg])
    args = tuple(rand(rng, shape) for _ in range(2))
    grads(lambda *a: getattr(anp, op)(a), args, order=1)


@pytest.mark.parametrize("name,kw", [("blackman", {}), ("bartlett", {}), ("hamming", {}),
                                     ("hanning", {}), ("kaiser", {"beta": 1}),
                                     ("kaiser", {"beta": 0.5})])
def test_window_function(name, kw):
    """testWindowFunction: sizes 0, 1, 5, 10."""
    for size in [0, 1, 5, 10]:
        want = getattr(np, name)(size, **kw)
        assert_close(getattr(anp, name)(size, **kw), want)
        assert_close(traced(lambda: getattr(anp, name)(size, **kw))(), want)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4), (0, 4), 3,
                                   np.array(7, dtype=np.int32)])
def test_full(shape):
    """testFull: fill values of every compatible shape (broadcast), ``dtype`` or the fill
    value's; a traced fill value is differentiable."""
    rng = rng_for("full", str(shape))
    s = (shape,) if np.ndim(shape) == 0 and not isinstance(shape, tuple) else shape
    s = tuple(int(d) for d in np.atleast_1d(s)) if not isinstance(s, tuple) else s
    fill_shapes = [s[n:] for n in range(len(s) + 1)]
    for i, (fs, out_dtype) in enumerate(itertools.product(fill_shapes, [None, F64, I32])):
        fill = rand(rng, fs, rot([F64, I32, np.bool_, F32], i))
        check(lambda v: np.full(shape, v, dtype=out_dtype),
              lambda v: anp.full(shape, v, dtype=out_dtype), [fill])
    grads(lambda v: anp.full(shape, v), (np.float64(1.5),), order=1)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
def test_diff(shape):
    """testDiff / testDiffBool / testDiffPrepoendScalar: orders 0-2 on every axis with
    ``prepend``/``append`` scalars and arrays; derivatives."""
    rng = rng_for("diff", shape)
    k = 0
    for axis in range(-len(shape), max(1, len(shape))):
        for n, pre, app in itertools.product([0, 1, 2], [None, 1, 0], [None, 1, 0]):
            extra = (pre is not None) + (app is not None)
            if (n == 0 and extra) or shape[axis] + extra < n:
                continue                # test_diff_outside_cases
            k += 1
            dtype = rot([F64, I32, F32], k)
            x = rand(rng, shape, dtype)
            pre_v = np.zeros(shape, dtype) if pre == 0 else pre
            app_v = np.zeros(shape, dtype) if app == 0 else app
            kw = {}
            if pre is not None:
                kw["prepend"] = pre_v
            if app is not None:
                kw["append"] = app_v
            check(lambda a: np.diff(a, n=n, axis=axis, **kw),
                  lambda a: anp.diff(a, n=n, axis=axis, **kw), [x], check_dtype=False)
    x = np.arange(10)
    check(lambda x: np.diff(x, prepend=x[0], append=x[-1]),
          lambda x: anp.diff(x, prepend=x[0], append=x[-1]), [x])
    grads(lambda a: anp.diff(a, n=2, axis=0, prepend=1.0), (rand(rng, shape),), order=1)


@pytest.mark.parametrize("case", ["n0-prepend", "bool", "n-beyond-length"])
def test_diff_outside_cases(case):
    """testDiff / testDiffBool edge cases: with ``n=0`` numpy returns the input unchanged
    (ignoring ``prepend``/``append``); boolean input takes ``not_equal`` of neighbours;
    ``n`` beyond the axis length gives an empty result."""
    if case == "n0-prepend":
        x, kw = np.arange(4.0), dict(n=0, prepend=1.0)
    elif case == "bool":
        x, kw = rand(rng_for("diffbool"), (10,), np.bool_), {}
    else:
        x, kw = np.ones((3, 1)), dict(n=2, axis=1)
    check(lambda a: np.diff(a, **kw), lambda a: anp.diff(a, **kw), [x])


@pytest.mark.parametrize("op", ["zeros", "ones", "empty"])
def test_zeros_ones(op):
    """testZerosOnes / testOnesWithInvalidShape / testZerosShapeErrors: integer, tuple and
    array shapes, every dtype; a negative dimension raises."""
    for i, shape in enumerate([2, (), (2,), (3, 0), np.array((4, 5, 6), dtype=np.int32),
                               np.array(4, dtype=np.int32)]):
        for dtype in [F64, I32, np.bool_, C128]:
            got = getattr(anp, op)(shape, dtype)
            want = getattr(np, op)(shape, dtype)
            assert got.shape == want.shape and got.dtype == want.dtype
            if op != "empty":
                assert_close(got, want)
                assert_close(traced(lambda: getattr(anp, op)(shape, dtype))(), want)
    with pytest.raises((TypeError, ValueError)):
        getattr(anp, op)((-1, 1))


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (0, 4)])
def test_full_like_zeros_ones_like(shape):
    """testFullLike / testZerosOnesLike: ``dtype`` and ``shape`` overrides, fill values of
    compatible shapes; a traced input and fill value."""
    rng = rng_for("full_like", shape)
    k = 0
    for out_shape in [None, (), (4,), (3, 4), (0, 4)]:
        target = shape if out_shape is None else out_shape
        for fs in [target[n:] for n in range(len(target) + 1)]:
            k += 1
            x = rand(rng, shape, rot([F64, I32, np.bool_], k))
            fill = rand(rng, fs, rot([F64, I32, F32], k))
            out_dtype = rot([F64, I32, F32, np.bool_], k)
            check(lambda x, v: np.full_like(x, v, dtype=out_dtype, shape=out_shape),
                  lambda x, v: anp.full_like(x, v, dtype=out_dtype, shape=out_shape), [x, fill])
        for func in ["ones_like", "zeros_like", "empty_like"]:
            out_dtype = rot([F64, I32, np.bool_, C128], k)
            x = rand(rng, shape, rot([F64, I32], k))
            want = getattr(np, func)(x, dtype=out_dtype, shape=out_shape)
            got = traced(lambda x: getattr(anp, func)(x, dtype=out_dtype, shape=out_shape))(x)
            assert got.shape == want.shape and got.dtype == want.dtype
            if func != "empty_like":
                assert_close(got, want)


@pytest.mark.parametrize("shape,num_sections,axis", [
    ((3,), 3, 0), ((12,), 3, 0), ((12,), [2, 3, 4], 0), ((12,), [0, 5, 12], 0),
    ((12, 4), 4, 0), ((12, 4), [2, 5], 0), ((2, 3, 4), 2, -1), ((2, 3, 4), [1, 3], -1),
    ((2, 4, 4), [1, 3], 1)])
def test_split(shape, num_sections, axis):
    """testSplitStaticInt / testArraySplitStaticInt / testHVDSplit / testSplitTypeError:
    equal sections, index lists, unequal ``array_split``; a traced index raises a
    concretization error, a concrete traced one does not; derivatives."""
    rng = rng_for("split", shape, str(num_sections), axis)
    x = rand(rng, shape, rot([F64, I32, np.bool_], len(shape)))
    check(lambda a: np.split(a, num_sections, axis=axis),
          lambda a: anp.split(a, num_sections, axis=axis), [x])
    check(lambda a: np.array_split(a, num_sections, axis=axis),
          lambda a: anp.array_split(a, num_sections, axis=axis), [x])
    for uneven in [2, 5, 7]:
        if abs(axis) < len(shape):
            check(lambda a: np.array_split(a, uneven, axis=axis),
                  lambda a: anp.array_split(a, uneven, axis=axis), [x])
    for name, min_nd in [("vsplit", 2), ("hsplit", 1), ("dsplit", 3)]:
        if len(shape) >= min_nd and not isinstance(num_sections, int):
            check(lambda a: getattr(np, name)(a, num_sections),
                  lambda a: getattr(anp, name)(a, num_sections), [x])
    xf = rand(rng, shape)
    grads(lambda a: anp.split(a, num_sections, axis=axis)[0], (xf,), order=1)


def test_split_type_error():
    """testSplitTypeError: an array of indices works; an abstract traced index raises a
    concretization error; a concrete traced one (under ``jvp``) is fine."""
    assert len(anp.split(np.zeros(3), np.array([1, 2]))) == 3
    with pytest.raises(ad.errors.ConcretizationError):
        ad.jit(lambda idx: anp.split(anp.zeros((12, 2)), idx))(2.)
    with pytest.raises(ad.errors.ConcretizationError):
        ad.jit(lambda idx: anp.split(anp.zeros((12, 2)), [2, idx]))(2)
    ad.jvp(lambda idx: anp.split(anp.zeros((12, 2)), (1, idx.astype(np.int32)))[0],
           (2.,), (1.,))


@pytest.mark.parametrize("arg_shape,out_shape", [((), (1, 1, 1)), ((7, 0), (0, 42, 101)),
                                                 ((3, 4), 12), ((3, 4), (12,)), ((3, 4), -1),
                                                 ((2, 1, 4), (-1,)), ((2, 2, 4), (2, 8))])
def test_reshape(arg_shape, out_shape):
    """testReshape / testReshapeMethod: C and F order, ``-1``; the method's splatted
    form; derivatives."""
    rng = rng_for("reshape", arg_shape, out_shape)
    for i, order in enumerate(["C", "F"]):
        x = rand(rng, arg_shape, rot([F64, I32, np.bool_], i + len(arg_shape)))
        check(lambda a: np.reshape(a, out_shape, order=order),
              lambda a: anp.reshape(a, out_shape, order=order), [x])
    if isinstance(out_shape, tuple):
        check(lambda a: np.reshape(a, out_shape), lambda a: a.reshape(*out_shape), [x])
    xf = rand(rng, arg_shape)
    grads(lambda a: anp.reshape(a, out_shape, order="F"), (xf,), order=1)


@pytest.mark.parametrize("arg_shape", [(), (4,), (3, 4), (3, 1), (2, 1, 4), (0,), (3, 0)])
def test_resize(arg_shape):
    """testResize: to every other shape (repeating the flat input; empty input gives
    zeros)."""
    rng = rng_for("resize", arg_shape)
    for i, out_shape in enumerate([(), (4,), (3, 4), (3, 1), (2, 1, 4), (0,), (3, 0), (7,)]):
        x = rand(rng, arg_shape, rot([F64, I32, np.bool_], i))
        check(lambda a: np.resize(a, out_shape), lambda a: anp.resize(a, out_shape), [x])


@pytest.mark.parametrize("arg_shape", [(), (3,), (3, 4)])
def test_expand_dims_squeeze(arg_shape):
    """testExpandDimsStaticDim / testExpandDimsRepeatedAxisError / testSqueeze."""
    rng = rng_for("expand", arg_shape)
    x = rand(rng, arg_shape)
    dims = list(range(-len(arg_shape) + 1, len(arg_shape))) + [
        np.array(0), np.array(-1), (0,), [np.array(0)], (len(arg_shape), len(arg_shape) + 1)]
    for dim in dims:
        check(lambda a: np.expand_dims(a, dim), lambda a: anp.expand_dims(a, dim), [x])
    y = np.ones((2, 3))
    for bad in ([1, 1], [3, -1]):
        with pytest.raises(ValueError, match="repeated axis"):
            traced(lambda a: anp.expand_dims(a, bad))(y)
    for shape, ax in [((3, 1), None), ((3, 1), 1), ((3, 1), -1), ((3, 1), np.array(1)),
                      ((1, 3, 1), (0, 2)), ((1, 3, 1), (0,)), ((1, 4, 1), (np.array(0),))]:
        z = rand(rng, shape, I32)
        check(lambda a: np.squeeze(a, ax), lambda a: anp.squeeze(a, ax), [z])
    grads(lambda a: anp.squeeze(anp.expand_dims(a, 0)), (x,), order=1)


ARRAY_ARGS = [[True, False, True], 3., [1, 2, 3], np.array([1, 2, 3], dtype=np.int64),
              [1., 2., 3.], [[1, 2], [3, 4], [5, 6]], [[1, 2.], [3, 4], [5, 6]],
              [[1., 2j], [3., 4.], [5., 6.]], [[3, np.array(2, dtype=F64), 1], np.arange(3.)]]


@pytest.mark.parametrize("k", range(len(ARRAY_ARGS)))
def test_array(k):
    """testArray / testArrayFromList / testArrayDtypeInference / testArrayFromMasked:
    nested lists (mixed with arrays), ``dtype`` and ``ndmin``; a masked array loses its
    mask."""
    arg = ARRAY_ARGS[k]
    nd = np.ndim(np.array(arg))
    for i, dtype in enumerate([None, F64, I32, np.bool_, C128, F32]):
        if np.iscomplexobj(np.array(arg)) and dtype not in (None, C128):
            continue
        ndmin = [None, nd, nd + 1, nd + 2][i % 4]
        kw = {} if ndmin is None else {"ndmin": ndmin}
        assert_close(anp.array(arg, dtype=dtype, **kw), np.array(arg, dtype=dtype, **kw))
        assert_close(anp.asarray(arg, dtype=dtype), np.asarray(arg, dtype=dtype))
    m = np.ma.array([1, 2], mask=[True, False])
    assert_close(anp.array(m), np.array(m))


@pytest.mark.parametrize("copy", [None, True, False])
def test_asarray_copy(copy):
    """testAsarrayCopy / testArrayCopy / testArrayCopyAutodiff / testArrayCopyVmap: values
    survive every ``copy`` choice; ``array(x, copy=True)`` is differentiable and batches."""
    for x in [np.arange(4), [0, 1, 2, 3], np.arange(4.0)]:
        if copy is False and isinstance(x, list):
            with pytest.raises(ValueError):
                np.asarray(x, copy=copy)
            continue
        assert_close(anp.asarray(x, copy=copy), np.asarray(x, copy=copy))
        assert_close(anp.array(x, copy=copy), np.array(x, copy=copy))
    f = lambda x: anp.array(x, copy=True) * 2  # noqa: E731
    assert float(ad.grad(lambda x: f(x))(3.0)) == 2.0
    assert_close(ad.vmap(f)(np.arange(3.0)), np.arange(3.0) * 2)


def test_isclose_allclose():
    """testIsClose / testIsCloseCornerCases / testAllClose: finite, infinite and NaN pairs,
    ``equal_nan``, extreme tolerances."""
    rng = rng_for("isclose")
    n = 2
    x, y = rng.standard_normal((n, 1)), rng.standard_normal((n, 1))
    inf = np.full((n, 1), np.inf)
    nan = np.full((n, 1), np.nan)
    args = [x, y, inf, -inf, nan]
    for a, b in itertools.product(args, args):
        for eq in (False, True):
            check(partial(np.isclose, equal_nan=eq), partial(anp.isclose, equal_nan=eq), [a, b])
    assert anp.isclose(6, 10, rtol=0.5) == np.isclose(6, 10, rtol=0.5)
    vals = np.array([-np.nan, -np.inf, -1.00001, -1.0, -0.00001, -0.0,
                     0.0, 0.00001, 1.0, 1.00001, np.inf, np.nan])
    gx, gy = np.meshgrid(vals, vals)
    for atol, rtol, eq in itertools.product([0.0, 1e-4], [0.0, 1e-4], [True, False]):
        check(lambda a, b: np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=eq),
              lambda a, b: anp.isclose(a, b, atol=atol, rtol=rtol, equal_nan=eq), [gx, gy])
    cases = [1, [1], [1, 1 + 1e-4], [1, np.nan]]
    for a, b in itertools.product(cases, cases):
        for eq in (True, False):
            a_, b_ = np.array(a), np.array(b)
            try:
                want = np.allclose(a_, b_, equal_nan=eq, rtol=1e-3)
            except ValueError:
                continue
            assert bool(anp.allclose(a_, b_, equal_nan=eq, rtol=1e-3)) == want
            got = traced(lambda p, q: anp.allclose(p, q, equal_nan=eq, rtol=1e-3))(a_, b_)
            assert bool(got) == want


@pytest.mark.parametrize("shape", [(3,), (2, 3), (3, 2, 4)])
def test_flip_rot90(shape):
    """testFlip / testFlipud / testFliplr / testRot90 / test_rot90_error: every axis, axis
    tuples, every quarter turn in every plane; derivatives."""
    rng = rng_for("flip", shape)
    for i, axis in enumerate(list(range(-len(shape), len(shape))) + [None,
                                                                      tuple(range(len(shape)))]):
        x = rand(rng, shape, rot([F64, I32, np.bool_], i))
        check(lambda a: np.flip(a, axis), lambda a: anp.flip(a, axis), [x])
    check(np.flipud, anp.flipud, [x])
    if len(shape) >= 2:
        check(np.fliplr, anp.fliplr, [x])
        for axes in itertools.permutations(range(len(shape)), 2):
            for k in range(-3, 4):
                check(lambda a: np.rot90(a, k, axes), lambda a: anp.rot90(a, k, axes), [x])
        with pytest.raises(ValueError):
            anp.rot90(traced(lambda v: v)(x) if False else x, axes=(0, 0))
        with pytest.raises(ValueError):
            traced(lambda a: anp.rot90(a, axes=(0, 0)))(x)
        with pytest.raises(ValueError):
            traced(lambda a: anp.rot90(a, axes=(0, 1, 2)))(x)
        grads(lambda a: anp.rot90(a, 1), (rand(rng, shape),), order=1)
    grads(lambda a: anp.flip(a), (rand(rng, shape),), order=1)


def test_ravel():
    """testRavel / ``ravel`` orders: C, F (and ``.ravel()``)."""
    x = rand(rng_for("ravel"), (3, 4), F32)
    for order in ["C", "F"]:
        check(lambda a: np.ravel(a, order), lambda a: anp.ravel(a, order), [x])
    check(lambda a: a.ravel(), lambda a: a.ravel(), [x])


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("mode", ["wrap", "clip", "raise"])
def test_ravel_multi_index(shape, order, mode):
    """testRavelMultiIndex / testRavelMultiIndexDtype: broadcasting index arrays with a few
    out of bounds; ``mode='raise'`` raises for those eagerly and cannot be traced."""
    rng = rng_for("rmi", shape, order, mode)
    x = tuple(rng.integers(-1, d + 1, (3,) * nd) for nd, d in enumerate(shape))

    def run(f, x):
        try:
            return f(x)
        except ValueError as err:
            if str(err).startswith("invalid entry"):
                return -999
            raise
    want = run(lambda x: np.ravel_multi_index(x, shape, order=order, mode=mode), x)
    got = run(lambda x: anp.ravel_multi_index(x, shape, order=order, mode=mode), x)
    assert_close(got, want, check_dtype=False)
    f = lambda x: anp.ravel_multi_index(x, shape, order=order, mode=mode)  # noqa: E731
    if mode != "raise":         # (test_raise_mode_under_jit)
        assert_close(traced(f)(x), want, check_dtype=False)
    idx = np.array([0, 1], dtype=np.int16)
    res = traced(lambda i: anp.ravel_multi_index((i, i), (2, 3), mode="clip"))(idx)
    assert_close(res, np.ravel_multi_index((idx, idx), (2, 3), mode="clip"), check_dtype=False)


@pytest.mark.parametrize("ashape", [(), (4,), (3, 4)])
@pytest.mark.parametrize("mode", ["wrap", "clip", "raise"])
def test_choose(ashape, mode):
    """testChoose: broadcasting choices, every mode (``raise`` cannot be traced);
    derivatives in the choices."""
    rng = rng_for("choose", ashape, mode)
    for i, cshapes in enumerate([[(), (4,)], [(3, 4), (4,), (3, 1)]]):
        a = rng.integers(-1, len(cshapes) + 1, ashape).astype(rot([I32, np.int8], i))
        c = [rand(rng, s, rot([F64, I32], i)) for s in cshapes]

        def run(f, a, c):
            try:
                return f(a, c)
            except ValueError as err:
                if mode == "raise" and str(err).startswith("invalid entry"):
                    return -999
                raise
        want = run(lambda a, c: np.choose(a, c, mode=mode), a, c)
        got = run(lambda a, c: anp.choose(a, c, mode=mode), a, c)
        assert_close(got, want, check_dtype=False)
        if mode != "raise":     # (test_raise_mode_under_jit)
            assert_close(traced(lambda a, c: anp.choose(a, c, mode=mode))(a, c), want,
                         check_dtype=False)
    if mode != "raise":
        a = rng.integers(0, 2, ashape)
        c = (rand(rng, (3, 4)), rand(rng, (4,)))
        grads(lambda *c: anp.choose(a, c, mode=mode), c, order=1)


@pytest.mark.xfail(strict=True, reason="by design: under jit autodiff does not check "
                   "mode='raise' (tests/test_numpy_all_modes.py traces choose's default mode)")
@pytest.mark.parametrize("which", ["choose", "ravel_multi_index"])
def test_raise_mode_under_jit(which):
    """testChoose / testRavelMultiIndex with ``mode='raise'`` under ``jit``: JAX raises a
    concretization error (the check needs values); autodiff leaves the indices unchecked."""
    a = np.array([0, 1, 1])
    with pytest.raises(ad.errors.ConcretizationError):
        if which == "choose":
            ad.jit(lambda a: anp.choose(a, [np.zeros(3), np.ones(3)]))(a)
        else:
            ad.jit(lambda a: anp.ravel_multi_index((a, a), (2, 2)))(a)


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 1, 4)])
def test_unravel_index(shape):
    """testUnravelIndex: in-bounds indices as numpy; under a trace, out-of-bounds indices
    are clipped (JAX's documented behaviour)."""
    rng = rng_for("unravel", shape)
    size = int(np.prod(shape))
    for i, idx_shape in enumerate([(), (4,), (3, 4)]):
        dtype = rot([I32, I64, np.uint8, np.int16], i)
        unsigned = np.dtype(dtype).kind == "u"
        idx = rng.integers(0 if unsigned else -(2 * size) // 3, (2 * size) // 3,
                           idx_shape).astype(dtype)

        def np_fun(index):
            index = np.clip(index, 0 if unsigned else -size, size - 1)
            index = np.where(index < 0, index + size, index)
            return [j.astype(index.dtype) for j in np.unravel_index(index, shape)]
        want = np_fun(idx)
        assert_close(traced(lambda j: anp.unravel_index(j, shape))(idx), want,
                     check_dtype=False)
        ok = np.asarray(want[0]).size and (idx >= 0).all() and (idx < size).all()
        if ok:
            assert_close(anp.unravel_index(idx, shape), np.unravel_index(idx, shape),
                         check_dtype=False)


@pytest.mark.parametrize("from_dtype", [I32, F32, C128, np.bool_])
def test_astype(from_dtype):
    """testAstype / testAstypeBool / testAstypeComplexDowncast: function and method forms,
    to every dtype (complex to real keeps the real part)."""
    x = rand(rng_for("astype", from_dtype), (3, 4), from_dtype)
    for to in [I32, F32, None, np.bool_, F64, C128, np.uint8]:
        if to is None:
            check(lambda a: a.astype(a.dtype), lambda a: anp.astype(a, a.dtype), [x])
            continue
        check(lambda a: a.astype(to), lambda a: anp.astype(a, to), [x])
        check(lambda a: a.astype(to), lambda a: a.astype(to), [x])


def _some_equal(rng, shape, dtype):
    """JAX's ``rand_some_equal``: repeated values, so stability matters."""
    x = rand(rng, shape, dtype)
    if x.size:
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.4] = flat[0]
    return x


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4), (0,), (0, 4), (3, 0)])
def test_sort_argsort(shape):
    """testSort / testArgsort / testArgsortDtype / testArgsortUnstable /
    testSortStableDescending / testSortComplex: every axis and ``axis=None``, stable and
    unstable, NaNs and infinities, the method forms, ``descending``; sort's derivative."""
    rng = rng_for("sort", shape)
    k = 0
    for axis in ([None] + list(range(-len(shape), len(shape)))):
        for stable in [True, False]:
            k += 1
            dtype = rot([F64, I32, np.bool_, F32, C128], k)
            x = _some_equal(rng, shape, dtype)
            if dtype in (F64, F32) and x.size and not stable:
                x.reshape(-1)[rng.random(x.size) < 0.2] = np.nan
                x.reshape(-1)[rng.random(x.size) < 0.1] = -np.inf
            check(lambda a: np.sort(a, axis=axis, kind="stable"),
                  lambda a: anp.sort(a, axis=axis, stable=stable), [x])
            check(lambda a: np.sort(a, axis=axis, kind="stable"),
                  lambda a: anp.sort(a, axis=axis, stable=stable), [x])
            if stable:
                check(lambda a: np.argsort(a, axis=axis, kind="stable"),
                      lambda a: anp.argsort(a, axis=axis, stable=True), [x])
                check(lambda a: np.argsort(a, axis=axis, kind="stable"),
                      lambda a: a.argsort(axis=axis, stable=True), [x])
            for desc in [True, False]:
                want = np.asarray(anp.sort(x, axis=axis, descending=desc))
                idx = traced(lambda a: anp.argsort(a, axis=axis, descending=desc,
                                                   stable=stable))(x)
                got = np.ravel(x)[idx] if axis is None else np.take_along_axis(x, idx, axis)
                assert_close(got, want)
    if len(shape) == 1 and shape[0]:
        check(np.sort_complex, anp.sort_complex, [_some_equal(rng, shape, C128)])
        check(np.sort_complex, anp.sort_complex, [_some_equal(rng, shape, I32)])
    if 0 not in shape:
        grads(lambda a: anp.sort(a, axis=0), (rand(rng, shape),), order=1)
    x = np.array([10., 3., 5., 7., 1.])
    check(lambda a: np.argsort(a).astype(np.int16), partial(anp.argsort, dtype=np.int16), [x])


def test_sort_stable_descending():
    """testSortStableDescending: NaNs last ascending, first descending; the stable
    descending argsort keeps equal elements in their original order."""
    x = np.array([0, 1, np.nan, 0, 2, np.nan, -np.inf, np.inf])
    x_sorted = np.array([-np.inf, 0, 0, 1, 2, np.inf, np.nan, np.nan])
    for f in (lambda f: f, traced):
        assert_close(f(anp.sort)(x), x_sorted)
        assert_close(f(partial(anp.sort, descending=True))(x), x_sorted[::-1])
        assert_close(f(anp.argsort)(x), np.array([6, 0, 3, 1, 4, 7, 2, 5]))
        assert_close(f(partial(anp.argsort, descending=True))(x),
                     np.array([2, 5, 7, 4, 1, 0, 3, 6]))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (3, 1), (2, 3, 4)])
@pytest.mark.parametrize("input_type", [np.array, tuple])
def test_lexsort(shape, input_type):
    """testLexsort: keys as an array or a tuple, along every axis but the key axis."""
    rng = rng_for("lexsort", shape, input_type)
    for i, axis in enumerate((-1, *range(len(shape) - 1))):
        x = input_type(_some_equal(rng, shape, rot([F64, I32, np.bool_], i)))
        check(lambda x: np.lexsort(x, axis=axis), lambda x: anp.lexsort(x, axis=axis), [x])


def _same_partition(got, want, axis, kth, n):
    got, want = np.asarray(got), np.asarray(want)
    kth = kth % n
    np.testing.assert_array_equal(np.take(got, kth, axis), np.take(want, kth, axis))
    for sl in (slice(0, kth), slice(kth + 1, n)):
        idx = [slice(None)] * got.ndim
        idx[axis] = sl
        np.testing.assert_array_equal(np.sort(got[tuple(idx)], axis), np.sort(want[tuple(idx)],
                                                                            axis))


@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
def test_partition_argpartition(shape):
    """testPartition / testArgpartition / testPartitionUnsignedWithZeros /
    testArgpartitionUnsignedWithZeros: the pivot and both sides as numpy's, every axis and
    ``kth``; the values argpartition selects."""
    rng = rng_for("partition", shape)
    k = 0
    for axis in range(-len(shape), len(shape)):
        n = shape[axis]
        for kth in range(-n, n):
            k += 1
            x = rand(rng, shape, rot([F64, I32, F32], k))
            want = np.partition(x, kth, axis=axis)
            for f in (anp.partition, traced(anp.partition, static_argnums=(1, 2))):
                _same_partition(f(x, kth, axis), want, axis, kth, n)
            idx = traced(anp.argpartition, static_argnums=(1, 2))(x, kth, axis)
            vals = np.take_along_axis(x, np.asarray(idx), axis)
            _same_partition(vals, want, axis, kth, n)
            np.testing.assert_array_equal(np.sort(np.asarray(idx), axis),
                                          np.sort(np.argpartition(x, kth, axis), axis))
    for dtype in [np.uint8, np.uint32]:
        arg = np.array([[6, np.iinfo(dtype).max, 0, 4, 3, 1, 0, 7, 5, 2]], dtype=dtype)
        for kth in range(10):
            _same_partition(traced(lambda a: anp.partition(a, kth))(arg),
                            np.partition(arg, kth), -1, kth, 10)
            idx = traced(lambda a: anp.argpartition(a, kth))(arg)
            _same_partition(np.take_along_axis(arg, np.asarray(idx), -1),
                            np.partition(arg, kth), -1, kth, 10)
    grads(lambda a: anp.partition(a, 1, axis=-1), (rand(rng, shape),), order=1)


def _ref_top_k(arr, k, axis, mode):
    """JAX's reference: a stable argsort (of the negated values for 'largest')."""
    key = -arr.astype(np.float64) if mode == "largest" else arr
    idx = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(idx, np.arange(k), axis=axis)
    return np.take_along_axis(arr, idx, axis=axis), idx


@pytest.mark.parametrize("shape", [(20,), (5, 8), (3, 4, 5)])
@pytest.mark.parametrize("mode", ["largest", "smallest"])
def test_top_k(shape, mode):
    """testTopK / testTopKErrors: every axis, k from 0 to the axis length, sorted results,
    indices that gather the values; bad arguments raise ValueError."""
    rng = rng_for("topk", shape, mode)
    i = 0
    for axis in range(-len(shape), len(shape)):
        for k in [0, 1, 3, shape[axis]]:
            i += 1
            x = _some_equal(rng, shape, rot([F32, I32, np.uint32, F64], i))
            want, _ = _ref_top_k(x, k, axis, mode)
            for f in (anp.top_k, traced(lambda x: anp.top_k(x, k, axis=axis, mode=mode))):
                vals, idx = f(x) if f is not anp.top_k else f(x, k, axis=axis, mode=mode)
                assert_close(vals, want)
                assert_close(np.take_along_axis(x, np.asarray(idx), axis=axis), want)
    x = np.arange(10)
    for k, kw, msg in [(-1, {}, "nonnegative"), (15, {}, "no larger"),
                       (2, dict(axis=5), "out of bounds"), (2, dict(mode="middle"), "mode")]:
        with pytest.raises(ValueError, match=msg):
            anp.top_k(x, k, **kw)
    with pytest.raises(ValueError, match="complex"):
        anp.top_k(np.array([1 + 2j, 3 + 4j]), 1)


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (7, 4, 0)])
def test_roll(shape):
    """testRoll / testRollaxis: scalar and tuple shifts (traced too) and axes, large
    shifts; derivatives."""
    rng = rng_for("roll", shape)
    for i, (shifts, axis) in enumerate([(3, None), (1, 1), ((3,), (0,)), ((-2,), (-2,)),
                                        ((1, 2), (0, -1)), ((4, 2, 5, 5, 2, 4), None),
                                        (100, None)]):
        x = rand(rng, shape, rot([F64, I32, np.bool_, C128], i))
        check(lambda a, s: np.roll(a, s, axis), lambda a, s: anp.roll(a, s, axis),
              [x, np.array(shifts)])
    if 0 not in shape:
        grads(lambda a: anp.roll(a, 2, 0), (rand(rng, shape),), order=1)
    x = rand(rng, (1, 2, 3, 4))
    for axis, start in itertools.product([-3, 0, 2, 3], [-4, -1, 2, 4]):
        check(lambda a: np.rollaxis(a, axis, start), lambda a: anp.rollaxis(a, axis, start), [x])


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(bitorder):
    """testPackbits / testUnpackbits: every axis, boolean and integer input, ``count``."""
    rng = rng_for("packbits", bitorder)
    for i, axis in enumerate([None, 0, 1, -2, -1]):
        x = some_zero(rng, (1, 2, 3, 4), rot([np.bool_, I32, np.uint8, np.int8], i))
        check(partial(np.packbits, axis=axis, bitorder=bitorder),
              partial(anp.packbits, axis=axis, bitorder=bitorder), [x])
        u = rng.integers(0, 256, (1, 2, 3, 4)).astype(np.uint8)
        for count in [None, 20]:
            check(partial(np.unpackbits, axis=axis, bitorder=bitorder, count=count),
                  partial(anp.unpackbits, axis=axis, bitorder=bitorder, count=count), [u])


@pytest.mark.parametrize("shape", [(), (1,), (4,), (6,)])
def test_vander(shape):
    """testVander: ``N`` None/0/1/5, increasing and decreasing; derivatives."""
    rng = rng_for("vander", shape)
    if shape == ():
        return
    for i, (n, inc) in enumerate(itertools.product([None, 0, 1, 5], [False, True])):
        x = rand(rng, shape, rot([F64, I32, C128, F32], i))
        check(lambda a: np.vander(a, N=n, increasing=inc),
              lambda a: anp.vander(a, N=n, increasing=inc), [x], check_dtype=False, tol=1e-5)
    grads(lambda a: anp.vander(a, 3), (rand(rng, shape),), order=1)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (0,)])
def test_nan_to_num(shape):
    """testNanToNum: NaN and infinities of every float/complex dtype; ``nan``/``posinf``/
    ``neginf`` values; derivative (1 at finite points)."""
    rng = rng_for("nan_to_num", shape)
    for i, dtype in enumerate([F64, F32, C128, I32, np.bool_]):
        x = rand(rng, shape, dtype)
        if x.dtype.kind == "f" and x.size:
            flat = x.reshape(-1)
            flat[rng.random(flat.size) < 0.2] = np.nan
            flat[rng.random(flat.size) < 0.2] = np.inf
            flat[rng.random(flat.size) < 0.2] = -np.inf
        check(np.nan_to_num, anp.nan_to_num, [x])
        check(lambda a: np.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-7.0),
              lambda a: anp.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-7.0), [x])
    grads(anp.nan_to_num, (rand(rng, shape),), order=1)


def test_nan_to_num_complex():
    """testNanToNum with complex input: each part's NaN/inf replaced, as numpy does."""
    x = np.array([1 + 1j, np.inf + 0j, complex(np.nan, -np.inf), complex(-np.inf, np.nan)])
    check(np.nan_to_num, anp.nan_to_num, [x])
    check(lambda a: np.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-7.0),
          lambda a: anp.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-7.0), [x])
    check(np.nan_to_num, anp.nan_to_num, [x.astype(np.complex64)])
    grads(anp.nan_to_num, (np.array([1 + 2j, -0.5 + 0.25j]),), order=1)


def test_ix_indices():
    """testIx_ / testIndices / testIndicesDefaultDtype."""
    rng = rng_for("ix")
    for shapes in [(), ((7,),), ((3,), (4,)), ((3,), (1,), (4,))]:
        args = [rng.integers(-3, 3, s).astype(I32) for s in shapes]
        check(np.ix_, anp.ix_, args)
    for dims in [(), (2,), (3, 0), (4, 5, 6)]:
        for dtype, sparse in itertools.product([I32, F64, C128, None], [True, False]):
            kw = {} if dtype is None else {"dtype": dtype}
            want = np.indices(dims, sparse=sparse, **kw)
            assert_close(anp.indices(dims, sparse=sparse, **kw), want)
            assert_close(traced(lambda: anp.indices(dims, sparse=sparse, **kw))(), want)
    assert anp.indices((2, 3)).dtype == np.int64


@pytest.mark.parametrize("shape", [(4,), (3, 4), (0,), (3, 0)])
def test_where_one_argument(shape):
    """testWhereOneArgument: ``where(x)`` is ``nonzero(x)``; traced with ``size``."""
    rng = rng_for("where1", shape)
    for dtype in [F64, I32, np.bool_]:
        x = some_zero(rng, shape, dtype)
        assert_close(anp.where(x), np.where(x), check_dtype=False)
        half = x.size // 2
        want = _pad_to(np.where(x), half, None)
        check(lambda a: want, lambda a: anp.where(a, size=half), [x], check_dtype=False)




@pytest.mark.parametrize("shapes", [s for s in itertools.combinations_with_replacement(
    [(), (1,), (3,), (4, 1), (4, 3)], 3)])
def test_where_three_arguments(shapes):
    """testWhereThreeArgument / testWhereScalarPromotion: broadcasting condition and
    branches, mixed dtypes; derivatives in both branches."""
    rng = rng_for("where3", shapes)
    for i, dts in enumerate([(np.bool_, F64, F64), (I32, I32, F32), (F64, np.bool_, C128)]):
        args = [rand(rng, s, d) for s, d in zip(shapes, dts)]
        check(np.where, anp.where, args)
    c = rand(rng, shapes[0], np.bool_)
    grads(lambda x, y: anp.where(c, x, y), (rand(rng, shapes[1]), rand(rng, shapes[2])),
          order=1)
    x = anp.where(np.array([True, False]), 3, np.ones((2,), dtype=np.float32))
    assert x.dtype == np.float32


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("shapes", [[(), (3,), (4, 3)], [(4, 1), (1, 3), ()],
                                    [(3,), (3,), (3,)]])
def test_select(n, shapes):
    """testSelect: 1-2 conditions, broadcasting, mixed dtypes, scalar and array
    defaults; derivatives in the choices."""
    rng = rng_for("select", n, shapes)
    shp = (shapes * 2)[:2 * n + 1]
    for dts in [(F64, F64, F64), (I32, F32, I32), (np.bool_, F64, C128)]:
        conds = [rand(rng, s, np.bool_) for s in shp[:n]]
        choices = [rand(rng, s, d) for s, d in zip(shp[n:2 * n], dts)]
        default = rand(rng, shp[-1], dts[-1])
        dt = np.result_type(default, *choices)
        check(lambda c, ch, d: np.select(c, [x.astype(dt) for x in ch], np.asarray(d, dt)),
              anp.select, [conds, choices, default], check_dtype=False)
    conds = [rand(rng, s, np.bool_) for s in shp[:n]]
    grads(lambda *ch: anp.select(conds, list(ch), 0.5),
          tuple(rand(rng, s) for s in shp[n:2 * n]), order=1)


@pytest.mark.parametrize("shape", [(0,), (5,), (10,)])
@pytest.mark.parametrize("minlength,length", [(0, None), (20, None), (0, 8), (20, 8)])
def test_bincount(shape, minlength, length):
    """testBincount / testBincountNegative: weights, ``minlength``, JAX's static
    ``length`` (traceable); negative values are clipped to 0 under a trace (JAX)."""
    rng = rng_for("bincount", shape, minlength, length)
    for i, dtype in enumerate([I32, np.bool_, np.uint8]):
        x = np.abs(rand(rng, shape, dtype)) if dtype != np.bool_ else rand(rng, shape, dtype)
        for w in [None, rand(rng, shape, F32)]:
            args = () if w is None else (w,)

            def np_fun(x, *args):
                out = np.bincount(x, *args, minlength=minlength)
                if length and length > out.size:
                    return np.pad(out, (0, length - out.size))
                return out[:length]
            want = np_fun(x, *args)
            got = anp.bincount(x, *args, minlength=minlength, length=length)
            assert_close(got, want, check_dtype=False)
            if length is not None:
                f = traced(lambda x, *a: anp.bincount(x, *a, minlength=minlength, length=length))
                assert_close(f(x, *args), want, check_dtype=False)
    x = rng.integers(-100, 100, (1000,)).astype(I32)
    w = rng.random(1000)
    xn = np.where(x < 0, 0, x)
    want = np.bincount(xn, w)
    f = traced(lambda x, w: anp.bincount(x, w, length=want.size))
    assert_close(f(x, w), want, check_dtype=False)
    grads(lambda w: anp.bincount(np.array([0, 1, 1, 3]), w, length=5),
          (rand(rng, (4,)),), order=1)


BLOCKS = [3, [3], [np.array(3)], [np.array([3])], [[np.array(3)]], [[np.array([3])]],
          [3, 4, 5],
          [[np.eye(2, dtype=np.int32) * 2, np.zeros((2, 3), dtype=np.int32)],
           [np.ones((3, 2), dtype=np.int32), np.eye(3, dtype=np.int32) * 3]],
          [np.array([1, 2, 3]), np.array([2, 3, 4]), 10],
          [np.ones((2, 2), dtype=np.int32), np.zeros((2, 2), dtype=np.int32)],
          [[np.array([1, 2, 3])], [np.array([2, 3, 4])]]]


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_block(k):
    """testBlock: nested lists of scalars and arrays."""
    check(np.block, anp.block, [BLOCKS[k]])


def test_block_grad():
    """``block`` is differentiable in its pieces."""
    rng = rng_for("block-grad")
    a, b, c, d = (rand(rng, s) for s in [(2, 2), (2, 3), (1, 2), (1, 3)])
    grads(lambda a, b, c, d: anp.block([[a, b], [c, d]]), (a, b, c, d), order=1)


def test_arange():
    """testArange / testArangeJit / testArangeRandomValues / testArangeOnFloats /
    testArangeTypes / testArangeConcretizationError (testArangeComplex not ported: JAX
    refuses complex bounds, numpy and autodiff accept them)."""
    for args, kw in [((77,), {}), ((2, 13), {}), ((4, 21, 9), {}), ((53, 5, -3), {}),
                     ((77,), dict(dtype=float)), ((2, 13), dict(dtype=int)),
                     ((0, 1, -0.5), {}), ((0.0, 1.0, 0.1), {}), ((-5, 5, 0.5), {}),
                     ((np.int32(5),), {}), ((np.float32(2.5),), {})]:
        assert_close(anp.arange(*args, **kw), np.arange(*args, **kw))
        assert_close(traced(lambda: anp.arange(*args, **kw))(), np.arange(*args, **kw))
    assert_close(ad.jit(lambda: anp.arange(5))(), np.arange(5))
    with pytest.raises(TypeError):
        anp.arange()
    rng = rng_for("arange")
    for dtype in [I32, F32]:
        for _ in range(5):
            start, stop = rand(rng, (), dtype), rand(rng, (), dtype)
            assert_close(anp.arange(start, stop, dtype=dtype),
                         np.arange(start, stop, dtype=dtype))
    with pytest.raises(ad.errors.ConcretizationError):
        ad.jit(lambda n: anp.arange(n))(5)


def test_ediff1d():
    """testEDiff1d / testEDiff1dWithDtypeCast: ``to_begin``/``to_end`` scalars and arrays,
    cast to the input's dtype; derivatives."""
    rng = rng_for("ediff1d")
    for i, shape in enumerate([(), (4,), (3, 4), (0,)]):
        for j, (end_shape, begin_shape) in enumerate([(None, None), ((), None), (None, (2,)),
                                                      ((3,), ())]):
            dtype = rot([F64, I32, F32], i + j)
            x = rand(rng, shape, dtype)
            end = None if end_shape is None else rand(rng, end_shape, dtype)
            begin = None if begin_shape is None else rand(rng, begin_shape, dtype)
            check(np.ediff1d, anp.ediff1d, [x, end, begin])
    x, e, b = rand(rng, (), F32), rand(rng, (), I32), rand(rng, (), F32)
    check(np.ediff1d, anp.ediff1d, [x, e, b])
    grads(lambda a: anp.ediff1d(a, to_begin=1.0), (rand(rng, (5,)),), order=1)


@pytest.mark.parametrize("shapes", [(), (5,), (5, 3)])
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [True, False])
def test_meshgrid(shapes, indexing, sparse):
    """testMeshGrid: 0-2 coordinate vectors, both indexings, sparse and dense; derivatives."""
    rng = rng_for("meshgrid", shapes, indexing, sparse)
    for dtype in [F64, I32, C128]:
        args = [rand(rng, (n,), dtype) for n in shapes]
        check(partial(np.meshgrid, indexing=indexing, sparse=sparse),
              partial(anp.meshgrid, indexing=indexing, sparse=sparse), args)
    if shapes:
        args = tuple(rand(rng, (n,)) for n in shapes)
        grads(lambda *a: anp.meshgrid(*a, indexing=indexing, sparse=sparse)[0], args, order=1)


def test_mgrid_ogrid():
    """testMgrid / testOgrid: integer, float and complex (point count) steps, several
    dimensions; a traced slice bound raises a concretization error."""
    for key in [(), slice(None, 4), (slice(None, 4),), (slice(None, 5), slice(None, 5)),
                (slice(None, 3), slice(None, 2)), slice(1, 4, 2),
                (slice(1, 5, 3), slice(None, 5)), (slice(None, 3), slice(None, 2),
                                                    slice(None, 5)),
                slice(None), slice(-1, 1, 5j), slice(3, 4, 7j),
                (slice(1, 6, 8j), slice(2, 4)), slice(0, 3.5, 0.5), slice(1.3, 4.2, 0.3)]:
        assert_close(anp.mgrid[key], np.mgrid[key], tol=1e-6)
    assert_close(ad.jit(lambda: anp.mgrid[:4])(), np.mgrid[:4])
    for key in [slice(None, 5), slice(1, 7, 2), (slice(None, 5),), (slice(0, 5), slice(1, 3)),
                (slice(1, 3, 2), slice(2, 9, 3)), (slice(None, 5), slice(None, 9),
                                                   slice(None, 11)),
                slice(None), slice(-1, 1, 5j), slice(0, 3.5, 0.3), slice(1.2, 4.8, 0.24)]:
        assert_close(anp.ogrid[key], np.ogrid[key], tol=1e-6)
    assert_close(ad.jit(lambda: anp.ogrid[:5])(), np.ogrid[:5])
    for grid in (anp.mgrid, anp.ogrid):
        with pytest.raises(ad.errors.ConcretizationError):
            ad.jit(lambda a, b: grid[a:b])(0, 2)


def test_r_c_s_index_exp():
    """testR_ / testC_ / testS_ / testIndex_exp: arrays, scalars, directive strings
    (axis, ndmin, 1-d axis; 'r'/'c' matrices), slices with float and complex steps; a bad
    directive raises ValueError."""
    a = np.arange(6).reshape((2, 3))
    for grid, np_grid in [(anp.r_, np.r_), (anp.c_, np.c_)]:
        cases = [(np.array([1, 2, 3]), 0, 0, np.array([4, 5, 6])) if grid is anp.r_ else
                 (np.array([[1, 2, 3]]), 0, 0, np.array([[4, 5, 6]])),
                 ('-1', a, a), ('0,2', [1, 2, 3], [4, 5, 6]), ('0,2,0', [1, 2, 3], [4, 5, 6]),
                 ('1,2,0', [1, 2, 3], [4, 5, 6]), ('0,4,-1', [1, 2, 3], [4, 5, 6]),
                 ('0,4,-2', [1, 2, 3], [4, 5, 6]), ('r', [1, 2, 3], [4, 5, 6]),
                 ('c', [1, 2, 3], [4, 5, 6]), slice(-1, 1, 6j), slice(1.2, 4.8, 0.24)]
        for key in cases:
            assert_close(np.asarray(grid[key]), np.asarray(np_grid[key]), tol=1e-6)
        with pytest.raises(ValueError, match="directive"):
            grid["asdfgh", [1, 2, 3]]
        with pytest.raises(ad.errors.ConcretizationError):
            ad.jit(lambda a, b: grid[a:b])(0, 2)
    assert_close(anp.r_[-1:1:6j, [0] * 3, 5, 6], np.r_[-1:1:6j, [0] * 3, 5, 6], tol=1e-6)
    assert anp.s_[1:2:20] == np.s_[1:2:20]
    assert anp.index_exp[5:3:2j] == np.index_exp[5:3:2j]
    f = traced(lambda x, y: anp.r_[x, 0, y])
    assert_close(f(np.ones(2), np.zeros(3)), np.r_[np.ones(2), 0, np.zeros(3)])


@pytest.mark.parametrize("start_shape", [(), (2,), (2, 2)])
@pytest.mark.parametrize("stop_shape", [(), (2,), (2, 2)])
def test_linspace_logspace_geomspace(start_shape, stop_shape):
    """testLinspace / testLinspaceEndpoints / testLinspaceArrayNum / testLogspace /
    testGeomspace: array endpoints with broadcasting, every axis, ``num`` 0-20,
    ``endpoint``, ``retstep``, ``base``; derivatives in the endpoints."""
    rng = rng_for("linspace", start_shape, stop_shape)
    k = 0
    for num, endpoint in itertools.product([0, 1, 2, 5, 20], [True, False]):
        k += 1
        dtype = rot([None, F64, F32, C128], k)
        start, stop = rand(rng, start_shape, dtype or F64), rand(rng, stop_shape, dtype or F64)
        ndim = len(np.shape(start + stop))
        for axis in range(-ndim, ndim) if ndim else [0]:
            for retstep in [True, False]:
                check(lambda a, b: np.linspace(a, b, num, endpoint=endpoint, retstep=retstep,
                                               dtype=dtype, axis=axis),
                      lambda a, b: anp.linspace(a, b, num, endpoint=endpoint, retstep=retstep,
                                                dtype=dtype, axis=axis), [start, stop],
                      tol=1e-5, check_dtype=False)
            base = rot([10.0, 2, np.e], k)
            check(lambda a, b: np.logspace(a, b, num, endpoint=endpoint, base=base, dtype=dtype,
                                           axis=axis),
                  lambda a, b: anp.logspace(a, b, num, endpoint=endpoint, base=base,
                                            dtype=dtype, axis=axis), [start, stop],
                  tol=1e-5, check_dtype=False)
            if dtype != C128:
                s, t = np.broadcast_arrays(start, stop)
                s = s * np.sign(s) * np.sign(t)
                check(lambda a, b: np.geomspace(a, b, num, endpoint=endpoint, dtype=dtype,
                                                axis=axis),
                      lambda a, b: anp.geomspace(a, b, num, endpoint=endpoint, dtype=dtype,
                                                 axis=axis), [s, t], tol=1e-5,
                      check_dtype=False)
    start, stop = rand(rng, start_shape), rand(rng, stop_shape)
    grads(lambda a, b: anp.linspace(a, b, 5), (start, stop), order=1)
    grads(lambda a, b: anp.logspace(a, b, 4, base=2.0), (start / 3, stop / 3), order=1)
    s, t = np.abs(start) + 0.5, np.abs(stop) + 0.5
    grads(lambda a, b: anp.geomspace(a, b, 4), (s, t), order=1)
    for dtype in [F64, I32, C128]:
        ends = rand(rng, (2,), dtype)
        out = anp.linspace(*ends, 10, dtype=dtype)
        assert_close(np.asarray(out)[[0, -1]], ends, tol=0)
    ends = rand(rng, (2,), F32)
    out = traced(lambda a, b: anp.linspace(a, b, np.array(10, np.int32), dtype=F32))(*ends)
    assert_close(np.asarray(out)[[0, -1]], ends, tol=0)


@pytest.mark.parametrize("arg_shape,out_shape", [((), (3, 4)), ((3,), (2, 3)),
                                                 ((3, 1), (3, 4)), ((1, 4), (3, 4)),
                                                 ((4,), 4), ((), 3), ((1,), (0, 1))])
def test_broadcast_to_shapes_arrays(arg_shape, out_shape):
    """testBroadcastTo / testBroadcastToIssue1522 / testBroadcastToIntIssue1548 /
    testBroadcastToOnScalar / testBroadcastShapes / testBroadcastToInvalidShape /
    ``broadcast_arrays``; derivatives."""
    rng = rng_for("broadcast_to", arg_shape, out_shape)
    for dtype in [F64, I32, np.bool_]:
        x = rand(rng, arg_shape, dtype)
        check(lambda a: np.broadcast_to(a, out_shape), lambda a: anp.broadcast_to(a, out_shape),
              [x])
    y = rand(rng, out_shape if isinstance(out_shape, tuple) else (out_shape,))
    check(np.broadcast_arrays, anp.broadcast_arrays, [x, y])
    grads(lambda a: anp.broadcast_to(a, out_shape), (rand(rng, arg_shape),), order=1)
    shp = out_shape if isinstance(out_shape, tuple) else (out_shape,)
    assert anp.broadcast_shapes(arg_shape, shp) == np.broadcast_shapes(arg_shape, shp)
    with pytest.raises(ValueError):
        anp.broadcast_shapes((3,), (4,))
    with pytest.raises((ValueError, ad.errors.ShapeError)):
        traced(lambda a: anp.broadcast_to(a, (2, 5)))(np.ones((2, 3)))


@pytest.mark.parametrize("shape", [(10,), (10, 15), (4, 5, 6)])
def test_gradient(shape):
    """testGradient / testGradientNonConstant: scalar spacings, per-axis coordinate arrays,
    ``axis`` subsets, ``edge_order``; derivatives."""
    rng = rng_for("gradient", shape)
    k = 0
    for num_axes in range(len(shape)):
        for varargs in itertools.combinations(range(1, len(shape) + 1), num_axes):
            for axis in itertools.combinations(range(len(shape)), num_axes):
                k += 1
                dtype = rot([F64, F32, C128], k)
                y = rand(rng, shape, dtype)
                ax = axis if num_axes else None
                check(lambda y: np.gradient(y, *varargs, axis=ax),
                      lambda y: anp.gradient(y, *varargs, axis=ax), [y], check_dtype=False,
                      tol=1e-5)
    y = rand(rng, shape)
    coords = [np.sort(rand(rng, (s,))) + np.arange(s) * 3 for s in shape]
    for edge_order in [1, 2]:
        check(lambda y, *c: np.gradient(y, *c, edge_order=edge_order),
              lambda y, *c: anp.gradient(y, *c, edge_order=edge_order), [y, *coords])
    grads(lambda y: anp.gradient(y, 0.5, axis=0), (y,), order=1)


@pytest.mark.parametrize("yshape,xshape,dx,axis", [
    ((10,), None, 1.0, -1), ((3, 10), None, 2.0, -1), ((3, 10), None, 3.0, -0),
    ((10, 3), (10,), 1.0, -2), ((3, 10), (10,), 1.0, -1), ((3, 10), (3, 10), 1.0, -1),
    ((2, 3, 10), (3, 10), 1.0, -2)])
def test_trapezoid(yshape, xshape, dx, axis):
    """test_trapezoid: sample points broadcast against ``y``, ``dx``, axes; integer
    data; derivatives in ``y`` and ``x``."""
    rng = rng_for("trapz", yshape, xshape, dx, axis)
    for dtype in [F64, F32, I32]:
        y = rand(rng, yshape, dtype)
        x = None if xshape is None else rand(rng, xshape, dtype)
        check(lambda y, x: np.trapezoid(y, x, dx=dx, axis=axis),
              lambda y, x: anp.trapezoid(y, x, dx=dx, axis=axis), [y, x], check_dtype=False,
              tol=1e-5)
    y = rand(rng, yshape)
    x = None if xshape is None else rand(rng, xshape)
    if x is None:
        grads(lambda y: anp.trapezoid(y, dx=dx, axis=axis), (y,), order=1)
    else:
        grads(lambda y, x: anp.trapezoid(y, x, axis=axis), (y, x), order=1)


@pytest.mark.parametrize("yshape,dxshape,axis", [
    ((3, 10), (3, 1), -1), ((10,), (1,), -1), ((2, 3, 4, 10), (2, 3, 4, 1), -1),
    ((2, 3), (3,), 0), ((3, 4, 5), (4, 5), 0), ((3, 4, 5), (3, 5), 1), ((3, 4, 5), (5,), 1),
    ((2, 3, 4, 5), (2, 4, 5), 1), ((2, 3, 4, 5), (2, 1, 3, 5), 2), ((3, 4, 5), (2, 4, 5), 0),
    ((3, 4, 5), (3, 3, 5), 1)])
def test_trapezoid_array_dx(yshape, dxshape, axis):
    """test_trapezoid_array_dx: ``dx`` arrays broadcast against ``y`` or varying along the
    integration axis."""
    rng = rng_for("trapz-dx", yshape, dxshape, axis)
    y, dx = rand(rng, yshape, F32), rand(rng, dxshape, F32)
    check(lambda y, dx: np.trapezoid(y, dx=dx, axis=axis),
          lambda y, dx: anp.trapezoid(y, dx=dx, axis=axis), [y, dx], tol=1e-5,
          check_dtype=False)


@pytest.mark.parametrize("a_shape", [(4,), (3, 4), (2, 1, 4)])
def test_place(a_shape):
    """testPlace: values cycle into the masked positions (``inplace=False``); derivatives
    in the array and the values."""
    rng = rng_for("place", a_shape)
    for i, v_shape in enumerate([(), (4,), (3, 4), (1,)]):
        dtype = rot([F64, I32, np.bool_, C128], i)
        a, m, v = rand(rng, a_shape, dtype), rand(rng, a_shape, np.bool_), rand(rng, v_shape,
                                                                                  dtype)

        def np_fun(a, m, v):
            a = a.copy()
            np.place(a, m, v)
            return a
        check(np_fun, partial(anp.place, inplace=False), [a, m, v])
    m = np.zeros(a_shape, bool)
    m.reshape(-1)[::2] = True
    grads(lambda a, v: anp.place(a, m, v, inplace=False),
          (rand(rng, a_shape), rand(rng, (3,))), order=1)


def test_from_function_buffer_string():
    """testFromFunction / testFromBuffer / testFromString / testLoad."""
    f = lambda x, y, z: x + 2 * y + 3 * z  # noqa: E731
    assert_close(anp.fromfunction(f, shape=(3, 4, 5)), np.fromfunction(f, shape=(3, 4, 5)))
    buf = b'\x01\x02\x03'
    assert_close(anp.frombuffer(buf, dtype='uint8'), np.frombuffer(buf, dtype='uint8'))
    assert_close(anp.fromstring("1,2,3", sep=',', dtype=int),
                 np.fromstring("1,2,3", sep=',', dtype=int))
    import io
    arr = rand(rng_for("load"), (10,))
    with io.BytesIO() as fh:
        anp.save(fh, arr)
        fh.seek(0)
        assert_close(anp.load(fh), arr)


@pytest.mark.parametrize("kind", ['bool', 'signed integer', 'unsigned integer', 'integral',
                                  'real floating', 'complex floating', 'numeric'])
def test_isdtype(kind):
    """test_isdtype: against numpy for every dtype."""
    for dtype in [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint32, F32, F64,
                  np.complex64, C128]:
        assert anp.isdtype(np.dtype(dtype), kind) == np.isdtype(np.dtype(dtype), kind)


@pytest.mark.parametrize("shape", [(), (4,), (3, 4), (2, 1, 4), (0, 4)])
def test_ndim_shape_size(shape):
    """testNdimShapeSize / testSizeAlongAxis / testSizeAlongAxisTuple /
    testSizeAlongAxisDuplicate: on arrays and traced values, ``size`` along axes."""
    x = rand(rng_for("nss", shape), shape)
    for op in ["ndim", "shape", "size"]:
        want = getattr(np, op)(x)
        assert getattr(anp, op)(x) == want
        got = []
        traced(lambda a: got.append(getattr(anp, op)(a)) or a)(x)
        assert got[0] == want
    for axis in range(-len(shape), len(shape)):
        assert anp.size(x, axis) == np.size(x, axis)
    if len(shape) >= 2:
        assert anp.size(x, (0, 1)) == shape[0] * shape[1]
    y = np.zeros((2, 3, 4))
    for axis in [(0, 0), (0, -3), (1, 1), (1, -2), (2, 2), (2, -1)]:
        with pytest.raises(ValueError, match="repeated axis"):
            anp.size(y, axis)


@pytest.mark.parametrize("shape", [(5,), (5, 5)])
@pytest.mark.parametrize("bins", [10, np.arange(-5, 6), np.array([-5, 0, 3])])
def test_histogram_bin_edges_and_histogram(shape, bins):
    """testHistogramBinEdges / testHistogram: integer and explicit bins, ``range``,
    ``weights``, ``density``."""
    rng = rng_for("hist", shape, str(bins))
    for i, rng_ in enumerate([None, (0, 0), (0, 10)]):
        for weights in [False, True]:
            dtype = rot([F64, I32, F32], i)
            a, w = rand(rng, shape, dtype), np.abs(rand(rng, shape, dtype))
            w = w if weights else None
            check(lambda a: np.histogram_bin_edges(a, bins=bins, range=rng_, weights=w),
                  lambda a: anp.histogram_bin_edges(a, bins=bins, range=rng_, weights=w), [a],
                  check_dtype=False, tol=1e-5)
            if not isinstance(bins, int):
                for density in [True, False]:
                    check(lambda a: np.histogram(a, bins=bins, density=density, weights=w),
                          lambda a: anp.histogram(a, bins=bins, density=density, weights=w),
                          [a], check_dtype=False, tol=1e-5)


@pytest.mark.parametrize("shape", [(5,), (12,)])
@pytest.mark.parametrize("bins", [2, [2, 2], [np.array([0, 1, 3, 5]), np.array([0, 2, 3, 4, 6])]])
def test_histogram2d_histogramdd(shape, bins):
    """testHistogram2d / testHistogramdd: bin counts, edge arrays, ``range``, weights,
    density."""
    rng = rng_for("hist2d", shape, str(bins))
    for i, (weights, density, rng_) in enumerate(itertools.product(
            [False, True], [False, True], [None, [(-1, 1), None], [(-1, 1), (-2, 2)]])):
        if i % 2:
            continue
        a, b, w = (rand(rng, shape, I32) for _ in range(3))
        w = np.abs(w) if weights else None
        with np.errstate(divide='ignore', invalid='ignore'):
            check(lambda a, b: np.histogram2d(a, b, bins=bins, weights=w, density=density,
                                              range=rng_),
                  lambda a, b: anp.histogram2d(a, b, bins=bins, weights=w, density=density,
                                               range=rng_), [a, b], check_dtype=False)
    sample = rand(rng, shape + (3,), I32)
    for bins3, rng3 in [((2, 2, 2), None),
                        ([np.array([-5, 0, 4]), np.array([-4, -1, 2]), np.array([-6, -1, 4])],
                         [(-1, 1), (-2, 2), (-3, 3)])]:
        check(lambda s: np.histogramdd(s, bins=bins3, range=rng3),
              lambda s: anp.histogramdd(s, bins=bins3, range=rng3), [sample], check_dtype=False)


GRAD_RECORDS = [(anp.arcsinh, 1, 2, "positive"), (anp.arccosh, 1, 1, "positive"),
                (anp.arctanh, 1, 2, "unit"), (anp.logaddexp, 2, 1, "unit"),
                (anp.logaddexp2, 2, 2, "unit")]


@pytest.mark.parametrize("op,nargs,order,kind", GRAD_RECORDS,
                         ids=[r[0].__name__ for r in GRAD_RECORDS])
@pytest.mark.parametrize("dtype", [F64, C128])
def test_op_grad(op, nargs, order, kind, dtype):
    """NumpyGradTests.testOpGrad: JAX's compound-op gradient records (float64 and complex
    for the inverse hyperbolics)."""
    if nargs == 2 and dtype == C128:
        pytest.skip("JAX checks logaddexp's real-input records only here")
    rng = rng_for("opgrad", op.__name__, dtype)
    for shapes in [((),) * nargs, ((3,),) * nargs, ((2, 3),) + ((3,),) * (nargs - 1)]:
        if kind == "positive":
            args = tuple(np.abs(rand(rng, s, dtype, 1.0)) + 1.5 for s in shapes)
        else:
            args = tuple((rng.uniform(-0.9, 0.9, s) + (1j * rng.uniform(-0.5, 0.5, s)
                                                       if dtype == C128 else 0)).astype(dtype)
                         for s in shapes)
        grads(op, args, order=order, tol=1e-4)


@pytest.mark.parametrize("op,value,order", [(anp.arcsinh, 0., 2), (anp.arcsinh, 1000., 2),
                                            (anp.arccosh, 1000., 2), (anp.arctanh, 0., 2),
                                            (anp.sinc, 0., 1)])
def test_op_grad_special_value(op, value, order):
    """NumpyGradTests.testOpGradSpecialValue."""
    grads(op, (value,), order=order, tol=3.4e-3)


def test_sinc_at_zero():
    """NumpyGradTests.testSincAtZero / testSincGradArrayInput: derivatives of sinc at 0
    up to fourth order, mixing jvp and grad."""
    def deriv(f):
        return lambda x: ad.jvp(f, (x,), (1.,))[1]
    want = {1: 0.0, 2: -np.pi ** 2 / 3, 3: 0.0, 4: np.pi ** 4 / 5}
    for n, expected in want.items():
        for ops in itertools.combinations_with_replacement([deriv, ad.grad], n):
            f = anp.sinc
            for g in ops:
                f = g(f)
            np.testing.assert_allclose(float(f(0.)), expected, atol=1e-6)
    ad.grad(lambda x: anp.sinc(x).sum())(np.arange(10.))


def test_take_along_axis_issue_1521():
    """NumpyGradTests.testTakeAlongAxisIssue1521: the derivative through
    ``take_along_axis`` with repeated indices."""
    idx = np.repeat(np.arange(3), 10).reshape((30, 1))

    def f(x):
        y = x * anp.arange(3.).reshape((1, 3))
        return anp.take_along_axis(y, idx, -1).sum()
    grads(f, (1.,), order=1)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_grad_ldexp_frexp(shape):
    """NumpyGradTests.testGradLdexp / testGradFrexp."""
    rng = rng_for("ldexp", shape)
    x = rand(rng, shape)
    n = rng.integers(-20, 20, shape)
    grads(lambda x: anp.ldexp(x, n), (x,), order=1)
    grads(lambda x: anp.frexp(x)[0], (x,), order=1)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (1, 4)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_corrcoef(shape, rowvar):
    """testCorrCoef: both orientations; derivatives."""
    rng = rng_for("corrcoef", shape, rowvar)
    x = rand(rng, shape)
    check(partial(np.corrcoef, rowvar=rowvar), partial(anp.corrcoef, rowvar=rowvar), [x],
          check_dtype=False)
    if min(shape) > 1:
        grads(partial(anp.corrcoef, rowvar=rowvar), (x,), order=1)


def test_misc_small_ports():
    """testIssue330 / testScalarDtypePromotion / testIssue453 / testAtLeastNdLiterals /
    testLongLong / testIssue956 / testIssue967 / testZerosShapeErrors / testTraceMethod /
    testIntegerPowersArePrecise / testToList / testToBytes / testArrayContains /
    testArrayEquivExamples: small regressions from JAX's issues."""
    x = anp.full((1, 1), anp.array([1])[0])
    assert x[0, 0] == 1
    assert (1 + anp.eye(1, dtype=np.float32)).dtype == (1 + np.eye(1, dtype=np.float32)).dtype
    a = np.arange(6) + 1
    for i in range(6):
        assert_close(anp.reshape(a, (3, 2), order='F')[i % 3, i // 3],
                     np.reshape(a, (3, 2), order='F')[i % 3, i // 3])
    for op in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        for scalar in [2, 2.0, True]:
            check(lambda: getattr(np, op)(scalar), lambda: getattr(anp, op)(scalar), [])
    assert_close(ad.jit(lambda x: x)(np.longlong(7)), np.int64(7))
    with pytest.raises(TypeError):
        anp.zeros(1.)
    with pytest.raises((TypeError, ad.errors.ConcretizationError)):
        ad.jit(anp.zeros)(2)
    y = np.arange(9.0).reshape(3, 3)
    check(lambda a: a.trace(), lambda a: a.trace(), [y])
    for xv in [3, 4, 5]:
        assert int(anp.power(np.int64(xv), 3)) == xv ** 3
    assert anp.asarray(np.arange(3)).tolist() == [0, 1, 2]
    assert anp.asarray(np.arange(3)).tobytes() == np.arange(3).tobytes()
    assert 2 in anp.asarray(np.arange(3))


JAX_ARGMINMAX = [("argmin", False), ("argmax", False), ("nanargmin", True), ("nanargmax", True)]


@pytest.mark.parametrize("name,nan", JAX_ARGMINMAX)
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 1, 4)])
def test_argminmax(name, nan, shape):
    """testArgMinMax / testArgMinMaxEmpty: every axis, ``keepdims``, repeated values (the
    first wins), NaNs for the nan-variants; an empty axis raises ValueError."""
    rng = rng_for(name, shape)
    for i, axis in enumerate(range(-len(shape), len(shape))):
        dtype = rot([F64, I32, F32], i)
        x = _some_equal(rng, shape, dtype)
        if nan and x.dtype.kind == "f":
            x.reshape(-1)[1] = np.nan
        for keepdims in [False, True]:
            check(lambda a: getattr(np, name)(a, axis=axis, keepdims=keepdims),
                  lambda a: getattr(anp, name)(a, axis=axis, keepdims=keepdims), [x],
                  check_dtype=False)
    with pytest.raises(ValueError):
        traced(lambda a: getattr(anp, name)(a, axis=0))(np.zeros((0, 3)))


UNIQUE_SHAPES = [(0,), (5,), (10,), (3, 4), (2, 3, 2)]


@pytest.mark.parametrize("shape", UNIQUE_SHAPES)
def test_unique(shape):
    """lax_numpy_setops_test's unique tests (the sets users call with this file's
    functions): ``return_index``/``return_inverse``/``return_counts``, ``axis``, and JAX's
    static ``size``/``fill_value`` under a trace; the ``unique_*`` array-API forms."""
    rng = rng_for("unique", shape)
    x = rng.integers(-2, 3, shape).astype(rot([F64, I32], len(shape)))
    for ri, rv, rc in itertools.product([False, True], repeat=3):
        kw = dict(return_index=ri, return_inverse=rv, return_counts=rc)
        want = np.unique(x, **kw)
        assert_close(anp.unique(x, **kw), want)
        for axis in range(x.ndim):
            if x.size:
                assert_close(anp.unique(x, axis=axis, **kw), np.unique(x, axis=axis, **kw))
    vals = np.unique(x)
    for size in [1, vals.size, vals.size + 3]:
        want = np.concatenate([vals, np.full(max(size - vals.size, 0), vals[0] if vals.size
                                             else 0, x.dtype)])[:size]
        f = traced(lambda a: anp.unique(a, size=size))
        if vals.size:
            assert_close(f(x), want)
        g = traced(lambda a: anp.unique(a, size=size, fill_value=-7))
        want = np.concatenate([vals, np.full(max(size - vals.size, 0), -7, x.dtype)])[:size]
        assert_close(g(x), want)
    assert_close(np.sort(anp.unique_values(x)), np.sort(np.unique_values(x)))
    assert_close(tuple(anp.unique_counts(x)), tuple(np.unique_counts(x)))
    assert_close(tuple(anp.unique_inverse(x)), tuple(np.unique_inverse(x)))
    assert_close(tuple(anp.unique_all(x)), tuple(np.unique_all(x)))


@pytest.mark.parametrize("n1,n2", [(0, 3), (5, 5), (6, 3), (4, 8)])
def test_set_operations(n1, n2):
    """lax_numpy_setops_test: ``union1d``, ``intersect1d`` (``assume_unique``,
    ``return_indices``), ``setdiff1d``, ``setxor1d``, ``isin`` (``invert``); JAX's static
    ``size`` for the traced forms."""
    rng = rng_for("sets", n1, n2)
    a, b = rng.integers(-3, 4, n1).astype(I32), rng.integers(-3, 4, n2).astype(I32)
    assert_close(anp.union1d(a, b), np.union1d(a, b))
    assert_close(anp.intersect1d(a, b), np.intersect1d(a, b))
    assert_close(anp.intersect1d(a, b, return_indices=True),
                 np.intersect1d(a, b, return_indices=True))
    ua, ub = np.unique(a), np.unique(b)
    assert_close(anp.intersect1d(ua, ub, assume_unique=True),
                 np.intersect1d(ua, ub, assume_unique=True))
    assert_close(anp.setdiff1d(a, b), np.setdiff1d(a, b))
    assert_close(anp.setxor1d(a, b), np.setxor1d(a, b))
    for invert in [False, True]:
        check(lambda p, q: np.isin(p, q, invert=invert),
              lambda p, q: anp.isin(p, q, invert=invert), [a, b])
    for name in ["union1d", "setdiff1d", "intersect1d", "setxor1d"]:
        want = getattr(np, name)(a, b)
        size = want.size + 2
        f = traced(lambda p, q: getattr(anp, name)(p, q, size=size, fill_value=99))
        got = np.asarray(f(a, b))
        np.testing.assert_array_equal(got[:want.size], want)
        np.testing.assert_array_equal(got[want.size:], 99)


@pytest.mark.parametrize("signature", [None, "(n)->()", "(n),(n)->()", "(m,n),(n)->(m)"])
def test_vectorize(signature):
    """lax_numpy_vectorize_test: elementwise and gufunc-style signatures, ``excluded``
    arguments; derivatives through the vectorized function."""
    rng = rng_for("vectorize", signature)
    if signature is None:
        f = anp.vectorize(lambda x, y: x * y + 1.0)
        x, y = rand(rng, (3, 1)), rand(rng, (4,))
        check(np.vectorize(lambda x, y: x * y + 1.0), f, [x, y])
        grads(f, (x, y), order=1)
        g = anp.vectorize(lambda x, p: x ** p, excluded={1})
        check(lambda x: x ** 2, lambda x: g(x, 2), [x])
    elif signature == "(n)->()":
        f = anp.vectorize(lambda v: anp.sum(v * v), signature=signature)
        x = rand(rng, (2, 3, 5))
        check(lambda v: np.sum(v * v, axis=-1), f, [x])
        grads(f, (x,), order=1)
    elif signature == "(n),(n)->()":
        f = anp.vectorize(anp.dot, signature=signature)
        x, y = rand(rng, (4, 3)), rand(rng, (3,))
        check(lambda p, q: p @ q, f, [x, y])
    else:
        f = anp.vectorize(anp.matmul, signature=signature)
        m, v = rand(rng, (2, 3, 4)), rand(rng, (5, 1, 4))
        check(np.vectorize(np.matmul, signature=signature), f, [m, v])


def test_numba_jit_handful():
    """A handful of this file's functions under the Numba ``ad.jit``, in one compile: pad
    (reflect odd, mean), concatenate, where, cumsum, polyval, interp, roll, insert."""
    rng = rng_for("numba")
    x = rand(rng, (3, 4))
    v = np.sort(rand(rng, (6,)))
    p = rand(rng, (4,))

    def f(x, v, p):
        return (anp.pad(x, ((1, 2), (3, 1)), mode="reflect", reflect_type="odd"),
                anp.pad(x, 2, mode="mean", stat_length=2),
                anp.concatenate([x, x * 2], axis=1),
                anp.where(x > 0, x, -x),
                anp.cumsum(x, axis=1),
                anp.polyval(p, x),
                anp.interp(x, v, v ** 2),
                anp.roll(x, 2, axis=1),
                anp.insert(v, 2, 9.0))

    def g(x, v, p):
        return (np.pad(x, ((1, 2), (3, 1)), mode="reflect", reflect_type="odd"),
                np.pad(x, 2, mode="mean", stat_length=2),
                np.concatenate([x, x * 2], axis=1), np.where(x > 0, x, -x),
                np.cumsum(x, axis=1), np.polyval(p, x), np.interp(x, v, v ** 2),
                np.roll(x, 2, axis=1), np.insert(v, 2, 9.0))
    assert_close(ad.jit(f)(x, v, p), g(x, v, p))
