"""Partial evaluation: split a jaxpr into the part computable from known inputs and the rest.

Applied to a jvp-jaxpr with primals known and tangents unknown, this is
linearization: the known jaxpr is the primal program (it also returns the
*residuals*, the primal values the tangent program reads) and the unknown jaxpr
is the linear tangent program. Residuals are found by free-variable analysis
after the split, and both halves are dead-code eliminated, so unused residuals
are neither saved nor computed.

A primitive may take over its own split with ``prim.partial_eval(eqn, unknowns)``
(``remat`` does, to recompute instead of save).
"""
from ..core import ClosedJaxpr, Jaxpr, Literal, Var, eqn_effectful

__all__ = ["dce_jaxpr", "dce_closed", "split_equations", "partial_eval_jaxpr"]


def dce_jaxpr(jaxpr, used_outputs=None, prune_invars=False, prune_calls=False):
    """The one dead-code elimination: drop equations none of whose outputs are used
    (effectful ones stay). Returns ``(jaxpr, used_invars)``; ``used_outputs`` (default: all)
    says which outputs to keep, ``prune_invars`` drops the inputs nothing reads.

    With ``prune_calls`` a primitive with a ``dce_rule(eqn, used_outputs) -> eqn`` (remat:
    its body) also prunes itself to the outputs that are used. jit's pipeline asks for it;
    partial evaluation does not (a remat's outputs are the residual plan checkpointing
    chose).
    """
    outvars = jaxpr.outvars if used_outputs is None else [
        v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    live = {v for v in outvars if isinstance(v, Var)}
    kept = []
    for e in reversed(jaxpr.eqns):
        used = [v in live for v in e.outvars]
        if any(used) or eqn_effectful(e):
            rule = getattr(e.primitive, "dce_rule", None) if prune_calls else None
            if rule is not None:
                e = rule(e, used)
            kept.append(e)
            live.update(v for v in e.invars if isinstance(v, Var))
    kept.reverse()
    used_in = [v in live for v in jaxpr.invars]
    invars = [v for v, u in zip(jaxpr.invars, used_in) if u] if prune_invars else jaxpr.invars
    constvars = [v for v in jaxpr.constvars if v in live]
    return Jaxpr(constvars, invars, outvars, kept), used_in


def dce_closed(closed, used_outputs=None):
    j = closed.jaxpr
    cmap = dict(zip(j.constvars, closed.consts))
    new, _ = dce_jaxpr(j, used_outputs)
    return ClosedJaxpr(new, [cmap[v] for v in new.constvars])


def split_equations(jaxpr, in_unknowns):
    """Sort equations into known and unknown ones, forward from the unknown inputs.

    An equation with an unknown input is unknown, unless its primitive's
    ``partial_eval(eqn, unknowns) -> (known_eqns, unknown_eqns)`` hook splits it.
    Returns ``(known_eqns, unknown_eqns, unknown_vars)``.
    """
    unknown_vars = {v for v, u in zip(jaxpr.invars, in_unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for e in jaxpr.eqns:
        ins_unknown = [isinstance(v, Var) and v in unknown_vars for v in e.invars]
        if not any(ins_unknown):
            known_eqns.append(e)
            continue
        rule = getattr(e.primitive, "partial_eval", None)
        if rule is not None:
            k, u = rule(e, ins_unknown)
            known_eqns.extend(k)
            unknown_eqns.extend(u)
            for ue in u:
                unknown_vars.update(ue.outvars)
        else:
            unknown_eqns.append(e)
            unknown_vars.update(e.outvars)
    return known_eqns, unknown_eqns, unknown_vars


def partial_eval_jaxpr(closed, in_unknowns, num_known_outs):
    """Split ``closed`` into known and unknown programs.

    ``in_unknowns[i]`` marks unknown inputs. The first ``num_known_outs`` outputs
    must be known (they come from the known program); the rest come from the
    unknown program. Returns ``(known, unknown, num_res)``:

    * ``known``: ClosedJaxpr ``known_ins -> (known outs..., residuals...)``
    * ``unknown``: ClosedJaxpr ``(residuals..., unknown_ins...) -> rest outs``
    """
    jaxpr = closed.jaxpr
    known_eqns, unknown_eqns, unknown_vars = split_equations(jaxpr, in_unknowns)

    known_outs = list(jaxpr.outvars[:num_known_outs])
    for v in known_outs:
        if isinstance(v, Var) and v in unknown_vars:
            raise ValueError("partial_eval: a primal output depends on an unknown input")
    rest_outs = list(jaxpr.outvars[num_known_outs:])

    # unknown program first, so its liveness decides the residuals
    un_inputs = [v for v, u in zip(jaxpr.invars, in_unknowns) if u]
    uj, _ = dce_jaxpr(Jaxpr((), un_inputs, rest_outs, unknown_eqns))
    defined = set(un_inputs)
    const_set = set(jaxpr.constvars)
    residuals, res_seen, used_consts = [], set(), []
    # equations with no variable inputs (iota, a broadcast literal) are recomputed in the
    # unknown program rather than saved: a residual of zeros would cost memory for nothing
    producer = {o: e for e in known_eqns for o in e.outvars}
    rematerialized = []

    def need(v):
        if not isinstance(v, Var) or v in defined or v in res_seen:
            return
        pe = producer.get(v)
        if pe is not None and not any(isinstance(u, Var) for u in pe.invars) \
                and not pe.primitive.call_like:
            rematerialized.append(pe)
            defined.update(pe.outvars)
            return
        if v in const_set:
            if v not in used_consts:
                used_consts.append(v)
            return
        res_seen.add(v)
        residuals.append(v)

    for e in uj.eqns:
        for v in e.invars:
            need(v)
        defined.update(e.outvars)
        for v in _subjaxpr_free_vars(e):
            need(v)
    for v in uj.outvars:
        need(v)

    cmap = dict(zip(jaxpr.constvars, closed.consts))
    unknown = ClosedJaxpr(Jaxpr(used_consts, residuals + un_inputs, uj.outvars,
                                rematerialized + list(uj.eqns)),
                          [cmap[v] for v in used_consts])
    kn_inputs = [v for v, u in zip(jaxpr.invars, in_unknowns) if not u]
    kj, _ = dce_jaxpr(Jaxpr(jaxpr.constvars, kn_inputs, known_outs + residuals, known_eqns))
    known = ClosedJaxpr(kj, [cmap[v] for v in kj.constvars])
    return known, unknown, len(residuals)


def _subjaxpr_free_vars(e):
    return ()
