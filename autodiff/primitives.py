"""The primitive set, each declared once with all of its rules beside it.

The set is small and closed (lax-like). Elementwise binary primitives take
operands of one dtype and one shape (rank-0 operands broadcast); everything
numpy-level (broadcasting, promotion, indexing) is composed from these in
:mod:`autodiff.numpy`.

Rules of a primitive ``p``:
  ``p.impl``           numpy evaluation (the reference semantics)
  ``p.abstract_eval``  shapes and dtypes
  ``p.jvp``            forward derivative, written with these same ops so its output
                       can be differentiated again
  ``p.transpose``      for linear primitives: cotangents of the linear inputs
  ``p.batch``          vmap: ``(args, dims) -> (out, out_dim)``

>>> from autodiff import primitives as P
>>> import numpy as np
>>> P.sin_p.impl(np.zeros(2))
array([0., 0.])
>>> P.sin_p.abstract_eval(P.ShapedArray((2,), np.float64))
ShapedArray(f64[2])
"""
import builtins
import numpy as np

from .core import (Primitive, ShapedArray, Tracer, Zero, UndefinedPrimal, Literal, bind,
                   get_aval, primitives, is_float_dtype)
from .errors import ShapeError, DTypeError

__all__ = ["primitives"]

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


def _scalar(v, dtype):
    """A Python number as a scalar of ``dtype`` (becomes a Literal when traced)."""
    return np.dtype(dtype).type(v)


def _coerce_pair(x, y):
    """Python scalars take the other operand's dtype (weak typing)."""
    if isinstance(x, (int, float, bool)) and not isinstance(x, np.generic):
        x = _scalar(x, dtype_of(y))
    if isinstance(y, (int, float, bool)) and not isinstance(y, np.generic):
        y = _scalar(y, dtype_of(x))
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
    return broadcast_in_dim(_scalar(value, dtype), tuple(shape), ())


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


# ============================================================================
# Elementwise unary
# ============================================================================

def _unary(name, impl, float_only=True):
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = _float_unary_aval(name) if float_only else _std_unary_aval
    _batch_elementwise(p)
    return p


neg_p = _unary("neg", np.negative, float_only=False)
deflinear(neg_p, lambda ct, x: [neg(ct)])

sign_p = _unary("sign", np.sign, float_only=False)
defjvp_zero(sign_p)
floor_p = _unary("floor", np.floor)
defjvp_zero(floor_p)
ceil_p = _unary("ceil", np.ceil)
defjvp_zero(ceil_p)
round_p = _unary("round", np.round)       # numpy: round half to even
defjvp_zero(round_p)

is_finite_p = Primitive("is_finite")
is_finite_p.impl = np.isfinite
is_finite_p.abstract_eval = lambda x: ShapedArray(x.shape, np.bool_)
defjvp_zero(is_finite_p)
_batch_elementwise(is_finite_p)

not_p = Primitive("not")
not_p.impl = np.invert
not_p.abstract_eval = _std_unary_aval
defjvp_zero(not_p)
_batch_elementwise(not_p)

exp_p = _unary("exp", np.exp)
defjvp(exp_p, lambda g, ans, x: mul(g, ans))                       # d e^x = e^x
exp2_p = _unary("exp2", np.exp2)
defjvp(exp2_p, lambda g, ans, x: mul(g, mul(ans, np.log(2.0).astype(ans.dtype))))
log_p = _unary("log", np.log)
defjvp(log_p, lambda g, ans, x: div(g, x))                          # d log x = 1/x
log1p_p = _unary("log1p", np.log1p)
defjvp(log1p_p, lambda g, ans, x: div(g, add(x, 1)))
expm1_p = _unary("expm1", np.expm1)
defjvp(expm1_p, lambda g, ans, x: mul(g, add(ans, 1)))
tanh_p = _unary("tanh", np.tanh)
defjvp(tanh_p, lambda g, ans, x: mul(g, sub(1, mul(ans, ans))))     # 1 - tanh²


def _logistic_impl(x):
    # σ(x) = 1/(1+e^-x) for x >= 0 and e^x/(1+e^x) below: the second keeps the subnormal
    # results of x in [-745, -708] (1/(1+e^-x) overflows e^-x there and returns 0)
    x = np.asarray(x)
    with np.errstate(over="ignore", under="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


logistic_p = _unary("logistic", _logistic_impl)
defjvp(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(1, ans))))  # σ(1-σ)
sin_p = _unary("sin", np.sin)
defjvp(sin_p, lambda g, ans, x: mul(g, cos(x)))
cos_p = _unary("cos", np.cos)
defjvp(cos_p, lambda g, ans, x: neg(mul(g, sin(x))))
tan_p = _unary("tan", np.tan)
defjvp(tan_p, lambda g, ans, x: mul(g, add(1, mul(ans, ans))))      # 1 + tan²
asin_p = _unary("asin", np.arcsin)
defjvp(asin_p, lambda g, ans, x: mul(g, rsqrt(sub(1, mul(x, x)))))
acos_p = _unary("acos", np.arccos)
defjvp(acos_p, lambda g, ans, x: neg(mul(g, rsqrt(sub(1, mul(x, x))))))
atan_p = _unary("atan", np.arctan)
defjvp(atan_p, lambda g, ans, x: div(g, add(1, mul(x, x))))
sinh_p = _unary("sinh", np.sinh)
defjvp(sinh_p, lambda g, ans, x: mul(g, cosh(x)))
cosh_p = _unary("cosh", np.cosh)
defjvp(cosh_p, lambda g, ans, x: mul(g, sinh(x)))
asinh_p = _unary("asinh", np.arcsinh)
defjvp(asinh_p, lambda g, ans, x: mul(g, rsqrt(add(mul(x, x), 1))))
acosh_p = _unary("acosh", np.arccosh)
defjvp(acosh_p, lambda g, ans, x: mul(g, rsqrt(sub(mul(x, x), 1))))
atanh_p = _unary("atanh", np.arctanh)
defjvp(atanh_p, lambda g, ans, x: div(g, sub(1, mul(x, x))))
sqrt_p = _unary("sqrt", np.sqrt)
defjvp(sqrt_p, lambda g, ans, x: div(g, mul(ans, 2)))               # 1/(2√x)


def _rsqrt_impl(x):
    with np.errstate(divide="ignore"):
        return (1 / np.sqrt(x)).astype(np.asarray(x).dtype)


rsqrt_p = _unary("rsqrt", _rsqrt_impl)
defjvp(rsqrt_p, lambda g, ans, x: mul(g, mul(div(ans, x), -0.5)))   # -x^(-3/2)/2
cbrt_p = _unary("cbrt", np.cbrt)
defjvp(cbrt_p, lambda g, ans, x: div(g, mul(mul(ans, ans), 3)))     # 1/(3 x^(2/3))
abs_p = _unary("abs", np.abs, float_only=False)
defjvp(abs_p, lambda g, ans, x: mul(g, sign(x)))                    # sign(0) = 0


def _integer_pow_impl(x, *, y):
    if y < 0 and np.asarray(x).dtype.kind in "iu":
        return np.asarray(x).astype(np.float64) ** y
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.power(x, np.asarray(y, dtype=np.asarray(x).dtype) if np.asarray(x).dtype.kind == "f" else y)


integer_pow_p = Primitive("integer_pow")
integer_pow_p.impl = _integer_pow_impl
integer_pow_p.abstract_eval = _std_unary_aval
_batch_elementwise(integer_pow_p)


def _integer_pow_jvp_rule(g, ans, x, *, y):
    # d x^y = y x^(y-1); exactly zero for y == 0 (convention: d(x**0)/dx = 0)
    if y == 0:
        return zeros_like(g)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(x, 2))
    return mul(g, mul(integer_pow(x, y - 1), y))


defjvp(integer_pow_p, _integer_pow_jvp_rule)


def integer_pow(x, y):
    return integer_pow_p.bind(x, y=int(y))


# ============================================================================
# Elementwise binary
# ============================================================================

def _binary(name, impl, out_dtype=None):
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = _binary_aval(name, out_dtype)
    _batch_elementwise(p)
    return p


def unbroadcast(ct, aval):
    """Sum ``ct`` down to ``aval``'s shape (rank-0 operands broadcast implicitly)."""
    if isinstance(ct, Zero):
        return Zero(aval)
    cs = shape_of(ct)
    if cs == aval.shape:
        return ct
    if not aval.shape:
        return reduce_sum(ct, tuple(range(len(cs))))
    raise ShapeError(f"cannot unbroadcast {cs} to {aval.shape}")


def _linear_binary_transpose(sign_y):
    def rule(ct, x, y):
        cx = unbroadcast(ct, x.aval) if isinstance(x, UndefinedPrimal) else None
        cy = None
        if isinstance(y, UndefinedPrimal):
            cy = unbroadcast(ct if sign_y > 0 or is_zero(ct) else neg(ct), y.aval)
        return [cx, cy]
    return rule


add_p = _binary("add", np.add)
deflinear(add_p, _linear_binary_transpose(+1))
sub_p = _binary("sub", np.subtract)
deflinear(sub_p, _linear_binary_transpose(-1))


def _add_jvp(primals, tangents):
    # add's tangent is the sum of the operands' tangents; a Zero passes the other through
    x, y = primals
    tx, ty = tangents
    ans = add_p.bind(x, y)
    return ans, _sum_tangents(ans, tx, ty, +1)


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    ans = sub_p.bind(x, y)
    return ans, _sum_tangents(ans, tx, ty, -1)


def _sum_tangents(ans, tx, ty, sy):
    sa = shape_of(ans)

    def fit(t):
        return t if shape_of(t) == sa else broadcast_in_dim(t, sa, ())
    if is_zero(tx) and is_zero(ty):
        return _zero_like(ans)
    if is_zero(ty):
        return fit(tx)
    if is_zero(tx):
        return fit(ty if sy > 0 else neg(ty))
    return (add_p if sy > 0 else sub_p).bind(tx, ty)


add_p.jvp = _add_jvp
sub_p.jvp = _sub_jvp

mul_p = _binary("mul", np.multiply)
defjvp(mul_p, lambda g, ans, x, y: mul_fit(g, y, ans), lambda g, ans, x, y: mul_fit(x, g, ans))


def mul_fit(a, b, ans):
    out = mul(a, b)
    return out if shape_of(out) == shape_of(ans) else broadcast_in_dim(out, shape_of(ans), ())


def _mul_transpose(ct, x, y):
    if is_zero(ct):
        return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None,
                Zero(y.aval) if isinstance(y, UndefinedPrimal) else None]
    if isinstance(x, UndefinedPrimal):
        assert not isinstance(y, UndefinedPrimal), "mul of two linear values is not linear"
        return [unbroadcast(mul(ct, y), x.aval), None]
    return [None, unbroadcast(mul(x, ct), y.aval)]


mul_p.transpose = _mul_transpose

div_p = _binary("div", np.divide)
def _div_jvp(primals, tangents):
    # d(x/y) = dx/y - dy·(x/y)/y
    x, y = primals
    tx, ty = tangents
    ans = div_p.bind(x, y)
    out = None
    sa = shape_of(ans)
    if not is_zero(tx):
        out = div(tx, y)
        if shape_of(out) != sa:
            out = broadcast_in_dim(out, sa, ())
    if not is_zero(ty):
        c = neg(mul_fit(ty, div(ans, y), ans))
        out = c if out is None else add(out, c)
    return ans, (_zero_like(ans) if out is None else out)


div_p.jvp = _div_jvp


def _div_transpose(ct, x, y):
    assert not isinstance(y, UndefinedPrimal), "division by a linear value is not linear"
    if is_zero(ct):
        return [Zero(x.aval), None]
    return [unbroadcast(div(ct, y), x.aval), None]


div_p.transpose = _div_transpose


def _pow_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.power(x, y)


pow_p = _binary("pow", _pow_impl)


def _pow_jvp(primals, tangents):
    # d x^y = y x^(y-1) dx + log(x) x^y dy, with 0 where y == 0 (dx) or x == 0 (dy)
    x, y = primals
    tx, ty = tangents
    ans = pow_p.bind(x, y)
    sa = shape_of(ans)
    out = None
    if not is_zero(tx):
        yb = y if shape_of(y) == sa else broadcast_in_dim(y, sa, ())
        xb = x if shape_of(x) == sa else broadcast_in_dim(x, sa, ())
        d = select(eq(yb, 0), zeros_like(ans), mul(yb, pow(xb, sub(yb, 1))))
        out = mul_fit(tx, d, ans)
    if not is_zero(ty):
        xb = x if shape_of(x) == sa else broadcast_in_dim(x, sa, ())
        safe_x = select(eq(xb, 0), ones_like(ans), xb)
        d = select(eq(xb, 0), zeros_like(ans), mul(log(safe_x), ans))
        c = mul_fit(ty, d, ans)
        out = c if out is None else add(out, c)
    return ans, (_zero_like(ans) if out is None else out)


pow_p.jvp = _pow_jvp

max_p = _binary("max", np.maximum)
min_p = _binary("min", np.minimum)


def _minmax_jvp(prim, gt):
    # ties share the tangent equally (convention 5): weights 1, 0.5, 0
    def jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        ans = prim.bind(x, y)
        sa = shape_of(ans)
        xb = x if shape_of(x) == sa else broadcast_in_dim(x, sa, ())
        yb = y if shape_of(y) == sa else broadcast_in_dim(y, sa, ())
        one, half, zero = full(sa, 1, ans.dtype), full(sa, 0.5, ans.dtype), full(sa, 0, ans.dtype)
        wx = select(gt(xb, yb), one, select(eq(xb, yb), half, zero))
        out = None
        if not is_zero(tx):
            out = mul_fit(tx, wx, ans)
        if not is_zero(ty):
            c = mul_fit(ty, sub(1, wx), ans)
            out = c if out is None else add(out, c)
        return ans, (_zero_like(ans) if out is None else out)
    prim.jvp = jvp


atan2_p = _binary("atan2", np.arctan2)
defjvp(atan2_p,
       lambda g, ans, x, y: mul_fit(g, div(y, add(mul(x, x), mul(y, y))), ans),
       lambda g, ans, x, y: mul_fit(g, neg(div(x, add(mul(x, x), mul(y, y)))), ans))


def _mod_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(x, y)


mod_p = _binary("mod", _mod_impl)     # numpy's (Python's) remainder: sign of the divisor
defjvp(mod_p, lambda g, ans, x, y: g if shape_of(g) == shape_of(ans) else broadcast_in_dim(g, shape_of(ans), ()),
       lambda g, ans, x, y: neg(mul_fit(g, floor(div(x, y)), ans)))


def _floor_divide_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(x, y)


floor_divide_p = _binary("floor_divide", _floor_divide_impl)
defjvp_zero(floor_divide_p)

for _name, _impl in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                     ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    globals()[_name + "_p"] = _p = _binary(_name, _impl, out_dtype=np.bool_)
    defjvp_zero(_p)
for _name, _impl in [("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)]:
    globals()[_name + "_p"] = _p = _binary(_name, _impl)
    defjvp_zero(_p)

# ============================================================================
# select, convert_element_type, stop_gradient
# ============================================================================

select_p = Primitive("select")   # select(pred, on_true, on_false)
select_p.impl = lambda p, t, f: np.where(p, t, f)


def _select_aval(p, t, f):
    if p.dtype != np.bool_:
        raise DTypeError(f"select: predicate must be bool, got {p.dtype}")
    if t.dtype != f.dtype:
        raise DTypeError(f"select: branch dtypes {t.dtype} and {f.dtype} differ")
    shapes = [s for s in (p.shape, t.shape, f.shape) if s]
    if any(s != shapes[0] for s in shapes):
        raise ShapeError(f"select: shapes {p.shape}, {t.shape}, {f.shape} differ")
    return ShapedArray(shapes[0] if shapes else (), t.dtype)


select_p.abstract_eval = _select_aval
_batch_elementwise(select_p)


def _select_jvp(primals, tangents):
    p, t, f = primals
    _, tt, tf = tangents
    ans = select_p.bind(p, t, f)
    if is_zero(tt) and is_zero(tf):
        return ans, _zero_like(ans)
    sa = shape_of(ans)

    def fit(z):
        z = instantiate(z)
        return z if shape_of(z) == sa else broadcast_in_dim(z, sa, ())
    return ans, select_p.bind(p, fit(tt), fit(tf))


def _select_transpose(ct, p, t, f):
    assert not isinstance(p, UndefinedPrimal)
    out = [None, None, None]
    if isinstance(t, UndefinedPrimal):
        out[1] = Zero(t.aval) if is_zero(ct) else unbroadcast(select(p, ct, zeros_like(ct)), t.aval)
    if isinstance(f, UndefinedPrimal):
        out[2] = Zero(f.aval) if is_zero(ct) else unbroadcast(select(p, zeros_like(ct), ct), f.aval)
    return out


select_p.jvp = _select_jvp
select_p.transpose = _select_transpose
select_p.is_linear = True

convert_element_type_p = Primitive("convert_element_type")


def _convert_impl(x, *, new_dtype):
    x = np.asarray(x)
    if x.dtype.kind == "f" and np.dtype(new_dtype).kind in "iu":
        with np.errstate(invalid="ignore"):
            return x.astype(new_dtype)
    return x.astype(new_dtype)


convert_element_type_p.impl = _convert_impl
convert_element_type_p.abstract_eval = lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype)
_batch_elementwise(convert_element_type_p)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if is_zero(t) or not is_float_dtype(new_dtype) or not is_float_dtype(dtype_of(x)):
        return ans, _zero_like(ans)
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_transpose(ct, x, *, new_dtype):
    if is_zero(ct):
        return [Zero(x.aval)]
    return [convert_element_type_p.bind(ct, new_dtype=x.aval.dtype)]


convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.transpose = _convert_transpose
convert_element_type_p.is_linear = True


def convert(x, dtype):
    dtype = np.dtype(dtype)
    if dtype_of(x) == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype)


stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.impl = lambda x: x
stop_gradient_p.abstract_eval = _std_unary_aval
defjvp_zero(stop_gradient_p)
stop_gradient_p.differentiable = True
_batch_elementwise(stop_gradient_p)

# ============================================================================
# Reductions
# ============================================================================


def _reduce_aval(x, *, axes, out_dtype=None):
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ShapeError(f"reduction axis {a} out of range for shape {x.shape}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, out_dtype or x.dtype)


def _batch_reduce(prim, axes_param="axes"):
    def rule(args, dims, **params):
        (x,), (d,) = args, dims
        x = bdim_to_front(x, d)
        if axes_param == "axes":
            params = dict(params, axes=tuple(a + 1 for a in params["axes"]))
        else:
            params = dict(params, **{axes_param: params[axes_param] + 1})
        return prim.bind(x, **params), 0
    prim.batch = rule


def _reducer(name, impl, out_dtype=None):
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = lambda x, *, axes: _reduce_aval(x, axes=axes, out_dtype=out_dtype)
    _batch_reduce(p)
    return p


def _sum_impl(x, *, axes):
    x = np.asarray(x)
    return np.sum(x, axis=axes, dtype=x.dtype)


reduce_sum_p = _reducer("reduce_sum", _sum_impl)


def _reduce_sum_transpose(ct, x, *, axes):
    # transpose of a sum is a broadcast back along the summed axes
    shape = x.aval.shape
    if is_zero(ct):
        return [Zero(x.aval)]
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


deflinear(reduce_sum_p, _reduce_sum_transpose)

reduce_max_p = _reducer("reduce_max", lambda x, *, axes: np.max(x, axis=axes))
reduce_min_p = _reducer("reduce_min", lambda x, *, axes: np.min(x, axis=axes))


def _reduce_chooser_jvp(prim):
    # tangent is the mean of the tangents at the locations of the extremum (ties share)
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if is_zero(t):
            return ans, _zero_like(ans)
        shape = shape_of(x)
        kept = tuple(i for i in range(len(shape)) if i not in axes)
        loc = convert(eq(x, broadcast_in_dim(ans, shape, kept)), dtype_of(x))
        counts = reduce_sum(loc, axes)
        return ans, div(reduce_sum(mul(t, loc), axes), counts)
    prim.jvp = jvp


_reduce_chooser_jvp(reduce_max_p)
_reduce_chooser_jvp(reduce_min_p)

reduce_prod_p = _reducer("reduce_prod", lambda x, *, axes: np.prod(x, axis=axes, dtype=np.asarray(x).dtype))


def _reduce_prod_jvp(primals, tangents, *, axes):
    # d Πx = Σ_i dx_i Π_{j≠i} x_j; the products of the others come from exclusive
    # cumulative products from both ends, so zeros in x are handled exactly.
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if is_zero(t):
        return ans, _zero_like(ans)
    shape = shape_of(x)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    perm = kept + tuple(axes)
    xt = transpose(x, perm) if perm != tuple(range(len(shape))) else x
    tt = transpose(t, perm) if perm != tuple(range(len(shape))) else t
    kept_shape = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    xr = reshape(xt, kept_shape + (n,))
    tr = reshape(tt, kept_shape + (n,))
    ax = len(kept_shape)
    if n == 0:
        return ans, full(kept_shape, 0, dtype_of(x))
    one = full(kept_shape + (1,), 1, dtype_of(x))
    left = concatenate([one, slice_in_dim(cumprod(xr, ax), 0, n - 1, ax)], ax)
    right = concatenate([slice_in_dim(cumprod(xr, ax, reverse=True), 1, n, ax), one], ax)
    return ans, reduce_sum(mul(tr, mul(left, right)), (ax,))


reduce_prod_p.jvp = _reduce_prod_jvp

reduce_and_p = _reducer("reduce_and", lambda x, *, axes: np.all(x, axis=axes))
defjvp_zero(reduce_and_p)
reduce_or_p = _reducer("reduce_or", lambda x, *, axes: np.any(x, axis=axes))
defjvp_zero(reduce_or_p)


def _arg_aval(x, *, axis, index_dtype):
    return _reduce_aval(x, axes=(axis,), out_dtype=index_dtype)


argmax_p = Primitive("argmax")
argmax_p.impl = lambda x, *, axis, index_dtype: np.argmax(x, axis=axis).astype(index_dtype)
argmax_p.abstract_eval = _arg_aval
defjvp_zero(argmax_p)
_batch_reduce(argmax_p, "axis")
argmin_p = Primitive("argmin")
argmin_p.impl = lambda x, *, axis, index_dtype: np.argmin(x, axis=axis).astype(index_dtype)
argmin_p.abstract_eval = _arg_aval
defjvp_zero(argmin_p)
_batch_reduce(argmin_p, "axis")

# ============================================================================
# Shape operations
# ============================================================================

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _bid_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    ishape = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        ishape[d] = x.shape[i]
    return np.broadcast_to(x.reshape(ishape), shape).copy()


def _bid_aval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: {x.ndim} operand dims but "
                         f"broadcast_dimensions={broadcast_dimensions}")
    for i, d in enumerate(broadcast_dimensions):
        if not (x.shape[i] == 1 or x.shape[i] == shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x.shape} to {shape}")
    return ShapedArray(shape, x.dtype)


def _bid_transpose(ct, x, *, shape, broadcast_dimensions):
    if is_zero(ct):
        return [Zero(x.aval)]
    ishape = x.aval.shape
    new_dims = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions)
                     if ishape[i] == 1 and shape[d] != 1)
    axes = tuple(sorted(new_dims + expanded))
    out = reduce_sum(ct, axes) if axes else ct
    if shape_of(out) != ishape:
        out = reshape(out, ishape)
    return [out]


def _bid_batch(args, dims, *, shape, broadcast_dimensions):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    size = shape_of(x)[0]
    return broadcast_in_dim(x, (size,) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


broadcast_in_dim_p.impl = _bid_impl
broadcast_in_dim_p.abstract_eval = _bid_aval
deflinear(broadcast_in_dim_p, _bid_transpose)
broadcast_in_dim_p.batch = _bid_batch


def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if shape_of(x) == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


reshape_p = Primitive("reshape")
reshape_p.impl = lambda x, *, new_sizes: np.reshape(x, new_sizes)


def _reshape_aval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape array of shape {x.shape} into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype)


def _reshape_batch(args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return reshape(x, (shape_of(x)[0],) + tuple(new_sizes)), 0


reshape_p.abstract_eval = _reshape_aval
deflinear(reshape_p, lambda ct, x, *, new_sizes: [Zero(x.aval) if is_zero(ct) else reshape(ct, x.aval.shape)])
reshape_p.batch = _reshape_batch


def reshape(x, new_sizes):
    new_sizes = tuple(int(s) for s in new_sizes)
    if shape_of(x) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


transpose_p = Primitive("transpose")
transpose_p.impl = lambda x, *, permutation: np.transpose(x, permutation)


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {permutation} does not match rank {x.ndim}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


def _transpose_transpose(ct, x, *, permutation):
    if is_zero(ct):
        return [Zero(x.aval)]
    return [transpose(ct, tuple(np.argsort(permutation)))]


def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return transpose(x, (0,) + tuple(p + 1 for p in permutation)), 0


transpose_p.abstract_eval = _transpose_aval
deflinear(transpose_p, _transpose_transpose)
transpose_p.batch = _transpose_batch


def transpose(x, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


squeeze_p = Primitive("squeeze")
squeeze_p.impl = lambda x, *, dimensions: np.squeeze(x, axis=dimensions)


def _squeeze_aval(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise ShapeError(f"squeeze: dimension {d} of shape {x.shape} is not 1")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype)


squeeze_p.abstract_eval = _squeeze_aval
deflinear(squeeze_p, lambda ct, x, *, dimensions: [Zero(x.aval) if is_zero(ct) else reshape(ct, x.aval.shape)])


def _squeeze_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return squeeze_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


squeeze_p.batch = _squeeze_batch


def squeeze(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return squeeze_p.bind(x, dimensions=dimensions)


expand_dims_p = Primitive("expand_dims")
expand_dims_p.impl = lambda x, *, dimensions: np.expand_dims(x, dimensions)


def _expand_dims_aval(x, *, dimensions):
    n = x.ndim + len(dimensions)
    shape, it = [], iter(x.shape)
    for i in range(n):
        shape.append(1 if i in dimensions else next(it))
    return ShapedArray(shape, x.dtype)


expand_dims_p.abstract_eval = _expand_dims_aval
deflinear(expand_dims_p, lambda ct, x, *, dimensions: [Zero(x.aval) if is_zero(ct) else reshape(ct, x.aval.shape)])


def _expand_dims_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return expand_dims_p.bind(x, dimensions=tuple(a + 1 for a in dimensions)), 0


expand_dims_p.batch = _expand_dims_batch


def expand_dims(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return expand_dims_p.bind(x, dimensions=dimensions)


concatenate_p = Primitive("concatenate")
concatenate_p.impl = lambda *xs, dimension: np.concatenate(xs, axis=dimension)


def _concat_aval(*xs, dimension):
    base = xs[0]
    for x in xs:
        if x.dtype != base.dtype:
            raise DTypeError(f"concatenate: dtypes {base.dtype} and {x.dtype} differ")
        if x.ndim != base.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, base.shape))
                                      if i != dimension):
            raise ShapeError(f"concatenate: shapes {[y.shape for y in xs]} do not match "
                             f"outside axis {dimension}")
    shape = list(base.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, base.dtype)


def _concat_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = aval_of(x).shape[dimension]
        if isinstance(x, UndefinedPrimal):
            out.append(Zero(x.aval) if is_zero(ct) else slice_in_dim(ct, start, start + n, dimension))
        else:
            out.append(None)
        start += n
    return out


def _concat_batch(args, dims, *, dimension):
    size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    xs = [bdim_to_front(a, d, size) for a, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p.abstract_eval = _concat_aval
deflinear(concatenate_p, _concat_transpose)
concatenate_p.batch = _concat_batch


def concatenate(xs, dimension):
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=int(dimension))


pad_p = Primitive("pad")   # pad(x, padding_value) with (low, high, interior) per dim


def _pad_impl(x, pv, *, padding_config):
    x = np.asarray(x)
    if all(lo >= 0 and hi >= 0 and not it for lo, hi, it in padding_config):
        # the common case (transposes of slices): one fill and one copy, no crop
        out = np.full([lo + hi + n for n, (lo, hi, _) in zip(x.shape, padding_config)], pv,
                      dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, _, _) in zip(x.shape, padding_config))] = x
        return out
    out_shape = [lo + hi + n + max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, padding_config)]
    # build with non-negative padding, then crop negative lows/highs
    big = [max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * it
           for n, (lo, hi, it) in zip(x.shape, padding_config)]
    out = np.full(big, pv, dtype=x.dtype)
    idx = tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (it + 1) + 1 if n else max(lo, 0), it + 1)
                for n, (lo, hi, it) in zip(x.shape, padding_config))
    out[idx] = x
    crop = tuple(slice(-min(lo, 0), -min(lo, 0) + o) for o, (lo, hi, it) in zip(out_shape, padding_config))
    return out[crop]


def _pad_aval(x, pv, *, padding_config):
    if len(padding_config) != x.ndim:
        raise ShapeError(f"pad: padding_config has {len(padding_config)} entries for rank {x.ndim}")
    shape = [lo + hi + n + max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, padding_config)]
    if any(s < 0 for s in shape):
        raise ShapeError(f"pad: negative output shape {shape}")
    return ShapedArray(shape, x.dtype)


def _pad_transpose(ct, x, pv, *, padding_config):
    # pad's transpose crops the borders and takes every (interior+1)-th element
    out = [None, None]
    if is_zero(ct):
        return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None,
                Zero(pv.aval) if isinstance(pv, UndefinedPrimal) else None]
    cropped = pad(ct, _scalar(0, dtype_of(ct)), tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    t_x = slice_p.bind(cropped, start_indices=(0,) * len(padding_config),
                       limit_indices=shape_of(cropped),
                       strides=tuple(it + 1 for _, _, it in padding_config))
    if isinstance(x, UndefinedPrimal):
        out[0] = t_x
    if isinstance(pv, UndefinedPrimal):
        total = reduce_sum(ct, tuple(range(len(shape_of(ct)))))
        out[1] = sub(total, reduce_sum(t_x, tuple(range(len(shape_of(t_x))))))
    return out


def _pad_batch(args, dims, *, padding_config):
    x, pv = args
    dx, dpv = dims
    if dpv is not None:
        # a batched padding value: pad with zero, then select the value outside the
        # operand's positions (a select, not arithmetic, so an inf padding value stays exact)
        size = shape_of(pv)[dpv]
        x = bdim_to_front(x, dx, size)
        cfg = ((0, 0, 0),) + tuple(padding_config)
        padded = pad(x, _scalar(0, dtype_of(x)), cfg)
        inside = pad(full(shape_of(x), True, np.bool_), np.bool_(False), cfg)
        pvb = broadcast_in_dim(bdim_to_front(pv, dpv), shape_of(padded), (0,))
        return select(inside, padded, pvb), 0
    x = bdim_to_front(x, dx)
    return pad(x, pv, ((0, 0, 0),) + tuple(padding_config)), 0


pad_p.impl = _pad_impl
pad_p.abstract_eval = _pad_aval
deflinear(pad_p, _pad_transpose)
pad_p.batch = _pad_batch


def pad(x, padding_value, padding_config):
    cfg = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    if all(c == (0, 0, 0) for c in cfg):
        return x
    return pad_p.bind(x, padding_value, padding_config=cfg)


slice_p = Primitive("slice")
slice_p.impl = lambda x, *, start_indices, limit_indices, strides: \
    np.asarray(x)[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_aval(x, *, start_indices, limit_indices, strides):
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise ShapeError(f"slice: index lengths do not match rank {x.ndim}")
    shape = []
    for n, s, l, st in zip(x.shape, start_indices, limit_indices, strides):
        if not (0 <= s <= l <= n) or st < 1:
            raise ShapeError(f"slice [{s}:{l}:{st}] out of bounds for a dimension of size {n}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    if is_zero(ct):
        return [Zero(x.aval)]
    cfg = []
    for n, s, o, st in zip(shape, start_indices, shape_of(ct), strides):
        hi = n - (s + (o - 1) * st + 1) if o > 0 else n - s
        cfg.append((s, hi, st - 1))
    return [pad(ct, _scalar(0, dtype_of(ct)), cfg)]


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    n = shape_of(x)[0]
    return slice_p.bind(x, start_indices=(0,) + tuple(start_indices),
                        limit_indices=(n,) + tuple(limit_indices), strides=(1,) + tuple(strides)), 0


slice_p.abstract_eval = _slice_aval
deflinear(slice_p, _slice_transpose)
slice_p.batch = _slice_batch


def slice_op(x, start_indices, limit_indices, strides=None):
    shape = shape_of(x)
    strides = tuple(strides) if strides is not None else (1,) * len(shape)
    if tuple(start_indices) == (0,) * len(shape) and tuple(limit_indices) == shape and \
            all(s == 1 for s in strides):
        return x
    return slice_p.bind(x, start_indices=tuple(int(s) for s in start_indices),
                        limit_indices=tuple(int(s) for s in limit_indices),
                        strides=tuple(int(s) for s in strides))


def slice_in_dim(x, start, limit, axis, stride=1):
    shape = shape_of(x)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice_op(x, starts, limits, strides)


rev_p = Primitive("rev")
rev_p.impl = lambda x, *, dimensions: np.flip(x, axis=dimensions) if dimensions else x
rev_p.abstract_eval = lambda x, *, dimensions: ShapedArray(x.shape, x.dtype)
deflinear(rev_p, lambda ct, x, *, dimensions: [Zero(x.aval) if is_zero(ct) else rev(ct, dimensions)])


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return rev(x, tuple(a + 1 for a in dimensions)), 0


rev_p.batch = _rev_batch


def rev(x, dimensions):
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)


# dynamic_slice(x, *starts): starts are int scalars, clamped so the slice stays in bounds
dynamic_slice_p = Primitive("dynamic_slice")


def _clamp_starts(shape, starts, sizes):
    return tuple(int(np.clip(int(s), 0, n - k)) for s, n, k in zip(starts, shape, sizes))


def _ds_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamp_starts(x.shape, starts, slice_sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))].copy()


def _ds_aval(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: need {x.ndim} start indices and sizes")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise DTypeError("dynamic_slice: start indices must be integer scalars")
    if any(k > n or k < 0 for k, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: sizes {slice_sizes} exceed shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype)


def _ds_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    t = tangents[0]
    ans = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if is_zero(t):
        return ans, _zero_like(ans)
    return ans, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _ds_transpose(ct, x, *starts, slice_sizes):
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    if is_zero(ct):
        return [Zero(x.aval)] + [None] * len(starts)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _ds_batch(args, dims, *, slice_sizes):
    x, *starts = args
    dx, *dstarts = dims
    if all(d is None for d in dstarts):
        x = bdim_to_front(x, dx)
        z = _scalar(0, dtype_of(starts[0]) if starts else np.int64)
        return dynamic_slice_p.bind(x, z, *starts,
                                    slice_sizes=(shape_of(x)[0],) + tuple(slice_sizes)), 0
    # batched start indices: a gather of the slice windows
    return _batched_dynamic_slice(x, dx, starts, dstarts, slice_sizes), 0


dynamic_slice_p.impl = _ds_impl
dynamic_slice_p.abstract_eval = _ds_aval
dynamic_slice_p.jvp = _ds_jvp
dynamic_slice_p.transpose = _ds_transpose
dynamic_slice_p.is_linear = True
dynamic_slice_p.batch = _ds_batch


def dynamic_slice(x, starts, slice_sizes):
    return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(int(s) for s in slice_sizes))


dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dus_impl(x, upd, *starts):
    x = np.array(x, copy=True)
    upd = np.asarray(upd)
    st = _clamp_starts(x.shape, starts, upd.shape)
    x[tuple(slice(s, s + k) for s, k in zip(st, upd.shape))] = upd
    return x


def _dus_aval(x, upd, *starts):
    if x.dtype != upd.dtype:
        raise DTypeError(f"dynamic_update_slice: dtypes {x.dtype} and {upd.dtype} differ")
    if len(starts) != x.ndim or upd.ndim != x.ndim or any(u > n for u, n in zip(upd.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {upd.shape} does not fit {x.shape}")
    return ShapedArray(x.shape, x.dtype)


def _dus_jvp(primals, tangents):
    x, upd, *starts = primals
    tx, tu = tangents[:2]
    ans = dynamic_update_slice_p.bind(x, upd, *starts)
    if is_zero(tx) and is_zero(tu):
        return ans, _zero_like(ans)
    return ans, dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


def _dus_transpose(ct, x, upd, *starts):
    ua = aval_of(upd)
    if is_zero(ct):
        return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None,
                Zero(ua) if isinstance(upd, UndefinedPrimal) else None] + [None] * len(starts)
    cx = dynamic_update_slice_p.bind(ct, full(ua.shape, 0, ua.dtype), *starts) \
        if isinstance(x, UndefinedPrimal) else None
    cu = dynamic_slice_p.bind(ct, *starts, slice_sizes=ua.shape) \
        if isinstance(upd, UndefinedPrimal) else None
    return [cx, cu] + [None] * len(starts)


def _dus_batch(args, dims):
    x, upd, *starts = args
    dx, du, *dstarts = dims
    size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    if all(d is None for d in dstarts):
        x = bdim_to_front(x, dx, size)
        upd = bdim_to_front(upd, du, size)
        z = _scalar(0, dtype_of(starts[0]) if starts else np.int64)
        return dynamic_update_slice_p.bind(x, upd, z, *starts), 0
    # batched starts: scatter the update windows
    return _batched_dynamic_update_slice(x, dx, upd, du, starts, dstarts, size), 0


dynamic_update_slice_p.impl = _dus_impl
dynamic_update_slice_p.abstract_eval = _dus_aval
dynamic_update_slice_p.jvp = _dus_jvp
dynamic_update_slice_p.transpose = _dus_transpose
dynamic_update_slice_p.is_linear = True
dynamic_update_slice_p.batch = _dus_batch


def dynamic_update_slice(x, upd, starts):
    return dynamic_update_slice_p.bind(x, upd, *starts)


# ----------------------------------------------------------------------------
# gather / scatter over leading axes:
#   gather(x, idx)  with idx int[..., k] -> out[...] = x[idx[..., 0], ..., idx[..., k-1], :, ...]
# Indices are clamped into range (out-of-range behaviour of a compiled kernel must be
# defined; numpy's eager IndexError is kept by autodiff.numpy on concrete inputs).
# ----------------------------------------------------------------------------

def _index_tuple(x_shape, idx):
    idx = np.asarray(idx)
    k = idx.shape[-1]
    return tuple(np.clip(idx[..., i], -x_shape[i], x_shape[i] - 1) % max(x_shape[i], 1)
                 if x_shape[i] > 0 else idx[..., i] for i in range(k))


gather_p = Primitive("gather")


def _gather_impl(x, idx):
    x = np.asarray(x)
    return x[_index_tuple(x.shape, idx)]


def _gather_aval(x, idx):
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"gather: indices must be integers, got {idx.dtype}")
    if idx.ndim < 1 or idx.shape[-1] > x.ndim:
        raise ShapeError(f"gather: index shape {idx.shape} does not fit operand {x.shape}")
    k = idx.shape[-1]
    return ShapedArray(idx.shape[:-1] + x.shape[k:], x.dtype)


def _gather_transpose(ct, x, idx):
    if is_zero(ct):
        return [Zero(x.aval), None]
    return [scatter_add_p.bind(full(x.aval.shape, 0, x.aval.dtype), idx, ct), None]


def _gather_jvp(primals, tangents):
    x, idx = primals
    t = tangents[0]
    ans = gather_p.bind(x, idx)
    return ans, (_zero_like(ans) if is_zero(t) else gather_p.bind(t, idx))


def _with_batch_index(idx, size, lead_shape):
    """Indices ``[size, ..., k]`` (batch axis in front) gain the batch position: ``[size, ..., k+1]``."""
    s = shape_of(idx)
    b = iota(dtype_of(idx), s[:-1] + (1,), 0)
    return concatenate([b, idx], len(s) - 1)


def _gather_batch(args, dims):
    x, idx = args
    dx, di = dims
    size = shape_of(x)[dx] if dx is not None else shape_of(idx)[di]
    if di is None:
        # same indices for every batch element: move the batch axis just past the indexed axes
        k = shape_of(idx)[-1]
        x = _move_axis(x, dx, k)
        out = gather_p.bind(x, idx)
        return out, len(shape_of(idx)) - 1
    idx = bdim_to_front(idx, di)
    if dx is None:
        # one operand, a batch of index arrays: the index's leading axes are gather's batch
        return gather_p.bind(x, idx), 0
    x = bdim_to_front(x, dx, size)
    return gather_p.bind(x, _with_batch_index(idx, size, None)), 0


gather_p.impl = _gather_impl
gather_p.abstract_eval = _gather_aval
gather_p.jvp = _gather_jvp
gather_p.transpose = _gather_transpose
gather_p.is_linear = True
gather_p.batch = _gather_batch


def gather(x, idx):
    return gather_p.bind(x, idx)


def _scatter_aval(x, idx, upd):
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"scatter: indices must be integers, got {idx.dtype}")
    k = idx.shape[-1]
    want = idx.shape[:-1] + x.shape[k:]
    if upd.shape != want:
        raise ShapeError(f"scatter: updates have shape {upd.shape}, expected {want}")
    if upd.dtype != x.dtype:
        raise DTypeError(f"scatter: dtypes {x.dtype} and {upd.dtype} differ")
    return ShapedArray(x.shape, x.dtype)


scatter_add_p = Primitive("scatter_add")


def _scatter_add_impl(x, idx, upd):
    out = np.array(x, copy=True)
    np.add.at(out, _index_tuple(out.shape, idx), upd)
    return out


def _scatter_add_jvp(primals, tangents):
    x, idx, upd = primals
    tx, _, tu = tangents
    ans = scatter_add_p.bind(x, idx, upd)
    if is_zero(tx) and is_zero(tu):
        return ans, _zero_like(ans)
    return ans, scatter_add_p.bind(instantiate(tx), idx, instantiate(tu))


def _scatter_add_transpose(ct, x, idx, upd):
    if is_zero(ct):
        return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None, None,
                Zero(upd.aval) if isinstance(upd, UndefinedPrimal) else None]
    return [ct if isinstance(x, UndefinedPrimal) else None, None,
            gather_p.bind(ct, idx) if isinstance(upd, UndefinedPrimal) else None]


def _scatter_batch(prim):
    def rule(args, dims):
        x, idx, upd = args
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        x = bdim_to_front(x, dims[0], size)
        upd = bdim_to_front(upd, dims[2], size)
        if dims[1] is None:
            idx = broadcast_in_dim(idx, (size,) + shape_of(idx), tuple(range(1, len(shape_of(idx)) + 1)))
        else:
            idx = bdim_to_front(idx, dims[1])
        return prim.bind(x, _with_batch_index(idx, size, None), upd), 0
    prim.batch = rule


scatter_add_p.impl = _scatter_add_impl
scatter_add_p.abstract_eval = _scatter_aval
scatter_add_p.jvp = _scatter_add_jvp
scatter_add_p.transpose = _scatter_add_transpose
scatter_add_p.is_linear = True
_scatter_batch(scatter_add_p)

scatter_p = Primitive("scatter")   # set; with repeated indices the last update wins


def _scatter_impl(x, idx, upd):
    out = np.array(x, copy=True)
    out[_index_tuple(out.shape, idx)] = upd
    return out


def _scatter_jvp(primals, tangents):
    x, idx, upd = primals
    tx, _, tu = tangents
    ans = scatter_p.bind(x, idx, upd)
    if is_zero(tx) and is_zero(tu):
        return ans, _zero_like(ans)
    return ans, scatter_p.bind(instantiate(tx), idx, instantiate(tu))


def _scatter_transpose(ct, x, idx, upd):
    ua = aval_of(upd)
    if is_zero(ct):
        return [Zero(x.aval) if isinstance(x, UndefinedPrimal) else None, None,
                Zero(ua) if isinstance(upd, UndefinedPrimal) else None]
    cx = scatter_p.bind(ct, idx, full(ua.shape, 0, ua.dtype)) if isinstance(x, UndefinedPrimal) else None
    cu = None
    if isinstance(upd, UndefinedPrimal):
        # with repeated indices only the last update of a position lands in the output, so
        # only it gets that position's cotangent: scatter the updates' ids the same way and
        # keep the updates whose own id survived
        ishape = shape_of(idx)[:-1]
        k = shape_of(idx)[-1]
        n = int(np.prod(ishape, dtype=np.int64))
        ids = reshape(iota(np.int64, (n,), 0), ishape)
        won = scatter_p.bind(full(shape_of(ct)[:k], -1, np.int64), idx, ids)
        winner = eq(gather_p.bind(won, idx), ids)
        winner = broadcast_in_dim(winner, ua.shape, tuple(range(len(ishape))))
        g = gather_p.bind(ct, idx)
        cu = select(winner, g, zeros_like(g))
    return [cx, None, cu]


scatter_p.impl = _scatter_impl
scatter_p.abstract_eval = _scatter_aval
scatter_p.jvp = _scatter_jvp
scatter_p.transpose = _scatter_transpose
scatter_p.is_linear = True
_scatter_batch(scatter_p)


def _move_axis(x, src, dst):
    if src is None or src == dst:
        return x
    n = _ndim(x)
    order = [i for i in range(n) if i != src]
    order.insert(dst, src)
    return transpose(x, order)


def _window_indices(shape, starts, dstarts, win, size):
    """Index grids ``int[size, *win, ndim]`` of the windows at batched ``starts``, clamped
    into range as dynamic_slice / dynamic_update_slice clamp them."""
    idt = np.int64
    grids = []
    for i, (s, d) in enumerate(zip(starts, dstarts)):
        s = convert(s, idt)
        s = bdim_to_front(s, d) if d is not None else broadcast_in_dim(s, (size,), ())
        s = max_(min_(s, _scalar(shape[i] - win[i], idt)), _scalar(0, idt))
        grids.append(add(iota(idt, (size,) + tuple(win), i + 1),
                         broadcast_in_dim(s, (size,) + tuple(win), (0,))))
    return concatenate([expand_dims(g, (len(win) + 1,)) for g in grids], len(win) + 1)


def _batched_dynamic_slice(x, dx, starts, dstarts, slice_sizes):
    # batched start indices: a gather of the windows
    size = next(shape_of(s)[d] for s, d in zip(starts, dstarts) if d is not None)
    if dx is None:
        # one operand, a batch of windows: gather them straight from x (no copies of x)
        return gather_p.bind(x, _window_indices(shape_of(x), starts, dstarts, slice_sizes, size))
    x = bdim_to_front(x, dx)
    idx = _window_indices(shape_of(x)[1:], starts, dstarts, slice_sizes, size)
    return gather_p.bind(x, _with_batch_index(idx, size, None))


def _batched_dynamic_update_slice(x, dx, upd, du, starts, dstarts, size):
    # batched start indices: a scatter of the update windows
    x = bdim_to_front(x, dx, size)
    upd = bdim_to_front(upd, du, size)
    idx = _window_indices(shape_of(x)[1:], starts, dstarts, shape_of(upd)[1:], size)
    return scatter_p.bind(x, _with_batch_index(idx, size, None), upd)


# ============================================================================
# dot_general: contraction with batch dims; output = batch, lhs free, rhs free
# ============================================================================

dot_general_p = Primitive("dot_general")


def _free_dims(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_general_impl(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    nx, ny = x.ndim, y.ndim
    if not xb and len(xc) == 1 and 0 < nx <= 2 and 0 < ny <= 2:
        # matrix/vector products (every dense layer and its two backward products): one
        # np.dot on transposed views, ~20x less Python than the general path below
        return np.dot(x if xc[0] == nx - 1 else x.T, y if yc[0] == 0 else y.T)
    xf = _free_dims(x.ndim, xc, xb)
    yf = _free_dims(y.ndim, yc, yb)
    # canonical layout: x -> (batch, free, contract), y -> (batch, contract, free), then matmul
    xt = np.transpose(x, list(xb) + xf + list(xc))
    yt = np.transpose(y, list(yb) + list(yc) + yf)
    bshape = xt.shape[:len(xb)]
    m = int(np.prod([x.shape[i] for i in xf], dtype=np.int64))
    n = int(np.prod([y.shape[i] for i in yf], dtype=np.int64))
    k = int(np.prod([x.shape[i] for i in xc], dtype=np.int64))
    if not xc:
        # an outer product (per-example gradients are full of them): a broadcast multiply is
        # ~3x faster than matmul with k = 1
        out = xt.reshape(bshape + (m, 1)) * yt.reshape(bshape + (1, n))
    else:
        out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return out.reshape(bshape + tuple(x.shape[i] for i in xf) + tuple(y.shape[i] for i in yf))


def _dot_general_aval(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    if x.dtype != y.dtype:
        raise DTypeError(f"dot_general: dtypes {x.dtype} and {y.dtype} differ")
    if [x.shape[i] for i in xc] != [y.shape[i] for i in yc]:
        raise ShapeError(f"dot_general: contracting dimensions do not match: shapes "
                         f"{x.shape} and {y.shape} (axes {tuple(xc)} and {tuple(yc)})")
    if [x.shape[i] for i in xb] != [y.shape[i] for i in yb]:
        raise ShapeError(f"dot_general: batch dimensions do not match: shapes {x.shape} and {y.shape}")
    shape = ([x.shape[i] for i in xb] + [x.shape[i] for i in _free_dims(x.ndim, xc, xb)]
             + [y.shape[i] for i in _free_dims(y.ndim, yc, yb)])
    return ShapedArray(shape, x.dtype)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False):
    # ct has layout (batch, x_free, y_free) [or (batch, y_free, x_free) when swapped].
    # x's cotangent contracts ct with y over y's free dims, batched over batch dims,
    # then the result (batch, x_free, x_contract in y's order) is permuted back to x's axes.
    (xc, yc), (xb, yb) = dimension_numbers
    x_ndim, y_ndim = len(x_aval.shape), _ndim(y)
    x_free = _free_dims(x_ndim, xc, xb)
    y_free = _free_dims(y_ndim, yc, yb)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(xb, y_free, x_free)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_free, y_free)
    dims = ((ans_y, tuple(y_free)), (ans_batch, tuple(yb)))
    xc_by_y = [xc[i] for i in np.argsort(yc)]
    out_axes = np.argsort(list(xb) + x_free + xc_by_y)
    res = dot_general_p.bind(ct, y, dimension_numbers=_canon_dims(dims))
    return transpose(res, tuple(int(a) for a in out_axes))


def _canon_dims(dims):
    (a, b), (c, d) = dims
    return ((tuple(int(i) for i in a), tuple(int(i) for i in b)),
            (tuple(int(i) for i in c), tuple(int(i) for i in d)))


def _dot_general_transpose(ct, x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    if isinstance(x, UndefinedPrimal):
        assert not isinstance(y, UndefinedPrimal)
        if is_zero(ct):
            return [Zero(x.aval), None]
        return [_dot_transpose_lhs(ct, x.aval, y, dimension_numbers), None]
    if is_zero(ct):
        return [None, Zero(y.aval)]
    swapped = ((yc, xc), (yb, xb))
    return [None, _dot_transpose_lhs(ct, y.aval, x, swapped, swap_ans=True)]


def _dot_general_batch(args, dims, *, dimension_numbers):
    x, y = args
    dx, dy = dims
    (xc, yc), (xb, yb) = dimension_numbers

    def shift(ds, by=1):
        return tuple(d + by for d in ds)
    if dx is not None and dy is not None:
        x, y = bdim_to_front(x, dx), bdim_to_front(y, dy)
        dn = ((shift(xc), shift(yc)), ((0,) + shift(xb), (0,) + shift(yb)))
        return dot_general_p.bind(x, y, dimension_numbers=dn), 0
    if dx is not None:
        x = bdim_to_front(x, dx)
        dn = ((shift(xc), tuple(yc)), (shift(xb), tuple(yb)))
        # the batch axis is x's first free dim -> lands right after the batch dims
        return dot_general_p.bind(x, y, dimension_numbers=dn), len(xb)
    y = bdim_to_front(y, dy)
    dn = ((tuple(xc), shift(yc)), (tuple(xb), shift(yb)))
    x_free = _free_dims(_ndim(x), xc, xb)
    return dot_general_p.bind(x, y, dimension_numbers=dn), len(xb) + len(x_free)


dot_general_p.impl = _dot_general_impl
dot_general_p.abstract_eval = _dot_general_aval
defjvp(dot_general_p,
       lambda g, ans, x, y, *, dimension_numbers: dot_general_p.bind(g, y, dimension_numbers=dimension_numbers),
       lambda g, ans, x, y, *, dimension_numbers: dot_general_p.bind(x, g, dimension_numbers=dimension_numbers))
dot_general_p.transpose = _dot_general_transpose
dot_general_p.is_linear = True    # bilinear: linear in whichever operand is the tangent
dot_general_p.batch = _dot_general_batch


def dot_general(x, y, dimension_numbers):
    return dot_general_p.bind(x, y, dimension_numbers=_canon_dims(dimension_numbers))


# ============================================================================
# Cumulative ops, sort, iota
# ============================================================================

def _cum_aval(x, *, axis, reverse):
    if not 0 <= axis < max(x.ndim, 1):
        raise ShapeError(f"cumulative op: axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape, x.dtype)


def _cum_impl(fn):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return fn(x, axis=axis, dtype=x.dtype)
    return impl


def _cum_batch(prim):
    def rule(args, dims, *, axis, reverse):
        (x,), (d,) = args, dims
        x = bdim_to_front(x, d)
        return prim.bind(x, axis=axis + 1, reverse=reverse), 0
    prim.batch = rule


cumsum_p = Primitive("cumsum")
cumsum_p.impl = _cum_impl(np.cumsum)
cumsum_p.abstract_eval = _cum_aval
deflinear(cumsum_p, lambda ct, x, *, axis, reverse:
          [Zero(x.aval) if is_zero(ct) else cumsum(ct, axis, reverse=not reverse)])
_cum_batch(cumsum_p)


def cumsum(x, axis, reverse=False):
    return cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))


cumprod_p = Primitive("cumprod")
cumprod_p.impl = _cum_impl(np.cumprod)
cumprod_p.abstract_eval = _cum_aval
_cum_batch(cumprod_p)


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    # d cumprod(x)_i = Σ_{j≤i} dx_j Π_{k≤i, k≠j} x_k, computed as the derivative of a
    # Hillis–Steele scan (log₂ n rounds of y_i <- y_i · y_{i-d}). Made of mul and pad only,
    # it needs no division: exact with zeros in x, and at every order of differentiation.
    (x,), (t,) = primals, tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if is_zero(t):
        return ans, _zero_like(ans)
    n, nd, dt = shape_of(x)[axis], _ndim(x), dtype_of(x)
    y, ty = (rev(x, (axis,)), rev(t, (axis,))) if reverse else (x, t)
    d = 1
    while d < n:
        cfg = [(0, 0, 0)] * nd
        cfg[axis] = (d, -d, 0)                   # shift by d along axis, filling in 1 (0)
        ys, ts = pad(y, _scalar(1, dt), cfg), pad(ty, _scalar(0, dt), cfg)
        ty = add(mul(ty, ys), mul(y, ts))
        y = mul(y, ys)
        d *= 2
    return ans, (rev(ty, (axis,)) if reverse else ty)


cumprod_p.jvp = _cumprod_jvp


def cumprod(x, axis, reverse=False):
    return cumprod_p.bind(x, axis=int(axis), reverse=bool(reverse))


def _cum_extreme(name, ufunc):
    p = Primitive(name)

    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
        return ufunc.accumulate(x, axis=axis)
    p.impl = impl
    p.abstract_eval = _cum_aval
    _cum_batch(p)

    def jvp(primals, tangents, *, axis, reverse):
        # the running extremum's tangent is the tangent at the latest position it came from
        (x,), (t,) = primals, tangents
        ans = p.bind(x, axis=axis, reverse=reverse)
        if is_zero(t):
            return ans, _zero_like(ans)
        n = shape_of(x)[axis]
        pos = iota(np.int64, shape_of(x), axis)
        if reverse:
            pos = sub(_scalar(n - 1, np.int64), pos)
        hit = eq(x, ans)
        src = cummax_p.bind(select(hit, pos, full(shape_of(x), -1, np.int64)), axis=axis, reverse=reverse)
        if reverse:
            src = sub(_scalar(n - 1, np.int64), src)
        return ans, take_along_axis(t, src, axis)
    p.jvp = jvp
    return p


cummax_p = _cum_extreme("cummax", np.maximum)
cummin_p = _cum_extreme("cummin", np.minimum)

sort_p = Primitive("sort")
sort_p.impl = lambda x, *, dimension: np.sort(x, axis=dimension, kind="stable")
sort_p.abstract_eval = lambda x, *, dimension: ShapedArray(x.shape, x.dtype)


def _sort_jvp(primals, tangents, *, dimension):
    (x,), (t,) = primals, tangents
    ans = sort_p.bind(x, dimension=dimension)
    if is_zero(t):
        return ans, _zero_like(ans)
    perm = argsort_p.bind(x, dimension=dimension)
    ts = take_along_axis(t, perm, dimension)
    # ties share: average the tangent over each run of equal sorted values
    return ans, _tie_average(ans, ts, dimension)


def _tie_average(s, ts, axis):
    n = shape_of(s)[axis]
    if n <= 1:
        return ts
    first = slice_in_dim(s, 0, 1, axis)
    new_run = concatenate([full(shape_of(first), 1, np.int64),
                           convert(ne(slice_in_dim(s, 1, n, axis), slice_in_dim(s, 0, n - 1, axis)),
                                   np.int64)], axis)
    group = sub(cumsum(new_run, axis), _scalar(1, np.int64))     # run id, 0-based, per row
    ones = ones_like(ts)
    sums = scatter_along_axis_add(zeros_like(ts), group, ts, axis)
    counts = scatter_along_axis_add(zeros_like(ts), group, ones, axis)
    mean = div(sums, select(eq(counts, 0), ones, counts))
    return take_along_axis(mean, group, axis)


sort_p.jvp = _sort_jvp


def _sort_batch(args, dims, *, dimension):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return sort_p.bind(x, dimension=dimension + 1), 0


sort_p.batch = _sort_batch

argsort_p = Primitive("argsort")
argsort_p.impl = lambda x, *, dimension: np.argsort(x, axis=dimension, kind="stable").astype(np.int64)
argsort_p.abstract_eval = lambda x, *, dimension: ShapedArray(x.shape, np.int64)
defjvp_zero(argsort_p)


def _argsort_batch(args, dims, *, dimension):
    (x,), (d,) = args, dims
    x = bdim_to_front(x, d)
    return argsort_p.bind(x, dimension=dimension + 1), 0


argsort_p.batch = _argsort_batch

iota_p = Primitive("iota")
iota_p.impl = lambda *, dtype, shape, dimension: np.broadcast_to(
    np.arange(shape[dimension], dtype=dtype).reshape(
        [shape[dimension] if i == dimension else 1 for i in range(len(shape))]), shape).copy()
iota_p.abstract_eval = lambda *, dtype, shape, dimension: ShapedArray(shape, dtype)
defjvp_zero(iota_p)


def iota(dtype, shape, dimension=0):
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(int(s) for s in shape), dimension=int(dimension))


def _rows_index(idx, axis):
    """Indices for an along-axis gather/scatter: (..., n) positions -> full index tuples."""
    shape = shape_of(idx)
    idx = convert(idx, np.int64)
    cols = []
    for i in range(len(shape)):
        cols.append(idx if i == axis else iota(np.int64, shape, i))
    return concatenate([expand_dims(c, (len(shape),)) for c in cols], len(shape))


def take_along_axis(x, idx, axis):
    """``out[..., i, ...] = x[..., idx[..., i, ...], ...]`` (numpy's take_along_axis)."""
    return gather_p.bind(x, _rows_index(idx, axis))


def scatter_along_axis_add(x, idx, upd, axis):
    return scatter_add_p.bind(x, _rows_index(idx, axis), upd)


# ============================================================================
# Linear algebra (operands are stacks: (..., n, n) and (..., n, k))
# ============================================================================

def _sq_aval(name):
    def check(a):
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise ShapeError(f"{name}: expected a (..., n, n) matrix, got shape {a.shape}")
        if not is_float_dtype(a.dtype):
            raise DTypeError(f"{name}: expected a float matrix, got {a.dtype}")
    return check


def _mT(x):
    n = _ndim(x)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul(a, b):
    n = _ndim(a)
    batch = tuple(range(n - 2))
    return dot_general_p.bind(a, b, dimension_numbers=((((n - 1),), ((n - 2),)), (batch, batch)))


def _tril(x, k=0):
    shape = shape_of(x)
    r = iota(np.int64, shape, len(shape) - 2)
    c = iota(np.int64, shape, len(shape) - 1)
    return select(ge(add(r, _scalar(k, np.int64)), c), x, zeros_like(x))


def _sym_lower(t):
    """Tangent as seen by a routine that reads only the lower triangle."""
    return add(_tril(t), _mT(_tril(t, -1)))


def _batch_linalg(prim):
    def rule(args, dims, **params):
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        xs = [bdim_to_front(a, d, size) for a, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    prim.batch = rule


cholesky_p = Primitive("cholesky")


def _cholesky_impl(a):
    a = np.asarray(a)
    # numpy reads the lower triangle; a failed factorization gives nan (like LAPACK users expect
    # from a traced program) instead of an exception in the middle of a transform
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return np.full_like(a, np.nan)


cholesky_p.impl = _cholesky_impl


def _cholesky_aval(a):
    _sq_aval("cholesky")(a)
    return ShapedArray(a.shape, a.dtype)


cholesky_p.abstract_eval = _cholesky_aval


def _cholesky_jvp(primals, tangents):
    # dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ = lower triangle with the diagonal halved
    (a,), (t,) = primals, tangents
    L = cholesky_p.bind(a)
    if is_zero(t):
        return L, _zero_like(L)
    t = _sym_lower(t)
    tmp = triangular_solve(L, t, left_side=True, lower=True)          # L⁻¹ dA
    tmp = _mT(triangular_solve(L, _mT(tmp), left_side=True, lower=True))  # L⁻¹ dA L⁻ᵀ
    n = shape_of(a)[-1]
    half = select(eq(iota(np.int64, shape_of(a), _ndim(a) - 2), iota(np.int64, shape_of(a), _ndim(a) - 1)),
                  full(shape_of(a), 0.5, dtype_of(a)), full(shape_of(a), 1.0, dtype_of(a)))
    phi = mul(_tril(tmp), half)
    del n
    return L, _matmul(L, phi)


cholesky_p.jvp = _cholesky_jvp
_batch_linalg(cholesky_p)

triangular_solve_p = Primitive("triangular_solve")


def _tri_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a = np.asarray(a)
    b = np.asarray(b)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if left_side:
        return np.linalg.solve(t, b)
    # x a = b  <=>  aᵀ xᵀ = bᵀ
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _tri_solve_aval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _sq_aval("triangular_solve")(a)
    n = a.shape[-1]
    if b.ndim != a.ndim or (b.shape[-2] if left_side else b.shape[-1]) != n:
        raise ShapeError(f"triangular_solve: a {a.shape} and b {b.shape} do not match")
    return ShapedArray(b.shape, b.dtype)


def _tri_solve_jvp(primals, tangents, **p):
    a, b = primals
    ta, tb = tangents
    x = triangular_solve_p.bind(a, b, **p)
    out = None
    if not is_zero(tb):
        out = triangular_solve_p.bind(a, tb, **p)
    if not is_zero(ta):
        # d(A⁻¹B) = -A⁻¹ dA A⁻¹ B, with dA restricted to the triangle the routine reads
        dA = _tril(ta) if p["lower"] else _mT(_tril(_mT(ta)))
        if p["unit_diagonal"]:
            dA = _tril(dA, -1) if p["lower"] else _mT(_tril(_mT(dA), -1))
        if p["transpose_a"]:
            dA = _mT(dA)
        prod = _matmul(dA, x) if p["left_side"] else _matmul(x, dA)
        c = neg(triangular_solve_p.bind(a, prod, **p))
        out = c if out is None else add(out, c)
    return x, (_zero_like(x) if out is None else out)


def _tri_solve_transpose(ct, a, b, **p):
    assert not isinstance(a, UndefinedPrimal)
    if is_zero(ct):
        return [None, Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, **dict(p, transpose_a=not p["transpose_a"]))]


triangular_solve_p.impl = _tri_solve_impl
triangular_solve_p.abstract_eval = _tri_solve_aval
triangular_solve_p.jvp = _tri_solve_jvp
triangular_solve_p.transpose = _tri_solve_transpose
triangular_solve_p.is_linear = True   # linear in b
_batch_linalg(triangular_solve_p)


def _batch_solve_shared_matrix(prim, generic):
    """A batched right-hand side against one matrix: fold the batch into b's columns (rows
    for a right-side solve), so the matrix is factored once, not once per batch element."""
    def rule(args, dims, **params):
        (a, b), (da, db) = args, dims
        if da is not None:
            return generic(args, dims, **params)
        b = bdim_to_front(b, db)
        shape = shape_of(b)                       # (B, *lead, m, k)
        B, lead, (m, k) = shape[0], shape[1:-2], shape[-2:]
        L = len(lead)
        if params.get("left_side", True):         # a x = b: the batch joins the columns
            bt = transpose(b, tuple(range(1, L + 2)) + (0, L + 2))       # (*lead, m, B, k)
            x = prim.bind(a, reshape(bt, lead + (m, B * k)), **params)
            return reshape(x, lead + (m, B, k)), L + 1
        bt = transpose(b, tuple(range(1, L + 1)) + (0, L + 1, L + 2))    # (*lead, B, m, k)
        x = prim.bind(a, reshape(bt, lead + (B * m, k)), **params)      # x a = b: rows
        return reshape(x, lead + (B, m, k)), L
    prim.batch = rule


_batch_solve_shared_matrix(triangular_solve_p, triangular_solve_p.batch)


def triangular_solve(a, b, left_side=True, lower=True, transpose_a=False, unit_diagonal=False):
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))


solve_p = Primitive("solve")     # a (..., n, n), b (..., n, k) -> a⁻¹ b


def _solve_impl(a, b):
    a, b = np.asarray(a), np.asarray(b)
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.full(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], np.nan, dtype=b.dtype)


def _solve_aval(a, b):
    _sq_aval("solve")(a)
    if b.ndim != a.ndim or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise ShapeError(f"solve: a {a.shape} and b {b.shape} do not match")
    if a.dtype != b.dtype:
        raise DTypeError(f"solve: dtypes {a.dtype} and {b.dtype} differ")
    return ShapedArray(b.shape, b.dtype)


def _solve_jvp(primals, tangents):
    # dx = A⁻¹ (db - dA x)
    a, b = primals
    ta, tb = tangents
    x = solve_p.bind(a, b)
    rhs = None
    if not is_zero(tb):
        rhs = tb
    if not is_zero(ta):
        c = neg(_matmul(ta, x))
        rhs = c if rhs is None else add(rhs, c)
    return x, (_zero_like(x) if rhs is None else solve_p.bind(a, rhs))


def _solve_transpose(ct, a, b):
    assert not isinstance(a, UndefinedPrimal)
    if is_zero(ct):
        return [None, Zero(b.aval)]
    return [None, solve_p.bind(_mT(a), ct)]


solve_p.impl = _solve_impl
solve_p.abstract_eval = _solve_aval
solve_p.jvp = _solve_jvp
solve_p.transpose = _solve_transpose
solve_p.is_linear = True   # linear in b
_batch_linalg(solve_p)
_batch_solve_shared_matrix(solve_p, solve_p.batch)

slogdet_p = Primitive("slogdet", multiple_results=True)


def _slogdet_impl(a):
    s, l = np.linalg.slogdet(np.asarray(a))
    return [np.asarray(s), np.asarray(l)]


def _slogdet_aval(a):
    _sq_aval("slogdet")(a)
    return [ShapedArray(a.shape[:-2], a.dtype), ShapedArray(a.shape[:-2], a.dtype)]


def _slogdet_jvp(primals, tangents):
    # d log|det A| = tr(A⁻¹ dA)
    (a,), (t,) = primals, tangents
    s, l = slogdet_p.bind(a)
    if is_zero(t):
        return [s, l], [_zero_like(s), _zero_like(l)]
    n = _ndim(a)
    x = solve_p.bind(a, t)
    eye = convert(eq(iota(np.int64, shape_of(a), n - 2), iota(np.int64, shape_of(a), n - 1)), dtype_of(a))
    return [s, l], [_zero_like(s), reduce_sum(mul(x, eye), (n - 2, n - 1))]


slogdet_p.impl = _slogdet_impl
slogdet_p.abstract_eval = _slogdet_aval
slogdet_p.jvp = _slogdet_jvp
_batch_linalg(slogdet_p)

eigh_p = Primitive("eigh", multiple_results=True)   # reads the lower triangle (numpy's UPLO='L')


def _eigh_impl(a):
    w, v = np.linalg.eigh(np.asarray(a), UPLO="L")
    return [w, v]


def _eigh_aval(a):
    _sq_aval("eigh")(a)
    return [ShapedArray(a.shape[:-1], a.dtype), ShapedArray(a.shape, a.dtype)]


def _eigh_jvp(primals, tangents):
    # with S = Vᵀ dA V: dw = diag(S), dV = V (F ∘ S), F_ij = 1/(w_j - w_i) off the diagonal
    (a,), (t,) = primals, tangents
    w, v = eigh_p.bind(a)
    if is_zero(t):
        return [w, v], [_zero_like(w), _zero_like(v)]
    t = _sym_lower(t)
    S = _matmul(_mT(v), _matmul(t, v))
    shape = shape_of(a)
    n = _ndim(a)
    eye = eq(iota(np.int64, shape, n - 2), iota(np.int64, shape, n - 1))
    wi = broadcast_in_dim(w, shape, tuple(range(n - 2)) + (n - 2,))
    wj = broadcast_in_dim(w, shape, tuple(range(n - 2)) + (n - 1,))
    diff = sub(wj, wi)
    safe = select(eye, ones_like(diff), diff)
    F = select(eye, zeros_like(diff), div(ones_like(diff), safe))
    dw = reduce_sum(mul(S, convert(eye, dtype_of(a))), (n - 1,))
    dv = _matmul(v, mul(F, S))
    return [w, v], [dw, dv]


eigh_p.impl = _eigh_impl
eigh_p.abstract_eval = _eigh_aval
eigh_p.jvp = _eigh_jvp
_batch_linalg(eigh_p)

# ============================================================================
# Library-op names for the rules above (defined after the primitives they bind)
# ============================================================================

add, sub, mul, div = _b(add_p), _b(sub_p), _b(mul_p), _b(div_p)
pow, max_, min_, atan2 = _b(pow_p), _b(max_p), _b(min_p), _b(atan2_p)
eq, ne, lt, le, gt, ge = (_b(globals()[n + "_p"]) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
neg, sign, floor, ceil = _u(neg_p), _u(sign_p), _u(floor_p), _u(ceil_p)
exp, log, sin, cos, tanh = _u(exp_p), _u(log_p), _u(sin_p), _u(cos_p), _u(tanh_p)
sinh, cosh, sqrt, rsqrt = _u(sinh_p), _u(cosh_p), _u(sqrt_p), _u(rsqrt_p)
_minmax_jvp(max_p, gt)
_minmax_jvp(min_p, lt)


def select(pred, on_true, on_false):
    on_true, on_false = _coerce_pair(on_true, on_false)
    return select_p.bind(pred, on_true, on_false)


def reduce_sum(x, axes):
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)



