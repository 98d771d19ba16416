"""``scipy.stats`` distributions as namespaces of differentiable functions.

>>> import numpy as np
>>> from autodiff.scipy.stats import norm
>>> float(norm.cdf(0.0))
0.5
"""
import types

import numpy as np

from .. import numpy as anp
from ..numpy._base import npfunc, asarray, promote
from . import special

_LOG_SQRT_2PI = 0.5 * float(np.log(2 * np.pi))   # a Python float: weak, keeps float32


def _standardize(x, loc, scale):
    x, loc, scale = promote(asarray(x), loc, scale, to_float=True)
    return anp.divide(anp.subtract(x, loc), scale), scale


@npfunc(None)
def _norm_logpdf(x, loc=0.0, scale=1.0):
    z, scale = _standardize(x, loc, scale)
    return anp.subtract(anp.multiply(anp.multiply(z, z), -0.5), anp.add(anp.log(scale), _LOG_SQRT_2PI))


@npfunc(None)
def _norm_pdf(x, loc=0.0, scale=1.0):
    return anp.exp(_norm_logpdf(x, loc, scale))


@npfunc(None)
def _norm_cdf(x, loc=0.0, scale=1.0):
    z, _ = _standardize(x, loc, scale)
    return special.ndtr(z)


@npfunc(None)
def _norm_logcdf(x, loc=0.0, scale=1.0):
    z, _ = _standardize(x, loc, scale)
    return special.log_ndtr(z)


@npfunc(None)
def _norm_sf(x, loc=0.0, scale=1.0):
    z, _ = _standardize(x, loc, scale)
    return special.ndtr(anp.negative(z))


@npfunc(None)
def _norm_logsf(x, loc=0.0, scale=1.0):
    z, _ = _standardize(x, loc, scale)
    return special.log_ndtr(anp.negative(z))


_norm_logpdf.__doc__ = """Log density of N(loc, scale²): ``-z²/2 - log(scale·√(2π))``, z = (x - loc)/scale.

>>> from autodiff.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 6)
-0.918939
"""

norm = types.SimpleNamespace(logpdf=_norm_logpdf, pdf=_norm_pdf, cdf=_norm_cdf,
                             logcdf=_norm_logcdf, sf=_norm_sf, logsf=_norm_logsf)
norm.__doc__ = "The normal distribution (scipy.stats.norm's functional interface)."
