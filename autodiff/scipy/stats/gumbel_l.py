"""``scipy.stats.gumbel_l``: the left-skewed Gumbel distribution, sf exp(-e^{z}).

>>> from autodiff.scipy.stats import gumbel_l; round(float(gumbel_l.sf(0.0)), 12)
0.367879441171
"""
from ... import numpy as anp
from ._common import Continuous


_fam = Continuous("gumbel_l", 0, lambda z: anp.subtract(z, anp.exp(z)),
                  cdf=lambda z: anp.negative(anp.expm1(anp.negative(anp.exp(z)))),
                  sf=lambda z: anp.exp(anp.negative(anp.exp(z))),
                  logsf=lambda z: anp.negative(anp.exp(z)),
                  ppf=lambda q: anp.log(anp.negative(anp.log1p(anp.negative(q)))),
                  isf=lambda q: anp.log(anp.negative(anp.log(q))))
_fam.export(globals())
