"""``jax.lax.linalg``: JAX's low-level decompositions, with JAX's signatures and conventions.

Importable as ``autodiff.lax.linalg`` (``from autodiff.lax.linalg import triangular_solve``).
Mind JAX's conventions, which differ from numpy's and scipy's: ``eigh`` returns
``(eigenvectors, eigenvalues)``; ``triangular_solve`` solves ``x @ op(a) = b`` unless
``left_side=True``; ``lu`` returns ``(lu, pivots, permutation)``; ``eig`` returns a list
``[w, vl, vr]``; ``hessenberg``, ``tridiagonal`` and ``qr``'s Householder helpers
(``householder_product``, ``ormqr``) use LAPACK's packed storage. Each function is a
composition of ``autodiff.numpy``/``autodiff.scipy.linalg`` operations (LAPACK on the host
for ``eig``, ``schur`` and the pivots of ``qr(pivoting=True)``), so it works under ``jit``,
``vmap`` and derivatives.
"""
import enum
import warnings

import numpy as np

from . import numpy as anp
from ._lax_control_flow import scan, while_loop
from .callback import pure_callback
from .core import Tracer, complex_dtype, user_source
from .custom_derivatives import custom_jvp
from .errors import UnsupportedError
from .shapes import ShapeDtypeStruct

__all__ = ["cholesky", "cholesky_update", "eig", "eigh", "hessenberg", "householder_product",
           "lu", "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve",
           "EigImplementation", "EighImplementation", "SvdAlgorithm"]


def _scipy_linalg():
    # autodiff.scipy imports the whole scipy namespace (stats, optimize, ...): imported on
    # first use so that ``autodiff.lax`` stays importable on its own
    from .scipy import linalg
    return linalg


class EigImplementation(enum.Enum):
    """``eig``'s ``implementation``: every choice runs LAPACK's ``geev`` on the host here.

    >>> from autodiff.lax.linalg import EigImplementation
    >>> EigImplementation.LAPACK.value
    'lapack'
    """
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """``eigh``'s ``implementation``: accepted for JAX's signature; one algorithm runs here.

    >>> from autodiff.lax.linalg import EighImplementation
    >>> EighImplementation.QR.value
    'qr'
    """
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """``svd``'s ``algorithm``: accepted for JAX's signature; one algorithm runs here.

    >>> from autodiff.lax.linalg import SvdAlgorithm
    >>> SvdAlgorithm.JACOBI.value
    'Jacobi'
    """
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


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
         subset_by_index=None, implementation=None):
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of the Hermitian ``x``.

    Note JAX's order, the reverse of ``numpy.linalg.eigh``'s ``(w, v)``. ``implementation``
    (an :class:`EighImplementation`) is accepted for JAX's signature; one algorithm runs.

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

    ``pivoting=True``: ``(q, r, p)`` with ``x[..., :, p] = q @ r`` and ``|diag(r)|``
    non-increasing (LAPACK's ``geqp3`` column pivoting), ``p`` int32 of shape ``(..., n)``.
    The pivots are found on the host (scipy's ``geqp3`` when scipy is installed, else the
    same greedy largest-remaining-norm rule in numpy) and ``q, r`` are the differentiable
    ``qr`` of the permuted columns, so the derivative is ``qr``'s at the fixed permutation,
    as JAX's.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> q, r = linalg.qr(np.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    >>> q, r, p = linalg.qr(np.array([[1.0, 3.0], [0.0, 4.0]]), pivoting=True)
    >>> p, np.round(np.abs(np.diag(r)), 6)
    (array([1, 0], dtype=int32), array([5. , 0.8]))
    """
    if pivoting:
        return _scipy_linalg()._pivoted_qr(anp.asarray(x),
                                           "full" if full_matrices else "economic")
    return anp.linalg.qr(x, mode="complete" if full_matrices else "reduced")


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """``(u, s, vh)`` (or ``s`` when ``compute_uv=False``) with ``x = u @ diag(s) @ vh``.
    ``algorithm`` (an :class:`SvdAlgorithm`) is accepted for JAX's signature.

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


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solve the tridiagonal system with sub-, main and super-diagonals ``dl``, ``d``, ``du``
    (each ``(..., m)``; ``dl[..., 0]`` and ``du[..., -1]`` are ignored) for ``b`` of shape
    ``(..., m, n)``, by the Thomas algorithm (no pivoting).

    ``perturb_singular=True``: a pivot smaller than ``eps * max|entry|`` is replaced by that
    amount (with its sign), so a singular system (inverse iteration's) gives a finite,
    large solution instead of inf/nan, as JAX's option does.

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

    if perturb_singular:
        big = anp.maximum(anp.maximum(anp.max(anp.abs(d), axis=-1), anp.max(anp.abs(dl), axis=-1)),
                          anp.max(anp.abs(du), axis=-1))
        eps = float(np.finfo(np.result_type(anp.asarray(d).dtype, np.float16)).eps)
        tiny = anp.stop_gradient(big * eps)[..., None]
    else:
        tiny = None

    def forward(carry, row):
        c_prev, y_prev = carry
        lo, di, up, bi = row
        denom = di - lo * c_prev
        if tiny is not None:
            small = anp.abs(denom) < tiny
            denom = anp.where(small, anp.where(anp.real(denom) < 0, -tiny, tiny), denom)
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


# ----------------------------------------------------------------------------
# Householder reflectors in LAPACK's conventions (larfg, gehrd, sytrd, orgqr, ormqr)
# ----------------------------------------------------------------------------

def _larfg(alpha, x):
    """LAPACK's ``larfg`` on ``(alpha, x)`` (``x`` zero outside the reflected part):
    ``(beta, tau, v)`` with ``H = I - tau u uᴴ``, ``u = e + v``, ``Hᴴ (alpha; x) = (beta; 0)``,
    ``beta`` real of the opposite sign to ``Re alpha``; ``tau = 0`` (``H = I``) when ``x = 0``
    and ``alpha`` is real. ``beta`` comes back in ``alpha``'s dtype."""
    xs = anp.sum(anp.real(x * anp.conj(x)), axis=-1)
    ar, ai = anp.real(alpha), anp.imag(alpha)
    trivial = anp.logical_and(xs == 0, ai == 0)
    nrm = anp.sqrt(anp.where(trivial, 1.0, ar * ar + ai * ai + xs))
    beta = anp.where(ar >= 0, -nrm, nrm)
    beta_c = anp.astype(beta, anp.asarray(alpha).dtype)
    tau = anp.where(trivial, 0.0, (beta_c - alpha) / beta_c)
    v = x * anp.expand_dims(anp.where(trivial, 0.0, 1.0 / (alpha - beta_c)), -1)
    return anp.where(trivial, alpha, beta_c), tau, v


def _gehrd(a):
    """Householder reduction of ``a`` (``(..., n, n)``) to upper Hessenberg form, LAPACK's
    ``gehd2`` step by step (one ``scan`` over the columns): ``(h, vs, taus)`` with ``h`` the
    Hessenberg matrix ``Qᴴ a Q``, ``vs`` the reflectors' tails below the first subdiagonal
    (zero elsewhere) and ``taus`` ``(..., n-1)``."""
    n = anp.shape(a)[-1]
    dt = anp.asarray(a).dtype
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    r1 = np.arange(n)

    def step(carry, j):
        w, vs = carry
        col = anp.sum(anp.where(cols == j, w, 0), axis=-1)               # w[..., :, j]
        alpha = anp.sum(anp.where(r1 == j + 1, col, 0), axis=-1)
        x = anp.where(r1 >= j + 2, col, 0)
        beta, tau, v = _larfg(alpha, x)
        u = anp.where(r1 == j + 1, anp.ones_like(v), v)
        t = tau[..., None, None]
        uc, ur = u[..., :, None], anp.conj(u)[..., None, :]
        w = w - t * (anp.matmul(w, uc) * ur)                              # w H
        w = w - anp.conj(t) * (uc * anp.matmul(ur, w))                    # Hᴴ w
        at_j = cols == j
        w = anp.where(anp.logical_and(at_j, rows == j + 1), beta[..., None, None], w)
        w = anp.where(anp.logical_and(at_j, rows >= j + 2), 0, w)
        vs = anp.where(anp.logical_and(at_j, rows >= j + 2), v[..., :, None], vs)
        return (w, vs), tau

    if n < 2:
        return a, anp.zeros_like(a), anp.zeros(anp.shape(a)[:-2] + (0,), dt)
    (h, vs), taus = scan(step, (a, anp.zeros_like(a)), np.arange(n - 1))
    return h, vs, anp.moveaxis(taus, 0, -1)


def _square_check(x, name):
    sh = anp.shape(x)
    if len(sh) < 2 or sh[-1] != sh[-2]:
        raise ValueError(f"The input to {name} must be a batch of square matrices [..., n, n]; "
                         f"got shape {tuple(sh)}.")


def _inexact(x):
    x = anp.asarray(x)
    return x if x.dtype.kind in "fc" else anp.astype(x, np.float64)


def hessenberg(a):
    """Householder reduction to upper Hessenberg form, LAPACK's ``gehrd``: ``(a, taus)``.

    The upper triangle and first subdiagonal of the returned ``a`` hold the Hessenberg
    matrix ``H = Qᴴ a Q``; below the subdiagonal column ``j`` holds the tail of reflector
    ``j`` (``u_j = e_{j+1} + tail``), and ``taus`` (``(..., n-1)``) its scale, so
    ``Q = H_0 ⋯ H_{n-2}``, ``H_j = I - taus_j u_j u_jᴴ``. LAPACK's sign conventions, so the
    values match ``scipy.linalg.lapack.dgehrd`` / ``zgehrd``. Batched; a composition (one
    ``scan``), so jittable, vmappable and differentiable (JAX has no derivative here).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    >>> packed, taus = linalg.hessenberg(a)
    >>> np.round(np.triu(packed, -1), 4)
    array([[ 1.    , -3.597 , -0.2481],
           [-8.0623, 14.8   ,  2.4   ],
           [ 0.    ,  0.4   ,  0.2   ]])
    >>> np.round(taus, 4)
    array([1.4961, 0.    ])
    """
    a = _inexact(a)
    _square_check(a, "hessenberg")
    h, vs, taus = _gehrd(a)
    n = anp.shape(a)[-1]
    low = (np.arange(n)[:, None] - np.arange(n)[None, :]) > 1
    return anp.where(low, vs, h), taus


def tridiagonal(a, *, lower=True):
    """Householder reduction of a symmetric/Hermitian matrix to tridiagonal form, LAPACK's
    ``sytrd``/``hetrd``: ``(a, d, e, taus)``.

    Only the ``lower`` (or upper) triangle of ``a`` is read. ``d`` (``(..., n)``) and ``e``
    (``(..., n-1)``, the sub- or superdiagonal) are real and ``T = Qᴴ a Q``. In the returned
    ``a`` the diagonal and that off-diagonal hold ``T``; beyond it (below for ``lower``,
    above otherwise) are the reflectors' tails, as LAPACK stores them (``lower``:
    ``Q = H_0 ⋯ H_{n-2}``, reflector ``j``'s unit entry at row ``j+1``; upper:
    ``Q = H_{n-2} ⋯ H_0``, reflector ``j``'s unit entry at row ``j``, its tail in column
    ``j+1`` above it); the other triangle is returned as given. Batched; a composition,
    so jittable and differentiable.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.0], [2.0, 0.0, 1.0]])
    >>> packed, d, e, taus = linalg.tridiagonal(a)
    >>> np.round(d, 4), np.round(e, 4)
    (array([4. , 1.4, 2.6]), array([-2.2361,  0.8   ]))
    """
    a = _inexact(a)
    _square_check(a, "tridiagonal")
    n = anp.shape(a)[-1]
    if n == 0:
        raise ValueError("The input to tridiagonal must be a non-empty square matrix.")
    dt = a.dtype
    rdt = np.dtype(np.float32) if dt in (np.float32, np.complex64) else np.dtype(np.float64)
    rows, cols = np.arange(n)[:, None], np.arange(n)[None, :]
    # the Hermitian matrix of the given triangle, real diagonal (LAPACK reads no more)
    strict = anp.tril(a, -1) if lower else anp.triu(a, 1)
    herm = strict + anp.conj(anp.swapaxes(strict, -1, -2)) + anp.where(
        rows == cols, anp.astype(anp.real(a), dt), 0)
    # the upper variant is the lower one on the matrix reversed in both axes
    b = herm if lower else anp.flip(herm, axis=(-2, -1))
    h, vs, taus = _gehrd(b)
    d = anp.real(anp.diagonal(h, 0, -2, -1))
    e = anp.real(anp.diagonal(h, -1, -2, -1))
    band = anp.where(rows == cols, anp.astype(anp.real(h), dt), anp.where(rows - cols == 1, h, 0))
    packed_b = anp.where(rows - cols > 1, vs, band)
    if lower:
        packed = anp.where(rows >= cols, packed_b, a)
    else:
        packed = anp.where(rows <= cols, anp.flip(packed_b, axis=(-2, -1)), a)
        d, e, taus = anp.flip(d, -1), anp.flip(e, -1), anp.flip(taus, -1)
    return packed, anp.astype(d, rdt), anp.astype(e, rdt), taus


def _reflectors(a, k):
    """The unit lower-trapezoidal ``(..., m, k)`` matrix of the reflectors stored in ``a``."""
    m = anp.shape(a)[-2]
    return anp.tril(a[..., :, :k], -1) + np.eye(m, k, dtype=anp.asarray(a).dtype)


def householder_product(a, taus):
    """The first ``n`` columns of ``Q = H_0 ⋯ H_{k-1}``, ``H_i = I - taus_i u_i u_iᴴ`` with
    ``u_i`` column ``i`` of ``a`` below the diagonal and 1 on it: LAPACK's ``orgqr``/``ungqr``
    on ``a`` (``(..., m, n)``, ``m >= n``) and ``taus`` (``(..., k)``, ``k <= n``).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> h, taus = np.linalg.qr(a, mode="raw")                      # LAPACK's geqrf, transposed
    >>> q = linalg.householder_product(h.T, taus)
    >>> bool(np.allclose(q, np.linalg.qr(a)[0]))
    True
    """
    a, taus = anp.asarray(a), anp.asarray(taus)
    m, n = anp.shape(a)[-2:]
    k = anp.shape(taus)[-1]
    if m < n:
        raise ValueError("The first argument to householder_product must have at least as many "
                         f"rows as columns, got shape {tuple(anp.shape(a))}")
    if k > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    dt = np.result_type(a.dtype, taus.dtype)
    a, taus = anp.astype(a, dt), anp.astype(taus, dt)
    q = anp.broadcast_to(np.eye(m, n, dtype=dt), anp.shape(a)[:-2] + (m, n))
    q = q * anp.ones_like(taus[..., :1])[..., None]            # the batch of taus as well
    if k == 0:
        return q
    us = anp.moveaxis(_reflectors(a, k), -1, 0)

    def step(q, ut):
        u, t = ut
        uhq = anp.matmul(anp.conj(u)[..., None, :], q)
        return q - t[..., None, None] * (u[..., :, None] * uhq), None

    q, _ = scan(step, q, (us, anp.moveaxis(taus, -1, 0)), reverse=True)
    return q


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Multiply ``c`` by ``Q = H_0 ⋯ H_{k-1}`` of the reflectors in ``a`` and ``taus``
    (``householder_product``'s storage) without forming ``Q``: ``Q @ c`` (``left``), ``c @ Q``
    (``left=False``), with ``Qᴴ`` for ``transpose=True``; LAPACK's ``ormqr``/``unmqr``.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> h, taus = np.linalg.qr(a, mode="raw")
    >>> qc = linalg.ormqr(h.T, taus, np.eye(3))
    >>> bool(np.allclose(qc, np.linalg.qr(a, mode="complete")[0]))
    True
    """
    a, taus, c = anp.asarray(a), anp.asarray(taus), anp.asarray(c)
    m = anp.shape(a)[-2]
    k = anp.shape(taus)[-1]
    if left and anp.shape(c)[-2] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the "
                         f"Householder matrix a. Got a shape {tuple(anp.shape(a))} and c shape "
                         f"{tuple(anp.shape(c))}.")
    if not left and anp.shape(c)[-1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns as "
                         f"the Householder matrix a has rows. Got a shape {tuple(anp.shape(a))} "
                         f"and c shape {tuple(anp.shape(c))}.")
    dt = np.result_type(a.dtype, taus.dtype, c.dtype)
    a, taus, c = anp.astype(a, dt), anp.astype(taus, dt), anp.astype(c, dt)
    if k == 0:
        return c
    us = anp.moveaxis(_reflectors(a, k), -1, 0)
    ts = anp.moveaxis(taus, -1, 0)
    if transpose:
        ts = anp.conj(ts)

    def step(c, ut):
        u, t = ut
        t = t[..., None, None]
        if left:        # H c = c - t u (uᴴ c)
            return c - t * (u[..., :, None] * anp.matmul(anp.conj(u)[..., None, :], c)), None
        return c - t * (anp.matmul(c, u[..., :, None]) * anp.conj(u)[..., None, :]), None

    # Q c applies H_{k-1} first; Qᴴ c applies H_0ᴴ first; c Q applies H_0 first
    reverse = (left and not transpose) or (not left and transpose)
    c, _ = scan(step, c, (us, ts), reverse=reverse)
    return c


# ----------------------------------------------------------------------------
# pivots, rank-1 Cholesky updates, symmetric products
# ----------------------------------------------------------------------------

def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation (int32, ``(..., permutation_size)``) that the LAPACK row swaps
    ``pivots`` (``(..., k)``: row ``i`` swapped with row ``pivots[i]``, in order) make of
    ``arange(permutation_size)``.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 4)
    array([2, 0, 1, 3], dtype=int32)
    """
    pivots = anp.asarray(pivots)
    if pivots.dtype.kind not in "iu":
        raise TypeError(f"lu_pivots_to_permutation: pivots must be integers, got {pivots.dtype}")
    if anp.ndim(pivots) < 1:
        raise ValueError("lu_pivots_to_permutation: pivots must have shape (..., k)")
    size = int(permutation_size)
    k = anp.shape(pivots)[-1]
    if size < k:
        raise ValueError(f"Output permutation size {size} has to exceed the trailing dimension "
                         f"of the pivots. Got pivots size {k}")
    batch = tuple(anp.shape(pivots)[:-1])
    idx = np.arange(size, dtype=np.int32)
    perm = anp.broadcast_to(idx, batch + (size,))
    if k == 0 or size == 0:
        return anp.astype(perm, np.int32)
    piv = anp.astype(pivots, np.int32)

    def step(perm, ij):
        i, j = ij
        j = j[..., None]
        pi = anp.sum(anp.where(idx == i, perm, 0), axis=-1, keepdims=True)
        pj = anp.sum(anp.where(idx == j, perm, 0), axis=-1, keepdims=True)
        perm = anp.where(idx == i, pj, anp.where(idx == j, pi, perm))
        return anp.astype(perm, np.int32), None

    perm, _ = scan(step, anp.astype(perm, np.int32),
                   (np.arange(k, dtype=np.int32), anp.moveaxis(piv, -1, 0)))
    return perm


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``Rᵀ R + w wᵀ`` from the upper factor ``R`` of a real
    ``n x n`` matrix and ``w`` (``(n,)``), by ``n`` Givens rotations (O(n²)).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> r = np.array([[2.0, 1.0], [0.0, 1.0]])
    >>> w = np.array([1.0, 1.0])
    >>> r2 = linalg.cholesky_update(r, w)
    >>> bool(np.allclose(r2.T @ r2, r.T @ r + np.outer(w, w)))
    True
    """
    r, w = _inexact(r_matrix), _inexact(w_vector)
    rs, ws = tuple(anp.shape(r)), tuple(anp.shape(w))
    if len(rs) != 2 or len(ws) != 1 or rs[0] != rs[1] or ws[0] != rs[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                         f"vector of the same size as input. Got shapes {rs} and {ws} instead")
    dt = np.result_type(r.dtype, w.dtype)
    r, w = anp.astype(r, dt), anp.astype(w, dt)
    n = rs[0]
    rows = np.arange(n)[:, None]
    i1 = np.arange(n)

    def step(carry, k):
        r, z = carry
        row = anp.sum(anp.where(rows == k, r, 0), axis=0)
        x = anp.sum(anp.where(i1 == k, row, 0))
        y = anp.sum(anp.where(i1 == k, z, 0))
        zero = y == 0
        rad = anp.sqrt(anp.where(zero, 1.0, x * x + y * y))
        c = anp.where(zero, 1.0, x / rad)
        s = anp.where(zero, 0.0, y / rad)
        r = anp.where(rows == k, (c * row + s * z)[None, :], r)
        return (r, c * z - s * row), None

    (r, _), _ = scan(step, (r, w), np.arange(n))
    return r


def symmetric_product(a_matrix, c_matrix, *, alpha=1., beta=0., symmetrize_output=False):
    """``alpha * a @ aᵀ + beta * c`` (plain transpose, also for complex), batched;
    ``symmetrize_output=True`` mirrors the lower triangle into the upper one (JAX
    guarantees only the lower triangle otherwise; here the whole product is computed).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> linalg.symmetric_product(np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2), beta=2.0)
    array([[ 7., 11.],
           [11., 27.]])
    """
    a, c = anp.asarray(a_matrix), anp.asarray(c_matrix)
    sa, sc = tuple(anp.shape(a)), tuple(anp.shape(c))
    if len(sa) < 2 or len(sc) < 2 or sa[-2] != sc[-1] or sc[-2] != sc[-1]:
        raise ValueError("symmetric_product expects a rectangular matrix of shape (m, n) and a "
                         f"square matrix of shape (m, m). Got shapes {sa} and {sc}.")
    out = alpha * anp.matmul(a, anp.swapaxes(a, -1, -2)) + beta * c
    if symmetrize_output:
        out = anp.tril(out) + anp.swapaxes(anp.tril(out, -1), -1, -2)
    return out


# ----------------------------------------------------------------------------
# eig: LAPACK's geev on the host, JAX's derivative in LAPACK's gauge
# ----------------------------------------------------------------------------

def _unit_largest_real(v):
    """Columns of ``v`` scaled to unit norm with their largest-modulus entry real and
    positive (numpy, on the host)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    k = np.argmax(np.abs(v), axis=-2)
    top = np.take_along_axis(v, k[..., None, :], axis=-2)
    return v * (np.conj(top) / np.abs(top))


def _eig_host(a, left, right):
    """``(w, vl, vr)`` of each matrix of ``a`` (leading axes a batch), complex; LAPACK's
    ``geev`` through scipy for left eigenvectors, numpy's otherwise."""
    a = np.asarray(a)
    dt = complex_dtype(a.dtype)
    n = a.shape[-1]
    flat = a.reshape((-1, n, n))
    w = np.empty(flat.shape[:-1], dt)
    vl = np.empty(flat.shape, dt)
    vr = np.empty(flat.shape, dt)
    for i, m in enumerate(flat):
        if left:
            try:
                import scipy.linalg           # optional: only left eigenvectors use it
            except ImportError:              # pragma: no cover - scipy is installed in tests
                wi, vri = np.linalg.eig(m)
                vli = _unit_largest_real(np.conj(np.linalg.inv(vri.astype(dt))).swapaxes(-1, -2))
            else:
                wi, vli, vri = scipy.linalg.eig(m, left=True, right=True)
            vl[i] = vli
        else:
            wi, vri = np.linalg.eig(m) if right else (np.linalg.eigvals(m), None)
        w[i] = wi
        if vri is not None:
            vr[i] = vri
    outs = [w.reshape(a.shape[:-1])]
    if left:
        outs.append(vl.reshape(a.shape))
    if right:
        outs.append(vr.reshape(a.shape))
    return tuple(outs)


def _eig_vec_jvp(w, v, da):
    """``(dw, dv)`` of ``A v = v diag(w)`` in direction ``dA``, ``v`` normalized as LAPACK
    does (unit norm, largest-modulus entry real). With ``S = v⁻¹ dA v``: ``dw = diag S`` and
    ``dv = v (F ∘ S) + v diag(c)``, ``F_ij = 1/(w_j - w_i)`` (0 on the diagonal and where
    eigenvalues coincide); ``c`` keeps the norm (``Re c_j = -Re(v_jᴴ u_j)``) and the phase
    of the largest entry (``Im c_j = -Im(u_kj) / v_kj``)."""
    s = anp.linalg.solve(v, anp.matmul(da, v))
    dw = anp.diagonal(s, 0, -2, -1)
    diff = w[..., None, :] - w[..., :, None]
    same = diff == 0
    f = anp.where(same, 0, 1 / anp.where(same, 1, diff))
    u = anp.matmul(v, f * s)
    k = anp.stop_gradient(anp.argmax(anp.abs(v), axis=-2))
    rows = np.arange(anp.shape(v)[-2])[:, None]
    mask = rows == k[..., None, :]
    vk = anp.real(anp.sum(anp.where(mask, v, 0), axis=-2))
    uk = anp.sum(anp.where(mask, u, 0), axis=-2)
    re = -anp.real(anp.sum(anp.conj(v) * u, axis=-2))
    im = -anp.imag(uk) / vk
    c = anp.astype(re, v.dtype) + 1j * anp.astype(im, v.dtype)
    return dw, u + v * c[..., None, :]


_EIG_FNS = {}


def _eig_fn(left, right, derivs):
    """The custom-derivative ``a -> (w[, vl][, vr])`` for one set of flags (cached, so that
    ``jit``'s caches see one function)."""
    key = (left, right, derivs)
    if key in _EIG_FNS:
        return _EIG_FNS[key]

    @custom_jvp
    def f(a):
        sh = tuple(anp.shape(a))
        dt = complex_dtype(anp.asarray(a).dtype)
        specs = (ShapeDtypeStruct(sh[:-1], dt),) + (ShapeDtypeStruct(sh, dt),) * (left + right)
        return tuple(pure_callback(lambda x: _eig_host(x, left, right), specs, a,
                                   vmap_method="expand_dims"))

    @f.defjvp
    def f_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        if (left or right) and not derivs:
            raise UnsupportedError(
                "Derivatives of non-symmetric eigenvectors are only valid under assumptions "
                "on the input that cannot be checked (distinct eigenvalues, a unique "
                "largest-modulus entry in each eigenvector): pass enable_eigvec_derivs=True "
                "to autodiff.lax.linalg.eig to opt in, or compute_left_eigenvectors=False, "
                "compute_right_eigenvectors=False for eigenvalues alone (as in JAX).",
                source=user_source())
        outs = _eig_fn(left, True, derivs)(a)
        w, vr = outs[0], outs[-1]
        da = anp.astype(da, anp.asarray(vr).dtype)
        dw, dvr = _eig_vec_jvp(w, vr, da)
        primal, tangent = [w], [dw]
        if left:
            _, dvl = _eig_vec_jvp(anp.conj(w), outs[1], anp.conj(anp.swapaxes(da, -1, -2)))
            primal.append(outs[1])
            tangent.append(dvl)
        if right:
            primal.append(vr)
            tangent.append(dvr)
        return tuple(primal), tuple(tangent)

    _EIG_FNS[key] = f
    return f


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """Eigendecomposition of a general square matrix (batched): the list ``[w, vl, vr]``
    (``vl``/``vr`` only where asked for), always complex, LAPACK's ``geev`` (run on the host,
    under ``jit`` too). ``vr`` holds right eigenvectors (``x vr = vr diag(w)``), ``vl`` left
    ones (``vlᴴ x = diag(w) vlᴴ``); each has unit norm and its largest-modulus entry real.

    Derivatives, as JAX's: the eigenvalues' always (``dw = diag(vr⁻¹ dx vr)``, for distinct
    eigenvalues) when no eigenvectors are computed; with eigenvectors only after opting in
    with ``enable_eigvec_derivs=True`` (they are then the derivatives of LAPACK's normalized
    output, valid for distinct eigenvalues); otherwise differentiating raises
    :class:`~autodiff.errors.UnsupportedError` (a ``NotImplementedError``, JAX's type).
    ``implementation``/``use_magma`` (deprecated, warns as JAX) are accepted; LAPACK runs.

    >>> import numpy as np, autodiff as ad
    >>> from autodiff.lax import linalg
    >>> a = np.array([[2.0, 1.0], [0.0, 3.0]])
    >>> w, vl, vr = linalg.eig(a)
    >>> w
    array([2.+0.j, 3.+0.j])
    >>> vlh = vl.conj().T
    >>> bool(np.allclose(a @ vr, vr * w)), bool(np.allclose(vlh @ a, w[:, None] * vlh))
    (True, True)
    >>> def top(a):
    ...     w, = linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    ...     return w.real[1]
    >>> ad.grad(top)(a)
    array([[0., 0.],
           [1., 1.]])
    """
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use implementation=EigImplementation.MAGMA "
                      "instead.", DeprecationWarning, stacklevel=2)
    if implementation is not None and not isinstance(implementation, EigImplementation):
        raise ValueError(f"eig: implementation must be None or an EigImplementation, got "
                         f"{implementation!r}")
    x = _inexact(x)
    _square_check(x, "eig")
    outs = _eig_fn(bool(compute_left_eigenvectors), bool(compute_right_eigenvectors),
                   bool(enable_eigvec_derivs))(x)
    return list(outs)


# ----------------------------------------------------------------------------
# schur: scipy's (LAPACK's gees) over a batch
# ----------------------------------------------------------------------------

def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Schur decomposition ``x = Q U Qᴴ`` (batched): ``(U, Q)``, or ``U`` alone when
    ``compute_schur_vectors=False``. Real input gives the real Schur form (``U``
    quasi-upper-triangular, 2x2 blocks for complex pairs, ``Q`` orthogonal), complex input
    the complex one. LAPACK's ``gees`` through :func:`autodiff.scipy.linalg.schur` (scipy on
    the host), so differentiable where the eigenvalues are distinct.

    ``sort_eig_vals=True`` orders the eigenvalues that ``select_callable`` (scipy's
    ``sort``: a callable, or 'lhp', 'rhp', 'iuc', 'ouc') selects first; JAX leaves both
    arguments unused (its CPU kernel refuses to sort).

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> a = np.array([[1.0, 2.0], [0.5, 3.0]])
    >>> u, q = linalg.schur(a)
    >>> bool(np.allclose(q @ u @ q.T, a)), bool(abs(u[1, 0]) < 1e-14)
    (True, True)
    """
    from .api import vmap
    x = _inexact(x)
    _square_check(x, "schur")
    if sort_eig_vals and select_callable is None:
        raise ValueError("schur: sort_eig_vals=True needs select_callable (scipy's sort: a "
                         "callable or 'lhp', 'rhp', 'iuc', 'ouc')")
    sort = select_callable if sort_eig_vals else None
    sl = _scipy_linalg()

    def one(m):
        out = sl.schur(m, output="complex" if x.dtype.kind == "c" else "real", sort=sort)
        return out[0], out[1]

    sh = tuple(anp.shape(x))
    if len(sh) == 2:
        u, q = one(x)
    else:
        flat = anp.reshape(x, (-1,) + sh[-2:])
        u, q = vmap(one)(flat)
        u, q = anp.reshape(u, sh), anp.reshape(q, sh)
    return (u, q) if compute_schur_vectors else u


# ----------------------------------------------------------------------------
# qdwh: the QR-based dynamically weighted Halley iteration for the polar decomposition
# ----------------------------------------------------------------------------

def _qdwh_weights(eps, max_iterations):
    """The iteration's weights ``(a, b, c)`` from the lower bound ``l`` on the scaled
    smallest singular value (Nakatsukasa, Bai and Gygi 2010), until ``l`` reaches 1."""
    lo, tol = eps, 5.0 * eps
    out = []
    while lo + tol < 1 and len(out) < max_iterations:
        l2 = lo * lo
        dd = (4.0 * (1.0 / l2 - 1.0) / l2) ** (1.0 / 3.0)
        sqd = np.sqrt(1.0 + dd)
        a = sqd + np.sqrt(8.0 - 4.0 * dd + 8.0 * (2.0 - l2) / (l2 * sqd)) / 2.0
        b = (a - 1.0) ** 2 / 4.0
        c = a + b - 1.0
        lo = lo * (a + b * l2) / (1.0 + c * l2)
        out.append((a, b, c))
    return out


def _qdwh_qr_step(u, a, b, c):
    # u <- (b/c) u + (a - b/c)/√c · Q1 Q2ᴴ, [√c u; I] = [Q1; Q2] R
    m, n = anp.shape(u)
    q, _ = anp.linalg.qr(anp.concatenate([np.sqrt(c) * u, np.eye(n, dtype=u.dtype)], axis=0))
    e = b / c
    return e * u + (a - e) / np.sqrt(c) * anp.matmul(q[:m], anp.conj(anp.transpose(q[m:])))


def _qdwh_chol_step(u, a, b, c):
    # u <- (b/c) u + (a - b/c) u (I + c uᴴu)⁻¹, by the Cholesky factor of I + c uᴴu
    n = anp.shape(u)[1]
    gram = c * anp.matmul(anp.conj(anp.transpose(u)), u) + np.eye(n, dtype=u.dtype)
    low = anp.linalg.cholesky(gram)
    sl = _scipy_linalg()
    y = sl.solve_triangular(low, anp.conj(anp.transpose(u)), lower=True)
    z = anp.conj(anp.transpose(sl.solve_triangular(low, y, lower=True, trans=2)))
    e = b / c
    return e * u + (a - e) * z


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition ``x = u h`` of a full-rank ``M x N`` matrix (``M >= N``) by the
    QR-based dynamically weighted Halley iteration: ``(u, h, num_iters, is_converged)``,
    ``u`` with orthonormal columns, ``h`` Hermitian positive definite.

    As JAX's: ``x`` is scaled by ``1/√(‖x‖₁‖x‖∞)``; QR-based steps run while the weight
    ``c`` exceeds 100, Cholesky-based ones after; once the weights reach Halley's
    (3, 1, 3) the iteration goes on until ``‖u_k - u_{k-1}‖_F < (5 eps)^(1/3)`` or
    ``max_iterations`` (default 10) steps; one Newton-Schulz step refines ``u``.
    ``dynamic_shape=(m, n)``: the true shape of a zero-padded ``x`` (static here); the
    results are padded with zeros.
    ``is_hermitian`` is unused, as in JAX.

    >>> import numpy as np
    >>> from autodiff.lax import linalg
    >>> x = np.array([[2.0, 1.0], [0.0, 3.0], [1.0, 1.0]])
    >>> u, h, k, ok = linalg.qdwh(x)
    >>> bool(np.allclose(u @ h, x)), bool(np.allclose(u.T @ u, np.eye(2))), bool(ok)
    (True, True, True)
    """
    del is_hermitian
    x = _inexact(x)
    if anp.ndim(x) != 2:
        raise ValueError(f"qdwh: x must be a matrix, got shape {tuple(anp.shape(x))}")
    big_m, big_n = anp.shape(x)
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    if dynamic_shape is not None:
        if any(isinstance(d, Tracer) for d in dynamic_shape):
            raise UnsupportedError("qdwh: dynamic_shape must be concrete integers here",
                                   source=user_source())
        m, n = (int(d) for d in dynamic_shape)
        u, h, k, ok = qdwh(x[:m, :n], max_iterations=max_iterations, eps=eps)
        u = anp.pad(u, ((0, big_m - m), (0, big_n - n)))
        h = anp.pad(h, ((0, big_n - n), (0, big_n - n)))
        return u, h, k, ok
    dt = x.dtype
    if eps is None:
        eps = float(np.finfo(dt).eps)
    one = anp.max(anp.sum(anp.abs(x), axis=0))
    inf = anp.max(anp.sum(anp.abs(x), axis=1))
    scale = anp.where(one == 0, 1.0, 1.0 / anp.sqrt(anp.where(one == 0, 1.0, one * inf)))
    u = x * anp.astype(scale, dt)
    tol_norm = np.cbrt(5.0 * eps)
    weights = _qdwh_weights(eps, max_iterations)
    not_conv = anp.asarray(True)
    for a, b, c in weights:
        prev = u
        if c > 100:
            u = _qdwh_qr_step(u, a, b, c)
        else:
            u = _qdwh_chol_step(u, a, b, c)
            not_conv = anp.linalg.norm(u - prev) > tol_norm

    def cond(state):
        k, _, nc = state
        return anp.logical_and(nc, k < max_iterations)

    def body(state):
        k, u, _ = state
        new = _qdwh_chol_step(u, 3.0, 1.0, 3.0)
        return k + 1, new, anp.linalg.norm(new - u) > tol_norm

    k0 = np.int32(len(weights))
    k, u, not_conv = while_loop(cond, body, (k0, u, not_conv),
                                max_steps=max(max_iterations - len(weights), 0) or None)
    u = 1.5 * u - 0.5 * anp.matmul(u, anp.matmul(anp.conj(anp.transpose(u)), u))
    h = anp.matmul(anp.conj(anp.transpose(u)), x)
    h = (h + anp.conj(anp.transpose(h))) / 2
    return u, h, anp.astype(k, np.int32), anp.logical_not(not_conv)
