"""``scipy.stats.dirichlet``: points ``x`` on the simplex, components along the first axis
(as scipy: ``x`` of shape (k,) or (k, N)).

>>> import numpy as np
>>> from autodiff.scipy.stats import dirichlet; round(float(dirichlet.pdf(np.array([0.5, 0.5]), np.array([1.0, 1.0]))), 12)
1.0
"""

from ... import numpy as anp
from ...numpy._base import npfunc, asarray, promote
from .. import special as sp
from ._common import quiet


@npfunc(None)
@quiet
def logpdf(x, alpha):
    """``Σ (αᵢ - 1) log xᵢ - (Σ log Γ(αᵢ) - log Γ(Σ αᵢ))``; ``x`` may omit its last
    component (then ``1 - Σ x``)."""
    x, alpha = promote(asarray(x), asarray(alpha), to_float=True)
    k = anp.shape(alpha)[0]
    if anp.shape(x)[0] == k - 1:
        x = anp.concatenate([x, anp.subtract(1.0, anp.sum(x, axis=0, keepdims=True))], axis=0)
    a = anp.reshape(alpha, (k,) + (1,) * (anp.ndim(x) - 1))
    lnB = anp.subtract(anp.sum(sp.gammaln(alpha)), sp.gammaln(anp.sum(alpha)))
    return anp.subtract(anp.sum(sp.xlogy(anp.subtract(a, 1.0), x), axis=0), lnB)


@npfunc(None)
def pdf(x, alpha):
    """``exp(logpdf(x, alpha))``."""
    return anp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]
