"""The special matrices of ``scipy.linalg``: ``block_diag``, ``toeplitz``, ``circulant``,
``hankel``, the companion matrices, ``leslie``, ``convolution_matrix`` (compositions,
differentiable in their entries) and the constant ones (``hilbert``, ``pascal``,
``hadamard``, ``helmert``, ``dft``, ...).

>>> import numpy as np
>>> from autodiff.scipy.linalg import toeplitz
>>> toeplitz(np.array([1.0, 2.0, 3.0]))
array([[1., 2., 3.],
       [2., 1., 2.],
       [3., 2., 1.]])
"""
import math as _math

import numpy as _np

from .. import numpy as _anp
from ..numpy._base import npfunc as _npfunc, asarray as _asarray, promote as _promote
from ._linalg_base import inexact as _inexact


def block_diag(*arrs):
    """Block-diagonal matrix of the (≤ 2-d) blocks (``scipy.linalg.block_diag``)."""
    return _block_diag(*arrs)


@_npfunc(None)
def _block_diag(*arrs):
    if not arrs:
        return _np.zeros((1, 0))
    blocks = [_anp.atleast_2d(_asarray(a)) for a in arrs]
    blocks = _promote(*blocks)
    rows = [_anp.shape(b)[0] for b in blocks]
    cols = [_anp.shape(b)[1] for b in blocks]
    C = sum(cols)
    out = []
    c0 = 0
    for b, c in zip(blocks, cols):
        parts = []
        if c0:
            parts.append(_anp.zeros_like(b, shape=(_anp.shape(b)[0], c0)))
        parts.append(b)
        if C - c0 - c:
            parts.append(_anp.zeros_like(b, shape=(_anp.shape(b)[0], C - c0 - c)))
        out.append(_anp.concatenate(parts, axis=1) if len(parts) > 1 else b)
        c0 += c
    del rows
    return _anp.concatenate(out, axis=0)


def _vec(x, name):
    """``x`` as an array of at least one dimension (a scalar is a vector of length 1)."""
    x = _asarray(x)
    return _anp.reshape(x, (1,)) if _anp.ndim(x) == 0 else x


def _broadcast_lead(*xs):
    """Broadcast the leading (batch) dimensions of ``xs``, each keeping its last axis."""
    batch = _np.broadcast_shapes(*[tuple(_anp.shape(x))[:-1] for x in xs])
    return [_anp.broadcast_to(x, batch + tuple(_anp.shape(x))[-1:]) for x in xs]


def _gather(vals, idx):
    """``vals[..., idx]`` for a 2-d integer ``idx``: a batch of matrices from vectors."""
    return _anp.take(vals, _np.asarray(idx), axis=-1)


@_npfunc(None)
def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (``r[..., 0]`` ignored;
    default ``conj(c)``, a Hermitian matrix when ``c[0]`` is real), ``scipy.linalg.toeplitz``
    with scipy 1.17's and JAX's batching: ``c`` (..., m) and ``r`` (..., n) give (..., m, n).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import toeplitz
    >>> toeplitz(np.array([1.0, 2.0]), np.array([9.0, 3.0, 4.0]))
    array([[1., 3., 4.],
           [2., 1., 3.]])
    """
    c = _vec(c, "c")
    r = _anp.conj(c) if r is None else _vec(r, "r")
    c, r = _promote(c, r)
    c, r = _broadcast_lead(c, r)
    m, n = _anp.shape(c)[-1], _anp.shape(r)[-1]
    if m == 0 or n == 0:
        return _anp.zeros_like(c, shape=tuple(_anp.shape(c))[:-1] + (m, n))
    vals = _anp.concatenate([_anp.flip(r[..., 1:], -1), c], axis=-1)       # index n-1+i-j
    return _gather(vals, (n - 1) + _np.arange(m)[:, None] - _np.arange(n)[None, :])


@_npfunc(None)
def circulant(c):
    """Circulant matrix with first column ``c``: ``c`` (..., n) gives (..., n, n).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import circulant
    >>> circulant(np.array([1.0, 2.0, 3.0]))
    array([[1., 3., 2.],
           [2., 1., 3.],
           [3., 2., 1.]])
    """
    c = _vec(c, "c")
    n = _anp.shape(c)[-1]
    return _gather(c, (_np.arange(n)[:, None] - _np.arange(n)[None, :]) % max(n, 1))


@_npfunc(None)
def hankel(c, r=None):
    """Hankel matrix with first column ``c`` and last row ``r`` (default zeros;
    ``r[..., 0]`` ignored): ``c`` (..., m) and ``r`` (..., n) give (..., m, n).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import hankel
    >>> hankel(np.array([1.0, 2.0]), np.array([9.0, 3.0, 4.0]))
    array([[1., 2., 3.],
           [2., 3., 4.]])
    """
    c = _asarray(c)
    r = _anp.zeros_like(c) if r is None else _asarray(r)
    if _anp.ndim(c) == 0 or _anp.ndim(r) == 0:
        raise ValueError("hankel: c and r must be at least 1-dimensional, got a scalar.")
    c, r = _promote(c, r)
    c, r = _broadcast_lead(c, r)
    m, n = _anp.shape(c)[-1], _anp.shape(r)[-1]
    if m == 0 or n == 0:
        return _anp.zeros_like(c, shape=tuple(_anp.shape(c))[:-1] + (m, n))
    vals = _anp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather(vals, _np.arange(m)[:, None] + _np.arange(n)[None, :])


@_npfunc(None)
def companion(a):
    """Companion matrix of the polynomial with coefficients ``a`` (highest first): ``a``
    (..., n), n >= 2, gives (..., n-1, n-1) with first row ``-a[1:]/a[0]`` and ones below the
    diagonal (no check that ``a[0] != 0``: inf/NaN entries then, as JAX).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import companion
    >>> companion(np.array([1.0, -3.0, 2.0]))
    array([[ 3., -2.],
           [ 1.,  0.]])
    """
    a = _vec(_inexact(a), "a")
    if _anp.shape(a)[-1] < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; "
                         f"got shape {tuple(_anp.shape(a))}.")
    first = _anp.negative(_anp.divide(a[..., 1:], a[..., :1]))
    m = _anp.shape(first)[-1]
    one = _anp.ones_like(first[..., :1])
    vals = _anp.concatenate([first, one, _anp.zeros_like(one)], axis=-1)
    i, j = _np.arange(m)[:, None], _np.arange(m)[None, :]
    return _gather(vals, _np.where(i == 0, j, _np.where(j == i - 1, m, m + 1)))


@_npfunc(None)
def fiedler(a):
    """Symmetric Fiedler matrix ``|a_i - a_j|``: ``a`` (..., n) gives (..., n, n).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import fiedler
    >>> fiedler(np.array([1.0, 4.0]))
    array([[0., 3.],
           [3., 0.]])
    """
    a = _vec(a, "a")
    return _anp.abs(_anp.subtract(_anp.expand_dims(a, -1), _anp.expand_dims(a, -2)))


@_npfunc(None)
def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest first),
    with scipy's layout: ``a`` (..., n) gives (..., n-1, n-1) (empty for n = 1).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import fiedler_companion
    >>> fiedler_companion(np.array([1.0, -3.0, 2.0]))
    array([[ 3., -2.],
           [ 1.,  0.]])
    """
    a = _vec(_inexact(a), "a")
    sh = tuple(_anp.shape(a))
    if sh[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero "
                         f"length, but got an array of shape {sh}.")
    n = sh[-1] - 1
    if n == 0:
        return _anp.zeros_like(a, shape=sh[:-1] + (0, 0))
    a = _anp.divide(a, a[..., :1])
    if n == 1:
        return _anp.expand_dims(_anp.negative(a[..., 1:]), -1)
    # an index into [-a_0, ..., -a_n, 1, 0] for every entry (scipy's construction)
    one, zero = n + 1, n + 2
    pat = _np.full((n, n), zero, dtype=_np.int64)
    pat[list(range(3, n, 2)), list(range(1, n - 2, 2))] = one
    pat[list(range(2, n, 2)), list(range(1, n - 1, 2))] = _np.arange(3, n + 1, 2)
    pat[list(range(0, n - 2, 2)), list(range(2, n, 2))] = one
    pat[list(range(0, n - 1, 2)), list(range(1, n, 2))] = _np.arange(2, n + 1, 2)
    pat[0, 0], pat[1, 0] = 1, one
    one = _anp.ones_like(a[..., :1])
    vals = _anp.concatenate([_anp.negative(a), one, _anp.zeros_like(one)], axis=-1)
    return _gather(vals, pat)


@_npfunc(None)
def leslie(f, s):
    """Leslie matrix: fecundities ``f`` (..., n) on the first row, survival ``s``
    (..., n-1) on the subdiagonal; (..., n, n).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import leslie
    >>> leslie(np.array([0.1, 2.0, 1.0]), np.array([0.5, 0.8]))
    array([[0.1, 2. , 1. ],
           [0.5, 0. , 0. ],
           [0. , 0.8, 0. ]])
    """
    f, s = _vec(f, "f"), _vec(s, "s")
    if _anp.shape(f)[-1] < 2:
        raise ValueError("The length of f along the last axis must be at least 2; "
                         f"got shape {tuple(_anp.shape(f))}.")
    if _anp.shape(s)[-1] != _anp.shape(f)[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis "
                         "must be one less than the length of f; got f shape "
                         f"{tuple(_anp.shape(f))} and s shape {tuple(_anp.shape(s))}.")
    f, s = _promote(f, s)
    f, s = _broadcast_lead(f, s)
    n = _anp.shape(f)[-1]
    vals = _anp.concatenate([f, s, _anp.zeros_like(f[..., :1])], axis=-1)
    i, j = _np.arange(n)[:, None], _np.arange(n)[None, :]
    return _gather(vals, _np.where(i == 0, j, _np.where(j == i - 1, n + i - 1, 2 * n - 1)))


def convolution_matrix(a, n, mode="full"):
    """Matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors of length ``n``:
    ``a`` (..., m) gives (..., k, n), k = m+n-1 ('full'), max(m, n) ('same') or
    max(m, n) - min(m, n) + 1 ('valid').

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import convolution_matrix
    >>> convolution_matrix(np.array([1.0, 2.0]), 2)
    array([[1., 0.],
           [2., 1.],
           [0., 2.]])
    """
    n = _operator_index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    return _convolution_matrix(a, n, mode)


def _operator_index(n):
    import operator
    return operator.index(n)


@_npfunc(None)
def _convolution_matrix(a, n, mode):
    a = _asarray(a)
    if _anp.ndim(a) == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = _anp.shape(a)[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {tuple(_anp.shape(a))}.")
    L = m + n - 1
    idx = _np.arange(L)[:, None] - _np.arange(n)[None, :]          # a[i - j]
    valid = (idx >= 0) & (idx < m)
    full = _anp.where(valid, _gather(a, _np.clip(idx, 0, m - 1)), 0)
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[..., start:start + max(n, m), :]
    return full[..., min(n, m) - 1:max(n, m), :]


def hilbert(n):
    """Hilbert matrix ``1/(i + j + 1)`` (a constant)."""
    i = _np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def invhilbert(n, exact=False):
    """Inverse of the Hilbert matrix, from its closed form (a constant)."""
    out = _np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = ((-1) ** (i + j) * (i + j + 1) * _math.comb(n + i, n - j - 1) * _math.comb(n + j, n - i - 1)
                         * _math.comb(i + j, i) ** 2)
    return out


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"Expected kind to be one of {list(_PASCAL_KINDS)}; got {kind!r}")
    return kind


def pascal(n, kind="symmetric", exact=True):
    """Pascal matrix ('symmetric', 'lower' or 'upper'; None means 'symmetric'), a float
    constant.

    >>> from autodiff.scipy.linalg import pascal
    >>> pascal(3)
    array([[1., 1., 1.],
           [1., 2., 3.],
           [1., 3., 6.]])
    """
    kind = _pascal_kind(kind)
    L = _np.array([[float(_math.comb(i, j)) for j in range(n)] for i in range(n)]).reshape(n, n)
    if kind == "lower":
        return L
    if kind == "upper":
        return L.T
    return L @ L.T


def invpascal(n, kind="symmetric", exact=True):
    """Inverse of the Pascal matrix (a float constant).

    >>> from autodiff.scipy.linalg import invpascal
    >>> invpascal(2)
    array([[ 2., -1.],
           [-1.,  1.]])
    """
    kind = _pascal_kind(kind)
    Li = _np.array([[float((-1) ** (i - j) * _math.comb(i, j)) for j in range(n)]
                    for i in range(n)]).reshape(n, n)
    if kind == "lower":
        return Li
    if kind == "upper":
        return Li.T
    return Li.T @ Li


def hadamard(n, dtype=int):
    """Sylvester's Hadamard matrix of order ``n`` (a power of 2), of ``dtype``.

    >>> from autodiff.scipy.linalg import hadamard
    >>> hadamard(2)
    array([[ 1,  1],
           [ 1, -1]])
    """
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    H = _np.array([[1]], dtype=dtype)
    while H.shape[0] < n:
        H = _np.block([[H, H], [H, -H]])
    return H


def helmert(n, full=False):
    """Helmert matrix of order ``n`` (orthogonal; without its first row unless ``full``).

    >>> from autodiff.scipy.linalg import helmert
    >>> helmert(2).round(6)
    array([[ 0.707107, -0.707107]])
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    H = _np.tril(_np.ones((n, n)), -1) - _np.diag(_np.arange(n))
    d = _np.arange(n) * _np.arange(1, n + 1)
    H[0] = 1
    d[0] = n
    Hf = H / _np.sqrt(d)[:, None]
    return Hf if full else Hf[1:]


def dft(n, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix ``ω^(ij)``, ``ω = exp(-2πi/n)`` (a complex
    constant, numpy's FFT of the identity), scaled by ``1/√n`` (``scale='sqrtn'``) or
    ``1/n`` (``'n'``); JAX's ``dtype`` (complex) is the result's.

    >>> from autodiff.scipy.linalg import dft
    >>> dft(2)
    array([[ 1.+0.j,  1.+0.j],
           [ 1.+0.j, -1.+0.j]])
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dt = _np.dtype(_np.complex128 if dtype is None else dtype)
    if dt.kind != "c":
        raise ValueError(f"dtype must be a complex type; got {dt}.")
    if n == 0:
        return _np.zeros((0, 0), dt)
    m = _np.fft.fft(_np.eye(n))
    if scale == "sqrtn":
        m = m / _math.sqrt(n)
    elif scale == "n":
        m = m / n
    return m.astype(dt)
