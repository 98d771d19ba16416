"""numpy's old polynomial API (coefficients highest power first): sums, products,
derivatives, antiderivatives, division, ``poly``, ``polyfit`` and ``roots`` (LAPACK on the
host, with the implicit function's derivative).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.polymul(np.array([1.0, 1.0]), np.array([1.0, -1.0]))
array([ 1.,  0., -1.])
"""
import builtins

import numpy as np

from .. import numpy as anp
from ..core import Tracer, complex_dtype, is_concrete, user_source
from ._base import npfunc, asarray, as_float, promote, shape_of, ndim, dtype_of
from ..errors import UnsupportedError
from ..callback import pure_callback
from ..custom_derivatives import custom_jvp
from ..shapes import ShapeDtypeStruct


# ----------------------------------------------------------------------------
# polynomials (highest power first, numpy's old polynomial API)
# ----------------------------------------------------------------------------

@npfunc(np.polyadd)
def polyadd(a1, a2):
    """Sum of two polynomials (``numpy.polyadd``)."""
    a1, a2 = promote(anp.atleast_1d(a1), anp.atleast_1d(a2))
    n1, n2 = shape_of(a1)[0], shape_of(a2)[0]
    if n1 < n2:
        a1 = anp.concatenate([anp.zeros_like(a1, shape=(n2 - n1,)), a1])
    elif n2 < n1:
        a2 = anp.concatenate([anp.zeros_like(a2, shape=(n1 - n2,)), a2])
    return anp.add(a1, a2)


@npfunc(np.polysub)
def polysub(a1, a2):
    """Difference of two polynomials (``numpy.polysub``)."""
    return polyadd(a1, anp.negative(asarray(a2)))


def _numpy_polymul(a1, a2, *, trim_leading_zeros=None):
    return np.polymul(a1, a2)


@npfunc(_numpy_polymul)
def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials: the convolution of their coefficients. On numpy inputs
    numpy's result (leading zeros trimmed); traced, the full convolution unless
    ``trim_leading_zeros=True`` (JAX's keyword; needs concrete coefficients).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(anp.polymul)(np.array([0.0, 1.0]), np.array([1.0, -1.0]))
    array([ 0.,  1., -1.])
    """
    a1, a2 = anp.atleast_1d(a1), anp.atleast_1d(a2)
    if trim_leading_zeros and (shape_of(a1)[0] > 1 or shape_of(a2)[0] > 1):
        a1, a2 = anp.trim_zeros(a1, trim="f"), anp.trim_zeros(a2, trim="f")
        if shape_of(a1)[0] == 0:
            a1 = anp.zeros_like(a1, shape=(1,))
        if shape_of(a2)[0] == 0:
            a2 = anp.zeros_like(a2, shape=(1,))
    return anp.convolve(a1, a2)


@npfunc(np.polyder)
def polyder(p, m=1):
    """``m``-th derivative of a polynomial (``numpy.polyder``)."""
    p = as_float(anp.atleast_1d(p))
    if builtins.int(m) < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in range(builtins.int(m)):
        n = builtins.max(shape_of(p)[0] - 1, 0)     # numpy: a constant's derivative is []
        p = anp.multiply(anp.getitem(p, slice(0, n)), np.arange(n, 0, -1))     # numpy: int64 factors
    return p


@npfunc(np.polyint)
def polyint(p, m=1, k=None):
    """``m``-th antiderivative with integration constants ``k`` (``numpy.polyint``)."""
    p = as_float(anp.atleast_1d(p))
    m = builtins.int(m)
    ks = [0.0] * m if k is None else list(np.atleast_1d(k)) if not isinstance(k, Tracer) else [k] * m
    if len(ks) == 1 and m > 1:
        ks = ks * m
    for i in range(m):
        n = shape_of(p)[0]
        q = anp.divide(p, np.arange(n, 0, -1))
        p = anp.concatenate([q, anp.reshape(anp.astype(asarray(ks[i]), dtype_of(q)), (1,))])
    return p


def _numpy_polydiv(u, v, *, trim_leading_zeros=None):
    return np.polydiv(u, v)


@npfunc(_numpy_polydiv)
def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division (``numpy.polydiv``); the leading
    coefficient of ``v`` must be non-zero. Traced, the remainder has the fixed length
    ``len(v) - 1`` (at least 1; numpy trims its leading zeros, which depends on the values);
    ``trim_leading_zeros=True`` (JAX's keyword, concrete values only) trims them like numpy.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jit(anp.polydiv)(np.array([1.0, 0.0, -1.0]), np.array([1.0, 1.0]))
    (array([ 1., -1.]), array([0.]))
    """
    u, v = promote(as_float(anp.atleast_1d(u)), as_float(anp.atleast_1d(v)))
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = anp.divide(1.0, anp.getitem(v, 0))
    r = [anp.getitem(u, i) for i in range(m + 1)]
    q = []
    for k in range(builtins.max(m - n + 1, 0)):
        d = anp.multiply(scale, r[k])
        q.append(d)
        for j in range(n + 1):
            r[k + j] = anp.subtract(r[k + j], anp.multiply(d, anp.getitem(v, j)))
    qa = anp.stack(q) if q else anp.zeros_like(u, shape=(1,))
    rem = r[builtins.max(m - n + 1, 0):] if m >= n else r
    ra = anp.stack(rem) if rem else anp.zeros_like(u, shape=(1,))
    if m < n - 1:                     # the fixed length len(v) - 1
        ra = anp.concatenate([anp.zeros_like(ra, shape=(n - 1 - m,)), ra])
    if trim_leading_zeros:
        vals = np.asarray(ra.concrete_value("polydiv: trim_leading_zeros")
                          if isinstance(ra, Tracer) else ra)
        tol = float(np.sqrt(np.finfo(vals.dtype).eps))
        k = 0
        while k < vals.shape[0] - 1 and abs(vals[k]) <= tol:
            k += 1
        ra = anp.getitem(ra, slice(k, None))
    return qa, ra


@npfunc(np.poly)
def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (``numpy.poly``); a square
    matrix gives its characteristic polynomial ``det(x·I - A)`` (by the Faddeev-LeVerrier
    recursion: products and traces, so real for a real matrix and differentiable).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.poly(np.array([[0.0, 1.0], [-2.0, -3.0]]))       # x² + 3x + 2
    array([1., 3., 2.])
    """
    z = as_float(seq_of_zeros)
    if ndim(z) == 2 and shape_of(z)[0] == shape_of(z)[1] and shape_of(z)[0] != 0:
        return _charpoly(z)
    z = anp.ravel(z)
    a = anp.ones_like(z, shape=(1,))
    for i in range(shape_of(z)[0]):
        a = anp.convolve(a, anp.stack([anp.ones_like(anp.getitem(z, i)), anp.negative(anp.getitem(z, i))]))
    return a


def _charpoly(a):
    """Faddeev-LeVerrier: ``M_k = A·M_{k-1} + c_{n-k+1}·I``, ``c_{n-k} = -tr(A·M_k)/k``."""
    n = shape_of(a)[0]
    eye = np.eye(n, dtype=dtype_of(a))
    coeffs = [anp.ones_like(anp.getitem(a, (0, 0)))]
    m = anp.zeros_like(a)
    for k in range(1, n + 1):
        m = anp.add(anp.matmul(a, m), anp.multiply(coeffs[-1], eye))
        coeffs.append(anp.divide(anp.negative(anp.trace(anp.matmul(a, m))), k))
    return anp.stack(coeffs)


@npfunc(np.polyfit)
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (``numpy.polyfit``): columns of the Vandermonde matrix
    scaled to unit norm, then ``lstsq``; ``y`` may hold several data sets as columns.
    Differentiable in ``x``, ``y`` and ``w``."""
    x, y = promote(as_float(x), as_float(y))
    order = builtins.int(deg) + 1
    lhs = anp.vander(x, order)
    rhs = y
    if w is not None:
        w = as_float(w)
        lhs = anp.multiply(lhs, anp.expand_dims(w, -1))
        rhs = anp.multiply(rhs, w if ndim(rhs) == 1 else anp.expand_dims(w, -1))
    if rcond is None:
        rcond = shape_of(x)[0] * float(np.finfo(dtype_of(x)).eps)
    scale = anp.sqrt(anp.sum(anp.multiply(lhs, lhs), axis=0))
    sol = anp.linalg.lstsq(anp.divide(lhs, scale), rhs, rcond)
    c = sol[0]
    c = anp.divide(c, scale if ndim(c) == 1 else anp.expand_dims(scale, -1))
    if full:
        return c, sol[1], sol[2], sol[3], rcond
    if cov:
        raise UnsupportedError("polyfit: cov=True is not supported on traced values", source=user_source())
    return c


@npfunc(np.roots)
def roots(p, *, strip_zeros=True):
    """``numpy.roots``: the eigenvalues of the companion matrix, computed by LAPACK on the
    host (through numpy) in every mode, ``jit`` included.

    numpy's result dtype depends on the values: real when every root is real, complex
    otherwise (complex64 for float32 coefficients). Wherever the coefficients have values
    (eager, and ``grad``/``jvp`` without ``jit``) the result is numpy's. Under ``jit`` and
    ``vmap`` the dtype must be known from the dtype alone: complex coefficients give complex
    roots; real ones give real roots, and a complex root raises ``UnsupportedError`` (pass
    ``p.astype(complex)`` to get complex roots under ``jit``). A leading zero coefficient
    raises too (the number of roots would depend on the values).

    ``strip_zeros=False`` (JAX's keyword) gives a fixed shape instead, traceable whatever
    the values: ``len(p) - 1`` complex roots, a ``nan + nanj`` for each leading zero.

    The derivative is the implicit function's, from ``p(r) = 0``:
    ``dr = -(dp)(r) / p'(r)`` (any order, complex roots included; infinite at a multiple
    root, where the roots are not differentiable).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> p = np.array([1.0, -3.0, 2.0])                  # (x - 1)(x - 2)
    >>> np.sort(ad.jit(anp.roots)(p))
    array([1., 2.])
    >>> ad.jacobian(lambda p: anp.sort(anp.roots(p)))(p)[0]     # d1/dp = -(1, 1, 1)/p'(1)
    array([1., 1., 1.])
    >>> np.round(ad.jit(anp.roots)(np.array([1.0, 0.0, 4.0], complex)), 12)   # x² + 4
    array([0.+2.j, 0.-2.j])
    """
    p = as_float(p)
    if ndim(p) != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = shape_of(p)[0] - 1
    dt = dtype_of(p)
    if not strip_zeros:
        out = complex_dtype(dt)
        if n < 1:
            return anp.zeros((0,), out)
        return _roots_fn(user_source(), out, pad=True)(p)
    if n < 1:
        return anp.zeros_like(p, shape=(0,))
    out = dt
    if dt.kind != "c" and (not isinstance(p, Tracer) or is_concrete(p)):
        # the coefficients have values: numpy's dtype (complex if any root is)
        v = np.asarray(p.concrete_value("roots") if isinstance(p, Tracer) else p)
        if v[0] != 0 and np.iscomplexobj(np.roots(v)):
            out = complex_dtype(dt)
    return _roots_fn(user_source(), out)(p)


def _roots_host(p, source, out, pad=False):
    p = np.asarray(p)
    if pad:
        r = np.roots(p) if np.any(p != 0) else np.zeros(0, out)
        return np.concatenate([r.astype(out),
                               np.full(p.shape[0] - 1 - r.shape[0], complex(np.nan, np.nan),
                                       out)])
    if p[0] == 0:
        raise UnsupportedError("roots: the leading coefficient of a traced polynomial is 0, so the "
                               "number of roots depends on the values; drop the leading zeros "
                               "before tracing", source=source)
    r = np.roots(p)
    if np.iscomplexobj(r) and out.kind != "c":
        if np.any(r.imag != 0):
            raise UnsupportedError(
                f"roots: the polynomial has complex roots ({r[r.imag != 0][:2]}...), but under "
                "jit/vmap the real coefficients' roots were traced as real (their dtype cannot "
                "depend on the values); pass complex coefficients, p.astype(complex), to get "
                "complex roots", source=source)
        r = r.real
    return r.astype(out)


def _roots_fn(source, out, pad=False):

    @custom_jvp
    def real_roots(p):
        n = shape_of(p)[0] - 1
        return pure_callback(lambda v: _roots_host(v, source, out, pad),
                             ShapeDtypeStruct((n,), out), p)

    @real_roots.defjvp
    def real_roots_jvp(primals, tangents):
        (p,), (dp,) = primals, tangents
        r = real_roots(p)
        n = shape_of(p)[0] - 1
        dcoef = anp.multiply(p[:-1], np.arange(n, 0, -1, dtype=dtype_of(p)))    # p'
        if pad:
            dp, dcoef = anp.astype(dp, out), anp.astype(dcoef, out)
        return r, anp.negative(anp.divide(anp.polyval(dp, r), anp.polyval(dcoef, r)))
    return real_roots
