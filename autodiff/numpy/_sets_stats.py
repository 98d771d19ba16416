"""numpy's set operations, partitions, histograms, quantile methods and the remaining
nan-aware reductions, for concrete and traced values.

Results whose length depends on the data (``unique``, ``union1d``, ...) take JAX's
``size=`` and ``fill_value=`` when traced under ``jit``; under ``grad``/``jvp`` without
``jit`` the traced values are concrete, so the length is read from them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.jit(lambda x: anp.unique(x, size=3, fill_value=-1))(np.array([3, 1, 3]))
array([ 1,  3, -1])
>>> anp.quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5, method="lower")
np.float64(2.0)
"""
import builtins

import numpy as np

from .. import primitives as P
from ..core import Tracer, is_concrete, real_dtype
from ..core import user_source
from ..errors import ConcretizationError
from ._base import (npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of,
                    result_type, float_type, is_python_scalar, _kind)


def _anp():
    from .. import numpy as anp
    return anp


def _concrete_len(x, what):
    """The value of traced ``x`` when it has one (for data-dependent output sizes)."""
    if isinstance(x, Tracer):
        if not is_concrete(x):
            raise ConcretizationError(
                f"{what}: the result's size depends on the values of a traced array; pass "
                "size=... (and fill_value=...) to fix it", source=user_source())
        return np.asarray(x.concrete_value(what))
    return np.asarray(x)


# ----------------------------------------------------------------------------
# unique and the set operations
# ----------------------------------------------------------------------------

def _unique_sorted(x, size, fill_value):
    """Sorted unique values of 1-d ``x`` padded to ``size``; also the sorted array, the
    sort permutation, the 'first of a run' mask and each element's run number."""
    anp = _anp()
    n = shape_of(x)[0]
    perm = anp.argsort(x, kind="stable")
    s = anp.take(x, perm)
    if n == 0:
        return anp.full_like(x, 0, shape=(size,)), s, perm, None, None, anp.zeros_like(x, dtype=np.int64, shape=(size,))
    prev = anp.concatenate([anp.getitem(s, slice(0, 1)), anp.getitem(s, slice(0, n - 1))])
    neq = anp.not_equal(s, prev)
    if dtype_of(s).kind == "f":            # numpy: nans are one value (equal_nan=True)
        neq = anp.logical_and(neq, anp.logical_not(anp.logical_and(anp.isnan(s), anp.isnan(prev))))
    first = anp.concatenate([np.array([True]), anp.getitem(neq, slice(1, n))])
    run = anp.subtract(anp.cumsum(anp.astype(first, np.int64)), 1)       # run number per sorted element
    # the start of run j is the number of elements in runs < j
    j = np.arange(size)
    starts = anp.sum(anp.less(anp.expand_dims(run, 0), anp.expand_dims(j, -1)), axis=-1)
    nuniq = anp.add(anp.getitem(run, -1), 1)
    valid = anp.less(j, nuniq)
    vals = anp.take(s, anp.minimum(starts, n - 1))
    if fill_value is None:
        fill = anp.getitem(s, 0)           # JAX's default: the smallest value
    else:
        fill = fill_value
    out = anp.where(valid, vals, fill)
    out = P.convert(out, dtype_of(x)) if isinstance(out, Tracer) else out.astype(dtype_of(x))
    ends = anp.where(valid, anp.sum(anp.less_equal(anp.expand_dims(run, 0), anp.expand_dims(j, -1)), axis=-1), starts)
    counts = anp.where(valid, anp.subtract(ends, starts), 0)
    return out, s, perm, starts, run, counts


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """``numpy.unique`` of a flattened array (``axis=None``), with JAX's ``size=`` /
    ``fill_value=`` for a fixed result length (extra places get ``fill_value``, default
    the smallest value; ``return_index`` gives 0 there, ``return_counts`` 0).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.unique(np.array([2, 1, 2]), return_counts=True)
    UniqueCountsResult(values=array([1, 2]), counts=array([1, 2]))
    """
    if axis is not None:
        if _kind(ar) == 0:
            return np.unique(ar, return_index, return_inverse, return_counts, axis=axis, equal_nan=equal_nan)
        from ..errors import UnsupportedError
        raise UnsupportedError("unique: axis= is not supported on traced values", source=user_source())
    if _kind(ar) == 0 and size is None:
        res = np.unique(ar, return_index, return_inverse, return_counts, equal_nan=equal_nan)
        return _named(res, return_index, return_inverse, return_counts)
    return _unique_traced(ar, return_index, return_inverse, return_counts, size, fill_value)


from collections import namedtuple  # noqa: E402
UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _named(res, ri, rv, rc):
    if not isinstance(res, tuple):
        return res
    if ri and rv and rc:
        return UniqueAllResult(*res)
    if rc and not ri and not rv:
        return UniqueCountsResult(*res)
    if rv and not ri and not rc:
        return UniqueInverseResult(*res)
    return res


@npfunc(None)
def _unique_traced(ar, return_index, return_inverse, return_counts, size, fill_value):
    anp = _anp()
    x = asarray(ar)
    shp = shape_of(x)
    x = anp.ravel(x)
    if size is None:
        size = builtins.int(np.unique(_concrete_len(x, "unique")).shape[0])
    out, s, perm, starts, run, counts = _unique_sorted(x, builtins.int(size), fill_value)
    res = [out]
    if return_index:
        n = shape_of(x)[0]
        valid = anp.greater(counts, 0)
        res.append(anp.where(valid, anp.take(perm, anp.minimum(starts, builtins.max(n - 1, 0))), 0))
    if return_inverse:
        inv = anp.at(anp.zeros_like(perm))[perm].set(run)
        res.append(anp.reshape(inv, shp) if len(shp) != 1 else inv)
    if return_counts:
        res.append(counts)
    return _named(tuple(res), return_index, return_inverse, return_counts) if len(res) > 1 else res[0]


def unique_values(x, *, size=None, fill_value=None):
    """Sorted unique values (``numpy.unique_values``; JAX's ``size=`` when traced)."""
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    """Unique values and their counts (``numpy.unique_counts``)."""
    return UniqueCountsResult(*unique(x, return_counts=True, size=size, fill_value=fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    """Unique values and the inverse indices, in ``x``'s shape (``numpy.unique_inverse``)."""
    vals, inv = unique(x, return_inverse=True, size=size, fill_value=fill_value)
    if _kind(x) == 0 and size is None:
        inv = np.reshape(inv, np.shape(x))
    return UniqueInverseResult(vals, inv)


def unique_all(x, *, size=None, fill_value=None):
    """Values, first indices, inverse indices and counts (``numpy.unique_all``)."""
    vals, idx, inv, cnt = unique(x, True, True, True, size=size, fill_value=fill_value)
    if _kind(x) == 0 and size is None:
        inv = np.reshape(inv, np.shape(x))
    return UniqueAllResult(vals, idx, inv, cnt)


@npfunc(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Elementwise membership of ``element`` in ``test_elements`` (``numpy.isin``)."""
    anp = _anp()
    e = asarray(element)
    t = anp.ravel(asarray(test_elements))
    e, t = promote(e, t)
    hit = anp.any(anp.equal(anp.expand_dims(e, -1), t), axis=-1) if shape_of(t)[0] else \
        anp.zeros_like(e, dtype=np.bool_)
    return anp.logical_not(hit) if invert else hit


def _set_result(x, size, fill_value, what):
    if size is None and _kind(x) != 0:
        size = builtins.int(np.unique(_concrete_len(x, what)).shape[0])
    return unique(x, size=size, fill_value=fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted union of the values of two arrays (``numpy.union1d``)."""
    if _kind((ar1, ar2)) == 0 and size is None:
        return np.union1d(ar1, ar2)
    anp = _anp()
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _set_result(anp.concatenate([a, b]), size, fill_value, "union1d")


def _masked_unique(x, keep, size, fill_value, what):
    """Unique values of ``x`` where ``keep`` (a traced mask): masked entries become +inf
    / the dtype's max, which sort last, and are then replaced by the fill value."""
    anp = _anp()
    dt = dtype_of(x)
    big = np.inf if dt.kind == "f" else np.iinfo(dt).max
    xm = anp.where(keep, x, anp.full_like(x, big))
    if size is None:
        xv, kv = _concrete_len(x, what), _concrete_len(keep, what)
        size = builtins.int(np.unique(xv[kv]).shape[0])
    vals, counts = unique(xm, return_counts=True, size=size + 1, fill_value=big)
    # the masked-out marker (if present) is the last unique value: drop it
    nvalid = anp.sum(anp.astype(anp.logical_and(anp.greater(counts, 0),
                                                anp.not_equal(vals, big) if dt.kind != "f" else anp.isfinite(vals)), np.int64))
    vals = anp.getitem(vals, slice(0, size))
    j = np.arange(size)
    fill = fill_value if fill_value is not None else anp.min(anp.where(keep, x, anp.full_like(x, big)))
    return anp.where(anp.less(j, nvalid), vals, fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """Sorted values present in both arrays (``numpy.intersect1d``)."""
    if _kind((ar1, ar2)) == 0 and size is None:
        return np.intersect1d(ar1, ar2, assume_unique, return_indices)
    if return_indices:
        from ..errors import UnsupportedError
        raise UnsupportedError("intersect1d: return_indices on traced values", source=user_source())
    anp = _anp()
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _masked_unique(a, isin(a, b), size, fill_value, "intersect1d")


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ``ar1`` not in ``ar2`` (``numpy.setdiff1d``)."""
    if _kind((ar1, ar2)) == 0 and size is None:
        return np.setdiff1d(ar1, ar2, assume_unique)
    anp = _anp()
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _masked_unique(a, isin(a, b, invert=True), size, fill_value, "setdiff1d")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays (``numpy.setxor1d``)."""
    if _kind((ar1, ar2)) == 0 and size is None:
        return np.setxor1d(ar1, ar2, assume_unique)
    anp = _anp()
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    both = anp.concatenate([a, b])
    keep = anp.logical_xor(anp.concatenate([isin(a, b), isin(b, a)]), True)
    return _masked_unique(both, keep, size, fill_value, "setxor1d")


# ----------------------------------------------------------------------------
# sorting, searching, partitions
# ----------------------------------------------------------------------------

@npfunc(np.digitize)
def digitize(x, bins, right=False):
    """Bin indices of ``x`` in monotonic ``bins`` (``numpy.digitize``)."""
    anp = _anp()
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
    anp = _anp()
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
    anp = _anp()
    if axis is None:
        return anp.sort(anp.ravel(a))
    return anp.sort(a, axis=axis)


@npfunc(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.argpartition``: traced, the (stable) sorting permutation, a valid
    partition for every ``kth``."""
    anp = _anp()
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
    anp = _anp()
    a = asarray(a)
    dt = dtype_of(a)
    if dt.kind != "c":
        a = P.convert(a, np.complex64 if dt.char in "bhBH" else np.complex128)
    return anp.sort(a, axis=-1)


@npfunc(np.choose)
def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` with broadcasting (``numpy.choose``); ``mode`` 'raise' (not
    checked when traced), 'wrap' or 'clip'."""
    anp = _anp()
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
    if size is None and _kind((condition, a)) == 0:
        return np.compress(condition, a, axis)
    return _compress(condition, a, axis, size, fill_value)


@npfunc(None)
def _compress(condition, a, axis, size, fill_value):
    anp = _anp()
    a = asarray(a)
    if axis is None:
        a, axis = anp.ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    c = anp.ravel(asarray(condition))
    n = shape_of(a)[ax]
    if size is None:
        idx = np.flatnonzero(_concrete_len(c, "compress"))
        idx = idx[idx < n]
        return anp.take(a, idx.astype(np.int64), axis=ax)
    m = shape_of(c)[0]
    c = anp.logical_and(c, np.arange(m) < n)
    pos = anp.subtract(anp.cumsum(anp.astype(c, np.int64)), 1)
    j = np.arange(size)
    src = anp.sum(anp.less(anp.expand_dims(pos, 0), anp.expand_dims(j, -1)), axis=-1)     # j-th true position
    valid = anp.less(j, anp.sum(anp.astype(c, np.int64)))
    taken = anp.take(a, anp.minimum(src, n - 1), axis=ax)
    sh = [1] * ndim(a)
    sh[ax] = size
    return anp.where(anp.reshape(valid, tuple(sh)), taken, fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    """Elements of ``arr`` where ``condition`` (``numpy.extract``); traced: as ``compress``."""
    if size is None and _kind((condition, arr)) == 0:
        return np.extract(condition, arr)
    anp = _anp()
    return compress(anp.ravel(asarray(condition)), anp.ravel(asarray(arr)), 0, size=size, fill_value=fill_value)


def _static_index(obj, n, what):
    if isinstance(obj, Tracer):
        obj = _concrete_len(obj, what)
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    return np.asarray(obj)


@npfunc(np.delete)
def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` along ``axis`` (``numpy.delete``; ``obj``
    static: an int, a slice, a sequence, or a boolean mask)."""
    anp = _anp()
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
    anp = _anp()
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
    if _kind((a, ind, v)) == 0:
        if inplace:
            return np.put(a, ind, v, mode)
        a = np.array(a, copy=True)
        np.put(a, ind, v, mode)
        return a
    return _put_traced(a, ind, v, mode)


@npfunc(None)
def _put_traced(a, ind, v, mode):
    anp = _anp()
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


def apply_over_axes(func, a, axes):
    """Apply ``func(a, axis)`` repeatedly, keeping dimensions (``numpy.apply_over_axes``)."""
    anp = _anp()
    if _kind(a) == 0:
        return np.apply_over_axes(func, a, axes)
    val = asarray(a)
    nd = ndim(val)
    for ax in np.atleast_1d(axes):
        ax = builtins.int(ax) % nd
        res = asarray(func(val, ax))
        if ndim(res) == ndim(val):
            val = res
        elif ndim(res) == ndim(val) - 1:
            val = anp.expand_dims(res, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return val


# ----------------------------------------------------------------------------
# histograms
# ----------------------------------------------------------------------------

def _edges(a, bins, range_, weights_dt):
    anp = _anp()
    if isinstance(bins, (int, np.integer)):
        nb = builtins.int(bins)
        if range_ is not None:
            lo, hi = range_
        else:
            lo, hi = anp.min(a), anp.max(a)
        lo, hi = asarray(lo), asarray(hi)
        # numpy widens an empty range by ±0.5
        same = anp.equal(lo, hi)
        lo = anp.where(same, anp.subtract(lo, 0.5), lo)
        hi = anp.where(same, anp.add(hi, 0.5), hi)
        dt = np.result_type(dtype_of(a), np.float64) if dtype_of(a).kind != "f" else dtype_of(a)
        return anp.linspace(anp.astype(lo, dt), anp.astype(hi, dt), nb + 1)
    return asarray(bins)


@npfunc(np.histogram_bin_edges)
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Bin edges as :func:`histogram` computes them (integer ``bins`` or explicit edges)."""
    anp = _anp()
    a = anp.ravel(asarray(a))
    return _edges(a, bins, range, None)


def _bin_index(a, edges):
    """Bin of each value (edges inclusive on the left, the last bin closed), -1 outside."""
    anp = _anp()
    nb = shape_of(edges)[0] - 1
    i = anp.subtract(anp.searchsorted(edges, a, side="right"), 1)
    i = anp.where(anp.equal(a, anp.getitem(edges, -1)), nb - 1, i)
    inside = anp.logical_and(anp.greater_equal(a, anp.getitem(edges, 0)), anp.less_equal(a, anp.getitem(edges, -1)))
    return anp.where(inside, i, -1)


@npfunc(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """``numpy.histogram``: counts (or summed, differentiable ``weights``) per bin, and
    the edges (differentiable in traced ``range`` end points)."""
    anp = _anp()
    a = anp.ravel(asarray(a))
    edges = _edges(a, bins, range, None)
    nb = shape_of(edges)[0] - 1
    idx = _bin_index(a, edges)
    hits = anp.equal(anp.expand_dims(idx, -1), np.arange(nb))
    if weights is None:
        h = anp.sum(hits, axis=0, dtype=np.int64)
    else:
        w = anp.ravel(asarray(weights))
        h = anp.sum(anp.where(hits, anp.expand_dims(w, -1), 0), axis=0)
    if density:
        widths = anp.diff(edges)
        h = anp.divide(anp.divide(h, widths), anp.sum(h))
    return h, edges


@npfunc(np.histogramdd)
def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Multi-dimensional histogram of ``sample`` (N, D) (``numpy.histogramdd``)."""
    anp = _anp()
    s = asarray(sample)
    if isinstance(sample, (list, tuple)):
        s = anp.stack([anp.ravel(asarray(x)) for x in sample], axis=-1)
    n, D = shape_of(s)
    bins_l = list(bins) if isinstance(bins, (list, tuple)) else [bins] * D
    ranges = list(range) if range is not None else [None] * D
    edges, idxs = [], []
    for d in builtins.range(D):
        col = anp.getitem(s, (slice(None), d))
        e = _edges(col, bins_l[d], ranges[d], None)
        edges.append(e)
        idxs.append(_bin_index(col, e))
    nbs = [shape_of(e)[0] - 1 for e in edges]
    flat = None
    valid = None
    for i, nb in zip(idxs, nbs):
        flat = i if flat is None else anp.add(anp.multiply(flat, nb), i)
        ok = anp.greater_equal(i, 0)
        valid = ok if valid is None else anp.logical_and(valid, ok)
    total = builtins.int(np.prod(nbs))
    flat = anp.where(valid, flat, -1)
    hits = anp.equal(anp.expand_dims(flat, -1), np.arange(total))
    if weights is None:
        h = anp.astype(anp.sum(hits, axis=0, dtype=np.int64), np.float64)
    else:
        w = anp.astype(anp.ravel(asarray(weights)), np.float64)      # numpy: float64 counts
        h = anp.sum(anp.where(hits, anp.expand_dims(w, -1), 0.0), axis=0)
    h = anp.reshape(h, tuple(nbs))
    if density:
        vol = None
        for d, e in enumerate(edges):
            sh = [1] * D
            sh[d] = nbs[d]
            wd = anp.reshape(anp.diff(e), tuple(sh))
            vol = wd if vol is None else anp.multiply(vol, wd)
        h = anp.divide(anp.divide(h, vol), anp.sum(h))
    return h, edges


@npfunc(np.histogram2d)
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """2-D histogram (``numpy.histogram2d``): ``(H, xedges, yedges)``."""
    anp = _anp()
    x, y = promote(anp.ravel(asarray(x)), anp.ravel(asarray(y)))
    h, e = histogramdd(anp.stack([x, y], axis=-1), bins, range, density, weights)
    return h, e[0], e[1]


# ----------------------------------------------------------------------------
# quantiles with numpy's methods, nan-aware versions, remaining nan-reductions
# ----------------------------------------------------------------------------

# numpy's (alpha, beta) for the continuous methods: virtual index = n·q + α + q·(1-α-β) - 1
_CONTINUOUS = {
    "linear": (1.0, 1.0), "weibull": (0.0, 0.0), "hazen": (0.5, 0.5),
    "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
    "interpolated_inverted_cdf": (0.0, 1.0),
}
_DISCRETE = ("lower", "higher", "midpoint", "nearest", "inverted_cdf",
             "averaged_inverted_cdf", "closest_observation")


def _virtual_index(n, q, method):
    """numpy's virtual index (float, may be traced through n) for quantile q."""
    anp = _anp()
    if method == "linear":
        return anp.multiply(anp.subtract(n, 1), q)
    a, b = _CONTINUOUS[method]
    return anp.subtract(anp.add(anp.multiply(n, q), a + q * (1 - a - b)), 1)


def _real_quantile_input(a, name):
    # numpy's quantile family refuses complex input (its median and nanmedian take it)
    if dtype_of(a).kind == "c":
        from ..errors import DTypeError
        raise DTypeError(f"{name}: a must be an array of real numbers (numpy's rule), got "
                         f"{dtype_of(a)}; median and nanmedian take complex arrays",
                         source=user_source())


def _quantile_sorted(s, n, q, method):
    """Quantile q of sorted rows ``s`` (..., m) whose first ``n`` entries are valid."""
    anp = _anp()
    m = shape_of(s)[-1]
    # positions are real (the median of complex rows: nanmedian takes complex, as numpy)
    nf = anp.astype(n, real_dtype(dtype_of(s))) if isinstance(n, Tracer) else float(n)
    last = anp.subtract(n, 1)

    def at(i):
        i = anp.clip(i, 0, anp.maximum(last, 0)) if isinstance(last, Tracer) else anp.clip(i, 0, builtins.max(last, 0))
        i = anp.astype(i, np.int64)
        if ndim(i) < ndim(s):
            i = anp.broadcast_to(anp.expand_dims(i, -1) if ndim(i) else anp.reshape(i, (1,)),
                                 shape_of(s)[:-1] + (1,))
        return anp.squeeze(anp.take_along_axis(s, i, axis=-1), -1)
    if method in _CONTINUOUS:
        v = _virtual_index(nf, q, method)
        v = anp.clip(v, 0.0, anp.subtract(nf, 1.0))
        lo = anp.floor(v)
        g = anp.subtract(v, lo)
        a, b = at(lo), at(anp.add(lo, 1.0))
        # numpy's lerp: a + g·(b - a), and b - (b - a)·(1 - g) for g ≥ 1/2
        d = anp.subtract(b, a)
        return anp.where(anp.greater_equal(g, 0.5), anp.subtract(b, anp.multiply(d, anp.subtract(1.0, g))),
                         anp.add(a, anp.multiply(d, g)))
    v = anp.multiply(anp.subtract(nf, 1.0), q)
    if method == "lower":
        return at(anp.floor(v))
    if method == "higher":
        return at(anp.ceil(v))
    if method == "midpoint":
        return anp.multiply(anp.add(at(anp.floor(v)), at(anp.ceil(v))), 0.5)
    if method == "nearest":
        return at(anp.rint(v))                         # numpy: round half to even
    nq = anp.multiply(nf, q)
    if method == "inverted_cdf":
        return at(anp.subtract(anp.ceil(nq), 1.0))
    if method == "averaged_inverted_cdf":
        fl = anp.floor(nq)
        exact = anp.equal(nq, fl)
        hi = at(fl)
        lo = at(anp.subtract(fl, 1.0))
        return anp.where(exact, anp.multiply(anp.add(lo, hi), 0.5), hi)
    if method == "closest_observation":
        # numpy: index n·q - 3/2, rounded up except at exact odd floors (nearest even
        # 1-based order statistic)
        k = anp.subtract(nq, 1.5)
        fl = anp.floor(k)
        keep = anp.logical_and(anp.equal(k, fl), anp.equal(anp.mod(fl, 2.0), 1.0))
        return at(anp.maximum(anp.where(keep, fl, anp.add(fl, 1.0)), 0.0))
    raise ValueError(f"'{method}' is not a valid method. Use one of: "
                     f"{sorted(list(_CONTINUOUS) + list(_DISCRETE))}")


def _quantile_impl(a, q, axis, keepdims, method, nan):
    anp = _anp()
    from . import _axes_to_last
    a = asarray(a)
    qa = q if is_python_scalar(q) else np.asarray(q) if not isinstance(q, Tracer) else q
    dt = float_type(result_type(a, qa if is_python_scalar(qa) or isinstance(qa, Tracer) else np.asarray(qa)))
    if method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        dt = float_type(dtype_of(a))       # numpy: these pick elements, keeping a's dtype
    a = P.convert(a, dt)
    s, kept = _axes_to_last(a, axis)
    m = shape_of(s)[-1]
    if nan:
        valid = anp.logical_not(anp.isnan(s))
        n = anp.sum(anp.astype(valid, np.int64), axis=-1)
        s = anp.sort(anp.where(valid, s, np.inf), axis=-1)     # nans (as +inf) sort last
    else:
        n = m
        if m == 0:
            # numpy indexes the empty sorted slice and raises; a kernel's clamped gather
            # would return a value instead (found by tests/test_fuzz.py)
            raise IndexError("index -1 is out of bounds for axis 0 with size 0 (quantile of "
                             "an empty slice)")
        s = anp.sort(s, axis=-1)
    qs = asarray(q)
    outs = []
    qflat = anp.ravel(qs) if ndim(qs) else anp.reshape(qs, (1,))
    for i in range(shape_of(qflat)[0]):
        qq = anp.getitem(qflat, i) if isinstance(qflat, Tracer) else float(qflat[i])
        v = _quantile_sorted(s, n, qq, method)
        if nan:
            v = anp.where(anp.equal(n, 0), np.nan, v)
        elif dtype_of(s).kind == "f":
            # numpy: a nan anywhere in the slice makes its quantile nan
            v = anp.where(anp.isnan(anp.getitem(s, (Ellipsis, m - 1))), np.nan, v) if m else v
        if keepdims:
            v = anp.reshape(v, kept)
        outs.append(P.convert(asarray(v), dt) if isinstance(v, Tracer) else v)
    out = outs[0] if ndim(qs) == 0 else anp.reshape(anp.stack(outs, 0), shape_of(qs) + shape_of(outs[0]))
    return out


@npfunc(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None, interpolation=None):
    """``numpy.quantile`` with all of numpy's ``method`` s; differentiable in ``a``
    (and in ``q`` for the continuous methods). ``weights=`` (numpy's, with
    ``method='inverted_cdf'``) works on traced values too. Real input only, as numpy.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> w = np.array([1.0, 1.0, 6.0, 2.0])
    >>> ad.jit(lambda a: anp.quantile(a, 0.5, method="inverted_cdf", weights=w))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.float64(3.0)
    """
    _real_quantile_input(a, "quantile")
    if weights is not None:
        return _weighted_quantile(a, q, axis, keepdims, interpolation or method, weights, nan=False)
    return _quantile_impl(a, q, axis, keepdims, interpolation or method, nan=False)


def _weighted_quantile(a, q, axis, keepdims, method, weights, nan):
    """numpy's weighted quantile (``method='inverted_cdf'``, the one numpy has weights for):
    sort, cumulative weights normalized to 1, and the first sorted entry whose cdf
    reaches q. Differentiable in ``a`` (the weights and ``q`` only choose the entry)."""
    anp = _anp()
    from . import _axes_to_last
    if method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    a = asarray(a)
    w = asarray(weights)
    sa, sw = shape_of(a), shape_of(w)
    axes = None if axis is None else tuple(normalize_axis(ax, len(sa)) for ax in
                                           (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if sa != sw:
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if sw != tuple(sa[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        w = anp.transpose(w, tuple(np.argsort(axes)))
        w = anp.broadcast_to(anp.reshape(w, tuple(s if i in axes else 1 for i, s in enumerate(sa))), sa)
    if not isinstance(w, Tracer) and np.any(np.asarray(w) < 0):
        raise ValueError("Weights must be non-negative.")
    a = P.convert(a, float_type(dtype_of(a)))
    s, kept = _axes_to_last(a, axes)
    sw_, _ = _axes_to_last(anp.astype(w, np.float64), axes)
    if nan:
        valid = anp.logical_not(anp.isnan(s))
        sw_ = anp.where(valid, sw_, 0.0)                     # nans weigh nothing
        s = anp.where(valid, s, np.inf)
    order = anp.argsort(s, axis=-1, kind="stable")
    s = anp.take_along_axis(s, order, axis=-1)
    cw = anp.cumsum(anp.take_along_axis(sw_, order, axis=-1), axis=-1)
    cdf = anp.divide(cw, cw[..., -1:])
    m = shape_of(s)[-1]
    qs = asarray(q)
    qflat = anp.ravel(qs) if ndim(qs) else anp.reshape(qs, (1,))
    outs = []
    for i in range(shape_of(qflat)[0]):
        qq = anp.getitem(qflat, i) if isinstance(qflat, Tracer) else float(qflat[i])
        # numpy: index of the first cdf >= q (searchsorted 'left'); leading zero weights
        # (cdf == 0) are skipped even at q = 0
        below = anp.logical_or(anp.less(cdf, qq), anp.equal(cdf, 0.0))
        idx = anp.minimum(anp.sum(anp.astype(below, np.int64), axis=-1, keepdims=True), m - 1)
        v = anp.squeeze(anp.take_along_axis(s, idx, axis=-1), -1)
        last = s[..., -1]
        if nan:
            v = anp.where(anp.logical_not(anp.any(valid, axis=-1)), np.nan, v)
        else:
            v = anp.where(anp.isnan(last), last, v)           # a nan in the slice: nan
        if keepdims:
            v = anp.reshape(v, kept)
        outs.append(v)
    return outs[0] if ndim(qs) == 0 else anp.reshape(anp.stack(outs, 0), shape_of(qs) + shape_of(outs[0]))


@npfunc(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
               *, weights=None, interpolation=None):
    """``numpy.percentile`` (``quantile`` at ``q/100``), every ``method``."""
    anp = _anp()
    q = q / 100.0 if is_python_scalar(q) else anp.divide(asarray(q) if isinstance(q, Tracer) else np.asarray(q, np.float64), 100.0)
    return quantile(a, q, axis=axis, method=method, keepdims=keepdims, weights=weights,
                    interpolation=interpolation)


@npfunc(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
                *, weights=None, interpolation=None):
    """``numpy.nanquantile``: quantiles of the non-nan entries (nan where there are none)."""
    _real_quantile_input(a, "nanquantile")
    if weights is not None:
        return _weighted_quantile(a, q, axis, keepdims, interpolation or method, weights, nan=True)
    return _quantile_impl(a, q, axis, keepdims, interpolation or method, nan=True)


@npfunc(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
                  *, weights=None, interpolation=None):
    """``numpy.nanpercentile``."""
    anp = _anp()
    q = q / 100.0 if is_python_scalar(q) else anp.divide(asarray(q) if isinstance(q, Tracer) else np.asarray(q, np.float64), 100.0)
    return nanquantile(a, q, axis=axis, method=method, keepdims=keepdims, weights=weights,
                       interpolation=interpolation)


@npfunc(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-nan entries (``numpy.nanmedian``)."""
    return _quantile_impl(a, 0.5, axis, keepdims, "linear", nan=True)


def _nan_fill(a, v):
    anp = _anp()
    a = asarray(a)
    if dtype_of(a).kind not in "fc":      # complex: nan in either part (numpy's isnan)
        return a
    return anp.where(anp.isnan(a), v, a)


@npfunc(np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the largest non-nan entry (``numpy.nanargmax``)."""
    return _anp().argmax(_nan_fill(a, -np.inf), axis=axis, keepdims=keepdims)


@npfunc(np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the smallest non-nan entry (``numpy.nanargmin``)."""
    return _anp().argmin(_nan_fill(a, np.inf), axis=axis, keepdims=keepdims)


@npfunc(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    """Product with nans counted as one (``numpy.nanprod``)."""
    return _anp().prod(_nan_fill(a, 1.0), axis=axis, dtype=dtype, keepdims=keepdims)


@npfunc(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum with nans counted as zero (``numpy.nancumsum``)."""
    return _anp().cumsum(_nan_fill(a, 0.0), axis=axis, dtype=dtype)


@npfunc(np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product with nans counted as one (``numpy.nancumprod``)."""
    return _anp().cumprod(_nan_fill(a, 1.0), axis=axis, dtype=dtype)


@npfunc(np.nanvar)
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance of the non-nan entries (``numpy.nanvar``)."""
    anp = _anp()
    a = asarray(a)
    a = P.convert(a, np.dtype(dtype) if dtype is not None else float_type(dtype_of(a)))
    rdt = np.empty(0, dtype_of(a)).real.dtype        # counts and the result are real
    ok = anp.logical_not(anp.isnan(a))
    n = anp.sum(anp.astype(ok, rdt), axis=axis, keepdims=True)
    m = anp.divide(anp.sum(anp.where(ok, a, 0.0), axis=axis, keepdims=True), n)
    d = anp.where(ok, anp.subtract(a, m), 0.0)
    # |d|²: the variance of complex data is real (numpy's)
    d2 = anp.add(anp.square(P.real(d)), anp.square(P.imag(d))) if dtype_of(d).kind == "c" \
        else anp.multiply(d, d)
    s = anp.sum(d2, axis=axis, keepdims=keepdims)
    nn = n if keepdims else anp.sum(anp.astype(ok, rdt), axis=axis)
    dof = anp.subtract(nn, ddof)
    return anp.where(anp.greater(dof, 0), anp.divide(s, anp.where(anp.greater(dof, 0), dof, 1.0)), np.nan)


@npfunc(np.nanstd)
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation of the non-nan entries (zero gradient where it is 0)."""
    anp = _anp()
    v = nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    pos = anp.greater(v, 0)
    return anp.where(pos, anp.sqrt(anp.where(pos, v, 1.0)), anp.where(anp.isnan(v), v, anp.zeros_like(v)))


@npfunc(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``numpy.cov`` with ``fweights`` / ``aweights`` (numpy's weighted formula)."""
    anp = _anp()
    X = asarray(m)
    X = P.convert(X, np.result_type(dtype_of(X), np.float64) if dtype is None else np.dtype(dtype))
    if ndim(X) == 1:
        X = anp.expand_dims(X, 0)
    if not rowvar and shape_of(X)[0] != 1:
        X = anp.transpose(X)
    if y is not None:
        Y = anp.atleast_2d(asarray(y))
        if not rowvar and shape_of(Y)[0] != 1:
            Y = anp.transpose(Y)
        X = anp.concatenate([X, P.convert(Y, dtype_of(X))], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = anp.astype(asarray(fweights), dtype_of(X))
    if aweights is not None:
        aw = anp.astype(asarray(aweights), dtype_of(X))
        w = aw if w is None else anp.multiply(w, aw)
    if w is None:
        n = shape_of(X)[1]
        avg = anp.mean(X, axis=1, keepdims=True)
        fact = float(n - ddof)
        xc = anp.subtract(X, avg)
        # numpy conjugates the second factor: c = xc·xcᴴ/fact (Hermitian for complex data)
        c = anp.divide(anp.matmul(xc, P.conj(anp.transpose(xc))), fact)
    else:
        w_sum = anp.sum(w)
        avg = anp.divide(anp.sum(anp.multiply(X, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = anp.subtract(w_sum, ddof)
        else:
            fact = anp.subtract(w_sum, anp.divide(anp.multiply(ddof, anp.sum(anp.multiply(w, aw))), w_sum))
        xc = anp.subtract(X, avg)
        c = anp.divide(anp.matmul(anp.multiply(xc, w), P.conj(anp.transpose(xc))), fact)
    return anp.squeeze(c) if shape_of(c) == (1, 1) else c


@npfunc(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (``numpy.corrcoef``), clipped to [-1, 1] as numpy."""
    anp = _anp()
    c = cov(x, y, rowvar, dtype=dtype)
    if ndim(c) == 0:
        return anp.divide(c, c)
    # the diagonal of a complex covariance is real (numpy takes its real part); numpy
    # clips the real and the imaginary parts to [-1, 1] separately
    d = anp.sqrt(P.real(anp.diagonal(c)))
    c = anp.divide(anp.divide(c, anp.expand_dims(d, 1)), anp.expand_dims(d, 0))
    if dtype_of(c).kind == "c":
        return P.complex_(anp.clip(P.real(c), -1, 1), anp.clip(P.imag(c), -1, 1))
    return anp.clip(c, -1, 1)
