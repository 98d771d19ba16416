"""``scipy.stats.gumbel_r``: the right-skewed Gumbel distribution, cdf exp(-e^{-z}).

>>> from autodiff.scipy.stats import gumbel_r; round(float(gumbel_r.cdf(0.0)), 12)
0.367879441171
"""
from ... import numpy as anp
from ._common import Continuous


_fam = Continuous("gumbel_r", 0, lambda z: anp.subtract(anp.negative(z), anp.exp(anp.negative(z))),
                  cdf=lambda z: anp.exp(anp.negative(anp.exp(anp.negative(z)))),
                  logcdf=lambda z: anp.negative(anp.exp(anp.negative(z))),
                  sf=lambda z: anp.negative(anp.expm1(anp.negative(anp.exp(anp.negative(z))))),
                  ppf=lambda q: anp.negative(anp.log(anp.negative(anp.log(q)))),
                  isf=lambda q: anp.negative(anp.log(anp.negative(anp.log1p(anp.negative(q))))))
_fam.export(globals())
