"""``jax.scipy.sparse``: iterative solvers for linear systems given as functions
(:mod:`autodiff.scipy.sparse.linalg`: ``cg``, ``bicgstab``).

>>> import numpy as np
>>> from autodiff.scipy.sparse.linalg import cg
>>> x, info = cg(lambda v: np.array([[4.0, 1.0], [1.0, 3.0]]) @ v, np.array([1.0, 2.0]))
>>> x.round(6)
array([0.090909, 0.636364])
"""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
