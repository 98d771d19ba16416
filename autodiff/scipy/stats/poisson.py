"""``scipy.stats.poisson``: the Poisson distribution with mean ``mu``.

>>> from autodiff.scipy.stats import poisson; round(float(poisson.pmf(2, 2.0)), 12)
0.270670566473
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ...numpy._base import npfunc
from ._common import discrete, floats, is_int, quiet, safe


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



def _ok(mu):
    """scipy's valid parameters (mu ≥ 0); nan elsewhere."""
    return anp.greater_equal(mu, 0.0)


logpmf = discrete("poisson", "logpmf", _logpmf, ("mu",), _ok)
pmf = discrete("poisson", "pmf", lambda k, mu: anp.exp(_logpmf(k, mu)), ("mu",), _ok)
cdf = discrete("poisson", "cdf", _cdf, ("mu",), _ok)
sf = discrete("poisson", "sf", _sf, ("mu",), _ok)
logcdf = discrete("poisson", "logcdf", lambda k, mu: anp.log(_cdf(k, mu)), ("mu",), _ok)
logsf = discrete("poisson", "logsf", lambda k, mu: anp.log(_sf(k, mu)), ("mu",), _ok)


def _entropy(mu):
    # μ ≤ 100: -Σ_k p_k log p_k over k < 400 (beyond μ + 20√μ + 40 the terms are below
    # rounding); above, the asymptotic ½ log(2πeμ) - 1/(12μ) - 1/(24μ²) - 19/(360μ³)
    big = anp.greater(mu, 100.0)
    ms = anp.where(anp.logical_and(anp.greater(mu, 0.0), anp.logical_not(big)), mu, 1.0)
    ks = np.arange(400, dtype=np.float64).astype(anp.dtype_of(mu))
    lp = _logpmf(anp.asarray(ks), anp.expand_dims(ms, -1))
    small = anp.negative(anp.sum(anp.multiply(anp.exp(lp), lp), axis=-1))
    mb = anp.where(big, mu, 200.0)
    w = anp.divide(1.0, mb)
    asym = anp.subtract(anp.multiply(anp.log(anp.multiply(mb, 2 * np.pi * np.e)), 0.5),
                        anp.multiply(w,
                                     anp.add(1 / 12,
                                             anp.multiply(w,
                                                          anp.add(1 / 24,
                                                                  anp.multiply(w, 19 / 360))))))
    out = anp.where(big, asym, small)
    # 0 at μ = 0 (a point mass), nan below (scipy)
    return anp.where(anp.equal(mu, 0.0), 0.0, anp.where(anp.greater_equal(mu, 0.0), out, np.nan))


@npfunc(None)
def entropy(mu, loc=0):
    """Entropy ``-Σ p log p`` of Poisson(mu) (``loc`` shifts the support: no change).

    >>> from autodiff.scipy.stats import poisson
    >>> round(float(poisson.entropy(3.0)), 10)
    1.9314701981
    """
    (mu,) = floats(mu)
    return quiet(_entropy)(mu)


__all__ = ["logpmf", "pmf", "cdf", "sf", "logcdf", "logsf", "entropy"]
