"""``scipy.stats.poisson``: the Poisson distribution with mean ``mu``.

>>> from autodiff.scipy.stats import poisson; round(float(poisson.pmf(2, 2.0)), 12)
0.270670566473
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, floats, is_int, safe


def _logpmf(k, mu):
    ok = anp.logical_and(is_int(k), anp.greater_equal(k, 0.0))
    ks = safe(ok, k, 0.0)
    out = anp.subtract(anp.subtract(sp.xlogy(ks, mu), mu), sp.gammaln(anp.add(ks, 1.0)))
    return anp.where(ok, out, -np.inf)


def _cdf(k, mu):
    # P(K ≤ k) = Q(⌊k⌋ + 1, μ)
    fk = anp.floor(k)
    ok = anp.greater_equal(fk, 0.0)
    return anp.where(ok, sp.gammaincc(anp.add(safe(ok, fk, 0.0), 1.0), mu), 0.0)


def _sf(k, mu):
    fk = anp.floor(k)
    ok = anp.greater_equal(fk, 0.0)
    return anp.where(ok, sp.gammainc(anp.add(safe(ok, fk, 0.0), 1.0), mu), 1.0)


logpmf = discrete("poisson", "logpmf", _logpmf, ("mu",))
pmf = discrete("poisson", "pmf", lambda k, mu: anp.exp(_logpmf(k, mu)), ("mu",))
cdf = discrete("poisson", "cdf", _cdf, ("mu",))
sf = discrete("poisson", "sf", _sf, ("mu",))
logcdf = discrete("poisson", "logcdf", lambda k, mu: anp.log(_cdf(k, mu)), ("mu",))
logsf = discrete("poisson", "logsf", lambda k, mu: anp.log(_sf(k, mu)), ("mu",))


def _entropy(mu):
    # -Σ_k p_k log p_k over the bulk k < μ + 20√μ + 40 (the rest is below rounding)
    mu = anp.asarray(mu)
    n = 200
    ks = np.arange(n, dtype=np.float64)
    lp = _logpmf(anp.asarray(ks), anp.expand_dims(mu, -1)) if anp.ndim(mu) else _logpmf(anp.asarray(ks), mu)
    return anp.negative(anp.sum(anp.multiply(anp.exp(lp), lp), axis=-1))


def entropy(mu, loc=0):
    """Entropy ``-Σ p log p`` of Poisson(mu) (summed over k < 200: mu up to ~100)."""
    (mu,) = floats(mu)
    return _entropy(mu)


__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "entropy"]
