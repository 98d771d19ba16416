"""``scipy.stats.vonmises``: the von Mises distribution with concentration ``kappa``, density e^{κ cos z}/(2π I0(κ)).

>>> from autodiff.scipy.stats import vonmises; round(float(vonmises.pdf(0.0, 0.0)), 12)
0.159154943092
"""
import math


from ... import numpy as anp
from .. import special as sp
from ._common import Continuous


def _logpdf(z, kappa):
    # κ(cos z - 1) - log(2π·i0e(κ)): no overflow for large κ
    return anp.subtract(anp.multiply(kappa, anp.subtract(anp.cos(z), 1.0)),
                        anp.log(anp.multiply(sp.i0e(kappa), 2 * math.pi)))


def _support(z, kappa):
    return anp.logical_and(anp.greater_equal(z, -math.pi), anp.less_equal(z, math.pi))


_fam = Continuous("vonmises", 1, _logpdf, support=_support, shape_names=("kappa",))
_fam.export(globals())
