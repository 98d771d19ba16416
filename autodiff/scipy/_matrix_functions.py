"""Matrix functions of ``autodiff.scipy.linalg``: ``expm`` (Padé [13/13] with scaling and
squaring, Higham 2005), ``expm_frechet`` (its jvp), ``sqrtm`` (scaled Denman–Beavers
iterations), ``funm`` (through ``eigh``) and the ``polar`` decomposition.

>>> import numpy as np
>>> from autodiff.scipy.linalg import expm
>>> expm(np.zeros((2, 2)))
array([[1., 0.],
       [0., 1.]])
"""
from collections import namedtuple as _namedtuple

import numpy as _np

from .. import numpy as _anp
from .._lax_control_flow import fori_loop as _fori_loop
from ..api import jvp as _jvp
from ..core import Tracer as _Tracer
from ..numpy._base import npfunc as _npfunc, promote as _promote
from ._linalg_base import float_matrix as _float_matrix, inexact as _inexact, eye_like as _eye_like


# Padé [13/13] for exp (Higham 2005, "The scaling and squaring method revisited")
_PADE13 = [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0]
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = 40


def _expm_body(a):
    b = _PADE13
    mm = _anp.matmul
    n1 = _anp.max(_anp.sum(_anp.abs(a), axis=-2), axis=-1)            # ‖A‖₁
    s = _anp.maximum(_anp.ceil(_anp.log2(_anp.divide(_anp.where(_anp.greater(n1, 0), n1, 1.0), _THETA13))), 0.0)
    s = _anp.stop_gradient(_anp.minimum(s, float(_MAX_SQUARINGS)))
    A = _anp.divide(a, _anp.expand_dims(_anp.expand_dims(_anp.exp2(s), -1), -1))
    I = _eye_like(A)
    A2 = mm(A, A)
    A4 = mm(A2, A2)
    A6 = mm(A4, A2)
    U = mm(A, _anp.add(mm(A6, _anp.add(_anp.add(_anp.multiply(A6, b[13]), _anp.multiply(A4, b[11])),
                                       _anp.multiply(A2, b[9]))),
                       _anp.add(_anp.add(_anp.add(_anp.multiply(A6, b[7]), _anp.multiply(A4, b[5])),
                                         _anp.multiply(A2, b[3])), _anp.multiply(I, b[1]))))
    V = _anp.add(mm(A6, _anp.add(_anp.add(_anp.multiply(A6, b[12]), _anp.multiply(A4, b[10])), _anp.multiply(A2, b[8]))),
                 _anp.add(_anp.add(_anp.add(_anp.multiply(A6, b[6]), _anp.multiply(A4, b[4])),
                                   _anp.multiply(A2, b[2])), _anp.multiply(I, b[0])))
    R = _anp.linalg.solve(_anp.subtract(V, U), _anp.add(V, U))
    smax = int(_MAX_SQUARINGS)

    def body(i, X):
        return _anp.where(_anp.expand_dims(_anp.expand_dims(_anp.less(_anp.astype(i, s.dtype if hasattr(s, "dtype") else _np.float64), s), -1), -1),
                          mm(X, X), X)
    return _fori_loop(0, smax, body, R)


@_npfunc(None)
def expm(A):
    """Matrix exponential by scaling and squaring with the [13/13] Padé approximant
    (Higham 2005), real or complex ``A``; its derivative is the Fréchet derivative
    (:func:`expm_frechet`).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import expm
    >>> np.round(expm(np.diag([1j * np.pi, 0.0])).real, 12)
    array([[-1.,  0.],
           [ 0.,  1.]])
    """
    A = _inexact(A)
    if isinstance(A, _Tracer):
        return _expm_body(A)
    with _np.errstate(all="ignore"):
        return _expm_body(A)


@_npfunc(None)
def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``(expm(A), L(A, E))``: the Fréchet derivative of expm at A in direction E, as the
    forward-mode derivative of the scaling-and-squaring algorithm (Al-Mohy and Higham's
    construction)."""
    A, E = _promote(_float_matrix(A), _float_matrix(E))
    X, L = _jvp(_expm_body, (A,), (E,))
    return (X, L) if compute_expm else L


_SQRTM_ITERS = 40


@_npfunc(None)
def sqrtm(A, disp=True, blocksize=64):
    """Principal square root of a real matrix with no eigenvalues on the closed negative
    real axis (its root is real), by the scaled product Denman–Beavers iteration;
    differentiable through the converged iteration."""
    A = _float_matrix(A)
    n = _anp.shape(A)[-1]
    I = _eye_like(A)

    def body(i, c):
        M, Y = c
        # scaling by |det M|^(-1/2n) speeds the early steps; the product form keeps M → I
        _, ld = _anp.linalg.slogdet(M)
        g = _anp.expand_dims(_anp.expand_dims(_anp.exp(_anp.multiply(ld, -1.0 / (2 * n))), -1), -1)
        g = _anp.where(_anp.less(i, 8), g, _anp.ones_like(g))
        Minv = _anp.linalg.inv(M)
        Y = _anp.multiply(_anp.matmul(Y, _anp.add(I, _anp.divide(Minv, _anp.multiply(g, g)))), _anp.multiply(g, 0.5))
        M = _anp.multiply(_anp.add(_anp.add(_anp.multiply(I, 2.0), _anp.multiply(M, _anp.multiply(g, g))),
                                   _anp.divide(Minv, _anp.multiply(g, g))), 0.25)
        return M, Y
    _, Y = _fori_loop(0, _SQRTM_ITERS, body, (A, A))
    return Y


PolarResult = _namedtuple("PolarResult", ["u", "p"])


@_npfunc(None)
def polar(a, side="right"):
    """Polar decomposition ``a = u p`` (``side`` 'right') or ``a = p u`` ('left'), from the
    SVD: ``u = W Vᵀ``, ``p = V S Vᵀ`` (or ``W S Wᵀ``)."""
    a = _float_matrix(a)
    w, s, vt = _anp.linalg.svd(a, full_matrices=False)
    u = _anp.matmul(w, vt)
    if side == "right":
        p = _anp.matmul(_anp.multiply(_anp.swapaxes(vt, -1, -2), _anp.expand_dims(s, -2)), vt)
    elif side == "left":
        p = _anp.matmul(_anp.multiply(w, _anp.expand_dims(s, -2)), _anp.swapaxes(w, -1, -2))
    else:
        raise ValueError("`side` must be either 'right' or 'left'")
    return u, p


@_npfunc(None)
def funm(A, func, disp=True):
    """``func`` of a symmetric matrix: ``V func(w) Vᵀ`` from its eigen-decomposition (the
    general Schur–Parlett algorithm needs complex arithmetic)."""
    A = _float_matrix(A)
    w, v = _anp.linalg.eigh(A)
    fw = func(w)
    return _anp.matmul(_anp.multiply(v, _anp.expand_dims(fw, -2)), _anp.swapaxes(v, -1, -2))
