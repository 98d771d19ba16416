"""Taylor mode vs nested grad: the k-th derivative of tanh(sin(x) * exp(-x**2)) at x = 0.3.

For k = 1..12: IR size (equations of the traced program) and time per call, eager and
jitted, of
  * ``ad.taylor(f, k)``            (autodiff's jet: one pass, all k derivatives)
  * ``ad.grad`` nested k times     (autodiff)
  * ``jax.grad`` nested k times    (JAX, when installed)
  * ``jax.experimental.jet.jet``   (JAX's jet, when installed)
Rows whose single call would take too long (nested grad grows exponentially) are cut
and shown as "—". Every derivative is checked against the jet's before it is timed.

    python benchmarks/jet_bench.py                    # k = 1..12
    python benchmarks/jet_bench.py --kmax 8 --markdown table.md
    python benchmarks/jet_bench.py --scalar 0 --vector 10000   # only the jitted n-point table

A second table times the jitted k-th derivative at 10,000 points (``--vector``), where the
kernels' work, not the call overhead, dominates.
"""
import argparse
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np

import autodiff as ad
import autodiff.numpy as anp

ad.config.update("jit_background_compile", False)   # time the compiled kernels, not the interpreter
X = 0.3
EAGER_CUT_S = 5.0        # a nested-grad column stops once one eager call takes longer
JIT_CUT_EQNS = 10000     # autodiff's nested grad is not jitted beyond this many equations
JAX_JIT_CUT_EQNS = 30000  # … nor JAX's (XLA compile time)
SIZE_CUT_EQNS = 100000   # nor traced once its program passed this size
VECTOR_JIT_CUT_EQNS = 4000  # the n-point nested grad: Numba compiles ~5 min at 8,800 equations
VECTOR_JAX_JIT_CUT_EQNS = 10000  # JAX's n-point nested grad: 54 s a call at k = 7 (9,300 eqns)


def f(x):
    return anp.tanh(anp.sin(x) * anp.exp(-x ** 2))


def timeit(fn, budget=0.4, min_reps=3, max_reps=2000):
    """Median seconds per call, over repeats within ``budget`` seconds."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    reps = int(max(min_reps, min(max_reps, budget / max(first, 1e-7))))
    inner = max(1, int(1e-3 / max(first, 1e-7))) if first < 1e-4 else 1
    samples = []
    for _ in range(max(3, reps // inner)):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t) / inner)
        if sum(samples) * inner > budget and len(samples) >= min_reps:
            break
    return statistics.median(samples)


def fmt(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def ours(k):
    fn = ad.taylor(f, k)
    size = len(ad.make_jaxpr(fn)(X).jaxpr.eqns)
    eager = timeit(lambda: fn(X))
    jf = ad.jit(lambda x: fn(x)[k])                # the k-th derivative alone, as the others
    val = float(jf(X))
    jit = timeit(lambda: jf(X))
    return float(fn(X)[k]), size, eager, jit, val


def nested_ad(k, cut, size_cut):
    g = f
    for _ in range(k):
        g = ad.grad(g)
    size = None if size_cut else len(ad.make_jaxpr(g)(X).jaxpr.eqns)
    if cut or size_cut:
        return None, size, None, None
    val = float(g(X))
    t0 = time.perf_counter()
    g(X)
    first = time.perf_counter() - t0
    eager = first if first > 0.2 else timeit(lambda: g(X))
    jit = None
    if size is not None and size <= JIT_CUT_EQNS:
        jg = ad.jit(g)
        jg(X)
        jit = timeit(lambda: jg(X))
    return val, size, eager, jit


def jax_rows(k, state):
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.experimental.jet import jet
    except Exception:                              # noqa: BLE001  (JAX is optional)
        return None
    fj = lambda x: jnp.tanh(jnp.sin(x) * jnp.exp(-x ** 2))
    g = fj
    for _ in range(k):
        g = jax.grad(g)
    xj = jnp.float64(X)
    grad_val = grad_size = grad_eager = grad_jit = None
    if not state.get("size_cut"):
        grad_size = len(jax.make_jaxpr(g)(xj).jaxpr.eqns)
        state["size_cut"] = grad_size > SIZE_CUT_EQNS
    if not state.get("eager_cut"):
        grad_val = float(g(xj))                   # the first eager call compiles each op
        t0 = time.perf_counter()
        g(xj).block_until_ready()
        grad_eager = time.perf_counter() - t0
        if grad_eager < 0.2:
            grad_eager = timeit(lambda: g(xj).block_until_ready(), budget=0.3)
        state["eager_cut"] = grad_eager > EAGER_CUT_S
    if grad_size is not None and grad_size <= JAX_JIT_CUT_EQNS:
        jg = jax.jit(g)
        grad_val = float(jg(xj))
        grad_jit = timeit(lambda: jg(xj).block_until_ready())
    terms = (jnp.float64(1.0),) + (jnp.float64(0.0),) * (k - 1)

    def jet_k(x):
        _, ys = jet(fj, (x,), (terms,))
        return ys[k - 1]
    jet_size = len(jax.make_jaxpr(jet_k)(xj).jaxpr.eqns)
    jet_eager = timeit(lambda: jet_k(xj).block_until_ready(), budget=0.3)
    jj = jax.jit(jet_k)
    jj(xj).block_until_ready()
    jet_jit = timeit(lambda: jj(xj).block_until_ready())
    return dict(grad=(grad_val, grad_size, grad_eager, grad_jit),
                jet=(float(jet_k(xj)), jet_size, jet_eager, jet_jit))


def vector_rows(k, n, state):
    """Jitted k-th derivative at n points (compute-bound): f^(k) elementwise."""
    xs = np.linspace(-1.0, 1.0, n)
    fn = ad.jit(lambda x: ad.taylor(f, k)(x)[k])
    ref = fn(xs)
    row = {"jet": timeit(lambda: fn(xs))}
    g = f
    for _ in range(k):
        g = (lambda h: ad.grad(lambda x: anp.sum(h(x))))(g)
    size = state.get("ad_size", 0)
    if size <= VECTOR_JIT_CUT_EQNS:
        size = state["ad_size"] = len(ad.make_jaxpr(g)(xs).jaxpr.eqns)
    row["grad"] = None
    if size <= VECTOR_JIT_CUT_EQNS:
        jg = ad.jit(g)
        np.testing.assert_allclose(jg(xs), ref, rtol=1e-8, atol=1e-8)
        row["grad"] = timeit(lambda: jg(xs))
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.experimental.jet import jet
    except Exception:                              # noqa: BLE001  (JAX is optional)
        row["jax_grad"] = row["jax_jet"] = None
        return row
    fj = lambda x: jnp.tanh(jnp.sin(x) * jnp.exp(-x ** 2))
    xj = jnp.asarray(xs)
    gj = fj
    for _ in range(k):
        gj = (lambda h: jax.grad(lambda x: jnp.sum(h(x))))(gj)
    row["jax_grad"] = None
    if state.get("jax_size", 0) <= VECTOR_JAX_JIT_CUT_EQNS:
        state["jax_size"] = len(jax.make_jaxpr(gj)(xj).jaxpr.eqns)
        if state["jax_size"] <= VECTOR_JAX_JIT_CUT_EQNS:
            jg = jax.jit(gj)
            np.testing.assert_allclose(np.asarray(jg(xj)), ref, rtol=1e-8, atol=1e-8)
            row["jax_grad"] = timeit(lambda: jg(xj).block_until_ready())
    terms = (jnp.ones(n),) + (jnp.zeros(n),) * (k - 1)
    jj = jax.jit(lambda x: jet(fj, (x,), (terms,))[1][k - 1])
    np.testing.assert_allclose(np.asarray(jj(xj)), ref, rtol=1e-8, atol=1e-8)
    row["jax_jet"] = timeit(lambda: jj(xj).block_until_ready())
    return row


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--kmin", type=int, default=1)
    ap.add_argument("--kmax", type=int, default=12)
    ap.add_argument("--markdown", default=None, help="write the table to this file")
    ap.add_argument("--vector", type=int, default=10000,
                    help="also time the jitted derivative at this many points (0: skip)")
    ap.add_argument("--scalar", type=int, default=1, help="0: skip the scalar table")
    args = ap.parse_args(argv)
    head = ("| k | jet eqns | nested grad eqns | JAX grad eqns | JAX jet eqns "
            "| jet eager | nested grad eager | JAX grad eager | JAX jet eager "
            "| jet jit | nested grad jit | JAX grad jit | JAX jet jit "
            "| grad/jet eager | grad/jet jit | JAX jet/jet jit |")
    lines = [head, "|" + "---|" * 16]
    print(head, flush=True)
    print(lines[1], flush=True)
    cut = size_cut = False
    jax_state = {}
    for k in range(args.kmin, args.kmax + 1 if args.scalar else args.kmin):
        ref, jsize, jeager, jjit, jval = ours(k)
        assert math.isclose(ref, jval, rel_tol=1e-9), (k, ref, jval)
        gval, gsize, geager, gjit = nested_ad(k, cut, size_cut)
        size_cut = size_cut or (gsize or 0) > SIZE_CUT_EQNS
        if gval is not None:
            assert math.isclose(gval, ref, rel_tol=1e-8, abs_tol=1e-8), (k, gval, ref)
        if geager is not None and geager > EAGER_CUT_S:
            cut = True
        jx = jax_rows(k, jax_state)
        if jx is not None:
            for name in ("grad", "jet"):
                if jx[name][0] is not None:
                        assert math.isclose(jx[name][0], ref, rel_tol=1e-8, abs_tol=1e-8), (k, name)
        J = jx or {"grad": (None,) * 4, "jet": (None,) * 4}
        ratio = lambda a, b: "—" if a is None or b is None else f"{a / b:.1f}×"
        row = (f"| {k} | {jsize} | {gsize or '—'} | {J['grad'][1] or '—'} | {J['jet'][1] or '—'} "
               f"| {fmt(jeager)} | {fmt(geager)} | {fmt(J['grad'][2])} | {fmt(J['jet'][2])} "
               f"| {fmt(jjit)} | {fmt(gjit)} | {fmt(J['grad'][3])} | {fmt(J['jet'][3])} "
               f"| {ratio(geager, jeager)} | {ratio(gjit, jjit)} | {ratio(J['jet'][3], jjit)} |")
        lines.append(row)
        print(row, flush=True)
    if args.vector:
        n = args.vector
        head = (f"| k (jitted, n = {n} points) | jet | nested grad | JAX nested grad | JAX jet "
                f"| nested grad / jet | JAX grad / jet | JAX jet / jet |")
        lines += ["", head, "|" + "---|" * 8]
        print("\n" + head + "\n" + lines[-1], flush=True)
        state = {}
        for k in range(args.kmin, args.kmax + 1):
            r = vector_rows(k, n, state)
            ratio = lambda a: "—" if a is None else f"{a / r['jet']:.1f}×"
            row = (f"| {k} | {fmt(r['jet'])} | {fmt(r['grad'])} | {fmt(r['jax_grad'])} "
                   f"| {fmt(r['jax_jet'])} | {ratio(r['grad'])} | {ratio(r['jax_grad'])} "
                   f"| {ratio(r['jax_jet'])} |")
            lines.append(row)
            print(row, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
