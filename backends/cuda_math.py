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

>>> import os
>>> from autodiff.backends import cuda_math     # doctest: +SKIP
>>> float(cuda_math.exp(0.0))                   # doctest: +SKIP
1.0
"""
import math

from numba import cuda
from numba.cuda.core import config as _cuda_config

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
