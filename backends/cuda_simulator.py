"""numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``) made faithful enough to test on.

The simulator runs every thread of a block as a Python thread. Its ``BlockManager.run``
(``numba_cuda/numba/cuda/simulator/kernel.py``, numba-cuda 0.30.4) finds out that every
live thread of the block waits in ``syncthreads()`` by polling, in a loop with no wait:
it calls ``is_alive()`` on every thread and reads every thread's flag, over and over,
holding the interpreter lock while the block's threads wait for it. A kernel with a
barrier in a loop (a device loop over the steps of a ``scan``, a shared-memory tree of a
reduction) spends most of its time there: measured in the suite's simulator tests, 80 %
of the main thread's time was that loop.

:func:`install` replaces it, under the simulator only, with a barrier that opens itself:
the last live thread to reach it (or to end) releases the others, which is the upstream
rule without anyone polling. It also makes a block's shared arrays under a lock, one set
per block (upstream's allocation races; :func:`_shared_array`). Everything else is the
upstream classes' own: a thread's ``syncthreads_count``/``and``/``or`` call the
barrier below, an exception in one thread aborts the others and is raised with its
thread's indices, as upstream does. ``cuda_math``, the one module that imports
``numba.cuda`` for the backend, calls :func:`install` when the simulator is on.
For tests, :func:`reversed_blocks` and :func:`concurrent_blocks` run a launch's blocks
last first or all at once (upstream: one at a time, in index order). The simulator's
tests (``tests/test_cuda_backend.py``: ``test_simulator_barriers_do_not_poll``,
``test_simulator_shared_arrays_are_one_per_block``,
``test_kernels_agree_whatever_the_scheduling``) check each.
"""
import contextlib
import sys
import threading
import types

import numpy as np

__all__ = ["install", "installed", "reversed_blocks", "concurrent_blocks"]

_UPSTREAM = {}


def _release(block):
    """Open the block's barrier when every live thread is at it (held: ``block.cond``);
    where a thread failed, abort the others instead, as upstream does."""
    if block.failed is not None:
        for t in block.threads:
            t.abort = True
            t.syncthreads_event.set()
    elif block.at_barrier and len(block.at_barrier) + block.ended == len(block.threads):
        released, block.at_barrier = block.at_barrier, []
        for t in released:
            t.syncthreads_blocked = False
            t.syncthreads_event.set()


def _block_thread_class(kernel_mod):
    """A ``BlockThread`` whose barrier opens itself: the last thread to reach it (or to
    end) releases the others, so no thread polls and blocks run without the main
    thread's help (``concurrent_blocks``)."""

    class BlockThread(kernel_mod.BlockThread):
        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            block = self._manager
            with block.cond:
                self.syncthreads_blocked = True
                block.at_barrier.append(self)
                _release(block)
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

        def run(self):
            try:
                # a GPU's arithmetic makes inf and NaN without a word, as Numba's CPU
                # kernels do; the simulator's numpy scalars warned (per thread, per op)
                with np.errstate(all="ignore"):
                    super().run()         # (upstream's keeps an exception on the thread)
            finally:
                block = self._manager
                with block.cond:
                    block.ended += 1
                    if self.exception is not None and block.failed is None:
                        block.failed = self
                    _release(block)
                    block.cond.notify_all()

    return BlockThread


#: the launch's blocks started and not yet waited for (concurrent_blocks)
_PENDING = []
_CONCURRENT = []


def _wait(block):
    """Until the block's threads have ended, or one failed (then its error is raised,
    the others aborted, as upstream does, without waiting for them)."""
    with block.cond:
        block.cond.wait_for(lambda: block.ended == len(block.threads)
                            or block.failed is not None)
    if block.failed is not None:
        e = block.failed.exception
        raise e[0].with_traceback(e[1])


def _run(kernel_mod, thread_class):
    def run(self, grid_point, *args):
        """Run one block: start its threads and return when all have ended (a barrier
        opens when every live thread is at it: the upstream rule, without polling).
        Under ``concurrent_blocks`` a launch's blocks all start before any is waited
        for."""
        self.cond = threading.Condition()
        self.at_barrier, self.ended, self.failed = [], 0, None
        self.threads = []
        for block_point in np.ndindex(*self._block_dim):
            def target():
                self._f(*args)
            self.threads.append(thread_class(target, self, grid_point, block_point,
                                             self._debug))
        for t in self.threads:
            t.start()
        if not _CONCURRENT:
            _wait(self)
            return
        _PENDING.append(self)
        if len(_PENDING) < int(np.prod(self._grid_dim)):
            return                        # the launch's other blocks start first
        blocks = _PENDING[:]
        del _PENDING[:]
        for b in blocks:
            _wait(b)                      # a failure, with its thread's indices
    return run


@contextlib.contextmanager
def concurrent_blocks():
    """Within the block, the simulator runs a launch's blocks at once, as a GPU does
    (upstream runs them one at a time): a kernel whose blocks race (a last-block ticket
    taken before the block's result is written, an update that needs an atomic) can
    fail here. A block's shared arrays are its own (``_shared_array``). For tests."""
    _CONCURRENT.append(True)
    try:
        yield
    finally:
        _CONCURRENT.pop()


def _shared_array(kernelapi, upstream):
    """``cuda.shared.array`` made once per block and call site, under a lock.

    Upstream (``FakeCUDAShared.array``, numba-cuda 0.30.4) looks the call site up in a
    dict and, when it is missing, makes the array and stores it: two threads of a block
    switched between the lookup and the store each make an array of their own, and the
    block's "shared" memory is two arrays (a reduction then reads values that were never
    written). With the interpreter's default switch interval (5 ms) that is rare; with a
    short one (``sys.setswitchinterval(1e-6)``, which interleaves threads finely enough
    to show a missing barrier) it is frequent. The lock makes the lookup and the store
    one step (``test_simulator_shared_arrays_are_one_per_block``)."""
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:        # upstream's errors and dynamic
            return upstream(self, shape, dtype, alignment)   # shared memory (no dict)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        f = sys._getframe(1)                  # the call site, as upstream keys it, and
        caller = (f.f_code.co_filename, f.f_lineno,   # the block: upstream shares one
                  tuple(threading.current_thread().blockIdx))  # dict by all blocks
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res
    return array


def install():
    """Use the polling-free block runner and the locked shared-array allocation
    (idempotent; only under the simulator)."""
    from numba.cuda.simulator import kernel as kernel_mod
    from numba.cuda.simulator import kernelapi
    if _UPSTREAM:
        return
    _UPSTREAM["run"] = kernel_mod.BlockManager.run
    kernel_mod.BlockManager.run = _run(kernel_mod, _block_thread_class(kernel_mod))
    _UPSTREAM["shared"] = kernelapi.FakeCUDAShared.array
    kernelapi.FakeCUDAShared.array = _shared_array(kernelapi, kernelapi.FakeCUDAShared.array)


@contextlib.contextmanager
def reversed_blocks():
    """Within the block, the simulator runs a launch's blocks last first (upstream runs
    them one at a time in index order; a GPU, in any order and at once): a kernel that
    depends on its blocks' order (a block reading what a lower-numbered one wrote,
    without the last-block ticket) fails here. For tests."""
    from numba.cuda.simulator import kernel as kernel_mod

    class _Numpy(types.ModuleType):
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def ndindex(*shape):          # the grid's loop (the block runner has its own)
            return reversed(list(np.ndindex(*shape)))
    upstream = kernel_mod.np
    kernel_mod.np = _Numpy("numpy")
    try:
        yield
    finally:
        kernel_mod.np = upstream


def installed():
    """Whether :func:`install` replaced the simulator's block runner in this process."""
    return bool(_UPSTREAM)
