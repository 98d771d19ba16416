"""Convenience functions and information theory: ``xlogy``, ``xlog1py``, the logistic
function ``expit``, its inverse ``logit`` and ``log_expit``, ``logsumexp``, ``softmax``,
``log_softmax``, the Box–Cox transforms and the entropies ``entr``, ``rel_entr``, ``kl_div``.

>>> from autodiff.scipy.special import xlogy, expit
>>> float(xlogy(0.0, 0.0)), float(expit(0.0))
(0.0, 0.5)
"""

import numpy as np

from .. import numpy as anp
from ..numpy._base import npfunc, asarray, promote
from ..numpy._special_functions import real_float
from ._special_base import broadcast_float
from ..numpy._special_functions import sigmoid, log_sigmoid


# ----------------------------------------------------------------------------
# xlogy, xlog1py, expit, logit, logsumexp, softmax
# ----------------------------------------------------------------------------

@npfunc(None)
def xlogy(x, y):
    """``x·log(y)``, 0 where x = 0 (for any y but nan). d/dx = log y, d/dy = x/y.

    >>> from autodiff.scipy.special import xlogy
    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    x, y = promote(x, y, to_float=True)
    # where x = 0 a y without a finite log is replaced by 1: the product is then exactly 0
    # and both partial derivatives stay finite (no 0·∞ through the where)
    bad = anp.logical_and(anp.equal(x, 0.0),
                          anp.logical_or(anp.less_equal(y, 0.0), anp.equal(y, np.inf)))
    return anp.multiply(x, anp.log(anp.where(bad, 1.0, y)))


@npfunc(None)
def xlog1py(x, y):
    """``x·log1p(y)``, 0 where x = 0 (for any y but nan).

    >>> from autodiff.scipy.special import xlog1py
    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    x, y = promote(x, y, to_float=True)
    bad = anp.logical_and(anp.equal(x, 0.0),
                          anp.logical_or(anp.less_equal(y, -1.0), anp.equal(y, np.inf)))
    return anp.multiply(x, anp.log1p(anp.where(bad, 0.0, y)))


def expit(x):
    """Logistic sigmoid ``1/(1 + e^{-x})``, stable for large |x|.

    >>> from autodiff.scipy.special import expit
    >>> float(expit(0.0))
    0.5
    """
    return sigmoid(x)


@npfunc(None)
def logit(p):
    """``log(p/(1-p))``, the inverse of :func:`expit`.

    >>> from autodiff.scipy.special import logit
    >>> float(logit(0.5))
    0.0
    """
    p = real_float(p)
    return anp.subtract(anp.log(p), anp.log1p(anp.negative(p)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log Σ b·e^a`` computed stably (scipy's signature; JAX's ``where=`` leaves the
    elements where it is false out of the sum).

    >>> import numpy as np
    >>> from autodiff.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    return anp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                         where=where)


def softmax(x, axis=None):
    """``e^x / Σ e^x`` over ``axis`` (scipy's default ``axis=None``: all elements).

    >>> import numpy as np
    >>> from autodiff.scipy.special import softmax
    >>> softmax(np.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    if axis is None:
        x = asarray(x)
        return anp.reshape(anp.softmax(anp.ravel(x), axis=0), anp.shape(x))
    return anp.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (scipy's default ``axis=None``).

    >>> import numpy as np
    >>> from autodiff.scipy.special import log_softmax
    >>> log_softmax(np.array([0.0, 0.0]))
    array([-0.69314718, -0.69314718])
    """
    if axis is None:
        x = asarray(x)
        return anp.reshape(anp.log_softmax(anp.ravel(x), axis=0), anp.shape(x))
    return anp.log_softmax(x, axis=axis)


# ----------------------------------------------------------------------------
# entropies, combinatorics, gamma relatives
# ----------------------------------------------------------------------------

@npfunc(None)
def entr(x):
    """``-x log x`` (0 at 0, -inf for x < 0)."""
    x = real_float(x)
    xs = anp.where(anp.greater(x, 0.0), x, 1.0)
    out = anp.negative(anp.multiply(x, anp.log(xs)))
    out = anp.where(anp.equal(x, 0.0), 0.0, out)
    return anp.where(anp.less(x, 0.0), -np.inf, anp.where(anp.isnan(x), np.nan, out))


@npfunc(None)
def rel_entr(x, y):
    """``x log(x/y)`` for x, y > 0; 0 at x = 0, y ≥ 0; inf otherwise."""
    x, y = broadcast_float(x, y)
    ok = anp.logical_and(anp.greater(x, 0.0), anp.greater(y, 0.0))
    xs, ys = anp.where(ok, x, 1.0), anp.where(ok, y, 1.0)
    out = anp.where(ok, anp.multiply(xs, anp.log(anp.divide(xs, ys))), np.inf)
    out = anp.where(anp.logical_and(anp.equal(x, 0.0), anp.greater_equal(y, 0.0)), 0.0, out)
    return anp.where(anp.logical_or(anp.isnan(x), anp.isnan(y)), np.nan, out)


@npfunc(None)
def kl_div(x, y):
    """``x log(x/y) - x + y`` for x, y > 0; ``y`` at x = 0, y ≥ 0; inf otherwise."""
    x, y = broadcast_float(x, y)
    r = rel_entr(x, y)
    return anp.where(anp.isinf(r), r, anp.add(anp.subtract(r, x), y))


def _expm1_over(l, lx):
    """``(e^{λL} - 1)/λ`` with its series ``L(1 + t/2 + t²/6 + t³/24 + t⁴/120)``, t = λL,
    where |t| is small: exact at λ = 0 and smooth in λ there (every derivative right)."""
    t = anp.multiply(l, lx)
    small = anp.less(anp.abs(t), 1e-3)
    ts = anp.where(small, t, 0.0)
    series = anp.multiply(lx, anp.add(1.0, anp.multiply(ts, anp.add(0.5, anp.multiply(ts, anp.add(
        1.0 / 6, anp.multiply(ts, anp.add(1.0 / 24, anp.multiply(ts, 1.0 / 120)))))))))
    ls = anp.where(small, 1.0, l)
    return anp.where(small, series, anp.divide(anp.expm1(anp.where(small, 0.0, t)), ls))


@npfunc(None)
def boxcox(x, lmbda):
    """Box–Cox transform ``(x^λ - 1)/λ`` (``log x`` at λ = 0), via expm1."""
    x, l = broadcast_float(x, lmbda)
    return _expm1_over(l, anp.log(x))


@npfunc(None)
def boxcox1p(x, lmbda):
    """Box–Cox of ``1 + x``: ``((1+x)^λ - 1)/λ`` (``log1p x`` at λ = 0)."""
    x, l = broadcast_float(x, lmbda)
    return _expm1_over(l, anp.log1p(x))


@npfunc(None)
def log_expit(x):
    """``log(1/(1 + e^{-x})) = -softplus(-x)``, stable both ways."""
    return log_sigmoid(x)


__all__ = ["xlogy", "xlog1py", "expit", "logit", "log_expit", "logsumexp", "softmax",
           "log_softmax", "boxcox", "boxcox1p", "entr", "rel_entr", "kl_div"]
