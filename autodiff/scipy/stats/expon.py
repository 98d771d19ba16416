"""``scipy.stats.expon``: the exponential distribution, density e^{-z} on z ≥ 0.

>>> from autodiff.scipy.stats import expon; round(float(expon.cdf(1.0)), 12)
0.632120558829
"""

import numpy as np

from ... import numpy as anp
from ...numpy._special_functions import log1mexp
from ._common import Continuous, safe


def _nonneg(z):
    return anp.greater_equal(z, 0.0)


def _cdf(z):
    return anp.where(_nonneg(z), anp.negative(anp.expm1(anp.negative(safe(_nonneg(z), z, 0.0)))), 0.0)


def _logcdf(z):
    pos = anp.greater(z, 0.0)
    return anp.where(pos, log1mexp(safe(pos, z, 1.0)), -np.inf)


_fam = Continuous("expon", 0, lambda z: anp.negative(z), support=_nonneg, cdf=_cdf, logcdf=_logcdf,
                  sf=lambda z: anp.exp(anp.negative(anp.maximum(z, 0.0))),
                  logsf=lambda z: anp.negative(anp.maximum(z, 0.0)),
                  ppf=lambda q: anp.negative(anp.log1p(anp.negative(q))), isf=lambda q: anp.negative(anp.log(q)))
_fam.export(globals())
