"""Building matrices (``tri``, ``tril``/``triu`` of 1-D input too, ``vander``, ``diagflat``)
and the vector products of numpy 2 (``cross`` with per-operand axes, ``vecdot``, ``matvec``,
``vecmat``). Compositions of the basic functions: every transform handles them.

>>> import numpy as np, autodiff.numpy as anp
>>> anp.vander(np.array([1.0, 2.0]), 3)
array([[1., 1., 1.],
       [4., 2., 1.]])
"""
import builtins

import numpy as np

from .. import numpy as anp
from .. import primitives as P
from ..core import Tracer, is_concrete
from ._base import npfunc, asarray, promote, shape_of, ndim, dtype_of


def _tri(m, k, lower):
    m = asarray(m)
    if ndim(m) == 1:                   # numpy: a vector is broadcast to a square matrix first
        n = shape_of(m)[0]
        m = P.broadcast_in_dim(m, (n, n), (1,))
    if ndim(m) < 2:
        raise ValueError("input array must be at least 1-d")
    n_, m_ = shape_of(m)[-2:]
    d = np.arange(m_)[None, :] - np.arange(n_)[:, None]
    mask = d <= k if lower else d >= k
    return anp.where(np.broadcast_to(mask, shape_of(m)), m, anp.zeros_like(m))


@npfunc(np.tril)
def tril(m, k=0):
    """Lower triangle (``numpy.tril``); a 1-D input is a matrix of repeated rows."""
    return _tri(m, k, True)


@npfunc(np.triu)
def triu(m, k=0):
    """Upper triangle (``numpy.triu``); a 1-D input is a matrix of repeated rows."""
    return _tri(m, k, False)


@npfunc(np.cross)
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along ``axisa``/``axisb`` into ``axisc``
    (``axis`` sets all three), ``numpy.cross``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a, b = asarray(a), asarray(b)
    a = anp.moveaxis(a, axisa, -1)
    b = anp.moveaxis(b, axisb, -1)
    na, nb = shape_of(a)[-1], shape_of(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    g = anp.getitem
    a0, a1 = g(a, (Ellipsis, 0)), g(a, (Ellipsis, 1))
    b0, b1 = g(b, (Ellipsis, 0)), g(b, (Ellipsis, 1))
    z = anp.subtract(anp.multiply(a0, b1), anp.multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    a2 = g(a, (Ellipsis, 2)) if na == 3 else None
    b2 = g(b, (Ellipsis, 2)) if nb == 3 else None
    mul, sub = anp.multiply, anp.subtract
    if a2 is None:                   # a is a 2-vector (a2 = 0)
        x, y = mul(a1, b2), anp.negative(mul(a0, b2))
    elif b2 is None:                 # b is a 2-vector (b2 = 0)
        x, y = anp.negative(mul(a2, b1)), mul(a2, b0)
    else:
        x, y = sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2))
    x, y, z = anp.broadcast_arrays(x, y, z)
    out = anp.stack([x, y, z], axis=-1)
    return anp.moveaxis(out, -1, axisc)


@npfunc(np.tri)
def tri(N, M=None, k=0, dtype=float):
    """``numpy.tri``: ones at and below diagonal ``k``; ``N`` and ``M`` must be concrete,
    ``k`` may be traced (as in JAX).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(lambda k: anp.tri(2, 3, k, dtype=int))(1)
    array([[1, 1, 0],
           [1, 1, 1]])
    """
    for name, v in (("N", N), ("M", M)):
        if isinstance(v, Tracer):
            if not is_concrete(v):
                raise TypeError(f"tri: {name} must be a concrete integer (it sets the shape); "
                                "pass it through static_argnums")
    N = builtins.int(N.concrete_value("tri") if isinstance(N, Tracer) else N)
    M = None if M is None else builtins.int(M.concrete_value("tri")
                                            if isinstance(M, Tracer) else M)
    if isinstance(k, Tracer) and not is_concrete(k):
        m = N if M is None else M
        cols = np.arange(m)[None, :] - np.arange(N)[:, None]
        return anp.astype(anp.less_equal(cols, k), np.dtype(dtype or float))
    if isinstance(k, Tracer):
        k = builtins.int(k.concrete_value("tri"))
    return np.tri(N, M, k, dtype)


@npfunc(np.vander)
def vander(x, N=None, increasing=False):
    """Vandermonde matrix ``x[:, None] ** powers`` (``numpy.vander``)."""
    x = asarray(x)
    if ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0] if N is None else builtins.int(N)
    x = anp.astype(x, np.promote_types(dtype_of(x), np.int64))    # numpy's result dtype
    cols = [anp.power(x, p) for p in range(n)]
    if not increasing:
        cols = cols[::-1]
    if not cols:
        return anp.zeros_like(x, shape=(shape_of(x)[0], 0))
    return anp.stack(cols, axis=1)

@npfunc(np.diagflat)
def diagflat(v, k=0):
    """2-D array with the flattened input on diagonal ``k`` (``numpy.diagflat``)."""
    return anp.diag(anp.ravel(v), k)


@npfunc(np.vecdot if hasattr(np, "vecdot") else None)
def vecdot(x1, x2, /, *, axis=-1):
    """``Σ conj(x1)·x2`` over ``axis`` with broadcasting (``numpy.vecdot``: the first
    argument is conjugated, so ``vecdot(z, z)`` is ``Σ |z|²``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.vecdot(np.array([1j, 2.0]), np.array([1j, 1.0]))
    np.complex128(3+0j)
    """
    x1, x2 = promote(x1, x2)
    x1 = anp.moveaxis(P.conj(x1), axis, -1)
    x2 = anp.moveaxis(x2, axis, -1)       # numpy moves each operand's axis, then broadcasts
    if shape_of(x1)[-1] != shape_of(x2)[-1]:
        raise ValueError(f"vecdot: the axes have sizes {shape_of(x1)[-1]} and "
                         f"{shape_of(x2)[-1]}")
    return anp.sum(anp.multiply(x1, x2), axis=-1, dtype=dtype_of(x1))


@npfunc(np.matvec if hasattr(np, "matvec") else None)
def matvec(x1, x2, /):
    """Matrix-vector products over broadcast stacks (``numpy.matvec``)."""
    return anp.squeeze(anp.matmul(x1, anp.expand_dims(x2, -1)), -1)


@npfunc(np.vecmat if hasattr(np, "vecmat") else None)
def vecmat(x1, x2, /):
    """Vector-matrix products ``conj(x1)·x2`` over broadcast stacks (``numpy.vecmat``
    conjugates the vector; ``matvec`` conjugates nothing)."""
    return anp.squeeze(anp.matmul(anp.expand_dims(P.conj(asarray(x1)), -2), x2), -2)
