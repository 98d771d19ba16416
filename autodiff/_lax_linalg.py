"""``jax.lax.linalg``: JAX's low-level decompositions, with JAX's signatures and conventions.

Importable as ``autodiff.lax.linalg`` (``from autodiff.lax.linalg import triangular_solve``).
Mind JAX's conventions, which differ from numpy's and scipy's: ``eigh`` returns
``(eigenvectors, eigenvalues)``; ``triangular_solve`` solves ``x @ op(a) = b`` unless
``left_side=True``; ``lu`` returns ``(lu, pivots, permutation)``. Each function is a
composition of ``autodiff.numpy``/``autodiff.scipy.linalg`` operations, so it works under
``jit``, ``vmap`` and derivatives of any order.
"""
import numpy as np

from . import numpy as anp
from ._lax_control_flow import scan

__all__ = ["cholesky", "eigh", "lu", "qr", "svd", "triangular_solve", "tridiagonal_solve"]


def _h(x):
    return anp.conj(anp.swapaxes(x, -1, -2))


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor of the Hermitian positive definite ``x`` (batched).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[2., 0.],
           [1., 2.]])
    """
    x = anp.asarray(x)
    if symmetrize_input:
        x = (x + _h(x)) / 2
    return anp.linalg.cholesky(x)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None):
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of the Hermitian ``x``.

    Note JAX's order, the reverse of ``numpy.linalg.eigh``'s ``(w, v)``.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> v, w = linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    array([1., 3.])
    """
    x = anp.asarray(x)
    if symmetrize_input:
        x = (x + _h(x)) / 2
    w, v = anp.linalg.eigh(x, UPLO="L" if lower else "U")
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., lo:hi]
    return v, w


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """``(q, r)`` with ``x = q @ r``; ``full_matrices=True`` (JAX's default) gives a square ``q``.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> q, r = linalg.qr(np.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if pivoting:
        raise NotImplementedError("lax.linalg.qr(pivoting=True) is not supported; use "
                                  "autodiff.scipy.linalg.qr")
    return anp.linalg.qr(x, mode="complete" if full_matrices else "reduced")


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """``(u, s, vh)`` (or ``s`` when ``compute_uv=False``) with ``x = u @ diag(s) @ vh``.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> linalg.svd(np.diag([1.0, 3.0]), compute_uv=False)
    array([3., 1.])
    """
    out = anp.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not compute_uv:
            return out[..., lo:hi]
        u, s, vh = out
        return u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    return out


def lu(x):
    """``(lu, pivots, permutation)``: ``x[permutation] = L @ U`` with ``L`` (unit diagonal) and
    ``U`` packed in ``lu``; ``pivots`` are the LAPACK row swaps (0-based, int32).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> packed, pivots, perm = linalg.lu(a)
    >>> perm, pivots
    (array([1, 0], dtype=int32), array([1, 1], dtype=int32))
    """
    from .scipy import linalg as _sl
    x = anp.asarray(x)
    p = _sl.lu(x)[0]                       # x = p @ l @ u, so x[perm] = l @ u
    packed, piv = _sl.lu_factor(x)
    return packed, anp.astype(piv, np.int32), anp.astype(anp.argmax(p, axis=-2), np.int32)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solve ``op(a) @ x = b`` (``left_side=True``) or ``x @ op(a) = b`` (JAX's default)
    for triangular ``a``; ``op`` transposes and/or conjugates as the flags say.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> linalg.triangular_solve(a, np.array([[2.0], [3.0]]), left_side=True, lower=True)
    array([[1.],
           [2.]])
    """
    from .scipy.linalg import solve_triangular
    a = anp.asarray(a)
    b = anp.asarray(b)
    if conjugate_a and not transpose_a:        # op(a) = conj(a): solve with conj(a) directly
        a, conjugate_a = anp.conj(a), False
    # now op(a) is a (trans 0), a^T (1) or a^H (2)
    trans = 0 if not transpose_a else (2 if conjugate_a else 1)
    if left_side:
        return solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    # x op(a) = b  <=>  op(a)^T x^T = b^T
    if trans == 0:
        a_, t_ = a, 1
    elif trans == 1:
        a_, t_ = a, 0
    else:
        a_, t_ = anp.conj(a), 0
    xt = solve_triangular(a_, anp.swapaxes(b, -1, -2), trans=t_, lower=lower,
                          unit_diagonal=unit_diagonal)
    return anp.swapaxes(xt, -1, -2)


def tridiagonal_solve(dl, d, du, b):
    """Solve the tridiagonal system with sub-, main and super-diagonals ``dl``, ``d``, ``du``
    (each ``(..., m)``; ``dl[..., 0]`` and ``du[..., -1]`` are ignored) for ``b`` of shape
    ``(..., m, n)``, by the Thomas algorithm (no pivoting, as JAX's).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> dl, d, du = np.array([0.0, 1.0, 1.0]), np.array([4.0, 4.0, 4.0]), np.array([1.0, 1.0, 0.0])
    >>> linalg.tridiagonal_solve(dl, d, du, np.array([[5.0], [6.0], [5.0]]))
    array([[1.],
           [1.],
           [1.]])
    """
    dl, d, du, b = (anp.asarray(v) for v in (dl, d, du, b))
    # the recurrences run over the system axis, moved to the front
    dl_, d_, du_ = (anp.moveaxis(v, -1, 0)[..., None] for v in (dl, d, du))
    b_ = anp.moveaxis(b, -2, 0)
    zero = anp.zeros_like(b_[0] * d_[0])

    def forward(carry, row):
        c_prev, y_prev = carry
        lo, di, up, bi = row
        denom = di - lo * c_prev
        c = up / denom
        y = (bi - lo * y_prev) / denom
        return (c * anp.ones_like(zero), y), (c * anp.ones_like(zero), y)

    _, (cs, ys) = scan(forward, (zero, zero), (dl_, d_, du_, b_))

    def backward(x_next, row):
        c, y = row
        x = y - c * x_next
        return x, x

    _, xs = scan(backward, zero, (cs, ys), reverse=True)
    return anp.moveaxis(xs, 0, -2)
