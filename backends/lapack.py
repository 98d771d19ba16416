"""LAPACK inside jitted kernels: the routines of the OpenBLAS that numpy itself loads.

numpy's wheels ship one OpenBLAS (``numpy.libs/libscipy_openblas64_*.so``) exporting the
Fortran LAPACK and BLAS entry points under ``scipy_<x><routine>_64_`` (ILP64: 64-bit
integers). Their addresses are looked up once with ctypes at import and registered with
LLVM under fixed names (``autodiff_lapack_dpotrf`` ...), as blas_pool does for CBLAS, so a
kernel loaded from the disk cache in another process links against this process's
library: the registration happens at every import, before any cached kernel is loaded.
scipy is never imported; without numpy's OpenBLAS (another BLAS vendor) ``HAVE_LAPACK``
is False and the solvers of :mod:`.numba_runtime` keep their hand-written loops.

Kernels hold matrices in C order; LAPACK reads column-major. A C-order ``A`` is the
column-major ``Aᵀ``, so the solvers work on that view without transposed copies:
``solve`` factors ``Aᵀ = P L U`` and solves ``Xᵀ Aᵀ = Bᵀ`` with two right-side
triangular solves (one ``getrs('T')`` for a single right-hand side); ``slogdet`` uses
``det Aᵀ = det A``. ``cholesky`` alone copies its triangle transposed (potrf's 'L' path,
faster than the 'U' path on the view). QR (geqrf, then orgqr/ungqr) and the thin SVD
(gesdd) run in double precision for every dtype, as numpy's linalg does, so that their
results (signs included) are numpy's: both work on a column-major copy of A, as numpy
does (gesdd of the view ``Aᵀ`` would give other signs). Workspace sizes come from LAPACK's queries (lwork = -1). Each
routine returns LAPACK's ``info``; the callers turn a nonzero one into the NaN results
their docstrings define.

Calls of order >= ``blas_pool.LAPACK_MIN_N`` run on one OpenBLAS thread or on the
``jit_blas_threads`` setting's, whichever lately took less wall time per MFLOP
(:func:`blas_pool.lapack_begin`); smaller ones on one.

>>> import numpy as np
>>> from autodiff.backends import lapack
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> L = np.empty_like(a)
>>> if lapack.HAVE_LAPACK:
...     info = lapack.potrf_into(a, L)
... else:
...     L[...], info = np.linalg.cholesky(a), 0
>>> info, np.allclose(L @ L.T, a), float(L[0, 1])
(0, True, 0.0)
"""
import ctypes
import hashlib
import os

import numpy as np
from llvmlite import binding as llvm
from numba import njit, types
from numba.extending import overload

from . import blas_pool
from .blas_pool import numpy_openblas_paths

_OPTS = dict(fastmath=False, error_model="numpy", nogil=True)

# routine -> number of hidden Fortran string lengths (trailing size_t arguments)
ROUTINES = {"potrf": 1, "getrf": 0, "getrs": 1, "trsm": 4, "geqrf": 0, "orgqr": 0, "gesdd": 1}
# routine -> its name for the complex letters, where that differs (Q of a QR: zungqr)
_COMPLEX_NAME = {"orgqr": "ungqr"}
# routine -> pointer arguments of the real, of the complex routine (complex gesdd: rwork)
_N_PTR = {"potrf": (5, 5), "getrf": (6, 6), "getrs": (9, 9), "trsm": (11, 11),
          "geqrf": (8, 8), "orgqr": (9, 9), "gesdd": (14, 15)}
_LETTER = {types.float64: "d", types.float32: "s", types.complex128: "z", types.complex64: "c"}

# Sizes from which LAPACK beats the hand loops (measured, benchmarks/RESULTS_linalg.md).
CHOLESKY_MIN_N = 16
SOLVE_MIN_N = 20
SLOGDET_MIN_N = 20
TRSM_MIN_N = 10


def _find():
    """(routine -> letter -> address, integer bits, description) of numpy's OpenBLAS, or None."""
    for path in numpy_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for pre, suf, bits in (("scipy_", "_64_", 64), ("", "_64_", 64), ("scipy_", "_", 32),
                               ("", "_", 32)):
            found = {}
            for r in ROUTINES:
                for x in "dszc":
                    name = _COMPLEX_NAME.get(r, r) if x in "zc" else r
                    fn = getattr(lib, f"{pre}{x}{name}{suf}", None)
                    if fn is not None:
                        found.setdefault(r, {})[x] = ctypes.cast(fn, ctypes.c_void_p).value
            if all(len(found.get(r, ())) == 4 for r in ROUTINES):
                return found, bits, f"{os.path.basename(path)}:{pre}<x><routine>{suf}"
    return None


def _register():
    if not blas_pool.HAVE_CBLAS:      # the thread setting lives there; one library or none
        return None
    found = _find()
    if found is None:
        return None
    addrs, bits, desc = found
    if bits != blas_pool.BLAS_INT_BITS:
        return None
    for r, by in addrs.items():
        for x, addr in by.items():
            llvm.add_symbol(f"autodiff_lapack_{x}{r}", addr)
    return bits, desc


try:
    _found = _register()
except Exception:  # noqa: BLE001 - any trouble finding the library: the hand loops
    _found = None
HAVE_LAPACK = _found is not None
INT = np.int64 if (_found and _found[0] == 64) else np.int32   # LAPACK's integer
LAPACK = f"LAPACK {_found[1]}" if HAVE_LAPACK else "no LAPACK (hand-written loops)"


def file_digest():
    """A hash of this file: kernels inline its helpers, so it belongs in their cache key."""
    with open(__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


_EXT = {r: {x: types.ExternalFunction(f"autodiff_lapack_{x}{r}",
                                      types.void(*([types.intp] * (_N_PTR[r][x in "zc"]
                                                                   + nlen))))
            for x in "dszc"}
        for r, nlen in ROUTINES.items()}


def _ext(routine, dtype):
    return _EXT[routine][_LETTER[dtype]]


# Every scalar goes to Fortran by address: the scalars of one call sit in one small
# integer array ``p`` (a character as its code: the low byte, little-endian), read back
# after the call so that Numba keeps it alive across it.

def _call_potrf(a, p):
    raise TypeError("_call_potrf is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_potrf, jit_options=_OPTS)
def _call_potrf_typed(a, p):
    f = _ext("potrf", a.dtype)

    def impl(a, p):               # p: uplo, n, lda, info
        b, s = np.intp(p.ctypes.data), p.itemsize
        f(b, b + s, np.intp(a.ctypes.data), b + 2 * s, b + 3 * s, np.intp(1))
        return p[3]
    return impl


def _call_getrf(a, ipiv, p):
    raise TypeError("_call_getrf is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_getrf, jit_options=_OPTS)
def _call_getrf_typed(a, ipiv, p):
    f = _ext("getrf", a.dtype)

    def impl(a, ipiv, p):         # p: m, n, lda, info
        b, s = np.intp(p.ctypes.data), p.itemsize
        f(b, b + s, np.intp(a.ctypes.data), b + 2 * s, np.intp(ipiv.ctypes.data), b + 3 * s)
        return p[3]
    return impl


def _call_getrs(lu, ipiv, x, p):
    raise TypeError("_call_getrs is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_getrs, jit_options=_OPTS)
def _call_getrs_typed(lu, ipiv, x, p):
    f = _ext("getrs", lu.dtype)

    def impl(lu, ipiv, x, p):     # p: trans, n, nrhs, lda, ldb, info
        b, s = np.intp(p.ctypes.data), p.itemsize
        f(b, b + s, b + 2 * s, np.intp(lu.ctypes.data), b + 3 * s, np.intp(ipiv.ctypes.data),
          np.intp(x.ctypes.data), b + 4 * s, b + 5 * s, np.intp(1))
        return p[5]
    return impl


def _call_trsm(t, x, alpha, p):
    raise TypeError("_call_trsm is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_trsm, jit_options=_OPTS)
def _call_trsm_typed(t, x, alpha, p):
    f = _ext("trsm", t.dtype)

    def impl(t, x, alpha, p):     # p: side, uplo, transa, diag, m, n, lda, ldb
        b, s = np.intp(p.ctypes.data), p.itemsize
        one = np.intp(1)
        f(b, b + s, b + 2 * s, b + 3 * s, b + 4 * s, b + 5 * s, np.intp(alpha.ctypes.data),
          np.intp(t.ctypes.data), b + 6 * s, np.intp(x.ctypes.data), b + 7 * s,
          one, one, one, one)
        return p[0] + alpha.size * 0
    return impl


def _call_geqrf(a, tau, work, p):
    raise TypeError("_call_geqrf is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_geqrf, jit_options=_OPTS)
def _call_geqrf_typed(a, tau, work, p):
    f = _ext("geqrf", a.dtype)

    def impl(a, tau, work, p):    # p: m, n, lda, lwork, info
        b, s = np.intp(p.ctypes.data), p.itemsize
        f(b, b + s, np.intp(a.ctypes.data), b + 2 * s, np.intp(tau.ctypes.data),
          np.intp(work.ctypes.data), b + 3 * s, b + 4 * s)
        return p[4] + (tau.size + work.size) * 0
    return impl


def _call_orgqr(a, tau, work, p):
    raise TypeError("_call_orgqr is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_orgqr, jit_options=_OPTS)
def _call_orgqr_typed(a, tau, work, p):
    f = _ext("orgqr", a.dtype)      # ?ungqr for the complex letters

    def impl(a, tau, work, p):    # p: m, n, k, lda, lwork, info
        b, s = np.intp(p.ctypes.data), p.itemsize
        f(b, b + s, b + 2 * s, np.intp(a.ctypes.data), b + 3 * s, np.intp(tau.ctypes.data),
          np.intp(work.ctypes.data), b + 4 * s, b + 5 * s)
        return p[5] + (tau.size + work.size) * 0
    return impl


def _call_gesdd(a, sv, u, vt, work, rwork, iwork, p):
    raise TypeError("_call_gesdd is typed by its Numba overload below: it runs only "
                    "inside a compiled kernel")


@overload(_call_gesdd, jit_options=_OPTS)
def _call_gesdd_typed(a, sv, u, vt, work, rwork, iwork, p):
    from numba.core.errors import TypingError
    real = getattr(a.dtype, "underlying_float", a.dtype)
    if sv.dtype != real or u.dtype != a.dtype or vt.dtype != a.dtype \
            or rwork.dtype != real or work.dtype != a.dtype:
        raise TypingError(f"gesdd: s, rwork must be {real}, u, vt, work {a.dtype}")
    f = _ext("gesdd", a.dtype)
    one = np.intp(1)

    if isinstance(a.dtype, types.Complex):
        def impl(a, sv, u, vt, work, rwork, iwork, p):
            # p: jobz, m, n, lda, ldu, ldvt, lwork, info
            b, s = np.intp(p.ctypes.data), p.itemsize
            f(b, b + s, b + 2 * s, np.intp(a.ctypes.data), b + 3 * s, np.intp(sv.ctypes.data),
              np.intp(u.ctypes.data), b + 4 * s, np.intp(vt.ctypes.data), b + 5 * s,
              np.intp(work.ctypes.data), b + 6 * s, np.intp(rwork.ctypes.data),
              np.intp(iwork.ctypes.data), b + 7 * s, one)
            return p[7] + (sv.size + u.size + vt.size + work.size + rwork.size
                           + iwork.size) * 0
    else:
        def impl(a, sv, u, vt, work, rwork, iwork, p):
            b, s = np.intp(p.ctypes.data), p.itemsize
            f(b, b + s, b + 2 * s, np.intp(a.ctypes.data), b + 3 * s, np.intp(sv.ctypes.data),
              np.intp(u.ctypes.data), b + 4 * s, np.intp(vt.ctypes.data), b + 5 * s,
              np.intp(work.ctypes.data), b + 6 * s, np.intp(iwork.ctypes.data), b + 7 * s,
              one)
            return p[7] + (sv.size + u.size + vt.size + work.size + iwork.size) * 0
    return impl


def _empty_wide(A, shape):
    """An empty array of ``shape`` in ``A``'s dtype made double (complex128 for a complex
    ``A``, else float64): numpy's linalg computes float32/complex64 in double precision."""
    raise NotImplementedError


@overload(_empty_wide, jit_options=_OPTS)
def _empty_wide_typed(A, shape):
    dt = np.complex128 if isinstance(A.dtype, types.Complex) else np.float64
    return lambda A, shape: np.empty(shape, dt)


def _rwork(F, k, mx):
    """complex gesdd's real workspace (numpy's size for jobz 'S'); one unused entry for a
    real ``F``."""
    raise NotImplementedError


@overload(_rwork, jit_options=_OPTS)
def _rwork_typed(F, k, mx):
    if isinstance(F.dtype, types.Complex):
        return lambda F, k, mx: np.empty(max(1, k * max(5 * k + 7, 2 * mx + 2 * k + 1)),
                                         np.float64)
    return lambda F, k, mx: np.empty(1, np.float64)


@njit(**_OPTS)
def _lwork(work):
    """The size a workspace query (lwork = -1) left in ``work[0]``."""
    return max(1, int(work[0].real))


_U, _L, _N, _T, _R, _D = 85, 76, 78, 84, 82, 78      # 'U' 'L' 'N' 'T' 'R', diag 'N'


@njit(**_OPTS)
def _tcopy_lower(src, dst):
    """``dst[j, i] = src[i, j]`` for ``i >= j`` (the lower triangle, transposed), by 32 x 32
    tiles so that both sides stay in cache."""
    n = src.shape[0]
    for i0 in range(0, n, 32):
        for j0 in range(0, i0 + 1, 32):
            for i in range(i0, min(i0 + 32, n)):
                for j in range(j0, min(j0 + 32, i + 1)):
                    dst[j, i] = src[i, j]


@njit(**_OPTS)
def potrf_into(A, L):
    """Cholesky of the matrix held in ``A``'s lower triangle (C order): ``L`` (C order)
    gets the factor with ``A = L Lᴴ`` and zeros above the diagonal. potrf's 'L' path on a
    transposed copy (its 'U' path, which would read A in place, ran 1.6x slower here).
    Returns info (> 0: not positive definite; ``L`` is then not written)."""
    n = A.shape[0]
    F = np.empty((n, n), A.dtype)
    _tcopy_lower(A, F)          # column-major F holds A's lower triangle as is
    p = np.empty(4, INT)
    p[0], p[1], p[2], p[3] = _L, n, max(n, 1), 0
    tok = blas_pool.lapack_begin(n, n * n * n // 3_000_000, 0)
    info = _call_potrf(F, p)
    blas_pool.lapack_end(tok)
    if info == 0:
        _tcopy_lower(F.T, L.T)   # L[i, j] = F[j, i], i >= j
        for i in range(n):
            for j in range(i + 1, n):
                L[i, j] = 0
    return info


@njit(**_OPTS)
def getrf_t(LU, ipiv):
    """LU with partial pivoting of ``Aᵀ = P L U``, in place: on entry ``LU`` (C order)
    holds A. ``ipiv`` (n, of ``INT``) gets LAPACK's 1-based row interchanges. Returns
    info (> 0: an exactly zero pivot, A singular)."""
    n = LU.shape[0]
    p = np.empty(4, INT)
    p[0], p[1], p[2], p[3] = n, n, max(n, 1), 0
    tok = blas_pool.lapack_begin(n, 2 * n * n * n // 3_000_000, 1)
    info = _call_getrf(LU, ipiv, p)
    blas_pool.lapack_end(tok)
    return info


@njit(**_OPTS)
def getrs_t(LU, ipiv, X):
    """``X <- A⁻¹ X`` from ``getrf_t``'s factors of ``Aᵀ``, in place. ``X`` is C order
    (n, k): one right-hand side (k == 1) is one ``getrs('T')``; several are solved as
    ``Xᵀ Aᵀ = Bᵀ`` (``Xᵀ`` is X's column-major view) by two right-side trsm and the row
    interchanges applied to X's rows in reverse, so no transposed copy is made."""
    n, k = X.shape
    if n == 0 or k == 0:
        return
    tok = blas_pool.lapack_begin(n, 2 * n * n * k // 1_000_000, 2)
    if k == 1:
        p = np.empty(6, INT)
        p[0], p[1], p[2], p[3], p[4], p[5] = _T, n, 1, n, n, 0
        _call_getrs(LU, ipiv, X, p)
    else:
        alpha = np.ones(1, X.dtype)
        p = np.empty(8, INT)
        # Xᵀ P L U = Bᵀ: Xᵀ P = Bᵀ U⁻¹ L⁻¹
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7] = _R, _U, _N, _D, k, n, n, k
        _call_trsm(LU, X, alpha, p)
        p[1], p[3] = _L, _U                                   # unit lower triangle
        _call_trsm(LU, X, alpha, p)
        for i in range(n - 1, -1, -1):                        # Xᵀ = (Xᵀ P) Pᵀ
            j = ipiv[i] - 1
            if j != i:
                for c in range(k):
                    t = X[i, c]
                    X[i, c] = X[j, c]
                    X[j, c] = t
    blas_pool.lapack_end(tok)


@njit(**_OPTS)
def trsm_c(T, X, flags):
    """``X <- op(tri(T))⁻¹ X`` (left) or ``X op(tri(T))⁻¹`` (right), in place, by BLAS trsm
    on the column-major views (``Tᵀ``, ``Xᵀ``); ``flags`` as :func:`numba_runtime.trisolve`:
    1 lower, 2 transpose, 4 unit diagonal, 8 right side."""
    n = T.shape[0]
    r, c = X.shape
    if n == 0 or r == 0 or c == 0:
        return
    lower = (flags & 1) != 0
    trans = (flags & 2) != 0
    unit = (flags & 4) != 0
    right = (flags & 8) != 0
    # op(tri(T)) X = B  <=>  Xᵀ op(tri(T))ᵀ = Bᵀ: a right-side solve on the column-major
    # views, whose triangle is tri(T)ᵀ (T's lower triangle is Tᵀ's upper one); a right-side
    # problem becomes a left-side one the same way
    p = np.empty(8, INT)
    p[0] = 76 if right else _R                               # 'L' / 'R'
    p[1] = _U if lower else _L
    p[2] = _T if trans else _N
    p[3] = 85 if unit else _D                                # 'U' / 'N'
    p[4], p[5] = c, r                                        # rows, columns of Xᵀ
    p[6], p[7] = n, c
    alpha = np.ones(1, X.dtype)
    tok = blas_pool.lapack_begin(n, n * r * c // 1_000_000, 2)
    _call_trsm(T, X, alpha, p)
    blas_pool.lapack_end(tok)


@njit(**_OPTS)
def _tcopy(src, dst, rows, cols):
    """``dst[j, i] = src[i, j]`` for ``i < rows``, ``j < cols``, by 32 x 32 tiles (casting
    to ``dst``'s dtype)."""
    for i0 in range(0, rows, 32):
        for j0 in range(0, cols, 32):
            for i in range(i0, min(i0 + 32, rows)):
                for j in range(j0, min(j0 + 32, cols)):
                    dst[j, i] = src[i, j]


@njit(**_OPTS)
def qr_of_empty(Q, R):
    """The factors of an empty A (min(m, n) = 0): Q's columns of the identity, R zeros."""
    for i in range(Q.shape[0]):
        for j in range(Q.shape[1]):
            Q[i, j] = 1.0 if i == j else 0.0
    for i in range(R.shape[0]):
        for j in range(R.shape[1]):
            R[i, j] = 0.0


@njit(**_OPTS)
def store_r(F, R):
    """R (kq, n) from geqrf's column-major result ``F``: its upper triangle, zeros below."""
    for i in range(R.shape[0]):
        for j in range(R.shape[1]):
            R[i, j] = F[j, i] if i <= j else 0.0


@njit(**_OPTS)
def load_finite_t(A, F):
    """``F[j, i] = A[i, j]`` (F holds A column-major); returns whether every entry is finite."""
    ok = True
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            v = A[i, j]
            F[j, i] = v
            ok = ok and np.isfinite(v)
    return ok


@njit(**_OPTS)
def svd_store(Ub, Sb, Vb, U, S, Vt, info):
    """gesdd's column-major results ``Ub`` (k x m) and ``Vb`` (n x k) into the C-order ``U``
    and ``Vt`` (and ``Sb`` into ``S``), in their dtypes; every output NaN if ``info`` != 0."""
    m, k = U.shape
    n = Vt.shape[1]
    if info == 0:
        _tcopy(Ub, U, k, m)              # U[i, j] = Ub[j, i]
        _tcopy(Vb, Vt, n, k)             # Vt[i, j] = Vb[j, i]
        for i in range(k):
            S[i] = Sb[i]
        return
    for i in range(m):
        for j in range(k):
            U[i, j] = np.nan
    for i in range(k):
        S[i] = np.nan
        for j in range(n):
            Vt[i, j] = np.nan


@njit(**_OPTS)
def geqrf_into(A, Q, R):
    """``Q, R = numpy.linalg.qr(A, mode)`` of one matrix ``A`` (m, n; not written), signs
    included, as numpy computes it: geqrf then orgqr/ungqr, in double precision (float32
    and complex64 too), on a transposed copy. ``Q`` (m, kq) and ``R`` (kq, n) are written
    in their own dtype; kq = min(m, n) is numpy's 'reduced' mode, kq = m > n its
    'complete' one (R's rows from n on are zero). Empty A: Q gets identity columns, R
    zeros. Returns info (nonzero only for an illegal argument; NaN input gives NaN
    entries, as in numpy)."""
    m, n = A.shape
    kq = Q.shape[1]
    k = min(m, n)
    if k == 0:
        qr_of_empty(Q, R)
        return 0
    F = _empty_wide(A, (max(n, kq), m))     # column-major m x max(n, kq): F[j, i] = A[i, j]
    _tcopy(A, F, m, n)
    tau = np.empty(k, F.dtype)
    work = np.empty(1, F.dtype)
    p = np.empty(6, INT)
    tok = blas_pool.lapack_begin(max(m, n), 4 * m * n * k // 1_000_000, 3)
    p[0], p[1], p[2], p[3], p[4] = m, n, m, -1, 0               # workspace queries
    _call_geqrf(F, tau, work, p)
    lwork = _lwork(work)
    p[0], p[1], p[2], p[3], p[4], p[5] = m, kq, k, m, -1, 0
    _call_orgqr(F, tau, work, p)
    work = np.empty(max(lwork, _lwork(work)), F.dtype)
    p[0], p[1], p[2], p[3], p[4] = m, n, m, work.size, 0
    info = _call_geqrf(F, tau, work, p)
    if info == 0:
        store_r(F, R)
        p[0], p[1], p[2], p[3], p[4], p[5] = m, kq, k, m, work.size, 0
        info = _call_orgqr(F, tau, work, p)
        _tcopy(F, Q, kq, m)                                     # Q[i, j] = F[j, i]
    blas_pool.lapack_end(tok)
    return info


@njit(**_OPTS)
def gesdd_into(A, U, S, Vt):
    """Thin SVD ``A = U diag(S) Vt`` of one matrix ``A`` (m, n; not written), k = min(m, n):
    ``U`` (m, k), ``S`` (k,) descending, ``Vt`` (k, n) (``Vᴴ`` for a complex A), exactly as
    ``numpy.linalg.svd(A, full_matrices=False)`` computes it, signs (phases) included:
    gesdd('S') on a column-major copy of A, in double precision (``S`` is the real dtype
    of A: float32 for float32/complex64). Returns info; on non-finite input (-1) or no
    convergence (> 0) every output is NaN."""
    m, n = A.shape
    k = min(m, n)
    if k == 0:
        return 0
    F = _empty_wide(A, (n, m))               # column-major m x n: F[j, i] = A[i, j]
    Ub = _empty_wide(A, (k, m))              # column-major m x k, ldu = m
    Vb = _empty_wide(A, (n, k))              # column-major k x n, ldvt = k
    Sb = np.empty(k, np.float64)
    info = -1
    if load_finite_t(A, F):
        work = np.empty(1, F.dtype)
        rwork = _rwork(F, k, max(m, n))
        iwork = np.empty(8 * k, INT)
        p = np.empty(8, INT)
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7] = 83, m, n, m, m, k, -1, 0   # 'S'
        tok = blas_pool.lapack_begin(max(m, n), 8 * m * n * k // 1_000_000, 4)
        _call_gesdd(F, Sb, Ub, Vb, work, rwork, iwork, p)                        # query
        work = np.empty(_lwork(work), F.dtype)
        p[6], p[7] = work.size, 0
        info = _call_gesdd(F, Sb, Ub, Vb, work, rwork, iwork, p)
        blas_pool.lapack_end(tok)
    svd_store(Ub, Sb, Vb, U, S, Vt, info)
    return info


if not HAVE_LAPACK:
    # unreachable stand-ins (every *_MIN_N is out of reach), so that no kernel references
    # a symbol this process did not register
    CHOLESKY_MIN_N = SOLVE_MIN_N = SLOGDET_MIN_N = TRSM_MIN_N = 2 ** 62

    @njit(**_OPTS)
    def potrf_into(A, L):       # noqa: F811
        return -1

    @njit(**_OPTS)
    def getrf_t(LU, ipiv):      # noqa: F811
        return -1

    @njit(**_OPTS)
    def getrs_t(LU, ipiv, X):   # noqa: F811
        return

    @njit(**_OPTS)
    def trsm_c(T, X, flags):    # noqa: F811
        return

    @njit(**_OPTS)
    def geqrf_into(A, Q, R):    # noqa: F811
        return -1

    @njit(**_OPTS)
    def gesdd_into(A, U, S, Vt):    # noqa: F811
        return -1
