"""Named-axis collectives: ``psum``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter`` and
``ppermute``, computed across the batch of a named ``vmap``.

Each is a primitive with all its rules here. They live only between a named vmap's trace
and its ``batch_eval`` (``docs/design.md``, "Named axes"): the batch rule reads the axis being
batched (:func:`autodiff.named_axes.batching`); over that name it computes along the batch
axis and returns an unbatched (or rebatched) value, over any other name it binds the
collective again on the batched operand for the enclosing vmap to resolve. So no backend
ever sees one, and they are kept out of the primitive registry
(``core.collective_primitives``). Every one carries ``axes``, a tuple of axis names.

Derivatives: ``psum`` is linear and transposes to ``psum`` (JAX's convention: what is
differentiated is the sum over the axis of every element's output); ``all_gather`` and
``psum_scatter`` transpose to each other, ``ppermute`` to the inverse permutation; ``pmax``
and ``pmin`` share the tangent equally among ties, as ``anp.max`` does.

>>> import numpy as np, autodiff as ad
>>> ad.vmap(lambda x: ad.lax.psum(x, "i"), axis_name="i")(np.arange(3.0))
array([3., 3., 3.])
"""
import numpy as np

from ..core import Primitive, ShapedArray
from ..errors import ShapeError, UnsupportedError
from ..named_axes import at_axis_level, batching
from ..source_info import trace_state
from ._rules import (deflinear, deftaylor_locally_linear, instantiate, is_zero,
                     moveaxis, shape_of, zeros_like)
from .elementwise import convert, div, eq, mul, select
from .indexing import gather
from .reductions import reduce_max_p, reduce_min_p, reduce_sum
from .shape import broadcast_in_dim, reshape

__all__ = ["all_gather_p", "pmax_p", "pmin_p", "ppermute_p", "psum_p",
           "psum_scatter_p"]


def _outside(prim):
    def impl(x, **params):
        # a program holding the collective evaluated on a concrete operand (grad's seed
        # cotangent, under the vmap): recorded in the vmap's trace, which resolves it
        if any(f.name in params["axes"] for f in trace_state.axis_frames):
            return _bind(prim, x, **params)
        raise UnsupportedError(
            f"{prim.name} over the axis {params['axes']} evaluated outside the vmap that names "
            f"it: collectives are resolved by vmap(..., axis_name=...) and never run alone")
    return impl


def _current(axes):
    """``(name, size)`` of the axis being batched when it is one of ``axes``, else None."""
    cur = batching()
    if cur is None or cur[0] is None or cur[0] not in axes:
        return None
    return cur


def _bind(prim, x, **params):
    """``prim.bind`` with ``x`` recorded at the level of the named axes' vmap: a rule's
    operand may be concrete (a transpose's seed cotangent) or belong to an enclosing trace,
    and the collective must still reach the vmap that resolves it."""
    frames = [f for f in trace_state.axis_frames if f.name in params["axes"]]
    if frames:
        x = at_axis_level(max(frames, key=lambda f: f.level), x)
    return prim.bind(x, **params)


# ============================================================================
# psum, pmax, pmin: reductions over the named axes
# ============================================================================


def _reducer(name, reduce_batch, invariant):
    p = Primitive(name, collective=True)
    p.impl = _outside(p)
    p.abstract_eval = lambda x, *, axes: ShapedArray(x.shape, x.dtype)

    def batch(args, dims, *, axes):
        (x,), (d,) = args, dims
        cur = _current(axes)
        if cur is None:                       # another vmap's axis: bound again, for it
            return _bind(p, x, axes=axes), d
        name, size = cur
        out = invariant(x, size) if d is None else reduce_batch(x, d)
        rest = tuple(a for a in axes if a != name)
        return (_bind(p, out, axes=rest) if rest else out), None
    p.batch = batch
    return p


def _scaled(x, size):
    return mul(x, np.asarray(size, x.dtype))


psum_p = _reducer("psum", lambda x, d: reduce_sum(x, (d,)), _scaled)
deflinear(psum_p, lambda ct, x, *, axes: [_bind(psum_p, instantiate(ct), axes=axes)])
pmax_p = _reducer("pmax", lambda x, d: reduce_max_p.bind(x, axes=(d,)), lambda x, size: x)
pmin_p = _reducer("pmin", lambda x, d: reduce_min_p.bind(x, axes=(d,)), lambda x, size: x)


def _extremum_jvp(prim):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = _bind(prim, x, axes=axes)
        if is_zero(t):
            return ans, zeros_like(ans)
        hit = convert(eq(x, ans), t.dtype)            # ties share the tangent equally
        return ans, div(_bind(psum_p, mul(t, hit), axes=axes), _bind(psum_p, hit, axes=axes))
    prim.jvp = jvp
    deftaylor_locally_linear(prim)


_extremum_jvp(pmax_p)
_extremum_jvp(pmin_p)


# ============================================================================
# all_gather and psum_scatter: each the other's transpose
# ============================================================================

all_gather_p = Primitive("all_gather", collective=True)
all_gather_p.impl = _outside(all_gather_p)


def _all_gather_aval(x, *, axes, axis, tiled, size):
    shape = list(x.shape)
    if tiled:
        if not shape:
            raise ShapeError("all_gather(tiled=True) needs an operand of rank 1 or more")
        shape[axis] *= size
    else:
        shape.insert(axis, size)
    return ShapedArray(tuple(shape), x.dtype)


all_gather_p.abstract_eval = _all_gather_aval


def _merge(x, axis):
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one (row-major)."""
    s = shape_of(x)
    return reshape(x, s[:axis] + (s[axis] * s[axis + 1],) + s[axis + 2:])


def _split(x, axis, size):
    """``x`` with axis ``axis`` split into ``(size, rest)`` (row-major)."""
    s = shape_of(x)
    return reshape(x, s[:axis] + (size, s[axis] // size) + s[axis + 1:])


def _all_gather_batch(args, dims, *, axes, axis, tiled, size):
    (x,), (d,) = args, dims
    if _current(axes) is None:
        if d is None:
            return _bind(all_gather_p, x, axes=axes, axis=axis, tiled=tiled, size=size), None
        x = moveaxis(x, d, 0)
        return _bind(all_gather_p, x, axes=axes, axis=axis + 1, tiled=tiled, size=size), 0
    out = moveaxis(x, d, axis, size=size)       # the batch becomes the gathered axis
    return (_merge(out, axis) if tiled else out), None


all_gather_p.batch = _all_gather_batch

psum_scatter_p = Primitive("psum_scatter", collective=True)
psum_scatter_p.impl = _outside(psum_scatter_p)


def _psum_scatter_aval(x, *, axes, scatter_dimension, tiled, size):
    shape = list(x.shape)
    sd = scatter_dimension
    if not 0 <= sd < len(shape):
        raise ShapeError(f"psum_scatter: scatter_dimension={sd} is out of range for an "
                         f"operand of shape {x.shape}")
    if tiled:
        if shape[sd] % size:
            raise ShapeError(f"psum_scatter(tiled=True): dimension {sd} of shape {x.shape} "
                             f"is not a multiple of the axis size {size}")
        shape[sd] //= size
    else:
        if shape[sd] != size:
            raise ShapeError(f"psum_scatter: dimension {sd} of shape {x.shape} must equal "
                             f"the axis size {size} (or pass tiled=True)")
        del shape[sd]
    return ShapedArray(tuple(shape), x.dtype)


psum_scatter_p.abstract_eval = _psum_scatter_aval


def _psum_scatter_batch(args, dims, *, axes, scatter_dimension, tiled, size):
    (x,), (d,) = args, dims
    sd = scatter_dimension
    params = dict(axes=axes, tiled=tiled, size=size)
    if _current(axes) is None:
        if d is None:
            return _bind(psum_scatter_p, x, scatter_dimension=sd, **params), None
        x = moveaxis(x, d, 0)
        return _bind(psum_scatter_p, x, scatter_dimension=sd + 1, **params), 0
    # element b keeps row b (along sd) of the sum over the batch: that row axis becomes
    # the batch axis of the result
    total = _scaled(x, size) if d is None else reduce_sum(x, (d,))
    return (_split(total, sd, size) if tiled else total), sd


psum_scatter_p.batch = _psum_scatter_batch


def _all_gather_transpose(ct, x, *, axes, axis, tiled, size):
    return [_bind(psum_scatter_p, instantiate(ct), axes=axes, scatter_dimension=axis,
                                tiled=tiled, size=size)]


def _psum_scatter_transpose(ct, x, *, axes, scatter_dimension, tiled, size):
    return [_bind(all_gather_p, instantiate(ct), axes=axes, axis=scatter_dimension,
                              tiled=tiled, size=size)]


deflinear(all_gather_p, _all_gather_transpose)
deflinear(psum_scatter_p, _psum_scatter_transpose)


# ============================================================================
# ppermute: element src's value sent to element dst for each (src, dst) pair
# ============================================================================

ppermute_p = Primitive("ppermute", collective=True)
ppermute_p.impl = _outside(ppermute_p)
ppermute_p.abstract_eval = lambda x, *, axes, perm, size: ShapedArray(x.shape, x.dtype)


def _ppermute_batch(args, dims, *, axes, perm, size):
    (x,), (d,) = args, dims
    if _current(axes) is None:
        return _bind(ppermute_p, x, axes=axes, perm=perm, size=size), d
    x = moveaxis(x, d, 0, size=size)
    src = np.zeros((size, 1), np.int64)
    received = np.zeros(size, np.bool_)
    for s, t in perm:
        src[t, 0] = s
        received[t] = True
    out = gather(x, src)
    if not received.all():                        # elements no pair sends to get zeros
        shape = shape_of(out)
        keep = broadcast_in_dim(received, shape, (0,))
        out = select(keep, out, zeros_like(out))
    return out, 0


ppermute_p.batch = _ppermute_batch
deflinear(ppermute_p, lambda ct, x, *, axes, perm, size: [
    _bind(ppermute_p, instantiate(ct), axes=axes, perm=tuple((t, s) for s, t in perm),
                    size=size)])
