"""The math namespace of generated CUDA kernels (``_dm`` in their source).

The CUDA records call a function by its numpy name (``«M».arcsinh(x)``: the default text
of a primitive whose lowering facts name a numpy function, docs/design.md "Lowering
records"); this module defines each name the primitives' facts give, by lookup. On a GPU
it is CUDA's libdevice through numba-cuda: ``math.<C99 name>`` (``arcsinh`` is
``math.asinh``, lowered to ``__nv_asinh``, ``__nv_asinhf`` for float32 operands), except
where numba-cuda's ``math`` lacks a function or types it differently: ``floor``/``ceil``
(``math.floor`` returns an integer in numba, as in Python), ``rint`` (numpy's ``round``:
half to even) and ``cbrt`` come from ``numba.cuda.libdevice`` directly. Those entry
points are float64; float32 operands are widened (exact for all four) and the emitter
casts the result back. ``mod`` and ``floor_divide`` are numpy's float remainder and
floor division (``npy_divmod``) as device functions.

Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) kernels run as Python on numpy
scalars, and ``numba.cuda.libdevice`` there is a set of stubs returning ``None`` (a silent
NaN: NUMBA_NOTES.md). Python's ``math`` is not a substitute either: it raises on overflow
and outside a function's domain (``math.log(0.0)``), where the GPU returns ``-inf``/NaN.
So under the simulator every name is numpy's ufunc of that name, which is also the
interpreter's semantics (the oracle of the tests). Host statements of a program call
numpy itself (the emitter writes ``np`` for ``«M»`` there).

Complex operands use the ``c``-prefixed C99 names (``«C».casinh(z)``,
``complex_math.complex_name``): numpy's algorithms from :mod:`.complex_math` (the source
the CPU's numba_complex compiles too) where a compiler's complex function differs from
numpy's beyond rounding, else numba-cuda's ``cmath``; and the helpers with numpy's
semantics where a plain expression would differ (``cdiv``, the lexicographic order
``clt``/``cle``/``cgt``/``cge``, ``cmax``/``cmin``, ``csign``, ``cipow``, ``cpow``),
one Python definition each, device functions on a GPU and under the simulator.
:data:`HOST` is the host functions' complex namespace (``_hc``: numpy's).

>>> import os
>>> from autodiff.backends import cuda_math     # doctest: +SKIP
>>> float(cuda_math.exp(0.0))                   # doctest: +SKIP
1.0
"""
import cmath
import math
import os as _os
import types as _pytypes

import numpy as np

from ..core import primitives
from . import complex_math
from .complex_math import c99_name, complex_name
from .numba_cuda_expressions import has_complex


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
if SIMULATOR:        # its block runner polls its threads without pause: cuda_simulator.py
    from . import cuda_simulator as _cuda_simulator
    _cuda_simulator.install()

#: the compiler of the kernels: numba-cuda (its simulator runs them in CI), or on a GPU
#: numba-cuda-mlir where ``AUTODIFF_CUDA_COMPILER=numba-cuda-mlir`` asks for it (its C++
#: launcher; docs/cuda.md "The compiler"). Generated programs, the runtime's kernels and
#: the device functions here all take ``cuda`` from this module: one compiler for all.
COMPILER = "numba-cuda"
if not SIMULATOR and _os.environ.get("AUTODIFF_CUDA_COMPILER", "").strip().lower() in (
        "numba-cuda-mlir", "mlir"):                # pragma: no cover - needs the package
    from numba_cuda_mlir import cuda  # noqa: E402,F811
    COMPILER = "numba-cuda-mlir"

def _numpy_names():
    """The numpy names of the elementwise primitives (their lowering facts): the names the
    CUDA records' default text calls (``«M».arcsinh(x)``, ``«C».casinh(z)``)."""
    names = set()
    for p in list(primitives.values()):
        name = getattr(getattr(p, "lowering", None), "numpy_name", None)
        if name is not None:
            names.add(name)
    return sorted(names)


# ---------------------------------------------------------------------------------------
# real operands: every name numpy's
# ---------------------------------------------------------------------------------------

#: names the CUDA records call beyond the primitives' own numpy functions
EXTRA_NAMES = ("fabs", "mod", "floor_divide")

if SIMULATOR:
    for _n in _numpy_names() + list(EXTRA_NAMES):
        if hasattr(np, _n):
            globals()[_n] = getattr(np, _n)
else:                                              # pragma: no cover - needs a GPU
    _ld = cuda.libdevice
    # math's floor/ceil return integers in numba; libdevice has rint (numpy's round) and cbrt
    _LIBDEVICE = {"floor": _ld.floor, "ceil": _ld.ceil, "rint": _ld.rint, "cbrt": _ld.cbrt}
    for _n in _numpy_names() + ["fabs"]:
        _f = _LIBDEVICE.get(_n) or getattr(math, c99_name(_n), None)
        if _f is not None:
            globals()[_n] = _f

    @cuda.jit(device=True, inline=True)
    def mod(x, y):
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
    def floor_divide(x, y):
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


if COMPILER == "numba-cuda-mlir":                 # pragma: no cover - needs the package
    from numba_cuda_mlir.cuda import experimental

    @cuda.jit(device=True, inline=True)
    def threadfence():
        """A device-wide memory fence: ``membar.gl`` (numba-cuda-mlir 0.6.0 types
        ``cuda.threadfence`` but has no lowering for it)."""
        experimental.inline_ptx("membar.gl;")
else:
    @cuda.jit(device=True, inline=True)
    def threadfence():
        """A device-wide memory fence (``cuda.threadfence``). Kernels call it through this
        module: the one place naming it, for a compiler that spells it otherwise."""
        cuda.threadfence()


# ---------------------------------------------------------------------------------------
# complex operands
# ---------------------------------------------------------------------------------------

_COMPLEX_FUNCTIONS = [n for n in _numpy_names() if has_complex(n)]
# the shared algorithms as device functions (math, cmath: libdevice); plain Python under
# the simulator, where they are the helpers' definition
_DEVICE = complex_math.compile_for(cuda.jit(device=True, inline=True), __name__)
globals().update({n: _DEVICE[n] for n in complex_math.HELPERS})
if SIMULATOR:
    # kernels run as Python on numpy scalars: numpy's own complex functions
    globals().update({complex_name(n): getattr(np, n) for n in _COMPLEX_FUNCTIONS})
else:                                              # pragma: no cover - needs a GPU
    globals().update({complex_name(n): _DEVICE[complex_name(n)] if complex_name(n) in _DEVICE
                      else getattr(cmath, c99_name(n)) for n in _COMPLEX_FUNCTIONS})

# the GPU's device functions as plain Python (numpy's algorithms on Python complex numbers),
# which tests check against numpy where the simulator cannot run them
globals().update({"_" + n: getattr(complex_math, n) for n in complex_math.FUNCTIONS})

#: the host functions' namespace (``_hc``): numpy's functions of the same meaning
HOST = _pytypes.SimpleNamespace(
    **{complex_name(n): getattr(np, n) for n in _COMPLEX_FUNCTIONS},
    cdiv=np.divide, csign=np.sign, cisnan=lambda z: bool(np.isnan(z)), clt=np.less,
    cle=np.less_equal, cgt=np.greater, cge=np.greater_equal, cmax=np.maximum,
    cmin=np.minimum, cipow=lambda z, n: np.power(z, n), cpow=np.power)
