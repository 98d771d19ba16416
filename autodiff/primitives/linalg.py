"""Linear algebra on stacks of matrices: cholesky, triangular_solve, solve, slogdet, eigh, qr,
svd.

Complex operands follow JAX's conventions (docs/complex.md): tangents keep the primal's
dtype, transposes are the plain linear ones for the pairing ``Re(sum(u * v))`` (so the
rules of the maps that are C-linear in an operand, solve and triangular_solve in ``b``, are
the real ones), and the Hermitian conjugations sit in the jvps: ``A = L Lᴴ``,
``Vᴴ dA V``, ``d log det A = tr(A⁻¹ dA)`` split into a real and an imaginary part.
"""
import numpy as np

from ..core import Primitive, ShapedArray, UndefinedPrimal, is_inexact_dtype, real_dtype
from ..errors import DTypeError, ShapeError
from ._rules import (deftaylor, deftranspose, dtype_of, full, is_zero, moveaxis, ones_like, scalar, shape_of,
                     zeros_like, _ndim, _zero_like)
from .elementwise import (add, complex_, conj, convert, div, eq, ge, gt, imag, mul, neg, or_p,
                          real, select, sub)
from .shape import broadcast_in_dim, concatenate, iota, reshape, slice_in_dim, transpose
from .reductions import reduce_sum
from .dot import dot_general_p
from .taylor_series import cauchy_term, mul_term, neg_term, scale, sub_term, sum_terms

__all__ = ["batched_matmul", "cholesky_p", "eigh_p", "herm_lower", "mH", "mT", "qr_p",
           "slogdet_p", "solve_p", "svd_p", "sym_lower", "triangular_solve", "triangular_solve_p", "tril"]

# ============================================================================
# Linear algebra (operands are stacks: (..., n, n) and (..., n, k))
# ============================================================================

def _mat_aval(name):
    def check(a):
        if a.ndim < 2:
            raise ShapeError(f"{name}: expected a (..., m, n) matrix, got shape {a.shape}")
        if not is_inexact_dtype(a.dtype):
            raise DTypeError(f"{name}: expected a float or complex matrix, got {a.dtype}")
    return check


def _sq_aval(name):
    def check(a):
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise ShapeError(f"{name}: expected a (..., n, n) matrix, got shape {a.shape}")
        _mat_aval(name)(a)
    return check


def _is_complex(x):
    return dtype_of(x).kind == "c"


def mT(x):
    """The transpose of the last two axes."""
    n = _ndim(x)
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def mH(x):
    """The conjugate transpose of the last two axes (``mT`` for a real ``x``)."""
    return conj(mT(x))


def batched_matmul(a, b):
    """The matrix product of stacks ``(..., n, k) @ (..., k, m)``."""
    n = _ndim(a)
    batch = tuple(range(n - 2))
    return dot_general_p.bind(a, b, dimension_numbers=((((n - 1),), ((n - 2),)), (batch, batch)))


def tril(x, k=0):
    """The lower triangle of the last two axes (below diagonal ``k``)."""
    shape = shape_of(x)
    r = iota(np.int64, shape, len(shape) - 2)
    c = iota(np.int64, shape, len(shape) - 1)
    return select(ge(add(r, scalar(k, np.int64)), c), x, zeros_like(x))


def sym_lower(t):
    """Tangent as seen by a routine that reads only the lower triangle."""
    return add(tril(t), mT(tril(t, -1)))


def _eye_mask(shape):
    n = len(shape)
    return eq(iota(np.int64, shape, n - 2), iota(np.int64, shape, n - 1))


def herm_lower(t):
    """Tangent as seen by a Hermitian routine reading only the lower triangle (LAPACK's
    potrf/heevd with 'L'): the strict lower triangle mirrored conjugated, and the diagonal's
    real part (the routines never read its imaginary part). ``sym_lower`` for real ``t``."""
    if not _is_complex(t):
        return sym_lower(t)
    low = tril(t, -1)
    diag = select(_eye_mask(shape_of(t)), t, zeros_like(t))
    return add(add(low, mH(low)), convert(real(diag), dtype_of(t)))


def _batch_linalg(prim):
    def rule(args, dims, **params):
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        xs = [moveaxis(a, d, size=size) for a, d in zip(args, dims)]
        out = prim.bind(*xs, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    prim.batch = rule


cholesky_p = Primitive("cholesky")


def _cholesky_impl(a):
    a = np.asarray(a)
    # numpy reads the lower triangle; a failed factorization gives nan (like LAPACK users expect
    # from a traced program) instead of an exception in the middle of a transform
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return _per_matrix(_cholesky_impl, a.shape, a.dtype, a)


def _per_matrix(impl, shape, dtype, *ops):
    """``impl`` on each matrix of the stacks ``ops``, after numpy refused the whole stack:
    NaN only for the matrices that fail, as the jitted kernels (and JAX) give."""
    if len(shape) == 2:
        return np.full(shape, np.nan, dtype)
    out = np.empty(shape, dtype)
    for i in np.ndindex(shape[:-2]):
        out[i] = impl(*(x[i] for x in ops))
    return out


cholesky_p.impl = _cholesky_impl


def _cholesky_aval(a):
    _sq_aval("cholesky")(a)
    return ShapedArray(a.shape, a.dtype)


cholesky_p.abstract_eval = _cholesky_aval


def _cholesky_jvp(primals, tangents):
    # A = L Lᴴ: dL = L Φ(L⁻¹ dA L⁻ᴴ), Φ = lower triangle with the diagonal halved (the
    # middle factor is Hermitian, so its diagonal is real and L's stays real)
    (a,), (t,) = primals, tangents
    L = cholesky_p.bind(a)
    if is_zero(t):
        return L, _zero_like(L)
    t = herm_lower(t)
    tmp = triangular_solve(L, t, left_side=True, lower=True)          # L⁻¹ dA
    # L⁻¹ (L⁻¹ dA)ᴴ = L⁻¹ dA L⁻ᴴ (dA Hermitian); for a real L this is the transpose
    tmp = triangular_solve(L, mH(tmp), left_side=True, lower=True)
    dt = dtype_of(a)
    half = select(_eye_mask(shape_of(a)), full(shape_of(a), 0.5, dt), full(shape_of(a), 1.0, dt))
    phi = mul(tril(tmp), half)
    return L, batched_matmul(L, phi)


cholesky_p.jvp = _cholesky_jvp
_batch_linalg(cholesky_p)


def _cholesky_taylor(ins):
    # A = L Lᵀ: L₀ L_kᵀ + L_k L₀ᵀ = S_k := A_k - Σ_{j=1}^{k-1} L_j L_{k-j}ᵀ, solved as in the
    # jvp rule: L_k = L₀ Φ(L₀⁻¹ S_k L₀⁻ᵀ), Φ = lower triangle with the diagonal halved
    (a,) = ins
    L = [cholesky_p.bind(a[0])]
    shape, dt = shape_of(a[0]), dtype_of(a[0])
    half = select(_eye_mask(shape), full(shape, 0.5, dt), full(shape, 1.0, dt))
    for k in range(1, len(a)):
        r = cauchy_term(L, [None] + [None if c is None else mT(c) for c in L[1:]], k,
                        lo=1, hi=k - 1, op=batched_matmul)
        s = sub_term(None if a[k] is None else sym_lower(a[k]), r)
        if s is None:
            L.append(None)
            continue
        tmp = triangular_solve(L[0], s, left_side=True, lower=True)
        tmp = mT(triangular_solve(L[0], mT(tmp), left_side=True, lower=True))
        L.append(batched_matmul(L[0], mul(tril(tmp), half)))
    return L


deftaylor(cholesky_p, _cholesky_taylor)

triangular_solve_p = Primitive("triangular_solve")


def _tri_solve_impl(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    a = np.asarray(a)
    b = np.asarray(b)
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    low = bool(lower) != bool(transpose_a)        # the triangle of op(a)
    if transpose_a:
        t = np.swapaxes(t, -1, -2)
    if left_side:
        return _tri_solve_left(t, b, low)
    # x a = b  <=>  aᵀ xᵀ = bᵀ
    return np.swapaxes(_tri_solve_left(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not low),
                       -1, -2)


def _tri_solve_left(t, b, low):
    try:
        return np.linalg.solve(t, b)
    except np.linalg.LinAlgError:
        # an exactly singular triangle: substitution, whose division by the zero pivot gives
        # inf/NaN (what trsm, the kernels and JAX give) instead of an exception
        return _substitute(t, b, low)


def _substitute(t, b, low):
    """Forward (``low``) or back substitution for a stack of triangular ``t``."""
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, batch + t.shape[-2:])
    x = np.zeros(batch + b.shape[-2:], np.result_type(t, b))
    b = np.broadcast_to(b, x.shape)
    n = t.shape[-1]
    with np.errstate(all="ignore"):
        for i in (range(n) if low else range(n - 1, -1, -1)):
            done = slice(0, i) if low else slice(i + 1, n)
            acc = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, done], x[..., done, :])
            x[..., i, :] = acc / t[..., i, i][..., None]
    return x


def _tri_solve_aval(a, b, *, left_side, lower, transpose_a, unit_diagonal):
    _sq_aval("triangular_solve")(a)
    n = a.shape[-1]
    if b.ndim != a.ndim or (b.shape[-2] if left_side else b.shape[-1]) != n:
        raise ShapeError(f"triangular_solve: a {a.shape} and b {b.shape} do not match")
    return ShapedArray(b.shape, b.dtype)


def _tri_solve_jvp(primals, tangents, **p):
    a, b = primals
    ta, tb = tangents
    x = triangular_solve_p.bind(a, b, **p)
    out = None
    if not is_zero(tb):
        out = triangular_solve_p.bind(a, tb, **p)
    if not is_zero(ta):
        # d(A⁻¹B) = -A⁻¹ dA A⁻¹ B, with dA restricted to the triangle the routine reads
        dA = tril(ta) if p["lower"] else mT(tril(mT(ta)))
        if p["unit_diagonal"]:
            dA = tril(dA, -1) if p["lower"] else mT(tril(mT(dA), -1))
        if p["transpose_a"]:
            dA = mT(dA)
        prod = batched_matmul(dA, x) if p["left_side"] else batched_matmul(x, dA)
        c = neg(triangular_solve_p.bind(a, prod, **p))
        out = c if out is None else add(out, c)
    return x, (_zero_like(x) if out is None else out)


def _tri_solve_transpose(ct, a, b, **p):
    assert not isinstance(a, UndefinedPrimal)
    return [None, triangular_solve_p.bind(a, ct, **dict(p, transpose_a=not p["transpose_a"]))]


triangular_solve_p.impl = _tri_solve_impl
triangular_solve_p.abstract_eval = _tri_solve_aval
triangular_solve_p.jvp = _tri_solve_jvp
deftranspose(triangular_solve_p, _tri_solve_transpose, argnums=(1,))   # linear in b
_batch_linalg(triangular_solve_p)


def _tri_solve_taylor(ins, **p):
    a, b = ins                                    # op(A) X = B (or X op(A) = B), A's triangle

    def tri(ta):                                  # the part of a coefficient the routine reads
        dA = tril(ta) if p["lower"] else mT(tril(mT(ta)))
        if p["unit_diagonal"]:
            dA = tril(dA, -1) if p["lower"] else mT(tril(mT(dA), -1))
        return mT(dA) if p["transpose_a"] else dA

    at = [None] + [None if c is None else tri(c) for c in a[1:]]
    x = [triangular_solve_p.bind(a[0], b[0], **p)]
    for k in range(1, len(a)):
        if p["left_side"]:
            r = cauchy_term(at, x, k, lo=1, op=batched_matmul)
        else:
            r = cauchy_term(x, at, k, hi=k - 1, op=batched_matmul)
        rhs = sub_term(b[k], r)
        x.append(None if rhs is None else triangular_solve_p.bind(a[0], rhs, **p))
    return x


deftaylor(triangular_solve_p, _tri_solve_taylor)


def _batch_solve_shared_matrix(prim, generic):
    """A batched right-hand side against one matrix: fold the batch into b's columns (rows
    for a right-side solve), so the matrix is factored once, not once per batch element."""
    def rule(args, dims, **params):
        (a, b), (da, db) = args, dims
        if da is not None:
            return generic(args, dims, **params)
        b = moveaxis(b, db)
        shape = shape_of(b)                       # (B, *lead, m, k)
        B, lead, (m, k) = shape[0], shape[1:-2], shape[-2:]
        L = len(lead)
        if params.get("left_side", True):         # a x = b: the batch joins the columns
            bt = transpose(b, tuple(range(1, L + 2)) + (0, L + 2))       # (*lead, m, B, k)
            x = prim.bind(a, reshape(bt, lead + (m, B * k)), **params)
            return reshape(x, lead + (m, B, k)), L + 1
        bt = transpose(b, tuple(range(1, L + 1)) + (0, L + 1, L + 2))    # (*lead, B, m, k)
        x = prim.bind(a, reshape(bt, lead + (B * m, k)), **params)      # x a = b: rows
        return reshape(x, lead + (B, m, k)), L
    prim.batch = rule


_batch_solve_shared_matrix(triangular_solve_p, triangular_solve_p.batch)


def triangular_solve(a, b, left_side=True, lower=True, transpose_a=False, unit_diagonal=False):
    """``a⁻¹ b`` (or ``b a⁻¹``) for a triangular ``a``, LAPACK's trsm options."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))


solve_p = Primitive("solve")     # a (..., n, n), b (..., n, k) -> a⁻¹ b


def _solve_impl(a, b):
    a, b = np.asarray(a), np.asarray(b)
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
        return _per_matrix(_solve_impl, batch + b.shape[-2:], b.dtype, a, b)


def _solve_aval(a, b):
    _sq_aval("solve")(a)
    if b.ndim != a.ndim or b.shape[-2] != a.shape[-1] or b.shape[:-2] != a.shape[:-2]:
        raise ShapeError(f"solve: a {a.shape} and b {b.shape} do not match")
    if a.dtype != b.dtype:
        raise DTypeError(f"solve: dtypes {a.dtype} and {b.dtype} differ")
    return ShapedArray(b.shape, b.dtype)


def _solve_jvp(primals, tangents):
    # dx = A⁻¹ (db - dA x)
    a, b = primals
    ta, tb = tangents
    x = solve_p.bind(a, b)
    rhs = None
    if not is_zero(tb):
        rhs = tb
    if not is_zero(ta):
        c = neg(batched_matmul(ta, x))
        rhs = c if rhs is None else add(rhs, c)
    return x, (_zero_like(x) if rhs is None else solve_p.bind(a, rhs))


def _solve_transpose(ct, a, b):
    assert not isinstance(a, UndefinedPrimal)
    return [None, solve_p.bind(mT(a), ct)]


solve_p.impl = _solve_impl
solve_p.abstract_eval = _solve_aval
solve_p.jvp = _solve_jvp
deftranspose(solve_p, _solve_transpose, argnums=(1,))   # linear in b
_batch_linalg(solve_p)
_batch_solve_shared_matrix(solve_p, solve_p.batch)


def _solve_taylor(ins):
    a, b = ins                                    # A X = B: A₀ X_k = B_k - Σ_{j=1}^k A_j X_{k-j}
    x = [solve_p.bind(a[0], b[0])]
    for k in range(1, len(a)):
        rhs = sub_term(b[k], cauchy_term(a, x, k, lo=1, op=batched_matmul))
        x.append(None if rhs is None else solve_p.bind(a[0], rhs))
    return x


deftaylor(solve_p, _solve_taylor)

slogdet_p = Primitive("slogdet", multiple_results=True)


def _slogdet_impl(a):
    s, l = np.linalg.slogdet(np.asarray(a))
    return [np.asarray(s), np.asarray(l)]


def _slogdet_aval(a):
    _sq_aval("slogdet")(a)
    # complex: the sign is a complex number of modulus 1, log|det| is real
    return [ShapedArray(a.shape[:-2], a.dtype), ShapedArray(a.shape[:-2], real_dtype(a.dtype))]


def _slogdet_jvp(primals, tangents):
    # c = d log det A = tr(A⁻¹ dA); log|det A| moves by Re c and the sign s = det/|det| by
    # s·i·Im c (zero for a real A: its sign is piecewise constant)
    (a,), (t,) = primals, tangents
    s, l = slogdet_p.bind(a)
    if is_zero(t):
        return [s, l], [_zero_like(s), _zero_like(l)]
    n = _ndim(a)
    x = solve_p.bind(a, t)
    eye = convert(_eye_mask(shape_of(a)), dtype_of(a))
    c = reduce_sum(mul(x, eye), (n - 2, n - 1))
    if not _is_complex(a):
        return [s, l], [_zero_like(s), c]
    ds = mul(s, complex_(zeros_like(real(c)), imag(c)))
    return [s, l], [ds, real(c)]


slogdet_p.impl = _slogdet_impl
slogdet_p.abstract_eval = _slogdet_aval
slogdet_p.jvp = _slogdet_jvp
_batch_linalg(slogdet_p)


def _slogdet_taylor(ins):
    # (log|det A|)' = tr(A⁻¹ A'); B = A⁻¹ has A₀ B_m = -Σ_{j=1}^m A_j B_{m-j}
    (a,) = ins
    K = len(a) - 1
    s0, l0 = slogdet_p.bind(a[0])
    shape, nd = shape_of(a[0]), len(shape_of(a[0]))
    eye = convert(_eye_mask(shape), dtype_of(a[0]))
    B = [solve_p.bind(a[0], eye)]
    for m in range(1, K):
        r = cauchy_term(a, B, m, lo=1, op=batched_matmul)
        B.append(None if r is None else neg(solve_p.bind(a[0], r)))

    def tr(x, y):                                 # tr(x y) = Σ x ∘ yᵀ
        return reduce_sum(mul(x, mT(y)), (nd - 2, nd - 1))

    l = [l0] + [sum_terms(scale(mul_term(a[j], B[k - j], tr), j / k) for j in range(1, k + 1))
                for k in range(1, K + 1)]
    return [[s0] + [None] * K, l]


deftaylor(slogdet_p, _slogdet_taylor)

eigh_p = Primitive("eigh", multiple_results=True)
# eigh_p(a, upper=False) is the eigendecomposition of the Hermitian matrix held in the lower
# triangle of ``a`` (numpy's UPLO='L'). ``upper=True`` reads the same matrix, but through
# LAPACK's UPLO='U' path run on aᴴ: exactly ``numpy.linalg.eigh(aᴴ, 'U')``, whose eigenvectors
# carry that path's signs (phases). ``linalg.eigh(x, 'U')`` binds it on xᴴ so that traced
# results, and so derivatives, describe the very eigenvectors numpy returns (issue 33: with
# the 'L' path on xᴴ they differed in sign, and a derivative of v disagreed with finite
# differences of numpy's v). The matrix, the values and the derivative rule are the same for
# both: a backend that ignores ``upper`` still returns a valid decomposition.


def _eigh_impl(a, upper=False):
    a = np.asarray(a)
    if upper:
        w, v = np.linalg.eigh(np.conj(np.swapaxes(a, -1, -2)), UPLO="U")
    else:
        w, v = np.linalg.eigh(a, UPLO="L")
    return [w, v]


def _eigh_aval(a, upper=False):
    _sq_aval("eigh")(a)
    # Hermitian input: real eigenvalues, eigenvectors of the input's dtype
    return [ShapedArray(a.shape[:-1], real_dtype(a.dtype)), ShapedArray(a.shape, a.dtype)]


def _eigh_jvp(primals, tangents, upper=False):
    # with S = Vᴴ dA V (Hermitian): dw = Re diag(S), dV = V (F ∘ S),
    # F_ij = 1/(w_j - w_i) off the diagonal, 0 on it. For complex V this tangent is the one
    # with Im diag(Vᴴ dV) = 0: each eigenvector's phase is a gauge (LAPACK fixes none), so
    # only functions invariant under V -> V·diag(e^{iφ}) have a defined derivative.
    (a,), (t,) = primals, tangents
    w, v = eigh_p.bind(a, upper=True) if upper else eigh_p.bind(a)
    if is_zero(t):
        return [w, v], [_zero_like(w), _zero_like(v)]
    t = herm_lower(t)
    S = batched_matmul(mH(v), batched_matmul(t, v))
    shape = shape_of(a)
    n = _ndim(a)
    eye = _eye_mask(shape)
    wi = broadcast_in_dim(w, shape, tuple(range(n - 2)) + (n - 2,))
    wj = broadcast_in_dim(w, shape, tuple(range(n - 2)) + (n - 1,))
    diff = sub(wj, wi)
    safe = select(eye, ones_like(diff), diff)
    F = select(eye, zeros_like(diff), div(ones_like(diff), safe))
    dw = real(reduce_sum(mul(S, convert(eye, dtype_of(a))), (n - 1,)))
    dv = batched_matmul(v, mul(convert(F, dtype_of(a)), S))
    return [w, v], [dw, dv]


eigh_p.impl = _eigh_impl
eigh_p.abstract_eval = _eigh_aval
eigh_p.jvp = _eigh_jvp
_batch_linalg(eigh_p)


def _eigh_taylor(ins, upper=False):
    # A V = V Λ, VᵀV = I. With V_k = V₀ C_k, Ã_j = V₀ᵀ A_j V₀ and
    # R_k = Σ_{j=1}^k Ã_j C_{k-j} - Σ_{j=1}^{k-1} C_j Λ_{k-j}:
    #   Λ_k = diag R_k,  (C_k)_ij = R_ij / (λ_j - λ_i) off the diagonal,
    #   (C_k)_ii = -½ (Σ_{j=1}^{k-1} C_jᵀ C_{k-j})_ii   (orthonormality)
    (a,) = ins
    K = len(a) - 1
    w0, v0 = eigh_p.bind(a[0], upper=upper) if upper else eigh_p.bind(a[0])
    shape, nd, dt = shape_of(a[0]), len(shape_of(a[0])), dtype_of(a[0])
    batch = tuple(range(nd - 2))
    eye = _eye_mask(shape)
    eyef = convert(eye, dt)
    wi = broadcast_in_dim(w0, shape, batch + (nd - 2,))
    wj = broadcast_in_dim(w0, shape, batch + (nd - 1,))
    diff = sub(wj, wi)
    safe = select(eye, ones_like(diff), diff)
    F = select(eye, zeros_like(diff), div(ones_like(diff), safe))
    At = [None] + [None if c is None else batched_matmul(mT(v0), batched_matmul(sym_lower(c), v0))
                   for c in a[1:]]
    C, W = [None], [w0]                           # C₀ = I is used implicitly

    def cols(c, lam):                             # c diag(λ)
        return mul(c, broadcast_in_dim(lam, shape, batch + (nd - 1,)))

    for k in range(1, K + 1):
        r = sum_terms([At[k]] + [mul_term(At[j], C[k - j], batched_matmul) for j in range(1, k)]
                      + [neg_term(None if C[j] is None or W[k - j] is None
                                  else cols(C[j], W[k - j])) for j in range(1, k)])
        if r is None:
            C.append(None)
            W.append(None)
            continue
        W.append(reduce_sum(mul(r, eyef), (nd - 1,)))
        ck = mul(F, r)
        o = sum_terms(mul_term(C[j], C[k - j], lambda x, y: batched_matmul(mT(x), y))
                      for j in range(1, k))
        if o is not None:
            ck = add(ck, mul(o, mul(eyef, -0.5)))
        C.append(ck)
    return [W, [v0] + [None if c is None else batched_matmul(v0, c) for c in C[1:]]]


deftaylor(eigh_p, _eigh_taylor)



# ----------------------------------------------------------------------------------- qr

qr_p = Primitive("qr", multiple_results=True)
# qr_p(a, full=False) is ``numpy.linalg.qr(a, 'complete' if full else 'reduced')`` of a stack
# (..., m, n): Q (..., m, k) with orthonormal columns and the upper trapezoidal R (..., k, n),
# k = m if full else min(m, n). Householder reflections as LAPACK's geqrf + orgqr (ungqr),
# with their signs (R's diagonal real for complex a): what numpy, the kernels and cuSOLVER
# compute, so jitted and eager results agree.


def _qr_impl(a, full=False):
    a = np.asarray(a)
    q, r = np.linalg.qr(a, mode="complete" if full else "reduced")
    return [q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)]


def _qr_aval(a, full=False):
    _mat_aval("qr")(a)
    m, n = a.shape[-2:]
    k = m if full else min(m, n)
    return [ShapedArray(a.shape[:-2] + (m, k), a.dtype), ShapedArray(a.shape[:-2] + (k, n), a.dtype)]


def _qr_tangent(q, r, da):
    # A = QR with m >= n (reduced): C = Qᴴ dA R⁻¹ and Ω = Qᴴ dQ (skew-Hermitian, so its
    # strict lower triangle is C's and its upper one follows; for complex A the imaginary
    # diagonal is C's, as R's diagonal stays real):
    #   dQ = dA R⁻¹ + Q (Ω - C),  dR = (C - Ω) R
    dar = triangular_solve(r, da, left_side=False, lower=False)
    c = batched_matmul(mH(q), dar)
    low = tril(c, -1)
    om = sub(low, mH(low))
    if _is_complex(c):
        eye = _eye_mask(shape_of(c))
        om = add(om, select(eye, complex_(zeros_like(real(c)), imag(c)), zeros_like(c)))
    dq = add(batched_matmul(q, sub(om, c)), dar)
    dr = batched_matmul(sub(c, om), r)
    return dq, dr


def _qr_jvp(primals, tangents, full=False):
    (a,), (t,) = primals, tangents
    q, r = qr_p.bind(a, full=full)
    if is_zero(t):
        return [q, r], [_zero_like(q), _zero_like(r)]
    m, n = shape_of(a)[-2:]
    nd = _ndim(a)
    if full and m > n:
        # Q = [Q₁ Q₂]: Q₁ and R's top rows as the reduced factorization, R's bottom rows stay
        # zero. Q₂ spans the complement of A's range in a basis the algorithm picks (a gauge,
        # as an eigenvector's sign): its tangent is the one with Q₂ᴴ dQ₂ = 0, so
        # dQ₂ = -Q₁ dQ₁ᴴ Q₂ (orthogonality to Q₁ kept). Functions of the complement through
        # Q₂ Q₂ᴴ (or of Q₁, R) get their exact derivative; Q₂'s entries themselves follow
        # LAPACK's basis, whose motion this does not model (JAX and PyTorch give none).
        q1, q2 = slice_in_dim(q, 0, n, nd - 1), slice_in_dim(q, n, m, nd - 1)
        dq1, dr1 = _qr_tangent(q1, slice_in_dim(r, 0, n, nd - 2), t)
        dq2 = neg(batched_matmul(q1, batched_matmul(mH(dq1), q2)))
        dr = concatenate([dr1, zeros_like(slice_in_dim(r, n, m, nd - 2))], nd - 2)
        return [q, r], [concatenate([dq1, dq2], nd - 1), dr]
    if m < n:
        # A = [X Y] with X square: Q R₁ = X is X's QR, and R₂ = Qᴴ Y
        x_t, y, y_t = (slice_in_dim(t, 0, m, nd - 1), slice_in_dim(a, m, n, nd - 1),
                       slice_in_dim(t, m, n, nd - 1))
        dq, dr1 = _qr_tangent(q, slice_in_dim(r, 0, m, nd - 1), x_t)
        dr2 = add(batched_matmul(mH(dq), y), batched_matmul(mH(q), y_t))
        return [q, r], [dq, concatenate([dr1, dr2], nd - 1)]
    return [q, r], list(_qr_tangent(q, r, t))


qr_p.impl = _qr_impl
qr_p.abstract_eval = _qr_aval
qr_p.jvp = _qr_jvp
_batch_linalg(qr_p)


# ---------------------------------------------------------------------------------- svd

svd_p = Primitive("svd", multiple_results=True)
# svd_p(a, compute_uv=True) is the thin SVD of a stack (..., m, n), k = min(m, n):
# [U (..., m, k), s (..., k) real and descending, Vᴴ (..., k, n)], or [s] alone;
# ``numpy.linalg.svd(a, full_matrices=False)`` (LAPACK gesdd). The singular vectors carry
# LAPACK's signs (phases); ``linalg.svd`` makes them canonical afterwards. A matrix LAPACK
# cannot decompose (NaN or inf entries) gives NaN results, as the kernels do.


def _svd_impl(a, compute_uv=True):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    k, rdt = min(m, n), real_dtype(a.dtype)
    try:
        if not compute_uv:
            return [np.linalg.svd(a, compute_uv=False).astype(rdt, copy=False)]
        u, s, vt = np.linalg.svd(a, full_matrices=False)
    except np.linalg.LinAlgError:
        if a.ndim == 2:
            outs = [np.full((m, k), np.nan, a.dtype), np.full((k,), np.nan, rdt),
                    np.full((k, n), np.nan, a.dtype)]
            return outs if compute_uv else outs[1:2]
        res = [_svd_impl(a[i], compute_uv) for i in np.ndindex(a.shape[:-2])]
        return [np.stack([r[j] for r in res]).reshape(a.shape[:-2] + res[0][j].shape)
                for j in range(len(res[0]))]
    outs = [u.astype(a.dtype, copy=False), s.astype(rdt, copy=False), vt.astype(a.dtype, copy=False)]
    return outs if compute_uv else outs[1:2]


def _svd_aval(a, compute_uv=True):
    _mat_aval("svd")(a)
    m, n = a.shape[-2:]
    k, batch = min(m, n), a.shape[:-2]
    s = ShapedArray(batch + (k,), real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    return [ShapedArray(batch + (m, k), a.dtype), s, ShapedArray(batch + (k, n), a.dtype)]


def _svd_jvp(primals, tangents, compute_uv=True):
    # the standard rule (distinct singular values): with dP = Uᴴ dA V,
    #   ds = Re diag(dP),  dU = U (F∘(dP S + S dPᴴ) + D) + (I - UUᴴ) dA V S⁻¹,
    #   dV = V (F∘(S dP + dPᴴ S)) + (I - VVᴴ) dAᴴ U S⁻¹,  F_ij = 1/(σ_j² - σ_i²), i ≠ j,
    # and for complex A, D = diag(i·Im(dP_kk)/σ_k): the phase a pair (u_k, v_k) shares is a
    # gauge; this choice (JAX's) puts its change into U. At degenerate pairs (σ_i = σ_j) F_ij
    # is taken as 0, and S⁻¹ as 0 at σ = 0: the singular values' derivative stays exact, the
    # vectors' is the minimum-norm choice.
    (a,), (da,) = primals, tangents
    u, s, vt = svd_p.bind(a, compute_uv=True)
    outs = [u, s, vt] if compute_uv else [s]
    if is_zero(da):
        return outs, [_zero_like(o) for o in outs]
    dt, rdt = dtype_of(a), dtype_of(s)
    cplx = _is_complex(a)
    m, n = shape_of(a)[-2:]
    batch_shape = shape_of(s)[:-1]
    k = shape_of(s)[-1]
    nd = len(batch_shape) + 2
    batch = tuple(range(nd - 2))

    def cols(vec, rows):              # (..., k) -> (..., rows, k): entry j along the columns
        return broadcast_in_dim(vec, batch_shape + (rows, k), batch + (nd - 1,))

    v, ut = mH(vt), mH(u)
    dp = batched_matmul(ut, batched_matmul(da, v))                          # (..., k, k)
    eye = _eye_mask(batch_shape + (k, k))
    ds = reduce_sum(select(eye, dp, zeros_like(dp)), (nd - 1,))
    if cplx:
        ds_im = imag(ds)
        ds = real(ds)
    if not compute_uv:
        return outs, [ds]
    si = broadcast_in_dim(s, batch_shape + (k, k), batch + (nd - 2,))       # σ_i down the rows
    sj = cols(s, k)                                                         # σ_j along columns
    diff = mul(add(sj, si), sub(sj, si))
    bad = or_p.bind(eye, eq(diff, zeros_like(diff)))
    F = convert(select(bad, zeros_like(diff), div(ones_like(diff), select(bad, ones_like(diff), diff))), dt)
    sic, sjc = convert(si, dt), convert(sj, dt)
    dpt = mH(dp)
    du = batched_matmul(u, mul(F, add(mul(dp, sjc), mul(sic, dpt))))
    dv = batched_matmul(v, mul(F, add(mul(sic, dp), mul(dpt, sjc))))
    pos = gt(s, zeros_like(s))
    sinv = select(pos, div(ones_like(s), select(pos, s, ones_like(s))), zeros_like(s))  # (..., k)
    if cplx:
        d = complex_(zeros_like(ds_im), mul(ds_im, sinv))
        du = add(du, mul(u, cols(d, m)))
    if m > n:
        dav = batched_matmul(da, v)
        du = add(du, mul(sub(dav, batched_matmul(u, batched_matmul(ut, dav))), convert(cols(sinv, m), dt)))
    if n > m:
        dau = batched_matmul(mH(da), u)
        dv = add(dv, mul(sub(dau, batched_matmul(v, batched_matmul(vt, dau))), convert(cols(sinv, n), dt)))
    return outs, [du, ds, mH(dv)]


svd_p.impl = _svd_impl
svd_p.abstract_eval = _svd_aval
svd_p.jvp = _svd_jvp
_batch_linalg(svd_p)
