"""The worker side of :mod:`autodiff.distributed` (imported only where Dask is installed).

A ``ShardRunner`` holds a user's ``value_and_grad`` (jitted on the worker) and reaches every
worker once, inside a ``RunnerPlugin`` (``client.register_plugin``): Dask runs a plugin's
``setup`` on each worker, those that join later included, and never moves or drops it, as
its memory manager may do with a scattered object's replicas. Tasks name the runner by its
token (``run_shard``), so no task carries the function.
"""
import threading
import uuid

import numpy as np
from distributed.diagnostics.plugin import WorkerPlugin

from .tree_util import tree_flatten, tree_map
from .api import value_and_grad
from .jit import jit

installed = {}        # token -> ShardRunner, in this process
loads = {}            # token -> how often this process unpickled that runner
_loads_lock = threading.Lock()


class ShardRunner:
    """``fun``'s ``value_and_grad`` and the argument signatures it has compiled. Pickles as
    its recipe (``fun`` and the options), never its caches."""

    def __init__(self, fun, argnums, has_aux, jit):
        self.fun, self.argnums, self.has_aux, self.jit = fun, argnums, has_aux, jit
        self.token = uuid.uuid4().hex
        self._build()

    def _build(self):
        vg = value_and_grad(self.fun, argnums=self.argnums, has_aux=self.has_aux)
        self.vg = jit(vg, dynamic_shapes=False) if self.jit else vg
        self.compiled = set()
        self.calls = 0
        self.lock = threading.Lock()

    def __getstate__(self):
        return (self.fun, self.argnums, self.has_aux, self.jit, self.token)

    def __setstate__(self, state):
        self.fun, self.argnums, self.has_aux, self.jit, self.token = state
        self._build()
        with _loads_lock:
            loads[self.token] = loads.get(self.token, 0) + 1

    def __call__(self, params, shard, args, weight):
        call_args = (params, shard) + tuple(args)
        if self.jit:
            # compile a new signature before running it, so that every call runs the same
            # kernel (no first call on the interpreter tier: the same bits on every rerun)
            leaves, tree = tree_flatten(call_args)
            key = (tree, tuple((np.shape(l), np.asarray(l).dtype.str) for l in leaves))
            with self.lock:
                if key not in self.compiled:
                    self.vg.lower(*call_args).compile()
                    self.compiled.add(key)
        with self.lock:
            self.calls += 1
        out, grad = self.vg(*call_args)
        value, aux = out if self.has_aux else (out, None)
        if weight != 1.0:
            value = np.asarray(value) * weight
            grad = tree_map(lambda g: np.asarray(g) * weight, grad)
        return value, grad, [aux] if self.has_aux else []

    def stats(self):
        return {"loads": loads.get(self.token, 0), "calls": self.calls,
                "compiled": len(self.compiled)}


class RunnerPlugin(WorkerPlugin):
    """Installs a :class:`ShardRunner` in each worker process."""

    idempotent = True

    def __init__(self, runner):
        self.runner = runner

    def setup(self, worker):
        installed[self.runner.token] = self.runner

    def teardown(self, worker):
        installed.pop(self.runner.token, None)


def run_shard(token, params, shard, args, weight):
    """A task: the installed runner ``token`` on one shard."""
    runner = installed.get(token)
    if runner is None:
        raise RuntimeError("autodiff.distributed: this worker has no runner for this "
                           "function (was it closed with f.close()?)")
    return runner(params, shard, args, weight)


def add(a, b):
    """One node of the reduction tree: values and gradients add, auxes concatenate."""
    return (np.add(a[0], b[0]), tree_map(np.add, a[1], b[1]), a[2] + b[2])


def finish(total, scale, has_aux):
    """The tree's root: divided by the weights' sum for a mean."""
    value, grad, aux = total
    if scale is not None:
        value = np.asarray(value) / scale
        grad = tree_map(lambda g: np.asarray(g) / scale, grad)
    return ((value, aux), grad) if has_aux else (value, grad)


def runner_stats(token):
    """``client.run`` target: the installed runner's counts in this worker, or None."""
    runner = installed.get(token)
    return None if runner is None else runner.stats()
