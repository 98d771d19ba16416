"""The rows of the elementwise primitives (autodiff/primitives/elementwise.py): unary and
binary math, comparisons, bitwise operations, ``select``, ``convert_element_type`` and the
complex parts; their records, then their flags (see the package's docstring)."""
import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff import primitives as P

import example_primitive
from . import (A, B, BITWISE, EXACT, I, NO_DERIVATIVE, ULP4, Cuda, Elementwise as E, Jet,
               Special, WithInf, Z, big, declare, sample, u, x3, xs3, y3)

F64, F32 = np.float64, np.float32

# ---------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------

for _n, _lo, _hi in [("exp", -2, 2), ("exp2", -2, 2), ("log", 0.3, 3), ("log1p", -0.5, 3),
                     ("log2", 0.3, 3),
                     ("expm1", -2, 2), ("tanh", -2, 2), ("logistic", -3, 3), ("sin", -2, 2),
                     ("cos", -2, 2), ("tan", -1.2, 1.2), ("asin", -0.9, 0.9),
                     ("acos", -0.9, 0.9), ("atan", -2, 2), ("sinh", -2, 2), ("cosh", -2, 2),
                     ("asinh", -2, 2), ("acosh", 1.2, 3), ("atanh", -0.9, 0.9),
                     ("sqrt", 0.3, 3), ("rsqrt", 0.3, 3), ("cbrt", 0.3, 3), ("abs", 0.3, 2),
                     ("neg", -2, 2), ("sign", -2, 2), ("floor", -3, 3), ("ceil", -3, 3),
                     ("round", -3, 3), ("is_finite", -2, 2), ("stop_gradient", -2, 2)]:
    sample(_n, [A(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [A(lo=_lo, hi=_hi)])
sample("abs", [I(4, lo=-3, hi=3)])
sample("neg", [I(4, lo=-3, hi=3)])
sample("not", [B(2, 3)])
sample("not", [I(3, lo=-3, hi=3)])
for _y in (3, 2, 1, 0, -2):
    sample("integer_pow", [A(2, 3, lo=0.5, hi=2)], y=_y)
sample("integer_pow", [I(3, lo=-3, hi=3)], y=3)

for _n, _lo, _hi in [("add", -2, 2), ("sub", -2, 2), ("mul", -2, 2), ("div", 0.5, 2),
                     ("pow", 0.5, 2), ("max", -2, 2), ("min", -2, 2), ("atan2", 0.3, 2),
                     ("mod", 0.5, 3), ("floor_divide", 0.5, 3), ("eq", -2, 2), ("ne", -2, 2),
                     ("lt", -2, 2), ("le", -2, 2), ("gt", -2, 2), ("ge", -2, 2)]:
    sample(_n, [A(2, 3, lo=_lo, hi=_hi), A(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [A(2, 3, lo=_lo, hi=_hi), A(lo=_lo, hi=_hi)])       # rank-0 operands broadcast
    sample(_n, [A(lo=_lo, hi=_hi), A(3, lo=_lo, hi=_hi)])
for _n in ["and", "or", "xor"]:
    sample(_n, [B(2, 3), B(2, 3)])
    sample(_n, [I(3, hi=8), I(3, hi=8)])
sample("add", [I(3), I(3)])
sample("select", [B(2, 3), A(2, 3), A(2, 3)])
sample("select", [B(), A(3), A(3)])
sample("select", [B(3), A(), A(3)])
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.float32))
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.float64))
sample("convert_element_type", [A(3, lo=-3, hi=3)], new_dtype=np.dtype(np.int64))
sample("convert_element_type", [I(3)], new_dtype=np.dtype(np.float64))

# more values (first written for the batching tests): infinities, integer operands;
# appended so the records above keep their indices
sample("is_finite", [WithInf(3, 2)])
for _n in ["and", "or", "xor"]:
    sample(_n, [I(4, lo=-3, hi=6), I(lo=-3, hi=6)])
    sample(_n, [B(), B(2, 2)])
sample("select", [B(2, 2), A(), A()])
sample("convert_element_type", [A(3, 2)], new_dtype=np.dtype(np.int32))

# ---------------------------------------------------------------------------------------
# complex operands (docs/complex.md): every primitive numpy defines on complex input,
# complex64 under float32 and complex128 under float64 (Z). Appended so the records above
# keep their indices. Domains keep away from branch cuts (log, sqrt, the inverse
# trigonometric functions cut the real axis outside (-1, 1) or the imaginary one outside
# (-i, i)), where finite differences across the cut would not apply.
# ---------------------------------------------------------------------------------------

for _n, _lo, _hi, _ilo, _ihi in [
        ("exp", -2, 2, -2, 2), ("exp2", -2, 2, -2, 2), ("log", 0.3, 3, -2, 2),
        ("log2", 0.3, 3, -2, 2),
        ("log1p", -0.5, 3, -2, 2), ("expm1", -2, 2, -2, 2), ("tanh", -1, 1, -0.7, 0.7),
        ("logistic", -2, 2, -1, 1), ("sin", -2, 2, -1, 1), ("cos", -2, 2, -1, 1),
        ("tan", -1, 1, -1, 1), ("asin", -0.9, 0.9, -1, 1), ("acos", -0.9, 0.9, -1, 1),
        ("atan", -2, 2, -0.8, 0.8), ("sinh", -2, 2, -1, 1), ("cosh", -2, 2, -1, 1),
        ("asinh", -2, 2, -0.8, 0.8), ("acosh", 0.5, 3, 0.3, 2), ("atanh", -0.9, 0.9, -1, 1),
        ("sqrt", 0.3, 3, -2, 2), ("rsqrt", 0.3, 3, -2, 2), ("abs", -2, 2, 0.3, 2),
        ("neg", -2, 2, -2, 2), ("sign", -2, 2, 0.3, 2), ("round", -3, 3, -3, 3),
        ("is_finite", -2, 2, -2, 2), ("stop_gradient", -2, 2, -2, 2)]:
    sample(_n, [Z(2, 3, lo=_lo, hi=_hi, im_lo=_ilo, im_hi=_ihi)])
sample("is_finite", [Z(values=[1 + 2j, np.inf + 0j, 1 + 1j * np.inf, np.nan + 1j])])
sample("sign", [Z(values=[0j, 3 - 4j, -2j])], fd=False)      # sign(0) = 0
sample("abs", [Z(values=[3 + 4j, -1j])])
for _y in (3, 2, 0, -2):
    sample("integer_pow", [Z(2, 3, lo=0.5, hi=2)], y=_y)
for _n, _lo, _hi in [("add", -2, 2), ("sub", -2, 2), ("mul", -2, 2), ("div", 0.5, 2),
                     ("pow", 0.5, 2), ("eq", -2, 2), ("ne", -2, 2)]:
    sample(_n, [Z(2, 3, lo=_lo, hi=_hi), Z(2, 3, lo=_lo, hi=_hi)])
    sample(_n, [Z(lo=_lo, hi=_hi), Z(3, lo=_lo, hi=_hi)])
sample("eq", [Z(values=[1 + 1j, 2j, 3]), Z(values=[1 + 1j, 2, 3])])
# max/min and the order comparisons: numpy's lexicographic order (ties in the real part
# decided by the imaginary part)
for _n in ["max", "min", "lt", "le", "gt", "ge"]:
    sample(_n, [Z(2, 3), Z(2, 3)])
    sample(_n, [Z(values=[1 + 2j, 1 - 1j, 3, 2j]), Z(values=[1 + 1j, 1 + 0j, -3j, 2j])],
           fd=False)
sample("select", [B(2, 3), Z(2, 3), Z(2, 3)])
sample("select", [B(3), Z(), Z(3)])
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.complex64))
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.complex128))
sample("convert_element_type", [A(2, 3)], new_dtype=np.dtype(np.complex128))
sample("convert_element_type", [Z(2, 3)], new_dtype=np.dtype(np.float64))  # numpy's real part
for _n in ["real", "imag", "conj"]:
    sample(_n, [Z(2, 3)])
    sample(_n, [Z()])
sample("complex", [A(2, 3), A(2, 3)])
sample("complex", [A(2, 3), A()])
sample("complex", [A(), A(3)])


# ---------------------------------------------------------------------------------------
# flags
# ---------------------------------------------------------------------------------------

def _longdouble(fn):
    """A reference computed in extended precision, rounded once to the input dtype."""
    def ref(x):
        return fn(x.astype(np.longdouble)).astype(x.dtype)
    return ref


def _logistic_ref(x):
    e = np.exp(-np.abs(x.astype(np.longdouble)))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def unary(name, jet, ref, ulps, cuda=E(), jit=E()):
    """A unary elementwise row's flags: its jet case, its special-value reference (numpy's
    function, to ``ulps``), the CUDA and jit generic cases' domains."""
    declare(name, jet=jet, special=Special("unary", ref, ulps), cuda=cuda, jit=jit)


def binary(name, jet, ref, ulps=EXACT, cuda=E(), jit=E()):
    declare(name, jet=jet, special=Special("binary", ref, ulps), cuda=cuda, jit=jit)


unary("exp", Jet(anp.exp, x3), np.exp, ULP4, jit=E(-30.0, 30.0))
unary("exp2", Jet(anp.exp2, x3), np.exp2, ULP4, jit=E(-20, 20))
unary("log", Jet(anp.log, x3), np.log, ULP4, cuda=E(0.1, 3.0), jit=E(0.05, 4.0))
unary("log1p", Jet(anp.log1p, x3), np.log1p, ULP4, cuda=E(-0.9, 3.0), jit=E(-0.9, 4.0))
unary("log2", Jet(anp.log2, x3), np.log2, ULP4, cuda=E(0.1, 3.0), jit=E(0.05, 4.0))
unary("expm1", Jet(anp.expm1, x3), np.expm1, ULP4, jit=E(-3.0, 3.0))
unary("tanh", Jet(anp.tanh, xs3), np.tanh, ULP4, jit=E(-10, 10))
unary("logistic", Jet(ad.nn.sigmoid, xs3), _logistic_ref, ULP4, jit=E(-30, 30))
unary("sin", Jet(anp.sin, x3), np.sin, ULP4, jit=E(-20, 20))
unary("cos", Jet(anp.cos, x3), np.cos, ULP4, jit=E(-20, 20))
unary("tan", Jet(anp.tan, x3), np.tan, ULP4, cuda=E(-1.2, 1.2, rtol=1e-9),
      jit=E(-1.3, 1.3, rtol=4e-6))
unary("asin", Jet(anp.arcsin, x3), np.arcsin, ULP4, cuda=E(-0.9, 0.9), jit=E(-0.95, 0.95))
unary("acos", Jet(anp.arccos, x3), np.arccos, ULP4, cuda=E(-0.9, 0.9), jit=E(-0.95, 0.95))
unary("atan", Jet(anp.arctan, xs3), np.arctan, ULP4)
unary("sinh", Jet(anp.sinh, xs3), np.sinh, ULP4, jit=E(-5, 5))
unary("cosh", Jet(anp.cosh, xs3), np.cosh, ULP4, jit=E(-5, 5))
unary("asinh", Jet(anp.arcsinh, xs3), np.arcsinh, ULP4)
unary("acosh", Jet(anp.arccosh, big), np.arccosh, ULP4, cuda=E(1.1, 3.0, rtol=1e-9),
      jit=E(1.05, 4.0, rtol=4e-6))
unary("atanh", Jet(anp.arctanh, x3), np.arctanh, ULP4, cuda=E(-0.9, 0.9), jit=E(-0.9, 0.9))
unary("sqrt", Jet(anp.sqrt, x3), np.sqrt, EXACT, cuda=E(0.0, 3.0), jit=E(0.0, 4.0))
unary("rsqrt", Jet(P.rsqrt, x3), _longdouble(lambda x: 1 / np.sqrt(x)), 2, cuda=E(0.1, 3.0),
      jit=E(0.1, 4.0))
unary("cbrt", Jet(anp.cbrt, x3), np.cbrt, ULP4)
unary("abs", Jet(anp.abs, xs3), np.abs, EXACT, cuda=E(halves=True), jit=E(halves=True))
unary("neg", Jet(lambda x: -anp.sin(x), x3), np.negative, EXACT)
unary("sign", Jet(lambda x: anp.real(anp.sign(P.complex_(x, x * x + 1.0)) * x)
                  + anp.sign(x) * x, xs3),
      np.sign, EXACT, cuda=E(halves=True), jit=E(halves=True))
unary("floor", NO_DERIVATIVE, np.floor, EXACT, cuda=E(halves=True), jit=E(halves=True))
unary("ceil", NO_DERIVATIVE, np.ceil, EXACT, cuda=E(halves=True), jit=E(halves=True))
unary("round", NO_DERIVATIVE, np.round, EXACT, cuda=E(halves=True),
      jit=E(-5.0, 5.0, halves=True))
unary("is_finite", NO_DERIVATIVE, np.isfinite, EXACT, jit="test_is_finite_and_not")
unary("stop_gradient", NO_DERIVATIVE, lambda x: x, EXACT)
declare("integer_pow", jet=Jet(lambda x: x ** 3 + x ** -2 + x ** 2 * x ** 5, x3),
        special=Special("unary", lambda x: x * x * x, EXACT, y=3),
        cuda=Cuda(lambda x, y: [P.integer_pow(x, k) for k in (0, 2, 3, 5, -2)]
                  + [P.integer_pow(y, 3)], (u((4,), F64, 0.5, 2), np.arange(3)),
                  contains=False),
        jit="test_integer_pow")
declare("not", jet=NO_DERIVATIVE, special="bool",
        cuda=Cuda(lambda b, i: (P.not_p.bind(b), P.not_p.bind(i)),
                  (np.array([True, False]), np.array([3, -1, 0])), contains=False),
        jit="test_is_finite_and_not")

binary("add", Jet(lambda x, y: anp.sin(x) + y, x3, y3), np.add)
binary("sub", Jet(lambda x, y: x - anp.cos(y), x3, y3), np.subtract)
binary("mul", Jet(lambda x, y: x * y * 2.0, x3, y3), np.multiply)
binary("div", Jet(lambda x, y: x / y + 1.0 / x, x3, y3), np.divide, cuda=E(nonzero=True),
       jit=E(nonzero=True))
binary("pow", Jet(lambda x, y: x ** y + x ** 2.5, x3, y3), np.power, ULP4, cuda=E(0.2),
       jit=E(0.2))
binary("max", Jet(lambda x, y: anp.maximum(x, y), xs3, y3), np.maximum)
binary("min", Jet(lambda x, y: anp.minimum(x, y), xs3, y3), np.minimum)
binary("atan2", Jet(lambda x, y: anp.arctan2(x, y), xs3, y3), np.arctan2, ULP4)
binary("mod", Jet(lambda x, y: x % y, big, y3), np.mod, cuda=E(nonzero=True),
       jit=E(nonzero=True))
binary("floor_divide", NO_DERIVATIVE, np.floor_divide, cuda=E(nonzero=True),
       jit=E(nonzero=True))
for _n, _ref in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                 ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    binary(_n, NO_DERIVATIVE, _ref)
for _n in ["and", "or", "xor"]:
    declare(_n, jet=NO_DERIVATIVE, special="bool", cuda=BITWISE, jit=BITWISE)

_x34 = u((3, 4))
declare("select", jet=Jet(lambda x, y: anp.where(x > 0.0, anp.sin(y), y * y), xs3, y3),
        special="moves values: tests/test_special_values.py::"
                "test_select_and_casts_keep_special_values",
        cuda=Cuda(lambda p, x, y: P.select(p, x, y), (_x34 > 0, _x34, -_x34), contains=False),
        jit="test_select")
declare("convert_element_type",
        # the float32 round trip loses digits: the case compares to float32 accuracy
        jet=Jet(lambda x: anp.exp(x).astype(np.float32).astype(np.float64), x3, rtol=1e-6),
        special="casts of special values: tests/test_special_values.py::"
                "test_select_and_casts_keep_special_values",
        cuda=Cuda(lambda x, i, b: (P.convert(x, F32), P.convert(x, np.int32),
                                   P.convert(x, np.bool_), P.convert(i, F64),
                                   P.convert(b, np.int64)),
                  (np.array([1.7, -2.2, 0.0, 3.5]), np.array([3, -1, 300]),
                   np.array([True, False])), contains=False),
        jit="test_convert_element_type")

# the complex parts and the non-holomorphic complex rules (|z| and z/|z| as programs of the
# real parts): jet cases on real-valued functions of real inputs; one CUDA program for the
# four (more complex programs: tests/test_jit_complex.py)
_zc = _x34 + 1j * u((3, 4), seed=5)
_PARTS = Cuda(lambda z, w, x, y: (P.real(z), P.imag(z) * 2.0, P.conj(z), P.conj(w),
                                  P.complex_(x, y), P.complex_(x.astype(F32), y.astype(F32))),
              (_zc, _zc[:2].astype(np.complex64), _x34, u((3, 4), seed=6)))
for _n, _jet in [
        ("real", Jet(lambda x: anp.real(anp.exp(1j * x) * x), x3)),
        ("imag", Jet(lambda x: anp.imag(anp.exp(1j * x) * (x + 2j)), x3)),
        ("conj", Jet(lambda x: anp.real(anp.conj(anp.exp(1j * x)) * (x + 2j) * 1j), x3)),
        ("complex", Jet(lambda x, y: anp.abs(P.complex_(x, y)) ** 3, x3, y3))]:
    declare(_n, jet=_jet, special="complex parts: tests/test_special_values.py::"
                                  "test_complex_special_values_match_numpy",
            cuda=_PARTS, jit="compiled cases: tests/test_jit_complex.py")

# the worked examples of docs/adding_a_primitive.md (tests/example_primitive.py): log2's
# declaration under another name (no backend record: every backend derives its text), and
# softplus (one record per backend; the special-value reference is its impl, numpy's
# logaddexp(x, 0))
sample(example_primitive.LOG2, [A(2, 3, lo=0.3, hi=3)])
sample(example_primitive.LOG2, [A(lo=0.3, hi=3)])
unary(example_primitive.LOG2, True, np.log2, ULP4, cuda=E(0.1, 3.0), jit=E(0.05, 4.0))
sample(example_primitive.NAME, [A(2, 3, lo=-3, hi=3)])
sample(example_primitive.NAME, [A(lo=-3, hi=3)])
declare(example_primitive.NAME, jet=True,
        special=Special("unary", example_primitive.softplus_impl, ULP4),
        cuda=E(), jit=E())
