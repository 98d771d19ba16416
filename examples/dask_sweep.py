"""A jitted loss on a Dask cluster: a parameter sweep and a data-parallel gradient.

    python examples/dask_sweep.py                       # a local cluster, 2 worker processes
    python examples/dask_sweep.py --address tcp://scheduler:8786     # the same code on a real one

Needs the ``distributed`` extra (``pip install "autodiff-numba[distributed]"``).

The model is ridge regression on a synthetic data set, so both answers have closed forms
to check against:

1. **sweep**: the validation loss of the ridge solution fitted on a few rows, for each
   regularization strength ``lam`` on a grid, one task per ``lam`` (``client.map``). Each task solves the normal
   equations with the jitted ``ridge_fit`` and scores it with the jitted ``mse``.
2. **data-parallel gradient descent**: the training set is cut into shards that stay on
   the workers (``client.scatter``); each step sends the parameters, every worker returns
   the gradient of its shard's summed loss (``ad.jit(ad.grad(...))``), and the client
   adds them up. The summed gradient is the full-batch gradient, so the iterates are
   those of full-batch gradient descent, checked against the closed-form solution.

Jitted and transformed functions pickle as their recipe: a worker traces again on its
first call and compiles the kernel, or loads it from the disk cache (``ad.config.cache_dir``)
when a process on that machine compiled it before. Nothing here is specific to a local
cluster but its creation.
"""
import argparse
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(d)
    x = rng.standard_normal((n, d))
    y = x @ w_true + 0.3 * rng.standard_normal(n)
    return x, y


@ad.jit
def mse(w, x, y):
    return anp.mean((x @ w - y) ** 2)


def shard_loss(w, x, y, lam, n_total):
    """This shard's share of the full objective: the shards' values add up to it."""
    r = x @ w - y
    return anp.sum(r ** 2) / n_total + lam * anp.sum(w ** 2) * (x.shape[0] / n_total)


shard_grad = ad.jit(ad.grad(shard_loss))


@ad.jit
def ridge_fit(x, y, lam):
    n, d = x.shape
    a = x.T @ x / n + lam * anp.eye(d)
    return anp.linalg.solve(a, x.T @ y / n)


def sweep_task(lam, x_train, y_train, x_val, y_val):
    w = ridge_fit(x_train, y_train, lam)
    return float(mse(w, x_val, y_val))


def sweep(client, lams, x_train, y_train, x_val, y_val):
    """Validation loss per regularization strength, one task each."""
    data = client.scatter([x_train, y_train, x_val, y_val], broadcast=True)
    futures = client.map(sweep_task, lams, *[[d] * len(lams) for d in data])
    return np.array(client.gather(futures))


def data_parallel_gd(client, x, y, lam, steps, lr, n_shards):
    """Full-batch gradient descent with the gradient computed shard by shard on workers."""
    n = x.shape[0]
    bounds = np.linspace(0, n, n_shards + 1).astype(int)
    shards = [(x[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    remote = client.scatter(shards)          # each shard stays on one worker
    w = np.zeros(x.shape[1])
    for i in range(steps):
        grads = client.map(lambda s, w: shard_grad(w, s[0], s[1], lam, n), remote,
                           [w] * n_shards, pure=False)
        g = sum(client.gather(grads))
        if i == 0:       # the shards' gradients add up to the full objective's
            assert np.allclose(g, 2 / n * x.T @ (x @ w - y) + 2 * lam * w, rtol=1e-10)
        w = w - lr * g
    return w


def main(client=None, address=None, n=4000, d=20, steps=60, lr=0.5, n_shards=4, log=print):
    """Run both parts; returns ``(lams, val_losses, w_dp, w_exact)``.

    ``client``: an existing ``dask.distributed.Client``; else one is made for ``address``
    (a scheduler's) or for a new local cluster of 2 worker processes, and closed at the end.
    """
    from dask.distributed import Client, LocalCluster

    own = []
    if client is None:
        if address is None:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None)
            own.append(cluster)
            address = cluster
        client = Client(address)
        own.insert(0, client)
    try:
        x, y = make_data(n, d)
        m = n * 3 // 4
        x_train, y_train, x_val, y_val = x[:m], y[:m], x[m:], y[m:]

        t0 = time.perf_counter()
        # few training rows for the sweep (n_small ~ 2·d), so that regularization matters
        n_small = 2 * d
        x_small, y_small = x_train[:n_small], y_train[:n_small]
        lams = np.logspace(-4, 1, 12)
        # the same sweep in this process, to check the workers' numbers against (run first:
        # the kernels it compiles land in the disk cache, where workers on this machine
        # find them)
        local = np.array([sweep_task(lam, x_small, y_small, x_val, y_val) for lam in lams])
        val = sweep(client, lams, x_small, y_small, x_val, y_val)
        best = lams[int(np.argmin(val))]
        log(f"sweep of {len(lams)} lam values on {n_small} rows: best lam={best:.2g}, "
            f"validation mse={val.min():.4f} (lam={lams[0]:.0e}: {val[0]:.4f}) "
            f"({time.perf_counter() - t0:.1f} s)")
        assert np.allclose(val, local, rtol=1e-10), (val, local)

        t0 = time.perf_counter()
        lam = 1e-2
        w_dp = data_parallel_gd(client, x_train, y_train, lam, steps, lr, n_shards)
        w_exact = np.asarray(ridge_fit(x_train, y_train, lam))
        err = float(np.max(np.abs(w_dp - w_exact)))
        log(f"data-parallel gradient descent, {n_shards} shards, {steps} steps: "
            f"max |w - w_ridge| = {err:.2e} ({time.perf_counter() - t0:.1f} s)")
        assert err < 1e-3, err
        return lams, val, w_dp, w_exact
    finally:
        if own:
            # let background compiles finish before the processes exit: their kernels reach
            # the disk cache for next time, and no compiler thread is cut off at shutdown
            client.run(ad.wait_for_compiles, 120)
            ad.wait_for_compiles(120)
        for c in own:
            c.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=None,
                        help="a Dask scheduler's address; default: start a local cluster")
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    t = time.perf_counter()
    main(address=args.address, n=args.samples, steps=args.steps)
    print(f"total {time.perf_counter() - t:.1f} s")
