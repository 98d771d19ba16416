"""Data-parallel training on a Dask cluster with ``autodiff.distributed``.

    python examples/dask_data_parallel.py                     # a local cluster, 2 worker processes
    python examples/dask_data_parallel.py --address tcp://scheduler:8786   # a running cluster

Needs the ``distributed`` extra (``pip install "autodiff-numba[distributed]"``); the
progress bar needs the ``progress`` extra (tqdm).

A small tanh network fits a noisy 2-d function. The training set is cut into equal shards
that stay on the workers (``client.scatter``); each Adam step sends the parameters, every
worker computes the jitted ``value_and_grad`` of the mean loss over its shards, and the
results are averaged on the cluster in a fixed tree order: the mean of equal shards' means
is the full-batch mean, so this is full-batch training, checked against one process at the
first step (to 1e-12). Pointing it at a real cluster changes one line:
``Client("tcp://scheduler:8786")`` instead of ``Client(LocalCluster(...))``; every worker
needs autodiff installed, and the shards should be loaded or scattered once, not per step.
"""
import argparse
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff.distributed import data_parallel_value_and_grad
from autodiff.progress import reporter


def init_params(sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [{"w": rng.standard_normal((m, n)) / np.sqrt(m), "b": np.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    for layer in params[:-1]:
        x = anp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss(params, shard):
    """Mean squared error over the shard's rows."""
    x, y = shard
    return anp.mean((predict(params, x)[:, 0] - y) ** 2)


def make_data(n, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n, 2))
    y = np.sin(x[:, 0]) * np.cos(x[:, 1]) + 0.05 * rng.standard_normal(n)
    return x, y


def train(client, n=2048, n_shards=4, steps=150, lr=0.02, progress=True, log=print):
    """Adam on the full batch, gradients computed shard by shard on the workers.
    Returns ``(params, losses)``."""
    x, y = make_data(n)
    bounds = np.linspace(0, n, n_shards + 1).astype(int)
    shards = client.scatter([(x[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])
    value_and_grad = data_parallel_value_and_grad(loss, client)
    params = init_params([2, 32, 32, 1])
    opt = ad.optim.adam(lr)
    state = opt.init(params)
    losses = []
    t0 = time.perf_counter()
    with reporter(progress, total=steps, desc="data-parallel Adam") as bar:
        for step in range(steps):
            value, grad = value_and_grad(params, shards)
            if step == 0:       # the same numbers as one process over the whole data set
                v1, g1 = ad.value_and_grad(loss)(params, (x, y))
                assert abs(value - v1) <= 1e-12 * abs(v1), (value, v1)
                for a, b in zip(ad.tree_util.tree_leaves(grad), ad.tree_util.tree_leaves(g1)):
                    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
                t_first = time.perf_counter() - t0
            updates, state = opt.update(grad, state, params)
            params = ad.optim.apply_updates(params, updates)
            losses.append(float(value))
            bar.update(step, value)
    per_step = (time.perf_counter() - t0 - t_first) / max(steps - 1, 1)
    log(f"{n_shards} shards of {n // n_shards} rows on {len(client.scheduler_info()['workers'])} "
        f"workers: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps "
        f"(first step {t_first:.1f} s with the workers' compiles, then "
        f"{per_step * 1e3:.0f} ms per step)")
    log(f"per worker: {value_and_grad.worker_stats()}")
    return params, losses


def main(address=None, steps=150, progress=True, log=print):
    from dask.distributed import Client, LocalCluster
    if address is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(address)
    try:
        return train(client, steps=steps, progress=progress, log=log)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None,
                        help="a Dask scheduler's address; default: start a local cluster")
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    main(args.address, args.steps)
