"""``scipy.stats.truncnorm``: the normal distribution truncated to [a, b] (in standard units).

>>> from autodiff.scipy.stats import truncnorm; round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 12)
0.5
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import Continuous, LOG_2PI


def _log_mass(a, b):
    """log(Φ(b) - Φ(a)), from the tail where it does not cancel."""
    up = anp.greater(a, 0.0)             # both in the upper tail: Φ(-a) - Φ(-b)
    la, lb = sp.log_ndtr(anp.where(up, anp.negative(b), a)), sp.log_ndtr(anp.where(up, anp.negative(a), b))
    return anp.add(lb, anp.log(anp.negative(anp.expm1(anp.subtract(la, lb)))))


def _support(z, a, b):
    return anp.logical_and(anp.greater_equal(z, a), anp.less_equal(z, b))


def _logpdf(z, a, b):
    return anp.subtract(anp.subtract(anp.multiply(anp.multiply(z, z), -0.5), 0.5 * LOG_2PI), _log_mass(a, b))


def _logcdf(z, a, b):
    zc = anp.clip(z, a, b)
    out = anp.subtract(_log_mass(a, zc), _log_mass(a, b))
    return anp.where(anp.less_equal(z, a), -np.inf, anp.where(anp.greater_equal(z, b), 0.0, out))


def _logsf(z, a, b):
    zc = anp.clip(z, a, b)
    out = anp.subtract(_log_mass(zc, b), _log_mass(a, b))
    return anp.where(anp.less_equal(z, a), 0.0, anp.where(anp.greater_equal(z, b), -np.inf, out))


_fam = Continuous("truncnorm", 2, _logpdf, support=_support, shape_names=("a", "b"),
                  logcdf=_logcdf, logsf=_logsf,
                  argcheck=lambda a, b: anp.less(a, b))
_fam.export(globals())
