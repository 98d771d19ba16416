"""Reductions: sums, products, extrema, logical reductions and arg-reductions."""
import numpy as np

from ..cache import ProgramCache
from ..core import Primitive, ShapedArray, trace_flat
from ..errors import DTypeError, ShapeError
from ._rules import (_zero_like, defjvp, defjvp_zero, defleading, deflinear, deftaylor,
                     deftaylor_locally_linear, dtype_of, full, instantiate, is_zero, scalar,
                     shape_of, shifted)
from .elementwise import (add, convert, div, eq, exp, log, max_, min_, mul, stop_gradient_p,
                          sub)
from .shape import broadcast_in_dim, concatenate, pad, reshape, slice_in_dim, transpose
from .taylor_series import map_series, series_mul

__all__ = ["argmax_p", "argmin_p", "logsumexp_p", "logsumexp_shift", "reduce_and_p",
           "reduce_max_p", "reduce_min_p", "reduce_or_p", "reduce_prod_p", "reduce_sum",
           "reduce_sum_p"]

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
deftaylor_locally_linear(reduce_max_p)
deftaylor_locally_linear(reduce_min_p)

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


def _reduce_prod_taylor(ins, *, axes):
    # a tree of series products (pairwise halves): exact with zeros in x
    (x,) = ins
    shape = shape_of(x[0])
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    kept_shape = tuple(shape[i] for i in kept)
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    z0 = reduce_prod_p.bind(x[0], axes=axes)
    perm = kept + tuple(axes)
    y = map_series(lambda c: reshape(transpose(c, perm), kept_shape + (n,)), x)
    ax, dt = len(kept_shape), dtype_of(x[0])
    if n == 0:
        return [z0] + [None] * (len(x) - 1)
    while n > 1:
        if n % 2:
            cfg = [(0, 0, 0)] * ax + [(0, 1, 0)]
            y = [pad(y[0], scalar(1, dt), cfg)] + [
                None if c is None else pad(c, scalar(0, dt), cfg) for c in y[1:]]
            n += 1
        h = n // 2
        lo = map_series(lambda c: slice_in_dim(c, 0, h, ax), y)
        hi = map_series(lambda c: slice_in_dim(c, h, n, ax), y)
        y, n = series_mul(lo, hi), h
    return [z0] + [None if c is None else reshape(c, kept_shape) for c in y[1:]]


deftaylor(reduce_prod_p, _reduce_prod_taylor)

reduce_and_p = _reducer("reduce_and", lambda x, *, axes: np.all(x, axis=axes))
defjvp_zero(reduce_and_p, "boolean result")
reduce_or_p = _reducer("reduce_or", lambda x, *, axes: np.any(x, axis=axes))
defjvp_zero(reduce_or_p, "boolean result")


def _arg_aval(x, *, axis, index_dtype):
    return _reduce_aval(x, axes=(axis,), out_dtype=index_dtype)


argmax_p = Primitive("argmax")
argmax_p.impl = lambda x, *, axis, index_dtype: np.argmax(x, axis=axis).astype(index_dtype)
argmax_p.abstract_eval = _arg_aval
defjvp_zero(argmax_p, "integer result")
defleading(argmax_p, shifted("axis"))
argmin_p = Primitive("argmin")
argmin_p.impl = lambda x, *, axis, index_dtype: np.argmin(x, axis=axis).astype(index_dtype)
argmin_p.abstract_eval = _arg_aval
defjvp_zero(argmin_p, "integer result")
defleading(argmin_p, shifted("axis"))



# ----------------------------------------------------------------------------
# logsumexp over ``axes`` of a real float array: log(sum(exp(x - m))) + m, m the maximum
# clamped to the finite range (an all -inf slice gives -inf, a +inf element +inf, a nan
# nan). One equation where its definition is ten: autodiff.numpy.logsumexp's common case
# (no ``b``, no ``return_sign``, real input), the inner step of HMMs, mixtures and
# log-space dynamic programs under grad without jit. It is a composite: ``jit`` inlines
# its definition (``inline``, run by transforms/passes.inline_calls before a backend
# plans), so no backend has a record for it, and jet expands it the same way.
# ----------------------------------------------------------------------------

logsumexp_p = Primitive("logsumexp")


def _lse_impl(x, *, axes):
    x = np.asarray(x)
    fi = np.finfo(x.dtype)
    m = np.minimum(np.maximum(np.max(x, axis=axes), x.dtype.type(fi.min)), x.dtype.type(fi.max))
    return np.log(np.sum(np.exp(x - np.expand_dims(m, axes)), axis=axes, dtype=x.dtype)) + m


def _lse_aval(x, *, axes):
    if x.dtype.kind != "f":
        raise DTypeError(f"logsumexp: needs a real float operand, got {x.dtype}")
    if not axes:
        raise ShapeError("logsumexp: needs at least one axis")
    return _reduce_aval(x, axes=axes)


def logsumexp_shift(x, axes):
    """The shift of a real logsumexp: the maximum over ``axes``, clamped to the finite range
    (two equations on the reduced shape, scalar bounds), without a derivative."""
    dt = dtype_of(x)
    fi = np.finfo(dt)
    m = reduce_max_p.bind(x, axes=axes) if axes else x
    return stop_gradient_p.bind(min_(max_(m, scalar(fi.min, dt)), scalar(fi.max, dt)))


def _lse_definition(x, axes):
    """The primitives logsumexp stands for (what ``jit`` and ``jet`` expand it to)."""
    shape = shape_of(x)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    m = logsumexp_shift(x, axes)
    e = exp(sub(x, broadcast_in_dim(m, shape, kept)))
    return add(log(reduce_sum_p.bind(e, axes=axes)), m)


def _lse_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = logsumexp_p.bind(x, axes=axes)
    if is_zero(t):
        return ans, _zero_like(ans)
    # d lse = sum(softmax(x) * dx): the weights exp(x - lse) come from the result itself
    shape = shape_of(x)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    w = exp(sub(x, broadcast_in_dim(ans, shape, kept)))
    return ans, reduce_sum_p.bind(mul(instantiate(t), w), axes=axes)


# (shape, dtype, axes) -> the traced definition, in the bounded LRU of custom rules' traces
_LSE_BODIES = ProgramCache("composite bodies", "custom_rule_cache_size")


def _lse_body(aval, axes):
    """The definition as ``(Jaxpr, consts)`` for one operand aval (cached)."""
    key = (aval.shape, aval.dtype, axes)
    got = _LSE_BODIES.get(key)
    if got is None:
        closed = trace_flat(lambda v: [_lse_definition(v, axes)],
                            [ShapedArray(aval.shape, aval.dtype)], name="logsumexp")
        got = (closed.jaxpr, list(closed.consts))
        _LSE_BODIES.put(key, got)
    return got


logsumexp_p.impl = _lse_impl
logsumexp_p.abstract_eval = _lse_aval
logsumexp_p.jvp = _lse_jvp
logsumexp_p.inline = lambda e: _lse_body(e.invars[0].aval, e.params["axes"])
defleading(logsumexp_p, shifted("axes"))


def reduce_sum(x, axes):
    """The sum over ``axes`` (no equation when there are none)."""
    axes = tuple(sorted(int(a) for a in axes))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)

# Names used only when a rule runs, from families imported after this one
# (the package imports the families in dependency order; see __init__).
from .cumulative import cumprod  # noqa: E402
