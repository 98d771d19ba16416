"""Branch-free, vectorizable transcendental functions for Numba-generated loops.

Why this module exists
----------------------
llvmlite from PyPI is built without Intel SVML.  When Numba compiles a loop that calls
``np.exp``/``np.sin``/``np.tanh`` the loop vectorizer happily produces ``llvm.exp.v8f64``,
but the x86 backend has no vector implementation and *scalarizes* it into eight libm
calls, so the loop runs at libm speed (4-14 ns per element).  The functions here are
written only with operations that have SIMD instructions (add, mul, fused mul-add,
divide, compare, integer shift/and/or, bit casts, table loads), without branches, and
small enough for LLVM to inline.  A loop such as::

    @njit(fastmath={'reassoc', 'contract'})
    def kernel(x, y, out):
        for i in range(x.shape[0]):
            out[i] = exp_f64(x[i]) * tanh_f64(y[i])

then vectorizes to 4- or 8-wide AVX2/AVX-512 code.

Rules every function here follows (and new ones must follow)
------------------------------------------------------------
* ``fastmath=False`` explicitly.  An ``@njit`` helper without an explicit setting
  inherits the fastmath flags of the first caller that compiles it; with ``reassoc``
  LLVM would fold ``(t + SHIFT) - SHIFT`` to ``t`` and ``(hi - r) - lo`` to ``0``, which
  silently destroys range reduction.  LLVM keeps each instruction's own flags when it
  inlines, so the caller's loop may use fastmath while our instructions stay exact.
* ``error_model='numpy'``: with the default Python error model every float division
  carries a zero-divisor check that raises, i.e. a branch that blocks vectorization.
* No Python ``if``/ternary on data: use :func:`select` (an LLVM ``select``).  Both
  sides are always computed, so every path must be safe for every input (no
  out-of-bounds loads, no traps); special inputs are patched at the end with selects.
* ``forceinline=True``: Numba marks the LLVM function ``alwaysinline`` (this is LLVM
  inlining, not Numba-IR inlining like ``inline='always'``).  LLVM's own cost model
  declined to inline sin/cos (too large), which left a call in the loop and no
  vectorization.
* Disk-cached under ``ad.config.cache_dir`` (``numba_cache.cache_helpers`` at the end
  of this module), not with Numba's ``cache=True``, whose locator writes beside the
  installed package or in ``~/.cache/numba``.  :data:`VERSION` and this file's hash go
  into the kernels' cache key and the helpers' stamp, because Numba does not track
  dependencies.  Measured: uncached, the helpers compile once per process, the first
  time a new kernel uses them (2.6 s for a kernel using all eight float64 functions on
  an idle machine, 0.1 s for the next kernel); caching them cut that to about a third,
  and cached helpers still inline and vectorize.

Method
------
Measured maximum errors (tests/test_numba_math.py, millions of points over the whole
range, against long double / float64 references): float64 <= 0.86 ulp except expm1
0.93 and logistic 1.27 ulp; float32 <= 0.86 ulp except expm1 1.07 and logistic 1.29
(with or without FMA; sin/cos float32 0.50).  The tests assert 2 ulp.

*exp* -- Cody-Waite reduction ``x = k*ln2 + r``, ``|r| <= ln2/2``:
``k = round(x/ln2)`` is obtained by adding and subtracting ``1.5*2**52`` (this rounds to
nearest and leaves ``k`` in the low mantissa bits, so no float->int conversion is
needed).  ``ln2 = LN2_HI + LN2_LO`` where ``LN2_HI`` has only 42 significant bits, so
``k*LN2_HI`` is exact for ``|k| < 2**11`` and ``x - k*LN2_HI`` is exact (Sterbenz).  The
rounding error of ``r = hi - lo`` is recovered exactly, ``c = (hi - r) - lo``, and added
back as a first-order correction.  ``exp(r) = 1 + r + r**2*Q(r)`` with a degree-10
minimax ``Q`` (max relative error 2**-60).  ``2**k`` is built by shifting the biased
exponent ``k + 1023`` into the exponent field of an int64 and bit-casting
(:func:`i64_as_f64`).  To cover results that are subnormal (``k < -1022``) or that
overflow (``k = 1024``) with the same instructions, the scale is applied as two factors
``2**(k>>1) * 2**(k - (k>>1))``: both are normal numbers, the first product is exact
and the second rounds once, correctly, into the subnormal range or to inf.  Inputs are
clamped to [-746, 710] first, which makes +-inf produce inf/0 and keeps ``k`` small;
NaN passes through every select (comparisons with NaN are false) and propagates.

*expm1* -- same reduction and the same ``Q`` (it was fitted for relative error of
``expm1``, which is the stricter requirement).  ``expm1(x) = (2**k - 1) + 2**k*r +
2**k*elo`` where ``expm1(r) = r + elo``: ``2**k*r`` is exact, ``2**k - 1`` and the sum
of the first two terms are computed as exact pairs (Fast2Sum), so essentially only the
final addition rounds.  Inputs are clamped to [-40, 710]; for ``k = 1024`` the
computation runs with ``2**1023`` and doubles at the end.  ``|x| < 2**-54`` returns x
(keeps -0.0 and subnormals exact).

*log / log1p* -- ``x = 2**e * m`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` (found with integer
arithmetic on the bits: subtract the bit pattern of ``sqrt(2)/2``, shift right by 52);
subnormal inputs are first multiplied by ``2**54``.  With ``f = m - 1`` (exact) and
``s = f/(2+f)``: ``log(1+f) = 2*atanh(s) = f - f*f/2 + s*(f*f/2 + R(s*s))``; ``R(z) =
z*P(z)`` with a degree-6 minimax ``P`` on ``z <= 0.0295``.  ``e*ln2`` is added as
``e*LN2_HI`` (exact) + ``e*LN2_LO``.  log1p computes ``u = 1 + x`` and adds the exact
rounding error of that sum, divided by ``u``, into the low-order part.

*tanh* -- below ``|x| = 0.5494`` (just above tanh = 1/2) an odd degree-21 minimax
polynomial (relative error 2**-60.6); above, ``1 - 2/(e + 1)`` with ``e = exp(2|x|)``
kept as an unrounded pair and the rounding errors of ``e + 1`` and ``1 - q`` recovered
(Fast2Sum), so only the division and the last addition round.  The more common
``-t/(t+2)``, ``t = expm1(-2|x|)`` amplifies expm1's error 1.5x near tanh = 1/2 (measured
2.2 ulp), hence the polynomial.  Both sides are computed; a select picks one, and the
sign is copied from x with ``llvm.copysign`` (so tanh(-0.0) = -0.0).

*logistic* -- ``e = exp(-|x|)``; ``1/(1+e)`` for ``x >= 0`` and ``e/(1+e)`` for ``x < 0``:
never overflows and keeps full relative accuracy in the tail (down to subnormals).  The
rounding errors of exp and of ``1 + e`` are known exactly and removed by a first-order
correction (no second division): 2.4 -> 1.25 ulp.

*sin / cos* -- correct for every finite input, including ``|x|`` up to 1.8e308.  A
Cody-Waite reduction with a 3-part pi/2 is only accurate to ``|x|`` ~ 1e5..1e6, and the
alternative suggested for larger arguments -- selecting the libm result -- makes LLVM
emit ``llvm.sin.v4f64``, which is scalarized into libm calls for *every* element
(measured: 15.2 ns/element against 0.55 for the polynomial alone, i.e. libm speed).  So
the reduction is a branch-free Payne-Hanek reduction in exact integer arithmetic:
``|x| = M * 2**(E-1075)`` with a 53-bit integer ``M``.  Only a 189-bit window of the
binary expansion of 2/pi matters for a given exponent ``E`` (earlier bits contribute
multiples of 4 to ``x*2/pi``, later ones less than 2**-134); the windows are
precomputed per exponent as three 64-bit words (``trig_reduction``'s table, 24 KiB, built
at import from pi computed with Machin's formula in Python integers; three gathers per
element) and cut into seven 27-bit limbs.  ``M*window`` is computed with 12 products of
27-bit limbs (exact in int64; 32x32->64-bit multiplies in SIMD), carries are
propagated, and the top bits give the quadrant and a fraction ``f`` in [-1/2, 1/2]
known to 2**-133 absolute.  That is enough even for the double closest to a multiple of
pi/2 (x = 6381956970095103 * 2**797, f ~ 2**-62).  ``f`` is assembled from its limbs
as an exact double-double and multiplied by pi/2 with exact partial products (a
26+27-bit split by masking the mantissa, so no FMA is needed), giving ``r + rr``.  For
``|x| < pi/4`` the input is used directly.  Then ``sin(r+rr) = r + r**3*S(r**2) +
rr*(1 - r**2/2)`` and ``cos(r+rr) = 1 - r**2/2 + r**4*C(r**2) - r*rr`` (with the
rounding error of ``1 - r**2/2`` recovered exactly), ``S`` and ``C`` degree-5 minimax
in ``r**2`` (relative error 2**-58 / 2**-64), and the quadrant selects and negates.
Cost: the reduction is ~80% of the time (the gathers alone ~1/3: gathers are slow on
this CPU); sin/cos take ~5.6 ns/element (3.6 with 512-bit vectors) against ~1 ns for a
Cody-Waite-only version, still 2.6-4x faster than numpy's float64 sin.

*float32* -- exp, expm1, log, log1p, tanh and logistic compute natively in float32 with
lower-degree polynomials (twice the lanes of float64).  sin/cos float32 use the same
integer Payne-Hanek reduction with a 108-bit window (four 27-bit limbs stored as
uint32; 32-bit gathers keep 8 lanes) and a float64 polynomial, then
round: the reduction needs 64-bit lanes anyway.

Vector width: on AVX-512 CPUs that LLVM tunes for 256-bit vectors (e.g. "rocketlake",
what this machine reports) the loops use 4 x f64 / 8 x f32.  Compiling with the
``prefer-256-bit`` tuning removed (``NUMBA_CPU_FEATURES=<host features>,-prefer-256-bit``,
a process-wide Numba setting) gives 8 x f64 and made exp 1.5 -> 1.1 ns, sin 5.6 -> 3.6
ns, tanh 2.4 -> 1.9 ns per element here; that choice belongs to the jit backend.

Polynomials
-----------
Coefficients were derived for this module with a Remez exchange (weighted minimax,
linear basis, mpmath at 50 digits), rounding each coefficient to the target precision
and refitting the remaining ones.  :mod:`autodiff.backends.remez` reproduces them (needs
mpmath; it is not used at import).  Polynomials are evaluated by Horner's rule with
``llvm.fmuladd`` (:func:`fmuladd`), which becomes an FMA where the CPU has one and a
multiply-add elsewhere.

Public API
----------
float64: exp_f64, log_f64, tanh_f64, sin_f64, cos_f64, expm1_f64, log1p_f64,
logistic_f64; float32: the same names with ``_f32``; ``FUNCTIONS[(name, dtype_name)]``;
``select(cond, a, b)``; bit helpers ``f64_as_i64``, ``i64_as_f64``, ``f32_as_i32``,
``i32_as_f32``; ``fmuladd``, ``fabs``, ``copysign``; ``VERSION``.
"""
import numpy as np
from numba import njit

from . import numba_intrinsics, trig_reduction
from .numba_cache import cache_helpers
from .numba_intrinsics import (HELPER_OPTIONS, copysign, f32_as_i32,
                               f64_as_i64, fabs, fmuladd, i32_as_f32, i64_as_f64, select)
from .trig_reduction import rem_pio2_f32, rem_pio2_f64

__all__ = [
    "VERSION", "FUNCTIONS", "select", "f64_as_i64", "i64_as_f64", "f32_as_i32",
    "i32_as_f32", "fmuladd", "fabs", "copysign",
    "exp_f64", "log_f64", "tanh_f64", "sin_f64", "cos_f64", "expm1_f64", "log1p_f64",
    "logistic_f64",
    "exp_f32", "log_f32", "tanh_f32", "sin_f32", "cos_f32", "expm1_f32", "log1p_f32",
    "logistic_f32",
]

#: Bump whenever any numerical result of this module can change; generated kernels put
#: it into their disk-cache key (Numba does not notice that an inlined helper changed).
VERSION = "1"

# Every function here is compiled with HELPER_OPTIONS (numba_intrinsics; the docstring above
# says why) and disk-cached (cache_helpers, at the end of this module).


# ---------------------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------------------
_f = float.fromhex
_F32 = np.float32

_INF = float("inf")
_NAN = float("nan")
_LOG2E = _f("0x1.71547652b82fep+0")
# ln2 = _LN2_HI + _LN2_LO; _LN2_HI has 42 significant bits -> k*_LN2_HI exact, |k| < 2**11.
_LN2_HI = _f("0x1.62e42fefa3800p-1")
_LN2_LO = _f("0x1.ef35793c76730p-45")
# Adding 1.5*2**52 rounds to an integer and leaves it in the low mantissa bits.
_SHIFT = _f("0x1.8p52")
_SHIFT_BITS = 0x4338000000000000
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD        # bits of sqrt(2)/2 (float64)
_TWO54 = _f("0x1p54")
_MIN_NORMAL = _f("0x1p-1022")
_TINY = _f("0x1p-54")                        # below this f(x) = x to within 1/2 ulp
_PIO4 = _f("0x1.921fb54442d18p-1")           # rounded down: a < _PIO4 => a < pi/4
# tanh: polynomial below, 1 - 2/(exp(2a) + 1) above.  Must not be below atanh(1/2) =
# 0.549306...: the second formula needs tanh >= 1/2.  The polynomial is fitted up to here.
_TANH_SWITCH = 0.5494

# float32 constants (Numba types Python float literals as float64, so every constant used
# in float32 code is a np.float32 global, which Numba freezes as a float32 constant).
_F32_ZERO = _F32(0.0)
_F32_HALF = _F32(0.5)
_F32_ONE = _F32(1.0)
_F32_TWO = _F32(2.0)
_F32_INF = _F32(np.inf)
_F32_NINF = _F32(-np.inf)
_F32_NAN = _F32(np.nan)
_F32_LOG2E = _F32(_LOG2E)
_F32_LN2_HI = _F32(_f("0x1.62e4p-1"))          # 15 significant bits: k*hi exact, |k| < 2**9
_F32_LN2_LO = _F32(_f("0x1.7f7d1cp-20"))
_F32_SHIFT = _F32(_f("0x1.8p23"))
_F32_SHIFT_BITS = 0x4B400000
_F32_SQRT_HALF_BITS = 0x3F3504F3
_F32_TWO25 = _F32(_f("0x1p25"))
_F32_MIN_NORMAL = _F32(_f("0x1p-126"))
_F32_TINY = _F32(_f("0x1p-25"))
_F32_EXP_HI = _F32(89.0)
_F32_EXP_LO = _F32(-104.0)
_F32_EXPM1_LO = _F32(-18.0)
_F32_TANH_SMALL = _F32(0.5494)
_F32_TANH_CLAMP = _F32(10.0)
_F32_NEG_ONE = _F32(-1.0)

# ---------------------------------------------------------------------------------------
# Polynomial coefficients (see backends/remez.py; comments give the max weighted error)
# ---------------------------------------------------------------------------------------
# exp(r) = 1 + r + r^2*Q(r) on |r| <= 0.3467; relative error of expm1(r): 2^-60.0
_EXP_Q = tuple(map(_f, (
    "0x1.0000000000000p-1", "0x1.5555555555559p-3", "0x1.5555555555559p-5",
    "0x1.111111110f6f6p-7", "0x1.6c16c16c161b3p-10", "0x1.a01a01af9f9e5p-13",
    "0x1.a01a019696693p-16", "0x1.71ddf949001a1p-19", "0x1.27e53009f218ep-22",
    "0x1.af5cc3d7f03b8p-26", "0x1.1e99811491546p-29")))
# log1p(f) = f - f^2/2 + s*(f^2/2 + z*P(z)), s = f/(2+f), z = s^2 <= 0.02944; 2^-59.5
_LOG_P = tuple(map(_f, (
    "0x1.5555555555592p-1", "0x1.999999997ff04p-2", "0x1.24924941e33c2p-2",
    "0x1.c71c5212533cap-3", "0x1.74663d6922917p-3", "0x1.39a1daa87cad3p-3",
    "0x1.2f04576831082p-3")))
# sin(r) = r + r*z*S(z), z = r^2 <= (pi/4)^2; relative error 2^-57.9
_SIN_S = tuple(map(_f, (
    "-0x1.5555555555548p-3", "0x1.111111110f730p-7", "-0x1.a01a019be9217p-13",
    "0x1.71de35552b548p-19", "-0x1.ae5e4b83e85dep-26", "0x1.5d8b5596c4e10p-33")))
# cos(r) = 1 - z/2 + z^2*C(z); relative error 2^-63.9
_COS_C = tuple(map(_f, (
    "0x1.555555555554bp-5", "-0x1.6c16c16c15014p-10", "0x1.a01a019c8efaep-16",
    "-0x1.27e4f7f169383p-22", "0x1.1ee9dbaea33b6p-29", "-0x1.8fa67195cf731p-37")))
# tanh(a) = a + a*z*P(z), z = a^2 <= 0.5494^2; relative error 2^-60.6
_TANH_P = tuple(map(_f, (
    "-0x1.555555555554fp-2", "0x1.1111111110790p-3", "-0x1.ba1ba1b97cb11p-5",
    "0x1.664f48593f4f8p-6", "-0x1.226e2f0e03fcep-7", "0x1.d6d29a8b54d51p-9",
    "-0x1.7d8fc5e352580p-10", "0x1.34833a56b8559p-11", "-0x1.e96b0aada3a22p-13",
    "0x1.5d6678a788cdep-14", "-0x1.46edfa25ae232p-16")))
# float32 tanh polynomial (same form), 2^-29.7
_TANH_P_F32 = tuple(map(_F32, (-0.33333316445350647, 0.13332544267177582, -0.0538475476205349,
                               0.02105071395635605, -0.00624284939840436)))
# float32 versions (coefficients rounded to float32): 2^-26.1, 2^-30.2
_EXP_Q_F32 = tuple(map(_F32, (0.4999999701976776, 0.16666539013385773, 0.041667740792036057,
                              0.008367051370441914, 0.0013840069295838475)))
_LOG_P_F32 = tuple(map(_F32, (0.6666677594184875, 0.3997756838798523, 0.29871460795402527)))
# float64 polynomials for the float32 sin/cos: 2^-37.5, 2^-42.9
_SIN_S_F32 = tuple(map(_f, ("-0x1.5555554c70e77p-3", "0x1.11110869b6f8bp-7",
                            "-0x1.a00f7e9efb3a6p-13", "0x1.6cd1d1af8bfbfp-19")))
_COS_C_F32 = tuple(map(_f, ("0x1.5555554ed8da2p-5", "-0x1.6c16b8295ef90p-10",
                            "0x1.a010de58e3cabp-16", "-0x1.241e838d93ae9p-22")))

(_TP0, _TP1, _TP2, _TP3, _TP4, _TP5, _TP6, _TP7, _TP8, _TP9, _TP10) = _TANH_P
(_FTP0, _FTP1, _FTP2, _FTP3, _FTP4) = _TANH_P_F32
(_EQ0, _EQ1, _EQ2, _EQ3, _EQ4, _EQ5, _EQ6, _EQ7, _EQ8, _EQ9, _EQ10) = _EXP_Q
(_LP0, _LP1, _LP2, _LP3, _LP4, _LP5, _LP6) = _LOG_P
(_SS0, _SS1, _SS2, _SS3, _SS4, _SS5) = _SIN_S
(_CC0, _CC1, _CC2, _CC3, _CC4, _CC5) = _COS_C
(_FEQ0, _FEQ1, _FEQ2, _FEQ3, _FEQ4) = _EXP_Q_F32
(_FLP0, _FLP1, _FLP2) = _LOG_P_F32
(_FSS0, _FSS1, _FSS2, _FSS3) = _SIN_S_F32
(_FCC0, _FCC1, _FCC2, _FCC3) = _COS_C_F32


# ---------------------------------------------------------------------------------------
# float64 kernels
# ---------------------------------------------------------------------------------------

@njit(**HELPER_OPTIONS)
def _i2d(k):
    """Small int64 (|k| < 2**51) -> float64, exactly, with integer add + float sub only."""
    return i64_as_f64(k + _SHIFT_BITS) - _SHIFT


@njit(**HELPER_OPTIONS)
def _pow2(k):
    """2.0**k for -1022 <= k <= 1023 (built in the exponent field)."""
    return i64_as_f64((k + 1023) << 52)


@njit(**HELPER_OPTIONS)
def _exp_q(r):
    q = fmuladd(r, _EQ10, _EQ9)
    q = fmuladd(r, q, _EQ8)
    q = fmuladd(r, q, _EQ7)
    q = fmuladd(r, q, _EQ6)
    q = fmuladd(r, q, _EQ5)
    q = fmuladd(r, q, _EQ4)
    q = fmuladd(r, q, _EQ3)
    q = fmuladd(r, q, _EQ2)
    q = fmuladd(r, q, _EQ1)
    return fmuladd(r, q, _EQ0)


@njit(**HELPER_OPTIONS)
def _exp_reduce(x):
    """x = k*ln2 + r + c (|r| <= 0.3466, c = rounding error of r).  Returns (k, r, c)."""
    t = x * _LOG2E + _SHIFT                  # exact rounding of x/ln2 to an integer
    kd = t - _SHIFT
    k = f64_as_i64(t) - _SHIFT_BITS
    hi = x - kd * _LN2_HI                    # exact (product exact, then Sterbenz)
    lo = kd * _LN2_LO
    r = hi - lo
    c = (hi - r) - lo                        # the rounding error of r (needs no reassoc)
    return k, r, c


@njit(**HELPER_OPTIONS)
def _expm1_r(r, c):
    """expm1(r + c) for |r| <= 0.3466, |c| <= ulp(r): r + r^2*Q(r) + c*(1 + r)."""
    return r + fmuladd(r * r, _exp_q(r), fmuladd(c, r, c))


@njit(**HELPER_OPTIONS)
def _exp_parts(x):
    """exp(x) = (1 + pe) * s1 * s2 for x clamped to [-746, 710] (or NaN).

    pe = expm1(r) for the reduced argument; s1, s2 = 2**(k>>1), 2**(k - (k>>1)).
    Splitting the scale keeps both factors normal for k in [-1076, 1024]: the first
    product is exact and the second rounds once, correctly, into the subnormal range or
    to inf.
    """
    k, r, c = _exp_reduce(x)
    pe = _expm1_r(r, c)
    k1 = k >> 1
    return pe, _pow2(k1), _pow2(k - k1)


@njit(**HELPER_OPTIONS)
def _exp_pair(x):
    """exp(x) = ehi + elo (elo: the rounding error of 1 + expm1(r), scaled), x <= 709."""
    pe, s1, s2 = _exp_parts(x)
    hi = 1.0 + pe
    lo = (1.0 - hi) + pe                     # exact (Fast2Sum: |pe| < 1)
    return (hi * s1) * s2, (lo * s1) * s2


@njit(**HELPER_OPTIONS)
def _exp_kernel(x):
    """exp(x) for x clamped to [-746, 710] (or NaN)."""
    pe, s1, s2 = _exp_parts(x)
    return ((1.0 + pe) * s1) * s2


@njit(**HELPER_OPTIONS)
def exp_f64(x):
    """exp(x), float64, <= ~1 ulp, full range (subnormal results, 0, inf, NaN)."""
    xc = select(x > 710.0, 710.0, x)         # exp(710) overflows anyway; keeps k <= 1024
    xc = select(xc < -746.0, -746.0, xc)     # exp(-746) rounds to 0
    return _exp_kernel(xc)


@njit(**HELPER_OPTIONS)
def expm1_f64(x):
    """exp(x) - 1, float64, accurate near 0, full range."""
    xc = select(x > 710.0, 710.0, x)
    xc = select(xc < -40.0, -40.0, xc)       # expm1(-40) rounds to -1; keeps 2**k normal
    k, r, c = _exp_reduce(xc)
    # expm1(r + c) = r + elo (elo = r^2*Q(r) + c*(1 + r)), kept unrounded as a pair
    elo = fmuladd(r * r, _exp_q(r), fmuladd(c, r, c))
    big = k >= 1023                          # 2**1024 is not representable: halve, double
    tp = _pow2(k - select(big, 1, 0))
    one = select(big, 0.5, 1.0)
    tm1 = tp - one                           # 2**k - 1: exact unless k > 53 ...
    tm1lo = (tp - tm1) - one                 # ... then this is its exact error
    # expm1(x) = tm1 + tp*r + tp*elo; tp*r is exact, and tm1 + tp*r is a Fast2Sum
    # (|tm1| >= |tp*r| whenever tm1 != 0) so its rounding error is recovered exactly
    b = tp * r
    s = tm1 + b
    err = (tm1 - s) + b
    y = (s + (err + fmuladd(tp, elo, tm1lo))) * select(big, 2.0, 1.0)
    return select(fabs(x) < _TINY, x, y)     # keeps -0.0 and subnormals exact


@njit(**HELPER_OPTIONS)
def _log_p(z):
    p = fmuladd(z, _LP6, _LP5)
    p = fmuladd(z, p, _LP4)
    p = fmuladd(z, p, _LP3)
    p = fmuladd(z, p, _LP2)
    p = fmuladd(z, p, _LP1)
    return fmuladd(z, p, _LP0)


@njit(**HELPER_OPTIONS)
def _log_split(ix):
    """Bits of a positive normal float64 -> (e, m) with value = 2**e*m, m in [sqrt(.5), sqrt(2))."""
    e = (ix - _SQRT_HALF_BITS) >> 52
    m = i64_as_f64(ix - (e << 52))
    return e, m


@njit(**HELPER_OPTIONS)
def _log_combine(e, m, c):
    """e*ln2 + log(m) + c for small c (the low-order correction of log1p)."""
    f = m - 1.0                              # exact (Sterbenz)
    s = f / (2.0 + f)
    z = s * s
    hfsq = 0.5 * f * f
    rz = z * _log_p(z)
    ed = _i2d(e)
    return ed * _LN2_HI - ((hfsq - (s * (hfsq + rz) + (ed * _LN2_LO + c))) - f)


@njit(**HELPER_OPTIONS)
def log_f64(x):
    """Natural log, float64: log(0) = -inf, log(<0) = NaN, subnormal inputs exact."""
    sub = x < _MIN_NORMAL
    xs = select(sub, x * _TWO54, x)          # normalise subnormals (exact)
    e, m = _log_split(f64_as_i64(xs))
    e = e - select(sub, 54, 0)
    y = _log_combine(e, m, 0.0)
    y = select(x > 0.0, y, select(x == 0.0, -_INF, _NAN))   # NaN input -> NaN here
    return select(x == _INF, x, y)


@njit(**HELPER_OPTIONS)
def log1p_f64(x):
    """log(1 + x), float64, accurate near 0; log1p(-1) = -inf, x < -1 -> NaN."""
    u = 1.0 + x
    # exact rounding error of u = 1 + x (Sterbenz in both cases), as a correction c/u
    c = select(u < 2.0, x - (u - 1.0), 1.0 - (u - x)) / u
    e, m = _log_split(f64_as_i64(u))         # u >= 2**-53 is normal for x > -1
    y = _log_combine(e, m, c)
    y = select(x > -1.0, y, select(x == -1.0, -_INF, _NAN))
    y = select(x == _INF, x, y)
    return select(fabs(x) < _TINY, x, y)


@njit(**HELPER_OPTIONS)
def _tanh_p(z):
    p = fmuladd(z, _TP10, _TP9)
    p = fmuladd(z, p, _TP8)
    p = fmuladd(z, p, _TP7)
    p = fmuladd(z, p, _TP6)
    p = fmuladd(z, p, _TP5)
    p = fmuladd(z, p, _TP4)
    p = fmuladd(z, p, _TP3)
    p = fmuladd(z, p, _TP2)
    p = fmuladd(z, p, _TP1)
    return fmuladd(z, p, _TP0)


@njit(**HELPER_OPTIONS)
def tanh_f64(x):
    """tanh(x), float64: odd minimax polynomial below 0.5494, 1 - 2/(exp(2|x|) + 1) above.

    The switch is at tanh = 1/2: above it q = 2/(e+1) <= 1/2, so q's error is at most
    half an ulp of the result; below it that formula would cancel, and
    -t/(t+2) with t = expm1(-2|x|) amplifies expm1's error 1.5x near 1/2, hence the
    polynomial (relative error 2^-60.6).
    """
    a = fabs(x)
    z = a * a
    ps = fmuladd(a * z, _tanh_p(z), a)
    # e = exp(2a) = ehi + elo, d = e + 1 = dhi + dlo (Fast2Sum, ehi >= 1 here), then
    # 1 - 2/d = (1 - q0) + q0^2*dlo/2 with q0 = 2/dhi, 1 - q0 again as an exact pair
    ehi, elo = _exp_pair(select(a > 20.0, 40.0, 2.0 * a))  # tanh(20) rounds to 1
    d = ehi + 1.0
    dlo = ((ehi - d) + 1.0) + elo
    q0 = 2.0 / d
    zh = 1.0 - q0
    zl = (1.0 - zh) - q0                     # Fast2Sum error of 1 - q0
    pl = zh + fmuladd(q0 * q0, 0.5 * dlo, zl)
    return copysign(select(a < _TANH_SWITCH, ps, pl), x)


@njit(**HELPER_OPTIONS)
def logistic_f64(x):
    """1/(1 + exp(-x)), float64; never overflows, keeps relative accuracy in the tail.

    With e = exp(-|x|) = ehi + elo (unrounded pair) and 1 + e = d + dlo (d = fl(1 + ehi),
    dlo = its exact rounding error + elo): sigma = n/(d + dlo), n = 1 (x >= 0) or
    ehi + elo (x < 0).  q0 = fl(n_hi/d) is corrected to first order,
    sigma ~= q0 + (n_lo - q0*dlo)/d, where 1/d ~= q0 (x >= 0) or 1 - q0 (x < 0): this
    removes the rounding errors of exp and of 1 + e without a second division.
    """
    a = fabs(x)
    ehi, elo = _exp_pair(select(a > 746.0, -746.0, -a))
    d = 1.0 + ehi
    dlo = ((1.0 - d) + ehi) + elo            # Fast2Sum: 1 >= ehi
    pos = x >= 0.0
    q0 = select(pos, 1.0, ehi) / d
    inv_d = select(pos, q0, 1.0 - q0)
    corr = (select(pos, 0.0, elo) - q0 * dlo) * inv_d
    return q0 + corr


@njit(**HELPER_OPTIONS)
def _sin_cos_poly(r, rr):
    """(sin(r + rr), cos(r + rr)) for |r| <= pi/4, |rr| <= ulp(r)."""
    z = r * r
    v = z * r
    s = fmuladd(z, _SS5, _SS4)
    s = fmuladd(z, s, _SS3)
    s = fmuladd(z, s, _SS2)
    s = fmuladd(z, s, _SS1)
    s = fmuladd(z, s, _SS0)
    sn = r + fmuladd(v, s, rr - 0.5 * z * rr)
    c = fmuladd(z, _CC5, _CC4)
    c = fmuladd(z, c, _CC3)
    c = fmuladd(z, c, _CC2)
    c = fmuladd(z, c, _CC1)
    c = fmuladd(z, c, _CC0)
    hz = 0.5 * z
    w = 1.0 - hz
    # ((1 - w) - hz) is the exact rounding error of w = 1 - z/2
    cs = w + (((1.0 - w) - hz) + (z * z * c - r * rr))
    return sn, cs


@njit(**HELPER_OPTIONS)
def _reduce_f64(x):
    a = fabs(x)
    q, r, rr = rem_pio2_f64(a)
    small = a < _PIO4
    r = select(small, a, r)
    rr = select(small, 0.0, rr)
    q = select(small, 0, q)
    return a, q, r, rr


@njit(**HELPER_OPTIONS)
def sin_f64(x):
    """sin(x), float64, correct argument reduction for every finite x."""
    a, q, r, rr = _reduce_f64(x)
    sn, cs = _sin_cos_poly(r, rr)
    v = select((q & 1) != 0, cs, sn)
    negate = ((q & 2) != 0) != (f64_as_i64(x) < 0)   # sin(-x) = -sin(x), incl. -0.0
    v = select(negate, -v, v)
    return select(a < _INF, v, x - x)        # inf/NaN -> NaN


@njit(**HELPER_OPTIONS)
def cos_f64(x):
    """cos(x), float64, correct argument reduction for every finite x."""
    a, q, r, rr = _reduce_f64(x)
    sn, cs = _sin_cos_poly(r, rr)
    v = select((q & 1) != 0, sn, cs)
    v = select(((q + 1) & 2) != 0, -v, v)
    return select(a < _INF, v, x - x)


# ---------------------------------------------------------------------------------------
# float32 kernels.  Every constant is a float32 global and every literal an int: a float
# literal would promote the expression to float64 (and halve the vector width).
# ---------------------------------------------------------------------------------------

@njit(**HELPER_OPTIONS)
def _pow2_f32(k):
    """2.0f**k for -126 <= k <= 127."""
    return i32_as_f32((k + 127) << 23)


@njit(**HELPER_OPTIONS)
def _i2f(k):
    """Small int (|k| < 2**22) -> float32 exactly, via the 1.5*2**23 trick."""
    return i32_as_f32(k + _F32_SHIFT_BITS) - _F32_SHIFT


@njit(**HELPER_OPTIONS)
def _exp_reduce_f32(x):
    t = x * _F32_LOG2E + _F32_SHIFT
    kd = t - _F32_SHIFT
    k = f32_as_i32(t) - _F32_SHIFT_BITS
    hi = x - kd * _F32_LN2_HI                # exact: 15-bit constant times |k| <= 150
    lo = kd * _F32_LN2_LO
    r = hi - lo
    c = (hi - r) - lo
    return k, r, c


@njit(**HELPER_OPTIONS)
def _expm1_lo_f32(r, c):
    """expm1(r + c) - r for |r| <= 0.3467 (float32)."""
    q = fmuladd(r, _FEQ4, _FEQ3)
    q = fmuladd(r, q, _FEQ2)
    q = fmuladd(r, q, _FEQ1)
    q = fmuladd(r, q, _FEQ0)
    return fmuladd(r * r, q, fmuladd(c, r, c))


@njit(**HELPER_OPTIONS)
def _exp_parts_f32(x):
    """float32 twin of _exp_parts, x clamped to [-104, 89]."""
    k, r, c = _exp_reduce_f32(x)
    pe = r + _expm1_lo_f32(r, c)
    k1 = k >> 1
    return pe, _pow2_f32(k1), _pow2_f32(k - k1)


@njit(**HELPER_OPTIONS)
def _exp_pair_f32(x):
    pe, s1, s2 = _exp_parts_f32(x)
    hi = _F32_ONE + pe
    lo = (_F32_ONE - hi) + pe
    return (hi * s1) * s2, (lo * s1) * s2


@njit(**HELPER_OPTIONS)
def _exp_kernel_f32(x):
    pe, s1, s2 = _exp_parts_f32(x)
    return ((_F32_ONE + pe) * s1) * s2


@njit(**HELPER_OPTIONS)
def exp_f32(x):
    """exp(x), float32, computed in float32, full range."""
    xc = select(x > _F32_EXP_HI, _F32_EXP_HI, x)
    xc = select(xc < _F32_EXP_LO, _F32_EXP_LO, xc)
    return _exp_kernel_f32(xc)


@njit(**HELPER_OPTIONS)
def expm1_f32(x):
    """exp(x) - 1, float32, accurate near 0, full range."""
    xc = select(x > _F32_EXP_HI, _F32_EXP_HI, x)
    xc = select(xc < _F32_EXPM1_LO, _F32_EXPM1_LO, xc)   # expm1(-18) rounds to -1
    k, r, c = _exp_reduce_f32(xc)
    elo = _expm1_lo_f32(r, c)
    big = k >= 127
    tp = _pow2_f32(k - select(big, 1, 0))
    one = select(big, _F32_HALF, _F32_ONE)
    tm1 = tp - one
    tm1lo = (tp - tm1) - one
    b = tp * r
    s = tm1 + b
    err = (tm1 - s) + b
    y = (s + (err + fmuladd(tp, elo, tm1lo))) * select(big, _F32_TWO, _F32_ONE)
    return select(fabs(x) < _F32_TINY, x, y)


@njit(**HELPER_OPTIONS)
def _log_combine_f32(e, m, c):
    f = m - _F32_ONE
    s = f / (_F32_TWO + f)
    z = s * s
    hfsq = _F32_HALF * f * f
    p = fmuladd(z, _FLP2, _FLP1)
    p = fmuladd(z, p, _FLP0)
    rz = z * p
    ed = _i2f(e)
    return ed * _F32_LN2_HI - ((hfsq - (s * (hfsq + rz) + (ed * _F32_LN2_LO + c))) - f)


@njit(**HELPER_OPTIONS)
def _log_split_f32(ix):
    e = (ix - _F32_SQRT_HALF_BITS) >> 23
    m = i32_as_f32(ix - (e << 23))
    return e, m


@njit(**HELPER_OPTIONS)
def log_f32(x):
    """Natural log, float32 (computed in float32)."""
    sub = x < _F32_MIN_NORMAL
    xs = select(sub, x * _F32_TWO25, x)
    e, m = _log_split_f32(f32_as_i32(xs))
    e = e - select(sub, 25, 0)
    y = _log_combine_f32(e, m, _F32_ZERO)
    y = select(x > _F32_ZERO, y, select(x == _F32_ZERO, _F32_NINF, _F32_NAN))
    return select(x == _F32_INF, x, y)


@njit(**HELPER_OPTIONS)
def log1p_f32(x):
    """log(1 + x), float32, accurate near 0."""
    u = _F32_ONE + x
    c = select(u < _F32_TWO, x - (u - _F32_ONE), _F32_ONE - (u - x)) / u
    e, m = _log_split_f32(f32_as_i32(u))
    y = _log_combine_f32(e, m, c)
    y = select(x > _F32_NEG_ONE, y, select(x == _F32_NEG_ONE, _F32_NINF, _F32_NAN))
    y = select(x == _F32_INF, x, y)
    return select(fabs(x) < _F32_TINY, x, y)


@njit(**HELPER_OPTIONS)
def tanh_f32(x):
    """tanh(x), float32; same method as tanh_f64."""
    a = fabs(x)
    z = a * a
    p = fmuladd(z, _FTP4, _FTP3)
    p = fmuladd(z, p, _FTP2)
    p = fmuladd(z, p, _FTP1)
    p = fmuladd(z, p, _FTP0)
    ps = fmuladd(a * z, p, a)
    ehi, elo = _exp_pair_f32(select(a > _F32_TANH_CLAMP, _F32_TWO * _F32_TANH_CLAMP,
                                    _F32_TWO * a))
    d = ehi + _F32_ONE
    dlo = ((ehi - d) + _F32_ONE) + elo
    q0 = _F32_TWO / d
    zh = _F32_ONE - q0
    zl = (_F32_ONE - zh) - q0
    pl = zh + fmuladd(q0 * q0, _F32_HALF * dlo, zl)
    return copysign(select(a < _F32_TANH_SMALL, ps, pl), x)


@njit(**HELPER_OPTIONS)
def logistic_f32(x):
    """1/(1 + exp(-x)), float32; same method as logistic_f64."""
    a = fabs(x)
    ehi, elo = _exp_pair_f32(select(a > -_F32_EXP_LO, _F32_EXP_LO, -a))
    d = _F32_ONE + ehi
    dlo = ((_F32_ONE - d) + ehi) + elo
    pos = x >= _F32_ZERO
    q0 = select(pos, _F32_ONE, ehi) / d
    inv_d = select(pos, q0, _F32_ONE - q0)
    corr = (select(pos, _F32_ZERO, elo) - q0 * dlo) * inv_d
    return q0 + corr


@njit(**HELPER_OPTIONS)
def _sin_cos_poly_f32(r):
    """(sin r, cos r) in float64 for |r| <= pi/4, accurate to ~2**-37 (for float32)."""
    z = r * r
    s = fmuladd(z, _FSS3, _FSS2)
    s = fmuladd(z, s, _FSS1)
    s = fmuladd(z, s, _FSS0)
    sn = fmuladd(z * r, s, r)
    c = fmuladd(z, _FCC3, _FCC2)
    c = fmuladd(z, c, _FCC1)
    c = fmuladd(z, c, _FCC0)
    cs = fmuladd(z * z, c, 1.0 - 0.5 * z)
    return sn, cs


@njit(**HELPER_OPTIONS)
def _reduce_f32(x):
    a = fabs(x)
    q, r = rem_pio2_f32(a)
    ad = np.float64(a)
    small = ad < _PIO4
    r = select(small, ad, r)
    q = select(small, 0, q)
    return ad, q, r


@njit(**HELPER_OPTIONS)
def sin_f32(x):
    """sin(x), float32, correct reduction for every finite x (float64 polynomial)."""
    ad, q, r = _reduce_f32(x)
    sn, cs = _sin_cos_poly_f32(r)
    v = select((q & 1) != 0, cs, sn)
    negate = ((q & 2) != 0) != (f32_as_i32(x) < 0)
    v = select(negate, -v, v)
    return np.float32(select(ad < _INF, v, ad - ad))


@njit(**HELPER_OPTIONS)
def cos_f32(x):
    """cos(x), float32, correct reduction for every finite x (float64 polynomial)."""
    ad, q, r = _reduce_f32(x)
    sn, cs = _sin_cos_poly_f32(r)
    v = select((q & 1) != 0, sn, cs)
    v = select(((q + 1) & 2) != 0, -v, v)
    return np.float32(select(ad < _INF, v, ad - ad))


#: (function name, dtype name) -> scalar implementation, for the jit backend.
FUNCTIONS = {
    ("exp", "float64"): exp_f64,
    ("log", "float64"): log_f64,
    ("tanh", "float64"): tanh_f64,
    ("sin", "float64"): sin_f64,
    ("cos", "float64"): cos_f64,
    ("expm1", "float64"): expm1_f64,
    ("log1p", "float64"): log1p_f64,
    ("logistic", "float64"): logistic_f64,
    ("exp", "float32"): exp_f32,
    ("log", "float32"): log_f32,
    ("tanh", "float32"): tanh_f32,
    ("sin", "float32"): sin_f32,
    ("cos", "float32"): cos_f32,
    ("expm1", "float32"): expm1_f32,
    ("log1p", "float32"): log1p_f32,
    ("logistic", "float32"): logistic_f32,
}

# the disk cache of every helper above, under ad.config.cache_dir; their stamps include
# the intrinsics and the reduction they inline
cache_helpers(globals(), depends=(numba_intrinsics, trig_reduction))
