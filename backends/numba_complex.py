"""Complex-number helpers for the Numba kernels that jit generates.

Numba computes with complex64/complex128 natively (arithmetic, ``np.exp``, ``np.log``,
``np.sqrt``, the trigonometric and hyperbolic functions and their inverses, ``abs``), and
generated kernels use that directly. What it does not give is numpy's exact semantics in
a few places, and those helpers live here, imported by a kernel only when it computes
with complex values (a real program's module never imports this one):

* division: Numba raises ``ZeroDivisionError`` on a complex division by zero even under
  ``error_model='numpy'``; :func:`cdiv` is numpy's Smith division (inf/nan at zero);
* ordering: numpy orders complex numbers lexicographically (real part first) with its
  own NaN rules (:func:`clt`, :func:`cle`, :func:`cgt`, :func:`cge`; :func:`cmax` and
  :func:`cmin` are ``np.maximum``/``np.minimum``, the first NaN wins);
* ``sign``: numpy 2's ``z/|z|`` with its infinite cases (Numba's gives nan+nanj at inf);
* powers: numpy's binary exponentiation for integer exponents ``|n| < 100`` (Numba's
  ``z ** n`` goes through ``exp(n log z)``: ``(1+1j)**7`` is off by 5e-15) and numpy's
  ``0 ** b`` (Numba gives nan+nanj for ``0 ** (1+1j)``, numpy 0);
* ``exp`` built from numba_math's vectorizable real ``exp``/``cos``/``sin`` (:func:`cexp_f64`,
  :func:`cexp_f32`: 4x Numba's), within the same inlining budget as the real ones, and
  ``abs`` without libm's scalar ``hypot`` (:func:`cabs_f64`, :func:`cabs_f32`), so that
  loops over complex values vectorize;
* functions: numpy's ``tanh`` (Numba's is NaN for ``|Re z| > 710``), ``expm1`` (Numba's
  loses digits near 0), ``log`` (Numba's real part loses digits near the unit circle), ``arccosh`` (its branch cut's side for a ``-0`` imaginary part),
  and ``exp``/``sinh``/``cosh``/``sin``/``cos`` of numbers with a zero part (Numba's
  overflow gives NaN parts: ``exp(800+0j)`` is inf+nanj);
* matrix products: :func:`cmatmul_into`, ``zgemm``/``cgemm`` of the OpenBLAS numpy itself
  loads (the library ``blas_pool`` uses for real products: one BLAS in the process),
  single-threaded; Numba's ``np.dot`` (scipy's BLAS) only where that library is missing.

Every helper is compiled with ``fastmath=False`` (see NUMBA_NOTES.md: a helper without an
explicit setting inherits the first caller's flags). The kernels' disk-cache key holds a
hash of this file (``compile_cache._version_text``).

>>> import numpy as np
>>> from autodiff.backends.numba_complex import cdiv, cmax, cipow
>>> complex(cdiv(1 + 1j, 0j))            # numpy's (1+1j)/0j; Numba's raises
(inf+infj)
>>> complex(cmax(1 + 2j, 1 + 3j)), complex(cipow(1 + 1j, 7))
((1+3j), (8-8j))
"""
import ctypes

import numpy as np
from llvmlite import binding as llvm
from numba import njit, types

from .numba_math import cos_f32, cos_f64, exp_f32, exp_f64, select, sin_f32, sin_f64

_OPTS = dict(fastmath=False, error_model="numpy", nogil=True, forceinline=True)
_CACHED = dict(fastmath=False, error_model="numpy", nogil=True)

__all__ = ["cdiv", "csign", "cisnan", "clt", "cle", "cgt", "cge", "cmax", "cmin", "cipow",
           "cpow", "cexp", "cexp_f64", "cexp_f32", "cabs_f64", "cabs_f32", "clog", "cexpm1", "csinh", "ccosh", "csin", "ccos", "ctanh", "cacosh",
           "cmatmul_into", "HAVE_ZGEMM"]


# ---------------------------------------------------------------------------------------
# scalar helpers (inlined into the kernels)
# ---------------------------------------------------------------------------------------

@njit(**_OPTS)
def cisnan(z):
    """Whether either part of ``z`` is NaN."""
    return (z.real != z.real) | (z.imag != z.imag)


# numpy's CLT/CLE/CGT/CGE (umath loops): a real-part decision needs both imaginary parts
# to be numbers; a tie on the real part is decided by the imaginary parts
@njit(**_OPTS)
def clt(a, b):
    return (((a.real < b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag < b.imag)))


@njit(**_OPTS)
def cle(a, b):
    return (((a.real < b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag <= b.imag)))


@njit(**_OPTS)
def cgt(a, b):
    return (((a.real > b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag > b.imag)))


@njit(**_OPTS)
def cge(a, b):
    return (((a.real > b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag >= b.imag)))


@njit(**_OPTS)
def cmax(a, b):
    """``np.maximum(a, b)``: ``a`` when it has a NaN or is lexicographically >= ``b``."""
    if cisnan(a) | cge(a, b):
        return a
    return b


@njit(**_OPTS)
def cmin(a, b):
    """``np.minimum(a, b)``."""
    if cisnan(a) | cle(a, b):
        return a
    return b


@njit(**_OPTS)
def cdiv(a, b):
    """``a / b`` as numpy divides complex numbers (Smith's method; no exception at 0)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            # numpy: the parts divided by |b.real| (= 0): a complex inf or nan
            return complex(ar / abr, ai / abr)
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


@njit(**_OPTS)
def csign(z):
    """numpy 2's ``sign`` of a complex number: ``z/|z|``, 0 at 0, the unit direction of an
    infinite ``z`` with one infinite part, nan+nanj otherwise."""
    zr, zi = z.real, z.imag
    r = abs(z)
    if r != r:
        return complex(np.nan, np.nan)
    if r == np.inf:
        if abs(zr) == np.inf:
            if abs(zi) == np.inf:
                return complex(np.nan, np.nan)
            return complex(1.0 if zr > 0 else -1.0, 0.0)
        return complex(0.0, 1.0 if zi > 0 else -1.0)
    if r == 0:
        return complex(0.0, 0.0)
    return complex(zr / r, zi / r)


@njit(**_OPTS)
def cipow(z, n):
    """``z ** n`` for an integer ``n`` as numpy computes it (``npy_cpow``): ``z``, ``z*z``,
    ``z*(z*z)`` for n = 1, 2, 3, binary exponentiation for ``3 < |n| < 100``, then
    ``1 / z**|n|`` for negative ``n``; ``exp(n log z)`` beyond."""
    if n == 0:
        return complex(1.0, 0.0)
    if z.real == 0 and z.imag == 0:       # numpy: 0 ** n is 0 for n > 0, else nan+nanj
        return complex(0.0, 0.0) if n > 0 else complex(np.nan, np.nan)
    if n == 1:
        return complex(z)
    if n == 2:
        return complex(z) * z
    if n == 3:
        return z * (complex(z) * z)
    if n >= 100 or n <= -100:
        return complex(z) ** complex(n)
    m = n if n > 0 else -n
    acc = complex(1.0, 0.0)
    p = complex(z)
    mask = 1
    while True:
        if m & mask:
            acc = acc * p
        mask <<= 1
        if m < mask:
            break
        p = p * p
    if n < 0:
        return cdiv(complex(1.0, 0.0), acc)
    return acc


@njit(**_OPTS)
def cpow(a, b):
    """``a ** b`` as numpy's ``npy_cpow``: 1 for ``b == 0``; for ``a == 0``, 0 when
    ``b.real > 0`` else nan+nanj; :func:`cipow` for an integral real ``b`` with
    ``|b| < 100``; Numba's ``exp(b log a)`` otherwise."""
    br, bi = b.real, b.imag
    if br == 0 and bi == 0:
        return complex(1.0, 0.0)
    if a.real == 0 and a.imag == 0:
        return complex(0.0, 0.0) if br > 0 else complex(np.nan, np.nan)
    if bi == 0 and -100 < br < 100 and br == np.floor(br):
        return cipow(a, np.int64(br))
    return complex(a) ** complex(b)


# numpy's complex functions (npy_math's, from FreeBSD msun) where Numba's cmath-based ones
# differ beyond rounding: tanh's NaN for |Re z| > ~710 (Numba divides inf by inf), expm1's
# cancellation near 0 (Numba computes exp(z) - 1), acosh's side of the branch cut for a
# negative zero imaginary part, and the NaN parts of an overflowing exp/sinh/cosh/sin/cos
# of a number with a zero part (inf * sin(0)). tests/test_jit_complex.py shows each.

@njit(**_OPTS)
def cexp(z):
    """numpy's exp: ``(exp(x), y)`` for a zero imaginary part, Numba's otherwise."""
    if z.imag == 0:
        return complex(np.exp(z.real), z.imag)
    return np.exp(z)


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


@njit(**_OPTS)
def clog(z):
    """log as numpy's own ``npy_clog``: the real part ``log1p((m-1)(m+1) + n²)/2`` when
    ``0.71 <= |z| <= 1.73`` (m, n the larger and smaller part), Numba's otherwise. Numba's
    ``log(|z|)`` loses the real part near the unit circle (``log(1+1e-9j)``: 0, numpy
    5e-19); glibc's ``clog``, which numpy calls here, is exact to the last bit even where
    ``m² + n²`` rounds (``0.8+0.6j``: 2.8e-17 here, 2.2e-17 there)."""
    ax, ay = abs(z.real), abs(z.imag)
    h = np.hypot(ax, ay)
    if 0.71 <= h <= 1.73:
        am, an = max(ax, ay), min(ax, ay)
        return complex(np.log1p((am - 1) * (am + 1) + an * an) / 2, np.arctan2(z.imag, z.real))
    return np.log(z)


@njit(**_OPTS)
def cexpm1(z):
    """numpy's expm1: ``expm1(x) cos y - 2 sin²(y/2) + i exp(x) sin y``."""
    a = np.sin(z.imag / 2)
    return complex(np.expm1(z.real) * np.cos(z.imag) - 2 * a * a,
                   np.exp(z.real) * np.sin(z.imag))


@njit(**_OPTS)
def csinh(z):
    """numpy's sinh: ``(sinh x, y)`` for a zero imaginary part, Numba's otherwise."""
    if z.imag == 0:
        return complex(np.sinh(z.real), z.imag)
    return np.sinh(z)


@njit(**_OPTS)
def ccosh(z):
    """numpy's cosh: ``(cosh x, x y)`` for a zero imaginary part, Numba's otherwise."""
    if z.imag == 0:
        return complex(np.cosh(z.real), z.real * z.imag)
    return np.cosh(z)


@njit(**_OPTS)
def csin(z):
    """numpy's sin: ``-i sinh(i z)``."""
    w = csinh(complex(-z.imag, z.real))
    return complex(w.imag, -w.real)


@njit(**_OPTS)
def ccos(z):
    """numpy's cos: ``cosh(i z)``."""
    return ccosh(complex(-z.imag, z.real))


@njit(**_OPTS)
def ctanh(z):
    """numpy's tanh (Kahan's algorithm, as msun's ctanh): ±1 + tiny imaginary part for
    ``|x| >= 22``, no overflow."""
    x, y = z.real, z.imag
    if x != x:
        return complex(x, y if y == 0 else x * y)
    if abs(x) == np.inf:
        return complex(np.copysign(1.0, x),
                       np.copysign(0.0, y if abs(y) == np.inf else np.sin(y) * np.cos(y)))
    if abs(y) == np.inf or y != y:
        return complex(y - y, y - y)
    if abs(x) >= 22:
        e = np.exp(-abs(x))
        return complex(np.copysign(1.0, x), 4 * np.sin(y) * np.cos(y) * e * e)
    t = np.tan(y)
    beta = 1.0 + t * t
    sh = np.sinh(x)
    rho = np.sqrt(1 + sh * sh)
    den = 1 + beta * sh * sh
    return complex((beta * rho * sh) / den, t / den)


@njit(**_OPTS)
def cacosh(z):
    """numpy's arccosh: from ``w = arccos(z)`` (whose branch cuts Numba gets right),
    ``(|Im w|, ±Re w)`` with the sign of ``Im z``."""
    w = np.arccos(z)
    rx, ry = w.real, w.imag
    if rx != rx and ry != ry:
        return complex(ry, rx)
    if rx != rx:
        return complex(abs(ry), rx)
    if ry != ry:
        return complex(ry, ry)
    return complex(abs(ry), np.copysign(rx, z.imag))


# ---------------------------------------------------------------------------------------
# complex GEMM through numpy's OpenBLAS
# ---------------------------------------------------------------------------------------

def _register_zgemm():
    """Register numpy's OpenBLAS ``zgemm``/``cgemm`` (CBLAS) with LLVM under fixed names
    (so disk-cached kernels link in every process); returns the integer width or None."""
    from . import blas_pool
    found = blas_pool._find_numpy_cblas()
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
    from .blas_pool import _threads_local, matvec_layout

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
        prev = _threads_local(np.int32(1))
        if m == 1 or n == 1:    # a matrix-vector product: gemv (blas_pool.matvec_layout)
            trans, rows, cols, mp, ldm, xp, incx = matvec_layout(
                ta, tb, m, n, k, ap, a.shape[1], bp, b.shape[1])
            _zgemv_any(out.itemsize, trans, rows, cols, alpha, mp, ldm, xp, incx, beta, cp)
            _threads_local(prev)
            return
        if out.itemsize == 16:
            _zgemm(np.int32(101), t_a, t_b, m, n, k, alpha, ap, a.shape[1], bp, b.shape[1],
                   beta, cp, n)
        else:
            _cgemm(np.int32(101), t_a, t_b, m, n, k, alpha, ap, a.shape[1], bp, b.shape[1],
                   beta, cp, n)
        _threads_local(prev)
else:
    # without numpy's OpenBLAS: Numba's np.dot, which takes complex operands too
    from .blas_pool import _gemm_numba as cmatmul_into  # noqa: F401


# every helper keeps its compiled code under ad.config.cache_dir (as numba_math's): a new
# kernel in a new process does not compile them again
from .compile_cache import cache_helpers  # noqa: E402
cache_helpers(globals())
