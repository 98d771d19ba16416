"""``scipy.stats.lognorm``: the log-normal distribution with shape ``s`` (log z ~ N(0, s²)).

>>> from autodiff.scipy.stats import lognorm; float(lognorm.cdf(1.0, 0.5))
0.5
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, safe, LOG_2PI


def _support(z, s):
    return anp.greater(z, 0.0)


def _logpdf(z, s):
    zs = safe(anp.greater(z, 0.0), z, 1.0)
    lz = anp.log(zs)
    return anp.subtract(anp.negative(anp.divide(anp.multiply(lz, lz), anp.multiply(anp.multiply(s, s), 2.0))),
                        anp.add(anp.add(anp.log(s), lz), 0.5 * LOG_2PI))


def _logz(z):
    return anp.log(safe(anp.greater(z, 0.0), z, 1.0))


def _cdf(z, s):
    return anp.where(anp.greater(z, 0.0), sp.ndtr(anp.divide(_logz(z), s)), 0.0)


def _sf(z, s):
    return anp.where(anp.greater(z, 0.0), sp.ndtr(anp.negative(anp.divide(_logz(z), s))), 1.0)


_fam = Continuous("lognorm", 1, _logpdf, support=_support, shape_names=("s",), cdf=_cdf, sf=_sf,
                  argcheck=lambda s: anp.greater(s, 0.0),
                  logcdf=lambda z, s: anp.where(anp.greater(z, 0.0), sp.log_ndtr(anp.divide(_logz(z), s)), -np.inf),
                  logsf=lambda z, s: anp.where(anp.greater(z, 0.0), sp.log_ndtr(anp.negative(anp.divide(_logz(z), s))), 0.0),
                  ppf=lambda q, s: anp.exp(anp.multiply(s, sp.ndtri(q))),
                  isf=lambda q, s: anp.exp(anp.negative(anp.multiply(s, sp.ndtri(q)))))
_fam.export(globals())
