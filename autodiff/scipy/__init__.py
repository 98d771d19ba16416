"""``scipy``-compatible functions for concrete and traced values, differentiable.

Only the parts scientific scripts reach for most: ``special`` (erf, gammaln, digamma,
logsumexp, ...), ``stats.norm`` and ``linalg`` (Cholesky solves, triangular solves).
Everything is a composition of ``autodiff.numpy`` operations, so ``jit``, ``vmap`` and
derivatives of any order work; scipy itself is never imported.

>>> import numpy as np, autodiff as ad
>>> from autodiff.scipy.special import erf
>>> float(ad.grad(erf)(0.0))          # 2/√π
1.1283791670955126
"""
from . import special, stats, linalg  # noqa: F401
from . import integrate, signal, optimize, ndimage  # noqa: F401
from . import fft  # noqa: F401
