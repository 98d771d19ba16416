"""Data-parallel gradients on a Dask cluster: ``data_parallel_value_and_grad``.

``data_parallel_value_and_grad(fun)`` returns ``f(params, shards, *args, weights=None)``:
each shard's ``value_and_grad(fun)(params, shard, *args)`` runs on a Dask worker and the
results are combined on the workers, in a fixed binary tree over the shard index, into

    value = Σ_k w_k · fun(params, shard_k) / Σ_k w_k       (reduce="mean", the default)
    value = Σ_k w_k · fun(params, shard_k)                 (reduce="sum")

and the same for the gradient, with ``w_k = 1`` unless ``weights`` are given. So with the
default, the result is the **mean of the per-shard values**: when ``fun`` is a mean over
the examples of its shard and the shards are of equal size, it is the mean over the
concatenated data, equal to one process's ``value_and_grad`` over all of it to rounding
(1e-12 relative); for shards of unequal size pass ``weights=[len(s) for s in shards]``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from dask.distributed import Client, LocalCluster
>>> from autodiff.distributed import data_parallel_value_and_grad
>>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
>>> def loss(w, shard):
...     x, y = shard
...     return anp.mean((x @ w - y) ** 2)
>>> x, y = np.arange(12.0).reshape(6, 2) / 10, np.arange(6.0)
>>> shards = client.scatter([(x[:3], y[:3]), (x[3:], y[3:])])    # stay on the workers
>>> value_and_grad = data_parallel_value_and_grad(loss, jit=False)
>>> value, grad = value_and_grad(np.ones(2), shards)
>>> v1, g1 = ad.value_and_grad(loss)(np.ones(2), (x, y))          # one process, all rows
>>> bool(np.isclose(value, v1, rtol=1e-12)), bool(np.allclose(grad, g1, rtol=1e-12))
(True, True)
>>> client.close()

What a call does, and why reruns are bit-identical:

- ``fun`` travels to each worker **once** per client (``client.scatter(...,
  broadcast=True)`` of a small runner object): a worker keeps its jitted
  ``value_and_grad`` and its compiled kernels across calls. ``f.worker_stats()`` shows,
  per worker, how often the runner was unpickled, how many calls it served and how many
  signatures it compiled.
- ``params`` (and ``args``) are scattered once per call to every worker; ``shards`` may be
  Dask futures (``client.scatter(shards)``: the data stays on the workers) or data, which
  is scattered on every call.
- With ``jit=True`` a worker compiles each new argument signature before running it
  (blocking, ``jitted.lower(...).compile()``) and kernels are specialized to shapes
  (``dynamic_shapes=False``), so every call runs the same compiled code: no call runs on
  the interpreter tier, none on a shape-generic kernel that a later size would switch to.
  Tasks and the reduction tree are deterministic in the shard index, not in the order of
  completion, so the same inputs give the same bits on every rerun (on the same workers'
  hardware).

``client=None`` uses the current default client (``dask.distributed.get_client()``).
Dask is imported on the first call only; without it, an ``ImportError`` names the
``distributed`` extra.
"""
import threading
import uuid

import numpy as np

from .tree_util import tree_map

__all__ = ["data_parallel_value_and_grad", "NoClientError"]

REDUCTIONS = ("mean", "sum")


class NoClientError(ValueError):
    """``client=None`` and no Dask client exists in this process."""


def _dask():
    try:
        import distributed
    except ImportError as e:
        raise ImportError(
            "autodiff.distributed runs on Dask, which is not installed: install the "
            "`distributed` extra (pip install \"autodiff-numba[distributed]\", or "
            "pip install \"dask[distributed]>=2024.1\")") from e
    return distributed


# runner token -> how often this process unpickled that runner (worker_stats reads it)
_runner_loads = {}
_loads_lock = threading.Lock()


class _ShardRunner:
    """What a worker keeps: ``fun``'s ``value_and_grad`` (jitted once, on the worker) and
    the argument signatures it has compiled. Pickles as its recipe, never its caches."""

    def __init__(self, fun, argnums, has_aux, jit):
        self.fun, self.argnums, self.has_aux, self.jit = fun, argnums, has_aux, jit
        self.token = uuid.uuid4().hex
        self._build()

    def _build(self):
        from .api import value_and_grad
        from .jit import jit
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
            _runner_loads[self.token] = _runner_loads.get(self.token, 0) + 1

    def __call__(self, params, shard, args, weight):
        call_args = (params, shard) + tuple(args)
        if self.jit:
            from .tree_util import tree_flatten
            leaves, tree = tree_flatten(call_args)
            key = (tree, tuple((np.shape(l), np.asarray(l).dtype.str) for l in leaves))
            with self.lock:
                if key not in self.compiled:
                    self.vg.lower(*call_args).compile()      # every call runs the kernel
                    self.compiled.add(key)
        self.calls += 1
        out, grad = self.vg(*call_args)
        value, aux = out if self.has_aux else (out, None)
        if weight != 1.0:
            value = np.asarray(value) * weight
            grad = tree_map(lambda g: np.asarray(g) * weight, grad)
        return value, grad, [aux] if self.has_aux else []

    def stats(self):
        return {"loads": _runner_loads.get(self.token, 0), "calls": self.calls,
                "compiled": len(self.compiled)}


def _add(a, b):
    """One node of the reduction tree: values and gradients add, auxes concatenate."""
    return (np.add(a[0], b[0]), tree_map(np.add, a[1], b[1]), a[2] + b[2])


def _finish(total, scale, has_aux):
    value, grad, aux = total
    if scale is not None:
        value = np.asarray(value) / scale
        grad = tree_map(lambda g: np.asarray(g) / scale, grad)
    return ((value, aux), grad) if has_aux else (value, grad)


def _runner_stats(key, dask_worker=None):
    runner = dask_worker.data.get(key) if dask_worker is not None else None
    return None if runner is None else runner.stats()


class DataParallelValueAndGrad:
    """What :func:`data_parallel_value_and_grad` returns; call it as
    ``f(params, shards, *args, weights=None)``."""

    def __init__(self, fun, client, argnums, has_aux, reduce, jit):
        self.fun, self.client = fun, client
        self.argnums, self.has_aux, self.reduce, self.jit = argnums, has_aux, reduce, jit
        self._runners = {}            # client id -> the runner's future on that cluster
        self.__name__ = f"data_parallel_value_and_grad({getattr(fun, '__name__', 'fun')})"

    def _client(self):
        distributed = _dask()
        if self.client is not None:
            return self.client
        try:
            return distributed.get_client()
        except ValueError:
            raise NoClientError(
                "data_parallel_value_and_grad: no Dask client: pass client=... or make one "
                "first (from dask.distributed import Client; client = Client() for a local "
                "cluster, Client(\"tcp://scheduler:8786\") for a running one)") from None

    def _runner(self, client):
        fut = self._runners.get(id(client))
        if fut is None or fut.status != "finished":
            runner = _ShardRunner(self.fun, self.argnums, self.has_aux, self.jit)
            fut = client.scatter([runner], broadcast=True, hash=False)[0]
            self._runners[id(client)] = fut
        return fut

    def __call__(self, params, shards, *args, weights=None):
        distributed = _dask()
        client = self._client()
        shards = list(shards)
        if not shards:
            raise ValueError("data_parallel_value_and_grad: shards is empty; pass a list of "
                             "data pytrees (or of futures from client.scatter)")
        if weights is None:
            weights = [1.0] * len(shards)
        weights = [float(w) for w in weights]
        if len(weights) != len(shards):
            raise ValueError(f"data_parallel_value_and_grad: {len(weights)} weights for "
                             f"{len(shards)} shards")
        if self.reduce == "mean" and sum(weights) == 0.0:
            raise ValueError("data_parallel_value_and_grad: the weights sum to 0")
        local = [k for k, s in enumerate(shards) if not isinstance(s, distributed.Future)]
        if local:          # data, not futures: scattered now (scatter once to avoid this)
            for k, fut in zip(local, client.scatter([shards[k] for k in local], hash=False)):
                shards[k] = fut
        runner = self._runner(client)
        p, a = client.scatter([params, tuple(args)], broadcast=True, hash=False)
        level = [client.submit(_ShardRunner.__call__, runner, p, s, a, w, pure=False)
                 for s, w in zip(shards, weights)]
        while len(level) > 1:          # a fixed binary tree over the shard index
            level = [client.submit(_add, level[k], level[k + 1], pure=False)
                     if k + 1 < len(level) else level[k] for k in range(0, len(level), 2)]
        scale = sum(weights) if self.reduce == "mean" else None
        return client.submit(_finish, level[0], scale, self.has_aux, pure=False).result()

    def worker_stats(self):
        """``{worker address: {"loads", "calls", "compiled"}}`` of this function's runner
        on each worker holding it: ``loads`` counts how often that process unpickled it."""
        client = self._client()
        fut = self._runners.get(id(client))
        if fut is None:
            return {}
        stats = client.run(_runner_stats, fut.key)
        return {w: s for w, s in stats.items() if s is not None}


def data_parallel_value_and_grad(fun, client=None, *, argnums=0, has_aux=False,
                                 reduce="mean", jit=True):
    """``f(params, shards, *args, weights=None) -> (value, grad)``: ``value_and_grad(fun)``
    of every shard on the Dask workers, combined in a fixed tree order (see the module
    documentation for the formula, the shipping of ``fun`` and bit-identical reruns).

    ``fun(params, shard, *args)`` returns a scalar; ``argnums`` and ``has_aux`` are
    ``value_and_grad``'s (with ``has_aux`` the result is ``((value, [aux per shard]),
    grad)``, the auxes in shard order); ``reduce`` is ``"mean"`` (the weighted mean of the
    shards' values, weights 1 by default) or ``"sum"``; ``jit=False`` runs the gradient
    eagerly on the workers. ``client=None`` takes the default Dask client at each call.
    """
    if reduce not in REDUCTIONS:
        raise ValueError(f"data_parallel_value_and_grad: reduce must be one of {REDUCTIONS}, "
                         f"got {reduce!r}")
    if not callable(fun):
        raise TypeError(f"data_parallel_value_and_grad: fun must be callable, got "
                        f"{type(fun).__name__}")
    return DataParallelValueAndGrad(fun, client, argnums, has_aux, reduce, jit)
