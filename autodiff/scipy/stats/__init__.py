"""``scipy.stats`` distributions, one module per distribution, each with scipy's
functions (``logpdf``/``pdf``/``cdf``/``logcdf``/``sf``/``logsf``/``ppf``/``isf`` for the
continuous ones, ``logpmf``/``pmf``/``cdf``/``sf`` for the discrete ones) and scipy's
arguments: shape parameters, then ``loc`` and ``scale``. All differentiable in every
argument, jittable and vmappable; scipy itself is never imported.

>>> import numpy as np
>>> from autodiff.scipy.stats import norm, gamma
>>> float(norm.cdf(0.0))
0.5
>>> import autodiff.scipy.stats.t as t
>>> float(t.cdf(0.0, 4.0))
0.5
"""
from . import (norm, expon, laplace, logistic, cauchy, uniform, gumbel_r, gumbel_l, t, chi2, gamma,  # noqa: F401
               beta, lognorm, pareto, gennorm, truncnorm, vonmises, wrapcauchy, poisson, binom, nbinom,
               bernoulli, geom, betabinom, multinomial, dirichlet, multivariate_normal, wishart)
from ._functions import mode, rankdata, sem, gaussian_kde, ModeResult  # noqa: F401

DISTRIBUTIONS = ("norm", "expon", "laplace", "logistic", "cauchy", "uniform", "gumbel_r", "gumbel_l", "t",
                 "chi2", "gamma", "beta", "lognorm", "pareto", "gennorm", "truncnorm", "vonmises",
                 "wrapcauchy", "poisson", "binom", "nbinom", "bernoulli", "geom", "betabinom",
                 "multinomial", "dirichlet", "multivariate_normal", "wishart")
