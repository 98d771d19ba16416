"""Dense linear algebra inside ``ad.jit`` against numpy/scipy and JAX's jit, float64.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/linalg_bench.py
    python benchmarks/linalg_bench.py --sizes 200 --rounds 5 --markdown table.md
    python benchmarks/linalg_bench.py --threads 1     # numpy and autodiff on one BLAS thread

Rows (the table of issue 34), every input float64 and made once per size:

  cholesky          ``linalg.cholesky(A)``, A symmetric positive definite (n x n)
  solve             ``linalg.solve(A, b)``, b a vector (n,)
  slogdet           ``linalg.slogdet(A)``
  solve_triangular  ``solve_triangular(L, B, lower=True)``, B (n, 32) (scipy.linalg's)
  inv               ``linalg.inv(A)``
  qr                ``linalg.qr(G)`` (reduced), G a general square matrix
  svd               ``linalg.svd(G, full_matrices=False)``

Columns: ``autodiff`` is the jitted function (blocking compile, so the compiled kernel is
timed, not the interpreter tier), ``numpy`` numpy.linalg (scipy.linalg for
solve_triangular), ``JAX`` ``jax.jit`` with x64 (optional: "-" when JAX is missing). The
three sides are timed in interleaved rounds, so a change of machine load hits them alike;
a cell is the median over rounds of the mean time per call, a ratio the median of the
per-round ratios. The BLAS line says which library and kernel family ran (threadpoolctl).
For numbers comparable across runs unset ``OPENBLAS_CORETYPE`` and ``OPENBLAS_L2_SIZE``
for this command (both sides use the same OpenBLAS).
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("AUTODIFF_CACHE_DIR", tempfile.mkdtemp(prefix="autodiff-linalg-"))

import autodiff as ad                      # noqa: E402
import autodiff.numpy as anp               # noqa: E402

ad.config.update("jit_background_compile", False)   # time the kernel, not the interpreter

try:
    import scipy.linalg as sla
except ImportError:                        # numpy alone: the solve_triangular row's peer
    sla = None

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
    HAVE_JAX = True
except Exception:  # noqa: BLE001 - JAX is optional
    jax = jnp = jsla = None
    HAVE_JAX = False


def _reps(fn, args, min_time):
    fn(*args)
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn(*args)
        dt = time.perf_counter() - t
        if dt >= min_time:
            return n
        n = max(n * 2, int(n * min_time / max(dt, 1e-9)))


def compare(cands, rounds, min_time=0.05):
    """name -> (fn, args): median seconds per call, and the median over rounds of the
    first candidate's time divided by each candidate's (interleaved rounds)."""
    reps = {k: _reps(fn, args, min_time) for k, (fn, args) in cands.items()}
    times = {k: [] for k in cands}
    names = list(cands)
    # JAX (the last side) runs last in every round and autodiff and numpy take turns first:
    # JAX's pool threads keep spinning after its calls and slow down whichever side runs
    # next (the next round's first), measured: autodiff's and numpy's inverses of order 800
    # both 1.45x slower right after JAX's; so each of the two follows JAX in half the
    # rounds. Round -1 is a warm-up (our LAPACK thread policy settles over its first
    # probes), not timed.
    for r in range(-1, rounds):
        order = names if r % 2 == 0 or len(names) < 2 else [names[1], names[0]] + names[2:]
        for k in order:
            fn, args = cands[k]
            t = time.perf_counter()
            for _ in range(reps[k]):
                fn(*args)
            if r >= 0:
                times[k].append((time.perf_counter() - t) / reps[k])
    first = names[0]
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median([a / b for a, b in zip(times[first], v)])
             for k, v in times.items()}
    return med, ratio


def _inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    spd = m @ m.T / n + np.eye(n)
    L = np.linalg.cholesky(spd)
    return dict(A=spd, b=rng.standard_normal(n), L=L, B=rng.standard_normal((n, 32)),
                G=rng.standard_normal((n, n)))


def _rows():
    """name -> (autodiff function, numpy function, JAX function, argument names)."""
    npy_tri = (lambda L, B: sla.solve_triangular(L, B, lower=True)) if sla else None
    jx = {}
    if HAVE_JAX:
        jx = dict(cholesky=jax.jit(jnp.linalg.cholesky), solve=jax.jit(jnp.linalg.solve),
                  slogdet=jax.jit(jnp.linalg.slogdet),
                  solve_triangular=jax.jit(lambda L, B: jsla.solve_triangular(L, B, lower=True)),
                  inv=jax.jit(jnp.linalg.inv), qr=jax.jit(jnp.linalg.qr),
                  svd=jax.jit(lambda g: jnp.linalg.svd(g, full_matrices=False)))
    return {
        "cholesky": (ad.jit(anp.linalg.cholesky), np.linalg.cholesky, jx.get("cholesky"), ("A",)),
        "solve": (ad.jit(anp.linalg.solve), np.linalg.solve, jx.get("solve"), ("A", "b")),
        "slogdet": (ad.jit(anp.linalg.slogdet), np.linalg.slogdet, jx.get("slogdet"), ("A",)),
        "solve_triangular": (ad.jit(lambda L, B: anp.linalg.solve_triangular(L, B, lower=True)),
                             npy_tri, jx.get("solve_triangular"), ("L", "B")),
        "inv": (ad.jit(anp.linalg.inv), np.linalg.inv, jx.get("inv"), ("A",)),
        "qr": (ad.jit(lambda g: tuple(anp.linalg.qr(g))), np.linalg.qr, jx.get("qr"), ("G",)),
        "svd": (ad.jit(lambda g: tuple(anp.linalg.svd(g, full_matrices=False))),
                lambda g: np.linalg.svd(g, full_matrices=False), jx.get("svd"), ("G",)),
    }


def _blas_line():
    try:
        from threadpoolctl import threadpool_info
        libs = [f"{d.get('internal_api')} {d.get('version')} {d.get('architecture')} "
                f"({os.path.basename(d.get('filepath', ''))}, {d.get('num_threads')} threads)"
                for d in threadpool_info() if d.get("user_api") == "blas"]
        info = "; ".join(libs) or "no BLAS seen by threadpoolctl"
    except ImportError:
        info = "threadpoolctl missing"
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    return f"BLAS: {info}; env {env or 'clean'}"


def fmt(t):
    if t is None:
        return "-"
    return f"{t * 1e6:.1f} µs" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="200,800")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--only", default="", help="comma-separated row names")
    ap.add_argument("--markdown", default="", help="also write the table to this file")
    ap.add_argument("--threads", type=int, default=0,
                    help="BLAS threads for numpy and autodiff alike (default: each library's own)")
    args = ap.parse_args(argv)
    if args.threads:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.threads, user_api="blas")
        ad.config.update("jit_blas_threads", args.threads)
    rows = _rows()
    only = [r for r in args.only.split(",") if r]
    lines = ["| n | op | autodiff jit | numpy/scipy | JAX jit | ad/numpy | ad/JAX |",
             "|---|---|---|---|---|---|---|"]
    print(lines[0], flush=True)
    for n in (int(s) for s in args.sizes.split(",")):
        data = _inputs(n)
        for name, (adf, npf, jxf, names) in rows.items():
            if only and name not in only:
                continue
            xs = tuple(data[k] for k in names)
            t0 = time.perf_counter()
            out = adf(*xs)
            np.asarray(out[0] if isinstance(out, tuple) else out)
            compile_s = time.perf_counter() - t0
            cands = {"ad": (adf, xs)}
            if npf is not None:
                cands["np"] = (npf, xs)
            if jxf is not None:
                cands["jax"] = (lambda *a, f=jxf: jax.block_until_ready(f(*a)), xs)
            med, ratio = compare(cands, args.rounds)
            vs_np = f"{ratio['np']:.2f}x" if "np" in ratio else "-"
            vs_jax = f"{ratio['jax']:.2f}x" if "jax" in ratio else "-"
            line = (f"| {n} | {name} | {fmt(med['ad'])} | {fmt(med.get('np'))} | "
                    f"{fmt(med.get('jax'))} | {vs_np} | {vs_jax} |")
            lines.append(line)
            print(line, f"  (first call {compile_s:.1f} s)", flush=True)
    import autodiff.backends.numba_runtime as rt
    tail = [_blas_line(), f"kernels: {getattr(rt, 'LAPACK', 'hand-written loops')}, "
            f"jit_blas_threads={ad.config.jit_blas_threads!r}",
            f"python {sys.version.split()[0]}, numpy {np.__version__}"
            + (f", jax {jax.__version__}" if HAVE_JAX else ", no JAX")]
    print("\n".join(tail))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines + [""] + tail) + "\n")


if __name__ == "__main__":
    main()
