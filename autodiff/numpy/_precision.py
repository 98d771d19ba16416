"""JAX's ``precision=`` and ``preferred_element_type=`` keywords on the products (``dot``,
``matmul``, ``vdot``, ``inner``, ``outer``, ``tensordot`` and ``einsum``), as in
``jax.numpy``: any :class:`Precision` is accepted and computes the same float64-exact
products; ``preferred_element_type`` casts the result. ``ad.lax.Precision`` is this class.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.dot(np.eye(2), np.ones(2), precision=ad.lax.Precision.HIGHEST)
array([1., 1.])
"""
import enum
import functools

from .. import numpy as anp
from ..errors import AutodiffError
from ..traceback_util import filter_traceback
from . import _einsum, _products

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum"]


class Precision(enum.Enum):
    """JAX's matmul precision names, accepted wherever JAX takes ``precision=``
    (``lax.dot``, ``anp.dot``/``matmul``/``einsum``/...). Every setting computes the same
    thing here: float64 products are float64-exact and float32 ones are float32, on the
    CPU (there are no reduced-precision TPU/GPU passes to choose between).

    >>> import autodiff as ad
    >>> ad.lax.Precision("highest") is ad.lax.Precision.HIGHEST
    True
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        return names.get(str(value).lower())


def check_precision(precision):
    """Validate a ``precision=`` argument (None, a Precision or its name, or a pair)."""
    if precision is None or isinstance(precision, Precision):
        return
    if isinstance(precision, (tuple, list)) and len(precision) == 2:
        for p in precision:
            check_precision(p)
        return
    try:
        Precision(precision)
    except ValueError:
        raise ValueError(f"precision must be None, an ad.lax.Precision, one of 'default', "
                         f"'high', 'highest', or a pair of those; got {precision!r}") from None


def with_precision(f):
    """``f`` taking JAX's ``precision=`` / ``preferred_element_type=`` keywords too."""
    @functools.wraps(f)
    def product(*args, precision=None, preferred_element_type=None, **kwargs):
        if precision is not None:
            check_precision(precision)
        try:                               # a public boundary (autodiff.traceback_util)
            out = f(*args, **kwargs)
        except AutodiffError as e:
            filter_traceback(e)
            raise
        if preferred_element_type is not None:
            out = anp.astype(out, preferred_element_type)
        return out
    return product


dot, matmul, vdot, inner, outer, tensordot = (
    with_precision(g) for g in (_products.dot, _products.matmul, _products.vdot, _products.inner,
                                _products.outer, _products.tensordot))
einsum = with_precision(_einsum.einsum)
