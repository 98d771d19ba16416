"""The helpers ``autodiff.numpy.linalg`` and its decompositions share: square-matrix
checks, conjugate transposes, ``|x|²``, identity matrices of a batch shape.

>>> import numpy as np
>>> from autodiff.numpy._linalg_base import conj_transpose
>>> conj_transpose(np.array([[1j, 2.0]]))
array([[0.-1.j],
       [2.-0.j]])
"""
import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import user_source
from ..errors import ShapeError
from ._base import shape_of, dtype_of

__all__ = ["check_square", "is_complex", "conj_transpose", "real_part_dtype", "abs2", "eye"]


def check_square(a, name):
    """Raise ``ShapeError`` naming ``linalg.<name>`` unless ``a`` is (..., n, n)."""
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ShapeError(f"linalg.{name}: expected a square matrix (..., n, n), got shape {s}",
                         source=user_source())


def is_complex(a):
    """Whether ``a`` has a complex dtype."""
    return np.dtype(dtype_of(a)).kind == "c"


def conj_transpose(x):
    """Conjugate transpose of the last two axes (the transpose for real ``x``)."""
    x = anp.swapaxes(x, -1, -2)
    return anp.conj(x) if is_complex(x) else x


def real_part_dtype(dt):
    """The dtype of the real parts of ``dt`` (complex64 -> float32; reals unchanged)."""
    return np.dtype(np.abs(np.zeros((), dt)).dtype)


def abs2(x):
    """``|x|²`` elementwise, real: ``x·x`` for real ``x``, ``Re(x·conj(x))`` for complex."""
    if is_complex(x):
        return anp.real(anp.multiply(x, anp.conj(x)))
    return anp.multiply(x, x)


def eye(n, dt, batch=()):
    """The identity matrix of ``dt``, broadcast to ``batch + (n, n)`` (built from iotas)."""
    sh = tuple(batch) + (n, n)
    return P.convert(P.eq(P.iota(np.int64, sh, len(sh) - 2), P.iota(np.int64, sh, len(sh) - 1)), dt)
