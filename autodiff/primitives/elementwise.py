"""Elementwise primitives: unary and binary math, comparisons, select, dtype conversion.

Each primitive's Taylor rule (``p.taylor``, for ``jet``) follows its jvp: the recurrences of
:mod:`autodiff.primitives.taylor_series` (``z' = w x'`` with ``w`` = ``z`` for exp, cos/sin
pairs for sin, ``1 - z²`` for tanh, …).
"""
import math

import numpy as np

from ..core import (Primitive, ShapedArray, UndefinedPrimal, Zero, complex_dtype,
                    is_inexact_dtype, real_dtype)
from ..errors import DTypeError, ShapeError
from ._rules import (defbilinear, defjvp, defjvp_zero, deflinear, deftaylor, deftaylor_linear,
                     deflowering, deftranspose, defvectorized,
                     dtype_of, full, instantiate, is_zero, ones_like, shape_of, zeros_like, _b,
                     _binary_aval, _binary_shape, _coerce_pair, _float_unary_aval,
                     _std_unary_aval, _u,
                     _zero_like)

__all__ = ["complex_", "complex_p", "conj", "conj_p", "imag", "imag_p", "real", "real_p",
           "abs_p", "acos_p", "acosh_p", "add", "add_p", "and_p", "asin_p", "asinh_p", "atan2",
           "atan2_p", "atan_p", "atanh_p", "cbrt_p", "ceil", "ceil_p", "convert",
           "convert_element_type_p", "cos", "cos_p", "cosh", "cosh_p", "div", "div_p", "eq",
           "eq_p", "exp", "exp2_p", "exp_p", "expm1_p", "floor", "floor_divide_p", "floor_p", "ge",
           "ge_p", "gt", "gt_p", "integer_pow", "integer_pow_p", "is_finite_p", "le", "le_p",
           "log", "log1p_p", "log2_p", "log_p", "logistic_p", "lt", "lt_p", "max_", "max_p", "min_", "min_p",
           "mod_p", "mul", "mul_fit", "mul_p", "ne", "ne_p", "neg", "neg_p", "not_p", "or_p",
           "pow", "pow_p", "round_p", "rsqrt", "rsqrt_p", "select", "select_p", "sign", "sign_p",
           "sin", "sin_p", "sinh", "sinh_p", "sqrt", "sqrt_p", "stop_gradient_p", "sub", "sub_p",
           "tan_p", "tanh", "tanh_p", "unbroadcast", "xor_p"]

# ============================================================================
# Elementwise unary
# ============================================================================

def _unary(name, impl, float_only=True, real_only=False, *, numpy_name=None, cost=1,
           code_size=0):
    """An elementwise unary primitive with its lowering facts (``LoweringFacts``:
    ``numpy_name`` defaults to the impl's name when it is a numpy ufunc)."""
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = (_real_unary_aval(name) if real_only else
                       _float_unary_aval(name) if float_only else _std_unary_aval)
    defvectorized(p)
    deflowering(p, "elementwise", numpy_name=numpy_name or _ufunc_name(impl), cost=cost,
                code_size=code_size)
    return p


def _ufunc_name(impl):
    return impl.__name__ if isinstance(impl, np.ufunc) else None


def _real_unary_aval(name):
    # numpy defines these ufuncs for real input only (floor, ceil, cbrt refuse complex)
    def rule(x, **_):
        if x.dtype.kind != "f":
            raise DTypeError(f"{name} needs a real float operand, got {x.dtype}")
        return ShapedArray(x.shape, x.dtype)
    return rule


neg_p = _unary("neg", np.negative, float_only=False)
deflinear(neg_p, lambda ct, x: [neg(ct)])

sign_p = _unary("sign", np.sign, float_only=False)


def _sign_jvp(primals, tangents):
    # real: piecewise constant (zero). complex (numpy 2: z/|z|, 0 at 0): d(z/|z|) =
    # (t - s·Re(conj(s)·t))/|z| with s = z/|z|; zero at z = 0
    (x,), (t,) = primals, tangents
    ans = sign_p.bind(x)
    if is_zero(t) or dtype_of(x).kind != "c":
        return ans, _zero_like(ans)
    r = abs_p.bind(x)
    zero = eq(r, 0)
    safe = select(zero, ones_like(r), r)
    cd = dtype_of(x)
    d = div(sub(t, mul(ans, convert(real(mul(conj(ans), t)), cd))), convert(safe, cd))
    return ans, select(zero, zeros_like(d), d)


sign_p.jvp = _sign_jvp
# piecewise constant on real operands (a complex sign has a derivative): the converted
# value of a real sign drops nothing (``tracing.JaxprTrace.carries_derivative``)
sign_p.zero_derivative = lambda eqn: eqn.invars[0].aval.dtype.kind != "c"


def _complex_abs_series(x):
    """|z| = √(Re² + Im²) of a complex series (smooth away from z = 0)."""
    u, v = map_series(real, x), map_series(imag, x)
    q = [sum_terms(ab) for ab in zip(series_mul(u, u), series_mul(v, v))]
    return series_sqrt(q, sqrt(q[0]))


def _sign_taylor(ins):
    (x,) = ins
    K = len(x) - 1
    if dtype_of(x[0]).kind != "c" or not has_series(x):   # piecewise constant on reals
        return [sign_p.bind(x[0])] + [None] * K
    # sign(z) = z/|z| is smooth away from 0 on complex numbers
    r = map_series(lambda c: complex_(c, 0.0), _complex_abs_series(x))
    return [sign_p.bind(x[0])] + series_div(x, r)[1:]


deftaylor(sign_p, _sign_taylor)
floor_p = _unary("floor", np.floor, real_only=True)
defjvp_zero(floor_p, "piecewise constant")
ceil_p = _unary("ceil", np.ceil, real_only=True)
defjvp_zero(ceil_p, "piecewise constant")
round_p = _unary("round", np.round, numpy_name="rint")       # numpy: round half to even
defjvp_zero(round_p, "piecewise constant")

is_finite_p = Primitive("is_finite")
is_finite_p.impl = np.isfinite
is_finite_p.abstract_eval = lambda x: ShapedArray(x.shape, np.bool_)
defjvp_zero(is_finite_p, "boolean result")
defvectorized(is_finite_p)
deflowering(is_finite_p, "elementwise", numpy_name="isfinite")

not_p = Primitive("not")
not_p.impl = np.invert
not_p.abstract_eval = _std_unary_aval
defjvp_zero(not_p, "bitwise/boolean")
defvectorized(not_p)
deflowering(not_p, "elementwise", numpy_name="invert")

exp_p = _unary("exp", np.exp, cost=8, code_size=12)
defjvp(exp_p, lambda g, ans, x: mul(g, ans))                       # d e^x = e^x
deftaylor(exp_p, lambda ins: series_ode(ins[0], exp(ins[0][0]), lambda z, m: z[m]))
exp2_p = _unary("exp2", np.exp2, cost=20)
defjvp(exp2_p, lambda g, ans, x: mul(g, mul(ans, np.log(2.0).astype(ans.dtype))))
deftaylor(exp2_p, lambda ins: series_ode(                          # 2^x = e^(x ln 2)
    [None] + [scale(c, math.log(2.0)) for c in ins[0][1:]], exp2_p.bind(ins[0][0]),
    lambda z, m: z[m]))
log_p = _unary("log", np.log, cost=8, code_size=14)
defjvp(log_p, lambda g, ans, x: div(g, x))                          # d log x = 1/x
deftaylor(log_p, lambda ins: series_log(ins[0], log(ins[0][0])))
log1p_p = _unary("log1p", np.log1p, cost=8, code_size=16)
defjvp(log1p_p, lambda g, ans, x: div(g, add(x, 1)))
deftaylor(log1p_p, lambda ins: series_log(add_const(ins[0], 1.0), log1p_p.bind(ins[0][0])))
log2_p = _unary("log2", np.log2, cost=8, code_size=14)
defjvp(log2_p, lambda g, ans, x: div(g, mul(x, np.log(2.0).astype(dtype_of(x)))))   # 1/(x ln 2)
expm1_p = _unary("expm1", np.expm1, cost=8, code_size=14)
defjvp(expm1_p, lambda g, ans, x: mul(g, add(ans, 1)))
deftaylor(expm1_p, lambda ins: series_ode(                         # z' = (z + 1) x'
    ins[0], expm1_p.bind(ins[0][0]), lambda z, m: add(z[0], 1.0) if m == 0 else z[m]))
tanh_p = _unary("tanh", np.tanh, cost=8, code_size=16)
defjvp(tanh_p, lambda g, ans, x: mul(g, sub(1, mul(ans, ans))))     # 1 - tanh²
deftaylor(tanh_p, lambda ins: series_ode(                          # z' = (1 - z²) x'
    ins[0], tanh(ins[0][0]), lambda z, m: sub(1.0, mul(z[0], z[0])) if m == 0
    else neg_term(square_term(z, m))))


def _logistic_impl(x):
    # σ(x) = 1/(1+e^-x) for x >= 0 and e^x/(1+e^x) below: the second keeps the subnormal
    # results of x in [-745, -708] (1/(1+e^-x) overflows e^-x there and returns 0)
    x = np.asarray(x)
    if x.dtype.kind == "c":
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return (1 / (1 + np.exp(-x))).astype(x.dtype)
    with np.errstate(over="ignore", under="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


logistic_p = _unary("logistic", _logistic_impl, cost=8, code_size=12)
defjvp(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(1, ans))))  # σ(1-σ)
deftaylor(logistic_p, lambda ins: series_ode(                      # z' = (z - z²) x'
    ins[0], logistic_p.bind(ins[0][0]), lambda z, m: sub(z[0], mul(z[0], z[0])) if m == 0
    else sum_terms([z[m], neg_term(square_term(z, m))])))
sin_p = _unary("sin", np.sin, cost=8, code_size=40)
defjvp(sin_p, lambda g, ans, x: mul(g, cos(x)))
deftaylor(sin_p, lambda ins: series_sincos(ins[0], sin(ins[0][0]), cos(ins[0][0]), -1)[0])
cos_p = _unary("cos", np.cos, cost=8, code_size=40)
defjvp(cos_p, lambda g, ans, x: neg(mul(g, sin(x))))
deftaylor(cos_p, lambda ins: series_sincos(ins[0], sin(ins[0][0]), cos(ins[0][0]), -1)[1])
tan_p = _unary("tan", np.tan, cost=20)
defjvp(tan_p, lambda g, ans, x: mul(g, add(1, mul(ans, ans))))      # 1 + tan²
deftaylor(tan_p, lambda ins: series_ode(                           # z' = (1 + z²) x'
    ins[0], tan_p.bind(ins[0][0]), lambda z, m: add(1.0, mul(z[0], z[0])) if m == 0
    else square_term(z, m)))


def _inverse_taylor(prim, u_of, w_of, sign=1):
    """The Taylor rule of an inverse function: z' = w(x) x' where w is a series function
    of x alone (asin: w = (1 - x²)^(-1/2), from u = 1 - x²)."""
    def rule(ins):
        (x,) = ins
        K = len(x) - 1
        w = w_of(u_of(series_square(x[:K])))      # w is needed up to order K-1 only
        z = series_integrate(x, w, prim.bind(x[0]))
        return z if sign > 0 else [z[0]] + [neg_term(c) for c in z[1:]]
    deftaylor(prim, rule)


asin_p = _unary("asin", np.arcsin, cost=20)
defjvp(asin_p, lambda g, ans, x: mul(g, rsqrt(sub(1, mul(x, x)))))
_inverse_taylor(asin_p, lambda s: one_minus(s), lambda u: series_rsqrt(u))
acos_p = _unary("acos", np.arccos, cost=20)
defjvp(acos_p, lambda g, ans, x: neg(mul(g, rsqrt(sub(1, mul(x, x))))))
_inverse_taylor(acos_p, lambda s: one_minus(s), lambda u: series_rsqrt(u), sign=-1)
atan_p = _unary("atan", np.arctan, cost=20)
defjvp(atan_p, lambda g, ans, x: div(g, add(1, mul(x, x))))
_inverse_taylor(atan_p, lambda s: add_const(s, 1.0), lambda u: series_recip(u))
sinh_p = _unary("sinh", np.sinh, cost=20)
defjvp(sinh_p, lambda g, ans, x: mul(g, cosh(x)))
deftaylor(sinh_p, lambda ins: series_sincos(ins[0], sinh(ins[0][0]), cosh(ins[0][0]), 1)[0])
cosh_p = _unary("cosh", np.cosh, cost=20)
defjvp(cosh_p, lambda g, ans, x: mul(g, sinh(x)))
deftaylor(cosh_p, lambda ins: series_sincos(ins[0], sinh(ins[0][0]), cosh(ins[0][0]), 1)[1])
asinh_p = _unary("asinh", np.arcsinh, cost=20)
defjvp(asinh_p, lambda g, ans, x: mul(g, rsqrt(add(mul(x, x), 1))))
_inverse_taylor(asinh_p, lambda s: add_const(s, 1.0), lambda u: series_rsqrt(u))
acosh_p = _unary("acosh", np.arccosh, cost=20)
# 1/√(x²-1) for real x; for complex z the principal branch's derivative is
# 1/(√(z-1)·√(z+1)), which differs from 1/√(z²-1) in sign where Re z < 0
defjvp(acosh_p, lambda g, ans, x: mul(g, rsqrt(sub(mul(x, x), 1))) if dtype_of(x).kind != "c"
       else mul(g, mul(rsqrt(sub(x, 1)), rsqrt(add(x, 1)))))
_inverse_taylor(acosh_p, lambda s: add_const(s, -1.0), lambda u: series_rsqrt(u))
atanh_p = _unary("atanh", np.arctanh, cost=20)
defjvp(atanh_p, lambda g, ans, x: div(g, sub(1, mul(x, x))))
_inverse_taylor(atanh_p, lambda s: one_minus(s), lambda u: series_recip(u))
sqrt_p = _unary("sqrt", np.sqrt, cost=4)
defjvp(sqrt_p, lambda g, ans, x: div(g, mul(ans, 2)))               # 1/(2√x)
deftaylor(sqrt_p, lambda ins: series_sqrt(ins[0], sqrt(ins[0][0])))


def _rsqrt_impl(x):
    with np.errstate(divide="ignore"):
        return (1 / np.sqrt(x)).astype(np.asarray(x).dtype)


rsqrt_p = _unary("rsqrt", _rsqrt_impl, cost=4)
defjvp(rsqrt_p, lambda g, ans, x: mul(g, mul(div(ans, x), -0.5)))   # -x^(-3/2)/2
deftaylor(rsqrt_p, lambda ins: series_pow(ins[0], -0.5, rsqrt(ins[0][0])))
cbrt_p = _unary("cbrt", np.cbrt, real_only=True, cost=20)
defjvp(cbrt_p, lambda g, ans, x: div(g, mul(mul(ans, ans), 3)))     # 1/(3 x^(2/3))
deftaylor(cbrt_p, lambda ins: series_pow(ins[0], 1.0 / 3.0, cbrt_p.bind(ins[0][0])))
abs_p = _unary("abs", np.abs, float_only=False)
abs_p.abstract_eval = lambda x, **_: ShapedArray(x.shape, real_dtype(x.dtype))


def _abs_jvp_rule(g, ans, x):
    if dtype_of(x).kind != "c":
        return mul(g, sign(x))                                      # sign(0) = 0
    # d|z| = Re(conj(z)·t)/|z|, 0 at z = 0
    zero = eq(ans, 0)
    d = div(real(mul(conj(x), g)), select(zero, ones_like(ans), ans))
    return select(zero, zeros_like(d), d)


defjvp(abs_p, _abs_jvp_rule)


def _abs_taylor(ins):
    (x,) = ins
    K = len(x) - 1
    if dtype_of(x[0]).kind == "c":
        if not has_series(x):
            return [abs_p.bind(x[0])] + [None] * K
        return [abs_p.bind(x[0])] + _complex_abs_series(x)[1:]
    s = sign(x[0])                                # |x| = sign(x₀) x near x₀ (sign(0) = 0)
    return [abs_p.bind(x[0])] + [mul_term(c, s) for c in x[1:]]


deftaylor(abs_p, _abs_taylor)


def _integer_pow_impl(x, *, y):
    if y < 0 and np.asarray(x).dtype.kind in "iu":
        return np.asarray(x).astype(np.float64) ** y
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return np.power(x, np.asarray(y, dtype=np.asarray(x).dtype) if np.asarray(x).dtype.kind == "f" else y)


integer_pow_p = Primitive("integer_pow")
integer_pow_p.impl = _integer_pow_impl
integer_pow_p.abstract_eval = _std_unary_aval
defvectorized(integer_pow_p)
deflowering(integer_pow_p, "elementwise")


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


def _integer_pow_taylor(ins, *, y):
    (x,) = ins
    K = len(x) - 1
    z0 = integer_pow_p.bind(x[0], y=y)
    if y == 0:
        return [z0] + [None] * K
    n, acc, base = abs(y), None, x               # binary powering of the series: exact at 0
    while n:
        if n & 1:
            acc = base if acc is None else series_mul(acc, base)
        n >>= 1
        if n:
            base = series_square(base)
    if y < 0:
        acc = series_recip(acc)
    return [z0] + acc[1:]


deftaylor(integer_pow_p, _integer_pow_taylor)


def integer_pow(x, y):
    """``x ** y`` for a Python integer ``y`` (exact, differentiable at every order)."""
    return integer_pow_p.bind(x, y=int(y))


# ============================================================================
# Elementwise binary
# ============================================================================

def _binary(name, impl, out_dtype=None, real_only=False, *, numpy_name=None, cost=1):
    """An elementwise binary primitive with its lowering facts (as :func:`_unary`)."""
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = _binary_aval(name, out_dtype)
    if real_only:
        # numpy defines these for real operands only (arctan2, remainder, floor_divide)
        def aval(x, y, _rule=p.abstract_eval, **kw):
            if x.dtype.kind == "c" or y.dtype.kind == "c":
                raise DTypeError(f"{name} is not defined for complex operands "
                                 f"(got {x.dtype}); numpy refuses them too")
            return _rule(x, y, **kw)
        p.abstract_eval = aval
    defvectorized(p)
    deflowering(p, "elementwise", numpy_name=numpy_name or _ufunc_name(impl), cost=cost)
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
            cy = unbroadcast(ct if sign_y > 0 else neg(ct), y.aval)
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

def mul_fit(a, b, ans):
    """``a * b`` broadcast to the shape of ``ans`` (a rank-0 operand meets a rank-0 tangent)."""
    out = mul(a, b)
    return out if shape_of(out) == shape_of(ans) else broadcast_in_dim(out, shape_of(ans), ())


mul_p = _binary("mul", np.multiply)
defbilinear(mul_p, lambda ct, x, y: unbroadcast(mul(ct, y), x.aval),
            lambda ct, x, y: unbroadcast(mul(x, ct), y.aval), apply=mul_fit)

div_p = _binary("div", np.divide, cost=4)
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


deftranspose(div_p, lambda ct, x, y: [unbroadcast(div(ct, y), x.aval), None], argnums=(0,))


def _div_taylor(ins):
    x, y = ins
    if not has_series(y):
        return [div(x[0], y[0])] + [None if c is None else div(c, y[0]) for c in x[1:]]
    return series_div(x, y)


deftaylor(div_p, _div_taylor)


def _pow_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.power(x, y)


pow_p = _binary("pow", _pow_impl, cost=20)


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
        # an integer y == 0 is exactly constant; a float one still moves, so only the
        # undefined 0 * 0^-1 (x == y == 0) is set to 0: the y-derivative of this factor
        # (x^(y-1) at y == 0, JAX's issue 12033) is kept
        at0 = eq(yb, 0) if dtype_of(y).kind in "biu" else and_p.bind(eq(yb, 0), eq(xb, 0))
        d = select(at0, zeros_like(ans), mul(yb, pow(xb, sub(yb, 1))))
        out = mul_fit(tx, d, ans)
    if not is_zero(ty):
        xb = x if shape_of(x) == sa else broadcast_in_dim(x, sa, ())
        safe_x = select(eq(xb, 0), ones_like(ans), xb)
        d = select(eq(xb, 0), zeros_like(ans), mul(log(safe_x), ans))
        c = mul_fit(ty, d, ans)
        out = c if out is None else add(out, c)
    return ans, (_zero_like(ans) if out is None else out)


pow_p.jvp = _pow_jvp


def _pow_taylor(ins):
    x, y = ins
    z0 = pow(x[0], y[0])
    if not has_series(y):                        # x^a: x z' = a x' z
        return series_pow(x, y[0], z0)
    # x^y = exp(y log x)
    lx = series_log(x, log(x[0]))
    u = series_mul(y, lx) if has_series(x) else [None] + [mul_term(c, lx[0]) for c in y[1:]]
    return series_ode(u, z0, lambda z, m: z[m])


deftaylor(pow_p, _pow_taylor)

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


def _minmax_taylor(prim, cmp_p):
    def rule(ins):
        x, y = ins                                # ties share equally, as in the jvp rule
        z0 = prim.bind(x[0], y[0])
        sa = shape_of(z0)
        xb = x[0] if shape_of(x[0]) == sa else broadcast_in_dim(x[0], sa, ())
        yb = y[0] if shape_of(y[0]) == sa else broadcast_in_dim(y[0], sa, ())
        w = select(cmp_p.bind(xb, yb), full(sa, 1, dtype_of(z0)),
                   select(eq(xb, yb), full(sa, 0.5, dtype_of(z0)), full(sa, 0, dtype_of(z0))))
        v = sub(1.0, w)
        return [z0] + [sum_terms([mul_term(a, w), mul_term(b, v)])
                       for a, b in zip(x[1:], y[1:])]
    deftaylor(prim, rule)


atan2_p = _binary("atan2", np.arctan2, real_only=True, cost=20)
defjvp(atan2_p,
       lambda g, ans, x, y: mul_fit(g, div(y, add(mul(x, x), mul(y, y))), ans),
       lambda g, ans, x, y: mul_fit(g, neg(div(x, add(mul(x, x), mul(y, y)))), ans))


def _atan2_taylor(ins):
    a, b = ins                                    # z = atan(a/b): z' = (b a' - a b') / (a² + b²)
    K = len(a) - 1
    z0 = atan2(a[0], b[0])

    def deriv(s):                                 # coefficients of s'(t), orders 0..K-1
        return [scale(s[m + 1], m + 1) for m in range(K)]

    da, db = deriv(a), deriv(b)
    bs, as_ = b[:K], a[:K]
    num = [sum_terms([cauchy_term(bs, da, m), neg_term(cauchy_term(as_, db, m))])
           for m in range(K)]
    den = [add(mul(a[0], a[0]), mul(b[0], b[0]))] + [
        sum_terms([square_term(as_, m), square_term(bs, m)]) for m in range(1, K)]
    q = series_div([zeros_like(z0) if num[0] is None else num[0]] + num[1:], den)
    return [z0] + [scale(q[k - 1], 1.0 / k) for k in range(1, K + 1)]


deftaylor(atan2_p, _atan2_taylor)


def _mod_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(x, y)


mod_p = _binary("mod", _mod_impl, real_only=True, cost=20)     # numpy's (Python's) remainder: sign of the divisor
defjvp(mod_p, lambda g, ans, x, y: g if shape_of(g) == shape_of(ans) else broadcast_in_dim(g, shape_of(ans), ()),
       lambda g, ans, x, y: neg(mul_fit(g, floor(div(x, y)), ans)))


def _mod_taylor(ins):
    x, y = ins                                    # x mod y = x - floor(x/y) y near (x₀, y₀)
    q = floor(div(x[0], y[0]))
    return [mod_p.bind(x[0], y[0])] + [
        sum_terms([a, None if b is None else neg(mul(q, b))]) for a, b in zip(x[1:], y[1:])]


deftaylor(mod_p, _mod_taylor)


def _floor_divide_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(x, y)


floor_divide_p = _binary("floor_divide", _floor_divide_impl, real_only=True, cost=20)
defjvp_zero(floor_divide_p, "piecewise constant")

eq_p = _binary("eq", np.equal, out_dtype=np.bool_)
ne_p = _binary("ne", np.not_equal, out_dtype=np.bool_)
lt_p = _binary("lt", np.less, out_dtype=np.bool_)
le_p = _binary("le", np.less_equal, out_dtype=np.bool_)
gt_p = _binary("gt", np.greater, out_dtype=np.bool_)
ge_p = _binary("ge", np.greater_equal, out_dtype=np.bool_)
and_p = _binary("and", np.bitwise_and)
or_p = _binary("or", np.bitwise_or)
xor_p = _binary("xor", np.bitwise_xor)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defjvp_zero(_p, "boolean result")
for _p in (and_p, or_p, xor_p):
    defjvp_zero(_p, "bitwise/boolean")
del _p

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
defvectorized(select_p)
deflowering(select_p, "elementwise")


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
        out[1] = unbroadcast(select(p, ct, zeros_like(ct)), t.aval)
    if isinstance(f, UndefinedPrimal):
        out[2] = unbroadcast(select(p, zeros_like(ct), ct), f.aval)
    return out


select_p.jvp = _select_jvp
deftranspose(select_p, _select_transpose, argnums=(1, 2))
deftaylor_linear(select_p)

convert_element_type_p = Primitive("convert_element_type")


def _convert_impl(x, *, new_dtype):
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        # numpy's astype keeps the real part (with a ComplexWarning); the primitive is the
        # explicit form of that, without the warning
        x = x.real
    if x.dtype.kind == "f" and np.dtype(new_dtype).kind in "iu":
        with np.errstate(invalid="ignore"):
            return x.astype(new_dtype)
    return x.astype(new_dtype)


convert_element_type_p.impl = _convert_impl
convert_element_type_p.abstract_eval = lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype)
defvectorized(convert_element_type_p)
deflowering(convert_element_type_p, "elementwise")


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if is_zero(t) or not is_inexact_dtype(new_dtype) or not is_inexact_dtype(dtype_of(x)):
        return ans, _zero_like(ans)
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_transpose(ct, x, *, new_dtype):
    # with the pairing Re(Σ u·v): real -> complex transposes to the real part of ct, and
    # complex -> real (the real part) to ct + 0i; same-kind conversions to the conversion back
    src = x.aval.dtype
    if src.kind != "c" and dtype_of(ct).kind == "c":
        ct = real_p.bind(ct)
    return [convert_element_type_p.bind(ct, new_dtype=src) if dtype_of(ct) != src else ct]


convert_element_type_p.jvp = _convert_jvp
deftranspose(convert_element_type_p, _convert_transpose)


def _convert_taylor(ins, *, new_dtype):
    (x,) = ins
    z0 = convert_element_type_p.bind(x[0], new_dtype=new_dtype)
    if not is_inexact_dtype(new_dtype):
        return [z0] + [None] * (len(x) - 1)
    return [z0] + [None if c is None else convert_element_type_p.bind(c, new_dtype=new_dtype)
                   for c in x[1:]]


deftaylor(convert_element_type_p, _convert_taylor)


def convert(x, dtype):
    """``x`` converted to ``dtype`` (``convert_element_type``; no equation when it has it)."""
    dtype = np.dtype(dtype)
    if dtype_of(x) == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype)


# ============================================================================
# complex parts: real, imag, conj, complex (docs/complex.md)
# ============================================================================

def _complex_only_aval(name):
    def rule(x, **_):
        if x.dtype.kind != "c":
            raise DTypeError(f"{name} needs a complex operand, got {x.dtype} (the library "
                             f"op P.{name} passes real input through)")
        return ShapedArray(x.shape, real_dtype(x.dtype))
    return rule


real_p = Primitive("real")
real_p.impl = lambda x: np.real(x).copy()
real_p.abstract_eval = _complex_only_aval("real")
defvectorized(real_p)
deflowering(real_p, "elementwise")
imag_p = Primitive("imag")
imag_p.impl = lambda x: np.imag(x).copy()
imag_p.abstract_eval = _complex_only_aval("imag")
defvectorized(imag_p)
deflowering(imag_p, "elementwise")
conj_p = Primitive("conj")
conj_p.impl = np.conjugate
conj_p.abstract_eval = lambda x: (ShapedArray(x.shape, x.dtype) if x.dtype.kind == "c" else
                                  _complex_only_aval("conj")(x))
defvectorized(conj_p)
deflowering(conj_p, "elementwise", numpy_name="conjugate")
complex_p = Primitive("complex")        # complex(x, y) = x + iy, x and y real, one dtype
def _complex_impl(x, y):
    # the parts are set, not computed: x + 1j*y would make inf parts NaN (1j*inf = nan+inf j)
    x, y = np.asarray(x), np.asarray(y)
    z = np.empty(np.broadcast_shapes(x.shape, y.shape), complex_dtype(np.result_type(x, y)))
    z.real, z.imag = x, y
    return z


complex_p.impl = _complex_impl


def _complex_aval(x, y):
    if x.dtype.kind != "f" or y.dtype.kind != "f" or x.dtype != y.dtype:
        raise DTypeError(f"complex needs two real float operands of one dtype, got {x.dtype} "
                         f"and {y.dtype}")
    return ShapedArray(_binary_shape("complex", x, y), complex_dtype(x.dtype))


complex_p.abstract_eval = _complex_aval
defvectorized(complex_p)
deflowering(complex_p, "elementwise")

# transposes for the pairing <u, v> = Re(Σ u·v) (no conjugation): real(t) pairs with ct as
# Re(ct·t) = Re((ct + 0i)·t); imag(t) as Re(-i·ct·t); conj(t) as Re(conj(ct)·t); and
# x + iy as Re(ct)·x - Im(ct)·y
deflinear(real_p, lambda ct, x: [convert(ct, x.aval.dtype)])
deflinear(imag_p, lambda ct, x: [complex_(zeros_like(ct), neg(ct))])
deflinear(conj_p, lambda ct, x: [conj_p.bind(ct)])
deflinear(complex_p, lambda ct, x, y: [
    unbroadcast(real_p.bind(ct), x.aval) if isinstance(x, UndefinedPrimal) else None,
    unbroadcast(neg(imag_p.bind(ct)), y.aval) if isinstance(y, UndefinedPrimal) else None])


def real(x):
    """The real part of ``x`` (``x`` itself when it is real)."""
    return real_p.bind(x) if dtype_of(x).kind == "c" else x


def imag(x):
    """The imaginary part of ``x`` (zeros of its dtype when it is real)."""
    return imag_p.bind(x) if dtype_of(x).kind == "c" else zeros_like(x)


def conj(x):
    """The complex conjugate of ``x`` (``x`` itself when it is real)."""
    return conj_p.bind(x) if dtype_of(x).kind == "c" else x


def complex_(x, y):
    """``x + i·y`` from real ``x`` and ``y`` (made one float dtype; rank-0 broadcasts)."""
    x, y = _coerce_pair(x, y)
    dx, dy = dtype_of(x), dtype_of(y)
    if dx != dy:
        dt = np.result_type(dx, dy)
        dt = dt if dt.kind == "f" else np.dtype(np.float64)
        x, y = convert(x, dt), convert(y, dt)
    elif dx.kind != "f":
        x, y = convert(x, np.float64), convert(y, np.float64)
    return complex_p.bind(x, y)


stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.impl = lambda x: x
stop_gradient_p.abstract_eval = _std_unary_aval
defjvp_zero(stop_gradient_p, "derivatives cut by definition")
stop_gradient_p.differentiable = True
defvectorized(stop_gradient_p)
deflowering(stop_gradient_p, "elementwise")


# ============================================================================
# Library-op names for the rules above (defined after the primitives they bind)
# ============================================================================

add, sub, mul, div = _b(add_p), _b(sub_p), _b(mul_p), _b(div_p)
pow, max_, min_, atan2 = _b(pow_p), _b(max_p), _b(min_p), _b(atan2_p)
eq, ne, lt, le, gt, ge = (_b(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
neg, sign, floor, ceil = _u(neg_p), _u(sign_p), _u(floor_p), _u(ceil_p)
exp, log, sin, cos, tanh = _u(exp_p), _u(log_p), _u(sin_p), _u(cos_p), _u(tanh_p)
sinh, cosh, sqrt, rsqrt = _u(sinh_p), _u(cosh_p), _u(sqrt_p), _u(rsqrt_p)
_minmax_jvp(max_p, gt)
_minmax_jvp(min_p, lt)
_minmax_taylor(max_p, gt_p)
_minmax_taylor(min_p, lt_p)


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false``; the operand dtypes are made to agree."""
    on_true, on_false = _coerce_pair(on_true, on_false)
    return select_p.bind(pred, on_true, on_false)

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .taylor_series import (add_const, has_series, map_series, mul_term, neg_term,  # noqa: E402
                            one_minus, scale, square_term, cauchy_term, series_div, series_log,
                            series_mul, series_ode, series_pow, series_recip, series_rsqrt,
                            series_sincos, series_sqrt, series_square, series_integrate,
                            sum_terms)
from .shape import broadcast_in_dim  # noqa: E402
from .reductions import reduce_sum  # noqa: E402
