"""``jax.lax``'s operators on bits: ``population_count``, ``clz``, the shifts, ``reduce_xor``,
``bitcast_convert_type``, ``reduce_precision`` and ``rng_bit_generator`` (Threefry bits from
``autodiff.random``).

>>> import numpy as np, autodiff as ad
>>> ad.lax.population_count(np.array([0, 7, 255], np.uint8))
array([0, 3, 8], dtype=uint8)
"""
import enum

import numpy as np

from . import numpy as anp
from . import random as R
from .callback import pure_callback
from .custom_derivatives import custom_jvp
from .errors import ShapeError
from .shapes import ShapeDtypeStruct

__all__ = ["population_count", "clz", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "reduce_xor", "bitcast_convert_type", "reduce_precision",
           "RandomAlgorithm", "rng_bit_generator"]


# ----------------------------------------------------------------------------
# bits
# ----------------------------------------------------------------------------

def _int_dtype(x, who):
    dt = np.dtype(anp.result_type(x))
    if dt.kind not in "iu":
        raise TypeError(f"lax.{who}: needs an integer array, got {dt}")
    return dt


def population_count(x):
    """The number of set bits of each integer, in ``x``'s dtype (negative signed values
    count their two's complement bits, as in JAX).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.population_count(np.array([-1, 5], np.int32))
    array([32,  2], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "population_count")
    if dt.kind == "i":
        x = anp.astype(x, np.dtype(f"u{dt.itemsize}"))      # two's complement bits
    return anp.astype(anp.bitwise_count(x), dt)


def clz(x):
    """Leading zero bits of each integer in its dtype's width (0 for negative values).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.clz(np.array([0, 1, 255, -3], np.int32))
    array([32, 31, 24,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "clz")
    u = anp.astype(x, np.dtype(f"u{dt.itemsize}"))
    shift = 1
    while shift < 8 * dt.itemsize:                 # smear the top bit down
        u = anp.bitwise_or(u, anp.right_shift(u, u.dtype.type(shift) if hasattr(u, "dtype") else shift))
        shift *= 2
    return anp.astype(anp.subtract(np.int64(8 * dt.itemsize),
                                   anp.astype(anp.bitwise_count(u), np.int64)), dt)


def _shift_amount(y, dt):
    y = anp.asarray(y)
    return anp.astype(y, dt), anp.logical_or(anp.less(y, 0), anp.greater_equal(y, 8 * dt.itemsize))


def shift_left(x, y):
    """``x << y``; a shift by the width or more gives 0 (JAX's, where C leaves it undefined).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_left(np.array([1, 3], np.int32), np.array([4, 40], np.int32))
    array([16,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_left")
    s, out_of_range = _shift_amount(y, dt)
    safe = anp.where(out_of_range, dt.type(0), s)
    return anp.where(out_of_range, dt.type(0), anp.left_shift(x, safe))


def shift_right_arithmetic(x, y):
    """``x >> y`` keeping the sign (a shift by the width or more gives 0 or −1).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_right_arithmetic(np.array([-16, 16], np.int32), np.array([2, 40], np.int32))
    array([-4,  0], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_right_arithmetic")
    s, out_of_range = _shift_amount(y, dt)
    if dt.kind == "u":
        return shift_right_logical(x, y)
    full = anp.right_shift(x, dt.type(8 * dt.itemsize - 1))
    return anp.where(out_of_range, full, anp.right_shift(x, anp.where(out_of_range, dt.type(0), s)))


def shift_right_logical(x, y):
    """``x >> y`` filling with zero bits (on signed integers: their two's complement bits).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.shift_right_logical(np.array([-16], np.int32), np.array([28], np.int32))
    array([15], dtype=int32)
    """
    x = anp.asarray(x)
    dt = _int_dtype(x, "shift_right_logical")
    udt = np.dtype(f"u{dt.itemsize}")
    s, out_of_range = _shift_amount(y, dt)
    u = anp.right_shift(anp.astype(x, udt), anp.astype(anp.where(out_of_range, dt.type(0), s), udt))
    return anp.where(out_of_range, dt.type(0), anp.astype(u, dt))


def reduce_xor(operand, axes):
    """Bitwise XOR (for booleans: parity) over ``axes``, as a balanced tree of ``xor``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce_xor(np.array([[1, 2, 4], [3, 3, 0]]), (1,))
    array([7, 0])
    """
    x = anp.asarray(operand)
    for ax in sorted((a % anp.ndim(x) for a in axes), reverse=True):
        if anp.shape(x)[ax] == 0:                 # xor of nothing: 0
            x = anp.zeros(tuple(s for i, s in enumerate(anp.shape(x)) if i != ax), anp.result_type(x))
            continue
        while anp.shape(x)[ax] > 1:
            n = anp.shape(x)[ax]
            half = n // 2
            y = anp.bitwise_xor(anp.take(x, np.arange(half), axis=ax),
                                anp.take(x, np.arange(half, 2 * half), axis=ax))
            if n % 2:
                y = anp.concatenate([y, anp.take(x, np.arange(n - 1, n), axis=ax)], axis=ax)
            x = y
        x = anp.squeeze(x, axis=ax)
    return x


def bitcast_convert_type(operand, new_dtype):
    """The same bits read as ``new_dtype`` (``ndarray.view``): equal widths keep the
    shape; a narrower type adds a trailing axis, a wider one consumes it (JAX's rules).
    Runs on the host (``pure_callback``), so it works under ``jit``; not differentiable.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.bitcast_convert_type(np.float32(1.0), np.int32)
    np.int32(1065353216)
    """
    x = anp.asarray(operand)
    old, new = np.dtype(anp.result_type(x)), np.dtype(new_dtype)
    shape = tuple(anp.shape(x))
    if new.itemsize == old.itemsize:
        out_shape = shape
    elif new.itemsize < old.itemsize:
        out_shape = shape + (old.itemsize // new.itemsize,)
    else:
        if not shape or shape[-1] * old.itemsize != new.itemsize:
            raise ShapeError(f"bitcast_convert_type: converting {old} to the wider {new} needs a "
                             f"last axis of size {new.itemsize // old.itemsize}, got shape {shape}")
        out_shape = shape[:-1]

    def view(a):
        return np.ascontiguousarray(a).view(new).reshape(out_shape)
    return pure_callback(view, ShapeDtypeStruct(out_shape, new), x)


def _round_to_format(x, exponent_bits, mantissa_bits):
    # round to nearest even on `mantissa_bits` bits: x = m·2^e with 0.5 ≤ |m| < 1
    emax = 2 ** (exponent_bits - 1) - 1
    m, e = anp.frexp(x)
    scale = float(2 ** (mantissa_bits + 1))
    normal = anp.ldexp(anp.divide(anp.round(anp.multiply(m, scale)), scale), e)
    # below the smallest normal 2^(1-emax) (after rounding): ±0, as XLA (no subnormals)
    y = anp.where(anp.less(anp.abs(normal), 2.0 ** (1 - emax)), anp.multiply(x, 0.0), normal)
    biggest = (2.0 - 2.0 ** -mantissa_bits) * 2.0 ** emax
    y = anp.where(anp.greater(anp.abs(y), biggest), anp.multiply(anp.sign(x), np.inf), y)
    return anp.where(anp.isfinite(x), y, x)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Round floats to a format with ``exponent_bits`` and ``mantissa_bits`` (round to
    nearest even, overflow to ±inf, values below the smallest normal to ±0, as XLA's) in
    the operand's dtype: e.g. (8, 7)
    for bfloat16, (5, 10) for float16. Its derivative rounds the tangent the same way, as in
    JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.reduce_precision(np.array([1.0 + 2.0 ** -11, 70000.0]), 5, 10)
    array([ 1., inf])
    """
    eb, mb = int(exponent_bits), int(mantissa_bits)

    @custom_jvp
    def rp(x):
        return _round_to_format(x, eb, mb)

    @rp.defjvp
    def rp_jvp(primals, tangents):
        return rp(primals[0]), rp(tangents[0])
    x = anp.asarray(operand)
    return anp.astype(rp(x), anp.result_type(x))


class RandomAlgorithm(enum.IntEnum):
    """``rng_bit_generator``'s algorithms; every one draws Threefry-2x32 bits here."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      out_sharding=None):
    """``(new_key, bits)``: random bits of ``shape`` and unsigned ``dtype`` from a
    ``uint32`` key (any size ≥ 2: JAX's default takes 4 words), and the key to use next.
    The bits come from ``ad.random``'s Threefry-2x32 and are not XLA's (whose bits differ
    between backends too); the new key has the old key's shape.

    >>> import numpy as np, autodiff as ad
    >>> k, bits = ad.lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3))
    >>> k.shape, bits.shape, bits.dtype
    ((4,), (2, 3), dtype('uint32'))
    """
    key = anp.asarray(key)
    dt = np.dtype(dtype)
    if dt.kind != "u":
        raise TypeError(f"rng_bit_generator: dtype must be unsigned (uint8..uint64), got {dt}")
    n = int(np.prod(anp.shape(key)))
    words = anp.reshape(key, (n,))
    k = anp.astype(words[:2], np.uint32)
    for i in range(2, n):                       # fold the remaining words into the key
        k = R.fold_in(k, words[i])
    knext, kbits = R.split(k)
    wide = np.dtype(np.uint64) if dt.itemsize == 8 else np.dtype(np.uint32)
    bits = anp.astype(R.bits(kbits, tuple(shape), wide), dt)     # narrower: the low bits
    new = R.bits(knext, (n,), np.uint32)
    return anp.reshape(anp.astype(new, anp.result_type(key)), anp.shape(key)), bits
