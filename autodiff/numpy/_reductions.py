"""Reductions of autodiff.numpy: sums, products, extrema, means, variances, arg-reductions.

Part of :mod:`autodiff.numpy`, which names everything it defines."""
import builtins
import operator
import inspect as _inspect

import numpy as np

from .. import primitives as P
from ..core import Tracer, user_source
from ..errors import DTypeError as _DTypeError, ShapeError
from ._base import (npfunc, asarray, promote, float_type, shape_of, ndim,
                    broadcast_to as _broadcast_to, normalize_axis, normalize_axes, dtype_of)
from .. import numpy as _anp      # names the package binds later (creation functions)
from . import _np_dtype
from ._elementwise import (_bool, absolute, add, divide, exp, isfinite, log, maximum, minimum,
                           multiply, not_equal, sign, sqrt, subtract, where)

# ----------------------------------------------------------------------------
# reductions
# ----------------------------------------------------------------------------

def _reduce(x, axis, keepdims, prim_fn):
    x = asarray(x)
    nd = ndim(x)
    axes = normalize_axes(axis, nd)
    out = prim_fn(x, axes)
    if keepdims:
        out = P.expand_dims(out, axes)
    return out


def _sum_dtype(dt):
    dt = np.dtype(dt)
    if dt == np.bool_ or (dt.kind == "i" and dt.itemsize < 8):
        return np.dtype(np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return np.dtype(np.uint64)
    return dt


class _DTypeValueError(_DTypeError, ValueError):
    """A dtype JAX refuses with ValueError where numpy raises TypeError (a ``where=`` mask
    that is not boolean) or goes on (var of complex data in a real dtype): both kinds."""


def _check_where(name, where):
    """JAX's check: a reduction's ``where=`` is None or boolean (numpy refuses to cast
    other dtypes to bool as well, with a TypeError; this error is both)."""
    if where is None or where is True or where is False:
        return
    dt = dtype_of(where) if isinstance(where, Tracer) else np.asarray(where).dtype
    if dt != np.bool_:
        raise _DTypeValueError(f"{name}: where must be None or a boolean array; got dtype "
                              f"{dt}", source=user_source())


def _check_initial(initial):
    """JAX's check: ``initial=`` is a scalar (numpy fails on an array, less clearly)."""
    if initial is not None and ndim(initial) != 0:
        raise ShapeError(f"initial value must be a scalar. Got array of shape "
                         f"{tuple(shape_of(initial))}", source=user_source())


def _np_without_none(np_fn, *names):
    """``np_fn`` for the eager path, ignoring the keywords ``names`` when they are None
    (JAX's spelling of "not given"; numpy 2 reads ``correction=None`` / ``mean=None`` as
    given)."""
    def f(*args, **kwargs):
        for n in names:
            if n in kwargs and kwargs[n] is None:
                del kwargs[n]
        return np_fn(*args, **kwargs)
    f.__signature__ = _inspect.signature(np_fn)
    f.__name__, f.__doc__ = np_fn.__name__, np_fn.__doc__
    return f


def _masked(a, where, fill):
    """numpy's ``where=`` of a reduction: masked-out elements become its identity ``fill``."""
    if where is None or where is True:
        return a
    m = _broadcast_to(_bool(where), shape_of(a))
    return P.select_p.bind(m, a, P.full_like(a, fill))


def _count(a, where, axis, keepdims, dt):
    """How many elements each reduction over ``axis`` sees, honouring ``where=``, as ``dt``."""
    if where is None or where is True:
        axes = normalize_axes(axis, ndim(a))
        n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
        return dt.type(n)
    m = _broadcast_to(_bool(where), shape_of(a))
    return P.convert(sum(m, axis=axis, keepdims=keepdims), dt)


def _lowest(dt):
    # numpy orders complex numbers lexicographically: -inf - inf·i is below every one
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt.type(complex(-np.inf, -np.inf))
    return -np.inf if dt.kind == "f" else (False if dt.kind == "b" else np.iinfo(dt).min)


def _highest(dt):
    dt = np.dtype(dt)
    if dt.kind == "c":
        return dt.type(complex(np.inf, np.inf))
    return np.inf if dt.kind == "f" else (True if dt.kind == "b" else np.iinfo(dt).max)


def _abs2(d):
    """``|d|²``, real: ``d·d`` for real ``d``, ``Re(d)² + Im(d)²`` for complex ``d``."""
    if dtype_of(d).kind != "c":
        return P.mul(d, d)
    re, im = P.real(d), P.imag(d)
    return P.add(P.mul(re, re), P.mul(im, im))


def _no_out(out, name):
    # numpy writes into out=; a traced value cannot be written into: say so, never ignore it
    if out is not None:
        raise TypeError(f"{name}(..., out=) cannot be honoured on traced values (arrays are "
                        f"immutable under transforms): use the returned value instead")


def _no_identity(name, where, initial):
    if where is not None and where is not True and initial is None:
        raise ValueError(f"reduction operation {name!r} does not have an identity, so to use "
                         f"a where mask one has to specify 'initial' (as numpy requires)")


def _check_nonempty(name, a, axis, initial=None):
    """numpy's ValueError for max/min/argmax over no elements, in every mode: traced code
    knows the shapes, so jit, grad and vmap raise where eager numpy raises (a kernel would
    return the fill value -inf / inf / 0 instead)."""
    if initial is not None:
        return
    shp = shape_of(a)
    axes = range(len(shp)) if axis is None else normalize_axes(axis, len(shp))
    if builtins.any(shp[i] == 0 for i in axes):
        msg = (f"attempt to get {name} of an empty sequence" if name.startswith("arg") else
               f"zero-size array to reduction operation {name} which has no identity "
               f"(pass initial= for a value on empty input)")
        raise ShapeError(msg, source=user_source())


@npfunc(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, *,
        promote_integers=True):
    """``numpy.sum``; JAX's ``promote_integers=False`` keeps a small integer operand's
    dtype (numpy's promotion to the default integer is ``True``; bools always count in it)."""
    _no_out(out, "sum")
    _check_where("sum", where)
    _check_initial(initial)
    a = asarray(a)
    if not promote_integers and dtype is None and dtype_of(a).kind in "iu":
        dtype = dtype_of(a)
    a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
    a = _masked(a, where, 0)
    out = _reduce(a, axis, keepdims, lambda x, axes: P.reduce_sum(x, axes))
    if initial is not None:
        out = add(out, initial)
    return out


@npfunc(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, *,
         promote_integers=True):
    # JAX's promote_integers=False keeps a small integer operand's dtype (numpy promotes
    # to the default integer; bools always count in it). No docstring: autodiff.numpy's
    # generated one is its example (autodiff/numpy/_docs.py).
    _no_out(out, "prod")
    _check_where("prod", where)
    _check_initial(initial)
    a = asarray(a)
    if not promote_integers and dtype is None and dtype_of(a).kind in "iu":
        dtype = dtype_of(a)
    a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
    a = _masked(a, where, 1)
    out = _reduce(a, axis, keepdims,
                  lambda x, axes: P.reduce_prod_p.bind(x, axes=axes) if axes else x)
    return out if initial is None else multiply(out, initial)


product = prod


def _extreme(a, axis, keepdims, prim, identity):
    """``prim`` (reduce_max / reduce_min) over ``axis``; over no elements (``initial=`` was
    given, else _check_nonempty raised) its identity, with no equation on the empty
    operand (numpy's max, and the kernels, have no value for it), as JAX's reduce_max
    gives -inf; ``initial`` then decides the result, as in numpy."""
    def fn(x, axes):
        shp = shape_of(x)
        if not axes:
            return x
        if builtins.any(shp[i] == 0 for i in axes):
            out = tuple(d for i, d in enumerate(shp) if i not in axes)
            return P.full(out, identity, dtype_of(x))
        return prim.bind(x, axes=axes)
    return _reduce(a, axis, keepdims, fn)


@npfunc(np.max)
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "max")
    _check_where("max", where)
    _check_initial(initial)
    _no_identity("maximum", where, initial)
    a = asarray(a)
    _check_nonempty("maximum", a, axis, initial)
    a = _masked(a, where, _lowest(dtype_of(a)))
    out = _extreme(a, axis, keepdims, P.reduce_max_p, _lowest(dtype_of(a)))
    return out if initial is None else maximum(out, initial)


@npfunc(np.min)
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out, "min")
    _check_where("min", where)
    _check_initial(initial)
    _no_identity("minimum", where, initial)
    a = asarray(a)
    _check_nonempty("minimum", a, axis, initial)
    a = _masked(a, where, _highest(dtype_of(a)))
    out = _extreme(a, axis, keepdims, P.reduce_min_p, _highest(dtype_of(a)))
    return out if initial is None else minimum(out, initial)


amax, amin = max, min


@npfunc(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "all")
    _check_where("all", where)
    return _reduce(_masked(_bool(a), where, True), axis, keepdims, lambda x, axes: P.reduce_and_p.bind(x, axes=axes) if axes else x)


@npfunc(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "any")
    _check_where("any", where)
    return _reduce(_masked(_bool(a), where, False), axis, keepdims, lambda x, axes: P.reduce_or_p.bind(x, axes=axes) if axes else x)


alltrue, sometrue = all, any


@npfunc(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out, "mean")
    _check_where("mean", where)
    a = asarray(a)
    dt = _np_dtype(dtype) or float_type(dtype_of(a))
    if dt.kind in "biu":
        # numpy: the sum in dtype, divided in float64, cast back (truncating)
        s = sum(a, axis=axis, dtype=dt, keepdims=keepdims, where=where)
        ft = np.dtype(np.float64)
        return P.convert(divide(P.convert(s, ft), _count(a, where, axis, keepdims, ft)), dt)
    if dt == np.float16:
        # numpy accumulates a half-precision mean in float32 (a float16 sum stalls, and a
        # count above 65504 is inf in float16)
        return P.convert(mean(P.convert(a, np.float32), axis=axis, keepdims=keepdims,
                              where=where), dt)
    a = P.convert(a, dt)
    if where is not None and where is not True:
        return divide(sum(a, axis=axis, keepdims=keepdims, where=where),
                      _count(a, where, axis, keepdims, dt))
    axes = normalize_axes(axis, ndim(a))
    n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
    s = sum(a, axis=axes, keepdims=keepdims)
    return P.div(s, dt.type(n)) if n else P.div(s, dt.type(np.nan))


_mean = mean


@npfunc(np.average)
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        if returned:
            a = asarray(a)
            axes = normalize_axes(axis, ndim(a))
            n = np.prod([shape_of(a)[i] for i in axes])
            return avg, _anp.full_like(avg, n)
        return avg
    a, w = promote(a, weights, to_float=True)
    if shape_of(w) != shape_of(a):
        axes = None if axis is None else (
            (normalize_axis(axis, ndim(a)),) if isinstance(axis, (int, np.integer))
            else tuple(normalize_axis(ax, ndim(a)) for ax in axis))
        if axes is None or shape_of(w) != tuple(shape_of(a)[ax] for ax in axes):
            raise ShapeError("average: weights must have the shape of a, or the shape of a "
                             "along axis (axes in the order given)", source=user_source())
        # weights along several axes, in the order named: into increasing axis order
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        if order != list(range(len(axes))):
            w = P.transpose(w, tuple(order))
        w = P.broadcast_in_dim(w, shape_of(a), tuple(sorted(axes)))
    sw = sum(w, axis=axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), sw)
    return (avg, _broadcast_to(sw, shape_of(avg))) if returned else avg


def _var_dtype(in_dt, dtype, name):
    """The dtype var/std compute in: ``dtype``, else the input's float type; JAX's
    ValueError for a real ``dtype`` of complex data (numpy would drop the imaginary part)."""
    dt = _np_dtype(dtype) or float_type(in_dt)
    if np.dtype(in_dt).kind == "c" and dt.kind != "c":
        raise _DTypeValueError(f"{name}: dtype must be complex for complex input; got "
                              f"dtype={dt}", source=user_source())
    return dt


def _correction(ddof, correction, name):
    """``ddof``, or ``correction`` when given (numpy 2 raises when both are)."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
    return correction


@npfunc(_np_without_none(np.var, "mean", "correction"))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """``numpy.var``; ``correction`` is numpy 2's (and JAX's) name for ``ddof``, ``mean``
    a precomputed mean (with ``keepdims=True``'s shape) used in place of computing it.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = np.array([1.0, 2.0, 4.0])
    >>> round(float(ad.jit(lambda x: anp.var(x, correction=1))(x)), 12)
    2.333333333333
    >>> round(float(ad.jit(lambda x: anp.var(x, mean=np.array([2.0])))(x)), 12)
    1.666666666667
    """
    _no_out(out, "var")
    _check_where("var", where)
    ddof = _correction(ddof, correction, "var")
    a = asarray(a)
    a = P.convert(a, _var_dtype(dtype_of(a), dtype, "var"))
    mean_ = mean
    if where is not None and where is not True:
        m = _mean(a, axis=axis, keepdims=True, where=where) if mean_ is None else mean_
        d = _masked(subtract(a, m), where, 0)
        s = sum(_abs2(d), axis=axis, keepdims=keepdims)
        return divide(s, maximum(subtract(_count(a, where, axis, keepdims, dtype_of(s)), ddof), 0))
    m = _mean(a, axis=axis, keepdims=True) if mean_ is None else mean_
    d = subtract(a, m)
    axes = normalize_axes(axis, ndim(a))
    n = builtins.int(np.prod([shape_of(a)[i] for i in axes], dtype=np.int64))
    # the mean of |a - mean|², real for complex a (as numpy)
    s = sum(_abs2(d), axis=axis, keepdims=keepdims)
    return P.div(s, dtype_of(s).type(builtins.max(n - ddof, 0)))


@npfunc(_np_without_none(np.std, "mean", "correction"))
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """``numpy.std``; ``correction`` is numpy 2's (and JAX's) name for ``ddof``, ``mean``
    a precomputed mean (with ``keepdims=True``'s shape) used in place of computing it.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> round(float(ad.jit(lambda x: anp.std(x, ddof=1))(np.array([1.0, 3.0]))), 12)
    1.414213562373
    """
    _no_out(out, "std")
    _check_where("std", where)
    ddof = _correction(ddof, correction, "std")
    _var_dtype(dtype_of(asarray(a)), dtype, "std")
    v = var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean)
    # std of constant data has zero gradient (convention 5), not the 0·∞ of d√v at v = 0
    return safe_sqrt(v)


def safe_sqrt(s):
    """√s with a zero (sub)gradient at s = 0 (like autograd's norm); NaN stays NaN.

    The one safe square root of the namespace (``std``, ``linalg.norm``, ``hypot``): only
    s == 0 is replaced (a ``s > 0`` test would also turn NaN into 0), and the inner
    ``where`` keeps d√s = 1/(2√s) from evaluating 1/0 there.
    """
    if not isinstance(s, Tracer):
        return sqrt(s)
    zero = P.eq(s, P.full_like(s, 0))
    return where(zero, _anp.zeros_like(s), sqrt(where(zero, _anp.ones_like(s), s)))


def _arg(prim, np_fn):
    @npfunc(np_fn)
    def f(a, axis=None, out=None, keepdims=False):
        a = asarray(a)
        _check_nonempty(np_fn.__name__, a, axis)
        if axis is None:
            a = ravel(a)
            ax = 0
        else:
            ax = normalize_axis(axis, ndim(a))
        out = prim.bind(a, axis=ax, index_dtype=np.dtype(np.int64))
        if keepdims:
            out = P.expand_dims(out, (ax,) if axis is not None else tuple(range(ndim(a))))
        return out
    f.__name__ = np_fn.__name__
    return f


argmax = _arg(P.argmax_p, np.argmax)
argmin = _arg(P.argmin_p, np.argmin)


@npfunc(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak, ``max - min`` along ``axis`` (``numpy.ptp``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.ptp(np.array([[1.0, 5.0], [2.0, -1.0]]), axis=1)
    array([4., 3.])
    """
    _no_out(out, "ptp")
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


@npfunc(np.count_nonzero)
def count_nonzero(a, axis=None, keepdims=False):
    return sum(_bool(a), axis=axis, keepdims=keepdims)


def _cum(prim_fn, np_fn):
    @npfunc(np_fn)
    def f(a, axis=None, dtype=None, out=None):
        a = asarray(a)
        a = P.convert(a, _np_dtype(dtype) or _sum_dtype(dtype_of(a)))
        if axis is None:
            a = ravel(a)
            axis = 0
        return prim_fn(a, normalize_axis(axis, ndim(a)))
    f.__name__ = np_fn.__name__
    return f


cumsum = _cum(lambda a, ax: P.cumsum(a, ax), np.cumsum)
cumprod = _cum(lambda a, ax: P.cumprod(a, ax), np.cumprod)


def _cumulative(cum, identity, np_fn, name):
    @npfunc(np_fn)
    def f(x, axis=None, dtype=None, out=None, include_initial=False):
        _no_out(out, name)
        nd = ndim(x)
        what = name.replace("cumulative_", "cumulative ")
        if nd == 0:
            raise ShapeError(f"The input must be non-scalar to take a {what}, however a "
                             f"scalar value or scalar array was given.", source=user_source())
        if nd > 1 and axis is None:
            raise ShapeError(f"The input array has rank {nd}, however axis was not set to an "
                             f"explicit value. The axis argument is only optional for "
                             f"one-dimensional arrays.", source=user_source())
        res = cum(x, axis=axis, dtype=dtype)
        if include_initial:
            ax = 0 if axis is None else normalize_axis(axis, ndim(res))
            shape = list(shape_of(res))
            shape[ax] = 1
            res = concatenate([_anp.full(tuple(shape), identity, dtype_of(res)), res], axis=ax)
        return res
    f.__name__ = name
    f.__qualname__ = name
    return f


cumulative_sum = _cumulative(cumsum, 0, getattr(np, "cumulative_sum", None), "cumulative_sum")
cumulative_sum.__doc__ = """The array API's cumulative sum (``numpy.cumulative_sum``, JAX's):
    ``cumsum`` whose ``include_initial=True`` puts the sum of nothing, 0, first along ``axis``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.cumulative_sum(np.array([1.0, 2.0, 3.0]), include_initial=True)
    array([0., 1., 3., 6.])
    """
cumulative_prod = _cumulative(cumprod, 1, getattr(np, "cumulative_prod", None),
                              "cumulative_prod")
cumulative_prod.__doc__ = """The array API's cumulative product (``numpy.cumulative_prod``, JAX's):
    ``cumprod`` whose ``include_initial=True`` puts 1 first along ``axis``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.cumulative_prod(np.array([2.0, 3.0]), include_initial=True)
    array([1., 2., 6.])
    """


@npfunc(np.diff)
def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = asarray(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n}")
    if n == 0:                      # numpy: the input itself, prepend/append unused
        return a
    ax = normalize_axis(axis, ndim(a))
    if prepend is not None:
        a = concatenate([_broadcast_like_axis(prepend, a, ax), a], axis=ax)
    if append is not None:
        a = concatenate([a, _broadcast_like_axis(append, a, ax)], axis=ax)
    op = not_equal if dtype_of(a) == np.bool_ else subtract     # numpy's choice
    for _ in range(n):
        m = shape_of(a)[ax]
        a = op(P.slice_in_dim(a, builtins.min(1, m), m, ax),
               P.slice_in_dim(a, 0, builtins.max(m - 1, 0), ax))
    return a


def _broadcast_like_axis(v, a, ax):
    # numpy converts prepend/append with asanyarray: a Python float is float64 here
    v = asarray(v)
    if ndim(v) == 0:
        sh = list(shape_of(a))
        sh[ax] = 1
        return _broadcast_to(v, sh)
    return v


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b·exp(a)))`` computed stably (scipy's semantics, default ``axis=None``).

    ``where`` (JAX's keyword) leaves the elements where it is false out of the sum.

    >>> import numpy as np, autodiff.numpy as anp
    >>> float(anp.logsumexp(np.array([1000.0, 1000.0])))
    1000.6931471805599
    >>> float(anp.logsumexp(np.array([0.0, 5.0]), where=np.array([True, False])))
    0.0
    """
    if where is not None:
        a = _masked_to_neg_inf(a, where)
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def _masked_to_neg_inf(x, where):
    """``x`` in floating point with ``-inf`` where ``where`` is false (and no derivative
    reaching those elements): what a masked softmax or logsumexp reduces over."""
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    return _anp.where(where, x, -np.inf)


@npfunc(None)
def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    a = asarray(a)
    dt = float_type(dtype_of(a))
    a = P.convert(a, dt)
    if b is not None:
        # b broadcasts with a (scipy), and a term with b = 0 is no term: its a is -inf, so
        # it neither sets the shift nor underflows the others ([-1000, -2], b=[1, 0])
        a, b = _anp.broadcast_arrays(a, asarray(b))
        if np.dtype(dt).kind != "c":
            a = where(P.ne(b, P.convert(np.asarray(0), dtype_of(b))), a,
                      P.convert(np.asarray(-np.inf), dt))
    shape = shape_of(a)
    axes = normalize_axes(axis, len(shape))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    empty = builtins.any(shape[i] == 0 for i in axes)
    if b is None and not return_sign and axes and not empty and np.dtype(dt).kind == "f":
        # the common case: one primitive (its definition is the clamped shift below)
        out = P.logsumexp_p.bind(a, axes=axes)
        return P.expand_dims(out, axes) if keepdims else out
    if empty:
        # log of an empty sum is log 0 = -inf (scipy, JAX); max has nothing to shift by
        m = _anp.zeros_like(sum(a, axis=axes))
    elif np.dtype(dt).kind == "c":
        # shifted by the largest real part (a real number): log of the sum is then the
        # principal logarithm, its imaginary part in (-pi, pi], as scipy's
        m = max(_anp.real(a), axis=axes)
        m = stop_gradient(where(isfinite(m), m, _anp.zeros_like(m)))
    else:
        # the shift, clamped to the finite range: an all -inf slice gives -inf, a +inf
        # element +inf, a nan nan (as with a shift of 0 for non-finite maxima)
        m = P.logsumexp_shift(a, axes)
    e_ = exp(P.sub(a, P.broadcast_in_dim(P.convert(m, dt), shape, kept)))
    if b is not None:
        e_ = multiply(e_, b)
    s = sum(e_, axis=axes)
    if return_sign:
        sgn = sign(s)
        out = add(log(absolute(s)), m)
    else:
        out = add(log(s), m)
    if keepdims:
        out = P.expand_dims(out, axes)
        if return_sign:
            sgn = P.expand_dims(sgn, axes)
    return (out, sgn) if return_sign else out


def stop_gradient(x):
    if isinstance(x, Tracer):
        return P.stop_gradient_p.bind(x)
    return x


def _softmax_shift(x, axis):
    """The shift of softmax/log_softmax (kept dims, no derivative): logsumexp's, the
    maximum clamped to the finite range. An unclamped +inf maximum would make every entry
    of its slice nan (inf - inf); clamped, the slice's sum is inf and the result is numpy's
    ``x - logsumexp(x)`` (nan at the +inf entries, -inf at the others). Finite maxima are
    unchanged, so are finite slices' results."""
    shape = shape_of(x)
    axes = normalize_axes(axis, len(shape))
    if builtins.any(shape[i] == 0 for i in axes):     # an empty slice: nothing to shift
        return _anp.zeros(tuple(1 if i in axes else n for i, n in enumerate(shape)),
                          dtype_of(x))
    if np.dtype(dtype_of(x)).kind != "f" or not axes:
        return stop_gradient(max(x, axis=axis, keepdims=True))
    return P.expand_dims(P.logsumexp_shift(x, axes), axes)


@npfunc(None)
def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis``, stably.

    ``where`` (JAX's keyword): the elements where it is false take no part and get 0.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.softmax(np.array([0.0, 0.0, 9.0]), where=np.array([True, True, False]))
    array([0.5, 0.5, 0. ])
    """
    if where is not None:
        return _anp.where(where, softmax(_masked_to_neg_inf(x, where), axis=axis), 0.0)
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    m = _softmax_shift(x, axis)
    e_ = exp(subtract(x, m))
    return divide(e_, sum(e_, axis=axis, keepdims=True))


@npfunc(None)
def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``, stably.

    ``where`` (JAX's keyword): the elements where it is false take no part and get
    ``-inf``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> anp.log_softmax(np.array([0.0, 0.0, 9.0]), where=np.array([True, True, False]))
    array([-0.69314718, -0.69314718,        -inf])
    """
    if where is not None:
        return _anp.where(where, log_softmax(_masked_to_neg_inf(x, where), axis=axis),
                          -np.inf)
    x = asarray(x)
    x = P.convert(x, float_type(dtype_of(x)))
    m = _softmax_shift(x, axis)
    s = subtract(x, m)
    if 0 in shape_of(x):       # nothing to normalise (and no log 0 warning)
        return s
    return subtract(s, log(sum(exp(s), axis=axis, keepdims=True)))

# used when called, from modules imported after this one
from ._shapes import concatenate, ravel  # noqa: E402
