"""numpy's set operations: ``unique`` and its array-API variants, ``isin``, ``union1d``,
``intersect1d``, ``setdiff1d``, ``setxor1d``.

Results whose length depends on the data take JAX's ``size=`` and ``fill_value=`` when
traced under ``jit``; under ``grad``/``jvp`` without ``jit`` the traced values are
concrete, so the length is read from them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.jit(lambda x: anp.unique(x, size=3, fill_value=-1))(np.array([3, 1, 3]))
array([ 1,  3, -1])
"""
import builtins
from collections import namedtuple

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, user_source
from ..errors import UnsupportedError
from ._base import npfunc, asarray, promote, shape_of, dtype_of, value_kind, concrete_for_size


# ----------------------------------------------------------------------------
# unique and the set operations
# ----------------------------------------------------------------------------

def _unique_sorted(x, size, fill_value):
    """Sorted unique values of 1-d ``x`` padded to ``size``; also the sorted array, the
    sort permutation, the 'first of a run' mask and each element's run number."""
    n = shape_of(x)[0]
    perm = anp.argsort(x, kind="stable")
    s = anp.take(x, perm)
    if n == 0:                          # every place is padding
        fill = 0 if fill_value is None else fill_value
        return (anp.full_like(x, fill, shape=(size,)), s, perm, None, None,
                anp.zeros_like(x, dtype=np.int64, shape=(size,)))
    prev = anp.concatenate([anp.getitem(s, slice(0, 1)), anp.getitem(s, slice(0, n - 1))])
    neq = anp.not_equal(s, prev)
    if dtype_of(s).kind == "f":            # numpy: nans are one value (equal_nan=True)
        neq = anp.logical_and(neq, anp.logical_not(anp.logical_and(anp.isnan(s), anp.isnan(prev))))
    first = anp.concatenate([np.array([True]), anp.getitem(neq, slice(1, n))])
    run = anp.subtract(anp.cumulative_sum(anp.astype(first, np.int64)), 1)       # run number per sorted element
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
        if value_kind(ar) == 0:
            return np.unique(ar, return_index, return_inverse, return_counts, axis=axis, equal_nan=equal_nan)
        raise UnsupportedError("unique: axis= is not supported on traced values", source=user_source())
    if value_kind(ar) == 0 and size is None:
        res = np.unique(ar, return_index, return_inverse, return_counts, equal_nan=equal_nan)
        return _named(res, return_index, return_inverse, return_counts)
    return _unique_traced(ar, return_index, return_inverse, return_counts, size, fill_value)


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
    x = asarray(ar)
    shp = shape_of(x)
    x = anp.ravel(x)
    if size is None:
        size = builtins.int(np.unique(concrete_for_size(x, "unique")).shape[0])
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
    if value_kind(x) == 0 and size is None:
        inv = np.reshape(inv, np.shape(x))
    return UniqueInverseResult(vals, inv)


def unique_all(x, *, size=None, fill_value=None):
    """Values, first indices, inverse indices and counts (``numpy.unique_all``)."""
    vals, idx, inv, cnt = unique(x, True, True, True, size=size, fill_value=fill_value)
    if value_kind(x) == 0 and size is None:
        inv = np.reshape(inv, np.shape(x))
    return UniqueAllResult(vals, idx, inv, cnt)


@npfunc(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Elementwise membership of ``element`` in ``test_elements`` (``numpy.isin``)."""
    e = asarray(element)
    t = anp.ravel(asarray(test_elements))
    e, t = promote(e, t)
    hit = anp.any(anp.equal(anp.expand_dims(e, -1), t), axis=-1) if shape_of(t)[0] else \
        anp.zeros_like(e, dtype=np.bool_)
    return anp.logical_not(hit) if invert else hit


def _set_result(x, size, fill_value, what):
    if size is None and value_kind(x) != 0:
        size = builtins.int(np.unique(concrete_for_size(x, what)).shape[0])
    return unique(x, size=size, fill_value=fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted union of the values of two arrays (``numpy.union1d``)."""
    if value_kind((ar1, ar2)) == 0 and size is None:
        return np.union1d(ar1, ar2)
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _set_result(anp.concatenate([a, b]), size, fill_value, "union1d")


def _masked_unique(x, keep, size, fill_value, what):
    """Unique values of ``x`` where ``keep`` (a traced mask): masked entries become +inf
    / the dtype's max, which sort last, and are then replaced by the fill value."""
    dt = dtype_of(x)
    big = np.inf if dt.kind == "f" else np.iinfo(dt).max
    xm = anp.where(keep, x, anp.full_like(x, big))
    if size is None:
        xv, kv = concrete_for_size(x, what), concrete_for_size(keep, what)
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
    if value_kind((ar1, ar2)) == 0 and size is None:
        return np.intersect1d(ar1, ar2, assume_unique, return_indices)
    if return_indices:
        raise UnsupportedError("intersect1d: return_indices on traced values", source=user_source())
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _masked_unique(a, isin(a, b), size, fill_value, "intersect1d")


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ``ar1`` not in ``ar2`` (``numpy.setdiff1d``)."""
    if value_kind((ar1, ar2)) == 0 and size is None:
        return np.setdiff1d(ar1, ar2, assume_unique)
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    return _masked_unique(a, isin(a, b, invert=True), size, fill_value, "setdiff1d")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays (``numpy.setxor1d``)."""
    if value_kind((ar1, ar2)) == 0 and size is None:
        return np.setxor1d(ar1, ar2, assume_unique)
    a, b = promote(anp.ravel(asarray(ar1)), anp.ravel(asarray(ar2)))
    both = anp.concatenate([a, b])
    keep = anp.logical_xor(anp.concatenate([isin(a, b), isin(b, a)]), True)
    return _masked_unique(both, keep, size, fill_value, "setxor1d")
