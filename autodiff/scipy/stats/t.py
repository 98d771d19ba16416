"""``scipy.stats.t``: Student's t distribution with ``df`` degrees of freedom.

>>> from autodiff.scipy.stats import t; float(t.cdf(0.0, 3.0))
0.5
"""
import math


from ... import numpy as anp
from .. import special as sp
from ._common import Continuous


def _logpdf(z, df):
    return anp.subtract(anp.subtract(anp.subtract(sp.gammaln(anp.multiply(anp.add(df, 1.0), 0.5)),
                                                  sp.gammaln(anp.multiply(df, 0.5))),
                                     anp.multiply(anp.log(anp.multiply(df, math.pi)), 0.5)),
                        anp.multiply(anp.multiply(anp.add(df, 1.0), 0.5), anp.log1p(anp.divide(anp.multiply(z, z), df))))


def _sf(z, df):
    # P(T > z) = I_x(df/2, 1/2)/2 with x = df/(df + z²) for z > 0
    x = anp.divide(df, anp.add(df, anp.multiply(z, z)))
    half = anp.multiply(sp.betainc(anp.multiply(df, 0.5), anp.full_like(df, 0.5), x), 0.5)
    return anp.where(anp.greater(z, 0.0), half, anp.subtract(1.0, half))


_fam = Continuous("t", 1, _logpdf, cdf=lambda z, df: _sf(anp.negative(z), df), sf=_sf,
                  shape_names=("df",),
                  argcheck=lambda df: anp.greater(df, 0.0))
_fam.export(globals())
