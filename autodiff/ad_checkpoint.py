"""``jax.ad_checkpoint``'s import path: ``from jax.ad_checkpoint import checkpoint_name,
print_saved_residuals`` becomes ``from autodiff.ad_checkpoint import ...`` (the functions
are :mod:`autodiff.checkpoint`'s).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.ad_checkpoint import checkpoint, checkpoint_name
>>> f = checkpoint(lambda x: anp.sum(anp.sin(checkpoint_name(anp.sin(x), "h"))),
...                policy=ad.checkpoint_policies.save_any_names_but_these("g"))
>>> round(float(ad.grad(f)(0.5)), 12) == round(float(np.cos(np.sin(0.5)) * np.cos(0.5)), 12)
True
"""
from .checkpoint import (checkpoint, remat, checkpoint_name, checkpoint_policies,  # noqa: F401
                         print_saved_residuals, saved_residuals)

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "saved_residuals"]
