"""``ad.grad`` without jit against autograd (HIPS): per call and per operation.

    python benchmarks/grad_vs_autograd.py [--ops 100] [--calls 200] [--quick]

Workloads, each written once against a numpy-like module so the two libraries run the
same Python code:

  chain, scalar      - ``--ops`` elementwise operations on a Python float, then a sum;
  chain, 16-vector   - the same on 16 elements;
  chain, 1000-vector - the same on 1,000 elements (arithmetic starts to count);
  tiny MLP step      - the loss of a 2-layer tanh MLP (8 -> 16 -> 1, batch 4) with its
                       gradient over a dict of 4 parameter arrays (11 operations);
  fixed point        - x* = a cos x* iterated to 1e-10 from 0: ``misc.fixed_points``
                       (a while_loop inside a custom_vjp, differentiated implicitly) against
                       autograd's own ``misc.fixed_points``, and ``lax.while_loop`` with
                       ``max_steps`` (reverse mode through the bounded loop) against
                       autograd running the Python loop (per call only: the trip count,
                       not an operation count, sets the cost).

Each gradient call retraces (no jit, as autograd always does); a trace with the
structure of an earlier one reuses that one's transformed programs (jvp, partial
evaluation, transpose), run as straight-line code. A custom function's body and rules
(the fixed point's custom_vjp, its adjoint solve) are traced once per key and reused
(``autodiff.custom_cache``); every call still runs its loops on the new values. Reported: the best of several batches
of ``--calls`` calls, in process CPU time (robust to other jobs on the machine), per
call and per user-level operation. Goal: ratio (autodiff / autograd) <= 1 on every row.
"""
import argparse
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

OPS_PER_ROUND = 5


def make_chain(m, n_ops):
    rounds = max(1, round((n_ops - 2) / OPS_PER_ROUND))

    def f(x):
        for _ in range(rounds):
            y = m.sin(x) * 1.01        # sin, mul
            x = m.tanh(y) + y * 0.5    # tanh, mul, add
        return m.sum(x * x)            # mul, reduce_sum
    return f, OPS_PER_ROUND * rounds + 2


def make_mlp(m):
    def loss(p, x, y):
        h = m.tanh(m.dot(x, p["w1"]) + p["b1"])          # dot, add, tanh
        out = m.dot(h, p["w2"]) + p["b2"]               # dot, add
        r = out[:, 0] - y                               # getitem, sub
        return m.mean(r * r) + 1e-3 * m.sum(p["w1"] ** 2)   # mul, mean, pow, sum, mul, add
    return loss, 13


def make_fixed_point(m, fixed_point):
    def f(a):
        return fixed_point(lambda a: (lambda x: a * m.cos(x)), a, 0.0,
                           lambda x, y: m.abs(x - y), 1e-10)
    return f


def make_while_fixed_point(max_steps):
    def f(a):
        x, _ = ad.lax.while_loop(lambda c: anp.abs(c[0] - c[1]) > 1e-10,
                                 lambda c: (a * anp.cos(c[0]), c[0]), (a * 1.0, 0.0),
                                 max_steps=max_steps)
        return x
    return f


def python_fixed_point(m):
    def f(a):
        x, x_prev = a * 1.0, 0.0
        while m.abs(x - x_prev) > 1e-10:
            x, x_prev = a * m.cos(x), x
        return x
    return f


def mlp_args():
    rng = np.random.default_rng(0)
    p = {"w1": rng.normal(size=(8, 16)) * 0.3, "b1": np.zeros(16),
         "w2": rng.normal(size=(16, 1)) * 0.3, "b2": np.zeros(1)}
    return p, rng.normal(size=(4, 8)), rng.normal(size=4)


def per_call(g, args, calls, batches=5):
    g(*args)                                   # warm-up (and the first-call trace cache)
    best = float("inf")
    for _ in range(batches):
        t0 = time.process_time()
        for _ in range(calls):
            g(*args)
        best = min(best, (time.process_time() - t0) / calls)
    return best


def _close(a, b):
    if isinstance(a, dict):
        for k in a:
            np.testing.assert_allclose(a[k], b[k], rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100, help="operations in each chain")
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    args = ap.parse_args()
    calls = 20 if args.quick else args.calls
    try:
        import autograd
        import autograd.numpy as agnp
    except ImportError:
        autograd = None
        print("autograd is not installed (pip install autograd): timing autodiff alone")

    rows = []
    for label, x in [("chain, scalar", 0.5),
                     ("chain, 16-vector", np.linspace(-1.0, 1.0, 16)),
                     ("chain, 1000-vector", np.linspace(-1.0, 1.0, 1000))]:
        f_ad, n_ops = make_chain(anp, args.ops)
        f_ag = make_chain(agnp, args.ops)[0] if autograd else None
        rows.append((label, n_ops, ad.grad(f_ad), autograd.grad(f_ag) if autograd else None,
                     (x,)))
    loss_ad, n_mlp = make_mlp(anp)
    rows.append(("tiny MLP step", n_mlp, ad.grad(loss_ad),
                 autograd.grad(make_mlp(agnp)[0]) if autograd else None, mlp_args()))
    from autodiff.misc.fixed_points import fixed_point
    ag_fp = None
    if autograd:
        from autograd.misc.fixed_points import fixed_point as ag_fixed_point
        ag_fp = autograd.grad(make_fixed_point(agnp, ag_fixed_point))
    rows.append(("fixed point, implicit", None, ad.grad(make_fixed_point(anp, fixed_point)),
                 ag_fp, (0.5,)))
    ag_loop = autograd.grad(python_fixed_point(agnp)) if autograd else None
    for steps in (50, 1000):
        rows.append((f"while, max_steps={steps}", None,
                     ad.grad(make_while_fixed_point(steps)), ag_loop, (0.5,)))

    print(f"grad without jit, best of 5 x {calls} calls, CPU time; per call and per operation")
    head = f"  {'workload':22s} {'ops':>4s} {'autodiff':>19s}"
    if autograd:
        head += f" {'autograd':>19s}  ratio (goal <= 1)"
    print(head)
    def cost(t, n_ops):
        per_op = f"{t * 1e6 / n_ops:5.2f} us/op" if n_ops else " " * 11
        return f"{t * 1e6:8.1f} us {per_op}"

    for label, n_ops, g_ad, g_ag, a in rows:
        n_calls = calls if n_ops else max(2, calls // 10)      # the loops cost milliseconds
        t_ad = per_call(g_ad, a, n_calls)
        line = f"  {label:22s} {n_ops or '-':>4} {cost(t_ad, n_ops)}"
        if g_ag is not None:
            _close(g_ad(*a), g_ag(*a))
            t_ag = per_call(g_ag, a, n_calls)
            line += f" {cost(t_ag, n_ops)}  {t_ad / t_ag:.2f}"
        print(line)


if __name__ == "__main__":
    main()
