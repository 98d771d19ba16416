"""``scipy.stats.betabinom``: the beta-binomial distribution with ``n`` trials and beta(``a``, ``b``) success rate.

>>> from autodiff.scipy.stats import betabinom; round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)
0.333333333333
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, is_int, safe


def _logpmf(k, n, a, b):
    ok = anp.logical_and(anp.logical_and(is_int(k), anp.greater_equal(k, 0.0)), anp.less_equal(k, n))
    ks = safe(ok, k, 0.0)
    comb = anp.subtract(sp.gammaln(anp.add(n, 1.0)), anp.add(sp.gammaln(anp.add(ks, 1.0)),
                                                              sp.gammaln(anp.add(anp.subtract(n, ks), 1.0))))
    out = anp.add(comb, anp.subtract(sp.betaln(anp.add(ks, a), anp.add(anp.subtract(n, ks), b)), sp.betaln(a, b)))
    return anp.where(ok, out, -np.inf)



def _ok(n, a, b):
    """scipy's valid parameters (integer n ≥ 0, a, b > 0); nan elsewhere."""
    return anp.logical_and(anp.logical_and(anp.greater_equal(n, 0.0), is_int(n)),
                           anp.logical_and(anp.greater(a, 0.0), anp.greater(b, 0.0)))


logpmf = discrete("betabinom", "logpmf", _logpmf, ("n", "a", "b"), _ok)
pmf = discrete("betabinom", "pmf", lambda k, n, a, b: anp.exp(_logpmf(k, n, a, b)),
               ("n", "a", "b"), _ok)
__all__ = ["logpmf", "pmf"]
