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
from ._linalg_base import float_matrix as _float_matrix


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


@_npfunc(None)
def toeplitz(c, r=None):
    """Toeplitz matrix with first column ``c`` and first row ``r`` (default ``c``; r[0]
    ignored), ``scipy.linalg.toeplitz``."""
    c = _anp.ravel(_asarray(c))
    r = c if r is None else _anp.ravel(_asarray(r))
    c, r = _promote(c, r)
    m, n = _anp.shape(c)[0], _anp.shape(r)[0]
    vals = _anp.concatenate([_anp.flip(r[1:]), c])              # index n-1+i-j
    idx = (n - 1) + _np.arange(m)[:, None] - _np.arange(n)[None, :]
    return _anp.take(vals, idx)


@_npfunc(None)
def circulant(c):
    """Circulant matrix with first column ``c``."""
    c = _anp.ravel(_asarray(c))
    n = _anp.shape(c)[0]
    return _anp.take(c, (_np.arange(n)[:, None] - _np.arange(n)[None, :]) % n)


@_npfunc(None)
def hankel(c, r=None):
    """Hankel matrix with first column ``c`` and last row ``r`` (default zeros; r[0]
    ignored)."""
    c = _anp.ravel(_asarray(c))
    m = _anp.shape(c)[0]
    r = _anp.zeros_like(c) if r is None else _anp.ravel(_asarray(r))
    c, r = _promote(c, r)
    n = _anp.shape(r)[0]
    vals = _anp.concatenate([c, r[1:]])
    return _anp.take(vals, _np.arange(m)[:, None] + _np.arange(n)[None, :])


@_npfunc(None)
def companion(a):
    """Companion matrix of the polynomial with coefficients ``a`` (highest first)."""
    a = _float_matrix(_anp.ravel(_asarray(a)))
    n = _anp.shape(a)[0]
    first = _anp.divide(_anp.negative(a[1:]), a[0])
    below = _np.eye(n - 2, n - 1) if n > 2 else _np.zeros((0, n - 1))
    return _anp.concatenate([_anp.expand_dims(first, 0), _anp.astype(_asarray(below), first.dtype if hasattr(first, "dtype") else _np.float64)], axis=0)


@_npfunc(None)
def fiedler(a):
    """Symmetric Fiedler matrix ``|a_i - a_j|``."""
    a = _anp.ravel(_asarray(a))
    return _anp.abs(_anp.subtract(_anp.expand_dims(a, -1), _anp.expand_dims(a, 0)))


@_npfunc(None)
def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest first),
    with scipy's layout."""
    a = _float_matrix(_anp.ravel(_asarray(a)))
    m = _anp.shape(a)[0]
    if m <= 2:
        if m == 2:
            return _anp.reshape(_anp.negative(_anp.divide(a[1], a[0])), (1, 1))
        return _np.array([], dtype=_np.float64)
    a = _anp.divide(a, a[0])
    n = m - 1
    # an index into [-a_0, ..., -a_n, 1, 0] for every entry (scipy's construction)
    one, zero = m, m + 1
    pat = _np.full((n, n), zero, dtype=_np.int64)
    pat[list(range(3, n, 2)), list(range(1, n - 2, 2))] = one
    pat[list(range(2, n, 2)), list(range(1, n - 1, 2))] = _np.arange(3, m, 2)
    pat[list(range(0, n - 2, 2)), list(range(2, n, 2))] = one
    pat[list(range(0, n - 1, 2)), list(range(1, n, 2))] = _np.arange(2, m, 2)
    pat[0, 0], pat[1, 0] = 1, one
    vals = _anp.concatenate([_anp.negative(a), _anp.asarray(_np.array([1.0, 0.0]))])
    return _anp.take(vals, pat)


@_npfunc(None)
def leslie(f, s):
    """Leslie matrix: fecundities ``f`` on the first row, survival ``s`` on the subdiagonal."""
    f, s = _promote(_float_matrix(_anp.ravel(_asarray(f))), _float_matrix(_anp.ravel(_asarray(s))))
    n = _anp.shape(f)[0]
    sub = _anp.concatenate([_anp.diag(s), _anp.zeros_like(s, shape=(n - 1, 1))], axis=1)
    return _anp.concatenate([_anp.expand_dims(f, 0), sub], axis=0)


@_npfunc(None)
def convolution_matrix(a, n, mode="full"):
    """Matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors of length ``n``."""
    a = _float_matrix(_anp.ravel(_asarray(a)))
    m = _anp.shape(a)[0]
    L = m + n - 1
    idx = _np.arange(L)[:, None] - _np.arange(n)[None, :]          # a[i - j]
    valid = (idx >= 0) & (idx < m)
    full = _anp.where(valid, _anp.take(a, _np.clip(idx, 0, m - 1)), 0.0)
    if mode == "full":
        return full
    if mode == "same":
        start = (min(n, m) - 1) // 2
        return full[start:start + max(n, m)]
    if mode == "valid":
        return full[min(n, m) - 1:max(n, m)]
    raise ValueError("mode must be 'full', 'same' or 'valid'")


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


def pascal(n, kind="symmetric", exact=True):
    """Pascal matrix ('symmetric', 'lower' or 'upper'), a constant."""
    L = _np.array([[float(_math.comb(i, j)) for j in range(n)] for i in range(n)])
    if kind == "lower":
        return L
    if kind == "upper":
        return L.T
    return L @ L.T


def invpascal(n, kind="symmetric", exact=True):
    """Inverse of the Pascal matrix (a constant)."""
    Li = _np.array([[float((-1) ** (i - j) * _math.comb(i, j)) for j in range(n)] for i in range(n)])
    if kind == "lower":
        return Li
    if kind == "upper":
        return Li.T
    return Li.T @ Li


def hadamard(n, dtype=int):
    """Sylvester's Hadamard matrix of order ``n`` (a power of 2)."""
    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive integer, and n must be a power of 2")
    H = _np.array([[1]], dtype=dtype)
    while H.shape[0] < n:
        H = _np.block([[H, H], [H, -H]])
    return H


def helmert(n, full=False):
    """Helmert matrix of order ``n`` (orthogonal; without its first row unless ``full``)."""
    H = _np.tril(_np.ones((n, n)), -1) - _np.diag(_np.arange(n))
    d = _np.arange(n) * _np.arange(1, n + 1)
    H[0] = 1
    d[0] = n
    Hf = H / _np.sqrt(d)[:, None]
    return Hf if full else Hf[1:]


def dft(n, scale=None):
    """The discrete Fourier transform matrix (a complex constant, numpy's)."""
    m = _np.fft.fft(_np.eye(n))
    if scale == "sqrtn":
        m = m / _math.sqrt(n)
    elif scale == "n":
        m = m / n
    return m
