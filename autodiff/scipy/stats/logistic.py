"""``scipy.stats.logistic``: the logistic distribution, cdf 1/(1 + e^{-z}).

>>> from autodiff.scipy.stats import logistic; float(logistic.cdf(0.0))
0.5
"""
from ... import numpy as anp
from ...numpy._special_functions import softplus
from .. import special as sp
from ._common import Continuous


def _logpdf(z):
    return anp.subtract(anp.negative(z), anp.multiply(softplus(anp.negative(z)), 2.0))


_fam = Continuous("logistic", 0, _logpdf, cdf=sp.expit, sf=lambda z: sp.expit(anp.negative(z)),
                  logcdf=sp.log_expit, logsf=lambda z: sp.log_expit(anp.negative(z)),
                  ppf=sp.logit, isf=lambda q: anp.negative(sp.logit(q)))
_fam.export(globals())
