"""``jax.ops``: segment reductions, as graph networks and ragged batches use them.

``segment_sum(data, segment_ids, num_segments)`` is ``out[segment_ids[i]] += data[i]``
over the leading axis of ``data``; ``segment_prod``, ``segment_max`` and ``segment_min``
reduce with ``*``, ``max`` and ``min``. They are ``.at[ids].add/multiply/max/min`` on an
array of the reduction's identity, so every transform and ``jit`` handles them, with the
gradients of those updates (``segment_max``'s ties share the gradient, as ``anp.max``'s).
As in JAX, ids outside ``[0, num_segments)`` (negative ones included) are dropped, a
segment without elements holds the identity (0, 1, -inf or +inf; the dtype's extremes for
integers), and ``indices_are_sorted``, ``unique_indices`` and ``bucket_size`` are hints
that change no result. ``num_segments`` must be given when ``segment_ids`` is traced
without a concrete value (under ``jit``); otherwise it defaults to ``max(ids) + 1``.

>>> import numpy as np, autodiff as ad
>>> from autodiff.ops import segment_sum, segment_max
>>> data, ids = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 0, 2, 2])
>>> segment_sum(data, ids, num_segments=3)
array([3., 0., 7.])
>>> segment_max(data, ids, num_segments=3)
array([  2., -inf,   4.])
>>> ad.jit(ad.grad(lambda d: segment_max(d, ids, 3)[2]))(data)
array([0., 0., 0., 1.])
"""
import builtins

import numpy as np

from . import numpy as anp
from .core import Tracer, is_concrete, user_source
from .errors import ConcretizationError, DTypeError, ShapeError

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(dtype, op):
    if op == "add":
        return 0
    if op == "multiply":
        return 1
    big = np.inf if dtype.kind in "fc" else (
        True if dtype.kind == "b" else np.iinfo(dtype).max)
    small = -np.inf if dtype.kind in "fc" else (
        False if dtype.kind == "b" else np.iinfo(dtype).min)
    return small if op == "max" else big


def _segment(op, name, data, segment_ids, num_segments, mode):
    if mode not in (None, "fill", "drop", "promise_in_bounds", "clip"):
        raise ValueError(f"{name}: unknown mode={mode!r}")
    data = anp.asarray(data)
    ids = anp.asarray(segment_ids)
    if anp.ndim(ids) != 1:
        raise ShapeError(f"{name}: segment_ids must be 1-d, got shape {anp.shape(ids)}",
                         source=user_source())
    if anp.ndim(data) < 1 or anp.shape(data)[0] != anp.shape(ids)[0]:
        raise ShapeError(f"{name}: data's leading axis must have one entry per segment id; "
                         f"got data of shape {anp.shape(data)} and {anp.shape(ids)[0]} ids",
                         source=user_source())
    if anp.result_type(ids).kind not in "iu":
        raise DTypeError(f"{name}: segment_ids must be integers, got "
                         f"{anp.result_type(ids)}", source=user_source())
    if num_segments is None:
        if isinstance(ids, Tracer) and not is_concrete(ids):
            raise ConcretizationError(
                f"{name}: the number of segments depends on the values of traced "
                f"segment_ids; pass num_segments=...", source=user_source())
        concrete = np.asarray(ids.concrete_value(name) if isinstance(ids, Tracer) else ids)
        num_segments = builtins.int(concrete.max()) + 1 if concrete.size else 0
    n = builtins.int(num_segments)
    dtype = anp.result_type(data)
    ident = _identity(dtype, op)
    if mode == "clip":
        ids, how = anp.clip(ids, 0, builtins.max(n - 1, 0)), "promise_in_bounds"
    else:
        # JAX drops every id outside [0, n); numpy's negative ids would wrap
        ids, how = anp.where(ids < 0, n, ids), "drop"
    out = anp.full((n,) + tuple(anp.shape(data)[1:]), ident, dtype=dtype)
    return getattr(anp.at(out)[ids], op)(data, mode=how)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sum of ``data``'s rows per segment id (``jax.ops.segment_sum``).

    >>> import numpy as np
    >>> segment_sum(np.ones((3, 2)), np.array([1, 1, 0]))
    array([[1., 1.],
           [2., 2.]])
    """
    return _segment("add", "segment_sum", data, segment_ids, num_segments, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """Product of ``data``'s rows per segment id (``jax.ops.segment_prod``).

    >>> import numpy as np
    >>> segment_prod(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]))
    array([6., 4.])
    """
    return _segment("multiply", "segment_prod", data, segment_ids, num_segments, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Maximum of ``data``'s rows per segment id (``jax.ops.segment_max``); -inf where a
    segment is empty.

    >>> import numpy as np
    >>> segment_max(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]))
    array([3., 4.])
    """
    return _segment("max", "segment_max", data, segment_ids, num_segments, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Minimum of ``data``'s rows per segment id (``jax.ops.segment_min``); +inf where a
    segment is empty.

    >>> import numpy as np
    >>> segment_min(np.array([2.0, 3.0, 4.0]), np.array([0, 0, 1]))
    array([2., 4.])
    """
    return _segment("min", "segment_min", data, segment_ids, num_segments, mode)
