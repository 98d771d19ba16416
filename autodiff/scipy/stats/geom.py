"""``scipy.stats.geom``: the geometric distribution: trials up to the first success, k ≥ 1.

>>> from autodiff.scipy.stats import geom; float(geom.pmf(2, 0.5))
0.25
"""

import numpy as np

from ... import numpy as anp
from .. import special as sp
from ._common import discrete, is_int, safe


def _logpmf(k, p):
    ok = anp.logical_and(is_int(k), anp.greater_equal(k, 1.0))
    ks = safe(ok, k, 1.0)
    out = anp.add(sp.xlog1py(anp.subtract(ks, 1.0), anp.negative(p)), anp.log(p))
    return anp.where(ok, out, -np.inf)


def _logsf(k, p):
    fk = anp.maximum(anp.floor(k), 0.0)
    return sp.xlog1py(fk, anp.negative(p))



def _ok(p):
    """scipy's valid parameters (0 < p ≤ 1); nan elsewhere."""
    return anp.logical_and(anp.greater(p, 0.0), anp.less_equal(p, 1.0))


logpmf = discrete("geom", "logpmf", _logpmf, ("p",), _ok)
pmf = discrete("geom", "pmf", lambda k, p: anp.exp(_logpmf(k, p)), ("p",), _ok)
sf = discrete("geom", "sf", lambda k, p: anp.exp(_logsf(k, p)), ("p",), _ok)
logsf = discrete("geom", "logsf", _logsf, ("p",), _ok)
cdf = discrete("geom", "cdf", lambda k, p: anp.negative(anp.expm1(_logsf(k, p))), ("p",), _ok)
__all__ = ["logpmf", "pmf", "cdf", "sf", "logsf"]
