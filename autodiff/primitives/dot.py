"""``dot_general``: contraction with batch dimensions (output = batch, lhs free, rhs free)."""
import numpy as np

from ..core import Primitive, ShapedArray
from ..errors import DTypeError, ShapeError
from ._rules import defbilinear, moveaxis, _ndim
from .shape import transpose

__all__ = ["dot_general", "dot_general_p"]

# ============================================================================
# dot_general: contraction with batch dims; output = batch, lhs free, rhs free
# ============================================================================

dot_general_p = Primitive("dot_general")


def _free_dims(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_general_impl(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    nx, ny = x.ndim, y.ndim
    if not xb and len(xc) == 1 and 0 < nx <= 2 and 0 < ny <= 2:
        # matrix/vector products (every dense layer and its two backward products): one
        # np.dot on transposed views, ~20x less Python than the general path below
        return np.dot(x if xc[0] == nx - 1 else x.T, y if yc[0] == 0 else y.T)
    xf = _free_dims(x.ndim, xc, xb)
    yf = _free_dims(y.ndim, yc, yb)
    # canonical layout: x -> (batch, free, contract), y -> (batch, contract, free), then matmul
    xt = np.transpose(x, list(xb) + xf + list(xc))
    yt = np.transpose(y, list(yb) + list(yc) + yf)
    bshape = xt.shape[:len(xb)]
    m = int(np.prod([x.shape[i] for i in xf], dtype=np.int64))
    n = int(np.prod([y.shape[i] for i in yf], dtype=np.int64))
    k = int(np.prod([x.shape[i] for i in xc], dtype=np.int64))
    if not xc:
        # an outer product (per-example gradients are full of them): a broadcast multiply is
        # ~3x faster than matmul with k = 1
        out = xt.reshape(bshape + (m, 1)) * yt.reshape(bshape + (1, n))
    else:
        out = np.matmul(xt.reshape(bshape + (m, k)), yt.reshape(bshape + (k, n)))
    return out.reshape(bshape + tuple(x.shape[i] for i in xf) + tuple(y.shape[i] for i in yf))


def _dot_general_aval(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    if x.dtype != y.dtype:
        raise DTypeError(f"dot_general: dtypes {x.dtype} and {y.dtype} differ")
    if [x.shape[i] for i in xc] != [y.shape[i] for i in yc]:
        raise ShapeError(f"dot_general: contracting dimensions do not match: shapes "
                         f"{x.shape} and {y.shape} (axes {tuple(xc)} and {tuple(yc)})")
    if [x.shape[i] for i in xb] != [y.shape[i] for i in yb]:
        raise ShapeError(f"dot_general: batch dimensions do not match: shapes {x.shape} and {y.shape}")
    shape = ([x.shape[i] for i in xb] + [x.shape[i] for i in _free_dims(x.ndim, xc, xb)]
             + [y.shape[i] for i in _free_dims(y.ndim, yc, yb)])
    return ShapedArray(shape, x.dtype)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _dot_transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False):
    # ct has layout (batch, x_free, y_free) [or (batch, y_free, x_free) when swapped].
    # x's cotangent contracts ct with y over y's free dims, batched over batch dims,
    # then the result (batch, x_free, x_contract in y's order) is permuted back to x's axes.
    (xc, yc), (xb, yb) = dimension_numbers
    x_ndim, y_ndim = len(x_aval.shape), _ndim(y)
    x_free = _free_dims(x_ndim, xc, xb)
    y_free = _free_dims(y_ndim, yc, yb)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(xb, y_free, x_free)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_free, y_free)
    dims = ((ans_y, tuple(y_free)), (ans_batch, tuple(yb)))
    xc_by_y = [xc[i] for i in np.argsort(yc)]
    out_axes = np.argsort(list(xb) + x_free + xc_by_y)
    res = dot_general_p.bind(ct, y, dimension_numbers=_canon_dims(dims))
    return transpose(res, tuple(int(a) for a in out_axes))


def _canon_dims(dims):
    (a, b), (c, d) = dims
    return ((tuple(int(i) for i in a), tuple(int(i) for i in b)),
            (tuple(int(i) for i in c), tuple(int(i) for i in d)))


def _swap_sides(dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    return (yc, xc), (yb, xb)


def _dot_general_batch(args, dims, *, dimension_numbers):
    x, y = args
    dx, dy = dims
    (xc, yc), (xb, yb) = dimension_numbers

    def shift(ds, by=1):
        return tuple(d + by for d in ds)
    if dx is not None and dy is not None:
        x, y = moveaxis(x, dx), moveaxis(y, dy)
        dn = ((shift(xc), shift(yc)), ((0,) + shift(xb), (0,) + shift(yb)))
        return dot_general_p.bind(x, y, dimension_numbers=dn), 0
    if dx is not None:
        x = moveaxis(x, dx)
        dn = ((shift(xc), tuple(yc)), (shift(xb), tuple(yb)))
        # the batch axis is x's first free dim -> lands right after the batch dims
        return dot_general_p.bind(x, y, dimension_numbers=dn), len(xb)
    y = moveaxis(y, dy)
    dn = ((tuple(xc), shift(yc)), (tuple(xb), shift(yb)))
    x_free = _free_dims(_ndim(x), xc, xb)
    return dot_general_p.bind(x, y, dimension_numbers=dn), len(xb) + len(x_free)


dot_general_p.impl = _dot_general_impl
dot_general_p.abstract_eval = _dot_general_aval
defbilinear(dot_general_p,
            lambda ct, x, y, *, dimension_numbers: _dot_transpose_lhs(ct, x.aval, y, dimension_numbers),
            lambda ct, x, y, *, dimension_numbers: _dot_transpose_lhs(
                ct, y.aval, x, _swap_sides(dimension_numbers), swap_ans=True))
dot_general_p.batch = _dot_general_batch


def dot_general(x, y, dimension_numbers):
    """The contraction of ``x`` and ``y`` with ``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; output axes: batch, lhs free, rhs free."""
    return dot_general_p.bind(x, y, dimension_numbers=_canon_dims(dimension_numbers))

