"""Matrix functions of ``autodiff.scipy.linalg``: ``expm`` (Padé [13/13] with scaling and
squaring, Higham 2005), ``expm_frechet`` (its jvp), ``sqrtm`` and ``funm`` (the complex
Schur form with the Björck–Hammarling and Parlett recurrences) and the ``polar``
decomposition.

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
from ..numpy._linalg_base import conj_transpose as _mH
from ._linalg_base import inexact as _inexact, eye_like as _eye_like


# Padé [13/13] for exp (Higham 2005, "The scaling and squaring method revisited")
_PADE13 = [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0]
_THETA13 = 5.371920351148152
_MAX_SQUARINGS = 16


def _expm_body(a, max_squarings=_MAX_SQUARINGS):
    b = _PADE13
    mm = _anp.matmul
    n1 = _anp.max(_anp.sum(_anp.abs(a), axis=-2), axis=-1)            # ‖A‖₁
    s = _anp.maximum(_anp.ceil(_anp.log2(_anp.divide(_anp.where(_anp.greater(n1, 0), n1, 1.0), _THETA13))), 0.0)
    s = _anp.stop_gradient(s)
    too_many = _anp.greater(s, float(max_squarings))
    s = _anp.minimum(s, float(max_squarings))
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

    def body(i, X):
        return _anp.where(_anp.expand_dims(_anp.expand_dims(_anp.less(_anp.astype(i, s.dtype if hasattr(s, "dtype") else _np.float64), s), -1), -1),
                          mm(X, X), X)
    R = _fori_loop(0, int(max_squarings), body, R)
    # more squarings than allowed: NaN (JAX's rule) rather than an inaccurate result
    return _anp.where(_anp.expand_dims(_anp.expand_dims(too_many, -1), -1), _np.nan, R)


def _square_stack(A, name):
    sh = _anp.shape(A)
    if len(sh) < 2 or sh[-1] != sh[-2]:
        raise ValueError(f"{name}: expected a (batched) square matrix, got shape {tuple(sh)}")


@_npfunc(None)
def expm(A, *, upper_triangular=False, max_squarings=16):
    """Matrix exponential by scaling and squaring with the [13/13] Padé approximant
    (Higham 2005), real or complex ``A`` (stacks too; integers become float64); its
    derivative is the Fréchet derivative (:func:`expm_frechet`). JAX's keywords:
    ``upper_triangular`` (a hint that ``A`` is upper triangular; the result is the same)
    and ``max_squarings``: an ``A`` whose norm needs more squarings gives NaN.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import expm
    >>> np.round(expm(np.diag([1j * np.pi, 0.0])).real, 12)
    array([[-1.,  0.],
           [ 0.,  1.]])
    """
    A = _inexact(A)
    _square_stack(A, "expm")
    if isinstance(A, _Tracer):
        return _expm_body(A, max_squarings)
    with _np.errstate(all="ignore"):
        return _expm_body(A, max_squarings)


@_npfunc(None)
def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``(expm(A), L(A, E))``: the Fréchet derivative of expm at A in direction E (real or
    complex), as the forward-mode derivative of the scaling-and-squaring algorithm (Al-Mohy
    and Higham's construction); ``compute_expm=False`` returns ``L`` alone.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import expm_frechet
    >>> expm_frechet(np.zeros((2, 2)), np.eye(2), compute_expm=False)
    array([[1., 0.],
           [0., 1.]])
    """
    A, E = _promote(_inexact(A), _inexact(E))
    _square_stack(A, "expm_frechet")
    if _anp.shape(A) != _anp.shape(E):
        raise ValueError(f"expm_frechet: A {_anp.shape(A)} and E {_anp.shape(E)} differ in shape")
    X, L = _jvp(_expm_body, (A,), (E,))
    return (X, L) if compute_expm else L


def _schur_complex(A):
    from .linalg import schur          # linalg imports this module
    return schur(A, output="complex")


def _per_matrix(f, A):
    """``f`` on each matrix of the stack ``A`` (f takes and returns 2-d arrays)."""
    sh = _anp.shape(A)
    if len(sh) == 2:
        return f(A)
    flat = _anp.reshape(A, (-1,) + tuple(sh[-2:]))
    outs = [f(flat[i]) for i in range(_anp.shape(flat)[0])]
    return _anp.reshape(_anp.stack(outs), tuple(sh[:-2]) + tuple(_anp.shape(outs[0])))


def _superdiag_masks(n):
    i, j = _np.arange(n)[:, None], _np.arange(n)[None, :]
    return [(j - i) == p for p in range(n)]


def _sqrtm_triu(T):
    """The upper triangular square root of the upper triangular T (Björck and Hammarling's
    recurrence, one superdiagonal at a time):
    ``U_ij = (T_ij - Σ_{i<k<j} U_ik U_kj) / (U_ii + U_jj)``, 0 where the numerator is 0."""
    n = _anp.shape(T)[-1]
    masks = _superdiag_masks(n)
    d = _anp.sqrt(_anp.diagonal(T))
    U = _anp.multiply(_np.eye(n), _anp.expand_dims(d, 0))
    den = _anp.add(_anp.expand_dims(d, -1), _anp.expand_dims(d, 0))
    for p in range(1, n):
        s = _anp.matmul(U, U)       # U holds the diagonals 0..p-1: Σ_{i<k<j} U_ik U_kj on p
        num = _anp.subtract(T, s)
        zero = _anp.equal(num, 0)
        val = _anp.where(zero, 0.0, _anp.divide(num, _anp.where(zero, 1.0, den)))
        U = _anp.where(masks[p], val, U)
    return U


def _sqrtm_2d(A):
    T, Z = _schur_complex(A)
    R = _anp.matmul(_anp.matmul(Z, _sqrtm_triu(T)), _anp.conj(_anp.swapaxes(Z, -1, -2)))
    if _anp.asarray(A).dtype.kind == "c":
        return R
    # a real A: its principal root is real unless A has negative real eigenvalues, where
    # no real result exists: NaN there rather than a wrong real matrix
    re, im = _anp.real(R), _anp.imag(R)
    eps = float(_np.finfo(_anp.asarray(re).dtype).eps)
    tol = 1e3 * eps * _anp.shape(A)[-1]
    big = _anp.greater(_anp.max(_anp.abs(im)), _anp.multiply(_anp.max(_anp.abs(re)), tol))
    return _anp.where(big, _np.nan, re)


@_npfunc(None)
def sqrtm(A, disp=True, blocksize=64):
    """Principal square root (scipy's and JAX's algorithm: the complex Schur form
    ``A = Z T Zᴴ`` and Björck and Hammarling's recurrence for the triangular root),
    singular matrices included. Complex ``A`` gives the complex root; a real ``A`` gives
    the real root, which exists when ``A`` has no negative real eigenvalues (NaN where it
    does; JAX returns the complex root instead, always complex). Differentiable through
    the Schur form where the eigenvalues are distinct.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import sqrtm
    >>> sqrtm(np.array([[4.0, 0.0], [0.0, 0.0]]))
    array([[2., 0.],
           [0., 0.]])
    """
    A = _inexact(A)
    _square_stack(A, "sqrtm")
    return _per_matrix(_sqrtm_2d, A)


PolarResult = _namedtuple("PolarResult", ["u", "p"])


@_npfunc(None)
def polar(a, side="right"):
    """Polar decomposition ``a = u p`` (``side`` 'right') or ``a = p u`` ('left') of a real
    or complex matrix (stacks too), from the SVD ``a = W S Vᴴ``: ``u = W Vᴴ``,
    ``p = V S Vᴴ`` (or ``W S Wᴴ``).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import polar
    >>> u, p = polar(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> u
    array([[0., 1.],
           [1., 0.]])
    """
    if side not in ("right", "left"):
        raise ValueError("`side` must be either 'right' or 'left'")
    a = _inexact(a)
    w, s, vt = _anp.linalg.svd(a, full_matrices=False)
    u = _anp.matmul(w, vt)
    sc = _anp.expand_dims(_anp.astype(s, _anp.asarray(a).dtype), -2)
    if side == "right":
        p = _anp.matmul(_anp.multiply(_mH(vt), sc), vt)
    else:
        p = _anp.matmul(_anp.multiply(w, sc), _mH(w))
    return PolarResult(u, p)


def _parlett(F, T):
    """The upper triangular ``f(T)`` from its diagonal ``F`` (Parlett's recurrence, Golub and
    Van Loan 11.1.1, one superdiagonal at a time): from ``F T = T F``,
    ``F_ij (T_jj - T_ii) = (T F_p - F_p T)_ij`` with ``F_p`` the diagonals found so far.
    Returns ``(F, min |T_jj - T_ii|)``."""
    n = _anp.shape(T)[-1]
    masks = _superdiag_masks(n)
    d = _anp.diagonal(T)
    den = _anp.subtract(_anp.expand_dims(d, 0), _anp.expand_dims(d, -1))     # T_jj - T_ii
    for p in range(1, n):
        s = _anp.subtract(_anp.matmul(T, F), _anp.matmul(F, T))
        nz = _anp.not_equal(den, 0)
        val = _anp.where(nz, _anp.divide(s, _anp.where(nz, den, 1.0)), s)
        F = _anp.where(masks[p], val, F)
    upper = _np.triu(_np.ones((n, n), bool), 1)
    minden = _anp.min(_anp.where(upper, _anp.abs(den), _np.inf)) if n > 1 else _anp.abs(T[0, 0])
    minden = _anp.minimum(minden, _anp.abs(T[0, 0]))
    return F, minden


@_npfunc(None)
def funm(A, func, disp=True):
    """``func`` of a general square matrix (``scipy.linalg.funm``): the complex Schur form
    ``A = Z T Zᴴ``, ``func`` on T's diagonal and Parlett's recurrence for the rest of
    ``f(T)``, then ``Z f(T) Zᴴ``. ``func`` maps an array of (complex) eigenvalues
    elementwise. The result is complex, as JAX's (scipy returns a real array when the
    imaginary part is negligible). ``disp=False`` also returns scipy's error estimate.
    Inaccurate where eigenvalues are close (Parlett's recurrence divides by their
    differences); differentiable through the Schur form where they are distinct.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.scipy.linalg import funm
    >>> np.round(funm(np.array([[1.0, 2.0], [0.0, 3.0]]), anp.exp).real, 6)
    array([[ 2.718282, 17.367255],
           [ 0.      , 20.085537]])
    """
    A = _inexact(A)
    if _anp.ndim(A) != 2 or _anp.shape(A)[0] != _anp.shape(A)[1]:
        raise ValueError("expected square array_like input")
    T, Z = _schur_complex(A)
    n = _anp.shape(T)[-1]
    F = _anp.multiply(_np.eye(n), _anp.astype(func(_anp.diagonal(T)), _anp.asarray(T).dtype))
    F, minden = _parlett(F, T)
    F = _anp.matmul(_anp.matmul(Z, F), _mH(Z))
    if disp:
        return F
    tol = float(_np.finfo(_anp.asarray(T).dtype).eps)
    minden = _anp.where(_anp.equal(minden, 0.0), tol, minden)
    err = _anp.where(_anp.any(_anp.isinf(F)), _np.inf,
                     _anp.minimum(1.0, _anp.maximum(tol, _anp.multiply(
                         _anp.divide(tol, minden), _anp.linalg.norm(_anp.triu(T, 1), 1)))))
    return F, err
