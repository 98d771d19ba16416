"""``numpy.linalg`` for concrete and traced values, differentiable.

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
from ..errors import ShapeError
from ..core import user_source
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
    if UPLO == "U":
        from . import swapaxes
        a = swapaxes(a, -1, -2)
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
            out = _safe_sqrt(sum(multiply(x, x)))
            return reshape(out, (1,) * nd) if keepdims else out
        axis = tuple(range(nd))
    axes = normalize_axes(axis, nd)
    if len(axes) == 1:
        if ord is None or ord == 2:
            return _safe_sqrt(sum(multiply(x, x), axis=axes, keepdims=keepdims))
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
            return _safe_sqrt(sum(multiply(x, x), axis=axes, keepdims=keepdims))
        if ord == "nuc" or ord in (2, -2):
            from . import moveaxis
            y = moveaxis(x, (r, c), (-2, -1))
            from . import matmul, swapaxes
            # singular values² are the eigenvalues of the smaller Gram matrix (the larger
            # one has min(m, n) of them plus zeros, which would corrupt ord=-2)
            m_, n_ = shape_of(y)[-2:]
            gram = (matmul(swapaxes(y, -1, -2), y) if m_ >= n_
                    else matmul(y, swapaxes(y, -1, -2)))
            w = eigh(gram)[0]
            s = _safe_sqrt(P.max_(w, P.full_like(w, 0)))
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
    """√s with a zero (sub)gradient at s = 0, like autograd's norm."""
    from . import sqrt, where, ones_like, zeros_like
    if not isinstance(s, Tracer):
        return sqrt(s)
    pos = P.gt(s, P.full_like(s, 0))
    return where(pos, sqrt(where(pos, s, ones_like(s))), zeros_like(s))


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


@npfunc(np.linalg.pinv)
def pinv(a):
    from . import matmul, swapaxes
    a = _float(a)
    at = swapaxes(a, -1, -2)
    m, n = shape_of(a)[-2:]
    if m >= n:
        return matmul(inv(matmul(at, a)), at)
    return matmul(at, inv(matmul(a, at)))


@npfunc(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    from . import matmul, swapaxes
    a, b = promote(_float(a), _float(b))
    at = swapaxes(a, -1, -2)
    x = solve(matmul(at, a), matmul(at, b))
    return x, None, None, None


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
    if trans in ("N", "n", None):
        trans = False
    elif trans in ("T", "t", "C", "c"):
        trans = True
    elif trans not in (0, 1, 2):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = promote(_float(a), _float(b))
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


@npfunc(None)
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition; traced values need ``full_matrices=False`` (or
    ``compute_uv=False``). Built on ``eigh`` of the smaller Gram matrix, so its
    derivative is eigh's: exact for distinct (non-zero) singular values. Singular vectors
    are unique up to sign only (their signs may differ from ``numpy.linalg.svd``'s; concrete
    and traced calls agree), and the Gram matrix squares the condition number: for
    ill-conditioned matrices small singular values lose relative accuracy.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda a: anp.linalg.svd(a, compute_uv=False)[0])(np.diag([3.0, 1.0]))
    array([[1., 0.],
           [0., 0.]])
    """
    from . import matmul, swapaxes, flip, divide, expand_dims
    if not isinstance(a, Tracer) and (not compute_uv or (full_matrices and np.shape(a)[-2] != np.shape(a)[-1])):
        return np.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    a = _float(a)
    m, n = shape_of(a)[-2:]
    if compute_uv and full_matrices and m != n:
        from ..errors import UnsupportedError
        raise UnsupportedError("linalg.svd: traced values need full_matrices=False (or a square "
                               "matrix)", source=user_source())
    at = swapaxes(a, -1, -2)
    tall = m >= n
    w, v = eigh(matmul(at, a) if tall else matmul(a, at))
    w, v = flip(w, axis=-1), flip(v, axis=-1)                  # descending, as numpy's
    s = _safe_sqrt(P.max_(w, P.full_like(w, 0)))
    if not compute_uv:
        return s
    # the other factor: A V = U S (tall), Aᵀ U = V S (wide)
    safe_s = P.select(P.gt(s, P.full_like(s, 0)), s, P.full_like(s, 1))
    other = divide(matmul(a if tall else at, v), expand_dims(safe_s, -2))
    u, vt = (other, swapaxes(v, -1, -2)) if tall else (v, swapaxes(other, -1, -2))
    return SVDResult(u, s, vt)


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
    sh = shape_of(a)
    m, n = sh[-2:]
    k = builtins.min(m, n)
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
    r = triu(r)
    if mode == "r":
        return getitem(r, (Ellipsis, slice(0, k), slice(None)))
    if mode == "complete":
        return QRResult(q, r)
    if mode != "reduced":
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    return QRResult(getitem(q, (Ellipsis, slice(None), slice(0, k))),
                    getitem(r, (Ellipsis, slice(0, k), slice(None))))


def _complex_unsupported(name):
    @npfunc(getattr(np.linalg, name))
    def f(a, *args, **kwargs):
        from ..errors import UnsupportedError
        raise UnsupportedError(
            f"linalg.{name}: general eigenproblems have complex results, and complex numbers "
            "are not supported (API.md, convention 10); for symmetric matrices use "
            "linalg.eigh / linalg.eigvalsh", source=user_source())
    f.__name__ = name
    f.__doc__ = (f"numpy's ``linalg.{name}`` on numpy arrays; on traced values raises "
                 "``UnsupportedError`` (complex results): use eigh.")
    return f


eig = _complex_unsupported("eig")
eigvals = _complex_unsupported("eigvals")
