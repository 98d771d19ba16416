"""JAX's tests of numpy's reductions, elementwise operators and ufuncs, ported to autodiff.

Sources (jax-ml/jax): ``tests/lax_numpy_reducers_test.py`` (sum/prod/max/min/mean/var/std,
the nan-reductions, ptp, all/any, average, cov, median/quantile/percentile and the
cumulative reductions with ``axis``/``keepdims``/``where``/``initial``/``dtype``/``ddof``),
``tests/lax_numpy_operators_test.py`` (the one-to-one and compound operator records, the
bitwise and shift records, operator overloading) with the numpy gradient records of
``tests/lax_numpy_test.py`` (``NumpyGradTests``), and ``tests/lax_numpy_ufuncs_test.py``.

``jax`` became ``ad``, ``jnp`` ``anp``. Each record is checked on a rotation of JAX's
shapes and dtypes (not its full product): against numpy eagerly (where numpy's own code
runs on plain arrays) and traced (``ad.jit(f, backend="interpret")``, autodiff's own
implementation), a few under the Numba ``ad.jit``. The records JAX marks differentiable
get ``ad.check_grads`` in float64 (and complex128 where the record has complex dtypes);
JAX's own test file leaves its ``diff_modes`` unused, so these use ``NumpyGradTests``'
order 2 and tolerances. Reductions get gradient checks in float64 as well.

Not ported: bfloat16 and the other ML float types (numpy has none), the jaxpr-structure
tests (``testReducerF16Casts``, ``testMeanF16Casts``), ``eval_shape`` of a 2**32-element
mean, the ``jax.numpy_dtype_promotion``/rank-promotion switches, ``cov(dtype=bfloat16)``.
``lax_numpy_ufuncs_test.py``: ``anp.add`` & co. carry numpy's ufunc methods (``reduce``,
``accumulate``, ``outer``, ``at``, ``reduceat``) and ``anp.frompyfunc`` builds one from a
scalar function (JAX's ``jnp.frompyfunc``): the method forms and their traced equivalents
(``anp.sum``/``anp.cumsum``/``.at[].add``/``anp.outer``) are both checked.

Deliberate differences from JAX (strict xfails, or noted where tested): numpy's integer
promotion in ``cumsum`` (int8 accumulates in int64), numpy's ``inf`` for ``var(ddof >= n)``
of spread data, integer operands of float functions computed in float64 when traced (numpy's
eager result is float16/float32 for small integers), and plain lists/tuples accepted as
operands of traced arrays (numpy's array-likes; JAX raises TypeError).
"""
import itertools
import operator
import warnings
import zlib
from functools import partial
from typing import NamedTuple

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.tree_util import tree_flatten

# ---------------------------------------------------------------------------------------
# dtypes and shapes (jax._src.test_util), without bfloat16
# ---------------------------------------------------------------------------------------

f16, f32, f64 = np.float16, np.float32, np.float64
c64, c128 = np.complex64, np.complex128
i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
u8, u16, u32, u64 = np.uint8, np.uint16, np.uint32, np.uint64
b_ = np.bool_

float_dtypes = [f16, f32, f64]
complex_dtypes = [c64, c128]
int_dtypes = [i8, i16, i32, i64]
unsigned_dtypes = [u8, u16, u32, u64]
bool_dtypes = [b_]
default_dtypes = float_dtypes + int_dtypes
inexact_dtypes = float_dtypes + complex_dtypes
number_dtypes = float_dtypes + complex_dtypes + int_dtypes + unsigned_dtypes
real_dtypes = float_dtypes + int_dtypes + unsigned_dtypes
all_dtypes = number_dtypes + bool_dtypes
int_dtypes_no_uint64 = [d for d in int_dtypes + unsigned_dtypes if d != u64]
python_scalar_dtypes = [b_, i64, f64, c128]

PY = "python scalar"        # jtu.PYTHON_SCALAR_SHAPE
NPS = "numpy scalar"        # jtu.NUMPY_SCALAR_SHAPE
scalar_shapes = [NPS, PY]
nonempty_nonscalar_array_shapes = [(4,), (3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4)]
nonempty_array_shapes = [()] + nonempty_nonscalar_array_shapes
empty_array_shapes = [(0,), (0, 4), (3, 0)]
array_shapes = nonempty_array_shapes + empty_array_shapes
nonzerodim_shapes = nonempty_nonscalar_array_shapes + empty_array_shapes
nonempty_shapes = scalar_shapes + nonempty_array_shapes
all_shapes = scalar_shapes + array_shapes

# the order in which a record's dtypes are visited: the common ones first
_PREFERENCE = [f64, f32, i32, c128, b_, u8, i16, f16, c64, i64, i8, u32, u16, u64]


def _key(*key):
    return zlib.crc32(repr(key).encode())


def _shape(s):
    return () if s in (PY, NPS) else s


# ---------------------------------------------------------------------------------------
# JAX's random generators (jtu.rand_*): a float sampler, then JAX's cast to ``dtype``
# ---------------------------------------------------------------------------------------

def _to_dtype(vals, shape, dtype):
    dtype = np.dtype(dtype)
    vals = np.asarray(vals)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        vals = np.clip(np.round(np.real(vals)), info.min, info.max)
    elif dtype.kind == "b":
        vals = np.round(np.real(vals)) != 0
    out = np.asarray(vals.astype(dtype))
    if shape == PY:
        return out.item()
    if shape == NPS:
        return out[()]
    return out


def _gen(sample, post=None):
    """A jtu-style factory: ``factory(rng)(shape, dtype)``; complex dtypes draw both parts."""
    def factory(rng):
        def make(shape, dtype):
            shp = _shape(shape)
            v = sample(rng, shp)
            if np.dtype(dtype).kind == "c":
                v = v + 1j * sample(rng, shp)
            if post is not None:
                v = post(rng, v, np.dtype(dtype))
            return _to_dtype(v, shape, dtype)
        return make
    return factory


def _special(rng, v, dtype, values):
    """Put ``values`` (inf/nan) in about a quarter of the positions of a float array."""
    if dtype.kind not in "fc" or np.ndim(v) == 0 and rng.rand() < 0.5:
        return v
    v = np.array(v, dtype=np.complex128 if dtype.kind == "c" else np.float64)
    pick = rng.rand(*np.shape(v)) < 0.25
    vals = np.asarray(values)[rng.randint(0, len(values), size=np.shape(v))]
    return np.where(pick, vals, v)


def _some_equal(rng, v, dtype):
    if np.size(v) == 0 or np.ndim(v) == 0:
        return v
    flips = rng.rand(*np.shape(v)) < 0.5
    return np.where(flips, np.ravel(v)[0], v)


def _nonzero(rng, v, dtype):
    r = np.round(v) if dtype.kind in "iub" else v
    return np.where(r == 0, 1, v)


def _some_zero(rng, v, dtype):
    return np.where(rng.rand(*np.shape(v)) < 0.5, 0, v)


rand_default = _gen(lambda r, s: r.randn(*s) * 3)
rand_positive = _gen(lambda r, s: r.rand(*s) * 2 + 1)
rand_small = _gen(lambda r, s: r.randn(*s) * 1e-3)
rand_small_positive = _gen(lambda r, s: r.rand(*s) * 2e-3)
rand_nonzero = _gen(lambda r, s: r.randn(*s) * 3, _nonzero)
rand_some_equal = _gen(lambda r, s: r.randn(*s) * 3, _some_equal)
rand_some_zero = _gen(lambda r, s: r.randn(*s) * 3, _some_zero)
rand_some_inf = _gen(lambda r, s: r.randn(*s) * 3,
                     lambda r, v, d: _special(r, v, d, [np.inf, -np.inf]))
rand_some_nan = _gen(lambda r, s: r.randn(*s) * 3,
                     lambda r, v, d: _special(r, v, d, [np.nan]))
rand_some_inf_and_nan = _gen(lambda r, s: r.randn(*s) * 3,
                             lambda r, v, d: _special(r, v, d, [np.inf, -np.inf, np.nan]))
rand_bool = _gen(lambda r, s: np.asarray(r.rand(*s) < 0.5).astype(float))
rand_not_small = _gen(lambda r, s: r.randn(*s) * 3 + np.sign(r.randn(*s)) * 3)


def rand_uniform(low=0.0, high=1.0):
    return _gen(lambda r, s: r.uniform(low, high, size=s))


def rand_int(low=0, high=8):
    def factory(rng):
        def make(shape, dtype):
            v = rng.randint(low, high, size=_shape(shape))
            return _to_dtype(v, shape, dtype)
        return make
    return factory


def rand_fullrange(rng):
    def make(shape, dtype):
        dtype = np.dtype(dtype)
        n = int(np.prod(_shape(shape), dtype=np.int64))
        bits = rng.randint(0, 256, size=n * dtype.itemsize).astype(np.uint8)
        out = bits.view(dtype).reshape(_shape(shape))
        if shape == PY:
            return out.item()
        return out[()] if shape == NPS else out
    return make


# ---------------------------------------------------------------------------------------
# comparisons (JAX's assertAllClose / _CheckAgainstNumpy / _CompileAndCheck)
# ---------------------------------------------------------------------------------------

_DEFAULT_TOL = {np.dtype(f16): 1e-3, np.dtype(f32): 1e-6, np.dtype(f64): 1e-12,
                np.dtype(c64): 1e-6, np.dtype(c128): 1e-12}


def tolerance(dtype, tol=None):
    """JAX's jtu.tolerance: a per-dtype spec read at ``dtype``, else the default."""
    dtype = np.dtype(dtype)
    if isinstance(tol, dict):
        tol = {np.dtype(k): v for k, v in tol.items()}.get(dtype)
    if tol is None:
        return _DEFAULT_TOL.get(dtype, 0)
    return tol


def traced(f, **kw):
    """``f`` through the tracer (autodiff's implementation), run by the reference
    interpreter."""
    return ad.jit(f, backend="interpret", **kw)


def assert_close(got, want, tol=1e-12, check_dtypes=False, err=""):
    gl, gt = tree_flatten(got)
    wl, wt = tree_flatten(want)
    assert len(gl) == len(wl), (err, gt, wt)
    for g, w in zip(gl, wl):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (err, g.shape, w.shape)
        if check_dtypes:
            assert g.dtype == w.dtype, (err, g.dtype, w.dtype)
        if w.dtype.kind in "biu" and g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=err)
        else:
            wide = np.complex128 if "c" in (g.dtype.kind, w.dtype.kind) else np.float64
            np.testing.assert_allclose(g.astype(wide), w.astype(wide), rtol=tol, atol=tol,
                                       equal_nan=True, err_msg=err)


def _compiled(f):
    """``ad.jit(f)`` whose calls run the Numba kernel: the first call starts the background
    compile, which is waited for before the value is returned."""
    j = ad.jit(f)

    def call(*args):
        j(*args)
        assert j.wait_compiled()
        out = j(*args)
        assert j.cache_info().compiled >= 1
        return out
    return call


def check_against_numpy(np_fn, ad_fn, args, tol=1e-12, check_dtypes=False, eager=True):
    """numpy's answer equals autodiff's, eagerly and traced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np_fn(*args)
    with warnings.catch_warnings():
        # numpy's own warnings (invalid value, divide by zero) on the eager path
        warnings.simplefilter("ignore", RuntimeWarning)
        if eager:
            assert_close(ad_fn(*args), want, tol, check_dtypes, "eager")
        assert_close(traced(ad_fn)(*args), want, tol, check_dtypes, "traced")


# =========================================================================================
# lax_numpy_operators_test.py: JAX_ONE_TO_ONE_OP_RECORDS and JAX_COMPOUND_OP_RECORDS
# =========================================================================================

class OpRecord(NamedTuple):
    name: str
    nargs: int
    dtypes: list
    shapes: list
    rng_factory: object
    grad: bool                  # JAX's diff_modes == ["rev"]
    test_name: str
    check_dtypes: bool
    tolerance: object
    inexact: bool
    kwargs: dict
    alias: str


def op_record(name, nargs, dtypes, shapes, rng_factory, diff_modes, test_name=None,
              check_dtypes=True, tolerance=None, inexact=False, kwargs=None, alias=None):
    return OpRecord(name, nargs, dtypes, shapes, rng_factory, "rev" in diff_modes,
                    test_name or name, check_dtypes, tolerance, inexact, kwargs or {}, alias)


JAX_ONE_TO_ONE_OP_RECORDS = [
    op_record("abs", 1, all_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("add", 2, all_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("ceil", 1, float_dtypes, all_shapes, rand_default, []),
    op_record("ceil", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_default, [],
              check_dtypes=False, test_name="ceil_int"),
    op_record("conj", 1, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("equal", 2, all_dtypes, all_shapes, rand_some_equal, []),
    op_record("exp", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True),
    op_record("fabs", 1, float_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("float_power", 2, inexact_dtypes, all_shapes, partial(_gen(
        lambda r, s: r.randn(*s))), ["rev"],
              tolerance={f32: 1e-3, f64: 1e-12, c64: 2e-4, c128: 1e-12},
              check_dtypes=False),
    op_record("floor", 1, float_dtypes, all_shapes, rand_default, []),
    op_record("floor", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_default, [],
              check_dtypes=False, test_name="floor_int"),
    op_record("greater", 2, all_dtypes, all_shapes, rand_some_equal, []),
    op_record("greater_equal", 2, all_dtypes, all_shapes, rand_some_equal, []),
    op_record("i0", 1, float_dtypes, all_shapes, rand_default, [], check_dtypes=False,
              tolerance={f16: 3e-3}),
    op_record("ldexp", 2, int_dtypes, all_shapes, rand_default, [], check_dtypes=False),
    op_record("less", 2, all_dtypes, all_shapes, rand_some_equal, []),
    op_record("less_equal", 2, all_dtypes, all_shapes, rand_some_equal, []),
    op_record("log", 1, number_dtypes, all_shapes, rand_positive, ["rev"], inexact=True),
    op_record("logical_and", 2, all_dtypes, all_shapes, rand_bool, []),
    op_record("logical_not", 1, all_dtypes, all_shapes, rand_bool, []),
    op_record("logical_or", 2, all_dtypes, all_shapes, rand_bool, []),
    op_record("logical_xor", 2, all_dtypes, all_shapes, rand_bool, []),
    op_record("maximum", 2, all_dtypes, all_shapes, rand_some_inf, []),
    op_record("minimum", 2, all_dtypes, all_shapes, rand_some_inf, []),
    op_record("multiply", 2, all_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("negative", 1, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("nextafter", 2, float_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance=0),
    op_record("spacing", 1, float_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance=0),
    op_record("not_equal", 2, all_dtypes, all_shapes, rand_some_equal, ["rev"]),
    op_record("array_equal", 2, number_dtypes, all_shapes, rand_some_equal, ["rev"]),
    op_record("array_equiv", 2, number_dtypes, all_shapes, rand_some_equal, ["rev"]),
    op_record("reciprocal", 1, inexact_dtypes, all_shapes, rand_default, []),
    op_record("subtract", 2, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("signbit", 1, default_dtypes + bool_dtypes, all_shapes, rand_some_inf_and_nan,
              ["rev"]),
    op_record("trunc", 1, float_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("trunc", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_some_inf_and_nan,
              [], check_dtypes=False, test_name="trunc_int"),
    op_record("sin", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True),
    op_record("cos", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True),
    op_record("tan", 1, inexact_dtypes + int_dtypes, all_shapes, rand_uniform(-1.5, 1.5),
              ["rev"], inexact=True),
    op_record("tan", 1, unsigned_dtypes, all_shapes, rand_uniform(0, 1.5), ["rev"],
              inexact=True, test_name="tan_unsigned"),
    op_record("sinh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True),
    op_record("cosh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True),
    op_record("tanh", 1, number_dtypes, all_shapes, rand_default, ["rev"],
              tolerance={f64: 1e-7, c128: 1e-7}, inexact=True),
    op_record("arcsin", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              tolerance={c128: 2e-15}),
    op_record("arccos", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True),
    op_record("arctan", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True),
    op_record("arctan2", 2, float_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              check_dtypes=False),
    op_record("arcsinh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance={c64: 2e-4, c128: 2e-14}),
    op_record("arccosh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance={c64: 2e-2, c128: 2e-12}),
    op_record("arctanh", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              tolerance={f64: 1e-9}),
    op_record("asin", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              tolerance={c128: 2e-15}, alias="arcsin"),
    op_record("acos", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              alias="arccos"),
    op_record("atan", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              alias="arctan"),
    op_record("atan2", 2, float_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              check_dtypes=False, alias="arctan2"),
    op_record("asinh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance={c64: 2e-4, c128: 2e-14}, alias="arcsinh"),
    op_record("acosh", 1, number_dtypes, all_shapes, rand_default, ["rev"], inexact=True,
              tolerance={c64: 2e-2, c128: 2e-12}, alias="arccosh"),
    op_record("atanh", 1, number_dtypes, all_shapes, rand_small, ["rev"], inexact=True,
              tolerance={f64: 1e-9}, alias="arctanh"),
]

JAX_COMPOUND_OP_RECORDS = [
    op_record("angle", 1, number_dtypes, all_shapes, rand_default, [], check_dtypes=False,
              inexact=True),
    op_record("angle", 1, number_dtypes, all_shapes, rand_default, [], check_dtypes=False,
              inexact=True, test_name="angle_deg", kwargs={"deg": True}),
    op_record("atleast_1d", 1, default_dtypes, all_shapes, rand_default, []),
    op_record("atleast_2d", 1, default_dtypes, all_shapes, rand_default, []),
    op_record("atleast_3d", 1, default_dtypes, all_shapes, rand_default, []),
    op_record("cbrt", 1, default_dtypes, all_shapes, rand_some_inf, ["rev"], inexact=True),
    op_record("conjugate", 1, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("deg2rad", 1, float_dtypes, all_shapes, rand_default, []),
    op_record("divide", 2, number_dtypes, all_shapes, rand_nonzero, ["rev"], inexact=True),
    op_record("divmod", 2, int_dtypes + float_dtypes, all_shapes, rand_nonzero, []),
    op_record("exp2", 1, number_dtypes, all_shapes, rand_default, ["rev"],
              tolerance={f16: 1e-2}, inexact=True),
    op_record("expm1", 1, number_dtypes, all_shapes, rand_positive, [],
              test_name="expm1_large", tolerance={f64: 1e-8}, inexact=True),
    op_record("expm1", 1, number_dtypes, all_shapes, rand_small_positive, [],
              tolerance={f64: 1e-8}, inexact=True),
    op_record("floor_divide", 2, default_dtypes + unsigned_dtypes, all_shapes, rand_nonzero,
              ["rev"]),
    op_record("fmin", 2, number_dtypes, all_shapes, rand_some_nan, []),
    op_record("fmax", 2, number_dtypes, all_shapes, rand_some_nan, []),
    op_record("fmod", 2, default_dtypes, all_shapes, rand_some_nan, []),
    op_record("heaviside", 2, default_dtypes, all_shapes, rand_default, [], inexact=True),
    op_record("hypot", 2, real_dtypes, all_shapes, rand_default, [], inexact=True),
    op_record("kron", 2, number_dtypes, nonempty_shapes, rand_default, []),
    op_record("outer", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("imag", 1, number_dtypes, all_shapes, rand_some_inf, []),
    op_record("iscomplex", 1, number_dtypes, all_shapes, rand_some_inf, []),
    op_record("isfinite", 1, inexact_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("isinf", 1, inexact_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("isnan", 1, inexact_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("isneginf", 1, float_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("isposinf", 1, float_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("isreal", 1, number_dtypes, all_shapes, rand_some_inf, []),
    op_record("isrealobj", 1, number_dtypes, all_shapes, rand_some_inf, []),
    op_record("log2", 1, number_dtypes, all_shapes, rand_positive, ["rev"], inexact=True),
    op_record("log10", 1, number_dtypes, all_shapes, rand_positive, ["rev"], inexact=True),
    op_record("log1p", 1, number_dtypes, all_shapes, rand_positive, [],
              test_name="log1p_large", tolerance={f64: 1e-12}, inexact=True),
    op_record("log1p", 1, number_dtypes, all_shapes, rand_small_positive, [],
              tolerance={f64: 1e-12}, inexact=True),
    op_record("logaddexp", 2, float_dtypes, all_shapes, rand_some_inf_and_nan, ["rev"],
              tolerance={f64: 1e-12}, inexact=True),
    op_record("logaddexp2", 2, float_dtypes, all_shapes, rand_some_inf_and_nan, ["rev"],
              tolerance={f16: 1e-2, f64: 2e-14}, inexact=True),
    op_record("polyval", 2, [d for d in number_dtypes if d not in (i8, u8)],
              nonempty_nonscalar_array_shapes, rand_default, [], check_dtypes=True,
              tolerance={f16: 2e-2, f64: 1e-12}),
    op_record("positive", 1, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("pow", 2, number_dtypes, all_shapes, rand_positive, ["rev"],
              tolerance={c128: 1e-14}, check_dtypes=False, alias="power"),
    op_record("power", 2, number_dtypes, all_shapes, rand_positive, ["rev"],
              tolerance={c128: 1e-14}, check_dtypes=False),
    op_record("rad2deg", 1, float_dtypes, all_shapes, rand_default, []),
    op_record("ravel", 1, all_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("real", 1, number_dtypes, all_shapes, rand_some_inf, []),
    op_record("remainder", 2, default_dtypes, all_shapes, rand_some_zero, [],
              tolerance={f16: 1e-2}),
    op_record("mod", 2, default_dtypes, all_shapes, rand_some_zero, []),
    op_record("modf", 1, float_dtypes, all_shapes, rand_default, []),
    op_record("modf", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_default, [],
              check_dtypes=False, test_name="modf_int"),
    op_record("rint", 1, inexact_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("rint", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_default, [],
              check_dtypes=False, test_name="rint_int"),
    op_record("sign", 1, number_dtypes, all_shapes, rand_some_inf_and_nan, []),
    op_record("copysign", 2, default_dtypes + unsigned_dtypes, all_shapes,
              rand_some_inf_and_nan, [], check_dtypes=False),
    op_record("sinc", 1, number_dtypes, all_shapes, rand_default, ["rev"],
              tolerance={c64: 1e-5}, inexact=True, check_dtypes=False),
    op_record("square", 1, number_dtypes, all_shapes, rand_default, ["rev"]),
    op_record("sqrt", 1, number_dtypes, all_shapes, rand_positive, ["rev"], inexact=True),
    op_record("transpose", 1, all_dtypes, all_shapes, rand_default, ["rev"],
              check_dtypes=False),
    op_record("true_divide", 2, all_dtypes, all_shapes, rand_nonzero, ["rev"], inexact=True),
    op_record("ediff1d", 3, [i32], all_shapes, rand_default, [], check_dtypes=False),
    op_record("unwrap", 1, float_dtypes, nonempty_nonscalar_array_shapes, rand_default,
              ["rev"], check_dtypes=False, tolerance={f16: 1e-1}),
    op_record("isclose", 2, all_dtypes, all_shapes, rand_small_positive, []),
    op_record("gcd", 2, int_dtypes_no_uint64, all_shapes, rand_default, []),
    op_record("lcm", 2, int_dtypes_no_uint64, all_shapes, rand_default, []),
    op_record("lcm", 2, [i8], all_shapes, rand_not_small, [], test_name="lcm_not_small"),
]

_UNARY_SHAPES = [(3, 4), PY, (2, 1, 4), NPS, (0, 4), (), (4,), (6,)]
_BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), (PY, (2, 3, 4)), ((4,), NPS),
                  ((0, 4), (0, 4)), ((2, 1, 4), (3, 4)), ((3, 4), PY), ((4,), (4,))]
_TERNARY_SHAPES = [((3, 4), (3,), (1,)), ((4,), PY, NPS), ((0,), (2,), ())]


def _valid_dtypes(shape, dtypes):
    return [d for d in dtypes if d in python_scalar_dtypes] if shape == PY else dtypes


def _op_cases(recs, ncases=8):
    """For each record, ``ncases`` (shapes, dtypes) pairs: JAX's shape table in rotation,
    the record's dtypes visited in the order of ``_PREFERENCE``, one mixed-dtype pair."""
    out = []
    for rec in recs:
        table = {1: [(s,) for s in _UNARY_SHAPES], 2: _BINARY_SHAPES,
                 3: _TERNARY_SHAPES}[rec.nargs]
        table = [ss for ss in table if builtins_all(s in rec.shapes or s == ()
                                                  and () in rec.shapes for s in ss)]
        pref = [d for d in _PREFERENCE if d in rec.dtypes]
        k = 0
        for i, shapes in enumerate(table):
            if k == ncases:
                break
            dts = []
            for j, s in enumerate(shapes):
                choices = [d for d in pref if d in _valid_dtypes(s, pref)]
                if not choices:
                    break
                shift = j if i == 1 else 0          # one mixed-dtype case
                dts.append(choices[(k + shift) % len(choices)])
            else:
                out.append(pytest.param(rec, shapes, tuple(dts),
                                        id=f"{rec.test_name}-{k}"))
                k += 1
    return out


def builtins_all(it):
    return all(it)


_GRAD_RNG = {"arccosh": rand_positive, "acosh": rand_positive, "cbrt": rand_positive,
             "float_power": rand_positive, "logaddexp": rand_uniform(-0.9, 0.9),
             "logaddexp2": rand_uniform(-0.9, 0.9), "floor_divide": rand_positive,
             # rand_small's 1e-3 scale puts arctan2 near its pole at the origin
             "arctan2": rand_default, "atan2": rand_default}
_NO_GRAD = {"not_equal", "array_equal", "array_equiv", "signbit", "nextafter", "spacing"}


def _np_reference(rec):
    np_op = getattr(np, rec.name) if hasattr(np, rec.name) else getattr(np, rec.alias)
    np_op = partial(np_op, **rec.kwargs)
    if not rec.inexact:
        return np_op

    def promoted(*args):
        # JAX's promote_like_jnp(inexact=True): integer operands are computed in float64
        args = [np.asarray(a).astype(f64) if np.asarray(a).dtype.kind in "biu" else a
                for a in args]
        return np_op(*args)
    return promoted


@pytest.mark.parametrize("rec,shapes,dtypes",
                         _op_cases(JAX_ONE_TO_ONE_OP_RECORDS + JAX_COMPOUND_OP_RECORDS))
def test_op(rec, shapes, dtypes):
    """JaxNumpyOperatorTests.testOp"""
    _check_op(rec, shapes, dtypes)


def _check_op(rec, shapes, dtypes):
    """numpy's value on the record's inputs, eagerly and traced; traced and eager result
    dtypes agree where JAX checks dtypes."""
    rng = rec.rng_factory(np.random.RandomState(_key(rec.test_name, shapes, dtypes)))
    args = [rng(s, d) for s, d in zip(shapes, dtypes)]
    ad_op = partial(getattr(anp, rec.name), **rec.kwargs)
    np_op = _np_reference(rec)
    raw = partial(getattr(np, rec.name) if hasattr(np, rec.name) else getattr(np, rec.alias),
                  **rec.kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            # the precision of the result: numpy's result dtype on the operands as given
            got_dtypes = [np.asarray(w).dtype for w in tree_flatten(raw(*args))[0]]
        except OverflowError:
            # a negative Python int with an unsigned array (NEP 50, as in JAX)
            with pytest.raises(OverflowError):
                ad_op(*args)
            return
    tol = max([tolerance(d, rec.tolerance) for d in list(dtypes) + got_dtypes
               if np.dtype(d).kind in "fc"] + [0])
    if rec.tolerance != 0:
        tol = max(tol, max([tolerance(d) for d in list(dtypes) + got_dtypes] + [0]) * 10)
    check_against_numpy(np_op, ad_op, args, tol=tol)
    int_in = builtins_all(np.dtype(d).kind not in "fc" for d in dtypes)
    if (rec.check_dtypes and len(set(dtypes)) == 1 and PY not in shapes
            and not (rec.inexact and int_in)):
        # traced and eager (numpy's) result dtypes agree (integer operands of an inexact
        # function: autodiff computes in float64 like JAX's x64 mode, numpy in the
        # smallest float holding them)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eager = ad_op(*args)
        for g, e in zip(tree_flatten(traced(ad_op)(*args))[0], tree_flatten(eager)[0]):
            assert np.asarray(g).dtype == np.asarray(e).dtype


_GRAD_RECS = [r for r in JAX_ONE_TO_ONE_OP_RECORDS + JAX_COMPOUND_OP_RECORDS
              if r.grad and r.name not in _NO_GRAD]


@pytest.mark.parametrize("rec", _GRAD_RECS, ids=lambda r: r.test_name)
def test_op_grad(rec):
    """JaxNumpyOperatorTests.testOp records with diff_modes=["rev"]: ``check_grads`` at
    order 2 in float64 (and complex128 where the record has complex dtypes)."""
    dts = [f64] + ([c128] if c128 in rec.dtypes else [])
    shapes = {1: [(2, 3)], 2: [(2, 3), (3,)], 3: [(4,), (2,), (1,)]}[rec.nargs]
    fn = partial(getattr(anp, rec.name), **rec.kwargs)
    for dt in dts:
        factory = _GRAD_RNG.get(rec.name, rec.rng_factory)
        rng = factory(np.random.RandomState(_key("grad", rec.test_name, dt)))
        args = tuple(rng(s, dt) for s in shapes)
        ad.check_grads(fn, args, order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------------------
# lax_numpy_test.py NumpyGradTests
# ---------------------------------------------------------------------------------------

GRAD_TEST_RECORDS = [
    # (op, nargs, order, rng_factory, dtypes, tol)
    (anp.arcsinh, 1, 2, rand_positive, [f64, c64], {c64: 2e-2}),
    (anp.arccosh, 1, 1, rand_positive, [f64, c64], {c64: 2e-2}),
    (anp.arctanh, 1, 2, rand_uniform(-0.9, 0.9), [f64, c64], {c64: 2e-2}),
    (anp.logaddexp, 2, 1, rand_uniform(-0.9, 0.9), [f64], 1e-4),
    (anp.logaddexp2, 2, 2, rand_uniform(-0.9, 0.9), [f64], 1e-4),
]
_GRAD_BASE_TOL = {f32: 1e-1, f64: 1e-3, c64: 1e-1, c128: 1e-3}


def _grad_cases():
    for op, nargs, order, factory, dts, tol in GRAD_TEST_RECORDS:
        for shapes in itertools.combinations_with_replacement([NPS, (), (4,), (3, 4)], nargs):
            for dt in dts:
                yield pytest.param(op, shapes, dt, order, factory, tol,
                                   id=f"{op.__name__}-{shapes}-{np.dtype(dt).name}")


@pytest.mark.parametrize("op,shapes,dtype,order,factory,tol", list(_grad_cases()))
def test_numpy_op_grad(op, shapes, dtype, order, factory, tol):
    """NumpyGradTests.testOpGrad"""
    rng = factory(np.random.RandomState(_key(op.__name__, shapes, dtype)))
    args = tuple(rng(s, dtype) for s in shapes)
    t = tolerance(dtype, tol) if isinstance(tol, dict) else tol
    t = max(t or 0, _GRAD_BASE_TOL[dtype])
    ad.check_grads(op, args, order=order, modes=("fwd", "rev"), atol=t, rtol=t)


@pytest.mark.parametrize("op,value,order", [
    (anp.arcsinh, 0.0, 2), (anp.arcsinh, 1000.0, 2), (anp.arccosh, 1000.0, 2),
    (anp.arctanh, 0.0, 2), (anp.sinc, 0.0, 1)])
def test_op_grad_special_value(op, value, order):
    """NumpyGradTests.testOpGradSpecialValue"""
    ad.check_grads(op, (value,), order=order, modes=("fwd", "rev"))


def test_sinc_at_zero():
    """NumpyGradTests.testSincAtZero: derivatives of sinc at 0 up to order 4, every mix of
    forward (jvp) and reverse (grad) mode, against the Taylor series."""
    def deriv(f):
        return lambda x: ad.jvp(f, (x,), (1.0,))[1]

    expected = {1: 0.0, 2: -np.pi ** 2 / 3, 3: 0.0, 4: np.pi ** 4 / 5}
    for order, want in expected.items():
        for ops in itertools.combinations_with_replacement([deriv, ad.grad], order):
            f = anp.sinc
            for o in ops:
                f = o(f)
            np.testing.assert_allclose(f(0.0), want, atol=1e-12, rtol=1e-12)
    np.testing.assert_allclose(traced(ad.grad(ad.grad(anp.sinc)))(0.0), expected[2],
                               rtol=1e-12)


def test_sinc_grad_array_input():
    """NumpyGradTests.testSincGradArrayInput"""
    x = np.arange(10.0)
    g = ad.grad(lambda x: anp.sinc(x).sum())(x)
    want = np.where(x == 0, 0.0, (np.cos(np.pi * x) * np.pi * x - np.sin(np.pi * x))
                    / (np.pi * np.where(x == 0, 1, x) ** 2))
    np.testing.assert_allclose(g, want, atol=1e-12)


def _np_logaddexp_c(a, b):
    return np.log(np.exp(a) + np.exp(b))


def _np_logaddexp2_c(a, b):
    return np.log2(np.exp2(a) + np.exp2(b))


@pytest.mark.parametrize("op,ref", [
    (anp.logaddexp, _np_logaddexp_c),
    (anp.logaddexp2, _np_logaddexp2_c)])
@pytest.mark.parametrize("shapes", [((), ()), ((4,), (3, 4)), (NPS, (4,)), ((3, 4), (3, 4))])
def test_grad_logaddexp_complex(op, ref, shapes):
    """NumpyGradTests.testGradLogaddexpComplex / testGradLogaddexp2Complex (numpy has no
    complex logaddexp: the reference is the closed form, on moderate values)"""
    rng = rand_default(np.random.RandomState(_key(op.__name__, shapes)))
    args = tuple(np.asarray(rng(s, c128)) for s in shapes)
    assert_close(traced(op)(*args), ref(*args), 1e-12)
    ad.check_grads(op, args, order=1, modes=("fwd", "rev"), atol=3e-2, rtol=3e-2)
    assert_close(op(*args), ref(*args), 1e-12)


@pytest.mark.parametrize("n", range(-4, 5))
@pytest.mark.parametrize("dtype", [f32, f64])
def test_grad_ldexp_frexp(n, dtype):
    """NumpyGradTests.testGradLdexp / testGradFrexp"""
    rng = rand_default(np.random.RandomState(_key("ldexp", n, dtype)))
    x = rng((10,), dtype)
    ad.check_grads(lambda x: anp.ldexp(x, n), (x,), order=1)
    # central differences must not step across a power of two: eps scales with x
    ad.check_grads(lambda x: anp.frexp(x)[0], (x * dtype(2.0 ** n),), order=1,
                   eps=1e-4 * 2.0 ** n)


def test_i0_grad():
    """JaxNumpyOperatorTests.testI0Grad"""
    assert ad.grad(anp.i0)(0.0) == 0.0
    assert traced(ad.grad(anp.i0))(0.0) == 0.0
    ad.check_grads(anp.i0, (np.array([-1.5, 0.3, 2.0]),), order=2)


# ---------------------------------------------------------------------------------------
# operator overloading on traced arrays
# ---------------------------------------------------------------------------------------

JAX_OPERATOR_OVERLOADS = [
    op_record("__add__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__sub__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__mul__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__eq__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__ne__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__lt__", 2, default_dtypes, all_shapes, rand_default, []),
    op_record("__le__", 2, default_dtypes, all_shapes, rand_default, []),
    op_record("__gt__", 2, default_dtypes, all_shapes, rand_default, []),
    op_record("__ge__", 2, default_dtypes, all_shapes, rand_default, []),
    op_record("__pos__", 1, number_dtypes, all_shapes, rand_default, []),
    op_record("__neg__", 1, number_dtypes, all_shapes, rand_default, []),
    op_record("__pow__", 2, inexact_dtypes, all_shapes, rand_positive, [],
              tolerance={f32: 2e-4, c64: 2e-4, c128: 1e-14}),
    op_record("__mod__", 2, default_dtypes, all_shapes, rand_nonzero, [],
              tolerance={f16: 1e-1}),
    op_record("__floordiv__", 2, default_dtypes, all_shapes, rand_nonzero, []),
    op_record("__truediv__", 2, number_dtypes, all_shapes, rand_nonzero, [], inexact=True),
    op_record("__abs__", 1, number_dtypes, all_shapes, rand_default, []),
    op_record("__invert__", 1, int_dtypes, all_shapes, rand_default, []),
    op_record("__lshift__", 2, int_dtypes_no_uint64, all_shapes, rand_int(high=8), []),
    op_record("__rshift__", 2, int_dtypes_no_uint64, all_shapes, rand_int(high=8), []),
    # JAX leaves these out of its table ("investigate these failures"); they hold here
    op_record("__and__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
    op_record("__or__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
    op_record("__xor__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
]

JAX_RIGHT_OPERATOR_OVERLOADS = [
    op_record("__radd__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__rsub__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__rmul__", 2, number_dtypes, all_shapes, rand_default, []),
    op_record("__rpow__", 2, inexact_dtypes, all_shapes, rand_positive, [],
              tolerance={f32: 2e-4, c64: 1e-3}),
    op_record("__rmod__", 2, default_dtypes, all_shapes, rand_nonzero, [],
              tolerance={f16: 1e-1}),
    op_record("__rfloordiv__", 2, default_dtypes, all_shapes, rand_nonzero, []),
    op_record("__rtruediv__", 2, number_dtypes, all_shapes, rand_nonzero, [], inexact=True),
    op_record("__rlshift__", 2, int_dtypes_no_uint64, all_shapes, rand_int(high=8), []),
    op_record("__rrshift__", 2, int_dtypes_no_uint64, all_shapes, rand_int(high=8), []),
    op_record("__rand__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
    op_record("__ror__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
    op_record("__rxor__", 2, int_dtypes + bool_dtypes, all_shapes, rand_fullrange, []),
]


def _opfn(name):
    """The ``operator`` function of a dunder name (``__and__`` -> ``operator.and_``)."""
    name = name.strip("_")
    return getattr(operator, name, None) or getattr(operator, name + "_")


def _fullrange_fix(rec, rng, shape, dtype):
    # rand_fullrange has no Python-scalar form of a small width: use rand_default there
    if shape == PY:
        return rand_default(rng)(shape, dtype)
    return rec.rng_factory(rng)(shape, dtype)


def _overload_tol(rec, dtypes):
    return max([tolerance(d, rec.tolerance) * (1 if rec.tolerance else 10)
                for d in dtypes] + [0])


@pytest.mark.parametrize("rec,shapes,dtypes", _op_cases(JAX_OPERATOR_OVERLOADS, 6))
def test_operator_overload(rec, shapes, dtypes):
    """JaxNumpyOperatorTests.testOperatorOverload: the operator on traced arrays equals
    numpy's operator on the same values."""
    rng = np.random.RandomState(_key(rec.name, shapes, dtypes))
    args = [_fullrange_fix(rec, rng, s, d) for s, d in zip(shapes, dtypes)]
    fun = _opfn(rec.name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np_args = [a if isinstance(a, (bool, int, float, complex)) else np.asarray(a)
                   for a in args]
        want = fun(*np_args)
    got = traced(fun)(*args)
    assert_close(got, want, _overload_tol(rec, dtypes))


@pytest.mark.parametrize("rec,shapes,dtypes", _op_cases(JAX_RIGHT_OPERATOR_OVERLOADS, 6))
def test_right_operator_overload(rec, shapes, dtypes):
    """JaxNumpyOperatorTests.testRightOperatorOverload: ``snd.__rop__(fst)`` on a traced
    ``snd``."""
    if shapes[1] == PY:
        pytest.skip("the reflected method is called on the array (JAX skips this too)")
    rng = np.random.RandomState(_key(rec.name, shapes, dtypes))
    args = [_fullrange_fix(rec, rng, s, d) for s, d in zip(shapes, dtypes)]
    fun = lambda fst, snd: getattr(snd, rec.name)(fst)        # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _opfn(rec.name[3:])(args[0], np.asarray(args[1]))
    got = traced(lambda snd: fun(args[0], snd))(args[1])
    assert_close(got, want, _overload_tol(rec, dtypes))
    got = traced(fun)(*args)
    assert_close(got, want, _overload_tol(rec, dtypes))


_BINARY_OVERLOADS = [r.name for r in JAX_OPERATOR_OVERLOADS if r.nargs == 2
                     and r.name != "__matmul__"]
_BINARY_ROVERLOADS = [r.name for r in JAX_RIGHT_OPERATOR_OVERLOADS if r.nargs == 2]


@pytest.mark.parametrize("name", [n for n in _BINARY_OVERLOADS if n not in ("__eq__", "__ne__")])
@pytest.mark.parametrize("othertype", [dict, set])
def test_operator_overload_errors(name, othertype):
    """JaxNumpyOperatorTests.testOperatorOverloadErrors: a traced array and a builtin
    collection that is no array raise TypeError (lists and tuples are array-likes to
    numpy, and to autodiff's tracers as well)."""
    other = othertype([(1, 2), (2, 3)]) if othertype is set else {1: 2}
    op = _opfn(name)

    def f(x):
        with pytest.raises(TypeError):
            op(x, other)
        return x
    traced(f)(np.array([[1, 2], [2, 3]]))


@pytest.mark.parametrize("name", _BINARY_ROVERLOADS)
@pytest.mark.parametrize("othertype", [dict, set])
def test_right_operator_overload_errors(name, othertype):
    """JaxNumpyOperatorTests.testRightOperatorOverloadErrors"""
    other = othertype([(1, 2), (2, 3)]) if othertype is set else {1: 2}
    op = _opfn(name[3:])

    def f(x):
        with pytest.raises(TypeError):
            op(other, x)
        return x
    traced(f)(np.array([[1, 2], [2, 3]]))


class _OverrideEverything:
    pass


class _OverrideNothing:
    pass


for _rec in JAX_OPERATOR_OVERLOADS + JAX_RIGHT_OPERATOR_OVERLOADS:
    if _rec.nargs == 2:
        setattr(_OverrideEverything, _rec.name, lambda self, other: self)
        setattr(_OverrideNothing, _rec.name, lambda self, other: NotImplemented)


@pytest.mark.parametrize("op_name,factory,dtype", [
    (r.name, r.rng_factory, d) for r in JAX_OPERATOR_OVERLOADS
    if r.nargs == 2 and r.name not in ("__eq__", "__ne__") for d in r.dtypes[:2]])
def test_binary_operator_defers(op_name, factory, dtype):
    """JaxNumpyOperatorTests.testBinaryOperatorDefers: a traced array gives way to an
    operand type that implements the operator, and raises TypeError with one that does
    not."""
    arg = factory(np.random.RandomState(_key(op_name, dtype)))((), dtype)
    op = getattr(operator, op_name)

    def f(x):
        other = _OverrideEverything()
        assert op(other, x) is other
        assert op(x, other) is other
        other = _OverrideNothing()
        with pytest.raises(TypeError):
            op(other, x)
        with pytest.raises(TypeError):
            op(x, other)
        return x
    traced(f)(arg)


def test_eq_ne_defer():
    """JaxNumpyOperatorTests.testBinaryOperatorDefers for ``==``/``!=``"""
    def f(x):
        other = _OverrideNothing()
        assert (x == other) is False and (other == x) is False
        assert (x != other) is True and (other != x) is True
        return x
    traced(f)(np.float64(1.0))


def test_matmul_overload():
    """JaxNumpyOperatorTests.testOperatorOverload for ``@`` (JAX's table leaves it out)"""
    rng = np.random.RandomState(_key("matmul"))
    for a_shape, b_shape, dt in [((3, 4), (4,), f64), ((2, 3, 4), (4, 2), c128),
                                 ((4,), (4, 3), i32)]:
        a, b = rand_default(rng)(a_shape, dt), rand_default(rng)(b_shape, dt)
        assert_close(traced(operator.matmul)(a, b), a @ b)
        assert_close(traced(lambda b: a @ b)(b), a @ b)
        assert_close(traced(lambda b: b.__rmatmul__(a))(b), a @ b)


def test_defer_to_named_tuple():
    """JaxNumpyOperatorTests.testDeferToNamedTuple"""
    class MyArray(NamedTuple):
        arr: object

        def __mul__(self, other):
            return MyArray(self.arr * other)

        def __rmul__(self, other):
            return MyArray(other * self.arr)

    a = MyArray(np.ones(4))
    b = np.ones(4)
    assert isinstance(ad.jit(operator.mul, backend="interpret")(a, b), MyArray)
    assert isinstance(ad.jit(operator.mul, backend="interpret")(b, a), MyArray)
    assert isinstance(traced(lambda b: a * b)(b), MyArray)
    assert isinstance(traced(lambda b: b * a)(b), MyArray)


# ---------------------------------------------------------------------------------------
# bitwise and shift records, and the operators' regression tests
# ---------------------------------------------------------------------------------------

JAX_BITWISE_OP_RECORDS = [
    op_record("bitwise_and", 2, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange, []),
    op_record("bitwise_invert", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange,
              [], alias="bitwise_not"),
    op_record("bitwise_not", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange, []),
    op_record("invert", 1, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange, []),
    op_record("bitwise_or", 2, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange, []),
    op_record("bitwise_xor", 2, int_dtypes + unsigned_dtypes, all_shapes, rand_fullrange, []),
    op_record("bitwise_count", 1, int_dtypes, all_shapes, rand_fullrange, []),
]


def _bitwise_compatible(x, y):
    """JAX's _dtypes_are_compatible_for_bitwise_ops (numpy refuses the other mixes)."""
    signed = lambda d: np.dtype(d).kind == "i"                 # noqa: E731
    width = lambda d: np.iinfo(d).bits                         # noqa: E731
    if width(x) > width(y):
        x, y = y, x
    return (signed(x) == signed(y) or (width(x) == 32 and width(y) == 32)
            or (width(x) == 32 and width(y) == 64 and signed(y)))


def _bitwise_cases():
    out = []
    for rec in JAX_BITWISE_OP_RECORDS:
        if rec.nargs == 1:
            pairs = [((s,), (d,)) for s, d in zip([(3, 4), NPS, (0, 4), (2, 1, 4), (4,)],
                                                  [i8, u16, i32, u64, i64])]
        else:
            dts = [(i8, i8), (u8, u32), (i32, u32), (i16, i64), (u64, u64), (i32, i32)]
            dts = [d for d in dts if _bitwise_compatible(*d)]
            shapes = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), NPS), ((0, 4), (4,)),
                      ((2, 3, 4), ()), ((3, 4), (3, 4))]
            pairs = list(zip(shapes, dts))
        out += [pytest.param(rec, s, d, id=f"{rec.name}-{i}") for i, (s, d) in enumerate(pairs)]
    return out


@pytest.mark.parametrize("rec,shapes,dtypes", _bitwise_cases())
def test_bitwise_op(rec, shapes, dtypes):
    """JaxNumpyOperatorTests.testBitwiseOp"""
    rng = rec.rng_factory(np.random.RandomState(_key(rec.name, shapes, dtypes)))
    args = [rng(s, d) for s, d in zip(shapes, dtypes)]
    np_op = getattr(np, rec.name) if hasattr(np, rec.name) else getattr(np, rec.alias)
    check_against_numpy(np_op, getattr(anp, rec.name), args, check_dtypes=True)


@pytest.mark.parametrize("shape", [(3, 4), (), (0,), (2, 1, 4)])
@pytest.mark.parametrize("dtype", int_dtypes + unsigned_dtypes)
def test_bitwise_count(shape, dtype):
    """JaxNumpyOperatorTests.testBitwiseCount"""
    x = rand_fullrange(np.random.RandomState(_key("count", shape, dtype)))(shape, dtype)
    check_against_numpy(np.bitwise_count, anp.bitwise_count, [x], check_dtypes=True)


_SHIFT_OPS = [anp.left_shift, anp.bitwise_left_shift, anp.right_shift,
              anp.bitwise_right_shift]


def _shift_cases():
    dts = [(i8, i8), (u8, i32), (i16, u16), (i32, i64), (u32, u8), (i64, i64), (u16, u32)]
    shapes = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((4,), (4,)),
              ((0, 4), (4,)), ((2, 3, 4), (3, 4)), ((3, 4), (1,)), ((4,), (3, 4))]
    for op in _SHIFT_OPS:
        for i, (s, d) in enumerate(zip(shapes, dts)):
            yield pytest.param(op, s, d, id=f"{op.__name__}-{i}")


@pytest.mark.parametrize("op,shapes,dtypes", list(_shift_cases()))
def test_shift_op_against_numpy(op, shapes, dtypes):
    """JaxNumpyOperatorTests.testShiftOpAgainstNumpy: shifts below the bit width, every
    value of the shifted dtype."""
    dtype, shift_dtype = dtypes
    rng = np.random.RandomState(_key(op.__name__, shapes, dtypes))
    info, shift_info = np.iinfo(dtype), np.iinfo(shift_dtype)
    x = rng.randint(info.min, int(info.max) + 1, size=shapes[0], dtype=np.int64
                    if info.max < 2 ** 63 else np.uint64).astype(dtype)
    s = rng.randint(0, max(info.bits, shift_info.bits), size=shapes[1]).astype(shift_dtype)
    check_against_numpy(getattr(np, op.__name__), op, [x, s], check_dtypes=True)


@pytest.mark.parametrize("shape", [(3, 4), (), NPS, PY, (0,)])
@pytest.mark.parametrize("dtype", complex_dtypes)
def test_sign_complex(shape, dtype):
    """JaxNumpyOperatorTests.testSignComplex"""
    dtype = c128 if shape == PY else dtype
    x = rand_default(np.random.RandomState(_key("sign", shape, dtype)))(shape, dtype)
    check_against_numpy(np.sign, anp.sign, [x], tol=1e-6 if dtype == c64 else 1e-14)


@pytest.mark.parametrize("shape", [(3, 4), (), (0,)])
@pytest.mark.parametrize("dtype", default_dtypes)
def test_spacing_integer_inputs(shape, dtype):
    """JaxNumpyOperatorTests.testSpacingIntegerInputs: integers are spaced in the float
    dtype autodiff computes them in."""
    x = rand_int(-64, 64)(np.random.RandomState(_key("sp", shape, dtype)))(shape, dtype)
    computation_dtype = traced(anp.spacing)(x).dtype
    np_func = lambda x: np.spacing(np.array(x).astype(computation_dtype))    # noqa: E731
    assert_close(traced(anp.spacing)(x), np_func(x), tol=0, check_dtypes=True)


@pytest.mark.parametrize("dtype", float_dtypes)
def test_spacing_subnormals(dtype):
    """JaxNumpyOperatorTests.testSpacingSubnormals, plus the extremes (the largest float,
    where numpy's answer overflows to inf, ±inf, nan, -0.0)."""
    zero, inf = np.array(0, dtype=dtype), np.array(np.inf, dtype=dtype)
    x = [zero]
    for _ in range(5):
        x.append(np.nextafter(x[-1], -inf))
    x = x[::-1]
    for _ in range(5):
        x.append(np.nextafter(x[-1], inf))
    fi = np.finfo(dtype)
    x = np.array(x + [fi.max, -fi.max, np.inf, -np.inf, np.nan, -0.0, -2.0, 3.0], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.spacing(x)
    assert_close(traced(anp.spacing)(x), want, tol=0, check_dtypes=True)
    assert_close(ad.jit(anp.spacing)(x), want, tol=0, check_dtypes=True)


@pytest.mark.parametrize("dtype", float_dtypes)
def test_float_divmod_floor_divide_zero(dtype):
    """JaxNumpyOperatorTests.test_float_divmod_zero / test_float_floor_divide_zero"""
    args = [np.arange(-2, 3, dtype=dtype), np.zeros(5, dtype=dtype)]
    check_against_numpy(np.divmod, anp.divmod, args, check_dtypes=True)
    check_against_numpy(np.floor_divide, anp.floor_divide, args, check_dtypes=True)
    check_against_numpy(np.remainder, anp.remainder, args, check_dtypes=True)


@pytest.mark.parametrize("dtype", float_dtypes)
def test_heaviside_nan(dtype):
    """JaxNumpyOperatorTests.test_heaviside_nan"""
    x = np.array([np.nan, -np.inf, -1, 0, 1, np.inf], dtype=dtype)
    check_against_numpy(np.heaviside, anp.heaviside, [x[:, None], x[None, :]],
                        check_dtypes=True)


def test_ops_under_numba_jit():
    """A handful of the operator records through the Numba ``ad.jit``."""
    rng = np.random.RandomState(_key("numba-ops"))
    x = rng.randn(3, 4)
    y = rng.rand(3, 4) + 0.5
    fns = {
        "arctan2": lambda x, y: anp.arctan2(x, y),
        "logaddexp": lambda x, y: anp.logaddexp(x, y),
        "divmod": lambda x, y: anp.divmod(x, y),
        "float_power": lambda x, y: anp.float_power(y, x),
        "hypot": lambda x, y: anp.hypot(x, y),
        "copysign": lambda x, y: anp.copysign(y, x),
    }
    for name, f in fns.items():
        assert_close(_compiled(f)(x, y), f(x, y), 1e-12, err=name)
    assert_close(_compiled(anp.sinc)(x), np.sinc(x), 1e-12)
    assert_close(_compiled(ad.grad(lambda x: anp.sum(anp.arcsinh(x))))(x),
                 1 / np.sqrt(1 + x * x), 1e-12)


# =========================================================================================
# lax_numpy_reducers_test.py
# =========================================================================================

class RedRecord(NamedTuple):
    name: str
    dtypes: list
    shapes: list
    rng_factory: object
    inexact: bool
    tolerance: object


def red_record(name, dtypes, shapes, rng_factory, inexact=False, tolerance=None):
    return RedRecord(name, dtypes, shapes, rng_factory, inexact, tolerance)


JAX_REDUCER_RECORDS = [
    red_record("mean", number_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("prod", all_dtypes, all_shapes, rand_small_positive),
    red_record("sum", all_dtypes, all_shapes, rand_default),
    red_record("nanmean", inexact_dtypes, nonempty_shapes, rand_some_nan, inexact=True),
    red_record("nanprod", all_dtypes, all_shapes, rand_some_nan),
    red_record("nansum", number_dtypes, all_shapes, rand_some_nan),
]

JAX_REDUCER_INITIAL_RECORDS = [
    red_record("prod", all_dtypes, all_shapes, rand_small_positive),
    red_record("sum", all_dtypes, all_shapes, rand_default),
    red_record("max", all_dtypes, all_shapes, rand_default),
    red_record("min", all_dtypes, all_shapes, rand_default),
    red_record("nanprod", inexact_dtypes, all_shapes, rand_small_positive),
    red_record("nansum", inexact_dtypes, all_shapes, rand_default),
    red_record("nanmax", inexact_dtypes, all_shapes, rand_default),
    red_record("nanmin", inexact_dtypes, all_shapes, rand_default),
]

JAX_REDUCER_WHERE_NO_INITIAL_RECORDS = [
    red_record("all", bool_dtypes, all_shapes, rand_some_zero),
    red_record("any", bool_dtypes, all_shapes, rand_some_zero),
    red_record("mean", all_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("var", all_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("std", all_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("nanmean", inexact_dtypes, nonempty_shapes, rand_default, inexact=True,
               tolerance={f16: 3e-3}),
    red_record("nanvar", inexact_dtypes, nonempty_shapes, rand_default, inexact=True,
               tolerance={f16: 3e-3}),
    red_record("nanstd", inexact_dtypes, nonempty_shapes, rand_default, inexact=True,
               tolerance={f16: 1e-3}),
]

JAX_REDUCER_NO_DTYPE_RECORDS = [
    red_record("all", all_dtypes, all_shapes, rand_some_zero),
    red_record("any", all_dtypes, all_shapes, rand_some_zero),
    red_record("max", all_dtypes, nonempty_shapes, rand_default),
    red_record("min", all_dtypes, nonempty_shapes, rand_default),
    red_record("var", all_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("std", all_dtypes, nonempty_shapes, rand_default, inexact=True),
    red_record("nanmax", all_dtypes, nonempty_shapes, rand_some_nan),
    red_record("nanmin", all_dtypes, nonempty_shapes, rand_some_nan),
    red_record("nanvar", all_dtypes, nonempty_shapes, rand_some_nan, inexact=True),
    red_record("nanstd", all_dtypes, nonempty_shapes, rand_some_nan, inexact=True),
    red_record("ptp", number_dtypes, nonempty_shapes, rand_default),
]

JAX_REDUCER_PROMOTE_INT_RECORDS = [
    red_record("prod", all_dtypes, all_shapes, rand_small_positive),
    red_record("sum", all_dtypes, all_shapes, rand_default),
]

# (shape, axis, keepdims) in rotation: JAX's shapes, every axis kind
_RED_LAYOUTS = [((3, 4), 0, False), ((2, 3, 4), -1, True), ((2, 3, 4), None, False),
                (PY, None, False), ((3, 1), 1, True), (NPS, None, True), ((0, 4), 0, False),
                ((), None, False), ((3, 0), -1, True), ((4,), 0, True), ((2, 1, 4), 1, False),
                ((1, 4), None, True)]


def _to_inexact(dt):
    dt = np.dtype(dt)
    return dt if dt.kind in "fc" else np.dtype(f64)


def _reducer_output_dtype(name, input_dtype, promote_integers=True):
    """JAX's rule (x64 mode): sums and products of bools and small integers in the default
    (unsigned) integer; everything else keeps its dtype."""
    input_dtype = np.dtype(input_dtype)
    if name in ("sum", "prod", "nansum", "nanprod"):
        if input_dtype == np.bool_:
            input_dtype = np.dtype(i64)
        if promote_integers and input_dtype.kind in "iu" and input_dtype.itemsize < 8:
            return np.dtype(u64 if input_dtype.kind == "u" else i64)
    return input_dtype


def _red_cases(recs, ncases=6, extra=None):
    out = []
    for rec in recs:
        pref = [d for d in _PREFERENCE if d in rec.dtypes]
        k = 0
        for shape, axis, keepdims in _RED_LAYOUTS:
            if k == ncases:
                break
            if shape not in rec.shapes and not (shape == () and () in rec.shapes):
                continue
            dts = _valid_dtypes(shape, pref)
            if not dts:
                continue
            dtype = dts[k % len(dts)]
            params = dict(shape=shape, axis=axis, keepdims=keepdims, dtype=dtype)
            if extra is not None:
                params.update(extra(rec, k, pref))
            out.append(pytest.param(rec, params, id=f"{rec.name}-{k}"))
            k += 1
    return out


def _red_args(rec, p):
    rng = rec.rng_factory(np.random.RandomState(_key(rec.name, sorted(p.items(), key=str))))
    return rng(p["shape"], p["dtype"])


def _red_tol(*dtypes, spec=None, inexact=False):
    spec = spec or {}
    base = {np.dtype(f16): 1e-2, np.dtype(f32): 1e-4, np.dtype(c64): 1e-4,
            np.dtype(f64): 1e-10, np.dtype(c128): 1e-10}
    dtypes = [_to_inexact(d) if inexact else d for d in dtypes if d is not None]
    vals = [base.get(np.dtype(d), 0) for d in dtypes]
    vals += [tolerance(d, spec) for d in dtypes if d is not None and isinstance(spec, dict)
             and np.dtype(d) in {np.dtype(k) for k in spec}]
    return max(vals + [0])


def _np_call(np_op, x, inexact, **kw):
    x = np.asarray(x)
    if inexact:
        x = x.astype(_to_inexact(x.dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np_op(x, **kw)


def _out_dtype_choice(rec, k, pref):
    choices = [None] + [d for d in pref if d not in unsigned_dtypes]
    return {"out_dtype": choices[(k * 3) % len(choices)]}


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_RECORDS, 8, _out_dtype_choice))
def test_reducer(rec, p):
    """JaxNumpyReducerTests.testReducer (with ``dtype=``)"""
    x = _red_args(rec, p)
    axis, keepdims, out_dtype = p["axis"], p["keepdims"], p["out_dtype"]
    t = out_dtype
    if t is None:
        t = _reducer_output_dtype(rec.name, _to_inexact(p["dtype"]) if rec.inexact
                                  else np.asarray(x).dtype)

    def np_fun(x):
        return _np_call(getattr(np, rec.name), x, rec.inexact, axis=axis, dtype=t,
                        keepdims=keepdims)

    def ad_fun(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(anp, rec.name)(x, axis, dtype=out_dtype, keepdims=keepdims)
    tol = _red_tol(p["dtype"], out_dtype)
    if out_dtype == f16:
        tol = 1e-1
    check_against_numpy(np_fun, ad_fun, [x], tol=tol)


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_NO_DTYPE_RECORDS, 8))
def test_reducer_no_dtype(rec, p):
    """JaxNumpyReducerTests.testReducerNoDtype"""
    x = _red_args(rec, p)
    axis, keepdims = p["axis"], p["keepdims"]
    np_fun = lambda x: _np_call(getattr(np, rec.name), x, rec.inexact, axis=axis,  # noqa
                                keepdims=keepdims)
    ad_fun = lambda x: getattr(anp, rec.name)(x, axis, keepdims=keepdims)          # noqa
    check_against_numpy(np_fun, ad_fun, [x],
                        tol=_red_tol(p["dtype"], spec=rec.tolerance, inexact=rec.inexact))


@pytest.mark.parametrize("rec", JAX_REDUCER_INITIAL_RECORDS, ids=lambda r: r.name)
def test_reducer_bad_initial(rec):
    """JaxNumpyReducerTests.testReducerBadInitial"""
    arr = np.ones((2, 3, 4))
    initial = np.zeros((1, 2, 3))
    op = getattr(anp, rec.name)
    with pytest.raises(ValueError, match=r"initial value must be a scalar"):
        traced(lambda a: op(a, axis=-1, initial=initial))(arr)


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_INITIAL_RECORDS, 8,
                                             lambda r, k, pr: {"initial": k % 2}))
def test_reducer_initial(rec, p):
    """JaxNumpyReducerTests.testReducerInitial"""
    x = _red_args(rec, p)
    axis, keepdims, initial = p["axis"], p["keepdims"], p["initial"]

    def np_fun(x):
        res = _np_call(getattr(np, rec.name), x, rec.inexact, axis=axis, keepdims=keepdims,
                       initial=initial)
        return np.asarray(res).astype(_reducer_output_dtype(rec.name, np.asarray(x).dtype))
    ad_fun = lambda x: getattr(anp, rec.name)(x, axis, keepdims=keepdims,  # noqa: E731
                                              initial=initial)
    check_against_numpy(np_fun, ad_fun, [x], tol=_red_tol(p["dtype"]))


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_PROMOTE_INT_RECORDS, 10,
                                             lambda r, k, pr: {"initial": k % 2,
                                                               "promote_integers": k % 3 != 0}))
def test_reducer_promote_int(rec, p):
    """JaxNumpyReducerTests.testReducerPromoteInt"""
    x = _red_args(rec, p)
    axis, keepdims, initial = p["axis"], p["keepdims"], p["initial"]
    promote = p["promote_integers"]

    def np_fun(x):
        res = _np_call(getattr(np, rec.name), x, False, axis=axis, keepdims=keepdims,
                       initial=initial)
        return np.asarray(res).astype(_reducer_output_dtype(rec.name, np.asarray(x).dtype,
                                                            promote))

    def ad_fun(x):
        return getattr(anp, rec.name)(x, axis, keepdims=keepdims, initial=initial,
                                      promote_integers=promote)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np_fun(x)
        assert_close(traced(ad_fun)(x), want, _red_tol(p["dtype"]), check_dtypes=True)
        assert_close(ad_fun(x), want, _red_tol(p["dtype"]), check_dtypes=True)


def _zero_dim_cases():
    out = []
    for rec in JAX_REDUCER_INITIAL_RECORDS:
        pref = [d for d in _PREFERENCE if d in rec.dtypes]
        k = 0
        for shape in empty_array_shapes:
            for axis in range(-len(shape), len(shape)):
                if shape[axis] >= 1:
                    out.append(pytest.param(rec, dict(shape=shape, axis=axis, keepdims=k % 2,
                                                      dtype=pref[k % len(pref)]),
                                            id=f"{rec.name}-{k}"))
                    k += 1
    return out


@pytest.mark.parametrize("rec,p", _zero_dim_cases())
def test_reducer_no_initial_zero_dims(rec, p):
    """JaxNumpyReducerTests.testReducerNoInitialZeroDims: reducing a non-empty axis of an
    empty array needs no identity"""
    x = _red_args(rec, p)
    axis, keepdims = p["axis"], bool(p["keepdims"])

    def np_fun(x):
        res = _np_call(getattr(np, rec.name), x, False, axis=axis, keepdims=keepdims)
        return np.asarray(res).astype(_reducer_output_dtype(rec.name, np.asarray(x).dtype))
    ad_fun = lambda x: getattr(anp, rec.name)(x, axis, keepdims=keepdims)          # noqa
    check_against_numpy(np_fun, ad_fun, [x])


def _where_shape(shape, k):
    """One of JAX's _compatible_shapes: a trailing part of ``shape``."""
    if shape in (PY, NPS) or shape == ():
        return ()
    opts = [shape[n:] for n in range(len(shape) + 1)]
    return opts[k % len(opts)]


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_INITIAL_RECORDS, 8,
                                             lambda r, k, pr: {"initial": k % 2, "k": k}))
def test_reducer_where(rec, p):
    """JaxNumpyReducerTests.testReducerWhere"""
    x = _red_args(rec, p)
    axis, keepdims, initial = p["axis"], p["keepdims"], p["initial"]
    wrng = np.random.RandomState(_key("where", rec.name, p["k"]))
    where = rand_bool(wrng)(_where_shape(p["shape"], p["k"]), b_)

    def np_fun(x):
        res = _np_call(getattr(np, rec.name), x, False, axis=axis, keepdims=keepdims,
                       initial=initial, where=where)
        return np.asarray(res).astype(_reducer_output_dtype(rec.name, np.asarray(x).dtype))
    ad_fun = lambda x: getattr(anp, rec.name)(x, axis, keepdims=keepdims,   # noqa: E731
                                              initial=initial, where=where)
    # numpy's nanmax/nanmin of a Python scalar take another path than of an array (an
    # all-masked scalar is nan there, the initial value for a 0-d array): eager is numpy's
    eager = not (rec.name.startswith("nan") and p["shape"] == PY)
    check_against_numpy(np_fun, ad_fun, [x], tol=_red_tol(p["dtype"]), eager=eager)


@pytest.mark.parametrize("rec", JAX_REDUCER_INITIAL_RECORDS, ids=lambda r: r.name)
def test_reducer_where_non_boolean_error_initial(rec):
    """JaxNumpyReducerTests.testReducerWhereNonBooleanErrorInitial"""
    dtype = rec.dtypes[0]
    x = np.zeros((10,), dtype)
    where = np.ones(10, dtype=int)
    func = getattr(anp, rec.name)
    with pytest.raises(ValueError, match="where must be None or a boolean"):
        traced(lambda x: func(x, where=where, initial=np.array(0, dtype=dtype)))(x)


@pytest.mark.parametrize("rec", JAX_REDUCER_WHERE_NO_INITIAL_RECORDS, ids=lambda r: r.name)
def test_reducer_where_non_boolean_error_no_initial(rec):
    """JaxNumpyReducerTests.testReducerWhereNonBooleanErrorNoInitial"""
    x = np.zeros((10,), rec.dtypes[0])
    where = np.ones(10, dtype=int)
    func = getattr(anp, rec.name)
    with pytest.raises(ValueError, match="where must be None or a boolean"):
        traced(lambda x: func(x, where=where))(x)


@pytest.mark.parametrize("rec,p", _red_cases(JAX_REDUCER_WHERE_NO_INITIAL_RECORDS, 8,
                                             lambda r, k, pr: {"k": k}))
def test_reducer_where_no_initial(rec, p):
    """JaxNumpyReducerTests.testReducerWhereNoInitial"""
    x = _red_args(rec, p)
    axis, keepdims = p["axis"], p["keepdims"]
    wrng = np.random.RandomState(_key("where", rec.name, p["k"]))
    where = rand_bool(wrng)(_where_shape(p["shape"], p["k"]), b_)
    np_fun = lambda x: _np_call(getattr(np, rec.name), x, rec.inexact, axis=axis,  # noqa
                                keepdims=keepdims, where=where)
    ad_fun = lambda x: getattr(anp, rec.name)(x, axis, keepdims=keepdims,   # noqa: E731
                                              where=where)
    check_against_numpy(np_fun, ad_fun, [x],
                        tol=_red_tol(p["dtype"], spec=rec.tolerance, inexact=rec.inexact))


def test_reduction_of_out_of_bounds_axis():
    """JaxNumpyReducerTests.testReductionOfOutOfBoundsAxis"""
    with pytest.raises(ValueError):
        traced(lambda x: anp.sum(x, axis=2))(np.ones((3, 4)))


def test_reduction_with_repeated_axis_error():
    """JaxNumpyReducerTests.testReductionWithRepeatedAxisError"""
    with pytest.raises(ValueError, match=r"duplicate value in 'axis'"):
        traced(lambda x: anp.sum(x, (0, 0)))(np.arange(3))


def _average_cases():
    out = []
    k = 0
    for shape, dtype in [((3, 4), f64), ((2, 3, 4), f32), ((4,), c128), ((), f64),
                         (NPS, i32), (PY, f64), ((3, 1), i16), ((2, 1, 4), c64)]:
        nd = len(_shape(shape))
        for axis in list(range(-nd, nd))[:2] + [None, tuple(range(nd))]:
            wshapes = ([None, _shape(shape)] if axis is None or nd == 1
                       or isinstance(axis, tuple) else [None, (_shape(shape)[axis],),
                                                         _shape(shape)])
            for wshape in wshapes:
                out.append(pytest.param(shape, dtype, axis, wshape, k % 2 == 0, k % 3 == 0,
                                        id=f"average-{k}"))
                k += 1
    return out


@pytest.mark.parametrize("shape,dtype,axis,weights_shape,returned,keepdims", _average_cases())
def test_average(shape, dtype, axis, weights_shape, returned, keepdims):
    """JaxNumpyReducerTests.testAverage"""
    rng = rand_default(np.random.RandomState(_key("avg", shape, dtype, axis, weights_shape)))
    kw = dict(returned=returned, keepdims=keepdims)
    tol = {np.dtype(f32): 1e-5, np.dtype(c64): 1e-5}.get(np.dtype(dtype), 1e-12)
    if np.dtype(dtype).kind in "iu":
        tol = 1e-12
    def inexact(x):
        x = np.asarray(x)
        return x.astype(_to_inexact(x.dtype))
    if weights_shape is None:
        args = [rng(shape, dtype)]
        np_fun = lambda x: np.average(inexact(x), axis, **kw)                        # noqa
        ad_fun = lambda x: anp.average(x, axis, **kw)                                # noqa
    else:
        args = [rng(shape, dtype), rng(weights_shape, dtype)]
        if np.sum(args[1]) == 0:
            pytest.skip("zero weights (JAX skips ZeroDivisionError cases)")
        np_fun = lambda x, w: np.average(inexact(x), axis, w, **kw)                  # noqa
        ad_fun = lambda x, w: anp.average(x, axis, w, **kw)                          # noqa
    check_against_numpy(np_fun, ad_fun, args, tol=tol)


@pytest.mark.parametrize("shape,axis", [((2, 3, 4), (1, 2)), ((2, 3, 4), (2, 0)),
                                        ((2, 3, 4), (0, 1, 2)), ((2, 3, 4), (2, 0, 1)),
                                        ((2, 3, 4), (2, 1, 0)), ((2, 3, 4, 5), (3, 0)),
                                        ((2, 3, 4, 5), (3, 0, 2, 1))])
def test_average_nd_weights(shape, axis):
    """JaxNumpyReducerTests.testAverageNDWeights: weights over several axes, in the order
    the axes are named"""
    weights_shape = tuple(shape[ax] for ax in axis)
    rng = rand_default(np.random.RandomState(_key("avgnd", shape, axis)))
    args = [rng(shape, f64), rng(weights_shape, f64)]
    np_fun = lambda x, w: np.average(x, axis, w)            # noqa: E731
    ad_fun = lambda x, w: anp.average(x, axis, w)           # noqa: E731
    check_against_numpy(np_fun, ad_fun, args, tol=1e-12)
    ad.check_grads(ad_fun, args, order=1, modes=("fwd", "rev"))


def _std_var_cases():
    out = []
    k = 0
    ddof_corrections = [(0, None), (1, None), (1, 0), (0, 0), (0, 1), (0, 2)]
    dtypes = [(f64, f64), (f32, f32), (i32, f64), (c128, c128), (c128, f64), (b_, f32),
              (u8, c64), (f16, f32), (c64, c128), (i64, f16)]
    for fname in ("var", "std"):
        for shape in [(5,), (10, 5)]:
            for axis in [None, 0, -1]:
                dtype, out_dtype = dtypes[k % len(dtypes)]
                ddof, correction = ddof_corrections[k % len(ddof_corrections)]
                out.append(pytest.param(fname, shape, dtype, out_dtype, axis, ddof, correction,
                                        k % 2 == 0, id=f"{fname}-{k}"))
                k += 1
    return out


@pytest.mark.parametrize("fname,shape,dtype,out_dtype,axis,ddof,correction,keepdims",
                         _std_var_cases())
def test_std_or_var(fname, shape, dtype, out_dtype, axis, ddof, correction, keepdims):
    """JaxNumpyReducerTests.testStdOrVar"""
    np_fn, ad_fn = getattr(np, fname), getattr(anp, fname)
    x = rand_default(np.random.RandomState(_key(fname, shape, dtype, axis)))(shape, dtype)
    ad_fun = partial(ad_fn, dtype=out_dtype, axis=axis, ddof=ddof, correction=correction,
                     keepdims=keepdims)
    if np.dtype(dtype).kind == "c" and np.dtype(out_dtype).kind != "c":
        with pytest.raises(ValueError):
            traced(ad_fun)(x)
        return
    if correction is not None and ddof != 0:
        with pytest.raises(ValueError):
            traced(ad_fun)(x)
        return

    def np_fun(x):
        kw = {"ddof": ddof} if correction is None else {"ddof": ddof, "correction": correction}
        return np_fn(x, dtype=out_dtype, axis=axis, keepdims=keepdims, **kw).astype(out_dtype)
    tol = {np.dtype(f16): 1e-1, np.dtype(f32): 1e-3, np.dtype(c64): 1e-3}.get(
        np.dtype(out_dtype), 1e-10)
    check_against_numpy(np_fun, ad_fun, [x], tol=tol)


@pytest.mark.parametrize("fname", ["var", "std"])
@pytest.mark.parametrize("size", [0, 1, pytest.param(2, marks=pytest.mark.xfail(
    strict=True, reason="by design: numpy's value (inf when the sum of squares is positive "
    "and ddof >= n), the same eagerly and traced; JAX returns nan"))])
def test_std_or_var_large_ddof_returns_nan(fname, size):
    """JaxNumpyReducerTests.testStdOrVarLargeDdofReturnsNan"""
    x = np.arange(size)
    f = getattr(anp, fname)
    for ddof in (size, size + 1, size + 2):
        assert np.isnan(traced(lambda x: f(x, ddof=ddof))(x))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert np.isnan(f(x, ddof=ddof))


def _nanvar_cases():
    dtypes = [(f64, f64), (f32, f32), (i32, f64), (c128, c128), (c128, f64), (b_, f32),
              (f16, f32), (c64, c128), (i16, f64)]
    out = []
    k = 0
    for shape in [(5,), (10, 5)]:
        for axis in [None, 0, -1]:
            for ddof in (0, 1, 2):
                if (k % 2) and shape == (5,):
                    k += 1
                    continue
                dtype, out_dtype = dtypes[k % len(dtypes)]
                out.append(pytest.param(shape, dtype, out_dtype, axis, ddof, k % 2 == 0,
                                        id=f"nanvar-{k}"))
                k += 1
    return out


@pytest.mark.parametrize("shape,dtype,out_dtype,axis,ddof,keepdims", _nanvar_cases())
def test_nan_var(shape, dtype, out_dtype, axis, ddof, keepdims):
    """JaxNumpyReducerTests.testNanVar"""
    x = rand_some_nan(np.random.RandomState(_key("nanvar", shape, dtype, axis, ddof)))(
        shape, dtype)
    ad_fun = partial(anp.nanvar, dtype=out_dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    if np.dtype(dtype).kind == "c" and np.dtype(out_dtype).kind != "c":
        with pytest.raises(ValueError):
            traced(ad_fun)(x)
        return
    np_fun = lambda x: np.nanvar(x, dtype=out_dtype, axis=axis, ddof=ddof,  # noqa: E731
                                 keepdims=keepdims).astype(out_dtype)
    # numpy subtracts the mean in the input's dtype, autodiff in out_dtype
    tol = builtins_max({np.dtype(f16): 1e-1, np.dtype(f32): 1e-3, np.dtype(c64): 1e-3}.get(
        np.dtype(d), 1e-10) for d in (dtype, out_dtype))
    check_against_numpy(np_fun, ad_fun, [x], tol=tol)


def builtins_max(it):
    return max(it)


def test_nan_std_grad():
    """JaxNumpyReducerTests.testNanStdGrad"""
    x = np.arange(5.0)
    x[0] = np.nan
    y = ad.grad(anp.nanvar)(x)
    np.testing.assert_allclose(y, [0.0, -0.75, -0.25, 0.25, 0.75], atol=1e-15)
    np.testing.assert_allclose(traced(ad.grad(anp.nanvar))(x), y, atol=1e-15)
    z = ad.grad(anp.nanstd)(x)
    assert np.isnan(z).sum() == 0
    np.testing.assert_allclose(z, y / (2 * np.sqrt(np.nanvar(x))), atol=1e-15)


def _with_mean_cases():
    layouts = [((5,), None), ((5,), 0), ((5,), -1), ((10, 5), None), ((10, 5), 0),
               ((10, 5), 1), ((10, 5), -1), ((10, 5), (0, 1)), ((5, 4, 3), (0, 2)),
               ((5, 4, 3), (1, -1))]
    dtypes = [f64, f32, c128, i32, i8, c64, i64, f16]
    out = []
    k = 0
    for name in ("var", "std", "nanvar", "nanstd"):
        for shape, axis in layouts:
            out.append(pytest.param(name, shape, axis, dtypes[k % len(dtypes)], k % 2,
                                    (k // 2) % 2 == 0, id=f"{name}-{k}"))
            k += 1
    return out


@pytest.mark.parametrize("name,shape,axis,dtype,ddof,keepdims", _with_mean_cases())
def test_reducer_with_mean(name, shape, axis, dtype, ddof, keepdims):
    """JaxNumpyReducerTests.testReducerWithMean: var/std/nanvar/nanstd with ``mean=``"""
    rng = np.random.RandomState(_key("wmean", name, shape, axis, dtype))
    x = (rand_some_nan if "nan" in name else rand_default)(rng)(shape, dtype)
    mean_shape = np.mean(np.zeros(shape), axis=axis, keepdims=True).shape
    m = rand_default(rng)(mean_shape, _to_inexact(dtype))

    def np_fun(x, m):
        x = x.astype(_to_inexact(x.dtype))
        return getattr(np, name)(x, axis=axis, ddof=ddof, keepdims=keepdims, mean=m)

    def ad_fun(x, m):
        return getattr(anp, name)(x, axis=axis, ddof=ddof, keepdims=keepdims, mean=m)
    tol = {np.dtype(f16): 1e-1, np.dtype(f32): 1e-3, np.dtype(c64): 1e-3}.get(
        np.dtype(dtype), 1e-10)
    check_against_numpy(np_fun, ad_fun, [x, m], tol=tol)
    if np.dtype(dtype) == f64 and "nan" not in name:
        ad.check_grads(ad_fun, (x, m), order=2)


def _cov_cases():
    out = []
    k = 0
    for shape in [(5,), (10, 5), (5, 10)]:
        for dtype in [f64, i32, c128, f32]:
            for rowvar in (True, False):
                y_dtype = [None, dtype][k % 2]
                if y_dtype is None:
                    y_shape = None
                elif len(shape) == 1:
                    y_shape = shape
                elif rowvar or shape[0] == 1:
                    y_shape = [(1, shape[-1]), (2, shape[-1]), (5, shape[-1])][k % 3]
                else:
                    y_shape = [(shape[0], 1), (shape[0], 2), (shape[0], 5)][k % 3]
                out.append(pytest.param(shape, dtype, y_shape, y_dtype, rowvar,
                                        [None, 2, 3][k % 3], k % 2 == 1, k % 4 < 2,
                                        k % 3 == 0, id=f"cov-{k}"))
                k += 1
    return out


@pytest.mark.parametrize("shape,dtype,y_shape,y_dtype,rowvar,ddof,bias,fweights,aweights",
                         _cov_cases())
def test_cov(shape, dtype, y_shape, y_dtype, rowvar, ddof, bias, fweights, aweights):
    """JaxNumpyReducerTests.testCov"""
    rng = rand_default(np.random.RandomState(_key("cov", shape, dtype, y_shape, rowvar)))
    wrng = rand_positive(np.random.RandomState(_key("covw", shape)))
    wdtype = np.real(np.zeros((), dtype)).dtype
    wshape = shape[-1:] if rowvar or shape[0] == 1 else shape[:1]
    args = [rng(shape, dtype), rng(y_shape, y_dtype) if y_dtype else None,
            wrng(wshape, int) if fweights else None,
            wrng(wshape, wdtype) if aweights else None]
    kwargs = dict(rowvar=rowvar, ddof=ddof, bias=bias)
    np_fun = lambda m, y, f, a: np.cov(m, y, fweights=f, aweights=a, **kwargs)     # noqa
    ad_fun = lambda m, y, f, a: anp.cov(m, y, fweights=f, aweights=a, **kwargs)    # noqa
    tol = 1e-5 if np.dtype(dtype) == f32 else 1e-12
    check_against_numpy(np_fun, ad_fun, args, tol=tol)


@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 5)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_empty_cov(shape, rowvar):
    """JaxNumpyReducerTests.testEmptyCov"""
    x = np.zeros(shape)
    check_against_numpy(partial(np.cov, rowvar=rowvar), partial(anp.cov, rowvar=rowvar), [x])


@pytest.mark.parametrize("shape", [(1, 3), (3, 1)])
@pytest.mark.parametrize("rowvar", [True, False])
def test_cov_transpose_behavior(shape, rowvar):
    """JaxNumpyReducerTests.testCovTransposeBehavior (numpy 2.2's rule)"""
    x = rand_default(np.random.RandomState(_key("covT", shape, rowvar)))(shape, f64)
    check_against_numpy(partial(np.cov, rowvar=rowvar, ddof=0),
                        partial(anp.cov, rowvar=rowvar, ddof=0), [x])


def test_cov_dtype():
    """JaxNumpyReducerTests.testCovDtype (float32 in place of bfloat16)"""
    x = np.arange(5)
    assert traced(lambda x: anp.cov(x, dtype="float32"))(x).dtype == np.float32
    with pytest.raises(ValueError, match="dtype must be a subclass of float or complex"):
        traced(lambda x: anp.cov(x, dtype=int))(x)


def _quantile_cases():
    ops = [("percentile", 100.0), ("quantile", 1.0), ("nanpercentile", 100.0),
           ("nanquantile", 1.0)]
    layouts = [((7,), None), ((6, 7), None), ((47, 7), 0), ((47, 7), ()), ((4, 101), 1),
               ((4, 47, 7), (1, 2)), ((4, 47, 7), (0, 2)), ((4, 47, 7), (1, 0, 2))]
    methods = ["linear", "lower", "higher", "nearest", "midpoint"]
    q_shapes = [NPS, PY, (1,), (4,)]
    a_dtypes = [f64, f32, i32, f16, i8, i64]
    out = []
    k = 0
    for op, qmax in ops:
        for a_shape, axis in layouts:
            out.append(pytest.param(op, qmax, a_shape, axis, a_dtypes[k % len(a_dtypes)],
                                    q_shapes[k % len(q_shapes)], k % 2 == 0,
                                    methods[k % len(methods)], id=f"{op}-{k}"))
            k += 1
    return out


@pytest.mark.parametrize("op,qmax,a_shape,axis,a_dtype,q_shape,keepdims,method",
                         _quantile_cases())
def test_quantile(op, qmax, a_shape, axis, a_dtype, q_shape, keepdims, method):
    """JaxNumpyReducerTests.testQuantile (q in float32, as JAX's)"""
    rng = np.random.RandomState(_key(op, a_shape, axis, a_dtype, q_shape, method))
    a = rand_some_nan(rng)(a_shape, a_dtype)
    q = rand_uniform(0.0, qmax)(rng)(q_shape, f32 if q_shape != PY else f64)
    np_fun = lambda a, q: getattr(np, op)(a, q, axis=axis, keepdims=keepdims,  # noqa: E731
                                          method=method)
    ad_fun = partial(getattr(anp, op), axis=axis, keepdims=keepdims, method=method)
    tol = {np.dtype(f16): 4e-2, np.dtype(f32): 2e-4}.get(np.dtype(a_dtype), 5e-6)
    check_against_numpy(np_fun, ad_fun, [a, q], tol=tol)


def test_percentile_precision():
    """JaxNumpyReducerTests.testPercentilePrecision"""
    x = np.float64([1, 2, 3, 4, 7, 10])
    assert anp.percentile(x, 50) == 3.5
    assert traced(lambda x: anp.percentile(x, 50))(x) == 3.5


@pytest.mark.parametrize("op", ["median", "nanmedian"])
@pytest.mark.parametrize("a_shape,axis,a_dtype,keepdims", [
    ((7,), None, f64, False), ((6, 7), None, f32, True), ((47, 7), 0, i32, False),
    ((4, 101), 1, f64, True), ((4, 101), 1, i8, False), ((6, 7), None, f16, False)])
def test_median(op, a_shape, axis, a_dtype, keepdims):
    """JaxNumpyReducerTests.testMedian"""
    rng = np.random.RandomState(_key(op, a_shape, axis, a_dtype))
    a = (rand_default if op == "median" else rand_some_nan)(rng)(a_shape, a_dtype)
    np_fun = lambda a: getattr(np, op)(a, axis=axis, keepdims=keepdims)        # noqa: E731
    ad_fun = partial(getattr(anp, op), axis=axis, keepdims=keepdims)
    tol = {np.dtype(f16): 4e-2, np.dtype(f32): 2e-4}.get(np.dtype(a_dtype), 5e-6)
    check_against_numpy(np_fun, ad_fun, [a], tol=tol)


def test_mean_f16_accumulates_wide():
    """JaxNumpyReducerTests.test_f16_mean: a float16 mean accumulates in a wider type"""
    x = np.full(100_000, 1e-5, dtype=np.float16)
    expected = np.mean(x.astype("float64")).astype(np.float16)
    assert_close(traced(anp.mean)(x), expected, tol=0, check_dtypes=True)
    assert_close(anp.mean(x), expected, tol=0, check_dtypes=True)


def test_mean_std_of_int8():
    """JaxNumpyReducerTests.testMeanLargeArray / testStdLargeArray (smaller: the values,
    with and without ``where=True``)"""
    x = np.ones((16, 32, 8), dtype="int8")
    for f, want in ((anp.mean, 1.0), (anp.std, 0.0)):
        assert traced(f)(x) == want
        assert traced(lambda x: f(x, where=True))(x) == want


def _cumulative_cases():
    out = []
    k = 0
    dts = [(f64, None), (i32, f64), (b_, i32), (c128, c128), (f32, None), (i8, i16),
           (u8, u32), (None, None), (i16, b_), (f64, c128)]
    for name in ("cumulative_sum", "cumulative_prod"):
        for shape, axis in [((4,), 0), ((4,), None), ((3, 4), 0), ((3, 4), -1),
                            ((2, 3, 4), 1), ((0,), None), ((0, 4), 1), ((), 0), (NPS, 0)]:
            dtype, out_dtype = dts[k % len(dts)]
            out.append(pytest.param(name, shape, axis, dtype, out_dtype, k % 2 == 0,
                                    id=f"{name}-{k}"))
            k += 1
    return out


@pytest.mark.parametrize("name,shape,axis,dtype,out_dtype,include_initial",
                         _cumulative_cases())
def test_cumulative_reduction(name, shape, axis, dtype, out_dtype, include_initial):
    """JaxNumpyReducerTests.testCumulativeSum / testCumulativeProd"""
    rng = rand_some_zero(np.random.RandomState(_key(name, shape, axis, dtype)))
    x = np.asarray(rng(shape, dtype or f64))
    if out_dtype in unsigned_dtypes:
        x = 10 * np.abs(x)
    kwargs = dict(axis=axis, dtype=out_dtype, include_initial=include_initial)
    np_fun = lambda x: getattr(np, name)(x, **kwargs)              # noqa: E731
    ad_fun = lambda x: getattr(anp, name)(x, **kwargs)             # noqa: E731
    if np.ndim(x) == 0:
        with pytest.raises(ValueError, match="The input must be non-scalar"):
            traced(ad_fun)(x)
        return
    if np.ndim(x) > 1 and axis is None:
        with pytest.raises(ValueError, match=r"The input array has rank \d*, however"):
            traced(ad_fun)(x)
        return
    check_against_numpy(np_fun, ad_fun, [x], tol=1e-12, check_dtypes=True)


@pytest.mark.parametrize("shape", [(), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum_errors(shape, include_initial):
    """JaxNumpyReducerTests.testCumulativeSumErrors"""
    x = np.ones(shape)
    f = lambda x: anp.cumulative_sum(x, include_initial=include_initial)   # noqa: E731
    if len(shape) == 0:
        with pytest.raises(ValueError, match=r"The input must be non-scalar to take"):
            traced(f)(x)
    else:
        with pytest.raises(ValueError, match=r"The input array has rank \d*, however"):
            traced(f)(x)


def test_cumulative_sum_bool():
    """JaxNumpyReducerTests.testCumulativeSumBool"""
    f = lambda x: anp.cumulative_sum(x, axis=-1, dtype=np.bool_)            # noqa: E731
    x = np.array([[0.1], [0.1], [0.0]])
    np.testing.assert_array_equal(traced(f)(x), np.array([[True], [True], [False]]))
    np.testing.assert_array_equal(f(x), np.array([[True], [True], [False]]))


_NUMPY_INT_PROMOTION = pytest.mark.xfail(
    strict=True, reason="by design: numpy's cumsum of a small integer accumulates in int64, "
    "eagerly and traced alike; JAX keeps the input's integer dtype")


@pytest.mark.parametrize("dtype,out_dtype", [
    pytest.param(d, o, marks=_NUMPY_INT_PROMOTION if o is None and d in (i8, i32) else ())
    for d in [bool, np.float32, np.int8, np.int32]
    for o in [None, bool, np.float32, np.int8, np.int32]])
def test_cumsum_boolean(dtype, out_dtype):
    """JaxNumpyReducerTests.test_cumsum_boolean"""
    x = np.array([-1, 0, 1], dtype=dtype)
    expected_dtype = out_dtype or (dtype if dtype != bool else int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.cumsum(x, dtype=out_dtype).astype(expected_dtype)
    assert_close(traced(partial(anp.cumsum, dtype=out_dtype))(x), want, check_dtypes=True)
    assert_close(anp.cumsum(x, dtype=out_dtype), want, check_dtypes=True)


@pytest.mark.parametrize("opname", ["quantile", "nanquantile", "percentile", "nanpercentile"])
@pytest.mark.parametrize("shape,axis,keepdims", [((10,), 0, False), ((4, 3, 5), -1, True),
                                                 ((2, 3, 4, 5), None, False),
                                                 ((4, 3, 5), 0, False)])
@pytest.mark.parametrize("dtype", [f32, f64])
def test_weighted_quantile(opname, shape, axis, keepdims, dtype):
    """JaxNumpyReducerTests.testWeightedQuantile (method='inverted_cdf')"""
    rng = np.random.RandomState(_key(opname, shape, axis, dtype))
    data = (rand_some_nan if "nan" in opname else rand_default)(rng)(shape, dtype)
    q = np.array([0.25, 0.5, 0.75], dtype=dtype) * (100.0 if "percentile" in opname else 1.0)
    weights = rand_positive(rng)(shape, dtype)
    kw = dict(axis=axis, method="inverted_cdf", keepdims=keepdims)
    np_fun = lambda d, q, w: getattr(np, opname)(d, q, weights=w, **kw)    # noqa: E731
    ad_fun = lambda d, q, w: getattr(anp, opname)(d, q, weights=w, **kw)   # noqa: E731
    check_against_numpy(np_fun, ad_fun, [data, q, weights], tol=1e-5 if dtype == f32 else 1e-12)


# ---------------------------------------------------------------------------------------
# gradients of the reductions (float64, check_grads at order 2 where smooth)
# ---------------------------------------------------------------------------------------

def _distinct(shape, seed):
    """Values far apart (max/min/median/quantile are smooth there)."""
    rng = np.random.RandomState(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.7 + rng.uniform(-0.2, 0.2, n) - n / 3).reshape(shape)


def _with_nan(shape, seed):
    x = _distinct(shape, seed)
    x.flat[1] = np.nan
    return x


_W = np.array([[True, False, True, True], [False, True, True, True],
               [True, True, False, True]])
_GRAD_REDUCERS = [
    ("sum", lambda x: anp.sum(x, axis=0, keepdims=True), _distinct, 2),
    ("sum_where_initial", lambda x: anp.sum(x, axis=1, where=_W, initial=1.5), _distinct, 2),
    ("prod", lambda x: anp.prod(x, axis=-1), _distinct, 2),
    ("prod_where", lambda x: anp.prod(x, axis=0, where=_W, initial=2.0), _distinct, 2),
    ("max", lambda x: anp.max(x, axis=1), _distinct, 2),
    ("min_where", lambda x: anp.min(x, axis=0, where=_W, initial=50.0), _distinct, 2),
    ("mean", lambda x: anp.mean(x, axis=(0, 1)), _distinct, 2),
    ("mean_where", lambda x: anp.mean(x, axis=1, where=_W), _distinct, 2),
    ("var", lambda x: anp.var(x, axis=0, ddof=1), _distinct, 2),
    ("var_where", lambda x: anp.var(x, axis=1, where=_W), _distinct, 2),
    ("std", lambda x: anp.std(x, axis=1, keepdims=True), _distinct, 2),
    ("std_correction", lambda x: anp.std(x, correction=1), _distinct, 2),
    ("nansum", lambda x: anp.nansum(x, axis=0), _with_nan, 2),
    ("nanprod", lambda x: anp.nanprod(x, axis=1), _with_nan, 2),
    ("nanmax", lambda x: anp.nanmax(x, axis=0), _with_nan, 2),
    ("nanmin", lambda x: anp.nanmin(x), _with_nan, 2),
    ("nanmean", lambda x: anp.nanmean(x, axis=1), _with_nan, 2),
    ("nanvar", lambda x: anp.nanvar(x, axis=0, ddof=1), _with_nan, 2),
    ("nanstd", lambda x: anp.nanstd(x, axis=1), _with_nan, 2),
    ("ptp", lambda x: anp.ptp(x, axis=0), _distinct, 2),
    ("average", lambda x: anp.average(x, axis=1, weights=np.arange(1.0, 5.0)), _distinct, 2),
    ("average_returned", lambda x: anp.average(x, weights=x * x + 1, returned=True),
     _distinct, 2),
    ("median", lambda x: anp.median(x, axis=0), _distinct, 2),
    ("nanmedian", lambda x: anp.nanmedian(x, axis=1), _with_nan, 2),
    ("quantile", lambda x: anp.quantile(x, np.array([0.1, 0.5, 0.8]), axis=1), _distinct, 2),
    ("percentile_midpoint", lambda x: anp.percentile(x, 35.0, method="midpoint"),
     _distinct, 2),
    ("nanquantile", lambda x: anp.nanquantile(x, 0.3, axis=0), _with_nan, 2),
    ("cumsum", lambda x: anp.cumsum(x, axis=1), _distinct, 2),
    ("cumprod", lambda x: anp.cumprod(x, axis=0), _distinct, 2),
    ("cumulative_sum", lambda x: anp.cumulative_sum(x, axis=1, include_initial=True),
     _distinct, 2),
    ("cumulative_prod", lambda x: anp.cumulative_prod(x, axis=0, include_initial=True),
     _distinct, 2),
    ("nancumsum", lambda x: anp.nancumsum(x, axis=1), _with_nan, 2),
    ("nancumprod", lambda x: anp.nancumprod(x, axis=1), _with_nan, 2),
    ("cov", lambda x: anp.cov(x), _distinct, 2),
    ("cov_weights", lambda x: anp.cov(x, rowvar=False, aweights=np.arange(1.0, 4.0)),
     _distinct, 2),
]


@pytest.mark.parametrize("name,fn,make,order", _GRAD_REDUCERS, ids=[r[0] for r in
                                                                    _GRAD_REDUCERS])
def test_reducer_grad(name, fn, make, order):
    """Derivatives of the reductions against central differences (the reducers file
    checks values only; JAX's lax_autodiff_test checks the underlying reduce_* rules)."""
    x = make((3, 4), _key(name) % 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(x)
    assert_close(traced(fn)(x), want, 1e-12)
    if make is _with_nan:
        # the nan entry moves nothing: check the others (with the nan held fixed)
        nan_at = np.isnan(x)

        def g(y):
            return fn(anp.where(nan_at, np.nan, y))
        x = np.where(nan_at, 0.0, x)
        ad.check_grads(g, (x,), order=order, modes=("fwd", "rev"))
        assert not np.isnan(ad.grad(lambda y: anp.sum(g(y)))(x)).any()
    else:
        ad.check_grads(fn, (x,), order=order, modes=("fwd", "rev"))


def test_reducers_under_numba_jit():
    """A handful of reductions through the Numba ``ad.jit``, values and a gradient."""
    x = _distinct((3, 4), 7)
    cases = {
        "sum_where": (lambda x: anp.sum(x, axis=1, where=_W, initial=1.0),
                      lambda x: np.sum(x, axis=1, where=_W, initial=1.0)),
        "var_ddof": (lambda x: anp.var(x, axis=0, ddof=1), lambda x: np.var(x, 0, ddof=1)),
        "nanstd": (lambda x: anp.nanstd(x, axis=1), lambda x: np.nanstd(x, axis=1)),
        "cumulative_prod": (lambda x: anp.cumulative_prod(x, axis=1, include_initial=True),
                            lambda x: np.cumulative_prod(x, axis=1, include_initial=True)),
        "average_nd": (lambda x: anp.average(x, (1, 0), np.ones((4, 3))),
                       lambda x: np.average(x, (1, 0), np.ones((4, 3)))),
    }
    for name, (f, ref) in cases.items():
        assert_close(_compiled(f)(x), ref(x), 1e-12, err=name)
    g = _compiled(ad.grad(lambda x: anp.std(x, axis=0).sum()))(x)
    assert_close(g, ad.grad(lambda x: anp.std(x, axis=0).sum())(x), 1e-12)


# =========================================================================================
# lax_numpy_ufuncs_test.py
# =========================================================================================

def scalar_add(x, y):
    return x + y


def scalar_mul(x, y):
    return x * y


def scalar_sub(x, y):
    return x - y


@pytest.mark.parametrize("op", ["add", "multiply", "subtract", "maximum", "logaddexp",
                                "hypot"])
@pytest.mark.parametrize("method", ["reduce", "accumulate", "outer", "at", "reduceat"])
def test_binary_ufunc_methods(method, op):
    """LaxNumpyUfuncTests.test_binary_ufunc_reduce / _accumulate / _outer / _at /
    _reduceat (values of ``jnp.<op>.<method>`` against numpy's, eager and traced)"""
    x = np.arange(1.0, 7.0).reshape(2, 3) / 2
    args = {"reduce": (x,), "accumulate": (x,), "outer": (x[0], x[1]),
            "at": (x.ravel(), np.array([0, 0, 2]), 1.0), "reduceat": (x.ravel(),)}
    kw = {"reduceat": {"indices": [0, 2, 2, 5]}}.get(method, {})
    npu, adu = getattr(np, op), getattr(anp, op)
    if method == "at":
        want = np.array(args["at"][0])
        npu.at(want, *args["at"][1:])
    else:
        want = getattr(npu, method)(*args[method], **kw)
    assert_close(getattr(adu, method)(*args[method], **kw), want)
    assert_close(traced(lambda *a: getattr(adu, method)(*a, **kw))(*args[method]), want)


@pytest.mark.parametrize("func,identity", [(scalar_add, 0), (scalar_mul, 1),
                                           (scalar_sub, None)])
def test_frompyfunc_call_traced(func, identity):
    """LaxNumpyUfuncTests.test_frompyfunc_call, traced: ``frompyfunc`` of a scalar function
    applied to traced arrays"""
    uf = anp.frompyfunc(func, nin=2, nout=1, identity=identity)
    x, y = np.arange(1.0, 4.0), np.arange(2.0, 5.0)
    assert_close(traced(uf)(x, y), func(x, y))


@pytest.mark.parametrize("func,nin,nout,identity", [(scalar_add, 2, 1, 0),
                                                    (scalar_mul, 2, 1, 1),
                                                    (scalar_sub, 2, 1, None)])
def test_frompyfunc_eager(func, nin, nout, identity):
    """LaxNumpyUfuncTests.test_frompyfunc_properties / _call / _outer / _reduce /
    _accumulate on plain arrays (``nargs`` is numpy's, counting the outputs too; JAX's
    is ``nin``)"""
    uf = anp.frompyfunc(func, nin=nin, nout=nout, identity=identity)
    assert (uf.nin, uf.nout, uf.identity, uf.nargs) == (nin, nout, identity, nin + nout)
    x = np.arange(1.0, 13.0).reshape(4, 3)
    np.testing.assert_allclose(uf(x, x[0]).astype(float), func(x, x[0]))
    np.testing.assert_allclose(uf.outer(x[0], x[:, 0]).astype(float),
                               func(x[0][:, None], x[:, 0][None, :]))
    np.testing.assert_allclose(uf.accumulate(x, axis=0).astype(float),
                               np.frompyfunc(func, 2, 1).accumulate(x, axis=0).astype(float))


# the traced spellings of the ufunc methods: reduce -> the reductions, accumulate -> the
# cumulative functions, at -> the .at[] updates, outer -> broadcasting
_UFUNC_EQUIVALENTS = [
    ("add.reduce", lambda x: np.add.reduce(x, axis=0), lambda x: anp.sum(x, axis=0)),
    ("multiply.reduce", lambda x: np.multiply.reduce(x, axis=1),
     lambda x: anp.prod(x, axis=1)),
    ("maximum.reduce", lambda x: np.maximum.reduce(x, axis=None),
     lambda x: anp.max(x, axis=None)),
    ("minimum.reduce_where", lambda x: np.minimum.reduce(x, axis=0, where=_W, initial=9.0),
     lambda x: anp.min(x, axis=0, where=_W, initial=9.0)),
    ("add.reduce_where_initial", lambda x: np.add.reduce(x, axis=1, where=_W, initial=2.0),
     lambda x: anp.sum(x, axis=1, where=_W, initial=2.0)),
    ("logaddexp.reduce", lambda x: np.logaddexp.reduce(x, axis=1),
     lambda x: ad.scipy.special.logsumexp(x, axis=1)),
    ("add.accumulate", lambda x: np.add.accumulate(x, axis=1), lambda x: anp.cumsum(x, 1)),
    ("multiply.accumulate", lambda x: np.multiply.accumulate(x, axis=0),
     lambda x: anp.cumprod(x, 0)),
    ("add.outer", lambda x: np.add.outer(x[0], x[:, 1]),
     lambda x: anp.add(x[0][:, None], x[:, 1][None, :])),
    ("multiply.outer", lambda x: np.multiply.outer(x[0], x[1]),
     lambda x: anp.outer(x[0], x[1])),
]


def _np_at(op, x, idx, *vals):
    x = np.array(x)
    op.at(x, idx, *vals)
    return x


_UFUNC_AT = [
    ("add.at", lambda x: _np_at(np.add, x, np.array([0, 2, 0, 5]), 1.5),
     lambda x: x.at[np.array([0, 2, 0, 5])].add(1.5)),
    ("multiply.at", lambda x: _np_at(np.multiply, x, np.array([1, 1, 3]), 2.0),
     lambda x: x.at[np.array([1, 1, 3])].multiply(2.0)),
    ("maximum.at", lambda x: _np_at(np.maximum, x, np.array([0, 4]), 0.5),
     lambda x: x.at[np.array([0, 4])].max(0.5)),
    ("negative.at", lambda x: _np_at(np.negative, x, np.array([2, 3])),
     lambda x: x.at[np.array([2, 3])].apply(anp.negative)),
]


@pytest.mark.parametrize("name,np_fn,ad_fn", _UFUNC_EQUIVALENTS,
                         ids=[c[0] for c in _UFUNC_EQUIVALENTS])
def test_ufunc_method_equivalents(name, np_fn, ad_fn):
    """LaxNumpyUfuncTests.test_binary_ufunc_reduce(_where)(_initial) / _accumulate /
    _outer: numpy's ufunc method against its traced spelling, values and gradients"""
    x = _distinct((3, 4), _key(name) % 1000) / 4
    check_against_numpy(np_fn, ad_fn, [x], tol=1e-12)
    ad.check_grads(ad_fn, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name,np_fn,ad_fn", _UFUNC_AT, ids=[c[0] for c in _UFUNC_AT])
def test_ufunc_at_equivalents(name, np_fn, ad_fn):
    """LaxNumpyUfuncTests.test_unary_ufunc_at / test_binary_ufunc_at (repeated indices
    accumulate, as numpy's unbuffered ``at``)"""
    x = np.linspace(-1.0, 2.0, 6)
    assert_close(traced(ad_fn)(x), np_fn(x), 1e-12)
    # .at[] is a method of traced arrays (eager arrays are numpy's): differentiate the jit
    ad.check_grads(traced(ad_fn), (x,), order=2, modes=("fwd", "rev"))


def test_reducers_and_ops_under_vmap():
    """Batched (``ad.vmap``) reductions and operators equal numpy's per-example values."""
    rng = np.random.RandomState(_key("vmap"))
    xs = rng.randn(3, 4, 5)
    ys = rng.rand(3, 4, 5) + 0.5
    cases = [
        (lambda x: anp.var(x, axis=0, ddof=1), lambda x: np.var(x, axis=0, ddof=1)),
        (lambda x: anp.nanstd(x, axis=1, keepdims=True),
         lambda x: np.nanstd(x, axis=1, keepdims=True)),
        (lambda x: anp.sum(x, axis=1, where=x > 0, initial=1.0),
         lambda x: np.sum(x, axis=1, where=x > 0, initial=1.0)),
        (lambda x: anp.average(x, axis=(1, 0), weights=np.ones((5, 4))),
         lambda x: np.average(x, axis=(1, 0), weights=np.ones((5, 4)))),
        (lambda x: anp.cumulative_sum(x, axis=1, include_initial=True),
         lambda x: np.cumulative_sum(x, axis=1, include_initial=True)),
        (lambda x: anp.spacing(x), np.spacing),
        (lambda x: anp.heaviside(x, 0.5), lambda x: np.heaviside(x, 0.5)),
    ]
    for f, ref in cases:
        assert_close(ad.vmap(f)(xs), np.stack([ref(x) for x in xs]), 1e-12)
    assert_close(ad.vmap(anp.logaddexp)(xs, ys), np.logaddexp(xs, ys), 1e-12)
    assert_close(ad.vmap(lambda x, y: (x * y) ** 2 - y / x)(xs, ys), (xs * ys) ** 2 - ys / xs,
                 1e-12)


def _op_dtype_cases():
    out = []
    for rec in JAX_ONE_TO_ONE_OP_RECORDS + JAX_COMPOUND_OP_RECORDS:
        shapes = {1: ((2, 3),), 2: ((2, 3), (3,)), 3: ((5,), (2,), (1,))}[rec.nargs]
        if rec.shapes == nonempty_shapes and rec.nargs == 2:
            shapes = ((2, 3), ())
        for d in rec.dtypes:
            out.append(pytest.param(rec, shapes, (d,) * rec.nargs,
                                    id=f"{rec.test_name}-{np.dtype(d).name}"))
    return out


@pytest.mark.parametrize("rec,shapes,dtypes", _op_dtype_cases())
def test_op_every_dtype(rec, shapes, dtypes):
    """JaxNumpyOperatorTests.testOp over every dtype of each record (one shape pair)"""
    _check_op(rec, shapes, dtypes)


def _red_dtype_cases(recs, extra=None):
    out = []
    for rec in recs:
        for k, d in enumerate(rec.dtypes):
            shape, axis, keepdims = [((3, 4), 0, True), ((2, 3, 4), -1, False),
                                     ((3, 4), None, False)][k % 3]
            p = dict(shape=shape, axis=axis, keepdims=keepdims, dtype=d)
            if extra is not None:
                p.update(extra(rec, k, [d]))
            out.append(pytest.param(rec, p, id=f"{rec.name}-{np.dtype(d).name}"))
    return out


@pytest.mark.parametrize("rec,p", _red_dtype_cases(JAX_REDUCER_NO_DTYPE_RECORDS))
def test_reducer_no_dtype_every_dtype(rec, p):
    """JaxNumpyReducerTests.testReducerNoDtype over every dtype of each record"""
    test_reducer_no_dtype(rec, p)


@pytest.mark.parametrize("rec,p", _red_dtype_cases(
    JAX_REDUCER_INITIAL_RECORDS, lambda r, k, pr: {"initial": k % 2, "k": k}))
def test_reducer_where_every_dtype(rec, p):
    """JaxNumpyReducerTests.testReducerWhere over every dtype of each record"""
    test_reducer_where(rec, p)


@pytest.mark.parametrize("rec,p", _red_dtype_cases(
    JAX_REDUCER_WHERE_NO_INITIAL_RECORDS, lambda r, k, pr: {"k": k}))
def test_reducer_where_no_initial_every_dtype(rec, p):
    """JaxNumpyReducerTests.testReducerWhereNoInitial over every dtype of each record"""
    test_reducer_where_no_initial(rec, p)


@pytest.mark.parametrize("rec,p", _red_dtype_cases(
    JAX_REDUCER_RECORDS, lambda r, k, pr: {"out_dtype": [None, f64, c128, i32, f32][k % 5]
                                           if r.name not in ("nanmean", "mean")
                                           or k % 5 != 3 else None}))
def test_reducer_every_dtype(rec, p):
    """JaxNumpyReducerTests.testReducer over every dtype of each record"""
    test_reducer(rec, p)


def test_median_signature():
    """JaxNumpyReducerTests.testMedian: JAX's signature median(a, axis, out,
    overwrite_input, keepdims)"""
    x = np.arange(7.0)
    f = lambda x: anp.median(x, axis=None, out=None, overwrite_input=False,   # noqa: E731
                             keepdims=False)
    assert traced(f)(x) == 3.0 and f(x) == 3.0
    y = np.random.RandomState(0).rand(3, 4)
    g = lambda x: anp.median(x, 1, None, True, True)   # noqa: E731   positional, numpy's order
    np.testing.assert_allclose(traced(g)(y), np.median(y, 1, None, True, True))
    with pytest.raises(TypeError, match="out="):
        traced(lambda x: anp.median(x, out=np.zeros(())))(x)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanmin"])
def test_nan_reducer_where_error_names_itself(name):
    """A non-boolean ``where=`` of a nan-reduction is refused in its own name."""
    with pytest.raises(ValueError, match=f"^{name}: where must be None or a boolean"):
        traced(lambda x: getattr(anp, name)(x, where=np.ones(3, int)))(np.zeros(3))
