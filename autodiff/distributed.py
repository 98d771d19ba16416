"""Data-parallel gradients on a Dask cluster: ``data_parallel_value_and_grad``.

``data_parallel_value_and_grad(fun)`` returns ``f(params, shards, *args, weights=None)``:
each shard's ``value_and_grad(fun)(params, shard, *args)`` runs on a Dask worker and the
results are combined in a fixed binary tree over the shard index (on the workers, or on
the client for parameters of up to 1 MiB: ``reduce_on``) into

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

- ``fun`` travels to each worker **once** per client, inside a worker plugin
  (``client.register_plugin``, which also reaches workers that join later): a worker keeps
  its jitted ``value_and_grad`` and its compiled kernels across calls, and tasks name it
  by a token. ``f.worker_stats()`` shows, per worker, how often it was unpickled, how many
  shards it ran and how many signatures it compiled; ``f.close()`` removes it.
- ``params`` (and ``args``) travel inside the tasks when they are small, else they are
  scattered once per call to every worker; ``shards`` may be
  Dask futures (``client.scatter(shards)``: the data stays on the workers) or data, which
  is scattered on every call.
- With ``jit=True`` a worker compiles each new argument signature before running it
  (blocking, ``jitted.lower(...).compile()``) and kernels are specialized to shapes
  (``dynamic_shapes=False``), so every call runs the same compiled code: no call runs on
  the interpreter tier, none on a shape-generic kernel that a later size would switch to.
  Tasks and the reduction tree are fixed by the shard index, not by the order of
  completion, so the same inputs give the same bits on every rerun (on the same workers'
  hardware).

``client=None`` uses the current default client (``dask.distributed.get_client()``).
Dask is imported on the first call only; without it, an ``ImportError`` names the
``distributed`` extra.
"""
from .tree_util import tree_leaves

__all__ = ["data_parallel_value_and_grad", "NoClientError"]

REDUCTIONS = ("mean", "sum")
SMALL_BYTES = 1 << 20     # params up to this size ride in the tasks and reduce on the client


def _nbytes(tree):
    return sum(getattr(x, "nbytes", 8) for x in tree_leaves(tree))


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


class DataParallelValueAndGrad:
    """What :func:`data_parallel_value_and_grad` returns; call it as
    ``f(params, shards, *args, weights=None)``."""

    def __init__(self, fun, client, argnums, has_aux, reduce, jit, reduce_on):
        self.fun, self.client, self.reduce_on = fun, client, reduce_on
        self.argnums, self.has_aux, self.reduce, self.jit = argnums, has_aux, reduce, jit
        self._installed = {}          # id(client) -> (client, the runner's token there)
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

    def _token(self, client):
        """The runner's token on ``client``'s cluster, installed there on first use."""
        from . import _dask_worker
        entry = self._installed.get(id(client))
        if entry is None or entry[0] is not client:
            runner = _dask_worker.ShardRunner(self.fun, self.argnums, self.has_aux, self.jit)
            client.register_plugin(_dask_worker.RunnerPlugin(runner),
                                   name=f"autodiff-runner-{runner.token}")
            entry = self._installed[id(client)] = (client, runner.token)
        return entry[1]

    def __call__(self, params, shards, *args, weights=None):
        distributed = _dask()
        from . import _dask_worker as w
        client = self._client()
        shards = list(shards)
        if not shards:
            raise ValueError("data_parallel_value_and_grad: shards is empty; pass a list of "
                             "data pytrees (or of futures from client.scatter)")
        if weights is None:
            weights = [1.0] * len(shards)
        weights = [float(x) for x in weights]
        if len(weights) != len(shards):
            raise ValueError(f"data_parallel_value_and_grad: {len(weights)} weights for "
                             f"{len(shards)} shards")
        if self.reduce == "mean" and sum(weights) == 0.0:
            raise ValueError("data_parallel_value_and_grad: the weights sum to 0")
        local = [k for k, s in enumerate(shards) if not isinstance(s, distributed.Future)]
        if local:          # data, not futures: scattered now (scatter once to avoid this)
            for k, fut in zip(local, client.scatter([shards[k] for k in local], hash=False)):
                shards[k] = fut
        token = self._token(client)
        small = _nbytes((params, args)) <= SMALL_BYTES
        if small:          # sent inside the tasks: no extra round trip
            p, a = params, tuple(args)
        else:              # sent once to every worker, not once per task
            p, a = client.scatter([params, tuple(args)], broadcast=True, hash=False)
        level = [client.submit(w.run_shard, token, p, s, a, x, pure=False)
                 for s, x in zip(shards, weights)]
        scale = sum(weights) if self.reduce == "mean" else None
        on_client = self.reduce_on == "client" or (self.reduce_on is None and small)
        if on_client:      # the same tree, the same bits, fewer task hops
            level = client.gather(level)
            add, finish = w.add, w.finish
        else:
            def add(a, b):
                return client.submit(w.add, a, b, pure=False)

            def finish(total, scale, has_aux):
                return client.submit(w.finish, total, scale, has_aux, pure=False).result()
        while len(level) > 1:          # a fixed binary tree over the shard index
            level = [add(level[k], level[k + 1]) if k + 1 < len(level) else level[k]
                     for k in range(0, len(level), 2)]
        return finish(level[0], scale, self.has_aux)

    def worker_stats(self):
        """``{worker address: {"loads", "calls", "compiled"}}`` of this function's runner
        on the current client's workers: ``loads`` counts how often that worker process
        unpickled it (1: it was shipped once), ``calls`` the shards it ran, ``compiled``
        the argument signatures it compiled."""
        from . import _dask_worker
        client = self._client()
        entry = self._installed.get(id(client))
        if entry is None or entry[0] is not client:
            return {}
        stats = client.run(_dask_worker.runner_stats, entry[1])
        return {addr: s for addr, s in stats.items() if s is not None}

    def close(self):
        """Remove this function's runner from the workers of every client it ran on."""
        for client, token in self._installed.values():
            if client.status == "running":
                client.unregister_worker_plugin(f"autodiff-runner-{token}")
        self._installed.clear()


def data_parallel_value_and_grad(fun, client=None, *, argnums=0, has_aux=False,
                                 reduce="mean", jit=True, reduce_on=None):
    """``f(params, shards, *args, weights=None) -> (value, grad)``: ``value_and_grad(fun)``
    of every shard on the Dask workers, combined in a fixed tree order (see the module
    documentation for the formula, the shipping of ``fun`` and bit-identical reruns).

    ``fun(params, shard, *args)`` returns a scalar; ``argnums`` and ``has_aux`` are
    ``value_and_grad``'s (with ``has_aux`` the result is ``((value, [aux per shard]),
    grad)``, the auxes in shard order); ``reduce`` is ``"mean"`` (the weighted mean of the
    shards' values, weights 1 by default) or ``"sum"``; ``jit=False`` runs the gradient
    eagerly on the workers. ``client=None`` takes the default Dask client at each call.
    ``reduce_on``: ``"workers"`` (the tree's additions run as tasks: the client receives
    one gradient), ``"client"`` (the shards' results are gathered and added here, in the
    same tree: fewer round trips) or ``None``: the client when ``params`` and ``args``
    take at most 1 MiB (they then also travel inside the tasks), else the workers. Both
    give the same bits.
    """
    if reduce_on not in (None, "workers", "client"):
        raise ValueError(f"data_parallel_value_and_grad: reduce_on must be None, 'workers' "
                         f"or 'client', got {reduce_on!r}")
    if reduce not in REDUCTIONS:
        raise ValueError(f"data_parallel_value_and_grad: reduce must be one of {REDUCTIONS}, "
                         f"got {reduce!r}")
    if not callable(fun):
        raise TypeError(f"data_parallel_value_and_grad: fun must be callable, got "
                        f"{type(fun).__name__}")
    return DataParallelValueAndGrad(fun, client, argnums, has_aux, reduce, jit, reduce_on)
