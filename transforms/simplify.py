"""Simplification: constant folding, algebraic identities, common-subexpression
elimination, dead-code elimination.

Each pass is a pure function ``ClosedJaxpr -> ClosedJaxpr``; :func:`simplify_jaxpr`
runs them in that order, and ``jit`` runs them as part of its pass pipeline
(:mod:`autodiff.transforms.passes`). This module holds the library's one dead-code
elimination (:func:`dce`, and :func:`dce_jaxpr` on a bare Jaxpr). They respect
recomputation (checkpointing):

* The body of a ``remat`` equation is simplified as a scope of its own: CSE never
  merges a value recomputed inside a checkpoint with the same value computed
  outside it (that would keep the value alive from the forward pass to the
  backward pass, undoing the checkpoint).
* ``remat`` equations with ``prevent_cse`` are never merged with each other.
* Equations without variable inputs whose result is an array (``broadcast_in_dim``
  of a literal, ``iota``) are not merged either: partial evaluation recomputes
  them on purpose, since keeping one alive costs more than remaking it.
* Constant folding makes scalars into literals, and folds array constants only
  when the result is no larger than its inputs (a folded ``broadcast`` would be a
  big constant kept alive for the whole program).

DCE also prunes unused outputs (and then unused inputs) of ``remat`` equations.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.transforms.simplify import simplify_jaxpr
>>> cj = ad.make_jaxpr(lambda x: anp.sin(x) * anp.sin(x) + 2.0 * 3.0)(np.ones(2))
>>> print(simplify_jaxpr(cj))
{ lambda ; a:f64[2]. let
    b:f64[2] = sin a
    c:f64[2] = mul b b
    d:f64[2] = add c 6.0:f64[]
  in (d,) }
"""
import numpy as np

from ..core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var, eqn_effectful, param_key
from .partial_eval import dce_jaxpr as _pe_dce_jaxpr
from .remat import remat_p, name_p

__all__ = ["simplify_jaxpr", "fold_constants", "fold_identities", "cse", "dce", "dce_jaxpr"]


def simplify_jaxpr(closed):
    """Constant folding, identities, CSE, then DCE (remat-aware); returns a new ClosedJaxpr."""
    closed = _as_closed(closed)
    return dce(cse(fold_identities(fold_constants(closed))))


def _as_closed(c):
    return c if isinstance(c, ClosedJaxpr) else ClosedJaxpr(c, [])


def _is_remat(e):
    return e.primitive is remat_p


def _map_remat_body(e, fn):
    body = e.params["jaxpr"]
    new = fn(body)
    return e if new is body else e.replace(params=dict(e.params, jaxpr=new))


# ----------------------------------------------------------------------------
# constant folding
# ----------------------------------------------------------------------------

def _foldable(prim):
    # a collective has a value only inside its vmap's batch_eval (autodiff.named_axes)
    return (prim.impl is not None and not prim.call_like and prim is not name_p
            and not prim.collective)


def fold_constants(closed):
    """Evaluate equations whose inputs are all literals or constants.

    Scalar results become literals; array results become constants only when no
    larger than the constants they are computed from.
    """
    closed = _as_closed(closed)
    j = closed.jaxpr
    values = dict(zip(j.constvars, closed.consts))
    new_constvars, new_consts = list(j.constvars), list(closed.consts)
    jaxpr = _fold(j, values, new_constvars, new_consts)
    live = _live_vars(jaxpr)
    keep = [(v, c) for v, c in zip(new_constvars, new_consts) if v in live]
    return ClosedJaxpr(Jaxpr([v for v, _ in keep], jaxpr.invars, jaxpr.outvars, jaxpr.eqns),
                       [c for _, c in keep])


def _fold(j, values, new_constvars, new_consts):
    """Fold ``j``'s equations; ``values`` maps constvars to arrays (empty inside bodies)."""
    subst = {}
    eqns = []
    changed = False

    def read(v):
        return subst.get(v, v) if isinstance(v, Var) else v

    for e in j.eqns:
        invars = [read(v) for v in e.invars]
        if invars != list(e.invars):
            e = e.replace(invars=invars)
            changed = True
        if _is_remat(e):
            e2 = _map_remat_body(e, lambda b: _fold(b, {}, [], []))
            changed |= e2 is not e
            eqns.append(e2)
            continue
        known = all(isinstance(v, Literal) or v in values for v in invars)
        if not (known and _foldable(e.primitive)) or eqn_effectful(e) or any(isinstance(o, DropVar) for o in e.outvars):
            eqns.append(e)
            continue
        args = [v.val if isinstance(v, Literal) else values[v] for v in invars]
        try:
            out = e.primitive.impl(*args, **e.params)
        except Exception:       # leave whatever cannot be evaluated here to run time
            eqns.append(e)
            continue
        outs = out if e.primitive.multiple_results else [out]
        outs = [np.asarray(o) for o in outs]
        in_size = sum(int(np.size(values[v])) for v in invars if isinstance(v, Var))
        if all(o.ndim == 0 for o in outs):
            for o, v in zip(outs, e.outvars):
                subst[v] = Literal(o, v.aval)
        elif in_size and sum(o.size for o in outs) <= in_size and new_constvars is not None \
                and values:
            for o, v in zip(outs, e.outvars):
                values[v] = o
                new_constvars.append(v)
                new_consts.append(o)
        else:
            eqns.append(e)
            continue
        changed = True
    if not changed:
        return j
    return Jaxpr(j.constvars, j.invars, [read(v) for v in j.outvars], eqns)


def _live_vars(j):
    live = {v for v in j.outvars if isinstance(v, Var)}
    for e in j.eqns:
        live.update(v for v in e.invars if isinstance(v, Var))
    return live


# ----------------------------------------------------------------------------
# algebraic identities
# ----------------------------------------------------------------------------

def _uniform_operand(v, bcast):
    """The scalar value of ``v`` if it is a literal or a broadcast of one, else None."""
    if isinstance(v, Literal):
        return v.val
    return bcast.get(v)


def _is_one(u):
    return u is not None and u == 1


def _is_zero(u, sign):
    """``u`` is a zero whose sign bit is ``sign`` (either, for integers and booleans)."""
    if u is None or u != 0:
        return False
    return np.asarray(u).dtype.kind != "f" or bool(np.signbit(u)) == sign


def _identity_operand(e, bcast):
    """The operand ``e`` returns unchanged (``x*1``, ``x-0`` ...), or None.

    Only exact identities of IEEE arithmetic: ``x + 0.0`` is not ``x`` at ``x = -0.0``
    (the sum is +0.0), so a float ``x + 0`` folds only when the zero is ``-0.0``, and
    ``x - 0`` only when it is ``+0.0``; ``x * 1`` and ``x / 1`` hold for every x, NaN and
    infinities included. Integer and boolean zeros and ones fold on either sign.
    """
    name = e.primitive.name
    if name not in ("mul", "div", "add", "sub") or len(e.invars) != 2:
        return None
    a, b = e.invars
    ua, ub = _uniform_operand(a, bcast), _uniform_operand(b, bcast)
    if name == "mul":
        cands = [x for x, u in ((a, ub), (b, ua)) if _is_one(u)]
    elif name == "div":
        cands = [a] if _is_one(ub) and e.outvars[0].aval.dtype.kind in "iuf" else []
    elif name == "add":
        cands = [x for x, u in ((a, ub), (b, ua)) if _is_zero(u, sign=True)]
    else:
        cands = [a] if _is_zero(ub, sign=False) else []
    out = e.outvars[0].aval
    for x in cands:
        if x.aval.shape == out.shape and x.aval.dtype == out.dtype:
            return x
    return None


def fold_identities(closed):
    """``x * 1``, ``1 * x``, ``x / 1``, ``x - 0`` and exact ``x + 0`` become ``x``.

    A one or zero is a scalar literal or a ``broadcast_in_dim`` of one (a gradient's seed
    of ones after :func:`~autodiff.transforms.passes.fold_uniform_consts`); the rewrite
    needs ``x`` to have the result's shape and dtype. The identities are exact (see
    ``_identity_operand``), so values, NaNs and signed zeros are unchanged.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> cj = ad.make_jaxpr(lambda x: anp.sin(x) * 1.0 - 0.0)(np.ones(2))
    >>> print(fold_identities(cj))
    { lambda ; a:f64[2]. let
        b:f64[2] = sin a
      in (b,) }
    """
    closed = _as_closed(closed)
    j = closed.jaxpr
    subst, bcast, eqns = {}, {}, []
    changed = False

    def read(v):
        return subst.get(v, v) if isinstance(v, Var) else v

    for e in j.eqns:
        invars = [read(v) for v in e.invars]
        if invars != list(e.invars):
            e = e.replace(invars=invars)
            changed = True
        if (e.primitive.name == "broadcast_in_dim" and isinstance(invars[0], Literal)
                and not isinstance(e.outvars[0], DropVar)):
            bcast[e.outvars[0]] = invars[0].val
        x = _identity_operand(e, bcast)
        if x is not None and not isinstance(e.outvars[0], DropVar):
            subst[e.outvars[0]] = x
            changed = True
            continue
        eqns.append(e)
    if not changed:
        return closed
    # the broadcast seeds nobody reads any more are left to dce
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, [read(v) for v in j.outvars], eqns),
                       closed.consts)


# ----------------------------------------------------------------------------
# common-subexpression elimination
# ----------------------------------------------------------------------------

def _atom_key(v):
    return v._key() if isinstance(v, Literal) else v


_COMMUTATIVE = frozenset({"add", "mul", "eq", "ne", "and", "or", "xor"})


def _eqn_key(e):
    """A hashable key of what ``e`` computes, or None when it must not be merged."""
    prim = e.primitive
    if eqn_effectful(e) or any(isinstance(o, DropVar) for o in e.outvars):
        return None
    if _is_remat(e) and e.params.get("prevent_cse", True):
        return None
    if not any(isinstance(v, Var) for v in e.invars) and any(o.aval.shape for o in e.outvars):
        return None      # recomputed on purpose (see the module docstring)
    try:
        params = tuple(sorted((k, param_key(p, True)) for k, p in e.params.items()))
        ins = tuple(_atom_key(v) for v in e.invars)
        if prim.name in _COMMUTATIVE:
            # x*y and y*x are the same bits (IEEE add and multiply commute; max/min do
            # not: np.maximum(0.0, -0.0) keeps the first zero): a product rule's transpose
            # writes both orders (d(x*x) = ct*x + x*ct)
            ins = tuple(sorted(ins, key=hash))
        key = (prim.name, ins, params, tuple(o.aval for o in e.outvars))
        hash(key)
    except TypeError:
        return None
    return key


def cse(closed):
    """Merge equations that compute the same thing from the same inputs (remat-aware)."""
    closed = _as_closed(closed)
    j = _cse(closed.jaxpr)
    return closed if j is closed.jaxpr else ClosedJaxpr(j, closed.consts)


def _cse(j):
    subst, table, eqns = {}, {}, []
    changed = False

    def read(v):
        return subst.get(v, v) if isinstance(v, Var) else v

    for e in j.eqns:
        invars = [read(v) for v in e.invars]
        if invars != list(e.invars):
            e = e.replace(invars=invars)
            changed = True
        if _is_remat(e):
            e2 = _map_remat_body(e, _cse)       # a scope of its own
            changed |= e2 is not e
            e = e2
        key = _eqn_key(e)
        if key is not None:
            hit = table.get(key)
            if hit is not None:
                subst.update(zip(e.outvars, hit))
                changed = True
                continue
            table[key] = e.outvars
        eqns.append(e)
    if not changed:
        return j
    return Jaxpr(j.constvars, j.invars, [read(v) for v in j.outvars], eqns)


# ----------------------------------------------------------------------------
# dead-code elimination
# ----------------------------------------------------------------------------

def dce(closed):
    """Drop unused equations; prune unused outputs and inputs of ``remat`` bodies."""
    closed = _as_closed(closed)
    j = closed.jaxpr
    new, _ = _pe_dce_jaxpr(j, prune_calls=True)
    cmap = dict(zip(j.constvars, closed.consts))
    return ClosedJaxpr(new, [cmap[v] for v in new.constvars])


def dce_jaxpr(jaxpr, used_outputs=None, prune_invars=False):
    """DCE of a bare Jaxpr, remat bodies pruned too: ``(jaxpr, used_invars)`` (the one DCE,
    :func:`autodiff.transforms.partial_eval.dce_jaxpr`, with ``prune_calls``)."""
    return _pe_dce_jaxpr(jaxpr, used_outputs, prune_invars, prune_calls=True)
