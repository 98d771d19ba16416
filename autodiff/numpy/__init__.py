"""numpy-compatible functions that work on concrete arrays and on traced values alike.

On plain numpy inputs each function is numpy's own (results identical to
numpy's); on traced values it records primitives. dtype rules are numpy's:
float64 stays float64, float32 stays float32, Python scalars are weak.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.sum(anp.sin(np.zeros(3)))
np.float64(0.0)
>>> ad.grad(lambda x: anp.sum(anp.tanh(x)))(np.zeros(2))
array([1., 1.])
"""
import builtins
import math

import numpy as np

from .. import primitives as P
from ..core import Tracer, is_concrete
from ..errors import ShapeError, DTypeError, UnsupportedError
from ..core import user_source
from ._base import ndim as _base_ndim
from ._base import fast_pair as _fast_pair
from ._base import (npfunc, asarray, promote, elementwise_args, result_type,
                    float_type, shape_of, ndim, broadcast_shapes, broadcast_to as _broadcast_to,
                    normalize_axis, normalize_axes, is_python_scalar, dtype_of, to_output)

# constants and dtypes, as numpy spells them
pi, e, inf, nan, newaxis, euler_gamma = np.pi, np.e, np.inf, np.nan, None, np.euler_gamma
float64, float32, float16, int64, int32, int16, int8, uint8, bool_ = (
    np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)
uint32, uint64, uint16 = np.uint32, np.uint64, np.uint16
dtype, ndarray, finfo, iinfo, result_type_np = np.dtype, np.ndarray, np.finfo, np.iinfo, np.result_type
integer, floating, number, inexact, signedinteger = np.integer, np.floating, np.number, np.inexact, np.signedinteger
issubdtype = np.issubdtype
shape = npfunc(np.shape)(lambda x: shape_of(x))
size = npfunc(np.size)(lambda x, axis=None: builtins.int(np.prod(shape_of(x))) if axis is None else shape_of(x)[axis])


def _ndim(x):
    return ndim(x)


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
sqrt = _unary_float(np.sqrt, P.sqrt_p)
cbrt = _unary_float(np.cbrt, P.cbrt_p)


@npfunc(np.log2)
def log2(x):
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    return P.mul(P.log(x), 1.0 / math.log(2.0))


@npfunc(np.log10)
def log10(x):
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    return P.mul(P.log(x), 1.0 / math.log(10.0))


def _unary_same(np_fn, prim, float_only=False):
    @npfunc(np_fn)
    def f(x, /, out=None, **kw):
        x = asarray(x)
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
rint = _unary_same(np.rint, P.round_p, float_only=True)
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
    if dtype_of(a).kind != "f":
        return a
    if decimals == 0:
        return P.round_p.bind(a)
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
    return P.div(P.full_like(x, 1), x)


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
    small = P.lt(absolute(px), P.full_like(px, 0.5))
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
    if (is_python_scalar(x2) or isinstance(x2, np.floating)) and not isinstance(x2, bool) \
            and float(x2) == 0.5 and isinstance(x1, Tracer):
        x = asarray(x1)
        return sqrt(P.convert(x, float_type(result_type(x, x2))))
    # integer exponents given as Python/numpy ints take the exact integer_pow path
    if (is_python_scalar(x2) or isinstance(x2, np.integer)) and not isinstance(x2, bool) and \
            float(x2) == builtins.int(x2) and abs(x2) <= 64:
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
    return power(P.convert(a, np.float64), P.convert(b, np.float64))


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
    zero = P.eq(hi, P.full_like(hi, 0))
    inf = logical_or(isinf(aa), isinf(bb))
    safe = where(logical_or(zero, inf), ones_like(hi), hi)
    t = P.div(lo, safe)
    r = P.mul(hi, sqrt(add(P.mul(t, t), 1)))
    return where(inf, P.full_like(hi, np.inf), where(zero, zeros_like(hi), r))


@npfunc(np.logaddexp)
def logaddexp(x1, x2):
    a, b = elementwise_args(x1, x2, to_float=True)
    m = maximum(a, b)
    m = P.stop_gradient_p.bind(m) if isinstance(m, Tracer) else m
    safe_m = where(isfinite(m), m, zeros_like(m))
    return add(safe_m, log(add(exp(subtract(a, safe_m)), exp(subtract(b, safe_m)))))


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
    return where(P.lt(a, 0), zeros_like(a), where(P.gt(a, 0), ones_like(a), b))


@npfunc(np.where)
def where(condition, x=None, y=None):
    """``numpy.where``; the one-argument form needs a concrete condition."""
    if x is None and y is None:
        return nonzero(condition)
    c = _bool(condition)
    a, b = promote(x, y)
    sh = broadcast_shapes(shape_of(c), shape_of(a), shape_of(b))
    c, a, b = [_broadcast_to(v if not is_python_scalar(v) else np.asarray(v), sh)
               for v in (c, a, b)]
    return P.select_p.bind(c, a, b)


_where_fn = where      # for the reductions, whose ``where=`` argument shadows the function


@npfunc(np.clip)
def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    a_min = a_min if a_min is not None else min
    a_max = a_max if a_max is not None else max
    out = a
    if a_min is not None:
        out = maximum(out, a_min)
    if a_max is not None:
        out = minimum(out, a_max)
    return asarray(out)


@npfunc(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if dtype_of(x).kind != "f":
        return x
    fi = np.finfo(dtype_of(x))
    x = where(isnan(x), nan, x)
    x = where(P.eq(x, P.full_like(x, np.inf)), fi.max if posinf is None else posinf, x)
    return where(P.eq(x, P.full_like(x, -np.inf)), fi.min if neginf is None else neginf, x)


# ----------------------------------------------------------------------------
# creation
# ----------------------------------------------------------------------------

@npfunc(np.asarray)
def _asarray_traced(a, dtype=None, order=None):
    return asarray(a, dtype)


def array(object, dtype=None, copy=True, ndmin=0):
    out = _asarray_traced(object, dtype=dtype)
    while ndim(out) < ndmin:
        out = expand_dims(out, 0)
    if isinstance(out, np.ndarray) and copy:
        out = out.copy()
    return out


def asarray_(a, dtype=None):
    return _asarray_traced(a, dtype=dtype)


zeros, ones, empty, full, eye, identity = np.zeros, np.ones, np.zeros, np.full, np.eye, np.identity
arange, linspace, logspace, geomspace = np.arange, np.linspace, np.logspace, np.geomspace
meshgrid_np = np.meshgrid


@npfunc(np.zeros_like)
def zeros_like(a, dtype=None, shape=None):
    a = asarray(a)
    return P.full(shape_of(a) if shape is None else shape, 0, dtype or dtype_of(a))


@npfunc(np.ones_like)
def ones_like(a, dtype=None, shape=None):
    a = asarray(a)
    return P.full(shape_of(a) if shape is None else shape, 1, dtype or dtype_of(a))


@npfunc(np.full_like)
def full_like(a, fill_value, dtype=None, shape=None):
    a = asarray(a)
    dt = np.dtype(dtype or dtype_of(a))
    sh = shape_of(a) if shape is None else tuple(np.atleast_1d(shape))
    if isinstance(fill_value, Tracer):
        return _broadcast_to(P.convert(fill_value, dt), sh)
    return P.full(sh, fill_value, dt)


empty_like = zeros_like


def astype(x, dtype):
    scalar = isinstance(x, (np.generic, bool, int, float))
    x = asarray(x)
    dt = np.dtype(dtype)
    if isinstance(x, Tracer):
        return P.convert(x, dt)
    out = x.astype(dt)
    # numpy's own astype keeps a numpy scalar a scalar (docs/design.md, convention 2)
    return out[()] if scalar and out.ndim == 0 else out


def _caster(dt):
    def cast(x=0):
        if isinstance(x, Tracer) or hasattr(x, "__autodiff_array__"):
            return astype(asarray(x) if not hasattr(x, "__autodiff_array__") else x, dt) \
                if not hasattr(x, "__autodiff_array__") else type(x).__autodiff_wrap__(astype(x.__autodiff_array__(), dt))
        return np.dtype(dt).type(x) if np.ndim(x) == 0 else np.asarray(x).astype(dt)
    return cast


# anp.float32(x), anp.int64(x) cast traced values too (docs/design.md, convention 1)
class _DType:
    def __init__(self, t):
        self.type = t
        self.dtype = np.dtype(t)
        self.__name__ = t.__name__

    def __call__(self, x=0):
        return _caster(self.type)(x)

    def __repr__(self):
        return f"autodiff.numpy.{self.__name__}"

    def __eq__(self, other):
        return other is self or other == self.type or (isinstance(other, np.dtype) and other == self.dtype)

    def __hash__(self):
        return hash(self.type)


float64, float32, float16 = _DType(np.float64), _DType(np.float32), _DType(np.float16)
int64, int32, int16, int8, uint8 = _DType(np.int64), _DType(np.int32), _DType(np.int16), _DType(np.int8), _DType(np.uint8)
bool_ = _DType(np.bool_)


def _np_dtype(dt):
    if isinstance(dt, _DType):
        return dt.dtype
    return np.dtype(dt) if dt is not None else None


# ----------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------

def _reduce(x, axis, keepdims, prim_fn):
    x = asarray(x)
    nd = ndim(x)
    axes = normalize_axes(axis, nd)
    out = prim_fn(x, axes)
    if keepdims:
        out = P.expand_dims(out, axes)
    return out


def _sum_dtype(dt):
    dt = np.dtype(dt)
    if dt == np.bool_ or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return dt


def _masked(a, where, fill):
    """numpy's ``where=`` of a reduction: masked-out elements become its identity ``fill``."""
    if where is None or where is True:
        return a
    m = _broadcast_to(_bool(where), shape_of(a))
    return P.select_p.bind(m, a, P.full_like(a, fill))


def _count(a, where, axis, keepdims, dt):
    """How many elements each reduction over ``axis`` sees, honouring ``where=``, as ``dt``."""
    if where is None or where is True:
        axes = normalize_axes(axis, ndim(a))
        n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
        return dt.type(n)
    m = _broadcast_to(_bool(where), shape_of(a))
    return P.convert(sum(m, axis=axis, keepdims=keepdims), dt)


def _lowest(dt):
    dt = np.dtype(dt)
    return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)


def _highest(dt):
    dt = np.dtype(dt)
    return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)


def _no_out(out, name):
    # numpy writes into out=; a traced value cannot be written into: say so, never ignore it
    if out is not None:
        raise TypeError(f"{name}(..., out=) cannot be honoured on traced values (arrays are "
                        f"immutable under transforms): use the returned value instead")


def _no_identity(name, where, initial):
    if where is not None and where is not True and initial is None:
        raise ValueError(f"reduction operation {name!r} does not have an identity, so to use "
                         f"a where mask one has to specify 'initial' (as numpy requires)")


def _check_nonempty(name, a, axis, initial=None):
    """numpy's ValueError for max/min/argmax over no elements, in every mode: traced code
    knows the shapes, so jit, grad and vmap raise where eager numpy raises (a kernel would
    return the fill value -inf / inf / 0 instead)."""
    if initial is not None:
        return
    shp = shape_of(a)
    axes = range(len(shp)) if axis is None else normalize_axes(axis, len(shp))
    if builtins.any(shp[i] == 0 for i in axes):
        msg = (f"attempt to get {name} of an empty sequence" if name.startswith("arg") else
               f"zero-size array to reduction operation {name} which has no identity "
               f"(pass initial= for a value on empty input)")
        raise ShapeError(msg, source=user_source())


@npfunc(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "sum")
    a = asarray(a)
    a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
    a = _masked(a, where, 0)
    out = _reduce(a, axis, keepdims, lambda x, axes: P.reduce_sum(x, axes))
    if initial is not None:
        out = add(out, initial)
    return out


@npfunc(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "prod")
    a = asarray(a)
    a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
    a = _masked(a, where, 1)
    out = _reduce(a, axis, keepdims,
                  lambda x, axes: P.reduce_prod_p.bind(x, axes=axes) if axes else x)
    return out if initial is None else multiply(out, initial)


product = prod


@npfunc(np.max)
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "max")
    _no_identity("maximum", where, initial)
    a = asarray(a)
    _check_nonempty("maximum", a, axis, initial)
    a = _masked(a, where, _lowest(dtype_of(a)))
    out = _reduce(a, axis, keepdims, lambda x, axes: P.reduce_max_p.bind(x, axes=axes) if axes else x)
    return out if initial is None else maximum(out, initial)


@npfunc(np.min)
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "min")
    _no_identity("minimum", where, initial)
    a = asarray(a)
    _check_nonempty("minimum", a, axis, initial)
    a = _masked(a, where, _highest(dtype_of(a)))
    out = _reduce(a, axis, keepdims, lambda x, axes: P.reduce_min_p.bind(x, axes=axes) if axes else x)
    return out if initial is None else minimum(out, initial)


amax, amin = max, min


@npfunc(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "all")
    return _reduce(_masked(_bool(a), where, True), axis, keepdims, lambda x, axes: P.reduce_and_p.bind(x, axes=axes) if axes else x)


@npfunc(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "any")
    return _reduce(_masked(_bool(a), where, False), axis, keepdims, lambda x, axes: P.reduce_or_p.bind(x, axes=axes) if axes else x)


alltrue, sometrue = all, any


@npfunc(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "mean")
    a = asarray(a)
    dt = _np_dtype(dtype) or float_type(dtype_of(a))
    a = P.convert(a, dt)
    if where is not None and where is not True:
        return divide(sum(a, axis=axis, keepdims=keepdims, where=where),
                      _count(a, where, axis, keepdims, dt))
    axes = normalize_axes(axis, ndim(a))
    n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
    s = sum(a, axis=axes, keepdims=keepdims)
    return P.div(s, dt.type(n)) if n else P.div(s, dt.type(np.nan))


@npfunc(np.average)
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if returned:
            a = asarray(a)
            axes = normalize_axes(axis, ndim(a))
            n = np.prod([shape_of(a)[i] for i in axes])
            return avg, full_like(avg, n)
        return avg
    a, w = promote(a, weights, to_float=True)
    if shape_of(w) != shape_of(a):
        if axis is None or ndim(w) != 1:
            raise ShapeError("average: weights must have the shape of a, or be 1-D along axis",
                             source=user_source())
        ax = normalize_axis(axis, ndim(a))
        w = P.broadcast_in_dim(w, shape_of(a), (ax,))
    sw = sum(w, axis=axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), sw)
    return (avg, _broadcast_to(sw, shape_of(avg))) if returned else avg


@npfunc(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    _no_out(out, "var")
    a = asarray(a)
    a = P.convert(a, _np_dtype(dtype) or float_type(dtype_of(a)))
    if where is not None and where is not True:
        m = mean(a, axis=axis, keepdims=True, where=where)
        d = _masked(subtract(a, m), where, 0)
        s = sum(P.mul(d, d), axis=axis, keepdims=keepdims)
        return divide(s, maximum(subtract(_count(a, where, axis, keepdims, dtype_of(s)), ddof), 0))
    m = mean(a, axis=axis, keepdims=True)
    d = subtract(a, m)
    axes = normalize_axes(axis, ndim(a))
    n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
    s = sum(P.mul(d, d), axis=axis, keepdims=keepdims)
    return P.div(s, dtype_of(s).type(builtins.max(n - ddof, 0)))


@npfunc(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    _no_out(out, "std")
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where)
    # std of constant data has zero gradient (convention 5), not the 0·∞ of d√v at v = 0
    from .linalg import _safe_sqrt
    return _safe_sqrt(v)


def _arg(prim, np_fn):
    @npfunc(np_fn)
    def f(a, axis=None, out=None, keepdims=False):
        a = asarray(a)
        _check_nonempty(np_fn.__name__, a, axis)
        if axis is None:
            a = ravel(a)
            ax = 0
        else:
            ax = normalize_axis(axis, ndim(a))
        out = prim.bind(a, axis=ax, index_dtype=np.dtype(np.int64))
        if keepdims:
            out = P.expand_dims(out, (ax,) if axis is not None else tuple(range(ndim(a))))
        return out
    f.__name__ = np_fn.__name__
    return f


argmax = _arg(P.argmax_p, np.argmax)
argmin = _arg(P.argmin_p, np.argmin)


@npfunc(np.ptp)
def ptp(a, axis=None, keepdims=False):
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


@npfunc(np.count_nonzero)
def count_nonzero(a, axis=None, keepdims=False):
    return sum(_bool(a), axis=axis, keepdims=keepdims)


def _cum(prim_fn, np_fn):
    @npfunc(np_fn)
    def f(a, axis=None, dtype=None, out=None):
        a = asarray(a)
        a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
        if axis is None:
            a = ravel(a)
            axis = 0
        return prim_fn(a, normalize_axis(axis, ndim(a)))
    f.__name__ = np_fn.__name__
    return f


cumsum = _cum(lambda a, ax: P.cumsum(a, ax), np.cumsum)
cumprod = _cum(lambda a, ax: P.cumprod(a, ax), np.cumprod)
cumulative_sum = cumsum


@npfunc(np.diff)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = asarray(a)
    ax = normalize_axis(axis, ndim(a))
    if prepend is not None:
        a = concatenate([_broadcast_like_axis(prepend, a, ax), a], axis=ax)
    if append is not None:
        a = concatenate([a, _broadcast_like_axis(append, a, ax)], axis=ax)
    for _ in range(n):
        m = shape_of(a)[ax]
        a = subtract(P.slice_in_dim(a, 1, m, ax), P.slice_in_dim(a, 0, builtins.max(m - 1, 0), ax))
    return a


def _broadcast_like_axis(v, a, ax):
    # numpy converts prepend/append with asanyarray: a Python float is float64 here
    v = asarray(v)
    if ndim(v) == 0:
        sh = list(shape_of(a))
        sh[ax] = 1
        return _broadcast_to(v, sh)
    return v


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b·exp(a)))`` computed stably (scipy's semantics, default ``axis=None``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


@npfunc(None)
def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    a = asarray(a)
    a = P.convert(a, float_type(dtype_of(a)))
    axes = normalize_axes(axis, ndim(a))
    if builtins.any(shape_of(a)[i] == 0 for i in axes):
        # log of an empty sum is log 0 = -inf (scipy, JAX); max has nothing to shift by
        m = zeros_like(sum(a, axis=axes, keepdims=True))
    else:
        m = max(a, axis=axes, keepdims=True)
        m = stop_gradient(where(isfinite(m), m, zeros_like(m)))
    e_ = exp(subtract(a, m))
    if b is not None:
        e_ = multiply(e_, b)
    s = sum(e_, axis=axes, keepdims=True)
    if return_sign:
        sgn = sign(s)
        out = add(log(absolute(s)), m)
    else:
        out = add(log(s), m)
    if not keepdims:
        out = P.squeeze(out, axes)
        if return_sign:
            sgn = P.squeeze(sgn, axes)
    return (out, sgn) if return_sign else out


def stop_gradient(x):
    if isinstance(x, Tracer):
        return P.stop_gradient_p.bind(x)
    return x


@npfunc(None)
def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``, stably."""
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    m = stop_gradient(max(x, axis=axis, keepdims=True))
    e_ = exp(subtract(x, m))
    return divide(e_, sum(e_, axis=axis, keepdims=True))


@npfunc(None)
def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` along ``axis``, stably."""
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    m = stop_gradient(max(x, axis=axis, keepdims=True))
    s = subtract(x, m)
    return subtract(s, log(sum(exp(s), axis=axis, keepdims=True)))


# ----------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------

@npfunc(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None):
    if shape is None:
        shape = newshape
    a = asarray(a)
    if order != "C":
        raise UnsupportedError("reshape: only order='C' is supported", source=user_source())
    shape = (shape,) if isinstance(shape, (builtins.int, np.integer)) else tuple(shape)
    shape = tuple(builtins.int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    total = builtins.int(np.prod(shape_of(a), dtype=np.int64))
    if -1 in shape:
        known = builtins.int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape array of size {total} into shape {shape}",
                             source=user_source())
        shape = tuple(total // known if s == -1 else s for s in shape)
    if builtins.int(np.prod(shape, dtype=np.int64)) != total:
        raise ShapeError(f"cannot reshape array of size {total} into shape {shape}",
                         source=user_source())
    return P.reshape(a, shape)


@npfunc(np.ravel)
def ravel(a, order="C"):
    return reshape(a, (-1,))


@npfunc(np.transpose)
def transpose(a, axes=None):
    a = asarray(a)
    nd = ndim(a)
    perm = tuple(reversed(range(nd))) if axes is None else tuple(normalize_axis(x, nd) for x in axes)
    return P.transpose(a, perm)


permute_dims = transpose


@npfunc(np.moveaxis)
def moveaxis(a, source, destination):
    a = asarray(a)
    nd = ndim(a)
    src = [normalize_axis(s, nd) for s in np.atleast_1d(source)]
    dst = [normalize_axis(d, nd) for d in np.atleast_1d(destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return P.transpose(a, order)


@npfunc(np.swapaxes)
def swapaxes(a, axis1, axis2):
    a = asarray(a)
    nd = ndim(a)
    perm = list(range(nd))
    i, j = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return P.transpose(a, perm)


@npfunc(np.expand_dims)
def expand_dims(a, axis):
    a = asarray(a)
    axes = (axis,) if isinstance(axis, (builtins.int, np.integer)) else tuple(axis)
    nd = ndim(a) + len(axes)
    return P.expand_dims(a, tuple(normalize_axis(x, nd) for x in axes))


@npfunc(np.squeeze)
def squeeze(a, axis=None):
    a = asarray(a)
    sh = shape_of(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(sh) if s == 1)
    else:
        axes = normalize_axes(axis, len(sh))
        for ax in axes:
            if sh[ax] != 1:
                raise ShapeError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {ax} of shape {sh})", source=user_source())
    return P.squeeze(a, axes)


@npfunc(np.broadcast_to)
def broadcast_to(array, shape):
    shape = (shape,) if isinstance(shape, (builtins.int, np.integer)) else tuple(shape)
    return _broadcast_to(asarray(array), shape)


@npfunc(np.broadcast_arrays)
def broadcast_arrays(*args):
    args = [asarray(a) for a in args]
    sh = broadcast_shapes(*[shape_of(a) for a in args])
    return [_broadcast_to(a, sh) for a in args]


@npfunc(np.atleast_1d)
def atleast_1d(*arys):
    res = [reshape(a, (1,)) if ndim(a) == 0 else asarray(a) for a in arys]
    return res[0] if len(res) == 1 else res


@npfunc(np.atleast_2d)
def atleast_2d(*arys):
    res = []
    for a in arys:
        a = asarray(a)
        res.append(reshape(a, (1, 1)) if ndim(a) == 0 else expand_dims(a, 0) if ndim(a) == 1 else a)
    return res[0] if len(res) == 1 else res


def _seq(arrays):
    if isinstance(arrays, Tracer):
        return [arrays[i] for i in range(shape_of(arrays)[0])]
    return [asarray(a) for a in arrays]


@npfunc(np.concatenate)
def concatenate(arrays, axis=0, dtype=None):
    arrays = _seq(arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote(*arrays)
    if dtype is not None:
        arrays = [P.convert(a, _np_dtype(dtype)) for a in arrays]
    nd = ndim(arrays[0])
    if nd == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated", source=user_source())
    return P.concatenate(arrays, normalize_axis(axis, nd))


concat = concatenate


@npfunc(np.stack)
def stack(arrays, axis=0):
    arrays = _seq(arrays)
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"all input arrays must have the same shape, got {sorted(shapes)}",
                         source=user_source())
    nd = ndim(arrays[0]) + 1
    ax = normalize_axis(axis, nd)
    return concatenate([expand_dims(a, ax) for a in arrays], axis=ax)


@npfunc(np.hstack)
def hstack(tup):
    arrs = [atleast_1d(a) for a in _seq(tup)]
    return concatenate(arrs, axis=0 if ndim(arrs[0]) == 1 else 1)


@npfunc(np.vstack)
def vstack(tup):
    return concatenate([atleast_2d(a) for a in _seq(tup)], axis=0)


row_stack = vstack


@npfunc(np.column_stack)
def column_stack(tup):
    arrs = [reshape(a, (-1, 1)) if ndim(a) < 2 else asarray(a) for a in _seq(tup)]
    return concatenate(arrs, axis=1)


@npfunc(np.dstack)
def dstack(tup):
    arrs = []
    for a in _seq(tup):
        a = atleast_2d(a)
        arrs.append(expand_dims(a, 2) if ndim(a) == 2 else a)
    return concatenate(arrs, axis=2)


@npfunc(np.split)
def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=True)


@npfunc(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=False)


def _split(ary, ios, axis, strict):
    ary = asarray(ary)
    ax = normalize_axis(axis, ndim(ary))
    n = shape_of(ary)[ax]
    if isinstance(ios, (builtins.int, np.integer)):
        k = builtins.int(ios)
        if strict and n % k:
            raise ShapeError("array split does not result in an equal division", source=user_source())
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [builtins.min(builtins.max(builtins.int(i), 0), n) for i in ios] + [n]
    return [P.slice_in_dim(ary, bounds[i], builtins.max(bounds[i], bounds[i + 1]), ax)
            for i in range(len(bounds) - 1)]


@npfunc(np.hsplit)
def hsplit(ary, ios):
    return split(ary, ios, axis=1 if ndim(ary) > 1 else 0)


@npfunc(np.vsplit)
def vsplit(ary, ios):
    return split(ary, ios, axis=0)


@npfunc(np.flip)
def flip(m, axis=None):
    m = asarray(m)
    return P.rev(m, normalize_axes(axis, ndim(m)))


@npfunc(np.fliplr)
def fliplr(m):
    return flip(m, 1)


@npfunc(np.flipud)
def flipud(m):
    return flip(m, 0)


@npfunc(np.roll)
def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape_of(a))
    shifts = np.atleast_1d(shift)
    axes = np.atleast_1d(axis)
    shifts, axes = np.broadcast_arrays(shifts, axes)
    for s, ax in zip(shifts, axes):
        ax = normalize_axis(ax, ndim(a))
        n = shape_of(a)[ax]
        if n == 0:
            continue
        s = builtins.int(s) % n
        if s:
            a = concatenate([P.slice_in_dim(a, n - s, n, ax), P.slice_in_dim(a, 0, n - s, ax)], axis=ax)
    return a


@npfunc(np.tile)
def tile(A, reps):
    A = asarray(A)
    reps = (reps,) if isinstance(reps, (builtins.int, np.integer)) else tuple(reps)
    nd = builtins.max(ndim(A), len(reps))
    A = reshape(A, (1,) * (nd - ndim(A)) + shape_of(A))
    reps = (1,) * (nd - len(reps)) + reps
    sh = shape_of(A)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    big = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, sh)):
        big += [r, s]
        dims.append(2 * i + 1)
    out = P.broadcast_in_dim(A, tuple(big), tuple(dims))
    return reshape(out, tuple(r * s for r, s in zip(reps, sh)))


@npfunc(np.repeat)
def repeat(a, repeats, axis=None):
    a = asarray(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = normalize_axis(axis, ndim(a))
    if isinstance(repeats, (builtins.int, np.integer)) or np.ndim(repeats) == 0:
        r = builtins.int(repeats)
        sh = shape_of(a)
        big = sh[:ax + 1] + (r,) + sh[ax + 1:]
        out = P.broadcast_in_dim(a, big, tuple(i for i in range(len(big)) if i != ax + 1))
        return reshape(out, sh[:ax] + (sh[ax] * r,) + sh[ax + 1:])
    idx = np.repeat(np.arange(shape_of(a)[ax]), np.asarray(repeats))
    return take(a, idx, axis=ax)


# ----------------------------------------------------------------------------
# indexing
# ----------------------------------------------------------------------------

from ._indexing import getitem, take, take_along_axis, at, nonzero, argwhere, flatnonzero, _AtIndexer  # noqa: E402


@npfunc(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    nd = ndim(a)
    a1, a2 = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    a = moveaxis(a, (a1, a2), (-2, -1))
    n, m = shape_of(a)[-2:]
    if offset >= 0:
        k = builtins.max(0, builtins.min(n, m - offset))
        rows, cols = np.arange(k), np.arange(k) + offset
    else:
        k = builtins.max(0, builtins.min(n + offset, m))
        rows, cols = np.arange(k) - offset, np.arange(k)
    return getitem(a, (Ellipsis, rows, cols))


@npfunc(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@npfunc(np.diag)
def diag(v, k=0):
    v = asarray(v)
    if ndim(v) == 1:
        n = shape_of(v)[0] + builtins.abs(k)
        out = zeros_like(v, shape=(n, n))
        rows = np.arange(shape_of(v)[0]) + builtins.max(-k, 0)
        cols = np.arange(shape_of(v)[0]) + builtins.max(k, 0)
        return at(out)[rows, cols].set(v)
    if ndim(v) == 2:
        return diagonal(v, k)
    raise ShapeError("diag: input must be 1-d or 2-d", source=user_source())


@npfunc(np.diagflat)
def diagflat(v, k=0):
    return diag(ravel(v), k)


def _tri_mask(shape_, k, lower):
    n, m = shape_[-2:]
    r = np.arange(n)[:, None]
    c = np.arange(m)[None, :]
    return (c - r <= k) if lower else (c - r >= k)


@npfunc(np.tril)
def tril(m, k=0):
    m = asarray(m)
    mask = _tri_mask(shape_of(m), k, True)
    return where(np.broadcast_to(mask, shape_of(m)), m, zeros_like(m))


@npfunc(np.triu)
def triu(m, k=0):
    m = asarray(m)
    mask = _tri_mask(shape_of(m), k, False)
    return where(np.broadcast_to(mask, shape_of(m)), m, zeros_like(m))


# ----------------------------------------------------------------------------
# products
# ----------------------------------------------------------------------------

@npfunc(np.matmul)
def matmul(x1, x2):
    a, b = promote(x1, x2)
    a, b = asarray(a), asarray(b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ShapeError("matmul: input operand does not have enough dimensions", source=user_source())
    if na == 1 and nb == 1:
        _check_contract(shape_of(a)[0], shape_of(b)[0], a, b)
        return P.dot_general(a, b, (((0,), (0,)), ((), ())))
    # a vector operand needs no expand/squeeze: contracting it leaves exactly the free
    # dims of the other operand, in matmul's order, so one dot_general does it
    if na == 1:
        _check_contract(shape_of(a)[0], shape_of(b)[-2], a, b)
        return P.dot_general(a, b, (((0,), (nb - 2,)), ((), ())))
    if nb == 1:
        _check_contract(shape_of(a)[-1], shape_of(b)[0], a, b)
        return P.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
    _check_contract(shape_of(a)[-1], shape_of(b)[-2], a, b)
    batch = broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2])
    if na == 2 and nb == 2:
        return P.dot_general(a, b, (((1,), (0,)), ((), ())))
    if nb == 2:
        # (..., n, k) @ (k, m): contract without broadcasting b
        return P.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
    a = _broadcast_to(a, batch + shape_of(a)[-2:])
    b = _broadcast_to(b, batch + shape_of(b)[-2:])
    nbt = len(batch)
    bd = tuple(range(nbt))
    return P.dot_general(a, b, (((nbt + 1,), (nbt,)), (bd, bd)))


def _check_contract(n, m, a, b):
    if n != m:
        raise ShapeError(f"matmul: contracted dimensions differ ({n} vs {m}) for shapes "
                         f"{shape_of(a)} and {shape_of(b)}", source=user_source())


@npfunc(np.dot)
def dot(a, b):
    a, b = promote(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    if nb <= 2:
        return matmul(a, b)
    # numpy: sum over the last axis of a and the second-to-last of b
    _check_contract(shape_of(a)[-1], shape_of(b)[-2], a, b)
    return P.dot_general(a, b, (((na - 1,), (nb - 2,)), ((), ())))


@npfunc(np.vdot)
def vdot(a, b):
    return dot(ravel(a), ravel(b))


@npfunc(np.inner)
def inner(a, b):
    a, b = promote(a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    _check_contract(shape_of(a)[-1], shape_of(b)[-1], a, b)
    return P.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())))


@npfunc(np.outer)
def outer(a, b):
    a, b = promote(ravel(a), ravel(b))
    return P.dot_general(a, b, (((), ()), ((), ())))


@npfunc(np.tensordot)
def tensordot(a, b, axes=2):
    a, b = promote(a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, (builtins.int, np.integer)):
        ax_a = tuple(range(na - axes, na))
        ax_b = tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = tuple(np.atleast_1d(ax_a))
        ax_b = tuple(np.atleast_1d(ax_b))
    ax_a = tuple(normalize_axis(x, na) for x in ax_a)
    ax_b = tuple(normalize_axis(x, nb) for x in ax_b)
    for i, j in zip(ax_a, ax_b):
        _check_contract(shape_of(a)[i], shape_of(b)[j], a, b)
    return P.dot_general(a, b, ((ax_a, ax_b), ((), ())))


@npfunc(np.kron)
def kron(a, b):
    a, b = promote(a, b)
    a, b = asarray(a), asarray(b)
    nd = builtins.max(ndim(a), ndim(b))
    a = reshape(a, (1,) * (nd - ndim(a)) + shape_of(a))
    b = reshape(b, (1,) * (nd - ndim(b)) + shape_of(b))
    o = multiply(reshape(a, tuple(x for s in shape_of(a) for x in (s, 1))),
                 reshape(b, tuple(x for s in shape_of(b) for x in (1, s))))
    return reshape(o, tuple(p * q for p, q in zip(shape_of(a), shape_of(b))))


@npfunc(np.cross)
def cross(a, b, axis=-1):
    a, b = promote(a, b)
    a = moveaxis(a, axis, -1)
    b = moveaxis(b, axis, -1)
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    return stack([subtract(multiply(a1, b2), multiply(a2, b1)),
                  subtract(multiply(a2, b0), multiply(a0, b2)),
                  subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)


from ._einsum import einsum  # noqa: E402

# ----------------------------------------------------------------------------
# sorting
# ----------------------------------------------------------------------------


@npfunc(np.sort)
def sort(a, axis=-1, kind=None, order=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return P.sort_p.bind(a, dimension=normalize_axis(axis, ndim(a)))


@npfunc(np.argsort)
def argsort(a, axis=-1, kind=None, order=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return P.argsort_p.bind(a, dimension=normalize_axis(axis, ndim(a)))


def _axes_to_last(a, axis):
    """Move the reduced ``axis`` (None, int or tuple) of ``a`` into one trailing axis;
    also return the keepdims shape (1 in each reduced position)."""
    shp = shape_of(a)
    axes = normalize_axes(axis, len(shp))
    rest = [i for i in range(len(shp)) if i not in axes]
    n = builtins.int(np.prod([shp[i] for i in axes], dtype=np.int64))   # not -1: size-0 arrays
    a = reshape(transpose(a, rest + list(axes)), tuple(shp[i] for i in rest) + (n,))
    return a, tuple(1 if i in axes else d for i, d in enumerate(shp))


@npfunc(np.median)
def median(a, axis=None, keepdims=False):
    a = asarray(a)
    a = P.convert(a, float_type(dtype_of(a)))
    a, kept = _axes_to_last(a, axis)
    s = sort(a, axis=-1)
    n = shape_of(a)[-1]
    if n == 0:                          # numpy: nan (with a warning) for an empty slice
        out = P.full(shape_of(a)[:-1], np.nan, dtype_of(a))
        return reshape(out, kept) if keepdims else out
    # numpy's median is a mean of the middle element(s), a sum that starts at +0.0: the
    # median of [-0.] is +0.0 (found by tests/test_fuzz.py); adding 0.0 turns -0. into +0.
    mid = add(getitem(s, (Ellipsis, (n - 1) // 2)), getitem(s, (Ellipsis, n // 2)))
    out = multiply(add(mid, 0.0), 0.5)
    # sort puts NaN last; numpy's median is NaN for a slice holding one (so is JAX's)
    last = getitem(s, (Ellipsis, n - 1))
    out = where(isnan(last), last, out)
    return reshape(out, kept) if keepdims else out


@npfunc(np.quantile)
def quantile(a, q, axis=None, keepdims=False):
    a = asarray(a)
    # numpy's result dtype: a Python float q is weak, an array (or list) of q's is float64
    a = P.convert(a, float_type(result_type(a, q if is_python_scalar(q) else np.asarray(q))))
    s, kept = _axes_to_last(a, axis)
    s = sort(s, axis=-1)
    n = shape_of(s)[-1]
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    outs = []
    for qq in qs:
        pos = qq * (n - 1)
        lo = builtins.int(np.floor(pos))
        hi = builtins.min(lo + 1, n - 1)
        frac = builtins.float(pos - lo)     # a Python float: weak, keeps float32 data float32
        v = add(multiply(getitem(s, (Ellipsis, lo)), 1 - frac), multiply(getitem(s, (Ellipsis, hi)), frac))
        if keepdims:
            v = reshape(v, kept)
        outs.append(v)
    return outs[0] if np.ndim(q) == 0 else stack(outs, 0)


@npfunc(np.percentile)
def percentile(a, q, axis=None, keepdims=False):
    q = q / 100.0 if is_python_scalar(q) else np.asarray(q) / 100.0
    return quantile(a, q, axis=axis, keepdims=keepdims)


# ----------------------------------------------------------------------------
# misc
# ----------------------------------------------------------------------------

@npfunc(np.allclose)
def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


@npfunc(np.isclose)
def isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    a, b = elementwise_args(a, b, to_float=True)
    close = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    close = logical_or(close, equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


@npfunc(np.array_equal)
def array_equal(a1, a2):
    if shape_of(a1) != shape_of(a2):
        return False
    return all(equal(a1, a2))


@npfunc(np.interp)
def interp(x, xp, fp, left=None, right=None):
    x, xp, fp = promote(x, xp, fp, to_float=True)
    n = shape_of(xp)[0]
    # index of the right end of the bracketing interval
    idx = sum(greater_equal(expand_dims(x, -1), xp), axis=-1)
    idx = clip(idx, 1, n - 1)
    x0, x1 = take(xp, subtract(idx, 1)), take(xp, idx)
    y0, y1 = take(fp, subtract(idx, 1)), take(fp, idx)
    t = divide(subtract(x, x0), subtract(x1, x0))
    out = add(y0, multiply(t, subtract(y1, y0)))
    out = where(less(x, getitem(xp, 0)), getitem(fp, 0) if left is None else left, out)
    return where(greater(x, getitem(xp, -1)), getitem(fp, -1) if right is None else right, out)


@npfunc(np.polyval)
def polyval(p, x):
    p = _seq(p) if not isinstance(p, Tracer) else [getitem(p, i) for i in range(shape_of(p)[0])]
    out = zeros_like(asarray(x, dtype=result_type(x, *p)) if not isinstance(x, Tracer) else x)
    for c in p:
        out = add(multiply(out, x), c)
    return out


@npfunc(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    m = asarray(m)
    m = P.convert(m, np.result_type(dtype_of(m), np.float64))   # numpy: at least float64
    if ndim(m) == 1:
        m = expand_dims(m, 0)
    if not rowvar:
        m = transpose(m)
    if y is not None:
        y = atleast_2d(asarray(y))
        m = concatenate([m, y if rowvar else transpose(y)], axis=0)
    n = shape_of(m)[1]
    dd = ddof if ddof is not None else (0 if bias else 1)
    xc = subtract(m, mean(m, axis=1, keepdims=True))
    c = divide(matmul(xc, transpose(xc)), n - dd)
    return squeeze(c) if shape_of(c) == (1, 1) else c


@npfunc(np.corrcoef)
def corrcoef(x, y=None, rowvar=True):
    c = cov(x, y, rowvar)
    if ndim(c) == 0:
        return divide(c, c)
    d = sqrt(diagonal(c))
    return divide(divide(c, expand_dims(d, 1)), expand_dims(d, 0))


@npfunc(np.meshgrid)
def meshgrid(*xi, indexing="xy", sparse=False, copy=True):
    xi = [ravel(asarray(x)) for x in xi]
    nd = len(xi)
    shapes = [shape_of(x)[0] for x in xi]
    if indexing == "xy" and nd >= 2:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    out = []
    for i, x in enumerate(xi):
        d = i
        if indexing == "xy" and nd >= 2 and i < 2:
            d = 1 - i
        out.append(P.broadcast_in_dim(x, tuple(shapes), (d,)))
    return out


@npfunc(np.ndim)
def ndim_(a):
    return _base_ndim(a)


def shape_(a):
    return shape_of(a)


@npfunc(np.real)
def real(x):
    return asarray(x)


@npfunc(np.conj)
def conj(x):
    return asarray(x)


conjugate = conj


@npfunc(np.copy)
def copy(a, order="K"):
    return asarray(a)


# ----------------------------------------------------------------------------
# more of numpy: padding, nan-reductions, searching, selection, integration,
# convolution, counting (each a composition of the functions above)
# ----------------------------------------------------------------------------

triu_indices, tril_indices, diag_indices = np.triu_indices, np.tril_indices, np.diag_indices


@npfunc(np.triu_indices_from)
def triu_indices_from(arr, k=0):
    n, m = shape_of(arr)[-2:]
    return np.triu_indices(n, k, m)


@npfunc(np.tril_indices_from)
def tril_indices_from(arr, k=0):
    n, m = shape_of(arr)[-2:]
    return np.tril_indices(n, k, m)


@npfunc(np.pad)
def pad(array, pad_width, mode="constant", constant_values=0):
    """``numpy.pad`` for modes 'constant', 'edge', 'reflect', 'symmetric' and 'wrap'
    (reflect/symmetric/wrap with pads no wider than the axis), differentiable.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda x: anp.sum(anp.pad(x, 1, mode="edge")))(np.ones(3))
    array([2., 1., 2.])
    """
    a = asarray(array)
    nd = ndim(a)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2)
                         if np.ndim(pad_width) == 2 else np.asarray(pad_width, dtype=np.int64), (nd, 2))
    if mode == "constant":
        cv = np.broadcast_to(np.asarray(constant_values), (nd, 2))
    elif mode not in ("edge", "reflect", "symmetric", "wrap"):
        from ..errors import UnsupportedError
        raise UnsupportedError(f"pad: mode {mode!r} is not supported on traced values (constant, edge, "
                               "reflect, symmetric and wrap are)", source=user_source())
    for ax in range(nd):
        before, after = builtins.int(pw[ax, 0]), builtins.int(pw[ax, 1])
        if before < 0 or after < 0:
            raise ValueError("index can't contain negative values")
        if before == 0 and after == 0:
            continue
        n = shape_of(a)[ax]
        if mode == "constant":
            parts = []
            for width, v in ((before, cv[ax, 0]), (after, cv[ax, 1])):
                sh = list(shape_of(a))
                sh[ax] = width
                parts.append(full_like(a, v.item(), shape=tuple(sh)))
            a = concatenate([parts[0], a, parts[1]], axis=ax)
            continue
        lim = n - 1 if mode == "reflect" else n
        if mode != "edge" and (before > lim or after > lim):
            raise ValueError(f"pad: mode {mode!r} supports pads of at most {lim} along axis {ax}")
        if mode == "edge":
            ib, ia = np.zeros(before, np.int64), np.full(after, n - 1, np.int64)
        elif mode == "reflect":
            ib, ia = np.arange(before, 0, -1), np.arange(n - 2, n - 2 - after, -1)
        elif mode == "symmetric":
            ib, ia = np.arange(before - 1, -1, -1), np.arange(n - 1, n - 1 - after, -1)
        else:   # wrap
            ib, ia = np.arange(n - before, n), np.arange(after)
        a = take(a, np.concatenate([ib, np.arange(n), ia]).astype(np.int64), axis=ax)
    return a


@npfunc(np.append)
def append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


def _nan_to(a, v):
    a = asarray(a)
    if dtype_of(a).kind != "f":
        return a
    return where(isnan(a), v, a)


@npfunc(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``sum`` with nans counted as zero (their gradient is zero)."""
    _no_out(out, "nansum")
    return sum(_nan_to(a, 0.0), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
               where=where)


@npfunc(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "nanmean")
    a = asarray(a)
    a = P.convert(a, _np_dtype(dtype) or float_type(dtype_of(a)))
    n = sum(logical_not(isnan(a)), axis=axis, keepdims=keepdims, where=where)
    return divide(nansum(a, axis=axis, keepdims=keepdims, where=where), astype(n, dtype_of(a)))


def _nanreduce(red, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(out, "nanmax/nanmin")
        a = asarray(a)
        kw = dict(axis=axis, keepdims=keepdims, initial=initial, where=where)
        if dtype_of(a).kind != "f":
            return red(a, **kw)
        out = red(_nan_to(a, fill), **kw)
        if initial is not None:      # numpy: an initial value stands in for all-nan slices
            return out
        return _where_fn(all(isnan(a), axis=axis, keepdims=keepdims, where=where), np.nan, out)
    return f


nanmax = npfunc(np.nanmax)(_nanreduce(lambda a, **k: max(a, **k), -np.inf))
nanmin = npfunc(np.nanmin)(_nanreduce(lambda a, **k: min(a, **k), np.inf))
nanmax.__name__, nanmin.__name__ = "nanmax", "nanmin"


@npfunc(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    """Insertion indices into sorted ``a`` (not differentiable; ``v`` may be traced).
    One comparison per element of ``a``: fine for the short tables scripts search."""
    a = asarray(a)
    if sorter is not None:
        a = take(a, sorter)
    v = asarray(v)
    a, v = promote(a, v)
    cmp = less if side == "left" else less_equal
    return sum(cmp(a, expand_dims(v, -1)), axis=-1, dtype=np.int64)


@npfunc(np.select)
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = default
    for c, x in reversed(list(zip(condlist, choicelist))):   # the first true condition wins
        out = where(c, x, out)
    return asarray(out)


@npfunc(np.logaddexp2)
def logaddexp2(x1, x2):
    ln2 = math.log(2.0)
    a, b = elementwise_args(x1, x2, to_float=True)
    return divide(logaddexp(multiply(a, ln2), multiply(b, ln2)), ln2)


@npfunc(np.fmax)
def fmax(x1, x2):
    a, b = elementwise_args(x1, x2)
    return where(isnan(b), a, where(isnan(a), b, maximum(a, b)))


@npfunc(np.fmin)
def fmin(x1, x2):
    a, b = elementwise_args(x1, x2)
    return where(isnan(b), a, where(isnan(a), b, minimum(a, b)))


@npfunc(np.atleast_3d)
def atleast_3d(*arys):
    def one(a):
        a = asarray(a)
        s = shape_of(a)
        if len(s) == 0:
            return reshape(a, (1, 1, 1))
        if len(s) == 1:
            return reshape(a, (1, s[0], 1))
        if len(s) == 2:
            return reshape(a, s + (1,))
        return a
    out = [one(a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


@npfunc(np.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Trapezoidal rule ``Σ (x[i+1]-x[i])·(y[i+1]+y[i])/2`` along ``axis``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.trapezoid(np.array([0.0, 1.0, 4.0]), np.array([0.0, 1.0, 2.0])))
    3.0
    """
    y = asarray(y)
    ax = normalize_axis(axis, ndim(y))
    m = shape_of(y)[ax]
    avg = multiply(add(P.slice_in_dim(y, 1, m, ax), P.slice_in_dim(y, 0, builtins.max(m - 1, 0), ax)), 0.5)
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if ndim(x) == 1:
            d = diff(x)
            sh = [1] * ndim(y)
            sh[ax] = shape_of(d)[0]
            d = reshape(d, tuple(sh))
        else:
            d = diff(x, axis=ax)
    return sum(multiply(d, avg), axis=ax)


trapz = trapezoid


@npfunc(np.convolve)
def convolve(a, v, mode="full"):
    """1-d discrete convolution as ``len(kernel)`` shifted, scaled copies (the shorter
    argument is the kernel): cheap for the small kernels of smoothing and filtering.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    a, v = promote(asarray(a), asarray(v))
    if ndim(a) != 1 or ndim(v) != 1:
        raise ShapeError("convolve: both inputs must be 1-d", source=user_source())
    if shape_of(v)[0] > shape_of(a)[0]:
        a, v = v, a
    n, m = shape_of(a)[0], shape_of(v)[0]
    if m == 0:
        raise ValueError("v cannot be empty")
    ap = concatenate([zeros_like(a, shape=(m - 1,)), a, zeros_like(a, shape=(m - 1,))])
    L = n + m - 1
    out = None
    for j in range(m):                                    # full[k] = Σ_j v[j]·a[k-j]
        term = multiply(getitem(v, j), P.slice_in_dim(ap, m - 1 - j, m - 1 - j + L, 0))
        out = term if out is None else add(out, term)
    if mode == "full":
        return out
    if mode == "same":
        start = (m - 1) // 2
        return P.slice_in_dim(out, start, start + n, 0)
    if mode == "valid":
        return P.slice_in_dim(out, m - 1, n, 0)
    raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")


@npfunc(np.bincount)
def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed ``weights``) per non-negative integer of ``x``. The result's
    length must be known while tracing: pass ``length=`` (or ``minlength`` ≥ max(x)+1)
    when ``x`` is traced without a concrete value. Weights are differentiable.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda w: anp.bincount(np.array([0, 2, 2]), w)[2])(np.ones(3))
    array([0., 1., 1.])
    """
    x = asarray(x)
    if ndim(x) != 1:
        raise ShapeError("bincount: x must be 1-d", source=user_source())
    if length is None:
        if isinstance(x, Tracer) and not is_concrete(x):
            if minlength:
                length = builtins.int(minlength)
            else:
                from ..errors import ConcretizationError
                raise ConcretizationError(
                    "bincount: the result's length depends on the values of a traced x; pass "
                    "length=... (or minlength=...)", source=user_source())
        else:
            xv = np.asarray(x.concrete_value("bincount") if isinstance(x, Tracer) else x)
            length = builtins.max(builtins.int(xv.max()) + 1 if xv.size else 0, builtins.int(minlength))
    hits = equal(expand_dims(x, -1), np.arange(length, dtype=dtype_of(x)))      # (n, length)
    if weights is None:
        return sum(hits, axis=0, dtype=np.int64)
    w = astype(asarray(weights), np.float64)             # numpy sums weights in double
    return sum(where(hits, expand_dims(w, -1), 0.0), axis=0)


cumulative_prod = _cum(lambda a, ax: P.cumprod(a, ax), np.cumulative_prod) \
    if hasattr(np, "cumulative_prod") else cumprod

from . import linalg  # noqa: E402,F401
from . import random  # noqa: E402,F401
# breadth (issue 14): shapes, math, sets/histograms/quantiles; some replace simpler versions above
from ._shape_more import (rot90, rollaxis, dsplit, hsplit, vsplit, tril, triu, cross, r_, c_, block,  # noqa: E402,F401
                          tri, vander, ix_, unravel_index, ravel_multi_index, apply_along_axis,
                          vectorize, piecewise, meshgrid, diagflat, fill_diagonal, resize, trim_zeros,
                          array_equiv, vecdot, matvec, vecmat, unstack, matrix_transpose, place)
from ._shape_more import _put_along_axis_entry as put_along_axis  # noqa: E402,F401
from ._math_more import (linspace, logspace, geomspace, gradient, ediff1d, unwrap, correlate,  # noqa: E402,F401
                         real, imag, angle, real_if_close, iscomplex, isreal, iscomplexobj, isrealobj,
                         isposinf, isneginf, frexp, ldexp, modf, spacing, nextafter, i0, divmod,
                         left_shift, right_shift, bitwise_left_shift, bitwise_right_shift, bitwise_count,
                         gcd, lcm, packbits, unpackbits, polyadd, polysub, polymul, polyder, polyint,
                         polydiv, poly, polyfit, roots, einsum_path, interp)
from ._sets_stats import (unique, unique_values, unique_counts, unique_inverse, unique_all, isin,  # noqa: E402,F401
                          union1d, intersect1d, setdiff1d, setxor1d, digitize, lexsort, partition,
                          argpartition, sort_complex, choose, compress, extract, delete, insert, put,
                          apply_over_axes, histogram_bin_edges, histogram, histogramdd, histogram2d,
                          quantile, percentile, nanquantile, nanpercentile, nanmedian, nanargmax,
                          nanargmin, nanprod, nancumsum, nancumprod, nanvar, nanstd, cov, corrcoef)
from ._more_names import *  # noqa: E402,F401,F403
from ._jax_names import *  # noqa: E402,F401,F403  (autograd/JAX spellings: errstate, precision=)
# creation functions: numpy's outside transforms; inside, traced fill values and .at[] (issue 13)
from ._creation import (zeros, ones, empty, full, eye, identity, arange, zeros_like,  # noqa: E402,F401
                        ones_like, empty_like, full_like, array, linspace, logspace, geomspace)
bitwise_invert = invert  # noqa: E402
from ._docs import fill as _fill_docs  # noqa: E402
_fill_docs(globals())
_fill_docs(linalg, "numpy.linalg")

ndim = ndim_

# The public surface: numpy's names, the documented extras (``at``, ``logsumexp``,
# ``softmax``, ``log_softmax``, ``stop_gradient``, ``Array``, numpy 1's aliases) and the
# ``linalg``/``random`` namespaces. The rest of this module's globals are its own tools
# (the primitives, numpy, the dispatch helpers), importable but not part of the API.
_INTERNAL = frozenset({
    "P", "np", "math", "builtins", "Tracer", "npfunc", "promote", "asarray_", "dtype_of",
    "elementwise_args", "float_type", "getitem", "is_concrete", "is_python_scalar",
    "meshgrid_np", "ndim_", "normalize_axes", "normalize_axis", "result_type_np", "shape_",
    "shape_of", "to_output", "user_source", "DTypeError", "ShapeError", "UnsupportedError"})
__all__ = sorted(n for n, v in list(globals().items())
                 if not n.startswith("_") and n not in _INTERNAL
                 and (not isinstance(v, type(math)) or n in ("linalg", "random")))


def __dir__():
    return __all__ + ["bool"]


def __getattr__(name):
    # ``anp.bool`` is numpy's ``bool`` (as ``jax.numpy.bool``), served here rather than as a
    # module global so that the builtin ``bool`` stays the one this module's code sees
    if name == "bool":
        return np.bool_
    raise AttributeError(f"module 'autodiff.numpy' has no attribute '{name}'")
