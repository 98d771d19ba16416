"""The matrix factorizations of ``autodiff.numpy.linalg``: ``cholesky``, ``eigh``, ``svd`` and ``qr``
(primitives: LAPACK in jitted kernels, derivatives of any order), ``eig`` by LAPACK on the host with the standard derivative for distinct eigenvalues.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.linalg.svd(np.diag([3.0, 4.0]))[1]
array([4., 3.])
>>> ad.grad(lambda a: anp.sum(anp.linalg.svd(a)[1]))(np.diag([3.0, 4.0]))
array([[1., 0.],
       [0., 1.]])
"""
from collections import namedtuple

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..callback import pure_callback
from ..core import Tracer
from ..core import complex_dtype as _complex_dtype
from ..custom_derivatives import custom_jvp as _custom_jvp
from ..shapes import ShapeDtypeStruct
from ._base import npfunc, shape_of, dtype_of
from ._base import as_float as _float
from ._linalg_base import (check_square as _square, is_complex as _is_complex,
                           conj_transpose as _mH, real_part_dtype as _real_dtype, eye as _eye)


@npfunc(np.linalg.cholesky)
def cholesky(a, upper=False, *, symmetrize_input=False):
    """``numpy.linalg.cholesky``: numpy's rule by default (the lower triangle is read,
    ``upper=True`` the upper one). JAX's ``symmetrize_input=True`` (JAX's default) factors
    ``(a + aᴴ) / 2`` instead, so the derivative reaches both triangles.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.cholesky(np.array([[4.0, 0.0], [4.0, 9.0]]), symmetrize_input=True)
    array([[2.        , 0.        ],
           [1.        , 2.82842712]])
    """
    a = _float(a)
    _square(a, "cholesky")
    if symmetrize_input:
        a = anp.divide(anp.add(a, _mH(a)), 2)
    if upper:
        # numpy reads the upper triangle for upper=True: it is the lower triangle of aᵀ,
        # and U = Lᵀ where L L ᵀ = aᵀ (= a for the symmetric input numpy assumes)
        return anp.swapaxes(P.cholesky_p.bind(anp.swapaxes(a, -1, -2)), -1, -2)
    return P.cholesky_p.bind(a)


@npfunc(np.linalg.eigh)
def eigh(a, UPLO="L", *, symmetrize_input=False):
    """``numpy.linalg.eigh`` (the lower triangle by default, as numpy). JAX's
    ``symmetrize_input=True`` computes it for ``(a + aᴴ) / 2`` instead, whose derivative
    reaches both triangles (JAX's default; ours follows numpy)."""
    a = _float(a)
    _square(a, "eigh")
    if symmetrize_input:
        a = anp.divide(anp.add(a, anp.conj(anp.swapaxes(a, -1, -2))), 2)
    uplo = UPLO.upper() if isinstance(UPLO, str) else "L" if UPLO is None else UPLO
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    if uplo == "U":
        # the upper triangle of a Hermitian a is the lower triangle of aᴴ (aᵀ when real);
        # upper=True runs LAPACK's 'U' path on it, so the eigenvectors carry numpy's
        # eigh(a, 'U') signs and their derivatives match numpy's (issue 33)
        w, v = P.eigh_p.bind(P.mH(a), upper=True)
    else:
        w, v = P.eigh_p.bind(a)
    return EighResult(w, v)


EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])


@npfunc(np.linalg.eigvalsh)
def eigvalsh(a, UPLO="L", *, symmetrize_input=False):
    return eigh(a, UPLO, symmetrize_input=symmetrize_input)[0]


# ----------------------------------------------------------------------------
# svd and qr: primitives (LAPACK gesdd / geqrf + orgqr on every backend)
# ----------------------------------------------------------------------------

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def svd_thin(a):
    """The thin SVD ``(u, s, vt)`` of ``a`` (``svd_p``: LAPACK's signs, derivatives of any order)."""
    u, s, vt = P.svd_p.bind(a, compute_uv=True)
    return u, s, vt


@npfunc(None)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``. Concrete input: numpy's LAPACK. Traced: the ``svd`` primitive
    (LAPACK gesdd in jitted kernels too, cuSOLVER under CuPy), with the standard derivative
    for distinct singular values; at degenerate ones (σ_i = σ_j, or σ = 0) the singular
    values' derivative is exact and the vectors' takes the degenerate terms as zero.
    Singular vectors are unique up to sign only: in every mode each column of U has its
    largest-magnitude entry positive (so concrete and traced results agree).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda a: anp.linalg.svd(a, compute_uv=False)[0])(np.diag([3.0, 1.0]))
    array([[1., 0.],
           [0., 0.]])
    """
    if not isinstance(a, Tracer):
        if not compute_uv:
            return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
        return SVDResult(*_canonical_signs(u, s, vt))
    a = _float(a)
    m, n = shape_of(a)[-2:]
    if m == 0 or n == 0:          # numpy's: no singular values, identity complements
        batch, dt = shape_of(a)[:-2], dtype_of(a)
        s = P.full(batch + (0,), 0, _real_dtype(dt))
        if not compute_uv:
            return s
        u = _eye(m, dt, batch) if full_matrices else P.full(batch + (m, 0), 0, dt)
        vt = _eye(n, dt, batch) if full_matrices else P.full(batch + (0, n), 0, dt)
        return SVDResult(u, s, vt)
    if hermitian:
        w, v = eigh(a)
        order = anp.flip(anp.argsort(anp.absolute(w), axis=-1), axis=-1)
        w = anp.take_along_axis(w, order, axis=-1)
        v = anp.take_along_axis(v, anp.expand_dims(order, -2), axis=-1)
        s = anp.absolute(w)
        if not compute_uv:
            return s
        vt = anp.multiply(_mH(v), anp.expand_dims(P.select(P.lt(w, P.full_like(w, 0)),
                                                    P.full_like(w, -1), P.full_like(w, 1)), -1))
        return SVDResult(v, s, vt)
    if not compute_uv:
        return P.svd_p.bind(a, compute_uv=False)[0]
    u, s, vt = svd_thin(a)
    u, s, vt = _canonical_signs(u, s, vt)
    if full_matrices and m != n:
        # the complement of the range comes from the complete QR
        if m > n:
            qf = qr(a, mode="complete")[0]
            u = anp.concatenate([u, anp.getitem(qf, (Ellipsis, slice(None), slice(n, m)))], axis=-1)
        else:
            qf = qr(_mH(a), mode="complete")[0]
            vt = anp.concatenate([vt, _mH(anp.getitem(qf, (Ellipsis, slice(None), slice(m, n))))], axis=-2)
    return SVDResult(*_canonical_signs(u, s, vt))


def _canonical_signs(u, s, vt):
    """Singular vectors are unique up to a sign per pair (u_i, v_i), a phase for complex
    ones: fix it so that each column of U has its largest-magnitude entry (the first of
    ties) real and positive. Concrete (LAPACK) and traced results then agree. For real
    input the flip is piecewise constant (no derivative); for complex input the phase
    ``conj(u_jk)/|u_jk|`` is differentiated, so the derivative is that of this output."""
    cplx = _is_complex(u)
    k = shape_of(s)[-1]
    if k == 0:                    # an empty matrix: nothing to fix
        return u, s, vt

    def factor(top):
        if cplx:
            mag = anp.absolute(top)
            pos = P.gt(mag, P.full_like(mag, 0)) if isinstance(mag, Tracer) else mag > 0
            return anp.where(pos, anp.divide(anp.conj(top), anp.where(pos, mag, 1.0)), 1.0)
        sg = anp.stop_gradient(anp.where(P.lt(top, P.full_like(top, 0)) if isinstance(top, Tracer) else top < 0, -1.0, 1.0))
        return P.convert(sg, dtype_of(u)) if isinstance(sg, Tracer) else np.asarray(sg, dtype_of(u))

    idx = anp.stop_gradient(anp.argmax(anp.absolute(u), axis=-2))                    # (..., m)
    top = anp.squeeze(anp.take_along_axis(u, anp.expand_dims(idx, -2), axis=-2), -2)
    sg = factor(top)
    u = anp.multiply(u, anp.expand_dims(sg, -2))
    # Vᴴ's row i pairs with U's column i: it takes the conjugate factor
    sk = anp.getitem(anp.conj(sg) if cplx else sg, (Ellipsis, slice(0, k)))
    rows = shape_of(vt)[-2]
    if rows == k:
        vt = anp.multiply(vt, anp.expand_dims(sk, -1))
    else:        # full V: the first k rows pair with U's columns, the rest are canonical alone
        head = anp.multiply(anp.getitem(vt, (Ellipsis, slice(0, k), slice(None))), anp.expand_dims(sk, -1))
        tail = anp.getitem(vt, (Ellipsis, slice(k, rows), slice(None)))
        ti = anp.stop_gradient(anp.argmax(anp.absolute(tail), axis=-1))
        tt = anp.squeeze(anp.take_along_axis(tail, anp.expand_dims(ti, -1), axis=-1), -1)
        ts = factor(tt)
        # a row of Vᴴ is a conjugated column of V: making its entry real positive
        # multiplies by conj(entry)/|entry|, the same factor as a column of U
        vt = anp.concatenate([head, anp.multiply(tail, anp.expand_dims(ts, -1))], axis=-2)
    return u, s, vt


@npfunc(np.linalg.svdvals if hasattr(np.linalg, "svdvals") else None)
def svdvals(x):
    return svd(x, compute_uv=False)


@npfunc(np.linalg.qr)
def qr(a, mode="reduced"):
    """``numpy.linalg.qr``, ``mode`` 'reduced' (or JAX's alias 'full'), 'complete', 'r' or
    'raw' (LAPACK's geqrf output ``(h, tau)``, ``h`` transposed as numpy's, from numpy on the
    host and not differentiable); the first three are the ``qr`` primitive
    (LAPACK geqrf + orgqr/ungqr, numpy's signs; in jitted kernels too). Differentiable to
    any order wherever the leading min(m, n) columns are linearly independent. A complete
    Q of a tall matrix holds a basis of the complement of A's range that LAPACK picks: its
    derivative is exact for functions of that subspace (``Q₂ Q₂ᴴ``), not for Q₂'s entries.

    >>> import numpy as np, autodiff.numpy as anp
    >>> q, r = anp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.round(r, 6)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    a = _float(a)
    if mode == "full":           # JAX (and numpy 1's deprecated spelling): 'reduced'
        mode = "reduced"
    if mode == "raw":
        return _qr_raw(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError("linalg.qr: mode must be 'reduced', 'complete', 'r', 'raw' or 'full', "
                         f"got {mode!r}")
    m, n = shape_of(a)[-2:]
    q, r = P.qr_p.bind(a, full=(mode == "complete" and m > n))
    if mode == "r":
        return r
    return QRResult(q, r)


def _qr_raw_host(a):
    h, tau = np.linalg.qr(np.asarray(a), mode="raw")
    return h.astype(a.dtype, copy=False), tau.astype(a.dtype, copy=False)


def _qr_raw(a):
    # geqrf's Householder vectors below R (transposed, as numpy returns them) and the tau
    sh, dt = shape_of(a), dtype_of(a)
    m, n = sh[-2:]
    spec = (ShapeDtypeStruct(sh[:-2] + (n, m), dt), ShapeDtypeStruct(sh[:-2] + (min(m, n),), dt))
    return pure_callback(_qr_raw_host, spec, anp.stop_gradient(a), vmap_method="expand_dims")


# ----------------------------------------------------------------------------
# eig and eigvals: LAPACK geev on the host (every mode, under jit too), with the
# standard derivative for distinct eigenvalues
# ----------------------------------------------------------------------------

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _eig_host(a):
    # numpy's geev (dgeev for real input, zgeev for complex), cast to the complex dtype a
    # traced program declares (numpy returns real arrays when every eigenvalue is real)
    dt = _complex_dtype(a.dtype)
    if not np.all(np.isfinite(a)):
        # LAPACK's geev refuses inf/NaN: NaN results (JAX's), only for the matrices that have
        # them, instead of an exception in the middle of a traced program
        a = np.asarray(a)
        bad = ~np.all(np.isfinite(a), axis=(-2, -1))
        w = np.full(a.shape[:-1], np.nan, dt)
        v = np.full(a.shape, np.nan, dt)
        if np.any(~bad):
            w[~bad], v[~bad] = _eig_host(a[~bad])
        return w, v
    w, v = np.linalg.eig(a)
    return w.astype(dt), v.astype(dt)


def _eig_primal(a):
    sh, dt = shape_of(a), _complex_dtype(dtype_of(a))
    return pure_callback(_eig_host, (ShapeDtypeStruct(sh[:-1], dt), ShapeDtypeStruct(sh, dt)), a,
                         vmap_method="expand_dims")


def _eig_jvp(primals, tangents):
    # A V = V diag(w). With S = V⁻¹ dA V: dw = diag(S) and dV = V (F ∘ S), F_ij =
    # 1/(w_j - w_i) off the diagonal (0 where eigenvalues coincide, and on it). That dV
    # leaves each column's scale free; LAPACK fixes it (‖v‖ = 1, largest-modulus component
    # real), so two corrections follow: dv -= v·Re(vᴴ dv) keeps the norm, and
    # dv -= i·v·Im(dv_j / v_j), j the largest-modulus row, keeps that component's phase.
    # The result is the derivative of numpy's own output wherever the eigenvalues are
    # distinct (and the largest component is unique).
    (a,), (da,) = primals, tangents
    w, v = _eig_cj(a)
    dt = dtype_of(v)
    da = P.convert(da, dt)
    S = P.solve_p.bind(v, anp.matmul(da, v))
    dw = anp.diagonal(S, 0, -2, -1)
    wi, wj = anp.expand_dims(w, -1), anp.expand_dims(w, -2)
    diff = anp.subtract(wj, wi)
    same = P.eq(diff, P.full_like(diff, 0))
    F = P.select(same, P.full_like(diff, 0), P.div(P.full_like(diff, 1), P.select(same, P.full_like(diff, 1), diff)))
    dv = anp.matmul(v, anp.multiply(F, S))
    rn = P.real(anp.sum(anp.multiply(P.conj(v), dv), axis=-2, keepdims=True))
    dv = anp.subtract(dv, anp.multiply(v, P.convert(rn, dt)))
    n = shape_of(v)[-2]
    top = anp.stop_gradient(anp.argmax(anp.abs(v), axis=-2))                       # (..., n)
    rows = P.iota(np.int64, shape_of(v), len(shape_of(v)) - 2)
    mask = P.convert(P.eq(rows, P.broadcast_in_dim(top, shape_of(v), tuple(range(len(shape_of(v)) - 2)) + (len(shape_of(v)) - 1,))), dt)
    vj = anp.sum(anp.multiply(v, mask), axis=-2, keepdims=True)
    dvj = anp.sum(anp.multiply(dv, mask), axis=-2, keepdims=True)
    theta = P.imag(P.div(dvj, vj))
    dv = anp.subtract(dv, anp.multiply(v, P.complex_(P.full_like(theta, 0), theta)))
    del n
    return (w, v), (dw, dv)


_eig_cj = _custom_jvp(_eig_primal)
_eig_cj.defjvp(_eig_jvp)


@npfunc(np.linalg.eig)
def eig(a):
    """``numpy.linalg.eig`` of a general real or complex square matrix (stacks too):
    eigenvalues ``w`` and right eigenvectors ``v`` (columns) with ``a v = v diag(w)``.

    Concrete input: numpy's own result (real arrays when every eigenvalue is real, numpy's
    rule). Traced input (under ``grad``, ``jvp``, ``vmap``, ``jit``): always complex, as in
    JAX, from the same LAPACK call (``geev`` on the host, also inside ``jit``) and so with
    numpy's order and normalization: each eigenvector has unit norm and its
    largest-modulus component real. The derivative is the standard one for distinct
    eigenvalues, taken in that same gauge (norm and the phase of the largest component held
    fixed), so it is the derivative of numpy's output itself; where eigenvalues coincide
    the eigenvectors are not differentiable (the coupling terms are dropped). Functions
    invariant under ``v -> v·diag(c)`` (eigenvalues, projectors ``v_k v_kᴴ/‖v_k‖²``) do not
    depend on the gauge at all.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> a = np.array([[0.0, 1.0], [-2.0, 0.0]])                    # eigenvalues ±i√2
    >>> w = ad.jit(lambda a: anp.linalg.eig(a)[0])(a)
    >>> np.round(w, 6)
    array([0.+1.414214j, 0.-1.414214j])
    >>> ad.grad(lambda a: anp.sum(anp.abs(anp.linalg.eigvals(a)) ** 2))(np.diag([1.0, 2.0]))
    array([[2., 0.],
           [0., 4.]])
    """
    a = _float(a)
    _square(a, "eig")
    w, v = _eig_cj(a)
    return EigResult(w, v)


@npfunc(np.linalg.eigvals)
def eigvals(a):
    """``numpy.linalg.eigvals``: the eigenvalues of a general square matrix, in ``eig``'s
    order (traced: always complex, as ``eig``), differentiable where they are distinct
    (``dw_k = (V⁻¹ dA V)_kk``).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> np.round(ad.jit(anp.linalg.eigvals)(np.array([[0.0, -1.0], [1.0, 0.0]])), 12)
    array([0.+1.j, 0.-1.j])
    """
    return eig(a)[0]
