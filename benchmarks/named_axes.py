"""Named axes cost nothing at run time: a per-example function with batch statistics
(``lax.pmean`` inside ``vmap(axis_name=...)``) against the same computation written over
the whole batch, both under ``jit``, and numpy.

    python benchmarks/named_axes.py [--batch 4096] [--features 256] [--reps 50]

Prints the median time per call of each, and the value-and-gradient of a loss through
it. The vmap resolves every collective before ``jit`` lowers the program, so the two
programs should take the same time; a ratio far from 1 is a regression.
"""
import argparse
import statistics
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp


def per_example(x, g):
    m = ad.lax.pmean(x, "batch")
    v = ad.lax.pmean((x - m) ** 2, "batch")
    return anp.tanh((x - m) / anp.sqrt(v + 1e-5) * g)


def whole_batch(x, g):
    m = anp.mean(x, axis=0)
    v = anp.mean((x - m) ** 2, axis=0)
    return anp.tanh((x - m) / anp.sqrt(v + 1e-5) * g)


def numpy_version(x, g):
    m = np.mean(x, axis=0)
    v = np.mean((x - m) ** 2, axis=0)
    return np.tanh((x - m) / np.sqrt(v + 1e-5) * g)


def _median(f, args, reps):
    f(*args)
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--features", type=int, default=256)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(a.batch, a.features))
    g = rng.normal(size=a.features)
    ad.config.update("jit_background_compile", False)
    named = ad.jit(ad.vmap(per_example, in_axes=(0, None), axis_name="batch"))
    plain = ad.jit(whole_batch)
    np.testing.assert_allclose(named(x, g), numpy_version(x, g), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(plain(x, g), numpy_version(x, g), rtol=1e-12, atol=1e-12)
    loss_named = ad.jit(ad.value_and_grad(lambda x, g: anp.sum(
        ad.vmap(per_example, in_axes=(0, None), axis_name="batch")(x, g) ** 2), argnums=1))
    loss_plain = ad.jit(ad.value_and_grad(lambda x, g: anp.sum(whole_batch(x, g) ** 2),
                                          argnums=1))
    np.testing.assert_allclose(loss_named(x, g)[1], loss_plain(x, g)[1], rtol=1e-10)
    rows = [("forward", named, plain), ("value_and_grad", loss_named, loss_plain)]
    t_np = _median(numpy_version, (x, g), a.reps)
    print(f"batch {a.batch} x {a.features}, float64, median of {a.reps}")
    print("| program | vmap + pmean ms | whole-batch ms | ratio | numpy ms |")
    print("|---|---|---|---|---|")
    for name, f_named, f_plain in rows:
        tn, tp = _median(f_named, (x, g), a.reps), _median(f_plain, (x, g), a.reps)
        print(f"| {name} | {tn * 1e3:.3f} | {tp * 1e3:.3f} | {tn / tp:.2f} | "
              f"{t_np * 1e3 if name == 'forward' else float('nan'):.3f} |")


if __name__ == "__main__":
    main()
