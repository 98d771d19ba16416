"""Tracing cost: microseconds per recorded equation for a 10,000-equation function.

    python benchmarks/trace.py [--n 10000] [--repeat 5]

Traces, with ``ad.make_jaxpr``, a function whose body is a long chain of elementwise
operations on small arrays (the arithmetic itself is nothing; what is measured is
the Python cost of recording an equation: ``anp`` dispatch, dtype promotion, ``bind``,
abstract evaluation, source-line capture, equation construction). Reports the best
of ``--repeat`` runs (process CPU time), in µs per equation, for

* ``anp``   - the user-facing namespace with operators (``anp.sin(x) * 1.01 + ...``);
* ``anp functions`` - the same through ``anp.multiply``/``anp.add``/... (full dtype
  promotion and broadcasting logic);
* ``bind``  - primitives bound directly (``P.sin_p.bind``), the core's share;
* ``concrete`` - the same ``anp`` chain traced concretely (inside ``ad.jvp``-style
  tracing, where values are known but computed only on demand).

Goal: at most 10 µs per equation.
"""
import argparse
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P
from autodiff.core import trace_flat, ShapedArray

OPS_PER_ROUND = 5          # equations recorded per loop iteration of the chains below


def chain_anp(x, rounds):
    for _ in range(rounds):
        y = anp.sin(x) * 1.01          # sin, mul
        x = anp.tanh(y) + y            # tanh, add
        x = x - 0.1                    # sub
    return x


def chain_anp_calls(x, rounds):
    # the same chain through anp's functions: numpy's promotion and broadcasting rules
    for _ in range(rounds):
        y = anp.multiply(anp.sin(x), 1.01)
        x = anp.add(anp.tanh(y), y)
        x = anp.subtract(x, 0.1)
    return x


def chain_bind(x, rounds):
    c = np.float64(1.01)
    d = np.float64(0.1)
    for _ in range(rounds):
        y = P.mul_p.bind(P.sin_p.bind(x), c)
        x = P.add_p.bind(P.tanh_p.bind(y), y)
        x = P.sub_p.bind(x, d)
    return x


def best_of(fn, repeat):
    # CPU time of this (single-threaded) process: robust to other jobs on a busy machine
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="equations to record")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rounds = args.n // OPS_PER_ROUND
    x = np.ones(8)

    rows = []
    t, closed = best_of(lambda: ad.make_jaxpr(lambda x: chain_anp(x, rounds))(x), args.repeat)
    n = len(closed.eqns)
    rows.append(("anp operators", t, n))

    t, closed = best_of(lambda: ad.make_jaxpr(lambda x: chain_anp_calls(x, rounds))(x),
                        args.repeat)
    rows.append(("anp functions", t, len(closed.eqns)))

    aval = ShapedArray(x.shape, x.dtype)
    t, closed = best_of(lambda: trace_flat(lambda x: [chain_bind(x, rounds)], [aval]),
                        args.repeat)
    rows.append(("bind (trace_flat)", t, len(closed.eqns)))

    t, closed = best_of(lambda: trace_flat(lambda x: [chain_anp(x, rounds)], [aval],
                                           concrete_values=[x]), args.repeat)
    rows.append(("anp, concrete trace", t, len(closed.eqns)))

    print(f"tracing cost, best of {args.repeat} (goal: <= 10 us per equation)")
    for name, t, n in rows:
        print(f"  {name:22s} {n:6d} eqns  {t * 1e3:8.1f} ms  {t / n * 1e6:6.2f} us/eqn")


if __name__ == "__main__":
    main()
