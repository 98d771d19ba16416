"""Indexing primitives: dynamic slices and updates, gather and scatter, along-axis indexing."""
import numpy as np

from ..core import Primitive, ShapedArray, UndefinedPrimal
from ..errors import DTypeError, ShapeError
from ._rules import (aval_of, defjvp, deflinear, dtype_of, full, moveaxis, scalar, shape_of,
                     zeros_like)
from .elementwise import add, and_p, convert, div, eq, ge, lt, max_, min_, mul, select, sub
from .shape import broadcast_in_dim, concatenate, expand_dims, iota, reshape, slice_in_dim

__all__ = ["dynamic_slice", "dynamic_slice_p", "dynamic_update_slice", "dynamic_update_slice_p",
           "gather", "gather_p", "index_gather", "index_gather_p", "scatter_add_p",
           "scatter_along_axis_add", "scatter_max_p", "scatter_min_p", "scatter_mul_p",
           "scatter_p", "take_along_axis"]

# dynamic_slice(x, *starts): starts are int scalars, clamped so the slice stays in bounds
dynamic_slice_p = Primitive("dynamic_slice")


def _clamp_starts(shape, starts, sizes):
    return tuple(int(np.clip(int(s), 0, n - k)) for s, n, k in zip(starts, shape, sizes))


def _ds_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    st = _clamp_starts(x.shape, starts, slice_sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))].copy()


def _ds_aval(x, *starts, slice_sizes):
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: need {x.ndim} start indices and sizes")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise DTypeError("dynamic_slice: start indices must be integer scalars")
    if any(k > n or k < 0 for k, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"dynamic_slice: sizes {slice_sizes} exceed shape {x.shape}")
    return ShapedArray(slice_sizes, x.dtype)


def _ds_transpose(ct, x, *starts, slice_sizes):
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


def _ds_batch(args, dims, *, slice_sizes):
    x, *starts = args
    dx, *dstarts = dims
    if all(d is None for d in dstarts):
        x = moveaxis(x, dx)
        z = scalar(0, dtype_of(starts[0]) if starts else np.int64)
        return dynamic_slice_p.bind(x, z, *starts,
                                    slice_sizes=(shape_of(x)[0],) + tuple(slice_sizes)), 0
    # batched start indices: a gather of the slice windows
    return _batched_dynamic_slice(x, dx, starts, dstarts, slice_sizes), 0


dynamic_slice_p.impl = _ds_impl
dynamic_slice_p.abstract_eval = _ds_aval
deflinear(dynamic_slice_p, _ds_transpose, argnums=(0,))
dynamic_slice_p.batch = _ds_batch


def dynamic_slice(x, starts, slice_sizes):
    """A ``slice_sizes`` window at traced ``starts`` (clamped into range)."""
    return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(int(s) for s in slice_sizes))


dynamic_update_slice_p = Primitive("dynamic_update_slice")


def _dus_impl(x, upd, *starts):
    x = np.array(x, copy=True)
    upd = np.asarray(upd)
    st = _clamp_starts(x.shape, starts, upd.shape)
    x[tuple(slice(s, s + k) for s, k in zip(st, upd.shape))] = upd
    return x


def _dus_aval(x, upd, *starts):
    if x.dtype != upd.dtype:
        raise DTypeError(f"dynamic_update_slice: dtypes {x.dtype} and {upd.dtype} differ")
    if len(starts) != x.ndim or upd.ndim != x.ndim or any(u > n for u, n in zip(upd.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {upd.shape} does not fit {x.shape}")
    return ShapedArray(x.shape, x.dtype)


def _dus_transpose(ct, x, upd, *starts):
    ua = aval_of(upd)
    cx = dynamic_update_slice_p.bind(ct, full(ua.shape, 0, ua.dtype), *starts) \
        if isinstance(x, UndefinedPrimal) else None
    cu = dynamic_slice_p.bind(ct, *starts, slice_sizes=ua.shape) \
        if isinstance(upd, UndefinedPrimal) else None
    return [cx, cu] + [None] * len(starts)


def _dus_batch(args, dims):
    x, upd, *starts = args
    dx, du, *dstarts = dims
    size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    if all(d is None for d in dstarts):
        x = moveaxis(x, dx, size=size)
        upd = moveaxis(upd, du, size=size)
        z = scalar(0, dtype_of(starts[0]) if starts else np.int64)
        return dynamic_update_slice_p.bind(x, upd, z, *starts), 0
    # batched starts: scatter the update windows
    return _batched_dynamic_update_slice(x, dx, upd, du, starts, dstarts, size), 0


dynamic_update_slice_p.impl = _dus_impl
dynamic_update_slice_p.abstract_eval = _dus_aval
deflinear(dynamic_update_slice_p, _dus_transpose, argnums=(0, 1))
dynamic_update_slice_p.batch = _dus_batch


def dynamic_update_slice(x, upd, starts):
    """``x`` with ``upd`` written at traced ``starts`` (clamped into range)."""
    return dynamic_update_slice_p.bind(x, upd, *starts)


# ----------------------------------------------------------------------------
# gather / scatter over leading axes:
#   gather(x, idx)  with idx int[..., k] -> out[...] = x[idx[..., 0], ..., idx[..., k-1], :, ...]
# Indices are clamped into range (out-of-range behaviour of a compiled kernel must be
# defined; numpy's eager IndexError is kept by autodiff.numpy on concrete inputs). The
# scatters take ``mode="drop"`` too: an index row with an index outside [0, n) on any of
# its axes writes nothing (JAX's scatters' FILL_OR_DROP), so an update that misses the
# array is dropped without a scratch copy of the operand.
# ----------------------------------------------------------------------------

SCATTER_MODES = ("clip", "drop")

def _index_tuple(x_shape, idx):
    idx = np.asarray(idx)
    k = idx.shape[-1]
    return tuple(np.clip(idx[..., i], -x_shape[i], x_shape[i] - 1) % max(x_shape[i], 1)
                 if x_shape[i] > 0 else idx[..., i] for i in range(k))


gather_p = Primitive("gather")


def _gather_impl(x, idx):
    x = np.asarray(x)
    return x[_index_tuple(x.shape, idx)]


def _gather_aval(x, idx):
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"gather: indices must be integers, got {idx.dtype}")
    if idx.ndim < 1 or idx.shape[-1] > x.ndim:
        raise ShapeError(f"gather: index shape {idx.shape} does not fit operand {x.shape}")
    k = idx.shape[-1]
    return ShapedArray(idx.shape[:-1] + x.shape[k:], x.dtype)


def _gather_transpose(ct, x, idx):
    return [scatter_add_p.bind(full(x.aval.shape, 0, x.aval.dtype), idx, ct), None]


def _with_batch_index(idx, size, lead_shape):
    """Indices ``[size, ..., k]`` (batch axis in front) gain the batch position: ``[size, ..., k+1]``."""
    s = shape_of(idx)
    b = iota(dtype_of(idx), s[:-1] + (1,), 0)
    return concatenate([b, idx], len(s) - 1)


def _gather_batch(args, dims):
    x, idx = args
    dx, di = dims
    size = shape_of(x)[dx] if dx is not None else shape_of(idx)[di]
    if di is None:
        # same indices for every batch element: move the batch axis just past the indexed axes
        k = shape_of(idx)[-1]
        x = moveaxis(x, dx, k)
        out = gather_p.bind(x, idx)
        return out, len(shape_of(idx)) - 1
    idx = moveaxis(idx, di)
    if dx is None:
        # one operand, a batch of index arrays: the index's leading axes are gather's batch
        return gather_p.bind(x, idx), 0
    x = moveaxis(x, dx, size=size)
    return gather_p.bind(x, _with_batch_index(idx, size, None)), 0


gather_p.impl = _gather_impl
gather_p.abstract_eval = _gather_aval
deflinear(gather_p, _gather_transpose, argnums=(0,))
gather_p.batch = _gather_batch


def gather(x, idx):
    """``x[idx[..., 0], ..., idx[..., k-1]]`` over the leading axes (indices clamped)."""
    return gather_p.bind(x, idx)


# ----------------------------------------------------------------------------
# index_gather(x, i_0, ..., i_{k-1}): numpy's x[i_0, ..., i_{k-1}] for k integer arrays of
# one shape S, over the leading axes: out[s, ...] = x[i_0[s], ..., i_{k-1}[s], ...], with
# gather's index rule (clip to [-n, n-1], wrap negatives). ``gather`` with the indices
# stacked on a last axis computes the same; this form needs no stacking equations, so
# ``f[i, j]`` on traced index arrays is one equation (autodiff.numpy's indexing).
# ----------------------------------------------------------------------------

index_gather_p = Primitive("index_gather")


def _index_gather_impl(x, *idx):
    x = np.asarray(x)
    cols = []
    for i, n in zip(idx, x.shape):
        i = np.asarray(i, dtype=np.int64)     # (int8 indices into 200 rows: bounds fit)
        cols.append(np.clip(i, -n, n - 1) % n if n > 0 else i)
    return x[tuple(cols)]


def _index_gather_aval(x, *idx):
    if not idx or len(idx) > x.ndim:
        raise ShapeError(f"index_gather: {len(idx)} index arrays for an operand of shape "
                         f"{x.shape}")
    shape = idx[0].shape
    for i in idx:
        if i.dtype.kind not in "iu":
            raise DTypeError(f"index_gather: indices must be integers, got {i.dtype}")
        if i.shape != shape:
            raise ShapeError(f"index_gather: index shapes {[j.shape for j in idx]} differ")
    return ShapedArray(shape + x.shape[len(idx):], x.dtype)


def _stacked(idx):
    """The index arrays as one ``int64[..., k]`` (gather's and scatter's index form)."""
    shape = shape_of(idx[0])
    cols = [broadcast_in_dim(convert(i, np.int64), shape + (1,), tuple(range(len(shape))))
            for i in idx]
    return cols[0] if len(cols) == 1 else concatenate(cols, len(shape))


def _index_gather_transpose(ct, x, *idx):
    return [scatter_add_p.bind(full(x.aval.shape, 0, x.aval.dtype), _stacked(idx), ct)] \
        + [None] * len(idx)


def _index_gather_batch(args, dims):
    x, *idx = args
    dx, *di = dims
    k = len(idx)
    if all(d is None for d in di):
        # the same indices for every batch element: the batch axis goes just past the
        # indexed axes, and lands right after the index shape in the result
        return index_gather_p.bind(moveaxis(x, dx, k), *idx), len(shape_of(idx[0]))
    size = next(shape_of(i)[d] for i, d in zip(idx, di) if d is not None)
    idx = [moveaxis(i, d, size=size) for i, d in zip(idx, di)]
    if dx is None:
        # one operand, a batch of index arrays: the indices' leading axis is the result's
        return index_gather_p.bind(x, *idx), 0
    x = moveaxis(x, dx, size=size)
    b = iota(dtype_of(idx[0]), shape_of(idx[0]), 0)
    return index_gather_p.bind(x, b, *idx), 0


index_gather_p.impl = _index_gather_impl
index_gather_p.abstract_eval = _index_gather_aval
deflinear(index_gather_p, _index_gather_transpose, argnums=(0,))
index_gather_p.batch = _index_gather_batch


def index_gather(x, idx):
    """``x[idx[0], ..., idx[k-1]]`` for a sequence of integer arrays of one shape, over the
    leading axes of ``x`` (gather's index rule: negatives wrap, the rest clamps).

    >>> import numpy as np
    >>> index_gather(np.arange(12.0).reshape(3, 4), [np.array([0, -1]), np.array([1, 9])])
    array([ 1., 11.])
    """
    return index_gather_p.bind(x, *idx)


def _in_bounds_rows(x_shape, idx):
    """numpy: which index rows of ``idx`` (``int[..., k]``) lie inside ``x_shape``."""
    idx = np.asarray(idx)
    ok = np.ones(idx.shape[:-1], dtype=bool)
    for i in range(idx.shape[-1]):
        ok &= (idx[..., i] >= 0) & (idx[..., i] < x_shape[i])
    return ok


def _in_bounds(x_shape, idx):
    """Traced: which index rows of ``idx`` (``int[..., k]``) lie inside ``x_shape``."""
    lead = shape_of(idx)[:-1]
    ok = None
    for i in range(shape_of(idx)[-1]):
        col = reshape(slice_in_dim(idx, i, i + 1, len(lead)), lead)
        c = and_p.bind(ge(col, scalar(0, dtype_of(idx))),
                       lt(col, scalar(x_shape[i], dtype_of(idx))))
        ok = c if ok is None else and_p.bind(ok, c)
    return ok


def _scatter_aval(x, idx, upd, mode="clip"):
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter: mode must be one of {SCATTER_MODES}, got {mode!r}")
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"scatter: indices must be integers, got {idx.dtype}")
    k = idx.shape[-1]
    want = idx.shape[:-1] + x.shape[k:]
    if upd.shape != want:
        raise ShapeError(f"scatter: updates have shape {upd.shape}, expected {want}")
    if upd.dtype != x.dtype:
        raise DTypeError(f"scatter: dtypes {x.dtype} and {upd.dtype} differ")
    return ShapedArray(x.shape, x.dtype)


scatter_add_p = Primitive("scatter_add")


def _kept(x_shape, idx, upd, mode):
    """``(idx, upd)`` without the rows ``mode="drop"`` drops (numpy)."""
    if mode != "drop":
        return idx, upd
    ok = _in_bounds_rows(x_shape, idx)
    return np.asarray(idx)[ok], np.asarray(upd)[ok]


def _scatter_add_impl(x, idx, upd, mode="clip"):
    out = np.array(x, copy=True)
    idx, upd = _kept(out.shape, idx, upd, mode)
    np.add.at(out, _index_tuple(out.shape, idx), upd)
    return out


def _gathered_cotangent(ct, idx, mode):
    """The cotangent of a scatter's updates: ``ct`` at their positions, 0 where dropped."""
    g = gather_p.bind(ct, idx)
    if mode == "drop":
        lead = len(shape_of(idx)) - 1
        ok = broadcast_in_dim(_in_bounds(shape_of(ct), idx), shape_of(g), tuple(range(lead)))
        g = select(ok, g, zeros_like(g))
    return g


def _scatter_add_transpose(ct, x, idx, upd, mode="clip"):
    return [ct if isinstance(x, UndefinedPrimal) else None, None,
            _gathered_cotangent(ct, idx, mode) if isinstance(upd, UndefinedPrimal) else None]


def _scatter_batch(prim):
    def rule(args, dims, **params):
        x, idx, upd = args
        size = next(shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
        x = moveaxis(x, dims[0], size=size)
        upd = moveaxis(upd, dims[2], size=size)
        if dims[1] is None:
            idx = broadcast_in_dim(idx, (size,) + shape_of(idx), tuple(range(1, len(shape_of(idx)) + 1)))
        else:
            idx = moveaxis(idx, dims[1])
        return prim.bind(x, _with_batch_index(idx, size, None), upd, **params), 0
    prim.batch = rule


scatter_add_p.impl = _scatter_add_impl
scatter_add_p.abstract_eval = _scatter_aval
deflinear(scatter_add_p, _scatter_add_transpose, argnums=(0, 2))
_scatter_batch(scatter_add_p)

scatter_p = Primitive("scatter")   # set; with repeated indices the last update wins


def _scatter_impl(x, idx, upd, mode="clip"):
    out = np.array(x, copy=True)
    idx, upd = _kept(out.shape, idx, upd, mode)
    out[_index_tuple(out.shape, idx)] = upd
    return out


def _scatter_transpose(ct, x, idx, upd, mode="clip"):
    ua = aval_of(upd)
    cx = (scatter_p.bind(ct, idx, full(ua.shape, 0, ua.dtype), mode=mode)
          if isinstance(x, UndefinedPrimal) else None)
    cu = None
    if isinstance(upd, UndefinedPrimal):
        # with repeated indices only the last update of a position lands in the output, so
        # only it gets that position's cotangent: scatter the updates' ids the same way and
        # keep the updates whose own id survived (a dropped one's id is written nowhere)
        ishape = shape_of(idx)[:-1]
        k = shape_of(idx)[-1]
        n = int(np.prod(ishape, dtype=np.int64))
        ids = reshape(iota(np.int64, (n,), 0), ishape)
        won = scatter_p.bind(full(shape_of(ct)[:k], -1, np.int64), idx, ids, mode=mode)
        winner = eq(gather_p.bind(won, idx), ids)
        winner = broadcast_in_dim(winner, ua.shape, tuple(range(len(ishape))))
        g = gather_p.bind(ct, idx)
        cu = select(winner, g, zeros_like(g))
    return [cx, None, cu]


scatter_p.impl = _scatter_impl
scatter_p.abstract_eval = _scatter_aval
deflinear(scatter_p, _scatter_transpose, argnums=(0, 2))
_scatter_batch(scatter_p)


# scatter_mul / scatter_min / scatter_max: every update combined into its position, in
# index order (JAX's scatter_mul/min/max; numpy's multiply.at, minimum.at, maximum.at),
# so repeated indices all count: .at[ids].max(v) of traced ids, segment_max.

def _combining_aval(name):
    def aval(x, idx, upd, mode="clip"):
        if name != "mul" and x.dtype.kind == "c":
            raise DTypeError(f"scatter_{name}: complex operands have no order")
        return _scatter_aval(x, idx, upd, mode)
    return aval


def _combining_impl(ufunc):
    def impl(x, idx, upd, mode="clip"):
        out = np.array(x, copy=True)
        idx, upd = _kept(out.shape, idx, upd, mode)
        ufunc.at(out, _index_tuple(out.shape, idx), upd)
        return out
    return impl


def _extremal_jvps(prim):
    """A max/min scatter's tangent: the tangents of the operand and of the updates that
    equal the result at a position, averaged over those ties (as ``anp.max`` shares its
    gradient), so the operand's and the updates' contributions are both linear maps."""
    def shares(ans, x, idx, upd, mode):
        ua = aval_of(upd)
        hit = eq(upd, gather_p.bind(ans, idx))
        if mode == "drop":
            lead = len(shape_of(idx)) - 1
            ok = broadcast_in_dim(_in_bounds(shape_of(ans), idx), ua.shape, tuple(range(lead)))
            hit = and_p.bind(hit, ok)
        dt = dtype_of(ans)
        one, zero = full(ua.shape, 1, dt), full(ua.shape, 0, dt)
        n_upd = scatter_add_p.bind(zeros_like(ans), idx, select(hit, one, zero), mode=mode)
        keep = eq(x, ans)
        count = add(select(keep, full(shape_of(ans), 1, dt), zeros_like(ans)), n_upd)
        return hit, keep, count

    def d_operand(g, ans, x, idx, upd, mode="clip"):
        hit, keep, count = shares(ans, x, idx, upd, mode)
        return div(select(keep, g, zeros_like(g)), count)

    def d_updates(g, ans, x, idx, upd, mode="clip"):
        hit, keep, count = shares(ans, x, idx, upd, mode)
        moved = scatter_add_p.bind(zeros_like(ans), idx, select(hit, g, zeros_like(g)),
                                   mode=mode)
        return div(moved, count)
    defjvp(prim, d_operand, None, d_updates)


def _mul_jvps(prim):
    """``x * prod(u)`` at each position: ``d x`` times the updates' product, plus ``x``
    times each update's tangent times the product of the *other* updates at its position
    (exact with zeros among them, no division by a zero)."""
    def d_operand(g, ans, x, idx, upd, mode="clip"):
        # (the product as a value, so the map of g is a mul, with its transpose)
        return mul(g, prim.bind(full(shape_of(x), 1, dtype_of(x)), idx, upd, mode=mode))

    def d_updates(g, ans, x, idx, upd, mode="clip"):
        ua = aval_of(upd)
        dt = dtype_of(ans)
        ones, zeros = full(shape_of(ans), 1, dt), full(shape_of(ans), 0, dt)
        one_u, zero_u = full(ua.shape, 1, dt), full(ua.shape, 0, dt)
        is0 = eq(upd, zero_u)
        # at each position: the product of the nonzero updates, the product, the count
        # and the sum of the zero ones (the zero ones' own values, so that these are the
        # polynomials they are, with their derivatives)
        at = [gather_p.bind(a, idx) for a in (
            prim.bind(ones, idx, select(is0, one_u, upd), mode=mode),
            prim.bind(ones, idx, select(is0, upd, one_u), mode=mode),
            scatter_add_p.bind(zeros, idx, select(is0, one_u, zero_u), mode=mode),
            scatter_add_p.bind(zeros, idx, select(is0, upd, zero_u), mode=mode))]
        nonzero, zero_prod, zero_count, zero_sum = at
        # the product of the others: a nonzero u's is (nonzero / u) * zero_prod; a zero u's
        # the nonzero product times the other zero (none: 1; one: zero_sum - u; more: 0,
        # exact to the second order, the orders that need it are higher)
        mine = mul(div(nonzero, select(is0, one_u, upd)), zero_prod)
        other_zero = select(eq(zero_count, one_u), one_u,
                            select(eq(zero_count, add(one_u, one_u)),
                                   sub(zero_sum, upd), zero_u))
        others = select(is0, mul(nonzero, other_zero), mine)
        moved = scatter_add_p.bind(zeros, idx, mul(g, others), mode=mode)
        return mul(x, moved)
    defjvp(prim, d_operand, None, d_updates)


scatter_mul_p = Primitive("scatter_mul")
scatter_min_p = Primitive("scatter_min")
scatter_max_p = Primitive("scatter_max")
for _p, _name, _uf in ((scatter_mul_p, "mul", np.multiply), (scatter_min_p, "min", np.minimum),
                       (scatter_max_p, "max", np.maximum)):
    _p.impl = _combining_impl(_uf)
    _p.abstract_eval = _combining_aval(_name)
    _scatter_batch(_p)
_mul_jvps(scatter_mul_p)
_extremal_jvps(scatter_min_p)
_extremal_jvps(scatter_max_p)


def _window_indices(shape, starts, dstarts, win, size):
    """Index grids ``int[size, *win, ndim]`` of the windows at batched ``starts``, clamped
    into range as dynamic_slice / dynamic_update_slice clamp them."""
    idt = np.int64
    grids = []
    for i, (s, d) in enumerate(zip(starts, dstarts)):
        s = convert(s, idt)
        s = moveaxis(s, d) if d is not None else broadcast_in_dim(s, (size,), ())
        s = max_(min_(s, scalar(shape[i] - win[i], idt)), scalar(0, idt))
        grids.append(add(iota(idt, (size,) + tuple(win), i + 1),
                         broadcast_in_dim(s, (size,) + tuple(win), (0,))))
    return concatenate([expand_dims(g, (len(win) + 1,)) for g in grids], len(win) + 1)


def _batched_dynamic_slice(x, dx, starts, dstarts, slice_sizes):
    # batched start indices: a gather of the windows
    size = next(shape_of(s)[d] for s, d in zip(starts, dstarts) if d is not None)
    if dx is None:
        # one operand, a batch of windows: gather them straight from x (no copies of x)
        return gather_p.bind(x, _window_indices(shape_of(x), starts, dstarts, slice_sizes, size))
    x = moveaxis(x, dx)
    idx = _window_indices(shape_of(x)[1:], starts, dstarts, slice_sizes, size)
    return gather_p.bind(x, _with_batch_index(idx, size, None))


def _batched_dynamic_update_slice(x, dx, upd, du, starts, dstarts, size):
    # batched start indices: a scatter of the update windows
    x = moveaxis(x, dx, size=size)
    upd = moveaxis(upd, du, size=size)
    idx = _window_indices(shape_of(x)[1:], starts, dstarts, shape_of(upd)[1:], size)
    return scatter_p.bind(x, _with_batch_index(idx, size, None), upd)


def _rows_index(idx, axis):
    """Indices for an along-axis gather/scatter: (..., n) positions -> full index tuples."""
    shape = shape_of(idx)
    idx = convert(idx, np.int64)
    cols = []
    for i in range(len(shape)):
        cols.append(idx if i == axis else iota(np.int64, shape, i))
    return concatenate([expand_dims(c, (len(shape),)) for c in cols], len(shape))


def take_along_axis(x, idx, axis):
    """``out[..., i, ...] = x[..., idx[..., i, ...], ...]`` (numpy's take_along_axis)."""
    return gather_p.bind(x, _rows_index(idx, axis))


def scatter_along_axis_add(x, idx, upd, axis):
    """``x`` with ``upd`` added at ``idx`` along ``axis`` (numpy's ``put_along_axis`` with add)."""
    return scatter_add_p.bind(x, _rows_index(idx, axis), upd)

