"""dtypes beyond numpy's: ``float0``, the dtype of the gradient of an integer input.

``ad.grad(f, allow_int=True)`` (and ``value_and_grad``, ``jacrev``) returns, for each
integer or bool input, a zero "gradient" of dtype :data:`float0`, as JAX does: a
numpy array of the input's shape whose dtype is ``numpy.dtype([('float0', 'V')])``
(zero bytes per element). Arithmetic on it raises in numpy, so an integer leaf can
not be updated by mistake (``p - lr * g`` fails): filter such leaves out, e.g.
``tree_map(lambda p, g: p if g.dtype == float0 else p - lr * g, params, grads)``.

A float0 array is carried through ``jit`` and the pytree functions as a constant of
the tree's structure (a node with no leaves: ``tree_leaves`` skips it, where JAX
counts it as a leaf), so the same call gives the same result in every mode. One
difference from JAX follows: under ``vmap`` a float0 gradient keeps the per-example shape
(JAX adds the batch axis); it holds no data either way.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> g = ad.grad(lambda x, n: anp.sum(x ** 2) * n, argnums=(0, 1), allow_int=True)
>>> dx, dn = g(np.array([1.0, 2.0]), 3)
>>> dx, dn.dtype == ad.dtypes.float0, dn.shape
(array([ 6., 12.]), True, ())
"""
import numpy as np

from .tree_util import register_pytree_node

__all__ = ["float0", "Float0Array", "float0_zeros", "is_float0"]

#: JAX's float0: a structured dtype with one zero-width void field
float0 = np.dtype([("float0", np.void, 0)])


class Float0Array(np.ndarray):
    """A numpy array of dtype :data:`float0` (what ``allow_int`` gradients are).

    >>> import autodiff as ad
    >>> z = ad.dtypes.float0_zeros((2,))
    >>> z.shape, z.dtype == ad.dtypes.float0, z.nbytes
    ((2,), True, 0)
    """

    def __array_finalize__(self, obj):
        pass

    def __repr__(self):
        return repr(self.view(np.ndarray))          # prints as numpy's own float0 array


def float0_zeros(shape):
    """The ``float0`` zero gradient of an integer array of ``shape``.

    >>> import autodiff as ad
    >>> ad.dtypes.float0_zeros(()).shape
    ()
    """
    return np.zeros(tuple(shape), float0).view(Float0Array)


def is_float0(x):
    """Whether ``x`` is a ``float0`` array (the gradient of an integer input).

    >>> import numpy as np, autodiff as ad
    >>> ad.dtypes.is_float0(ad.dtypes.float0_zeros((3,))), ad.dtypes.is_float0(np.zeros(3))
    (True, False)
    """
    return getattr(x, "dtype", None) == float0


# a node with no children whose structure is its shape: jit, vmap and tree_map pass it
# through as part of the tree's definition (the IR has no zero-byte dtype to carry it)
register_pytree_node(Float0Array, lambda z: ((), tuple(z.shape)),
                     lambda shape, _: float0_zeros(shape))
