"""``jax.lax``'s structural operators: broadcasting, reshaping, transposition,
concatenation, padding (interior padding too), slicing (static and at traced starts),
``iota``, ``full``, ``select_n``, ``split``, ``index_take`` and the small helpers JAX code
calls (``optimization_barrier``, ``composite``, ``platform_dependent``, ...).

``as_dtype`` and ``padding_pairs`` (not part of the API) are shared with the other lax
modules: a dtype from numpy's spellings or ``anp.float32``; ``'SAME'``/``'VALID'``/explicit
window padding as ``(lo, hi)`` pairs.

>>> import numpy as np, autodiff as ad
>>> ad.lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
array([0., 2., 1.])
"""
import builtins
import itertools

import numpy as np

from . import numpy as anp
from . import primitives as P
from ._lax_control_flow import dynamic_slice, dynamic_update_slice
from .core import Tracer
from .errors import ShapeError

__all__ = ["broadcast", "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims",
           "concatenate", "pad", "slice", "slice_in_dim", "dynamic_slice_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_index_in_dim", "index_in_dim", "rev",
           "iota", "broadcasted_iota", "full", "full_like", "zeros_like_array", "collapse",
           "select_n", "split", "broadcast_shapes", "broadcast_to_rank", "empty",
           "dynamic_update_index_in_dim", "index_take", "tile", "optimization_barrier",
           "composite",
           "platform_dependent", "with_sharding_constraint"]


def as_dtype(dtype):
    """A numpy dtype from numpy's spellings or ``anp.float32`` and friends."""
    d = getattr(dtype, "dtype", None)          # anp.float32 and friends wrap a dtype
    return d if isinstance(d, np.dtype) else np.dtype(dtype)


# ----------------------------------------------------------------------------
# structure
# ----------------------------------------------------------------------------

def broadcast(operand, sizes):
    """Add leading dimensions ``sizes``."""
    x = anp.asarray(operand)
    return anp.broadcast_to(x, tuple(sizes) + tuple(anp.shape(x)))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """``operand`` broadcast to ``shape``; operand dimension ``i`` becomes result dimension
    ``broadcast_dimensions[i]``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.broadcast_in_dim(np.array([1.0, 2.0]), (3, 2), (1,)).shape
    (3, 2)
    """
    x = anp.asarray(operand)
    if not isinstance(x, Tracer):
        return np.asarray(P.broadcast_in_dim(np.asarray(x), tuple(shape), tuple(broadcast_dimensions)))
    return P.broadcast_in_dim(x, tuple(shape), tuple(broadcast_dimensions))


def reshape(operand, new_sizes, dimensions=None):
    """``operand`` reshaped to ``new_sizes``, read in the order of ``dimensions`` (a permutation
    applied first) when given."""
    x = anp.asarray(operand)
    if dimensions is not None:
        x = anp.transpose(x, dimensions)
    return anp.reshape(x, tuple(new_sizes))


def transpose(operand, permutation):
    """``operand`` with its dimensions permuted: result dimension ``i`` is operand dimension
    ``permutation[i]``."""
    return anp.transpose(operand, tuple(permutation))


def squeeze(array, dimensions):
    """``array`` without the size-1 dimensions listed in ``dimensions``."""
    return anp.squeeze(array, axis=tuple(dimensions))


def expand_dims(array, dimensions):
    """``array`` with size-1 dimensions inserted at the positions ``dimensions`` of the result."""
    return anp.expand_dims(array, tuple(dimensions))


def concatenate(operands, dimension):
    """The ``operands`` joined along ``dimension`` (JAX's argument order: the sequence, then the
    axis)."""
    return anp.concatenate(list(operands), axis=dimension)


def pad(operand, padding_value, padding_config):
    """Pad with ``(low, high, interior)`` per dimension; negative low/high crop."""
    x = anp.asarray(operand)
    cfg = tuple(tuple(int(v) for v in c) for c in padding_config)
    pv = anp.astype(anp.asarray(padding_value), anp.result_type(x))
    if not isinstance(x, Tracer) and not isinstance(pv, Tracer):
        return np.asarray(P.pad_p.impl(np.asarray(x), np.asarray(pv), padding_config=cfg))
    return P.pad(x, pv, cfg)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    idx = tuple(builtins.slice(s, l, st) for s, l, st in
                zip(start_indices, limit_indices, strides or [1] * len(start_indices)))
    return anp.asarray(operand)[idx]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start_index:limit_index:stride]`` along ``axis``, the other dimensions whole.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.slice_in_dim(np.arange(6.0).reshape(2, 3), 1, 3, axis=1)
    array([[1., 2.],
           [4., 5.]])
    """
    x = anp.asarray(operand)
    idx = [builtins.slice(None)] * anp.ndim(x)
    idx[axis] = builtins.slice(start_index, limit_index, stride)
    return x[tuple(idx)]


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` of ``operand`` along ``axis`` (a static index), kept as a size-1 dimension
    unless ``keepdims=False``."""
    out = slice_in_dim(operand, index, index + 1 if index != -1 else None, 1, axis)
    return out if keepdims else anp.squeeze(out, axis=axis)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """``slice_size`` elements of ``operand`` along ``axis`` from ``start_index``, which may be
    traced (clamped into range as in JAX)."""
    x = anp.asarray(operand)
    starts = [0] * anp.ndim(x)
    starts[axis] = start_index
    sizes = list(anp.shape(x))
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` (possibly traced) of ``operand`` along ``axis``, kept as a size-1 dimension
    unless ``keepdims=False``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else anp.squeeze(out, axis=axis)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``operand`` with ``update`` written along ``axis`` from ``start_index`` (possibly traced;
    clamped as in JAX), functionally."""
    x = anp.asarray(operand)
    starts = [0] * anp.ndim(x)
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def rev(operand, dimensions):
    """``operand`` reversed along each of ``dimensions``."""
    return anp.flip(operand, axis=tuple(dimensions))


def iota(dtype, size):
    """``0, 1, ..., size - 1`` as a 1-d array of ``dtype``.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.iota(np.int64, 3)
    array([0, 1, 2])
    """
    return np.arange(size, dtype=as_dtype(dtype))


def broadcasted_iota(dtype, shape, dimension):
    """An array of ``shape`` and ``dtype`` holding each element's index along ``dimension``."""
    return np.asarray(P.iota(as_dtype(dtype), tuple(shape), dimension))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` (an int or a tuple) filled with ``fill_value``, of ``dtype`` (the
    value's by default)."""
    return anp.full(tuple(shape) if not isinstance(shape, int) else (shape,), fill_value, dtype=dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like ``x`` (its shape and dtype unless ``shape``/``dtype`` are given) filled with
    ``fill_value``."""
    return anp.full_like(x, fill_value, dtype=dtype, shape=shape)


def zeros_like_array(x):
    """Zeros of ``x``'s shape and dtype."""
    return anp.zeros_like(x)


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``start_dimension`` up to ``stop_dimension`` (exclusive; the end
    by default) merged into one."""
    x = anp.asarray(operand)
    sh = tuple(anp.shape(x))
    stop = len(sh) if stop_dimension is None else stop_dimension
    return anp.reshape(x, sh[:start_dimension] + (int(np.prod(sh[start_dimension:stop])),) + sh[stop:])


def padding_pairs(padding, in_shape, window, strides, dilation):
    """``(lo, hi)`` padding per spatial axis from ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'``
    or explicit pairs."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(in_shape)
        if padding.upper() in ("SAME", "SAME_LOWER"):
            pads = []
            for n, w, s, d in zip(in_shape, window, strides, dilation):
                ew = (w - 1) * d + 1
                out = -(-n // s)
                total = builtins.max((out - 1) * s + ew - n, 0)
                lo = total // 2 if padding.upper() == "SAME" else total - total // 2
                pads.append((lo, total - lo))
            return pads
        raise ValueError(f"padding must be 'VALID', 'SAME', 'SAME_LOWER' or pairs, got {padding!r}")
    return [tuple(int(v) for v in p) for p in padding]


# ----------------------------------------------------------------------------
# structure and selection
# ----------------------------------------------------------------------------

def select_n(which, *cases):
    """``cases[which]`` elementwise: ``which`` is boolean (two cases: False picks
    ``cases[0]``) or an integer in ``[0, len(cases))``. Differentiable in the cases.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.select_n(np.array([True, False]), np.zeros(2), np.ones(2))
    array([1., 0.])
    """
    if not cases:
        raise ValueError("select_n: needs at least one case")
    which = anp.asarray(which)
    if np.dtype(anp.result_type(which)).kind == "b":
        if len(cases) > 2:
            raise ValueError(f"select_n: a boolean selector picks between 2 cases, got {len(cases)}")
        return cases[0] if len(cases) == 1 else anp.where(which, cases[1], cases[0])
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        out = anp.where(anp.equal(which, i), c, out)
    return out


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``.

    >>> import numpy as np, autodiff as ad
    >>> [p.tolist() for p in ad.lax.split(np.arange(5.0), (2, 3))]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    x = anp.asarray(operand)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != anp.shape(x)[axis]:
        raise ShapeError(f"lax.split: sizes {tuple(sizes)} sum to {sum(sizes)}, but axis {axis} "
                         f"has size {anp.shape(x)[axis]}")
    return anp.split(x, list(itertools.accumulate(sizes))[:-1], axis=axis)


def tile(operand, reps):
    """``operand`` repeated ``reps[d]`` times along each dimension ``d`` (JAX's ``lax.tile``:
    ``reps`` has one entry per dimension).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.tile(np.array([[1, 2]]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    x = anp.asarray(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != anp.ndim(x):
        raise ShapeError(f"lax.tile: reps {reps} must have one entry per dimension of the "
                         f"operand (rank {anp.ndim(x)})")
    if builtins.any(r < 0 for r in reps):
        raise ShapeError(f"lax.tile: reps {reps} must be non-negative")
    return anp.tile(x, reps)


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (numpy's rules).

    >>> import autodiff as ad
    >>> ad.lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_to_rank(x, rank):
    """``x`` with leading size-1 axes up to ``rank`` dimensions.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    x = anp.asarray(x)
    nd = anp.ndim(x)
    return x if nd >= rank else anp.reshape(x, (1,) * (rank - nd) + tuple(anp.shape(x)))


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (zeros here, as
    JAX gives on the CPU).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.empty(3, np.float32)
    array([0., 0., 0.], dtype=float32)
    """
    return anp.zeros(shape, dtype=dtype)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """``operand`` with ``update`` written at position ``index`` of ``axis`` (``update``
    with or without that axis of size 1).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, 0)
    array([[0., 0.],
           [1., 1.],
           [0., 0.]])
    """
    x, u = anp.asarray(operand), anp.asarray(update)
    axis = axis % anp.ndim(x)
    if anp.ndim(u) == anp.ndim(x) - 1:
        u = anp.expand_dims(u, axis)
    return dynamic_update_slice_in_dim(x, u, index, axis)


def index_take(src, idxs, axes):
    """Integer-array indexing along ``axes``: the result's first axis runs over the index
    arrays (one per axis in ``axes``), the remaining axes of ``src`` follow in order.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.index_take(np.arange(12.0).reshape(3, 4), (np.array([0, 2]),), (1,))
    array([[ 0.,  4.,  8.],
           [ 2.,  6., 10.]])
    """
    x = anp.asarray(src)
    axes = [a % anp.ndim(x) for a in axes]
    rest = [d for d in range(anp.ndim(x)) if d not in axes]
    x = anp.transpose(x, tuple(axes) + tuple(rest))
    return x[tuple(anp.asarray(i) for i in idxs)]


def optimization_barrier(operand):
    """The operand (a pytree) unchanged: XLA's barrier against moving computations across
    it has no counterpart in this compiler, which keeps program order.

    >>> import autodiff as ad
    >>> ad.lax.optimization_barrier((1.0, [2.0]))
    (1.0, [2.0])
    """
    return operand


def composite(decomposition, name, version=0):
    """Mark a function as a named composite operation (JAX lowers it to a StableHLO
    composite); here the decomposition is what runs, under every transform.

    >>> import numpy as np, autodiff as ad
    >>> my_tanh = ad.lax.composite(lambda x: 2.0 / (1.0 + np.exp(-2.0 * x)) - 1.0, name="my.tanh")
    >>> round(float(my_tanh(0.5)), 6)
    0.462117
    """
    import functools

    @functools.wraps(decomposition)
    def composite_fn(*args, **kwargs):
        return decomposition(*args, **kwargs)
    composite_fn.composite_name, composite_fn.composite_version = name, version
    return composite_fn


def platform_dependent(*args, default=None, **per_platform):
    """Call the branch for this platform (``cpu``; ``cuda`` under the CUDA backend is not
    distinguished at trace time, so ``cpu``) or ``default`` with ``*args``.

    >>> import autodiff as ad
    >>> ad.lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x)
    20.0
    """
    fn = per_platform.get("cpu", default)
    if fn is None:
        raise ValueError(f"platform_dependent: no branch for 'cpu' and no default "
                         f"(got branches for {sorted(per_platform)})")
    return fn(*args)


def with_sharding_constraint(x, shardings):
    """``x`` unchanged: every array lives on one device here, so any sharding holds.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.with_sharding_constraint(np.ones(2), None)
    array([1., 1.])
    """
    return x
