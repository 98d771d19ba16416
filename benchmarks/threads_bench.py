"""The jitted MLP value_and_grad (784-512-10, batch 256) under the GEMM pool's policies and
JAX, interleaved, on the machine as it is and with one core busy, in one run (issue 34).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/benchvenv/bin/python benchmarks/threads_bench.py [rounds]

Columns: ``adaptive`` (the default: each large product split or on the calling thread,
whichever was lately faster), ``split`` (every large product split: the policy before
issue 34), ``1 thread`` (``jit_blas_threads = 1``), JAX (``jax.jit``, x64). Each round
times every candidate for 15 calls, back to back; medians of per-round times and of
per-round ratios to JAX. "busy": ``python -c "while True: pass"`` in the background.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("AUTODIFF_CACHE_DIR", tempfile.mkdtemp(prefix="autodiff-bench-"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import autodiff as ad                                   # noqa: E402
from autodiff.backends import blas_pool                 # noqa: E402
from jit_bench import deep_loss, mlp_data               # noqa: E402

ad.config.update("jit_background_compile", False)
import jax                                              # noqa: E402
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp                                 # noqa: E402


def main(rounds):
    params, x, y = mlp_data(256)
    f = ad.jit(ad.value_and_grad(deep_loss))
    f(params, x, y)
    g = jax.jit(jax.value_and_grad(lambda p, x, y: deep_loss(p, x, y, jnp)))
    pj = jax.tree_util.tree_map(jnp.asarray, params)
    xj, yj = jnp.asarray(x), jnp.asarray(y)
    np.testing.assert_allclose(float(g(pj, xj, yj)[0]), float(f(params, x, y)[0]), rtol=1e-10)
    try:
        from threadpoolctl import threadpool_info
        kern = [(i["internal_api"], i.get("architecture")) for i in threadpool_info()]
    except ImportError:
        kern = blas_pool.openblas_core()
    print(f"BLAS kernels: {kern}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')}; "
          f"{blas_pool.BLAS}; auto = {blas_pool.resolve_threads('auto')} threads", flush=True)
    setting = {"adaptive": dict(value="auto"), "split": dict(value="auto", adaptive=False),
               "1 thread": dict(value=1)}
    cands = {**{k: (lambda: f(params, x, y)) for k in setting},
             "JAX": lambda: jax.block_until_ready(g(pj, xj, yj))}

    def run(cond):
        t = {k: [] for k in cands}
        for _ in range(rounds):
            for k, fn in cands.items():
                if k in setting:
                    blas_pool.set_threads(**setting[k])
                fn()
                fn()
                t0 = time.perf_counter()
                for _ in range(15):
                    fn()
                t[k].append((time.perf_counter() - t0) / 15)
        blas_pool.set_threads(ad.config.jit_blas_threads)
        print(f"| {cond} (load {os.getloadavg()[0]:.1f}) | " + " | ".join(
            f"{statistics.median(v) * 1e3:.2f} ms ({statistics.median([a / b for a, b in zip(v, t['JAX'])]):.2f}x)"
            for k, v in t.items()) + " |", flush=True)

    print("| condition | " + " | ".join(cands) + " |\n|---|" + "---|" * len(cands))
    run("as is")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.3)
    try:
        run("one core busy")
    finally:
        spinner.kill()
        spinner.wait()
    print("pool:", blas_pool.stats())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 11)
