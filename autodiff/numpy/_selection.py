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
from ..core import Tracer, is_concrete
from ._base import (npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of, value_kind,
                    concrete_for_size)


# ----------------------------------------------------------------------------
# sorting, searching, partitions
# ----------------------------------------------------------------------------

def _numpy_digitize(x, bins, right=False, *, method=None):
    return np.digitize(x, bins, right)


@npfunc(_numpy_digitize)
def digitize(x, bins, right=False, *, method=None):
    """Bin indices of ``x`` in monotonic ``bins`` (``numpy.digitize``); JAX's ``method``
    (its search strategy) is accepted and gives the same indices.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.digitize(np.array([0.5, 1.5, 3.0]), np.array([1.0, 2.0]), method="sort")
    array([0, 1, 2])
    """
    if method not in (None, "scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"digitize: unknown method={method!r}")
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
    if keys and ndim(keys[0]) == 0:             # numpy: 0-d keys sort one element
        return np.intp(0) if not builtins.any(isinstance(k, Tracer) for k in keys) else \
            anp.zeros((), np.int64)
    idx = None
    for k in keys:                              # least significant first, each sort stable
        k = anp.moveaxis(k, axis, -1)
        if idx is None:
            idx = anp.argsort(k, axis=-1, kind="stable")
        else:
            idx = anp.take_along_axis(idx, anp.argsort(anp.take_along_axis(k, idx, axis=-1), axis=-1, kind="stable"),
                                      axis=-1)
    return anp.moveaxis(idx, -1, axis)


def top_k(operand, k, /, *, axis=-1, mode="largest", sorted=True):
    """The ``k`` largest (``mode='largest'``) or smallest entries along ``axis`` and their
    indices (JAX's ``jnp.top_k``, numpy 2.6's ``top_k``): a stable sort, so among equal
    values the first ones come first. ``sorted`` is accepted; the result is always sorted.
    Differentiable in the values.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.top_k(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), 2)
    (array([5., 4.]), array([4, 2]))
    """
    x = asarray(operand)
    if dtype_of(x).kind == "c":
        raise ValueError("top_k is not compatible with complex inputs")
    if mode not in ("largest", "smallest"):
        raise ValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    k = builtins.int(k)
    nd = ndim(x)
    if not -nd <= builtins.int(axis) < builtins.max(nd, 1) or nd == 0:
        raise ValueError(f"top_k: axis {axis} is out of bounds for array of dimension {nd}")
    ax = normalize_axis(axis, nd)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > shape_of(x)[ax]:
        raise ValueError(f"k argument to top_k must be no larger than size along axis "
                         f"{axis} ({shape_of(x)[ax]}), got {k}")
    idx = anp.argsort(x, axis=ax, stable=True, descending=mode == "largest")
    idx = P.slice_in_dim(asarray(idx), 0, k, ax)
    return anp.take_along_axis(x, idx, axis=ax), idx


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
    """``choices[a[i]][i]`` with broadcasting (``numpy.choose``); ``mode`` 'raise', 'wrap'
    or 'clip'. 'raise' checks the values of ``a`` where it has them (numpy's ValueError for
    an entry out of range); under ``jit`` they are not checked (JAX raises a concretization
    error there instead).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda a: anp.choose(a, [np.zeros(2), np.ones(2)], mode="wrap"))(
    ...     np.array([1, 2]))
    array([1., 0.])
    """
    a = asarray(a)
    ch = [asarray(c) for c in choices] if isinstance(choices, (list, tuple)) else \
        [anp.getitem(asarray(choices), i) for i in range(shape_of(choices)[0])]
    n = len(ch)
    if mode == "raise":
        if not isinstance(a, Tracer) or is_concrete(a):
            v = np.asarray(a.concrete_value("choose") if isinstance(a, Tracer) else a)
            if np.any(v < 0) or np.any(v >= n):
                raise ValueError("invalid entry in choice array")
    elif mode not in ("wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
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
    fill = anp.astype(asarray(fill_value), dtype_of(a))       # JAX: the array's dtype
    out_shape = list(shape_of(a))
    out_shape[ax] = size
    if n == 0:
        return anp.broadcast_to(fill, tuple(out_shape))
    taken = anp.take(a, anp.minimum(src, n - 1), axis=ax)
    sh = [1] * ndim(a)
    sh[ax] = size
    return anp.where(anp.reshape(valid, tuple(sh)), taken, fill)


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


def _numpy_delete(arr, obj, axis=None, *, assume_unique_indices=False):
    return np.delete(arr, obj, axis)


@npfunc(_numpy_delete)
def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` along ``axis`` (``numpy.delete``; ``obj``
    static: an int, a slice, a sequence, or a boolean mask). JAX's
    ``assume_unique_indices`` is accepted (the indices are static, so it changes nothing).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.delete(np.arange(5), [0, -1], assume_unique_indices=True)
    array([1, 2, 3])
    """
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
    (``numpy.insert``). ``obj`` may be traced (JAX: an integer scalar or 1-d array; the
    count of new entries is static, their positions are not).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda a, i: anp.insert(a, i, 9))(np.arange(4), 1)
    array([0, 9, 1, 2, 3])
    """
    a = asarray(arr)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    n = shape_of(a)[ax]
    traced_index = isinstance(obj, Tracer) and not is_concrete(obj)
    if traced_index:
        # JAX's traced positions: the number of inserted entries is static, where is not
        if ndim(obj) > 1 or dtype_of(obj).kind not in "iu":
            raise ValueError("insert: a traced obj must be an integer scalar or 1-d array")
        scalar = ndim(obj) == 0
        o = anp.astype(anp.atleast_1d(obj), np.int64)
        o = anp.clip(anp.where(anp.less(o, 0), anp.add(o, n), o), 0, n)
    else:
        # numpy: a slice selects positions among the n existing entries
        o = np.arange(*obj.indices(n)) if isinstance(obj, slice) else \
            _static_index(obj, n + 1, "insert")
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
        pos = anp.broadcast_to(anp.getitem(o, 0), (k,)) if traced_index else np.full(k, o[0])
    else:
        k = shape_of(o)[0]
        tsh = list(shape_of(a))
        tsh[ax] = k
        if ndim(v) == 1 and ndim(a) > 1:
            sh = [1] * ndim(a)
            sh[ax] = shape_of(v)[0]
            v = anp.reshape(v, tuple(sh))
        v = anp.broadcast_to(v, tuple(tsh))
        pos = o
    # order: the new entries go before the old entry with the same index, in given order
    if traced_index:
        order_new = anp.argsort(pos, stable=True)
        keys = anp.concatenate([np.arange(n) * 2 + 1, anp.multiply(anp.take(pos, order_new), 2)])
        both = anp.concatenate([a, anp.take(v, order_new, axis=ax)], axis=ax)
        return anp.take(both, anp.argsort(keys, stable=True), axis=ax)
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
