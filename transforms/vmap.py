"""Batching: evaluate a jaxpr on values that carry an extra (batch) axis.

Each value is paired with its batch dimension (an int, or ``None`` when it is
the same for every batch element). Equations whose inputs are all unbatched
run as they are; the others go through their primitive's ``batch`` rule, which
emits vectorized operations (a batched ``dot_general`` is one batched matmul,
never a loop). ``batch_eval`` runs with ``bind``, so on tracers it records the
batched program into the enclosing trace; ``batch_jaxpr`` traces it into a new
jaxpr (IR in, IR out).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.vmap(lambda v: anp.dot(v, v))(np.arange(6.0).reshape(3, 2))
array([ 1., 13., 41.])
"""
from ..core import (Literal, Var, at_source, hoist_consts, last_uses, register_internal_dir,
                    trace_flat, user_source)
from ..errors import UnsupportedError, ShapeError
from ..named_axes import batching, collective_axes
from .. import primitives as P

__all__ = ["move_axis", "batch_eval", "matchaxis", "batch_jaxpr"]

# autodiff.transforms lives outside the autodiff/ folder (see pyproject's package-dir):
# its frames must not be blamed as the user's line in errors and equation sources
register_internal_dir(__file__)


move_axis = P.moveaxis     # one batch-axis mover for every rule (autodiff.primitives)


def batch_eval(jaxpr, consts, args, dims):
    """Evaluate ``jaxpr`` on batched ``args`` (batch axis ``dims[i]`` or None) -> (outs, out_dims).

    Values are released after their last use, so on concrete inputs the peak
    memory is that of the batched program, not of every intermediate.
    """
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = (c, None)
    for v, a, d in zip(jaxpr.invars, args, dims):
        env[v] = (a, d)

    def read(v):
        return (v.val, None) if isinstance(v, Literal) else env[v]

    for e, frees in zip(jaxpr.eqns, last_uses(jaxpr)):
        ins = [read(v) for v in e.invars]
        vals = [x for x, _ in ins]
        ds = [d for _, d in ins]
        prim = e.primitive
        if all(d is None for d in ds) and not prim.collective and not (
                prim.call_like and _holds_collective_over_axis(e)):
            outs = at_source(e.source, prim.bind, *vals, **e.params)
            odims = [None] * len(e.outvars) if prim.multiple_results else None
        else:
            if all(d is None for d in ds) and not prim.collective:
                # a body (scan, cond branch) holds a collective over the axis being batched:
                # it computes across the batch, so the equation is batched all the same
                if not vals:
                    raise UnsupportedError(f"vmap: {prim.name} without operands holds a "
                                           f"collective over the mapped axis", source=e.source)
                vals[0], ds[0] = matchaxis(vals[0], None, 0, batching()[1]), 0
            if prim.batch is None:
                raise UnsupportedError(f"vmap of primitive {prim.name!r} is not supported: it "
                                       f"has no batching rule", source=e.source)
            outs, odims = at_source(e.source, prim.batch, vals, ds, **e.params)
        if prim.multiple_results:
            for v, o, d in zip(e.outvars, outs, odims):
                env[v] = (o, d)
        else:
            env[e.outvars[0]] = (outs, odims)
        for v in frees:
            env.pop(v, None)
    res = [read(v) for v in jaxpr.outvars]
    return [r[0] for r in res], [r[1] for r in res]


def _holds_collective_over_axis(e):
    """Whether a sub-program of ``e`` applies a collective over the axis being batched."""
    cur = batching()
    return cur is not None and cur[0] is not None and cur[0] in collective_axes(e.params)


def matchaxis(x, src, dst, size, what="an output"):
    """Put ``x``'s batch axis at ``dst`` (broadcasting an unbatched value); ``dst=None`` unbatched."""
    if dst is None:
        if src is not None:
            raise ShapeError(
                f"vmap: out_axes=None for {what}, but it depends on the mapped axis "
                f"(it has shape {tuple(P.shape_of(x))} with the batch at axis {src}). Only "
                f"outputs that are the same for every batch element can use out_axes=None; "
                f"use out_axes=0 for this output.", source=user_source())
        return x
    if src is None:
        shape = P.shape_of(x)
        x = P.broadcast_in_dim(x, (size,) + tuple(shape), tuple(range(1, len(shape) + 1)))
        src = 0
    return move_axis(x, src, dst)


def batch_jaxpr(closed, axis_size, in_dims, out_dims, *, as_body=False):
    """The batched jaxpr: inputs carry a batch axis at ``in_dims``; outputs at ``out_dims``.

    The one batched-program builder (vmap of custom rules, remat and control flow use it).
    ``as_body=True`` is what a control-flow rule needs for its sub-jaxpr: ``in_dims`` and
    ``out_dims`` are flags (batched at axis 0, or not; an output not forced comes out
    batched only if it depends on a batched input), input avals lose weak types, constants
    are hoisted to leading inputs, and it returns ``(ClosedJaxpr, hoisted_consts,
    out_batched)``.
    """
    jaxpr = closed.jaxpr
    if as_body:
        in_dims = [0 if b else None for b in in_dims]
        force = list(out_dims)
    avals = []
    for v, d in zip(jaxpr.invars, in_dims):
        shape = list(v.aval.shape)
        if d is not None:
            shape.insert(d, axis_size)
        avals.append(P.ShapedArray(shape, v.aval.dtype))
    out_b = []

    def fun(*args):
        outs, ods = batch_eval(jaxpr, closed.consts, list(args), in_dims)
        if not as_body:
            return [matchaxis(o, d, od, axis_size) for o, d, od in zip(outs, ods, out_dims)]
        del out_b[:]
        out_b.extend(d is not None or f for d, f in zip(ods, force))
        return [matchaxis(o, d, 0, axis_size) if b else o for o, d, b in zip(outs, ods, out_b)]

    traced = trace_flat(fun, avals, name="vmap")
    if as_body:
        return (*hoist_consts(traced), list(out_b))
    return traced
