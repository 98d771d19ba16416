"""``scipy.stats.gennorm``: the generalized normal distribution, density β/(2Γ(1/β))·e^{-|z|^β}.

>>> from autodiff.scipy.stats import gennorm; float(gennorm.cdf(0.0, 1.5))
0.5
"""
from ... import numpy as anp
from .. import special as sp
from ._common import Continuous


def _logpdf(z, b):
    return anp.subtract(anp.subtract(anp.log(anp.multiply(b, 0.5)), sp.gammaln(anp.divide(1.0, b))),
                        anp.power(anp.abs(z), b))


def _sf(z, b):
    # P(Z > z) = Q(1/β, |z|^β)/2 for z > 0
    half = anp.multiply(sp.gammaincc(anp.divide(1.0, b), anp.power(anp.abs(z), b)), 0.5)
    return anp.where(anp.greater(z, 0.0), half, anp.subtract(1.0, half))


_fam = Continuous("gennorm", 1, _logpdf, shape_names=("beta",), sf=_sf,
                  argcheck=lambda b: anp.greater(b, 0.0), cdf=lambda z, b: _sf(anp.negative(z), b))
_fam.export(globals())
