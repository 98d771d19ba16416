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
from ._special_base import broadcast_float, quiet_eval
from ..core import Tracer
from ..custom_derivatives import custom_jvp
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
    return quiet_eval(lambda x, y: anp.multiply(x, anp.log(anp.where(bad, 1.0, y))), x, y)


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
    return quiet_eval(lambda x, y: anp.multiply(x, anp.log1p(anp.where(bad, 0.0, y))), x, y)


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
    elements where it is false out of the sum). ``b`` broadcasts against ``a``, and its
    zeros drop their terms (``logsumexp([-1000, -2], b=[1, 0])`` is -1000); a negative
    sum is nan unless ``return_sign``. For complex ``a`` the result is the principal log
    (imaginary part in (-π, π]); with ``return_sign`` a real log-magnitude and a complex
    sign ``s/|s|``.

    >>> import numpy as np
    >>> from autodiff.scipy.special import logsumexp
    >>> float(logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    """
    complex_in = np.dtype(anp.result_type(a)).kind == "c" or (
        b is not None and np.dtype(anp.result_type(b)).kind == "c")
    with np.errstate(divide="ignore", invalid="ignore"):     # log 0 = -inf: an empty sum
        if b is None and not return_sign and not complex_in:
            return anp.logsumexp(a, axis=axis, keepdims=keepdims, where=where)
        return _logsumexp_general(a, axis, b, keepdims, return_sign, where)


@npfunc(None)
def _logsumexp_general(a, axis, b, keepdims, return_sign, where):
    """logsumexp with scale factors ``b`` (broadcast against ``a``; elements with b = 0
    take no part, not even in the shift), complex input (the principal branch of the log,
    or a real log-magnitude and a complex sign with ``return_sign``) or ``return_sign``."""
    if b is not None:
        a, b = promote(a, b, to_float=True)
        a, b = anp.broadcast_arrays(a, b)
        a = anp.where(anp.not_equal(b, 0), a, -np.inf)
    else:
        (a,) = promote(a, to_float=True)
    if where is not None:
        a = anp.where(where, a, -np.inf)
    ndim = anp.ndim(a)
    axes = tuple(range(ndim)) if axis is None else tuple(
        ax % ndim for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    cplx = np.dtype(anp.result_type(a)).kind == "c"
    amax = anp.max(anp.real(a), axis=axes, keepdims=True, initial=-np.inf)
    amax = anp.stop_gradient(anp.where(anp.isfinite(amax), amax, 0.0))
    e = anp.exp(anp.subtract(a, amax))
    if b is not None:
        e = anp.multiply(e, b)
    s = anp.sum(e, axis=axes, keepdims=True)
    sgn = anp.sign(s)
    if return_sign or not cplx:
        s = anp.abs(s)
    out = anp.add(anp.log(s), amax)
    if not keepdims:
        out, sgn = anp.squeeze(out, axis=axes), anp.squeeze(sgn, axis=axes)
    if return_sign:
        return out, sgn
    if b is not None and not cplx:
        out = anp.where(anp.less(sgn, 0), np.nan, out)        # a negative sum (scipy: nan)
    return out


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

def _entr(x):
    xs = anp.where(anp.greater(x, 0.0), x, 1.0)
    out = anp.negative(anp.multiply(x, anp.log(xs)))
    out = anp.where(anp.equal(x, 0.0), 0.0, out)
    return anp.where(anp.less(x, 0.0), -np.inf, anp.where(anp.isnan(x), np.nan, out))


_entr_cj = custom_jvp(_entr)


@_entr_cj.defjvp
def _entr_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # -(log x + 1): +inf at x = 0 (JAX's too), 0 below (the constant -inf)
    xs = anp.where(anp.greater(x, 0.0), x, 1.0)
    d = anp.negative(anp.add(anp.log(xs), 1.0))
    d = anp.where(anp.equal(x, 0.0), np.inf, anp.where(anp.less(x, 0.0), 0.0, d))
    return _entr_cj(x), anp.multiply(t, d)


@npfunc(None)
def entr(x):
    """``-x log x`` (0 at 0, -inf for x < 0); its derivative ``-(log x + 1)`` is +inf at 0.

    >>> import autodiff as ad
    >>> from autodiff.scipy.special import entr
    >>> float(entr(1.0)), float(ad.grad(entr)(0.0))
    (-0.0, inf)
    """
    x = real_float(x)
    return quiet_eval(_entr_cj if isinstance(x, Tracer) else _entr, x)


@npfunc(None)
def rel_entr(x, y):
    """``x log(x/y)`` for x, y > 0; 0 at x = 0, y ≥ 0; inf otherwise."""
    return quiet_eval(_rel_entr, *broadcast_float(x, y))


def _rel_entr(x, y):
    ok = anp.logical_and(anp.greater(x, 0.0), anp.greater(y, 0.0))
    xs, ys = anp.where(ok, x, 1.0), anp.where(ok, y, 1.0)
    out = anp.where(ok, anp.multiply(xs, anp.log(anp.divide(xs, ys))), np.inf)
    out = anp.where(anp.logical_and(anp.equal(x, 0.0), anp.greater_equal(y, 0.0)), 0.0, out)
    return anp.where(anp.logical_or(anp.isnan(x), anp.isnan(y)), np.nan, out)


@npfunc(None)
def kl_div(x, y):
    """``x log(x/y) - x + y`` for x, y > 0; ``y`` at x = 0, y ≥ 0; inf otherwise."""
    return quiet_eval(_kl_div, *broadcast_float(x, y))


def _kl_div(x, y):
    ok = anp.logical_and(anp.greater(x, 0.0), anp.greater(y, 0.0))
    xs, ys = anp.where(ok, x, 1.0), anp.where(ok, y, 1.0)
    # (x or y infinite: inf - inf, nan, as scipy)
    inner = anp.add(anp.subtract(anp.multiply(xs, anp.log(anp.divide(xs, ys))), xs), ys)
    out = anp.where(ok, inner, np.inf)
    out = anp.where(anp.logical_and(anp.equal(x, 0.0), anp.greater_equal(y, 0.0)), y, out)
    return anp.where(anp.logical_or(anp.isnan(x), anp.isnan(y)), np.nan, out)


def _expm1_over(l, lx):
    """``(e^{λL} - 1)/λ`` with its series ``L(1 + t/2 + t²/6 + t³/24 + t⁴/120)``, t = λL,
    where |t| is small: exact at λ = 0 and smooth in λ there (every derivative right)."""
    t = anp.multiply(l, lx)
    small = anp.less(anp.abs(t), 1e-3)
    ts = anp.where(small, t, 0.0)
    series = anp.multiply(lx, anp.add(1.0, anp.multiply(ts, anp.add(0.5, anp.multiply(ts, anp.add(
        1.0 / 6, anp.multiply(ts, anp.add(1.0 / 24, anp.multiply(ts, 1.0 / 120)))))))))
    ls = anp.where(small, 1.0, l)
    out = anp.where(small, series, anp.divide(anp.expm1(anp.where(small, 0.0, t)), ls))
    # λ = 0 at x = 0 or inf: the log itself, ∓inf (λ·L would be 0·inf)
    return anp.where(anp.logical_and(anp.equal(l, 0.0), anp.isinf(lx)), lx, out)


@npfunc(None)
def boxcox(x, lmbda):
    """Box–Cox transform ``(x^λ - 1)/λ`` (``log x`` at λ = 0), via expm1."""
    x, l = broadcast_float(x, lmbda)
    return quiet_eval(lambda x, l: _expm1_over(l, anp.log(x)), x, l)


@npfunc(None)
def boxcox1p(x, lmbda):
    """Box–Cox of ``1 + x``: ``((1+x)^λ - 1)/λ`` (``log1p x`` at λ = 0)."""
    x, l = broadcast_float(x, lmbda)
    return quiet_eval(lambda x, l: _expm1_over(l, anp.log1p(x)), x, l)


@npfunc(None)
def log_expit(x):
    """``log(1/(1 + e^{-x})) = -softplus(-x)``, stable both ways."""
    return log_sigmoid(x)


__all__ = ["xlogy", "xlog1py", "expit", "logit", "log_expit", "logsumexp", "softmax",
           "log_softmax", "boxcox", "boxcox1p", "entr", "rel_entr", "kl_div"]
