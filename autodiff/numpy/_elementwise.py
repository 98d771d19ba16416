"""Elementwise functions of autodiff.numpy: unary and binary math, comparisons, logic.

Part of :mod:`autodiff.numpy`, which names everything it defines."""
import builtins
import math

import numpy as np

from .. import primitives as P
from ..core import Tracer, user_source
from ..errors import DTypeError
from ._base import fast_pair as _fast_pair
from ._base import (npfunc, asarray, promote, elementwise_args, result_type, float_type, shape_of,
                    broadcast_shapes, broadcast_to as _broadcast_to, is_python_scalar, dtype_of)
from .. import numpy as _anp      # names the package binds later (creation functions)

# ----------------------------------------------------------------------------
# elementwise unary
# ----------------------------------------------------------------------------

def _unary_float(np_fn, prim):
    @npfunc(np_fn)
    def f(x, /, out=None, **kw):
        if type(x) is Tracer and x.aval.dtype.kind == "f":
            return prim.bind(x)                  # the common case, without conversions
        x = asarray(x)
        x = P.convert(x, float_type(dtype_of(x)))
        return prim.bind(x)
    f.__name__ = np_fn.__name__
    f.__doc__ = f"``numpy.{np_fn.__name__}``, differentiable."
    return f


sin = _unary_float(np.sin, P.sin_p)
cos = _unary_float(np.cos, P.cos_p)
tan = _unary_float(np.tan, P.tan_p)
arcsin = asin = _unary_float(np.arcsin, P.asin_p)
arccos = acos = _unary_float(np.arccos, P.acos_p)
arctan = atan = _unary_float(np.arctan, P.atan_p)
sinh = _unary_float(np.sinh, P.sinh_p)
cosh = _unary_float(np.cosh, P.cosh_p)
tanh = _unary_float(np.tanh, P.tanh_p)
arcsinh = asinh = _unary_float(np.arcsinh, P.asinh_p)
arccosh = acosh = _unary_float(np.arccosh, P.acosh_p)
arctanh = atanh = _unary_float(np.arctanh, P.atanh_p)
exp = _unary_float(np.exp, P.exp_p)
exp2 = _unary_float(np.exp2, P.exp2_p)
expm1 = _unary_float(np.expm1, P.expm1_p)
log = _unary_float(np.log, P.log_p)
log1p = _unary_float(np.log1p, P.log1p_p)
log2 = _unary_float(np.log2, P.log2_p)
sqrt = _unary_float(np.sqrt, P.sqrt_p)
cbrt = _unary_float(np.cbrt, P.cbrt_p)


@npfunc(np.log10)
def log10(x):
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    return P.mul(P.log(x), 1.0 / math.log(10.0))


def _unary_same(np_fn, prim, float_only=False, complex_ok=False):
    @npfunc(np_fn)
    def f(x, /, out=None, **kw):
        x = asarray(x)
        if float_only and dtype_of(x).kind == "c" and complex_ok:
            return prim.bind(x)
        if float_only and dtype_of(x).kind == "c":
            raise DTypeError(f"{np_fn.__name__} is not defined for complex input ({dtype_of(x)}); "
                             f"numpy refuses it too: apply it to anp.real(x) and anp.imag(x)",
                             source=user_source())
        if float_only and dtype_of(x).kind not in "f":
            return x if dtype_of(x).kind in "iub" else P.convert(x, float_type(dtype_of(x)))
        return prim.bind(x)
    f.__name__ = np_fn.__name__
    return f


negative = _unary_same(np.negative, P.neg_p)
absolute = abs = _unary_same(np.absolute, P.abs_p)
fabs = _unary_float(np.fabs, P.abs_p)
sign = _unary_same(np.sign, P.sign_p)


def _no_bool(fn, hint):
    """numpy's ``negative``, ``subtract`` and ``sign`` refuse bools (TypeError): so do these."""
    np_fn = fn.__wrapped_numpy__

    @npfunc(np_fn)
    def f(*args, **kw):
        if result_type(*args) == np.bool_:
            raise DTypeError(f"{np_fn.__name__}: numpy's {np_fn.__name__} is not defined for "
                             f"bool input; {hint}", source=user_source())
        return fn(*args, **kw)
    f.__name__ = np_fn.__name__
    return f


negative = _no_bool(negative, "use anp.logical_not (~) or convert with x.astype(int)")
sign = _no_bool(sign, "convert it first (x.astype(int))")
floor = _unary_same(np.floor, P.floor_p, float_only=True)
ceil = _unary_same(np.ceil, P.ceil_p, float_only=True)
rint = _unary_same(np.rint, P.round_p, float_only=True, complex_ok=True)
isfinite = _unary_same(np.isfinite, P.is_finite_p)


@npfunc(np.positive)
def positive(x):
    return asarray(x)


@npfunc(np.trunc)
def trunc(x):
    x = asarray(x)
    if dtype_of(x).kind != "f":
        return x
    return where(less(x, 0), ceil(x), floor(x))


fix = trunc


@npfunc(np.round)
def round(a, decimals=0):
    a = asarray(a)
    if dtype_of(a).kind not in "fc":          # complex: both parts rounded (numpy)
        return a
    if decimals == 0:
        return P.round_p.bind(a)
    if decimals > np.log10(np.finfo(dtype_of(a)).max):
        return a                  # beyond the dtype's precision: unchanged (JAX)
    s = 10.0 ** decimals
    return P.div(P.round_p.bind(P.mul(a, s)), s)


around = round


@npfunc(np.isnan)
def isnan(x):
    x = asarray(x)
    return P.ne(x, x)


@npfunc(np.isinf)
def isinf(x):
    x = asarray(x)
    if dtype_of(x).kind == "c":               # numpy: either part infinite
        return logical_or(isinf(P.real(x)), isinf(P.imag(x)))
    if dtype_of(x).kind != "f":
        return P.full(shape_of(x), False, np.bool_)
    return logical_and(logical_not(isnan(x)), logical_not(isfinite(x)))


@npfunc(np.square)
def square(x):
    x = asarray(x)
    if dtype_of(x) == np.bool_:          # numpy squares bools in int8
        x = P.convert(x, np.int8)
    return P.integer_pow(x, 2)


@npfunc(np.reciprocal)
def reciprocal(x):
    x = asarray(x)
    if dtype_of(x).kind == "c":
        return _complex_reciprocal(x)
    return P.div(P.full_like(x, 1), x)


def _complex_reciprocal(z):
    # numpy's complex reciprocal is Smith's division of 1 by z (not 1/z, whose special values
    # differ: reciprocal(0j) is nan+nanj, 1/0j is inf+nanj); each branch is 1/z exactly, and
    # each divides by a part that is non-zero where it is selected (safe operands elsewhere,
    # so the branch not taken gives no NaN to the derivative)
    re, im = P.real(z), P.imag(z)
    small_im = P.le(P.abs_p.bind(im), P.abs_p.bind(re))
    one = P.full_like(re, 1)
    a = P.select(small_im, re, one)                  # branch 1 divides by re
    r1 = P.div(P.select(small_im, im, P.full_like(re, 0)), a)
    d1 = P.add(a, P.mul(P.select(small_im, im, P.full_like(re, 0)), r1))
    b = P.select(small_im, one, im)                  # branch 2 divides by im
    r2 = P.div(P.select(small_im, P.full_like(re, 0), re), b)
    d2 = P.add(P.mul(P.select(small_im, P.full_like(re, 0), re), r2), b)
    out_re = P.select(small_im, P.div(one, d1), P.div(r2, d2))
    out_im = P.select(small_im, P.neg(P.div(r1, d1)), P.neg(P.div(one, d2)))
    return P.complex_(out_re, out_im)


@npfunc(np.logical_not)
def logical_not(x):
    x = asarray(x)
    return P.not_p.bind(P.ne(x, P.full_like(x, 0)) if dtype_of(x) != np.bool_ else x)


@npfunc(np.invert)
def invert(x):
    return P.not_p.bind(asarray(x))


bitwise_not = invert


@npfunc(np.deg2rad)
def deg2rad(x):
    x = asarray(x)
    return P.mul(P.convert(x, float_type(dtype_of(x))), np.pi / 180)


radians = deg2rad


@npfunc(np.rad2deg)
def rad2deg(x):
    x = asarray(x)
    return P.mul(P.convert(x, float_type(dtype_of(x))), 180 / np.pi)


degrees = rad2deg


@npfunc(np.sinc)
def sinc(x):
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    px = P.mul(x, np.pi)
    # near 0 use the Maclaurin series sin(t)/t = sum (-t²)^k / (2k+1)!, so that every
    # derivative at (and near) 0 is right; sin(t)/t itself cancels catastrophically there
    small = P.lt(absolute(px), 0.5)          # |πx| is real for complex x too
    safe = where(small, P.full_like(px, 1.0), px)
    t2 = P.mul(px, px)
    series = P.full_like(px, 0.0)
    for k in range(6, -1, -1):
        series = P.add(P.mul(series, t2), (-1.0) ** k / math.factorial(2 * k + 1))
    return where(small, series, P.div(P.sin(safe), safe))


# ----------------------------------------------------------------------------
# elementwise binary
# ----------------------------------------------------------------------------

def _binary(np_fn, prim, to_float=False):
    @npfunc(np_fn)
    def f(x1, x2, /, out=None, **kw):
        pair = _fast_pair(x1, x2)
        if pair is not None:
            return prim.bind(*pair)
        a, b = elementwise_args(x1, x2, to_float=to_float)
        return prim.bind(a, b)
    f.__name__ = np_fn.__name__
    return f


add = _binary(np.add, P.add_p)
subtract = _no_bool(_binary(np.subtract, P.sub_p),
                    "use anp.logical_xor or convert with x.astype(int)")
multiply = _binary(np.multiply, P.mul_p)
divide = true_divide = _binary(np.true_divide, P.div_p, to_float=True)
maximum = _binary(np.maximum, P.max_p)
minimum = _binary(np.minimum, P.min_p)
arctan2 = atan2 = _binary(np.arctan2, P.atan2_p, to_float=True)
mod = remainder = _binary(np.mod, P.mod_p)
floor_divide = _binary(np.floor_divide, P.floor_divide_p)
equal = _binary(np.equal, P.eq_p)
not_equal = _binary(np.not_equal, P.ne_p)
less = _binary(np.less, P.lt_p)
less_equal = _binary(np.less_equal, P.le_p)
greater = _binary(np.greater, P.gt_p)
greater_equal = _binary(np.greater_equal, P.ge_p)
bitwise_and = _binary(np.bitwise_and, P.and_p)
bitwise_or = _binary(np.bitwise_or, P.or_p)
bitwise_xor = _binary(np.bitwise_xor, P.xor_p)


def _bool(x):
    x = asarray(x)
    return x if dtype_of(x) == np.bool_ else P.ne(x, P.full_like(x, 0) if isinstance(x, Tracer) else np.zeros((), dtype_of(x)))


def _logical(np_fn, prim):
    @npfunc(np_fn)
    def f(x1, x2, /, out=None):
        a, b = elementwise_args(_bool(x1), _bool(x2))
        return prim.bind(a, b)
    f.__name__ = np_fn.__name__
    return f


logical_and = _logical(np.logical_and, P.and_p)
logical_or = _logical(np.logical_or, P.or_p)
logical_xor = _logical(np.logical_xor, P.xor_p)


@npfunc(np.power)
def power(x1, x2):
    # numpy computes a float array to the scalar power 0.5 as sqrt (its fast path for scalar
    # exponents), so power(-inf, 0.5) is nan and power(-0., 0.5) is -0.0, where C's pow (and
    # numpy itself with an array exponent) gives inf and +0.0: follow numpy's scalar case
    if (is_python_scalar(x2) or isinstance(x2, np.floating)) and \
            not isinstance(x2, (bool, complex)) and float(x2) == 0.5 and isinstance(x1, Tracer):
        x = asarray(x1)
        return sqrt(P.convert(x, float_type(result_type(x, x2))))
    # integer exponents given as Python/numpy ints take the exact integer_pow path
    if (is_python_scalar(x2) or isinstance(x2, np.integer)) and \
            not isinstance(x2, (bool, complex)) and float(x2) == builtins.int(x2) and abs(x2) <= 64:
        x = asarray(x1)
        dt = result_type(x, x2)
        if builtins.int(x2) < 0 and dt.kind in "iu":
            raise ValueError("Integers to negative integer powers are not allowed.")
        return P.integer_pow(P.convert(x, dt), builtins.int(x2))
    a, b = elementwise_args(x1, x2)
    return P.pow_p.bind(a, b)


pow = power


@npfunc(np.float_power)
def float_power(x1, x2):
    a, b = elementwise_args(x1, x2)
    dt = np.complex128 if dtype_of(a).kind == "c" or dtype_of(b).kind == "c" else np.float64
    return power(P.convert(a, dt), P.convert(b, dt))


@npfunc(np.fmod)
def fmod(x1, x2):
    # C's fmod: the remainder of truncated division, with the sign of x1. mod(|x1|, |x2|) is
    # exact (a - trunc(a/b)·b is not, once a/b is large) and non-negative; the sign of x1 is
    # put back with signbit, so fmod(-0., 2) is -0.0 and fmod(-7, 2) is -1 as in numpy
    # |x| is taken as where(signbit(x), -x, x): the same value, but slope ±1 at ±0 where abs
    # has 0, so d fmod/dx1 = 1 at x1 = 0 too (found by tests/test_fuzz.py)
    a, b = elementwise_args(x1, x2)
    if dtype_of(a).kind != "f":
        # integers: mod (the sign of the divisor) moved to the dividend's sign; no |x|, which
        # overflows at the most negative value (fmod(int8(-128), 3) = -2). numpy computes
        # bool fmod in int8
        if dtype_of(a) == np.bool_:
            a, b = P.convert(a, np.int8), P.convert(b, np.int8)
        r = P.mod_p.bind(a, b)
        zero = P.full_like(r, 0)
        return where(logical_and(P.ne(r, zero), P.ne(P.lt(r, zero), P.lt(a, zero))), P.sub(r, b), r)
    neg_a = signbit(a)
    r = P.mod_p.bind(where(neg_a, negative(a), a), where(signbit(b), negative(b), b))
    return where(neg_a, negative(r), r)


@npfunc(np.hypot)
def hypot(x1, x2):
    # r = hi·√(1 + (lo/hi)²) with hi = max(|x|, |y|): no overflow of x² near 1e155 and
    # above, no underflow below 1e-154 (as C's hypot). dr/dhi = hi/r and dr/dlo = lo/r, so
    # the derivative x/r is exact; the formula is symmetric, so picking hi at |x| = |y|
    # changes no derivative of any order. hi = 0 gives 0 with a zero subgradient (like
    # norm), an infinite operand gives inf even next to NaN (C99, numpy), NaN otherwise
    # stays NaN.
    a, b = elementwise_args(x1, x2, to_float=True)
    if not isinstance(a, Tracer) and not isinstance(b, Tracer):
        return np.hypot(a, b)
    aa, bb = absolute(a), absolute(b)
    first = P.ge(aa, bb)                 # false when either is NaN: lo is then aa
    hi, lo = where(first, aa, bb), where(first, bb, aa)
    # both zero (hi = 0 alone also happens when aa is NaN, ordered below bb = 0: NaN then)
    zero = logical_and(P.eq(hi, P.full_like(hi, 0)), P.eq(lo, P.full_like(lo, 0)))
    inf = logical_or(isinf(aa), isinf(bb))
    safe = where(logical_or(zero, inf), _anp.ones_like(hi), hi)
    t = P.div(lo, safe)
    r = P.mul(hi, sqrt(add(P.mul(t, t), 1)))
    return where(inf, P.full_like(hi, np.inf), where(zero, _anp.zeros_like(hi), r))


def _np_logaddexp(x1, x2):
    # numpy's logaddexp has no complex loop; JAX's (and the traced one here) has
    if np.result_type(x1, x2).kind == "c":
        return _logaddexp(x1, x2)
    return np.logaddexp(x1, x2)


@npfunc(_np_logaddexp)
def logaddexp(x1, x2):
    """``log(exp(x1) + exp(x2))`` without overflow (``numpy.logaddexp``); complex operands
    are accepted, as in JAX (the principal branch of the logarithm).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.logaddexp(1000.0, 1000.0))
    1000.6931471805599
    >>> complex(anp.logaddexp(np.complex128(1j * np.pi / 2), 0j))
    (0.34657359027997264+0.7853981633974483j)
    """
    return _logaddexp(x1, x2)


def _logaddexp(x1, x2):
    a, b = elementwise_args(x1, x2, to_float=True)
    m = maximum(a, b)
    m = P.stop_gradient_p.bind(m) if isinstance(m, Tracer) else m
    safe_m = where(isfinite(m), m, _anp.zeros_like(m))
    out = add(safe_m, log(add(exp(subtract(a, safe_m)), exp(subtract(b, safe_m)))))
    if dtype_of(out).kind == "c":
        # log's principal branch: the imaginary part back into [-pi, pi) (as JAX does)
        turns = floor(divide(add(P.imag(out), np.pi), 2 * np.pi))
        turns = P.stop_gradient_p.bind(turns) if isinstance(turns, Tracer) else turns
        out = subtract(out, multiply(turns, 2j * np.pi))
    return out


@npfunc(np.copysign)
def copysign(x1, x2):
    a, b = elementwise_args(x1, x2, to_float=True)
    return where(signbit(b), negative(absolute(a)), absolute(a))


@npfunc(np.signbit)
def signbit(x):
    x = asarray(x)
    if dtype_of(x).kind != "f":
        return P.lt(x, P.full_like(x, 0))
    # -0.0 has its sign bit set: 1/x == -inf tells it apart
    return logical_or(P.lt(x, P.full_like(x, 0)),
                      logical_and(P.eq(x, P.full_like(x, 0)), P.lt(P.div(P.full_like(x, 1), x), P.full_like(x, 0))))


@npfunc(np.heaviside)
def heaviside(x1, x2):
    a, b = elementwise_args(x1, x2, to_float=True)
    out = where(P.lt(a, 0), _anp.zeros_like(a), where(P.gt(a, 0), _anp.ones_like(a), b))
    return where(isnan(a), a, out)                 # nan in x1 stays nan (numpy)


@npfunc(np.where)
def where(condition, x=None, y=None, *, size=None, fill_value=None):
    """``numpy.where``; the one-argument form is :func:`nonzero` (with JAX's ``size=``
    and ``fill_value=`` it traces under ``jit``; without, it needs a concrete condition)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise TypeError("where: size= and fill_value= go with the one-argument form "
                        "where(condition) only")
    c = _bool(condition)
    a, b = promote(x, y)
    sh = broadcast_shapes(shape_of(c), shape_of(a), shape_of(b))
    c, a, b = [_broadcast_to(v if not is_python_scalar(v) else np.asarray(v), sh)
               for v in (c, a, b)]
    return P.select_p.bind(c, a, b)


_where_fn = where      # for the reductions, whose ``where=`` argument shadows the function


def _refuse_complex_clip(*args):
    """JAX's check: complex numbers have no order, so clip refuses them (numpy clips by
    its lexicographic order; JAX and this function raise, eagerly and traced alike)."""
    for v in args:
        if v is not None and np.dtype(dtype_of(v) if isinstance(v, Tracer)
                                      else np.result_type(v)).kind == "c":
            raise ValueError("clip: complex values have no ordering and cannot be clipped "
                             "(the input or a bound is complex)")


def _np_clip(*args, **kwargs):
    _refuse_complex_clip(*args[:3], *(kwargs.get(k) for k in ("a_min", "a_max", "min", "max")))
    return np.clip(*args, **kwargs)


@npfunc(_np_clip)
def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    a_min = a_min if a_min is not None else min
    a_max = a_max if a_max is not None else max
    _refuse_complex_clip(a, a_min, a_max)
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return asarray(out)


@npfunc(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if dtype_of(x).kind == "c":             # numpy: each part replaced on its own
        kw = dict(nan=nan, posinf=posinf, neginf=neginf)
        return P.complex_(nan_to_num(P.real(x), **kw), nan_to_num(P.imag(x), **kw))
    if dtype_of(x).kind != "f":
        return x
    fi = np.finfo(dtype_of(x))
    x = where(isnan(x), nan, x)
    x = where(P.eq(x, P.full_like(x, np.inf)), fi.max if posinf is None else posinf, x)
    return where(P.eq(x, P.full_like(x, -np.inf)), fi.min if neginf is None else neginf, x)

# used when called, from modules imported after this one
from ._indexing import nonzero  # noqa: E402
