"""``scipy.stats.bernoulli``: the Bernoulli distribution with success probability ``p``.

>>> from autodiff.scipy.stats import bernoulli; float(bernoulli.pmf(1, 0.25))
0.25
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, safe


def _logpmf(k, p):
    ok = anp.logical_or(anp.equal(k, 0.0), anp.equal(k, 1.0))
    ks = safe(ok, k, 0.0)
    out = anp.add(sp.xlogy(ks, p), sp.xlog1py(anp.subtract(1.0, ks), anp.negative(p)))
    return anp.where(ok, out, -np.inf)


def _cdf(k, p):
    return anp.where(anp.less(k, 0.0), 0.0, anp.where(anp.less(k, 1.0), anp.subtract(1.0, p), 1.0))


def _ppf(q, p):
    out = anp.where(anp.greater(q, anp.subtract(1.0, p)), 1.0, 0.0)
    return anp.where(anp.logical_or(anp.less(q, 0.0), anp.greater(q, 1.0)), np.nan,
                     anp.where(anp.equal(q, 0.0), -1.0, out))



def _ok(p):
    """scipy's valid parameters (0 ≤ p ≤ 1); nan elsewhere."""
    return anp.logical_and(anp.greater_equal(p, 0.0), anp.less_equal(p, 1.0))


logpmf = discrete("bernoulli", "logpmf", _logpmf, ("p",), _ok)
pmf = discrete("bernoulli", "pmf", lambda k, p: anp.exp(_logpmf(k, p)), ("p",), _ok)
cdf = discrete("bernoulli", "cdf", _cdf, ("p",), _ok)
sf = discrete("bernoulli", "sf", lambda k, p: anp.subtract(1.0, _cdf(k, p)), ("p",), _ok)
ppf = discrete("bernoulli", "ppf", _ppf, ("p",), _ok)
__all__ = ["logpmf", "pmf", "cdf", "sf", "ppf"]
