"""Payne-Hanek argument reduction for numba_math's sin and cos: ``|x| = (4n + q)·π/2 + r``
computed in exact integer arithmetic, branch-free, for every finite float64 and float32.

A 189-bit (float64) or 108-bit (float32) window of the binary expansion of 2/π, chosen
by the exponent of ``x``, is multiplied by the mantissa in 27-bit limbs; the top bits give
the quadrant ``q`` and the rest the fraction, which is scaled by π/2 with exact partial
products. numba_math's docstring (*sin / cos*) gives the error analysis.

Interface: ``rem_pio2_f64(a) -> (q, r, rr)`` (``r + rr`` the remainder as a double-double)
and ``rem_pio2_f32(a) -> (q, r)`` (``r`` a float64), for ``a >= π/4`` (other inputs give
garbage but never read out of bounds); both compiled with ``HELPER_OPTIONS`` and inlined
into their callers.
"""
import numpy as np
from numba import njit

from . import numba_intrinsics
from .numba_cache import cache_helpers
from .numba_intrinsics import HELPER_OPTIONS, f32_as_i32, f64_as_i64, i64_as_f64, select

__all__ = ["rem_pio2_f64", "rem_pio2_f32"]

_f = float.fromhex
# pi/2 = _PIO2_HI + _PIO2_LO (+ 2**-80); _PIO2_HI has 26 significant bits so its products
# with the 26- and 27-bit halves of the reduced fraction are exact.
_PIO2_HI = _f("0x1.921fb58000000p+0")
_PIO2_LO = -_f("0x1.dde973dcb3b3ap-27")
_PIO2 = _f("0x1.921fb54442d18p+0")


# ---------------------------------------------------------------------------------------
# Payne-Hanek tables: windows of the binary expansion of 2/pi, one per exponent
# ---------------------------------------------------------------------------------------

def _two_over_pi_bits(nbits):
    """floor(2**nbits * 2/pi) as a Python int (pi from Machin's formula, 128 guard bits)."""
    prec = nbits + 128

    def arctan_inv(x):  # 2**prec * arctan(1/x), truncation errors of a few units
        total, term, n, x2 = 0, (1 << prec) // x, 1, x * x
        sign = 1
        while term:
            total += sign * (term // n)
            term //= x2
            n += 2
            sign = -sign
        return total

    pi_scaled = 4 * (4 * arctan_inv(5) - arctan_inv(239))      # ~ 2**prec * pi
    return ((1 << (2 * prec + 1)) // pi_scaled) >> (prec - nbits)


def _build_pio2_tables():
    nbits = 1300
    top = _two_over_pi_bits(nbits)            # bit i of 2/pi (i >= 1, weight 2**-i) ...

    def window(last):                        # ... floor(2**last * 2/pi) mod 2**L
        return top >> (nbits - last)

    def words(w, n):                         # n 64-bit words, most significant first,
        out = []                             # stored as int64 (two's complement)
        for j in range(n):
            v = (w >> (64 * (n - 1 - j))) & ((1 << 64) - 1)
            out.append(v - (1 << 64) if v >= (1 << 63) else v)
        return out

    # float64: |x| = M*2**(E-1075), M < 2**53.  Bits b_i with i < i0 = E-1076 add multiples
    # of 4 to x*2/pi; keep the 192 bits b_i0 .. b_(i0+191) (b_i = 0 for i <= 0), as three
    # words per exponent (three gathers per element).
    t64 = np.zeros((1025, 3), dtype=np.int64)
    for idx in range(1025):                  # biased exponent E = 1022 + idx
        i0 = 1022 + idx - 1076
        t64[idx] = words(window(i0 + 191) & ((1 << 192) - 1), 3)
    # float32: |x| = M*2**(E-150), M < 2**24; i0 = E-151, L = 108 bits as four 27-bit
    # limbs in uint32 (32-bit gathers: twice the lanes per gather instruction).
    t32 = np.zeros((129, 4), dtype=np.uint32)
    for idx in range(129):                   # E = 126 + idx
        i0 = 126 + idx - 151
        w = window(i0 + 107) & ((1 << 108) - 1)
        for t in range(4):
            t32[idx, t] = (w >> (27 * t)) & ((1 << 27) - 1)
    # Flat, read-only: Numba freezes global arrays into the compiled code as constants.
    t64 = t64.ravel()
    t32 = t32.ravel()
    t64.flags.writeable = False
    t32.flags.writeable = False
    return t64, t32


_PIO2_TAB_F64, _PIO2_TAB_F32 = _build_pio2_tables()
_M27 = (1 << 27) - 1
_P2_27 = 2.0 ** 27
_P2_M27 = 2.0 ** -27
_P2_M54 = 2.0 ** -54
_P2_M81 = 2.0 ** -81
_M24 = (1 << 24) - 1


# ---------------------------------------------------------------------------------------
# the reductions
# ---------------------------------------------------------------------------------------

@njit(**HELPER_OPTIONS)
def rem_pio2_f64(a):
    """Payne-Hanek: a >= pi/4 finite -> (q, r, rr), a = (4n + q)*pi/2 + r + rr, |r| <= pi/4.

    Returns garbage (but never reads out of bounds or traps) for other inputs.
    """
    ia = f64_as_i64(a)
    idx = (ia >> 52) - 1022
    idx = select(idx < 0, 0, idx)
    idx = select(idx > 1024, 1024, idx)
    mant = (ia & 0xFFFFFFFFFFFFF) | 0x10000000000000
    m0 = mant & _M27
    m1 = mant >> 27
    b = idx * 3
    wh = _PIO2_TAB_F64[b]
    wm = _PIO2_TAB_F64[b + 1]
    wl = _PIO2_TAB_F64[b + 2]
    # the top 189 of the 192 window bits as seven 27-bit limbs w6 (high) .. w0; masks
    # after every shift because >> on int64 is arithmetic
    w6 = (wh >> 37) & _M27
    w5 = (wh >> 10) & _M27
    w4 = ((wh & 0x3FF) << 17) | ((wm >> 47) & 0x1FFFF)
    w3 = (wm >> 20) & _M27
    w2 = ((wm & 0xFFFFF) << 7) | ((wl >> 57) & 0x7F)
    w1 = (wl >> 30) & _M27
    w0 = (wl >> 3) & _M27
    # column sums of mant*window in base 2**27 (each product < 2**54, sums < 2**56);
    # column 0 only feeds carries below 2**-160 and column 7 is a multiple of 4: skipped.
    c1 = m0 * w1 + m1 * w0
    c2 = m0 * w2 + m1 * w1 + (c1 >> 27)
    c3 = m0 * w3 + m1 * w2 + (c2 >> 27)
    c4 = m0 * w4 + m1 * w3 + (c3 >> 27)
    c5 = m0 * w5 + m1 * w4 + (c4 >> 27)
    c6 = m0 * w6 + m1 * w5 + (c5 >> 27)
    # x*2/pi mod 4 = (bits 187, 188 of the product) . (bits 186 ... 0); bit 187 = c6 bit 25
    half = (c6 >> 24) & 1                    # fraction >= 1/2: round the quotient up
    q = ((c6 >> 25) + half) & 3
    neg = -half                              # all ones if the fraction becomes negative
    # |fraction| = ones' complement of the fraction bits when negative (error 2**-187)
    e6 = (c6 ^ neg) & _M24
    e5 = (c5 ^ neg) & _M27
    e4 = (c4 ^ neg) & _M27
    e3 = (c3 ^ neg) & _M27
    e2 = (c2 ^ neg) & _M27
    # exact int -> float with the piece's scale: OR into the mantissa of 2**(52-s)
    fa = i64_as_f64(e6 | 0x41A0000000000000) - _P2_27      # e6 * 2**-25
    fb = i64_as_f64(e5 | 0x3FF0000000000000) - 1.0         # e5 * 2**-52
    fc = i64_as_f64(e4 | 0x3E40000000000000) - _P2_M27     # e4 * 2**-79
    fd = i64_as_f64(e3 | 0x3C90000000000000) - _P2_M54     # e3 * 2**-106
    fe = i64_as_f64(e2 | 0x3AE0000000000000) - _P2_M81     # e2 * 2**-133
    hi = fa + fb                             # exact: 51 bits
    # bits down to 2**-133: the closest double to a multiple of pi/2 (x =
    # 6381956970095103 * 2**797) leaves |fraction| ~ 2**-62, which still gets 53+ bits
    lo = fc + fd
    lolo = ((fc - lo) + fd) + fe             # Fast2Sum error of fc + fd (fc >= 2**-79 > fd)
    fh = hi + lo
    fl = ((hi - fh) + lo) + lolo             # Fast2Sum again (hi is a multiple of 2**-52 > lo)
    # r + rr = (fh + fl) * pi/2: split fh into 26 + 27 bits (mask the mantissa) so that
    # both products with the 26-bit _PIO2_HI are exact -- no FMA needed
    fh1 = i64_as_f64(f64_as_i64(fh) & -134217728)     # clears the low 27 mantissa bits
    fh2 = fh - fh1
    t1 = fh1 * _PIO2_HI
    t2 = fh2 * _PIO2_HI
    s = t1 + t2
    err = (t1 - s) + t2                      # Fast2Sum: |t1| >= |t2|
    rlo = err + (fh * _PIO2_LO + fl * _PIO2)
    r = s + rlo
    rr = (s - r) + rlo
    r = select(half != 0, -r, r)
    rr = select(half != 0, -rr, rr)
    return q, r, rr


@njit(**HELPER_OPTIONS)
def rem_pio2_f32(a):
    """Payne-Hanek for float32 a >= pi/4: (q, r) with r = a - (4n + q)*pi/2 as float64.

    |a| = M*2**(E-150), M < 2**24 is a single 27-bit limb; window of 108 bits of 2/pi in
    four 27-bit limbs; quotient bits 106, 107 of M*window = bits 25, 26 of column 3.
    """
    ia = np.int64(f32_as_i32(a))
    idx = (ia >> 23) - 126
    idx = select(idx < 0, 0, idx)
    idx = select(idx > 128, 128, idx)
    mant = (ia & 0x7FFFFF) | 0x800000
    b = idx * 4
    c0 = mant * _PIO2_TAB_F32[b]
    c1 = mant * _PIO2_TAB_F32[b + 1] + (c0 >> 27)
    c2 = mant * _PIO2_TAB_F32[b + 2] + (c1 >> 27)
    c3 = mant * _PIO2_TAB_F32[b + 3] + (c2 >> 27)
    half = (c3 >> 24) & 1
    q = ((c3 >> 25) + half) & 3
    neg = -half
    e3 = (c3 ^ neg) & _M24
    e2 = (c2 ^ neg) & _M27
    e1 = (c1 ^ neg) & _M27
    fa = i64_as_f64(e3 | 0x41A0000000000000) - _P2_27      # e3 * 2**-25
    fb = i64_as_f64(e2 | 0x3FF0000000000000) - 1.0          # e2 * 2**-52
    fc = i64_as_f64(e1 | 0x3E40000000000000) - _P2_M27     # e1 * 2**-79
    r = ((fa + fb) + fc) * _PIO2             # fa + fb exact; ample for a float32 result
    return q, select(half != 0, -r, r)


# the disk cache of the helpers above (their callers inline them; see numba_math)
cache_helpers(globals(), depends=(numba_intrinsics,))
