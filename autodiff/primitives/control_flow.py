"""Control-flow primitives: ``cond``, ``while`` and ``scan``, each with all of its rules.

Each is one primitive carrying its bodies as sub-jaxprs, so a loop costs one equation in
the IR however many times it runs, and every transform sees it:

* ``cond``  -- ``cond[branches](index, *operands)``; branch ``index`` runs.
* ``while`` -- ``while[cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts,
  max_steps](*cond_consts, *body_consts, *init)``.
* ``scan``  -- ``scan[jaxpr, num_consts, num_carry, length, reverse](*consts, *init_carry,
  *xs)``; the body maps ``consts, carry, x-slices -> carry, y-slices`` and the outputs are
  the final carry and the stacked ys.

Sub-jaxprs are :class:`~autodiff.core.ClosedJaxpr` s without constants: values a body
closes over become leading operands. The bodies' forward-mode and batched programs are
built by the transforms' own ``jvp_jaxpr`` and ``batch_jaxpr`` (``as_body=True``); the
user-facing functions (``ad.lax.cond``, ``while_loop``, ``scan``, ...) are in
:mod:`autodiff.lax`.

>>> import numpy as np, autodiff as ad
>>> from autodiff.primitives.control_flow import scan_p
>>> cj = ad.make_jaxpr(lambda xs: ad.lax.scan(lambda c, x: (c + x, c), 0.0, xs))(np.ones(3))
>>> cj.jaxpr.eqns[0].primitive is scan_p
True
"""
import numpy as np

from .. import primitives as P
from ..backends.interpreter import hot_runner, run_jaxpr   # the reference evaluator runs bodies
from ..core import (ClosedJaxpr, Eqn, Jaxpr, eqn_effectful, Literal, Primitive, ShapedArray, UndefinedPrimal, Var,
                    Zero, hoist_consts, trace_flat, user_source)
from ..core import eval_jaxpr, trace_state
from ..errors import DTypeError, ShapeError, UnsupportedError
from ..transforms.jet import jet_eval
from ..transforms.jvp import jvp_jaxpr
from ..transforms.partial_eval import dce_jaxpr, partial_eval_jaxpr, split_equations
from ..transforms.transpose import backward_pass
from ..transforms.vmap import batch_eval, batch_jaxpr, matchaxis

__all__ = ["cond_p", "while_p", "scan_p", "trace_body", "join_branches"]


def _declare(prim, **rules):
    """A control-flow primitive's rules, set in one statement (each is written out below)."""
    for name, rule in rules.items():
        setattr(prim, name, rule)


def _batch_body(closed, size, in_batched, force_out):
    return batch_jaxpr(closed, size, in_batched, force_out, as_body=True)


# ============================================================================
# Helpers shared by the rules: building sub-jaxprs
# ============================================================================

def _is_float(aval):
    return np.issubdtype(aval.dtype, np.inexact)


def _plain(aval):
    return ShapedArray(aval.shape, aval.dtype)


def trace_body(fun, avals, name):
    """Trace ``fun(*tracers) -> list`` abstractly into a body: constants hoisted to leading
    inputs, weak types dropped. Returns ``(ClosedJaxpr, consts)``."""
    return hoist_consts(trace_flat(fun, [_plain(a) for a in avals], name=name))


def _with_invars(closed, invars, outvars=None):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr((), invars, j.outvars if outvars is None else outvars, j.eqns), [])


def join_branches(traced):
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


def _axis_size(args, dims):
    return next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)


# ============================================================================
# cond: cond[branches](index, *operands)
# ============================================================================

cond_p = Primitive("cond", multiple_results=True)
cond_p.call_like = True


def _cond_impl(index, *ops, branches):
    # clamped as lax.switch does; in Python, not np.clip (several microseconds a call,
    # paid once per step by a bounded while_loop run as a scan of cond)
    i, last = int(index), len(branches) - 1
    b = branches[0 if i < 0 else last if i > last else i]
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
        out_nz = [x or y for x, y in zip(out_nz, jvp_jaxpr(b, nz, False, as_body=True)[2])]
    traced = []
    for b in branches:
        jb, consts, _ = jvp_jaxpr(b, nz, out_nz, as_body=True)
        traced.append((jb, consts))
    new, consts = join_branches(traced)
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
        index = P.moveaxis(index, idim)
        last = np.asarray(len(branches) - 1, P.dtype_of(index))
        index = P.max_(P.min_(index, last), np.asarray(0, P.dtype_of(index)))
        # a branch sees its batched float operands through stop_gradient in the lanes that
        # take another branch: its derivative there (0 * inf = nan for sqrt at 0, say) is
        # not selected, and must not reach the operands in reverse mode either (as in JAX,
        # which also broadcasts the unbatched operands for this; here they stay unbatched,
        # not copied per lane)
        fl = [d is not None and _is_float(P.aval_of(o)) for o, d in zip(ops, odims)]
        wide = [P.moveaxis(o, d) if f else o for o, d, f in zip(ops, odims, fl)]
        wdims = [0 if f else d for d, f in zip(odims, fl)]
        res = None
        for i, b in enumerate(branches):
            pick = P.eq(index, np.asarray(i, P.dtype_of(index)))
            ops_i = [P.select(_bcast_pred(pick, o), o, P.stop_gradient_p.bind(o)) if f else o
                     for o, f in zip(wide, fl)]
            outs, ds = batch_eval(b.jaxpr, b.consts, ops_i, wdims)
            outs = [matchaxis(o, d, 0, size) for o, d in zip(outs, ds)]
            if res is None:
                res = outs
            else:
                res = [P.select(_bcast_pred(pick, o), o, r) for o, r in zip(outs, res)]
        # an output every branch forwards from the same operand is that operand, batched
        # or not (vmap's out_axes=None keeps working for it, as with JAX's forwarding)
        dims = [0] * n_out
        for k in range(n_out):
            src = {_forwarded(b.jaxpr, k) for b in branches}
            if len(src) == 1 and None not in src:
                m = src.pop()
                res[k], dims[k] = ops[m], odims[m]
        return res, dims
    in_b = [d is not None for d in odims]
    out_b = [False] * n_out
    for b in branches:
        out_b = [x or y for x, y in zip(out_b, _batch_body(b, size, in_b, [False] * n_out)[2])]
    new, consts = join_branches([_batch_body(b, size, in_b, out_b)[:2] for b in branches])
    ops = [P.moveaxis(o, d) for o, d in zip(ops, odims)]
    outs = cond_p.bind(index, *consts, *ops, branches=new)
    return outs, [0 if b else None for b in out_b]


def _forwarded(jaxpr, k):
    """The input index output ``k`` of ``jaxpr`` is, or ``None`` when it is computed."""
    v = jaxpr.outvars[k]
    for i, iv in enumerate(jaxpr.invars):
        if v is iv:
            return i
    return None


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
    if known_outvars or res_vars or any(eqn_effectful(e) for b in kb for e in b.jaxpr.eqns):
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
        return trace_body(fun, res_avals + ct_avals, "cond_transpose")

    new, consts = join_branches([transposed(b) for b in branches])
    outs = cond_p.bind(index, *consts, *res, *[c for c in cts if not isinstance(c, Zero)],
                       branches=new)
    it = iter(outs)
    return [None] + [next(it) if l else None for l in lin]


_declare(cond_p, impl=_cond_impl, abstract_eval=_cond_abstract_eval, jvp=_cond_jvp, batch=_cond_batch,
         partial_eval=_cond_partial_eval, transpose=_cond_transpose)


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
    # the bodies as straight-line code once they repeat (interpreter.hot_runner); one
    # floating-point error state for the whole loop, as the interpreter's per run
    run_c, run_b = hot_runner(cj.jaxpr), hot_runner(bj.jaxpr)
    with np.errstate(all="ignore"):
        while max_steps is None or steps < max_steps:
            if not run_c(cj.consts, cc + carry)[0]:
                break
            carry = run_b(bj.consts, bc + carry)
            steps += 1
            if steps == 2:
                run_c, run_b = hot_runner(cj.jaxpr), hot_runner(bj.jaxpr)
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
        lambda knz: jvp_jaxpr(body_jaxpr, bc_nz + knz, False, as_body=True)[2])
    if not any(bc_nz) and not any(carry_nz):
        outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                            cond_nconsts=ncc, body_nconsts=nbc, max_steps=max_steps)
        return outs, [_zero_tangent(a) for a in body_jaxpr.out_avals]
    jb, consts, out_nz = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz, as_body=True)
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
    args = [P.moveaxis(a, d) for a, d in zip(args, dims)]
    b = [d is not None for d in dims]
    cc_b, bc_b, init_b = b[:ncc], b[ncc:ncc + nbc], b[ncc + nbc:]
    carry_b = _fixed_point(init_b, lambda kb: _batch_body(body_jaxpr, size, bc_b + kb,
                                                           [False] * nk)[2])
    pred_b = _batch_body(cond_jaxpr, size, cc_b + carry_b, [False])[2][0]
    cc, bc, init = args[:ncc], args[ncc:ncc + nbc], args[ncc + nbc:]
    if not pred_b:
        cond, c_consts, _ = _batch_body(cond_jaxpr, size, cc_b + carry_b, [False])
        body, b_consts, _ = _batch_body(body_jaxpr, size, bc_b + carry_b, carry_b)
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

    cond, c_consts = trace_body(cond_fun, cc_avals + carry_avals, "while_cond")
    body, b_consts = trace_body(body_fun, cc_avals + bc_avals + carry_avals, "while_body")
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
    # backward_pass sets trace_state.source to the while_loop's line
    raise UnsupportedError(_WHILE_REVERSE_FIX, source=trace_state.source or user_source())


_declare(while_p, impl=_while_impl, abstract_eval=_while_abstract_eval, jvp=_while_jvp, batch=_while_batch,
         partial_eval=_while_partial_eval, transpose=_while_transpose)


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
    run = hot_runner(j)                 # straight-line code once the body repeats
    with np.errstate(all="ignore"):
        for n, i in enumerate(range(length - 1, -1, -1) if reverse else range(length)):
            outs = run(jc, consts + carry + [x[i] for x in xs])
            carry = outs[:num_carry]
            for y, o in zip(ys, outs[num_carry:]):
                y[i] = o
            if n == 1:
                run = hot_runner(j)
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
                        lambda knz: jvp_jaxpr(jaxpr, c_nz + knz + x_nz, False, as_body=True)[2][:nk])
    ny = len(jaxpr.out_avals) - nk
    jj, consts, out_nz = jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + [False] * ny, as_body=True)
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
    k_b = _fixed_point(b[nc:nc + nk], lambda kb: _batch_body(jaxpr, size, c_b + kb + x_b,
                                                              [False] * (nk + ny))[2][:nk])
    body, consts, out_b = _batch_body(jaxpr, size, c_b + k_b + x_b, k_b + [False] * ny)
    c = [P.moveaxis(a, d) for a, d in zip(args[:nc], dims[:nc])]
    k = [matchaxis(a, d, 0 if kb else None, size)
         for a, d, kb in zip(args[nc:nc + nk], dims[nc:nc + nk], k_b)]
    # xs keep the scanned axis first: their batch axis goes to position 1
    x = [a if d is None else P.moveaxis(a, d, 1) for a, d in zip(args[nc + nk:], dims[nc + nk:])]
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

    body, consts_h = trace_body(body_t, t_avals, "scan_transpose")
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


_declare(scan_p, impl=_scan_impl, abstract_eval=_scan_abstract_eval, jvp=_scan_jvp, batch=_scan_batch,
         partial_eval=_scan_partial_eval, transpose=_scan_transpose)


# ============================================================================
# Taylor rules (jet): the bodies are Taylor-evaluated (transforms.jet.jet_eval), loop
# carries carry all their coefficients (zeros materialized), and the course a cond or a
# loop takes depends on the primals only
# ============================================================================

def _dense(aval, s):
    """All coefficients of a float value as arrays (zeros materialized): a loop carry."""
    return [P.full(aval.shape, 0, aval.dtype) if c is None else c for c in s]


def _pack(avals, outs, oser):
    """Results as flat operands: the primals, then the coefficients of the float ones."""
    return list(outs) + [c for a, s in zip(avals, oser) if _is_float(a) for c in _dense(a, s)]


def _unpack(avals, coefs, K):
    """Per value, its coefficient list, from the flat coefficients of the float ones."""
    it = iter(coefs)
    return [[next(it) for _ in range(K)] if _is_float(a) else [None] * K for a in avals]


def _series_out(avals, flat, K):
    """What ``_pack`` made, as one series ``[primal, c₁, …, c_K]`` per value."""
    n = len(avals)
    return [[o] + s for o, s in zip(flat[:n], _unpack(avals, flat[n:], K))]


def _avals_of(xs):
    return [ShapedArray(tuple(P.shape_of(x)), P.dtype_of(x)) for x in xs]


def _cond_taylor(ins, *, branches):
    K = len(ins[0]) - 1
    ops = ins[1:]
    n = len(ops)
    mask = [[c is not None for c in s[1:]] for s in ops]
    flat = [s[0] for s in ops] + [c for s in ops for c in s[1:] if c is not None]
    out_avals = branches[0].out_avals

    def make(b):
        def branch(*args):
            it = iter(args[n:])
            series = [[next(it) if m else None for m in ms] for ms in mask]
            outs, oser = jet_eval(b.jaxpr, b.consts, args[:n], series, K)
            return _pack(out_avals, outs, oser)
        return branch

    avals = _avals_of(flat)
    bodies, consts = join_branches([trace_body(make(b), avals, "cond_jet") for b in branches])
    outs = cond_p.bind(ins[0][0], *consts, *flat, branches=bodies)
    return _series_out(out_avals, outs, K)


def _scan_taylor(ins, *, jaxpr, num_consts, num_carry, length, reverse):
    K = len(ins[0]) - 1
    nc, nk = num_consts, num_carry
    k_avals, y_avals = jaxpr.out_avals[:nk], jaxpr.out_avals[nk:]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    x_mask = [[c is not None for c in s[1:]] for s in xs]
    init = [s[0] for s in carry] + [c for a, s in zip(jaxpr.in_avals[nc:], carry)
                                    if _is_float(a) for c in _dense(a, s[1:])]
    x_in = [s[0] for s in xs] + [c for s in xs for c in s[1:] if c is not None]
    n_init, n_x = len(init), len(xs)

    def body(*args):
        kflat, xflat = args[:n_init], args[n_init:]
        it = iter(xflat[n_x:])
        x_series = [[next(it) if m else None for m in ms] for ms in x_mask]
        outs, oser = jet_eval(jaxpr.jaxpr, jaxpr.consts,
                              [s[0] for s in consts] + list(kflat[:nk]) + list(xflat[:n_x]),
                              [s[1:] for s in consts] + _unpack(k_avals, kflat[nk:], K)
                              + x_series, K)
        return _pack(k_avals, outs[:nk], oser[:nk]) + _pack(y_avals, outs[nk:], oser[nk:])

    avals = _avals_of(init) + [ShapedArray(a.shape[1:], a.dtype) for a in _avals_of(x_in)]
    body_j, body_consts = trace_body(body, avals, "scan_jet")
    outs = scan_p.bind(*body_consts, *init, *x_in, jaxpr=body_j, num_consts=len(body_consts),
                       num_carry=n_init, length=length, reverse=reverse)
    return _series_out(k_avals, outs[:n_init], K) + _series_out(y_avals, outs[n_init:], K)


def _while_taylor(ins, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    K = len(ins[0]) - 1
    ncc, nbc = cond_nconsts, body_nconsts
    cc, bc, carry = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    k_avals = body_jaxpr.out_avals
    nk = len(carry)
    init = [s[0] for s in carry] + [c for a, s in zip(k_avals, carry)
                                    if _is_float(a) for c in _dense(a, s[1:])]

    def cond_fun(*val):                           # the loop's course depends on primals only
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *[s[0] for s in cc],
                          *val[:nk])

    def body_fun(*val):
        outs, oser = jet_eval(body_jaxpr.jaxpr, body_jaxpr.consts,
                              [s[0] for s in bc] + list(val[:nk]),
                              [s[1:] for s in bc] + _unpack(k_avals, val[nk:], K), K)
        return _pack(k_avals, outs, oser)

    avals = _avals_of(init)
    cj, c_consts = trace_body(cond_fun, avals, "while_jet_cond")
    bj, b_consts = trace_body(body_fun, avals, "while_jet")
    outs = while_p.bind(*c_consts, *b_consts, *init, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(c_consts), body_nconsts=len(b_consts),
                        max_steps=max_steps)
    return _series_out(k_avals, outs, K)


P.deftaylor(cond_p, _cond_taylor)
P.deftaylor(scan_p, _scan_taylor)
P.deftaylor(while_p, _while_taylor)
