"""Complex-number helpers for the Numba kernels that jit generates.

Numba computes with complex64/complex128 natively (arithmetic, ``np.exp``, ``np.log``,
``np.sqrt``, the trigonometric and hyperbolic functions and their inverses, ``abs``), and
generated kernels use that directly. What it does not give is numpy's exact semantics in
a few places, and those helpers live here, imported by a kernel only when it computes
with complex values (a real program's module never imports this one):

* division, ordering, ``sign``, powers and the functions where Numba's differ from numpy's
  beyond rounding are numpy's algorithms from :mod:`.complex_math`, the one source the
  CUDA target compiles too, compiled here with ``njit`` and numpy's functions for the
  ``math``/``cmath`` they call: :func:`cdiv` (Numba raises ``ZeroDivisionError`` on a
  complex division by zero even under ``error_model='numpy'``), the lexicographic order
  with numpy's NaN rules (:func:`clt`, :func:`cle`, :func:`cgt`, :func:`cge`,
  :func:`cmax`, :func:`cmin`), numpy 2's ``sign`` (Numba's gives nan+nanj at inf), integer
  powers by binary exponentiation (Numba's ``(1+1j)**7`` is off by 5e-15) and ``0 ** b``;
* ``exp`` built from numba_math's vectorizable real ``exp``/``cos``/``sin`` (:func:`cexp_f64`,
  :func:`cexp_f32`: 4x Numba's), within the same inlining budget as the real ones, and
  ``abs`` without libm's scalar ``hypot`` (:func:`cabs_f64`, :func:`cabs_f32`), so that
  loops over complex values vectorize;
* functions: numpy's ``tanh`` (Numba's is NaN for ``|Re z| > 710``), ``expm1`` (Numba's
  loses digits near 0), ``log`` (near the unit circle), ``arccosh`` (its branch cut's side
  for a ``-0`` imaginary part), and ``exp`` and the hyperbolic and circular functions of
  numbers with a zero part (Numba's overflow gives NaN parts: ``exp(800+0j)`` is inf+nanj);
* matrix products: :func:`cmatmul_into`, ``zgemm``/``cgemm`` of the OpenBLAS numpy itself
  loads (the library ``blas_pool`` uses for real products: one BLAS in the process),
  single-threaded; Numba's ``np.dot`` (scipy's BLAS) only where that library is missing.

Every helper is compiled with ``fastmath=False`` (see NUMBA_NOTES.md: a helper without an
explicit setting inherits the first caller's flags). The kernels' disk-cache key holds a
hash of this file (``compile_cache._version_text``); the helpers' own cache files are
stamped with the hash of the file that defines them (``complex_math`` for the shared ones).

>>> import numpy as np
>>> from autodiff.backends.numba_complex import cdiv, cmax, cipow
>>> complex(cdiv(1 + 1j, 0j))            # numpy's (1+1j)/0j; Numba's raises
(inf+infj)
>>> complex(cmax(1 + 2j, 1 + 3j)), complex(cipow(1 + 1j, 7))
((1+3j), (8-8j))
"""
import ctypes
import sys
import types as pytypes

import numpy as np
from llvmlite import binding as llvm
from numba import njit, types

from ..core import primitives
from . import complex_math
from .numba_math import cos_f32, cos_f64, exp_f32, exp_f64, select, sin_f32, sin_f64

_OPTS = dict(fastmath=False, error_model="numpy", nogil=True, forceinline=True)
_CACHED = dict(fastmath=False, error_model="numpy", nogil=True)

# the shared algorithms this target uses (complex_math's HELPERS and some of its FUNCTIONS:
# numpy's log1p and exp2 of a complex number are Numba's own here), and its own
__all__ = ["cdiv", "csign", "cisnan", "clt", "cle", "cgt", "cge", "cmax", "cmin", "cipow",
           "cpow", "cexp", "clog", "cexpm1", "csinh", "ccosh", "csin", "ccos", "ctanh",
           "cacosh", "cexp_f64", "cexp_f32", "cabs_f64", "cabs_f32", "cmatmul_into",
           "HAVE_ZGEMM"]


# ---------------------------------------------------------------------------------------
# scalar helpers (inlined into the kernels)
# ---------------------------------------------------------------------------------------

def _numpy_by_c99_name():
    """What the shared algorithms call as ``math.<name>``/``cmath.<name>`` on the CPU:
    numpy's function of each elementwise primitive (found by its lowering facts), under
    its C99 name (``acos`` is ``np.arccos``), and ``hypot``/``copysign``. Numba compiles
    numpy's real functions as ``math``'s; its complex hyperbolic functions are numpy's
    plain formulas (``cmath``'s differ)."""
    ns = pytypes.ModuleType("numpy_by_c99_name")
    for p in list(primitives.values()):
        name = getattr(getattr(p, "lowering", None), "numpy_name", None)
        if name is not None and hasattr(np, name):
            setattr(ns, complex_math.c99_name(name), getattr(np, name))
    ns.hypot, ns.copysign = np.hypot, np.copysign
    return ns


@njit(**_OPTS)
def _power(a, b):
    """``a ** b`` of two complex numbers: Numba's (``numba_cpow``)."""
    return a ** b


_NUMPY = _numpy_by_c99_name()
_SHARED = complex_math.compile_for(njit(**_OPTS), __name__, math=_NUMPY, cmath=_NUMPY,
                                   cpow_principal=_power)
cisnan, clt, cle, cgt, cge, cmax, cmin, cdiv, csign, cipow, cpow = (
    _SHARED[n] for n in complex_math.HELPERS)
cexp, clog, cexpm1, csinh, ccosh, csin, ccos, ctanh, cacosh = (
    _SHARED[n] for n in ("cexp", "clog", "cexpm1", "csinh", "ccosh", "csin", "ccos", "ctanh",
                         "cacosh"))


_ONE32, _ZERO32, _INF32 = np.float32(1.0), np.float32(0.0), np.float32(np.inf)


@njit(**_OPTS)
def cexp_f64(z):
    """exp of a complex128 from numba_math's vectorizable real exp, cos and sin
    (``e^x cos y + i e^x sin y``, the imaginary part ``y`` itself when it is 0): ~2 ulp,
    4x Numba's scalar-libm complex exp (measured: 0.42 vs 1.68 ms for 1e5 elements)."""
    x, y = z.real, z.imag
    e = exp_f64(x)
    yfin = abs(y) < np.inf                  # numpy's cases for an infinite or NaN y:
    re = select(yfin, e * cos_f64(y),       # (inf, nan) at x = inf, 0 at x = -inf
                select(x == np.inf, x, select(x == -np.inf, 0.0, np.nan)))
    im = select(y == 0, y, select(yfin, e * sin_f64(y), select(x == -np.inf, 0.0, y - y)))
    return complex(re, im)


@njit(**_OPTS)
def cexp_f32(z):
    """:func:`cexp_f64` for a complex64, in float32 arithmetic."""
    x, y = z.real, z.imag
    e = exp_f32(x)
    yfin = abs(y) < _INF32
    re = select(yfin, e * cos_f32(y), select(x == _INF32, x, select(x == -_INF32, _ZERO32,
                                                                     y - y)))
    im = select(y == 0, y, select(yfin, e * sin_f32(y), select(x == -_INF32, _ZERO32, y - y)))
    return complex(re, im)


@njit(**_OPTS)
def cabs_f64(z):
    """|z| of a complex128 without a libm call (Numba's is a scalar ``hypot``, which keeps
    the loop around it from vectorizing): ``hi sqrt(1 + (lo/hi)²)`` with ``hi``/``lo`` the
    larger/smaller part, inf if a part is infinite (NaN or not, as hypot), ~2 ulp."""
    ax, ay = abs(z.real), abs(z.imag)
    big = ax > ay
    hi, lo = select(big, ax, ay), select(big, ay, ax)
    q = lo / select(hi == 0, 1.0, hi)
    r = hi * np.sqrt(1.0 + q * q)
    return select((ax == np.inf) | (ay == np.inf), np.inf, r)




@njit(**_OPTS)
def cabs_f32(z):
    """:func:`cabs_f64` for a complex64, in float32 arithmetic."""
    ax, ay = abs(z.real), abs(z.imag)
    big = ax > ay
    hi, lo = select(big, ax, ay), select(big, ay, ax)
    q = lo / select(hi == 0, _ONE32, hi)
    r = hi * np.sqrt(_ONE32 + q * q)
    return select((ax == _INF32) | (ay == _INF32), _INF32, r)


# ---------------------------------------------------------------------------------------
# complex GEMM through numpy's OpenBLAS
# ---------------------------------------------------------------------------------------

def _register_zgemm():
    """Register numpy's OpenBLAS ``zgemm``/``cgemm`` (CBLAS) with LLVM under fixed names
    (so disk-cached kernels link in every process); returns the integer width or None."""
    from . import blas_pool
    found = blas_pool.find_numpy_cblas()
    if found is None:
        return None
    bits, desc, path = found[2], found[3], found[5]
    dname = desc.split(":", 1)[1]
    lib = ctypes.CDLL(path)
    routines = {p: getattr(lib, dname.replace("dgemm", p), None)
                for p in ("zgemm", "cgemm", "zgemv", "cgemv")}
    if any(f is None for f in routines.values()):
        return None
    for p, f in routines.items():
        llvm.add_symbol(f"autodiff_cblas_{p}", ctypes.cast(f, ctypes.c_void_p).value)
    return bits


try:
    _ZBITS = _register_zgemm()
except Exception:  # noqa: BLE001 - any trouble finding the library: Numba's np.dot
    _ZBITS = None
HAVE_ZGEMM = _ZBITS is not None

_it = types.int64 if _ZBITS == 64 else types.int32
_e = types.int32
# cblas_?gemm(order, transa, transb, m, n, k, *alpha, *a, lda, *b, ldb, *beta, *c, ldc):
# complex alpha and beta are passed by address
_ZSIG = types.void(_e, _e, _e, _it, _it, _it, types.intp, types.intp, _it, types.intp, _it,
                   types.intp, types.intp, _it)
_zgemm = types.ExternalFunction("autodiff_cblas_zgemm", _ZSIG)
_cgemm = types.ExternalFunction("autodiff_cblas_cgemm", _ZSIG)
# cblas_?gemv(order, trans, m, n, *alpha, *a, lda, *x, incx, *beta, *y, incy)
_ZVSIG = types.void(_e, _e, _it, _it, types.intp, types.intp, _it, types.intp, _it,
                    types.intp, types.intp, _it)
_zgemv = types.ExternalFunction("autodiff_cblas_zgemv", _ZVSIG)
_cgemv = types.ExternalFunction("autodiff_cblas_cgemv", _ZVSIG)


if HAVE_ZGEMM:
    from .blas_pool import openblas_threads_local, matvec_layout

    @njit(**_CACHED)
    def _zgemv_any(item, trans, rows, cols, alpha, a, lda, x, incx, beta, y):
        t = np.int32(112 if trans else 111)
        if item == 16:
            _zgemv(np.int32(101), t, rows, cols, alpha, a, lda, x, incx, beta, y, 1)
        else:
            _cgemv(np.int32(101), t, rows, cols, alpha, a, lda, x, incx, beta, y, 1)

    @njit(**_CACHED)
    def cmatmul_into(a, b, out, flags):
        """``out = op(a) @ op(b)`` for C-contiguous 2-D complex arrays of one dtype
        (``flags`` as :func:`~autodiff.backends.blas_pool.matmul_into`'s), one thread; a
        product with one row or one column as gemv (``blas_pool.matvec_layout``)."""
        m, n = out.shape
        ta = (flags & 1) != 0
        tb = (flags & 2) != 0
        k = a.shape[0] if ta else a.shape[1]
        if m == 0 or n == 0:
            return
        if k == 0:
            out.fill(0)
            return
        coef = np.zeros(2, out.dtype)          # alpha = 1, beta = 0
        coef[0] = 1
        t_a = np.int32(112 if ta else 111)     # CblasTrans / CblasNoTrans
        t_b = np.int32(112 if tb else 111)
        ap, bp, cp = np.intp(a.ctypes.data), np.intp(b.ctypes.data), np.intp(out.ctypes.data)
        alpha = np.intp(coef.ctypes.data)
        beta = alpha + np.intp(out.itemsize)
        prev = openblas_threads_local(np.int32(1))
        if m == 1 or n == 1:    # a matrix-vector product: gemv (blas_pool.matvec_layout)
            trans, rows, cols, mp, ldm, xp, incx = matvec_layout(
                ta, tb, m, n, k, ap, a.shape[1], bp, b.shape[1])
            _zgemv_any(out.itemsize, trans, rows, cols, alpha, mp, ldm, xp, incx, beta, cp)
            openblas_threads_local(prev)
            return
        if out.itemsize == 16:
            _zgemm(np.int32(101), t_a, t_b, m, n, k, alpha, ap, a.shape[1], bp, b.shape[1],
                   beta, cp, n)
        else:
            _cgemm(np.int32(101), t_a, t_b, m, n, k, alpha, ap, a.shape[1], bp, b.shape[1],
                   beta, cp, n)
        openblas_threads_local(prev)
else:
    # without numpy's OpenBLAS: Numba's np.dot, which takes complex operands too
    from .blas_pool import gemm_numba as cmatmul_into  # noqa: F401


# every helper keeps its compiled code under ad.config.cache_dir (as numba_math's): a new
# kernel in a new process does not compile them again; the shared algorithms' files are
# complex_math's, compiled with this module's bindings, and cexp_f64 & co. inline numba_math
from . import numba_intrinsics, numba_math, trig_reduction  # noqa: E402
from .numba_cache import cache_helpers  # noqa: E402
cache_helpers(globals(), depends=(complex_math, numba_math, numba_intrinsics, trig_reduction,
                              sys.modules[__name__]))
