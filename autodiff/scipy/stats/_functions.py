"""``scipy.stats`` functions that are not distributions: ``mode``, ``rankdata``, ``sem``,
``gaussian_kde``."""
import math
from collections import namedtuple

import numpy as np

from ... import numpy as anp
from ...numpy._base import npfunc, asarray, normalize_axis
from . import multivariate_normal
from .. import special
from ._common import quiet

ModeResult = namedtuple("ModeResult", ["mode", "count"])


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """Most frequent value along ``axis`` (the smallest among ties) and its count; with
    ``axis=None`` and ``keepdims`` both keep every dimension (as scipy's); an empty slice
    gives mode nan and count 0.

    >>> import numpy as np
    >>> from autodiff.scipy.stats import mode
    >>> m = mode(np.array([[1, 2, 2], [3, 3, 1]]), axis=1)
    >>> m.mode.tolist(), m.count.tolist()
    ([2, 3], [2, 2])
    """
    return ModeResult(*_mode(a, axis, nan_policy, keepdims))


@npfunc(None)
def _mode(a, axis, nan_policy, keepdims):
    a = asarray(a)
    ndim0 = anp.ndim(a)
    if axis is None:
        m, c = _mode(anp.ravel(a), 0, nan_policy, False)
        if keepdims:
            m, c = anp.reshape(m, (1,) * ndim0), anp.reshape(c, (1,) * ndim0)
        return m, c
    if anp.ndim(a) == 0:
        a = anp.reshape(a, (1,))
    ax = normalize_axis(axis, anp.ndim(a))
    x = anp.moveaxis(a, ax, -1)
    if anp.shape(x)[-1] == 0:
        shape = anp.shape(x)[:-1]
        m = anp.full(shape, np.nan, dtype=np.result_type(anp.dtype_of(x), np.float32))
        c = anp.zeros(shape, dtype=np.int64)
        if keepdims:
            m, c = anp.expand_dims(m, ax), anp.expand_dims(c, ax)
        return m, c
    eq = anp.equal(anp.expand_dims(x, -1), anp.expand_dims(x, -2))
    counts = anp.sum(eq, axis=-1)
    best = anp.max(counts, axis=-1, keepdims=True)
    big = np.inf if anp.dtype_of(x).kind == "f" else np.iinfo(anp.dtype_of(x)).max
    m = anp.min(anp.where(anp.equal(counts, best), x, big), axis=-1)
    c = anp.squeeze(best, -1)
    if keepdims:
        m, c = anp.expand_dims(m, ax), anp.expand_dims(c, ax)
    return m, c


@npfunc(None)
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1 (``method`` 'average', 'min', 'max', 'dense' or 'ordinal')."""
    a = asarray(a)
    if axis is None:
        return rankdata(anp.ravel(a), method, axis=0)
    ax = normalize_axis(axis, anp.ndim(a))
    x = anp.moveaxis(a, ax, -1)
    xi, xj = anp.expand_dims(x, -1), anp.expand_dims(x, -2)
    less = anp.sum(anp.less(xj, xi), axis=-1)
    leq = anp.sum(anp.less_equal(xj, xi), axis=-1)
    if method == "average":
        r = anp.multiply(anp.add(anp.add(less, leq), 1), 0.5)
    elif method == "min":
        r = anp.add(less, 1)
    elif method == "max":
        r = leq
    elif method == "ordinal":
        r = anp.add(anp.argsort(anp.argsort(x, axis=-1, kind="stable"), axis=-1, kind="stable"), 1)
    elif method == "dense":
        n = anp.shape(x)[-1]
        # distinct values below xᵢ: Σ_j [x_j < xᵢ]/#{k: x_k = x_j}
        cnt = anp.sum(anp.equal(xj, xi), axis=-1)
        r = anp.add(anp.sum(anp.divide(anp.less(xj, xi), anp.expand_dims(cnt, -2)), axis=-1), 1.0)
        r = anp.astype(anp.rint(r), np.int64)
    else:
        raise ValueError(f"unknown method {method!r}")
    r = anp.astype(r, np.float64) if method == "average" else anp.astype(r, np.int64)
    return anp.moveaxis(r, -1, ax)


@npfunc(None)
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """Standard error of the mean: ``std(a, ddof)/√n`` along ``axis`` (``None``: all of
    ``a``; with ``keepdims`` every dimension kept, as scipy's). ``nan_policy='omit'``
    leaves the nans out (n counts the rest); 'propagate' gives nan.

    >>> import numpy as np
    >>> from autodiff.scipy.stats import sem
    >>> round(float(sem(np.array([1.0, 2.0, 3.0, np.nan]), nan_policy="omit")), 12)
    0.57735026919
    """
    a = asarray(a)
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"sem: nan_policy must be 'propagate', 'omit' or 'raise', "
                         f"got {nan_policy!r}")
    if axis is None:
        out = sem(anp.ravel(a), 0, ddof, nan_policy)
        return anp.reshape(out, (1,) * anp.ndim(a)) if keepdims else out
    if nan_policy == "omit":
        ok = anp.logical_not(anp.isnan(a))
        n = anp.sum(ok, axis=axis, keepdims=keepdims)
        var = anp.nanvar(a, axis=axis, ddof=ddof, keepdims=keepdims)
        return anp.sqrt(anp.divide(var, n))
    n = anp.shape(a)[axis]
    return anp.divide(anp.std(a, axis=axis, ddof=ddof, keepdims=keepdims), math.sqrt(n))


class gaussian_kde:
    """Gaussian kernel density estimate of ``dataset`` (d, n) (or (n,)): bandwidth by
    Scott's or Silverman's rule, a scalar factor or a callable; optional ``weights``.
    ``evaluate`` / ``__call__`` / ``pdf`` / ``logpdf`` at points (d, m), ``integrate_gaussian``,
    ``integrate_box_1d`` and ``integrate_kde``, differentiable in the points and the data
    (JAX's ``resample`` is not there)."""

    def __init__(self, dataset, bw_method=None, weights=None):
        self.dataset = anp.atleast_2d(asarray(dataset))
        self.d, self.n = anp.shape(self.dataset)
        if weights is None:
            self.weights = np.full(self.n, 1.0 / self.n)
        else:
            w = anp.asarray(weights)
            self.weights = anp.divide(w, anp.sum(w))
        self.neff = anp.divide(1.0, anp.sum(anp.square(self.weights)))
        if bw_method is None or bw_method == "scott":
            self.factor = anp.power(self.neff, -1.0 / (self.d + 4))
        elif bw_method == "silverman":
            self.factor = anp.power(anp.divide(anp.multiply(self.neff, self.d + 2.0), 4.0), -1.0 / (self.d + 4))
        elif callable(bw_method):
            self.factor = bw_method(self)
        else:
            self.factor = bw_method
        mean = anp.sum(anp.multiply(self.dataset, self.weights), axis=1, keepdims=True)
        xc = anp.subtract(self.dataset, mean)
        cov = anp.divide(anp.matmul(anp.multiply(xc, self.weights), xc.T), anp.subtract(1.0, anp.sum(anp.square(self.weights))))
        self.covariance = anp.multiply(cov, anp.square(self.factor))
        self.inv_cov = anp.linalg.inv(self.covariance)

    @quiet
    def logpdf(self, points):
        """Log density at ``points`` (d, m)."""
        pts = anp.atleast_2d(asarray(points))
        if anp.shape(pts)[0] != self.d and anp.shape(pts)[-1] == self.d and anp.ndim(pts) == 2:
            pts = pts.T
        L = anp.linalg.cholesky(self.covariance)
        diff = anp.subtract(anp.expand_dims(pts, -1), anp.expand_dims(self.dataset, 1))        # (d, m, n)
        y = anp.linalg.solve_triangular(L, anp.reshape(diff, (self.d, -1)), lower=True)
        maha = anp.reshape(anp.sum(anp.multiply(y, y), axis=0), anp.shape(diff)[1:])         # (m, n)
        logdet = anp.multiply(anp.sum(anp.log(anp.diagonal(L))), 2.0)
        lk = anp.multiply(anp.add(anp.add(maha, logdet), self.d * math.log(2 * math.pi)), -0.5)
        return anp.logsumexp(anp.add(lk, anp.log(self.weights)), axis=-1)

    def evaluate(self, points):
        """Density at ``points`` (d, m)."""
        return anp.exp(self.logpdf(points))

    __call__ = pdf = evaluate

    def integrate_gaussian(self, mean, cov):
        """``∫ kde(x)·N(x; mean, cov) dx``."""
        c = anp.add(self.covariance, anp.atleast_2d(asarray(cov)))
        return anp.sum(anp.multiply(self.weights, multivariate_normal.pdf(self.dataset.T, mean, c)))

    def integrate_box_1d(self, low, high):
        """``∫_low^high kde(x) dx`` of a one-dimensional estimate.

        >>> import numpy as np
        >>> from autodiff.scipy.stats import gaussian_kde
        >>> kde = gaussian_kde(np.array([0.0, 1.0, 2.0]))
        >>> round(float(kde.integrate_box_1d(-np.inf, np.inf)), 12)
        1.0
        """
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        sd = anp.sqrt(anp.reshape(self.covariance, ()))
        data = anp.reshape(self.dataset, (-1,))
        lo = anp.divide(anp.subtract(low, data), sd)
        hi = anp.divide(anp.subtract(high, data), sd)
        return anp.sum(anp.multiply(self.weights,
                                    anp.subtract(special.ndtr(hi), special.ndtr(lo))))

    def integrate_kde(self, other):
        """``∫ kde(x)·other(x) dx`` for another ``gaussian_kde`` of the same dimension."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        c = anp.add(self.covariance, other.covariance)
        # N(x_i - y_j; 0, Σ₁ + Σ₂) for every pair of data points
        dens = multivariate_normal.pdf(anp.expand_dims(self.dataset.T, 1),
                                       anp.expand_dims(other.dataset.T, 0), c)
        return anp.sum(anp.multiply(anp.multiply(anp.expand_dims(self.weights, 1), other.weights),
                                    dens))
