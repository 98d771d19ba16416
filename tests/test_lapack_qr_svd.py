"""The QR and thin-SVD helpers of jitted kernels (``numba_runtime.qr_into`` / ``svd_into``,
on ``lapack.geqrf_into`` / ``gesdd_into``: numpy's OpenBLAS), called directly, against
numpy: Q and R exactly numpy's (signs included, both modes), S numpy's singular values,
orthonormal factors that rebuild A; tall, wide, square, 1 x 1, empty, ill-conditioned and
rank-deficient matrices in the four dtypes; NaN input; the fallback on Numba's LAPACK
binding (``qr_into_numba`` / ``svd_into_numba``) on the same cases.
"""
import numpy as np
import pytest

from autodiff.backends import blas_pool, lapack, numba_runtime as rt

DTYPES = [np.float64, np.float32, np.complex128, np.complex64]
EPS = {np.float64: 1e-12, np.complex128: 1e-12, np.float32: 2e-6, np.complex64: 2e-6}
REAL = {np.float64: np.float64, np.complex128: np.float64,
        np.float32: np.float32, np.complex64: np.float32}


def _rand(shape, dtype, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * r.standard_normal(shape)
    return a.astype(dtype)


def _with_singular_values(m, n, s, dtype, seed=1):
    """An m x n matrix with singular values ``s`` (len min(m, n))."""
    k = min(m, n)
    u, _ = np.linalg.qr(_rand((m, k), np.complex128 if np.dtype(dtype).kind == "c"
                              else np.float64, seed))
    v, _ = np.linalg.qr(_rand((n, k), u.dtype, seed + 1))
    return ((u * s) @ v.conj().T).astype(dtype)


def _cases(dtype):
    k = np.arange(5)
    rank2 = _rand((6, 2), dtype, 3) @ _rand((2, 5), dtype, 4)           # rank 2 of 5
    return {
        "tall": _rand((7, 4), dtype),
        "wide": _rand((4, 7), dtype, 5),
        "square": _rand((5, 5), dtype, 6),
        "1x1": _rand((1, 1), dtype, 7),
        "hilbert": (1.0 / (k[:, None] + k[None, :] + 1)).astype(dtype),
        "cond1e12": _with_singular_values(6, 5, np.logspace(0, -12, 5), dtype),
        "rank2": rank2,
    }


def close(got, want, dtype, scale=1.0):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.size:
        tol = EPS[dtype] * scale
        np.testing.assert_allclose(got, want, rtol=tol,
                                   atol=tol * max(1.0, np.abs(want).max()))


def orthonormal_columns(q, dtype):
    close(q.conj().T @ q, np.eye(q.shape[1], dtype=q.dtype), dtype, 10)


QR = [rt.qr_into, rt.qr_into_numba]
SVD = [rt.svd_into, rt.svd_into_numba]


def test_numpys_lapack_is_found_and_used():
    # numpy's wheels ship OpenBLAS with LAPACK, so the kernels' path is the one tested here
    assert lapack.HAVE_LAPACK and lapack.HAVE_LAPACK == blas_pool.HAVE_CBLAS
    assert rt.qr_into.py_func is rt._qr_lapack and rt.svd_into.py_func is rt._svd_lapack
    for r in ("geqrf", "orgqr", "gesdd"):
        assert r in lapack.ROUTINES


def _qr(f, a, mode):
    m, n = a.shape
    kq = m if (mode == "complete" and m > n) else min(m, n)
    q, r = np.full((m, kq), 7, a.dtype), np.full((kq, n), 7, a.dtype)
    f(a, q, r)
    return q, r


@pytest.mark.parametrize("f", QR, ids=["lapack", "numba"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_is_numpys(f, dtype):
    for name, a in _cases(dtype).items():
        a0 = a.copy()
        for mode in ("reduced", "complete"):
            q, r = _qr(f, a, mode)
            q0, r0 = np.linalg.qr(a, mode=mode)
            close(q, q0, dtype)                    # signs included
            close(r, r0, dtype)
            assert np.all(np.tril(r, -1) == 0), name
            orthonormal_columns(q, dtype)
            close(q @ r, a, dtype, 10)
        assert np.array_equal(a, a0)               # A is not written


@pytest.mark.parametrize("f", QR, ids=["lapack", "numba"])
def test_qr_empty_and_nan(f):
    for shape in ((3, 0), (0, 3), (0, 0)):
        a = np.empty(shape)
        for mode in ("reduced", "complete"):
            q, r = _qr(f, a, mode)
            q0, r0 = np.linalg.qr(a, mode=mode)
            assert np.array_equal(q, q0) and np.array_equal(r, r0)
    a = _rand((5, 3), np.float64)
    a[2, 1] = np.nan
    for mode in ("reduced", "complete"):           # NaN spreads as in numpy
        q, r = _qr(f, a, mode)
        q0, r0 = np.linalg.qr(a, mode=mode)
        np.testing.assert_array_equal(np.isnan(q), np.isnan(q0))
        np.testing.assert_array_equal(np.isnan(r), np.isnan(r0))
        assert np.isnan(q).any() and np.isnan(r).any()


def _svd(f, a):
    m, n = a.shape
    k = min(m, n)
    u, s, vt = (np.full((m, k), 7, a.dtype), np.full(k, 7, REAL[a.dtype.type]),
                np.full((k, n), 7, a.dtype))
    f(a, u, s, vt)
    return u, s, vt


@pytest.mark.parametrize("f", SVD, ids=["lapack", "numba"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_is_numpys(f, dtype):
    for name, a in _cases(dtype).items():
        a0 = a.copy()
        u, s, vt = _svd(f, a)
        s0 = np.linalg.svd(a, compute_uv=False)
        assert s.dtype == s0.dtype == REAL[dtype]
        close(s, s0, dtype, 10)
        assert np.all(np.diff(s) <= 0), name
        orthonormal_columns(u, dtype)
        orthonormal_columns(vt.conj().T, dtype)
        close((u * s) @ vt, a, dtype, 10)
        assert np.array_equal(a, a0)


@pytest.mark.parametrize("f", SVD, ids=["lapack", "numba"])
def test_svd_nan_empty_and_strided_outputs(f):
    a = _rand((4, 6), np.complex128)
    a[1, 1] = np.nan
    u, s, vt = _svd(f, a)
    assert np.isnan(u).all() and np.isnan(s).all() and np.isnan(vt).all()
    a[1, 1] = np.inf
    assert np.isnan(_svd(f, a)[1]).all()
    for shape in ((3, 0), (0, 3)):
        u, s, vt = _svd(f, np.empty(shape))
        assert u.shape == (shape[0], 0) and s.shape == (0,) and vt.shape == (0, shape[1])
    # outputs that are not C-contiguous: gesdd writes into buffers, copied out
    a = _rand((6, 4), np.float64)
    u, s, vt = np.zeros((6, 8))[:, ::2], np.zeros(8)[::2], np.zeros((4, 8))[:, 1::2]
    f(a, u, s, vt)
    close(s, np.linalg.svd(a, compute_uv=False), np.float64, 10)
    close((u * s) @ vt, a, np.float64, 10)


def test_gesdd_info():
    a = np.array([[1.0, np.nan], [0.0, 1.0]])
    u, s, vt = np.empty((2, 2)), np.empty(2), np.empty((2, 2))
    assert lapack.gesdd_into(a, u, s, vt) != 0 and np.isnan(s).all()
    assert lapack.gesdd_into(np.eye(2), u, s, vt) == 0 and np.array_equal(s, [1.0, 1.0])
