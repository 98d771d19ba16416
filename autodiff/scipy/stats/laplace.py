"""``scipy.stats.laplace``: the Laplace (double exponential) distribution, density e^{-|z|}/2.

>>> from autodiff.scipy.stats import laplace; float(laplace.cdf(0.0))
0.5
"""
import math


from ... import numpy as anp
from ._common import Continuous, safe


def _cdf(z):
    neg = anp.less(z, 0.0)
    return anp.where(neg, anp.multiply(anp.exp(safe(neg, z, 0.0)), 0.5),
                     anp.subtract(1.0, anp.multiply(anp.exp(anp.negative(safe(neg, 0.0, z))), 0.5)))


def _logcdf(z):
    neg = anp.less(z, 0.0)
    return anp.where(neg, anp.subtract(safe(neg, z, 0.0), math.log(2.0)),
                     anp.log1p(anp.multiply(anp.exp(anp.negative(safe(neg, 0.0, z))), -0.5)))


def _ppf(q):
    lo = anp.less_equal(q, 0.5)
    return anp.where(lo, anp.log(anp.multiply(safe(lo, q, 0.25), 2.0)),
                     anp.negative(anp.log(anp.multiply(anp.subtract(1.0, safe(lo, 0.75, q)), 2.0))))


_fam = Continuous("laplace", 0, lambda z: anp.subtract(anp.negative(anp.abs(z)), math.log(2.0)),
                  cdf=_cdf, sf=lambda z: _cdf(anp.negative(z)), logcdf=_logcdf,
                  logsf=lambda z: _logcdf(anp.negative(z)), ppf=_ppf, isf=lambda q: anp.negative(_ppf(q)))
_fam.export(globals())
