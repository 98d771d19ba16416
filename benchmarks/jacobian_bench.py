"""Jacobian-family and vmap benchmarks against JAX (and autograd) when installed.

    python benchmarks/jacobian_bench.py [--quick] [--repeat N]

Cases (float64 everywhere; JAX runs with ``jax_enable_x64``):
  hessian n=200, n=1000   ``hessian(lambda x: sum(sin(x) ** 3))(x)``
  per-example grads       ``vmap(grad(loss), in_axes=(None, 0, 0))`` for a 32-64-10 tanh
                          MLP over a batch of 256

For each case prints the best wall time of several calls (after one warm-up call;
the minimum is the figure least disturbed by other processes on a shared machine) for: autodiff called directly ("eager": trace, transform, run with numpy),
``ad.jit`` of the same function when jit is available, JAX without and with
``jax.jit``, and autograd. The ratio columns are autodiff-eager time divided by the
other library's time (> 1: autodiff is slower); "autodiff jit / jax jit" compares
the compiled forms. Results go to stdout as a Markdown
table; see benchmarks/RESULTS_jacobian.md for a recorded run.
"""
import argparse
import sys
import time

import numpy as np

import autodiff as ad
ad.config.update("jit_background_compile", False)   # time compiled kernels, not the interpreter tier
import autodiff.numpy as anp


def _best_time(fn, repeat, min_time=0.2):
    fn()                                   # warm-up (imports, first-call caches)
    times = []
    t_end = time.perf_counter() + min_time
    while len(times) < repeat or time.perf_counter() < t_end:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        if len(times) >= 50 * repeat:
            break
    return min(times)


# ---------------------------------------------------------------------------
# the cases, written once per numpy-like namespace
# ---------------------------------------------------------------------------

def sin_cubed(np_):
    return lambda x: np_.sum(np_.sin(x) ** 3)


def mlp_loss(np_):
    def loss(params, x, y):
        (W1, b1), (W2, b2) = params
        h = np_.tanh(x @ W1 + b1)
        return np_.sum((h @ W2 + b2 - y) ** 2)
    return loss


def mlp_data(batch=256, d_in=32, hidden=64, d_out=10):
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(d_in, hidden)) / np.sqrt(d_in), np.zeros(hidden)),
              (rng.normal(size=(hidden, d_out)) / np.sqrt(hidden), np.zeros(d_out))]
    return params, rng.normal(size=(batch, d_in)), rng.normal(size=(batch, d_out))


def cases(quick):
    """(name, {library: zero-argument callable or None}, check(result_by_library))."""
    out = []
    sizes = [200] if quick else [200, 1000]
    jax, jnp = _jax()
    for n in sizes:
        x = np.linspace(-1.0, 1.0, n)
        ours = ad.hessian(sin_cubed(anp))
        runs = {"autodiff": lambda ours=ours, x=x: ours(x)}
        runs["autodiff jit"] = _ad_jit(lambda: ad.jit(ours), x)
        if jax is not None:
            jh = jax.hessian(sin_cubed(jnp))
            jj = jax.jit(jh)
            runs["jax"] = lambda jh=jh, x=x: jh(x).block_until_ready()
            runs["jax jit"] = lambda jj=jj, x=x: jj(x).block_until_ready()
        ag = _autograd()
        if ag is not None and n <= 200:
            agh = ag[0].hessian(sin_cubed(ag[1]))
            runs["autograd"] = lambda agh=agh, x=x: agh(x)
        out.append((f"hessian sum(sin(x)**3), n={n}", runs))
    params, xs, ys = mlp_data()
    ours = ad.vmap(ad.grad(mlp_loss(anp)), in_axes=(None, 0, 0))
    runs = {"autodiff": lambda: ours(params, xs, ys)}
    runs["autodiff jit"] = _ad_jit(lambda: ad.jit(ours), params, xs, ys)
    if jax is not None:
        jf = jax.vmap(jax.grad(mlp_loss(jnp)), in_axes=(None, 0, 0))
        jj = jax.jit(jf)
        runs["jax"] = lambda: jax.block_until_ready(jf(params, xs, ys))
        runs["jax jit"] = lambda: jax.block_until_ready(jj(params, xs, ys))
    out.append(("per-example grads, MLP 32-64-10, batch 256", runs))
    return out


def _ad_jit(make, *args):
    """A callable running ``ad.jit`` of the function, or None when jit is not available."""
    try:
        f = make()
        f(*args)
    except NotImplementedError:
        return None
    return lambda: f(*args)


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def _autograd():
    try:
        import autograd
        import autograd.numpy as agnp
    except ImportError:
        return None
    return autograd, agnp


def check_agreement():
    """The libraries compute the same numbers (a benchmark of wrong answers is worthless)."""
    jax, jnp = _jax()
    x = np.linspace(-1.0, 1.0, 50)
    H = ad.hessian(sin_cubed(anp))(x)
    s, c = np.sin(x), np.cos(x)
    np.testing.assert_allclose(H, np.diag(6 * s * c ** 2 - 3 * s ** 3), rtol=1e-12, atol=1e-12)
    params, xs, ys = mlp_data(batch=8)
    ours = ad.vmap(ad.grad(mlp_loss(anp)), in_axes=(None, 0, 0))(params, xs, ys)
    if jax is not None:
        np.testing.assert_allclose(H, np.asarray(jax.hessian(sin_cubed(jnp))(x)), atol=1e-12)
        theirs = jax.vmap(jax.grad(mlp_loss(jnp)), in_axes=(None, 0, 0))(params, xs, ys)
        for a, b in zip(ad.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    check_agreement()
    libs = ["autodiff", "autodiff jit", "jax", "jax jit", "autograd"]
    rows = []
    for name, runs in cases(args.quick):
        t = {lib: (_best_time(fn, args.repeat) if fn is not None else None)
             for lib, fn in runs.items()}
        rows.append((name, t))
    ratios = [("autodiff", "jax"), ("autodiff", "jax jit"), ("autodiff jit", "jax jit")]
    head = (["case"] + [f"{lib} (ms)" for lib in libs]
            + [f"{a} / {b}" for a, b in ratios])
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, t in rows:
        cells = [name] + [f"{t[lib] * 1e3:.3g}" if t.get(lib) else "n/a" for lib in libs]
        for a, b in ratios:
            cells.append(f"{t[a] / t[b]:.2g}x" if t.get(a) and t.get(b) else "n/a")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
