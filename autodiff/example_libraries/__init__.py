"""JAX's ``jax.example_libraries``: ``optimizers`` and ``stax``, for ports that only
change the import.

>>> from autodiff.example_libraries import optimizers, stax
>>> opt_init, opt_update, get_params = optimizers.adam(1e-3)
>>> init_fun, apply_fun = stax.serial(stax.Dense(2), stax.Tanh)
"""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
