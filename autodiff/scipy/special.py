"""``scipy.special`` functions, differentiable to any order, without new primitives.

Each function is a composition of ``autodiff.numpy`` operations (rational and series
approximations evaluated with ``where`` branches), wrapped in :class:`ad.custom_jvp`
with its exact derivative — d erf = 2/√π·e^{-x²}, d gammaln = digamma, d digamma =
polygamma(1, ·), d polygamma(n, ·) = polygamma(n+1, ·) — itself such a composition.
So ``jit``, ``vmap`` and every transform get them for free, and no derivative ever
passes through an approximation's branches.

The functions live by family: the error functions (``_error_functions``), the gamma
function and its relatives (``_gamma_functions``), Bessel and Legendre functions
(``_bessel_legendre``), hypergeometric functions (``_hypergeometric``), zeta functions
(``_zeta``), exponential, trigonometric and Owen's integrals (``_integrals``), and the
convenience and information-theory functions (``_convenience``).

Accuracy (float64, against scipy): erf/erfc/ndtr ≲ 2e-15 relative; gammaln, digamma
and polygamma ≲ 3e-14 relative away from their zeros (absolute error ≲ 3e-14 near
them); polygamma(n ≥ 2, x) is accurate for x > 0 only.

>>> import numpy as np, autodiff as ad
>>> from autodiff.scipy import special
>>> round(float(special.gammaln(5.0)), 12)            # log 4!
3.178053830348
>>> round(float(ad.grad(special.gammaln)(1.0)), 12)   # digamma(1) = -γ
-0.577215664902
"""
from ._bessel_host import *  # noqa: F401,F403
from ._bessel_legendre import *  # noqa: F401,F403
from ._convenience import *  # noqa: F401,F403
from ._error_functions import *  # noqa: F401,F403
from ._gamma_functions import *  # noqa: F401,F403
from ._gamma_functions import loggamma  # noqa: F401  (scipy's name; not in __all__, as before)
from ._hypergeometric import *  # noqa: F401,F403
from ._integrals import *  # noqa: F401,F403
from ._zeta import *  # noqa: F401,F403
from . import (_bessel_host, _bessel_legendre, _convenience, _error_functions, _gamma_functions,
               _hypergeometric, _integrals, _zeta)

__all__ = [name for m in (_error_functions, _gamma_functions, _convenience, _bessel_legendre,
                          _bessel_host, _hypergeometric, _integrals, _zeta) for name in m.__all__]
