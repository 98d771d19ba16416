"""``numpy.linalg`` for concrete and traced values, differentiable; complex input follows
JAX's conventions (docs/complex.md): Hermitian ``cholesky``/``eigh``, complex ``eig``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> A = np.array([[2.0, 0.0], [0.0, 4.0]])
>>> ad.grad(lambda a: anp.linalg.det(a))(A)            # d det / dA = det · A⁻ᵀ
array([[4., 0.],
       [0., 2.]])
"""
import builtins
from collections import namedtuple

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, user_source
from ..custom_derivatives import custom_jvp as _custom_jvp
from ..primitives.control_flow import cond_p as _cond_p
from ..primitives.control_flow import join_branches as _join_branches
from ..primitives.control_flow import trace_body as _trace_body
from ..errors import ShapeError
from ._base import npfunc, asarray, promote, shape_of, dtype_of, normalize_axes
from ._base import to_output as _to_output
from ._base import as_float as _float
from ._decompositions import (cholesky, eigh, eigvalsh, svd, svdvals, qr, eig, eigvals,  # noqa: F401
                              EighResult, SVDResult, QRResult, EigResult)
from ._decompositions import svd_thin as _svd_thin
from ._linalg_base import (check_square as _square, conj_transpose as _mH,
                           real_part_dtype as _real_of, abs2 as _abs2, eye as _eye)
from ._reductions import safe_sqrt as _safe_sqrt
from ._precision import check_precision as _check_precision

LinAlgError = np.linalg.LinAlgError


@npfunc(np.linalg.solve)
def solve(a, b):
    a, b = promote(_float(a), _float(b))
    _square(a, "solve")
    sa, sb = shape_of(a), shape_of(b)
    vec = len(sb) == 1
    if vec:            # numpy 2: b is a vector only when 1-d, else a stack (..., n, k)
        b = P.expand_dims(b, (1,))
    batch = np.broadcast_shapes(sa[:-2], shape_of(b)[:-2])
    a = anp.broadcast_to(a, batch + sa[-2:])
    b = anp.broadcast_to(b, batch + shape_of(b)[-2:])
    if shape_of(b)[-2] != sa[-1]:
        raise ShapeError(f"linalg.solve: a {sa} and b {sb} do not match", source=user_source())
    x = P.solve_p.bind(a, b)
    return P.squeeze(x, (len(shape_of(x)) - 1,)) if vec else x


@npfunc(np.linalg.inv)
def inv(a):
    a = _float(a)
    _square(a, "inv")
    n = shape_of(a)[-1]
    eye = P.convert(P.eq(P.iota(np.int64, shape_of(a), len(shape_of(a)) - 2),
                         P.iota(np.int64, shape_of(a), len(shape_of(a)) - 1)), dtype_of(a))
    return P.solve_p.bind(a, eye)


@npfunc(np.linalg.slogdet)
def slogdet(a, *, method=None):
    """``numpy.linalg.slogdet``: ``(sign, log|det|)``. JAX's ``method`` ('lu', the default,
    or 'qr') names the factorization; both give the same values here (LAPACK's LU).

    >>> import numpy as np, autodiff.numpy as anp
    >>> s, l = anp.linalg.slogdet(np.diag([-2.0, 3.0]), method="qr")
    >>> float(s), round(float(l), 6)
    (-1.0, 1.791759)
    """
    if method not in (None, "lu", "qr"):
        raise ValueError(f"slogdet: unrecognized method {method!r} (expected 'lu' or 'qr')")
    a = _float(a)
    _square(a, "slogdet")
    s, l = P.slogdet_p.bind(a)
    return SlogdetResult(s, l)


# namedtuples (as numpy's and JAX's results are), so they are pytrees: jit / vmap can return them
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


# ----------------------------------------------------------------------------
# det: d det(A)[E] = tr(adj(A) E) with the adjugate from the SVD, exact at every rank
# ----------------------------------------------------------------------------

# σ_min/σ_max above this: the adjugate comes from det(a)·a⁻¹ (accurate there)
_WELL_CONDITIONED = 1e-6


def _prod_excluding_one(s):
    """For ``s`` (..., n): ``Π_{m≠i} s_m`` (..., n), an exclusive prefix product times an
    exclusive suffix product: no division, so exact where some ``s_m`` are zero."""
    one = anp.ones_like(anp.getitem(s, (Ellipsis, slice(0, 1))))
    pre = anp.cumprod(anp.concatenate([one, anp.getitem(s, (Ellipsis, slice(None, -1)))],
                                      axis=-1), axis=-1)
    rev = anp.getitem(s, (Ellipsis, slice(None, None, -1)))
    suf = anp.cumprod(anp.concatenate([one, anp.getitem(rev, (Ellipsis, slice(None, -1)))],
                                      axis=-1), axis=-1)
    return anp.multiply(pre, anp.getitem(suf, (Ellipsis, slice(None, None, -1))))


def _prod_excluding_two(s):
    """For ``s`` (..., n): ``Π_{m≠i,j} s_m`` (..., n, n), the diagonal ``i = j`` leaving out
    only i. A loop of multiplications, no division, so exact (and its derivative too) where
    some ``s_m`` are zero."""
    n = shape_of(s)[-1]
    idx = np.arange(n)
    out = None
    for m in range(n):
        sm = anp.expand_dims(anp.getitem(s, (Ellipsis, m)), (-2, -1))
        f = anp.where((idx[:, None] == m) | (idx[None, :] == m), anp.ones_like(sm), sm)
        out = f if out is None else anp.multiply(out, f)
    sh = shape_of(s)[:-1] + (n, n)
    return anp.broadcast_to(anp.ones_like(s, shape=()) if out is None else out, sh)


def _svd_unit(a):
    """``(X, σ, W, c)`` with ``a = X diag(σ) W`` its SVD (σ in ``a``'s dtype) and
    ``c = det(X) det(W)``, a unit scalar: ``adj(a) = c Wᴴ adj(diag(σ)) Xᴴ``
    (``adj(XY) = adj(Y) adj(X)``, and ``adj(U) = det(U) Uᴴ`` for a unitary U)."""
    u, s, vh = _svd_thin(a)
    c = anp.multiply(P.slogdet_p.bind(u)[0], P.slogdet_p.bind(vh)[0])
    return u, P.convert(s, dtype_of(a)), vh, c


def _mat_scalar(c):
    return anp.expand_dims(anp.expand_dims(c, -1), -1)


def _adjugate_svd(a):
    """``adj(a) = c Wᴴ diag(Π_{m≠i} σ_m) Xᴴ``: exact at every rank."""
    u, sc, vh, c = _svd_unit(a)
    adj = anp.matmul(anp.multiply(_mH(vh), anp.expand_dims(_prod_excluding_one(sc), -2)),
                     _mH(u))
    return anp.multiply(_mat_scalar(c), adj)


def _adjugate_body(a):
    # det(a)·a⁻¹ (one LU) where a is well conditioned; the SVD form (exact at every rank)
    # only where it is not: a cond, so a compiled program runs one of the two
    n = shape_of(a)[-1]
    dt = dtype_of(a)
    ai = P.solve_p.bind(a, _eye(n, dt, shape_of(a)[:-2]))
    s, l = P.slogdet_p.bind(a)
    adj_inv = anp.multiply(_mat_scalar(anp.multiply(s, P.convert(anp.exp(l), dt))), ai)
    # κ∞-style estimate n·max|a|·max|a⁻¹| (an upper bound of σ_max/σ_min up to n)
    kappa = anp.multiply(anp.max(anp.absolute(a)), anp.max(anp.absolute(ai)))
    ok = anp.logical_and(anp.all(anp.isfinite(ai)),
                         anp.less(anp.multiply(kappa, float(n)), 1.0 / _WELL_CONDITIONED))
    avals = [P.aval_of(a), P.aval_of(adj_inv)]
    branches, consts = _join_branches([
        _trace_body(lambda a_, _: [_adjugate_svd(a_)], avals, "adjugate_svd"),
        _trace_body(lambda _, adj_: [adj_], avals, "adjugate_inv")])
    return _cond_p.bind(P.convert(ok, np.int32), *consts, a, adj_inv, branches=branches)[0]


def _adjugate_jvp(primals, tangents):
    # Two exact forms of d adj(a)[e], chosen by the conditioning of a:
    # * well conditioned: adj = det(a) a⁻¹, so d adj = det(a) (tr(a⁻¹e) a⁻¹ - a⁻¹ e a⁻¹);
    #   made of det (this rule again) and solves, its own derivatives are exact too.
    # * otherwise, from the SVD: a + t e = X (Σ + t B) W with B = Xᴴ e Wᴴ, so
    #   adj(a + t e) = c Wᴴ adj(Σ + t B) Xᴴ, and at the diagonal Σ, with
    #   p2_ij = Π_{m≠i,j} σ_m: d adj(Σ)[B]_ii = Σ_{k≠i} p2_ik B_kk and
    #   d adj(Σ)[B]_ij = -p2_ij B_ij (i ≠ j), one factor t in each cofactor. A polynomial
    #   in σ: exact at every rank and at repeated σ.
    # Either way the Hessian of det is exact; the first branch keeps higher orders exact
    # away from singular matrices (the second differentiates the SVD there).
    (a,), (e,) = primals, tangents
    adj = _adjugate(a)
    x, sc, w, c = _svd_unit(a)
    p2 = _prod_excluding_two(sc)
    s = P.real(sc) if _is_cplx(sc) else sc
    n = shape_of(a)[-1]
    dt = dtype_of(a)
    b = anp.matmul(_mH(x), anp.matmul(e, _mH(w)))
    off = anp.where(np.eye(n, dtype=bool), anp.zeros_like(p2), p2)
    dd = anp.matmul(off, anp.expand_dims(anp.diagonal(b, 0, -2, -1), -1))        # (..., n, 1)
    db = anp.subtract(anp.multiply(dd, _eye(n, dt)), anp.multiply(off, b))
    d_svd = anp.multiply(_mat_scalar(c), anp.matmul(_mH(w), anp.matmul(db, _mH(x))))
    s = anp.stop_gradient(s)
    ok = anp.greater(anp.getitem(s, (Ellipsis, -1)),
                     anp.multiply(anp.getitem(s, (Ellipsis, 0)), _WELL_CONDITIONED))
    okm = _mat_scalar(ok)
    a_safe = anp.where(okm, a, _eye(n, dt, shape_of(a)[:-2]))      # finite in both branches
    ai = inv(a_safe)
    aie = anp.matmul(ai, e)
    tr = anp.trace(aie, 0, -2, -1)
    d_inv = anp.subtract(anp.multiply(_mat_scalar(tr), ai), anp.matmul(aie, ai))
    d_ok = anp.multiply(_mat_scalar(_det_cj(a_safe)), d_inv)
    return adj, anp.where(okm, d_ok, d_svd)


_adjugate = _custom_jvp(_adjugate_body)
_adjugate.defjvp(_adjugate_jvp)


def _det_body(a):
    s, l = P.slogdet_p.bind(a)
    return anp.multiply(s, P.convert(anp.exp(l), dtype_of(s)))


def _det_jvp(primals, tangents):
    # d det(a)[e] = tr(adj(a) e): finite at singular matrices (the adjugate has rank 1 at
    # corank 1 and is zero at corank >= 2), where tr(a⁻¹ e)·det(a) is 0·inf
    (a,), (e,) = primals, tangents
    out = _det_cj(a)
    if shape_of(a)[-1] == 0:
        return out, anp.zeros_like(out)
    adj = _adjugate(a)
    return out, anp.sum(anp.multiply(anp.swapaxes(adj, -1, -2), e), axis=(-2, -1))


_det_cj = _custom_jvp(_det_body)
_det_cj.defjvp(_det_jvp)


@npfunc(np.linalg.det)
def det(a):
    """``numpy.linalg.det``, differentiable at every matrix: its derivative is the
    adjugate, ``d det(A)[E] = tr(adj(A) E)``, which is ``det(A) A⁻¹`` where A is well
    conditioned and, only where it is not, ``det(U) det(Vᴴ) V diag(Π_{m≠i} σ_m) Uᴴ`` from the
    SVD, right at singular matrices too (a rank-1 adjugate at corank 1, zero at corank ≥ 2).
    The adjugate's own derivative is a polynomial in the singular values, so the Hessian of
    det is exact everywhere (repeated singular values included).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(anp.linalg.det)(np.array([[1.0, 2.0], [2.0, 4.0]]))     # singular: adj(A)ᵀ
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    a = _float(a)
    _square(a, "det")
    return _det_cj(a)


def _check_ord(ord, matrix):
    ok = (None, "fro", "f", "nuc", 1, -1, 2, -2, np.inf, -np.inf) if matrix else None
    if matrix and ord not in ok:
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    if not matrix and (isinstance(ord, str) or (ord is not None and not np.isscalar(ord))):
        raise ValueError(f"Invalid norm order {ord!r} for vectors.")


def _empty_norm(x, axes, keepdims):
    """The norm of an empty vector or matrix: 0 (JAX's, for every order)."""
    return anp.sum(anp.zeros_like(P.real(x) if _is_cplx(x) else x), axis=axes, keepdims=keepdims)


def _is_cplx(x):
    return np.dtype(dtype_of(x)).kind == "c"


@npfunc(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    x = _float(x)
    nd = len(shape_of(x))
    if axis is None:
        if ord is None or (ord in ("fro", "f") and nd == 2) or (ord == 2 and nd == 1):
            out = _safe_sqrt(anp.sum(_abs2(x)))
            return anp.reshape(out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    # the order given matters for a matrix norm (rows, columns): not sorted
    given = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(int(a) % nd if -nd <= int(a) < nd else normalize_axes(a, nd)[0] for a in given)
    if len(set(axes)) != len(axes):
        raise ValueError("Duplicate axes given.")
    if len(axes) == 1:
        _check_ord(ord, False)
        if builtins.any(shape_of(x)[a] == 0 for a in axes):
            return _empty_norm(x, axes, keepdims)
        if ord is None or ord == 2:
            return _safe_sqrt(anp.sum(_abs2(x), axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return anp.max(anp.absolute(x), axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return anp.min(anp.absolute(x), axis=axes, keepdims=keepdims)
        if ord == 0:
            return anp.sum(P.convert(anp.not_equal(x, 0), _real_of(dtype_of(x))), axis=axes,
                           keepdims=keepdims)
        if ord == 1:
            return anp.sum(anp.absolute(x), axis=axes, keepdims=keepdims)
        return anp.power(anp.sum(anp.power(anp.absolute(x), ord), axis=axes, keepdims=keepdims), 1.0 / ord)
    if len(axes) == 2:
        _check_ord(ord, True)
        r, c = axes
        if shape_of(x)[r] == 0 or shape_of(x)[c] == 0:
            return _empty_norm(x, axes, keepdims)
        if ord is None or ord in ("fro", "f"):
            return _safe_sqrt(anp.sum(_abs2(x), axis=axes, keepdims=keepdims))
        if ord == "nuc" or ord in (2, -2):
            y = anp.moveaxis(x, (r, c), (-2, -1))
            s = svdvals(y)
            out = anp.sum(s, axis=-1) if ord == "nuc" else (anp.max(s, axis=-1) if ord == 2 else anp.min(s, axis=-1))
            if keepdims:
                for a in sorted(axes):
                    out = anp.expand_dims(out, a)
            return out
        if ord in (1, -1):
            s = anp.sum(anp.absolute(x), axis=r, keepdims=True)
            red = anp.max if ord == 1 else anp.min
            out = red(s, axis=c, keepdims=True)
        else:
            s = anp.sum(anp.absolute(x), axis=c, keepdims=True)
            red = anp.max if ord == np.inf else anp.min
            out = red(s, axis=r, keepdims=True)
        if not keepdims:
            out = P.squeeze(out, tuple(sorted(axes)))
        return out
    raise ValueError("Improper number of dimensions to norm.")


@npfunc(np.linalg.matrix_power)
def matrix_power(a, n):
    a = asarray(a)
    n = int(n)
    if n < 0 or np.dtype(dtype_of(a)).kind not in "biu":
        a = _float(a)     # bool and integer matrices keep their dtype (numpy, JAX) for n >= 0
    _square(a, "matrix_power")
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        sh = shape_of(a)
        return P.convert(P.eq(P.iota(np.int64, sh, len(sh) - 2), P.iota(np.int64, sh, len(sh) - 1)), dtype_of(a))
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else anp.matmul(result, base)
        n >>= 1
        if n:
            base = anp.matmul(base, base)
    return result


@npfunc(np.linalg.trace if hasattr(np.linalg, "trace") else None)
def trace(x, /, *, offset=0, dtype=None):
    return anp.trace(x, offset, -2, -1, dtype=dtype)


def _rtol_default(m, n, dt):
    return builtins.max(m, n) * float(np.finfo(dt).eps)


def _pinv_body(a, rtol):
    u, s, vt = _svd_thin(a)
    cut = anp.multiply(anp.max(s, axis=-1, keepdims=True), rtol)
    keep = anp.greater(s, cut)
    sinv = anp.where(keep, anp.divide(1.0, anp.where(keep, s, 1.0)), 0.0)
    return anp.matmul(anp.multiply(_mH(vt), anp.expand_dims(sinv, -2)), _mH(u))


def _pinv_jvp(rtol, primals, tangents):
    # Golub & Pereyra (constant rank): dA⁺ = -A⁺ dA A⁺ + A⁺A⁺ᴴ dAᴴ (I - A A⁺) + (I - A⁺A) dAᴴ A⁺ᴴ A⁺
    (a,), (da,) = primals, tangents
    p = _pinv_cj(rtol, a)
    m, n = shape_of(a)[-2:]
    batch = shape_of(a)[:-2]
    pt, dat = _mH(p), _mH(da)
    t1 = anp.negative(anp.matmul(p, anp.matmul(da, p)))
    t2 = anp.matmul(anp.matmul(p, pt), anp.matmul(dat, anp.subtract(_eye(m, dtype_of(a), batch), anp.matmul(a, p))))
    t3 = anp.matmul(anp.subtract(_eye(n, dtype_of(a), batch), anp.matmul(p, a)), anp.matmul(dat, anp.matmul(pt, p)))
    return p, anp.add(anp.add(t1, t2), t3)


_pinv_cj = _custom_jvp(lambda rtol, a: _pinv_body(a, rtol), nondiff_argnums=(0,))
_pinv_cj.defjvp(_pinv_jvp)


@npfunc(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """``numpy.linalg.pinv``: the pseudo-inverse from the SVD, singular values below
    ``rtol·σ_max`` (default ``max(m, n)·ε``; ``rcond`` is its older name) dropped; its
    derivative is Golub and Pereyra's, exact where the rank is locally constant.
    ``hermitian=True`` reads the lower triangle only, as numpy's (eigh).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    if rcond is not None and rtol is not None:
        raise ValueError("pinv: only one of rtol and rcond may be specified.")
    a = _float(a)
    m, n = shape_of(a)[-2:]
    if m == 0 or n == 0:
        return anp.zeros_like(a, shape=shape_of(a)[:-2] + (n, m))
    if hermitian:
        # numpy's hermitian=True reads the lower triangle (eigh): the Hermitian matrix it holds
        a = P.herm_lower(a)
    tol = rtol if rtol is not None else rcond
    tol = _rtol_default(m, n, dtype_of(a)) if tol is None else float(tol)
    return _pinv_cj(tol, a)


LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


@npfunc(np.linalg.lstsq)
def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """``numpy.linalg.lstsq``: ``x = pinv(a) b`` (minimum-norm least squares, singular values
    below ``rcond·σ_max`` dropped; ``rcond`` None: ``max(m, n)·ε``, negative: ``ε``), the
    residual sums of squares ``‖b - a x‖²`` per column, the rank and the singular values.
    The residuals are always computed (JAX's default); ``numpy_resid=True`` gives numpy's
    rule instead (empty when ``rank < n`` or ``m <= n``), which needs a concrete rank, so
    not under ``jit``. Differentiable in ``a`` and ``b`` where the rank is locally constant.

    >>> import numpy as np, autodiff.numpy as anp
    >>> x = anp.linalg.lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 2.0, 3.0]))[0]
    >>> x
    array([1., 2.])
    """
    a, b = promote(_float(a), _float(b))
    if len(shape_of(a)) != 2:
        raise ShapeError(f"linalg.lstsq: a must be two-dimensional, got shape {shape_of(a)}",
                         source=user_source())
    if len(shape_of(b)) not in (1, 2):
        raise ShapeError(f"linalg.lstsq: b must be one- or two-dimensional, got shape "
                         f"{shape_of(b)}", source=user_source())
    m, n = shape_of(a)
    if shape_of(b)[0] != m:
        raise ShapeError("linalg.lstsq: leading dimensions of a and b must match, got "
                         f"{shape_of(a)} and {shape_of(b)}", source=user_source())
    vec = len(shape_of(b)) == 1
    bb = anp.expand_dims(b, -1) if vec else b
    rdt = _real_of(dtype_of(a))
    if m == 0 or n == 0:
        x = anp.zeros_like(bb, shape=(n, shape_of(bb)[1]))
        s = P.full((0,), 0, rdt)
        rank = P.full((), 0, np.int32)
    else:
        eps = float(np.finfo(dtype_of(a)).eps)
        tol = _rtol_default(m, n, dtype_of(a)) if rcond is None else float(rcond)
        tol = eps if tol < 0 else tol
        x = anp.matmul(pinv(a, rtol=tol), bb)
        s = svdvals(a)
        cut = anp.multiply(anp.max(s, axis=-1, keepdims=True), tol)
        rank = anp.sum(anp.logical_and(anp.greater(s, 0), anp.greater(s, cut)), axis=-1,
                       dtype=np.int32)
    if numpy_resid and (int(rank) < n or m <= n):
        res = P.full((0,), 0, rdt)
    else:
        res = anp.sum(_abs2(anp.subtract(bb, anp.matmul(a, x))), axis=0)
    if vec:
        x = anp.squeeze(x, -1)
    return LstsqResult(x, res, rank, s)


@npfunc(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above ``tol`` (default ``σ_max·max(m, n)·ε``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> int(anp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    if tol is not None and rtol is not None:
        raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    A = _float(A)
    if len(shape_of(A)) < 2:
        return anp.astype(anp.any(anp.not_equal(A, 0)), np.int64)
    s = svdvals(A)
    m, n = shape_of(A)[-2:]
    if tol is None:
        r = _rtol_default(m, n, dtype_of(A)) if rtol is None else rtol
        tol = anp.multiply(anp.max(s, axis=-1, keepdims=True), r)
    else:
        tol = anp.expand_dims(asarray(tol), -1) if len(shape_of(asarray(tol))) else tol
    return anp.sum(anp.greater(s, tol), axis=-1, dtype=np.int64)


@npfunc(np.linalg.cond)
def cond(x, p=None):
    """Condition number: ``σ_max/σ_min`` for ``p`` None, 2 (``-2``: the inverse), else
    ``norm(x, p)·norm(inv(x), p)``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.linalg.cond(np.diag([4.0, 2.0])))
    2.0
    """
    x = _float(x)
    if p is None or p in (2, -2):
        s = svdvals(x)
        hi, lo = anp.getitem(s, (Ellipsis, 0)), anp.getitem(s, (Ellipsis, -1))
        return anp.divide(lo, hi) if p == -2 else anp.divide(hi, lo)
    return anp.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


@npfunc(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    """Inverse of ``a`` seen as a matrix ``prod(shape[:ind]) × prod(shape[ind:])``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = _float(a)
    sh = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    lead, rest = sh[:ind], sh[ind:]
    p = builtins.int(np.prod(lead))
    return anp.reshape(inv(anp.reshape(a, (p, -1))), rest + lead)


@npfunc(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x`` (numpy's algorithm).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.tensorsolve(2 * np.eye(4).reshape(2, 2, 2, 2), np.ones((2, 2)))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    a, b = promote(_float(a), _float(b))
    an = len(shape_of(a))
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = anp.transpose(a, allaxes)
    sh = shape_of(a)
    oldshape = sh[-(an - len(shape_of(b))):]
    prod = builtins.int(np.prod(oldshape))
    x = solve(anp.reshape(a, (-1, prod)), anp.reshape(b, (-1,)))
    return anp.reshape(x, oldshape)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``numpy.linalg.vector_norm``: the ``ord``-norm over ``axis`` (all axes by default).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.linalg.vector_norm(np.array([[3.0], [4.0]])))
    5.0
    """
    return _vector_norm(x, axis, keepdims, ord)


@npfunc(None)
def _vector_norm(x, axis, keepdims, ord):
    x = _float(x)
    nd = len(shape_of(x))
    _check_ord(ord, False)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = normalize_axes(tuple(axis) if isinstance(axis, (tuple, list)) else (axis,), nd)
    if len(set(axes)) != len(axes):
        raise ValueError("Duplicate axes given.")
    if not axes:                  # a norm over no axes: each entry is a vector of length 1
        return (anp.absolute(x) if ord != 0
                else P.convert(anp.not_equal(x, 0), _real_of(dtype_of(x))))
    rest = [i for i in range(nd) if i not in axes]
    y = anp.reshape(P.transpose(x, tuple(rest) + axes),
                    tuple(shape_of(x)[i] for i in rest) + (-1,))
    out = norm(y, ord=ord, axis=-1)
    if keepdims:
        out = anp.reshape(out, tuple(1 if i in axes else shape_of(x)[i] for i in range(nd)))
    return out


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """``numpy.linalg.matrix_norm`` over the last two axes.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.linalg.matrix_norm(np.diag([3.0, 4.0]), ord=2))
    4.0
    """
    return _matrix_norm(x, keepdims, ord)


@npfunc(None)
def _matrix_norm(x, keepdims, ord):
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def matrix_transpose(x, /):
    """Swap the last two axes (``numpy.linalg.matrix_transpose``)."""
    return anp.swapaxes(x, -1, -2)


def outer(x1, x2, /):
    """Outer product of two vectors (``numpy.linalg.outer``)."""
    return anp.outer(x1, x2)


def vecdot(x1, x2, /, *, axis=-1):
    """``Σ conj(x1)·x2`` over ``axis`` (``numpy.linalg.vecdot``): ``axis`` is taken in each
    operand before the others broadcast, as numpy's gufunc (and JAX) do.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.vecdot(np.ones((3, 2)), np.arange(3.0), axis=0)
    array([3., 3.])
    """
    x1, x2 = asarray(x1), asarray(x2)
    return anp.vecdot(anp.moveaxis(x1, axis, -1), anp.moveaxis(x2, axis, -1), axis=-1)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis`` (``numpy.linalg.cross``)."""
    return anp.cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """Diagonals of the last two axes (``numpy.linalg.diagonal``)."""
    return anp.diagonal(x, offset, -2, -1)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.linalg.tensordot``."""
    return anp.tensordot(x1, x2, axes)


def matmul(x1, x2, /):
    """``numpy.linalg.matmul``."""
    return anp.matmul(x1, x2)


@npfunc(np.linalg.multi_dot)
def multi_dot(arrays, *, precision=None):
    """``numpy.linalg.multi_dot``: the chained product (the first array may be a row vector,
    the last a column vector); JAX's ``precision`` is accepted (every setting computes the
    same float64-exact products).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.multi_dot([np.ones(2), np.eye(2), np.ones(2)], precision="highest")
    np.float64(2.0)
    """
    _check_precision(precision)
    out = arrays[0]
    for a in arrays[1:]:
        out = anp.matmul(out, a)
    return out


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False):
    """Solve ``a x = b`` for triangular ``a``, with scipy.linalg's signature and defaults
    (``lower=False``; ``trans`` is 0/'N', 1/'T' or 2/'C', and ``True`` means 'T').

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True)
    array([1., 2.])
    """
    conj_a = trans in ("C", "c", 2)
    if trans in ("N", "n", None):
        trans = False
    elif trans in ("T", "t", "C", "c"):
        trans = True
    elif trans not in (0, 1, 2):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = promote(_float(a), _float(b))
    if conj_a:        # aᴴ x = b: the transposed solve with conj(a) (nothing for a real a)
        a = P.conj(a)
    sa = shape_of(a)
    # b is a vector when 1-d, or a stack of vectors matching a's stack (JAX's rule, which it
    # deprecates); else a stack of (n, k) matrices. The batch axes broadcast.
    vec = len(shape_of(b)) == 1 or (len(shape_of(b)) == len(sa) - 1 and shape_of(b)[-1] == sa[-1])
    if vec:
        b = P.expand_dims(b, (len(shape_of(b)),))
    batch = np.broadcast_shapes(sa[:-2], shape_of(b)[:-2])
    if sa[:-2] != batch:
        a = anp.broadcast_to(a, batch + sa[-2:])
    if shape_of(b)[:-2] != batch:
        b = anp.broadcast_to(b, batch + shape_of(b)[-2:])
    x = P.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=bool(trans),
                           unit_diagonal=unit_diagonal)
    if vec:
        x = P.squeeze(x, (len(shape_of(x)) - 1,))
    return _to_output(x) if not isinstance(x, Tracer) else x
