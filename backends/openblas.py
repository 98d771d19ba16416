"""numpy's own OpenBLAS: where it lies and the addresses of its CBLAS products.

Numba-free, so that both kernel generators use the same library: the Numba side
(``blas_pool``, ``lapack``, ``numba_complex``) and the direct LLVM tier (``llvm_cpu``),
which loads no Numba.

>>> from autodiff.backends.openblas import find_numpy_cblas
>>> found = find_numpy_cblas()
>>> found is None or found[2] in (32, 64)
True
"""
import ctypes
import glob
import os

import numpy as np

__all__ = ["numpy_openblas_paths", "find_numpy_cblas"]


def numpy_openblas_paths():
    """numpy's bundled OpenBLAS libraries (its wheels' ``numpy.libs`` / ``.dylibs``)."""
    base = os.path.dirname(os.path.dirname(np.__file__))
    return sorted(glob.glob(os.path.join(base, "numpy.libs", "*openblas*"))) + \
        sorted(glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs", "*openblas*")))


def find_numpy_cblas():
    """Addresses of numpy's OpenBLAS dgemm/sgemm and its per-thread thread setting.

    The library lies next to numpy (``numpy.libs``, or ``.dylibs`` on macOS), ILP64
    ``scipy_cblas_dgemm64_`` in numpy 2 wheels.
    """
    names = (("scipy_cblas_dgemm64_", "scipy_cblas_sgemm64_", 64),
             ("cblas_dgemm64_", "cblas_sgemm64_", 64),
             ("scipy_cblas_dgemm", "scipy_cblas_sgemm", 32), ("cblas_dgemm", "cblas_sgemm", 32))
    for path in numpy_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for dn, sn, bits in names:
            try:
                d, s = getattr(lib, dn), getattr(lib, sn)
            except AttributeError:
                continue
            local = getattr(lib, "openblas_set_num_threads_local", None)
            gemv = tuple(getattr(lib, nm.replace("gemm", "gemv"), None) for nm in (dn, sn))
            return (ctypes.cast(d, ctypes.c_void_p).value, ctypes.cast(s, ctypes.c_void_p).value,
                    bits, f"{os.path.basename(path)}:{dn}",
                    ctypes.cast(local, ctypes.c_void_p).value if local is not None else None,
                    path, tuple(ctypes.cast(g, ctypes.c_void_p).value if g is not None else None
                                for g in gemv))
    return None
