"""``scipy.stats.norm``: the normal distribution N(loc, scale²).

>>> from autodiff.scipy.stats import norm; float(norm.cdf(0.0))
0.5
"""
from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, LOG_2PI


def _logpdf(z):
    return anp.subtract(anp.multiply(anp.multiply(z, z), -0.5), 0.5 * LOG_2PI)


_fam = Continuous("norm", 0, _logpdf, cdf=sp.ndtr, sf=lambda z: sp.ndtr(anp.negative(z)),
                  logcdf=sp.log_ndtr, logsf=lambda z: sp.log_ndtr(anp.negative(z)),
                  ppf=sp.ndtri, isf=lambda q: anp.negative(sp.ndtri(q)))
_fam.export(globals())
