"""``scipy.stats.wishart``: the Wishart density of positive-definite ``x`` (p, p) — or a
stack (p, p, N), points along the last axis as scipy — with ``df`` and ``scale``.

>>> import numpy as np
>>> from autodiff.scipy.stats import wishart
>>> round(float(wishart.logpdf(np.eye(2), 3.0, np.eye(2))), 10)
-3.531024247
"""
import math


from ... import numpy as anp
from ...numpy._base import npfunc, asarray, promote
from .. import special as sp
from ._common import quiet


@npfunc(None)
@quiet
def logpdf(x, df, scale):
    """``(ν-p-1)/2·log|X| - tr(S⁻¹X)/2 - νp/2·log 2 - ν/2·log|S| - log Γ_p(ν/2)``."""
    x, df, scale = promote(asarray(x), df, asarray(scale), to_float=True)
    scale = anp.atleast_2d(scale)
    p = anp.shape(scale)[-1]
    stacked = anp.ndim(x) == 3
    xs = anp.moveaxis(x, -1, 0) if stacked else anp.atleast_2d(x)
    _, ldx = anp.linalg.slogdet(xs)
    _, lds = anp.linalg.slogdet(scale)
    tr = anp.trace(anp.linalg.solve(scale, xs) if not stacked else
                   anp.linalg.solve(anp.broadcast_to(scale, anp.shape(xs)), xs), axis1=-2, axis2=-1)
    out = anp.subtract(anp.subtract(anp.multiply(ldx, anp.multiply(anp.subtract(df, p + 1.0), 0.5)),
                                    anp.multiply(tr, 0.5)),
                       anp.add(anp.add(anp.multiply(df, p * 0.5 * math.log(2.0)), anp.multiply(lds, anp.multiply(df, 0.5))),
                               sp.multigammaln(anp.multiply(df, 0.5), p)))
    return out


@npfunc(None)
def pdf(x, df, scale):
    """``exp(logpdf(x, df, scale))``."""
    return anp.exp(logpdf(x, df, scale))


__all__ = ["logpdf", "pdf"]
