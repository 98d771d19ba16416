"""Scalar and small-array helpers called from the Numba kernels that jit generates.

Generated kernels (:mod:`autodiff.backends.numba_cpu`) import these by name. Each
reproduces numpy's semantics exactly where a plain Numba expression would not:
float ``%`` and ``//`` follow numpy's ``npy_divmod``, indices are clamped like the
interpreter's gather/scatter, and the small dense solvers (Cholesky, LU solve and
slogdet, triangular substitution; plain loops, which compile in a fraction of the time
Numba's LAPACK bindings take) return NaN on a singular or non-positive-definite matrix,
as the numpy ``impl`` of the primitives does. Also here: unchecked reads of the
kernel's size vector (:func:`slot_i64`), GEMM through numpy's own OpenBLAS
(:func:`matmul_into`, from :mod:`autodiff.backends.blas_pool`), and sorting lanes.

Every helper is compiled with ``fastmath=False`` explicitly: a helper without an
explicit setting inherits the fastmath flags of the first kernel that calls it,
and ``reassoc`` would fold ``x - fmod(x, y)`` style corrections away (see
NUMBA_NOTES.md). Generated kernels put a hash of this file into their cache key,
because Numba does not notice when an inlined helper changes.

>>> import numpy as np
>>> from autodiff.backends.numba_runtime import mod_f, floor_divide_f
>>> float(mod_f(-7.0, 2.0)), float(floor_divide_f(1.0, 0.1))   # numpy: 1.0, 9.0
(1.0, 9.0)
"""
import os

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic, overload

from ..config import config
from .blas_pool import HAVE_LAPACKE, lapacke_dsyevd, openblas_threads_local
from . import blas_pool as _blas_pool
from . import lapack
from .lapack import getrf_t, getrs_t, potrf_into, trsm_c
from .numba_cache import cache_helpers, cached_cfunc

_OPTS = dict(fastmath=False, error_model="numpy", nogil=True)


@intrinsic
def slot_i64(typingctx, sz, k):
    """``sz[k]`` of the kernel's int64 size vector as one unchecked load.

    Kernels read every run-time size and literal this way at entry; Numba's general
    array indexing costs ~4 ms of compile time per read, this ~1 ms.
    """
    sig = types.int64(sz, k)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        return builder.load(builder.gep(a.data, [args[1]]))
    return sig, codegen


@intrinsic
def slot_f64(typingctx, sz, k):
    """The bits of ``sz[k]`` read as a float64 (literals are stored bit-for-bit)."""
    sig = types.float64(sz, k)

    def codegen(context, builder, sig, args):
        a = context.make_array(sig.args[0])(context, builder, args[0])
        ptr = builder.bitcast(a.data, context.get_value_type(types.float64).as_pointer())
        return builder.load(builder.gep(ptr, [args[1]]))
    return sig, codegen


@njit(**_OPTS)
def mod_f(x, y):
    """numpy's float remainder: the sign of the divisor (``np.mod``)."""
    m = np.fmod(x, y)
    if y == 0:
        return m
    if m != 0:
        if (y < 0) != (m < 0):
            m += y
    else:
        m = np.copysign(m, y)          # m is a zero: give it the divisor's sign
    return m


@njit(**_OPTS)
def floor_divide_f(x, y):
    """numpy's float floor division (``npy_divmod``): 1.0 // 0.1 == 9.0, not 10.0."""
    if y == 0:
        return x / y
    m = np.fmod(x, y)
    d = (x - m) / y
    if m != 0:
        if (y < 0) != (m < 0):
            d -= 1
    if d != 0:
        fd = np.floor(d)
        if d - fd > 0.5:
            fd += 1
    else:
        fd = np.copysign(d, x / y)     # d is a zero: give it the quotient's sign
    return fd


@njit(**_OPTS)
def clip_index(i, n):
    """The gather/scatter index rule of the interpreter: clip to [-n, n-1], wrap negatives."""
    i = np.int64(i)
    if n <= 0:
        return np.int64(0)
    if i < -n:
        i = -n
    if i > n - 1:
        i = n - 1
    if i < 0:
        i += n
    return i


# Slice assignments (``X[:, :] = B``) cost seconds of Numba compile time each; the helpers
# below use explicit loops instead.

@njit(**_OPTS)
def _fill2(X, v):
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            X[i, j] = v


@njit(**_OPTS)
def _copy2(dst, src):
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]


@njit(**_OPTS)
def trisolve(T, B, X, flags):
    """Solve ``op(tri(T)) X = B`` (left) or ``X op(tri(T)) = B`` (right): BLAS trsm from
    ``lapack.TRSM_MIN_N`` on (numpy's OpenBLAS), substitution below it.

    ``flags`` bits: 1 = use the lower triangle of ``T`` (else the upper), 2 = ``op``
    transposes, 4 = the diagonal is taken as ones, 8 = right side. A zero on a diagonal
    that is read gives inf/NaN entries either way.
    """
    if T.shape[0] >= lapack.TRSM_MIN_N:
        _copy2(X, B)
        trsm_c(T, X, flags)
    else:
        _trisolve_loop(T, B, X, flags)


@njit(**_OPTS)
def _trisolve_loop(T, B, X, flags):
    """Solve ``op(tri(T)) X = B`` (left) or ``X op(tri(T)) = B`` (right) by substitution.

    ``flags`` bits: 1 = use the lower triangle of ``T`` (else the upper), 2 = ``op``
    transposes, 4 = the diagonal is taken as ones, 8 = right side. (One int rather than
    four bools: Numba would compile a specialization per combination of literal bools.)
    The right-side problem is the left one transposed: ``op(T)^T X^T = B^T``.
    """
    lower = (flags & 1) != 0
    right = (flags & 8) != 0
    trans = ((flags & 2) != 0) != right
    unit = (flags & 4) != 0
    n = T.shape[0]
    k = B.shape[0] if right else B.shape[1]
    eff_lower = lower != trans
    for c in range(k):
        for step in range(n):
            i = step if eff_lower else n - 1 - step
            acc = B[c, i] if right else B[i, c]
            lo, hi = (0, i) if eff_lower else (i + 1, n)
            for j in range(lo, hi):
                m = T[j, i] if trans else T[i, j]
                acc -= m * (X[c, j] if right else X[j, c])
            if not unit:
                acc = acc / T[i, i]
            if right:
                X[c, i] = acc
            else:
                X[i, c] = acc


@njit(**_OPTS)
def cholesky_into(A, L):
    """``L = cholesky(A)`` reading A's lower triangle (``A = L Lᴴ`` for a complex A); all
    NaN if A is not positive definite (LAPACK potrf's info > 0, or a pivot that is not > 0
    in the loop). LAPACK from ``lapack.CHOLESKY_MIN_N`` on, the loop below it; NaN input
    gives NaN entries either way (potrf, as numpy, leaves the entries it did not reach)."""
    if A.shape[0] >= lapack.CHOLESKY_MIN_N:
        if potrf_into(A, L) != 0:
            _fill2(L, np.nan)
    else:
        _cholesky_loop(A, L)


@njit(**_OPTS)
def _cholesky_loop(A, L):
    """Row-oriented Cholesky-Banachiewicz: ``L[i,j] = (A[i,j] - sum_k<j L[i,k] conj(L[j,k])) /
    L[j,j]``; as LAPACK's potrf, only the real part of A's diagonal is read (``np.conj`` and
    ``.real`` are no-ops on a real A).
    """
    n = A.shape[0]
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * np.conj(L[j, k])
            if i == j:
                d = s.real
                if not d > 0:              # also catches NaN
                    _fill2(L, np.nan)
                    return
                L[i, i] = np.sqrt(d)
            else:
                L[i, j] = s / L[j, j]
        for j in range(i + 1, n):
            L[i, j] = 0.0


@njit(**_OPTS)
def _lu_inplace(LU, X):
    """Gaussian elimination with partial pivoting on ``LU`` (and the right-hand sides ``X``).

    Returns the permutation's sign, or 0 if a pivot is exactly zero (singular).
    """
    n = LU.shape[0]
    sign = 1.0
    for c in range(n):
        p = c
        best = abs(LU[c, c])
        for r in range(c + 1, n):
            v = abs(LU[r, c])
            if v > best:
                best = v
                p = r
        if LU[p, c] == 0:
            return 0.0
        if p != c:
            sign = -sign
            for j in range(n):
                t = LU[c, j]
                LU[c, j] = LU[p, j]
                LU[p, j] = t
            for j in range(X.shape[1]):
                t = X[c, j]
                X[c, j] = X[p, j]
                X[p, j] = t
        piv = LU[c, c]
        for r in range(c + 1, n):
            f = LU[r, c] / piv
            LU[r, c] = f
            for j in range(c + 1, n):
                LU[r, j] -= f * LU[c, j]
            for j in range(X.shape[1]):
                X[r, j] -= f * X[c, j]
    return sign


@njit(**_OPTS)
def solve_into(A, B, X):
    """``X = solve(A, B)`` by LU with partial pivoting; all NaN if A is singular (a pivot
    exactly zero). LAPACK getrf + getrs/trsm from ``lapack.SOLVE_MIN_N`` on, a loop below."""
    n = A.shape[0]
    if n >= lapack.SOLVE_MIN_N:
        LU = np.empty((n, n), A.dtype)
        _copy2(LU, A)
        ipiv = np.empty(n, lapack.INT)
        if getrf_t(LU, ipiv) != 0:
            _fill2(X, np.nan)
            return
        _copy2(X, B)
        getrs_t(LU, ipiv, X)
        return
    LU = np.empty((n, n), A.dtype)
    _copy2(LU, A)
    _copy2(X, B)
    if _lu_inplace(LU, X) == 0.0:
        _fill2(X, np.nan)
        return
    for j in range(X.shape[1]):
        for i in range(n - 1, -1, -1):
            acc = X[i, j]
            for k in range(i + 1, n):
                acc -= LU[i, k] * X[k, j]
            X[i, j] = acc / LU[i, i]


@njit(**_OPTS)
def slogdet_2d(A):
    """``(sign, log|det A|)`` of one square matrix; ``(0, -inf)`` when singular. The sign
    is the product of the permutation's sign and the pivots' ``d/|d|``: ±1 for a real A
    (exactly), a complex number of modulus 1 for a complex one."""
    n = A.shape[0]
    LU = np.empty((n, n), A.dtype)
    _copy2(LU, A)
    one = np.ones(1, A.dtype)[0]
    if n >= lapack.SLOGDET_MIN_N:       # LAPACK getrf of Aᵀ (det Aᵀ = det A)
        ipiv = np.empty(n, lapack.INT)
        if getrf_t(LU, ipiv) != 0:
            return one * 0.0, -np.inf
        perm = 1.0
        for i in range(n):
            if ipiv[i] != i + 1:
                perm = -perm
    else:
        none = np.empty((n, 0), A.dtype)
        perm = _lu_inplace(LU, none)
        if perm == 0.0:
            return one * 0.0, -np.inf
    sign = one * perm
    logdet = 0.0
    for i in range(n):
        d = LU[i, i]
        m = abs(d)
        sign = sign * (d / m)
        logdet += np.log(m)
    return sign, logdet


@njit(**_OPTS)
def _eigh_load(A, F, upper):
    """Lay out for LAPACK the Hermitian matrix ``X`` that ``eigh_p`` decomposes: ``F`` (C
    order, float64/complex128: numpy runs float32/complex64 in double precision too) gets
    ``X`` column-major, ``F[j, i] = X[i, j]``, where ``X = A`` for ``upper=False``
    (LAPACK's 'L' path reads its lower triangle) and ``X = Aᴴ`` for ``upper=True`` (the
    'U' path reads its upper triangle): numpy's ``eigh(A, 'L')`` / ``eigh(Aᴴ, 'U')``,
    signs (phases) of the eigenvectors included. Either way the entries read are ``A``'s
    lower triangle; returns whether they are finite (the imaginary part of the diagonal is
    never read)."""
    n = A.shape[0]
    ok = True
    for i in range(n):
        for j in range(n):
            F[j, i] = np.conj(A[j, i]) if upper else A[i, j]
        ok = ok and np.isfinite(A[i, i].real)
        for j in range(i):
            ok = ok and np.isfinite(A[i, j])
    return ok


@njit(**_OPTS)
def _eigh_store(F, w, info, W, V):
    """Ascending eigenvalues ``w`` into ``W``, the eigenvectors (columns of the column-major
    ``F``) into ``V``, rounded to their dtypes; all NaN if ``info`` is not 0 (no
    convergence, or non-finite input), like the other solvers."""
    n = W.shape[0]
    if info != 0:
        _fill2(V, np.nan)
        for i in range(n):
            W[i] = np.nan
        return
    for i in range(n):
        W[i] = w[i]
        for j in range(n):
            V[i, j] = F[j, i]


def _ez_evd(F, w, upper):
    """LAPACK ?syevd/?heevd ('V', 'U' if ``upper`` else 'L') on the column-major ``F`` in
    place through Numba's binding (scipy's LAPACK); typed by the overload below."""
    raise NotImplementedError


@overload(_ez_evd, jit_options=_OPTS)
def _ez_evd_typed(F, w, upper):
    from numba.np.linalg import _LAPACK, ensure_lapack
    ensure_lapack()                    # no scipy: the ImportError Numba's np.linalg.eigh gives
    evd = _LAPACK().numba_ez_xxxevd(F.dtype)
    kind = ord("z" if isinstance(F.dtype, types.Complex) else "d")

    def impl(F, w, upper):
        n = F.shape[0]
        return evd(kind, 86, 85 if upper else 76, n, F.ctypes, n, w.ctypes)   # 'V', 'U'/'L'
    return impl


def _eigh_numba(A, W, V, upper):
    n = A.shape[0]
    if n == 0:
        return
    F = _eigh_wide(A, n)
    w = np.empty(n, np.float64)
    info = _ez_evd(F, w, upper) if _eigh_load(A, F, upper) else -1
    _eigh_store(F, w, info, W, V)


def _eigh_wide(A, n):
    """An empty n x n complex128 array for a complex ``A``, else float64 (typed by the
    overload below)."""
    raise NotImplementedError


@overload(_eigh_wide, jit_options=_OPTS)
def _eigh_wide_typed(A, n):
    dt = np.complex128 if isinstance(A.dtype, types.Complex) else np.float64
    return lambda A, n: np.empty((n, n), dt)


def _eigh_lapacke(A, W, V, upper):
    n = A.shape[0]
    if n == 0:
        return
    F = np.empty((n, n), np.float64)
    w = np.empty(n, np.float64)
    info = -1
    if _eigh_load(A, F, upper):
        # LAPACKE_dsyevd(column-major, 'V', 'U'/'L', ...): numpy's own LAPACK, one thread
        prev = openblas_threads_local(np.int32(1))
        info = lapacke_dsyevd(np.int32(102), np.uint8(86), np.uint8(85 if upper else 76), n,
                       np.intp(F.ctypes.data), n, np.intp(w.ctypes.data))
        openblas_threads_local(prev)
    _eigh_store(F, w, info, W, V)


# One BLAS library in the process: with numpy's OpenBLAS found, real eigh calls its LAPACKE
# (single-threaded, like every GEMM in a kernel; what numpy.linalg.eigh itself calls);
# Numba's LAPACK binding would load scipy's second OpenBLAS, whose own thread pool spins
# next to ours (see blas_pool), and costs seconds of compile time.
eigh_into = njit(fastmath=False, error_model="numpy", nogil=True)(
    _eigh_lapacke if HAVE_LAPACKE else _eigh_numba)
# Hermitian (complex) input: LAPACK heevd through Numba's binding of scipy's LAPACK
# (numpy's OpenBLAS exposes no complex LAPACKE symbol we register), real eigenvalues and
# complex eigenvectors; disk-cached like eigh_into
eigh_into_c = njit(fastmath=False, error_model="numpy", nogil=True)(_eigh_numba)
eigh_into.__doc__ = """``eigh_into(A, W, V, upper)``: ``eigh_p(A, upper=upper)`` of one matrix.

The Hermitian matrix held in ``A``'s lower triangle, decomposed by LAPACK's 'L' path
(``upper=False``: numpy's ``eigh(A, 'L')``) or by its 'U' path on ``Aᴴ`` (``upper=True``:
numpy's ``eigh(Aᴴ, 'U')``, whose eigenvectors carry other signs), in double precision as
numpy does (syevd/heevd). Eigenvalues ascending into ``W``, eigenvectors in the columns of
``V``; all NaN if the entries read are not finite or LAPACK does not converge. Cached on
disk (under ``ad.config.cache_dir``, see ``_DISK_CACHED``): compiled once per machine
rather than once per kernel.
"""


# Helpers made with ``_CACHED`` wrap Numba library code that is slow to compile (BLAS
# bindings, sorting): compiled once per machine and linked into kernels, instead of being
# compiled again inside every kernel that uses them. Their disk cache lives under
# ad.config.cache_dir (numba_cache.cache_helpers, at the end of this module), not where
# Numba's cache=True would put it (beside the installed package, or ~/.cache/numba).
_CACHED = dict(fastmath=False, error_model="numpy", nogil=True)


# ---------------------------------------------------------------------------------------
# GEMM: numpy's own OpenBLAS, split over a small pool of our threads (blas_pool)
#
# Numba's np.dot calls scipy's copy of OpenBLAS. With numpy's copy also in the process,
# the two libraries run two thread pools whose workers spin after each call and starve
# each other: measured on this 2-core machine, a 256x784 @ 784x512 product took 30 ms
# through Numba right after numpy had used its pool, 1.9 ms through numpy. So kernels call
# numpy's library (one BLAS in the process), always single-threaded inside OpenBLAS, and
# large products are split into panels over blas_pool's threads (work stealing, so a core
# another process holds does not stall the product; RESULTS_jit.md has the numbers).
# Without numpy's OpenBLAS (another BLAS vendor) Numba's np.dot is used.
# ---------------------------------------------------------------------------------------
from .blas_pool import BLAS, file_digest, matmul_into  # noqa: E402,F401 - kernels import it here

# the kernel cache key names the BLAS; the pool's code is part of it (kernels inline it)
BLAS = f"{BLAS};blas_pool={file_digest()};lapack={lapack.file_digest()}"
LAPACK = lapack.LAPACK


# ---------------------------------------------------------------------------------------
# QR and thin SVD: numpy's OpenBLAS (lapack.geqrf_into / gesdd_into); without it, the same
# LAPACK routines through Numba's binding of scipy's LAPACK (its np.linalg.qr / svd would
# refuse empty or non-finite input by raising, and has no complete-mode Q)
# ---------------------------------------------------------------------------------------

def _ez_geqrf(F, tau, m, n):
    """LAPACK ?geqrf on the column-major m x n ``F`` (lda = m) through Numba's binding."""
    raise NotImplementedError


@overload(_ez_geqrf, jit_options=_OPTS)
def _ez_geqrf_typed(F, tau, m, n):
    from numba.np.linalg import _LAPACK, ensure_lapack, get_blas_kind
    ensure_lapack()
    f = _LAPACK().numba_ez_geqrf(F.dtype)
    kind = ord(get_blas_kind(F.dtype))
    return lambda F, tau, m, n: f(kind, m, n, F.ctypes, m, tau.ctypes)


def _ez_xxgqr(F, tau, m, kq, k):
    """LAPACK ?orgqr/?ungqr: the first ``kq`` columns of Q from geqrf's reflectors."""
    raise NotImplementedError


@overload(_ez_xxgqr, jit_options=_OPTS)
def _ez_xxgqr_typed(F, tau, m, kq, k):
    from numba.np.linalg import _LAPACK, ensure_lapack, get_blas_kind
    ensure_lapack()
    f = _LAPACK().numba_ez_xxgqr(F.dtype)
    kind = ord(get_blas_kind(F.dtype))
    return lambda F, tau, m, kq, k: f(kind, m, kq, k, F.ctypes, m, tau.ctypes)


def _ez_gesdd(F, sv, u, vt, rows, cols, k):
    """LAPACK ?gesdd('S') of the column-major rows x cols ``F`` through Numba's binding."""
    raise NotImplementedError


@overload(_ez_gesdd, jit_options=_OPTS)
def _ez_gesdd_typed(F, sv, u, vt, rows, cols, k):
    from numba.np.linalg import _LAPACK, ensure_lapack, get_blas_kind
    ensure_lapack()
    f = _LAPACK().numba_ez_gesdd(F.dtype)
    kind = ord(get_blas_kind(F.dtype))
    return lambda F, sv, u, vt, rows, cols, k: f(kind, 83, rows, cols, F.ctypes, rows,
                                                 sv.ctypes, u.ctypes, rows, vt.ctypes, k)


def _qr_numba(A, Q, R):
    """The body of :func:`lapack.geqrf_into` on Numba's LAPACK binding (same routines, same
    layout: numpy's Q and R, signs included, to rounding); NaN outputs if LAPACK fails."""
    m, n = A.shape
    kq = Q.shape[1]
    k = min(m, n)
    if k == 0:
        lapack.qr_of_empty(Q, R)
        return
    F = lapack._empty_wide(A, (max(n, kq), m))
    lapack._tcopy(A, F, m, n)
    tau = np.empty(k, F.dtype)
    info = _ez_geqrf(F, tau, m, n)
    if info == 0:
        lapack.store_r(F, R)
        info = _ez_xxgqr(F, tau, m, kq, k)
        lapack._tcopy(F, Q, kq, m)
    if info != 0:
        _fill2(Q, np.nan)
        _fill2(R, np.nan)


def _qr_lapack(A, Q, R):
    if lapack.geqrf_into(A, Q, R) != 0:
        _fill2(Q, np.nan)
        _fill2(R, np.nan)


def _svd_numba(A, U, S, Vt):
    """The body of :func:`lapack.gesdd_into` on Numba's LAPACK binding (gesdd('S') of a
    column-major copy of A: numpy's signs); NaN outputs on non-finite input or no
    convergence."""
    m, n = A.shape
    k = min(m, n)
    if k == 0:
        return
    F = lapack._empty_wide(A, (n, m))
    Ub = lapack._empty_wide(A, (k, m))
    Vb = lapack._empty_wide(A, (n, k))
    Sb = np.empty(k, np.float64)
    info = -1
    if lapack.load_finite_t(A, F):
        info = _ez_gesdd(F, Sb, Ub, Vb, m, n, k)
    lapack.svd_store(Ub, Sb, Vb, U, S, Vt, info)


def _svd_lapack(A, U, S, Vt):
    lapack.gesdd_into(A, U, S, Vt)       # NaN outputs on failure


# LAPACK of numpy's OpenBLAS where found (one BLAS in the process, see eigh_into), Numba's
# binding otherwise; each picks its Python function, so the disk caches of the two paths
# never mix. Disk-cached: each costs ~1 s of compile time per dtype inside a kernel.
qr_into = njit(**_CACHED)(_qr_lapack if lapack.HAVE_LAPACK else _qr_numba)
svd_into = njit(**_CACHED)(_svd_lapack if lapack.HAVE_LAPACK else _svd_numba)
# the fallbacks under their own names (tests run them where numpy's LAPACK is found too)
qr_into_numba = njit(**_OPTS)(_qr_numba)
svd_into_numba = njit(**_OPTS)(_svd_numba)
qr_into.__doc__ = """``qr_into(A, Q, R)``: ``numpy.linalg.qr(A, mode)`` of one matrix, signs included.

``A`` (m, n) is not written; ``Q`` (m, kq) and ``R`` (kq, n), C order, get the factors in
their dtype: kq = min(m, n) is numpy's 'reduced' mode, kq = m > n its 'complete' one.
geqrf then orgqr/ungqr in double precision, as numpy (:func:`lapack.geqrf_into`); NaN
input gives NaN entries as numpy, a LAPACK failure all NaN. Cached on disk.
"""
svd_into.__doc__ = """``svd_into(A, U, S, Vt)``: ``numpy.linalg.svd(A, full_matrices=False)`` of one matrix.

k = min(m, n): ``U`` (m, k), ``S`` (k,) descending in A's real dtype (float32 for
float32/complex64), ``Vt`` (k, n), ``A = U diag(S) Vt``. gesdd in double precision, as
numpy (:func:`lapack.gesdd_into`), with numpy's signs (phases) of the singular vectors.
All NaN on non-finite input or no convergence.
Cached on disk.
"""


@njit(**_CACHED)
def sort_lane(lane):
    """Sorted copy of a 1-D array (NaN last, as numpy)."""
    return np.sort(lane)


@njit(**_CACHED)
def argsort_lane(lane):
    """Stable argsort of a 1-D array (NaN last, as numpy's ``kind='stable'``)."""
    return np.argsort(lane, kind="mergesort")


@njit(**_OPTS)
def select_fallback(c, a, b):
    """``a if c else b``; used only when numba_math (and its select intrinsic) is missing."""
    return a if c else b


# ---------------------------------------------------------------------------------------
# C entry points for the direct LLVM tier (backends/llvm_cpu.py)
#
# That tier compiles kernels without Numba, from their text and the helpers' source; the
# solvers and decompositions above reach LAPACK through Numba overloads it cannot compile,
# so it calls them as C functions: one wrapper per helper and dtype, compiled once per
# machine (cached under ad.config.cache_dir) when the first kernel that calls it loads.
# C_ABI is read by the tier from this file's text (without importing Numba): each helper's
# arguments in order, "a<k>" a C-contiguous k-d array of the kernel's dtype (its data
# pointer, then its k dimensions as int64), "i" an int64, and the results the helper
# returns, written through pointers: "r" one of the arrays' dtype, "R" a float64, "o<k>" an
# array shaped as the first argument in its dtype, "O<k>" the same in int64 (each passed as
# an array argument, which the caller allocates).
# ---------------------------------------------------------------------------------------
C_ABI = {
    "cholesky_into": ("a2", "a2"),
    "trisolve": ("a2", "a2", "a2", "i"),
    "solve_into": ("a2", "a2", "a2"),
    "slogdet_2d": ("a2", "r", "R"),
    "eigh_into": ("a2", "a1", "a2", "i"),
    "qr_into": ("a2", "a2", "a2"),
    "svd_into": ("a2", "a2", "a1", "a2"),
    "sort_lane": ("a1", "o1"),
    "argsort_lane": ("a1", "O1"),
}
C_ABI_DTYPES = ("float64", "float32")


def _c_cholesky_into(a, a0, a1, l, l0, l1):
    cholesky_into(carray(a, (a0, a1)), carray(l, (l0, l1)))


def _c_trisolve(t, t0, t1, b, b0, b1, x, x0, x1, flags):
    trisolve(carray(t, (t0, t1)), carray(b, (b0, b1)), carray(x, (x0, x1)), flags)


def _c_solve_into(a, a0, a1, b, b0, b1, x, x0, x1):
    solve_into(carray(a, (a0, a1)), carray(b, (b0, b1)), carray(x, (x0, x1)))


def _c_slogdet_2d(a, a0, a1, sign, logdet):
    s, d = slogdet_2d(carray(a, (a0, a1)))
    sign[0] = s
    logdet[0] = d


def _c_eigh_into(a, a0, a1, w, w0, v, v0, v1, upper):
    eigh_into(carray(a, (a0, a1)), carray(w, (w0,)), carray(v, (v0, v1)), upper != 0)


def _c_qr_into(a, a0, a1, q, q0, q1, r, r0, r1):
    qr_into(carray(a, (a0, a1)), carray(q, (q0, q1)), carray(r, (r0, r1)))


def _c_svd_into(a, a0, a1, u, u0, u1, s, s0, v, v0, v1):
    svd_into(carray(a, (a0, a1)), carray(u, (u0, u1)), carray(s, (s0,)), carray(v, (v0, v1)))


def _c_sort_lane(x, x0, out, out0):
    carray(out, (out0,))[:] = sort_lane(carray(x, (x0,)))


def _c_argsort_lane(x, x0, out, out0):
    carray(out, (out0,))[:] = argsort_lane(carray(x, (x0,)))


def _c_signature(kinds, dtype):
    t = getattr(types, dtype)
    args = []
    for k in kinds:
        if k[0] in "ao":
            args += [types.CPointer(t)] + [types.int64] * int(k[1:])
        elif k[0] == "O":
            args += [types.CPointer(types.int64)] + [types.int64] * int(k[1:])
        elif k == "i":
            args.append(types.int64)
        else:
            args.append(types.CPointer(t if k == "r" else types.float64))
    return types.void(*args)


_C_WRAPPERS = {(name, dt): cached_cfunc(_c_signature(kinds, dt), depends=(lapack, _blas_pool),
                                        **_CACHED)(globals()["_c_" + name])
               for name, kinds in C_ABI.items() for dt in C_ABI_DTYPES}


def c_abi_address(name, dtype):
    """The address of helper ``name``'s C entry point for arrays of ``dtype`` (see
    ``C_ABI``), compiled now or loaded from the disk cache.

    >>> import ctypes, numpy as np
    >>> a = np.array([[4.0, 2.0], [2.0, 3.0]]); L = np.empty_like(a)
    >>> f = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
    ...                      ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(
    ...     c_abi_address("cholesky_into", "float64"))
    >>> f(a.ctypes.data, 2, 2, L.ctypes.data, 2, 2)
    >>> bool(np.allclose(L @ L.T, a))
    True
    """
    return _C_WRAPPERS[(name, dtype)].address


# ---------------------------------------------------------------------------------------
# fork safety
# ---------------------------------------------------------------------------------------
# Upstream behaviour: once Numba's OpenMP (GNU libgomp) pool has run a parallel region, a
# fork()ed child that enters another parallel region is killed by Numba ("Terminating:
# fork() called from a process already using GNU OpenMP, this is unsafe."), because
# libgomp's threads do not exist in the child. jit turns prange on by itself for large
# arrays (config.jit_parallel_threshold), so a user's multiprocessing pool (fork, the
# Linux default) would die depending on array sizes. The one workaround: in a child forked
# after the pool started, parallel kernels are off. Setting the threshold to infinity
# clears every jit cache (config listener), so the child retraces and runs serial kernels
# (compiled, or found in the memory and disk caches) and never enters the parent's pool.

def parallel_pool_started():
    """Whether this process has started Numba's parallel thread pool (any threading layer).

    >>> isinstance(parallel_pool_started(), bool)
    True
    """
    par = __import__("sys").modules.get("numba.np.ufunc.parallel")
    return bool(par is not None and getattr(par, "_is_initialized", False))


def _serial_after_fork():
    if parallel_pool_started():
        if config.jit_parallel_threshold != float("inf"):
            config.update("jit_parallel_threshold", float("inf"))


# The helpers compiled once per machine (see _CACHED): their disk cache lives under
# ad.config.cache_dir, like the kernels' (numba_cache.cache_helpers).
_DISK_CACHED = ("eigh_into", "eigh_into_c", "sort_lane", "argsort_lane")
# eigh_into inlines blas_pool's LAPACKE binding and thread setting, qr_into and svd_into
# lapack.py's helpers and blas_pool's thread policy: their code is part of the stamp (a
# helper loaded from the disk cache would otherwise keep the old code of either)
cache_helpers(globals(), _DISK_CACHED, depends=(_blas_pool,))
cache_helpers(globals(), ("qr_into", "svd_into"), depends=(lapack, _blas_pool))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_serial_after_fork)
