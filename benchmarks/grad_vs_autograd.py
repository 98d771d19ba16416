"""``ad.grad`` without jit against autograd (HIPS), per call.

    python benchmarks/grad_vs_autograd.py [--ops 100] [--n 16] [--calls 200]

The function is a scalar-valued chain of ``--ops`` elementwise operations, written
once against a numpy-like module so the two libraries run the same Python code; it
is differentiated at a scalar and at a vector of ``--n`` elements. Each gradient call
retraces (no jit, as autograd always does); a trace with the structure of an earlier
one reuses that one's transformed programs (jvp, partial evaluation, transpose), run
as straight-line code. The reported time per call is the best of several batches of
``--calls`` calls, in process CPU time (robust to other jobs on the machine).
Goal: ratio (autodiff / autograd) <= 1.
"""
import argparse
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

OPS_PER_ROUND = 5


def make_fun(m, n_ops):
    rounds = max(1, round((n_ops - 2) / OPS_PER_ROUND))

    def f(x):
        for _ in range(rounds):
            y = m.sin(x) * 1.01        # sin, mul
            x = m.tanh(y) + y * 0.5    # tanh, mul, add
        return m.sum(x * x)            # mul, reduce_sum
    return f


def per_call(g, x, calls, batches=5):
    g(x)                                       # warm-up (and the first-call trace cache)
    best = float("inf")
    for _ in range(batches):
        t0 = time.process_time()
        for _ in range(calls):
            g(x)
        best = min(best, (time.process_time() - t0) / calls)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100, help="operations in the function")
    ap.add_argument("--n", type=int, default=16, help="vector length of the second input")
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    try:
        import autograd
        import autograd.numpy as agnp
    except ImportError:
        autograd = None
        print("autograd is not installed (pip install autograd): timing autodiff alone")

    f_ad = make_fun(anp, args.ops)
    n_eqns = len(ad.make_jaxpr(f_ad)(np.ones(args.n)).eqns)
    print(f"grad of a {n_eqns}-equation scalar-valued function, no jit, per call "
          f"(best of 5 x {args.calls} calls, CPU time)")
    for label, x in [("x: a Python float", 0.5),
                     (f"x: a {args.n}-vector", np.linspace(-1.0, 1.0, args.n))]:
        g_ad = ad.grad(f_ad)
        t_ad = per_call(g_ad, x, args.calls)
        line = f"  {label:22s} autodiff {t_ad * 1e6:8.1f} us"
        if autograd is not None:
            g_ag = autograd.grad(make_fun(agnp, args.ops))
            np.testing.assert_allclose(g_ad(x), g_ag(x), rtol=1e-12)
            t_ag = per_call(g_ag, x, args.calls)
            line += f"   autograd {t_ag * 1e6:8.1f} us   ratio {t_ad / t_ag:.2f} (goal <= 1)"
        print(line)


if __name__ == "__main__":
    main()
