"""Forward mode: evaluate a jaxpr on (primal, tangent) pairs with each primitive's jvp rule.

Tangents that cannot be nonzero are :class:`~autodiff.core.Zero` and cost no
equations. ``jvp_eval`` runs with ``bind``, so on tracers it records the
tangent program into the enclosing trace; ``jvp_jaxpr`` traces it into a new
jaxpr (IR in, IR out).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> cj = ad.make_jaxpr(anp.sin)(np.ones(2))
>>> from autodiff.transforms.jvp import jvp_jaxpr
>>> print(jvp_jaxpr(cj, [True])[0])
{ lambda ; a:f64[2] b:f64[2]. let
    c:f64[2] = sin a
    d:f64[2] = cos a
    e:f64[2] = mul b d
  in (c, e) }
"""
import numpy as np

from ..core import (Literal, ShapedArray, Zero, at_source, bind, hoist_consts, trace_flat,
                    trace_state)
from ..errors import UnsupportedError
from .. import primitives as P

__all__ = ["zeros_for", "jvp_eval", "jvp_jaxpr"]


def zeros_for(aval):
    return Zero(ShapedArray(aval.shape, aval.dtype))


def jvp_eval(jaxpr, consts, primals, tangents):
    """Evaluate ``jaxpr`` on primals and tangents (``Zero`` allowed) -> (outs, out_tangents)."""
    penv, tenv = {}, {}
    for v, c in zip(jaxpr.constvars, consts):
        penv[v] = c
    for v, p, t in zip(jaxpr.invars, primals, tangents):
        penv[v] = p
        if t is not None and not isinstance(t, Zero):
            tenv[v] = t

    def read_t(v):
        if isinstance(v, Literal):
            return zeros_for(v.aval)
        t = tenv.get(v)
        return t if t is not None else zeros_for(v.aval)

    for e in jaxpr.eqns:
        ps = [v.val if isinstance(v, Literal) else penv[v] for v in e.invars]
        ts = [read_t(v) for v in e.invars]
        prim = e.primitive
        if all(isinstance(t, Zero) for t in ts):
            outs = at_source(e.source, bind, prim, ps, e.params)
            if prim.multiple_results:
                for v, o in zip(e.outvars, outs):
                    penv[v] = o
            else:
                penv[e.outvars[0]] = outs
            continue
        if prim.jvp is None:
            raise UnsupportedError(f"forward-mode differentiation of primitive {prim.name!r} "
                                   f"is not supported", source=e.source)
        outs, touts = at_source(e.source, prim.jvp, ps, ts, **e.params)
        if not prim.multiple_results:
            outs, touts = [outs], [touts]
        for v, o, t in zip(e.outvars, outs, touts):
            penv[v] = o
            if not isinstance(t, Zero):
                tenv[v] = t
    outs = [v.val if isinstance(v, Literal) else penv[v] for v in jaxpr.outvars]
    touts = [read_t(v) for v in jaxpr.outvars]
    return outs, touts


def jvp_jaxpr(closed, nonzeros, instantiate=True, *, as_body=False):
    """``(primals, nonzero tangents) -> (outs, out tangents)`` as a new ClosedJaxpr.

    Returns ``(jvp_closed_jaxpr, out_nonzeros)``. ``instantiate`` (a bool, or one per output)
    materializes zero output tangents; ``out_nonzeros`` marks which outputs have a tangent
    output. The one forward-mode program builder: the API, the tape, checkpointing and the
    control-flow rules all use it.

    ``as_body=True`` is what a control-flow rule needs for its sub-jaxpr: only float values
    carry tangents (``nonzeros`` of other inputs are ignored, non-float outputs never get one),
    input avals lose weak types, and the constants are hoisted to leading inputs; it returns
    ``(jvp_closed_jaxpr, hoisted_consts, out_nonzeros)``.
    """
    jaxpr = closed.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [v.aval for v in jaxpr.outvars]
    if as_body:
        in_avals = [ShapedArray(a.shape, a.dtype) for a in in_avals]
        nonzeros = [bool(nz) and _is_float(a) for nz, a in zip(nonzeros, in_avals)]
    inst = (list(instantiate) if isinstance(instantiate, (list, tuple))
            else [instantiate] * len(out_avals))
    t_avals = [ShapedArray(a.shape, a.dtype) for a, nz in zip(in_avals, nonzeros) if nz]
    n = len(in_avals)
    out_nz = []

    def fun(*args):
        primals, ts = args[:n], iter(args[n:])
        tangents = [next(ts) if nz else None for nz in nonzeros]
        outs, touts = jvp_eval(jaxpr, closed.consts, list(primals), tangents)
        res = list(outs)
        del out_nz[:]
        for t, a, i in zip(touts, out_avals, inst):
            if (as_body and not _is_float(a)) or (isinstance(t, Zero) and not i):
                out_nz.append(False)
            else:
                res.append(P.full(a.shape, 0, a.dtype) if isinstance(t, Zero) else t)
                out_nz.append(True)
        return res

    traced = trace_flat(fun, in_avals + t_avals, name="jvp")
    if as_body:
        return (*hoist_consts(traced), list(out_nz))
    return traced, out_nz


def _is_float(aval):
    return np.issubdtype(aval.dtype, np.inexact)
