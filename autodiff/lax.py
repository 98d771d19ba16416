"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``.

Each is one primitive carrying its bodies as sub-jaxprs, so a loop costs one
equation in the IR however many times it runs, and every transform sees it:

* ``cond``  -- ``cond[branches](index, *operands)``; branch ``index`` runs
  (0 is the false branch of :func:`cond`, as in JAX).
* ``while`` -- ``while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
  max_steps](*cond_consts, *body_consts, *init)``.
* ``scan``  -- ``scan[jaxpr, num_consts, num_carry, length, reverse](*consts,
  *init_carry, *xs)``; the body maps ``consts, carry, x-slices -> carry, y-slices``
  and the outputs are the final carry and the stacked ys.

Sub-jaxprs are :class:`~autodiff.core.ClosedJaxpr` s without constants: values a
body closes over (outer tracers, numpy arrays) become leading operands.

Rules: forward mode for all three; reverse mode for ``cond`` and ``scan``
(partial evaluation splits a scan into a primal scan that also emits the
residuals as extra stacked outputs, and a linear scan that reads them; the
transpose of a linear scan is a scan in the other direction over the
transposed body), and for ``while`` when it is bounded (``max_steps=N``: the
loop becomes a scan of ``N`` steps whose body is ``cond(pred, body, identity)``).
vmap: a batched predicate turns ``cond`` into a ``select`` of its branches and
makes ``while`` run until every lane is done.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> def cumulative(xs):
...     return ad.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]
>>> cumulative(np.arange(4.0))
array([0., 1., 3., 6.])
>>> ad.grad(lambda xs: anp.sum(cumulative(xs)))(np.arange(4.0))
array([4., 3., 2., 1.])
"""
import numpy as np

from . import primitives as P
from .core import (ClosedJaxpr, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Tracer,
                   UndefinedPrimal, Var, Zero, trace_flat, user_source)
from .errors import ConcretizationError, DTypeError, ShapeError, UnsupportedError
from .tree_util import tree_flatten, tree_unflatten
from .backends.interpreter import run_jaxpr
from .transforms.jvp import jvp_eval
from .transforms.partial_eval import dce_jaxpr, partial_eval_jaxpr, split_equations
from .transforms.transpose import backward_pass
from .transforms.vmap import batch_eval, matchaxis, move_axis


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false`` (both branches computed; differentiable).

    ``pred`` is a bool array of the operands' shape (or a scalar). On concrete inputs the
    result is a numpy value, a numpy scalar when 0-d (API.md, convention 2).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.select(np.array([True, False]), np.ones(2), np.zeros(2))
    array([1., 0.])
    >>> ad.lax.select(True, 1.0, 2.0)
    np.float64(1.0)
    """
    out = P.select(pred, on_true, on_false)
    if isinstance(out, np.ndarray) and out.ndim == 0:
        return out[()]
    return out


# ``map`` is public (ad.lax.map) but left out of ``*`` imports: it would shadow the builtin
__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "select",
           "cond_p", "while_p", "scan_p", "dynamic_slice", "dynamic_update_slice", "stop_gradient"]


# ============================================================================
# Helpers shared by the rules: building sub-jaxprs
# ============================================================================

def _is_float(aval):
    return np.issubdtype(aval.dtype, np.inexact)


def _plain(aval):
    return ShapedArray(aval.shape, aval.dtype)


def _hoist(closed):
    """Constants of a traced jaxpr become its leading inputs: ``(ClosedJaxpr, consts)``."""
    j = closed.jaxpr
    if not j.constvars:
        return ClosedJaxpr(j, []), []
    return (ClosedJaxpr(Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), []),
            list(closed.consts))


def _trace(fun, avals, name):
    """Trace ``fun(*tracers) -> list`` abstractly; constants hoisted to leading inputs."""
    return _hoist(trace_flat(fun, [_plain(a) for a in avals], name=name))


def _with_invars(closed, invars, outvars=None):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr((), invars, j.outvars if outvars is None else outvars, j.eqns), [])


def _join_branches(traced):
    """Branches traced separately, each with its own hoisted constants, made to take one
    operand list: ``(all constants..., operands...)``. Returns ``(branches, consts)``."""
    consts = [c for _, cs in traced for c in cs]
    avals = [b.in_avals[i] for b, cs in traced for i in range(len(cs))]
    out, start = [], 0
    for b, cs in traced:
        n = len(cs)
        iv = list(b.jaxpr.invars)
        new = ([Var(a) for a in avals[:start]] + iv[:n] + [Var(a) for a in avals[start + n:]]
               + iv[n:])
        out.append(_with_invars(b, new))
        start += n
    return tuple(out), consts


def _jvp_jaxpr(closed, nonzeros, instantiate):
    """``(primals..., tangents of nonzeros...) -> (outs..., tangents of out_nz...)``.

    Only float values carry tangents. ``instantiate`` (a bool or one per output)
    materializes zero tangents. Returns ``(ClosedJaxpr, hoisted consts, out_nz)``.
    """
    avals = closed.in_avals
    n_out = len(closed.out_avals)
    nonzeros = [bool(nz) and _is_float(a) for nz, a in zip(nonzeros, avals)]
    inst = list(instantiate) if isinstance(instantiate, (list, tuple)) else [instantiate] * n_out
    t_avals = [a for a, nz in zip(avals, nonzeros) if nz]
    n = len(avals)
    out_nz = []

    def fun(*args):
        it = iter(args[n:])
        tangents = [next(it) if nz else None for nz in nonzeros]
        outs, touts = jvp_eval(closed.jaxpr, closed.consts, list(args[:n]), tangents)
        res = list(outs)
        del out_nz[:]
        for t, a, i in zip(touts, closed.out_avals, inst):
            if not _is_float(a) or (isinstance(t, Zero) and not i):
                out_nz.append(False)
            else:
                res.append(P.full(a.shape, 0, a.dtype) if isinstance(t, Zero) else t)
                out_nz.append(True)
        return res

    jc, consts = _trace(fun, list(avals) + t_avals, "jvp")
    return jc, consts, list(out_nz)


def _batch_jaxpr(closed, size, in_batched, force_out):
    """The body with batch axis 0 on the ``in_batched`` inputs. Outputs that come out
    batched, or are forced, carry the batch axis at 0. ``(ClosedJaxpr, consts, out_batched)``."""
    avals = [ShapedArray((size,) + a.shape, a.dtype) if b else a
             for a, b in zip(closed.in_avals, in_batched)]
    out_b = []

    def fun(*args):
        outs, dims = batch_eval(closed.jaxpr, closed.consts, list(args),
                                [0 if b else None for b in in_batched])
        res = []
        del out_b[:]
        for o, d, f in zip(outs, dims, force_out):
            if d is None and not f:
                res.append(o)
                out_b.append(False)
            else:
                res.append(matchaxis(o, d, 0, size))
                out_b.append(True)
        return res

    bc, consts = _trace(fun, avals, "vmap")
    return bc, consts, list(out_b)


def _pe_out_unknowns(jaxpr, in_unknowns):
    """Which outputs partial evaluation leaves unknown."""
    unknown = split_equations(jaxpr, in_unknowns)[2]
    return [isinstance(v, Var) and v in unknown for v in jaxpr.outvars]


def _split_body(closed, in_unknowns, out_unknowns):
    """Partial evaluation of a body with the given output unknowns (known outputs first).

    Returns ``(known, unknown, residuals, order)``: ``known`` maps the known inputs to
    the known outputs then the residuals; ``unknown`` maps residuals then unknown
    inputs to the unknown outputs; ``residuals`` are the body's Vars; ``order`` the
    output permutation (known indices, then unknown ones).
    """
    j = closed.jaxpr
    order = ([i for i, u in enumerate(out_unknowns) if not u]
             + [i for i, u in enumerate(out_unknowns) if u])
    nko = sum(not u for u in out_unknowns)
    jr = Jaxpr((), j.invars, [j.outvars[i] for i in order], j.eqns)
    known, unknown, n_res = partial_eval_jaxpr(ClosedJaxpr(jr, []), list(in_unknowns), nko)
    assert not known.consts and not unknown.consts
    residuals = list(unknown.jaxpr.invars[:n_res])
    return known.jaxpr, unknown.jaxpr, residuals, order


def _zeros(aval):
    """Zeros of ``aval`` as IR: ``(atom, equations)`` (a partial-evaluation rule emits
    equations; it cannot trace constants into them)."""
    lit = Literal(np.zeros((), aval.dtype)[()])
    if not aval.shape:
        return lit, []
    v = Var(_plain(aval))
    return v, [Eqn(P.broadcast_in_dim_p, [lit], [v],
                   dict(shape=tuple(aval.shape), broadcast_dimensions=()), None)]


def _nonzero(t):
    return t is not None and not isinstance(t, Zero)


def _zero_tangent(aval):
    return Zero(_plain(aval))


def _fixed_point(flags, step):
    """Grow boolean ``flags`` (carry properties) until ``step(flags)`` adds nothing."""
    flags = list(flags)
    for _ in range(len(flags) + 1):
        new = [a or b for a, b in zip(flags, step(flags))]
        if new == flags:
            return flags
        flags = new
    return flags


def _bcast_pred(pred, x):
    """A per-lane predicate (size,) broadcast to ``x``'s shape (batch axis 0)."""
    shape = P.shape_of(x)
    if len(shape) == 1:
        return pred
    return P.broadcast_in_dim(pred, shape, (0,))


def _to_front(x, d):
    return x if d is None else move_axis(x, d, 0)


def _axis_size(args, dims):
    return next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)


# ============================================================================
# cond: cond[branches](index, *operands)
# ============================================================================

cond_p = Primitive("cond", multiple_results=True)
cond_p.call_like = True


def _cond_impl(index, *ops, branches):
    i = int(np.clip(int(index), 0, len(branches) - 1))
    b = branches[i]
    return run_jaxpr(b.jaxpr, b.consts, list(ops))


def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise DTypeError(f"cond: the branch index must be an integer scalar, got "
                         f"{index.str_short()}")
    outs = branches[0].out_avals
    for b in branches[1:]:
        if [(a.shape, a.dtype) for a in b.out_avals] != [(a.shape, a.dtype) for a in outs]:
            raise DTypeError("cond: branches return different types")
    return [_plain(a) for a in outs]


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], list(primals[1:])
    nz = [_nonzero(t) for t in tangents[1:]]
    out_nz = [False] * len(branches[0].out_avals)
    for b in branches:
        out_nz = [x or y for x, y in zip(out_nz, _jvp_jaxpr(b, nz, False)[2])]
    traced = []
    for b in branches:
        jb, consts, _ = _jvp_jaxpr(b, nz, out_nz)
        traced.append((jb, consts))
    new, consts = _join_branches(traced)
    ts = [t for t, z in zip(tangents[1:], nz) if z and _is_float(P.aval_of(t))]
    outs = cond_p.bind(index, *consts, *ops, *ts, branches=new)
    n = len(out_nz)
    it = iter(outs[n:])
    touts = [next(it) if z else _zero_tangent(a) for z, a in zip(out_nz, branches[0].out_avals)]
    return outs[:n], touts


def _cond_batch(args, dims, *, branches):
    size = _axis_size(args, dims)
    index, ops = args[0], list(args[1:])
    idim, odims = dims[0], list(dims[1:])
    n_out = len(branches[0].out_avals)
    if idim is not None:
        # a predicate per lane: every branch runs on every lane, then a select picks
        index = _to_front(index, idim)
        res = None
        for i, b in enumerate(branches):
            outs, ds = batch_eval(b.jaxpr, b.consts, ops, odims)
            outs = [matchaxis(o, d, 0, size) for o, d in zip(outs, ds)]
            if res is None:
                res = outs
            else:
                pick = P.eq(index, np.asarray(i, P.dtype_of(index)))
                res = [P.select(_bcast_pred(pick, o), o, r) for o, r in zip(outs, res)]
        return res, [0] * n_out
    in_b = [d is not None for d in odims]
    out_b = [False] * n_out
    for b in branches:
        out_b = [x or y for x, y in zip(out_b, _batch_jaxpr(b, size, in_b, [False] * n_out)[2])]
    new, consts = _join_branches([_batch_jaxpr(b, size, in_b, out_b)[:2] for b in branches])
    ops = [_to_front(o, d) for o, d in zip(ops, odims)]
    outs = cond_p.bind(index, *consts, *ops, branches=new)
    return outs, [0 if b else None for b in out_b]


def _cond_partial_eval(eqn, unknowns):
    branches = eqn.params["branches"]
    if unknowns[0]:
        return [], [eqn]
    ops_uk = list(unknowns[1:])
    n_out = len(eqn.outvars)
    out_uk = [False] * n_out
    for b in branches:
        out_uk = [x or y for x, y in zip(out_uk, _pe_out_unknowns(b.jaxpr, ops_uk))]
    splits = [_split_body(b, ops_uk, out_uk) for b in branches]
    order = splits[0][3]
    nko = sum(not u for u in out_uk)
    ops = eqn.invars[1:]
    known_ops = [v for v, u in zip(ops, ops_uk) if not u]
    uk_ops = [v for v, u in zip(ops, ops_uk) if u]

    # residuals that are known operands are forwarded from outside; the others are
    # outputs of the known cond, zeros when another branch is taken
    fwd, computed = [], []         # fwd: operand positions; computed: (branch, Var)
    per_branch = []
    for bi, (b, (kj, uj, res, _)) in enumerate(zip(branches, splits)):
        pos = {v: k for k, v in enumerate(b.jaxpr.invars) if not ops_uk[k]}
        slots = []
        for r in res:
            if r in pos:
                if pos[r] not in fwd:
                    fwd.append(pos[r])
                slots.append(("fwd", fwd.index(pos[r])))
            else:
                computed.append((bi, r))
                slots.append(("res", len(computed) - 1))
        per_branch.append(slots)
    comp_avals = [r.aval for _, r in computed]

    known_branches, unknown_branches = [], []
    for bi, (kj, uj, res, _) in enumerate(splits):
        mine = {ci: k for k, (s, ci) in enumerate(per_branch[bi]) if s == "res"}
        extra_eqns, extra_outs = [], []
        for ci, a in enumerate(comp_avals):
            if ci in mine:
                extra_outs.append(kj.outvars[nko + mine[ci]])
            else:
                zero, z_eqns = _zeros(a)
                extra_eqns += z_eqns
                extra_outs.append(zero)
        known_branches.append(ClosedJaxpr(Jaxpr(
            (), kj.invars, list(kj.outvars[:nko]) + extra_outs, list(kj.eqns) + extra_eqns), []))

        fwd_vars = [Var(_plain(ops[k].aval)) for k in fwd]
        comp_vars = [Var(a) for a in comp_avals]
        for (s, i), r in zip(per_branch[bi], res):
            if s == "fwd":
                fwd_vars[i] = r
            else:
                comp_vars[i] = r
        uk_invars = list(uj.invars[len(res):])
        unknown_branches.append(ClosedJaxpr(
            Jaxpr((), fwd_vars + comp_vars + uk_invars, uj.outvars, uj.eqns), []))

    kb = tuple(known_branches)
    res_vars = [Var(a) for a in comp_avals]
    index = eqn.invars[0]
    known_outvars = [eqn.outvars[i] for i in order[:nko]]
    unknown_outvars = [eqn.outvars[i] for i in order[nko:]]
    known_eqns = []
    if known_outvars or res_vars:
        known_eqns.append(Eqn(cond_p, [index] + known_ops, known_outvars + res_vars,
                              dict(branches=kb), eqn.source))
    unknown_eqns = []
    if unknown_outvars:
        unknown_eqns.append(Eqn(cond_p, [index] + [ops[k] for k in fwd] + res_vars + uk_ops,
                                unknown_outvars, dict(branches=tuple(unknown_branches)),
                                eqn.source))
    return known_eqns, unknown_eqns


def _cond_transpose(cts, index, *ops, branches):
    assert not isinstance(index, UndefinedPrimal)
    lin = [isinstance(o, UndefinedPrimal) for o in ops]
    if all(isinstance(c, Zero) for c in cts):
        return [None] + [Zero(_plain(o.aval)) if l else None for o, l in zip(ops, lin)]
    res = [o for o, l in zip(ops, lin) if not l]
    avals = branches[0].in_avals
    out_avals = branches[0].out_avals
    ct_nz = [not isinstance(c, Zero) for c in cts]
    res_avals = [a for a, l in zip(avals, lin) if not l]
    ct_avals = [a for a, z in zip(out_avals, ct_nz) if z]

    def transposed(b):
        def fun(*xs):
            rit, cit = iter(xs[:len(res_avals)]), iter(xs[len(res_avals):])
            args = [None if l else next(rit) for l in lin]
            cts_out = [next(cit) if z else _zero_tangent(a) for z, a in zip(ct_nz, out_avals)]
            cts_in = backward_pass(b.jaxpr, b.consts, lin, args, cts_out)
            return [P.instantiate(c) for c, l in zip(cts_in, lin) if l]
        return _trace(fun, res_avals + ct_avals, "cond_transpose")

    new, consts = _join_branches([transposed(b) for b in branches])
    outs = cond_p.bind(index, *consts, *res, *[c for c in cts if not isinstance(c, Zero)],
                       branches=new)
    it = iter(outs)
    return [None] + [next(it) if l else None for l in lin]


cond_p.impl = _cond_impl
cond_p.abstract_eval = _cond_abstract_eval
cond_p.jvp = _cond_jvp
cond_p.batch = _cond_batch
cond_p.partial_eval = _cond_partial_eval
cond_p.transpose = _cond_transpose


# ============================================================================
# while: while[cond_jaxpr, body_jaxpr, ...](*cond_consts, *body_consts, *init)
# ============================================================================

while_p = Primitive("while", multiple_results=True)
while_p.call_like = True

_WHILE_REVERSE_FIX = (
    "reverse-mode differentiation (grad, vjp, jacrev) of ad.lax.while_loop needs a bound on "
    "the number of steps: pass max_steps=N to while_loop (the loop then stops after at most N "
    "steps and is differentiable in reverse mode), or use fori_loop with Python-int bounds, "
    "or scan. Forward mode (jvp, jacfwd) works without a bound.")


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    cc = list(args[:cond_nconsts])
    bc = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    cj, bj = cond_jaxpr, body_jaxpr
    steps = 0
    while max_steps is None or steps < max_steps:
        if not run_jaxpr(cj.jaxpr, cj.consts, cc + carry)[0]:
            break
        carry = run_jaxpr(bj.jaxpr, bj.consts, bc + carry)
        steps += 1
    return [np.asarray(c, a.dtype) for c, a in zip(carry, bj.out_avals)]


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    return [_plain(a) for a in body_jaxpr.out_avals]


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
               max_steps):
    ncc, nbc = cond_nconsts, body_nconsts
    nk = len(body_jaxpr.out_avals)
    cc, bc, init = (list(primals[:ncc]), list(primals[ncc:ncc + nbc]),
                    list(primals[ncc + nbc:]))
    bc_t, init_t = list(tangents[ncc:ncc + nbc]), list(tangents[ncc + nbc:])
    bc_nz = [_nonzero(t) and _is_float(a) for t, a in zip(bc_t, body_jaxpr.in_avals[:nbc])]
    carry_nz = _fixed_point(
        [_nonzero(t) and _is_float(a) for t, a in zip(init_t, body_jaxpr.out_avals)],
        lambda knz: _jvp_jaxpr(body_jaxpr, bc_nz + knz, False)[2])
    if not any(bc_nz) and not any(carry_nz):
        outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                            cond_nconsts=ncc, body_nconsts=nbc, max_steps=max_steps)
        return outs, [_zero_tangent(a) for a in body_jaxpr.out_avals]
    jb, consts, out_nz = _jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    assert out_nz == carry_nz
    # jvp layout: hoisted, bc, carry, bc_t, carry_t
    #  -> while layout: hoisted, bc, bc_t | carry, carry_t
    iv = list(jb.jaxpr.invars)
    nh, nbt = len(consts), sum(bc_nz)
    h, pb, pk = iv[:nh], iv[nh:nh + nbc], iv[nh + nbc:nh + nbc + nk]
    tb, tk = iv[nh + nbc + nk:nh + nbc + nk + nbt], iv[nh + nbc + nk + nbt:]
    body = _with_invars(jb, h + pb + tb + pk + tk)
    cj = cond_jaxpr.jaxpr
    kt_avals = [a for a, z in zip(body_jaxpr.out_avals, carry_nz) if z]
    cond = ClosedJaxpr(Jaxpr((), list(cj.invars) + [Var(a) for a in kt_avals], cj.outvars,
                             cj.eqns), [])
    bts = [t for t, z in zip(bc_t, bc_nz) if z]
    kts = [t if _nonzero(t) else P.full(a.shape, 0, a.dtype)
           for t, a, z in zip(init_t, body_jaxpr.out_avals, carry_nz) if z]
    outs = while_p.bind(*cc, *consts, *bc, *bts, *init, *kts, cond_jaxpr=cond, body_jaxpr=body,
                        cond_nconsts=ncc, body_nconsts=nh + nbc + nbt, max_steps=max_steps)
    it = iter(outs[nk:])
    touts = [next(it) if z else _zero_tangent(a) for z, a in zip(carry_nz, body_jaxpr.out_avals)]
    return outs[:nk], touts


def _while_batch(args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    size = _axis_size(args, dims)
    ncc, nbc = cond_nconsts, body_nconsts
    nk = len(body_jaxpr.out_avals)
    args = [_to_front(a, d) for a, d in zip(args, dims)]
    b = [d is not None for d in dims]
    cc_b, bc_b, init_b = b[:ncc], b[ncc:ncc + nbc], b[ncc + nbc:]
    carry_b = _fixed_point(init_b, lambda kb: _batch_jaxpr(body_jaxpr, size, bc_b + kb,
                                                           [False] * nk)[2])
    pred_b = _batch_jaxpr(cond_jaxpr, size, cc_b + carry_b, [False])[2][0]
    cc, bc, init = args[:ncc], args[ncc:ncc + nbc], args[ncc + nbc:]
    if not pred_b:
        cond, c_consts, _ = _batch_jaxpr(cond_jaxpr, size, cc_b + carry_b, [False])
        body, b_consts, _ = _batch_jaxpr(body_jaxpr, size, bc_b + carry_b, carry_b)
        init = [matchaxis(x, 0 if xb else None, 0 if kb else None, size)
                for x, xb, kb in zip(init, init_b, carry_b)]
        outs = while_p.bind(*c_consts, *cc, *b_consts, *bc, *init, cond_jaxpr=cond,
                            body_jaxpr=body, cond_nconsts=len(c_consts) + ncc,
                            body_nconsts=len(b_consts) + nbc, max_steps=max_steps)
        return outs, [0 if kb else None for kb in carry_b]

    # a predicate per lane: every carry is batched; the loop runs while any lane is
    # still going, and a lane that is done keeps its carry (select)
    cc_dims = [0 if x else None for x in cc_b]
    bc_dims = [0 if x else None for x in bc_b]
    carry_avals = [ShapedArray((size,) + a.shape, a.dtype) for a in body_jaxpr.out_avals]
    cc_avals = [P.aval_of(x) for x in cc]
    bc_avals = [P.aval_of(x) for x in bc]

    def lanes_pred(cc, carry):
        (p,), (d,) = batch_eval(cond_jaxpr.jaxpr, cond_jaxpr.consts, list(cc) + list(carry),
                                cc_dims + [0] * nk)
        return matchaxis(p, d, 0, size)

    def cond_fun(*a):
        return [P.reduce_or_p.bind(lanes_pred(a[:ncc], a[ncc:]), axes=(0,))]

    def body_fun(*a):
        cc, bc, carry = a[:ncc], a[ncc:ncc + nbc], list(a[ncc + nbc:])
        pred = lanes_pred(cc, carry)
        new, ds = batch_eval(body_jaxpr.jaxpr, body_jaxpr.consts, list(bc) + carry,
                             bc_dims + [0] * nk)
        new = [matchaxis(x, d, 0, size) for x, d in zip(new, ds)]
        return [P.select(_bcast_pred(pred, n), n, c) for n, c in zip(new, carry)]

    cond, c_consts = _trace(cond_fun, cc_avals + carry_avals, "while_cond")
    body, b_consts = _trace(body_fun, cc_avals + bc_avals + carry_avals, "while_body")
    init = [matchaxis(x, 0 if xb else None, 0, size) for x, xb in zip(init, init_b)]
    outs = while_p.bind(*c_consts, *cc, *b_consts, *cc, *bc, *init, cond_jaxpr=cond,
                        body_jaxpr=body, cond_nconsts=len(c_consts) + ncc,
                        body_nconsts=len(b_consts) + ncc + nbc, max_steps=max_steps)
    return outs, [0] * nk


def _while_as_scan(eqn):
    """A bounded while as a scan of ``max_steps`` steps of ``cond(pred, body, identity)``:
    the same values, and reverse-differentiable."""
    p = eqn.params
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cc_avals, bc_avals = cj.in_avals[:ncc], bj.in_avals[:nbc]
    k_avals = bj.out_avals
    # built structurally: a partial-evaluation rule emits equations, not traced values
    k_vars = [Var(a) for a in k_avals]
    keep = Jaxpr((), [Var(a) for a in bc_avals] + k_vars, k_vars, [])
    cc_vars, carry_vars = list(cj.jaxpr.invars[:ncc]), list(cj.jaxpr.invars[ncc:])
    bc_vars = [Var(a) for a in bc_avals]
    idx = Var(ShapedArray((), np.int32))
    outs = [Var(a) for a in k_avals]
    body = Jaxpr((), cc_vars + bc_vars + carry_vars, outs, list(cj.jaxpr.eqns) + [
        Eqn(P.convert_element_type_p, [cj.jaxpr.outvars[0]], [idx],
            dict(new_dtype=np.dtype(np.int32)), eqn.source),
        Eqn(cond_p, [idx] + bc_vars + carry_vars, outs,
            dict(branches=(ClosedJaxpr(keep, []), bj)), eqn.source)])
    assert not cj.consts
    return Eqn(scan_p, eqn.invars, eqn.outvars,
               dict(jaxpr=ClosedJaxpr(body, []), num_consts=ncc + nbc, num_carry=len(k_avals),
                    length=int(p["max_steps"]), reverse=False), eqn.source)


def _while_partial_eval(eqn, unknowns):
    p = eqn.params
    if p["max_steps"] is not None:
        return _scan_partial_eval(_while_as_scan(eqn), unknowns)
    # unbounded: known carries run in a known while; the unknown outputs come from the
    # whole loop run again (forward mode through linearize works; transposing it raises)
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    nk = len(bj.out_avals)
    cc_uk, bc_uk = list(unknowns[:ncc]), list(unknowns[ncc:ncc + nbc])
    carry_uk = _fixed_point(unknowns[ncc + nbc:], lambda kuk: _pe_out_unknowns(
        bj.jaxpr, bc_uk + kuk))
    cond_uk = _pe_out_unknowns(cj.jaxpr, cc_uk + carry_uk)[0]
    if cond_uk or all(carry_uk):
        return [], [eqn]
    kc, _, _, _ = _split_body(cj, cc_uk + carry_uk, [False])
    kb, _, _, _ = _split_body(bj, bc_uk + carry_uk, carry_uk)
    nko = sum(not u for u in carry_uk)
    kc = dce_jaxpr(Jaxpr((), kc.invars, kc.outvars[:1], kc.eqns))[0]
    kb = dce_jaxpr(Jaxpr((), kb.invars, kb.outvars[:nko], kb.eqns))[0]
    ins = eqn.invars
    kc_ins = [v for v, u in zip(ins[:ncc], cc_uk) if not u]
    kb_ins = [v for v, u in zip(ins[ncc:ncc + nbc], bc_uk) if not u]
    k_init = [v for v, u in zip(ins[ncc + nbc:], carry_uk) if not u]
    known = Eqn(while_p, kc_ins + kb_ins + k_init,
                [v for v, u in zip(eqn.outvars, carry_uk) if not u],
                dict(p, cond_jaxpr=ClosedJaxpr(kc, []), body_jaxpr=ClosedJaxpr(kb, []),
                     cond_nconsts=len(kc_ins), body_nconsts=len(kb_ins)), eqn.source)
    unknown = eqn.replace(outvars=[v if u else Var(v.aval)
                                   for v, u in zip(eqn.outvars, carry_uk)])
    return [known], [unknown]


def _while_transpose(cts, *args, **params):
    from .core import trace_state      # backward_pass sets it to the while_loop's line
    raise UnsupportedError(_WHILE_REVERSE_FIX, source=trace_state.source or user_source())


while_p.impl = _while_impl
while_p.abstract_eval = _while_abstract_eval
while_p.jvp = _while_jvp
while_p.batch = _while_batch
while_p.partial_eval = _while_partial_eval
while_p.transpose = _while_transpose


# ============================================================================
# scan: scan[jaxpr, num_consts, num_carry, length, reverse](*consts, *init, *xs)
# ============================================================================

scan_p = Primitive("scan", multiple_results=True)
scan_p.call_like = True


def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse):
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = [np.asarray(x) for x in args[num_consts + num_carry:]]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    j, jc = jaxpr.jaxpr, jaxpr.consts
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = run_jaxpr(j, jc, consts + carry + [x[i] for x in xs])
        carry = outs[:num_carry]
        for y, o in zip(ys, outs[num_carry:]):
            y[i] = o
    carry = [np.asarray(c, a.dtype) for c, a in zip(carry, jaxpr.out_avals[:num_carry])]
    return carry + ys


def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse):
    k_in = jaxpr.in_avals[num_consts:num_consts + num_carry]
    k_out = jaxpr.out_avals[:num_carry]
    for i, (a, b) in enumerate(zip(k_in, k_out)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise DTypeError(f"scan: carry {i} enters the body as {a.str_short()} and leaves "
                             f"it as {b.str_short()}")
    for a in avals[num_consts + num_carry:]:
        if not a.shape or a.shape[0] != length:
            raise ShapeError(f"scan: a scanned input of shape {a.shape} does not have the "
                             f"leading length {length}")
    return ([_plain(a) for a in k_out]
            + [ShapedArray((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]])


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    avals = jaxpr.in_avals
    nz = [_nonzero(t) and _is_float(a) for t, a in zip(tangents, avals)]
    c_nz, x_nz = nz[:nc], nz[nc + nk:]
    k_nz = _fixed_point(nz[nc:nc + nk],
                        lambda knz: _jvp_jaxpr(jaxpr, c_nz + knz + x_nz, False)[2][:nk])
    ny = len(jaxpr.out_avals) - nk
    jj, consts, out_nz = _jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + [False] * ny)
    assert out_nz[:nk] == k_nz
    y_nz = out_nz[nk:]
    # jvp layout: hoisted, consts, carry, xs, consts_t, carry_t, xs_t
    #  -> scan layout: hoisted, consts, consts_t | carry, carry_t | xs, xs_t
    iv = list(jj.jaxpr.invars)
    nh, n = len(consts), len(avals)
    h, pr, tg = iv[:nh], iv[nh:nh + n], iv[nh + n:]
    nct, nkt = sum(c_nz), sum(k_nz)
    ov = list(jj.jaxpr.outvars)
    po, to = ov[:nk + ny], ov[nk + ny:]
    body = _with_invars(jj, h + pr[:nc] + tg[:nct] + pr[nc:nc + nk] + tg[nct:nct + nkt]
                        + pr[nc + nk:] + tg[nct + nkt:],
                        po[:nk] + to[:nkt] + po[nk:] + to[nkt:])
    c, k, x = primals[:nc], primals[nc:nc + nk], primals[nc + nk:]
    ct = [t for t, z in zip(tangents[:nc], c_nz) if z]
    kt = [(P.full(a.shape, 0, a.dtype) if not _nonzero(t) else t)
          for t, a, z in zip(tangents[nc:nc + nk], avals[nc:nc + nk], k_nz) if z]
    xt = [t for t, z in zip(tangents[nc + nk:], x_nz) if z]
    outs = scan_p.bind(*consts, *c, *ct, *k, *kt, *x, *xt, jaxpr=body,
                       num_consts=nh + nc + nct, num_carry=nk + nkt, length=length,
                       reverse=reverse)
    k_out, kt_out = outs[:nk], iter(outs[nk:nk + nkt])
    y_out, yt_out = outs[nk + nkt:nk + nkt + ny], iter(outs[nk + nkt + ny:])
    out_avals = _scan_abstract_eval(*[P.aval_of(a) for a in primals], jaxpr=jaxpr,
                                    num_consts=nc, num_carry=nk, length=length, reverse=reverse)
    touts = ([next(kt_out) if z else _zero_tangent(a) for z, a in zip(k_nz, out_avals[:nk])]
             + [next(yt_out) if z else _zero_tangent(a) for z, a in zip(y_nz, out_avals[nk:])])
    return list(k_out) + list(y_out), touts


def _scan_batch(args, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    size = _axis_size(args, dims)
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    b = [d is not None for d in dims]
    c_b, x_b = b[:nc], b[nc + nk:]
    k_b = _fixed_point(b[nc:nc + nk], lambda kb: _batch_jaxpr(jaxpr, size, c_b + kb + x_b,
                                                              [False] * (nk + ny))[2][:nk])
    body, consts, out_b = _batch_jaxpr(jaxpr, size, c_b + k_b + x_b, k_b + [False] * ny)
    c = [_to_front(a, d) for a, d in zip(args[:nc], dims[:nc])]
    k = [matchaxis(a, d, 0 if kb else None, size)
         for a, d, kb in zip(args[nc:nc + nk], dims[nc:nc + nk], k_b)]
    # xs keep the scanned axis first: their batch axis goes to position 1
    x = [a if d is None else move_axis(a, d, 1) for a, d in zip(args[nc + nk:], dims[nc + nk:])]
    outs = scan_p.bind(*consts, *c, *k, *x, jaxpr=body, num_consts=len(consts) + nc,
                       num_carry=nk, length=length, reverse=reverse)
    return outs, [0 if kb else None for kb in k_b] + [1 if yb else None for yb in out_b[nk:]]


def _scan_partial_eval(eqn, unknowns):
    p = eqn.params
    jaxpr, nc, nk, length = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"]
    j = jaxpr.jaxpr
    ny = len(j.outvars) - nk
    c_uk, x_uk = list(unknowns[:nc]), list(unknowns[nc + nk:])
    k_uk = _fixed_point(unknowns[nc:nc + nk],
                        lambda kuk: _pe_out_unknowns(j, c_uk + kuk + x_uk)[:nk])
    in_uk = c_uk + k_uk + x_uk
    out_uk = k_uk + _pe_out_unknowns(j, in_uk)[nk:]
    kj, uj, residuals, order = _split_body(jaxpr, in_uk, out_uk)
    nko = sum(not u for u in out_uk)

    # residuals that are known consts or known xs are read from outside the loop; the
    # others are per-step values: extra stacked outputs of the known scan
    const_pos = {v: i for i, v in enumerate(j.invars[:nc]) if not c_uk[i]}
    xs_pos = {v: i for i, v in enumerate(j.invars[nc + nk:]) if not x_uk[i]}
    r_const = [r for r in residuals if r in const_pos]
    r_xs = [r for r in residuals if r in xs_pos and r not in const_pos]
    r_stack = [r for r in residuals if r not in const_pos and r not in xs_pos]

    known_body = dce_jaxpr(Jaxpr((), kj.invars, list(kj.outvars[:nko]) + r_stack, kj.eqns))[0]
    stacked = [Var(ShapedArray((length,) + r.aval.shape, r.aval.dtype)) for r in r_stack]
    known_outvars = [eqn.outvars[i] for i in order[:nko]]
    ins = eqn.invars
    known_eqns = []
    if known_outvars or stacked:
        known_eqns.append(Eqn(
            scan_p, [v for v, u in zip(ins, in_uk) if not u], known_outvars + stacked,
            dict(p, jaxpr=ClosedJaxpr(known_body, []), num_consts=nc - sum(c_uk),
                 num_carry=nk - sum(k_uk)), eqn.source))

    unknown_outvars = [eqn.outvars[i] for i in order[nko:]]
    if not unknown_outvars:
        return known_eqns, []
    uk_iv = list(uj.invars[len(residuals):])
    n_uc, n_uk = sum(c_uk), sum(k_uk)
    u_invars = (r_const + uk_iv[:n_uc] + uk_iv[n_uc:n_uc + n_uk] + uk_iv[n_uc + n_uk:]
                + r_stack + r_xs)
    uk_ins = [v for v, u in zip(ins, in_uk) if u]
    u_ins = ([ins[const_pos[r]] for r in r_const] + uk_ins + stacked
             + [ins[nc + nk + xs_pos[r]] for r in r_xs])
    unknown = Eqn(scan_p, u_ins, unknown_outvars,
                  dict(p, jaxpr=ClosedJaxpr(Jaxpr((), u_invars, uj.outvars, uj.eqns), []),
                       num_consts=len(r_const) + n_uc, num_carry=n_uk), eqn.source)
    return known_eqns, [unknown]


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    consts, init, xs = args[:nc], args[nc:nc + nk], args[nc + nk:]
    avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    c_lin = [isinstance(a, UndefinedPrimal) for a in consts]
    x_lin = [isinstance(a, UndefinedPrimal) for a in xs]
    if all(isinstance(c, Zero) for c in cts):
        return [Zero(_plain(a.aval)) if isinstance(a, UndefinedPrimal) else None for a in args]
    ct_carry, ct_ys = list(cts[:nk]), list(cts[nk:])
    y_nz = [not isinstance(c, Zero) for c in ct_ys]
    res_c = [a for a, l in zip(consts, c_lin) if not l]
    res_x = [a for a, l in zip(xs, x_lin) if not l]
    c_avals, k_avals, x_avals = avals[:nc], avals[nc:nc + nk], avals[nc + nk:]
    y_avals = out_avals[nk:]
    lc_avals = [a for a, l in zip(c_avals, c_lin) if l]
    t_avals = ([a for a, l in zip(c_avals, c_lin) if not l] + lc_avals + list(k_avals)
               + [a for a, l in zip(x_avals, x_lin) if not l]
               + [a for a, z in zip(y_avals, y_nz) if z])
    linear = c_lin + [True] * nk + x_lin
    nlc = len(lc_avals)

    def body_t(*a):
        it = iter(a)
        rc = [next(it) for _ in res_c]
        acc = [next(it) for _ in range(nlc)]
        ctk = [next(it) for _ in range(nk)]
        rx = [next(it) for _ in res_x]
        rci, rxi = iter(rc), iter(rx)
        b_args = ([None if l else next(rci) for l in c_lin] + [None] * nk
                  + [None if l else next(rxi) for l in x_lin])
        cts_out = ctk + [next(it) if z else _zero_tangent(ya) for z, ya in zip(y_nz, y_avals)]
        cts_in = backward_pass(jaxpr.jaxpr, jaxpr.consts, linear, b_args, cts_out)
        c_cts = [c for c, l in zip(cts_in[:nc], c_lin) if l]
        new_acc = [s if isinstance(c, Zero) else P.add(s, c) for s, c in zip(acc, c_cts)]
        k_cts = [P.instantiate(c) for c in cts_in[nc:nc + nk]]
        x_cts = [P.instantiate(c) for c, l in zip(cts_in[nc + nk:], x_lin) if l]
        return new_acc + k_cts + x_cts

    body, consts_h = _trace(body_t, t_avals, "scan_transpose")
    acc0 = [P.full(a.shape, 0, a.dtype) for a in lc_avals]
    ct_k = [P.full(a.shape, 0, a.dtype) if isinstance(c, Zero) else c
            for c, a in zip(ct_carry, k_avals)]
    outs = scan_p.bind(*consts_h, *res_c, *acc0, *ct_k, *res_x,
                       *[c for c, z in zip(ct_ys, y_nz) if z], jaxpr=body,
                       num_consts=len(consts_h) + len(res_c), num_carry=nlc + nk, length=length,
                       reverse=not reverse)
    c_out, k_out, x_out = iter(outs[:nlc]), outs[nlc:nlc + nk], iter(outs[nlc + nk:])
    return ([next(c_out) if l else None for l in c_lin]
            + [c if isinstance(a, UndefinedPrimal) else None for c, a in zip(k_out, init)]
            + [next(x_out) if l else None for l in x_lin])


scan_p.impl = _scan_impl
scan_p.abstract_eval = _scan_abstract_eval
scan_p.jvp = _scan_jvp
scan_p.batch = _scan_batch
scan_p.partial_eval = _scan_partial_eval
scan_p.transpose = _scan_transpose


# ============================================================================
# The user-facing functions
# ============================================================================

def _as_array(x):
    from .api import as_array
    return as_array(x)


def _output(tree):
    from .api import to_output
    from .tree_util import tree_map
    return tree_map(lambda x: x if isinstance(x, Tracer) else to_output(np.asarray(x)), tree)


def _is_python_scalar(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _trace_user(fun, in_tree, in_avals, who, out_dtypes=None):
    """Trace a user function of pytrees. Python-scalar outputs take ``out_dtypes[i]``.

    Returns ``(ClosedJaxpr, consts, out_tree, weak)``: ``weak[i]`` marks outputs that were
    Python scalars.
    """
    box = {}

    def flat_fun(*tracers):
        out = fun(*tree_unflatten(in_tree, list(tracers)))
        leaves, tree = tree_flatten(out)
        box["tree"] = tree
        box["weak"] = [_is_python_scalar(l) for l in leaves]
        res = []
        for i, l in enumerate(leaves):
            if _is_python_scalar(l) and out_dtypes is not None and i < len(out_dtypes) \
                    and out_dtypes[i] is not None:
                l = np.asarray(l, out_dtypes[i])
            res.append(_as_array(l))
        return res

    try:
        closed, consts = _trace(flat_fun, in_avals, who)
    except ConcretizationError as err:
        raise ConcretizationError(
            f"{err.args[0].split(chr(10))[0]}\nInside the functions given to ad.lax.{who} "
            f"values are always abstract: use ad.lax.cond / switch / while_loop / anp.where "
            f"for decisions on traced values there.", source=err.source) from None
    return closed, consts, box["tree"], box["weak"]


def _located(cls, message):
    """A builtin exception whose message ends with the user's source line."""
    src = user_source()
    return cls(f"{message}\n  (at {src})" if src else message)


def _tuple_tree(*trees):
    """The structure of the argument tuple ``(tree_0, tree_1, ...)``."""
    from .tree_util import PyTreeDef
    return PyTreeDef(tuple, None, tuple(trees))


def _flat_operands(tree_of_values):
    leaves, tree = tree_flatten(tree_of_values)
    leaves = [_as_array(l) for l in leaves]
    return leaves, tree, [_plain(P.aval_of(l)) for l in leaves]


def _describe(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _check_same(what_a, avals_a, what_b, avals_b, tree_a, tree_b, who, fix):
    if tree_a != tree_b:
        raise _located(TypeError,
                       f"ad.lax.{who}: {what_a} has structure {tree_a} but {what_b} has "
                       f"structure {tree_b}; they must match. {fix}")
    for i, (a, b) in enumerate(zip(avals_a, avals_b)):
        if a.shape != b.shape:
            raise ShapeError(f"ad.lax.{who}: leaf {i} of {what_a} has shape {a.shape} but of "
                             f"{what_b} shape {b.shape}: {what_a} {_describe(avals_a)}, "
                             f"{what_b} {_describe(avals_b)}. {fix}", source=user_source())
        if a.dtype != b.dtype:
            raise DTypeError(f"ad.lax.{who}: leaf {i} of {what_a} has dtype {a.dtype} but of "
                             f"{what_b} dtype {b.dtype}: {what_a} {_describe(avals_a)}, "
                             f"{what_b} {_describe(avals_b)}. {fix}", source=user_source())


def _scalar_operand(x, who, what):
    x = _as_array(x)
    a = P.aval_of(x)
    if a.shape != ():
        raise ShapeError(f"ad.lax.{who}: {what} must be a scalar, got shape {a.shape}. For an "
                         f"elementwise choice use anp.where or ad.lax.select.",
                         source=user_source())
    return x, a


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one primitive.

    Both branches are traced; they must return the same pytree of shapes and dtypes.
    Under ``vmap`` a batched ``pred`` becomes a ``select`` of both branches.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = lambda x: ad.lax.cond(x > 0, anp.sin, lambda x: x ** 2, x)
    >>> f(np.float64(-3.0)), ad.grad(f)(-3.0)
    (np.float64(9.0), np.float64(-6.0))
    >>> ad.vmap(f)(np.array([-1.0, 2.0]))
    array([1.        , 0.90929743])
    """
    if not callable(true_fun) or not callable(false_fun):
        raise _located(TypeError,
                       "ad.lax.cond(pred, true_fun, false_fun, *operands): true_fun and "
                       "false_fun must be callables")
    pred, a = _scalar_operand(pred, "cond", "pred")
    if a.dtype != np.bool_:
        pred = P.ne(pred, np.asarray(0, a.dtype))
    index = P.convert(pred, np.int32)
    return _cond_bind(index, (false_fun, true_fun), operands, "cond")


def switch(index, branches, *operands):
    """``branches[index](*operands)``; ``index`` is clamped to ``[0, len(branches) - 1]``.

    >>> import numpy as np, autodiff as ad
    >>> fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    >>> [float(ad.lax.switch(i, fs, 2.0)) for i in (0, 1, 2, 7)]
    [3.0, 20.0, -2.0, -2.0]
    """
    branches = tuple(branches)
    if not branches or not all(callable(b) for b in branches):
        raise _located(TypeError,
                       "ad.lax.switch(index, branches, *operands): branches must be a "
                       "non-empty sequence of callables")
    index, a = _scalar_operand(index, "switch", "index")
    if a.dtype.kind not in "iub":
        raise DTypeError(f"ad.lax.switch: index must be an integer, got {a.dtype}",
                         source=user_source())
    if len(branches) == 1:
        return branches[0](*operands)
    index = P.convert(index, np.int32)
    index = P.max_(P.min_(index, np.int32(len(branches) - 1)), np.int32(0))
    return _cond_bind(index, branches, operands, "switch")


def _cond_bind(index, funs, operands, who):
    ops, ops_tree, avals = _flat_operands(tuple(operands))
    traced = [_trace_user(f, ops_tree, avals, who) for f in funs]
    # a Python-scalar result takes the dtype another branch gives that output
    n_out = min(len(t[3]) for t in traced)
    target = []
    for i in range(n_out):
        strong = [t[0].out_avals[i].dtype for t in traced if not t[3][i]]
        target.append(strong[0] if strong else None)
    for k, (f, t) in enumerate(zip(funs, traced)):
        if any(t[3][i] and target[i] is not None and t[0].out_avals[i].dtype != target[i]
               for i in range(n_out)):
            traced[k] = _trace_user(f, ops_tree, avals, who, out_dtypes=target)
    names = (["false_fun", "true_fun"] if who == "cond"
             else [f"branches[{i}]" for i in range(len(funs))])
    for name, t in zip(names[1:], traced[1:]):
        _check_same(f"the output of {names[0]}", traced[0][0].out_avals,
                    f"the output of {name}", t[0].out_avals, traced[0][2], t[2], who,
                    "Every branch must return the same types.")
    branches, consts = _join_branches([(t[0], t[1]) for t in traced])
    outs = cond_p.bind(index, *consts, *ops, branches=branches)
    return _output(tree_unflatten(traced[0][2], outs))


def while_loop(cond_fun, body_fun, init_val, max_steps=None):
    """``while cond_fun(val): val = body_fun(val)``, as one primitive.

    ``max_steps=N`` bounds the loop (it stops after at most ``N`` steps even if
    ``cond_fun`` still holds) and makes it differentiable in reverse mode; without it
    only forward mode (``jvp``, ``jacfwd``) is available, as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> def newton_cbrt(a):     # solve x**3 = a
    ...     step = lambda x: x - (x ** 3 - a) / (3 * x ** 2)
    ...     return ad.lax.while_loop(lambda x: abs(x ** 3 - a) > 1e-12, step, 1.0 + a / 3,
    ...                              max_steps=50)
    >>> float(newton_cbrt(8.0)), float(ad.grad(newton_cbrt)(8.0))     # 1 / (3 a^(2/3))
    (2.0, 0.08333333333333333)
    """
    if max_steps is not None:
        if isinstance(max_steps, Tracer) or int(max_steps) != max_steps or max_steps < 0:
            raise _located(TypeError,
                           f"ad.lax.while_loop: max_steps must be a non-negative Python int, "
                           f"got {max_steps!r}")
        max_steps = int(max_steps)
    init, tree, avals = _flat_operands(init_val)
    arg_tree = _tuple_tree(tree)
    cj, c_consts, c_tree, _ = _trace_user(cond_fun, arg_tree, avals, "while_loop")
    out = cj.out_avals
    if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
        raise DTypeError(f"ad.lax.while_loop: cond_fun must return a boolean scalar, got "
                         f"{_describe(out)}", source=user_source())
    bj, b_consts, b_tree, _ = _trace_user(body_fun, arg_tree, avals, "while_loop",
                                          out_dtypes=[a.dtype for a in avals])
    _check_same("the loop value (init_val)", avals, "the output of body_fun", bj.out_avals,
                tree, b_tree, "while_loop",
                "body_fun must return a value of the same types as init_val.")
    outs = while_p.bind(*c_consts, *b_consts, *init, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(c_consts), body_nconsts=len(b_consts),
                        max_steps=max_steps)
    return _output(tree_unflatten(tree, outs))


def fori_loop(lower, upper, body_fun, init_val):
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With Python-int bounds it is a ``scan`` (differentiable in both modes); with traced
    bounds a ``while_loop`` (forward mode only).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.fori_loop(0, 5, lambda i, x: x * 2.0 + i, 1.0)
    np.float64(58.0)
    >>> float(ad.grad(lambda x: ad.lax.fori_loop(0, 5, lambda i, x: x * 2.0 + i, x))(1.0))
    32.0
    """
    static = not isinstance(lower, Tracer) and not isinstance(upper, Tracer)
    if static:
        lo, hi = np.asarray(lower), np.asarray(upper)
        if lo.shape or hi.shape or lo.dtype.kind not in "iu" or hi.dtype.kind not in "iu":
            raise _located(TypeError,
                           f"ad.lax.fori_loop: lower and upper must be integer scalars, got "
                           f"{lower!r} and {upper!r}")
        idt = np.result_type(lo.dtype, hi.dtype)
        lo_i, hi_i = int(lo), int(hi)

        def step(carry, _):
            i, x = carry
            return (i + np.asarray(1, idt), body_fun(i, x)), None

        (_, out), _ = scan(step, (np.asarray(lo_i, idt), init_val), None,
                           length=max(hi_i - lo_i, 0))
        return out
    lower, upper = _as_array(lower), _as_array(upper)
    for b in (lower, upper):
        a = P.aval_of(b)
        if a.shape != () or a.dtype.kind not in "iu":
            raise _located(TypeError,
                           f"ad.lax.fori_loop: lower and upper must be integer scalars, got "
                           f"{a.str_short()}")
    idt = np.result_type(P.dtype_of(lower), P.dtype_of(upper))
    lower, upper = P.convert(lower, idt), P.convert(upper, idt)

    def body(carry):
        i, hi, x = carry
        return i + np.asarray(1, idt), hi, body_fun(i, x)

    _, _, out = while_loop(lambda c: c[0] < c[1], body, (lower, upper, init_val))
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``. One equation in the IR whatever the length.

    ``f`` takes and returns pytrees; ``xs`` may be ``None`` with ``length`` given;
    ``reverse=True`` walks ``xs`` from the end (ys stay aligned with xs). ``unroll``
    is accepted for JAX compatibility and ignored.

    >>> import numpy as np, autodiff as ad
    >>> def running_max(c, x):
    ...     m = ad.numpy.maximum(c, x)
    ...     return m, m
    >>> ad.lax.scan(running_max, -np.inf, np.array([1.0, 3.0, 2.0, 5.0]))
    (np.float64(5.0), array([1., 3., 3., 5.]))
    """
    if not callable(f):
        raise _located(TypeError,
                       "ad.lax.scan(f, init, xs): f must be a callable (carry, x) -> (carry, y)")
    x_leaves, x_tree, x_full = _flat_operands(xs)
    lengths = set()
    for a in x_full:
        if not a.shape:
            raise ShapeError(f"ad.lax.scan: every leaf of xs needs a leading axis to scan "
                             f"over; got a scalar in xs {_describe(x_full)}",
                             source=user_source())
        lengths.add(a.shape[0])
    if length is not None:
        if isinstance(length, Tracer) or int(length) != length or length < 0:
            raise _located(TypeError,
                           f"ad.lax.scan: length must be a non-negative Python int, got "
                           f"{length!r}")
        lengths.add(int(length))
    if len(lengths) > 1:
        raise ShapeError(f"ad.lax.scan: xs leaves have different leading lengths "
                         f"{sorted(lengths)} (xs {_describe(x_full)}"
                         f"{'' if length is None else f', length={length}'})",
                         source=user_source())
    if not lengths:
        raise _located(ValueError,
                       "ad.lax.scan: with xs=None, give the number of steps as length=")
    n = lengths.pop()
    init_leaves, k_tree, k_avals = _flat_operands(init)
    x_avals = [ShapedArray(a.shape[1:], a.dtype) for a in x_full]
    nk = len(init_leaves)

    def body(carry, x):
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise _located(TypeError,
                           "ad.lax.scan: f must return a pair (new_carry, y); got "
                           f"{type(out).__name__}")
        return tuple(out)

    in_tree = _tuple_tree(k_tree, x_tree)
    jc, consts, out_tree, _ = _trace_user(body, in_tree, k_avals + x_avals, "scan",
                                          out_dtypes=[a.dtype for a in k_avals])
    c_tree, y_tree = out_tree.children
    _check_same("the carry (init)", k_avals, "the carry returned by f", jc.out_avals[:nk],
                k_tree, c_tree, "scan",
                "f must return a carry of the same types as init (e.g. start from 0.0, "
                "not 0, for a float carry).")
    outs = scan_p.bind(*consts, *init_leaves, *x_leaves, jaxpr=jc, num_consts=len(consts),
                       num_carry=nk, length=n, reverse=bool(reverse))
    return (_output(tree_unflatten(k_tree, outs[:nk])),
            _output(tree_unflatten(y_tree, outs[nk:])))


def map(f, xs, *, batch_size=None):
    """``stack([f(x) for x in xs])`` as a ``scan`` (one equation, any length).
    ``batch_size=b``: ``f`` is vmapped over blocks of ``b`` and the scan runs over the
    blocks (a remainder block is vmapped on its own), as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.map(lambda x: x ** 2, np.arange(3.0))
    array([0., 1., 4.])
    >>> ad.lax.map(lambda x: x ** 2, np.arange(5.0), batch_size=2)
    array([ 0.,  1.,  4.,  9., 16.])
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    from .api import vmap
    from . import numpy as anp
    from .tree_util import tree_map
    leaves = tree_flatten(xs)[0]
    n = P.shape_of(leaves[0])[0]
    b = int(batch_size)
    nb, rest = divmod(n, b) if b > 0 else (0, n)
    parts = []
    if nb:
        blocks = tree_map(lambda x: anp.reshape(x[:nb * b], (nb, b) + tuple(P.shape_of(x)[1:])), xs)
        ys = scan(lambda c, xb: (c, vmap(f)(xb)), (), blocks)[1]
        parts.append(tree_map(lambda y: anp.reshape(y, (nb * b,) + tuple(P.shape_of(y)[2:])), ys))
    if rest:
        parts.append(vmap(f)(tree_map(lambda x: x[nb * b:], xs)))
    if len(parts) == 1:
        return parts[0]
    return tree_map(lambda a, c: anp.concatenate([a, c], axis=0), parts[0], parts[1])


# ============================================================================
# Thin wrappers over primitives, with JAX's names and signatures
# ============================================================================

def _start_indices(starts):
    out = []
    for s in starts:
        if isinstance(s, Tracer):
            out.append(s if s.aval.dtype.kind in "iu" else P.convert(s, np.int64))
        else:
            out.append(np.asarray(s, dtype=np.int64))
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    """``operand[s0:s0+n0, s1:s1+n1, ...]`` with start indices that may be traced (sizes
    static). Starts are clamped so the slice stays in bounds, as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.jit(lambda x, i: ad.lax.dynamic_slice(x, (i,), (2,)))(np.arange(5.0), 3)
    array([3., 4.])
    """
    from .numpy._base import asarray, to_output
    out = P.dynamic_slice(asarray(operand), _start_indices(start_indices), slice_sizes)
    return out if isinstance(out, Tracer) else to_output(np.asarray(out))


def dynamic_update_slice(operand, update, start_indices):
    """``operand`` with the block at ``start_indices`` replaced by ``update`` (functional;
    starts may be traced and are clamped into bounds).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.dynamic_update_slice(np.zeros(4), np.ones(2), (1,))
    array([0., 1., 1., 0.])
    """
    from .numpy._base import asarray, promote, to_output
    x, u = promote(asarray(operand), asarray(update))
    out = P.dynamic_update_slice(x, u, _start_indices(start_indices))
    return out if isinstance(out, Tracer) else to_output(np.asarray(out))


def stop_gradient(x):
    """Identity whose derivative is zero, over pytrees (same as ``ad.stop_gradient``).

    >>> import autodiff as ad
    >>> ad.grad(lambda x: x * ad.lax.stop_gradient(x))(3.0)
    np.float64(3.0)
    """
    from .api import stop_gradient as _sg
    return _sg(x)


# ============================================================================
# More of jax.lax, composed from the primitives (autodiff/_lax_more.py)
# ============================================================================

from . import _lax_more  # noqa: E402

# names that would shadow builtins (max, min, ...) are served by __getattr__, so this
# module's own code keeps the builtins, and stay out of ``from autodiff.lax import *``
_SHADOWING = frozenset(("max", "min", "abs", "pow", "round", "slice"))
for _name in _lax_more.__all__:
    if _name not in _SHADOWING:
        globals().setdefault(_name, getattr(_lax_more, _name))
__all__ += [n for n in _lax_more.__all__ if n not in _SHADOWING and n not in __all__]
del _name


def __getattr__(name):
    if name in _SHADOWING:
        return getattr(_lax_more, name)
    raise AttributeError(f"module 'autodiff.lax' has no attribute {name!r}")
