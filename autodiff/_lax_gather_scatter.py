"""``jax.lax``'s ``gather`` and the ``scatter`` family with XLA's general dimension numbers,
built on integer-array indexing and ``.at[]`` (so every transform handles them).

>>> import numpy as np, autodiff as ad
>>> dn = ad.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
...                                     start_index_map=(0,))
>>> ad.lax.gather(np.arange(5.0), np.array([[3], [1]]), dn, (1,))
array([3., 1.])
"""
import builtins
import collections
import enum

import numpy as np

from . import numpy as anp
from .errors import ShapeError

__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
           "scatter_apply"]


# ----------------------------------------------------------------------------
# gather and scatter with XLA's dimension numbers
# ----------------------------------------------------------------------------

class GatherDimensionNumbers(collections.namedtuple(
        "GatherDimensionNumbers", ["offset_dims", "collapsed_slice_dims", "start_index_map",
                                   "operand_batching_dims", "start_indices_batching_dims"],
        defaults=((), ()))):
    """XLA's gather dimension numbers (JAX's ``lax.GatherDimensionNumbers``)."""
    __slots__ = ()


class ScatterDimensionNumbers(collections.namedtuple(
        "ScatterDimensionNumbers", ["update_window_dims", "inserted_window_dims",
                                    "scatter_dims_to_operand_dims", "operand_batching_dims",
                                    "scatter_indices_batching_dims"], defaults=((), ()))):
    """XLA's scatter dimension numbers (JAX's ``lax.ScatterDimensionNumbers``)."""
    __slots__ = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do: ``CLIP`` clamps the slice into the operand,
    ``FILL_OR_DROP`` fills gathers with ``fill_value`` and drops scatter updates,
    ``PROMISE_IN_BOUNDS`` (clamps here)."""
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"
    ONE_HOT = "one_hot"

    @staticmethod
    def from_any(s):
        """The :class:`GatherScatterMode` that ``s`` names: a mode itself, ``None``
        (``FILL_OR_DROP``), an enum with the same ``name``, or one of the strings
        ``"clip"``, ``"fill"``, ``"drop"``, ``"promise_in_bounds"``."""
        if isinstance(s, GatherScatterMode):
            return s
        if s is None:
            return GatherScatterMode.FILL_OR_DROP
        if hasattr(s, "name"):
            return GatherScatterMode[s.name]
        return {"clip": GatherScatterMode.CLIP, "fill": GatherScatterMode.FILL_OR_DROP,
                "drop": GatherScatterMode.FILL_OR_DROP,
                "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}[s]


def _window_index(operand_shape, indices, index_map, window_sizes, window_operand_dims,
                  op_batching, idx_batching, mode):
    """Per operand dimension, integer index arrays over (batch dims of ``indices``) +
    (window dims), and a mask of the in-bounds positions (for FILL_OR_DROP).

    Batch dims are the dims of ``indices`` except its last (the index vector).
    ``window_operand_dims``: the operand dims that have a window axis in the result, in
    order; the others (collapsed / inserted and batching dims) have size-1 windows."""
    idx = anp.asarray(indices)
    bshape = tuple(anp.shape(idx))[:-1]
    nb = len(bshape)
    wshape = tuple(window_sizes[d] for d in window_operand_dims)
    nw = len(wshape)
    full = bshape + wshape
    index_arrays, ok = [], None
    for d, size in enumerate(operand_shape):
        if d in op_batching:
            j = idx_batching[op_batching.index(d)]
            pos = anp.reshape(anp.arange(bshape[j]), tuple(bshape[j] if i == j else 1
                                                            for i in range(nb)) + (1,) * nw)
            index_arrays.append(anp.broadcast_to(pos, full))
            continue
        if d in index_map:
            start = anp.astype(idx[..., index_map.index(d)], np.int64)
        else:
            start = anp.zeros(bshape, np.int64)
        w = window_sizes[d]
        if mode is GatherScatterMode.FILL_OR_DROP:
            inb = anp.logical_and(anp.greater_equal(start, 0), anp.less_equal(start, size - w))
            ok = inb if ok is None else anp.logical_and(ok, inb)
        start = anp.clip(start, 0, builtins.max(size - w, 0))
        start = anp.reshape(start, bshape + (1,) * nw)
        if d in window_operand_dims:
            k = window_operand_dims.index(d)
            offs = anp.reshape(anp.arange(w), (1,) * nb + tuple(w if i == k else 1 for i in range(nw)))
            index_arrays.append(anp.broadcast_to(anp.add(start, offs), full))
        else:
            index_arrays.append(anp.broadcast_to(start, full))
    return tuple(index_arrays), ok, nb, nw


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, indices_are_sorted=False,
           unique_indices=False, mode=None, fill_value=None):
    """XLA's gather: for each index vector (the last axis of ``start_indices``) a slice of
    ``slice_sizes`` starting there; ``collapsed_slice_dims`` (size 1) are dropped, the
    remaining slice axes go to ``offset_dims`` of the result, the batch axes fill the rest.
    ``mode``: clip (default for JAX's ``PROMISE_IN_BOUNDS`` too) or ``"fill"``
    (out-of-bounds slices give ``fill_value``, NaN for floats). Built on integer-array
    indexing, so it is differentiable, vmaps and jits.

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                    start_index_map=(0,))
    >>> ad.lax.gather(np.arange(12.0).reshape(4, 3), np.array([[2], [0]]), dn, (1, 3))
    array([[6., 7., 8.],
           [0., 1., 2.]])
    """
    x = anp.asarray(operand)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.CLIP
    shape = tuple(anp.shape(x))
    op_b, idx_b = tuple(dn.operand_batching_dims), tuple(dn.start_indices_batching_dims)
    window_dims = [d for d in range(len(shape)) if d not in dn.collapsed_slice_dims and d not in op_b]
    if len(window_dims) != len(dn.offset_dims):
        raise ShapeError(f"gather: {len(dn.offset_dims)} offset_dims for {len(window_dims)} "
                         f"uncollapsed slice dimensions")
    ia, ok, nb, nw = _window_index(shape, start_indices, tuple(dn.start_index_map),
                                   tuple(slice_sizes), window_dims, op_b, idx_b, mode)
    out = x[ia]                                     # batch dims + window dims
    if ok is not None:
        fv = fill_value if fill_value is not None else (
            np.nan if np.dtype(anp.result_type(x)).kind in "fc" else 0)
        out = anp.where(anp.reshape(ok, tuple(anp.shape(ok)) + (1,) * nw), out,
                        anp.asarray(fv, dtype=anp.result_type(x)))
    # move the window axes to offset_dims
    rank = nb + nw
    batch_pos = [i for i in range(rank) if i not in dn.offset_dims]
    perm = [0] * rank
    for k, pos in enumerate(dn.offset_dims):
        perm[pos] = nb + k
    for k, pos in enumerate(batch_pos):
        perm[pos] = k
    return anp.transpose(out, tuple(perm))


def _scatter(kind, operand, scatter_indices, updates, dimension_numbers, mode, fn=None,
             unique_indices=False):
    x = anp.asarray(operand)
    dn = dimension_numbers
    mode = GatherScatterMode.from_any(mode)
    shape = tuple(anp.shape(x))
    u = anp.asarray(updates)
    op_b, idx_b = tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims)
    window_dims = [d for d in range(len(shape)) if d not in dn.inserted_window_dims and d not in op_b]
    uw = tuple(dn.update_window_dims)
    if len(window_dims) != len(uw):
        raise ShapeError(f"scatter: {len(uw)} update_window_dims for {len(window_dims)} "
                         f"operand window dimensions")
    ushape = tuple(anp.shape(u))
    sizes = [1] * len(shape)
    for d, ud in zip(window_dims, uw):
        sizes[d] = ushape[ud]
    # updates with the window axes last, matching the index arrays' layout
    ubatch = [i for i in range(len(ushape)) if i not in uw]
    u = anp.transpose(u, tuple(ubatch) + uw)
    ia, ok, nb, nw = _window_index(shape, scatter_indices, tuple(dn.scatter_dims_to_operand_dims),
                                   tuple(sizes), window_dims, op_b, idx_b, mode)
    free = [d for d in range(len(shape)) if d not in op_b]
    if ok is not None and free:
        # dropped updates land in a scratch block past the end of one dimension, cut off
        # after: no write of theirs can touch the operand, whatever the order of writes
        d0 = free[0]
        okw = anp.broadcast_to(anp.reshape(ok, tuple(anp.shape(ok)) + (1,) * nw), anp.shape(ia[d0]))
        lo = anp.astype(ia[d0], np.int64)
        ia = ia[:d0] + (anp.where(okw, lo, anp.add(lo, shape[d0])),) + ia[d0 + 1:]
        x = anp.concatenate([x, x], axis=d0)             # the scratch copy
    ref = anp.at(x)[ia]
    if kind == "apply":
        # a place written k times gets fn applied k times
        out = ref.apply(fn, unique_indices=unique_indices)
    else:
        out = getattr(ref, kind)(u)
    if ok is not None and free:
        out = anp.take(out, np.arange(shape[free[0]]), axis=free[0])
    return out


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """XLA's scatter: ``operand`` with the windows of ``updates`` written at the index
    vectors (the last axis of ``scatter_indices``); the dimension numbers mirror
    :func:`gather`'s. ``mode="fill"`` (JAX's default) drops out-of-bounds updates,
    ``"clip"`` clamps them. Differentiable (through ``.at[].set``).

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                     scatter_dims_to_operand_dims=(0,))
    >>> ad.lax.scatter(np.zeros(4), np.array([[1], [3]]), np.array([5.0, 6.0]), dn)
    array([0., 5., 0., 6.])
    """
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` adding into the operand (repeated indices accumulate).

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> ad.lax.scatter_add(np.zeros(3), np.array([[1], [1]]), np.array([5.0, 6.0]), dn)
    array([ 0., 11.,  0.])
    """
    return _scatter("add", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` subtracting from the operand."""
    return _scatter("add", operand, scatter_indices, anp.negative(updates), dimension_numbers, mode)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` multiplying into the operand."""
    return _scatter("multiply", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` keeping the minimum."""
    return _scatter("min", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """:func:`scatter` keeping the maximum."""
    return _scatter("max", operand, scatter_indices, updates, dimension_numbers, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """``func`` applied to the elements :func:`scatter` would write with updates of
    ``update_shape`` (JAX's argument: the whole updates' shape), the rest unchanged; an
    element written by several updates gets ``func`` applied that many times.

    >>> import numpy as np, autodiff as ad
    >>> dn = ad.lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> ad.lax.scatter_apply(np.arange(4.0), np.array([[1], [3]]), lambda v: v * 10, dn,
    ...                      update_shape=(2,))
    array([ 0., 10.,  2., 30.])
    """
    dummy = anp.zeros(tuple(update_shape), dtype=anp.result_type(operand))
    return _scatter("apply", operand, scatter_indices, dummy, dimension_numbers, mode, fn=func,
                    unique_indices=unique_indices)
