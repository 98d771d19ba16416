"""Cumulative operations and sorting."""
import numpy as np

from ..core import Primitive, ShapedArray
from ..errors import ShapeError
from ._rules import (defjvp, defjvp_zero, defleading, deflinear, deflowering, deftaylor,
                     deftaylor_locally_linear, dtype_of, full, is_zero,
                     ones_like, scalar, shape_of, shifted, zeros_like, _ndim, _zero_like)
from .elementwise import add, convert, div, eq, mul, ne, select, sub
from .shape import concatenate, iota, pad, rev, slice_in_dim
from .indexing import scatter_along_axis_add, take_along_axis
from .taylor_series import map_series, series_mul

__all__ = ["argsort_p", "cummax_p", "cummin_p", "cumprod", "cumprod_p", "cumsum", "cumsum_p",
           "sort_p"]

# ============================================================================
# Cumulative ops, sort, iota
# ============================================================================

def _cum_aval(x, *, axis, reverse):
    if not 0 <= axis < max(x.ndim, 1):
        raise ShapeError(f"cumulative op: axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape, x.dtype)


def _cum_impl(fn):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return fn(x, axis=axis, dtype=x.dtype)
    return impl


cumsum_p = Primitive("cumsum")
cumsum_p.impl = _cum_impl(np.cumsum)
cumsum_p.abstract_eval = _cum_aval
deflinear(cumsum_p, lambda ct, x, *, axis, reverse:
          [cumsum(ct, axis, reverse=not reverse)])
defleading(cumsum_p, shifted("axis"))
deflowering(cumsum_p, "cumulative", combine="add")


def cumsum(x, axis, reverse=False):
    """The cumulative sum along ``axis`` (from the end when ``reverse``)."""
    return cumsum_p.bind(x, axis=int(axis), reverse=bool(reverse))


cumprod_p = Primitive("cumprod")
cumprod_p.impl = _cum_impl(np.cumprod)
cumprod_p.abstract_eval = _cum_aval
defleading(cumprod_p, shifted("axis"))
deflowering(cumprod_p, "cumulative", combine="mul")


def _cumprod_jvp(t, ans, x, *, axis, reverse):
    # d cumprod(x)_i = Σ_{j≤i} dx_j Π_{k≤i, k≠j} x_k, computed as the derivative of a
    # Hillis–Steele scan (log₂ n rounds of y_i <- y_i · y_{i-d}). Made of mul and pad only,
    # it needs no division: exact with zeros in x, and at every order of differentiation.
    n, nd, dt = shape_of(x)[axis], _ndim(x), dtype_of(x)
    y, ty = (rev(x, (axis,)), rev(t, (axis,))) if reverse else (x, t)
    d = 1
    while d < n:
        cfg = [(0, 0, 0)] * nd
        cfg[axis] = (d, -d, 0)                   # shift by d along axis, filling in 1 (0)
        ys, ts = pad(y, scalar(1, dt), cfg), pad(ty, scalar(0, dt), cfg)
        ty = add(mul(ty, ys), mul(y, ts))
        y = mul(y, ys)
        d *= 2
    return rev(ty, (axis,)) if reverse else ty


defjvp(cumprod_p, _cumprod_jvp)


def _shift_series(y, axis, d, nd):
    """y shifted by ``d`` along ``axis``: the primal is filled with 1, coefficients with 0."""
    cfg = [(0, 0, 0)] * nd
    cfg[axis] = (d, -d, 0)
    dt = dtype_of(y[0])
    return [pad(y[0], scalar(1, dt), cfg)] + [
        None if c is None else pad(c, scalar(0, dt), cfg) for c in y[1:]]


def _cumprod_taylor(ins, *, axis, reverse):
    # the Hillis–Steele scan of the jvp rule, y_i <- y_i · y_{i-d} for d = 1, 2, 4, …, on
    # series: log₂ n Cauchy products, exact with zeros in x
    (x,) = ins
    n, nd = shape_of(x[0])[axis], _ndim(x[0])
    y = map_series(lambda c: rev(c, (axis,)), x) if reverse else list(x)
    d = 1
    while d < n:
        y = series_mul(y, _shift_series(y, axis, d, nd))
        d *= 2
    if reverse:
        y = map_series(lambda c: rev(c, (axis,)), y)
    return [cumprod_p.bind(x[0], axis=axis, reverse=reverse)] + y[1:]


deftaylor(cumprod_p, _cumprod_taylor)


def cumprod(x, axis, reverse=False):
    """The cumulative product along ``axis`` (from the end when ``reverse``)."""
    return cumprod_p.bind(x, axis=int(axis), reverse=bool(reverse))


def _cum_extreme(name, ufunc, combine):
    p = Primitive(name)

    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
        return ufunc.accumulate(x, axis=axis)
    p.impl = impl
    p.abstract_eval = _cum_aval
    defleading(p, shifted("axis"))
    deflowering(p, "cumulative", combine=combine)

    def jvp(t, ans, x, *, axis, reverse):
        # the running extremum's tangent is the tangent at the latest position it came from
        n = shape_of(x)[axis]
        pos = iota(np.int64, shape_of(x), axis)
        if reverse:
            pos = sub(scalar(n - 1, np.int64), pos)
        hit = eq(x, ans)
        src = cummax_p.bind(select(hit, pos, full(shape_of(x), -1, np.int64)), axis=axis, reverse=reverse)
        if reverse:
            src = sub(scalar(n - 1, np.int64), src)
        return take_along_axis(t, src, axis)
    defjvp(p, jvp)
    deftaylor_locally_linear(p)
    return p


cummax_p = _cum_extreme("cummax", np.maximum, "max")
cummin_p = _cum_extreme("cummin", np.minimum, "min")

sort_p = Primitive("sort")
sort_p.impl = lambda x, *, dimension: np.sort(x, axis=dimension, kind="stable")
sort_p.abstract_eval = lambda x, *, dimension: ShapedArray(x.shape, x.dtype)


def _sort_jvp(primals, tangents, *, dimension):
    (x,), (t,) = primals, tangents
    ans = sort_p.bind(x, dimension=dimension)
    if is_zero(t):
        return ans, _zero_like(ans)
    perm = argsort_p.bind(x, dimension=dimension)
    ts = take_along_axis(t, perm, dimension)
    # ties share: average the tangent over each run of equal sorted values
    return ans, _tie_average(ans, ts, dimension)


def _tie_average(s, ts, axis):
    n = shape_of(s)[axis]
    if n <= 1:
        return ts
    first = slice_in_dim(s, 0, 1, axis)
    new_run = concatenate([full(shape_of(first), 1, np.int64),
                           convert(ne(slice_in_dim(s, 1, n, axis), slice_in_dim(s, 0, n - 1, axis)),
                                   np.int64)], axis)
    group = sub(cumsum(new_run, axis), scalar(1, np.int64))     # run id, 0-based, per row
    ones = ones_like(ts)
    sums = scatter_along_axis_add(zeros_like(ts), group, ts, axis)
    counts = scatter_along_axis_add(zeros_like(ts), group, ones, axis)
    mean = div(sums, select(eq(counts, 0), ones, counts))
    return take_along_axis(mean, group, axis)


sort_p.jvp = _sort_jvp
deftaylor_locally_linear(sort_p)


defleading(sort_p, shifted("dimension"))

argsort_p = Primitive("argsort")
argsort_p.impl = lambda x, *, dimension: np.argsort(x, axis=dimension, kind="stable").astype(np.int64)
argsort_p.abstract_eval = lambda x, *, dimension: ShapedArray(x.shape, np.int64)
defjvp_zero(argsort_p, "integer result")


defleading(argsort_p, shifted("dimension"))

