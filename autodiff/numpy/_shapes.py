"""Shape functions of autodiff.numpy: reshaping, transposing, joining, splitting, indexing helpers.

Part of :mod:`autodiff.numpy`, which names everything it defines."""
import builtins

import numpy as np

from .. import primitives as P
from ..core import Tracer, is_concrete, user_source
from ..errors import ShapeError, UnsupportedError
from ._base import (npfunc, asarray, promote, shape_of, ndim, broadcast_shapes,
                    broadcast_to as _broadcast_to, normalize_axis, normalize_axes)
from .. import numpy as _anp      # names the package binds later (creation functions)
from . import _np_dtype
from ._elementwise import where
from ._reductions import sum

# ----------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------

@npfunc(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None):
    if shape is None:
        shape = newshape
    a = asarray(a)
    if order not in ("C", "F", "A"):
        raise ValueError(f"reshape: order must be 'C', 'F' or 'A', got {order!r}")
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    shape = tuple(builtins.int(s) for s in shape)
    if order == "F":       # column-major: reverse the axes, reshape, reverse back
        out = reshape(P.transpose(a, tuple(range(ndim(a)))[::-1]), shape[::-1])
        return P.transpose(out, tuple(range(ndim(out)))[::-1])
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    total = builtins.int(np.prod(shape_of(a), dtype=np.int64))
    if -1 in shape:
        known = builtins.int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape array of size {total} into shape {shape}",
                             source=user_source())
        shape = tuple(total // known if s == -1 else s for s in shape)
    if builtins.int(np.prod(shape, dtype=np.int64)) != total:
        raise ShapeError(f"cannot reshape array of size {total} into shape {shape}",
                         source=user_source())
    return P.reshape(a, shape)


@npfunc(np.ravel)
def ravel(a, order="C"):
    """The elements as a 1-d array (``numpy.ravel``), in C (row-major) or F
    (column-major) order.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.ravel(np.array([[1, 2], [3, 4]]), order="F")
    array([1, 3, 2, 4])
    """
    return reshape(a, (-1,), order="C" if order in ("A", "K") else order)


@npfunc(np.transpose)
def transpose(a, axes=None):
    a = asarray(a)
    nd = ndim(a)
    perm = tuple(reversed(range(nd))) if axes is None else tuple(normalize_axis(x, nd) for x in axes)
    return P.transpose(a, perm)


permute_dims = transpose


@npfunc(np.moveaxis)
def moveaxis(a, source, destination):
    a = asarray(a)
    nd = ndim(a)
    src = [normalize_axis(s, nd) for s in np.atleast_1d(source)]
    dst = [normalize_axis(d, nd) for d in np.atleast_1d(destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return P.transpose(a, order)


@npfunc(np.swapaxes)
def swapaxes(a, axis1, axis2):
    a = asarray(a)
    nd = ndim(a)
    perm = list(range(nd))
    i, j = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return P.transpose(a, perm)


@npfunc(np.expand_dims)
def expand_dims(a, axis):
    a = asarray(a)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    nd = ndim(a) + len(axes)
    axes = tuple(normalize_axis(builtins.int(x), nd) for x in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis!r}")
    return P.expand_dims(a, axes)


@npfunc(np.squeeze)
def squeeze(a, axis=None):
    a = asarray(a)
    sh = shape_of(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(sh) if s == 1)
    else:
        axes = normalize_axes(axis, len(sh))
        for ax in axes:
            if sh[ax] != 1:
                raise ShapeError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {ax} of shape {sh})", source=user_source())
    return P.squeeze(a, axes)


@npfunc(np.broadcast_to)
def broadcast_to(array, shape):
    shape = (shape,) if isinstance(shape, (builtins.int, np.integer)) else tuple(shape)
    return _broadcast_to(asarray(array), shape)


@npfunc(np.broadcast_arrays)
def broadcast_arrays(*args):
    args = [asarray(a) for a in args]
    sh = broadcast_shapes(*[shape_of(a) for a in args])
    # a tuple, as numpy 2 returns eagerly (JAX: a list)
    return tuple(_broadcast_to(a, sh) for a in args)


def broadcast(*args):
    """``numpy.broadcast(*args)``: the broadcast of the arguments' shapes, as an object with
    numpy's ``shape``, ``ndim``, ``nd``, ``size`` and ``numiter`` (code reads
    ``np.broadcast(x, y).shape``); traced values are accepted. On plain inputs it is
    numpy's own object (iterable over the broadcast elements).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> anp.broadcast(np.ones((3, 1)), np.ones(4)).shape
    (3, 4)
    >>> ad.grad(lambda x: anp.sum(anp.broadcast_to(x, anp.broadcast(x, np.ones((2, 3))).shape)))(
    ...     np.ones(3))
    array([2., 2., 2.])
    """
    if not builtins.any(isinstance(a, Tracer) for a in args):
        return np.broadcast(*args)
    return _Broadcast(broadcast_shapes(*[shape_of(a) for a in args]), len(args))


class _Broadcast:
    """What ``anp.broadcast`` returns for traced arguments: the shape facts of numpy's."""

    def __init__(self, shape, numiter):
        self.shape, self.numiter = tuple(shape), numiter
        self.ndim = self.nd = len(self.shape)
        self.size = builtins.int(np.prod(self.shape, dtype=np.int64))
        self.index = 0

    def __repr__(self):
        return f"broadcast(shape={self.shape})"


@npfunc(np.atleast_1d)
def atleast_1d(*arys):
    res = [reshape(a, (1,)) if ndim(a) == 0 else asarray(a) for a in arys]
    return res[0] if len(res) == 1 else res


@npfunc(np.atleast_2d)
def atleast_2d(*arys):
    res = []
    for a in arys:
        a = asarray(a)
        res.append(reshape(a, (1, 1)) if ndim(a) == 0 else expand_dims(a, 0) if ndim(a) == 1 else a)
    return res[0] if len(res) == 1 else res


def _seq(arrays):
    if isinstance(arrays, Tracer):
        return [arrays[i] for i in range(shape_of(arrays)[0])]
    return [asarray(a) for a in arrays]


def _numpy_concatenate(arrays, axis=0, out=None, dtype=None, casting=None):
    """numpy's ``concatenate``; with ``dtype`` and no ``casting`` the inputs are cast
    unsafely, as JAX casts them."""
    if casting is None:
        casting = "same_kind" if dtype is None else "unsafe"
    return np.concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


@npfunc(_numpy_concatenate)
def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (``numpy.concatenate``); ``axis=None`` flattens
    them first; ``dtype`` casts the result (unsafely, as in JAX).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.concatenate([np.array([1.5]), np.array([2.5])], dtype=np.int32)
    array([1, 2], dtype=int32)
    """
    arrays = _seq(arrays)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote(*arrays)
    if dtype is not None:
        arrays = [P.convert(a, _np_dtype(dtype)) for a in arrays]
    nd = ndim(arrays[0])
    if nd == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated", source=user_source())
    return P.concatenate(arrays, normalize_axis(axis, nd))


concat = concatenate


def _unsafe_dtype(np_fn):
    """numpy's ``np_fn`` with JAX's ``dtype=``: the result cast unsafely, as JAX casts."""
    def f(arrays, *args, dtype=None, casting=None, **kwargs):
        if dtype is None:
            return np_fn(arrays, *args, **kwargs)
        if np_fn is np.dstack:
            return np.dstack(arrays).astype(dtype)
        return np_fn(arrays, *args, dtype=dtype, casting=casting or "unsafe", **kwargs)
    f.__name__ = np_fn.__name__
    return f


def _cast(x, dtype):
    return x if dtype is None else P.convert(x, _np_dtype(dtype))


@npfunc(_unsafe_dtype(np.stack))
def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays along a new axis (``numpy.stack``); ``dtype`` casts the result.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.stack([np.zeros(2), np.ones(2)], axis=1, dtype=int)
    array([[0, 1],
           [0, 1]])
    """
    if out is not None:
        raise TypeError("stack: the 'out' argument is not supported (arrays are immutable)")
    arrays = _seq(arrays)
    shapes = {shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"all input arrays must have the same shape, got {sorted(shapes)}",
                         source=user_source())
    nd = ndim(arrays[0]) + 1
    ax = normalize_axis(axis, nd)
    return _cast(concatenate([expand_dims(a, ax) for a in arrays], axis=ax), dtype)


@npfunc(_unsafe_dtype(np.hstack))
def hstack(tup, *, dtype=None):
    """Join arrays column-wise (``numpy.hstack``); ``dtype`` casts the result."""
    arrs = [atleast_1d(a) for a in _seq(tup)]
    return _cast(concatenate(arrs, axis=0 if ndim(arrs[0]) == 1 else 1), dtype)


@npfunc(_unsafe_dtype(np.vstack))
def vstack(tup, *, dtype=None):
    """Join arrays row-wise (``numpy.vstack``); ``dtype`` casts the result."""
    return _cast(concatenate([atleast_2d(a) for a in _seq(tup)], axis=0), dtype)


row_stack = vstack


@npfunc(np.column_stack)
def column_stack(tup):
    """1-d arrays as columns of a 2-d array, 2-d arrays joined column-wise
    (``numpy.column_stack``)."""
    arrs = [reshape(a, (-1, 1)) if ndim(a) < 2 else asarray(a) for a in _seq(tup)]
    return concatenate(arrs, axis=1)


@npfunc(_unsafe_dtype(np.dstack))
def dstack(tup, *, dtype=None):
    """Join arrays along the third axis (``numpy.dstack``); ``dtype`` (JAX's keyword) casts
    the result."""
    arrs = []
    for a in _seq(tup):
        a = atleast_2d(a)
        arrs.append(expand_dims(a, 2) if ndim(a) == 2 else a)
    return _cast(concatenate(arrs, axis=2), dtype)


@npfunc(np.split)
def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=True)


@npfunc(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, strict=False)


def _split(ary, ios, axis, strict):
    ary = asarray(ary)
    ax = normalize_axis(axis, ndim(ary))
    n = shape_of(ary)[ax]
    if isinstance(ios, (builtins.int, np.integer)):
        k = builtins.int(ios)
        if strict and n % k:
            raise ShapeError("array split does not result in an equal division", source=user_source())
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        if isinstance(ios, Tracer):
            ios = ios.concrete_value("split: indices_or_sections")
        ios = [i.concrete_value("split: an index") if isinstance(i, Tracer) else i for i in ios]
        ios = [builtins.int(i) for i in ios]
        # Python slice bounds: a negative index counts from the end
        bounds = [0] + [builtins.min(builtins.max(i if i >= 0 else n + i, 0), n)
                        for i in ios] + [n]
    return [P.slice_in_dim(ary, bounds[i], builtins.max(bounds[i], bounds[i + 1]), ax)
            for i in range(len(bounds) - 1)]


@npfunc(np.hsplit)
def hsplit(ary, ios):
    return split(ary, ios, axis=1 if ndim(ary) > 1 else 0)


@npfunc(np.vsplit)
def vsplit(ary, ios):
    return split(ary, ios, axis=0)


@npfunc(np.flip)
def flip(m, axis=None):
    m = asarray(m)
    return P.rev(m, normalize_axes(axis, ndim(m)))


@npfunc(np.fliplr)
def fliplr(m):
    return flip(m, 1)


@npfunc(np.flipud)
def flipud(m):
    return flip(m, 0)


@npfunc(np.roll)
def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape_of(a))
    if isinstance(shift, Tracer) and not is_concrete(shift):
        # JAX: a traced shift; the result gathers along each axis at (i - shift) mod n
        shifts = _anp.atleast_1d(shift)
        axes = np.atleast_1d(axis)
        k = builtins.max(shape_of(shifts)[0], len(axes))
        shifts = _anp.broadcast_to(shifts, (k,))
        axes = np.broadcast_to(axes, (k,))
        for j in range(k):
            ax = normalize_axis(builtins.int(axes[j]), ndim(a))
            n = shape_of(a)[ax]
            if n == 0:
                continue
            src = _anp.mod(_anp.subtract(np.arange(n), getitem(shifts, j)), n)
            a = take(a, src, axis=ax)
        return a
    if isinstance(shift, (builtins.int, np.integer)) and isinstance(axis, (builtins.int, np.integer)):
        pairs = ((shift, axis),)        # (the usual call: no broadcast of shift and axis)
    else:
        pairs = zip(*np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis)))
    for s, ax in pairs:
        a = P.roll(a, builtins.int(s), normalize_axis(ax, ndim(a)))   # (normalizes the shift)
    return a


@npfunc(np.tile)
def tile(A, reps):
    A = asarray(A)
    reps = (reps,) if isinstance(reps, (builtins.int, np.integer)) else tuple(reps)
    nd = builtins.max(ndim(A), len(reps))
    A = reshape(A, (1,) * (nd - ndim(A)) + shape_of(A))
    reps = (1,) * (nd - len(reps)) + reps
    sh = shape_of(A)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    big = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, sh)):
        big += [r, s]
        dims.append(2 * i + 1)
    out = P.broadcast_in_dim(A, tuple(big), tuple(dims))
    return reshape(out, tuple(r * s for r, s in zip(reps, sh)))


@npfunc(np.repeat)
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """``numpy.repeat``. JAX's ``total_repeat_length`` (the result's length along
    ``axis``) lets ``repeats`` be traced without a concrete value (under ``jit``): the
    result is cut to, or padded with the last element to, that length, as in JAX."""
    a = asarray(a)
    if ndim(a) == 0:
        a = ravel(a)                  # numpy: a 0-d array repeats as a 1-d one (axis 0)
    if total_repeat_length is not None:
        return _repeat_total(a, repeats, axis, builtins.int(total_repeat_length))
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = normalize_axis(axis, ndim(a))
    if isinstance(repeats, (builtins.int, np.integer)) or np.ndim(repeats) == 0:
        r = builtins.int(repeats)
        sh = shape_of(a)
        big = sh[:ax + 1] + (r,) + sh[ax + 1:]
        out = P.broadcast_in_dim(a, big, tuple(i for i in range(len(big)) if i != ax + 1))
        return reshape(out, sh[:ax] + (sh[ax] * r,) + sh[ax + 1:])
    idx = np.repeat(np.arange(shape_of(a)[ax]), np.asarray(repeats))
    return take(a, idx, axis=ax)


def _repeat_total(a, repeats, axis, total):
    """``repeat`` with a result of ``total`` elements along ``axis``: element ``j`` of the
    result takes the input element whose cumulative repeat count first exceeds ``j``
    (a traced ``repeats`` is fine); positions past the sum of ``repeats`` take the last."""
    if axis is None:
        a, axis = ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    n = shape_of(a)[ax]
    reps = _anp.broadcast_to(_anp.asarray(repeats), (n,))
    ends = _anp.cumsum(reps)
    idx = _anp.searchsorted(ends, np.arange(total), side="right")
    return take(a, _anp.minimum(idx, n - 1), axis=ax)


# ----------------------------------------------------------------------------
# indexing
# ----------------------------------------------------------------------------

from ._indexing import getitem, take, take_along_axis, at, nonzero, argwhere, flatnonzero, _AtIndexer  # noqa: E402,F401 (re-exported)


@npfunc(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    nd = ndim(a)
    a1, a2 = normalize_axis(axis1, nd), normalize_axis(axis2, nd)
    a = moveaxis(a, (a1, a2), (-2, -1))
    n, m = shape_of(a)[-2:]
    if offset >= 0:
        k = builtins.max(0, builtins.min(n, m - offset))
        rows, cols = np.arange(k), np.arange(k) + offset
    else:
        k = builtins.max(0, builtins.min(n + offset, m))
        rows, cols = np.arange(k) - offset, np.arange(k)
    return getitem(a, (Ellipsis, rows, cols))


@npfunc(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@npfunc(np.diag)
def diag(v, k=0):
    v = asarray(v)
    if ndim(v) == 1:
        n = shape_of(v)[0] + builtins.abs(k)
        out = _anp.zeros_like(v, shape=(n, n))
        rows = np.arange(shape_of(v)[0]) + builtins.max(-k, 0)
        cols = np.arange(shape_of(v)[0]) + builtins.max(k, 0)
        return at(out)[rows, cols].set(v)
    if ndim(v) == 2:
        return diagonal(v, k)
    raise ShapeError("diag: input must be 1-d or 2-d", source=user_source())


@npfunc(np.diagflat)
def diagflat(v, k=0):
    return diag(ravel(v), k)


def _tri_mask(shape_, k, lower):
    n, m = shape_[-2:]
    r = np.arange(n)[:, None]
    c = np.arange(m)[None, :]
    return (c - r <= k) if lower else (c - r >= k)


@npfunc(np.tril)
def tril(m, k=0):
    m = asarray(m)
    mask = _tri_mask(shape_of(m), k, True)
    return where(np.broadcast_to(mask, shape_of(m)), m, _anp.zeros_like(m))


@npfunc(np.triu)
def triu(m, k=0):
    m = asarray(m)
    mask = _tri_mask(shape_of(m), k, False)
    return where(np.broadcast_to(mask, shape_of(m)), m, _anp.zeros_like(m))

