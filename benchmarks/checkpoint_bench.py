"""Memory and time of checkpointing strategies on a chain of tanh-dense layers.

    python benchmarks/checkpoint_bench.py [--sizes 16 64 256] [--reps 7] [--out FILE.md]
                                          [--jit] [--jit-max-n 16]

Model: ``h <- tanh(h @ W_i + b_i)`` for i = 1..n, width 256, batch 64, float64,
loss ``sum(h_n ** 2)``, gradient with respect to every ``W_i, b_i``.
Strategies: ``"none"``, ``"sqrt_n"``, ``ad.every(4)`` (``checkpoint_sequential``).

Columns:
  * residuals (IR): bytes the forward pass saves for the backward pass, counted in
    the residuals of ``partial_eval_jaxpr`` (the function's inputs -- parameters,
    data -- are not counted: they exist anyway).
  * peak residuals (IR): saved residuals plus the largest set one checkpoint
    recomputes and holds while its backward runs.
  * peak run (measured): ``tracemalloc`` peak, above what was allocated before, while
    the whole gradient program ``make_jaxpr(grad(loss))`` runs on the numpy
    interpreter's loop (every buffer freed at its last use), each gradient being
    handed away as soon as it is produced (as an optimizer would consume it): the
    working set of forward + backward. "incl. grads" is the plain interpreter run,
    which also holds the whole gradient (``grads`` column) at the end.
  * time: best of ``--reps`` runs of that program with the interpreter, and of the
    eager ``ad.grad(loss)`` call (tracing included); with ``--jit``, of
    ``ad.jit(ad.grad(loss))`` after its first call (compilation is slow for long
    chains today, so only for n <= ``--jit-max-n``).

BLAS is pinned to one thread so times are comparable on a shared machine.
"""
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse     # noqa: E402
import gc           # noqa: E402
import sys          # noqa: E402
import time         # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import autodiff as ad                       # noqa: E402
ad.config.update("jit_background_compile", False)   # time compiled kernels, not the interpreter tier
import autodiff.numpy as anp                # noqa: E402
from autodiff.backends.interpreter import run_jaxpr        # noqa: E402
from autodiff.checkpoint import residual_bytes              # noqa: E402
from autodiff.core import Literal, Var                      # noqa: E402
from autodiff.transforms.simplify import simplify_jaxpr     # noqa: E402

WIDTH, BATCH = 256, 64
STRATEGIES = [("none", "none"), ("sqrt_n", "sqrt_n"), ("every(4)", ad.every(4))]


def make_problem(n, seed=0):
    rng = np.random.default_rng(seed)
    params = [(rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH),
               0.1 * rng.standard_normal(WIDTH)) for _ in range(n)]
    x = rng.standard_normal((BATCH, WIDTH))
    return params, x


def make_loss(strategy):
    def loss(params, x):
        layers = [(lambda h, w=w, b=b: anp.tanh(h @ w + b)) for w, b in params]
        return anp.sum(ad.checkpoint_sequential(layers, strategy)(x) ** 2)
    return loss


def _run_program(closed, args):
    return run_jaxpr(closed.jaxpr, closed.consts, args)


def run_consuming_outputs(closed, args):
    """The interpreter's loop (free at last use), except that each output is handed
    away (dropped) as soon as it is computed, as an optimizer consuming gradients
    would: what stays alive is then the working set of the backward pass. Returns
    the outputs' checksums (sum of each), so correctness can still be checked."""
    j = closed.jaxpr
    env = dict(zip(j.constvars, closed.consts))
    env.update(zip(j.invars, args))
    last = {}
    for i, e in enumerate(j.eqns):
        for v in e.invars:
            if isinstance(v, Var):
                last[v] = i
    outs = {v: k for k, v in enumerate(j.outvars) if isinstance(v, Var)}
    sums = [None] * len(j.outvars)
    for i, e in enumerate(j.eqns):
        ins = [v.val if isinstance(v, Literal) else env[v] for v in e.invars]
        res = e.primitive.impl(*ins, **e.params)
        del ins
        res = res if e.primitive.multiple_results else [res]
        for v, r in zip(e.outvars, res):
            if v in outs:
                sums[outs[v]] = float(np.sum(r))
                if last.get(v, -1) <= i:
                    continue
            env[v] = r
        del res
        for v in e.invars:
            if isinstance(v, Var) and last.get(v) == i and v not in outs and v in env \
                    and v not in j.invars and v not in j.constvars:
                del env[v]
    return sums


def measured_peak(fn):
    """tracemalloc peak of ``fn()`` above what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, out


def best_time(fn, reps):
    best = float("inf")
    for _ in range(reps):
        gc.collect()
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _jit_available():
    try:
        ad.jit(lambda x: x)(np.ones(1))
        return True
    except NotImplementedError:
        return False


def bench(n, reps, use_jit):
    """Rows of measurements for every strategy at depth ``n``."""
    params, x = make_problem(n)
    flat_args = [a for wb in params for a in wb] + [x]
    grads_bytes = sum(w.nbytes + b.nbytes for w, b in params)
    rows, ref, runs = [], None, []
    for label, strategy in STRATEGIES:
        loss = make_loss(strategy)
        saved, peak_ir = residual_bytes(loss, params, x)
        program = simplify_jaxpr(ad.make_jaxpr(ad.grad(loss))(params, x))
        peak_all, out = measured_peak(lambda: _run_program(program, flat_args))
        peak_run, sums = measured_peak(lambda: run_consuming_outputs(program, flat_args))
        g = flat_grads(out)
        assert np.allclose(sums, [np.sum(o) for o in out])
        ref = g if ref is None else ref
        err = float(np.max(np.abs(g - ref)))
        rows.append(dict(n=n, strategy=label, saved=saved, peak_ir=peak_ir, peak_run=peak_run,
                         peak_all=peak_all, grads=grads_bytes, err=err,
                         t_prog=float("inf"), t_eager=float("inf"), t_jit=None))
        grad_fn = ad.grad(loss)
        jitted = None
        if use_jit:
            jitted = ad.jit(grad_fn)
            t0 = time.perf_counter()
            jg = jitted(params, x)
            rows[-1]["t_compile"] = time.perf_counter() - t0
            rows[-1]["err_jit"] = float(np.max(np.abs(flat_grads(jg) - ref)))
        runs.append((program, grad_fn, jitted))
    # interleave the strategies' repetitions so machine noise hits them alike
    for _ in range(reps):
        for row, (program, grad_fn, jitted) in zip(rows, runs):
            t = best_time(lambda: _run_program(program, flat_args), 1)
            row["t_prog"] = min(row["t_prog"], t)
            row["t_eager"] = min(row["t_eager"], best_time(lambda: grad_fn(params, x), 1))
            if jitted is not None:
                t = best_time(lambda: jitted(params, x), 1)
                row["t_jit"] = t if row["t_jit"] is None else min(row["t_jit"], t)
    return rows


def flat_grads(tree):
    return np.concatenate([np.ravel(l) for l in ad.tree_util.tree_leaves(tree)])


def _mib(b):
    return f"{b / 2**20:.2f}"


def table(rows):
    head = ("| n | strategy | residuals (IR) MiB | peak residuals (IR) MiB "
            "| peak run (measured) MiB | peak run incl. grads MiB | grads MiB | program time ms | eager grad ms "
            "| max abs diff vs none |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        base = next(q for q in rows if q["n"] == r["n"] and q["strategy"] == "none")
        rel = f" ({r['saved'] / base['saved']:.3f}×)" if base["saved"] else ""
        relp = f" ({r['peak_ir'] / base['peak_ir']:.3f}×)" if base["peak_ir"] else ""
        relt = f" ({r['t_prog'] / base['t_prog']:.2f}×)"
        lines.append(
            f"| {r['n']} | {r['strategy']} | {_mib(r['saved'])}{rel} | "
            f"{_mib(r['peak_ir'])}{relp} | "
            f"{_mib(r['peak_run'])} | {_mib(r['peak_all'])} | {_mib(r['grads'])} | "
            f"{1e3 * r['t_prog']:.1f}{relt} | {1e3 * r['t_eager']:.1f} | {r['err']:.1e} |")
    return "\n".join(lines)


def jit_table(rows):
    rows = [r for r in rows if r["t_jit"] is not None]
    if not rows:
        return ""
    lines = ["| n | strategy | jit(grad) ms | first call (trace + compile) s "
             "| max abs diff vs eager 'none' |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['strategy']} | {1e3 * r['t_jit']:.1f} | "
                     f"{r['t_compile']:.1f} | {r['err_jit']:.1e} |")
    return "\n".join(lines)


def growth(rows):
    """Fit saved-residual bytes ~ n^p per strategy (log-log slope over the sizes run)."""
    out = []
    for label, _ in STRATEGIES:
        pts = [(r["n"], r["peak_ir"]) for r in rows if r["strategy"] == label and r["peak_ir"]]
        if len(pts) >= 2:
            ns, bs = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
            out.append(f"{label}: peak residuals ~ n^{np.polyfit(ns, bs, 1)[0]:.2f}")
    return "; ".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--jit", action="store_true", help="also time ad.jit(ad.grad(loss))")
    ap.add_argument("--jit-max-n", type=int, default=16)
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    args = ap.parse_args(argv)
    use_jit = args.jit and _jit_available()
    rows = []
    for n in args.sizes:
        rows.extend(bench(n, args.reps, use_jit and n <= args.jit_max_n))
        print(f"n={n} done", file=sys.stderr)
    text = table(rows) + "\n\nGrowth: " + growth(rows) + "\n"
    jt = jit_table(rows)
    if jt:
        text += "\n" + jt + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return rows


if __name__ == "__main__":
    main()
