"""The argument handling ``autodiff.scipy.linalg``'s modules share: float and inexact
matrices, identities of a batch shape, symmetric matrices from one triangle.

>>> import numpy as np
>>> from autodiff.scipy._linalg_base import symmetric_from
>>> symmetric_from(np.array([[1.0, 9.0], [2.0, 3.0]]), lower=True)
array([[1., 2.],
       [2., 3.]])
"""
import sys

import numpy as np

from .. import numpy as anp
from ..core import user_source
from ..errors import UnsupportedError
from ..numpy._base import asarray
from ..numpy._linalg_base import conj_transpose

__all__ = ["float_matrix", "inexact", "eye_like", "symmetric_from"]


def float_matrix(a):
    """``a`` as a float array (ints -> float64). Complex input is refused here (a clear
    error instead of numpy's silent drop of the imaginary part): the functions that take
    complex input call :func:`inexact`."""
    a = asarray(a)
    kind = anp.asarray(a).dtype.kind
    if kind == "c":
        name = sys._getframe(1).f_code.co_name.lstrip("_")
        raise UnsupportedError(
            f"scipy.linalg.{name}: complex input is not supported by this function yet; "
            "complex solve, inv, det, pinv, cholesky, cho_solve, solve_triangular, lu, "
            "lu_factor, lu_solve, eigh, svd, svdvals, qr, qr_multiply, hessenberg, "
            "solve_sylvester, expm, schur(output='complex') and rsf2csf are",
            source=user_source())
    return anp.astype(a, np.float64) if kind != "f" else a


def inexact(a):
    """``a`` as an inexact array: float and complex kept, ints -> float64."""
    a = asarray(a)
    return anp.astype(a, np.float64) if anp.asarray(a).dtype.kind not in "fc" else a


def eye_like(a, n=None):
    """The identity matrix of ``a``'s dtype (size ``n``, default ``a``'s last axis), broadcast
    to ``a``'s batch shape."""
    n = anp.shape(a)[-1] if n is None else n
    return anp.broadcast_to(np.eye(n, dtype=anp.asarray(a).dtype), anp.shape(a)[:-2] + (n, n))


def symmetric_from(a, lower, hermitian=False):
    """The symmetric (``hermitian``: Hermitian, with a real diagonal) matrix whose
    ``lower`` (or upper) triangle is ``a``'s."""
    strict = anp.tril(a, -1) if lower else anp.triu(a, 1)
    d = anp.diagonal(a, 0, -2, -1)
    if hermitian and anp.asarray(a).dtype.kind == "c":
        d = anp.astype(anp.real(d), anp.asarray(a).dtype)
    diag = anp.multiply(anp.expand_dims(d, -1), eye_like(a))
    return anp.add(anp.add(strict, diag), conj_transpose(strict) if hermitian else anp.swapaxes(strict, -1, -2))
