"""Transposition of linear programs: the backward pass of reverse mode.

``backward_pass`` walks the equations of a linear jaxpr in reverse, calling each
linear primitive's transpose rule with the incoming cotangent, and accumulates
cotangents of the linear inputs. Non-linear equations (those reading only
non-linear inputs, e.g. residual arithmetic) are evaluated forward first.
Cotangents are symbolic zeros until something flows in.

>>> import numpy as np, autodiff as ad
>>> ad.grad(lambda x: (x * x).sum())(np.array([1.0, 2.0]))
array([2., 4.])
"""
from ..core import ClosedJaxpr, Literal, UndefinedPrimal, Var, Zero, at_source, bind, trace_flat
from ..errors import UnsupportedError
from .. import primitives as P

__all__ = ["backward_pass", "transpose_jaxpr"]


def _add_ct(a, b):
    if a is None or isinstance(a, Zero):
        return b
    if b is None or isinstance(b, Zero):
        return a
    return P.add_p.bind(a, b)


def backward_pass(jaxpr, consts, linear, args, cts_out):
    """Cotangents of the linear inputs of ``jaxpr``.

    ``linear[i]`` marks linear inputs; ``args`` holds values for the others (None
    for linear ones); ``cts_out`` one cotangent (or ``Zero``) per output.
    Returns a list with a cotangent (possibly ``Zero``) per linear input.
    """
    lin_vars = set()
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, is_lin, a in zip(jaxpr.invars, linear, args):
        if is_lin:
            lin_vars.add(v)
        else:
            env[v] = a

    lin_eqns = []
    for e in jaxpr.eqns:
        if any(isinstance(v, Var) and v in lin_vars for v in e.invars):
            lin_vars.update(e.outvars)
            lin_eqns.append(e)
        else:
            outs = at_source(e.source, bind, e.primitive, [_read(env, v) for v in e.invars], e.params)
            if e.primitive.multiple_results:
                env.update(zip(e.outvars, outs))
            else:
                env[e.outvars[0]] = outs

    ct_env = {}
    for v, ct in zip(jaxpr.outvars, cts_out):
        if isinstance(v, Var) and v in lin_vars and not isinstance(ct, Zero):
            ct_env[v] = _add_ct(ct_env.get(v), ct)

    for e in reversed(lin_eqns):
        cts = [ct_env.pop(v, None) for v in e.outvars]
        if all(c is None for c in cts):
            continue
        prim = e.primitive
        if prim.transpose is None:
            raise UnsupportedError(
                f"reverse-mode differentiation through {prim.name!r} is not supported: it is "
                f"not linear in its tangent inputs (a custom_jvp rule that is not linear?)",
                source=e.source)
        if prim.linear_argnums is not None and any(
                isinstance(v, Var) and v in lin_vars and i not in prim.linear_argnums
                for i, v in enumerate(e.invars)):
            raise UnsupportedError(
                f"reverse-mode differentiation: {prim.name!r} is linear only in its operands "
                f"{prim.linear_argnums}, and a tangent reached another one", source=e.source)
        if prim.multiple_results:
            ct = [c if c is not None else Zero(v.aval) for c, v in zip(cts, e.outvars)]
        else:
            ct = cts[0]
        targs = [UndefinedPrimal(v.aval) if isinstance(v, Var) and v in lin_vars
                 else _read(env, v) for v in e.invars]
        in_cts = at_source(e.source, prim.transpose, ct, *targs, **e.params)
        for v, c in zip(e.invars, in_cts):
            if isinstance(v, Var) and v in lin_vars and c is not None and not isinstance(c, Zero):
                ct_env[v] = _add_ct(ct_env.get(v), c)

    return [ct_env.get(v, Zero(v.aval)) if is_lin else None
            for v, is_lin in zip(jaxpr.invars, linear)]


def _read(env, v):
    return v.val if isinstance(v, Literal) else env[v]


def transpose_jaxpr(closed, linear):
    """``(non-linear inputs..., output cotangents...) -> linear-input cotangents`` as a jaxpr."""
    jaxpr = closed.jaxpr
    nonlin_avals = [v.aval for v, l in zip(jaxpr.invars, linear) if not l]
    ct_avals = [v.aval for v in jaxpr.outvars]
    nn = len(nonlin_avals)

    def fun(*xs):
        it = iter(xs[:nn])
        args = [None if l else next(it) for l in linear]
        cts = backward_pass(jaxpr, closed.consts, linear, args, list(xs[nn:]))
        return [P.instantiate(c) for c, l in zip(cts, linear) if l]

    return trace_flat(fun, nonlin_avals + ct_avals, name="transpose")
