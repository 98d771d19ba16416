"""``jax.typing``: the annotation aliases typed JAX code imports.

``ArrayLike`` is what every ``anp`` function and transform accepts as an array (an
``ad.Array``, a numpy array or scalar, a Python number); ``DTypeLike`` what a ``dtype=``
accepts. ``from jax.typing import ArrayLike`` ports as ``from autodiff.typing import
ArrayLike``.

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.typing import ArrayLike
>>> def double(x: ArrayLike) -> ArrayLike:
...     return anp.asarray(x) * 2
>>> double(np.float64(1.5))
np.float64(3.0)
"""
from typing import Union

import numpy as np

from .core import Array

__all__ = ["ArrayLike", "DTypeLike"]

ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype]
# (the aliases are typing objects, documented here for help() and the docs site's check)
ArrayLike.__doc__ = ("What an ``anp`` function or a transform takes as an array: an "
                     "``ad.Array``, a numpy array or scalar, a Python number.")
DTypeLike.__doc__ = "What a ``dtype=`` takes: a name, a type or a ``numpy.dtype``."
