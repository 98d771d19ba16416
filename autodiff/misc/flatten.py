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

Differences from autograd: leaves of any dtype are concatenated in their common
(numpy-promoted) dtype and cast back on ``unflatten``; an empty tree flattens to a
float64 vector of length 0.
"""
import numpy as np

from .. import numpy as anp
from ..tree_util import tree_flatten, tree_unflatten

__all__ = ["flatten", "flatten_func"]


def _is_traced(x):
    return not isinstance(x, (np.ndarray, np.generic, int, float, complex, bool))


def flatten(value):
    """``(flat_vector, unflatten)`` for the pytree ``value``."""
    leaves, tree = tree_flatten(value)
    shapes = [np.shape(l) for l in leaves]
    dtypes = [np.result_type(l) if not _is_traced(l) else l.dtype for l in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if leaves:
        flat = anp.concatenate([anp.ravel(l) for l in leaves])
    else:
        flat = np.zeros(0)
    ends = np.cumsum(sizes)

    def unflatten(vector):
        parts, start = [], 0
        for end, shape, dtype in zip(ends, shapes, dtypes):
            piece = anp.reshape(vector[start:int(end)], shape)
            if piece.dtype != dtype:
                piece = anp.asarray(piece, dtype=dtype) if _is_traced(piece) else piece.astype(dtype)
            parts.append(piece)
            start = int(end)
        return tree_unflatten(tree, parts)

    return flat, unflatten


def flatten_func(func, example):
    """``(flat_func, unflatten, flat_example)``: ``flat_func(v, *args, **kw)`` is
    ``flatten(func(unflatten(v), *args, **kw))[0]``.

    >>> import numpy as np
    >>> from autodiff.misc.flatten import flatten_func
    >>> f, unflatten, x = flatten_func(lambda p: (p[0] * 2, p[1] + 1), (np.ones(2), 1.0))
    >>> f(x)
    array([2., 2., 2.])
    """
    flat_example, unflatten = flatten(example)

    def flat_func(vector, *args, **kwargs):
        return flatten(func(unflatten(vector), *args, **kwargs))[0]
    return flat_func, unflatten, flat_example
