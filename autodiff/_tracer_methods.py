"""Array behaviour of tracers: operators, indexing, methods, and numpy's dispatch protocols.

``np.sin(tracer)`` and ``np.sum(tracer)`` work too: ``__array_ufunc__`` and
``__array_function__`` route numpy calls to the ``autodiff.numpy`` function of
the same name.
"""
import numpy as np

from ..core import Tracer
from ..errors import UnsupportedError
from ..core import user_source


def install():
    from .. import numpy as anp
    from ._indexing import getitem, _AtIndexer

    def swap(f):
        return lambda self, other: f(other, self)

    ops = {
        "__add__": anp.add, "__sub__": anp.subtract, "__mul__": anp.multiply,
        "__truediv__": anp.divide, "__floordiv__": anp.floor_divide, "__mod__": anp.mod,
        "__pow__": anp.power, "__matmul__": anp.matmul,
        "__lt__": anp.less, "__le__": anp.less_equal, "__gt__": anp.greater,
        "__ge__": anp.greater_equal, "__eq__": anp.equal, "__ne__": anp.not_equal,
        "__and__": anp.bitwise_and, "__or__": anp.bitwise_or, "__xor__": anp.bitwise_xor,
    }
    for name, f in ops.items():
        prim = _FAST_PRIMS.get(name)
        setattr(Tracer, name, _fast_op(prim, f, False) if prim else
                (lambda f: lambda self, other: f(self, other))(f))
    for name, f in [("__radd__", anp.add), ("__rsub__", anp.subtract), ("__rmul__", anp.multiply),
                    ("__rtruediv__", anp.divide), ("__rfloordiv__", anp.floor_divide),
                    ("__rmod__", anp.mod), ("__rpow__", anp.power), ("__rmatmul__", anp.matmul),
                    ("__rand__", anp.bitwise_and), ("__ror__", anp.bitwise_or),
                    ("__rxor__", anp.bitwise_xor)]:
        prim = _FAST_PRIMS.get(name.replace("__r", "__", 1))
        setattr(Tracer, name, _fast_op(prim, f, True) if prim else swap(f))
    Tracer.__neg__ = lambda self: anp.negative(self)
    Tracer.__pos__ = lambda self: self
    Tracer.__abs__ = lambda self: anp.absolute(self)
    Tracer.__invert__ = lambda self: anp.invert(self)
    Tracer.__getitem__ = lambda self, idx: getitem(self, idx)
    Tracer.__divmod__ = lambda self, other: (anp.floor_divide(self, other), anp.mod(self, other))
    Tracer.T = property(lambda self: anp.transpose(self))
    Tracer.mT = property(lambda self: anp.swapaxes(self, -1, -2))
    Tracer.at = property(lambda self: _AtIndexer(self))
    Tracer.real = property(lambda self: self)
    Tracer.flat = property(lambda self: anp.ravel(self))

    def _reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return anp.reshape(self, shape)

    def _transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return anp.transpose(self, axes or None)

    Tracer.reshape = _reshape
    Tracer.transpose = _transpose
    Tracer.astype = lambda self, dtype, copy=True: anp.astype(self, dtype)
    Tracer.item = lambda self: self.concrete_value("item()").item()
    Tracer.tolist = lambda self: self.concrete_value("tolist()").tolist()
    Tracer.copy = lambda self: self
    Tracer.conj = lambda self: self
    Tracer.conjugate = lambda self: self
    Tracer.__round__ = lambda self, nd=None: anp.round(self, nd or 0)
    for name in ["sum", "mean", "prod", "max", "min", "std", "var", "all", "any", "argmax",
                 "argmin", "cumsum", "cumprod", "ravel", "squeeze", "clip", "dot", "ptp",
                 "swapaxes", "flatten", "repeat", "take", "trace", "diagonal", "nonzero",
                 "round", "sort", "argsort"]:
        fn = getattr(anp, "ravel" if name == "flatten" else name)
        setattr(Tracer, name, (lambda fn: lambda self, *a, **k: fn(self, *a, **k))(fn))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs.get("out") is not None:
            raise UnsupportedError(
                f"numpy.{ufunc.__name__}.{method} on a traced value is not supported; use "
                f"autodiff.numpy", source=user_source())
        fn = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
        f = getattr(anp, fn, None)
        if f is None:
            raise UnsupportedError(f"numpy.{ufunc.__name__} has no autodiff.numpy equivalent yet",
                                   source=user_source())
        kwargs.pop("out", None)
        return f(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        mod = func.__module__ or ""
        target = anp
        if "linalg" in mod:
            target = anp.linalg
        f = getattr(target, func.__name__, None)
        if f is None or getattr(f, "__wrapped_numpy__", f) is func and not hasattr(f, "__wrapped_numpy__"):
            raise UnsupportedError(f"numpy.{func.__name__} has no autodiff.numpy equivalent yet; "
                                   f"it cannot take a traced value", source=user_source())
        return f(*args, **kwargs)

    Tracer.__array_ufunc__ = __array_ufunc__
    Tracer.__array_function__ = __array_function__


def _fast_op(prim, f, reflected):
    """``x op y`` binds the primitive directly when the operands need no promotion or
    broadcasting (see ``fast_pair``): most operators a traced function runs. Anything
    else takes ``f``'s full numpy-semantics path."""
    from ._base import fast_pair

    def op(self, other):
        pair = fast_pair(other, self) if reflected else fast_pair(self, other)
        if pair is not None:
            return prim.bind(*pair)
        return f(other, self) if reflected else f(self, other)
    return op


def _fast_prims():
    from .. import primitives as P
    return {"__add__": P.add_p, "__sub__": P.sub_p, "__mul__": P.mul_p, "__truediv__": P.div_p,
            "__lt__": P.lt_p, "__le__": P.le_p, "__gt__": P.gt_p, "__ge__": P.ge_p,
            "__eq__": P.eq_p, "__ne__": P.ne_p}


_FAST_PRIMS = _fast_prims()

_UFUNC_NAMES = {"absolute": "absolute", "true_divide": "divide", "power": "power",
                "remainder": "mod", "conjugate": "conj"}
