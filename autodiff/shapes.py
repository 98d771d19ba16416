"""Shapes without computing: ``ShapeDtypeStruct`` and ``eval_shape`` (as in JAX).

``eval_shape(f, *args)`` traces ``f`` abstractly, with avals only: nothing is computed
and no array of the inputs' sizes is allocated, so it costs the same for a 10⁹-element
input as for a scalar. Arguments may be arrays, scalars or ``ShapeDtypeStruct`` s
(anything with ``.shape`` and ``.dtype``), in any pytree.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> x = ad.ShapeDtypeStruct((1000, 1000000), np.float32)
>>> ad.eval_shape(lambda x: {"s": anp.sum(x, axis=0), "t": x.T}, x)
{'s': ShapeDtypeStruct(shape=(1000000,), dtype=float32), 't': ShapeDtypeStruct(shape=(1000000, 1000), dtype=float32)}
"""
import numpy as np

from .core import ShapedArray, get_aval, trace_flat
from .tree_util import tree_flatten, tree_unflatten
from .api_util import as_array

__all__ = ["ShapeDtypeStruct", "eval_shape", "typeof"]


class ShapeDtypeStruct:
    """An array's shape and dtype, no data: an argument for :func:`eval_shape` and
    ``jit(...).lower`` and what ``eval_shape`` returns."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, sharding=None, weak_type=False):
        if dtype is None:       # np.dtype(None) would silently be float64
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        shape = tuple(shape)
        if any(s is None for s in shape):
            raise ValueError(f"ShapeDtypeStruct: `shape` {shape} cannot have None (every "
                             f"dimension needs a size).")
        self.shape = tuple(int(s) for s in shape)
        d = getattr(dtype, "dtype", None)          # anp.float32 and friends wrap a dtype
        self.dtype = d if isinstance(d, np.dtype) else np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = weak_type

    @classmethod
    def like(cls, x):
        """The shape and dtype of ``x`` (an array, a number, a traced value or anything with
        ``.shape`` and ``.dtype``), as JAX's ``ShapeDtypeStruct.like``: the usual
        ``result_shape_dtypes`` of a callback that returns an array like its input.

        >>> import numpy as np, autodiff as ad
        >>> ad.ShapeDtypeStruct.like(np.ones((2, 3), np.float32))
        ShapeDtypeStruct(shape=(2, 3), dtype=float32)
        """
        a = _aval(x)
        return cls(a.shape, a.dtype, sharding=getattr(x, "sharding", None))

    ndim = property(lambda self: len(self.shape), doc="Number of dimensions.")
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)),
                    doc="Number of elements.")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def _aval(x):
    if isinstance(x, ShapedArray):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray) \
            and not isinstance(x, np.generic) and not hasattr(x, "aval"):
        return ShapedArray(tuple(x.shape), np.dtype(x.dtype))
    return get_aval(x).strip_weak()      # as make_jaxpr and jit see it


def typeof(x):
    """The abstract value (shape and dtype) of ``x``, as ``jax.typeof``: a
    :class:`~autodiff.ShapedArray` for arrays, numbers and traced values alike.

    >>> import numpy as np, autodiff as ad
    >>> ad.typeof(np.ones(3, np.float32))
    ShapedArray(f32[3])
    >>> _ = ad.jit(lambda x: print(ad.typeof(x)) or x)(np.arange(2.0))
    f64[2]
    """
    return _aval(x)


def eval_shape(fun, *args, **kwargs):
    """The pytree of ``ShapeDtypeStruct`` s that ``fun(*args, **kwargs)`` would return.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.eval_shape(lambda a, b: a @ b, np.ones((2, 3)), ad.ShapeDtypeStruct((3, 4), np.float64))
    ShapeDtypeStruct(shape=(2, 4), dtype=float64)
    """
    flat, in_tree = tree_flatten(args)
    avals = [_aval(x) for x in flat]
    box = []

    def flat_fun(*tracers):
        out = fun(*tree_unflatten(in_tree, list(tracers)), **kwargs)
        leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return [as_array(l) for l in leaves]

    closed = trace_flat(flat_fun, avals, None, name="eval_shape")
    return tree_unflatten(box[0], [ShapeDtypeStruct(a.shape, a.dtype) for a in closed.out_avals])
