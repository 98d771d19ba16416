"""``scipy.stats.uniform``: the uniform distribution on [loc, loc + scale].

>>> from autodiff.scipy.stats import uniform; float(uniform.pdf(0.5))
1.0
"""
from ... import numpy as anp
from ._common import Continuous


def _support(z):
    return anp.logical_and(anp.greater_equal(z, 0.0), anp.less_equal(z, 1.0))


_fam = Continuous("uniform", 0, lambda z: anp.zeros_like(z), support=_support,
                  cdf=lambda z: anp.clip(z, 0.0, 1.0), sf=lambda z: anp.clip(anp.subtract(1.0, z), 0.0, 1.0),
                  ppf=lambda q: q, isf=lambda q: anp.subtract(1.0, q))
_fam.export(globals())
