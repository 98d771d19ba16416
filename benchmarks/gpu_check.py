"""One prepared check of the CUDA backend on a machine with a GPU (under 5 minutes).

    python benchmarks/gpu_check.py              # on the GPU: correctness, then the table
    python benchmarks/gpu_check.py --simulate   # end to end in numba-cuda's simulator, tiny sizes
    python benchmarks/gpu_check.py --ptx        # no GPU: every kernel through the real compiler
    python benchmarks/gpu_check.py --ptx --without-row-stack   # ... as on numpy >= 2.5
    python benchmarks/gpu_check.py --ptx --compiler numba-cuda-mlir   # ... its successor
    python benchmarks/gpu_check.py --ptx-tests  # ... every kernel the CUDA tests launch

``--ptx`` closes the simulator's blind spot (it runs kernels as Python, so it never sees
numba-cuda's type checks): it runs the ``--simulate`` flow, records each kernel launched
with its argument types, then compiles every one to PTX for sm_90 (H100/H200) in a second
process without the simulator (numba-cuda compiles each as its launch on an sm_90 GPU
would, for sm_90a; then launches it over made-up device pointers with the driver call
stubbed, checks that a bound launch, backends/cuda_launcher.py, hands the driver exactly
what numba-cuda's own launch does, and prints the host time of both ways per launch).
That needs NVVM and NVRTC but no GPU
(``pip install nvidia-cuda-nvcc-cu12 nvidia-cuda-nvrtc-cu12``). ``--ptx-tests`` records
instead every kernel that tests/test_cuda_backend.py and test_cuda_launches.py launch in
the simulator (about 650: ~10 minutes on 2 cores, so not part of CI; run it after a
change to the CUDA emitter).

1. Correctness on the device: every registry case of tests/test_cuda_backend.py
   (jit(backend="cuda") against the interpreter), then the same kernels at real sizes
   (grid/block/serial reductions over 1e6 elements, a 512x512x512 matmul, a long scan).
2. Speed, side by side with JAX on the same GPU when JAX sees one, float64 and float32:
   f(x) = sum(tanh(x)*sin(x) + exp(-x*x)) and its grad at n = 1e6 and 1e8, an MLP
   784-2048-10 value_and_grad at batch 4096, a hessian at n = 1000, the gradient of an
   RK4 integration written with lax.scan, and an RNN's value_and_grad over 100 steps at
   dim 128 (a device loop) and 512 (a host loop: a cuBLAS product per step). One table
   of medians (ms), ratios
   (autodiff / JAX; the goal on an H200 is <= 1.5 on every row) and kernel launches per
   call (counted; issue 32's budget: f 1, grad f 1, MLP <= 8, hessian <= 3, RK4 <= 4);
   then each reduction shape next to CuPy's sum, then the host time of a call that is
   one launch (1 and 8 array arguments; the goal is <= 10 us) next to CuPy's and JAX's.
   ``--profile`` adds, per row, every launch's grid, block and time and the host
   remainder.

Inputs are put on the device first (ad.device_put / jax.device_put), so copies are not
timed; every timed call waits for the device (block_until_ready). The first call of each
row (compile) is not timed. Exit status 1 if a correctness check fails.
"""
import argparse
import contextlib
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--simulate", action="store_true",
                   help="run in numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1) at tiny sizes")
    p.add_argument("--reps", type=int, default=None, help="timed calls per row")
    p.add_argument("--skip-correctness", action="store_true")
    p.add_argument("--ptx", action="store_true",
                   help="simulate, recording the kernels, then compile each to PTX (no GPU)")
    p.add_argument("--ptx-tests", action="store_true",
                   help="as --ptx, over every kernel the CUDA test files launch in the "
                        "simulator (about 650; minutes: not part of CI)")
    p.add_argument("--without-row-stack", action="store_true",
                   help="remove numpy.row_stack first, as numpy >= 2.5 has none (numba-cuda "
                        "0.30.4 overloads it: backends/cuda_math.py works around that)")
    p.add_argument("--profile", action="store_true",
                   help="after each row, one call with every launch timed: each kernel's "
                        "grid, block and ms, and the host remainder")
    p.add_argument("--compiler", choices=("numba-cuda", "numba-cuda-mlir"),
                   default="numba-cuda",
                   help="with --ptx: the compiler of the second process (numba-cuda-mlir: "
                        "pip install numba-cuda-mlir 'cuda-toolkit[nvjitlink]==13.*')")
    p.add_argument("--failures", metavar="DIR",
                   help="with --ptx: write each kernel that fails to compile to DIR (its "
                        "program's source, the kernel's name and types, the whole error)")
    p.add_argument("--compile-recorded", metavar="FILE", help=argparse.SUPPRESS)
    a = p.parse_args()
    a.ptx = a.ptx or a.ptx_tests
    a.simulate = a.simulate or a.ptx
    return a


ARGS = parse()
if ARGS.compile_recorded:
    pass                                           # the second process of --ptx: no simulator
elif ARGS.simulate:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"        # before numba is imported
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

if ARGS.without_row_stack and hasattr(np, "row_stack"):   # before numba is imported
    del np.row_stack
    if "row_stack" in np.__all__:
        np.__all__.remove("row_stack")

import autodiff as ad  # noqa: E402
import autodiff.numpy as anp  # noqa: E402
from autodiff import lax  # noqa: E402

ad.config.update("jit_background_compile", False)
SIM = ARGS.simulate
REPS = ARGS.reps or (1 if SIM else 10)


def sizes():
    if SIM:
        return dict(ns=(2_000, 5_000), mlp=(16, 32, 10, 8), hess=8, scan=(16, 5), big=4_000,
                    mm=12, rnn=((16, 5),))
    return dict(ns=(1_000_000, 100_000_000), mlp=(784, 2048, 10, 4096), hess=1000,
                scan=(1_000, 200), big=1_000_000, mm=512, rnn=((128, 100), (512, 100)))


S = sizes()


# ----------------------------------------------------------------------------- part 1

def foreign_inputs(x):
    """On a GPU: CUDA arrays of other libraries (CuPy, PyTorch, when importable) go into
    a jitted function in place (``cuda_runtime.adopt``), one of them written on a stream
    of the user's own (read only after that stream's work); failures as (name, why)."""
    if SIM:
        return []
    failed = []
    f = ad.jit(lambda a, b: anp.sum(anp.tanh(a) * b, axis=0), backend="cuda")
    a, b = x[:4000].reshape(40, 100), np.cos(x[:4000]).reshape(40, 100)
    want = np.sum(np.tanh(a) * b, axis=0)
    try:
        import cupy as cp
        s = cp.cuda.Stream(non_blocking=True)
        with s:                                   # written on a stream of the user's own
            cb = cp.asarray(b) * 2.0
        checks = {"cupy": ((cp.asarray(a), cp.asarray(b)), want),
                  "cupy, another stream": ((cp.asarray(a), cb), 2.0 * want),
                  "cupy, strided": ((cp.asarray(np.asfortranarray(a)), cp.asarray(b)), want)}
    except ImportError:
        checks = {}
    try:
        import torch
        if torch.cuda.is_available():
            checks["torch"] = ((torch.as_tensor(a, device="cuda"),
                                torch.as_tensor(b, device="cuda")), want)
    except ImportError:
        pass
    for name, (args, ref) in checks.items():
        try:
            np.testing.assert_allclose(np.asarray(f(*args)), ref, rtol=1e-12, atol=1e-12)
        except Exception as e:  # noqa: BLE001 - reported in the summary
            failed.append((f"foreign input: {name}", f"{type(e).__name__}: {str(e)[:300]}"))
    print(f"foreign inputs: {len(checks) - len(failed)} of {len(checks)} agree "
          f"({', '.join(checks) or 'neither CuPy nor PyTorch importable'})")
    return failed


def correctness():
    import importlib.util
    tests = os.path.join(ROOT, "tests")
    if tests not in sys.path:          # the cases import the op records (tests/op_records/)
        sys.path.insert(0, tests)
    path = os.path.join(tests, "test_cuda_backend.py")
    spec = importlib.util.spec_from_file_location("cuda_cases", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    failed = []
    t0 = time.perf_counter()
    cases = m._cases()
    for name, case in sorted(cases.items()):
        try:
            m.check(case["fn"], case["sets"], name=None, **case["kw"])
        except Exception as e:  # noqa: BLE001 - reported in the summary
            failed.append((name, f"{type(e).__name__}: {str(e)[:300]}"))
    rng = np.random.default_rng(0)
    n = S["big"]
    x = rng.uniform(-2, 2, n)
    big = {
        "grid sum": (lambda v: anp.sum(anp.exp(v) * anp.sin(v)), (x,)),
        "block rows": (lambda v: anp.max(anp.tanh(v), axis=1), (x.reshape(-1, 100 if n >= 100 else 1),)),
        "serial mixed": (lambda v: (anp.sum(v, axis=0), anp.mean(v, axis=1)), (x.reshape(-1, 10),)),
        "matmul": (lambda a, b: a @ b, (rng.normal(size=(S["mm"], S["mm"])),
                                        rng.normal(size=(S["mm"], S["mm"] + 3)))),
        "scan": (lambda v: lax.scan(lambda c, t: (c * 0.999 + anp.sin(t), anp.sum(c)), v[:10],
                                    v[: 10 * (len(v) // 10)].reshape(-1, 10))[0], (x,)),
    }
    def stepwise(h0, xs):
        # a device loop that indexes at its step, updates a carry's row and one element
        # (a rank-0 scatter; its gradient a rank-0 gather), branches, carries a constant
        def body(i, c):
            h, ys, loss, one = c
            h = lax.cond(xs[i, 0] > 0, lambda h: anp.tanh(h + xs[i]), lambda h: h * 0.5, h)
            return h, ys.at[i].set(h * 2.0), loss.at[i].set(anp.sum(h * h)), 1.0
        h, ys, loss, one = lax.fori_loop(
            0, xs.shape[0], body, (h0, anp.zeros_like(xs), anp.zeros(xs.shape[0]), 0.0))
        return anp.sum(h) + anp.sum(ys * ys) + anp.sum(loss * loss) * one
    big["device loop: cond, xs[i], .at[i].set"] = (
        ad.value_and_grad(stepwise, argnums=(0, 1)), (x[:10], x[:60].reshape(6, 10)))
    # a complex gather's gradient (a complex scatter_add: atomics on the parts), sorts
    # (rank kernels) in a scan, an argsort of a long lane (CuPy, else the host)
    z = x[:64] + 1j * x[64:128]
    ix = rng.integers(0, 64, size=300)
    big["complex scatter_add"] = (
        ad.grad(lambda z: anp.sum(anp.abs(z[ix] * z[ix[::-1]]) ** 2)), (z,))
    big["sorts"] = (lambda v: (lax.scan(lambda c, r: (anp.sort(c * r), anp.argsort(c)[0]),
                                        v[:50], v[:500].reshape(10, 50)),
                               anp.argsort(v[:5000])), (x,))
    # a device loop of many rank-0 temporaries: elements of scratch arrays the kernel
    # views, and past 4 kB of kernel parameters (the gradient's residuals)
    def scalars(h0, xs):
        def body(i, c):
            h, v, a = c
            k = i % 5
            v = v.at[k].multiply(h[5 - k]).at[-k].min(1.5).at[(k + 2) % 6].add(h[k] * a)
            h = anp.tanh(h * 0.9 + xs[i] * v[k])
            return h, v.at[i % 3].set(v[(i + 1) % 6] - a), a * 1.01 + h[2]
        h, v, a = lax.fori_loop(0, xs.shape[0], body, (h0, h0 * 0.5, 0.3))
        return anp.sum(h) + anp.sum(v * v) + a
    big["device loop: many scalars"] = (ad.value_and_grad(scalars, argnums=(0, 1)),
                                        (x[:6] * 0.3, x[:42].reshape(7, 6)))
    big["device loop: a while in a scan"] = (
        ad.value_and_grad(m.while_in_scan, argnums=(0, 1)), (x[:6], x[:42].reshape(7, 6)))
    # chains of row reductions and per-row maps: one row loop (cuda_launches._row_local),
    # a block per row (rows of 100 in the simulator) and a group of lanes per row (rows
    # of 20), too many rows for one block
    def layernorm(v, g):
        m = anp.mean(v, axis=-1, keepdims=True)
        c = v - m
        return anp.sum(anp.tanh(c / anp.sqrt(anp.mean(c * c, axis=-1, keepdims=True) + 1e-5)
                                * g))
    big["layer norm gradient"] = (ad.grad(layernorm, argnums=(0, 1)),
                                  (rng.normal(size=(200, 100)), rng.normal(size=100)))
    big["layer norm gradient, short rows"] = (ad.grad(layernorm, argnums=(0, 1)),
                                              (rng.normal(size=(300, 20)),
                                               rng.normal(size=20)))
    # a vector's argmax (one index, left in a device buffer) in a loop: greedy decoding
    def decode(h0, E):
        def step(h, _):
            h = anp.tanh(E @ h + 0.1)
            t = anp.argmax(h)
            return h + E[t], (t, h[t], anp.argmin(h))
        h, (ts, best, worst) = lax.scan(step, h0, None, length=7)
        return anp.sum(h * h) + anp.sum(best), ts, worst
    big["argmax of a vector in a loop"] = (decode, (x[:16], rng.normal(size=(16, 16)) / 4))
    # argmax/argmin of long lanes, each strategy and dtype: one lane over every block
    # (the last block combines), a block per lane, a group of lanes (a warp) per lane
    from autodiff.backends.cuda_runtime import ROW_GROUP, TPB
    wb, wr = TPB + 37, 3 * ROW_GROUP + 1
    lanes = (x, x[:wb * 40].reshape(40, wb), x[:wr * 90].reshape(90, wr))

    def arg_ext(a, b, c):
        out = []
        for v, ax in zip((a, b, c), (0, 1, 1)):
            for w in (v, v.astype(np.float32), anp.floor(v * 3).astype(np.int32), v > 1.0):
                out += [anp.argmax(w, axis=ax), anp.argmin(w, axis=ax)]
        return out
    big["argmax/argmin of long lanes"] = (arg_ext, lanes)
    # small solves and factorizations as kernels (a block per system), batched, and a
    # Kalman filter's log likelihood in a scan (one device loop) with its gradient
    from autodiff.primitives.linalg import triangular_solve
    sa = rng.normal(size=(64, 8, 8)) + 8 * np.eye(8)
    sb = rng.normal(size=(64, 8, 3))
    big["small solves"] = (lambda a, b: (
        anp.linalg.solve(a, b), anp.linalg.cholesky(a @ anp.swapaxes(a, 1, 2)),
        triangular_solve(a, b, left_side=True, lower=False, transpose_a=True),
        triangular_solve(a, anp.swapaxes(b, 1, 2), left_side=False, lower=True),
        anp.linalg.slogdet(a - 8 * anp.eye(8)), anp.linalg.det(a[0])), (sa, sb))
    big["small solves, float32"] = (lambda a, b: (
        anp.linalg.solve(a, b), anp.linalg.cholesky(a @ anp.swapaxes(a, 1, 2))),
        (sa.astype(np.float32), sb.astype(np.float32)), 1e-4)
    kf_h = rng.normal(size=(2, 4))

    def kalman(q, ys):
        def step(c, y):
            mu, P = c
            P = 0.9 * P + anp.eye(4) * q
            S = kf_h @ P @ kf_h.T + anp.eye(2) * 0.2
            L = anp.linalg.cholesky(S)
            r = y - kf_h @ mu
            a = triangular_solve(L, r[:, None], left_side=True, lower=True)
            K = anp.linalg.solve(S, kf_h @ P).T
            return (mu + K @ r, P - K @ kf_h @ P), -0.5 * anp.sum(a * a) - anp.sum(
                anp.log(anp.diagonal(L)))
        return anp.sum(lax.scan(step, (anp.zeros(4), anp.eye(4)), ys)[1])
    big["Kalman filter scan gradient"] = (ad.value_and_grad(kalman),
                                          (0.3, rng.normal(size=(30, 2))))
    # cumulative ops of long lanes: a block per lane (chunks, their totals, chunks again);
    # one lane past CUMULATIVE_GRID_MIN over the grid (segments, then their starts)
    big["cumulative ops, long lanes"] = (lambda v: (
        anp.cumsum(v), lax.cummax(v[:3000].reshape(5, 600), axis=1),
        lax.cummin(anp.concatenate([v, v, v]), reverse=True),
        anp.cumprod(1.0 + v[:1200] * 1e-3), lax.cumsum(v[:2400].reshape(600, 4), axis=0,
                                                        reverse=True)), (x,))
    big["cumulative ops, long lanes, float32"] = (
        lambda v: (anp.cumsum(v), lax.cummin(v, reverse=True)),
        (x[:3000].astype(np.float32),), 1e-3)
    k = 48                                     # 48 ** 3 products: more than LOOP_MAX
    big["matrix-shaped sum"] = (lambda a, b: anp.sum(a[:, :, None] * b[None], axis=1),
                                (rng.normal(size=(k, k)), rng.normal(size=(k, k + 1))))
    d = 16
    big["RNN host loop"] = (ad.value_and_grad(rnn_ad(anp, lax.scan), argnums=(0, 2)),
                            ((rng.normal(size=(d, d)) / 4), np.zeros(d),
                             rng.normal(size=(12, d))))
    # the RNN as a host loop (its product a cuBLAS call per step, the rows of xs and of
    # the outputs read and written in place), as a larger one would be
    old = ad.config.jit_cuda_loop_products
    ad.config.update("jit_cuda_loop_products", False)
    try:
        for name, (fn, args, *tol) in big.items():      # (a float32 case: its tolerance)
            try:
                m.check(fn, [args], rtol=tol[0] if tol else 1e-9,
                        atol=tol[0] if tol else 1e-9)
            except Exception as e:  # noqa: BLE001
                failed.append((name, f"{type(e).__name__}: {str(e)[:300]}"))
    finally:
        ad.config.update("jit_cuda_loop_products", old)
    failed += foreign_inputs(x)
    dt = time.perf_counter() - t0
    print(f"correctness: {len(cases)} registry cases + {len(big)} real-size checks on "
          f"{ad.devices('cuda')[0]}: {len(failed)} failed ({dt:.1f} s)")
    for name, why in failed:
        print(f"  FAILED {name}: {why}")
    return not failed


# ----------------------------------------------------------------------------- part 2

def f_ad(x):
    return anp.sum(anp.tanh(x) * anp.sin(x) + anp.exp(-x * x))


def mlp_ad(params, x, y):
    (w1, b1), (w2, b2) = params
    h = anp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = logits - ad.nn.logsumexp(logits, axis=1, keepdims=True)
    return -anp.mean(anp.sum(logp * y, axis=1))


def rk4_ad(np_mod, scan):
    def loss(y0, k):
        def step(y, _):
            f = lambda y: -k * y + np_mod.sin(y)      # noqa: E731
            h = 0.01
            k1 = f(y)
            k2 = f(y + h / 2 * k1)
            k3 = f(y + h / 2 * k2)
            k4 = f(y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        y, _ = scan(step, y0, None, length=S["scan"][1])
        return np_mod.sum(y * y)
    return loss


def rnn_ad(np_mod, scan):
    """An RNN over a sequence: at dim 128 a device loop (the product a loop nest of the
    loop's kernel), at dim 512 a host loop (a cuBLAS product per step, the body reading
    its input row and writing its per-step outputs in place)."""
    def loss(W, h0, xs):
        def step(h, x):
            h = np_mod.tanh(W @ h + x)
            return h, np_mod.sum(h * h)
        h, ls = scan(step, h0, xs)
        return np_mod.sum(ls) + np_mod.sum(h)
    return loss


def timed(fn, args, wait):
    wait(fn(*args))                                    # compile + first run, not timed
    ts = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        wait(fn(*args))
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def jax_setup():
    if SIM:
        return None
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        if not jax.devices("gpu"):
            return None
        return jax
    except Exception:  # noqa: BLE001 - no JAX, or no GPU for it
        return None


def rows(jax):
    rng = np.random.default_rng(0)
    out = []
    d_in, d_h, d_out, batch = S["mlp"]
    for dt in (np.float64, np.float32):
        tag = "f64" if dt == np.float64 else "f32"
        for n in S["ns"]:
            x = rng.uniform(-2, 2, n).astype(dt)
            out.append((f"f(x) n={n:.0e} {tag}", ad.jit(f_ad, backend="cuda"), (x,),
                        "f", (x,)))
            out.append((f"grad f n={n:.0e} {tag}", ad.jit(ad.grad(f_ad), backend="cuda"),
                        (x,), "grad f", (x,)))
        params = ((rng.normal(size=(d_in, d_h)).astype(dt) * 0.03, np.zeros(d_h, dt)),
                  (rng.normal(size=(d_h, d_out)).astype(dt) * 0.03, np.zeros(d_out, dt)))
        xb = rng.normal(size=(batch, d_in)).astype(dt)
        yb = np.eye(d_out, dtype=dt)[rng.integers(0, d_out, size=batch)]
        out.append((f"MLP {d_in}-{d_h}-{d_out} value_and_grad b={batch} {tag}",
                    ad.jit(ad.value_and_grad(mlp_ad), backend="cuda"), (params, xb, yb),
                    "mlp", (params, xb, yb)))
        xh = rng.uniform(-1, 1, S["hess"]).astype(dt)
        out.append((f"hessian n={S['hess']} {tag}", ad.jit(ad.hessian(f_ad), backend="cuda"),
                    (xh,), "hess", (xh,)))
        y0 = rng.uniform(-1, 1, S["scan"][0]).astype(dt)
        k = dt(0.7)
        out.append((f"RK4 scan grad dim={S['scan'][0]} steps={S['scan'][1]} {tag}",
                    ad.jit(ad.grad(rk4_ad(anp, lax.scan), argnums=(0, 1)), backend="cuda"),
                    (y0, k), "rk4", (y0, k)))
        for d, steps in S["rnn"]:
            W = (rng.normal(size=(d, d)) / np.sqrt(d)).astype(dt)
            h0, xs = np.zeros(d, dt), rng.normal(size=(steps, d)).astype(dt)
            out.append((f"RNN scan value_and_grad dim={d} steps={steps} {tag}",
                        ad.jit(ad.value_and_grad(rnn_ad(anp, lax.scan), argnums=(0, 2)),
                               backend="cuda"), (W, h0, xs), "rnn", (W, h0, xs)))
    return out


def jax_fn(jax, kind):
    import jax.numpy as jnp

    def f(x):
        return jnp.sum(jnp.tanh(x) * jnp.sin(x) + jnp.exp(-x * x))

    def mlp(params, x, y):
        (w1, b1), (w2, b2) = params
        h = jnp.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        logp = logits - jax.scipy.special.logsumexp(logits, axis=1, keepdims=True)
        return -jnp.mean(jnp.sum(logp * y, axis=1))
    return jax.jit({"f": f, "grad f": jax.grad(f), "mlp": jax.value_and_grad(mlp),
                    "hess": jax.hessian(f),
                    "rk4": jax.grad(rk4_ad(jnp, jax.lax.scan), argnums=(0, 1)),
                    "rnn": jax.value_and_grad(rnn_ad(jnp, jax.lax.scan),
                                              argnums=(0, 2))}[kind])


#: kernel launches per call the backend must stay within (issue 32), by row kind (the
#: RNN at dim 512 is a host loop, a few launches per step: reported, no budget)
LAUNCH_BUDGET = {"f": 1, "grad f": 1, "mlp": 8, "hess": 3, "rk4": 4, "rnn": None}


def launches(fn, args, label):
    """Kernel launches of one call (counted; timed per launch with --profile)."""
    from autodiff.backends.cuda_runtime import count_launches
    t0 = time.perf_counter()
    with count_launches(profile=ARGS.profile) as n:
        ad.block_until_ready(fn(*args))
    wall = (time.perf_counter() - t0) * 1e3
    if ARGS.profile:
        print(f"\n{label}: {n.total} launches, {wall:.3f} ms with a sync around each")
        for name, grid, block, ms in n.records:
            geo = "library call" if grid is None else f"grid {grid} block {block}"
            print(f"  {name:<16} {geo:<34} {ms:9.3f} ms")
        print(f"  host remainder {wall - sum(r[3] for r in n.records):9.3f} ms")
    return n.total


def reductions():
    """Each reduction shape the backend has (one value, rows, short rows, columns) next to
    CuPy's ``sum`` on the same device arrays, when CuPy is there: medians (ms), launches."""
    from autodiff.backends import cuda_runtime as rt
    cp = rt.cupy()
    n, (r, c) = S["ns"][0], ((4096, 2048) if not SIM else (64, 70))
    rng = np.random.default_rng(1)
    short = (4096, 100) if not SIM else (64, 20)        # rows of a warp's "rows" strategy
    shapes = [("sum of everything", (n,), None), ("row sums", (r, c), 1),
              ("short row sums", short, 1), ("column sums", (r, c), 0)]
    print(f"\n{'reduction (float64)':<32}  {'autodiff ms':>11}  {'CuPy ms':>9}  {'ratio':>6}  "
          f"{'launches':>8}")
    for label, shape, axis in shapes:
        x = rng.uniform(-1, 1, shape)
        fn = ad.jit(lambda v, axis=axis: anp.sum(v, axis=axis), backend="cuda")
        dx = ad.device_put(x, "cuda")
        ours = timed(fn, (dx,), ad.block_until_ready)
        nl = launches(fn, (dx,), label)
        theirs = ratio = ""
        if cp is not None:
            cx = cp.asarray(x)
            t = timed(lambda v: cp.sum(v, axis=axis), (cx,),
                      lambda _: cp.cuda.get_current_stream().synchronize())
            theirs, ratio = f"{t:9.3f}", f"{ours / t:6.2f}"
        print(f"{label + ' ' + 'x'.join(map(str, shape)):<32}  {ours:11.3f}  {theirs:>9}  "
              f"{ratio:>6}  {nl:>8}")


def launch_cost(jax):
    """Host time per call of a program that is one launch (``tanh`` of 1 or 8 arrays of
    1,024 elements, summed: one fused map kernel), next to CuPy's and JAX's: many calls
    queued without waiting, then one wait, over their number (microseconds). It
    includes jit's dispatch and the result's allocation: what a user's call costs on the
    host. Issue 32's goal is <= 10 us of host time per launch. The "numba path" column
    is the same call with ``jit_cuda_bound_launches`` off (numba-cuda's own launch),
    side by side in one run."""
    from autodiff.backends import cuda_runtime as rt
    cp = rt.cupy()
    calls = 20 if SIM else 2000
    rng = np.random.default_rng(2)
    print(f"\n{'one launch, host us per call':<32}  {'autodiff':>9}  {'numba path':>10}  "
          f"{'CuPy':>9}  {'JAX':>9}  {'launches':>8}")

    def per_call(fn, args, wait):
        wait(fn(*args))
        t0 = time.perf_counter()
        for _ in range(calls):
            out = fn(*args)
        wait(out)
        return (time.perf_counter() - t0) / calls * 1e6

    def total(*v):
        out = v[0]
        for a in v[1:]:
            out = out + a
        return out
    for k in (1, 8):
        xs = [rng.uniform(-1, 1, 1024) for _ in range(k)]
        fn = ad.jit(lambda *v: total(*[anp.tanh(a) for a in v]), backend="cuda")
        dxs = ad.device_put(xs, "cuda")
        ours = per_call(fn, dxs, ad.block_until_ready)
        ad.config.update("jit_cuda_bound_launches", False)
        try:
            unbound = per_call(fn, dxs, ad.block_until_ready)
        finally:
            ad.config.update("jit_cuda_bound_launches", True)
        nl = launches(fn, dxs, f"{k} arrays")
        theirs = jaxs = ""
        if cp is not None:
            cx = [cp.asarray(x) for x in xs]
            t = per_call(lambda *v: total(*[cp.tanh(a) for a in v]), cx,
                         lambda _: cp.cuda.get_current_stream().synchronize())
            theirs = f"{t:9.1f}"
        if jax is not None:
            jf = jax.jit(lambda *v: total(*[jax.numpy.tanh(a) for a in v]))
            ja = jax.device_put(xs, jax.devices("gpu")[0])
            jaxs = f"{per_call(jf, ja, jax.block_until_ready):9.1f}"
        print(f"{f'{k} array argument(s)':<32}  {ours:9.1f}  {unbound:10.1f}  {theirs:>9}  "
              f"{jaxs:>9}  {nl:>8}")


def speed():
    jax = jax_setup()
    table = []
    over = []
    for label, fn, args, kind, jargs in rows(jax):
        dargs = ad.device_put(args, "cuda")
        try:
            ours = timed(fn, dargs, ad.block_until_ready)
            nl = launches(fn, dargs, label)
        except Exception as e:  # noqa: BLE001 - a row that fails is reported, not fatal
            table.append((label, f"error: {type(e).__name__}: {str(e)[:80]}", "", "", ""))
            continue
        if LAUNCH_BUDGET[kind] is not None and nl > LAUNCH_BUDGET[kind]:
            over.append(f"{label}: {nl} launches (budget {LAUNCH_BUDGET[kind]})")
        theirs = ratio = ""
        if jax is not None:
            jf = jax_fn(jax, kind)
            ja = jax.device_put(jargs, jax.devices("gpu")[0])
            t = timed(jf, ja, lambda r: jax.block_until_ready(r))
            theirs, ratio = f"{t:10.3f}", f"{ours / t:6.2f}"
        table.append((label, f"{ours:10.3f}", theirs, ratio, str(nl)))
    w = max(len(r[0]) for r in table)
    print(f"\n{'row':<{w}}  {'autodiff ms':>11}  {'JAX ms':>10}  {'ratio':>6}  {'launches':>8}")
    for r in table:
        print(f"{r[0]:<{w}}  {r[1]:>11}  {r[2]:>10}  {r[3]:>6}  {r[4]:>8}")
    for o in over:
        print(f"  over the launch budget: {o}")
    if jax is None:
        print("(JAX with a GPU not importable here: autodiff column only)")
    reductions()
    launch_cost(jax)


# ----------------------------------------------------------------------------- --ptx

def record_kernels():
    """Wrap every generated kernel so each launch records (module source, name, types)."""
    import numba
    from autodiff.backends import numba_cuda as nc
    seen = {}

    def typ(a):
        return numba.typeof(a._ary if hasattr(a, "_ary") else a)   # simulator arrays

    class Recorder:
        def __init__(self, k, src, name):
            self.k, self.src, self.name = k, src, name

        def __getitem__(self, cfg):
            launch = self.k[cfg]

            def call(*args):
                seen.setdefault((self.src, self.name, tuple(typ(a) for a in args)), None)
                return launch(*args)
            return call

        def __getattr__(self, attr):          # py_func, ... as the kernel's
            return getattr(self.k, attr)
    load = nc.load

    def recording_load(source):
        mod = load(source)
        for n in list(vars(mod)):
            if n.startswith("_k") and not isinstance(getattr(mod, n), Recorder):
                setattr(mod, n, Recorder(getattr(mod, n), source, n))
        return mod
    nc.load = recording_load
    return seen


def _mlir_types(sig):
    """numba types (as recorded) as numba-cuda-mlir's own types, by name."""
    from numba import types as nt
    from numba_cuda_mlir.numba_cuda import types as mt

    def conv(x):
        if isinstance(x, nt.Array):
            return mt.Array(conv(x.dtype), x.ndim, x.layout)
        if isinstance(x, nt.UniTuple):
            return mt.UniTuple(conv(x.dtype), x.count)
        return getattr(mt, str(x))
    return tuple(conv(x) for x in sig)


def compile_recorded(path, cc=(9, 0)):
    """The second process of --ptx: compile each recorded kernel (and the runtime's own
    kernels) with the real compiler; returns the number of failures."""
    import pickle
    import types as pytypes
    from numba import types as t
    from autodiff.backends import cuda_math
    from autodiff.backends import cuda_runtime as rt
    cuda = cuda_math.cuda
    mlir = cuda_math.COMPILER == "numba-cuda-mlir"
    if mlir:                        # its compile_ptx asks the driver for the host's GPU
        from numba_cuda_mlir import tools as _tools
        _tools._cached_cc = cc      # (an internal cache: there is no driver here)
        conv = _mlir_types
    else:
        from numba.cuda import dispatcher as _disp

        class _Device:              # numba-cuda compiles a device function a kernel calls
            compute_capability = cc     # for the current device's cc, which asks the
        _disp.get_current_device = _Device   # driver: there is none, so it is told sm_90

        def conv(sig):
            return sig
    has = "present" if hasattr(np, "row_stack") else "absent"
    print(f"compiling with {cuda_math.COMPILER}, numpy {np.__version__}, "
          f"numpy.row_stack {has}")
    with open(path, "rb") as f:
        recs = pickle.load(f)
    mods, failed, compiled = {}, [], []
    if mlir:
        stub = contextlib.nullcontext()
    else:       # numba-cuda compiles each kernel as its launch would on an sm_90 GPU
        sys.path.insert(0, os.path.join(ROOT, "tests"))   # (the kernel the bound-launch
        from test_cuda_launcher import stub_driver        # check below launches)
        stub = stub_driver(cc)
    with stub:
        for src, name, sig in recs:
            m = mods.get(src)
            if m is None:
                m = mods[src] = pytypes.ModuleType("autodiff_cuda_program")
                exec(compile(src, "<program>", "exec"), m.__dict__)
            try:
                k = getattr(m, name)
                if mlir:
                    cuda.compile_ptx(getattr(k, "py_func", k), conv(sig), cc=cc)
                else:
                    k.compile(sig)
                compiled.append((k, sig))
            except Exception as e:  # noqa: BLE001 - reported
                why = (str(e).strip().splitlines() or [type(e).__name__])[0]
                failed.append((name, sig, f"{type(e).__name__}: {why}"[:300]))
                if ARGS.failures:
                    _write_failure(ARGS.failures, len(failed), src, name, sig, e)
    extra = 0
    for kind, dt in (("f", t.float64), ("f", t.float32), ("i", t.int64), ("i", t.int32),
                     ("c", t.complex128), ("c", t.complex64)):
        a = dt[:, :, ::1]
        k = rt._matmul_kernel(kind)
        cuda.compile_ptx(getattr(k, "py_func", k), conv((a, a, a, t.boolean, t.boolean)),
                         cc=cc)
        extra += 1
    for r in (1, 2, 3, 4):
        k = rt._permute_kernel
        cuda.compile_ptx(getattr(k, "py_func", k),
                         conv((t.float64[::1], t.float64[::1], t.UniTuple(t.int64, r),
                               t.UniTuple(t.int64, r), t.int64)), cc=cc)
        extra += 1
    arch = f"sm_{cc[0]}{cc[1]}" + ("" if mlir or cc < (9, 0) else "a")   # numba-cuda's
    print(f"ptx ({arch}): {len(recs) - len(failed)} of {len(recs)} recorded "
          f"kernels and {extra} runtime kernels compiled")
    for name, sig, why in failed:
        print(f"  FAILED {name}{sig}: {why}")
    bad = 0 if mlir else bound_launches(compiled)
    return len(failed) + bad


def bound_launches(compiled):
    """Every recorded kernel compiled by numba-cuda (NVVM, the driver call stubbed) and
    launched both ways over device arrays of its types (made-up pointers): numba-cuda's
    own launch and cuda_launcher's bound one must hand the driver the same call. Prints
    the host time of each way per launch; returns the number of disagreements."""
    import warnings
    from test_cuda_launcher import fake_args, launch_both, stub_driver
    from autodiff.backends.cuda_launcher import BoundKernel
    warnings.simplefilter("ignore")              # numba-cuda's small-grid warning
    n = fast = 0
    bad, skipped, t_numba, t_bound = [], 0, [], []
    with stub_driver():
        from numba.cuda import dispatcher as nd
        for k, sig in compiled:
            args = fake_args(sig)
            if args is None:
                skipped += 1
                continue
            (theirs, first, second), b = launch_both(k, 7, 64, args)
            n += 1
            fast += b.fast
            if not (first == theirs == second):
                bad.append((k.py_func.__name__, sig))
            saved, nd.launch = nd.launch, lambda *a: None
            try:
                bk = BoundKernel(k)
                bk[7, 64](*args)
                for way, fn, acc in (("numba", k[7, 64], t_numba), ("bound", bk[7, 64], t_bound)):
                    t0 = time.perf_counter()
                    for _ in range(200):
                        fn(*args)
                    acc.append((time.perf_counter() - t0) / 200 * 1e6)
            finally:
                nd.launch = saved
    print(f"bound launches: {n - len(bad)} of {n} kernels hand the driver what numba-cuda's "
          f"launch does ({fast} on the short path; {skipped} not launched: types not made "
          f"here)")
    if n:
        print(f"host time per launch, driver call stubbed (median over kernels): numba-cuda "
              f"{statistics.median(t_numba):.1f} us, bound {statistics.median(t_bound):.1f} "
              f"us (max {max(t_numba):.1f} / {max(t_bound):.1f})")
    for name, sig in bad:
        print(f"  DIFFERENT {name}{sig}")
    return len(bad)


def _write_failure(folder, n, src, name, sig, err):
    import traceback
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{n:03d}_{name}.txt")
    with open(path, "w") as f:
        f.write(f"# kernel {name}{sig}\n# error:\n")
        f.write("".join(traceback.format_exception(err)))
        f.write("\n# the program's source:\n" + src)
    print(f"  (written to {path})")


def ptx():
    import pickle
    import subprocess
    import tempfile
    seen = record_kernels()
    if ARGS.ptx_tests:
        import pytest
        tests = [os.path.join(ROOT, "tests", n)
                 for n in ("test_cuda_backend.py", "test_cuda_launches.py")]
        ok = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]) == 0
    else:
        ok = correctness()
        speed()
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        pickle.dump(list(seen), f)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["AUTODIFF_CUDA_COMPILER"] = ARGS.compiler
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-recorded",
                        f.name] + (["--without-row-stack"] if ARGS.without_row_stack else [])
                       + (["--failures", ARGS.failures] if ARGS.failures else []), env=env)
    os.unlink(f.name)
    return ok and r.returncode == 0


def main():
    if ARGS.compile_recorded:
        return 1 if compile_recorded(ARGS.compile_recorded) else 0
    if ARGS.ptx:
        t0 = time.perf_counter()
        ok = ptx()
        print(f"\ntotal {time.perf_counter() - t0:.1f} s")
        return 0 if ok else 1
    t0 = time.perf_counter()
    print(f"devices: {ad.devices()}  simulator: {SIM}")
    ok = True if ARGS.skip_correctness else correctness()
    speed()
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
