"""Sorting, searching and selecting: ``digitize``, ``lexsort``, ``partition``,
``argpartition``, ``sort_complex``, ``choose``, ``compress``, ``extract``, ``delete``,
``insert`` and ``put`` (numpy arrays in place as numpy does; traced ones functionally).
A result whose length depends on the data (``compress``, ``extract``) takes ``size=`` under
``jit``, as in JAX.

>>> import numpy as np, autodiff.numpy as anp
>>> anp.digitize(np.array([0.5, 1.5, 2.5]), np.array([1.0, 2.0]))
array([0, 1, 2])
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer
from ._base import (npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of, value_kind,
                    concrete_for_size)


# ----------------------------------------------------------------------------
# sorting, searching, partitions
# ----------------------------------------------------------------------------

@npfunc(np.digitize)
def digitize(x, bins, right=False):
    """Bin indices of ``x`` in monotonic ``bins`` (``numpy.digitize``)."""
    x, bins = promote(asarray(x), asarray(bins))
    n = shape_of(bins)[0]
    side = "left" if right else "right"
    inc = anp.searchsorted(bins, x, side=side)
    dec = anp.subtract(n, anp.searchsorted(anp.flip(bins), x, side=side))
    if n < 2:
        return inc
    increasing = anp.less_equal(anp.getitem(bins, 0), anp.getitem(bins, -1))
    return anp.where(increasing, inc, dec)


@npfunc(np.lexsort)
def lexsort(keys, axis=-1):
    """Indirect stable sort by several keys, the last the primary one (``numpy.lexsort``)."""
    keys = [asarray(k) for k in keys] if isinstance(keys, (list, tuple)) else \
        [anp.getitem(asarray(keys), i) for i in range(shape_of(keys)[0])]
    idx = None
    for k in keys:                              # least significant first, each sort stable
        k = anp.moveaxis(k, axis, -1)
        if idx is None:
            idx = anp.argsort(k, axis=-1, kind="stable")
        else:
            idx = anp.take_along_axis(idx, anp.argsort(anp.take_along_axis(k, idx, axis=-1), axis=-1, kind="stable"),
                                      axis=-1)
    return anp.moveaxis(idx, -1, axis)


@npfunc(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition``: a traced result is fully sorted along ``axis``, which is a
    valid partition for every ``kth`` (numpy leaves the order within the parts
    unspecified). Differentiable like ``sort``."""
    if axis is None:
        return anp.sort(anp.ravel(a))
    return anp.sort(a, axis=axis)


@npfunc(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.argpartition``: traced, the (stable) sorting permutation, a valid
    partition for every ``kth``."""
    if axis is None:
        return anp.argsort(anp.ravel(a))
    return anp.argsort(a, axis=axis)


@npfunc(np.sort_complex)
def sort_complex(a):
    """``numpy.sort_complex``: sorted along the last axis in numpy's complex order (real
    part first, then imaginary part), as a complex array. Real input becomes complex128
    (complex64 for int8/int16/uint8/uint16, as numpy), complex input keeps its dtype;
    the derivative is the sort's (a permutation of the tangents).

    >>> import numpy as np, autodiff.numpy as anp, autodiff as ad
    >>> ad.jit(anp.sort_complex)(np.array([1 + 2j, 1 - 1j, -3.0]))
    array([-3.+0.j,  1.-1.j,  1.+2.j])
    """
    a = asarray(a)
    dt = dtype_of(a)
    if dt.kind != "c":
        a = P.convert(a, np.complex64 if dt.char in "bhBH" else np.complex128)
    return anp.sort(a, axis=-1)


@npfunc(np.choose)
def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` with broadcasting (``numpy.choose``); ``mode`` 'raise' (not
    checked when traced), 'wrap' or 'clip'."""
    a = asarray(a)
    ch = [asarray(c) for c in choices] if isinstance(choices, (list, tuple)) else \
        [anp.getitem(asarray(choices), i) for i in range(shape_of(choices)[0])]
    n = len(ch)
    if mode == "wrap":
        a = anp.mod(a, n)
    elif mode == "clip":
        a = anp.clip(a, 0, n - 1)
    arrs = anp.broadcast_arrays(a, *promote(*ch))
    a, ch = arrs[0], arrs[1:]
    st = anp.stack(ch, axis=0)
    return anp.squeeze(anp.take_along_axis(st, anp.expand_dims(a, 0), axis=0), 0)


def compress(condition, a, axis=None, out=None, *, size=None, fill_value=0):
    """Slices of ``a`` where ``condition`` is true (``numpy.compress``). A traced
    condition needs a concrete value or JAX's ``size=`` (then ``fill_value`` pads)."""
    if size is None and value_kind((condition, a)) == 0:
        return np.compress(condition, a, axis)
    return _compress(condition, a, axis, size, fill_value)


@npfunc(None)
def _compress(condition, a, axis, size, fill_value):
    a = asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    c = anp.ravel(asarray(condition))
    n = shape_of(a)[ax]
    if size is None:
        idx = np.flatnonzero(concrete_for_size(c, "compress"))
        idx = idx[idx < n]
        return anp.take(a, idx.astype(np.int64), axis=ax)
    m = shape_of(c)[0]
    c = anp.logical_and(c, np.arange(m) < n)
    pos = anp.subtract(anp.cumulative_sum(anp.astype(c, np.int64)), 1)
    j = np.arange(size)
    src = anp.sum(anp.less(anp.expand_dims(pos, 0), anp.expand_dims(j, -1)), axis=-1)     # j-th true position
    valid = anp.less(j, anp.sum(anp.astype(c, np.int64)))
    taken = anp.take(a, anp.minimum(src, n - 1), axis=ax)
    sh = [1] * ndim(a)
    sh[ax] = size
    return anp.where(anp.reshape(valid, tuple(sh)), taken, fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    """Elements of ``arr`` where ``condition`` (``numpy.extract``); traced: as ``compress``."""
    if size is None and value_kind((condition, arr)) == 0:
        return np.extract(condition, arr)
    return compress(anp.ravel(asarray(condition)), anp.ravel(asarray(arr)), 0, size=size, fill_value=fill_value)


def _static_index(obj, n, what):
    if isinstance(obj, Tracer):
        obj = concrete_for_size(obj, what)
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    return np.asarray(obj)


@npfunc(np.delete)
def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` along ``axis`` (``numpy.delete``; ``obj``
    static: an int, a slice, a sequence, or a boolean mask)."""
    a = asarray(arr)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    n = shape_of(a)[ax]
    o = _static_index(obj, n, "delete")
    keep = np.ones(n, bool)
    if o.dtype == bool:
        keep = ~o
    else:
        keep[o.astype(np.int64) % builtins.max(n, 1)] = False
    return anp.take(a, np.flatnonzero(keep).astype(np.int64), axis=ax)


@npfunc(np.insert)
def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``
    (``numpy.insert``; ``obj`` static)."""
    a = asarray(arr)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    n = shape_of(a)[ax]
    o = _static_index(obj, n + 1, "insert")
    scalar = o.ndim == 0
    o = np.atleast_1d(o).astype(np.int64)
    o = np.where(o < 0, o + n, o)
    v = asarray(values)
    v = P.convert(v, dtype_of(a)) if isinstance(v, Tracer) else np.asarray(v, dtype_of(a))
    if scalar:
        # numpy: a scalar index inserts ``values`` as a block (moved to ``axis``)
        if ndim(v) == 0 or ndim(v) < ndim(a):
            v = anp.expand_dims(v, 0) if ndim(v) < ndim(a) else v
            v = anp.moveaxis(v, 0, ax) if ndim(v) == ndim(a) else v
        k = shape_of(v)[ax] if ndim(v) == ndim(a) else 1
        tsh = list(shape_of(a))
        tsh[ax] = k
        v = anp.broadcast_to(v, tuple(tsh))
        pos = np.full(k, o[0])
    else:
        k = o.shape[0]
        tsh = list(shape_of(a))
        tsh[ax] = k
        if ndim(v) == 1 and ndim(a) > 1:
            sh = [1] * ndim(a)
            sh[ax] = shape_of(v)[0]
            v = anp.reshape(v, tuple(sh))
        v = anp.broadcast_to(v, tuple(tsh))
        pos = o
    # order: the new entries go before the old entry with the same index, in given order
    order_new = np.argsort(pos, kind="stable")
    keys = np.concatenate([np.arange(n) * 2 + 1, pos[order_new] * 2])
    both = anp.concatenate([a, anp.take(v, order_new.astype(np.int64), axis=ax)], axis=ax)
    return anp.take(both, np.argsort(keys, kind="stable").astype(np.int64), axis=ax)


def put(a, ind, v, mode="raise", *, inplace=True):
    """``numpy.put`` on numpy arrays (in place); traced arrays are immutable, so the
    updated copy of ``a`` is returned (JAX's ``inplace=False``)."""
    if value_kind((a, ind, v)) == 0:
        if inplace:
            return np.put(a, ind, v, mode)
        a = np.array(a, copy=True)
        np.put(a, ind, v, mode)
        return a
    return _put_traced(a, ind, v, mode)


@npfunc(None)
def _put_traced(a, ind, v, mode):
    a = asarray(a)
    flat = anp.ravel(a)
    n = shape_of(flat)[0]
    ind = anp.ravel(asarray(ind))
    if mode == "wrap":
        ind = anp.mod(ind, n)
    elif mode == "clip":
        ind = anp.clip(ind, 0, n - 1)
    else:
        ind = anp.where(anp.less(ind, 0), anp.add(ind, n), ind)
    k = shape_of(ind)[0]
    vals = anp.resize(anp.ravel(asarray(v)), (k,))
    return anp.reshape(anp.at(flat)[ind].set(vals), shape_of(a))
