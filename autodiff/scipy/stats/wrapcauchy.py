"""``scipy.stats.wrapcauchy``: the wrapped Cauchy distribution with shape ``c`` on [0, 2π].

>>> from autodiff.scipy.stats import wrapcauchy; round(float(wrapcauchy.pdf(1.0, 0.5)), 10)
0.1681930325
"""
import math


from ... import numpy as anp
from ._common import Continuous


def _logpdf(z, c):
    return anp.subtract(anp.log1p(anp.negative(anp.multiply(c, c))),
                        anp.log(anp.multiply(anp.subtract(anp.add(1.0, anp.multiply(c, c)),
                                                          anp.multiply(anp.multiply(c, 2.0), anp.cos(z))), 2 * math.pi)))


def _support(z, c):
    return anp.logical_and(anp.greater_equal(z, 0.0), anp.less_equal(z, 2 * math.pi))


_fam = Continuous("wrapcauchy", 1, _logpdf, support=_support, shape_names=("c",),
                  argcheck=lambda c: anp.logical_and(anp.greater(c, 0.0), anp.less(c, 1.0)))
_fam.export(globals())
