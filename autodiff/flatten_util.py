"""``ravel_pytree``: a pytree of arrays as one flat vector, and the function back (JAX's
``jax.flatten_util``). It is what ``scipy.optimize`` over structured parameters needs.
autograd's spelling, ``flatten`` and ``flatten_func`` (``autodiff.misc.flatten``), lives
here too.

>>> import numpy as np
>>> from autodiff.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.array([5.0])})
>>> flat                                  # leaves in tree_flatten order: dict keys sorted
array([5., 1., 1., 1., 1.])
>>> unravel(flat * 2)["w"]
array([[2., 2.],
       [2., 2.]])

Leaves of different dtypes are promoted to their common dtype in the flat vector
(``numpy.result_type``), and ``unravel`` casts each leaf back to its own dtype, as in
JAX. Both directions are ``autodiff.numpy`` operations, so they work on traced values:
inside ``grad``, ``vmap`` and ``jit``, and ``unravel`` is linear, so its transpose is
``ravel``.
"""
import itertools
import warnings

import numpy as np

from . import numpy as anp
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves raveled and concatenated; ``unravel(v)`` rebuilds
    a tree of the same structure, shapes and dtypes from a vector like ``flat``.

    >>> import numpy as np
    >>> flat, unravel = ravel_pytree((np.arange(3), 2.5))
    >>> flat.dtype, unravel(flat)[0].dtype
    (dtype('float64'), dtype('int64'))
    """
    leaves, treedef = tree_flatten(pytree)
    shapes = [tuple(anp.shape(l)) for l in leaves]
    dtypes = [np.dtype(getattr(l, "dtype", None) or np.asarray(l).dtype) for l in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    common = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    if leaves:
        flat = anp.concatenate([anp.ravel(anp.astype(anp.asarray(l), common)) for l in leaves])
    else:
        flat = np.zeros((0,), common)
    offsets = list(itertools.accumulate([0] + sizes))

    def unravel(vec):
        n = int(anp.shape(vec)[0]) if anp.ndim(vec) == 1 else -1
        if n != offsets[-1]:
            raise ValueError(f"unravel: expected a vector of length {offsets[-1]}, got shape "
                             f"{tuple(anp.shape(vec))}")
        with warnings.catch_warnings():
            # a real leaf of a complex vector takes its real part back (it was real when
            # raveled): numpy's complex-to-real ComplexWarning is noise here (JAX's too)
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            parts = [anp.astype(anp.reshape(vec[int(a):int(b)], s), dt)
                     for a, b, s, dt in zip(offsets[:-1], offsets[1:], shapes, dtypes)]
        return tree_unflatten(treedef, parts)

    return flat, unravel


# ----------------------------------------------------------------------------
# autograd's misc.flatten
# ----------------------------------------------------------------------------

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
    ends = list(itertools.accumulate(sizes))

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
