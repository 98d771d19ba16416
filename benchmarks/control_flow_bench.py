"""Cost of control flow as the loop gets longer: it should not grow.

    python benchmarks/control_flow_bench.py [--quick]

For an RK4 integration of a damped oscillator written with ``ad.lax.scan``, over
10 and over 100,000 steps, prints

* the number of IR equations (top level and inside the body) of the function, of
  its gradient, and of its Hessian-vector product;
* the time to trace each (``make_jaxpr``);
* under ``ad.jit`` (when available): the first call (trace + lower + compile) and
  a warm call, for the forward function and its gradient, each length compiled
  cold in a fresh process with an empty kernel cache; the compile time is the
  first call minus a warm call. Then, in one process, the 100,000-step loop
  after the 10-step one: it reuses the compiled kernel.

The equation counts and the trace and compile times of the two lengths should be
the same; only the run time of a warm call grows with the number of steps.
For comparison it also traces a Python-unrolled loop of the same body over a
few lengths, whose IR and trace time grow linearly.
"""
import sys
import time

import numpy as np

import autodiff as ad
ad.config.update("jit_background_compile", False)   # time compiled kernels, not the interpreter tier
import autodiff.numpy as anp
from autodiff import core, lax

Y0 = np.array([1.0, 0.0])
PARAMS = np.array([4.0, 0.4])
DT = 1e-3


def _step(y, k, c):
    f = lambda y: anp.stack([y[1], -k * y[0] - c * y[1]])
    k1 = f(y)
    k2 = f(y + DT / 2 * k1)
    k3 = f(y + DT / 2 * k2)
    k4 = f(y + DT * k3)
    return y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_scan(n):
    def final_x(params):
        k, c = params[0], params[1]
        y = lax.scan(lambda y, _: (_step(y, k, c), None), Y0, None, length=n)[0]
        return y[0]
    return final_x


def rk4_unrolled(n):
    def final_x(params):
        k, c = params[0], params[1]
        y = Y0
        for _ in range(n):
            y = _step(y, k, c)
        return y[0]
    return final_x


def count_eqns(closed):
    def rec(j):
        n = len(j.eqns)
        for e in j.eqns:
            for p in e.params.values():
                for q in (p if isinstance(p, tuple) else (p,)):
                    if isinstance(q, core.ClosedJaxpr):
                        q = q.jaxpr
                    if isinstance(q, core.Jaxpr):
                        n += rec(q)
        return n
    return len(closed.jaxpr.eqns), rec(closed.jaxpr)


def timed(fn, *args, repeat=1):
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return out, best


def main(quick=False):
    lengths = [10, 100_000]
    print(f"{'program':<28}{'steps':>9}{'eqns (top/all)':>17}{'trace ms':>11}")
    for n in lengths:
        f = rk4_scan(n)
        programs = {
            "scan: x(T)": f,
            "scan: grad x(T)": ad.grad(f),
            "scan: Hessian-vector": lambda p, f=f: ad.hvp(f, p, np.array([1.0, 0.0])),
        }
        for name, prog in programs.items():
            closed, t = timed(ad.make_jaxpr(prog), PARAMS, repeat=3)
            top, total = count_eqns(closed)
            print(f"{name:<28}{n:>9}{f'{top}/{total}':>17}{t * 1e3:>11.2f}")
    for n in ([10, 100] if quick else [10, 100, 1000]):
        closed, t = timed(ad.make_jaxpr(rk4_unrolled(n)), PARAMS)
        top, total = count_eqns(closed)
        print(f"{'unrolled Python loop: x(T)':<28}{n:>9}{f'{top}/{total}':>17}{t * 1e3:>11.2f}")

    try:
        ad.jit(lambda x: x)
    except NotImplementedError as e:
        print(f"\njit: not available in this build ({e}); compile times not measured")
        return
    print("\njit, each row in a fresh process with an empty kernel cache (cold compile):")
    print(f"{'jit program':<28}{'steps':>9}{'1st call s':>12}{'warm ms':>10}{'compile s':>11}")
    for n in lengths:
        for name in ("x(T)", "grad x(T)"):
            print(_cold_row(name, n), flush=True)
    print("\njit, one process: the 100,000-step loop reuses the kernel compiled for 10 steps")
    print("(compiled kernels are keyed by the IR's structure without sizes):")
    print(f"{'jit program':<28}{'steps':>9}{'1st call s':>12}{'warm ms':>10}{'compile s':>11}")
    for n in lengths:
        for name in ("x(T)", "grad x(T)"):
            print(_jit_row(name, n), flush=True)


def _jit_row(name, n):
    f = rk4_scan(n)
    jitted = ad.jit(f if name == "x(T)" else ad.grad(f))
    try:
        _, first = timed(jitted, PARAMS)
    except Exception as e:      # report and go on with the other rows
        return f"{name:<28}{n:>9}  failed: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    _, warm = timed(jitted, PARAMS, repeat=3)
    return f"{name:<28}{n:>9}{first:>12.3f}{warm * 1e3:>10.2f}{first - warm:>11.3f}"


def _cold_row(name, n):
    import os
    import subprocess
    import tempfile
    env = dict(os.environ, AUTODIFF_CACHE_DIR=tempfile.mkdtemp(prefix="cf-bench-"))
    res = subprocess.run([sys.executable, __file__, "--row", name, str(n)], env=env,
                         capture_output=True, text=True)
    out = res.stdout.strip().splitlines()
    return out[-1] if out else f"{name:<28}{n:>9}  failed: {res.stderr.strip()[-200:]}"


if __name__ == "__main__":
    if "--row" in sys.argv:
        i = sys.argv.index("--row")
        print(_jit_row(sys.argv[i + 1], int(sys.argv[i + 2])))
    else:
        main(quick="--quick" in sys.argv)
