"""Rule helpers shared by every primitive family."""
import numpy as np

from ..core import (ShapedArray, Tracer, UndefinedPrimal, Zero, get_aval, is_float_dtype)
from ..errors import (DTypeError, ShapeError)

__all__ = ["aval_of", "bdim_to_front", "defjvp", "defjvp_zero", "deflinear", "dtype_of", "full", "full_like", "instantiate", "is_zero", "ones_like", "scalar", "shape_of", "tangent_dtype", "zeros_like"]

# ============================================================================
# Small helpers used by the rules
# ============================================================================


def aval_of(x):
    if isinstance(x, (Zero, UndefinedPrimal)):
        return x.aval
    return get_aval(x)


def shape_of(x):
    return aval_of(x).shape


def dtype_of(x):
    return aval_of(x).dtype


def scalar(v, dtype):
    """A Python number as a scalar of ``dtype`` (becomes a Literal when traced)."""
    return np.dtype(dtype).type(v)


def _coerce_pair(x, y):
    """Python scalars take the other operand's dtype (weak typing)."""
    if isinstance(x, (int, float, bool)) and not isinstance(x, np.generic):
        x = scalar(x, dtype_of(y))
    if isinstance(y, (int, float, bool)) and not isinstance(y, np.generic):
        y = scalar(y, dtype_of(x))
    return x, y


def instantiate(t, aval=None):
    """A real zero array for a symbolic :class:`Zero`."""
    if isinstance(t, Zero):
        return full(t.aval.shape, 0, t.aval.dtype)
    return t


def is_zero(t):
    return isinstance(t, Zero)


def _zero_like(x):
    a = aval_of(x)
    return Zero(ShapedArray(a.shape, a.dtype))


def tangent_dtype(dtype):
    return np.dtype(dtype) if is_float_dtype(dtype) else np.dtype(np.float32)


# ============================================================================
# Rule helpers (the jvp / transpose / batch rules of most primitives are one line)
# ============================================================================

def _std_unary_aval(x, **_):
    return ShapedArray(x.shape, x.dtype)


def _float_unary_aval(name):
    def rule(x, **_):
        if x.dtype.kind not in "fc":
            raise DTypeError(f"{name} needs a float operand, got {x.dtype}")
        return ShapedArray(x.shape, x.dtype)
    return rule


def _binary_shape(name, x, y):
    if x.shape == y.shape or not y.shape:
        return x.shape
    if not x.shape:
        return y.shape
    raise ShapeError(f"{name}: operand shapes {x.shape} and {y.shape} differ "
                     f"(broadcast them first with anp.broadcast_to)")


def _binary_aval(name, out_dtype=None):
    def rule(x, y, **_):
        if x.dtype != y.dtype:
            raise DTypeError(f"{name}: operand dtypes {x.dtype} and {y.dtype} differ")
        return ShapedArray(_binary_shape(name, x, y), out_dtype or x.dtype)
    return rule


def defjvp(prim, *rules):
    """JVP from one rule per input: ``rule(tangent, ans, *primals) -> contribution``."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for rule, t in zip(rules, tangents):
            if rule is None or is_zero(t):
                continue
            c = rule(t, ans, *primals, **params)
            out = c if out is None else add(out, c)
        return ans, (_zero_like(ans) if out is None else out)
    prim.jvp = jvp


def defjvp_zero(prim):
    """Piecewise-constant or integer-valued: the tangent is zero."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [_zero_like(a) for a in ans]
        return ans, _zero_like(ans)
    prim.jvp = jvp
    prim.differentiable = False


def deflinear(prim, transpose_rule):
    """Linear in all (non-static) inputs: jvp applies ``prim`` to the tangents."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(is_zero(t) for t in tangents):
            return ans, _zero_like(ans)
        ts = [instantiate(t) for t in tangents]
        return ans, prim.bind(*ts, **params)
    prim.jvp = jvp
    prim.transpose = transpose_rule
    prim.is_linear = True


def _move_to_front(x, d):
    if d is None or d == 0:
        return x
    perm = (d,) + tuple(i for i in range(np.ndim(x) if not isinstance(x, Tracer) else x.ndim)
                        if i != d)
    return transpose(x, perm)


def _ndim(x):
    return len(shape_of(x))


def bdim_to_front(x, d, size=None):
    """Move the batch dim to axis 0; broadcast unbatched operands if ``size`` given."""
    if d is None:
        if size is None:
            return x
        s = shape_of(x)
        return broadcast_in_dim(x, (size,) + s, tuple(range(1, len(s) + 1)))
    return _move_to_front(x, d)


def _batch_elementwise(prim):
    """Elementwise n-ary: line up batch dims at the front; rank-0 operands stay."""
    def rule(args, dims, **params):
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        full_rank = max(_ndim(a) - (d is not None) for a, d in zip(args, dims))
        new = []
        for a, d in zip(args, dims):
            if d is None and _ndim(a) == 0:
                new.append(a)            # rank-0 operands broadcast by themselves
            elif d is not None and _ndim(a) == 1 and full_rank > 0:
                # a batched scalar meeting full-rank operands: give it their rank
                other_shape = next(shape_of(b)[:e] + shape_of(b)[e + 1:] if e is not None
                                   else shape_of(b) for b, e in zip(args, dims)
                                   if _ndim(b) - (e is not None) == full_rank)
                new.append(broadcast_in_dim(a, (size,) + tuple(other_shape), (0,)))
            else:
                new.append(bdim_to_front(a, d, size))
        out = prim.bind(*new, **params)
        if prim.multiple_results:
            return out, [0] * len(out)
        return out, 0
    prim.batch = rule


# ============================================================================
# Library ops: thin, strict wrappers the rules and autodiff.numpy are built on
# ============================================================================

def full(shape, value, dtype):
    return broadcast_in_dim(scalar(value, dtype), tuple(shape), ())


def zeros_like(x):
    a = aval_of(x)
    return full(a.shape, 0, a.dtype)


def ones_like(x):
    a = aval_of(x)
    return full(a.shape, 1, a.dtype)


def full_like(x, v):
    a = aval_of(x)
    return full(a.shape, v, a.dtype)


def _b(prim):
    def op(x, y):
        x, y = _coerce_pair(x, y)
        return prim.bind(x, y)
    op.__name__ = prim.name
    return op


def _u(prim):
    def op(x):
        return prim.bind(x)
    op.__name__ = prim.name
    return op

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .elementwise import (add)  # noqa: E402
from .shape import (broadcast_in_dim, transpose)  # noqa: E402
