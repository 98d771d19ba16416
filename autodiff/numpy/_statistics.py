"""numpy's statistics beyond the reductions: histograms, quantiles and percentiles with
numpy's methods (weights included), the nan-aware versions and the remaining nan-reductions,
``cov`` and ``corrcoef``.

>>> import numpy as np, autodiff.numpy as anp
>>> anp.quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5, method="lower")
np.float64(2.0)
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, real_dtype, user_source
from ..errors import DTypeError
from ._base import (npfunc, asarray, promote, shape_of, ndim, normalize_axis, dtype_of,
                    result_type, float_type, is_python_scalar)
from ._products import axes_to_last
from ._reductions import _check_where, _no_out, _var_dtype, _DTypeValueError, _np_without_none


# ----------------------------------------------------------------------------
# histograms
# ----------------------------------------------------------------------------

def _edges(a, bins, range_, weights_dt):
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
    a = anp.ravel(asarray(a))
    return _edges(a, bins, range, None)


def _bin_index(a, edges):
    """Bin of each value (edges inclusive on the left, the last bin closed), -1 outside."""
    nb = shape_of(edges)[0] - 1
    i = anp.subtract(anp.searchsorted(edges, a, side="right"), 1)
    i = anp.where(anp.equal(a, anp.getitem(edges, -1)), nb - 1, i)
    inside = anp.logical_and(anp.greater_equal(a, anp.getitem(edges, 0)), anp.less_equal(a, anp.getitem(edges, -1)))
    return anp.where(inside, i, -1)


@npfunc(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """``numpy.histogram``: counts (or summed, differentiable ``weights``) per bin, and
    the edges (differentiable in traced ``range`` end points)."""
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
    if method == "linear":
        return anp.multiply(anp.subtract(n, 1), q)
    a, b = _CONTINUOUS[method]
    return anp.subtract(anp.add(anp.multiply(n, q), a + q * (1 - a - b)), 1)


def _real_quantile_input(a, name):
    # numpy's quantile family refuses complex input (its median and nanmedian take it)
    if dtype_of(a).kind == "c":
        raise DTypeError(f"{name}: a must be an array of real numbers (numpy's rule), got "
                         f"{dtype_of(a)}; median and nanmedian take complex arrays",
                         source=user_source())


def _quantile_sorted(s, n, q, method):
    """Quantile q of sorted rows ``s`` (..., m) whose first ``n`` entries are valid."""
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
    a = asarray(a)
    qa = q if is_python_scalar(q) else np.asarray(q) if not isinstance(q, Tracer) else q
    dt = float_type(result_type(a, qa if is_python_scalar(qa) or isinstance(qa, Tracer) else np.asarray(qa)))
    if method in ("lower", "higher", "nearest", "inverted_cdf", "closest_observation"):
        dt = float_type(dtype_of(a))       # numpy: these pick elements, keeping a's dtype
    a = P.convert(a, dt)
    s, kept = axes_to_last(a, axis)
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
    s, kept = axes_to_last(a, axes)
    sw_, _ = axes_to_last(anp.astype(w, np.float64), axes)
    if nan:
        valid = anp.logical_not(anp.isnan(s))
        sw_ = anp.where(valid, sw_, 0.0)                     # nans weigh nothing
        s = anp.where(valid, s, np.inf)
    order = anp.argsort(s, axis=-1, kind="stable")
    s = anp.take_along_axis(s, order, axis=-1)
    cw = anp.cumulative_sum(anp.take_along_axis(sw_, order, axis=-1), axis=-1)
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
    q = q / 100.0 if is_python_scalar(q) else anp.divide(asarray(q) if isinstance(q, Tracer) else np.asarray(q, np.float64), 100.0)
    return nanquantile(a, q, axis=axis, method=method, keepdims=keepdims, weights=weights,
                       interpolation=interpolation)


@npfunc(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-nan entries (``numpy.nanmedian``)."""
    return _quantile_impl(a, 0.5, axis, keepdims, "linear", nan=True)


def _nan_fill(a, v):
    a = asarray(a)
    if dtype_of(a).kind not in "fc":      # complex: nan in either part (numpy's isnan)
        return a
    return anp.where(anp.isnan(a), v, a)


@npfunc(np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the largest non-nan entry (``numpy.nanargmax``)."""
    return anp.argmax(_nan_fill(a, -np.inf), axis=axis, keepdims=keepdims)


@npfunc(np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the smallest non-nan entry (``numpy.nanargmin``)."""
    return anp.argmin(_nan_fill(a, np.inf), axis=axis, keepdims=keepdims)


@npfunc(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product with nans counted as one (``numpy.nanprod``; ``initial`` multiplies in,
    ``where`` leaves entries out).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = np.array([2.0, np.nan, 3.0, 4.0])
    >>> float(ad.jit(lambda x: anp.nanprod(x, where=x < 4, initial=0.5))(x))
    3.0
    """
    _no_out(out, "nanprod")
    _check_where("nanprod", where)
    return anp.prod(_nan_fill(a, 1.0), axis=axis, dtype=dtype, keepdims=keepdims,
                    initial=initial, where=where)


@npfunc(np.nancumsum)
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum with nans counted as zero (``numpy.nancumsum``)."""
    return anp.cumsum(_nan_fill(a, 0.0), axis=axis, dtype=dtype)


@npfunc(np.nancumprod)
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product with nans counted as one (``numpy.nancumprod``)."""
    return anp.cumprod(_nan_fill(a, 1.0), axis=axis, dtype=dtype)


@npfunc(_np_without_none(np.nanvar, "mean"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None):
    """Variance of the non-nan entries (``numpy.nanvar``; ``where`` leaves entries out,
    ``mean`` is a precomputed mean with ``keepdims=True``'s shape).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.nanvar(np.array([1.0, np.nan, 3.0, 50.0]), where=np.arange(4) < 3))
    1.0
    """
    _no_out(out, "nanvar")
    _check_where("nanvar", where)
    a = asarray(a)
    a = P.convert(a, _var_dtype(dtype_of(a), dtype, "nanvar"))
    rdt = np.empty(0, dtype_of(a)).real.dtype        # counts and the result are real
    ok = anp.logical_not(anp.isnan(a))
    if where is not None:
        ok = anp.logical_and(ok, where)
    n = anp.sum(anp.astype(ok, rdt), axis=axis, keepdims=True)
    if mean is None:
        m = anp.divide(anp.sum(anp.where(ok, a, 0.0), axis=axis, keepdims=True), n)
    else:
        m = mean
    d = anp.where(ok, anp.subtract(a, m), 0.0)
    # |d|²: the variance of complex data is real (numpy's)
    d2 = anp.add(anp.square(P.real(d)), anp.square(P.imag(d))) if dtype_of(d).kind == "c" \
        else anp.multiply(d, d)
    s = anp.sum(d2, axis=axis, keepdims=keepdims)
    nn = n if keepdims else anp.sum(anp.astype(ok, rdt), axis=axis)
    dof = anp.subtract(nn, ddof)
    return anp.where(anp.greater(dof, 0), anp.divide(s, anp.where(anp.greater(dof, 0), dof, 1.0)), np.nan)


@npfunc(_np_without_none(np.nanstd, "mean"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
           mean=None):
    """Standard deviation of the non-nan entries (zero gradient where it is 0; ``mean`` is
    a precomputed mean with ``keepdims=True``'s shape).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.nanstd(np.array([1.0, np.nan, 3.0, 50.0]), where=np.arange(4) < 3))
    1.0
    """
    _no_out(out, "nanstd")
    v = nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
               mean=mean)
    pos = anp.greater(v, 0)
    return anp.where(pos, anp.sqrt(anp.where(pos, v, 1.0)), anp.where(anp.isnan(v), v, anp.zeros_like(v)))


@npfunc(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """``numpy.cov`` with ``fweights`` / ``aweights`` (numpy's weighted formula)."""
    X = asarray(m)
    if dtype is None:
        dt = np.result_type(dtype_of(X), *([] if y is None else [dtype_of(asarray(y))]),
                            np.float64)
    else:
        dt = np.dtype(dtype)
        if dt.kind not in "fc":
            raise _DTypeValueError(f"cov: dtype must be a subclass of float or complex; "
                                   f"got {dt}", source=user_source())
    X = P.convert(X, dt)
    m_ndim = ndim(X)
    if m_ndim == 1:
        X = anp.expand_dims(X, 0)
    if not rowvar and m_ndim != 1:        # numpy >= 2.2: a 2-D m is transposed, 1 row or not
        X = anp.transpose(X)
    if shape_of(X)[0] == 0:
        return anp.zeros((0, 0), dt)
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
        fact = builtins.max(float(n - ddof), 0.0)     # numpy: no degrees of freedom -> nan/inf
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
        fact = anp.maximum(fact, 0.0)
        xc = anp.subtract(X, avg)
        c = anp.divide(anp.matmul(anp.multiply(xc, w), P.conj(anp.transpose(xc))), fact)
    return anp.squeeze(c) if shape_of(c) == (1, 1) else c


@npfunc(np.corrcoef)
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients (``numpy.corrcoef``), clipped to [-1, 1] as numpy."""
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
