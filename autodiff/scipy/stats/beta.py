"""``scipy.stats.beta``: the beta distribution with shapes ``a``, ``b`` on [0, 1].

>>> from autodiff.scipy.stats import beta; round(float(beta.cdf(0.5, 2.0, 3.0)), 12)
0.6875
"""
from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, safe


def _support(z, a, b):
    return anp.logical_and(anp.greater_equal(z, 0.0), anp.less_equal(z, 1.0))


def _logpdf(z, a, b):
    inside = anp.logical_and(anp.greater(z, 0.0), anp.less(z, 1.0))
    zs = safe(inside, z, 0.5)
    return anp.subtract(anp.add(sp.xlogy(anp.subtract(a, 1.0), zs), sp.xlog1py(anp.subtract(b, 1.0), anp.negative(zs))),
                        sp.betaln(a, b))


def _cdf(z, a, b):
    return sp.betainc(a, b, anp.clip(z, 0.0, 1.0))


def _sf(z, a, b):
    return sp.betainc(b, a, anp.clip(anp.subtract(1.0, z), 0.0, 1.0))


_fam = Continuous("beta", 2, _logpdf, support=_support, shape_names=("a", "b"), cdf=_cdf, sf=_sf,
                  argcheck=lambda a, b: anp.logical_and(anp.greater(a, 0.0), anp.greater(b, 0.0)))
_fam.export(globals())
