"""``scipy.stats.multivariate_normal``: densities of N(mean, cov) at points ``x`` (last
axis the components), through the Cholesky factor of ``cov`` (scalar, vector of
variances, or matrix).

>>> import numpy as np
>>> from autodiff.scipy.stats import multivariate_normal as mvn
>>> round(float(mvn.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)      # -log 2π
-1.837877066409
"""
import math

import numpy as np

from ... import numpy as anp
from ...numpy._base import npfunc, asarray, promote
from ._common import quiet


@npfunc(None)
@quiet
def logpdf(x, mean=None, cov=1, allow_singular=False):
    """``-(d log 2π + log|Σ| + (x-μ)ᵀΣ⁻¹(x-μ))/2``, differentiable in x, mean and cov.

    A scalar ``mean`` makes it the one-dimensional normal, elementwise in ``x`` (JAX's
    rule; a scalar or one-element ``cov`` its variance). Otherwise the last axis of
    ``mean`` is the dimension d, ``cov`` is a scalar, a vector of d variances or a
    (batch of) d×d matrices, and ``x``, ``mean`` and ``cov``'s batch dimensions broadcast
    (a 1-d ``x`` of scalar points when d = 1, as scipy's).

    >>> import numpy as np
    >>> from autodiff.scipy.stats import multivariate_normal as mvn
    >>> x, mu = np.zeros((4, 2)), np.ones((3, 1, 2))
    >>> mvn.logpdf(x, mu, np.eye(2)).shape
    (3, 4)
    """
    x = asarray(x)
    if mean is None:
        mean = anp.zeros(anp.shape(x)[-1:]) if anp.ndim(x) else 0.0
    x, mean, cov = promote(x, asarray(mean), asarray(cov), to_float=True)
    if anp.ndim(mean) == 0:
        var = anp.reshape(cov, ()) if anp.size(cov) == 1 else cov
        diff = anp.subtract(x, mean)
        return anp.multiply(anp.add(anp.add(anp.divide(anp.multiply(diff, diff), var),
                                            anp.log(var)),
                                    math.log(2 * math.pi)), -0.5)
    d = anp.shape(mean)[-1]
    if anp.ndim(x) == 1 and d == 1 and anp.shape(x)[0] != 1:
        x = anp.expand_dims(x, -1)            # scipy: a 1-d x of scalar points when d = 1
    diff = anp.subtract(x, mean)
    if anp.ndim(cov) < 2:
        var = anp.broadcast_to(cov, (d,))
        maha = anp.sum(anp.divide(anp.multiply(diff, diff), var), axis=-1)
        logdet = anp.sum(anp.log(var))
    else:
        if anp.shape(cov)[-2:] != (d, d):
            raise ValueError(f"multivariate_normal.logpdf: cov of shape {anp.shape(cov)} does not "
                             f"match mean of dimension {d}")
        L = anp.linalg.cholesky(cov)
        batch = np.broadcast_shapes(anp.shape(diff)[:-1], anp.shape(L)[:-2])
        L = anp.broadcast_to(L, batch + (d, d))
        diff = anp.broadcast_to(diff, batch + (d,))
        y = anp.squeeze(anp.linalg.solve_triangular(L, anp.expand_dims(diff, -1), lower=True), -1)
        maha = anp.sum(anp.multiply(y, y), axis=-1)
        logdet = anp.multiply(anp.sum(anp.log(anp.diagonal(L, axis1=-2, axis2=-1)), axis=-1), 2.0)
    return anp.multiply(anp.add(anp.add(maha, logdet), d * math.log(2 * math.pi)), -0.5)


@npfunc(None)
def pdf(x, mean=None, cov=1, allow_singular=False):
    """``exp(logpdf(x, mean, cov))``."""
    return anp.exp(logpdf(x, mean, cov, allow_singular))


@npfunc(None)
@quiet
def entropy(mean=None, cov=1):
    """``(d (1 + log 2π) + log|Σ|)/2``, the differential entropy (autograd's and scipy's),
    differentiable in cov (a matrix, a vector of variances or a scalar; ``d`` from mean).

    >>> import numpy as np
    >>> from autodiff.scipy.stats import multivariate_normal as mvn
    >>> round(float(mvn.entropy(np.zeros(2), np.diag([1.0, 4.0]))), 12)   # 1 + log 2π + log 2
    3.531024246969
    """
    cov = promote(asarray(cov), to_float=True)[0]
    if anp.ndim(cov) >= 2:
        d = anp.shape(cov)[-1]
        logdet = anp.linalg.slogdet(cov)[1]        # d/dΣ = Σ⁻ᵀ, every entry (autograd's)
    else:
        mean = 0.0 if mean is None else asarray(mean)
        d = anp.shape(mean)[-1] if anp.ndim(mean) else (anp.shape(cov)[-1] if anp.ndim(cov) else 1)
        var = anp.broadcast_to(cov, (d,))
        logdet = anp.sum(anp.log(var))
    return anp.multiply(anp.add(logdet, d * (1.0 + math.log(2 * math.pi))), 0.5)


__all__ = ["logpdf", "pdf", "entropy"]
