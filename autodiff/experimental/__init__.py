"""``jax.experimental``'s import paths, so ported scripts run by changing their imports.

``from jax.experimental.ode import odeint`` becomes ``from autodiff.experimental.ode import
odeint`` (the solver is :func:`autodiff.scipy.integrate.odeint`), and
``from jax.experimental.jet import jet`` becomes ``from autodiff.experimental.jet import
jet`` (:func:`autodiff.jet`); ``jax.experimental.io_callback`` is
:func:`autodiff.io_callback`.

>>> from autodiff.experimental import ode, jet
>>> ode.odeint.__module__, jet.jet.__name__
('autodiff.scipy.integrate', 'jet')
"""
from . import jet, ode  # noqa: F401
from ..callback import io_callback  # noqa: F401

__all__ = ["jet", "ode", "io_callback"]
