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


# no support check: the density is 2π-periodic in x on the whole line (scipy's and JAX's)
_fam = Continuous("vonmises", 1, _logpdf, shape_names=("kappa",),
                  argcheck=lambda kappa: anp.greater_equal(kappa, 0.0))
_fam.export(globals())
