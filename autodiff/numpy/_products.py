"""Products, sorting and the rest of autodiff.numpy's core: dot/matmul/outer, sort/argsort, misc.

Part of :mod:`autodiff.numpy`, which names everything it defines."""
import builtins
import functools

import numpy as np

from .. import primitives as P
from ..core import Tracer, user_source
from ..errors import ShapeError
from ._base import ndim as _base_ndim
from ._base import (npfunc, asarray, promote, elementwise_args, result_type, float_type, shape_of,
                    ndim, broadcast_shapes, broadcast_to as _broadcast_to, normalize_axis,
                    normalize_axes, is_python_scalar, dtype_of)
from .. import numpy as _anp      # names the package binds later (creation functions)
from ._elementwise import (absolute, add, clip, divide, equal, greater, greater_equal, isnan, less,
                           isfinite,
                           less_equal, logical_and, logical_or, multiply, sqrt, subtract, where)
from ._reductions import _no_out, all, mean, sum
from ._shapes import (_seq, atleast_2d, concatenate, diagonal, expand_dims, getitem, moveaxis,
                      ravel, reshape, squeeze, stack, take, transpose)

# ----------------------------------------------------------------------------
# products
# ----------------------------------------------------------------------------

@npfunc(np.matmul)
def matmul(x1, x2):
    a, b = promote(x1, x2)
    a, b = asarray(a), asarray(b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        raise ShapeError("matmul: input operand does not have enough dimensions", source=user_source())
    if na == 1 and nb == 1:
        _check_contract(shape_of(a)[0], shape_of(b)[0], a, b)
        return P.dot_general(a, b, (((0,), (0,)), ((), ())))
    # a vector operand needs no expand/squeeze: contracting it leaves exactly the free
    # dims of the other operand, in matmul's order, so one dot_general does it
    if na == 1:
        _check_contract(shape_of(a)[0], shape_of(b)[-2], a, b)
        return P.dot_general(a, b, (((0,), (nb - 2,)), ((), ())))
    if nb == 1:
        _check_contract(shape_of(a)[-1], shape_of(b)[0], a, b)
        return P.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
    _check_contract(shape_of(a)[-1], shape_of(b)[-2], a, b)
    batch = broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2])
    if na == 2 and nb == 2:
        return P.dot_general(a, b, (((1,), (0,)), ((), ())))
    if nb == 2:
        # (..., n, k) @ (k, m): contract without broadcasting b
        return P.dot_general(a, b, (((na - 1,), (0,)), ((), ())))
    a = _broadcast_to(a, batch + shape_of(a)[-2:])
    b = _broadcast_to(b, batch + shape_of(b)[-2:])
    nbt = len(batch)
    bd = tuple(range(nbt))
    return P.dot_general(a, b, (((nbt + 1,), (nbt,)), (bd, bd)))


def _check_contract(n, m, a, b):
    if n != m:
        raise ShapeError(f"matmul: contracted dimensions differ ({n} vs {m}) for shapes "
                         f"{shape_of(a)} and {shape_of(b)}", source=user_source())


def _promote_strong(a, b):
    """``promote`` for the products numpy computes on ``asarray``'d operands (dot, inner,
    tensordot, kron): a Python number is a float64/int64 array there, not a weak scalar
    (``np.dot(np.float32(3e38), 2.0)`` is float64 6e38; a weak 2.0 made it float32 inf
    whenever an operand was traced, while the eager call gave numpy's). A weakly typed
    tracer (a Python number passed to jit) is strong here too."""
    a, b = asarray(a), asarray(b)
    dt = np.result_type(dtype_of(a), dtype_of(b))
    return [x if dtype_of(x) == dt else asarray(x, dt) for x in (a, b)]


@npfunc(np.dot)
def dot(a, b):
    a, b = _promote_strong(a, b)
    na, nb = ndim(a), ndim(b)
    if na == 0 or nb == 0:
        return multiply(a, b)
    if nb <= 2:
        return matmul(a, b)
    # numpy: sum over the last axis of a and the second-to-last of b
    _check_contract(shape_of(a)[-1], shape_of(b)[-2], a, b)
    return P.dot_general(a, b, (((na - 1,), (nb - 2,)), ((), ())))


@npfunc(np.vdot)
def vdot(a, b):
    """``numpy.vdot``: the flattened dot product, conjugating ``a`` (complex input)."""
    return dot(ravel(P.conj(asarray(a))), ravel(b))


@npfunc(np.inner)
def inner(a, b):
    a, b = _promote_strong(a, b)
    if ndim(a) == 0 or ndim(b) == 0:
        return multiply(a, b)
    _check_contract(shape_of(a)[-1], shape_of(b)[-1], a, b)
    return P.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())))


@npfunc(np.outer)
def outer(a, b):
    a, b = promote(ravel(a), ravel(b))
    return P.dot_general(a, b, (((), ()), ((), ())))


@npfunc(np.tensordot)
def tensordot(a, b, axes=2):
    a, b = _promote_strong(a, b)
    na, nb = ndim(a), ndim(b)
    if isinstance(axes, (builtins.int, np.integer)):
        ax_a = tuple(range(na - axes, na))
        ax_b = tuple(range(axes))
        if axes > builtins.min(na, nb):
            raise TypeError(f"Number of tensordot axes (axes={axes}) exceeds input ranks "
                            f"({na} and {nb})")
    else:
        if not isinstance(axes, (list, tuple, np.ndarray)) or len(axes) != 2:
            raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair "
                            f"of lists of ints, got {axes!r}")
        ax_a, ax_b = axes
        ax_a = tuple(np.atleast_1d(ax_a))
        ax_b = tuple(np.atleast_1d(ax_b))
        if not builtins.all(isinstance(x, (builtins.int, np.integer)) for x in ax_a + ax_b):
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists of ints, got {axes!r}")
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{axes!r}")
    ax_a = tuple(normalize_axis(x, na) for x in ax_a)
    ax_b = tuple(normalize_axis(x, nb) for x in ax_b)
    for i, j in zip(ax_a, ax_b):
        _check_contract(shape_of(a)[i], shape_of(b)[j], a, b)
    return P.dot_general(a, b, ((ax_a, ax_b), ((), ())))


@npfunc(np.kron)
def kron(a, b):
    a, b = _promote_strong(a, b)
    a, b = asarray(a), asarray(b)
    nd = builtins.max(ndim(a), ndim(b))
    a = reshape(a, (1,) * (nd - ndim(a)) + shape_of(a))
    b = reshape(b, (1,) * (nd - ndim(b)) + shape_of(b))
    o = multiply(reshape(a, tuple(x for s in shape_of(a) for x in (s, 1))),
                 reshape(b, tuple(x for s in shape_of(b) for x in (1, s))))
    return reshape(o, tuple(p * q for p, q in zip(shape_of(a), shape_of(b))))


@npfunc(np.cross)
def cross(a, b, axis=-1):
    a, b = promote(a, b)
    a = moveaxis(a, axis, -1)
    b = moveaxis(b, axis, -1)
    a0, a1, a2 = (getitem(a, (Ellipsis, i)) for i in range(3))
    b0, b1, b2 = (getitem(b, (Ellipsis, i)) for i in range(3))
    return stack([subtract(multiply(a1, b2), multiply(a2, b1)),
                  subtract(multiply(a2, b0), multiply(a0, b2)),
                  subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)


from ._einsum import einsum  # noqa: E402,F401 (re-exported)

# ----------------------------------------------------------------------------
# sorting
# ----------------------------------------------------------------------------


def _numpy_sorter(np_fn):
    """numpy's ``np_fn`` with JAX's ``descending=`` (the ascending result reversed; for
    argsort, a stable one keeps equal elements in their original order)."""
    @functools.wraps(np_fn)
    def f(a, axis=-1, kind=None, order=None, *, stable=None, descending=False, dtype=None):
        if dtype is not None:
            return f(a, axis, kind, order, stable=stable, descending=descending).astype(dtype)
        kw = {} if stable is None else {"stable": stable}
        if not descending:
            return np_fn(a, axis=axis, kind=kind, order=order, **kw)
        a = np.asarray(a)
        if axis is None:
            a, axis = a.ravel(), 0
        ax = normalize_axis(axis, a.ndim)
        if np_fn is np.sort:
            return np.flip(np.sort(a, axis=ax, kind=kind, order=order, **kw), ax)
        if stable is False:     # the traced argsort's order (a stable sort, reversed)
            return np.flip(np.argsort(a, axis=ax, kind="stable", order=order), ax)
        n = a.shape[ax]
        i = np.argsort(np.flip(a, ax), axis=ax, kind="stable", order=order)
        return np.flip(n - 1 - i, ax)
    return f


@npfunc(_numpy_sorter(np.sort))
def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy's sort, with JAX's ``descending=`` (largest first: the ascending sort
    reversed) and ``stable=``; differentiable (tied values share their gradient).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.sort(np.array([3.0, 1.0, 2.0]), descending=True)
    array([3., 2., 1.])
    """
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    out = P.sort_p.bind(a, dimension=ax)
    return P.rev(out, [ax]) if descending else out


@npfunc(_numpy_sorter(np.argsort))
def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False, dtype=None):
    """numpy's argsort (always stable), with JAX's ``descending=``: the indices of the
    largest first; equal elements keep their original order unless ``stable=False``
    (then, as in JAX, their order is reversed). ``dtype`` (JAX's keyword) sets the
    indices' dtype.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.argsort(np.array([1.0, 3.0, 1.0, 2.0]), descending=True)
    array([1, 3, 0, 2])
    """
    if dtype is not None:               # JAX's dtype= for the indices
        return P.convert(argsort(a, axis, kind, order, stable=stable, descending=descending),
                         np.dtype(dtype))
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = normalize_axis(axis, ndim(a))
    if not descending:
        return P.argsort_p.bind(a, dimension=ax)
    if stable is False:
        return P.rev(P.argsort_p.bind(a, dimension=ax), [ax])
    # a stable sort of the reversed array, its indices mapped back and reversed: equal
    # elements keep their original order (JAX's argsort)
    n = shape_of(a)[ax]
    i = P.argsort_p.bind(P.rev(a, [ax]), dimension=ax)
    return P.rev(P.sub(P.scalar(n - 1, np.int64), i), [ax])


def axes_to_last(a, axis):
    """Move the reduced ``axis`` (None, int or tuple) of ``a`` into one trailing axis;
    also return the keepdims shape (1 in each reduced position)."""
    shp = shape_of(a)
    axes = normalize_axes(axis, len(shp))
    rest = [i for i in range(len(shp)) if i not in axes]
    n = builtins.int(np.prod([shp[i] for i in axes], dtype=np.int64))   # not -1: size-0 arrays
    a = reshape(transpose(a, rest + list(axes)), tuple(shp[i] for i in rest) + (n,))
    return a, tuple(1 if i in axes else d for i, d in enumerate(shp))


@npfunc(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis`` (``numpy.median``); ``overwrite_input`` changes nothing
    (arrays are not changed in place), ``out=`` is refused under a trace.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.median(np.array([3.0, 1.0, 2.0, 10.0])))
    2.5
    """
    _no_out(out, "median")
    a = asarray(a)
    a = P.convert(a, float_type(dtype_of(a)))
    a, kept = axes_to_last(a, axis)
    s = sort(a, axis=-1)
    n = shape_of(a)[-1]
    if n == 0:                          # numpy: nan (with a warning) for an empty slice
        out = P.full(shape_of(a)[:-1], np.nan, dtype_of(a))
        return reshape(out, kept) if keepdims else out
    # numpy's median is a mean of the middle element(s), a sum that starts at +0.0: the
    # median of [-0.] is +0.0 (found by tests/test_fuzz.py); adding 0.0 turns -0. into +0.
    mid = add(getitem(s, (Ellipsis, (n - 1) // 2)), getitem(s, (Ellipsis, n // 2)))
    out = multiply(add(mid, 0.0), 0.5)
    # sort puts NaN last; numpy's median is NaN for a slice holding one (so is JAX's)
    last = getitem(s, (Ellipsis, n - 1))
    out = where(isnan(last), last, out)
    return reshape(out, kept) if keepdims else out


@npfunc(np.quantile)
def quantile(a, q, axis=None, keepdims=False):
    a = asarray(a)
    # numpy's result dtype: a Python float q is weak, an array (or list) of q's is float64
    a = P.convert(a, float_type(result_type(a, q if is_python_scalar(q) else np.asarray(q))))
    s, kept = axes_to_last(a, axis)
    s = sort(s, axis=-1)
    n = shape_of(s)[-1]
    qs = np.atleast_1d(np.asarray(q, dtype=np.float64))
    outs = []
    for qq in qs:
        pos = qq * (n - 1)
        lo = builtins.int(np.floor(pos))
        hi = builtins.min(lo + 1, n - 1)
        frac = builtins.float(pos - lo)     # a Python float: weak, keeps float32 data float32
        v = add(multiply(getitem(s, (Ellipsis, lo)), 1 - frac), multiply(getitem(s, (Ellipsis, hi)), frac))
        if keepdims:
            v = reshape(v, kept)
        outs.append(v)
    return outs[0] if np.ndim(q) == 0 else stack(outs, 0)


@npfunc(np.percentile)
def percentile(a, q, axis=None, keepdims=False):
    q = q / 100.0 if is_python_scalar(q) else np.asarray(q) / 100.0
    return quantile(a, q, axis=axis, keepdims=keepdims)


# ----------------------------------------------------------------------------
# misc
# ----------------------------------------------------------------------------

@npfunc(np.allclose)
def allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


@npfunc(np.isclose)
def isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol·|b|`` (``numpy.isclose``): infinities are close
    only to themselves; ``equal_nan`` counts NaN close to NaN.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.isclose(np.array([np.inf, 1.0]), np.array([-np.inf, 1.0 + 1e-9]))
    array([False,  True])
    """
    a, b = elementwise_args(a, b, to_float=True)
    close = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    close = logical_and(close, logical_and(isfinite(a), isfinite(b)))
    close = logical_or(close, equal(a, b))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


@npfunc(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    """True when both arrays have the same shape and elements (``numpy.array_equal``);
    ``equal_nan=True`` counts NaN equal to NaN (a complex number is NaN when either part
    is).

    >>> import numpy as np, autodiff.numpy as anp
    >>> bool(anp.array_equal(np.array([1.0, np.nan]), np.array([1.0, np.nan]), equal_nan=True))
    True
    """
    if shape_of(a1) != shape_of(a2):
        return False
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return all(same)


@npfunc(np.interp)
def interp(x, xp, fp, left=None, right=None):
    x, xp, fp = promote(x, xp, fp, to_float=True)
    n = shape_of(xp)[0]
    # index of the right end of the bracketing interval
    idx = sum(greater_equal(expand_dims(x, -1), xp), axis=-1)
    idx = clip(idx, 1, n - 1)
    x0, x1 = take(xp, subtract(idx, 1)), take(xp, idx)
    y0, y1 = take(fp, subtract(idx, 1)), take(fp, idx)
    t = divide(subtract(x, x0), subtract(x1, x0))
    out = add(y0, multiply(t, subtract(y1, y0)))
    out = where(less(x, getitem(xp, 0)), getitem(fp, 0) if left is None else left, out)
    return where(greater(x, getitem(xp, -1)), getitem(fp, -1) if right is None else right, out)


@npfunc(np.polyval)
def polyval(p, x):
    p = _seq(p) if not isinstance(p, Tracer) else [getitem(p, i) for i in range(shape_of(p)[0])]
    out = _anp.zeros_like(asarray(x, dtype=result_type(x, *p)) if not isinstance(x, Tracer) else x)
    for c in p:
        out = add(multiply(out, x), c)
    return out


@npfunc(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    m = asarray(m)
    m = P.convert(m, np.result_type(dtype_of(m), np.float64))   # numpy: at least float64
    if ndim(m) == 1:
        m = expand_dims(m, 0)
    if not rowvar:
        m = transpose(m)
    if y is not None:
        y = atleast_2d(asarray(y))
        m = concatenate([m, y if rowvar else transpose(y)], axis=0)
    n = shape_of(m)[1]
    dd = ddof if ddof is not None else (0 if bias else 1)
    xc = subtract(m, mean(m, axis=1, keepdims=True))
    c = divide(matmul(xc, transpose(xc)), n - dd)
    return squeeze(c) if shape_of(c) == (1, 1) else c


@npfunc(np.corrcoef)
def corrcoef(x, y=None, rowvar=True):
    c = cov(x, y, rowvar)
    if ndim(c) == 0:
        return divide(c, c)
    d = sqrt(diagonal(c))
    return divide(divide(c, expand_dims(d, 1)), expand_dims(d, 0))


@npfunc(np.ndim)
def ndim_(a):
    return _base_ndim(a)


def shape_(a):
    return shape_of(a)


@npfunc(np.real)
def real(x):
    """``numpy.real``: the real part (real input itself)."""
    return P.real(asarray(x))


@npfunc(np.conj)
def conj(x, /, out=None, **kw):
    """``numpy.conj``: the complex conjugate (real input itself)."""
    return P.conj(asarray(x))


conjugate = conj


@npfunc(np.copy)
def copy(a, order="K"):
    return asarray(a)

