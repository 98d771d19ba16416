"""``scipy.stats.chi2``: the chi-squared distribution with ``df`` degrees of freedom.

>>> from autodiff.scipy.stats import chi2; round(float(chi2.cdf(2.0, 2.0)), 12)
0.632120558829
"""
import math

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, safe


def _support(z, df):
    return anp.greater_equal(z, 0.0)


def _logpdf(z, df):
    k = anp.multiply(df, 0.5)
    zs = safe(anp.greater(z, 0.0), z, 1.0)
    out = anp.subtract(anp.subtract(anp.subtract(sp.xlogy(anp.subtract(k, 1.0), zs), anp.multiply(zs, 0.5)),
                                    anp.multiply(k, math.log(2.0))), sp.gammaln(k))
    at0 = anp.where(anp.equal(df, 2.0), -math.log(2.0),
                    anp.where(anp.less(df, 2.0), anp.full_like(df, np.inf), -np.inf))
    return anp.where(anp.equal(z, 0.0), at0, out)


_fam = Continuous("chi2", 1, _logpdf, support=_support, shape_names=("df",),
                  argcheck=lambda df: anp.greater(df, 0.0),
                  cdf=lambda z, df: sp.gammainc(anp.multiply(df, 0.5), anp.multiply(anp.maximum(z, 0.0), 0.5)),
                  sf=lambda z, df: sp.gammaincc(anp.multiply(df, 0.5), anp.multiply(anp.maximum(z, 0.0), 0.5)))
_fam.export(globals())
