"""The cost of ``pure_callback`` inside a jitted function: a 16-element kernel with and
without a call back into Python (the object-mode block of backends/numba_callback.py).

    python3 benchmarks/callback_bench.py
"""
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp


def main():
    ad.config.update("jit_background_compile", False)
    x = np.linspace(0.0, 1.0, 16)
    spec = ad.ShapeDtypeStruct(x.shape, x.dtype)
    with_cb = ad.jit(lambda x: ad.pure_callback(np.sin, spec, x * 2.0) + 1.0)
    without = ad.jit(lambda x: anp.sin(x * 2.0) + 1.0)
    for label, f in (("with the callback", with_cb), ("without", without)):
        f(x)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(2000):
                f(x)
            best = min(best, (time.perf_counter() - t0) / 2000)
        print(f"  jit(sin(2x) + 1) on 16 elements, {label:18s} {best * 1e6:6.2f} us per call")


if __name__ == "__main__":
    main()
