"""Numba CPU lowering of ``pure_callback``: the kernel calls back into Python.

A ``pure_callback`` equation becomes an object-mode block inside the kernel::

    # a, = pure_callback[callback=erfcx vmap_method='sequential'] x
    with _lit0(A=_lit2):                     # numba.objmode(A=float64[::1])
        A, = _lit1(3, X)                     # numba_callback.call_host(key 3, X)

``call_host`` looks the callback up by its key in this process's registry, runs it on the
operands (numba hands them over as numpy arrays) and returns C-contiguous arrays of the
declared dtypes, which numba unboxes back into the kernel. The key is a small integer
given to each distinct callback (the user's function object with its declared results),
so retracing the same function yields the same source and reuses the compiled kernel; two
callbacks with equal structure never share one, as their keys differ. The surrounding
code stays nopython-compiled and fused; only the call itself pays for Python.

Why object mode and not a compiled-in call through a ctypes function pointer: the
pointer's address would have to be a constant of the kernel (the kernels are cached on
disk by their source, and one kernel serves every callback of its structure) or a new
kernel parameter, and the host side would rebuild arrays from raw pointers and sizes. The
object-mode block needs neither, the kernel still caches on disk, and it is faster.
Measured on the project's 2-core EPYC (numba 0.68.1), ``2 sin(x) + 1``-style kernels on
16 elements, plain ``@njit`` functions: no callback 0.61 µs per call, object-mode
callback 1.74 µs, ctypes function-pointer callback 2.34 µs (its Python side rebuilds the
arrays from addresses). Through ``ad.jit`` (``benchmarks/callback_bench.py``): 1.42 µs per
call without the callback, 5.48 µs with it.
"""
import threading
import warnings

import numpy as np

from ..callback import BatchedHostCallback, HostCallback  # noqa: F401  (registered types)

from .dimensions import no_dims
from .plan import register_lowering

__all__ = ["register", "call_host"]

# Upstream behaviour (numba 0.68): every object-mode block in an ``nogil=True`` function
# warns "Code running in object mode won't allow parallel execution despite nogil=True"
# at compile time. True and expected here (the call holds the GIL); the rest of the kernel
# still releases it. Filtered by message so that lowering needs no numba import.
# (Set again at each lowering: a caller's warnings.catch_warnings, pytest's for one, may
# have dropped the module-level filter by the time the kernel compiles.)


def _quiet_objmode_warning():
    warnings.filterwarnings("ignore", message=".*object mode won't allow parallel execution")


_quiet_objmode_warning()

_CALLBACKS = []          # key -> HostCallback (kept alive: the key is its identity)
_KEYS = {}               # HostCallback -> key
_LOCK = threading.Lock()


def register(callback):
    """The kernel-source key of ``callback`` (equal callbacks share one)."""
    with _LOCK:
        k = _KEYS.get(callback)
        if k is None:
            k = _KEYS[callback] = len(_CALLBACKS)
            _CALLBACKS.append(callback)
        return k


def call_host(key, *args):
    """What the generated object-mode block calls: results as numba unboxes them."""
    cb = _CALLBACKS[key]
    outs = cb.run(*args)
    return tuple(np.ascontiguousarray(o) if o.ndim else o.dtype.type(o[()]) for o in outs)


_NUMBA_NAMES = {"bool": "boolean"}


def _type_text(aval):
    name = _NUMBA_NAMES.get(aval.dtype.name, aval.dtype.name)
    t = f"__import__('numba').types.{name}"
    nd = len(aval.shape)
    if nd:
        t += "[" + ", ".join([":"] * (nd - 1) + ["::1"]) + "]"
    return t


def _op_pure_callback(ctx):
    _quiet_objmode_warning()
    mod = ctx.fb.mod
    key = register(ctx.p["callback"])
    objmode = mod.global_const("__import__('numba').objmode")
    host = mod.global_const(
        "__import__('autodiff.backends.numba_callback', fromlist=['call_host']).call_host")
    names = [name for _, name in ctx.outs]
    decl = ", ".join(f"{n}={mod.global_const(_type_text(v.aval))}"
                     for n, v in zip(names, ctx.e.outvars))
    args = "".join(f", {ref[2]}" for ref in ctx.ins)
    with ctx.block(f"with {objmode}({decl}):"):
        if names:
            ctx.emit(f"{', '.join(names)}, = {host}({key}{args})")
        else:
            ctx.emit(f"{host}({key}{args})")
    if names:
        # numba's with-lifting refuses a declared result nothing reads after the block
        # ("Invalid type annotation on non-outgoing variables"): a result the program does
        # not use (one of several, or an io_callback's kept for its effect) is read here once
        ctx.emit(f"{ctx.fb.tmp('keep')} = ({', '.join(names)},)")


register_lowering("pure_callback", "opaque", emit=_op_pure_callback, dims=no_dims, cost=100)


# debug_callback is the same object-mode call with no results (its run() returns none);
# the planner keeps effectful statements in program order (Planner.plan_opaque)
register_lowering("debug_callback", "opaque", emit=_op_pure_callback, dims=no_dims,
               cost=100)

