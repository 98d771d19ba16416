"""Tape overhead per recorded operation, against PyTorch eager autograd or autograd (HIPS).

    python benchmarks/tape_bench.py [--quick] [--jit]

Workloads (small arrays, so the numbers are bookkeeping, not arithmetic):
  chain  - K times ``y = sin(y) * 1.01 + 0.1`` on a 16-vector, then ``sum`` (3K+1 ops);
  mlp    - one training step of a 2-layer tanh MLP on a 64×8 batch (~10 ops).

For each, microseconds per user-level operation (best of several repeats) for:
  numpy             - the same code on numpy arrays, no differentiation;
  tape fwd          - recording on the tape (values are lazy: nothing computed yet);
  tape fwd+bwd      - recording, then ``backward()`` with the program from the graph cache
                      (which also runs the forward pass once);
  tape bwd (build)  - a cache miss: tracing and transforming the backward program;
  tape jit fwd+bwd  - with ``--jit``: the backward program compiled by ``ad.jit``
                      (compilation, seconds, happens in the untimed warm-up);
  autograd fwd+bwd  - ``autograd.grad`` (HIPS autograd), when installed;
  torch fwd+bwd     - PyTorch eager autograd, when installed.
"""
import argparse
import time

import numpy as np

import autodiff as ad
ad.config.update("jit_background_compile", False)   # time compiled kernels, not the interpreter tier
import autodiff.numpy as anp
from autodiff import tape as T

try:
    import autograd
    import autograd.numpy as agnp
except ImportError:      # optional peer
    autograd = None
try:
    import torch
except ImportError:      # optional peer
    torch = None


def timeit(fn, repeat, number):
    fn()                                     # warm up (and fill caches)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)             # the least disturbed run (timeit's advice)


# ---------------------------------------------------------------------------- chain
def chain(np_mod, y, k):
    for _ in range(k):
        y = np_mod.sin(y) * 1.01 + 0.1
    return np_mod.sum(y)


def _jit_available():
    try:
        ad.jit(lambda a: a * 2.0)(np.ones(2))
        return True
    except NotImplementedError:
        return False


def bench_chain(k, repeat, number, use_jit=False):
    x0 = np.linspace(-1.0, 1.0, 16)
    n_ops = 3 * k + 1
    res = {}
    res["numpy"] = timeit(lambda: chain(np, x0, k), repeat, number)
    x = ad.Variable(x0)

    def fwd():
        return chain(anp, x, k)

    def fwd_bwd():
        x.grad = None
        chain(anp, x, k).backward()

    res["tape fwd"] = timeit(fwd, repeat, number)
    res["tape fwd+bwd"] = timeit(fwd_bwd, repeat, number)

    def build():
        T.clear_cache()
        fwd_bwd()
    res["tape bwd (build)"] = timeit(build, max(1, repeat // 2), 1) - res["tape fwd+bwd"]
    fwd_bwd()
    g_ref = x.grad
    if use_jit:
        with T.jit_backward():
            res["tape jit fwd+bwd"] = timeit(fwd_bwd, repeat, number)
        np.testing.assert_allclose(x.grad, g_ref, rtol=1e-10)
    if autograd is not None:
        gfun = autograd.grad(lambda v: chain(agnp, v, k))
        res["autograd fwd+bwd"] = timeit(lambda: gfun(x0), repeat, number)
        np.testing.assert_allclose(gfun(x0), g_ref, rtol=1e-10)
    if torch is not None:
        xt = torch.tensor(x0, requires_grad=True)

        def tfb():
            xt.grad = None
            y = xt
            for _ in range(k):
                y = torch.sin(y) * 1.01 + 0.1
            y.sum().backward()
        res["torch fwd+bwd"] = timeit(tfb, repeat, number)
    return n_ops, res


# ---------------------------------------------------------------------------- mlp
def bench_mlp(repeat, number, use_jit=False):
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((64, 8)), rng.standard_normal((64, 1))
    p0 = [rng.standard_normal((8, 32)) * 0.3, np.zeros(32), rng.standard_normal((32, 1)) * 0.3,
          np.zeros(1)]
    n_ops = 8            # matmul, add, tanh, matmul, add, sub, square, mean

    def loss(m, W1, b1, W2, b2):
        h = m.tanh(m.dot(X, W1) + b1)
        return m.mean((m.dot(h, W2) + b2 - Y) ** 2)

    res = {"numpy": timeit(lambda: loss(np, *p0), repeat, number)}
    ps = [ad.Variable(p) for p in p0]

    def fwd_bwd():
        for p in ps:
            p.grad = None
        loss(anp, *ps).backward()
    res["tape fwd"] = timeit(lambda: loss(anp, *ps), repeat, number)
    res["tape fwd+bwd"] = timeit(fwd_bwd, repeat, number)

    def build():
        T.clear_cache()
        fwd_bwd()
    res["tape bwd (build)"] = timeit(build, max(1, repeat // 2), 1) - res["tape fwd+bwd"]
    fwd_bwd()
    g_ref = [p.grad for p in ps]
    if use_jit:
        with T.jit_backward():
            res["tape jit fwd+bwd"] = timeit(fwd_bwd, repeat, number)
        for p, g in zip(ps, g_ref):
            np.testing.assert_allclose(p.grad, g, rtol=1e-10, atol=1e-14)
    if autograd is not None:
        gfun = autograd.grad(lambda ps: loss(agnp, *ps))
        res["autograd fwd+bwd"] = timeit(lambda: gfun(p0), repeat, number)
        for a, b in zip(gfun(p0), g_ref):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)
    if torch is not None:
        pt = [torch.tensor(p, requires_grad=True) for p in p0]
        Xt, Yt = torch.tensor(X), torch.tensor(Y)

        def tfb():
            for p in pt:
                p.grad = None
            h = torch.tanh(Xt @ pt[0] + pt[1])
            torch.mean((h @ pt[2] + pt[3] - Yt) ** 2).backward()
        res["torch fwd+bwd"] = timeit(tfb, repeat, number)
    return n_ops, res


def report(name, n_ops, res):
    print(f"\n{name}: {n_ops} operations per call")
    print(f"  {'':18s} {'µs/call':>10s} {'µs/op':>8s}   vs numpy")
    base = res["numpy"]
    for k, t in res.items():
        print(f"  {k:18s} {t * 1e6:10.1f} {t * 1e6 / n_ops:8.2f}   {t / base:7.1f}x")
    if "autograd fwd+bwd" in res:
        r = res["autograd fwd+bwd"] / res["tape fwd+bwd"]
        print(f"  tape fwd+bwd is {r:.2f}x {'faster' if r > 1 else 'slower'} than autograd (HIPS)")
    if "torch fwd+bwd" in res:
        r = res["torch fwd+bwd"] / res["tape fwd+bwd"]
        print(f"  tape fwd+bwd is {r:.2f}x {'faster' if r > 1 else 'slower'} than torch eager")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    ap.add_argument("--jit", action="store_true",
                    help="also time backward programs compiled with ad.jit (compiles first)")
    a = ap.parse_args()
    use_jit = a.jit and _jit_available()
    if a.jit and not use_jit:
        print("ad.jit is not available: skipping the jit rows")
    repeat, number = (3, 3) if a.quick else (7, 20)
    peers = [n for n, m in (("autograd", autograd), ("torch", torch)) if m is not None]
    print(f"peers installed: {', '.join(peers) or 'none'}")
    for k in (10, 100):
        n_ops, res = bench_chain(k, repeat, number if k < 100 else max(1, number // 4),
                                 use_jit and k < 100)
        report(f"chain K={k}", n_ops, res)
    n_ops, res = bench_mlp(repeat, number, use_jit)
    report("mlp training step", n_ops, res)


if __name__ == "__main__":
    main()
