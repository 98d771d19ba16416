"""Cold start: the first call of a jitted function in a fresh process with an empty cache.

    python benchmarks/cold_start.py                 # every workload, both modes, and JAX
    python benchmarks/cold_start.py --only euler2,grad_f --modes blocking
    python benchmarks/cold_start.py --child WORKLOAD MODE   # one measurement (internal)

Each measurement runs in its own process with its own empty ``AUTODIFF_CACHE_DIR``; the
time is trace + transform + lower + compile + first run of the jitted function, after
``import`` (imports are reported separately). Modes:

  default    ``jit_background_compile=True`` (the default): the first call runs the
             traced program on the interpreter while the kernel compiles in the background
  blocking   ``jit_background_compile=False``: the first call waits for the compiled kernel
  numba      blocking with ``jit_llvm_tier=False``: every kernel compiled by Numba (the
             compiler before the direct LLVM tier; its helper kernels compile too)
  jax        ``jax.jit`` with ``jax_enable_x64`` (needs the ``bench`` extra)

The workloads are the rows of the jit-latency issue. ``euler<k>`` is a Python-unrolled
explicit Euler integration of Lotka-Volterra with a 2-vector state, k steps, whose
compile time must grow linearly with k.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

WORKLOADS = ["f", "grad_f", "mlp", "rk4_scan", "euler1", "euler2", "euler4", "euler8",
             "euler16", "remat16"]


def _build(name, lib):
    """``(jitted function, args)`` of a workload for lib 'ad' or 'jax'."""
    import numpy as np
    if lib == "ad":
        import autodiff as ad
        import autodiff.numpy as xp
        jit, grad, vag, lax = ad.jit, ad.grad, ad.value_and_grad, ad.lax
        checkpoint = ad.checkpoint
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as xp
        jit, grad, vag, lax = jax.jit, jax.grad, jax.value_and_grad, jax.lax
        checkpoint = jax.checkpoint
    rng = np.random.default_rng(0)

    def f(x):
        return xp.sum(xp.tanh(x) * xp.sin(x) + xp.exp(-x * x))

    if name == "f":
        return jit(f), (np.linspace(-1, 1, 1000),)
    if name == "grad_f":
        return jit(grad(f)), (np.linspace(-1, 1, 1000),)
    if name == "mlp":
        def loss(params, x, y):
            (w1, b1), (w2, b2) = params
            h = xp.tanh(x @ w1 + b1)
            logits = h @ w2 + b2
            lse = xp.log(xp.sum(xp.exp(logits - xp.max(logits, axis=1, keepdims=True)),
                                axis=1, keepdims=True)) + xp.max(logits, axis=1, keepdims=True)
            return -xp.mean(xp.sum(y * (logits - lse), axis=1))
        params = [(rng.normal(size=(784, 512)) * 0.05, np.zeros(512)),
                  (rng.normal(size=(512, 10)) * 0.05, np.zeros(10))]
        x = rng.normal(size=(256, 784))
        y = np.eye(10)[rng.integers(0, 10, 256)]
        return jit(vag(loss)), (params, x, y)
    if name == "rk4_scan":
        def final_energy(p, y0):
            k, c = p[0], p[1]
            dt = 0.01

            def rhs(y):
                return xp.stack([y[1], -k * y[0] - c * y[1]])

            def step(y, _):
                k1 = rhs(y)
                k2 = rhs(y + dt / 2 * k1)
                k3 = rhs(y + dt / 2 * k2)
                k4 = rhs(y + dt * k3)
                y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                return y, y[0]
            y, xs = lax.scan(step, y0, None, length=1000)
            return y[0] ** 2 + y[1] ** 2 + 0.01 * xp.sum(xs ** 2)
        return jit(grad(final_energy)), (np.array([4.0, 0.4]), np.array([1.0, 0.0]))
    if name.startswith("euler"):
        steps = int(name[len("euler"):])

        def lv(theta, u0):
            a, b, c, d = theta[0], theta[1], theta[2], theta[3]
            u = u0
            h = 0.05
            for _ in range(steps):
                du = xp.stack([a * u[0] - b * u[0] * u[1], c * u[0] * u[1] - d * u[1]])
                u = u + h * du
            return xp.sum(u ** 2)
        return jit(grad(lv)), (np.array([1.0, 0.1, 0.075, 1.5]), np.array([10.0, 5.0]))
    if name == "remat16":
        ws = [rng.normal(size=(64, 64)) / 8 for _ in range(16)]

        def net(ws, x):
            for w in ws:
                x = checkpoint(lambda x, w=w: xp.tanh(x @ w))(x)
            return xp.sum(x ** 2)
        return jit(grad(net)), (ws, rng.normal(size=(32, 64)))
    raise KeyError(name)


def child(name, mode):
    t0 = time.perf_counter()
    lib = "jax" if mode == "jax" else "ad"
    if lib == "ad":
        import autodiff as ad
        ad.config.update("jit_background_compile", mode == "default")
        ad.config.update("jit_llvm_tier", mode != "numba")
        block = lambda r: r                          # noqa: E731 - results are numpy arrays
    else:
        import jax
        block = jax.block_until_ready
    t_import = time.perf_counter() - t0
    fn, args = _build(name, lib)
    t = time.perf_counter()
    block(fn(*args))
    first = time.perf_counter() - t
    t = time.perf_counter()
    block(fn(*args))
    second = time.perf_counter() - t
    info = {}
    if lib == "ad":
        ci = fn.cache_info()
        info = {"compiled": getattr(ci, "compiled", None), "pending": getattr(ci, "pending", None)}
    print("RESULT " + json.dumps({"workload": name, "mode": mode, "first": first,
                                  "second": second, "import": t_import, **info}), flush=True)


def measure(name, mode, timeout=900):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=tempfile.mkdtemp(prefix="autodiff-cold-"))
    out = subprocess.run([sys.executable, __file__, "--child", name, mode], env=env,
                         capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        return {"workload": name, "mode": mode, "error": out.stderr[-2000:]}
    return json.loads(lines[0][len("RESULT "):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "MODE"))
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--modes", default="default,blocking,numba,jax")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    names = [n for n in args.only.split(",") if n] or WORKLOADS
    modes = [m for m in args.modes.split(",") if m]
    results = []
    print(f"{'workload':12s} " + " ".join(f"{m:>10s}" for m in modes), flush=True)
    for n in names:
        row = {}
        for m in modes:
            r = measure(n, m)
            results.append(r)
            row[m] = r.get("first")
            if "error" in r:
                print(f"  {n} {m}: ERROR {r['error'][-300:]}", file=sys.stderr)
        print(f"{n:12s} " + " ".join(f"{row[m]:10.3f}" if row[m] is not None else f"{'-':>10s}"
                                     for m in modes), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
