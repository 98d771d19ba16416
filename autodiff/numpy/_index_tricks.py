"""Index tricks: ``r_``/``c_`` concatenation by index expressions, ``ix_``, index
arithmetic (``unravel_index``, ``ravel_multi_index``) and the writes by index
(``put_along_axis``, ``fill_diagonal``, ``place``): numpy arrays in place as numpy does,
traced ones functionally (the updated array is returned, as in JAX).

>>> import numpy as np, autodiff.numpy as anp
>>> anp.r_[np.array([1.0, 2.0]), 0.0, 3.0]
array([1., 2., 0., 3.])
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, is_concrete, user_source
from ..errors import UnsupportedError
from ._base import npfunc, asarray, shape_of, ndim, normalize_axis, dtype_of, value_kind


class _AxisConcatenator:
    """``r_`` / ``c_``: concatenation by index expressions, as numpy's."""

    def __init__(self, np_obj, axis, ndmin, trans1d):
        self._np, self.axis, self.ndmin, self.trans1d = np_obj, axis, ndmin, trans1d

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if value_kind(key) == 0:
            return self._np[key]           # plain numpy values: numpy's own
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d

        def with_ndmin(o):
            return anp.reshape(o, (1,) * (ndmin - ndim(o)) + shape_of(o)) if ndim(o) < ndmin else o
        objs, rtypes = [], []
        for k, item in enumerate(key):
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, complex):
                    obj = np.linspace(start, item.stop, builtins.int(abs(step)))
                else:
                    obj = np.arange(start, item.stop, step)
                if ndmin > 1:
                    obj = np.array(obj, ndmin=ndmin)
                    if trans1d != -1:
                        obj = obj.swapaxes(-1, trans1d)
                rtypes.append(obj.dtype)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError("special directives must be the first entry.")
                if item in ("r", "c"):
                    raise UnsupportedError("r_/c_: the matrix directives 'r' and 'c' are not supported", source=user_source())
                parts = [builtins.int(x) for x in item.split(",")]
                axis = parts[0]
                if len(parts) > 1:
                    ndmin = parts[1]
                if len(parts) > 2:
                    trans1d = parts[2]
                continue
            elif isinstance(item, (bool, int, float, np.generic)):
                obj = item                        # a scalar: weak in the promotion
                rtypes.append(item)
            else:
                obj = asarray(item)
                nd0 = ndim(obj)
                obj = with_ndmin(obj)
                if trans1d != -1 and nd0 < ndmin:
                    k2, k1 = ndmin - nd0, trans1d
                    if k1 < 0:
                        k1 += k2 + 1
                    d = list(range(ndmin))
                    obj = anp.transpose(obj, d[:k1] + d[k2:] + d[k1:k2])
                rtypes.append(dtype_of(obj))
            objs.append(obj)
        dt = np.result_type(*rtypes)
        out = []
        for o in objs:
            o = with_ndmin(asarray(o) if not isinstance(o, (bool, int, float, np.generic)) else np.asarray(o))
            out.append(P.convert(o, dt) if isinstance(o, Tracer) else np.asarray(o, dt))
        return anp.concatenate(out, axis=axis)

    def __len__(self):
        return 0


r_ = _AxisConcatenator(np.r_, 0, 1, -1)
c_ = _AxisConcatenator(np.c_, -1, 2, 0)
r_.__doc__ = "Row-wise concatenation by index expressions (``numpy.r_``), traced values included."
c_.__doc__ = "Column-wise concatenation by index expressions (``numpy.c_``), traced values included."


def ix_(*args):
    """Open mesh from 1-D index or value sequences (``numpy.ix_``)."""
    if value_kind(args) == 0:
        return np.ix_(*args)
    out = []
    nd = len(args)
    for i, a in enumerate(args):
        a = asarray(a)
        if ndim(a) != 1:
            raise ValueError("Cross index must be 1 dimensional")
        sh = [1] * nd
        sh[i] = shape_of(a)[0]
        out.append(anp.reshape(a, tuple(sh)))
    return tuple(out)


@npfunc(np.unravel_index)
def unravel_index(indices, shape, order="C"):
    """Coordinates of flat ``indices`` in an array of ``shape`` (``numpy.unravel_index``)."""
    idx = asarray(indices)
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    dims = list(shape) if order == "C" else list(shape)[::-1]
    out = []
    rest = idx
    for d in reversed(dims):
        out.append(anp.mod(rest, d))
        rest = anp.floor_divide(rest, d)
    out = out[::-1]
    return tuple(out if order == "C" else out[::-1])


@npfunc(np.ravel_multi_index)
def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of coordinate arrays (``numpy.ravel_multi_index``); ``mode`` 'raise',
    'wrap' or 'clip'. 'raise' checks the indices where they have values (numpy's
    ValueError for an entry out of bounds); under ``jit`` they are not checked (JAX raises
    a concretization error there instead).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda i: anp.ravel_multi_index((i, i), (2, 3), mode="clip"))(np.array([0, 5]))
    array([0, 5])
    """
    dims = tuple(dims)
    idx = [asarray(i) for i in multi_index]
    if isinstance(mode, str):
        mode = (mode,) * len(dims)
    for i, d, md in zip(idx, dims, mode):
        if md == "raise" and (not isinstance(i, Tracer) or is_concrete(i)):
            v = np.asarray(i.concrete_value("ravel_multi_index") if isinstance(i, Tracer) else i)
            if np.any(v < 0) or np.any(v >= d):
                raise ValueError("invalid entry in coordinates array")
    fixed = []
    for i, d, md in zip(idx, dims, mode):
        if md == "wrap":
            i = anp.mod(i, d)
        elif md == "clip":
            i = anp.clip(i, 0, d - 1)
        fixed.append(i)
    order_dims = list(range(len(dims))) if order == "C" else list(range(len(dims)))[::-1]
    out = None
    for j in order_dims:
        out = fixed[j] if out is None else anp.add(anp.multiply(out, dims[j]), fixed[j])
    return anp.astype(out, np.int64)


@npfunc(np.put_along_axis)
def _put_along_axis_traced(arr, indices, values, axis, inplace=True, *, mode=None):
    """``numpy.put_along_axis``. Traced arrays are immutable: the updated array is
    returned (pass ``inplace=False`` as in JAX); numpy arrays with ``inplace=True`` are
    updated in place by numpy itself."""
    arr = asarray(arr)
    idx = asarray(indices)
    if axis is None:
        arr2 = anp.ravel(arr)
        return anp.reshape(_put_along_axis_traced(arr2, anp.ravel(idx), anp.ravel(values), 0, inplace=False),
                           shape_of(arr))
    nd = ndim(arr)
    ax = normalize_axis(axis, nd)
    sh = np.broadcast_shapes(shape_of(idx), tuple(1 if i == ax else s for i, s in enumerate(shape_of(arr))))
    idx = anp.broadcast_to(idx, sh)
    full_idx = []
    for d in range(nd):
        if d == ax:
            full_idx.append(anp.where(anp.less(idx, 0), anp.add(idx, shape_of(arr)[ax]), idx))
        else:
            r = [1] * nd
            r[d] = sh[d]
            full_idx.append(np.broadcast_to(np.arange(sh[d]).reshape(r), sh))
    v = anp.broadcast_to(asarray(values), sh)
    return anp.at(arr)[tuple(full_idx)].set(v, mode=mode)


def _numpy_put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        return np.put_along_axis(arr, indices, values, axis)
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


_put_along_axis_traced.__wrapped_numpy__ = _numpy_put_along_axis


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if value_kind((arr, indices, values)) == 0 and mode is None:
        # numpy has no mode=: with one, the update is JAX's (a new array)
        return _numpy_put_along_axis(arr, indices, values, axis, inplace)
    return _put_along_axis_traced(arr, indices, values, axis, inplace, mode=mode)


put_along_axis.__doc__ = _put_along_axis_traced.__doc__


@npfunc(np.fill_diagonal)
def _fill_diagonal_traced(a, val, wrap=False):
    a = asarray(a)
    n = builtins.min(shape_of(a))
    idx = (np.arange(n),) * ndim(a)
    v = asarray(val)
    if ndim(v) == 0:
        return anp.at(a)[idx].set(v)
    vals = anp.resize(anp.ravel(v), (n,)) if hasattr(anp, "resize") else anp.ravel(v)[:n]
    return anp.at(a)[idx].set(vals)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``numpy.fill_diagonal``: numpy arrays are filled in place (numpy's own, returns
    None); traced arrays are immutable, so the filled copy is returned (``inplace=False``)."""
    if value_kind((a, val)) == 0:
        if inplace:
            return np.fill_diagonal(a, val, wrap)
        a = np.array(a, copy=True)
        np.fill_diagonal(a, val, wrap)
        return a
    return _fill_diagonal_traced(a, val, wrap)


def place(arr, mask, vals, *, inplace=True):
    """``numpy.place``: numpy arrays are changed in place (numpy's own); traced arrays are
    immutable, so the result is returned (JAX's ``inplace=False``): the entries where
    ``mask`` is true get ``vals`` cycled in order (``mask`` may be traced).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda a, m: anp.place(a, m, np.array([7, 8]), inplace=False))(
    ...     np.zeros(4, int), np.array([True, False, True, True]))
    array([7, 0, 8, 7])
    """
    if value_kind((arr, mask, vals)) == 0:
        if inplace:
            return np.place(arr, mask, vals)
        arr = np.array(arr, copy=True)
        np.place(arr, mask, vals)
        return arr
    return _place_traced(arr, mask, vals)


@npfunc(None)
def _place_traced(arr, mask, vals):
    a = asarray(arr)
    m = asarray(mask)
    if isinstance(m, Tracer) and not is_concrete(m):
        # JAX: the k-th true position takes vals[k % len(vals)] (a traced mask is fine)
        mf = anp.ravel(anp.astype(m, bool))
        v = anp.ravel(anp.astype(asarray(vals), dtype_of(a)))
        nv = shape_of(v)[0]
        if nv == 0:
            return a
        k = anp.mod(anp.subtract(anp.cumulative_sum(anp.astype(mf, np.int64)), 1), nv)
        out = anp.where(mf, anp.take(v, k), anp.ravel(a))
        return anp.reshape(out, shape_of(a))
    mv = np.asarray(m.concrete_value("place") if isinstance(m, Tracer) else m, bool).ravel()
    idx = np.flatnonzero(mv)
    flat = anp.ravel(a)
    if idx.size == 0:
        return a
    v = anp.resize(anp.ravel(asarray(vals)), (idx.size,))
    return anp.reshape(anp.at(flat)[idx].set(anp.astype(v, dtype_of(a))), shape_of(a))
