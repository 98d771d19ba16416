"""Numerical methods on sampled data: finite differences (``gradient``, ``ediff1d``),
phase unwrapping (``unwrap``), cross-correlation (``correlate``) and piecewise-linear
interpolation (``interp``). Compositions of the basic functions: every transform handles
them.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.grad(lambda f: anp.gradient(f)[1])(np.arange(4.0))
array([-0.5,  0. ,  0.5,  0. ])
>>> float(anp.interp(1.5, np.array([1.0, 2.0]), np.array([10.0, 20.0])))
15.0
"""

import builtins

import numpy as np

from .. import numpy as anp, primitives as P
from ..core import Tracer
from ._base import (npfunc, asarray, as_float, shape_of, ndim, normalize_axis, dtype_of,
                    is_python_scalar)


# ----------------------------------------------------------------------------
# finite differences
# ----------------------------------------------------------------------------

@npfunc(np.gradient)
def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, first- or
    second-order (``edge_order``) one-sided ones at the edges; spacings are scalars or
    coordinate arrays per axis. A list for several axes, an array for one."""
    f = as_float(f)
    nd = ndim(f)
    axes = list(range(nd)) if axis is None else [normalize_axis(a, nd) for a in np.atleast_1d(axis)]
    n = len(axes)
    if len(varargs) == 0:
        dx = [1.0] * n
    elif len(varargs) == 1 and ndim(varargs[0]) == 0:
        dx = list(varargs) * n
    elif len(varargs) == n:
        dx = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    outs = []
    sl = lambda a, lo, hi, ax: P.slice_in_dim(a, lo, hi, ax)
    for ax, d in zip(axes, dx):
        N = shape_of(f)[ax]
        if N < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")

        def bc(v):                    # a 1-d vector along ax
            sh = [1] * nd
            sh[ax] = shape_of(v)[0]
            return anp.reshape(v, tuple(sh))
        uniform = ndim(d) == 0
        if uniform:
            h = d
            h = h if isinstance(h, Tracer) or is_python_scalar(h) else float(h)
            interior = anp.divide(anp.subtract(sl(f, 2, N, ax), sl(f, 0, N - 2, ax)), anp.multiply(h, 2.0))
            if edge_order == 1:
                first = anp.divide(anp.subtract(sl(f, 1, 2, ax), sl(f, 0, 1, ax)), h)
                last = anp.divide(anp.subtract(sl(f, N - 1, N, ax), sl(f, N - 2, N - 1, ax)), h)
            else:
                first = anp.divide(anp.add(anp.add(anp.multiply(sl(f, 0, 1, ax), -1.5), anp.multiply(sl(f, 1, 2, ax), 2.0)),
                                           anp.multiply(sl(f, 2, 3, ax), -0.5)), h)
                last = anp.divide(anp.add(anp.add(anp.multiply(sl(f, N - 3, N - 2, ax), 0.5),
                                                  anp.multiply(sl(f, N - 2, N - 1, ax), -2.0)),
                                          anp.multiply(sl(f, N - 1, N, ax), 1.5)), h)
        else:
            x = as_float(d)
            if ndim(x) != 1 or shape_of(x)[0] != N:
                raise ValueError("when 1d, distances must match the length of the corresponding dimension")
            h = anp.diff(x)
            dx1, dx2 = anp.getitem(h, slice(0, N - 2)), anp.getitem(h, slice(1, N - 1))
            a = anp.negative(anp.divide(dx2, anp.multiply(dx1, anp.add(dx1, dx2))))
            b = anp.divide(anp.subtract(dx2, dx1), anp.multiply(dx1, dx2))
            c = anp.divide(dx1, anp.multiply(dx2, anp.add(dx1, dx2)))
            interior = anp.add(anp.add(anp.multiply(bc(a), sl(f, 0, N - 2, ax)), anp.multiply(bc(b), sl(f, 1, N - 1, ax))),
                               anp.multiply(bc(c), sl(f, 2, N, ax)))
            g = lambda i: anp.getitem(h, i)
            if edge_order == 1:
                first = anp.divide(anp.subtract(sl(f, 1, 2, ax), sl(f, 0, 1, ax)), g(0))
                last = anp.divide(anp.subtract(sl(f, N - 1, N, ax), sl(f, N - 2, N - 1, ax)), g(-1))
            else:
                d1, d2 = g(0), g(1)
                a0 = anp.negative(anp.divide(anp.add(anp.multiply(d1, 2.0), d2), anp.multiply(d1, anp.add(d1, d2))))
                b0 = anp.divide(anp.add(d1, d2), anp.multiply(d1, d2))
                c0 = anp.negative(anp.divide(d1, anp.multiply(d2, anp.add(d1, d2))))
                first = anp.add(anp.add(anp.multiply(a0, sl(f, 0, 1, ax)), anp.multiply(b0, sl(f, 1, 2, ax))),
                                anp.multiply(c0, sl(f, 2, 3, ax)))
                d1, d2 = g(-2), g(-1)
                a1 = anp.divide(d2, anp.multiply(d1, anp.add(d1, d2)))
                b1 = anp.negative(anp.divide(anp.add(d2, d1), anp.multiply(d1, d2)))
                c1 = anp.divide(anp.add(anp.multiply(d2, 2.0), d1), anp.multiply(d2, anp.add(d1, d2)))
                last = anp.add(anp.add(anp.multiply(a1, sl(f, N - 3, N - 2, ax)), anp.multiply(b1, sl(f, N - 2, N - 1, ax))),
                               anp.multiply(c1, sl(f, N - 1, N, ax)))
        # numpy writes into an array of f's dtype, whatever the spacings' dtype
        outs.append(anp.astype(anp.concatenate([first, interior, last], axis=ax), dtype_of(f)))
    return outs[0] if n == 1 else tuple(outs)


@npfunc(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened input, with optional ends (``numpy.ediff1d``)."""
    flat = anp.ravel(ary)
    n = shape_of(flat)[0]
    # the n - 1 neighbour differences (none for an empty input)
    d = flat if n == 0 else anp.subtract(P.slice_in_dim(flat, 1, n, 0),
                                         P.slice_in_dim(flat, 0, n - 1, 0))
    parts = []
    if to_begin is not None:
        parts.append(anp.astype(anp.ravel(asarray(to_begin)), dtype_of(d)))
    parts.append(d)
    if to_end is not None:
        parts.append(anp.astype(anp.ravel(asarray(to_end)), dtype_of(d)))
    return anp.concatenate(parts) if len(parts) > 1 else d


@npfunc(np.unwrap)
def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """Remove jumps larger than ``discont`` by adding multiples of ``period``
    (``numpy.unwrap``); the derivative is the identity. Integer input with an integer
    ``period`` stays integer (numpy's and JAX's integer arithmetic); complex input raises
    ``ValueError``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.unwrap(np.array([0, 3, 6, 1]), period=4)
    array([ 0, -1, -2, -3])
    """
    p = asarray(p)
    if dtype_of(p).kind == "c":
        raise ValueError("unwrap does not support complex inputs")
    integer = (dtype_of(p).kind in "iu" and isinstance(period, (int, np.integer))
               and not isinstance(period, bool))
    if not integer:
        p = as_float(p)
    ax = normalize_axis(axis, ndim(p))
    n = shape_of(p)[ax]
    if n == 0:
        return p
    dd = anp.diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    hi = period // 2 if integer else period / 2
    ddmod = anp.subtract(anp.mod(anp.add(dd, hi), period), hi)
    ddmod = anp.where(anp.logical_and(anp.equal(ddmod, -hi), anp.greater(dd, 0)), hi, ddmod)
    corr = anp.subtract(ddmod, dd)
    corr = anp.where(anp.less(anp.absolute(dd), discont), 0, corr)
    corr = anp.stop_gradient(corr)
    head = P.slice_in_dim(p, 0, 1, ax)
    rest = anp.add(P.slice_in_dim(p, 1, n, ax),
                   anp.cumulative_sum(corr, axis=ax, dtype=dtype_of(p)))
    return anp.concatenate([head, rest], axis=ax)


@npfunc(np.correlate)
def correlate(a, v, mode="valid"):
    """1-d cross-correlation ``c[k] = Σ_n a[n+k]·conj(v[n])`` (``numpy.correlate``: the
    second argument is conjugated)."""
    a, v = asarray(a), P.conj(asarray(v))
    swap = shape_of(v)[0] > shape_of(a)[0]
    out = anp.convolve(a, anp.flip(v), mode=mode)
    if swap and mode != "full":
        # numpy swaps the operands when v is longer, which reverses 'valid'/'same' results
        out = anp.flip(anp.convolve(v, anp.flip(a), mode=mode))
    return out


def _interp_checks(x, xp, fp, left, right, period):
    """JAX's argument checks for ``interp`` (ValueError, before any computation)."""
    if ndim(xp) != 1 or ndim(fp) != 1 or shape_of(xp)[0] != shape_of(fp)[0]:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str) and v != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                             f"but got: {v!r}")
    if dtype_of(asarray(x)).kind == "c":
        raise ValueError("interp: complex x values not supported.")
    if period is not None and np.ndim(period) != 0:
        raise ValueError(f"period must be a scalar; got {period}")


def _numpy_interp(x, xp, fp, left=None, right=None, period=None):
    """numpy's ``interp`` on plain values, after JAX's checks; JAX's
    ``'extrapolate'`` runs the traced implementation."""
    _interp_checks(x, xp, fp, left, right, period)
    if isinstance(left, str) or isinstance(right, str):
        return _interp(x, xp, fp, left, right, period)
    return np.interp(x, xp, fp, left, right, period)


@npfunc(_numpy_interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation (``numpy.interp``), ``period`` included;
    differentiable in ``x``, ``xp`` and ``fp``. ``left``/``right='extrapolate'`` (JAX's
    option) continues the first/last segment's line past the ends.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.interp(3.5, np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0]),
    ...                  right="extrapolate"))
    35.0
    """
    _interp_checks(x, xp, fp, left, right, period)
    return _interp(x, xp, fp, left, right, period)


def _interp(x, xp, fp, left, right, period):
    # numpy computes in float64 (complex128 for complex fp) whatever the input dtype
    x, xp = (anp.astype(asarray(v), np.float64) for v in (x, xp))
    fp = asarray(fp)
    fp = anp.astype(fp, np.complex128 if dtype_of(fp).kind == "c" else np.float64)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        x = anp.mod(x, period)
        xp = anp.mod(xp, period)
        order = anp.argsort(xp, kind="stable")
        xp, fp = anp.take(xp, order), anp.take(fp, order)
        xp = anp.concatenate([anp.subtract(xp[-1:], period), xp, anp.add(xp[0:1], period)])
        fp = anp.concatenate([fp[-1:], fp, fp[0:1]])
        left = right = None
    n = shape_of(xp)[0]
    idx = anp.clip(anp.sum(anp.greater_equal(anp.expand_dims(x, -1), xp), axis=-1), 1, n - 1)
    x0, x1 = anp.take(xp, anp.subtract(idx, 1)), anp.take(xp, idx)
    y0, y1 = anp.take(fp, anp.subtract(idx, 1)), anp.take(fp, idx)
    t = anp.divide(anp.subtract(x, x0), anp.subtract(x1, x0))
    out = anp.add(y0, anp.multiply(t, anp.subtract(y1, y0)))
    if not isinstance(left, str):         # 'extrapolate': the first segment's line
        out = anp.where(anp.less(x, xp[0]), fp[0] if left is None else left, out)
    if not isinstance(right, str):
        out = anp.where(anp.greater(x, xp[-1]), fp[-1] if right is None else right, out)
    return out
