"""``scipy.stats.binom``: the binomial distribution of ``n`` trials with success probability ``p``.

>>> from autodiff.scipy.stats import binom; round(float(binom.pmf(1, 2, 0.5)), 12)
0.5
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, is_int, safe


def _logpmf(k, n, p):
    ok = anp.logical_and(anp.logical_and(is_int(k), anp.greater_equal(k, 0.0)), anp.less_equal(k, n))
    ks = safe(ok, k, 0.0)
    comb = anp.subtract(sp.gammaln(anp.add(n, 1.0)), anp.add(sp.gammaln(anp.add(ks, 1.0)),
                                                              sp.gammaln(anp.add(anp.subtract(n, ks), 1.0))))
    out = anp.add(comb, anp.add(sp.xlogy(ks, p), sp.xlog1py(anp.subtract(n, ks), anp.negative(p))))
    return anp.where(ok, out, -np.inf)


def _cdf(k, n, p):
    # P(K ≤ k) = I_{1-p}(n - k, k + 1) for 0 ≤ k < n
    fk = anp.floor(k)
    mid = anp.logical_and(anp.greater_equal(fk, 0.0), anp.less(fk, n))
    fs = safe(mid, fk, 0.0)
    ns = safe(mid, n, 1.0)
    out = sp.betainc(anp.subtract(ns, fs), anp.add(fs, 1.0), anp.subtract(1.0, p))
    return anp.where(mid, out, anp.where(anp.less(fk, 0.0), 0.0, 1.0))


def _sf(k, n, p):
    fk = anp.floor(k)
    mid = anp.logical_and(anp.greater_equal(fk, 0.0), anp.less(fk, n))
    fs = safe(mid, fk, 0.0)
    ns = safe(mid, n, 1.0)
    out = sp.betainc(anp.add(fs, 1.0), anp.subtract(ns, fs), p)
    return anp.where(mid, out, anp.where(anp.less(fk, 0.0), 1.0, 0.0))



def _ok(n, p):
    """scipy's valid parameters (integer n ≥ 0, 0 ≤ p ≤ 1); nan elsewhere."""
    return anp.logical_and(anp.logical_and(anp.greater_equal(n, 0.0), is_int(n)),
                           anp.logical_and(anp.greater_equal(p, 0.0), anp.less_equal(p, 1.0)))


logpmf = discrete("binom", "logpmf", _logpmf, ("n", "p"), _ok)
pmf = discrete("binom", "pmf", lambda k, n, p: anp.exp(_logpmf(k, n, p)), ("n", "p"), _ok)
cdf = discrete("binom", "cdf", _cdf, ("n", "p"), _ok)
sf = discrete("binom", "sf", _sf, ("n", "p"), _ok)
__all__ = ["logpmf", "pmf", "cdf", "sf"]
