"""Kernel launches bound once per argument types (issue 32, Build item 3).

numba-cuda's launch path, ``kernel[grid, block](*args)``, does at every launch what a
generated program's call site needs once: it types each argument and looks the overload
up, wraps and converts each argument to the flat parameters the kernel takes
(``_Kernel._prepare_args``: for an array its meminfo, parent, size, itemsize, data
pointer, shape and strides), builds a launch configuration (warning when the grid has
fewer than 128 blocks) and only then calls the driver through ``cuda.core.launch``. With
the driver call stubbed that is 28 us of host time on this project's 2-core machines for
two arrays and a scalar; on the H200's host it was 20 us for one array and 60-86 us for
eight, the launch cost issue 32 measured.

A program calls each kernel with the same argument types every time, so
:class:`BoundKernel` does that work once:

- the overload for the arguments' types is compiled and bound once
  (``Dispatcher.compile``, numba-cuda's public API, which its disk cache serves) and kept
  under the tuple of those types;
- a device array's parameters are computed once per array object and kept on it (a
  numba-cuda device array never changes its pointer, shape or strides; the runtime's
  pool hands the same objects back call after call);
- launch configurations are kept per (grid, block);
- the first launch of each binding checks that numba-cuda types the arguments as this
  module does, packs them numba-cuda's own way too (``_Kernel._prepare_args``, the code
  its own launch runs) and keeps the short path only when the two agree element for
  element and the kernel has no argument extensions, debug mode or launch-configuration
  sensitivity; otherwise that binding, and any argument this module does not know (a
  tuple of mixed types, a record, another library's array), launches through numba-cuda's
  own ``kernel[grid, block](*args)``, unchanged.

What is left per launch: the parameters of each argument (a dict lookup for an array, a
ctypes scalar for a number), one dict lookup for the binding, the kernel's function for
the current context (``get_cufunc``, as numba-cuda does at every launch) and the driver
call. ``gpu_check.py --ptx`` checks, for every kernel the CUDA backend generates (compiled
with the real compiler, the driver call stubbed), that a bound launch passes the driver
exactly what numba-cuda's launch passes, and times both.

Only numba-cuda kernels on a GPU are bound: numba-cuda-mlir launches from C++ already,
and the simulator launches Python threads. ``ad.config.update("jit_cuda_bound_launches",
False)`` sends every launch through numba-cuda's path (for debugging).
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

from ..config import config
from .cuda_math import COMPILER, SIMULATOR

__all__ = ["BoundKernel", "bound", "param", "same_params"]

_KEY = "_autodiff_launch"          # where a device array keeps (numba type, parameters)
_NUMBA = None                      # numba-cuda's modules, imported at the first launch
_SCALARS = None                    # type -> (numba type, packer): _scalars()
_LOCK = threading.Lock()


def bound(kernel):
    """``kernel`` as a :class:`BoundKernel` where numba-cuda launches it on a GPU; as it
    is under the simulator and numba-cuda-mlir (the one place that decides)."""
    return kernel if COMPILER != "numba-cuda" or SIMULATOR else BoundKernel(kernel)


def _numba():
    global _NUMBA, _SCALARS
    if _NUMBA is None:
        from numba.cuda import dispatcher, types
        from numba.cuda.cudadrv import devicearray, driver
        from numba.cuda.typing.typeof import Purpose, typeof
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        _SCALARS = _scalars()
        _NUMBA = (dispatcher, devicearray.DeviceNDArray, driver,
                  lambda a: typeof(a, Purpose.argument), CUDA_CORE_GE_1_0, types)
    return _NUMBA


def _scalars():
    """``type -> (numba type, parameters of a value)`` for the numbers numba-cuda types
    exactly so, packed as its ``_prepare_args`` packs them (a bool is passed as it is, a
    complex number as its two parts)."""
    from numba.cuda import types as t
    c = ctypes

    def one(ct):
        return lambda v: (ct(v),)

    def two(ct):
        return lambda v: (ct(v.real), ct(v.imag))

    def same(v):
        return (v,)
    table = {float: (t.float64, one(c.c_double)), bool: (t.boolean, same),
             complex: (t.complex128, two(c.c_double)),
             np.float64: (t.float64, one(c.c_double)), np.float32: (t.float32, one(c.c_float)),
             np.complex128: (t.complex128, two(c.c_double)),
             np.complex64: (t.complex64, two(c.c_float)), np.bool_: (t.boolean, same)}
    for n in (8, 16, 32, 64):
        table[getattr(np, f"int{n}")] = (getattr(t, f"int{n}"), one(getattr(c, f"c_int{n}")))
        table[getattr(np, f"uint{n}")] = (getattr(t, f"uint{n}"),
                                         one(getattr(c, f"c_uint{n}")))
    return table


def param(a):
    """``(numba type, parameters)`` of one kernel argument as numba-cuda passes it to
    the driver, or ``None`` where this module leaves the argument to numba-cuda."""
    nb = _NUMBA or _numba()
    tp = type(a)
    if tp is nb[1]:                                      # a numba-cuda device array
        d = a.__dict__
        r = d.get(_KEY)
        if r is None:
            r = d[_KEY] = _array_param(a, nb)
        return r or None
    if tp is int:
        if -(1 << 63) <= a < (1 << 63):
            return nb[5].int64, (ctypes.c_int64(a),)
        return None
    s = _SCALARS.get(tp)
    if s is not None:
        return s[0], s[1](a)
    if tp is tuple and a:                                # a tuple of one kind of number
        ps = [param(x) for x in a]
        if None in ps or any(p[0] != ps[0][0] for p in ps):
            return None
        return nb[5].UniTuple(ps[0][0], len(ps)), tuple(v for p in ps for v in p[1])
    return None


def _array_param(a, nb):
    ptr = a.device_ctypes_pointer.value
    if ptr is None or not a.strides:     # empty, or rank 0: numba-cuda's own path
        return False
    return nb[3](a), (0, 0, a.size, a.dtype.itemsize, ptr, *a.shape, *a.strides)


def same_params(ours, theirs):
    """Whether two flat parameter lists are the same for the driver: equal ints, and
    ctypes values of the same type and value."""
    if len(ours) != len(theirs):
        return False
    for x, y in zip(ours, theirs):
        if isinstance(x, ctypes._SimpleCData) or isinstance(y, ctypes._SimpleCData):
            if type(x) is not type(y) or x.value != y.value:
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


class _Binding:
    __slots__ = ("kernel", "fast", "configs")

    def __init__(self, kernel, fast):
        self.kernel, self.fast, self.configs = kernel, fast, {}


class BoundKernel:
    """A numba-cuda kernel whose launches, ``k[grid, block](*args)`` as the kernel's own,
    are bound once per argument types (module docstring). Other attributes are the
    kernel's (``py_func``, ``overloads``, ...)."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.bindings = {}                 # tuple of numba types -> _Binding, or None

    def __getattr__(self, attr):
        return getattr(self.dispatcher, attr)

    def __getitem__(self, cfg):
        grid, block = cfg[0], cfg[1]
        if len(cfg) > 2 and any(cfg[2:]):               # a stream or dynamic shared memory
            return self.dispatcher[cfg]

        def call(*args):
            return self.launch(grid, block, args)
        return call

    def launch(self, grid, block, args):
        """Launch on the default stream with ``grid`` and ``block`` (ints or tuples)."""
        if not config._values["jit_cuda_bound_launches"]:
            return self.dispatcher[grid, block](*args)
        ps = [param(a) for a in args]
        if None in ps:
            return self.dispatcher[grid, block](*args)
        key = tuple(p[0] for p in ps)
        b = self.bindings.get(key)
        if b is None:
            b = self._bind(key, args, ps)
        if not b.fast:                       # numba-cuda's own launch, every time
            return self.dispatcher[grid, block](*args)
        cfg = b.configs.get((grid, block))
        if cfg is None:
            cfg = b.configs[(grid, block)] = _config(b.kernel, grid, block)
        flat = [v for p in ps for v in p[1]]
        return _NUMBA[0].launch(_stream(), cfg, b.kernel._codelibrary.get_cufunc().kernel,
                                *flat)

    def _bind(self, key, args, ps):
        nb = _numba()
        if tuple(nb[3](a) for a in args) != key:   # typed otherwise by numba-cuda: its way
            b = _Binding(None, False)
        else:
            b = self._bind_kernel(key, args, ps)
        with _LOCK:
            self.bindings[key] = b
        return b

    def _bind_kernel(self, key, args, ps):
        kernel = self.dispatcher.compile(key)
        fast = (not kernel.extensions and not kernel.debug
                and not getattr(kernel, "launch_config_sensitive", False))
        if fast:                           # numba-cuda's own packing, as its launch does
            theirs = []
            for t, v in zip(kernel.argument_types, args):
                kernel._prepare_args(t, v, 0, [], theirs)
            fast = same_params([v for p in ps for v in p[1]], theirs)
        return _Binding(kernel, fast)


def _dims(grid, block):
    return _NUMBA[0].normalize_kernel_dimensions(grid, block)


_TLS = threading.local()


def _stream():
    """The default stream as numba-cuda's launch takes it (one object per thread)."""
    s = getattr(_TLS, "stream", None)
    if s is None:
        s = _TLS.stream = _NUMBA[2]._to_core_stream(0)
    return s


def _config(kernel, grid, block):
    disp, ge_1_0 = _NUMBA[0], _NUMBA[4]
    g, b = _dims(grid, block)
    if ge_1_0:
        return disp.LaunchConfig(grid=g, block=b, shmem_size=0,
                                 is_cooperative=kernel.cooperative)
    return disp.LaunchConfig(grid=g, block=b, shmem_size=0,                # pragma: no cover
                             cooperative_launch=kernel.cooperative)
