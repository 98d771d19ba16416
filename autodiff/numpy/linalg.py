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

from .. import primitives as P
from ..core import Tracer
from ..core import complex_dtype as _complex_dtype
from ..errors import ShapeError
from ..core import user_source
from ..custom_derivatives import custom_jvp as _custom_jvp
from ._base import npfunc, asarray, promote, shape_of, float_type, dtype_of, normalize_axes

LinAlgError = np.linalg.LinAlgError


def _float(a):
    a = asarray(a)
    return P.convert(a, float_type(dtype_of(a)))


def _square(a, name):
    s = shape_of(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ShapeError(f"linalg.{name}: expected a square matrix (..., n, n), got shape {s}",
                         source=user_source())


def _is_complex(a):
    return np.dtype(dtype_of(a)).kind == "c"


def _mH(x):
    """Conjugate transpose of the last two axes (the transpose for real ``x``)."""
    from . import swapaxes, conj
    x = swapaxes(x, -1, -2)
    return conj(x) if _is_complex(x) else x


def _real_of(dt):
    """The dtype of the real parts of ``dt`` (complex64 -> float32; reals unchanged)."""
    return np.dtype(np.abs(np.zeros((), dt)).dtype)


def _abs2(x):
    """``|x|²`` elementwise, real: ``x·x`` for real ``x``, ``Re(x·conj(x))`` for complex."""
    from . import multiply, real, conj
    if _is_complex(x):
        return real(multiply(x, conj(x)))
    return multiply(x, x)


@npfunc(np.linalg.solve)
def solve(a, b):
    a, b = promote(_float(a), _float(b))
    _square(a, "solve")
    sa, sb = shape_of(a), shape_of(b)
    vec = len(sb) == 1
    if vec:
        b = P.expand_dims(b, (1,))
    elif len(sb) == len(sa) - 1 and sb == sa[:-1]:
        raise ShapeError("linalg.solve: a stack of vectors b must be given as (..., n, 1) "
                         "(numpy 2 semantics)", source=user_source())
    batch = np.broadcast_shapes(sa[:-2], shape_of(b)[:-2])
    from . import broadcast_to
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + shape_of(b)[-2:])
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
def slogdet(a):
    a = _float(a)
    _square(a, "slogdet")
    s, l = P.slogdet_p.bind(a)
    return SlogdetResult(s, l)


# namedtuples (as numpy's and JAX's results are), so they are pytrees: jit / vmap can return them
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


@npfunc(np.linalg.det)
def det(a):
    s, l = slogdet(a)
    from . import exp, multiply
    return multiply(s, exp(l))


@npfunc(np.linalg.cholesky)
def cholesky(a, upper=False):
    a = _float(a)
    _square(a, "cholesky")
    from . import swapaxes
    if upper:
        # numpy reads the upper triangle for upper=True: it is the lower triangle of aᵀ,
        # and U = Lᵀ where L L ᵀ = aᵀ (= a for the symmetric input numpy assumes)
        return swapaxes(P.cholesky_p.bind(swapaxes(a, -1, -2)), -1, -2)
    return P.cholesky_p.bind(a)


@npfunc(np.linalg.eigh)
def eigh(a, UPLO="L"):
    a = _float(a)
    _square(a, "eigh")
    uplo = UPLO.upper() if isinstance(UPLO, str) else UPLO
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
def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO)[0]


@npfunc(np.linalg.norm)
def norm(x, ord=None, axis=None, keepdims=False):
    from . import sqrt, sum, absolute, max, min, multiply, power, reshape
    x = _float(x)
    nd = len(shape_of(x))
    if axis is None:
        if ord is None or (ord in ("fro", "f") and nd == 2) or (ord == 2 and nd == 1):
            out = _safe_sqrt(sum(_abs2(x)))
            return reshape(out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    axes = normalize_axes(axis, nd)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return _safe_sqrt(sum(_abs2(x), axis=axes, keepdims=keepdims))
        if ord == np.inf:
            return max(absolute(x), axis=axes, keepdims=keepdims)
        if ord == -np.inf:
            return min(absolute(x), axis=axes, keepdims=keepdims)
        if ord == 0:
            from . import not_equal
            return sum(P.convert(not_equal(x, 0), dtype_of(x)), axis=axes, keepdims=keepdims)
        if ord == 1:
            return sum(absolute(x), axis=axes, keepdims=keepdims)
        return power(sum(power(absolute(x), ord), axis=axes, keepdims=keepdims), 1.0 / ord)
    if len(axes) == 2:
        r, c = axes
        if ord is None or ord in ("fro", "f"):
            return _safe_sqrt(sum(_abs2(x), axis=axes, keepdims=keepdims))
        if ord == "nuc" or ord in (2, -2):
            from . import moveaxis
            y = moveaxis(x, (r, c), (-2, -1))
            s = svdvals(y)
            out = sum(s, axis=-1) if ord == "nuc" else (max(s, axis=-1) if ord == 2 else min(s, axis=-1))
            if keepdims:
                from . import expand_dims
                out = expand_dims(expand_dims(out, r), c)
            return out
        if ord in (1, -1):
            s = sum(absolute(x), axis=r, keepdims=True)
            red = max if ord == 1 else min
            out = red(s, axis=c, keepdims=True)
        elif ord in (np.inf, -np.inf):
            s = sum(absolute(x), axis=c, keepdims=True)
            red = max if ord == np.inf else min
            out = red(s, axis=r, keepdims=True)
        else:
            raise ValueError(f"invalid norm order {ord!r} for matrices")
        if not keepdims:
            out = P.squeeze(out, tuple(sorted(axes)))
        return out
    raise ValueError("improper number of dimensions to norm")


def _safe_sqrt(s):
    """√s with a zero (sub)gradient at s = 0 (like autograd's norm); NaN stays NaN.

    The one safe square root of the namespace (``std``, ``linalg.norm``, ``hypot``): only
    s == 0 is replaced (a ``s > 0`` test would also turn NaN into 0), and the inner
    ``where`` keeps d√s = 1/(2√s) from evaluating 1/0 there.
    """
    from . import sqrt, where, ones_like, zeros_like
    if not isinstance(s, Tracer):
        return sqrt(s)
    zero = P.eq(s, P.full_like(s, 0))
    return where(zero, zeros_like(s), sqrt(where(zero, ones_like(s), s)))


@npfunc(np.linalg.matrix_power)
def matrix_power(a, n):
    from . import matmul
    a = _float(a)
    _square(a, "matrix_power")
    n = int(n)
    if n < 0:
        a, n = inv(a), -n
    if n == 0:
        sh = shape_of(a)
        return P.convert(P.eq(P.iota(np.int64, sh, len(sh) - 2), P.iota(np.int64, sh, len(sh) - 1)), dtype_of(a))
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


@npfunc(np.linalg.trace if hasattr(np.linalg, "trace") else None)
def trace(x, offset=0):
    from . import trace as _tr
    return _tr(x, offset, -2, -1)


def _rtol_default(m, n, dt):
    return builtins.max(m, n) * float(np.finfo(dt).eps)


def _pinv_body(a, rtol):
    from . import matmul, swapaxes, max, expand_dims, where, divide, multiply
    u, s, vt = _svd_thin(a)
    cut = multiply(max(s, axis=-1, keepdims=True), rtol)
    from . import greater
    keep = greater(s, cut)
    sinv = where(keep, divide(1.0, where(keep, s, 1.0)), 0.0)
    return matmul(multiply(_mH(vt), expand_dims(sinv, -2)), _mH(u))


def _pinv_jvp(rtol, primals, tangents):
    # Golub & Pereyra (constant rank): dA⁺ = -A⁺ dA A⁺ + A⁺A⁺ᴴ dAᴴ (I - A A⁺) + (I - A⁺A) dAᴴ A⁺ᴴ A⁺
    from . import matmul, swapaxes, subtract, add, negative
    (a,), (da,) = primals, tangents
    p = _pinv_cj(rtol, a)
    m, n = shape_of(a)[-2:]
    batch = shape_of(a)[:-2]
    pt, dat = _mH(p), _mH(da)
    t1 = negative(matmul(p, matmul(da, p)))
    t2 = matmul(matmul(p, pt), matmul(dat, subtract(_eye(m, dtype_of(a), batch), matmul(a, p))))
    t3 = matmul(subtract(_eye(n, dtype_of(a), batch), matmul(p, a)), matmul(dat, matmul(pt, p)))
    return p, add(add(t1, t2), t3)


_pinv_cj = _custom_jvp(lambda rtol, a: _pinv_body(a, rtol), nondiff_argnums=(0,))
_pinv_cj.defjvp(_pinv_jvp)


@npfunc(np.linalg.pinv)
def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    """``numpy.linalg.pinv``: the pseudo-inverse from the SVD, singular values below
    ``rtol·σ_max`` (default ``max(m, n)·ε``) dropped; its derivative is Golub and Pereyra's,
    exact where the rank is locally constant.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0. ]])
    """
    a = _float(a)
    m, n = shape_of(a)[-2:]
    tol = rtol if rtol is not None else rcond
    tol = _rtol_default(m, n, dtype_of(a)) if tol is None else float(tol)
    return _pinv_cj(tol, a)


LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


@npfunc(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """``numpy.linalg.lstsq``: ``x = pinv(a) b`` (minimum-norm least squares), with the
    residual sums of squares (when ``m > n``; traced values assume full rank), the rank and
    the singular values. Differentiable in ``a`` and ``b``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> x = anp.linalg.lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 2.0, 3.0]))[0]
    >>> x
    array([1., 2.])
    """
    from . import matmul, sum, subtract, multiply, expand_dims, squeeze
    a, b = promote(_float(a), _float(b))
    m, n = shape_of(a)[-2:]
    vec = len(shape_of(b)) == 1
    bb = expand_dims(b, -1) if vec else b
    tol = _rtol_default(m, n, dtype_of(a)) if rcond is None or rcond == -1 else float(rcond)
    if rcond == -1:
        tol = float(np.finfo(dtype_of(a)).eps)
    x = matmul(pinv(a, rtol=tol), bb)
    s = svdvals(a)
    from . import max as _max
    from . import greater
    rank = sum(greater(s, multiply(_max(s, axis=-1, keepdims=True), tol)), axis=-1, dtype=np.int32)
    if m > n:
        r = subtract(matmul(a, x), bb)
        res = sum(_abs2(r), axis=-2)
    else:
        res = P.full((0,), 0, _real_of(dtype_of(a)))
    if vec:
        x = squeeze(x, -1)
    return LstsqResult(x, res, rank, s)


@npfunc(np.linalg.matrix_rank)
def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """Number of singular values above ``tol`` (default ``σ_max·max(m, n)·ε``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> int(anp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    from . import sum, max, multiply, any, not_equal, astype
    A = _float(A)
    if len(shape_of(A)) < 2:
        return astype(any(not_equal(A, 0)), np.int64)
    s = svdvals(A)
    m, n = shape_of(A)[-2:]
    if tol is None:
        r = _rtol_default(m, n, dtype_of(A)) if rtol is None else rtol
        tol = multiply(max(s, axis=-1, keepdims=True), r)
    else:
        from . import expand_dims
        tol = expand_dims(asarray(tol), -1) if len(shape_of(asarray(tol))) else tol
    from . import greater
    return sum(greater(s, tol), axis=-1, dtype=np.int64)


@npfunc(np.linalg.cond)
def cond(x, p=None):
    """Condition number: ``σ_max/σ_min`` for ``p`` None, 2 (``-2``: the inverse), else
    ``norm(x, p)·norm(inv(x), p)``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.linalg.cond(np.diag([4.0, 2.0])))
    2.0
    """
    from . import divide, getitem, multiply
    x = _float(x)
    if p is None or p in (2, -2):
        s = svdvals(x)
        hi, lo = getitem(s, (Ellipsis, 0)), getitem(s, (Ellipsis, -1))
        return divide(lo, hi) if p == -2 else divide(hi, lo)
    return multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


@npfunc(np.linalg.tensorinv)
def tensorinv(a, ind=2):
    """Inverse of ``a`` seen as a matrix ``prod(shape[:ind]) × prod(shape[ind:])``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    from . import reshape
    a = _float(a)
    sh = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    lead, rest = sh[:ind], sh[ind:]
    p = builtins.int(np.prod(lead))
    return reshape(inv(reshape(a, (p, -1))), rest + lead)


@npfunc(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None):
    """Solve ``tensordot(a, x, x.ndim) = b`` for ``x`` (numpy's algorithm).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.linalg.tensorsolve(2 * np.eye(4).reshape(2, 2, 2, 2), np.ones((2, 2)))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    from . import reshape, moveaxis
    a, b = promote(_float(a), _float(b))
    an = len(shape_of(a))
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        from . import transpose
        a = transpose(a, allaxes)
    sh = shape_of(a)
    oldshape = sh[-(an - len(shape_of(b))):]
    prod = builtins.int(np.prod(oldshape))
    x = solve(reshape(a, (-1, prod)), reshape(b, (-1,)))
    return reshape(x, oldshape)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """``numpy.linalg.vector_norm``: the ``ord``-norm over ``axis`` (all axes by default).

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.linalg.vector_norm(np.array([[3.0], [4.0]])))
    5.0
    """
    return _vector_norm(x, axis, keepdims, ord)


@npfunc(None)
def _vector_norm(x, axis, keepdims, ord):
    from . import reshape, ravel
    x = _float(x)
    nd = len(shape_of(x))
    if axis is None:
        out = norm(ravel(x), ord=ord)
        return reshape(out, (1,) * nd) if keepdims else out
    if isinstance(axis, tuple) and len(axis) > 1:
        from . import moveaxis, expand_dims
        axes = normalize_axes(axis, nd)
        rest = [i for i in range(nd) if i not in axes]
        y = reshape(P.transpose(x, tuple(rest) + axes), tuple(shape_of(x)[i] for i in rest) + (-1,))
        out = norm(y, ord=ord, axis=-1)
        if keepdims:
            out = reshape(out, tuple(1 if i in axes else shape_of(x)[i] for i in range(nd)))
        return out
    return norm(x, ord=ord, axis=axis if not isinstance(axis, tuple) else axis[0], keepdims=keepdims)


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
    from . import swapaxes
    return swapaxes(x, -1, -2)


def outer(x1, x2, /):
    """Outer product of two vectors (``numpy.linalg.outer``)."""
    from . import outer as _o
    return _o(x1, x2)


def vecdot(x1, x2, /, *, axis=-1):
    """``Σ x1·x2`` over ``axis``, broadcasting the rest (``numpy.linalg.vecdot``)."""
    from . import vecdot as _v
    return _v(x1, x2, axis=axis)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of 3-vectors along ``axis`` (``numpy.linalg.cross``)."""
    from . import cross as _c
    return _c(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """Diagonals of the last two axes (``numpy.linalg.diagonal``)."""
    from . import diagonal as _d
    return _d(x, offset, -2, -1)


def tensordot(x1, x2, /, *, axes=2):
    """``numpy.linalg.tensordot``."""
    from . import tensordot as _t
    return _t(x1, x2, axes)


def matmul(x1, x2, /):
    """``numpy.linalg.matmul``."""
    from . import matmul as _m
    return _m(x1, x2)


@npfunc(np.linalg.multi_dot)
def multi_dot(arrays):
    from . import matmul
    out = arrays[0]
    for a in arrays[1:]:
        out = matmul(out, a)
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
    vec = len(shape_of(b)) == len(shape_of(a)) - 1
    if vec:
        b = P.expand_dims(b, (len(shape_of(b)),))
    x = P.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=bool(trans),
                           unit_diagonal=unit_diagonal)
    if vec:
        x = P.squeeze(x, (len(shape_of(x)) - 1,))
    from ._base import to_output
    return to_output(x) if not isinstance(x, Tracer) else x





# ----------------------------------------------------------------------------
# svd and qr as compositions (jit, vmap and derivatives of any order for free)
# ----------------------------------------------------------------------------

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])


def _eye(n, dt, batch=()):
    sh = tuple(batch) + (n, n)
    return P.convert(P.eq(P.iota(np.int64, sh, len(sh) - 2), P.iota(np.int64, sh, len(sh) - 1)), dt)


def _svd_square(r):
    """Thin SVD of square (..., n, n) ``r`` from ``eigh`` of the symmetric augmented matrix
    ``[[0, r], [rᵀ, 0]]``, whose eigenvalues are ±σᵢ with eigenvectors ``[uᵢ; ±vᵢ]/√2``.
    Unlike the Gram matrix rᵀr (which squares the condition number) the augmented matrix
    keeps LAPACK's accuracy class: every σᵢ to within ~ε‖r‖."""
    from . import concatenate, swapaxes, flip, getitem, sum, multiply, sqrt, divide, matmul, where, sign, absolute
    n = shape_of(r)[-1]
    z = P.full(shape_of(r), 0, dtype_of(r))
    h = concatenate([concatenate([z, r], axis=-1), concatenate([_mH(r), z], axis=-1)], axis=-2)
    w, v = eigh(h)
    top = flip(getitem(v, (Ellipsis, slice(n, 2 * n))), axis=-1)        # the n largest, descending
    u, vv = getitem(top, (Ellipsis, slice(0, n), slice(None))), getitem(top, (Ellipsis, slice(n, 2 * n), slice(None)))

    def unit(x):
        nrm = sqrt(sum(_abs2(x), axis=-2, keepdims=True))
        return divide(x, where(P.gt(nrm, P.full_like(nrm, 0)), nrm, P.full_like(nrm, 1)))
    # the halves are normalized separately: near σ = 0 the ±σ pair mixes, which rescales
    # u and v but leaves their directions; the sign of uᵀ r v then restores the pairing
    u, vv = unit(u), unit(vv)
    if _is_complex(r):
        # complex: uᴴ r v = σ·e^{iφ}; v·e^{-iφ} makes it σ ≥ 0
        from . import conj
        s = sum(multiply(conj(u), matmul(r, vv)), axis=-2)
        m = absolute(s)
        pos = P.gt(m, P.full_like(m, 0))
        ph = where(pos, divide(s, where(pos, m, 1.0)), 1.0)
        vv = multiply(vv, P.expand_dims(conj(ph), (len(shape_of(ph)) - 1,)))
        return u, m, _mH(vv)
    s = sum(multiply(u, matmul(r, vv)), axis=-2)
    sg = where(P.lt(s, P.full_like(s, 0)), P.full_like(s, -1), P.full_like(s, 1))
    vv = multiply(vv, P.expand_dims(sg, (len(shape_of(sg)) - 1,)))
    return u, absolute(s), swapaxes(vv, -1, -2)


def _svd_thin_body(a):
    from . import matmul, swapaxes
    m, n = shape_of(a)[-2:]
    if m == n:
        return _svd_square(a)
    if m < n:        # aᴴ = U S Vᴴ  =>  a = V S Uᴴ
        u, s, vt = _svd_thin_body(_mH(a))
        return _mH(vt), s, _mH(u)
    q, r = qr(a)                       # Householder: backward stable, so σ(r) = σ(a) accurately
    u, s, vt = _svd_square(r)
    return matmul(q, u), s, vt


def _svd_thin_jvp(primals, tangents):
    # the standard rule (distinct singular values): with dP = Uᴴ dA V,
    #   dS = Re diag(dP),  dU = U (F∘(dP S + S dPᴴ) + D) + (I - UUᴴ) dA V S⁻¹,
    #   dV = V (F∘(S dP + dPᴴ S)) + (I - VVᴴ) dAᴴ U S⁻¹,  F_ij = 1/(σ_j² - σ_i²), i ≠ j,
    # and for complex A, D = diag(i·Im(dP_kk)/σ_k): the phase a pair (u_k, v_k) shares is
    # a gauge; this choice (JAX's) puts its change into U. At degenerate pairs (σ_i = σ_j)
    # F_ij is taken as 0, and S⁻¹ as 0 at σ = 0: the singular values' derivative stays
    # exact, the vectors' is the minimum-norm choice.
    from . import matmul, multiply, add, subtract, divide, expand_dims, where, diagonal, real, imag
    (a,), (da,) = primals, tangents
    u, s, vt = _svd_thin(a)
    v = _mH(vt)
    ut = _mH(u)
    cplx = _is_complex(a)
    m, n = shape_of(a)[-2:]
    k = builtins.min(m, n)
    dp = matmul(ut, matmul(da, v))
    ds = diagonal(dp, 0, -2, -1)
    si = expand_dims(s, -1)            # s_i down the rows
    sj = expand_dims(s, -2)            # s_j along the columns
    diff = multiply(add(sj, si), subtract(sj, si))
    eye = P.convert(_eye(k, np.int64, shape_of(s)[:-1]), np.bool_)
    bad = P.or_p.bind(eye, P.eq(diff, P.full_like(diff, 0)))
    F = where(bad, 0.0, divide(1.0, where(bad, 1.0, diff)))
    dpt = _mH(dp)
    du = matmul(u, multiply(F, add(multiply(dp, sj), multiply(si, dpt))))
    dv = matmul(v, multiply(F, add(multiply(si, dp), multiply(dpt, sj))))
    pos = P.gt(sj, P.full_like(sj, 0))
    sinv = where(pos, divide(1.0, where(pos, sj, 1.0)), 0.0)
    if cplx:
        d = P.complex_(P.full_like(s, 0), imag(ds))
        du = add(du, multiply(u, multiply(expand_dims(d, -2), sinv)))
        ds = real(ds)
    if m > n:
        dav = matmul(da, v)
        du = add(du, multiply(subtract(dav, matmul(u, matmul(ut, dav))), sinv))
    if n > m:
        dau = matmul(_mH(da), u)
        dv = add(dv, multiply(subtract(dau, matmul(v, matmul(vt, dau))), sinv))
    return (u, s, vt), (du, ds, _mH(dv))


def _svd_thin(a):
    return _svd_thin_cj(a)


_svd_thin_cj = _custom_jvp(_svd_thin_body)
_svd_thin_cj.defjvp(_svd_thin_jvp)


@npfunc(None)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``numpy.linalg.svd``. Concrete input: LAPACK through numpy. Traced: QR (Householder)
    and then ``eigh`` of the symmetric augmented matrix ``[[0, R], [Rᵀ, 0]]``, which keeps
    every singular value accurate to ~ε‖A‖ as LAPACK's, with the standard derivative for
    distinct singular values; at degenerate ones (σ_i = σ_j, or σ = 0) the singular values'
    derivative is exact and the vectors' takes the degenerate terms as zero. Singular
    vectors are unique up to sign only: in every mode each column of U has its
    largest-magnitude entry positive (so concrete and traced results agree).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda a: anp.linalg.svd(a, compute_uv=False)[0])(np.diag([3.0, 1.0]))
    array([[1., 0.],
           [0., 0.]])
    """
    from . import concatenate, getitem, matmul
    if not isinstance(a, Tracer):
        if not compute_uv:
            return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
        return SVDResult(*_canonical_signs(u, s, vt))
    a = _float(a)
    m, n = shape_of(a)[-2:]
    if hermitian:
        from . import absolute, argsort, take_along_axis, expand_dims, sign, multiply, swapaxes, flip
        w, v = eigh(a)
        order = flip(argsort(absolute(w), axis=-1), axis=-1)
        w = take_along_axis(w, order, axis=-1)
        v = take_along_axis(v, expand_dims(order, -2), axis=-1)
        s = absolute(w)
        if not compute_uv:
            return s
        vt = multiply(_mH(v), expand_dims(P.select(P.lt(w, P.full_like(w, 0)),
                                                    P.full_like(w, -1), P.full_like(w, 1)), -1))
        return SVDResult(v, s, vt)
    u, s, vt = _svd_thin(a)
    if not compute_uv:
        return s
    u, s, vt = _canonical_signs(u, s, vt)
    if full_matrices and m != n:
        # the complement of the range comes from the complete QR (differentiable composition)
        if m > n:
            qf = qr(a, mode="complete")[0]
            u = concatenate([u, getitem(qf, (Ellipsis, slice(None), slice(n, m)))], axis=-1)
        else:
            qf = qr(_mH(a), mode="complete")[0]
            vt = concatenate([vt, _mH(getitem(qf, (Ellipsis, slice(None), slice(m, n))))], axis=-2)
    return SVDResult(*_canonical_signs(u, s, vt))


def _canonical_signs(u, s, vt):
    """Singular vectors are unique up to a sign per pair (u_i, v_i), a phase for complex
    ones: fix it so that each column of U has its largest-magnitude entry (the first of
    ties) real and positive. Concrete (LAPACK) and traced results then agree. For real
    input the flip is piecewise constant (no derivative); for complex input the phase
    ``conj(u_jk)/|u_jk|`` is differentiated, so the derivative is that of this output."""
    from . import absolute, argmax, take_along_axis, expand_dims, where, multiply, squeeze, stop_gradient
    from . import getitem, concatenate, conj, divide
    cplx = _is_complex(u)
    k = shape_of(s)[-1]

    def factor(top):
        if cplx:
            mag = absolute(top)
            pos = P.gt(mag, P.full_like(mag, 0)) if isinstance(mag, Tracer) else mag > 0
            return where(pos, divide(conj(top), where(pos, mag, 1.0)), 1.0)
        sg = stop_gradient(where(P.lt(top, P.full_like(top, 0)) if isinstance(top, Tracer) else top < 0, -1.0, 1.0))
        return P.convert(sg, dtype_of(u)) if isinstance(sg, Tracer) else np.asarray(sg, dtype_of(u))

    idx = stop_gradient(argmax(absolute(u), axis=-2))                    # (..., m)
    top = squeeze(take_along_axis(u, expand_dims(idx, -2), axis=-2), -2)
    sg = factor(top)
    u = multiply(u, expand_dims(sg, -2))
    # Vᴴ's row i pairs with U's column i: it takes the conjugate factor
    sk = getitem(conj(sg) if cplx else sg, (Ellipsis, slice(0, k)))
    rows = shape_of(vt)[-2]
    if rows == k:
        vt = multiply(vt, expand_dims(sk, -1))
    else:        # full V: the first k rows pair with U's columns, the rest are canonical alone
        head = multiply(getitem(vt, (Ellipsis, slice(0, k), slice(None))), expand_dims(sk, -1))
        tail = getitem(vt, (Ellipsis, slice(k, rows), slice(None)))
        ti = stop_gradient(argmax(absolute(tail), axis=-1))
        tt = squeeze(take_along_axis(tail, expand_dims(ti, -1), axis=-1), -1)
        ts = factor(tt)
        # a row of Vᴴ is a conjugated column of V: making its entry real positive
        # multiplies by conj(entry)/|entry|, the same factor as a column of U
        vt = concatenate([head, multiply(tail, expand_dims(ts, -1))], axis=-2)
    return u, s, vt


@npfunc(np.linalg.svdvals if hasattr(np.linalg, "svdvals") else None)
def svdvals(x):
    return svd(x, compute_uv=False)


@npfunc(np.linalg.qr)
def qr(a, mode="reduced"):
    """QR by Householder reflections, unrolled over the columns (so the signs match
    LAPACK's, and numpy's, up to rounding); ``mode`` 'reduced', 'complete' or 'r'.
    Differentiable wherever the columns are linearly independent.

    >>> import numpy as np, autodiff.numpy as anp
    >>> q, r = anp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.round(r, 6)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    from . import (matmul, swapaxes, sum, multiply, subtract, expand_dims, where, sign,
                   sqrt, divide, getitem)
    a = _float(a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if _is_complex(a):
        q, r = _qr_complex(a)
    else:
        q, r = _qr_real(a)
    m, n = shape_of(a)[-2:]
    k = builtins.min(m, n)
    if mode == "r":
        return getitem(r, (Ellipsis, slice(0, k), slice(None)))
    if mode == "complete":
        return QRResult(q, r)
    return QRResult(getitem(q, (Ellipsis, slice(None), slice(0, k))),
                    getitem(r, (Ellipsis, slice(0, k), slice(None))))


def _qr_complex(a):
    """Complete ``(q, r)`` of a complex ``a`` by LAPACK's complex reflectors (zgeqrf's
    zlarfg), so Q's and R's phases match numpy's: for column j with α = r_jj and the
    entries below it, β = -sign(Re α)·‖(α, below)‖ (real), τ = (β - α)/β,
    v = (1, below/(α - β)); ``H = I - τ v vᴴ`` is unitary but not Hermitian, R takes
    ``Hᴴ`` from the left and Q accumulates ``H`` on the right, and R's diagonal is real.
    Unlike the real case a last 1-vector gets a reflector too (it makes r_jj real)."""
    from . import (matmul, sum, multiply, subtract, expand_dims, where, sqrt, divide, getitem,
                   real, imag, conj, triu)
    sh = shape_of(a)
    m, n = sh[-2:]
    batch = sh[:-2]
    dt = dtype_of(a)
    q, r = _eye(m, dt, batch), a
    rows = np.arange(m)
    for j in range(builtins.min(m, n)):
        x = where(rows >= j, getitem(r, (Ellipsis, slice(None), j)), 0.0)      # (..., m)
        alpha = getitem(x, (Ellipsis, j))
        below = sum(_abs2(where(rows > j, x, 0.0)), axis=-1)
        ar, ai = real(alpha), imag(alpha)
        act = P.or_p.bind(P.gt(below, P.full_like(below, 0)), P.ne(ai, P.full_like(ai, 0)))
        nrm = sqrt(P.add(P.add(multiply(ar, ar), multiply(ai, ai)), below))
        beta = where(P.ge(ar, P.full_like(ar, 0)), P.neg(nrm), nrm)
        safe_beta = where(act, beta, 1.0)
        tau = where(act, divide(subtract(beta, alpha), safe_beta), 0.0)
        scale = divide(1.0, where(act, subtract(alpha, beta), 1.0))
        v = where(rows == j, 1.0, where(rows > j, multiply(x, expand_dims(scale, -1)), 0.0))
        vcol = expand_dims(v, -1)
        vh = conj(P.mT(vcol))
        t = expand_dims(expand_dims(tau, -1), -1)
        r = subtract(r, multiply(conj(t), matmul(vcol, matmul(vh, r))))
        q = subtract(q, multiply(t, matmul(matmul(q, vcol), vh)))
    return q, triu(r)


def _qr_real(a):
    from . import (matmul, swapaxes, sum, multiply, subtract, expand_dims, where,
                   sqrt, divide, getitem)
    sh = shape_of(a)
    m, n = sh[-2:]
    batch = sh[:-2]
    dt = dtype_of(a)
    eye = P.convert(P.eq(P.iota(np.int64, batch + (m, m), len(batch)),
                         P.iota(np.int64, batch + (m, m), len(batch) + 1)), dt)
    q, r = eye, a
    rows = np.arange(m)
    for j in range(builtins.min(m - 1, n)):       # LAPACK: no reflector for a last 1-vector
        x = getitem(r, (Ellipsis, slice(None), j))                    # column j, (..., m)
        x = where(rows >= j, x, 0.0)
        alpha = getitem(x, (Ellipsis, j))
        norm = sqrt(sum(multiply(x, x), axis=-1))
        # LAPACK's choice: β = -sign(α)·‖x‖, v = x - β e_j, H = I - 2 v vᵀ / vᵀv
        sgn = P.convert(where(P.ge(alpha, P.full_like(alpha, 0)), 1.0, -1.0), dt)
        beta = multiply(multiply(sgn, norm), -1.0)
        v = subtract(x, where(rows == j, expand_dims(beta, -1), 0.0))
        vv = sum(multiply(v, v), axis=-1)
        # nothing below the diagonal: LAPACK's dlarfg takes H = I (τ = 0), keeping α's sign
        below = sum(multiply(where(rows > j, x, 0.0), x), axis=-1)
        act = P.gt(below, P.full_like(below, 0))
        tau = where(act, divide(2.0, where(act, vv, 1.0)), 0.0)
        vcol = expand_dims(v, -1)
        r = subtract(r, multiply(expand_dims(expand_dims(tau, -1), -1),
                                 matmul(vcol, matmul(swapaxes(vcol, -1, -2), r))))
        q = subtract(q, multiply(expand_dims(expand_dims(tau, -1), -1),
                                 matmul(matmul(q, vcol), swapaxes(vcol, -1, -2))))
    from . import triu
    return q, triu(r)


# ----------------------------------------------------------------------------
# eig and eigvals: LAPACK geev on the host (every mode, under jit too), with the
# standard derivative for distinct eigenvalues
# ----------------------------------------------------------------------------

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])


def _eig_host(a):
    # numpy's geev (dgeev for real input, zgeev for complex), cast to the complex dtype a
    # traced program declares (numpy returns real arrays when every eigenvalue is real)
    w, v = np.linalg.eig(a)
    dt = _complex_dtype(a.dtype)
    return w.astype(dt), v.astype(dt)


def _eig_primal(a):
    from ..callback import pure_callback
    from ..shapes import ShapeDtypeStruct
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
    from . import (abs as _abs, argmax, diagonal, expand_dims, matmul, multiply, subtract,
                   sum as _sum, stop_gradient)
    (a,), (da,) = primals, tangents
    w, v = _eig_cj(a)
    dt = dtype_of(v)
    da = P.convert(da, dt)
    S = P.solve_p.bind(v, matmul(da, v))
    dw = diagonal(S, 0, -2, -1)
    wi, wj = expand_dims(w, -1), expand_dims(w, -2)
    diff = subtract(wj, wi)
    same = P.eq(diff, P.full_like(diff, 0))
    F = P.select(same, P.full_like(diff, 0), P.div(P.full_like(diff, 1), P.select(same, P.full_like(diff, 1), diff)))
    dv = matmul(v, multiply(F, S))
    rn = P.real(_sum(multiply(P.conj(v), dv), axis=-2, keepdims=True))
    dv = subtract(dv, multiply(v, P.convert(rn, dt)))
    n = shape_of(v)[-2]
    top = stop_gradient(argmax(_abs(v), axis=-2))                       # (..., n)
    rows = P.iota(np.int64, shape_of(v), len(shape_of(v)) - 2)
    mask = P.convert(P.eq(rows, P.broadcast_in_dim(top, shape_of(v), tuple(range(len(shape_of(v)) - 2)) + (len(shape_of(v)) - 1,))), dt)
    vj = _sum(multiply(v, mask), axis=-2, keepdims=True)
    dvj = _sum(multiply(dv, mask), axis=-2, keepdims=True)
    theta = P.imag(P.div(dvj, vj))
    dv = subtract(dv, multiply(v, P.complex_(P.full_like(theta, 0), theta)))
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
