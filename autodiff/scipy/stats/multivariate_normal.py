"""``scipy.stats.multivariate_normal``: densities of N(mean, cov) at points ``x`` (last
axis the components), through the Cholesky factor of ``cov`` (scalar, vector of
variances, or matrix).

>>> import numpy as np
>>> from autodiff.scipy.stats import multivariate_normal as mvn
>>> round(float(mvn.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 12)      # -log 2π
-1.837877066409
"""
import math


from ... import numpy as anp
from ...numpy._base import npfunc, asarray, promote
from ._common import quiet


@npfunc(None)
@quiet
def logpdf(x, mean=None, cov=1, allow_singular=False):
    """``-(d log 2π + log|Σ| + (x-μ)ᵀΣ⁻¹(x-μ))/2``, differentiable in x, mean and cov."""
    x = asarray(x)
    if mean is None:
        mean = 0.0
    x, mean, cov = promote(x, asarray(mean), asarray(cov), to_float=True)
    d = anp.shape(mean)[-1] if anp.ndim(mean) else (anp.shape(cov)[-1] if anp.ndim(cov) else anp.shape(x)[-1])
    if anp.ndim(x) == 0 or (anp.ndim(x) == 1 and d != anp.shape(x)[-1]):
        x = anp.expand_dims(x, -1)            # scipy: a 1-d x of scalar points when d = 1
    diff = anp.subtract(x, mean)
    if anp.ndim(cov) < 2:
        var = anp.broadcast_to(cov, (d,))
        maha = anp.sum(anp.divide(anp.multiply(diff, diff), var), axis=-1)
        logdet = anp.sum(anp.log(var))
    else:
        L = anp.linalg.cholesky(cov)
        lead = anp.shape(diff)[:-1]
        y = anp.linalg.solve_triangular(L, anp.reshape(diff, (-1, d)).T, lower=True)
        maha = anp.reshape(anp.sum(anp.multiply(y, y), axis=0), lead)
        logdet = anp.multiply(anp.sum(anp.log(anp.diagonal(L))), 2.0)
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
