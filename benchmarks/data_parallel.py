"""autodiff.distributed and autodiff.progress: what they cost, side by side in one run.

    python benchmarks/data_parallel.py

1. One data-parallel gradient of a small MLP (4 shards x 512 rows, 2 local worker
   processes), per call, medians of interleaved repeats:
   - `client.map`: the pattern docs/distributed.md showed before (a closure holding the
     jitted gradient is sent with every call; the client adds the shards' gradients),
   - `data_parallel_value_and_grad` (the function installed once per worker; value and
     gradient added in a fixed tree, on the client: the default for small parameters),
   - the same with `reduce_on="workers"` (the tree's additions as tasks on the cluster),
   - one process, the jitted `value_and_grad` over all rows.
2. A jitted `scan` of 100,000 cheap steps: undecorated, `scan_tqdm` (throttled: the kernel
   calls the host 21 times) and a host call every step (`ad.debug.callback`).
"""
import io
import statistics
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff.distributed import data_parallel_value_and_grad
from autodiff.progress import scan_tqdm

REPEATS = 15


def loss(params, shard):
    x, y = shard
    h = anp.tanh(x @ params["w1"] + params["b1"])
    return anp.mean((h @ params["w2"] - y) ** 2)


def median_ms(fn, times):
    t = time.perf_counter()
    fn()
    times.append((time.perf_counter() - t) * 1e3)


def data_parallel(log):
    from dask.distributed import Client, LocalCluster
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((8, 32)) / 3, "b1": np.zeros(32),
              "w2": rng.standard_normal(32) / 6}
    x, y = rng.standard_normal((2048, 8)), rng.standard_normal(2048)
    data = [(x[k:k + 512], y[k:k + 512]) for k in range(0, 2048, 512)]
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=None)
    client = Client(cluster)
    try:
        shards = client.scatter(data)
        shard_grad = ad.jit(ad.value_and_grad(loss))

        def by_map():
            parts = client.gather(client.map(lambda s, p: shard_grad(p, s), shards,
                                             [params] * 4, pure=False))
            return (sum(v for v, _ in parts) / 4,
                    {k: sum(g[k] for _, g in parts) / 4 for k in params})

        dp = data_parallel_value_and_grad(loss, client)
        dp_workers = data_parallel_value_and_grad(loss, client, reduce_on="workers")
        local = ad.jit(ad.value_and_grad(loss))
        sides = {"client.map, function sent per call": by_map,
                 "data_parallel_value_and_grad": lambda: dp(params, shards),
                 "... reduce_on='workers'": lambda: dp_workers(params, shards),
                 "one process, jitted, all rows": lambda: local(params, (x, y))}
        for fn in sides.values():            # compiles, worker start-up
            for _ in range(3):
                fn()
        times = {name: [] for name in sides}
        for _ in range(REPEATS):
            for name, fn in sides.items():
                median_ms(fn, times[name])
        for name, t in times.items():
            log(f"  {name:40s} {statistics.median(t):8.2f} ms per gradient")
        log(f"  runner per worker: {dp.worker_stats()}")
    finally:
        client.close()
        cluster.close()


def progress(log):
    n = 100_000

    def step(c, i):
        return c * 0.999 + 1.0, None

    def step_every(c, i):
        ad.debug.callback(lambda i: None, i)
        return c * 0.999 + 1.0, None

    bar = scan_tqdm(n, file=io.StringIO())(step)
    sides = {"undecorated": step, "scan_tqdm (21 host calls)": bar,
             "host call every step": step_every}
    fns = {name: ad.jit(lambda c, b=b: ad.lax.scan(b, c, np.arange(n))[0])
           for name, b in sides.items()}
    for f in fns.values():
        f(0.0)
        f(0.0)
    times = {name: [] for name in fns}
    for _ in range(REPEATS):
        for name, f in fns.items():
            median_ms(lambda: f(0.0), times[name])
    base = statistics.median(times["undecorated"])
    for name, t in times.items():
        m = statistics.median(t)
        log(f"  {name:40s} {m:8.2f} ms  ({m / base:5.1f}x)")


if __name__ == "__main__":
    try:
        from threadpoolctl import threadpool_info
        print("BLAS:", [(i["internal_api"], i.get("architecture"), i["num_threads"])
                        for i in threadpool_info()])
    except ImportError:
        pass
    print("1. data-parallel gradient, 4 shards x 512 rows, MLP 8-32-1, 2 worker processes")
    data_parallel(print)
    print("2. jitted scan, 100,000 steps of c * 0.999 + 1")
    progress(print)
