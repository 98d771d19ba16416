"""Barriers without busy polling in numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``).

The simulator runs every thread of a block as a Python thread. Its ``BlockManager.run``
(``numba_cuda/numba/cuda/simulator/kernel.py``, numba-cuda 0.30.4) finds out that every
live thread of the block waits in ``syncthreads()`` by polling, in a loop with no wait:
it calls ``is_alive()`` on every thread and reads every thread's flag, over and over,
holding the interpreter lock while the block's threads wait for it. A kernel with a
barrier in a loop (a device loop over the steps of a ``scan``, a shared-memory tree of a
reduction) spends most of its time there: measured in the suite's simulator tests, 80 %
of the main thread's time was that loop.

:func:`install` replaces it, under the simulator only, with a block runner that sleeps
until a thread reports that it has reached a barrier or ended, and releases the barrier
when every live thread is at it, which is the upstream rule. Everything else is the
upstream classes' own: a thread's ``syncthreads_count``/``and``/``or`` call the
barrier below, an exception in one thread aborts the others and is raised with its
thread's indices, as upstream does. ``cuda_math``, the one module that imports
``numba.cuda`` for the backend, calls :func:`install` when the simulator is on; the
simulator's tests (``tests/test_cuda_backend.py``,
``test_simulator_barriers_do_not_poll``) check both the rule and that no thread is
polled.
"""
import contextlib
import sys
import threading
import types

import numpy as np

__all__ = ["install", "installed", "reversed_blocks"]

_UPSTREAM = {}


def _block_thread_class(kernel_mod):
    """A ``BlockThread`` that tells its block when it reaches a barrier or ends."""

    class BlockThread(kernel_mod.BlockThread):
        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            block = self._manager
            with block.cond:
                self.syncthreads_blocked = True
                block.at_barrier.append(self)
                block.cond.notify()
            self.syncthreads_event.wait()
            self.syncthreads_event.clear()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

        def run(self):
            try:
                super().run()
            finally:
                block = self._manager
                with block.cond:
                    block.ended += 1
                    block.cond.notify()

    return BlockThread


def _run(kernel_mod, thread_class):
    def run(self, grid_point, *args):
        """Run one block: start its threads, release each barrier once every live thread
        is at it, return when all have ended (the upstream rule, without polling)."""
        self.cond = threading.Condition()
        self.at_barrier, self.ended = [], 0
        threads = []
        for block_point in np.ndindex(*self._block_dim):
            def target():
                self._f(*args)
            t = thread_class(target, self, grid_point, block_point, self._debug)
            threads.append(t)
        n = len(threads)
        for t in threads:
            t.start()
        with self.cond:
            while True:
                self.cond.wait_for(lambda: self.ended + len(self.at_barrier) == n
                                   or any(t.exception for t in threads))
                failed = next((t for t in threads if t.exception), None)
                if failed is not None:
                    for other in threads:             # as upstream: abort the others
                        other.abort = True
                        other.syncthreads_blocked = False
                        other.syncthreads_event.set()
                    raise failed.exception[0].with_traceback(failed.exception[1])
                if self.ended == n:
                    break
                released, self.at_barrier = self.at_barrier, []
                for t in released:
                    t.syncthreads_blocked = False
                    t.syncthreads_event.set()
        for t in threads:
            t.join()
    return run


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
        f = sys._getframe(1)                  # the call site, as upstream keys it
        caller = (f.f_code.co_filename, f.f_lineno)
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
