"""Keys and bits of ``autodiff.random``: the Threefry-2x32 block cipher on the library's
uint32 primitives, the keys (``key``, ``split``, ``fold_in``, ...), raw ``bits``, and the
unit uniforms every distribution starts from.

Each kind of use hashes its own counter stream, so the words of a ``split`` never coincide
with those of a ``fold_in`` or of a draw. The helpers the distributions share (not part of
the API): ``check_key``, ``as_shape``, ``as_dtype``, ``float_dtype``, ``param_shape``,
``random_words``, ``unit_uniform``, ``open_unit_uniform``.

>>> import autodiff as ad
>>> k1, k2 = ad.random.split(ad.random.key(0))
>>> bool((k1 != k2).any())
True
"""
import builtins

import numpy as np

from . import primitives as P
from . import numpy as anp
from ._lax_control_flow import scan
from .core import Tracer
from .errors import ShapeError, DTypeError
from .core import user_source

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "threefry_2x32", "clone", "key_impl", "key_dtype"]

_U32 = np.dtype(np.uint32)


def _u32(v):
    return np.uint32(v & 0xFFFFFFFF)


# ----------------------------------------------------------------------------
# Threefry-2x32, on the library's uint32 primitives
# ----------------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA        # Threefish's key-schedule constant (C240, 32-bit form)


def _rotl(x, r):
    # x << r | x >> (32 - r); uint32 multiplication wraps, floor division by 2**k is >> k
    return P.or_p.bind(P.mul(x, _u32(1 << r)), P.floor_divide_p.bind(x, _u32(1 << (32 - r))))


def threefry_2x32(key, x0, x1):
    """Threefry-2x32 (20 rounds) of the counter words ``x0, x1`` under ``key`` (``uint32[2]``).

    Checked against the published known-answer vectors of Random123:

    >>> import numpy as np
    >>> from autodiff.random import threefry_2x32
    >>> y = threefry_2x32(np.uint32([0x13198a2e, 0x03707344]),
    ...                   np.uint32([0x243f6a88]), np.uint32([0x85a308d3]))
    >>> [hex(int(w[0])) for w in y]
    ['0xc4923a9c', '0x483df7a0']
    """
    key = check_key(key, "threefry_2x32")
    k0, k1 = _key_words(key)
    k2 = P.xor_p.bind(P.xor_p.bind(k0, k1), _u32(_PARITY))
    ks = (k0, k1, k2)
    x0, x1 = P.add(x0, k0), P.add(x1, k1)
    if not any(isinstance(v, Tracer) for v in (k0, k1, x0, x1)):
        for i in range(5):                      # eagerly: plain numpy, no loop machinery
            x0, x1 = _threefry_rounds(x0, x1, _ROT_MUL[i], _ROT_DIV[i], ks[(i + 1) % 3],
                                      P.add(ks[(i + 2) % 3], _u32(i + 1)))
        return x0, x1
    # Traced: the five groups of four rounds are one ``scan`` (a loop in the compiled
    # kernel), not 115 equations per call: a program drawing from several distributions
    # compiled in 14 s unrolled.
    add0 = anp.stack([ks[(i + 1) % 3] for i in range(5)])
    add1 = anp.stack([P.add(ks[(i + 2) % 3], _u32(i + 1)) for i in range(5)])

    def group(c, xs):
        m, d, a0, a1 = xs
        return _threefry_rounds(c[0], c[1], m, d, a0, a1), None
    (x0, x1), _ = scan(group, (x0, x1), (_ROT_MUL, _ROT_DIV, add0, add1))
    return x0, x1


# rotation r as its multiplier 2**r and divisor 2**(32 - r), for each group of four rounds
_ROT_MUL = np.array([[1 << r for r in _ROTATIONS[i % 2]] for i in range(5)], np.uint32)
_ROT_DIV = np.array([[1 << (32 - r) for r in _ROTATIONS[i % 2]] for i in range(5)], np.uint32)


def _threefry_rounds(x0, x1, mul, div, add0, add1):
    """Four Threefry rounds (rotations ``mul``/``div``), then the key injection."""
    for j in range(4):
        x0 = P.add(x0, x1)
        # x1 << r | x1 >> (32 - r): uint32 multiplication wraps, floor division by 2**k is >> k
        x1 = P.xor_p.bind(P.or_p.bind(P.mul(x1, mul[j]), P.floor_divide_p.bind(x1, div[j])), x0)
    return P.add(x0, add0), P.add(x1, add1)


def _key_words(key):
    if isinstance(key, Tracer):
        return P.squeeze(P.slice_in_dim(key, 0, 1, 0), (0,)), P.squeeze(P.slice_in_dim(key, 1, 2, 0), (0,))
    return key[0], key[1]


def check_key(key, who):
    """``key`` as a ``uint32[2]`` array; a ``ShapeError`` naming ``ad.random.<who>`` otherwise."""
    if not isinstance(key, Tracer):
        key = np.asarray(key)
    if key.dtype != _U32 or tuple(key.shape) != (2,):
        raise ShapeError(
            f"ad.random.{who}: expected one key, a uint32[2] array from ad.random.key(seed) or "
            f"split(), got {key.dtype}{list(key.shape)}; for an array of keys use "
            f"ad.vmap(lambda k: ad.random.{who}(k, ...))(keys)", source=user_source())
    return key


# Each kind of use hashes its own counter stream (the high counter word), so the words of a
# split never coincide with the words of a fold_in or of a draw.
_STREAM_BITS, _STREAM_SPLIT, _STREAM_FOLD = 0, 1, 2


def _hash_stream(key, stream, n):
    """``n`` uint32 words: Threefry of the counters ``(stream, 0), (stream, 1), ...``."""
    m = (n + 1) // 2
    if m == 0:
        return np.zeros((0,), _U32)
    ctr = P.iota(_U32, (m,), 0)
    with np.errstate(over="ignore"):
        y0, y1 = threefry_2x32(key, P.full((m,), stream, _U32), ctr)
    words = P.concatenate([y0, y1], 0)
    return P.slice_in_dim(words, 0, n, 0) if 2 * m != n else words


# ----------------------------------------------------------------------------
# keys
# ----------------------------------------------------------------------------

def key(seed):
    """A key from an integer seed (concrete or traced): ``uint32[2]``, JAX's layout
    ``[seed >> 32, seed & 0xFFFFFFFF]``.

    >>> import autodiff as ad
    >>> ad.random.key(42)
    array([ 0, 42], dtype=uint32)
    >>> ad.random.PRNGKey(-1)
    array([4294967295, 4294967295], dtype=uint32)
    """
    if isinstance(seed, Tracer):
        if seed.aval.dtype.kind not in "iub" or seed.aval.shape != ():
            raise DTypeError(f"ad.random.key: the seed must be a scalar integer, got "
                             f"{seed.aval.str_short()}", source=user_source())
        dt = seed.aval.dtype
        wide = np.dtype(np.int64 if dt.kind in "ib" else np.uint64)
        s = P.convert(seed, wide)
        lo = P.convert(s, _U32)
        hi = P.convert(P.floor_divide_p.bind(s, wide.type(1 << 32)), _U32)   # s >> 32
        return P.concatenate([P.reshape(hi, (1,)), P.reshape(lo, (1,))], 0)
    s = np.asarray(seed)
    if s.shape != () or s.dtype.kind not in "iub":
        raise DTypeError(f"ad.random.key: the seed must be a scalar integer, got {s.dtype}"
                         f"{list(s.shape)}", source=user_source())
    s = builtins.int(s)
    return np.array([(s >> 32) & 0xFFFFFFFF, s & 0xFFFFFFFF], _U32)


PRNGKey = key


def key_data(keys):
    """The raw ``uint32`` words of keys (keys are raw already: the identity)."""
    return keys


def wrap_key_data(data, impl=None):
    """Keys from raw ``uint32`` words (the identity, as keys are raw)."""
    return data if isinstance(data, Tracer) else np.asarray(data, _U32)


def split(key, num=2):
    """``num`` new independent keys, ``uint32[num, 2]``; ``num`` may be a shape tuple.

    >>> import autodiff as ad
    >>> ad.random.split(ad.random.key(0), 3).shape
    (3, 2)
    >>> ad.random.split(ad.random.key(0), (2, 3)).shape
    (2, 3, 2)
    """
    key = check_key(key, "split")
    shape = as_shape(num)
    n = builtins.int(np.prod(shape, dtype=np.int64))
    return P.reshape(_hash_stream(key, _STREAM_SPLIT, 2 * n), shape + (2,))


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (concrete or traced): different data
    give independent keys (the loop-index idiom ``fold_in(key, i)``).

    >>> import numpy as np, autodiff as ad
    >>> k = ad.random.key(0)
    >>> bool(np.any(ad.random.fold_in(k, 1) != ad.random.fold_in(k, 2)))
    True
    """
    key = check_key(key, "fold_in")
    if isinstance(data, Tracer):
        d = P.convert(data, _U32)
    else:
        d = _u32(builtins.int(np.asarray(data)))
    with np.errstate(over="ignore"):
        y0, y1 = threefry_2x32(key, _u32(_STREAM_FOLD), d)
    return P.concatenate([P.reshape(y0, (1,)), P.reshape(y1, (1,))], 0)


# ----------------------------------------------------------------------------
# bits and uniforms
# ----------------------------------------------------------------------------

def as_shape(shape):
    """A draw's shape as a tuple of ints (an int is a 1-d shape; ``None`` stays ``None``)."""
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        return (builtins.int(shape),)
    return tuple(builtins.int(s) for s in shape)


def as_dtype(dtype, default=np.float64):
    """A numpy dtype from numpy's spellings or ``anp.float32`` and friends (``None``:
    ``default``)."""
    if dtype is None:
        return np.dtype(default)
    d = getattr(dtype, "dtype", None)      # anp.float32 and friends wrap a numpy dtype
    return d if isinstance(d, np.dtype) else np.dtype(dtype)


def float_dtype(dtype, who):
    """The draw's float dtype (float64 by default); anything but float32/float64 raises."""
    dt = as_dtype(dtype)
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise RandomDTypeError(f"ad.random.{who}: dtype argument to `{who}` must be float32 "
                               f"or float64, got {dt}", source=user_source())
    return dt


class RandomDTypeError(DTypeError, ValueError):
    """A sampler's ``dtype`` argument is not one it draws: a :class:`DTypeError` that is
    also the ``ValueError`` JAX raises.

    >>> import autodiff as ad
    >>> try:
    ...     ad.random.normal(ad.random.key(0), (), dtype="int32")
    ... except ValueError as e:
    ...     print(type(e).__name__)
    RandomDTypeError
    """


def check_method(method, who, allowed=("exact", "approximate")):
    """Validate a sampler's ``method`` argument (JAX's spelling and error); both methods
    draw from the exact distribution here.

    >>> check_method("exact", "gamma")
    'exact'
    """
    if method not in allowed:
        raise ValueError(f"method argument to `{who}` must be one of {list(allowed)}, "
                         f"got {method!r}")
    return method


def random_words(key, n, who):
    """``n`` random ``uint32`` words of ``key``'s stream of draws (not of its splits or
    folds)."""
    return _hash_stream(check_key(key, who), _STREAM_BITS, n)


def bits(key, shape=(), dtype=np.uint32):
    """Uniform random bits: ``uint32`` (``uint64``: two words each; ``uint8``/``uint16``:
    the top bits of one) of ``shape``.

    >>> import autodiff as ad
    >>> b = ad.random.bits(ad.random.key(1), (4,))
    >>> b.dtype, b.shape
    (dtype('uint32'), (4,))
    """
    shape = as_shape(shape)
    dt = as_dtype(dtype)
    n = builtins.int(np.prod(shape, dtype=np.int64))
    if dt == _U32:
        return P.reshape(random_words(key, n, "bits"), shape)
    if dt in (np.dtype(np.uint8), np.dtype(np.uint16)):
        # the top 8 or 16 bits of a word each (exact in the narrow type)
        w = random_words(key, n, "bits")
        top = P.floor_divide_p.bind(w, np.uint32(1 << (32 - 8 * dt.itemsize)))
        return P.reshape(P.convert(top, dt), shape)
    if dt == np.dtype(np.uint64):
        w = random_words(key, 2 * n, "bits")
        hi = P.convert(P.slice_in_dim(w, 0, n, 0), dt)
        lo = P.convert(P.slice_in_dim(w, n, 2 * n, 0), dt)
        return P.reshape(P.add(P.mul(hi, np.uint64(1 << 32)), lo), shape)
    raise DTypeError(f"ad.random.bits: dtype must be uint8, uint16, uint32 or uint64, got {dt}",
                     source=user_source())


def unit_uniform(key, shape, dt, who, open=False):
    """Uniform on [0, 1) with the dtype's full mantissa, m · 2⁻ᵇ for a b-bit integer m
    (b = 24 for float32, 53 for float64); ``open=True``: (m + 1/2) · 2⁻⁽ᵇ⁻¹⁾ with one bit
    fewer, on (0, 1) with both ends excluded (1 - 2⁻ᵇ is the largest value, representable).
    Integers convert exactly, so eager and jit agree to the bit."""
    n = builtins.int(np.prod(shape, dtype=np.int64))
    o = 1 if open else 0
    if dt == np.dtype(np.float32):
        w = random_words(key, n, who)
        m = P.convert(P.floor_divide_p.bind(w, np.uint32(1 << (8 + o))), dt)
        bits_ = 24 - o
    else:
        w = random_words(key, 2 * n, who)
        hi = P.convert(P.floor_divide_p.bind(P.slice_in_dim(w, 0, n, 0), np.uint32(1 << 6)), dt)
        lo = P.convert(P.floor_divide_p.bind(P.slice_in_dim(w, n, 2 * n, 0), np.uint32(1 << (5 + o))), dt)
        m = P.add(P.mul(hi, dt.type(2.0 ** (27 - o))), lo)
        bits_ = 53 - o
    if open:
        m = P.add(m, dt.type(0.5))
    return P.reshape(P.mul(m, dt.type(2.0 ** -bits_)), shape)


def param_shape(shape, *params):
    """The draw's shape: ``shape`` if given (parameters must broadcast to it), else theirs."""
    shapes = [tuple(anp.shape(p)) for p in params if p is not None]
    bshape = np.broadcast_shapes(*shapes) if shapes else ()
    if shape is None:
        return bshape
    shape = as_shape(shape)
    try:
        if np.broadcast_shapes(bshape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ShapeError(f"ad.random: parameters of shape {bshape} do not broadcast to the "
                         f"requested shape {shape}", source=user_source()) from None
    return shape


def open_unit_uniform(key, shape, dt, who):
    """Uniform on (0, 1): never 0 nor 1, so logs of u and of 1 - u are finite."""
    return unit_uniform(key, shape, dt, who, open=True)


# ----------------------------------------------------------------------------
# more of jax.random (issue 36)
# ----------------------------------------------------------------------------

def clone(key):
    """The key itself: keys are immutable values here, so a clone is the same key
    (JAX's ``clone`` exists for its donation semantics).

    >>> import autodiff as ad
    >>> ad.random.clone(ad.random.key(3)).tolist() == ad.random.key(3).tolist()
    True
    """
    return check_key(key, "clone")


def key_impl(keys):
    """The name of the PRNG that made ``keys``: ``"threefry2x32"`` (the one implemented).

    >>> import autodiff as ad
    >>> ad.random.key_impl(ad.random.key(0))
    'threefry2x32'
    """
    check_key(keys, "key_impl") if anp.ndim(keys) == 1 else None
    return "threefry2x32"


def key_dtype(impl_spec=None):
    """The dtype of keys: ``uint32`` (a key is a ``uint32[2]`` array; JAX's typed keys have
    the extended dtype ``key<fry>``, which numpy has no type for).

    >>> import autodiff as ad
    >>> ad.random.key_dtype()
    dtype('uint32')
    """
    if impl_spec not in (None, "threefry2x32", "threefry"):
        raise ValueError(f"ad.random.key_dtype: only the threefry2x32 PRNG is implemented, "
                         f"got {impl_spec!r}")
    return _U32
