"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, concatenate,
pad, slice, rev, and the index generator iota."""
import numpy as np

from ..core import Primitive, ShapedArray, UndefinedPrimal
from ..errors import DTypeError, ShapeError
from ._rules import (aval_of, defjvp_zero, defleading, deflinear, dtype_of, full, moveaxis, scalar,
                     shape_of, shifted)
from .elementwise import select, sub

__all__ = ["broadcast_in_dim", "broadcast_in_dim_p", "concatenate", "concatenate_p", "expand_dims",
           "expand_dims_p", "iota", "iota_p", "pad", "pad_p", "reshape", "reshape_p", "rev",
           "rev_p", "roll", "roll_p", "slice_in_dim", "slice_op", "slice_p", "squeeze", "squeeze_p",
           "transpose", "transpose_p"]

# ============================================================================
# Shape operations
# ============================================================================

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def _bid_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    ishape = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        ishape[d] = x.shape[i]
    # (a fresh array, as np.broadcast_to(...).copy() gives, without its Python-level
    # checks: 0.3 us against 2.7 us for a small bias)
    out = np.empty(shape, x.dtype)
    out[...] = x.reshape(ishape)
    return out


def _bid_aval(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: {x.ndim} operand dims but "
                         f"broadcast_dimensions={broadcast_dimensions}")
    for i, d in enumerate(broadcast_dimensions):
        if not (x.shape[i] == 1 or x.shape[i] == shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x.shape} to {shape}")
    return ShapedArray(shape, x.dtype)


def _bid_transpose(ct, x, *, shape, broadcast_dimensions):
    ishape = x.aval.shape
    new_dims = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions)
                     if ishape[i] == 1 and shape[d] != 1)
    axes = tuple(sorted(new_dims + expanded))
    out = reduce_sum(ct, axes) if axes else ct
    if shape_of(out) != ishape:
        out = reshape(out, ishape)
    return [out]


broadcast_in_dim_p.impl = _bid_impl
broadcast_in_dim_p.abstract_eval = _bid_aval
deflinear(broadcast_in_dim_p, _bid_transpose)
defleading(broadcast_in_dim_p, lambda n, *, shape, broadcast_dimensions: dict(
    shape=(n,) + tuple(shape), broadcast_dimensions=(0,) + tuple(b + 1 for b in broadcast_dimensions)))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """``x`` broadcast to ``shape``, its axes landing at ``broadcast_dimensions``."""
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if shape_of(x) == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions)


reshape_p = Primitive("reshape")
reshape_p.impl = lambda x, *, new_sizes: np.reshape(x, new_sizes)


def _reshape_aval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ShapeError(f"cannot reshape array of shape {x.shape} into shape {new_sizes}")
    return ShapedArray(new_sizes, x.dtype)


reshape_p.abstract_eval = _reshape_aval
deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])
defleading(reshape_p, lambda n, *, new_sizes: dict(new_sizes=(n,) + tuple(new_sizes)))


def reshape(x, new_sizes):
    """``x`` with the new sizes (no equation when they are its own)."""
    new_sizes = tuple(int(s) for s in new_sizes)
    if shape_of(x) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


transpose_p = Primitive("transpose")
transpose_p.impl = lambda x, *, permutation: np.transpose(x, permutation)


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {permutation} does not match rank {x.ndim}")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


def _transpose_transpose(ct, x, *, permutation):
    return [transpose(ct, tuple(np.argsort(permutation)))]


transpose_p.abstract_eval = _transpose_aval
deflinear(transpose_p, _transpose_transpose)
defleading(transpose_p, lambda n, *, permutation: dict(
    permutation=(0,) + tuple(p + 1 for p in permutation)))


def transpose(x, permutation):
    """``x`` with its axes permuted (no equation for the identity)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


def _unit_axes(name, impl, aval):
    """A primitive that removes or inserts size-1 axes (``dimensions``): linear, its
    transpose a reshape back, batched by shifting the axes. Returns ``(primitive, op)``."""
    p = Primitive(name)
    p.impl, p.abstract_eval = impl, aval
    deflinear(p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])
    defleading(p, shifted("dimensions"))

    def op(x, dimensions):
        dimensions = tuple(sorted(int(d) for d in dimensions))
        return p.bind(x, dimensions=dimensions) if dimensions else x
    op.__name__ = name
    op.__doc__ = f"``{name}`` of ``x`` at ``dimensions`` (no equation when there are none)."
    return p, op


def _squeeze_aval(x, *, dimensions):
    for d in dimensions:
        if x.shape[d] != 1:
            raise ShapeError(f"squeeze: dimension {d} of shape {x.shape} is not 1")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype)


def _expand_dims_aval(x, *, dimensions):
    n = x.ndim + len(dimensions)
    shape, it = [], iter(x.shape)
    for i in range(n):
        shape.append(1 if i in dimensions else next(it))
    return ShapedArray(shape, x.dtype)


squeeze_p, squeeze = _unit_axes("squeeze", lambda x, *, dimensions: np.squeeze(x, axis=dimensions),
                                _squeeze_aval)
expand_dims_p, expand_dims = _unit_axes(
    "expand_dims", lambda x, *, dimensions: np.expand_dims(x, dimensions), _expand_dims_aval)


concatenate_p = Primitive("concatenate")
concatenate_p.impl = lambda *xs, dimension: np.concatenate(xs, axis=dimension)


def _concat_aval(*xs, dimension):
    base = xs[0]
    for x in xs:
        if x.dtype != base.dtype:
            raise DTypeError(f"concatenate: dtypes {base.dtype} and {x.dtype} differ")
        if x.ndim != base.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, base.shape))
                                      if i != dimension):
            raise ShapeError(f"concatenate: shapes {[y.shape for y in xs]} do not match "
                             f"outside axis {dimension}")
    shape = list(base.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, base.dtype)


def _concat_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = aval_of(x).shape[dimension]
        if isinstance(x, UndefinedPrimal):
            out.append(slice_in_dim(ct, start, start + n, dimension))
        else:
            out.append(None)
        start += n
    return out


def _concat_batch(args, dims, *, dimension):
    size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    xs = [moveaxis(a, d, size=size) for a, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


concatenate_p.abstract_eval = _concat_aval
deflinear(concatenate_p, _concat_transpose)
concatenate_p.batch = _concat_batch


def concatenate(xs, dimension):
    """The operands joined along ``dimension``."""
    xs = list(xs)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=int(dimension))


pad_p = Primitive("pad")   # pad(x, padding_value) with (low, high, interior) per dim


def _pad_impl(x, pv, *, padding_config):
    x = np.asarray(x)
    if all(lo >= 0 and hi >= 0 and not it for lo, hi, it in padding_config):
        # the common case (transposes of slices): one fill and one copy, no crop
        out = np.full([lo + hi + n for n, (lo, hi, _) in zip(x.shape, padding_config)], pv,
                      dtype=x.dtype)
        out[tuple(slice(lo, lo + n) for n, (lo, _, _) in zip(x.shape, padding_config))] = x
        return out
    out_shape = [lo + hi + n + max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, padding_config)]
    # build with non-negative padding, then crop negative lows/highs
    big = [max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * it
           for n, (lo, hi, it) in zip(x.shape, padding_config)]
    out = np.full(big, pv, dtype=x.dtype)
    idx = tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (it + 1) + 1 if n else max(lo, 0), it + 1)
                for n, (lo, hi, it) in zip(x.shape, padding_config))
    out[idx] = x
    crop = tuple(slice(-min(lo, 0), -min(lo, 0) + o) for o, (lo, hi, it) in zip(out_shape, padding_config))
    return out[crop]


def _pad_aval(x, pv, *, padding_config):
    if len(padding_config) != x.ndim:
        raise ShapeError(f"pad: padding_config has {len(padding_config)} entries for rank {x.ndim}")
    shape = [lo + hi + n + max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, padding_config)]
    if any(s < 0 for s in shape):
        raise ShapeError(f"pad: negative output shape {shape}")
    return ShapedArray(shape, x.dtype)


def _pad_transpose(ct, x, pv, *, padding_config):
    # pad's transpose crops the borders and takes every (interior+1)-th element
    out = [None, None]
    cropped = pad(ct, scalar(0, dtype_of(ct)), tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    t_x = slice_p.bind(cropped, start_indices=(0,) * len(padding_config),
                       limit_indices=shape_of(cropped),
                       strides=tuple(it + 1 for _, _, it in padding_config))
    if isinstance(x, UndefinedPrimal):
        out[0] = t_x
    if isinstance(pv, UndefinedPrimal):
        total = reduce_sum(ct, tuple(range(len(shape_of(ct)))))
        out[1] = sub(total, reduce_sum(t_x, tuple(range(len(shape_of(t_x))))))
    return out


def _pad_batch(args, dims, *, padding_config):
    x, pv = args
    dx, dpv = dims
    if dpv is not None:
        # a batched padding value: pad with zero, then select the value outside the
        # operand's positions (a select, not arithmetic, so an inf padding value stays exact)
        size = shape_of(pv)[dpv]
        x = moveaxis(x, dx, size=size)
        cfg = ((0, 0, 0),) + tuple(padding_config)
        padded = pad(x, scalar(0, dtype_of(x)), cfg)
        inside = pad(full(shape_of(x), True, np.bool_), np.bool_(False), cfg)
        pvb = broadcast_in_dim(moveaxis(pv, dpv), shape_of(padded), (0,))
        return select(inside, padded, pvb), 0
    x = moveaxis(x, dx)
    return pad(x, pv, ((0, 0, 0),) + tuple(padding_config)), 0


pad_p.impl = _pad_impl
pad_p.abstract_eval = _pad_aval
deflinear(pad_p, _pad_transpose)
pad_p.batch = _pad_batch


def pad(x, padding_value, padding_config):
    """``x`` padded with ``padding_value``; ``padding_config`` holds ``(low, high, interior)`` per axis (negative low/high crop)."""
    cfg = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    if all(c == (0, 0, 0) for c in cfg):
        return x
    return pad_p.bind(x, padding_value, padding_config=cfg)


slice_p = Primitive("slice")
slice_p.impl = lambda x, *, start_indices, limit_indices, strides: \
    np.asarray(x)[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_aval(x, *, start_indices, limit_indices, strides):
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim):
        raise ShapeError(f"slice: index lengths do not match rank {x.ndim}")
    shape = []
    for n, s, l, st in zip(x.shape, start_indices, limit_indices, strides):
        if not (0 <= s <= l <= n) or st < 1:
            raise ShapeError(f"slice [{s}:{l}:{st}] out of bounds for a dimension of size {n}")
        shape.append(max(0, -(-(l - s) // st)))
    return ShapedArray(shape, x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    cfg = []
    for n, s, o, st in zip(shape, start_indices, shape_of(ct), strides):
        hi = n - (s + (o - 1) * st + 1) if o > 0 else n - s
        cfg.append((s, hi, st - 1))
    return [pad(ct, scalar(0, dtype_of(ct)), cfg)]


slice_p.abstract_eval = _slice_aval
deflinear(slice_p, _slice_transpose)
defleading(slice_p, lambda n, *, start_indices, limit_indices, strides: dict(
    start_indices=(0,) + tuple(start_indices), limit_indices=(n,) + tuple(limit_indices),
    strides=(1,) + tuple(strides)))


def slice_op(x, start_indices, limit_indices, strides=None):
    """The static slice ``x[start:limit:stride]`` per axis."""
    shape = shape_of(x)
    strides = tuple(strides) if strides is not None else (1,) * len(shape)
    if tuple(start_indices) == (0,) * len(shape) and tuple(limit_indices) == shape and \
            all(s == 1 for s in strides):
        return x
    return slice_p.bind(x, start_indices=tuple(int(s) for s in start_indices),
                        limit_indices=tuple(int(s) for s in limit_indices),
                        strides=tuple(int(s) for s in strides))


def slice_in_dim(x, start, limit, axis, stride=1):
    """``x[start:limit:stride]`` along ``axis``."""
    shape = shape_of(x)
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice_op(x, starts, limits, strides)


rev_p = Primitive("rev")
rev_p.impl = lambda x, *, dimensions: np.flip(x, axis=dimensions) if dimensions else x
rev_p.abstract_eval = lambda x, *, dimensions: ShapedArray(x.shape, x.dtype)
deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


defleading(rev_p, shifted("dimensions"))


def rev(x, dimensions):
    """``x`` reversed along ``dimensions``."""
    dimensions = tuple(sorted(int(d) for d in dimensions))
    if not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)




# roll(x, shift, axis): numpy's roll by a static shift, normalized to 0 < shift < n.
# One equation where two slices and a concatenate were three (autodiff.numpy.roll); the
# backends read it in place as an index map (backends/plan.py: out[i] = x[i - shift],
# wrapped), so a stencil of rolls fuses into one loop nest.
roll_p = Primitive("roll")


def _roll_impl(x, *, shift, axis):
    x = np.asarray(x)
    n = x.shape[axis]
    s = shift % n if n else 0
    if not s:
        return x.copy()
    out = np.empty_like(x)
    lead = (slice(None),) * axis
    out[lead + (slice(s, None),)] = x[lead + (slice(None, n - s),)]
    out[lead + (slice(None, s),)] = x[lead + (slice(n - s, None),)]
    return out


def _roll_aval(x, *, shift, axis):
    if not 0 <= axis < len(x.shape):
        raise ShapeError(f"roll: axis {axis} is out of range for shape {x.shape}")
    if not isinstance(shift, int):
        raise DTypeError(f"roll: the shift must be a static int, got {shift!r}")
    return ShapedArray(x.shape, x.dtype)


roll_p.impl = _roll_impl
roll_p.abstract_eval = _roll_aval
deflinear(roll_p, lambda ct, x, *, shift, axis: [roll(ct, -shift, axis)])
defleading(roll_p, shifted("axis"))


def roll(x, shift, axis):
    """``x`` rolled by the static ``shift`` along ``axis`` (``numpy.roll``; no equation when
    the shift is a multiple of the axis length).

    >>> import numpy as np
    >>> roll(np.arange(5.0), 2, 0)
    array([3., 4., 0., 1., 2.])
    """
    shape = shape_of(x)
    axis = int(axis)
    n = shape[axis]
    s = int(shift) % n if n else 0
    if not s:
        return x
    return roll_p.bind(x, shift=s, axis=axis)


iota_p = Primitive("iota")
iota_p.impl = lambda *, dtype, shape, dimension: np.broadcast_to(
    np.arange(shape[dimension], dtype=dtype).reshape(
        [shape[dimension] if i == dimension else 1 for i in range(len(shape))]), shape).copy()
iota_p.abstract_eval = lambda *, dtype, shape, dimension: ShapedArray(shape, dtype)
defjvp_zero(iota_p, "integer result, no operands")


def iota(dtype, shape, dimension=0):
    """Indices along ``dimension`` in an array of ``shape`` and ``dtype``."""
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(int(s) for s in shape), dimension=int(dimension))

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .reductions import reduce_sum  # noqa: E402
