"""Compile time against program size: jit of a Python-unrolled loop (issue 31).

    python benchmarks/compile_scaling.py                    # K = 8, 32, 128, 512; autodiff
                                                            # (LLVM tier), Numba only, JAX
    python benchmarks/compile_scaling.py --ks 8,32,128 --libs ad
    python benchmarks/compile_scaling.py --child ad 32 CACHE  # one measurement (internal)

The workload: ``grad`` with respect to the weights of a Python-unrolled explicit Euler
integration of a small tanh network's ODE (state 8, hidden 16): ``K`` steps of
``y = y + h * tanh(tanh(y @ W1ᵀ) @ W2ᵀ)``, then ``sum(y²)``; the traced gradient has about
26 equations per step. Each measurement is a fresh process; the time is the first call of
the jitted gradient with the compile blocking (``jit_background_compile=False``):
trace, transforms, lowering, compile and one run. autodiff's helper kernels are on disk
already (a warm-up process with the same cache compiles them on another program), the
kernel itself is not. JAX: ``jax.jit(jax.grad(...))`` with x64, its first call.

Goals (issue 31): autodiff ≤ 3x JAX at every K, and time(4K) / time(K) ≤ 4.5 from K = 32.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WARM = """
import numpy as np, autodiff as ad, autodiff.numpy as anp
ad.config.update("jit_background_compile", False)
ad.jit(ad.grad(lambda w, y: anp.sum(anp.tanh(anp.tanh(y @ w.T) @ w) ** 2)))(
    np.ones((3, 3)), np.ones(3))
"""


def child(lib, K):
    import numpy as np
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((16, 8)) * 0.3
    w2 = rng.standard_normal((8, 16)) * 0.3
    y0 = np.linspace(-1.0, 1.0, 8)
    if lib in ("ad", "numba"):
        import autodiff as ad
        import autodiff.numpy as xp
        ad.config.update("jit_background_compile", False)
        jit, grad = ad.jit, ad.grad
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as xp
        jit, grad = jax.jit, jax.grad

    def loss(w1, w2, y):
        for _ in range(K):
            y = y + 0.05 * xp.tanh(xp.tanh(y @ w1.T) @ w2.T)
        return xp.sum(y ** 2)
    f = jit(grad(loss, argnums=(0, 1)))
    t = time.perf_counter()
    g = f(w1, w2, y0)
    g = [np.asarray(x) for x in g]
    t = time.perf_counter() - t
    print("RESULT " + json.dumps({"seconds": t, "check": float(sum(x.sum() for x in g))}))


def measure(lib, K, timeout):
    cache = tempfile.mkdtemp(prefix="autodiff-scaling-")
    env = dict(os.environ, AUTODIFF_CACHE_DIR=cache)
    env.pop("AUTODIFF_JIT_LLVM_TIER", None)
    if lib == "numba":                   # autodiff with every program on Numba (the tier off)
        env["AUTODIFF_JIT_LLVM_TIER"] = "0"
    if lib in ("ad", "numba"):
        subprocess.run([sys.executable, "-c", WARM], env=env, check=True, timeout=timeout)
    try:
        out = subprocess.run([sys.executable, __file__, "--child", lib, str(K)], env=env,
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")][0]
    return json.loads(line[7:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--ks", default="8,32,128,512")
    ap.add_argument("--libs", default="ad,numba,jax")
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], int(a.child[1]))
        return
    ks = [int(k) for k in a.ks.split(",")]
    libs = a.libs.split(",")
    res = {}
    for K in ks:
        for lib in libs:
            r = measure(lib, K, a.timeout)
            res[(lib, K)] = r
            print(f"  {lib} K={K}: " + ("timeout" if r is None else f"{r['seconds']:.2f} s"),
                  flush=True)
    print("\n| K | autodiff s | Numba only s | JAX s | autodiff / JAX | Numba only / JAX "
          "| autodiff t(K) / t(K/4) |")
    print("|---|---|---|---|---|---|---|")
    cell = lambda r: "—" if r is None else f"{r['seconds']:.2f}"         # noqa: E731
    div = lambda a, b: f"{a['seconds'] / b['seconds']:.2f}" if a and b else "—"  # noqa: E731
    for K in ks:
        ad_r, nb, jx = res.get(("ad", K)), res.get(("numba", K)), res.get(("jax", K))
        prev = res.get(("ad", K // 4))
        print(f"| {K} | {cell(ad_r)} | {cell(nb)} | {cell(jx)} | {div(ad_r, jx)} | "
              f"{div(nb, jx)} | {div(ad_r, prev)} |")


if __name__ == "__main__":
    main()
