"""jit's fft lowering: rocket-fft (DUCC0 called from the kernel) against a host call
(Numba object mode) into numpy's pocketfft, and numpy itself.

    python benchmarks/fft_bench.py            # warm per-call times, then cold starts

Warm: best of 7 rounds, per call, of ``jit(anp.fft.fft)`` and ``jit(anp.fft.rfft)`` (the
rocket-fft kernels), the same transform as ``ad.pure_callback(np.fft.fft, ...)`` under jit
(the object-mode host call the callback lowering emits), and numpy eager. Cold: a fresh
process per row (empty kernel cache), the first call of the jitted function, which traces,
lowers, imports Numba and compiles; and the import of rocket-fft by itself.
Results: docs/fft.md.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

COLD = textwrap.dedent("""
    import os, sys, time, tempfile
    os.environ["AUTODIFF_CACHE_DIR"] = tempfile.mkdtemp()
    t0 = time.perf_counter()
    import numpy as np, autodiff as ad, autodiff.numpy as anp
    ad.config.update("jit_background_compile", False)
    x = np.exp(1j * np.arange(64.0))
    spec = ad.ShapeDtypeStruct(x.shape, x.dtype)
    f = {"rocket-fft": lambda v: anp.fft.fft(v) * 2.0,
         "host call": lambda v: ad.pure_callback(np.fft.fft, spec, v) * 2.0,
         "no fft": lambda v: v * 2.0}[sys.argv[1]]
    t1 = time.perf_counter()
    ad.jit(f)(x)
    t2 = time.perf_counter()
    print(f"{t1 - t0:.3f} {t2 - t1:.3f} {'rocket_fft' in sys.modules}")
""")


def _best(f, x, reps):
    f(x)
    best = float("inf")
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(reps):
            f(x)
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


def warm():
    import autodiff as ad
    import autodiff.numpy as anp
    ad.config.update("jit_background_compile", False)
    print("| n | numpy fft | jit fft (rocket-fft) | jit fft (host call) | numpy rfft | "
          "jit rfft (rocket-fft) | jit rfft (host call) |")
    print("|---|---|---|---|---|---|---|")
    for n in (64, 256, 1024, 4096):
        z = np.exp(1j * np.arange(n) * 0.37)
        r = np.cos(np.arange(n) * 0.37)
        zs = ad.ShapeDtypeStruct(z.shape, z.dtype)
        rs = ad.ShapeDtypeStruct((n // 2 + 1,), np.complex128)
        rocket_c, rocket_r = ad.jit(anp.fft.fft), ad.jit(anp.fft.rfft)
        host_c = ad.jit(lambda v: ad.pure_callback(np.fft.fft, zs, v))
        host_r = ad.jit(lambda v: ad.pure_callback(np.fft.rfft, rs, v))
        for f, v, g in ((rocket_c, z, np.fft.fft), (host_c, z, np.fft.fft),
                        (rocket_r, r, np.fft.rfft), (host_r, r, np.fft.rfft)):
            assert np.allclose(f(v), g(v))
        reps = 2000 if n <= 1024 else 500
        row = [_best(np.fft.fft, z, reps), _best(rocket_c, z, reps), _best(host_c, z, reps),
               _best(np.fft.rfft, r, reps), _best(rocket_r, r, reps), _best(host_r, r, reps)]
        print(f"| {n} | " + " | ".join(f"{v:.2f} µs" for v in row) + " |")


def cold(rounds=3):
    print("\n| first call of jit(f), fresh process | imports | trace + lower + compile | "
          "rocket_fft imported |")
    print("|---|---|---|---|")
    for kind in ("no fft", "rocket-fft", "host call"):
        runs = []
        for _ in range(rounds):
            out = subprocess.run([sys.executable, "-c", COLD, kind], capture_output=True,
                                 text=True, check=True)
            imp, first, loaded = out.stdout.split()
            runs.append((float(first), float(imp), loaded))
        first, imp, loaded = min(runs)
        print(f"| {kind} | {imp:.2f} s | {first:.2f} s | {loaded} |")
    code = ("import time, numba; t = time.perf_counter(); import rocket_fft; "
            "print(f'{time.perf_counter() - t:.3f}')")
    t = min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(rounds))
    print(f"\nimport rocket_fft after numba: {t:.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("AUTODIFF_CACHE_DIR", tempfile.mkdtemp())
    warm()
    cold()
