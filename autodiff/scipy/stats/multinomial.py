"""``scipy.stats.multinomial``: counts ``x`` (last axis) of ``n`` draws with probabilities ``p``.

>>> from autodiff.scipy.stats import multinomial; round(float(multinomial.pmf([1, 1], 2, [0.5, 0.5])), 12)
0.5
"""
import numpy as np

from ... import numpy as anp
from ...numpy._base import npfunc, asarray, promote
from .. import special as sp
from ._common import quiet, is_int


@npfunc(None)
@quiet
def logpmf(x, n, p):
    """``log n! - Σ log xᵢ! + Σ xᵢ log pᵢ``; -inf unless the counts are non-negative
    integers summing to ``n``."""
    x, n, p = promote(asarray(x), n, asarray(p), to_float=True)
    ok = anp.logical_and(anp.all(anp.logical_and(is_int(x), anp.greater_equal(x, 0.0)), axis=-1),
                         anp.equal(anp.sum(x, axis=-1), n))
    out = anp.add(anp.subtract(sp.gammaln(anp.add(n, 1.0)), anp.sum(sp.gammaln(anp.add(x, 1.0)), axis=-1)),
                  anp.sum(sp.xlogy(x, p), axis=-1))
    return anp.where(ok, out, -np.inf)


@npfunc(None)
def pmf(x, n, p):
    """``exp(logpmf(x, n, p))``."""
    return anp.exp(logpmf(x, n, p))


__all__ = ["logpmf", "pmf"]
