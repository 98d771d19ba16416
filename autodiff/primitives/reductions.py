"""Reductions: sums, products, extrema, logical reductions and arg-reductions."""
import numpy as np

from ..core import Primitive, ShapedArray
from ..errors import ShapeError
from ._rules import defjvp, defjvp_zero, defleading, deflinear, dtype_of, full, shape_of, shifted
from .elementwise import convert, div, eq, mul
from .shape import broadcast_in_dim, concatenate, reshape, slice_in_dim, transpose

__all__ = ["argmax_p", "argmin_p", "reduce_and_p", "reduce_max_p", "reduce_min_p", "reduce_or_p",
           "reduce_prod_p", "reduce_sum", "reduce_sum_p"]

# ============================================================================
# Reductions
# ============================================================================


def _reduce_aval(x, *, axes, out_dtype=None):
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ShapeError(f"reduction axis {a} out of range for shape {x.shape}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ShapedArray(shape, out_dtype or x.dtype)


def _reducer(name, impl, out_dtype=None):
    p = Primitive(name)
    p.impl = impl
    p.abstract_eval = lambda x, *, axes: _reduce_aval(x, axes=axes, out_dtype=out_dtype)
    defleading(p, shifted("axes"))
    return p


def _sum_impl(x, *, axes):
    x = np.asarray(x)
    return np.sum(x, axis=axes, dtype=x.dtype)


reduce_sum_p = _reducer("reduce_sum", _sum_impl)


def _reduce_sum_transpose(ct, x, *, axes):
    # transpose of a sum is a broadcast back along the summed axes
    shape = x.aval.shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return [broadcast_in_dim(ct, shape, kept)]


deflinear(reduce_sum_p, _reduce_sum_transpose)

reduce_max_p = _reducer("reduce_max", lambda x, *, axes: np.max(x, axis=axes))
reduce_min_p = _reducer("reduce_min", lambda x, *, axes: np.min(x, axis=axes))


def _reduce_chooser_jvp(prim):
    # tangent is the mean of the tangents at the locations of the extremum (ties share)
    def jvp(t, ans, x, *, axes):
        shape = shape_of(x)
        kept = tuple(i for i in range(len(shape)) if i not in axes)
        loc = convert(eq(x, broadcast_in_dim(ans, shape, kept)), dtype_of(x))
        counts = reduce_sum(loc, axes)
        return div(reduce_sum(mul(t, loc), axes), counts)
    defjvp(prim, jvp)


_reduce_chooser_jvp(reduce_max_p)
_reduce_chooser_jvp(reduce_min_p)

reduce_prod_p = _reducer("reduce_prod", lambda x, *, axes: np.prod(x, axis=axes, dtype=np.asarray(x).dtype))


def _reduce_prod_jvp(t, ans, x, *, axes):
    # d Πx = Σ_i dx_i Π_{j≠i} x_j; the products of the others come from exclusive
    # cumulative products from both ends, so zeros in x are handled exactly.
    shape = shape_of(x)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    perm = kept + tuple(axes)
    xt = transpose(x, perm) if perm != tuple(range(len(shape))) else x
    tt = transpose(t, perm) if perm != tuple(range(len(shape))) else t
    kept_shape = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    xr = reshape(xt, kept_shape + (n,))
    tr = reshape(tt, kept_shape + (n,))
    ax = len(kept_shape)
    if n == 0:
        return full(kept_shape, 0, dtype_of(x))
    one = full(kept_shape + (1,), 1, dtype_of(x))
    left = concatenate([one, slice_in_dim(cumprod(xr, ax), 0, n - 1, ax)], ax)
    right = concatenate([slice_in_dim(cumprod(xr, ax, reverse=True), 1, n, ax), one], ax)
    return reduce_sum(mul(tr, mul(left, right)), (ax,))


defjvp(reduce_prod_p, _reduce_prod_jvp)

reduce_and_p = _reducer("reduce_and", lambda x, *, axes: np.all(x, axis=axes))
defjvp_zero(reduce_and_p)
reduce_or_p = _reducer("reduce_or", lambda x, *, axes: np.any(x, axis=axes))
defjvp_zero(reduce_or_p)


def _arg_aval(x, *, axis, index_dtype):
    return _reduce_aval(x, axes=(axis,), out_dtype=index_dtype)


argmax_p = Primitive("argmax")
argmax_p.impl = lambda x, *, axis, index_dtype: np.argmax(x, axis=axis).astype(index_dtype)
argmax_p.abstract_eval = _arg_aval
defjvp_zero(argmax_p)
defleading(argmax_p, shifted("axis"))
argmin_p = Primitive("argmin")
argmin_p.impl = lambda x, *, axis, index_dtype: np.argmin(x, axis=axis).astype(index_dtype)
argmin_p.abstract_eval = _arg_aval
defjvp_zero(argmin_p)
defleading(argmin_p, shifted("axis"))



def reduce_sum(x, axes):
    """The sum over ``axes`` (no equation when there are none)."""
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .cumulative import cumprod  # noqa: E402
