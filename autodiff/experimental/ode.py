"""``jax.experimental.ode``: :func:`odeint` (adaptive Dormand–Prince, adjoint gradients).

It is :func:`autodiff.scipy.integrate.odeint`, with JAX's signature
``odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf)`` and
``func(y, t, *args)``.

>>> import numpy as np, autodiff as ad
>>> from autodiff.experimental.ode import odeint
>>> ys = odeint(lambda y, t, k: -k * y, np.array([1.0]), np.array([0.0, 1.0]), 2.0)
>>> bool(np.allclose(ys[-1], np.exp(-2.0), rtol=1e-6))
True
"""
from ..scipy.integrate import odeint

__all__ = ["odeint"]
