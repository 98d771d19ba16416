"""``jax.experimental.jet``: Taylor-mode propagation, :func:`jet` (``autodiff.jet``).

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.experimental.jet import jet
>>> y, (y1, y2) = jet(anp.exp, (0.0,), ((1.0, 0.0),))
>>> float(y), float(y1), float(y2)
(1.0, 1.0, 1.0)
"""
from ..transforms.jet import jet

__all__ = ["jet"]
