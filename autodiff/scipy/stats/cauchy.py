"""``scipy.stats.cauchy``: the Cauchy distribution, density 1/(π(1 + z²)).

>>> from autodiff.scipy.stats import cauchy; float(cauchy.cdf(1.0))
0.75
"""
import math


from ... import numpy as anp
from ._common import Continuous


def _cdf(z):
    # atan2 keeps the far tails accurate: cdf(z) = atan2(1, -z)/π
    return anp.divide(anp.arctan2(anp.ones_like(z), anp.negative(z)), math.pi)


_fam = Continuous("cauchy", 0, lambda z: anp.subtract(anp.negative(anp.log1p(anp.multiply(z, z))), math.log(math.pi)),
                  cdf=_cdf, sf=lambda z: _cdf(anp.negative(z)),
                  ppf=lambda q: anp.tan(anp.multiply(anp.subtract(q, 0.5), math.pi)),
                  isf=lambda q: anp.tan(anp.multiply(anp.subtract(0.5, q), math.pi)))
_fam.export(globals())
