"""GEMM inside jitted kernels: numpy's own OpenBLAS, split across a small pool of our threads.

Kernels call :func:`matmul_into` for every float matrix product. Large products are cut
into panels of the output (column panels, or row panels when C is narrow) and a
shared atomic counter hands the panels out: the calling thread and a few native worker
threads each take the next free panel and compute it with *single-threaded* GEMM, until
none is left. A worker the operating system has not scheduled takes no panel, so a core
held by another process delays the product by at most one panel (and the waiting caller
sleeps, which lets Linux pull the late worker onto the core it frees); OpenBLAS's own
threads split the product statically and spin, and wait for the slowest core every time
(benchmarks/RESULTS_jit.md, "Matrix products on two cores"). Small products run on the
calling thread alone: the thread count of a call is ``min(threads, flops //
FLOPS_PER_THREAD)``, a measured threshold.

What a core is worth changes from moment to moment on a shared machine, so the pool
measures it: the state keeps running means of the wall time per MFLOP of split products
and of large products run on the calling thread alone, and each large product takes the
way that was lately faster (one product in ``PROBE_EVERY`` tries each way, so both stay
current). On a quiet machine the split wins; when every core is shared with other
processes, two threads of ours take turns on one core and the calling thread alone is
faster (no wake-up, no re-packing of an operand per panel): then that is what runs.

Everything a call needs lives in one int64 array, the pool state, whose address is
registered with LLVM as the symbol ``autodiff_blas_pool``: the thread count is read at
run time from there, so changing ``ad.config.jit_blas_threads`` needs no recompile, and
kernels stay disk-cacheable across processes. Workers are started from Python (ctypes
``pthread_create`` on a Numba ``cfunc``) and sleep on a condition variable between
products. When another thread is already using the pool (several Python threads calling
jitted functions at once), a product simply runs single-threaded on its own thread, so
callers never wait for each other. After ``fork()`` the child's pool is reset and its
workers started again (threads do not survive a fork).

One BLAS library: the CBLAS symbols of the OpenBLAS that numpy itself loads (not Numba's
``np.dot``, which goes through scipy's second copy; see :func:`find_numpy_cblas`).

>>> import numpy as np
>>> from autodiff.backends.blas_pool import matmul_into
>>> a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
>>> out = np.empty((2, 2))
>>> matmul_into(a, b, out, np.int64(0))
>>> out.tolist()
[[3.0, 3.0], [12.0, 12.0]]
"""
import atexit
import ctypes
import hashlib
import os
import threading
import time

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ..config import config
from .numba_cache import cache_helpers, cached_cfunc
from .openblas import find_numpy_cblas, numpy_openblas_paths  # noqa: F401 (re-exported)

# disk-cached under ad.config.cache_dir by numba_cache.cache_helpers / cached_cfunc below,
# not with Numba's cache=True (which writes beside the package or in ~/.cache/numba)
_CACHED = dict(fastmath=False, error_model="numpy", nogil=True)

# Adaptation to the cores a process actually gets (see _gemm_any): large products run
# split or on the calling thread, whichever has lately taken less wall time per FLOP;
# every PROBE_EVERY-th product tries the split and the one after it the calling thread, so
# both measurements stay current (odd, so the probes rotate over a program's products).
PROBE_EVERY = 7
# The same for LAPACK calls, less often: a factorization on the slower thread count costs
# 25-40% more (gesdd at n = 800: 201-212 ms against 157-167 ms), and one call in 7 on it
# added ~4% to the mean
LAPACK_PROBE_EVERY = 15
# Below this many FLOPs per thread a panel costs more in wake-up and in B/A re-packing
# than it saves (measured on the 2-core EPYC: see RESULTS_jit.md). 2*M*N*K FLOPs.
FLOPS_PER_THREAD = 8_000_000
MAX_THREADS = 64
PANEL_MIN = 64     # rows or columns of C per panel, at least

# ---------------------------------------------------------------------------------------
# the pool state: int64 words; the mutex and the two condition variables live in it too
# ---------------------------------------------------------------------------------------
(_THREADS, _MINFLOPS, _WORKERS, _BUSY, _COUNTER, _DONE, _GEN, _SHUTDOWN, _NPANELS,
 _SPLIT, _PSIZE, _ITEM, _TA, _TB, _M, _N, _K, _A, _LDA, _B, _LDB, _C, _LDC, _ACTIVE,
 _POOLED, _WPANELS, _BUSYFALLBACK, _MODE, _SPLITRATE, _SERIALRATE, _PROBE, _ADAPTSERIAL) = range(32)
_MTX, _CW, _CD = 32, 40, 48        # word offsets: pthread_mutex_t (40 B), 2 x pthread_cond_t (48 B)
_CLKMONO, _ADAPT = 55, 56      # the platform's CLOCK_MONOTONIC id; adaptation on/off
# LAPACK calls (lapack_begin/lapack_end): the probe counter, the calls run multi-threaded,
# and per routine family (LAPACK_FAMILIES) the running means of ns per MFLOP on one
# OpenBLAS thread (word _LRATES + 2 f) and on the setting's threads (_LRATES + 2 f + 1);
# the calls below LAPACK_MIN_N have their own pairs after those (f + len(LAPACK_FAMILIES))
_LPROBE, _LMULTI = 57, 58
_LRATES = 64
LAPACK_FAMILIES = ("potrf", "getrf", "trsm", "geqrf", "gesdd")
_WORDS = _LRATES + 2 * 16
MODE_POOL, MODE_OPENBLAS = 0, 1    # MODE_OPENBLAS: OpenBLAS's own threads (for benchmarks)

_STATE = np.zeros(_WORDS, np.int64)
_STATE[_THREADS] = 1
_STATE[_MINFLOPS] = FLOPS_PER_THREAD
_STATE[_ADAPT] = 1
_STATE[_CLKMONO] = getattr(time, "CLOCK_MONOTONIC", 1)
_ADDR = _STATE.ctypes.data


_LIBC = ctypes.CDLL(None, use_errno=True)
_KEEP = []      # ctypes callbacks that must outlive every kernel


def _register_symbols():
    """Register numpy's CBLAS, the thread setting, pthread and the state with LLVM.

    Fixed symbol names (resolved when a kernel is linked or loaded from disk), so cached
    kernels work in every process. Returns a description of the BLAS, or None without
    numpy's OpenBLAS (another BLAS vendor).
    """
    found = find_numpy_cblas()
    if found is None:
        return None, None
    d_addr, s_addr, bits, desc, local_addr, path, (dv_addr, sv_addr) = found
    if dv_addr is None or sv_addr is None:
        return None, None           # an unexpected OpenBLAS build: Numba's np.dot instead
    if local_addr is None:
        # an OpenBLAS without per-thread settings: a callback that does nothing, so that
        # the symbol exists for (possibly disk-cached) code calling it
        cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda n: n)
        _KEEP.append(cb)
        local_addr = ctypes.cast(cb, ctypes.c_void_p).value
    llvm.add_symbol("autodiff_cblas_dgemm", d_addr)
    llvm.add_symbol("autodiff_cblas_sgemm", s_addr)
    llvm.add_symbol("autodiff_cblas_dgemv", dv_addr)
    llvm.add_symbol("autodiff_cblas_sgemv", sv_addr)
    llvm.add_symbol("autodiff_openblas_threads_local", local_addr)
    llvm.add_symbol("autodiff_blas_pool", _ADDR)
    global HAVE_LAPACKE
    lib = ctypes.CDLL(path)
    for d, s_ in (("scipy_LAPACKE_dsyevd64_", "scipy_LAPACKE_ssyevd64_"),
                  ("LAPACKE_dsyevd64_", "LAPACKE_ssyevd64_"),
                  ("scipy_LAPACKE_dsyevd", "scipy_LAPACKE_ssyevd"),
                  ("LAPACKE_dsyevd", "LAPACKE_ssyevd")):
        fd, fs = getattr(lib, d, None), getattr(lib, s_, None)
        if fd is not None and fs is not None:
            llvm.add_symbol("autodiff_lapacke_dsyevd", ctypes.cast(fd, ctypes.c_void_p).value)
            llvm.add_symbol("autodiff_lapacke_ssyevd", ctypes.cast(fs, ctypes.c_void_p).value)
            HAVE_LAPACKE = True
            break
    for name in ("pthread_mutex_lock", "pthread_mutex_unlock", "pthread_cond_wait",
                 "pthread_cond_signal", "pthread_cond_broadcast", "clock_gettime"):
        llvm.add_symbol(f"autodiff_{name}", ctypes.cast(getattr(_LIBC, name), ctypes.c_void_p).value)
    return bits, desc


HAVE_LAPACKE = False    # numpy's OpenBLAS has LAPACKE's syevd (eigh without a second library)
try:
    BLAS_INT_BITS, BLAS = _register_symbols()
except Exception:  # noqa: BLE001 - any trouble finding the library: use Numba's np.dot
    BLAS_INT_BITS, BLAS = None, None
HAVE_CBLAS = BLAS_INT_BITS is not None

_it = types.int64 if BLAS_INT_BITS == 64 else types.int32
_e = types.int32     # CBLAS enums


def _gemm_sig(fl):
    return types.void(_e, _e, _e, _it, _it, _it, fl, types.intp, _it, types.intp, _it, fl,
                      types.intp, _it)


_dgemm = types.ExternalFunction("autodiff_cblas_dgemm", _gemm_sig(types.float64))
_sgemm = types.ExternalFunction("autodiff_cblas_sgemm", _gemm_sig(types.float32))



def _gemv_sig(fl):
    return types.void(_e, _e, _it, _it, fl, types.intp, _it, types.intp, _it, fl, types.intp,
                      _it)


_dgemv = types.ExternalFunction("autodiff_cblas_dgemv", _gemv_sig(types.float64))
_sgemv = types.ExternalFunction("autodiff_cblas_sgemv", _gemv_sig(types.float32))
openblas_threads_local = types.ExternalFunction("autodiff_openblas_threads_local",
                                              types.int32(types.int32))
# LAPACKE_?syevd(layout, jobz, uplo, n, a, lda, w) -> info
lapacke_dsyevd = types.ExternalFunction("autodiff_lapacke_dsyevd", _it(
    types.int32, types.uint8, types.uint8, _it, types.intp, _it, types.intp))
_ssyevd = types.ExternalFunction("autodiff_lapacke_ssyevd", _it(
    types.int32, types.uint8, types.uint8, _it, types.intp, _it, types.intp))
_lock = types.ExternalFunction("autodiff_pthread_mutex_lock", types.int32(types.intp))
_unlock = types.ExternalFunction("autodiff_pthread_mutex_unlock", types.int32(types.intp))
_wait = types.ExternalFunction("autodiff_pthread_cond_wait", types.int32(types.intp, types.intp))
_signal = types.ExternalFunction("autodiff_pthread_cond_signal", types.int32(types.intp))
_broadcast = types.ExternalFunction("autodiff_pthread_cond_broadcast", types.int32(types.intp))
_clock_gettime = types.ExternalFunction("autodiff_clock_gettime",
                                        types.int32(types.int32, types.intp))


# ---------------------------------------------------------------------------------------
# intrinsics: the state's address and seq_cst atomics on its words
# ---------------------------------------------------------------------------------------

@intrinsic
def _state_addr(typingctx):
    """The address of the pool state (the external symbol ``autodiff_blas_pool``)."""
    def codegen(context, builder, sig, args):
        mod = builder.module
        gv = mod.globals.get("autodiff_blas_pool")
        if gv is None:
            gv = ir.GlobalVariable(mod, ir.IntType(64), "autodiff_blas_pool")
            gv.linkage = "external"
        return builder.ptrtoint(gv, context.get_value_type(types.intp))
    return types.intp(), codegen


def _word(context, builder, base, k):
    p = builder.inttoptr(base, ir.IntType(64).as_pointer())
    return builder.gep(p, [k])


@intrinsic
def _aload(typingctx, base, k):
    def codegen(context, builder, sig, args):
        return builder.load_atomic(_word(context, builder, *args), "seq_cst", 8)
    return types.int64(types.intp, types.int64), codegen


@intrinsic
def _astore(typingctx, base, k, v):
    def codegen(context, builder, sig, args):
        builder.store_atomic(args[2], _word(context, builder, args[0], args[1]), "seq_cst", 8)
        return context.get_dummy_value()
    return types.void(types.intp, types.int64, types.int64), codegen


@intrinsic
def _aadd(typingctx, base, k, v):
    """Atomic ``state[k] += v``; returns the old value."""
    def codegen(context, builder, sig, args):
        return builder.atomic_rmw("add", _word(context, builder, args[0], args[1]), args[2],
                                  "seq_cst")
    return types.int64(types.intp, types.int64, types.int64), codegen


@intrinsic
def _acas(typingctx, base, k, expected, new):
    """Atomic compare-and-swap of ``state[k]``; returns the old value."""
    def codegen(context, builder, sig, args):
        r = builder.cmpxchg(_word(context, builder, args[0], args[1]), args[2], args[3],
                            "seq_cst", "seq_cst")
        return builder.extract_value(r, 0)
    return types.int64(types.intp, types.int64, types.int64, types.int64), codegen


# ---------------------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------------------

@njit(**_CACHED)
def _gemm(item, ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
    """One row-major CBLAS gemm ``C = op(A) op(B)`` on raw addresses."""
    t_a = np.int32(112 if ta else 111)         # CblasTrans / CblasNoTrans
    t_b = np.int32(112 if tb else 111)
    if item == 8:
        _dgemm(np.int32(101), t_a, t_b, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)
    else:
        _sgemm(np.int32(101), t_a, t_b, m, n, k, np.float32(1.0), a, lda, b, ldb,
               np.float32(0.0), c, ldc)


@njit(**_CACHED)
def _gemv(item, trans, rows, cols, a, lda, x, incx, y, incy):
    """One row-major CBLAS gemv ``y = op(A) x`` on raw addresses (A stored rows x cols)."""
    t = np.int32(112 if trans else 111)
    if item == 8:
        _dgemv(np.int32(101), t, rows, cols, 1.0, a, lda, x, incx, 0.0, y, incy)
    else:
        _sgemv(np.int32(101), t, rows, cols, np.float32(1.0), a, lda, x, incx,
               np.float32(0.0), y, incy)


@njit(**_CACHED)
def matvec_layout(ta, tb, m, n, k, a, lda, b, ldb):
    """``C = op(A) op(B)`` with one column (n == 1) or one row (m == 1) of C, as the gemv
    ``y = op(M) x``: ``(trans, rows, cols, M, ldm, x, incx)`` on raw addresses (M stored
    rows x cols). OpenBLAS's gemm with a dimension of 1 runs 4-8x slower than its gemv
    (1024 x 1024 matrix-vector: 0.41-0.79 ms against 0.10 ms, one thread); the complex
    products (numba_complex) use this layout too."""
    if n == 1:
        # y (m) = op(A) x, x = op(B)'s column: B is (k, 1) (stride ldb) or B^T's (1, k)
        incx = 1 if tb else ldb
        if ta:                                   # A stored (k, m)
            return True, k, m, a, lda, b, incx
        return False, m, k, a, lda, b, incx      # A stored (m, k)
    # C^T (n) = op(B)^T x, x = op(A)'s row: A is (1, k) (stride 1) or A^T's (k, 1)
    incx = lda if ta else 1
    if tb:                                       # B stored (n, k): op(B)^T = B
        return False, n, k, b, ldb, a, incx
    return True, k, n, b, ldb, a, incx           # B stored (k, n): op(B)^T = B^T


@njit(**_CACHED)
def _panel(s, i):
    """Compute panel ``i`` of the product described in the state at ``s``."""
    item = _aload(s, _ITEM)
    ta, tb = _aload(s, _TA) != 0, _aload(s, _TB) != 0
    m, n, k = _aload(s, _M), _aload(s, _N), _aload(s, _K)
    a, lda, b, ldb = _aload(s, _A), _aload(s, _LDA), _aload(s, _B), _aload(s, _LDB)
    c, ldc = _aload(s, _C), _aload(s, _LDC)
    ps = _aload(s, _PSIZE)
    lo = i * ps
    last = i == _aload(s, _NPANELS) - 1    # the last panel takes the remainder too
    if _aload(s, _SPLIT) == 0:             # rows lo:hi of C = rows of op(A) @ op(B)
        hi = m if last else min(m, lo + ps)
        a_off = lo if ta else lo * lda     # op(A) = A^T: rows of op(A) are columns of A
        _gemm(item, ta, tb, hi - lo, n, k, a + a_off * item, lda, b, ldb,
              c + lo * ldc * item, ldc)
    else:                                  # columns lo:hi of C = op(A) @ columns of op(B)
        hi = n if last else min(n, lo + ps)
        b_off = lo * ldb if tb else lo
        _gemm(item, ta, tb, m, hi - lo, k, a, lda, b + b_off * item, ldb, c + lo * item, ldc)


@njit(**_CACHED)
def _clock_ns(s, which):
    """Nanoseconds of the clock whose id is in state word ``which``."""
    ts = np.zeros(2, np.int64)                   # struct timespec {tv_sec; tv_nsec}
    _clock_gettime(np.int32(_aload(s, which)), ts.ctypes.data)
    return ts[0] * 1_000_000_000 + ts[1]


@njit(**_CACHED)
def _steal(s, gen, last_signals):
    """Take and compute free panels of job ``gen`` until none is left.

    The counter word holds ``gen << 32 | next panel``; a compare-and-swap claims a panel
    only while the counter still belongs to this job, so a late worker never touches the
    next product's panels with this one's description.
    """
    while True:
        cnt = _aload(s, _COUNTER)
        if (cnt >> 32) != gen:
            return
        i = cnt & 0xFFFFFFFF
        npan = _aload(s, _NPANELS)
        if i >= npan:
            return
        if _acas(s, _COUNTER, cnt, cnt + 1) != cnt:
            continue
        _panel(s, i)
        if last_signals:
            _aadd(s, _WPANELS, 1)
        if _aadd(s, _DONE, 1) + 1 == npan and last_signals:
            _lock(s + _MTX * 8)
            _signal(s + _CD * 8)
            _unlock(s + _MTX * 8)


@njit(**_CACHED)
def _worker_main():
    s = _state_addr()
    openblas_threads_local(np.int32(1))
    me = _aadd(s, _WORKERS, 1)             # this worker's index: 0, 1, ...
    _lock(s + _MTX * 8)
    seen = _aload(s, _GEN)
    _unlock(s + _MTX * 8)
    while True:
        _lock(s + _MTX * 8)
        while _aload(s, _GEN) == seen and _aload(s, _SHUTDOWN) == 0:
            _wait(s + _CW * 8, s + _MTX * 8)
        seen = _aload(s, _GEN)
        _unlock(s + _MTX * 8)
        if _aload(s, _SHUTDOWN) != 0:
            _aadd(s, _WORKERS, -1)
            return
        if me < _aload(s, _ACTIVE):
            _steal(s, seen, True)


cache_helpers(globals())        # the helpers above, before the cfunc below compiles them


@cached_cfunc(types.voidptr(types.voidptr), nogil=True)
def _worker_entry(arg):
    _worker_main()
    return arg


@njit(**_CACHED)
def _record_rate(s, word, wall_ns, flops):
    """Fold one product's wall time per MFLOP into the running mean in ``word`` (weight
    1/4; the first measurement is taken as it is)."""
    rate = max(wall_ns * 1_000_000 // max(flops, 1), 1)
    old = _aload(s, word)
    _astore(s, word, rate if old == 0 else (3 * old + rate) // 4)


@njit(**_CACHED)
def _gemm_any(a, b, out, flags):
    m, n = out.shape
    ta = (flags & 1) != 0
    tb = (flags & 2) != 0
    k = a.shape[0] if ta else a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        out.fill(0)
        return
    _gemm_ptr(out.itemsize, ta, tb, m, n, k, np.intp(a.ctypes.data), a.shape[1],
              np.intp(b.ctypes.data), b.shape[1], np.intp(out.ctypes.data))


@njit(**_CACHED)
def _gemm_ptr(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp):
    """:func:`matmul_into` on data pointers (C-contiguous operands, ``m, n, k >= 1``)."""
    if m == 1 or n == 1:
        # a matrix-vector product: memory-bound, one thread (as numpy's own matmul runs it)
        trans, rows, cols, mp, ldm, xp, incx = matvec_layout(ta, tb, m, n, k, ap, lda, bp, ldb)
        prev = openblas_threads_local(np.int32(1))
        _gemv(item, trans, rows, cols, mp, ldm, xp, incx, cp, 1)
        openblas_threads_local(prev)
        return
    s = _state_addr()
    want = _aload(s, _THREADS)
    flops = 2 * m * n * k
    use = min(want, flops // max(_aload(s, _MINFLOPS), 1))
    if _aload(s, _MODE) == MODE_OPENBLAS:
        prev = openblas_threads_local(np.int32(want))
        _gemm(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp, n)
        openblas_threads_local(prev)
        return
    workers = _aload(s, _WORKERS)
    if use > workers + 1:
        use = workers + 1
    prev = openblas_threads_local(np.int32(1))
    if use < 2:
        _gemm(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp, n)
        openblas_threads_local(prev)
        return
    # Panels: one per thread, of C's columns when it has >= 128 of them (else of its
    # rows), never thinner than PANEL_MIN; the last takes the remainder. Each panel call
    # packs the other operand again, so few wide panels win: a 256x784 @ 784x512 product
    # on 2 threads took 1.27 ms as two 256-column panels, 1.52 ms as two of 192 columns
    # and two of 64, 1.67 ms as eight of 64 (one thread: 2.2 ms); row panels, packing all
    # of B each time, cost more still. A thread stalled on a busy core holds its panel to
    # the end: the adaptation below (split, or the calling thread alone, by measured wall
    # time per FLOP) answers that case.
    split = 1 if n >= 2 * PANEL_MIN else 0
    side = n if split == 1 else m
    ps = max(PANEL_MIN, side // use)
    npan = max(1, side // ps)
    if npan < 2:                           # one panel: nothing to share
        _gemm(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp, n)
        openblas_threads_local(prev)
        return
    # Measured availability: what a core is worth right now is whatever the scheduler gives.
    # The state keeps running means of the wall time per MFLOP of split products and of
    # products run on the calling thread; a product takes the faster way, and the probes
    # (one product in PROBE_EVERY each way) keep both means current. On a quiet machine the
    # split wins (~1.5-1.9x on big products); with every core shared it does not, and the
    # calling thread alone saves the wake-up and the per-panel re-packing of an operand.
    if _aload(s, _ADAPT) != 0:
        turn = _aadd(s, _PROBE, 1) % PROBE_EVERY
        r_split, r_serial = _aload(s, _SPLITRATE), _aload(s, _SERIALRATE)
        if turn != 0 and (r_serial == 0 or turn == 1 or
                          (r_split != 0 and r_split >= r_serial)):
            if turn != 1 and r_serial != 0:
                _aadd(s, _ADAPTSERIAL, 1)
            t0 = _clock_ns(s, _CLKMONO)
            _gemm(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp, n)
            openblas_threads_local(prev)
            _record_rate(s, _SERIALRATE, _clock_ns(s, _CLKMONO) - t0, flops)
            return
    if _acas(s, _BUSY, 0, 1) != 0:         # another thread's product holds the pool
        _aadd(s, _BUSYFALLBACK, 1)
        _gemm(item, ta, tb, m, n, k, ap, lda, bp, ldb, cp, n)
        openblas_threads_local(prev)
        return
    _astore(s, _ITEM, item)
    _astore(s, _TA, 1 if ta else 0)
    _astore(s, _TB, 1 if tb else 0)
    _astore(s, _M, m)
    _astore(s, _N, n)
    _astore(s, _K, k)
    _astore(s, _A, ap)
    _astore(s, _LDA, lda)
    _astore(s, _B, bp)
    _astore(s, _LDB, ldb)
    _astore(s, _C, cp)
    _astore(s, _LDC, n)
    _astore(s, _SPLIT, split)
    _astore(s, _PSIZE, ps)
    _astore(s, _NPANELS, npan)
    _astore(s, _ACTIVE, use - 1)
    _astore(s, _DONE, 0)
    wall0 = _clock_ns(s, _CLKMONO)
    _lock(s + _MTX * 8)
    gen = (_aload(s, _GEN) + 1) & 0x7FFFFFFF
    _astore(s, _COUNTER, gen << 32)
    _astore(s, _GEN, gen)
    _broadcast(s + _CW * 8)
    _unlock(s + _MTX * 8)
    _steal(s, gen, False)
    if _aload(s, _DONE) < npan:
        _lock(s + _MTX * 8)
        while _aload(s, _DONE) < npan:
            _wait(s + _CD * 8, s + _MTX * 8)
        _unlock(s + _MTX * 8)
    _record_rate(s, _SPLITRATE, _clock_ns(s, _CLKMONO) - wall0, flops)
    _aadd(s, _POOLED, 1)
    _astore(s, _BUSY, 0)
    openblas_threads_local(prev)


# LAPACK calls of at least this order, or of at least this many MFLOP (a solve with many
# right-hand sides: an inverse of order 200 is 16 MFLOP of triangular solves, which numpy
# runs on its threads in 0.8x the time of one), may run on OpenBLAS's own threads; smaller
# ones on one thread always: the threads' start-up and barriers outweigh the work
LAPACK_MIN_N = 256
LAPACK_MIN_MFLOPS = 2 * FLOPS_PER_THREAD // 1_000_000


@njit(**_CACHED)
def lapack_begin(n, mflops, family):
    """Set OpenBLAS's threads for one LAPACK call of order ``n`` and ``mflops`` MFLOP, made
    from a kernel (``family``: its index in ``LAPACK_FAMILIES``); returns the token
    :func:`lapack_end` takes. One thread below both ``LAPACK_MIN_N`` and
    ``LAPACK_MIN_MFLOPS`` or with ``jit_blas_threads`` 1; the setting's threads without
    adaptation; else the way that lately took less wall time per MFLOP for this family and
    size class: the setting's threads, or one (the GEMM pool's policy, on means of their own
    per routine family: a factorization's panels synchronize far more often than a
    product's, and the families differ in speed per MFLOP). Measured on the 2-core VM: at n = 800
    one thread ran potrf in 6.3 ms where two took 15.2 ms in one hour, and the two-thread
    inverse 0.86x of numpy's time where one thread took 1.13-1.21x in another: which wins
    depends on what else holds the cores, so it is measured, not fixed."""
    s = _state_addr()
    want = _aload(s, _THREADS)
    if want < 2 or (n < LAPACK_MIN_N and mflops < LAPACK_MIN_MFLOPS):
        return openblas_threads_local(np.int32(1)), 0, np.int64(-1), mflops
    if _aload(s, _ADAPT) == 0:                 # adaptation off: the setting's threads
        return openblas_threads_local(np.int32(want)), 0, np.int64(-1), mflops
    turn = _aadd(s, _LPROBE, 1) % LAPACK_PROBE_EVERY
    # means per family and size class: threads pay off differently on a call of order 200
    # than on one of 800, and one mean over both chose one thread for gesdd at n = 800
    # after the calls of order 200 (1.28x numpy's time instead of 1.04x)
    w1 = _LRATES + 2 * (family + (0 if n >= LAPACK_MIN_N else len(LAPACK_FAMILIES)))
    r1, rn = _aload(s, w1), _aload(s, w1 + 1)
    if r1 == 0:
        multi = False
    elif rn == 0:
        multi = True
    elif turn <= 1:
        multi = turn == 0
    else:
        multi = rn < r1
    if multi:
        _aadd(s, _LMULTI, 1)
    prev = openblas_threads_local(np.int32(want if multi else 1))
    return prev, _clock_ns(s, _CLKMONO), np.int64(w1 + 1 if multi else w1), mflops


@njit(**_CACHED)
def lapack_end(token):
    """Restore OpenBLAS's threads after the call :func:`lapack_begin` set up, and fold its
    wall time into the mean of the way it ran."""
    prev, t0, word, mflops = token
    openblas_threads_local(prev)
    if word >= 0:
        s = _state_addr()
        wall = _clock_ns(s, _CLKMONO) - t0
        rate = max(wall // max(mflops, 1), 1)
        old = _aload(s, word)
        _astore(s, word, rate if old == 0 else (3 * old + rate) // 4)


@njit(**_CACHED)
def syevd_inplace(a, w):
    """Eigen-decomposition of the symmetric C-contiguous ``a`` from its lower triangle, in
    place (eigenvectors in the columns of ``a``, ascending eigenvalues in ``w``) through
    numpy's own LAPACK, single-threaded; returns LAPACK's info (0: converged)."""
    n = a.shape[0]
    prev = openblas_threads_local(np.int32(1))
    ap, wp = np.intp(a.ctypes.data), np.intp(w.ctypes.data)
    jobz, uplo = np.uint8(86), np.uint8(76)        # 'V', 'L'
    if a.itemsize == 8:
        info = lapacke_dsyevd(np.int32(101), jobz, uplo, n, ap, n, wp)
    else:
        info = _ssyevd(np.int32(101), jobz, uplo, n, ap, n, wp)
    openblas_threads_local(prev)
    return info


@njit(**_CACHED)
def gemm_numba(a, b, out, flags):
    t = flags & 3
    if t == 0:
        np.dot(a, b, out)
    elif t == 1:
        np.dot(a.T, b, out)
    elif t == 2:
        np.dot(a, b.T, out)
    else:
        np.dot(a.T, b.T, out)


@cached_cfunc(types.void(types.int64, types.int64, types.int64, types.int64, types.int64,
                         types.int64, types.int64, types.int64), nogil=True)
def gemm_pool_entry(item, flags, m, n, k, a, b, c):
    """The pool as a C function, for kernels compiled without Numba (backends/llvm_cpu.py):
    ``c = op(a) @ op(b)`` on the data pointers of C-contiguous operands (``item``: 8 or 4
    bytes per element; ``flags`` as :func:`matmul_into`'s; ``m, n, k >= 1``)."""
    ta = (flags & 1) != 0
    tb = (flags & 2) != 0
    _gemm_ptr(item, ta, tb, m, n, k, np.intp(a), m if ta else k, np.intp(b),
              k if tb else n, np.intp(c))


matmul_into = _gemm_any if HAVE_CBLAS else gemm_numba
matmul_into.__doc__ = """``out = op(a) @ op(b)`` for C-contiguous 2-D float arrays (BLAS gemm).

``flags`` bit 1 transposes ``a``, bit 2 transposes ``b``; ``out`` is C-contiguous. The
number of threads comes from the pool state at run time (``ad.config.jit_blas_threads``).
"""
if not HAVE_CBLAS:
    BLAS = "numba-np.dot"


# ---------------------------------------------------------------------------------------
# Python side: thread count, starting workers, fork
# ---------------------------------------------------------------------------------------
_start_lock = threading.Lock()
_started = 0       # workers this process has started (and not stopped)


def file_digest():
    """A hash of this file: kernels inline its helpers, so it belongs in their cache key."""
    with open(__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def openblas_core():
    """The kernel family numpy's OpenBLAS chose (``"Haswell"``, ``"SkylakeX"``, ...), or None.

    OpenBLAS picks it at load from the CPU, or from ``OPENBLAS_CORETYPE`` when that is set
    (benchmarks print it: AVX2 kernels on an AVX-512 CPU halve GEMM throughput).

    >>> openblas_core() is None or isinstance(openblas_core(), str)
    True
    """
    for path in numpy_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def _cgroup_cpus():
    """The CPUs a cgroup v2 quota allows this process (``quota / period`` of ``cpu.max``,
    rounded up), or None without a quota."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota == "max":
            return None
        return max(1, -(-int(quota) // int(period)))
    except (OSError, ValueError):
        return None


def resolve_threads(value):
    """The thread count a ``jit_blas_threads`` setting means on this machine.

    ``"auto"``: the CPUs this process may run on (``os.sched_getaffinity``), within a
    container's CPU quota (cgroup v2 ``cpu.max``), at most 8. How many of them are free
    from moment to moment is measured per product (see :func:`stats`'s ``speedup``).

    >>> resolve_threads(3)
    3
    >>> 1 <= resolve_threads("auto") <= 8
    True
    """
    if value == "auto":
        try:
            n = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n = os.cpu_count() or 1
        quota = _cgroup_cpus()
        if quota is not None:
            n = min(n, quota)
        return max(1, min(n, 8))
    return int(value)


def _start_workers(n):
    """Start native workers until ``n`` exist (idempotent)."""
    global _started
    if not HAVE_CBLAS:
        return
    with _start_lock:
        addr = _worker_entry.address
        create = _LIBC.pthread_create
        create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p]
        detach = _LIBC.pthread_detach
        detach.argtypes = [ctypes.c_ulong]
        while _started < n:
            tid = ctypes.c_ulong()
            if create(ctypes.byref(tid), None, addr, None) != 0:
                break                       # no more threads: the pool works with fewer
            detach(tid.value)
            _started += 1
        # a worker counts itself in when it runs: wait for that (microseconds), so the
        # next product already sees it (up to 1 s: a starved machine just starts later)
        deadline = time.monotonic() + 1.0
        while _STATE[_WORKERS] < _started and time.monotonic() < deadline:
            time.sleep(0.0002)


def set_threads(value, mode=MODE_POOL, min_flops=None, adaptive=True):
    """Use ``value`` threads (``"auto"`` or an int >= 1) for GEMMs inside kernels.

    What ``ad.config.update("jit_blas_threads", value)`` calls. Takes effect at the next
    product, with no recompile. ``mode=MODE_OPENBLAS`` hands the count to OpenBLAS's own
    threads instead of the pool (benchmarks compare the two); ``min_flops`` replaces
    :data:`FLOPS_PER_THREAD` (tests split tiny products with ``min_flops=1``).
    ``adaptive=False`` splits every large product whatever the measured speedup (tests and
    benchmarks that need the split path).

    >>> import autodiff as ad
    >>> ad.config.update("jit_blas_threads", 2)
    >>> stats()["threads"]
    2
    >>> ad.config.update("jit_blas_threads", "auto")
    """
    n = min(resolve_threads(value), MAX_THREADS)
    _STATE[_MODE] = mode
    _STATE[_MINFLOPS] = FLOPS_PER_THREAD if min_flops is None else max(int(min_flops), 1)
    _STATE[_ADAPT] = 1 if adaptive else 0
    if not adaptive or n != _STATE[_THREADS]:
        _STATE[_SPLITRATE] = _STATE[_SERIALRATE] = 0     # measure afresh
        _STATE[_LRATES:] = 0
    if mode == MODE_POOL and n > 1 and _active:
        _start_workers(n - 1)
    _STATE[_THREADS] = n


_active = False     # ensure_started() ran: a kernel that multiplies matrices exists


def ensure_started():
    """Start the pool's workers for the ``jit_blas_threads`` setting, compiling (or loading)
    their entry point: called when the first kernel that multiplies matrices is installed
    (``jit_runtime.compiled_entry``). Until then no worker exists, and a product runs on
    the caller's thread alone (``_gemm_any`` uses at most the workers there are), so a
    process whose programs hold no product never compiles or starts the pool."""
    global _active
    if _active:
        return
    _active = True
    if HAVE_CBLAS and _STATE[_MODE] == MODE_POOL and _STATE[_THREADS] > 1:
        _start_workers(int(_STATE[_THREADS]) - 1)


def stats():
    """Counts since start: ``pooled`` products (split over threads), ``worker_panels``
    (panels the workers computed; the caller did the rest), ``serial_busy`` (products run
    single-threaded because another thread held the pool), ``serial_adapted`` (products
    run on the calling thread because that was lately faster than a split),
    ``split_ns_per_mflop`` and ``serial_ns_per_mflop`` (the running means that choice
    compares; 0: not measured yet), the live ``workers`` and the ``threads`` setting;
    for LAPACK calls from kernels (``lapack_begin``), ``lapack_multi`` (calls run on
    ``threads`` OpenBLAS threads) and ``lapack_ns_per_mflop``: per routine family the two
    means ``(one thread, threads)`` of calls of order >= ``LAPACK_MIN_N``
    (``lapack_ns_per_mflop_small``: of the smaller calls of >= ``LAPACK_MIN_MFLOPS``).

    >>> sorted(stats())[:4]
    ['lapack_multi', 'lapack_ns_per_mflop', 'lapack_ns_per_mflop_small', 'pooled']
    """
    nf = len(LAPACK_FAMILIES)
    return {"pooled": int(_STATE[_POOLED]), "worker_panels": int(_STATE[_WPANELS]),
            "serial_busy": int(_STATE[_BUSYFALLBACK]),
            "serial_adapted": int(_STATE[_ADAPTSERIAL]),
            "split_ns_per_mflop": int(_STATE[_SPLITRATE]),
            "serial_ns_per_mflop": int(_STATE[_SERIALRATE]), "workers": int(_STATE[_WORKERS]),
            "threads": int(_STATE[_THREADS]), "lapack_multi": int(_STATE[_LMULTI]),
            "lapack_ns_per_mflop": {f: (int(_STATE[_LRATES + 2 * i]),
                                        int(_STATE[_LRATES + 2 * i + 1]))
                                    for i, f in enumerate(LAPACK_FAMILIES)},
            "lapack_ns_per_mflop_small": {f: (int(_STATE[_LRATES + 2 * (i + nf)]),
                                              int(_STATE[_LRATES + 2 * (i + nf) + 1]))
                                          for i, f in enumerate(LAPACK_FAMILIES)}}


def _after_fork_in_child():
    # Threads do not survive fork(): the child has none of the parent's workers, and the
    # mutex may have been held by one at the moment of the fork. Reset the shared words
    # (a zeroed pthread mutex/condition variable is the glibc static initializer) and
    # start the child's own workers.
    global _started, _start_lock
    _start_lock = threading.Lock()
    words = [_THREADS, _MINFLOPS, _MODE, _GEN, _ADAPT, _CLKMONO]
    keep = _STATE[words].copy()
    _STATE[:] = 0
    _STATE[words] = keep
    had, _started = _started, 0
    if had and _STATE[_MODE] == MODE_POOL and _STATE[_THREADS] > 1:
        _start_workers(had)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _shutdown():
    """Wake every idle worker and let it return (at interpreter exit)."""
    _STATE[_SHUTDOWN] = 1
    if _started:
        _signal_all()


@njit(**_CACHED)
def _signal_all():
    s = _state_addr()
    _lock(s + _MTX * 8)
    _broadcast(s + _CW * 8)
    _unlock(s + _MTX * 8)


def _config_listener(name, value):
    if name == "jit_blas_threads":
        set_threads(value)


def _init():
    config.on_update(_config_listener)
    set_threads(config.jit_blas_threads)
    atexit.register(_shutdown)


cache_helpers(globals())        # and the helpers defined after the cfunc


if HAVE_CBLAS:
    _init()
