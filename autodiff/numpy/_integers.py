"""Integer arithmetic beyond the elementwise operators: ``divmod``, shifts, bit counts,
``gcd`` and ``lcm`` (Euclid's algorithm as one ``scan``), bit packing.

>>> import numpy as np, autodiff.numpy as anp
>>> anp.gcd(np.array([12, 18]), 8)
array([4, 2])
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..primitives.control_flow import scan_p, trace_body
from ._base import npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of


# ----------------------------------------------------------------------------
# integers
# ----------------------------------------------------------------------------

@npfunc(np.divmod)
def divmod(x1, x2):
    """``(floor_divide(x1, x2), mod(x1, x2))``."""
    return anp.floor_divide(x1, x2), anp.mod(x1, x2)


def _int_args(x1, x2, name):
    x1, x2 = promote(x1, x2)
    if dtype_of(x1).kind not in "iub":
        raise TypeError(f"ufunc '{name}' not supported for the input types")
    return x1, x2


def _pow2(n, dt):
    bits = np.dtype(dt).itemsize * 8
    k = anp.clip(n, 0, bits - 1)
    return anp.power(asarray(np.asarray(2, dt)), anp.astype(k, dt))


@npfunc(np.left_shift)
def left_shift(x1, x2):
    """``x1 << x2`` on integers (wrapping like numpy's fixed-width integers)."""
    x1, x2 = _int_args(x1, x2, "left_shift")
    bits = np.dtype(dtype_of(x1)).itemsize * 8
    out = anp.multiply(x1, _pow2(x2, dtype_of(x1)))
    return anp.where(anp.greater_equal(x2, bits), anp.zeros_like(out), out)


@npfunc(np.right_shift)
def right_shift(x1, x2):
    """``x1 >> x2`` on integers (arithmetic shift for signed ones)."""
    x1, x2 = _int_args(x1, x2, "right_shift")
    bits = np.dtype(dtype_of(x1)).itemsize * 8
    dt = dtype_of(x1)
    big = anp.greater_equal(x2, bits)
    # 2**(bits-1) overflows a signed type: shift in two steps
    h = anp.floor_divide(anp.clip(x2, 0, bits - 1), 2)
    out = anp.floor_divide(anp.floor_divide(x1, _pow2(h, dt)), _pow2(anp.subtract(anp.clip(x2, 0, bits - 1), h), dt))
    fill = anp.where(anp.less(x1, 0), anp.full_like(x1, -1), anp.zeros_like(x1)) if dt.kind == "i" else anp.zeros_like(x1)
    return anp.where(big, fill, out)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


@npfunc(np.bitwise_count if hasattr(np, "bitwise_count") else None)
def bitwise_count(x):
    """Number of 1-bits in ``|x|`` (``numpy.bitwise_count``), as uint8."""
    x = asarray(x)
    dt = dtype_of(x)
    if dt == np.bool_:
        return anp.astype(x, np.uint8)
    v = anp.absolute(x) if dt.kind == "i" else x
    cnt = None
    for _ in range(dt.itemsize * 8):
        bit = anp.mod(v, 2) if dt.kind == "u" else anp.absolute(anp.mod(v, 2))
        cnt = bit if cnt is None else anp.add(cnt, bit)
        v = anp.floor_divide(v, 2)
    return anp.astype(cnt, np.uint8)


def _gcd_loop(a, b):
    """Euclid's algorithm on broadcast integer arrays: a fixed number of steps (at most
    ~1.44·log2(max): 93 for 64-bit integers) as one ``scan`` equation."""
    def step(a, b):
        nz = anp.not_equal(b, 0)
        sb = anp.where(nz, b, anp.ones_like(b))
        return [anp.where(nz, b, a), anp.where(nz, anp.mod(a, sb), b)]
    body, consts = trace_body(step, [P.aval_of(a), P.aval_of(b)], "gcd")
    steps = 93 if np.dtype(dtype_of(a)).itemsize == 8 else 48
    return scan_p.bind(*consts, a, b, jaxpr=body, num_consts=len(consts), num_carry=2,
                       length=steps, reverse=False)[0]


@npfunc(np.gcd)
def gcd(x1, x2):
    """Greatest common divisor of integers (``numpy.gcd``)."""
    x1, x2 = _int_args(x1, x2, "gcd")
    x1, x2 = anp.broadcast_arrays(anp.absolute(x1), anp.absolute(x2))
    return _gcd_loop(x1, x2)


@npfunc(np.lcm)
def lcm(x1, x2):
    """Least common multiple of integers (``numpy.lcm``)."""
    x1, x2 = _int_args(x1, x2, "lcm")
    g = gcd(x1, x2)
    a1 = anp.absolute(x1)
    sg = anp.where(anp.equal(g, 0), anp.ones_like(g), g)
    return anp.where(anp.equal(g, 0), anp.zeros_like(g), anp.multiply(anp.floor_divide(a1, sg), anp.absolute(x2)))


@npfunc(np.packbits)
def packbits(a, axis=None, bitorder="big"):
    """Pack truthy elements into the bits of uint8 (``numpy.packbits``)."""
    a = asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    a = anp.moveaxis(anp.astype(anp.not_equal(a, 0), np.int64), ax, -1)
    n = shape_of(a)[-1]
    pad = (-n) % 8
    if pad:
        a = anp.concatenate([a, anp.zeros_like(a, shape=shape_of(a)[:-1] + (pad,))], axis=-1)
    a = anp.reshape(a, shape_of(a)[:-1] + (-1, 8))
    w = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    out = anp.astype(anp.sum(anp.multiply(a, w.astype(np.int64)), axis=-1), np.uint8)
    return anp.moveaxis(out, -1, ax)


@npfunc(np.unpackbits)
def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Unpack uint8 elements into bits (``numpy.unpackbits``)."""
    a = asarray(a)
    if dtype_of(a) != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    a = anp.moveaxis(anp.astype(a, np.int64), ax, -1)
    w = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    bits = anp.mod(anp.floor_divide(anp.expand_dims(a, -1), w.astype(np.int64)), 2)
    bits = anp.reshape(bits, shape_of(a)[:-1] + (-1,))
    if count is not None:
        n = shape_of(bits)[-1]
        c = count if count >= 0 else n + count
        if c <= n:
            bits = P.slice_in_dim(bits, 0, builtins.max(c, 0), ndim(bits) - 1)
        else:
            bits = anp.concatenate([bits, anp.zeros_like(bits, shape=shape_of(bits)[:-1] + (c - n,))], axis=-1)
    return anp.moveaxis(anp.astype(bits, np.uint8), -1, ax)
