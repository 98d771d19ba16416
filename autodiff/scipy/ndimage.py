"""``jax.scipy.ndimage``: ``map_coordinates`` (spline orders 0 and 1, as JAX offers).

Semi-Lagrangian fluid solvers, image warping and registration read an array at
fractional positions with it. It is a composition of ``autodiff.numpy`` operations
(a gather and a weighted sum), so ``jit``, ``vmap`` and derivatives with respect to the
values and the coordinates work.
"""
import functools
import itertools
import operator

import numpy as np

from .. import numpy as anp

__all__ = ["map_coordinates"]


def _round_half_away(x):
    return anp.sign(x) * anp.floor(anp.abs(x) + 0.5)     # lax.round's default


def _mirror(index, size):
    s = size - 1                     # half-period of the triangle wave |x - round(x)|
    if s == 0:
        return anp.zeros_like(index)
    return anp.abs(anp.mod(index + s, 2 * s) - s)


def _reflect(index, size):
    return anp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: anp.clip(index, 0, size - 1),
    "nearest": lambda index, size: anp.clip(index, 0, size - 1),
    "wrap": lambda index, size: anp.mod(index, size),
    "mirror": _mirror,
    "reflect": _reflect,
}


def _nearest(coordinate):
    index = anp.astype(_round_half_away(coordinate), np.int64)
    return [(index, None)]


def _linear(coordinate):
    lower = anp.floor(coordinate)
    upper_weight = coordinate - lower
    index = anp.astype(lower, np.int64)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """The values of ``input`` at ``coordinates`` by spline interpolation of order 0 or 1.

    ``coordinates`` is a sequence of ``input.ndim`` arrays of one shape (the output's);
    ``coordinates[d]`` are positions along axis ``d`` in index units. ``mode`` says how
    positions outside the array read: ``'constant'`` (``cval``), ``'nearest'``,
    ``'wrap'``, ``'mirror'``, ``'reflect'`` (scipy's meanings). As in JAX, ``'constant'``
    interpolates between the edge and ``cval`` (scipy's ``'grid-constant'``), and
    ``order`` > 1 raises ``NotImplementedError``.

    >>> import numpy as np
    >>> from autodiff.scipy.ndimage import map_coordinates
    >>> a = np.arange(12.0).reshape(4, 3)
    >>> map_coordinates(a, [np.array([0.5, 2.0]), np.array([0.5, 1.0])], order=1)
    array([2., 7.])
    """
    x = anp.asarray(input)
    shape = np.shape(x)
    coords = [anp.asarray(c) for c in coordinates]
    if len(coords) != len(shape):
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {len(shape)}")
    fixer = _INDEX_FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"map_coordinates does not support mode {mode!r}; "
                                  f"supported: {sorted(_INDEX_FIXERS)}")
    if order == 0:
        nodes_of = _nearest
    elif order == 1:
        nodes_of = _linear
    else:
        raise NotImplementedError("map_coordinates supports order 0 and 1 (as JAX's does), "
                                  f"not order={order}")
    strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
    flat = anp.reshape(x, (-1,))
    per_axis = []
    for c, size, stride in zip(coords, shape, strides):
        nodes = []
        for index, weight in nodes_of(c):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            nodes.append((fixer(index, size) * stride, valid, weight))
        per_axis.append(nodes)
    out = None
    for items in itertools.product(*per_axis):
        offsets, valids, weights = zip(*items)
        value = anp.take(flat, functools.reduce(operator.add, offsets))
        valids = [v for v in valids if v is not None]
        if valids:
            value = anp.where(functools.reduce(operator.and_, valids), value,
                              anp.asarray(cval, dtype=value.dtype))
        weights = [w for w in weights if w is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        out = value if out is None else out + value
    if np.issubdtype(anp.result_type(x), np.integer):
        out = _round_half_away(out)
    return anp.astype(out, anp.result_type(x))
