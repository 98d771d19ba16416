"""Accuracy, special values and vectorization of backends/numba_math.py.

Each function is evaluated through the kind of loop the jit backend generates
(``@njit(fastmath={'reassoc', 'contract'})``, one element per iteration), so the tests
also catch fastmath leaking into the range reductions.  Errors are measured in ulp of
the target dtype against a higher-precision reference: numpy in long double (x87
80-bit, 64-bit mantissa) for float64, numpy in float64 for float32.  Special values
(NaN positions, signed infinities, signed zeros) must match numpy exactly.

Each loop kernel is compiled once per (function, dtype) and cached in this module.
"""
import importlib.util
import os
import re
import zlib

import numba
import numpy as np
import pytest
from numba import njit

try:
    from autodiff.backends import numba_math as nm
except ImportError:  # package not installed yet: load the file by path
    _path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "backends",
                         "numba_math.py")
    _spec = importlib.util.spec_from_file_location("numba_math", _path)
    nm = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(nm)

NAMES = ["exp", "log", "tanh", "sin", "cos", "expm1", "log1p", "logistic"]
DTYPES = ["float64", "float32"]
# max error in ulp allowed (measured: float64 <= 1.25, float32 <= 1.3, also without FMA)
BOUND = {"float64": 2.0, "float32": 2.0}

LD = np.longdouble
HAVE_LONGDOUBLE = np.finfo(LD).nmant >= 63


# ------------------------------------------------------------------------------ helpers

_KERNELS = {}


def kernel(name, dtype):
    """The generated-code-style loop for FUNCTIONS[(name, dtype)], compiled once."""
    key = (name, dtype)
    if key not in _KERNELS:
        fn = nm.FUNCTIONS[key]

        @njit(fastmath={"reassoc", "contract"}, error_model="numpy")
        def loop(x, out):
            for i in range(x.shape[0]):
                out[i] = fn(x[i])

        _KERNELS[key] = loop
    return _KERNELS[key]


def evaluate(name, dtype, x):
    x = np.ascontiguousarray(x, dtype=dtype)
    out = np.empty_like(x)
    kernel(name, dtype)(x, out)
    return out


def _logistic(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


_NUMPY = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
          "expm1": np.expm1, "log1p": np.log1p, "logistic": _logistic}


def reference(name, dtype, x):
    """High-precision reference values (long double for float64, float64 for float32)."""
    wide = LD if dtype == "float64" else np.float64
    with np.errstate(all="ignore"):
        return _NUMPY[name](x.astype(wide))


def numpy_result(name, dtype, x):
    with np.errstate(all="ignore"):
        return _NUMPY[name](x.astype(dtype))


def ulp_error(got, ref, dtype):
    """|got - ref| in units of the dtype's ulp at ref (subnormal spacing below normals)."""
    fi = np.finfo(dtype)
    _, e = np.frexp(np.abs(ref))
    e = np.maximum(e, fi.minexp + 1)
    ulp = np.ldexp(np.ones_like(ref), (e - fi.nmant - 1).astype(np.int32))
    return np.abs(got.astype(ref.dtype) - ref) / ulp


def check(name, dtype, x, bound=None):
    """Compare against the reference and numpy; returns (max ulp, max ulp of numpy)."""
    bound = BOUND[dtype] if bound is None else bound
    x = np.asarray(x, dtype=dtype)
    got = evaluate(name, dtype, x)
    ref = reference(name, dtype, x)
    with np.errstate(over="ignore"):
        ref_r = ref.astype(dtype)            # correctly rounded reference (or nearly)
    npy = numpy_result(name, dtype, x)
    # special values: NaN positions and infinities must match exactly
    nan = np.isnan(ref_r)
    bad = np.flatnonzero(np.isnan(got) != nan)
    assert bad.size == 0, f"{name} {dtype}: NaN mismatch at x={x[bad[:5]]}, got {got[bad[:5]]}"
    inf = np.isinf(ref_r)
    bad = np.flatnonzero(inf & (got != ref_r))
    assert bad.size == 0, f"{name} {dtype}: inf mismatch at x={x[bad[:5]]}, got {got[bad[:5]]}"
    fin = ~nan & ~inf
    bad = np.flatnonzero(fin & ~np.isfinite(got))
    assert bad.size == 0, f"{name} {dtype}: spurious inf at x={x[bad[:5]]}"
    # exact zeros keep their sign (e.g. sin(-0.0) = -0.0, exp(-inf) = +0.0)
    zero = fin & (ref_r == 0)
    bad = np.flatnonzero(zero & ((got != 0) | (np.signbit(got) != np.signbit(ref_r))))
    assert bad.size == 0, f"{name} {dtype}: zero mismatch at x={x[bad[:5]]}, got {got[bad[:5]]}"
    # numpy agrees on the special values too (NaN positions, inf signs)
    assert np.array_equal(np.isnan(npy), np.isnan(got))
    assert np.array_equal(npy[np.isinf(npy)], got[np.isinf(npy)])
    err = ulp_error(got[fin], ref[fin], dtype)
    err_np = ulp_error(npy[fin], ref[fin], dtype)
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err[worst] <= bound, (
        f"{name} {dtype}: {float(err[worst]):.3f} ulp at x={x[fin][worst]!r}: "
        f"got {got[fin][worst]!r}, reference {ref[fin][worst]!r}")
    return (float(err.max()) if err.size else 0.0), (float(err_np.max()) if err.size else 0.0)


# ------------------------------------------------------------------------------ inputs

def _specials(dtype):
    fi = np.finfo(dtype)
    tiny, big = float(fi.smallest_subnormal), float(fi.max)
    v = [0.0, np.inf, np.nan, tiny, 2 * tiny, 3 * tiny, float(fi.tiny), float(fi.tiny) / 3,
         float(fi.tiny) * (1 - fi.eps), big, big / 2, 1.0, 0.5, 2.0, 1 - fi.epsneg,
         1 + fi.eps, 1e-300, 1e-30, 1e-10, 1e-5, 0.1, 0.3466, 0.35, 0.5493,
         0.5493061443340549, 0.5494, 0.55, 0.7071, 1.4142, 3.0, 10.0, 18.0, 20.0, 22.0,
         37.0, 40.0, 88.0, 88.72, 89.0, 103.9, 104.0,
         700.0, 708.3964185322641, 709.782712893384, 709.7827128933841, 709.79, 710.0,
         745.1332191019411, 745.1332191019412, 746.0, 1e5, 1e6, 1e10, 1e22, 1e100, 1e300,
         6381956970095103.0 * 2.0 ** 797]       # the hardest double for reduction mod pi/2
    e = np.arange(fi.minexp - fi.nmant, fi.maxexp, dtype=np.float64)
    v += list(np.ldexp(1.0, e.astype(int)))  # every power of two
    k = np.arange(-2000, 2001)
    v += list(k * (np.pi / 2)) + list(k * np.log(2.0))     # multiples of pi/2 and ln 2
    v += list(np.ldexp(np.pi / 2, np.arange(0, fi.maxexp - 1)))  # huge multiples of pi/2
    v = np.array([x for x in v if np.isnan(x) or abs(x) <= big], dtype=np.float64)
    v = v.astype(dtype)
    with np.errstate(over="ignore"):
        v = np.concatenate([v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)])
    return np.concatenate([v, -v])


def _loguniform(rng, lo, hi, n, dtype):
    return (10.0 ** rng.uniform(lo, hi, n)).astype(dtype)


def _points(name, dtype, n):
    """~n random points over the whole range plus dense ranges where the function is not
    trivial, both signs."""
    rng = np.random.default_rng(zlib.crc32(f"{name}/{dtype}".encode()))
    fi = np.finfo(dtype)
    lo, hi = np.log10(float(fi.smallest_subnormal)), np.log10(float(fi.max))
    sign = lambda m: rng.choice(np.array([-1, 1], dtype=dtype), m)
    full = _loguniform(rng, lo, hi, n // 2, dtype) * sign(n // 2)
    m = n // 2
    f64 = dtype == "float64"
    dense = {
        "exp": [(-746, 710) if f64 else (-104, 89)],
        "expm1": [(-40, 710) if f64 else (-18, 89), (-1, 1)],
        "log": [(0, 4)],
        "log1p": [(-1, 3), (-1e-3, 1e-3)],
        "tanh": [(-22, 22), (-1, 1), (0.54, 0.56)],        # formula switch near 0.5493
        "logistic": [(-750, 750) if f64 else (-110, 110), (-40, 40)],
        "sin": [(-10, 10), (-1e6, 1e6)],
        "cos": [(-10, 10), (-1e6, 1e6)],
    }[name]
    parts = [full] + [rng.uniform(a, b, m // len(dense)).astype(dtype) for a, b in dense]
    return np.concatenate(parts + [_specials(dtype)])


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_accuracy(name, dtype):
    if dtype == "float64" and not HAVE_LONGDOUBLE:
        pytest.skip("needs 80-bit long double for the float64 reference")
    n = 1_500_000 if dtype == "float64" else 2_000_000
    ours, npy = check(name, dtype, _points(name, dtype, n))
    print(f"\n{name:9s} {dtype}: max {ours:.3f} ulp (numpy {npy:.3f} ulp)")


@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_special_values(dtype):
    t = getattr(np, dtype)
    inf, nan = t(np.inf), t(np.nan)
    mins = np.finfo(dtype).smallest_subnormal

    def f(name, x):
        return evaluate(name, dtype, np.array([x], dtype=dtype))[0]

    def same(a, b):
        return (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))

    cases = [
        ("exp", 0.0, 1.0), ("exp", -0.0, 1.0), ("exp", inf, inf), ("exp", -inf, 0.0),
        ("exp", nan, nan), ("exp", 1e4, inf), ("exp", -1e4, 0.0),
        ("log", 1.0, 0.0), ("log", 0.0, -inf), ("log", -0.0, -inf), ("log", -1.0, nan),
        ("log", inf, inf), ("log", -inf, nan), ("log", nan, nan),
        ("expm1", 0.0, 0.0), ("expm1", -0.0, -0.0), ("expm1", inf, inf),
        ("expm1", -inf, -1.0), ("expm1", nan, nan), ("expm1", mins, mins),
        ("expm1", -mins, -mins),
        ("log1p", 0.0, 0.0), ("log1p", -0.0, -0.0), ("log1p", -1.0, -inf),
        ("log1p", -2.0, nan), ("log1p", inf, inf), ("log1p", -inf, nan), ("log1p", nan, nan),
        ("log1p", mins, mins),
        ("tanh", 0.0, 0.0), ("tanh", -0.0, -0.0), ("tanh", inf, 1.0), ("tanh", -inf, -1.0),
        ("tanh", nan, nan), ("tanh", 50.0, 1.0), ("tanh", -mins, -mins),
        ("sin", 0.0, 0.0), ("sin", -0.0, -0.0), ("sin", inf, nan), ("sin", -inf, nan),
        ("sin", nan, nan), ("sin", mins, mins), ("sin", -mins, -mins),
        ("cos", 0.0, 1.0), ("cos", -0.0, 1.0), ("cos", inf, nan), ("cos", nan, nan),
        ("logistic", 0.0, 0.5), ("logistic", -0.0, 0.5), ("logistic", inf, 1.0),
        ("logistic", -inf, 0.0), ("logistic", nan, nan), ("logistic", 1e4, 1.0),
    ]
    for name, x, want in cases:
        got = f(name, x)
        assert got.dtype == np.dtype(dtype), (name, got.dtype)
        assert same(got, t(want)), f"{name}({x!r}) = {got!r}, want {want!r}"


@pytest.mark.skipif(not HAVE_LONGDOUBLE, reason="needs 80-bit long double for the reference")
def test_underflow_and_overflow_boundaries():
    # exp: last finite result, first overflow, results through the subnormal range to 0
    x = np.linspace(-746.0, -700.0, 200_001)
    check("exp", "float64", x, bound=1.0)
    check("logistic", "float64", x, bound=2.0)
    x = np.linspace(-104.0, -85.0, 200_001).astype(np.float32)
    check("exp", "float32", x, bound=1.0)
    top = np.float64(709.782712893384)
    assert np.isfinite(evaluate("exp", "float64", np.array([top]))[0])
    assert np.isinf(evaluate("exp", "float64", np.array([np.nextafter(top, 1e3)]))[0])
    # log of every subnormal binade and of numbers just around 1
    x = np.concatenate([np.ldexp(np.random.default_rng(1).uniform(1, 2, 100_000),
                                 np.random.default_rng(2).integers(-1074, -1022, 100_000)),
                        1 + np.random.default_rng(3).uniform(-1e-6, 1e-6, 100_000)])
    check("log", "float64", x, bound=1.0)


def test_hard_sin_cos_arguments_vs_mpmath():
    mp = pytest.importorskip("mpmath")
    pts = [6381956970095103.0 * 2.0 ** 797, 5.319372648326541e+255, 1e22, 1e300,
           np.finfo(np.float64).max, 2.0 ** 1000, 2.0 ** 60, 1.5707963267948966,
           3.141592653589793, 4.71238898038469, 6.283185307179586, 1e6 * np.pi,
           355.0, 103993.0, 104348.0, 208341.0, 312689.0, 833719.0, 1146408.0]
    rng = np.random.default_rng(7)
    pts += list(np.ldexp(rng.uniform(1, 2, 40), rng.integers(20, 1024, 40)))
    x = np.array(pts + [-p for p in pts])
    for name, mfun in (("sin", mp.sin), ("cos", mp.cos)):
        got = evaluate(name, "float64", x)
        with mp.workprec(2400):              # enough for any double argument
            for xi, gi in zip(x, got):
                ref = mfun(mp.mpf(float(xi)))
                ulp = mp.mpf(2) ** (int(mp.floor(mp.log(abs(ref), 2))) - 52)
                err = float(abs(mp.mpf(float(gi)) - ref) / ulp)
                assert err <= 1.0, f"{name}({xi!r}) = {gi!r}, {err:.3f} ulp"


def _host_has_avx2():
    try:
        import llvmlite.binding as ll
        return bool(ll.get_host_cpu_features().get("avx2", False))
    except Exception:
        return False


_HOST_AVX2 = _host_has_avx2()

# a call to any function of the numba_math module (mangled "...10numba_math...")
_HELPER_CALL = r"call [^\n]*@_ZN[^\s(]*?10numba_math"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", NAMES)
def test_loop_vectorizes_and_inlines(name, dtype):
    k = kernel(name, dtype)
    evaluate(name, dtype, np.ones(8))        # make sure it is compiled
    ir = k.inspect_llvm(k.signatures[0])
    widths = [int(w) for w in re.findall(r"<(\d+) x (?:double|float)>", ir)]
    if not widths and dtype == "float32" and name in ("sin", "cos") and not _HOST_AVX2:
        # the table lookups need vector gathers; without AVX2 (e.g. a plain SSE2
        # target) LLVM keeps the float32 sin/cos loop scalar (float64 still vectorizes)
        pytest.skip("float32 sin/cos need AVX2 gathers to vectorize")
    assert widths and max(widths) >= 2, f"{name} {dtype}: loop was not vectorized"
    # vector floating-point arithmetic, not just vector loads/stores
    assert re.search(r"= (?:fmul|fadd|fsub|fdiv)[^\n]*<\d+ x (?:double|float)>", ir) or \
        re.search(r"@llvm\.fmuladd\.v\d+f(?:32|64)", ir)
    # everything inlined (no calls left to the helpers) and no libm in the loop
    assert not re.search(_HELPER_CALL, ir), "helper not inlined"
    assert not re.search(r"@llvm\.(?:exp|log|sin|cos|pow)\.", ir)
    assert not re.search(r"call [^\n]*@(?:exp|log|sin|cos|tanh|expm1|log1p)f?\(", ir)
    if dtype == "float32" and name not in ("sin", "cos"):
        # natively float32: no accidental promotion to float64 (e.g. by a float literal)
        assert re.search(r"<\d+ x float>", ir)
        assert not re.search(r"= (?:fmul|fadd|fsub|fdiv|fpext)[^\n]*double", ir)


def test_fused_loop_from_the_brief_vectorizes():
    exp_f64, tanh_f64, sin_f64, log_f64 = nm.exp_f64, nm.tanh_f64, nm.sin_f64, nm.log_f64

    @njit(fastmath={"reassoc", "contract"}, error_model="numpy")
    def fused(x, y, out):
        for i in range(x.shape[0]):
            out[i] = exp_f64(x[i]) * tanh_f64(y[i]) + sin_f64(x[i]) * log_f64(y[i])

    rng = np.random.default_rng(0)
    x, y = rng.uniform(-5, 5, 1000), rng.uniform(0.1, 5, 1000)
    out = np.empty_like(x)
    fused(x, y, out)
    want = np.exp(x) * np.tanh(y) + np.sin(x) * np.log(y)
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-14)
    ir = fused.inspect_llvm(fused.signatures[0])
    assert re.search(r"<(?:[4-9]|[1-9]\d+) x double>", ir) or re.search(r"<2 x double>", ir)
    assert not re.search(_HELPER_CALL, ir)


def test_select():
    @njit
    def sel(c, a, b):
        return nm.select(c, a, b)

    assert sel(True, 1.5, 2.5) == 1.5 and sel(False, 1.5, 2.5) == 2.5
    def rtype(*args):
        return sel.overloads[tuple(numba.typeof(a) for a in args)].signature.return_type

    assert sel(True, np.float32(1.5), np.float32(2.5)) == 1.5
    assert rtype(True, np.float32(1.5), np.float32(2.5)) == numba.float32
    assert sel(False, 3, 4) == 4 and rtype(False, 3, 4) == numba.int64
    assert sel(True, False, True) is False and sel(False, False, True) is True
    assert rtype(True, False, True) == numba.boolean
    assert sel(True, 1, 2.5) == 1.0 and rtype(True, 1, 2.5) == numba.float64   # unified
    assert sel(5, 1.0, 2.0) == 1.0 and sel(0, 1.0, 2.0) == 2.0                 # int condition

    @njit
    def sel_weak(c, x):
        return nm.select(c, x, 0), nm.select(c, 1, x)

    assert sel_weak(False, np.float32(2.5)) == (0.0, 2.5)
    assert list(sel_weak.nopython_signatures[0].return_type) == [numba.float32] * 2
    assert np.isnan(sel(True, np.nan, 0.0))

    @njit(error_model="numpy")
    def clamp_loop(x, out):
        for i in range(x.shape[0]):
            out[i] = nm.select(x[i] > 1.0, 1.0, nm.select(x[i] < -1.0, -1.0, x[i]))

    x = np.linspace(-3, 3, 101)
    out = np.empty_like(x)
    clamp_loop(x, out)
    np.testing.assert_array_equal(out, np.clip(x, -1, 1))
    ir = clamp_loop.inspect_llvm(clamp_loop.signatures[0])
    assert "select" in ir


def test_bit_helpers():
    @njit
    def bits(x, y, i, j):
        return (nm.f64_as_i64(x), nm.i64_as_f64(i), nm.f32_as_i32(y), nm.i32_as_f32(j),
                nm.fmuladd(x, 2.0, 1.0), nm.fabs(-x), nm.copysign(x, -1.0))

    a, b, c, d, e, f, g = bits(1.0, np.float32(1.0), 0x4000000000000000, 0x40400000)
    assert a == 0x3FF0000000000000 and b == 2.0 and c == 0x3F800000 and d == 3.0
    assert e == 3.0 and f == 1.0 and g == -1.0
    ret = bits.nopython_signatures[0].return_type
    assert list(ret) == [numba.int64, numba.float64, numba.int32, numba.float32,
                         numba.float64, numba.float64, numba.float64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_return_types(dtype):
    want = getattr(numba, dtype)
    for name in NAMES:
        fn = nm.FUNCTIONS[(name, dtype)]
        fn(getattr(np, dtype)(0.5))          # callable from Python too
        sig = [s for s in fn.nopython_signatures if s.args == (want,)][0]
        assert sig.return_type == want, (name, dtype, sig)


def test_registry_and_flags():
    assert isinstance(nm.VERSION, str) and nm.VERSION
    assert set(nm.FUNCTIONS) == {(n, d) for n in NAMES for d in DTYPES}
    for (n, d), fn in nm.FUNCTIONS.items():
        assert fn is getattr(nm, f"{n}_{'f64' if d == 'float64' else 'f32'}")
    # every jitted helper pins fastmath=False (otherwise it inherits the first caller's
    # flags and reassociation destroys the range reduction)
    for name, obj in vars(nm).items():
        if hasattr(obj, "targetoptions"):
            assert obj.targetoptions.get("fastmath") is False, name
            assert obj.targetoptions.get("error_model") == "numpy", name


def test_fastmath_caller_does_not_break_reduction():
    # a fully fastmath caller; our instructions keep their own (strict) flags when
    # inlined, so the results must be bit-identical to the reference kernels
    exp_f64, sin_f64, log1p_f64 = nm.exp_f64, nm.sin_f64, nm.log1p_f64

    @njit(fastmath=True, error_model="numpy")
    def loop(x, a, b, c):
        for i in range(x.shape[0]):
            a[i] = exp_f64(x[i])
            b[i] = sin_f64(x[i] * 1e3)
            c[i] = log1p_f64(x[i])

    x = np.random.default_rng(5).uniform(-0.99, 700, 200_000)
    a, b, c = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    loop(x, a, b, c)
    np.testing.assert_array_equal(a, evaluate("exp", "float64", x))
    np.testing.assert_array_equal(b, evaluate("sin", "float64", x * 1e3))
    np.testing.assert_array_equal(c, evaluate("log1p", "float64", x))
