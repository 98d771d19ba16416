"""``scipy.stats.gamma``: the gamma distribution with shape ``a``.

>>> from autodiff.scipy.stats import gamma; round(float(gamma.cdf(1.0, 1.0)), 12)
0.632120558829
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, safe


def _support(z, a):
    return anp.greater_equal(z, 0.0)


def _logpdf(z, a):
    zs = safe(anp.greater(z, 0.0), z, 1.0)
    out = anp.subtract(anp.subtract(sp.xlogy(anp.subtract(a, 1.0), zs), zs), sp.gammaln(a))
    at0 = anp.where(anp.equal(a, 1.0), 0.0,
                    anp.where(anp.less(a, 1.0), anp.full_like(a, np.inf), -np.inf))
    return anp.where(anp.equal(z, 0.0), at0, out)


_fam = Continuous("gamma", 1, _logpdf, support=_support, shape_names=("a",),
                  argcheck=lambda a: anp.greater(a, 0.0),
                  cdf=lambda z, a: sp.gammainc(a, anp.maximum(z, 0.0)),
                  sf=lambda z, a: sp.gammaincc(a, anp.maximum(z, 0.0)))
_fam.export(globals())
