"""``scipy.linalg`` Cholesky and triangular solves, differentiable.

>>> import numpy as np
>>> from autodiff.scipy.linalg import cho_factor, cho_solve
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> cho_solve(cho_factor(a), np.array([1.0, 2.0]))
array([-0.125,  0.75 ])

The matrix functions (``expm``, ``sqrtm``, ``funm``, ``polar``, ...) are
``autodiff.scipy._matrix_functions``; the special matrices (``toeplitz``, ``hankel``,
``block_diag``, ...) ``autodiff.scipy._special_matrices``.
"""
import numpy as _np

from .. import numpy as _anp
from ..callback import pure_callback as _pure_callback
from ..core import Tracer as _Tracer, complex_dtype as _complex_dtype
from ..custom_derivatives import custom_jvp as _custom_jvp
from ..errors import UnsupportedError
from ..core import user_source
from ..numpy._base import npfunc as _npfunc, promote as _promote
from ..numpy._linalg_base import conj_transpose as _mH
from ..numpy.linalg import solve_triangular  # noqa: F401  (scipy's signature and defaults)
from ..numpy import linalg as _la
from ..shapes import ShapeDtypeStruct as _ShapeDtypeStruct
from ._linalg_base import (float_matrix as _float_matrix, inexact as _inexact,
                           eye_like as _eye_like, symmetric_from as _sym_from)
from ._matrix_functions import expm, expm_frechet, sqrtm, polar, PolarResult, funm  # noqa: F401
from ._special_matrices import (block_diag, toeplitz, circulant, hankel, companion,  # noqa: F401
                                fiedler, fiedler_companion, leslie, convolution_matrix, hilbert,
                                invhilbert, pascal, invpascal, hadamard, helmert, dft)


def cholesky(a, lower=False):
    """Cholesky factor with scipy's default ``lower=False`` (``a = UᴴU``; ``a = L Lᴴ`` with
    ``lower=True``), real symmetric or complex Hermitian positive definite ``a``.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cholesky
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]))
    array([[2.        , 1.        ],
           [0.        , 1.41421356]])
    """
    return _la.cholesky(a) if lower else _mH(_la.cholesky(a))


def cho_factor(a, lower=False):
    """``(c, lower)`` for :func:`cho_solve`; ``c`` holds the factor in its ``lower``
    (or upper) triangle and zeros in the other (scipy leaves arbitrary data there).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cho_factor
    >>> cho_factor(np.array([[4.0, 0.0], [0.0, 9.0]]), lower=True)[0]
    array([[2., 0.],
           [0., 3.]])
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b):
    """Solve ``a x = b`` given ``cho_factor(a)``: two triangular solves.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cho_factor, cho_solve
    >>> cho_solve(cho_factor(np.array([[2.0, 0.0], [0.0, 4.0]])), np.array([2.0, 2.0]))
    array([1. , 0.5])
    """
    c, lower = c_and_lower
    if lower:        # a = L Lᴴ: L y = b, then Lᴴ x = y
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, lower=True, trans=2)
    y = solve_triangular(c, b, lower=False, trans=2)    # a = Uᴴ U: Uᴴ y = b, then U x = y
    return solve_triangular(c, y, lower=False)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
          transposed=False):
    """``scipy.linalg.solve``: ``assume_a`` 'gen' (LU), 'sym'/'her' (the ``lower`` or upper
    triangle, symmetrized), 'pos' (Cholesky of that triangle) or 'diagonal'; ``transposed``
    solves ``aᵀ x = b``.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import solve
    >>> solve(np.array([[4.0, 9.0], [2.0, 3.0]]), np.array([6.0, 5.0]), assume_a="pos", lower=True)
    array([1., 1.])
    """
    return _solve(a, b, lower, assume_a or "gen", transposed)


@_npfunc(None)
def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``scipy.linalg.solve_banded``: ``a x = b`` for ``a`` given by its ``l`` lower and
    ``u`` upper diagonals in LAPACK's banded storage (``ab[u + i - j, j] = a[i, j]``),
    differentiable in ``ab`` and ``b`` (autograd's ``scipy.linalg`` has it). The band is
    spread into the dense matrix and solved by LU: O(n²) memory, for the moderate ``n``
    such code differentiates.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import solve_banded
    >>> ab = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])   # tridiagonal
    >>> solve_banded((1, 1), ab, np.array([5.0, 6.0, 5.0]))
    array([1., 1., 1.])
    """
    lo, up = (int(v) for v in l_and_u)
    ab = _inexact(ab)
    rows, n = _anp.shape(ab)
    if rows != lo + up + 1:
        raise ValueError(f"solve_banded: ab has {rows} rows for (l, u) = ({lo}, {up}); "
                         f"it needs l + u + 1 = {lo + up + 1}")
    a = None
    for k in range(-lo, up + 1):              # the diagonal k (k > 0: above the main one)
        band = ab[up - k, max(k, 0):n + min(k, 0)]
        d = _anp.diag(band, k)
        a = d if a is None else _anp.add(a, d)
    return _solve(a, b, False, "gen", False)


@_npfunc(None)
def _solve(a, b, lower, assume_a, transposed):
    a, b = _promote(_inexact(a), _inexact(b))
    if assume_a in ("diagonal",):
        d = _anp.diagonal(a, 0, -2, -1)
        return _anp.divide(b, d if _anp.ndim(b) == 1 else _anp.expand_dims(d, -1))
    if assume_a in ("sym", "symmetric"):          # complex symmetric: a = aᵀ
        a = _sym_from(a, lower)
    elif assume_a in ("her", "hermitian"):
        a = _sym_from(a, lower, hermitian=True)
    elif assume_a in ("pos", "positive definite"):
        return cho_solve((cholesky(_sym_from(a, lower, hermitian=True), lower=True), True), b)
    elif assume_a not in ("gen", "general"):
        raise ValueError(f"solve: assume_a={assume_a!r} is not supported (gen, sym, her, pos, diagonal)")
    if transposed:
        a = _anp.swapaxes(a, -1, -2)
    if _anp.ndim(b) == 1:
        return _anp.linalg.solve(a, b)
    return _anp.linalg.solve(a, b)


@_npfunc(None)
def inv(a, overwrite_a=False, check_finite=True):
    """Matrix inverse (``scipy.linalg.inv``)."""
    return _anp.linalg.inv(_inexact(a))


@_npfunc(None)
def det(a, overwrite_a=False, check_finite=True):
    """Determinant (``scipy.linalg.det``)."""
    return _anp.linalg.det(_inexact(a))


@_npfunc(None)
def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """Pseudo-inverse, singular values below ``max(atol, rtol·σ_max)`` dropped."""
    a = _inexact(a)
    if atol is None and rtol is None:
        return _anp.linalg.pinv(a)
    m, n = _anp.shape(a)[-2:]
    r = rtol if rtol is not None else (0.0 if atol else max(m, n) * float(_np.finfo(_anp.asarray(a).dtype).eps))
    s = _anp.linalg.svdvals(a)
    cut = _anp.maximum(atol or 0.0, _anp.multiply(_anp.max(s, axis=-1), r))
    return _pinv_cut(a, cut)


def _pinv_cut(a, cut):
    u, s, vt = _anp.linalg.svd(a, full_matrices=False)
    keep = _anp.greater(s, _anp.expand_dims(cut, -1) if _anp.ndim(cut) else cut)
    sinv = _anp.where(keep, _anp.divide(1.0, _anp.where(keep, s, 1.0)), 0.0)
    return _anp.matmul(_anp.multiply(_mH(vt), _anp.expand_dims(sinv, -2)), _mH(u))


def _lu_packed(a):
    """Partial-pivoting LU (LAPACK's getrf, unrolled over columns): the packed factors,
    the pivot rows ``piv`` (row j was swapped with piv[j]) and the final row order. The
    pivot is the entry of largest ``|re| + |im|`` (LAPACK's i?amax), the first on ties."""
    a = _inexact(a)
    sh = _anp.shape(a)
    m, n = sh[-2:]
    batch = sh[:-2]
    rows = _np.arange(m)
    cols = _np.arange(n)
    perm = _anp.broadcast_to(_np.arange(m), batch + (m,))
    cplx = _anp.asarray(a).dtype.kind == "c"
    pivs = []
    A = a
    for j in range(min(m, n)):
        col = A[..., :, j]
        mag = (_anp.add(_anp.abs(_anp.real(col)), _anp.abs(_anp.imag(col))) if cplx
               else _anp.abs(col))
        score = _anp.where(rows >= j, mag, -1.0)
        p = _anp.argmax(score, axis=-1)                       # (...,)
        pivs.append(p)
        pe = _anp.expand_dims(p, -1)
        is_j, is_p = rows == j, _anp.equal(rows, pe)          # (m,), (..., m)
        row_j = A[..., j, :]
        row_p = _anp.squeeze(_anp.take_along_axis(A, _anp.expand_dims(pe, -1), axis=-2), -2)
        A = _anp.where(_anp.expand_dims(is_j, -1), _anp.expand_dims(row_p, -2),
                       _anp.where(_anp.expand_dims(is_p, -1), _anp.expand_dims(row_j, -2), A))
        perm_j = perm[..., j]
        perm_p = _anp.squeeze(_anp.take_along_axis(perm, pe, axis=-1), -1)
        perm = _anp.where(is_j, _anp.expand_dims(perm_p, -1), _anp.where(is_p, _anp.expand_dims(perm_j, -1), perm))
        piv = A[..., j, j]
        safe = _anp.where(_anp.equal(piv, 0.0), 1.0, piv)
        mult = _anp.where(rows > j, _anp.divide(A[..., :, j], _anp.expand_dims(safe, -1)), 0.0)
        upd = _anp.where(cols > j, A[..., j, :], 0.0)                                  # (..., n)
        A = _anp.subtract(A, _anp.multiply(_anp.expand_dims(mult, -1), _anp.expand_dims(upd, -2)))
        A = _anp.where(_anp.logical_and(_anp.expand_dims(rows > j, -1), cols == j), _anp.expand_dims(mult, -1), A)
    piv = (_anp.stack(pivs, axis=-1) if pivs
           else _anp.zeros_like(a, dtype=_np.int64, shape=batch + (0,)))
    return A, _anp.astype(piv, _np.int32), perm


@_npfunc(None)
def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` as LAPACK's getrf and ``scipy.linalg.lu_factor``: unit-lower L and U
    packed in one matrix, row ``j`` swapped with ``piv[j]``; real or complex ``a``, and a
    stack ``(..., m, n)`` of them. Differentiable (the pivot order is locally constant).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import lu_factor
    >>> lu, piv = lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> lu, piv
    (array([[3.        , 4.        ],
           [0.33333333, 0.66666667]]), array([1, 1], dtype=int32))
    """
    lu, piv, _ = _lu_packed(a)
    return lu, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` (``trans`` 1: ``aᵀ x = b``, 2: ``aᴴ x = b``) from
    :func:`lu_factor`'s result. As ``scipy.linalg.lu_solve`` (>= 1.16): a 1-d ``b`` is one
    vector, else ``b`` is ``(..., n, k)``; the batch axes of ``lu`` ``(..., n, n)``, ``piv``
    ``(..., n)`` and ``b`` broadcast.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import lu_factor, lu_solve
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(a), np.array([5.0, 6.0]))
    array([-4. ,  4.5])
    """
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    return _lu_solve(lu_and_piv[0], lu_and_piv[1], b, {"N": 0, "T": 1, "C": 2}.get(trans, trans))


@_npfunc(None)
def _lu_solve(lu, piv, b, trans):
    lu, b = _promote(_inexact(lu), _inexact(b))
    piv = _anp.asarray(piv) if not isinstance(piv, _Tracer) else piv
    sl, sp, sb = tuple(_anp.shape(lu)), tuple(_anp.shape(piv)), tuple(_anp.shape(b))
    if len(sl) < 2 or sl[-1] != sl[-2]:
        raise ValueError(f"lu_solve: expected square LU factors (..., n, n), got shape {sl}")
    n = sl[-1]
    vec = len(sb) == 1
    if vec:
        b = _anp.expand_dims(b, -1)
        sb = sb + (1,)
    if len(sp) < 1 or sb[-2] != n:
        raise ValueError(f"Shapes of lu {sl} and b {sb[:-1] if vec else sb} are incompatible")
    batch = _np.broadcast_shapes(sl[:-2], sp[:-1], sb[:-2])
    lu = _anp.broadcast_to(lu, batch + sl[-2:])
    b = _anp.broadcast_to(b, batch + sb[-2:])
    # the final row order from the sequence of swaps (row j <-> row piv[..., j])
    idx = _np.arange(n)
    order = _anp.broadcast_to(idx, batch + (n,))
    piv = _anp.broadcast_to(piv, batch + sp[-1:])
    for j in range(sp[-1]):
        p = _anp.expand_dims(piv[..., j], -1)
        oj = _anp.expand_dims(order[..., j], -1)
        op = _anp.take_along_axis(order, p, axis=-1)
        order = _anp.where(idx == j, op, _anp.where(_anp.equal(idx, p), oj, order))
    L = _anp.add(_anp.tril(lu, -1), _np.eye(n))
    Um = _anp.triu(lu)
    if trans == 0:
        rows = _anp.broadcast_to(_anp.expand_dims(order, -1), _anp.shape(b))
        y = solve_triangular(L, _anp.take_along_axis(b, rows, axis=-2), lower=True, unit_diagonal=True)
        x = solve_triangular(Um, y, lower=False)
    else:
        y = solve_triangular(Um, b, lower=False, trans=trans)
        z = solve_triangular(L, y, lower=True, unit_diagonal=True, trans=trans)
        inv_order = _anp.argsort(order, axis=-1)
        rows = _anp.broadcast_to(_anp.expand_dims(inv_order, -1), _anp.shape(z))
        x = _anp.take_along_axis(z, rows, axis=-2)
    return _anp.squeeze(x, -1) if vec else x


@_npfunc(None)
def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """``a = P L U`` with partial pivoting (``scipy.linalg.lu``): ``(P, L, U)``, ``(P·L,
    U)`` with ``permute_l``, or the row indices instead of P with ``p_indices``."""
    packed, _, perm = _lu_packed(a)
    m, n = _anp.shape(packed)[-2:]
    k = min(m, n)
    L = _anp.add(_anp.tril(packed[..., :, :k], -1), _np.eye(m, k))
    Um = _anp.triu(packed[..., :k, :])
    if p_indices:
        return perm, L, Um
    # P[perm[i], i] = 1: row i of L U is row perm[i] of a
    # P is real (float64 for a complex128 ``a``), as scipy's and JAX's
    dt = _np.dtype(_anp.asarray(packed).dtype)
    dt = _np.finfo(dt).dtype if dt.kind == "c" else dt
    Pm = _anp.astype(_anp.equal(_anp.expand_dims(perm, -1), _np.arange(m)), dt)
    Pm = _anp.swapaxes(Pm, -1, -2)
    if permute_l:
        return _anp.matmul(Pm, L), Um
    return Pm, L, Um


def _geqp3_pivots_numpy(a):
    """geqp3's column order for one matrix without scipy: Householder QR that brings the
    column of largest remaining norm forward at each step (the first on ties, as LAPACK)."""
    a = _np.array(a, dtype=_np.result_type(a.dtype, _np.float64) if a.dtype.kind != "c"
                  else a.dtype)
    m, n = a.shape
    perm = _np.arange(n)
    for j in range(min(m, n)):
        norms = _np.linalg.norm(a[j:, j:], axis=0)
        k = j + int(_np.argmax(norms))
        if k != j:
            a[:, [j, k]] = a[:, [k, j]]
            perm[[j, k]] = perm[[k, j]]
        x = a[j:, j].copy()
        nx = _np.linalg.norm(x)
        if nx == 0:
            continue
        alpha = x[0]
        phase = alpha / abs(alpha) if alpha != 0 else 1.0
        v = x
        v[0] = alpha + phase * nx
        v = v / _np.linalg.norm(v)
        a[j:, j:] -= 2.0 * _np.outer(v, _np.conj(v) @ a[j:, j:])
    return perm


def _geqp3_pivots_host(a):
    """The 0-based int32 column pivots of LAPACK's geqp3 for each matrix of ``a`` (leading
    axes a batch): scipy's ``qr(pivoting=True)`` when scipy is installed."""
    a = _np.asarray(a)
    m, n = a.shape[-2:]
    flat = a.reshape((-1, m, n))
    out = _np.empty((flat.shape[0], n), _np.int32)
    try:
        import scipy.linalg          # scipy is optional: only the pivots of qr need it
    except ImportError:              # pragma: no cover - scipy is installed in the tests
        scipy = None
    for i, x in enumerate(flat):
        if scipy is not None and m and n:
            out[i] = scipy.linalg.qr(x, mode="r", pivoting=True)[1]
        else:
            out[i] = _geqp3_pivots_numpy(x) if m and n else _np.arange(n)
    return out.reshape(a.shape[:-2] + (n,))


def _pivoted_qr(a, mode):
    """``(q, r, p)`` (mode 'full' or 'economic') or ``(r, p)`` (mode 'r') with
    ``a[..., :, p] = q @ r``: the pivots from the host (no derivative), ``q, r`` the
    differentiable QR of the permuted columns, so the derivative is the QR's at the fixed
    permutation (JAX's)."""
    a = _inexact(a)
    shape = tuple(_anp.shape(a))
    if len(shape) < 2:
        raise ValueError(f"qr: expected a matrix (or a stack), got shape {shape}")
    spec = _ShapeDtypeStruct(shape[:-2] + shape[-1:], _np.int32)
    if isinstance(a, _Tracer):
        p = _pure_callback(_geqp3_pivots_host, spec, _anp.stop_gradient(a),
                           vmap_method="expand_dims")
    else:
        p = _geqp3_pivots_host(_np.asarray(a))
    ap = _anp.take_along_axis(a, _anp.expand_dims(p, -2), axis=-1)
    if mode == "r":
        return _full_r(ap), p
    q, r = _anp.linalg.qr(ap, mode="complete" if mode == "full" else "reduced")
    return q, r, p


def _full_r(a):
    """scipy's mode='r' R: ``(m, n)``, the economic R padded with zero rows."""
    r = _anp.linalg.qr(a, mode="r")
    m, k = _anp.shape(a)[-2], _anp.shape(r)[-2]
    if m == k:
        return r
    return _anp.pad(r, [(0, 0)] * (_anp.ndim(r) - 2) + [(0, m - k), (0, 0)])


@_npfunc(None)
def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``scipy.linalg.qr``: mode 'full' (complete Q), 'economic', or 'r' (a 1-tuple, as
    scipy, with R of ``a``'s shape as in 'full'); Householder reflections with LAPACK's signs.

    ``pivoting=True`` (LAPACK's ``geqp3``): ``(Q, R, P)`` (mode 'r': ``(R, P)``) with
    ``a[:, P] = Q @ R`` and ``|diag(R)|`` non-increasing, ``P`` int32. The pivots come from
    scipy on the host (under ``jit`` too; a numpy version of the same rule without scipy);
    Q and R are the QR of the permuted columns, differentiable at the fixed permutation.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import qr
    >>> a = np.array([[1.0, 3.0], [0.0, 4.0]])
    >>> q, r, p = qr(a, pivoting=True)
    >>> p, bool(np.allclose(q @ r, a[:, p]))
    (array([1, 0], dtype=int32), True)
    """
    if mode not in ("full", "economic", "r"):
        raise ValueError("Mode argument should be one of ['full', 'r', 'economic']")
    a = _inexact(a)
    if pivoting:
        return _pivoted_qr(a, mode)
    if mode == "r":
        return (_full_r(a),)
    q, r = _anp.linalg.qr(a, mode="complete" if mode == "full" else "reduced")
    return q, r


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """``scipy.linalg.svd`` (accurate composition when traced; see ``numpy.linalg.svd``)."""
    return _anp.linalg.svd(_inexact(a), full_matrices=full_matrices, compute_uv=compute_uv)


@_npfunc(None)
def svdvals(a, overwrite_a=False, check_finite=True):
    """Singular values, descending."""
    return _anp.linalg.svd(_inexact(a), compute_uv=False)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
         check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """``scipy.linalg.eigh`` for real symmetric or complex Hermitian ``a`` (reading its
    ``lower`` or upper triangle), optionally generalized with positive-definite ``b``
    (``type`` 1: a v = λ b v),
    with ``eigvals_only`` and ``subset_by_index``; ``subset_by_value`` needs concrete values."""
    return _eigh(a, b, lower, eigvals_only, type, subset_by_index, subset_by_value)


@_npfunc(None)
def _eigh(a, b, lower, eigvals_only, type, subset_by_index, subset_by_value):
    a = _inexact(a)
    if b is not None:
        a, b = _promote(a, _inexact(b))
    A = _sym_from(a, lower, hermitian=True)
    if b is not None:
        if type != 1:
            raise UnsupportedError("eigh: only type=1 generalized problems", source=user_source())
        # b = L Lᴴ: a v = λ b v is C y = λ y with C = L⁻¹ a L⁻ᴴ = L⁻¹ (L⁻¹ a)ᴴ, v = L⁻ᴴ y
        Lb = _anp.linalg.cholesky(_sym_from(b, lower, hermitian=True))
        C = solve_triangular(Lb, _mH(solve_triangular(Lb, A, lower=True)), lower=True)
        w, y = _anp.linalg.eigh(C)
        v = solve_triangular(Lb, y, lower=True, trans=2)
    else:
        w, v = _anp.linalg.eigh(A)
    if subset_by_index is not None:
        lo, hi = int(subset_by_index[0]), int(subset_by_index[1])
        w, v = w[..., lo:hi + 1], v[..., :, lo:hi + 1]
    if subset_by_value is not None:
        wv = _np.asarray(w.concrete_value("eigh subset_by_value") if isinstance(w, _Tracer) else w)
        sel = _np.flatnonzero((wv > subset_by_value[0]) & (wv <= subset_by_value[1]))
        w, v = _anp.take(w, sel, axis=-1), _anp.take(v, sel, axis=-1)
    return w if eigvals_only else (w, v)


@_npfunc(None)
def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None, check_finite=True, tol=0.0,
                     lapack_driver="auto"):
    """Eigen-decomposition of the symmetric tridiagonal matrix with diagonal ``d`` and
    off-diagonal ``e``; ``select`` 'a' or 'i' (``select_range`` = index range)."""
    d, e = _promote(_float_matrix(d), _float_matrix(e))
    n = _anp.shape(d)[0]
    T = _anp.add(_anp.add(_anp.diag(d), _anp.diag(e, 1)), _anp.diag(e, -1))
    w, v = _anp.linalg.eigh(T)
    if select == "i":
        lo, hi = int(select_range[0]), int(select_range[1])
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    elif select != "a":
        raise UnsupportedError("eigh_tridiagonal: select 'a' or 'i'", source=user_source())
    del n
    return w if eigvals_only else (w, v)


@_npfunc(None)
def hessenberg(a, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form ``H = Qᴴ a Q`` (``scipy.linalg.hessenberg``) by LAPACK's
    elementary reflectors ``I - τ v vᴴ`` (its ``?larfg`` rule: a real subdiagonal, of sign
    opposite to the pivot's real part), so H and Q match scipy's, for real and complex
    ``a`` and stacks of them; ``calc_q`` returns ``(H, Q)``. Differentiable.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import hessenberg
    >>> a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 3.0, 1.0]])
    >>> h, q = hessenberg(a, calc_q=True)
    >>> bool(np.allclose(q @ h @ q.T, a)), bool(h[2, 0] == 0.0)
    (True, True)
    """
    a = _inexact(a)
    n = _anp.shape(a)[-1]
    cplx = _anp.asarray(a).dtype.kind == "c"
    H = a
    Q = _eye_like(a)
    rows = _np.arange(n)
    mm = _anp.matmul
    # complex: LAPACK's last reflector (n-2) only makes the last subdiagonal entry real;
    # scipy returns a matrix of size <= 2 as it is
    for j in range(n - 1 if cplx and n > 2 else n - 2):
        x = _anp.where(rows > j, H[..., :, j], 0.0)
        alpha = H[..., j + 1, j]
        ar = _anp.real(alpha) if cplx else alpha
        nrm = _anp.sqrt(_anp.sum(_anp.real(_anp.multiply(x, _anp.conj(x))), axis=-1))
        sgn = _anp.where(_anp.greater_equal(ar, 0.0), 1.0, -1.0)
        beta = _anp.multiply(_anp.multiply(sgn, nrm), -1.0)            # real
        below = _anp.sum(_anp.real(_anp.multiply(_anp.where(rows > j + 1, x, 0.0),
                                                 _anp.conj(x))), axis=-1)
        act = _anp.greater(below, 0.0)
        if cplx:        # LAPACK reflects a complex alpha to a real beta even with x = 0
            act = _anp.logical_or(act, _anp.not_equal(_anp.imag(alpha), 0.0))
        # v = (1 at j+1, x[j+2:] / (alpha - beta)), tau = (beta - alpha) / beta
        den = _anp.where(act, _anp.subtract(alpha, beta), 1.0)
        v = _anp.where(rows > j + 1, _anp.divide(x, _anp.expand_dims(den, -1)), _anp.where(rows == j + 1, 1.0, 0.0))
        tau = _anp.where(act, _anp.divide(_anp.subtract(beta, alpha),
                                          _anp.where(act, beta, 1.0)), 0.0)
        t = _anp.expand_dims(_anp.expand_dims(tau, -1), -1)
        vc = _anp.expand_dims(v, -1)
        vh = _anp.conj(_anp.swapaxes(vc, -1, -2))
        H = _anp.subtract(H, _anp.multiply(_anp.conj(t), mm(vc, mm(vh, H))))   # H(j)ᴴ H
        H = _anp.subtract(H, _anp.multiply(t, mm(mm(H, vc), vh)))             # · H(j)
        Q = _anp.subtract(Q, _anp.multiply(t, mm(mm(Q, vc), vh)))
    H = _anp.where(_np.arange(n)[:, None] - _np.arange(n)[None, :] > 1, 0.0, H)
    return (H, Q) if calc_q else H


_SYLVESTER_METHODS = ("schur", "eigen")


@_npfunc(None)
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """Solve the Sylvester equation ``A X + X B = C`` (JAX's
    ``jax.scipy.linalg.solve_sylvester``): ``A`` ``(..., m, m)``, ``B`` ``(..., n, n)``,
    ``C`` ``(..., m, n)``, real or complex, the batch axes broadcast.

    ``method`` is JAX's 'schur' (Bartels-Stewart) or 'eigen' (eigendecompositions); both
    name the same solution, which is computed here for either from the Kronecker system
    ``(I⊗A + Bᵀ⊗I) vec X = vec C`` (dense: for the small matrices this is meant for),
    differentiable in A, B and C. As JAX's, the result is all NaN where some sum
    ``λ_i(A) + μ_j(B)`` of eigenvalues is smaller than ``tol`` in absolute value (the
    equation is singular or nearly so there).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import solve_sylvester
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> B = np.array([[5.0, 6.0], [7.0, 8.0]])
    >>> np.round(solve_sylvester(A, B, A + B), 12)
    array([[1., 0.],
           [0., 1.]])
    """
    if method not in _SYLVESTER_METHODS:
        raise ValueError(f"Unrecognized method {method!r}: the two valid methods are "
                         "'schur' and 'eigen'")
    A, B, C = _promote(_inexact(A), _inexact(B), _inexact(C))
    sa, sb, sc = (tuple(_anp.shape(X)) for X in (A, B, C))
    if len(sc) < 2 or len(sa) < 2 or len(sb) < 2:
        raise ValueError(f"Incompatible shapes for Sylvester equation: A: {sa}, B: {sb}, C: {sc}")
    m, n = sc[-2:]
    if sa[-2:] != (m, m) or sb[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation: A: {sa}, B: {sb}, C: {sc}")
    batch = _np.broadcast_shapes(sa[:-2], sb[:-2], sc[:-2])
    A = _anp.broadcast_to(A, batch + (m, m))
    B = _anp.broadcast_to(B, batch + (n, n))
    C = _anp.broadcast_to(C, batch + (m, n))
    if m == 0 or n == 0:
        return C
    # K[(j, i), (l, k)] = δ_jl A_ik + B_lj δ_ik: the (n·m, n·m) matrix on column-major vec X
    eye_n = _np.eye(n)[:, None, :, None]
    eye_m = _np.eye(m)[None, :, None, :]
    K = _anp.add(_anp.multiply(eye_n, _anp.expand_dims(_anp.expand_dims(A, -3), -2)),
                 _anp.multiply(_anp.expand_dims(_anp.expand_dims(_anp.swapaxes(B, -1, -2), -2), -1), eye_m))
    K = _anp.reshape(K, batch + (n * m, n * m))
    # JAX's tol: NaN where the smallest |λ_i(A) + μ_j(B)| is below tol (no derivative);
    # such a K is replaced by the identity first (an exactly singular one would raise)
    la = _anp.linalg.eigvals(_anp.stop_gradient(A))
    lb = _anp.linalg.eigvals(_anp.stop_gradient(B))
    gap = _anp.min(_anp.abs(_anp.add(_anp.expand_dims(la, -1), _anp.expand_dims(lb, -2))), axis=(-2, -1))
    bad = _anp.expand_dims(_anp.expand_dims(_anp.less(gap, tol), -1), -1)
    K = _anp.where(bad, _np.eye(n * m), K)
    rhs = _anp.reshape(_anp.swapaxes(C, -1, -2), batch + (n * m, 1))
    x = _anp.linalg.solve(K, rhs)
    X = _anp.swapaxes(_anp.reshape(x, batch + (n, m)), -1, -2)
    return _anp.where(bad, _np.nan, X)


@_npfunc(None)
def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """``(c·Q, R)`` (``mode`` 'right') or ``(Q·c, R)`` ('left') with the economic QR of ``a``
    (``scipy.linalg.qr_multiply``); a 1-d ``c`` is a row (right) or column (left).
    ``pivoting=True``: ``(c·Q, R, P)`` with the column-pivoted QR ``a[:, P] = Q R`` (see
    :func:`qr`).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import qr_multiply
    >>> a = np.array([[1.0, 3.0], [0.0, 4.0], [0.0, 0.0]])
    >>> cq, r, p = qr_multiply(a, np.eye(3), pivoting=True)
    >>> p, cq.shape, r.shape
    (array([1, 0], dtype=int32), (3, 2), (2, 2))
    """
    if mode not in ("right", "left"):
        raise ValueError(f"Mode argument can only be 'left' or 'right' but not '{mode}'")
    a, c = _promote(_inexact(a), _inexact(c))
    if pivoting:
        q, r, p = _pivoted_qr(a, "economic")
    else:
        q, r = _anp.linalg.qr(a)
    if conjugate:
        q = _anp.conj(q)
    cq = _anp.matmul(c, q) if mode == "right" else _anp.matmul(q, c)
    return (cq, r, p) if pivoting else (cq, r)


# ----------------------------------------------------------------------------
# real Schur decomposition: LAPACK on the host, its derivative from the invariance
# ----------------------------------------------------------------------------

def _schur_dtype(dt, output):
    """The dtype of schur's results: the input's for output='real', else its complex one."""
    dt = _np.dtype(dt)
    return dt if output == "real" else _complex_dtype(dt)


def _schur_host(a, sort, output="real"):
    import scipy.linalg          # scipy is optional: only schur's host call needs it
    a = _np.asarray(a)
    if sort is None:
        t, z = scipy.linalg.schur(a, output=output)
        sdim = 0
    else:
        t, z, sdim = scipy.linalg.schur(a, output=output, sort=sort)
    dt = _schur_dtype(a.dtype, output)
    return t.astype(dt, copy=False), z.astype(dt, copy=False), _np.int64(sdim)


_SCHUR_FNS = {}


def _schur_fn(sort, output="real"):
    """The differentiable ``a -> (T, Z)`` for one ``sort`` and ``output`` (a custom_jvp
    around the host call; one per ``sort`` so jit's caches see the same function each time)."""
    key = (sort if sort is None or isinstance(sort, str) else id(sort), output)
    fn = _SCHUR_FNS.get(key)
    if fn is not None and fn[0] is sort:
        return fn[1]

    def host(a):
        t, z, _ = _schur_host(a, sort, output)
        return _np.stack([t, z])

    @_custom_jvp
    def tz(a):
        # one stacked result rather than two: jit's object-mode call rejects a result
        # that the program leaves unused (numba's with-lifting: "Invalid type annotation
        # on non-outgoing variables"), and schur(a)[0] alone is the common use
        both = _pure_callback(host, _ShapeDtypeStruct((2,) + tuple(_anp.shape(a)),
                                                    _schur_dtype(_anp.asarray(a).dtype, output)), a)
        return both[0], both[1]

    @tz.defjvp
    def tz_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        T, Z = tz(a)
        if output == "complex":
            return (T, Z), _schur_tangent_complex(T, Z, _anp.astype(da, _anp.asarray(T).dtype))
        return (T, Z), _schur_tangent(T, Z, da)
    _SCHUR_FNS[key] = (sort, tz)
    return tz


def _schur_tangent(T, Z, dA):
    """``(dT, dZ)`` of ``A = Z T Zᵀ`` in direction ``dA``.

    With ``B = Zᵀ dA Z`` and the antisymmetric ``K = Zᵀ dZ``, differentiating gives
    ``dT = B - (K T - T K)``. ``K`` has n(n-1)/2 unknowns (its strict lower triangle);
    as many conditions fix it: ``dT`` keeps ``T``'s zeros below the diagonal, and where
    ``T`` has a 2x2 block (a complex pair) LAPACK's standard form keeps the block's two
    diagonal entries equal, so ``dT_kk = dT_k+1,k+1`` replaces the condition on its
    subdiagonal entry. The linear system is solved densely (meant for the matrix sizes
    Schur forms are used at); it is singular where eigenvalues coincide, where the
    derivative of the Schur form is not defined."""
    n = _anp.shape(T)[-1]
    I, J = _np.tril_indices(n, -1)
    m = len(I)
    dt = _anp.asarray(T).dtype
    if m == 0:
        return dA, _anp.zeros_like(Z)
    E = _np.zeros((m, n, n), dt)
    E[_np.arange(m), I, J] = 1.0
    E[_np.arange(m), J, I] = -1.0
    B = _anp.matmul(_anp.matmul(_anp.transpose(Z), dA), Z)

    def comm(K):            # K T - T K, for a stack of K
        return _anp.subtract(_anp.matmul(K, T), _anp.matmul(T, K))
    MT = comm(E)                                               # (m, n, n): the map on the basis
    blk = _anp.logical_and(_np.equal(I, J + 1), _anp.not_equal(T[I, J], 0.0))
    r_low = _anp.transpose(MT[:, I, J])                         # rows: M(K)_ij = B_ij
    r_blk = _anp.transpose(_anp.subtract(MT[:, J, J], MT[:, I, I]))   # rows: M_jj - M_ii = B_jj - B_ii
    S = _anp.where(_anp.expand_dims(blk, -1), r_blk, r_low)
    rhs = _anp.where(blk, _anp.subtract(B[J, J], B[I, I]), B[I, J])
    lk = _anp.linalg.solve(S, rhs)
    # K = Σ_p l_p E_p as a (m,) @ (m, n²) product: the Numba backend's dot_general of a 1-d
    # operand with the leading axis of a 3-d one returns wrong values (reported; the
    # interpreter is right), a 2-d operand is lowered correctly
    K = _anp.reshape(_anp.matmul(lk, E.reshape(m, n * n)), (n, n))
    dZ = _anp.matmul(Z, K)
    dT = _anp.subtract(B, comm(K))
    low = _np.zeros((n, n), bool)
    low[I, J] = True
    sub = _np.zeros((n, n), bool)
    sub[_np.arange(1, n), _np.arange(n - 1)] = True
    keep = _anp.logical_or(_np.logical_not(low), _anp.logical_and(sub, _anp.not_equal(T, 0.0)))
    return _anp.where(keep, dT, 0.0), dZ


def _schur_tangent_complex(T, Z, dA):
    """``(dT, dZ)`` of the complex Schur form ``A = Z T Zᴴ`` (T upper triangular, Z
    unitary) in direction ``dA``.

    With ``B = Zᴴ dA Z`` and the anti-Hermitian ``K = Zᴴ dZ``: ``dT = B - (K T - T K)``.
    Write ``K = L - Lᴴ + D`` with L strictly lower and D imaginary diagonal. Below the
    diagonal ``Lᴴ T``, ``T Lᴴ`` and D's terms vanish (T is upper triangular), so keeping dT
    upper triangular is the C-linear system ``(L T - T L)_ij = B_ij`` (i > j) in L's
    n(n-1)/2 entries, solved densely (singular where eigenvalues coincide). D is a gauge
    (each Schur vector's phase, which LAPACK does not fix): it is taken as zero, so only
    functions invariant under ``Z -> Z·diag(e^{iφ})``, ``T -> diag(e^{-iφ}) T diag(e^{iφ})``
    (T's diagonal, ``|T_ij|``, ``Z T Zᴴ``, projectors) have the derivative of scipy's output."""
    n = _anp.shape(T)[-1]
    I, J = _np.tril_indices(n, -1)
    m = len(I)
    dt = _anp.asarray(T).dtype
    B = _anp.matmul(_anp.matmul(_mH(Z), dA), Z)
    if m == 0:
        return B, _anp.zeros_like(Z)
    E = _np.zeros((m, n, n), dt)
    E[_np.arange(m), I, J] = 1.0

    def comm(K):
        return _anp.subtract(_anp.matmul(K, T), _anp.matmul(T, K))
    S = _anp.transpose(comm(E)[:, I, J])
    lk = _anp.linalg.solve(S, B[I, J])
    L = _anp.reshape(_anp.matmul(lk, E.reshape(m, n * n)), (n, n))
    K = _anp.subtract(L, _mH(L))
    dT = _anp.subtract(B, comm(K))
    return _anp.triu(dT), _anp.matmul(Z, K)


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    """Real Schur decomposition ``a = Z T Zᵀ`` (``scipy.linalg.schur``): ``T`` quasi-upper
    triangular (1x1 blocks for real eigenvalues, 2x2 blocks in LAPACK's standard form for
    complex pairs), ``Z`` orthogonal. Computed by LAPACK (through scipy) on the host in
    every mode, under ``jit`` too; ``sort`` ('lhp', 'rhp', 'iuc', 'ouc' or a callable
    ``(re, im) -> bool``) also returns ``sdim``.

    Differentiable (forward and reverse, any order) where the eigenvalues of ``a`` are
    distinct; where they coincide the Schur vectors are not differentiable and the
    derivative is non-finite (or ``LinAlgError`` eagerly).

    ``output='complex'`` (real or complex ``a``): ``a = Z T Zᴴ`` with T upper triangular
    and Z unitary, complex. Each Schur vector's phase is a gauge (LAPACK's, not fixed by
    any rule): the derivative takes ``Zᴴ dZ`` with a zero diagonal, which is the
    derivative of scipy's output for every function invariant under that phase (T's
    diagonal, ``|T|``, ``Z T Zᴴ``, ``Z_k Z_kᴴ``).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import schur
    >>> a = np.array([[1.0, 2.0], [0.5, 3.0]])
    >>> t, z = schur(a)
    >>> bool(np.allclose(z @ t @ z.T, a)), bool(abs(t[1, 0]) < 1e-15)
    (True, True)
    """
    if output in ("r", "real"):
        output = "real"
    elif output in ("c", "complex"):
        output = "complex"
    else:
        raise ValueError("argument must be 'real', or 'complex'")
    a = _inexact(a)
    if output == "real" and _anp.asarray(a).dtype.kind == "c":
        output = "complex"             # scipy: a complex input always gets the complex form
    if _anp.ndim(a) != 2 or _anp.shape(a)[0] != _anp.shape(a)[1]:
        raise ValueError("expected square matrix")
    if not isinstance(a, _Tracer):
        t, z, sdim = _schur_host(_np.asarray(a), sort, output)
        return (t, z) if sort is None else (t, z, int(sdim))
    t, z = _schur_fn(sort, output)(a)
    if sort is None:
        return t, z
    # the count is an integer: no derivative (stop_gradient keeps jvp from asking for one)
    sdim = _pure_callback(lambda v: _schur_host(v, sort, output)[2], _ShapeDtypeStruct((), _np.int64),
                         _anp.stop_gradient(a))
    return t, z, sdim


@_npfunc(None)
def rsf2csf(T, Z, check_finite=True):
    """Real Schur form ``(T, Z)`` to the complex one (``scipy.linalg.rsf2csf``): each 2x2
    block of T (a complex pair) is triangularized by a complex Givens rotation G built
    from one eigenvalue of the block, ``T -> G T Gᴴ``, ``Z -> Z Gᴴ``, exactly scipy's steps
    (the same rows and columns updated, blocks found by scipy's test
    ``|T[m, m-1]| > ε(|T[m-1, m-1]| + |T[m, m]|)``, the subdiagonal zeroed). The eigenvalue
    is the one LAPACK's complex ``geev`` lists first, as scipy uses: the root of the block
    farther from ``T[m, m]`` (the one with positive imaginary part on a standardized real
    block), so any square T, not only a Schur form, gets scipy's result. Stacks
    ``(..., n, n)`` of T and Z broadcast (scipy >= 1.16, JAX). A traced composition (no
    Python branch on values: a step that is not a block applies the identity), so it is
    jittable and differentiable in T and Z, any order.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import schur, rsf2csf
    >>> a = np.array([[0.0, -2.0], [1.0, 0.0]])
    >>> t, z = rsf2csf(*schur(a))
    >>> np.round(np.diag(t), 6)
    array([0.+1.414214j, 0.-1.414214j])
    """
    T, Z = _inexact(T), _inexact(Z)
    for name, X in (("Z", Z), ("T", T)):
        if _anp.ndim(X) < 2 or _anp.shape(X)[-1] != _anp.shape(X)[-2]:
            raise ValueError(f"Input '{name}' must be square.")
    if _anp.shape(T)[-1] != _anp.shape(Z)[-1]:
        raise ValueError(f"Input array shapes must match: Z: {_anp.shape(Z)} vs. "
                         f"T: {_anp.shape(T)}")
    # scipy's _commonType(Z, T, complex64): complex64 only when both are single precision
    single = all(_anp.asarray(X).dtype in (_np.float32, _np.complex64) for X in (T, Z))
    dt = _np.dtype(_np.complex64 if single else _np.complex128)
    n = _anp.shape(T)[-1]
    batch = _np.broadcast_shapes(tuple(_anp.shape(T))[:-2], tuple(_anp.shape(Z))[:-2])
    T = _anp.broadcast_to(_anp.astype(T, dt), batch + (n, n))
    Z = _anp.broadcast_to(_anp.astype(Z, dt), batch + (n, n))
    eps = float(_np.finfo(float).eps)
    rows = _np.arange(n)[:, None]
    cols = _np.arange(n)[None, :]

    def bc(v):              # a batch of scalars against a batch of matrices
        return _anp.expand_dims(_anp.expand_dims(v, -1), -1)
    for m in range(n - 1, 0, -1):
        a, b = T[..., m - 1, m - 1], T[..., m - 1, m]
        c, d = T[..., m, m - 1], T[..., m, m]
        blk = _anp.greater(_anp.abs(c), eps * _anp.add(_anp.abs(a), _anp.abs(d)))
        # mu = LAPACK's first eigenvalue of the block minus d. The eigenvalues are
        # d + x ± q, x = (a-d)/2, q² = x² + bc; zlahqr's Wilkinson shift deflates the root
        # nearer d last, so the first is d + x + q with q on x's side (Re(x̄ q) >= 0); at a
        # tie (a standardized real block: x = 0) the principal root, Im q >= 0 on the
        # imaginary axis. b = 0: zgebal's permutation lists d first, mu = 0.
        x = _anp.multiply(_anp.subtract(a, d), 0.5)
        q = _anp.sqrt(_anp.add(_anp.multiply(x, x), _anp.multiply(b, c)))
        side = _anp.real(_anp.multiply(_anp.conj(x), q))
        flip = _anp.logical_or(
            _anp.less(side, 0.0),
            _anp.logical_and(_anp.logical_and(_anp.equal(side, 0.0), _anp.equal(_anp.real(q), 0.0)),
                             _anp.less(_anp.imag(q), 0.0)))
        q = _anp.where(flip, _anp.negative(q), q)
        mu = _anp.where(_anp.equal(b, 0.0), 0.0, _anp.add(x, q))
        r = _anp.sqrt(_anp.add(_anp.real(_anp.multiply(mu, _anp.conj(mu))),
                               _anp.real(_anp.multiply(c, _anp.conj(c)))))
        ok = _anp.logical_and(blk, _anp.greater(r, 0.0))
        r = _anp.where(ok, r, 1.0)
        cc = _anp.where(ok, _anp.divide(mu, r), 1.0)
        ss = _anp.where(ok, _anp.divide(c, r), 0.0)
        # G: the identity but for the block [[c̄, s], [-s, c]] at rows/columns m-1, m
        e = [_np.zeros((n, n), dt) for _ in range(4)]
        for k, (i0, j0) in enumerate(((m - 1, m - 1), (m - 1, m), (m, m - 1), (m, m))):
            e[k][i0, j0] = 1.0
        rest = _np.eye(n, dtype=dt) - e[0] - e[3]
        G = _anp.add(_anp.add(rest, _anp.multiply(e[0], bc(_anp.conj(cc)))), _anp.add(_anp.multiply(e[1] - e[2], bc(ss)), _anp.multiply(e[3], bc(cc))))
        Gh = _mH(G)
        T = _anp.where(cols >= m - 1, _anp.matmul(G, T), T)           # rows m-1, m; columns m-1:
        T = _anp.where(rows <= m, _anp.matmul(T, Gh), T)              # columns m-1, m; rows :m+1
        Z = _anp.matmul(Z, Gh)
        T = _anp.where(_np.logical_and(rows == m, cols == m - 1), 0.0, T)
    return T, Z
