"""autograd's ``misc.flatten``: a pytree as one flat vector, and back.

``flatten(value) -> (vector, unflatten)`` concatenates the raveled leaves of any
pytree (tuples, lists, dicts, namedtuples, registered classes); ``unflatten(vector)``
rebuilds the tree, each leaf with its own shape and dtype. Both directions are made
of ``autodiff.numpy`` operations, so they can sit inside ``grad``, ``vmap`` or ``jit``.
``flatten_func(func, example)`` turns a function of a pytree into a function of a
vector, as autograd's optimizers need.

>>> import numpy as np
>>> from autodiff.misc.flatten import flatten
>>> vec, unflatten = flatten({"w": np.ones((2, 2)), "b": (np.zeros(1), 3.0)})
>>> vec
array([0., 3., 1., 1., 1., 1.])
>>> unflatten(vec * 2)["w"]
array([[2., 2.],
       [2., 2.]])

The functions live in ``autodiff.flatten_util`` (beside JAX's ``ravel_pytree``).

Differences from autograd: leaves of any dtype are concatenated in their common
(numpy-promoted) dtype and cast back on ``unflatten``; an empty tree flattens to a
float64 vector of length 0.
"""
from ..flatten_util import flatten, flatten_func

__all__ = ["flatten", "flatten_func"]
