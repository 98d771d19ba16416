"""Throughput of the vectorizable math in autodiff.backends.numba_math.

    python benchmarks/vecmath.py [--quick] [--min] [name ...]

For n = 1e3 and 1e6 elements prints ns/element (median -- or with --min the fastest -- of
several timed runs, each >= 10 ms, the three variants interleaved) for:
  numpy  - the numpy ufunc on an array (logistic: 1/(1 + np.exp(-x)));
  libm   - an @njit loop calling np.<fn> per element (what LLVM makes of it without SVML:
           scalarized libm calls);
  ours   - an @njit(fastmath={'reassoc','contract'}) loop calling numba_math.<fn>_<dtype>.
"""
import importlib.util
import os
import sys
import time

import numpy as np
from numba import njit

try:
    from autodiff.backends import numba_math as nm
except ImportError:  # package not installed: load the file by path
    _p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "backends", "numba_math.py")
    _spec = importlib.util.spec_from_file_location("numba_math", _p)
    nm = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(nm)


def _loop(fn):
    @njit(fastmath={"reassoc", "contract"}, error_model="numpy", nogil=True)
    def kernel(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
    return kernel


# "libm" loops: what a loop calling numpy's functions compiles to without SVML.
# (np.exp etc. on a float32 scalar stays float32 in Numba.)
@njit
def _np_logistic(x):
    return 1 / (1 + np.exp(-x))


_LIBM = {
    "exp": njit(lambda x: np.exp(x)), "log": njit(lambda x: np.log(x)),
    "tanh": njit(lambda x: np.tanh(x)), "sin": njit(lambda x: np.sin(x)),
    "cos": njit(lambda x: np.cos(x)), "expm1": njit(lambda x: np.expm1(x)),
    "log1p": njit(lambda x: np.log1p(x)), "logistic": _np_logistic,
}
_NUMPY = {
    "exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "expm1": np.expm1, "log1p": np.log1p,
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
}
# typical arguments (the cost of our functions does not depend on the argument)
_INPUT = {
    "exp": (-50, 50), "log": (1e-3, 1e3), "tanh": (-5, 5), "sin": (-100, 100),
    "cos": (-100, 100), "expm1": (-2, 2), "log1p": (-0.5, 10), "logistic": (-20, 20),
}


def _calibrate(f):
    """Calls per timed run so that one run takes >= ~10 ms."""
    f()
    t0 = time.perf_counter()
    f()
    return max(1, int(0.01 / max(time.perf_counter() - t0, 1e-9)))


def _time_interleaved(fns, n, repeats, stat):
    """ns/element of each function: `repeats` rounds, each timing every function once
    (interleaved, so background load hits all of them alike); median (or min) per function.
    """
    inner = [_calibrate(f) for f in fns]
    runs = [[] for _ in fns]
    for _ in range(repeats):
        for j, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner[j]):
                f()
            runs[j].append((time.perf_counter() - t0) / inner[j])
    return [stat(r) / n * 1e9 for r in runs]


def main(argv):
    quick = "--quick" in argv
    use_min = "--min" in argv
    names = [a for a in argv if not a.startswith("-")] or list(_NUMPY)
    repeats = 3 if quick else 9
    stat = np.min if use_min else np.median
    sizes = (1000, 1_000_000)
    rng = np.random.default_rng(0)
    print(f"numba_math VERSION {nm.VERSION}; ns/element, {'min' if use_min else 'median'} "
          f"of {repeats} interleaved runs")
    print(f"{'function':10s} {'dtype':8s} {'n':>8s} {'numpy':>8s} {'libm loop':>10s} "
          f"{'ours':>8s} {'numpy/ours':>11s}")
    for name in names:
        lo, hi = _INPUT[name]
        for dtype in ("float64", "float32"):
            ours = _loop(nm.FUNCTIONS[(name, dtype)])
            libm = _loop(_LIBM[name])
            for n in sizes:
                x = rng.uniform(lo, hi, n).astype(dtype)
                out = np.empty_like(x)
                t_np, t_libm, t_ours = _time_interleaved(
                    [lambda: _NUMPY[name](x), lambda: libm(x, out), lambda: ours(x, out)],
                    n, repeats, stat)
                print(f"{name:10s} {dtype:8s} {n:8d} {t_np:8.2f} {t_libm:10.2f} "
                      f"{t_ours:8.2f} {t_np / t_ours:10.1f}x", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
