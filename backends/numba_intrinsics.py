"""LLVM-level building blocks of the branch-free, vectorizable Numba helpers
(:mod:`autodiff.backends.numba_math`, :mod:`autodiff.backends.trig_reduction`): ``select``
(one LLVM ``select``, no branch), bit casts between floats and integers (``f64_as_i64``,
``i64_as_f64``, ``f32_as_i32``, ``i32_as_f32``), ``fmuladd``, ``fabs``, ``copysign``, and
``HELPER_OPTIONS``, the ``@njit`` options every such helper is compiled with (numba_math's
docstring says why: explicit ``fastmath=False``, numpy's error model, forced inlining).

The intrinsics are compiled into their callers: the modules using them hash this file into
their helpers' disk-cache stamps (``cache_helpers(..., depends=...)``) and the kernels' cache
key includes it (``compile_cache``).
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["HELPER_OPTIONS", "select", "f64_as_i64", "i64_as_f64", "f32_as_i32", "i32_as_f32",
           "fmuladd", "fabs", "copysign"]

# Every helper keeps its compiled code on disk under ad.config.cache_dir (its module's
# cache_helpers call), like numba_runtime's, so a new process does not compile exp, tanh,
# sin, ... again before its first kernel (measured: the first blocking compile of
# jit(grad(f)) for f = sum(tanh(x) sin(x) + exp(-x^2)) went from 1.4 s to 0.75 s). The
# kernels that inline them still get their LLVM code: warm speed is unchanged.
HELPER_OPTIONS = dict(fastmath=False, error_model="numpy", nogil=True, forceinline=True)



def _unlit(t):
    return types.unliteral(t)


@intrinsic(prefer_literal=True)
def select(typingctx, cond, a, b):
    """``a if cond else b`` as one LLVM ``select`` instruction (no branch).

    Both operands are always evaluated.  Operands are converted to their common type
    (float64, float32, complex128, int64, bool, ...; LLVM selects a complex number's
    ``{re, im}`` struct whole); an integer literal next to a float is weak, as
    in numpy (``select(c, x_f32, 0)`` stays float32).  ``cond`` may be a bool or an
    integer (non-zero is true).
    """
    ta, tb = _unlit(a), _unlit(b)
    tc = _unlit(cond)
    if not isinstance(tc, (types.Boolean, types.Integer)):
        return None
    if isinstance(a, types.IntegerLiteral) and isinstance(tb, types.Float):
        rt = tb
    elif isinstance(b, types.IntegerLiteral) and isinstance(ta, types.Float):
        rt = ta
    else:
        rt = ta if ta == tb else typingctx.unify_types(ta, tb)
    if rt is None or not isinstance(rt, (types.Boolean, types.Integer, types.Float,
                                         types.Complex)):
        return None
    sig = rt(tc, ta, tb)

    def codegen(context, builder, sig, args):
        c = context.cast(builder, args[0], sig.args[0], types.boolean)
        x = context.cast(builder, args[1], sig.args[1], sig.return_type)
        y = context.cast(builder, args[2], sig.args[2], sig.return_type)
        return builder.select(c, x, y)

    return sig, codegen


def _bitcast_intrinsic(src, dst, doc):
    def impl(typingctx, x):
        tx = _unlit(x)
        if isinstance(src, types.Float):
            if tx != src:
                return None
        elif not isinstance(tx, types.Integer):
            return None
        sig = dst(src)

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], context.get_value_type(dst))

        return sig, codegen

    impl.__doc__ = doc
    return intrinsic(impl)


f64_as_i64 = _bitcast_intrinsic(types.float64, types.int64,
                                "Reinterpret the bits of a float64 as an int64.")
i64_as_f64 = _bitcast_intrinsic(types.int64, types.float64,
                                "Reinterpret the bits of an int64 as a float64.")
f32_as_i32 = _bitcast_intrinsic(types.float32, types.int32,
                                "Reinterpret the bits of a float32 as an int32.")
i32_as_f32 = _bitcast_intrinsic(types.int32, types.float32,
                                "Reinterpret the low 32 bits of an integer as a float32.")


def _llvm_float_intrinsic(name, nargs):
    def impl(typingctx, *args):
        ts = [_unlit(t) for t in args]
        if not all(t in (types.float32, types.float64) for t in ts):
            return None
        rt = types.float32 if all(t == types.float32 for t in ts) else types.float64
        sig = rt(*([rt] * nargs))

        def codegen(context, builder, sig, llargs):
            lty = context.get_value_type(sig.return_type)
            fnty = ir.FunctionType(lty, [lty] * nargs)
            suffix = "f32" if sig.return_type == types.float32 else "f64"
            fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.{name}.{suffix}")
            return builder.call(fn, llargs)

        return sig, codegen

    return impl


def _fmuladd(typingctx, a, b, c):
    return _llvm_float_intrinsic("fmuladd", 3)(typingctx, a, b, c)


def _fabs(typingctx, a):
    return _llvm_float_intrinsic("fabs", 1)(typingctx, a)


def _copysign(typingctx, a, b):
    return _llvm_float_intrinsic("copysign", 2)(typingctx, a, b)


_fmuladd.__doc__ = ("``a*b + c`` via llvm.fmuladd: fused (one rounding) where the target "
                    "has FMA, otherwise multiply then add.")
_fabs.__doc__ = "``|a|`` via llvm.fabs (clears the sign bit; NaN stays NaN)."
_copysign.__doc__ = "Magnitude of ``a`` with the sign bit of ``b`` (llvm.copysign)."
fmuladd = intrinsic(_fmuladd)
fabs = intrinsic(_fabs)
copysign = intrinsic(_copysign)
