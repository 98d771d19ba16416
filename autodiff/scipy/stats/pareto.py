"""``scipy.stats.pareto``: the Pareto distribution with shape ``b``, density b/z^{b+1} on z ≥ 1.

>>> from autodiff.scipy.stats import pareto; float(pareto.sf(2.0, 1.0))
0.5
"""

import numpy as np

from ... import numpy as anp
from ._common import Continuous, safe


def _support(z, b):
    return anp.greater_equal(z, 1.0)


def _lz(z):
    return anp.log(safe(anp.greater_equal(z, 1.0), z, 1.0))


def _logcdf(z, b):
    inside = anp.greater(z, 1.0)
    zs = safe(inside, z, 2.0)            # log 0 = -inf at and below 1, with a zero gradient
    return anp.where(inside, anp.log(anp.negative(anp.expm1(anp.negative(anp.multiply(b, anp.log(zs)))))), -np.inf)


_fam = Continuous("pareto", 1, lambda z, b: anp.subtract(anp.log(b), anp.multiply(anp.add(b, 1.0), _lz(z))),
                  support=_support, shape_names=("b",), argcheck=lambda b: anp.greater(b, 0.0),
                  cdf=lambda z, b: anp.negative(anp.expm1(anp.negative(anp.multiply(b, _lz(z))))),
                  logsf=lambda z, b: anp.negative(anp.multiply(b, _lz(z))),
                  sf=lambda z, b: anp.exp(anp.negative(anp.multiply(b, _lz(z)))),
                  logcdf=lambda z, b: _logcdf(z, b),
                  ppf=lambda q, b: anp.exp(anp.divide(anp.negative(anp.log1p(anp.negative(q))), b)),
                  isf=lambda q, b: anp.exp(anp.divide(anp.negative(anp.log(q)), b)))
_fam.export(globals())
