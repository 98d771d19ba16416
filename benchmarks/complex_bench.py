"""Complex numbers and FFT (issue 16): the NLS split-step solver and the spin-chain energy
gradient, autodiff vs JAX vs numpy, side by side in one process.

    python benchmarks/complex_bench.py                 # warm table, then the cold table
    python benchmarks/complex_bench.py --no-cold       # warm only
    python benchmarks/complex_bench.py --rounds 5 --markdown table.md
    python benchmarks/complex_bench.py --child WORKLOAD MODE   # one cold measurement (internal)

Workloads (the examples' code: ``examples/nls_split_step.py`` and
``examples/spin_chain_ground_state.py`` are loaded as they are; JAX runs the same
algorithm written with ``jax.numpy``/``jax.lax``; numpy is the same loop written by hand):

  nls_fwd     256-point NLS, 200 Strang steps (800 complex FFTs of 256), one call
  nls_grad    value and gradient of the intensity loss w.r.t. the initial amplitude
              (forward + reverse through the 200 steps); numpy has no gradient ("-")
  spin8_grad  value and gradient of <ψ|H|ψ>/<ψ|ψ>, 8 sites (dense 256 x 256 complex H);
              numpy: the closed-form gradient 2 conj((H - E) ψ) / <ψ|ψ>
  spin10_grad the same, 10 sites (1024 x 1024)

Warm: the jitted functions are compiled first, then autodiff, JAX and numpy are timed in
interleaved rounds (a change of machine load hits all alike); a cell is the median over
the rounds of the best of a few calls, ``ad/JAX`` the median of the per-round ratios.
Cold: the first call in a fresh process with an empty ``AUTODIFF_CACHE_DIR`` (trace +
transform + lower + compile + first run; the import is not counted), for autodiff with
background compilation (the default: the first call runs on the interpreter), with
blocking compilation, and for ``jax.jit`` (x64).
"""
import argparse
import json
import os
import pathlib
import runpy
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = ["nls_fwd", "nls_grad", "spin8_grad", "spin10_grad"]
NLS = dict(points=256, length=40.0, T=2.0, steps=200)


def _nls_inputs():
    x = (np.arange(NLS["points"]) - NLS["points"] // 2) * (NLS["length"] / NLS["points"])
    k = 2 * np.pi * np.fft.fftfreq(NLS["points"], d=NLS["length"] / NLS["points"])
    dt, dx = NLS["T"] / NLS["steps"], NLS["length"] / NLS["points"]
    a0 = np.exp(-x ** 2 / 2)
    hidden = 1.3 / np.cosh(1.3 * x) * np.exp(-0.1 * x ** 2)
    target = np.abs(_numpy_split_step(hidden, k, dt, NLS["steps"])) ** 2
    return a0, target, k, dt, dx


def _numpy_split_step(u, k, dt, steps):
    half_linear = np.exp(-0.25j * dt * k ** 2)
    u = u + 0j
    for _ in range(steps):
        u = np.fft.ifft(half_linear * np.fft.fft(u))
        u = u * np.exp(1j * dt * np.abs(u) ** 2)
        u = np.fft.ifft(half_linear * np.fft.fft(u))
    return u


def _spin_inputs(n):
    mod = runpy.run_path(str(ROOT / "examples" / "spin_chain_ground_state.py"))
    H, _ = mod["hamiltonian"](n)
    rng = np.random.default_rng(0)
    psi = rng.standard_normal(2 ** n) + 1j * rng.standard_normal(2 ** n)
    return psi / np.linalg.norm(psi), H


def build(name, lib):
    """``(callable, args)`` of a workload for lib 'ad', 'jax' or 'numpy'."""
    if name.startswith("nls"):
        a0, target, k, dt, dx = _nls_inputs()
        steps = NLS["steps"]
        if lib == "numpy":
            if name == "nls_grad":
                return None, None
            return (lambda a: _numpy_split_step(a, k, dt, steps)), (a0,)
        if lib == "ad":
            import autodiff as ad
            mod = runpy.run_path(str(ROOT / "examples" / "nls_split_step.py"))
            split_step, loss = mod["split_step"], mod["intensity_loss"]
            if name == "nls_fwd":
                f = ad.jit(split_step, static_argnums=(3,))
                return (lambda a: f(a, k, dt, steps)), (a0,)
            g = ad.jit(ad.value_and_grad(loss), static_argnums=(4,))
            return (lambda a: g(a, target, k, dt, steps, dx)), (a0,)
        import jax
        import jax.numpy as jnp
        half_linear = jnp.exp(-0.25j * dt * k ** 2)

        def jax_split_step(u0):
            def linear(u):
                return jnp.fft.ifft(half_linear * jnp.fft.fft(u))

            def step(_, u):
                u = linear(u)
                u = u * jnp.exp(1j * dt * jnp.abs(u) ** 2)
                return linear(u)
            return jax.lax.fori_loop(0, steps, step, u0 + 0j)
        if name == "nls_fwd":
            f = jax.jit(jax_split_step)
        else:
            f = jax.jit(jax.value_and_grad(
                lambda a: jnp.sum((jnp.abs(jax_split_step(a)) ** 2 - target) ** 2) * dx))
        return (lambda a: jax.block_until_ready(f(a))), (a0,)
    n = int(name[len("spin"):-len("_grad")])
    psi, H = _spin_inputs(n)
    if lib == "numpy":
        def closed_form(psi):
            n2 = np.vdot(psi, psi).real
            hpsi = H @ psi
            e = np.vdot(psi, hpsi).real / n2
            return e, 2 * np.conj(hpsi - e * psi) / n2
        return closed_form, (psi,)
    if lib == "ad":
        import autodiff as ad
        mod = runpy.run_path(str(ROOT / "examples" / "spin_chain_ground_state.py"))
        g = ad.jit(ad.value_and_grad(mod["energy"]))
        return (lambda psi: g(psi, H)), (psi,)
    import jax
    import jax.numpy as jnp
    g = jax.jit(jax.value_and_grad(
        lambda psi, h: jnp.real(jnp.vdot(psi, h @ psi)) / jnp.real(jnp.vdot(psi, psi))))
    return (lambda psi: jax.block_until_ready(g(psi, H))), (psi,)


def _best(fn, args, min_time=0.05, calls=3):
    """Best per-call time of ``calls`` batches, each long enough to be timed."""
    t = time.perf_counter()
    fn(*args)
    one = time.perf_counter() - t
    number = max(1, int(min_time / max(one, 1e-7)))
    best = float("inf")
    for _ in range(calls):
        t = time.perf_counter()
        for _ in range(number):
            fn(*args)
        best = min(best, (time.perf_counter() - t) / number)
    return best


def _check(name, fns):
    """The three libraries compute the same numbers (so the table compares like with like)."""
    outs = {lib: f(*a) for lib, (f, a) in fns.items() if f is not None}
    as_tuple = lambda o: o if isinstance(o, tuple) else (o,)      # noqa: E731
    for lib, o in outs.items():
        for x, y in zip(as_tuple(outs["ad"]), as_tuple(o)):
            np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-9, atol=1e-11,
                                       err_msg=f"{name}: autodiff vs {lib}")


def warm(names, rounds, libs):
    import autodiff as ad
    ad.config.update("jit_background_compile", False)      # compile before timing
    rows = []
    for name in names:
        fns = {lib: build(name, lib) for lib in libs}
        _check(name, fns)
        times = {lib: [] for lib in fns if fns[lib][0] is not None}
        ratios = []
        for _ in range(rounds):
            r = {lib: _best(*fns[lib]) for lib in times}
            for lib, t in r.items():
                times[lib].append(t)
            if "jax" in r:
                ratios.append(r["ad"] / r["jax"])
        row = {"workload": name, **{lib: statistics.median(ts) for lib, ts in times.items()}}
        if ratios:
            row["ad/jax"] = statistics.median(ratios)
        rows.append(row)
        _print_warm_row(row, libs)
    return rows


def _ms(t):
    return f"{t * 1e3:10.3f}" if t is not None else f"{'-':>10s}"


def _print_warm_row(row, libs):
    cells = " ".join(_ms(row.get(lib)) for lib in libs)
    ratio = f"{row['ad/jax']:8.2f}x" if "ad/jax" in row else ""
    print(f"{row['workload']:12s} {cells} {ratio}", flush=True)


def child(name, mode):
    lib = "jax" if mode == "jax" else "ad"
    if lib == "ad":
        import autodiff as ad
        ad.config.update("jit_background_compile", mode == "default")
    else:
        import jax
        jax.config.update("jax_enable_x64", True)
    fn, args = build(name, lib)
    t = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - t
    t = time.perf_counter()
    fn(*args)
    second = time.perf_counter() - t
    print("RESULT " + json.dumps({"workload": name, "mode": mode, "first": first,
                                  "second": second}), flush=True)


def cold(name, mode, timeout=900):
    env = dict(os.environ, AUTODIFF_CACHE_DIR=tempfile.mkdtemp(prefix="autodiff-cold-"))
    out = subprocess.run([sys.executable, __file__, "--child", name, mode], env=env,
                         capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        print(f"  {name} {mode}: ERROR {out.stderr[-600:]}", file=sys.stderr)
        return None
    return json.loads(lines[0][len("RESULT "):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "MODE"))
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(WORKLOADS))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--markdown", default=None, help="also write the tables to this file")
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    names = [n for n in args.only.split(",") if n] or WORKLOADS
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        libs = ["ad", "jax", "numpy"]
    except ImportError:
        print("jax is not installed (pip install -e '.[bench]'): autodiff and numpy only")
        libs = ["ad", "numpy"]
    md = []
    print(f"warm, ms per call (median of {args.rounds} interleaved rounds)")
    print(f"{'workload':12s} " + " ".join(f"{lib:>10s}" for lib in libs) + "   ad/JAX")
    rows = warm(names, args.rounds, libs)
    md.append("| workload | " + " | ".join(libs) + " | ad/JAX |")
    md.append("|---" * (len(libs) + 2) + "|")
    for r in rows:
        md.append(f"| {r['workload']} | " + " | ".join(
            f"{r[lib] * 1e3:.3f} ms" if lib in r else "-" for lib in libs)
            + (f" | {r['ad/jax']:.2f}x |" if "ad/jax" in r else " | - |"))
    if not args.no_cold:
        modes = ["default", "blocking"] + (["jax"] if "jax" in libs else [])
        print("\ncold: first call in a fresh process, empty cache, s (second call in brackets)")
        print(f"{'workload':12s} " + " ".join(f"{m:>18s}" for m in modes))
        md += ["", "| workload (first call, s) | " + " | ".join(
            {"default": "autodiff (background compile)", "blocking": "autodiff (blocking)",
             "jax": "JAX"}[m] for m in modes) + " |", "|---" * (len(modes) + 1) + "|"]
        for name in names:
            res = {m: cold(name, m) for m in modes}
            cells = [f"{r['first']:8.3f} ({r['second'] * 1e3:7.2f}ms)" if r else f"{'-':>18s}"
                     for r in res.values()]
            print(f"{name:12s} " + " ".join(cells), flush=True)
            md.append(f"| {name} | " + " | ".join(
                f"{r['first']:.2f} (then {r['second'] * 1e3:.2f} ms)" if r else "-"
                for r in res.values()) + " |")
    if args.markdown:
        pathlib.Path(args.markdown).write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
