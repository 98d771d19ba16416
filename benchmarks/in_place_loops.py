"""Loops that fill an array one element a step, on the CPU: in place against a copy.

    python benchmarks/in_place_loops.py [--quick]

``lax.fori_loop(0, n, lambda i, ys: ys.at[i].set(sin(x * i)), zeros(n))`` (and the same
through ``while_loop``, and a 2-D ``(n, 3)`` carry written a row a step) under ``ad.jit``,
warm, per call: with the carry updated in place (backends/cpu_in_place.py) and with the
pass switched off in this process (a copy of the carry per step: what every version
before it did), beside numpy's own Python loop ``ys[i] = np.sin(x * i)``. The copy makes
a loop O(n²); in place it is O(n).
"""
import sys
import time

import numpy as np

import autodiff as ad
ad.config.update("jit_background_compile", False)      # time kernels, not the interpreter
import autodiff.numpy as anp
from autodiff import lax
from autodiff.backends import cpu_in_place, numba_cpu_emitter


def fill_fori(x, ys):
    return lax.fori_loop(0, ys.shape[0], lambda i, ys: ys.at[i].set(anp.sin(x * i)), ys)


def fill_while(x, ys):
    def body(c):
        i, ys = c
        return i + 1, ys.at[i].set(anp.sin(x * i))
    return lax.while_loop(lambda c: c[0] < ys.shape[0], body, (0, ys))[1]


def fill_rows(x, ys):
    return lax.fori_loop(0, ys.shape[0],
                         lambda i, ys: ys.at[i].set(anp.sin(x * i) * anp.arange(3.0)), ys)


def numpy_fill(x, ys):
    ys = ys.copy()
    for i in range(ys.shape[0]):
        ys[i] = np.sin(x * i)
    return ys


def best(f, *args, reps=5):
    f(*args)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f(*args)
        ts.append(time.perf_counter() - t)
    return min(ts)


def main():
    quick = "--quick" in sys.argv
    sizes = [1000, 10000] if quick else [1000, 10000, 40000]
    print(f"{'loop':<22}{'n':>7}{'in place ms':>13}{'copying ms':>12}{'numpy ms':>10}"
          f"{'copy/in place':>15}")
    real = cpu_in_place.donate_in_place
    for name, f, shape in (("fori_loop .at[i].set", fill_fori, ()),
                           ("while_loop .at[i].set", fill_while, ()),
                           ("fori_loop rows (n,3)", fill_rows, (3,))):
        for n in sizes:
            ys = np.zeros((n,) + shape)
            t = {}
            for mode in ("in place", "copying"):
                numba_cpu_emitter.donate_in_place = (
                    real if mode == "in place" else lambda lines, *a: (lines, set()))
                jf = ad.jit(f)
                out = jf(0.5, ys)
                t[mode] = best(jf, 0.5, ys)
            numba_cpu_emitter.donate_in_place = real
            ref = numpy_fill(0.5, ys) if not shape else None
            if ref is not None:
                assert np.allclose(out, ref)
            tn = best(numpy_fill, 0.5, ys) if not shape else float("nan")
            print(f"{name:<22}{n:>7}{t['in place'] * 1e3:>13.3f}{t['copying'] * 1e3:>12.3f}"
                  f"{tn * 1e3:>10.3f}{t['copying'] / t['in place']:>15.1f}")


if __name__ == "__main__":
    main()
