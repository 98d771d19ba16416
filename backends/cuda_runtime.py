"""What generated CUDA programs call on the host: launch geometry, device buffers, the
library calls (CuPy when importable, else a shared-memory tiled matmul kernel and host
LAPACK), and the host fallback of equations without a kernel.

Imported only by ``backends/numba_cuda.py`` (and so only for ``backend="cuda"`` or
``device_put(x, "cuda")``): a CPU install never imports ``numba.cuda``.

Launch geometry. Kernels are grid-stride loops over ``TPB`` threads a block, at most
``MAX_BLOCKS`` blocks. On a GPU: 256 threads, up to 8 blocks per SM (1056 on an H200's
132 SMs: every SM full; grid-stride loops take the rest). Under the simulator every
CUDA thread is a Python thread, so 32 threads and 2 blocks keep launches cheap while
still exercising the block-level code (shared memory, ``syncthreads``, several blocks).

>>> from autodiff.backends import cuda_runtime as rt      # doctest: +SKIP
>>> rt.blocks(10 ** 9) <= rt.MAX_BLOCKS                   # doctest: +SKIP
True
"""
import collections
import os
import sys
import threading
import time

import numpy as np

from .. import devices as _devices
from ..config import config as _config
from .cuda_launcher import bound                   # launches bound once per argument types
from .cuda_math import SIMULATOR, cuda      # numba.cuda, through the numpy >= 2.5 guard there

def _sm_count():
    """Streaming multiprocessors of the current GPU (132 on an H200), or None where no
    driver answers (a process compiling PTX without a GPU)."""
    try:
        return int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    except Exception:  # noqa: BLE001 - no driver or no device: the default grid
        return None


TPB = 32 if SIMULATOR else 256
#: blocks of a grid-stride launch: 8 resident blocks of 256 threads on each SM (2048
#: threads, an SM's most), so one launch fills the device; 1024 where the count is unknown
MAX_BLOCKS = 2 if SIMULATOR else 8 * (_sm_count() or 128)
TILE = 4 if SIMULATOR else 16          # matmul tile edge: TILE*TILE threads a block


def _large_kernel_params():
    """Whether kernels may take 32,764 bytes of parameters (CUDA >= 12.1 in both the
    driver and the toolkit whose NVVM writes the PTX, on sm_70 and later) rather than
    4,096. The simulator stands for such a GPU (its kernels compile to PTX 8.x in CI:
    ``gpu_check.py --ptx``); a version that cannot be read counts as an old one."""
    if SIMULATOR:
        return True
    try:
        from numba.cuda.cudadrv.driver import driver
        from numba.cuda.cudadrv.runtime import runtime
        return min(tuple(driver.get_version()), tuple(runtime.get_version())) >= (12, 1)
    except Exception:  # noqa: BLE001 - numba-cuda-mlir, no driver: the 4 kB limit
        return False


#: the most parameters a device loop's kernel takes (each array 7 + 2 x rank 8-byte
#: words; 300 of rank 3 fit in 32,764 bytes, 56 of rank 1 in 4,096)
LOOP_PARAMS = 300 if _large_kernel_params() else 56


def blocks(n):
    """Blocks for a grid-stride launch over ``n`` elements (at least one)."""
    return max(1, min((int(n) + TPB - 1) // TPB, MAX_BLOCKS))


def row_blocks(n):
    """Blocks for a launch with one block per output element (block reductions)."""
    return max(1, min(int(n), MAX_BLOCKS))


#: threads reducing one row of a "rows" reduction (numba_cuda_emitter): a warp on a GPU;
#: 8 in the simulator, so that its 32-thread blocks hold several groups
ROW_GROUP = 8 if SIMULATOR else 32
ROWS_PER_BLOCK = TPB // ROW_GROUP


def group_blocks(n):
    """Blocks for a "rows" launch over ``n`` rows (``ROWS_PER_BLOCK`` a block)."""
    return max(1, min((int(n) + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, MAX_BLOCKS))


# ------------------------------------------------------------------------- launches

class Launches:
    """What :func:`count_launches` records: ``total`` kernel launches (generated kernels,
    the runtime's own, and library calls, one each) and, per launch, ``(name, grid,
    block, ms)`` in ``records`` (``ms`` is None unless profiling)."""

    def __init__(self, profile):
        self.profile, self.total, self.records = profile, 0, []

    def note(self, name, grid, block, ms=None):
        self.total += 1
        self.records.append((name, grid, block, ms))

    def by_name(self):
        """``{name: launches}``, for tests and reports."""
        return dict(collections.Counter(r[0] for r in self.records))


_COUNTERS = []


class _Counted:
    """A kernel seen through :func:`count_launches`: ``k[grid, block](*args)`` as the
    kernel's own, noting the launch (timed between two synchronizations when profiling)."""

    wraps_kernel = True

    def __init__(self, kernel, name):
        self.wrapped_kernel, self.name = kernel, name

    def __getitem__(self, cfg):
        launch = self.wrapped_kernel[cfg]

        def call(*args):
            return _launch_noted(self.name, cfg[0], cfg[1], launch, args)
        return call

    def __getattr__(self, attr):              # py_func, specialize, ... as the kernel's
        return getattr(self.wrapped_kernel, attr)


def _launch_noted(name, grid, block, launch, args):
    if not _COUNTERS:
        return launch(*args)
    prof = any(c.profile for c in _COUNTERS)
    if prof:
        cuda.synchronize()
        t0 = time.perf_counter()
    out = launch(*args)
    ms = None
    if prof:
        cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
    for c in _COUNTERS:
        c.note(name, grid, block, ms)
    return out


def note_library_call(name):
    """A library call (cuBLAS/cuSOLVER through CuPy) counts as one launch."""
    for c in _COUNTERS:
        c.note(name, None, None)


class count_launches:
    """Count (and with ``profile=True`` time) every kernel launch of the CUDA backend
    inside the ``with`` block: the generated programs' kernels, the runtime's (matmul,
    permute) and library calls. Outside such a block launches cost nothing extra.

    >>> with count_launches() as n:          # doctest: +SKIP
    ...     f(x)
    >>> n.total                              # doctest: +SKIP
    1
    """

    def __init__(self, profile=False):
        self.launches = Launches(profile)

    def __enter__(self):
        from . import numba_cuda
        if not _COUNTERS:
            numba_cuda.wrap_kernels(lambda k, name: _Counted(k, name))
        _COUNTERS.append(self.launches)
        return self.launches

    def __exit__(self, *exc):
        from . import numba_cuda
        _COUNTERS.remove(self.launches)
        if not _COUNTERS:
            numba_cuda.wrap_kernels(None)
        return False


# ------------------------------------------------------------------------- buffers

def is_device(a):
    """Whether ``a`` is a numba-cuda device array (or the simulator's stand-in)."""
    return hasattr(a, "copy_to_host")


# ------------------------------------------------------------------------- buffers
#
# The caching allocator. A program returns each buffer it made and is done with (those
# no other name can still reach: numba_cuda_emitter.free_at_last_use decides which) to a
# pool with ``give``; the next ``empty`` of the same shape and dtype takes it back
# instead of allocating: no cuMemAlloc, no new device-array object. Reuse is safe
# because every program's work is ordered on one stream (numba-cuda's default stream):
# a kernel writing a reused buffer runs after the kernels that read it. Each thread has
# its own pool (with NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1 threads do not share a
# stream), holding at most POOL_BYTES in at most POOL_PER_SHAPE buffers a shape.

#: the most bytes one thread's pool keeps
POOL_BYTES = 1 << 30
#: the most buffers of one shape and dtype it keeps (a host loop's step can have a
#: dozen of one shape in flight: its body's temporaries, outputs and replaced carries)
POOL_PER_SHAPE = 16


class _Pool(threading.local):
    def __init__(self):
        self.free = {}                   # (shape, dtype) -> [device array, ...]
        self.nbytes = 0
        self.reused = 0
        self.allocated = 0


_POOL = _Pool()


def empty(shape, dtype):
    """An uninitialized C-contiguous device array: one from this thread's pool when it
    holds one of this shape and dtype, else a new one (marked as the pool's: a result
    it becomes goes back to the pool when dropped, :func:`reclaim`)."""
    if _RETURNED:
        _take_returned()
    key = (tuple(int(s) for s in shape), np.dtype(dtype))
    p = _POOL
    free = p.free.get(key)
    if free:
        a = free.pop()
        p.nbytes -= a.nbytes
        p.reused += 1
        return a
    p.allocated += 1
    try:
        a = cuda.device_array(key[0], dtype=key[1])
    except Exception:  # noqa: BLE001 - out of device memory: the pool's buffers first
        if not p.nbytes:
            raise
        release_pool()
        a = cuda.device_array(key[0], dtype=key[1])
    a.__dict__[_POOLED] = sys.getrefcount(_memory(a))
    return a


_POOLED = "_autodiff_pooled"    # on a buffer empty() made: its memory's refcount then


def _memory(a):
    """The object a view of ``a`` refers to (numba-cuda: the device memory pointer, which
    a slice's pointer and a reshape hold; the simulator: the numpy array, a view's base)."""
    return a._ary if SIMULATOR else a.gpu_data


def reclaim(a):
    """Put a result buffer back into the pool when the last :class:`CudaArray`
    holding it is dropped (``CudaArray.__del__``), if :func:`empty` made it and nothing
    refers to its memory (a view of it would). Work queued on the default stream that
    reads it runs before any later launch that writes it, so it can be handed out again
    at once. Without this every call allocated its results anew: a numba-cuda array
    object (tens of microseconds on the host) and, every few calls, numba-cuda's
    deferred frees (``cuMemFree``, which waits for the device). Config
    ``jit_cuda_reuse_results`` (default True) turns it off."""
    n = a.__dict__.get(_POOLED)
    if n is not None and sys.getrefcount(_memory(a)) <= n and \
            _config._values["jit_cuda_reuse_results"]:
        _RETURNED.append(a)   # (a finalizer may run inside empty() or give(), or in
        # another thread: the next empty() files it into its thread's pool)


_RETURNED = collections.deque()


def _take_returned():
    while True:
        try:
            a = _RETURNED.popleft()
        except IndexError:
            return
        give(a)


_devices.RECLAIM[:] = [reclaim]


def give(*arrays):
    """Return buffers a program made with :func:`empty` and no longer reaches to this
    thread's pool (within ``POOL_BYTES`` and ``POOL_PER_SHAPE``; the rest are dropped)."""
    p = _POOL
    for a in arrays:
        n = a.nbytes
        if p.nbytes + n > POOL_BYTES:
            continue
        free = p.free.setdefault((a.shape, a.dtype), [])
        if len(free) < POOL_PER_SHAPE:
            free.append(a)
            p.nbytes += n


def pool_info():
    """This thread's pool: ``{"reused": empty() calls served from it, "allocated": those
    that allocated, "kept_bytes", "kept_buffers"}``."""
    if _RETURNED:
        _take_returned()
    p = _POOL
    return {"reused": p.reused, "allocated": p.allocated, "kept_bytes": p.nbytes,
            "kept_buffers": sum(len(v) for v in p.free.values())}


def release_pool():
    """Drop this thread's pooled buffers and the results returned since (numba-cuda frees
    their memory)."""
    _RETURNED.clear()
    _POOL.free.clear()
    _POOL.nbytes = 0


def zeros(shape, dtype):
    """A device array of zeros."""
    return cuda.to_device(np.zeros(tuple(int(n) for n in shape), dtype=np.dtype(dtype)))


def ticket(store, k, count=1):
    """Counters ``k`` of a program's ``store``: an int32 device array of at least
    ``count`` elements, zero when made (a one-launch reduction takes tickets from it and
    each last block resets its counter)."""
    t = store.get(k)
    if t is None or t.shape[0] < count:
        t = store[k] = cuda.to_device(np.zeros(max(1, int(count)), np.int32))
    return t


def tiles(n):
    """Tiles of ``TPB`` consecutive elements covering ``n``."""
    return max(1, (int(n) + TPB - 1) // TPB)


def split_chunks(npar, nrows):
    """Row chunks of a "split" reduction (numba_cuda_emitter): enough blocks to fill the
    device (``MAX_BLOCKS`` over the tiles of kept elements), each chunk at least 16 rows."""
    return max(1, min(int(nrows) // 16, MAX_BLOCKS // tiles(npar)))


def split_blocks(npar, nch):
    """Blocks of a "split" reduction's launch (the kernel strides over the rest)."""
    return max(1, min(tiles(npar) * int(nch), MAX_BLOCKS))


def to_device(x):
    """A C-contiguous device copy of host array ``x`` (device arrays are returned as they
    are: everything the backend makes is C-contiguous)."""
    if is_device(x):
        return x
    return cuda.to_device(np.ascontiguousarray(x))


def adopt(x):
    """A C-contiguous numba-cuda device array holding ``x``, a CUDA array of another
    library (a CuPy array, a PyTorch CUDA tensor, a numba-cuda device array: anything
    with ``__cuda_array_interface__``), without a copy where ``x`` is C-contiguous; a
    strided one is copied (through the host, once). The kernels read it in place, so
    a program's argument costs no transfer (a copy of a numpy argument every call)."""
    if not is_device(x):
        x = from_interface(x)
    if not x.is_c_contiguous():
        x = cuda.to_device(np.ascontiguousarray(x.copy_to_host()))
    return x


def from_interface(o):
    """``o``'s memory as a numba-cuda device array, through ``__cuda_array_interface__``.
    numba-cuda's ``as_cuda_array`` synchronizes the stream the interface names by
    default, and CuPy names its null stream (1): a host wait for every kernel queued
    before. Work on the default streams is ordered with numba-cuda's launches, so that
    wait is skipped there; an array made on a stream of the user's own is still waited
    for (the kernels reading it must not start before it is written)."""
    cai = o.__cuda_array_interface__
    return _as_cuda_array(o, sync=cai.get("stream") not in _ORDERED_STREAMS)


def _as_cuda_array(o, sync):
    # numba-cuda's, one name so tests can stand in for it: the simulator has no
    # __cuda_array_interface__ (its arrays are host memory), so no as_cuda_array
    conv = getattr(cuda, "as_cuda_array", None)
    if conv is None:
        raise TypeError(f"an array of type {type(o).__name__} in CUDA device memory cannot "
                        f"be read by numba-cuda's simulator (it has no device memory); "
                        f"copy it to the host first")
    return conv(o, sync=sync)


def dcopy(a):
    """A device-to-device copy (results never alias an input of the caller; an update's
    operand), in a buffer from the pool (:func:`empty`)."""
    out = empty(a.shape, a.dtype)
    if a.size:
        out.copy_to_device(a)
    return out


def scalar_out(value, dtype):
    """A 0-d device array holding a host scalar (a rank-0 result of a program)."""
    return cuda.to_device(np.asarray(value, dtype=dtype).reshape(()))


def to_host_scalar(a):
    """The value of a 1-element device array (one device-to-host copy)."""
    return a.copy_to_host().reshape(-1)[0]


def set_row(Y, t, y):
    """``Y[t] = y`` for a device ``Y`` (a scan's stacked outputs), device to device."""
    if Y.ndim == 1:
        Y[t] = y
        return
    row = Y[t]
    if row.size:
        row.copy_to_device(y if is_device(y) else np.ascontiguousarray(y, dtype=Y.dtype))


def scalar_buffer(x, dtype):
    """A 1-element device buffer holding host scalar ``x`` (a host loop's rank-0 carry
    that the loop keeps on the device: its initial value, or a step's value computed on
    the host)."""
    out = empty((1,), dtype)
    out.copy_to_device(np.full((1,), x, dtype))
    return out


def set_elem(Y, t, y):
    """``Y[t] = y[0]`` for a device vector ``Y`` (a scan's stacked rank-0 outputs) and a
    1-element device buffer ``y``: a copy on the device, which the host does not wait for
    (reading ``y[0]`` would wait for every launch before it)."""
    Y[t:t + 1].copy_to_device(y)


def stack_host(values, dtype):
    """A device vector from a list of host scalars (a scan's rank-0 outputs)."""
    return cuda.to_device(np.asarray(values, dtype=dtype).reshape(-1))


def host_view(a):
    """A host copy of a device array, for reading many scalars from it (a scan's xs)."""
    return a.copy_to_host() if is_device(a) else a


def slot_i64(sz, k):
    """Run-time size ``k`` of the size vector (host code; as numba_runtime.slot_i64)."""
    return int(sz[k])


def slot_f64(sz, k):
    """The float64 literal stored bit for bit in slot ``k`` (as numba_runtime.slot_f64)."""
    return sz[k:k + 1].view(np.float64)[0]


# ------------------------------------------------------------------------- host fallback

def host_call(eqn, args):
    """Run one equation on the host: operands copied to the host, the primitive's numpy
    ``impl`` (the interpreter's rule: numpy/LAPACK), results copied back to the device.
    Returns one value per output (rank-0 results stay host scalars)."""
    host = [a.copy_to_host() if is_device(a) else a for a in args]
    with np.errstate(all="ignore"):
        out = eqn.primitive.impl(*host, **eqn.params)
    outs = out if eqn.primitive.multiple_results else [out]
    return tuple(_back(o, v.aval.dtype) for v, o in zip(eqn.outvars, outs))


def _back(o, dtype):
    o = np.asarray(o, dtype=dtype)
    return to_device(o) if o.ndim else o[()]


# ------------------------------------------------------------------------- CuPy

_CUPY = []


def cupy():
    """CuPy if it is importable and usable (never under the simulator), else None.
    ``AUTODIFF_CUDA_NO_CUPY=1`` turns it off (the fallbacks on a real GPU)."""
    if not _CUPY:
        mod = None
        if not SIMULATOR and os.environ.get("AUTODIFF_CUDA_NO_CUPY") != "1":
            try:
                import cupy as mod                      # noqa: F811
                mod.cuda.runtime.getDeviceCount()
            except Exception:  # noqa: BLE001 - absent, or no usable device: fall back
                mod = None
        _CUPY.append(mod)
    return _CUPY[0]


def _cp_in(cp, a):
    return cp.asarray(a) if is_device(a) else a


# The __cuda_array_interface__ "stream" values that need no wait before a numba-cuda
# launch: none, CUDA's legacy default stream (1: numba-cuda launches there) and the
# per-thread default stream (2: blocking, so ordered with the legacy stream).
_ORDERED_STREAMS = (None, 1, 2)


def _cp_out(cp, o, dtype):
    """A CuPy result as a numba-cuda device array (rank 0: a host scalar), without a
    host wait where CuPy ran on a default stream (:func:`from_interface`)."""
    o = cp.ascontiguousarray(cp.asarray(o, dtype=dtype))
    if not o.ndim:
        return o.get()[()]
    return from_interface(o)


def _tri(xp, a, b, left_side, lower, transpose_a, unit_diagonal):
    # the rule of primitives/linalg.py's impl, on any array namespace
    t = xp.tril(a) if lower else xp.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., xp.arange(n), xp.arange(n)] = 1
    if transpose_a:
        t = xp.swapaxes(t, -1, -2)
    if left_side:
        return xp.linalg.solve(t, b)
    return xp.swapaxes(xp.linalg.solve(xp.swapaxes(t, -1, -2), xp.swapaxes(b, -1, -2)), -1, -2)


def linalg(eqn, args):
    """cholesky, triangular_solve, solve, eigh, slogdet, qr, svd: cuSOLVER through CuPy on
    device arrays when CuPy is there, else :func:`host_call` (numpy/LAPACK on the host).
    qr is geqrf + orgqr/ungqr there too (LAPACK's reflectors, so numpy's signs); svd's
    singular vectors may carry other signs than LAPACK's (``linalg.svd`` makes them
    canonical after the primitive)."""
    cp = cupy()
    if cp is None:
        return host_call(eqn, args)
    name, p = eqn.primitive.name, eqn.params
    xs = [_cp_in(cp, a) for a in args]
    if name == "cholesky":
        outs = [cp.linalg.cholesky(xs[0])]
    elif name == "triangular_solve":
        outs = [_tri(cp, xs[0], xs[1], **p)]
    elif name == "solve":
        outs = [cp.linalg.solve(xs[0], xs[1])]
    elif name == "eigh":
        # eigh_p's ``upper``: the matrix of the lower triangle through the 'U' path on aᴴ,
        # as numpy's eigh(a, 'U') (autodiff/primitives/linalg.py)
        if p.get("upper"):
            outs = list(cp.linalg.eigh(cp.conj(cp.swapaxes(xs[0], -1, -2)), UPLO="U"))
        else:
            outs = list(cp.linalg.eigh(xs[0], UPLO="L"))
    elif name == "qr":
        outs = list(cp.linalg.qr(xs[0], mode="complete" if p.get("full") else "reduced"))
    elif name == "svd":
        if p.get("compute_uv", True):
            outs = list(cp.linalg.svd(xs[0], full_matrices=False))
        else:
            outs = [cp.linalg.svd(xs[0], compute_uv=False)]
    else:                                              # slogdet
        outs = list(cp.linalg.slogdet(xs[0]))
    if _COUNTERS:
        note_library_call(f"cusolver {name}")
    return tuple(_cp_out(cp, o, v.aval.dtype) for v, o in zip(eqn.outvars, outs))


def sort(eqn, args):
    """``sort`` / ``argsort`` of a lane too long for the rank kernel
    (``numba_cuda_statements._op_sort``): CuPy's sort, stable with NaN last as numpy's,
    on the device when CuPy is there, else :func:`host_call`. Complex values sort on the
    host (numpy's order of their NaNs)."""
    cp = cupy()
    if cp is None or eqn.invars[0].aval.dtype.kind == "c":
        return host_call(eqn, args)
    x, d = _cp_in(cp, args[0]), eqn.params["dimension"]
    o = cp.argsort(x, axis=d) if eqn.primitive.name == "argsort" else cp.sort(x, axis=d)
    if _COUNTERS:
        note_library_call(f"cupy {eqn.primitive.name}")
    return (_cp_out(cp, o, eqn.outvars[0].aval.dtype),)


def fft(eqn, args):
    """``fft`` (``FFT``, ``IFFT``, ``RFFT``, ``IRFFT`` over the trailing
    ``len(fft_lengths)`` axes, numpy's normalization: ``primitives/fft.py``) in cuFFT
    through CuPy on the device when CuPy is there, else :func:`host_call`."""
    cp = cupy()
    if cp is None:
        return host_call(eqn, args)
    x, p = _cp_in(cp, args[0]), eqn.params
    axes = tuple(range(x.ndim - len(p["fft_lengths"]), x.ndim))
    kind = p["fft_type"]
    if kind == "IRFFT":
        o = cp.fft.irfftn(x, s=tuple(p["fft_lengths"]), axes=axes)
    else:
        o = {"FFT": cp.fft.fftn, "IFFT": cp.fft.ifftn, "RFFT": cp.fft.rfftn}[kind](x, axes=axes)
    if _COUNTERS:
        note_library_call(f"cufft {kind}")
    return (_cp_out(cp, o, eqn.outvars[0].aval.dtype),)


# ------------------------------------------------------------------------- matmul

def _make_matmul(acc_zero, acc_type):
    @cuda.jit
    def matmul_tiled(X, Y, O, tx, ty):
        # O[b] = op(X[b]) @ op(Y[b]); op transposes when tx / ty. One TILE x TILE tile of
        # O per block and step of the grid-stride loops; operands staged through shared
        # memory in TILE-wide slices of the contracted axis.
        sx = cuda.shared.array((TILE, TILE), acc_type)
        sy = cuda.shared.array((TILE, TILE), acc_type)
        r = cuda.threadIdx.y
        c = cuda.threadIdx.x
        B = O.shape[0]
        M = O.shape[1]
        N = O.shape[2]
        K = X.shape[1] if tx else X.shape[2]
        for b in range(cuda.blockIdx.z, B, cuda.gridDim.z):
            for bm in range(cuda.blockIdx.y * TILE, M, cuda.gridDim.y * TILE):
                for bn in range(cuda.blockIdx.x * TILE, N, cuda.gridDim.x * TILE):
                    i = bm + r
                    j = bn + c
                    acc = acc_zero
                    for k0 in range(0, K, TILE):
                        kx = k0 + c
                        if i < M and kx < K:
                            sx[r, c] = X[b, kx, i] if tx else X[b, i, kx]
                        else:
                            sx[r, c] = acc_zero
                        ky = k0 + r
                        if ky < K and j < N:
                            sy[r, c] = Y[b, j, ky] if ty else Y[b, ky, j]
                        else:
                            sy[r, c] = acc_zero
                        cuda.syncthreads()
                        for kk in range(TILE):
                            acc += sx[r, kk] * sy[kk, c]
                        cuda.syncthreads()
                    if i < M and j < N:
                        O[b, i, j] = acc
    return matmul_tiled


_MATMUL = {}


def _matmul_kernel(kind):
    k = _MATMUL.get(kind)
    if k is None:
        k = _MATMUL[kind] = bound({"f": lambda: _make_matmul(0.0, cuda.float64),
                                   "c": lambda: _make_matmul(0j, cuda.complex128),
                                   "i": lambda: _make_matmul(0, cuda.int64)}[kind]())
    return k


def _as_shape(a, shape):
    return a if a.shape == shape else a.reshape(shape)


def _rows(arrays, rows):
    return tuple(a if r is None else a[r] for a, r in zip(arrays, rows))


def matmul(x, y, out, tx, ty, dims, rows=(None, None, None)):
    """``out[b] = op(x[b]) @ op(y[b])`` for ``dims = (B, M, K, N)``: C-contiguous device
    arrays of any rank holding x as (B, M, K) (as (B, K, M) when ``tx``: op transposes),
    y as (B, K, N) (as (B, N, K) when ``ty``) and out as (B, M, N). An array whose
    ``rows`` entry (x, y, out) is an int is that row of the array passed (a host loop's
    body reading its step's slice of a stack, or writing its per-step output). cuBLAS
    through CuPy when available (the views are CuPy's, so the hot path makes no
    numba-cuda array object), else the tiled shared-memory kernel above."""
    B, M, K, N = (int(d) for d in dims)
    xs = (B, K, M) if tx else (B, M, K)
    ys = (B, N, K) if ty else (B, K, N)
    cp = cupy()
    if cp is not None and out.dtype.kind in "fc":       # cuBLAS gemm (complex: cgemm/zgemm)
        X, Y, O = _rows((cp.asarray(x), cp.asarray(y), cp.asarray(out)), rows)
        X, Y = X.reshape(xs), Y.reshape(ys)
        if tx:
            X = X.swapaxes(1, 2)
        if ty:
            Y = Y.swapaxes(1, 2)
        cp.matmul(X, Y, out=O.reshape((B, M, N)))
        if _COUNTERS:
            note_library_call("cublas matmul")
        return
    if B * M * N == 0:
        return
    x, y, out = _rows((x, y, out), rows)
    x, y, out = _as_shape(x, xs), _as_shape(y, ys), _as_shape(out, (B, M, N))
    cap = 2 if SIMULATOR else 65535
    grid = (min((N + TILE - 1) // TILE, cap), min((M + TILE - 1) // TILE, cap), min(B, cap))
    kind = out.dtype.kind if out.dtype.kind in "fc" else "i"
    _launch_noted("matmul_tiled", grid, (TILE, TILE),
                  _matmul_kernel(kind)[grid, (TILE, TILE)],
                  (x, y, out, bool(tx), bool(ty)))


@cuda.jit
def _permute_kernel(src, dst, dshape, sstrides, base):
    t = cuda.grid(1)
    for f in range(t, dst.size, cuda.gridsize(1)):
        q = f
        off = base
        for a in range(len(dshape) - 1, -1, -1):
            i = q % dshape[a]
            q = q // dshape[a]
            off += i * sstrides[a]
        dst[f] = src[off]


_permute_kernel = bound(_permute_kernel)


def permute(src, perm, row=None):
    """A C-contiguous device copy of ``src`` (C-contiguous) with its axes permuted; of
    its row ``row`` where that is an int (a host loop's body reading its step's slice of
    a stack: the kernel starts at the row, no slice is made)."""
    sshape = src.shape if row is None else src.shape[1:]
    shape = tuple(sshape[p] for p in perm)
    out = cuda.device_array(shape, dtype=src.dtype)
    if out.size == 0:
        return out
    strides, acc = [0] * len(sshape), 1
    for a in range(len(sshape) - 1, -1, -1):
        strides[a] = acc
        acc *= sshape[a]
    sstr = tuple(np.int64(strides[p]) for p in perm)
    dsh = tuple(np.int64(s) for s in shape)
    base = np.int64(0 if row is None else row * acc)
    _launch_noted("permute", blocks(out.size), TPB, _permute_kernel[blocks(out.size), TPB],
                  (src.reshape(src.size), out.reshape(out.size), dsh, sstr, base))
    return out
