"""``scipy.stats.nbinom``: the negative binomial distribution: failures before the ``n``-th success.

>>> from autodiff.scipy.stats import nbinom; round(float(nbinom.pmf(0, 1, 0.5)), 12)
0.5
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, is_int, safe


def _logpmf(k, n, p):
    ok = anp.logical_and(is_int(k), anp.greater_equal(k, 0.0))
    ks = safe(ok, k, 0.0)
    comb = anp.subtract(sp.gammaln(anp.add(n, ks)), anp.add(sp.gammaln(anp.add(ks, 1.0)), sp.gammaln(n)))
    out = anp.add(comb, anp.add(sp.xlogy(n, p), sp.xlog1py(ks, anp.negative(p))))
    return anp.where(ok, out, -np.inf)


def _cdf(k, n, p):
    fk = anp.floor(k)
    ok = anp.greater_equal(fk, 0.0)
    return anp.where(ok, sp.betainc(n, anp.add(safe(ok, fk, 0.0), 1.0), p), 0.0)



def _ok(n, p):
    """scipy's valid parameters (n > 0, 0 < p ≤ 1); nan elsewhere."""
    return anp.logical_and(anp.greater(n, 0.0),
                           anp.logical_and(anp.greater(p, 0.0), anp.less_equal(p, 1.0)))


logpmf = discrete("nbinom", "logpmf", _logpmf, ("n", "p"), _ok)
pmf = discrete("nbinom", "pmf", lambda k, n, p: anp.exp(_logpmf(k, n, p)), ("n", "p"), _ok)
cdf = discrete("nbinom", "cdf", _cdf, ("n", "p"), _ok)
sf = discrete("nbinom", "sf", lambda k, n, p: anp.subtract(1.0, _cdf(k, n, p)), ("n", "p"), _ok)
__all__ = ["logpmf", "pmf", "cdf", "sf"]
