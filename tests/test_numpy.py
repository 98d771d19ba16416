"""``autodiff.numpy`` against numpy itself.

Every public function is run three ways on the same inputs and compared with
numpy's result (values, shape and dtype):

* eagerly, on numpy arrays (must return what numpy returns: ndarray or numpy scalar);
* traced abstractly with ``make_jaxpr`` and run by the reference interpreter;
* traced concretely (inside ``jvp``), where values are computed on demand.

Shapes include rank 0, broadcasting and Python scalars; dtypes float32 and
float64 (numpy's promotion rules, Python scalars weak). The case list
``CASES`` is shared with ``test_grad.py``, which differentiates the same calls.
"""
import types

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends.interpreter import run_closed
from autodiff.core import typecheck_jaxpr
from autodiff.tree_util import tree_flatten
from jit_util import assert_compiled

# ----------------------------------------------------------------------------
# the case table
# ----------------------------------------------------------------------------

FLOATS = [np.float32, np.float64]


class A:
    """Argument maker: a random array of ``shape`` (dtype from the test, or fixed)."""

    def __init__(self, *shape, lo=-2.0, hi=2.0, kind="f", dtype=None, spd=False, values=None):
        self.shape, self.lo, self.hi, self.kind = shape, lo, hi, kind
        self.dtype, self.spd, self.values = dtype, spd, values

    def make(self, rng, dt):
        if self.values is not None:
            return np.asarray(self.values, dtype=self.dtype or dt)
        if self.kind == "i":
            ints = rng.integers(int(self.lo), int(self.hi), size=self.shape)
            return ints.astype(self.dtype or np.int64)
        if self.kind == "b":
            return rng.random(self.shape) > 0.5
        x = rng.uniform(self.lo, self.hi, size=self.shape)
        if self.spd:
            # well-conditioned symmetric positive definite (stacks of) matrices
            n = self.shape[-1]
            x = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
        return np.asarray(x, dtype=self.dtype or dt)

    @property
    def is_float(self):
        return self.kind == "f" and (self.dtype is None or np.dtype(self.dtype).kind == "f")


class S:
    """A Python scalar argument (weakly typed)."""

    def __init__(self, v):
        self.v = v

    def make(self, rng, dt):
        return self.v

    is_float = False


class Case:
    def __init__(self, func, f, args, ref=None, diff=True, tag="", rtol=None, concrete_only=False,
                 grad_args=None, grad_f=None, hess=True):
        self.func = func                # the anp name(s) this case covers
        self.f = f                      # f(module, *arrays): module is anp or numpy
        self.args = args
        self.ref = ref                  # numpy reference when numpy lacks the function
        self.diff = diff                # differentiable (test_grad runs check_grads on it)
        self.rtol = rtol
        self.concrete_only = concrete_only
        self.grad_args = grad_args      # other argument makers for the gradient check
        self.grad_f = grad_f
        self.hess = hess                # second order checked too
        shapes = "_".join("x".join(map(str, a.shape)) or "s" if isinstance(a, A) else "py"
                          for a in args)
        self.id = f"{func}{'-' + tag if tag else ''}[{shapes}]"

    def make_args(self, rng, dt, grad=False):
        args = self.grad_args if (grad and self.grad_args is not None) else self.args
        return [a.make(rng, dt) for a in args]

    def reference(self, *xs):
        if self.ref is not None:
            return self.ref(*xs)
        return self.f(np, *xs)


CASES = []


def case(*a, **k):
    c = Case(*a, **k)
    CASES.append(c)
    return c


def _fn(name):
    return lambda m, *xs: getattr(m, name)(*xs)


UNARY_SHAPES = [(), (3,), (2, 3)]

# elementwise unary, float-valued: (name, lo, hi)
for _name, _lo, _hi in [
        ("sin", -2, 2), ("cos", -2, 2), ("tan", -1.2, 1.2), ("arcsin", -0.9, 0.9),
        ("arccos", -0.9, 0.9), ("arctan", -2, 2), ("sinh", -2, 2), ("cosh", -2, 2),
        ("tanh", -2, 2), ("arcsinh", -2, 2), ("arccosh", 1.2, 3), ("arctanh", -0.9, 0.9),
        ("asin", -0.9, 0.9), ("acos", -0.9, 0.9), ("atan", -2, 2), ("asinh", -2, 2),
        ("acosh", 1.2, 3), ("atanh", -0.9, 0.9),
        ("exp", -2, 2), ("exp2", -2, 2), ("expm1", -2, 2), ("log", 0.2, 3), ("log1p", -0.5, 3),
        ("log2", 0.2, 3), ("log10", 0.2, 3), ("sqrt", 0.2, 3), ("cbrt", 0.2, 3),
        ("square", -2, 2), ("reciprocal", 0.3, 3), ("negative", -2, 2), ("positive", -2, 2),
        ("absolute", 0.2, 2), ("abs", -2, -0.2), ("fabs", 0.2, 2), ("deg2rad", -2, 2),
        ("radians", -2, 2), ("rad2deg", -2, 2), ("degrees", -2, 2), ("sinc", 0.1, 2),
        ("real", -2, 2), ("conj", -2, 2), ("conjugate", -2, 2), ("copy", -2, 2)]:
    for _s in UNARY_SHAPES:
        case(_name, _fn(_name), [A(*_s, lo=_lo, hi=_hi)])

# piecewise constant or non-float valued
for _name in ["sign", "floor", "ceil", "rint", "trunc", "fix", "isnan", "isinf", "isfinite",
              "signbit", "logical_not"]:
    for _s in [(), (2, 3)]:
        case(_name, _fn(_name), [A(*_s, lo=-3, hi=3)], diff=False)
case("round", lambda m, x: m.round(x), [A(2, 3, lo=-3, hi=3)], diff=False)
case("round", lambda m, x: m.round(x, 2), [A(4, lo=-3, hi=3)], diff=False, tag="decimals")
case("around", lambda m, x: m.around(x), [A(4, lo=-3, hi=3)], diff=False)
case("nan_to_num", _fn("nan_to_num"), [A(values=[1.0, np.nan, np.inf, -np.inf, -2.0])], diff=False)
case("isnan", _fn("isnan"), [A(values=[1.0, np.nan, np.inf])], diff=False, tag="special")
case("isinf", _fn("isinf"), [A(values=[1.0, np.nan, -np.inf])], diff=False, tag="special")
case("signbit", _fn("signbit"), [A(values=[1.0, -0.0, 0.0, -2.0])], diff=False, tag="zeros")
# integer inputs: numpy's result dtypes
case("sin", _fn("sin"), [A(3, kind="i", lo=-3, hi=3)], diff=False, tag="int")
case("sqrt", _fn("sqrt"), [A(3, kind="i", lo=0, hi=5)], diff=False, tag="int")
case("abs", _fn("abs"), [A(3, kind="i", lo=-3, hi=3)], diff=False, tag="int")
case("negative", _fn("negative"), [A(3, kind="i", lo=-3, hi=3)], diff=False, tag="int")
case("invert", _fn("invert"), [A(3, kind="i", lo=-3, hi=3)], diff=False)
case("bitwise_invert", _fn("bitwise_invert"), [A(3, kind="i", lo=-3, hi=3)], diff=False)
case("bitwise_not", _fn("bitwise_not"), [A(3, kind="b")], diff=False)
case("floor", _fn("floor"), [A(3, kind="i", lo=-3, hi=3)], diff=False, tag="int")

BINARY_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3))]

for _name, _lo, _hi, _diff in [
        ("add", -2, 2, True), ("subtract", -2, 2, True), ("multiply", -2, 2, True),
        ("divide", 0.5, 2, True), ("true_divide", 0.5, 2, True), ("maximum", -2, 2, True),
        ("minimum", -2, 2, True), ("arctan2", 0.3, 2, True), ("atan2", 0.3, 2, True),
        ("power", 0.5, 2, True), ("pow", 0.5, 2, True), ("float_power", 0.5, 2, True),
        ("hypot", 0.3, 2, True), ("logaddexp", -2, 2, True), ("copysign", 0.3, 2, True),
        ("mod", 0.5, 3, True), ("remainder", 0.5, 3, True), ("fmod", 0.5, 3, True),
        ("floor_divide", 0.5, 3, False), ("heaviside", -2, 2, False),
        ("equal", -2, 2, False), ("not_equal", -2, 2, False), ("less", -2, 2, False),
        ("less_equal", -2, 2, False), ("greater", -2, 2, False), ("greater_equal", -2, 2, False),
        ("logical_and", -2, 2, False), ("logical_or", -2, 2, False),
        ("logical_xor", -2, 2, False)]:
    for _s1, _s2 in BINARY_SHAPES:
        case(_name, _fn(_name), [A(*_s1, lo=_lo, hi=_hi), A(*_s2, lo=_lo, hi=_hi)], diff=_diff)
    case(_name, _fn(_name), [A(2, 3, lo=_lo, hi=_hi), S(1.5)], diff=_diff, tag="pyscalar")
    case(_name, _fn(_name), [S(1.5), A(3, lo=_lo, hi=_hi)], diff=_diff, tag="rpyscalar")

for _name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    case(_name, _fn(_name), [A(2, 3, kind="i", lo=0, hi=8), A(3, kind="i", lo=0, hi=8)], diff=False)
    case(_name, _fn(_name), [A(2, 3, kind="b"), A(3, kind="b")], diff=False, tag="bool")
for _name in ["add", "multiply", "subtract", "maximum", "mod", "floor_divide"]:
    case(_name, _fn(_name), [A(2, 3, kind="i", lo=1, hi=9), A(3, kind="i", lo=1, hi=9)],
         diff=False, tag="int")
case("divide", _fn("divide"), [A(3, kind="i", lo=1, hi=9), A(3, kind="i", lo=1, hi=9)],
     diff=False, tag="int")
case("add", _fn("add"), [A(3, kind="i", lo=1, hi=9), A(3)], diff=False, tag="int+float")
case("multiply", _fn("multiply"), [A(3, kind="i", lo=1, hi=9), S(2.5)], diff=False,
     tag="int*pyfloat")
# integer powers take the exact integer_pow path
for _p in [0, 1, 2, 3, -2]:
    case("power", lambda m, x, p=_p: m.power(x, p), [A(2, 3, lo=0.5, hi=2)], tag=f"int{_p}")
case("power", lambda m, x: m.power(x, 3), [A(3, kind="i", lo=-3, hi=3)], diff=False,
     tag="intbase")
case("power", lambda m, x: x ** 2.5, [A(3, lo=0.5, hi=2)], tag="operator")

for _s in [(3,), (2, 3)]:
    case("where", lambda m, c, x, y: m.where(c > 0, x, y), [A(*_s), A(*_s), A(3)])
case("where", lambda m, c, x: m.where(c > 0, x, 0.0), [A(2, 3), A(2, 3)], tag="scalar")
case("clip", lambda m, x: m.clip(x, -0.5, 0.7), [A(2, 3)])
case("clip", lambda m, x: m.clip(x, a_min=-0.5, a_max=0.7), [A(2, 3)], tag="names")
case("clip", lambda m, x, lo: m.clip(x, lo, 1.0), [A(2, 3), A(3, lo=-2, hi=-1)], tag="arraybound")

# reductions, with axis / keepdims
RED_AXES = [dict(), dict(axis=0), dict(axis=1, keepdims=True), dict(axis=(0, 2)),
            dict(axis=-1)]
for _name in ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "ptp"]:
    for _kw in RED_AXES:
        case(_name, lambda m, x, n=_name, kw=_kw: getattr(m, n)(x, **kw),
             [A(2, 3, 2, lo=0.5, hi=2)], tag="-".join(f"{k}{v}" for k, v in _kw.items()))
    case(_name, _fn(_name), [A(lo=0.5, hi=2)], tag="0d")
for _name, _np in [("all", np.all), ("any", np.any), ("count_nonzero", np.count_nonzero),
                  ("alltrue", np.all), ("sometrue", np.any)]:
    for _kw in [dict(), dict(axis=1)]:
        case(_name, lambda m, x, n=_name, kw=_kw: getattr(anp, n)(x > 0, **kw),
             [A(2, 3)], ref=lambda x, f=_np, kw=_kw: f(x > 0, **kw), diff=False, tag=str(_kw))
for _name in ["argmax", "argmin"]:
    for _kw in [dict(), dict(axis=1), dict(axis=0, keepdims=True)]:
        case(_name, lambda m, x, n=_name, kw=_kw: getattr(m, n)(x, **kw), [A(2, 3)],
             diff=False, tag=str(_kw))
case("product", lambda m, x: anp.product(x, axis=0), [A(2, 3)], ref=lambda x: np.prod(x, axis=0))
case("sum", lambda m, x: m.sum(x, dtype=np.float64), [A(2, 3)], tag="dtype")
case("sum", lambda m, x: m.sum(x), [A(2, 3, kind="i", lo=-5, hi=5)], diff=False, tag="int")
case("sum", lambda m, x: m.sum(x), [A(2, 3, kind="i", lo=-5, hi=5, dtype=np.int32)],
     diff=False, tag="int32")
case("mean", lambda m, x: m.mean(x, axis=0), [A(2, 3, kind="i", lo=-5, hi=5)], diff=False,
     tag="int")
case("var", lambda m, x: m.var(x, ddof=1, axis=1), [A(2, 3)], tag="ddof")
case("std", lambda m, x: m.std(x, ddof=1), [A(4)], tag="ddof")
case("average", lambda m, x: m.average(x, axis=1), [A(2, 3)])
case("average", lambda m, x, w: m.average(x, axis=1, weights=w), [A(2, 3), A(3, lo=0.5, hi=1)],
     tag="weights")
case("median", lambda m, x: m.median(x), [A(5)])
case("median", lambda m, x: m.median(x, axis=1), [A(2, 4)], tag="axis")
case("quantile", lambda m, x: m.quantile(x, 0.3), [A(5)])
case("quantile", lambda m, x: m.quantile(x, [0.25, 0.8], axis=1), [A(2, 5)], tag="axis")
case("percentile", lambda m, x: m.percentile(x, 40.0), [A(6)])
for _name in ["cumsum", "cumprod", "cumulative_sum"]:
    case(_name, lambda m, x, n=_name: getattr(m, n)(x, axis=1), [A(2, 3, lo=0.5, hi=2)])
case("cumsum", lambda m, x: m.cumsum(x), [A(2, 3)], tag="flat")
case("cumprod", lambda m, x: m.cumprod(x, axis=0), [A(3, 2, lo=0.5, hi=2)], tag="axis0")
# zeros in the data: the derivatives of products stay exact (no division by x)
case("prod", lambda m, x: m.prod(x, axis=1),
     [A(values=[[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0], [0.0, 0.0, 0.0, 1.0]])],
     tag="zeros")
case("cumprod", lambda m, x: m.cumprod(x, axis=1),
     [A(values=[[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0]])], tag="zeros")
case("diff", lambda m, x: m.diff(x), [A(2, 4)])
case("diff", lambda m, x: m.diff(x, n=2, axis=0), [A(4, 2)], tag="n2")
case("diff", lambda m, x: m.diff(x, prepend=0.0, append=1.0), [A(4)], tag="pend")
case("logsumexp", lambda m, x: anp.logsumexp(x), [A(2, 3)], ref=scipy.special.logsumexp)
case("logsumexp", lambda m, x: anp.logsumexp(x, axis=1, keepdims=True), [A(2, 3)],
     ref=lambda x: scipy.special.logsumexp(x, axis=1, keepdims=True), tag="axis")
case("logsumexp", lambda m, x: anp.logsumexp(x, axis=0),
     [A(values=[[1000.0, -1000.0], [1000.0, -1001.0]])],
     ref=lambda x: scipy.special.logsumexp(x, axis=0), tag="large", hess=False)
case("logsumexp", lambda m, x, b: anp.logsumexp(x, b=b), [A(3), A(3, lo=0.5, hi=1)],
     ref=lambda x, b: scipy.special.logsumexp(x, b=b), tag="b")
case("softmax", lambda m, x: anp.softmax(x), [A(2, 3)],
     ref=lambda x: scipy.special.softmax(x, axis=-1))
case("softmax", lambda m, x: anp.softmax(x, axis=0), [A(2, 3)],
     ref=lambda x: scipy.special.softmax(x, axis=0), tag="axis0")
case("log_softmax", lambda m, x: anp.log_softmax(x), [A(2, 3)],
     ref=lambda x: scipy.special.log_softmax(x, axis=-1))
case("sort", lambda m, x: m.sort(x), [A(2, 4)])
case("sort", lambda m, x: m.sort(x, axis=0), [A(3, 2)], tag="axis0")
case("sort", lambda m, x: m.sort(x, axis=None), [A(3, 2)], tag="flat")
case("argsort", lambda m, x: m.argsort(x), [A(2, 4)], diff=False)

# shapes
case("reshape", lambda m, x: m.reshape(x, (3, 2)), [A(2, 3)])
case("reshape", lambda m, x: m.reshape(x, (-1,)), [A(2, 3)], tag="minus1")
case("reshape", lambda m, x: x.reshape(3, -1), [A(2, 3)], tag="method")
case("ravel", _fn("ravel"), [A(2, 3)])
case("transpose", _fn("transpose"), [A(2, 3, 4)])
case("transpose", lambda m, x: m.transpose(x, (1, 0, 2)), [A(2, 3, 4)], tag="axes")
case("transpose", lambda m, x: x.T, [A(2, 3)], tag="T")
case("permute_dims", lambda m, x: m.permute_dims(x, (2, 0, 1)), [A(2, 3, 4)])
case("moveaxis", lambda m, x: m.moveaxis(x, 0, -1), [A(2, 3, 4)])
case("moveaxis", lambda m, x: m.moveaxis(x, (0, 1), (2, 0)), [A(2, 3, 4)], tag="multi")
case("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), [A(2, 3, 4)])
case("expand_dims", lambda m, x: m.expand_dims(x, 1), [A(2, 3)])
case("expand_dims", lambda m, x: m.expand_dims(x, (0, -1)), [A(2, 3)], tag="multi")
case("squeeze", lambda m, x: m.squeeze(x), [A(2, 1, 3, 1)])
case("squeeze", lambda m, x: m.squeeze(x, axis=1), [A(2, 1, 3)], tag="axis")
case("broadcast_to", lambda m, x: m.broadcast_to(x, (4, 2, 3)), [A(2, 1)])
case("broadcast_arrays", lambda m, x, y: m.broadcast_arrays(x, y), [A(2, 1), A(3)])
case("atleast_1d", _fn("atleast_1d"), [A()])
case("atleast_2d", _fn("atleast_2d"), [A(3)])
for _name in ["concatenate", "concat"]:
    case(_name, lambda m, x, y, n=_name: getattr(m, n)([x, y], axis=1), [A(2, 3), A(2, 2)])
case("concatenate", lambda m, x, y: m.concatenate((x, y), axis=None), [A(2, 3), A(2)],
     tag="none")
case("stack", lambda m, x, y: m.stack([x, y]), [A(2, 3), A(2, 3)])
case("stack", lambda m, x, y: m.stack([x, y], axis=-1), [A(2, 3), A(2, 3)], tag="last")
case("hstack", lambda m, x, y: m.hstack([x, y]), [A(2, 3), A(2, 1)])
case("hstack", lambda m, x, y: m.hstack([x, y]), [A(3), A(2)], tag="1d")
case("vstack", lambda m, x, y: m.vstack([x, y]), [A(3), A(2, 3)])
case("row_stack", lambda m, x, y: np.vstack([x, y]) if m is np else m.row_stack([x, y]),
     [A(3), A(2, 3)])
case("column_stack", lambda m, x, y: m.column_stack([x, y]), [A(3), A(3, 2)])
case("dstack", lambda m, x, y: m.dstack([x, y]), [A(2, 3), A(2, 3)])
case("split", lambda m, x: m.split(x, 3, axis=1), [A(2, 6)])
case("split", lambda m, x: m.split(x, [1, 3]), [A(5, 2)], tag="indices")
case("array_split", lambda m, x: m.array_split(x, 3), [A(7)])
case("hsplit", lambda m, x: m.hsplit(x, 2), [A(2, 4)])
case("vsplit", lambda m, x: m.vsplit(x, 2), [A(4, 2)])
case("flip", lambda m, x: m.flip(x), [A(2, 3)])
case("flip", lambda m, x: m.flip(x, 1), [A(2, 3)], tag="axis")
case("fliplr", _fn("fliplr"), [A(2, 3)])
case("flipud", _fn("flipud"), [A(2, 3)])
case("roll", lambda m, x: m.roll(x, 2), [A(2, 3)])
case("roll", lambda m, x: m.roll(x, -1, axis=1), [A(2, 3)], tag="axis")
case("tile", lambda m, x: m.tile(x, (2, 1, 3)), [A(2, 3)])
case("repeat", lambda m, x: m.repeat(x, 2, axis=1), [A(2, 3)])
case("repeat", lambda m, x: m.repeat(x, [1, 0, 2], axis=1), [A(2, 3)], tag="counts")
case("repeat", lambda m, x: m.repeat(x, 2), [A(2, 3)], tag="flat")

# indexing
_IDX = [
    ("int", lambda x: x[1]), ("neg", lambda x: x[-1, 1:]), ("slice", lambda x: x[:, 1:3]),
    ("step", lambda x: x[::2, ::-1]), ("none", lambda x: x[None, :, None, 0]),
    ("ellipsis", lambda x: x[..., 1]), ("list", lambda x: x[[0, 0, 2]]),
    ("list2", lambda x: x[[0, 1], [2, 0]]), ("array", lambda x: x[np.array([[0, 1], [2, 2]])]),
    ("mixed", lambda x: x[1:, [0, 3]]), ("nonadjacent", lambda x: x[[0, 2], :, ][:, [1, 1]]),
    ("sep", lambda x: x[np.array([0, 1]), 1:3, ][..., 0]),
    ("bool", lambda x: x[np.array([True, False, True])]),
]
for _tag, _ix in _IDX:
    case("getitem", lambda m, x, ix=_ix: ix(x), [A(3, 4)], tag=_tag)
case("getitem", lambda m, x: x[[1, 0], :, [0, 1]], [A(2, 3, 2)], tag="advsplit")
case("getitem", lambda m, x: x[:, [1, 0], [0, 1]], [A(2, 3, 2)], tag="advadj")
case("getitem", lambda m, x, i: x[i], [A(4), A(2, 2, kind="i", lo=-4, hi=4)], tag="intarray")
case("take", lambda m, x: m.take(x, np.array([2, 0, 2])), [A(4)])
case("take", lambda m, x: m.take(x, np.array([2, 0]), axis=1), [A(2, 3)], tag="axis")
case("take_along_axis", lambda m, x: m.take_along_axis(x, np.array([[0, 2], [1, 1]]), axis=1),
     [A(2, 3)])
case("diagonal", _fn("diagonal"), [A(3, 3)])
case("diagonal", lambda m, x: m.diagonal(x, 1, 1, 2), [A(2, 3, 4)], tag="offset")
case("trace", _fn("trace"), [A(3, 3)])
case("trace", lambda m, x: m.trace(x, -1), [A(3, 4)], tag="offset")
case("diag", _fn("diag"), [A(3)])
case("diag", lambda m, x: m.diag(x, 1), [A(3)], tag="k")
case("diag", _fn("diag"), [A(3, 3)], tag="extract")
case("diagflat", _fn("diagflat"), [A(2, 2)])
case("tril", _fn("tril"), [A(3, 4)])
case("tri", lambda m: m.tri(3, 4, 1), [], diff=False)
case("triu", lambda m, x: m.triu(x, 1), [A(2, 3, 3)])

# products
case("matmul", _fn("matmul"), [A(2, 3), A(3, 4)])
case("matmul", _fn("matmul"), [A(2, 3), A(3)], tag="mv")
case("matmul", _fn("matmul"), [A(3), A(3, 4)], tag="vm")
case("matmul", _fn("matmul"), [A(3), A(3)], tag="vv")
case("matmul", _fn("matmul"), [A(2, 2, 3), A(3, 4)], tag="batched")
case("matmul", _fn("matmul"), [A(2, 1, 2, 3), A(3, 3, 2)], tag="bcast")
case("matmul", _fn("matmul"), [A(2, 2, 3), A(3)], tag="batched-mv")
case("matmul", lambda m, x, y: x @ y, [A(2, 3), A(3, 2)], tag="operator")
case("dot", _fn("dot"), [A(2, 3), A(3)])
case("dot", _fn("dot"), [A(2, 3), A(4, 3, 2)], tag="nd")
case("dot", _fn("dot"), [A(), A(3)], tag="scalar")
case("vdot", _fn("vdot"), [A(2, 3), A(2, 3)])
case("inner", _fn("inner"), [A(2, 3), A(4, 3)])
case("outer", _fn("outer"), [A(3), A(2, 2)])
case("tensordot", _fn("tensordot"), [A(2, 3, 4), A(3, 4, 2)])
case("tensordot", lambda m, x, y: m.tensordot(x, y, axes=([0], [1])), [A(3, 2), A(2, 3)],
     tag="axes")
case("kron", _fn("kron"), [A(2, 2), A(2, 3)])
case("cross", _fn("cross"), [A(2, 3), A(3)])
case("einsum", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [A(2, 3), A(3, 4)])
case("einsum", lambda m, x: m.einsum("ii->i", x), [A(3, 3)], tag="diag")
case("einsum", lambda m, x: m.einsum("ij->", x), [A(2, 3)], tag="sum")
case("einsum", lambda m, x, y: m.einsum("bij,bjk->bik", x, y), [A(2, 2, 3), A(2, 3, 2)],
     tag="batch")
case("einsum", lambda m, x, y: m.einsum("...i,...i", x, y), [A(2, 3), A(3)], tag="ellipsis")
case("einsum", lambda m, x, y, z: m.einsum("i,ij,j", x, y, z), [A(2), A(2, 3), A(3)],
     tag="three")

# misc
case("isclose", lambda m, x, y: m.isclose(x, y, atol=0.5), [A(2, 3), A(3)], diff=False)
case("allclose", lambda m, x, y: m.allclose(x, y, atol=5.0), [A(2, 3), A(3)], diff=False)
case("array_equal", lambda m, x: m.array_equal(x, x), [A(2, 3)], diff=False)
case("interp", lambda m, x: m.interp(x, np.array([-2.0, 0.0, 1.0, 3.0]),
                                     np.array([1.0, 2.0, 0.0, 1.0])), [A(5, lo=-3, hi=4)])
case("interp", lambda m, x, fp: m.interp(np.array([-0.5, 0.5, 2.0]),
                                         np.array([-1.0, 0.0, 1.0]), fp), [A(5), A(3)],
     tag="fp", grad_args=None)
case("polyval", lambda m, p, x: m.polyval(p, x), [A(3), A(4)])
case("cov", _fn("cov"), [A(2, 5)])
case("cov", lambda m, x: m.cov(x, rowvar=False, ddof=0), [A(5, 2)], tag="rowvar")
case("corrcoef", _fn("corrcoef"), [A(3, 5)])
case("meshgrid", lambda m, x, y: m.meshgrid(x, y), [A(3), A(2)])
case("meshgrid", lambda m, x, y: m.meshgrid(x, y, indexing="ij"), [A(3), A(2)], tag="ij")
case("zeros_like", _fn("zeros_like"), [A(2, 3)], diff=False)
case("ones_like", _fn("ones_like"), [A(2, 3)], diff=False)
case("empty_like", lambda m, x: m.zeros_like(x) if m is np else m.empty_like(x), [A(2, 3)],
     diff=False)
case("full_like", lambda m, x: m.full_like(x, 2.5), [A(2, 3)], diff=False)
case("astype", lambda m, x: x.astype(np.float32) if m is np else m.astype(x, np.float32),
     [A(2, 3)])
case("astype", lambda m, x: x.astype(np.int64) if m is np else m.astype(x, np.int64),
     [A(2, 3)], diff=False, tag="int")
case("float32", lambda m, x: m.float32(x) if m is anp else x.astype(np.float32), [A(3)])
case("float64", lambda m, x: m.float64(x) if m is anp else x.astype(np.float64), [A(3)])
case("int64", lambda m, x: m.int64(x) if m is anp else x.astype(np.int64), [A(3)], diff=False)
case("array", lambda m, x, y: m.array([x, y]), [A(3), A(3)])
case("asarray", lambda m, x: m.asarray(x), [A(3)])
case("asarray_", lambda m, x: anp.asarray_(x) if m is anp else np.asarray(x), [A(3)])
case("mean", lambda m, x, y: m.mean([x, y]), [A(3), A(3)], tag="list")
case("stop_gradient", lambda m, x: anp.stop_gradient(x) if m is anp else x, [A(3)], diff=False)
case("ndim", lambda m, x: x * m.ndim(x), [A(2, 3)])
case("shape", lambda m, x: x * m.shape(x)[1], [A(2, 3)])
case("size", lambda m, x: x * m.size(x), [A(2, 3)])
# data-dependent output shapes: only with concrete values
case("nonzero", lambda m, x: m.nonzero(x > 0), [A(2, 3)], diff=False, concrete_only=True)
case("argwhere", lambda m, x: m.argwhere(x > 0), [A(2, 3)], diff=False, concrete_only=True)
case("flatnonzero", lambda m, x: m.flatnonzero(x > 0), [A(2, 3)], diff=False,
     concrete_only=True)
case("where", lambda m, x: m.where(x > 0), [A(2, 3)], diff=False, concrete_only=True,
     tag="1arg")
case("getitem", lambda m, x, y: x[y > 0], [A(2, 3), A(2, 3)], diff=False, concrete_only=True,
     tag="mask")

# linear algebra
for _s in [(3, 3), (2, 3, 3)]:
    case("linalg.inv", lambda m, a: m.linalg.inv(a), [A(*_s, spd=True)])
    case("linalg.det", lambda m, a: m.linalg.det(a), [A(*_s, lo=-1, hi=1)])
    case("linalg.slogdet", lambda m, a: tuple(m.linalg.slogdet(a)), [A(*_s, lo=-1, hi=1)])
    case("linalg.cholesky", lambda m, a: m.linalg.cholesky(a), [A(*_s, spd=True)])
    case("linalg.eigh", lambda m, a: tuple(m.linalg.eigh(a)), [A(*_s, spd=True)])
    case("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(a), [A(*_s, spd=True)])
    case("linalg.solve", lambda m, a, b: m.linalg.solve(a, b), [A(*_s, spd=True), A(*_s[:-1], 2)])
case("linalg.solve", lambda m, a, b: m.linalg.solve(a, b), [A(3, 3, spd=True), A(3)], tag="vec")
case("linalg.cholesky", lambda m, a: m.linalg.cholesky(a, upper=True), [A(3, 3, spd=True)],
     tag="upper")
case("linalg.eigh", lambda m, a: tuple(m.linalg.eigh(a, UPLO="U")), [A(3, 3, spd=True)],
     tag="upper")
case("linalg.eigh", lambda m, a: m.linalg.eigh(a)[0], [A(3, 3)], tag="nonsym")
for _kw in [dict(), dict(ord=1), dict(ord=np.inf), dict(ord=3), dict(axis=1),
            dict(axis=0, keepdims=True)]:
    case("linalg.norm", lambda m, x, kw=_kw: m.linalg.norm(x, **kw), [A(2, 3)]
         if "ord" not in _kw else [A(3)], tag=str(_kw))
for _o in ["fro", "nuc", 2, -2, 1, np.inf, -1]:
    for _s in [(3, 2), (2, 3)]:
        case("linalg.norm", lambda m, x, o=_o: m.linalg.norm(x, ord=o), [A(*_s)],
             tag=f"mat{_o}", hess=_o not in (1, np.inf, -1))
for _n in [0, 1, 3, -2]:
    case("linalg.matrix_power", lambda m, a, n=_n: m.linalg.matrix_power(a, n),
         [A(3, 3, spd=True) if _n < 0 else A(3, 3, lo=-1, hi=1)], tag=str(_n))
case("linalg.trace", lambda m, a: m.linalg.trace(a), [A(2, 3, 3)])
case("linalg.pinv", lambda m, a: m.linalg.pinv(a), [A(4, 3)], rtol=1e-6)
case("linalg.lstsq", lambda m, a, b: m.linalg.lstsq(a, b)[0], [A(4, 3), A(4, 2)], rtol=1e-6)
case("linalg.multi_dot", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
     [A(2, 3), A(3, 3), A(3, 2)])
case("linalg.solve_triangular",
     lambda m, a, b: anp.linalg.solve_triangular(a, b, lower=True),
     [A(3, 3, spd=True), A(3, 2)],
     ref=lambda a, b: np.linalg.solve(np.tril(a), b))
case("linalg.solve_triangular",
     lambda m, a, b: anp.linalg.solve_triangular(a, b, lower=False, trans=True),
     [A(3, 3, spd=True), A(3)],
     ref=lambda a, b: np.linalg.solve(np.triu(a).T, b), tag="upper-trans")

# svd (singular vectors up to sign: compared through sign-free products) and qr
case("linalg.svd", lambda m, a: m.linalg.svd(a, compute_uv=False), [A(4, 3)], tag="values")
case("linalg.svd", lambda m, a: m.linalg.svd(a, compute_uv=False), [A(2, 3, 5)], tag="values-wide")
case("linalg.svd", lambda m, a: (lambda u, s, vt: (u * s[..., None, :]) @ vt)(*m.linalg.svd(a, full_matrices=False)),
     [A(4, 3)], tag="usv", rtol=1e-9)
case("linalg.svd", lambda m, a: (lambda u, s, vt: np.abs(u) if m is np else m.abs(u))(*m.linalg.svd(a, full_matrices=False)),
     [A(2, 4)], tag="abs-u", rtol=1e-9)
case("linalg.svdvals", lambda m, a: m.linalg.svd(a, compute_uv=False) if m is np else m.linalg.svdvals(a),
     [A(3, 3)])
for _mode in ["reduced", "complete", "r"]:
    case("linalg.qr", lambda m, a, _mode=_mode: m.linalg.qr(a, mode=_mode), [A(4, 3)], tag=_mode, rtol=1e-9)
case("linalg.qr", lambda m, a: m.linalg.qr(a), [A(2, 3, 4)], tag="wide", rtol=1e-9)

# padding, nan-reductions, searching, selection, integration, convolution, counting
for _mode in ["constant", "edge", "reflect", "symmetric", "wrap"]:
    case("pad", lambda m, x, _mode=_mode: m.pad(x, ((1, 2), (2, 1)), mode=_mode), [A(3, 4)], tag=_mode)
case("pad", lambda m, x: m.pad(x, 2, constant_values=1.5), [A(3)], tag="value")
case("append", lambda m, a, b: m.append(a, b), [A(2, 2), A(3)])
case("append", lambda m, a, b: m.append(a, b, axis=0), [A(2, 3), A(1, 3)], tag="axis")
case("triu_indices_from", lambda m, a: m.triu_indices_from(a, 1), [A(3, 4)], diff=False)
case("tril_indices_from", lambda m, a: m.tril_indices_from(a), [A(3, 3)], diff=False)
# (all-nan slices, which numpy warns about, are tested in test_numpy_edge_cases.py)
_NANS = A(values=[[1.0, np.nan, 3.0], [np.nan, 0.25, np.nan], [2.0, -1.0, 0.5]])
for _name in ["nansum", "nanmean", "nanmax", "nanmin"]:
    case(_name, lambda m, x, _n=_name: getattr(m, _n)(x, axis=1), [_NANS], tag="axis")
    case(_name, lambda m, x, _n=_name: getattr(m, _n)(x), [A(2, 3)])
case("nansum", lambda m, x: m.nansum(x, axis=0, keepdims=True), [_NANS], tag="keepdims")
case("searchsorted", lambda m, a, v: m.searchsorted(a, v),
     [A(values=[-1.0, 0.0, 0.5, 2.0]), A(2, 3)], diff=False)
case("searchsorted", lambda m, a, v: m.searchsorted(a, v, side="right"),
     [A(values=[-1.0, 0.0, 0.5, 0.5]), A(values=[0.5, -3.0, 9.0])], diff=False, tag="right")
case("select", lambda m, x, y: m.select([x > 0.5, x < -0.5], [x * y, y], default=-1.0),
     [A(2, 3), A(2, 3)])
case("logaddexp2", _fn("logaddexp2"), [A(2, 3, lo=-5, hi=5), A(3, lo=-5, hi=5)])
case("fmax", _fn("fmax"), [A(2, 3), A(3)])
case("fmin", _fn("fmin"), [A(2, 3), A(3)])
case("fmax", _fn("fmax"), [A(values=[1.0, np.nan, np.nan]), A(values=[np.nan, 2.0, np.nan])],
     diff=False, tag="nan")
case("fmin", _fn("fmin"), [A(values=[1.0, np.nan, np.nan]), A(values=[np.nan, 2.0, np.nan])],
     diff=False, tag="nan")
for _s in [(), (3,), (2, 3), (2, 1, 3)]:
    case("atleast_3d", _fn("atleast_3d"), [A(*_s)])
case("trapezoid", lambda m, y: m.trapezoid(y), [A(2, 5)])
case("trapezoid", lambda m, y, x: m.trapezoid(y, x, axis=0), [A(4, 2), A(values=[0.0, 0.5, 1.5, 3.0])],
     tag="x")
case("trapezoid", lambda m, y: m.trapezoid(y, dx=0.3, axis=0), [A(4, 2)], tag="dx")
case("trapz", lambda m, y: anp.trapz(y, dx=0.5), [A(6)], ref=lambda y: np.trapezoid(y, dx=0.5))
for _mode in ["full", "same", "valid"]:
    case("convolve", lambda m, a, v, _mode=_mode: m.convolve(a, v, mode=_mode), [A(6), A(3)], tag=_mode)
case("convolve", lambda m, a, v: m.convolve(a, v, mode="same"), [A(2), A(5)], tag="swap")
case("bincount", lambda m, x: m.bincount(x, minlength=7), [A(6, kind="i", lo=0, hi=5)], diff=False)
case("bincount", lambda m, x, w: m.bincount(x, w, minlength=6),
     [A(values=[0, 2, 2, 5, 1], dtype=np.int64), A(5)], tag="weights")
case("cumulative_prod", lambda m, x: m.cumulative_prod(x, axis=1), [A(2, 3, lo=0.5, hi=1.5)])

# ----------------------------------------------------------------------------
# names of the namespace that are not functions to test (dtypes, constants,
# creation functions that are numpy's own objects, internal helpers)
# ----------------------------------------------------------------------------

NOT_FUNCTIONS = {
    # numpy's own objects re-exported (creation functions, dtype machinery)
    "zeros", "ones", "empty", "full", "eye", "identity", "arange", "linspace", "logspace",
    "geomspace", "meshgrid_np", "triu_indices", "tril_indices", "diag_indices", "dtype", "ndarray", "finfo", "iinfo", "result_type_np",
    "integer", "floating", "number", "inexact", "signedinteger", "issubdtype",
    "float16", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64", "bool_",
    # the functional-update entry point has its own tests (test_at_*)
    "at",
    # internal helpers that live in the module namespace
    "DTypeError", "ShapeError", "UnsupportedError", "Tracer", "asarray_", "dtype_of", "elementwise_args",
    "float_type", "is_concrete", "is_python_scalar", "normalize_axes", "normalize_axis",
    "npfunc", "promote", "result_type", "shape_of", "to_output", "user_source",
    "broadcast_shapes", "ndim_", "shape_",
    # complex-valued: numpy's own on numpy arrays; traced eig raises UnsupportedError and
    # traced eigvals is NaN unless symmetric (tested in test_linalg_decompositions.py)
    "linalg.eig", "linalg.eigvals",
}


def test_every_public_function_has_a_case():
    covered = {c.func for c in CASES}
    # the later breadth additions have their case table in test_numpy_all_modes.py (checked
    # eagerly, traced, in float32, differentiated and vmapped there the same way)
    import importlib.util
    import pathlib
    spec = importlib.util.spec_from_file_location(
        "_breadth_cases", pathlib.Path(__file__).with_name("test_numpy_all_modes.py"))
    breadth = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(breadth)
    covered |= {c.name.split()[0] for c in breadth.CASES}
    # ... and the rest of the breadth additions are each tested on their own elsewhere
    # (test_names_coverage.py checks that every public name is exercised by some test)
    sources = "\n".join(p.read_text() for p in pathlib.Path(__file__).parent.glob("test_*.py")
                        if p.name != "test_numpy.py")
    covered |= {n for n in dir(anp) if f".{n}(" in sources}
    missing = []
    for name in dir(anp):
        obj = getattr(anp, name)
        if name.startswith("_") or isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        if not (getattr(obj, "__module__", "") or "").startswith("autodiff"):
            continue         # numpy's own objects re-exported (dtypes, I/O, printing)
        if name not in covered and name not in NOT_FUNCTIONS:
            missing.append(name)
    for name in dir(anp.linalg):
        obj = getattr(anp.linalg, name)
        if name.startswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        if getattr(obj, "__module__", "") != "autodiff.numpy.linalg":
            continue
        if f"linalg.{name}" not in covered and f"linalg.{name}" not in NOT_FUNCTIONS:
            missing.append(f"linalg.{name}")
    assert not missing, f"autodiff.numpy functions without a test case: {missing}"


# ----------------------------------------------------------------------------
# comparison helpers
# ----------------------------------------------------------------------------

def _tol(dt, case):
    if case.rtol is not None:
        return case.rtol if dt == np.float64 else max(case.rtol, 2e-5)
    return 1e-11 if dt == np.float64 else 2e-5


def _canonical_signs(v):
    """Eigenvectors are defined up to sign: make each column's largest entry positive."""
    v = np.array(v)
    i = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return v * np.sign(np.take_along_axis(v, i, axis=-2))


def assert_same(got, want, rtol, what):
    if "eigh" in what and isinstance(want, tuple):
        got, want = (got[0], _canonical_signs(got[1])), (want[0], _canonical_signs(want[1]))
    g_leaves, g_tree = tree_flatten(got)
    w_leaves, w_tree = tree_flatten(want)
    assert len(g_leaves) == len(w_leaves), f"{what}: {g_tree} vs {w_tree}"
    for g, w in zip(g_leaves, w_leaves):
        w = np.asarray(w)
        g_arr = np.asarray(g)
        assert g_arr.shape == w.shape, f"{what}: shape {g_arr.shape}, numpy {w.shape}"
        assert g_arr.dtype == w.dtype, f"{what}: dtype {g_arr.dtype}, numpy {w.dtype}"
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g_arr, w, rtol=rtol, atol=rtol, equal_nan=True,
                                       err_msg=what)
        else:
            np.testing.assert_array_equal(g_arr, w, err_msg=what)


def _numpy_result(c, args):
    with np.errstate(all="ignore"):
        return c.reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])


def _array_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]


def _closed_over(c, args):
    """``f(*arrays)`` with the Python-scalar arguments fixed."""
    pos = _array_positions(args)

    def f(*xs):
        full = list(args)
        for i, x in zip(pos, xs):
            full[i] = x
        return c.f(anp, *full)
    return f, [args[i] for i in pos]


@pytest.fixture(params=FLOATS, ids=["f32", "f64"])
def dt(request):
    return request.param


# ----------------------------------------------------------------------------
# the three ways of running every case
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_eager_matches_numpy(c, dt):
    args = c.make_args(np.random.default_rng(0), dt)
    want = _numpy_result(c, args)
    with np.errstate(all="ignore"):
        got = c.f(anp, *args)
    assert_same(got, want, _tol(dt, c), f"eager {c.id}")
    for g, w in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
        # convention 2: concrete results are what numpy returns (ndarray, numpy scalar, ...)
        assert type(g) is type(w), f"eager {c.id}: {type(g)} where numpy gives {type(w)}"


@pytest.mark.parametrize("c", [c for c in CASES if not c.concrete_only], ids=lambda c: c.id)
def test_traced_then_interpreted_matches_numpy(c, dt):
    args = c.make_args(np.random.default_rng(0), dt)
    want = _numpy_result(c, args)
    f, arrays = _closed_over(c, args)
    closed, shapes = ad.make_jaxpr(f, return_shape=True)(*arrays)
    typecheck_jaxpr(closed.jaxpr)
    with np.errstate(all="ignore"):
        outs = run_closed(closed, arrays)
    leaves, tree = tree_flatten(shapes, is_leaf=lambda s: isinstance(s, ad.api.ShapeDtype))
    from autodiff.tree_util import tree_unflatten
    got = tree_unflatten(tree, outs)
    assert_same(got, want, _tol(dt, c), f"traced {c.id}")


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_concrete_trace_matches_numpy(c, dt):
    # inside jvp the trace knows values: data-dependent code (masks, nonzero) works
    args = c.make_args(np.random.default_rng(0), dt)
    want = _numpy_result(c, args)
    f, arrays = _closed_over(c, args)
    tangents = tuple(np.zeros_like(a, dtype=a.dtype if a.dtype.kind == "f" else np.float64)
                     for a in arrays)
    with np.errstate(all="ignore"):
        got, _ = ad.jvp(f, tuple(arrays), tangents)
    assert_same(got, want, _tol(dt, c), f"concrete {c.id}")


@pytest.mark.parametrize("c", [c for c in CASES if c.concrete_only], ids=lambda c: c.id)
def test_data_dependent_shapes_need_concrete_values(c):
    args = c.make_args(np.random.default_rng(0), np.float64)
    f, arrays = _closed_over(c, args)
    with pytest.raises(ad.errors.ConcretizationError):
        ad.make_jaxpr(f)(*arrays)


# ----------------------------------------------------------------------------
# property tests: broadcasting of random shapes
# ----------------------------------------------------------------------------

_BIN = ["add", "subtract", "multiply", "divide", "maximum", "power", "arctan2", "hypot",
        "less", "logaddexp"]


@settings(max_examples=12, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       name=st.sampled_from(_BIN), dt=st.sampled_from(FLOATS), seed=st.integers(0, 2 ** 16))
def test_binary_broadcasting_property(shapes, name, dt, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2, shapes.input_shapes[0]).astype(dt)
    y = rng.uniform(0.5, 2, shapes.input_shapes[1]).astype(dt)
    want = getattr(np, name)(x, y)
    closed = ad.make_jaxpr(getattr(anp, name))(x, y)
    got = run_closed(closed, [x, y])[0]
    assert_same(got, want, 2e-5 if dt == np.float32 else 1e-12, name)


@settings(max_examples=12, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
       name=st.sampled_from(["sum", "max", "mean", "prod", "std", "argmin", "cumsum", "sort"]),
       dt=st.sampled_from(FLOATS), data=st.data())
def test_reductions_property(shape, name, dt, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    keep = data.draw(st.booleans()) and name not in ("cumsum", "sort", "argmin")
    x = np.random.default_rng(len(shape)).uniform(0.5, 2, shape).astype(dt)
    kw = dict(axis=axis, keepdims=True) if keep else dict(axis=axis)
    want = getattr(np, name)(x, **kw)
    closed = ad.make_jaxpr(lambda x: getattr(anp, name)(x, **kw))(x)
    assert_same(run_closed(closed, [x])[0], want, 2e-5 if dt == np.float32 else 1e-11, name)


@settings(max_examples=10, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4), data=st.data())
def test_basic_indexing_property(shape, data):
    idx = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    closed = ad.make_jaxpr(lambda x: x[idx])(x)
    assert_same(run_closed(closed, [x])[0], x[idx], 0, f"x{shape}[{idx}]")


# ----------------------------------------------------------------------------
# dtype rules and API conventions
# ----------------------------------------------------------------------------

def test_python_scalars_are_weak():
    x = np.ones(3, np.float32)
    for f in [lambda x: x * 2.0, lambda x: 2 + x, lambda x: anp.maximum(x, 0.5),
              lambda x: anp.where(x > 0, x, 0.0), lambda x: x ** 2, lambda x: x / 3]:
        out = ad.make_jaxpr(f)(x).out_avals[0]
        assert out.dtype == np.float32
    # float64 stays float64, no x64 flag
    assert ad.make_jaxpr(lambda x: x * 2.0)(np.ones(2)).out_avals[0].dtype == np.float64
    # numpy scalars are not weak
    assert ad.make_jaxpr(lambda x: x * np.float64(2))(x).out_avals[0].dtype == np.float64


def test_matrix_vector_product_is_one_dot_general():
    for a, b in [(np.ones((3, 4)), np.ones(4)), (np.ones(3), np.ones((3, 4))),
                 (np.ones((2, 3, 4)), np.ones(4))]:
        closed = ad.make_jaxpr(anp.matmul)(a, b)
        assert [e.primitive.name for e in closed.eqns] == ["dot_general"], str(closed)
        np.testing.assert_allclose(run_closed(closed, [a, b])[0], a @ b)


def test_list_indexing_and_lists_of_arrays():
    x = np.arange(4.0)
    g = ad.grad(lambda x: anp.sum(x[[0, 0, 3]]))(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 0.0, 1.0])
    g = ad.grad(lambda x: anp.mean([x[0], x[1] * 3.0]))(x)
    np.testing.assert_array_equal(g, [0.5, 1.5, 0.0, 0.0])
    g = ad.grad(lambda x: anp.sum(anp.concatenate([x, [1.0, x[2]]])))(x)
    np.testing.assert_array_equal(g, [1.0, 1.0, 2.0, 1.0])


def test_dtype_casts_on_traced_values():
    x = np.array([1.7, -2.2])
    closed = ad.make_jaxpr(lambda x: (anp.float32(x), anp.int64(x), anp.float64(x)))(x)
    f32, i64, f64 = run_closed(closed, [x])
    assert f32.dtype == np.float32 and i64.dtype == np.int64 and f64.dtype == np.float64
    np.testing.assert_array_equal(i64, [1, -2])
    # casting is differentiable (float to float) and cuts the gradient for ints
    assert ad.grad(lambda x: anp.sum(anp.float32(x) * 2))(x).dtype == np.float64
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(anp.float32(x) * 2))(x), [2, 2])
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(anp.int64(x) * 1.0))(x), [0, 0])
    assert anp.float32(1.5) == np.float32(1.5) and type(anp.float32(1.5)) is np.float32


def test_at_updates():
    x = np.arange(5.0)
    cases = [
        (lambda x: x.at[1].set(7.0), lambda x: _np_set(x, 1, 7.0)),
        (lambda x: x.at[1:3].add(1.0), lambda x: _np_add(x, slice(1, 3), 1.0)),
        (lambda x: x.at[[0, 0, 2]].add(1.0), lambda x: _np_addat(x, [0, 0, 2], 1.0)),
        (lambda x: x.at[-1].multiply(3.0), lambda x: _np_op(x, -1, np.multiply, 3.0)),
        (lambda x: x.at[2:].min(2.5), lambda x: _np_op(x, slice(2, None), np.minimum, 2.5)),
        (lambda x: x.at[:2].max(0.5), lambda x: _np_op(x, slice(None, 2), np.maximum, 0.5)),
        (lambda x: x.at[3].divide(2.0), lambda x: _np_op(x, 3, np.divide, 2.0)),
        (lambda x: x.at[3].power(2.0), lambda x: _np_op(x, 3, np.power, 2.0)),
        (lambda x: x.at[1].subtract(1.0), lambda x: _np_op(x, 1, np.subtract, 1.0)),
        (lambda x: x.at[::2].get(), lambda x: x[::2]),
    ]
    for f, ref in cases:
        closed = ad.make_jaxpr(f)(x)
        np.testing.assert_array_equal(run_closed(closed, [x])[0], ref(x.copy()))
        np.testing.assert_array_equal(anp.at(x)[0].set(9.0), _np_set(x.copy(), 0, 9.0))
    # gradient of a functional update: the overwritten entry gets none, the update all
    g = ad.grad(lambda x, v: anp.sum(x.at[1].set(v) * np.arange(5.0)), argnums=(0, 1))(x, 2.0)
    np.testing.assert_array_equal(g[0], [0, 0, 2, 3, 4])
    assert g[1] == 1.0
    # repeated indices: the last update wins, in the value and in the gradient
    f = lambda x, v: anp.sum(anp.at(x)[np.array([1, 3, 1])].set(v) * np.arange(5.0))
    assert f(x, np.array([7.0, 8.0, 9.0])) == np.dot(np.arange(5.0), [0, 9, 2, 8, 4])
    gx, gv = ad.grad(f, argnums=(0, 1))(x, np.array([7.0, 8.0, 9.0]))
    np.testing.assert_array_equal(gx, [0, 0, 2, 0, 4])
    np.testing.assert_array_equal(gv, [0, 3, 1])
    gv = ad.grad(lambda v: anp.sum(anp.at(x)[np.array([1, 3, 1])].add(v) * np.arange(5.0)))(
        np.ones(3))
    np.testing.assert_array_equal(gv, [1, 3, 1])
    assert np.all(x == np.arange(5.0))   # the input is untouched


def _np_drop(x, idx, op, v):
    """numpy's ``x[i] = op(x[i], v)`` for each in-bounds ``i`` of ``idx`` in turn; the rest
    dropped (JAX's scatter)."""
    x = x.copy()
    idx = np.atleast_1d(idx)
    for i, vi in zip(idx, np.broadcast_to(v, idx.shape)):
        if -len(x) <= i < len(x):
            x[i] = op(x[i], vi)
    return x


def test_at_updates_of_basic_indices_with_traced_scalars():
    # slices (steps, negative steps, empty), None and traced scalars (negative, out of
    # bounds: the whole update dropped), set and add, against numpy's own assignment
    X = np.arange(60.0).reshape(3, 4, 5)
    cases = [(lambda i, j: (i, slice(None), j), (1, -2)),
             (lambda i, j: (slice(None, None, 2), i, slice(4, 0, -2)), (-1, 0)),
             (lambda i, j: (i, None, j, slice(1, 4)), (2, 3)),
             (lambda i, j: (slice(2, 2), i, j), (0, 1)),
             (lambda i, j: (i, j), (3, 0)),                       # i out of bounds
             (lambda i, j: (i, slice(None), j), (0, -6)),         # j out of bounds
             (lambda i, j: (Ellipsis, j), (0, 4))]
    for make, (i, j) in cases:
        upd = np.arange(1.0, 61.0).reshape(3, 4, 5)
        for op in ("set", "add"):
            def f(x, i, j, u):
                ref = anp.at(x)[make(i, j)]
                shape = anp.shape(ref.get())
                return getattr(ref, op)(anp.reshape(u[:int(np.prod(shape))], shape))
            got = assert_compiled(ad.jit(f), X, i, j, upd.ravel())
            want = X.copy()
            n = [3, 4, 5]
            try:
                view = want[make(i, j)]
                w = upd.ravel()[:view.size].reshape(view.shape)
                if op == "set":
                    want[make(i, j)] = w
                else:
                    want[make(i, j)] += w
            except IndexError:
                pass                                    # dropped, as JAX's scatters
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {i} {j} {n}")


def test_at_updates_of_leading_index_arrays_with_traced_indices():
    # integer arrays (and integers) on the leading axes, whole axes after: positions from
    # the indices' offsets, no array of every position of the operand; rows with an index
    # out of bounds dropped, repeats accumulated (add) or last-wins (set)
    X = np.arange(60.0).reshape(5, 4, 3)
    cases = [(np.array([0, 4, 0, -1]),), (np.array([[1, 2], [7, 1]]),),
             (np.array([0, 3, 1]), np.array([[1], [3], [-5]])),
             (np.array([2, 2]), 1), (-1, np.array([0, 3, 9]))]
    for idx in cases:
        def f(x, u, *idx):
            ref = anp.at(x)[idx]
            return ref.add(u), ref.set(u * 2.0), ref.max(u)
        shape = np.broadcast_shapes(*[np.shape(i) for i in idx]) + X.shape[len(idx):]
        u = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
        got = assert_compiled(ad.jit(f), X, u, *idx)
        bidx = np.broadcast_arrays(*[np.asarray(i) for i in idx])
        keep = np.ones(bidx[0].shape, bool)
        for j, b in enumerate(bidx):
            keep &= (b >= -X.shape[j]) & (b < X.shape[j])
        kept = tuple(b[keep] for b in bidx)
        want_add, want_set, want_max = X.copy(), X.copy(), X.copy()
        np.add.at(want_add, kept, u[keep])
        want_set[kept] = u[keep] * 2.0
        np.maximum.at(want_max, kept, u[keep])
        for g, w, op in zip(got, (want_add, want_set, want_max), ("add", "set", "max")):
            np.testing.assert_array_equal(g, w, err_msg=f"{op} {idx}")
    # the gradient of the updates, against its closed form (a dropped row gets none)
    ids = np.array([1, 1, 4, 6])
    w = np.arange(1.0, 61.0).reshape(5, 4, 3)
    loss = lambda u, i: anp.sum(anp.at(X)[i].add(u ** 2) * w)
    u = np.linspace(-1.0, 1.0, 48).reshape(4, 4, 3)
    g = assert_compiled(ad.jit(ad.grad(loss)), u, ids)
    np.testing.assert_allclose(g, 2 * u * w[np.minimum(ids, 4)] * (ids < 5)[:, None, None])


def _fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


@pytest.mark.parametrize("backend", ["cpu", "interpret"])
def test_at_combining_updates_with_traced_repeated_indices(backend):
    # JAX's scatter_mul/min/max: every update at a repeated position counts (before, a
    # traced index kept the last one only: a wrong number under jit)
    def run(f, *args):
        return ad.jit(f, backend="interpret")(*args) if backend == "interpret" \
            else assert_compiled(ad.jit(f), *args)
    x = np.array([1.5, -2.0, 3.0, 0.5])
    i = np.array([0, 2, 0, 2, 0, 7, -1])
    v = np.array([2.0, -1.0, 0.5, 4.0, 3.0, 9.0, -3.0])
    for name, uf in (("multiply", np.multiply), ("min", np.minimum), ("max", np.maximum)):
        want = x.copy()
        uf.at(want, i[[0, 1, 2, 3, 4, 6]], v[[0, 1, 2, 3, 4, 6]])     # 7 is dropped
        got = run(lambda x, i, v: getattr(x.at[i], name)(v), x, i, v)
        np.testing.assert_allclose(got, want, rtol=1e-15, err_msg=name)
        # vmapped over index sets
        got = run(ad.vmap(lambda x, i, v: getattr(x.at[i], name)(v), (None, 0, None)),
                  x, np.stack([i, i[::-1]]), v)
        want2 = x.copy()
        uf.at(want2, i[::-1][[0, 2, 3, 4, 5, 6]], v[[0, 2, 3, 4, 5, 6]])
        np.testing.assert_allclose(got, [want, want2], rtol=1e-15, err_msg=name)
    np.testing.assert_allclose(run(lambda x, i, v: x.at[i].divide(v), x, i, v),
                               [1.5 / 3.0, -2.0, 3.0 / -4.0, 0.5 / -3.0])
    # gradients against central differences, zeros among a product's updates included
    w = np.array([1.0, 2.0, -1.0, 0.5])
    for name in ("multiply", "min", "max"):
        for vv in (v, np.array([2.0, 0.0, 0.5, 4.0, 0.0, 9.0, -3.0]),
                   np.array([2.0, -1.0, 0.0, 4.0, 3.0, 9.0, -3.0])):
            f = lambda x, v, i: anp.sum(getattr(x.at[i], name)(v) * w)
            gx, gv = run(ad.grad(f, argnums=(0, 1)), x, vv, i)
            fj = ad.jit(f, backend="interpret")         # (i traced: index 7 is dropped)
            np.testing.assert_allclose(gx, _fd_grad(lambda x: fj(x, vv, i), x), atol=1e-8)
            np.testing.assert_allclose(gv, _fd_grad(lambda v: fj(x, v, i), vv), atol=1e-8)
    # ties share the gradient, as anp.max's do: x[0] and two updates all equal 3
    g = run(ad.grad(lambda v: anp.sum(anp.at(np.array([3.0, 0.0]))[np.array([0, 0, 1])].max(v))),
            np.array([3.0, 3.0, 1.0]))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3, 1.0])


@pytest.mark.parametrize("backend", ["cpu", "numba", "interpret"])
def test_at_updates_with_traced_out_of_bounds_indices_drop_them(backend, request):
    if backend == "numba":                      # the Numba path, without the LLVM tier
        request.getfixturevalue("numba_path")

    def run(f, *args):
        if backend == "interpret":
            return ad.jit(f, backend="interpret")(*args)
        return assert_compiled(ad.jit(f), *args)      # the kernel ran, not the interpreter
    x = np.arange(5.0)
    ops = {"set": lambda a, b: b, "add": np.add, "multiply": np.multiply, "min": np.minimum}
    for idx in [np.array([1, 7]), np.array([-1, -5, -6, 5]), np.array([4, 9]), np.int64(7),
                np.int64(-6), np.int64(-2)]:
        for name, op in ops.items():
            got = run(lambda x, i: getattr(x.at[i], name)(-10.0), x, idx)
            np.testing.assert_array_equal(got, _np_drop(x, idx, op, -10.0),
                                          err_msg=f"{name} at {idx}")
    with pytest.raises(IndexError):             # concrete indices: numpy's error, as before
        anp.at(x)[np.array([1, 7])].add(10.0)
    # 2-D: a dropped row, a dropped pair, and traced scalars that drop everything
    X = np.arange(12.0).reshape(3, 4)
    rows = run(lambda v, i: v.at[i, 1:3].add(100.0), X, np.array([0, 3]))
    np.testing.assert_array_equal(rows, X + 100.0 * np.array([[0, 1, 1, 0], [0] * 4, [0] * 4]))
    pairs = run(lambda v, i, j: v.at[i, j].set(-1.0), X, np.array([0, 2, 5]), np.array([3, 9, 0]))
    np.testing.assert_array_equal(pairs, np.where(np.arange(12).reshape(3, 4) == 3, -1.0, X))
    np.testing.assert_array_equal(run(lambda v, i: v.at[i].multiply(-1.0), X, 3), X)
    np.testing.assert_array_equal(run(lambda v, i, j: v.at[i, j].add(-1.0), X, 1, -5), X)
    np.testing.assert_array_equal(run(lambda v, i, j: v.at[i, j].set(-1.0), X, 2, 4), X)
    np.testing.assert_array_equal(run(lambda v, i: v.at[i].set(-1.0), X, -4), X)
    # gradients: a dropped update gets none, the operand keeps its own where nothing lands
    w = np.arange(1.0, 6.0)
    gx, gv = run(ad.grad(lambda x, v, i: anp.sum(x.at[i].set(v) * w), argnums=(0, 1)),
                 x, np.array([2.0, 3.0]), np.array([1, 7]))
    np.testing.assert_array_equal(gx, [1, 0, 3, 4, 5])
    np.testing.assert_array_equal(gv, [2, 0])
    gv = run(ad.grad(lambda v, i: anp.sum(anp.at(x)[i].add(v) * w)), np.ones(3),
             np.array([4, -9, 0]))
    np.testing.assert_array_equal(gv, [5, 0, 1])
    # traced scalars under set: a dropped update's gradient is 0, the operand's is kept
    for i, want in ((2, ([1, 2, 0, 4, 5], 3.0)), (5, ([1, 2, 3, 4, 5], 0.0))):
        gx, gv = run(ad.grad(lambda x, v, i: anp.sum(x.at[i].set(v) * w), argnums=(0, 1)),
                     x, 2.0, i)
        np.testing.assert_array_equal(gx, want[0])
        assert gv == want[1]
    gm = run(ad.grad(lambda v, i: anp.sum(anp.at(x)[i].multiply(v) * w)), 2.0, np.int64(5))
    assert gm == 0.0


def _np_set(x, i, v):
    x[i] = v
    return x


def _np_add(x, i, v):
    x[i] += v
    return x


def _np_addat(x, i, v):
    np.add.at(x, i, v)
    return x


def _np_op(x, i, op, v):
    x[i] = op(x[i], v)
    return x


def test_assigning_into_a_traced_value_names_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match=r"\.at\["):
        ad.grad(lambda x: anp.sum(f(x)))(np.ones(3))


def test_tracer_shift_and_divmod_operators_match_numpy():
    # <<, >> and their reflections, and divmod(number, tracer), as on numpy arrays
    x = np.array([5, -6, 7, 0], np.int32)
    cases = [lambda a: a << 2, lambda a: a >> 1, lambda a: 3 << (a & 3), lambda a: 100 >> (a & 3),
             lambda a: a << np.int32(1), lambda a: divmod(7, a + 8), lambda a: divmod(a, 3),
             lambda a: divmod(7.5, a.astype(float) + 8.0)]
    as_tuple = lambda t: t if isinstance(t, tuple) else (t,)
    for f in cases:
        want = as_tuple(f(x))
        for got in (ad.jit(f)(x), ad.jit(f, backend="interpret")(x)):
            for g, w in zip(as_tuple(got), want, strict=True):
                np.testing.assert_array_equal(g, w)
                assert g.dtype == w.dtype
    # d/dv mod(7, v) = -floor(7 / v)
    assert ad.grad(lambda v: divmod(7.0, v)[1])(2.5) == -2.0


def test_numpy_dispatch_on_tracers():
    # np.sin(tracer) and np.sum(tracer) route to autodiff.numpy
    g = ad.grad(lambda x: np.sum(np.sin(x) * x))(np.array([0.5, 1.0]))
    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x))


def test_tracer_methods():
    x = np.arange(6.0).reshape(2, 3)
    fs = [lambda x: x.sum(axis=0), lambda x: x.mean(), lambda x: x.reshape((3, 2)),
          lambda x: x.T, lambda x: x.max(1), lambda x: x.flatten(), lambda x: x.clip(1, 4),
          lambda x: x.std(), lambda x: x.cumsum(1), lambda x: x.swapaxes(0, 1),
          lambda x: -x, lambda x: abs(x - 3), lambda x: 2 ** x, lambda x: x // 2,
          lambda x: x % 2, lambda x: x.astype(np.float32), lambda x: x.dot(np.ones(3)),
          lambda x: x.argmax(), lambda x: x.prod(axis=1), lambda x: x.var(axis=0)]
    for f in fs:
        closed = ad.make_jaxpr(f)(x)
        assert_same(run_closed(closed, [x])[0], f(x), 1e-12, "method")


# ----------------------------------------------------------------------------
# edge cases: empty axes and slices, NaN/inf/-0.0, integer semantics, mixed promotion
# ----------------------------------------------------------------------------

EDGE_X = np.array([[1.5, -2.0, 0.0], [3.0, -0.5, 2.5]])
EDGE = [
    ("sum axis ()", lambda m, x: m.sum(x, axis=())),
    ("where scalars", lambda m, x: m.where(x > 0, 1, 0)),
    ("where int/float", lambda m, x: m.where(x > 0, 1, 2.5)),
    ("take neg", lambda m, x: m.take(x, [-1, 0], axis=1)),
    ("roll multi", lambda m, x: m.roll(x, (1, -1), axis=(0, 1))),
    ("sign", lambda m, x: m.sign(m.array([-0.0, 0.0, -1.0, np.nan]))),
    ("clip inverted", lambda m, x: m.clip(x, 1.0, 0.0)),
    ("var ddof big", lambda m, x: m.var(x, axis=0, ddof=3)),
    ("argmax nan", lambda m, x: m.argmax(m.array([1.0, np.nan, 3.0]))),
    ("mod neg", lambda m, x: m.mod(x, -1.5)),
    ("floor_divide neg", lambda m, x: m.floor_divide(x, -1.5)),
    ("int div", lambda m, x: m.floor_divide(m.array([7, -7]), 2)),
    ("int mod", lambda m, x: m.mod(m.array([7, -7]), 3)),
    ("cumsum bool", lambda m, x: m.cumsum(x > 0)),
    ("mean int", lambda m, x: m.mean(m.array([1, 2, 4]))),
    ("std int", lambda m, x: m.std(m.array([1, 2, 4]))),
    ("power neg base int exp", lambda m, x: m.power(x, 3)),
    ("power float exp", lambda m, x: m.power(m.abs(x) + 1, 0.5)),
    ("x**-1", lambda m, x: (m.abs(x) + 1) ** -1),
    ("sort int", lambda m, x: m.sort(m.array([3, 1, 2]))),
    ("max int", lambda m, x: m.max(m.array([3, 1, 2]))),
    ("linspace mul", lambda m, x: x * np.linspace(0, 1, 3)),
    ("norm -2", lambda m, x: m.linalg.norm(x, -2)),
    ("norm vec 0", lambda m, x: m.linalg.norm(x[0], 0)),
    ("norm vec -inf", lambda m, x: m.linalg.norm(x[0], -np.inf)),
    ("norm vec -1", lambda m, x: m.linalg.norm(x[0] + 3, -1)),
    ("ndim indexing", lambda m, x: x[1, ::-1][None]),
    ("empty slice", lambda m, x: x[:, 3:]),
    ("sum empty", lambda m, x: m.sum(x[:, 3:])),
    ("max keepdims none", lambda m, x: m.max(x, keepdims=True)),
    ("expand neg", lambda m, x: m.expand_dims(x, -1)),
    ("squeeze none", lambda m, x: m.squeeze(x[None])),
    ("isclose int", lambda m, x: m.isclose(m.array([1, 2]), m.array([1, 3]))),
    ("tri k", lambda m, x: m.tril(x, -1)),
    ("trace int", lambda m, x: m.trace(m.array([[1, 2], [3, 4]]))),
    ("abs int8", lambda m, x: m.abs(m.array([-128, 5], dtype=np.int8))),
    ("exp2 int", lambda m, x: m.exp2(m.array([1, 2]))),
    ("logaddexp inf", lambda m, x: m.logaddexp(m.array([-np.inf, np.inf]),
                                               m.array([-np.inf, 1.0]))),
    ("hypot 0", lambda m, x: m.hypot(m.array([0.0, 3.0]), m.array([0.0, 4.0]))),
    ("divide int by zero", lambda m, x: m.divide(m.array([1.0, 0.0]), 0.0)),
    ("heaviside", lambda m, x: m.heaviside(m.array([-1.0, 0.0, 2.0]), 0.5)),
    ("einsum trace", lambda m, x: m.einsum("ii", x[:, :2])),
    ("einsum outer", lambda m, x: m.einsum("i,j->ij", x[0], x[1])),
    ("dot 1d nd", lambda m, x: m.dot(x[0], np.ones((2, 3, 4)))),
    ("matmul 1d nd", lambda m, x: m.matmul(x[0], np.ones((2, 3, 4)))),
    ("tensordot 0", lambda m, x: m.tensordot(x, x, 0)),
    ("diagonal neg", lambda m, x: m.diagonal(x, -1)),
    ("diff int", lambda m, x: m.diff(m.array([1, 4, 9]))),
    ("repeat 0", lambda m, x: m.repeat(x, 0, axis=0)),
    ("bool arith", lambda m, x: (x > 0) + (x < 1)),
    ("bool mul float", lambda m, x: (x > 0) * 2.5),
    ("neg bool", lambda m, x: m.logical_not(x > 0)),
    ("round neg dec", lambda m, x: m.round(x * 100, -1)),
    ("fmod neg", lambda m, x: m.fmod(x, -1.5)),
    ("median even", lambda m, x: m.median(x)),
    ("quantile 1", lambda m, x: m.quantile(x, 1.0)),
    ("cross 2d", lambda m, x: m.cross(x, x[::-1])),
    ("stack 0d", lambda m, x: m.stack([x[0, 0], x[1, 1]])),
    ("concat lists", lambda m, x: m.concatenate([x[0], [1.0, 2.0]])),
    ("array nested", lambda m, x: m.array([[x[0, 0], 1.0], [2.0, x[1, 1]]])),
    ("swap scalar op", lambda m, x: 2 ** x),
    ("rpow int", lambda m, x: 2 ** m.array([1, 2])),
    ("minimum int float", lambda m, x: m.minimum(m.array([1, 5]), 2.5)),
    ("maximum nan", lambda m, x: m.maximum(m.array([np.nan, 1.0]), 0.0)),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name,f", EDGE, ids=[e[0] for e in EDGE])
def test_edge_cases_match_numpy(name, f):
    with np.errstate(all="ignore"):
        want = f(np, EDGE_X)
        closed = ad.make_jaxpr(lambda x: f(anp, x))(EDGE_X)
        got = run_closed(closed, [EDGE_X])
        eager = f(anp, EDGE_X)
    assert_same(got[0] if len(got) == 1 else got, want, 1e-12, f"traced {name}")
    assert_same(eager, want, 1e-12, f"eager {name}")
