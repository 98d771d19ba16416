"""The math namespace of generated CUDA kernels (``_dm`` in their source).

On a GPU every name is CUDA's libdevice through numba-cuda: ``math.exp`` and friends lower
to ``__nv_exp`` (``__nv_expf`` for float32 operands), and the few functions numba-cuda's
``math`` support lacks or types differently come from ``numba.cuda.libdevice`` directly:
``floor``/``ceil`` (``math.floor`` returns an integer in numba, as in Python), ``rint``
(numpy's ``round``: half to even) and ``cbrt``. Those libdevice entry points are float64;
float32 operands are widened (exact for all four) and the emitter casts the result back.

Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) kernels run as Python on numpy
scalars, and ``numba.cuda.libdevice`` there is a set of stubs returning ``None`` (a silent
NaN: NUMBA_NOTES.md). Python's ``math`` is not a substitute either: it raises on overflow
and outside a function's domain (``math.log(0.0)``), where the GPU returns ``-inf``/NaN.
So under the simulator every name is numpy's ufunc of the same meaning, which is also
the interpreter's semantics (the oracle of the tests).

``mod_f`` and ``floor_divide_f`` are numpy's float remainder and floor division
(``npy_divmod``), as device functions on a GPU.

Complex operands use the ``c``-prefixed names (:data:`COMPLEX_NAMES`): on a GPU numba-cuda's
``cmath`` (``sqrt``, ``tan``, the inverse functions, ``isfinite``), numpy's
algorithms where that ``cmath`` differs beyond rounding (``tanh``, ``acosh``, ``log`` near
the unit circle, and ``exp``,
``sinh``, ``cosh``, ``sin``, ``cos`` of numbers with a zero part: as backends/numba_complex.py
on the CPU), ``expm1``/``log1p``/``exp2`` written from real functions as numpy does
(``expm1(x+iy) = expm1(x) cos y - 2 sin²(y/2) + i eˣ sin y`` keeps its accuracy near 0),
and numpy's semantics where a plain expression would differ, one Python definition each
for the device and the host (:data:`HOST`): ``cdiv`` (Smith's division; inf/nan at zero),
the lexicographic comparisons ``clt``/``cle``/``cgt``/``cge`` with numpy's NaN rules,
``cmax``/``cmin`` (``np.maximum``/``np.minimum``), ``csign`` (``z/|z|``), ``cipow`` and
``cpow`` (numpy's powers: binary exponentiation for integral exponents, ``0 ** b``). They mirror backends/numba_complex.py, the CPU kernels' versions.

>>> import os
>>> from autodiff.backends import cuda_math     # doctest: +SKIP
>>> float(cuda_math.exp(0.0))                   # doctest: +SKIP
1.0
"""
import cmath
import math
import types as _pytypes

import numpy as np


def _import_numba_cuda():
    """``numba.cuda``, imported so that it also loads on numpy >= 2.5.

    numba-cuda 0.30.4 (its last release) registers ``overload(np.row_stack)`` in
    ``numba_cuda/numba/cuda/np/arrayobj.py`` unconditionally, and numpy 2.5 removed
    ``numpy.row_stack``: the module's import raises ``AttributeError``. Importing
    ``numba.cuda`` does not import it; the CUDA target does, lazily, when it compiles its
    first kernel (``typingctx.refresh()`` -> ``load_additional_registries``), so every
    ``backend="cuda"`` call failed there. The fix was declined upstream (NVIDIA/numba-cuda#907,
    PR #916) in favour of numba-cuda-mlir. So where numpy lacks ``row_stack``, this gives
    numpy a stand-in only while it imports ``arrayobj`` eagerly (the overload then names a
    function nobody else can reach), and removes it again: user code keeps numpy's own
    namespace, and the later lazy registry load finds the module already imported. The
    one place the backend imports ``numba.cuda`` (``cuda_runtime``, ``numba_cuda.available``
    and every generated program import it from here)."""
    if hasattr(np, "row_stack"):
        from numba import cuda
        return cuda

    def row_stack(tup, *, dtype=None, casting="same_kind"):   # pragma: no cover - never run
        return np.vstack(tup, dtype=dtype, casting=casting)

    np.row_stack = row_stack
    try:
        from numba import cuda
        try:
            from numba.cuda.np import arrayobj  # noqa: F401 - runs overload(np.row_stack) now
        except ModuleNotFoundError:      # a numba.cuda without that module needs no stand-in
            pass
    finally:
        del np.row_stack
    return cuda


cuda = _import_numba_cuda()
from numba.cuda.core import config as _cuda_config  # noqa: E402

SIMULATOR = bool(_cuda_config.ENABLE_CUDASIM)

NAMES = ("exp", "log", "tanh", "sin", "cos", "expm1", "log1p", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "fabs", "floor", "ceil", "rint",
         "cbrt", "exp2", "atan2", "pow", "fmod", "copysign", "isfinite", "mod_f",
         "floor_divide_f")

if SIMULATOR:
    import numpy as _np
    exp, log, tanh, sin, cos = _np.exp, _np.log, _np.tanh, _np.sin, _np.cos
    expm1, log1p, tan = _np.expm1, _np.log1p, _np.tan
    asin, acos, atan = _np.arcsin, _np.arccos, _np.arctan
    sinh, cosh, asinh, acosh, atanh = _np.sinh, _np.cosh, _np.arcsinh, _np.arccosh, _np.arctanh
    sqrt, fabs, floor, ceil, rint, cbrt, exp2 = (_np.sqrt, _np.fabs, _np.floor, _np.ceil,
                                                 _np.rint, _np.cbrt, _np.exp2)
    atan2, pow, fmod, copysign = _np.arctan2, _np.power, _np.fmod, _np.copysign
    isfinite = _np.isfinite
    mod_f, floor_divide_f = _np.mod, _np.floor_divide
else:                                              # pragma: no cover - needs a GPU
    from numba.cuda import libdevice as _ld
    exp, log, tanh, sin, cos = math.exp, math.log, math.tanh, math.sin, math.cos
    expm1, log1p, tan = math.expm1, math.log1p, math.tan
    asin, acos, atan = math.asin, math.acos, math.atan
    sinh, cosh, asinh, acosh, atanh = math.sinh, math.cosh, math.asinh, math.acosh, math.atanh
    sqrt, fabs, exp2 = math.sqrt, math.fabs, math.exp2
    floor, ceil, rint, cbrt = _ld.floor, _ld.ceil, _ld.rint, _ld.cbrt
    atan2, pow, fmod, copysign = math.atan2, math.pow, math.fmod, math.copysign
    isfinite = math.isfinite

    @cuda.jit(device=True, inline=True)
    def mod_f(x, y):
        """numpy's float remainder: the sign of the divisor (``np.mod``)."""
        m = math.fmod(x, y)
        if y == 0:
            return m
        if m != 0:
            if (y < 0) != (m < 0):
                m += y
        else:
            m = math.copysign(m, y)
        return m

    @cuda.jit(device=True, inline=True)
    def floor_divide_f(x, y):
        """numpy's float floor division (``npy_divmod``): 1.0 // 0.1 == 9.0."""
        if y == 0:
            return x / y
        m = math.fmod(x, y)
        d = (x - m) / y
        if m != 0:
            if (y < 0) != (m < 0):
                d -= 1
        if d != 0:
            fd = _ld.floor(d)
            if d - fd > 0.5:
                fd += 1
            return fd
        return math.copysign(0.0, x / y)


# ---------------------------------------------------------------------------------------
# complex operands
# ---------------------------------------------------------------------------------------

COMPLEX_NAMES = ("cexp", "clog", "csqrt", "csin", "ccos", "ctan", "csinh", "ccosh", "ctanh",
                 "casin", "cacos", "catan", "casinh", "cacosh", "catanh", "cexpm1", "clog1p",
                 "cexp2", "cisfinite", "cdiv", "csign", "cisnan", "clt", "cle", "cgt", "cge",
                 "cmax", "cmin", "cipow", "cpow")
_LN2 = 0.6931471805599453
_NP_COMPLEX = dict(cexp=np.exp, clog=np.log, csqrt=np.sqrt, csin=np.sin, ccos=np.cos,
                   ctan=np.tan, csinh=np.sinh, ccosh=np.cosh, ctanh=np.tanh, casin=np.arcsin,
                   cacos=np.arccos, catan=np.arctan, casinh=np.arcsinh, cacosh=np.arccosh,
                   catanh=np.arctanh, cexpm1=np.expm1, clog1p=np.log1p, cexp2=np.exp2,
                   cisfinite=np.isfinite)


def _cisnan(z):
    return (z.real != z.real) or (z.imag != z.imag)


def _clt(a, b):
    return ((a.real < b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag < b.imag))


def _cle(a, b):
    return ((a.real < b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag <= b.imag))


def _cgt(a, b):
    return ((a.real > b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag > b.imag))


def _cge(a, b):
    return ((a.real > b.real and a.imag == a.imag and b.imag == b.imag)
            or (a.real == b.real and a.imag >= b.imag))


def _cdiv(a, b):
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return complex(ar / abr, ai / abr)
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


def _csign(z):
    zr, zi = z.real, z.imag
    r = abs(z)
    if r != r:
        return complex(math.nan, math.nan)
    if r == math.inf:
        if abs(zr) == math.inf:
            if abs(zi) == math.inf:
                return complex(math.nan, math.nan)
            return complex(1.0 if zr > 0 else -1.0, 0.0)
        return complex(0.0, 1.0 if zi > 0 else -1.0)
    if r == 0:
        return complex(0.0, 0.0)
    return complex(zr / r, zi / r)


def _cexpm1(z):
    x, y = z.real, z.imag
    s = math.sin(0.5 * y)
    return complex(math.expm1(x) * math.cos(y) - 2.0 * s * s, math.exp(x) * math.sin(y))


def _clog1p(z):            # numpy's: log|1 + z| + i arg(1 + z)
    x, y = z.real, z.imag
    return complex(math.log(math.hypot(x + 1.0, y)), math.atan2(y, x + 1.0))


def _cexp2(z):
    return cmath.exp(complex(z.real * _LN2, z.imag * _LN2))


# numpy's algorithms where numba-cuda's cmath (numba's cmathimpl) differs beyond rounding,
# as backends/numba_complex.py on the CPU: tanh (NaN for |Re z| > 710 there), exp/sinh/cosh
# of a number with a zero imaginary part (inf * sin(0) = NaN), sin/cos through them, acosh
# on the -0 side of its branch cut
def _cexp(z):
    if z.imag == 0:
        return complex(math.exp(z.real), z.imag)
    return cmath.exp(z)


def _csinh(z):
    if z.imag == 0:
        return complex(math.sinh(z.real), z.imag)
    return cmath.sinh(z)


def _ccosh(z):
    if z.imag == 0:
        return complex(math.cosh(z.real), z.real * z.imag)
    return cmath.cosh(z)


def _ctanh(z):
    x, y = z.real, z.imag
    if x != x:
        return complex(x, y if y == 0 else x * y)
    if abs(x) == math.inf:
        return complex(math.copysign(1.0, x),
                       math.copysign(0.0, y if abs(y) == math.inf else math.sin(y) * math.cos(y)))
    if abs(y) == math.inf or y != y:
        return complex(y - y, y - y)
    if abs(x) >= 22:
        e = math.exp(-abs(x))
        return complex(math.copysign(1.0, x), 4 * math.sin(y) * math.cos(y) * e * e)
    t = math.tan(y)
    beta = 1.0 + t * t
    sh = math.sinh(x)
    rho = math.sqrt(1 + sh * sh)
    den = 1 + beta * sh * sh
    return complex((beta * rho * sh) / den, t / den)


def _clog(z):             # numpy's npy_clog: log1p near the unit circle
    ax, ay = abs(z.real), abs(z.imag)
    h = math.hypot(ax, ay)
    if 0.71 <= h <= 1.73:
        am, an = max(ax, ay), min(ax, ay)
        return complex(math.log1p((am - 1) * (am + 1) + an * an) / 2, math.atan2(z.imag, z.real))
    return cmath.log(z)


def _cacosh(z):
    w = cmath.acos(z)
    rx, ry = w.real, w.imag
    if rx != rx and ry != ry:
        return complex(ry, rx)
    if rx != rx:
        return complex(abs(ry), rx)
    if ry != ry:
        return complex(ry, ry)
    return complex(abs(ry), math.copysign(rx, z.imag))


def _make_complex():
    """The helpers as device functions (the composite ones calling the others')."""
    wrap = lambda f: cuda.jit(device=True, inline=True)(f)  # noqa: E731
    isnan, ge, le, div = wrap(_cisnan), wrap(_cge), wrap(_cle), wrap(_cdiv)

    def cmax(a, b):
        if isnan(a) or ge(a, b):
            return a
        return b

    def cmin(a, b):
        if isnan(a) or le(a, b):
            return a
        return b

    def cipow(z, n):
        if n == 0:
            return complex(1.0, 0.0)
        if z.real == 0 and z.imag == 0:
            return complex(0.0, 0.0) if n > 0 else complex(math.nan, math.nan)
        w = complex(z.real, z.imag)
        if n >= 100 or n <= -100:
            return cmath.exp(n * cmath.log(w))
        if n == 1:
            return w
        if n == 2:
            return w * w
        if n == 3:
            return w * (w * w)
        m = n if n > 0 else -n
        acc = complex(1.0, 0.0)
        mask = 1
        while True:
            if m & mask:
                acc = acc * w
            mask <<= 1
            if m < mask:
                break
            w = w * w
        if n < 0:
            return div(complex(1.0, 0.0), acc)
        return acc

    ipow = wrap(cipow)

    def cpow(a, b):
        br, bi = b.real, b.imag
        if br == 0 and bi == 0:
            return complex(1.0, 0.0)
        if a.real == 0 and a.imag == 0:
            return complex(0.0, 0.0) if br > 0 else complex(math.nan, math.nan)
        if bi == 0 and -100 < br < 100 and br == math.floor(br):
            return ipow(a, int(br))
        return cmath.exp(complex(b.real, b.imag) * cmath.log(complex(a.real, a.imag)))

    return dict(cisnan=isnan, clt=wrap(_clt), cle=le, cgt=wrap(_cgt), cge=ge, cdiv=div,
                csign=wrap(_csign), cmax=wrap(cmax), cmin=wrap(cmin), cipow=ipow,
                cpow=wrap(cpow))


#: the host functions' namespace (``_hc``): numpy's functions of the same meaning
HOST = _pytypes.SimpleNamespace(
    **_NP_COMPLEX, cdiv=np.divide, csign=np.sign, cisnan=lambda z: bool(np.isnan(z)),
    clt=np.less, cle=np.less_equal, cgt=np.greater, cge=np.greater_equal, cmax=np.maximum,
    cmin=np.minimum, cipow=lambda z, n: np.power(z, n), cpow=np.power)

if SIMULATOR:
    # kernels run as Python on numpy scalars: numpy's functions, the helpers as device
    # functions of the simulator
    globals().update(_NP_COMPLEX)
    globals().update(_make_complex())
else:                                              # pragma: no cover - needs a GPU
    _dev = lambda f: cuda.jit(device=True, inline=True)(f)  # noqa: E731
    csqrt, ctan = cmath.sqrt, cmath.tan
    clog = _dev(_clog)
    cexp, csinh, ccosh, ctanh, cacosh = (_dev(_cexp), _dev(_csinh), _dev(_ccosh),
                                         _dev(_ctanh), _dev(_cacosh))

    @cuda.jit(device=True, inline=True)
    def csin(z):                       # numpy's: -i sinh(i z)
        w = csinh(complex(-z.imag, z.real))
        return complex(w.imag, -w.real)

    @cuda.jit(device=True, inline=True)
    def ccos(z):                       # numpy's: cosh(i z)
        return ccosh(complex(-z.imag, z.real))
    casin, cacos, catan = cmath.asin, cmath.acos, cmath.atan
    casinh, catanh = cmath.asinh, cmath.atanh
    cisfinite = cmath.isfinite
    cexpm1 = cuda.jit(device=True, inline=True)(_cexpm1)
    clog1p = cuda.jit(device=True, inline=True)(_clog1p)
    cexp2 = cuda.jit(device=True, inline=True)(_cexp2)
    globals().update(_make_complex())
