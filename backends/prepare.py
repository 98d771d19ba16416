"""IR preparation for the backends: pure passes, jaxpr in, jaxpr out.

Run by :func:`prepare` before planning, for every target::

    inline          call-like equations (custom_jvp/vjp, custom_lin, remat/checkpoint) are
                    replaced by their bodies (their records in ``LOWERINGS`` say how); a
                    remat body is bracketed by ``REMAT_BEGIN``/``REMAT_END`` markers, which
                    keep the planner from fusing it into earlier loops
    lift constants  the constants of control-flow bodies become operands
    dead code       equations whose results nobody reads are dropped
    dot swap        ``transpose(dot_general(x, y))`` becomes ``dot_general(y, x)``
    uniform consts  constant arrays holding one repeated value become broadcast literals;
                    identity matrices become ``iota == iota`` (recomputed in loops)

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.backends.prepare import prepare
>>> closed = ad.make_jaxpr(lambda x: anp.sum(x * 2.0) + 0 * anp.sum(x))(np.ones(3))
>>> len(prepare(closed).jaxpr.eqns) <= len(closed.jaxpr.eqns)
True
"""
import numpy as np

from ..core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, ShapedArray, Var
from ..errors import UnsupportedError
from .plan import LOWERINGS, REMAT_BEGIN, REMAT_END, SUPPORTED_DTYPES


def _is_control(name):
    low = LOWERINGS.get(name)
    return low is not None and low.control

# =====================================================================================
# Preparation: inline calls, lift body constants, dead-code elimination
# =====================================================================================

def _inline_custom_lin(e):
    # custom_lin's forward meaning is the jvp of its function; trace that into IR
    from ..core import trace_flat
    from ..custom_derivatives import _custom_lin_forward
    params = e.params
    closed = trace_flat(lambda *a: _custom_lin_forward(*a, **params),
                        [v.aval for v in e.invars], name="custom_lin")
    return closed.jaxpr, list(closed.consts)


def _inline_generic(e):
    """A call-like equation whose one sub-jaxpr param maps its inputs to its outputs."""
    subs = [p for p in e.params.values() if isinstance(p, (Jaxpr, ClosedJaxpr))]
    if len(subs) != 1:
        return None
    sub = subs[0]
    jaxpr, consts = (sub.jaxpr, list(sub.consts)) if isinstance(sub, ClosedJaxpr) else (sub, [])
    if len(jaxpr.outvars) != len(e.outvars):
        return None
    if len(jaxpr.invars) == len(e.invars):
        return jaxpr, consts
    if not consts and len(jaxpr.constvars) + len(jaxpr.invars) == len(e.invars):
        # constants passed as leading operands (custom_jvp_call's convention)
        return Jaxpr((), list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns), []
    return None




_REMAT_NAMES = ("remat", "checkpoint", "remat_call")


def _closed_parts(sub):
    if isinstance(sub, ClosedJaxpr):
        return sub.jaxpr, list(sub.consts)
    return sub, []


def _prepare_sub(sub):
    """Prepare a control-flow body: -> (Jaxpr whose constvars hold ``consts``, consts)."""
    from ..transforms.partial_eval import dce_jaxpr
    jaxpr, consts = _closed_parts(sub)
    jaxpr, consts = _prepare_jaxpr(jaxpr, consts)
    value = dict(zip(jaxpr.constvars, consts))
    jaxpr, _ = dce_jaxpr(jaxpr)
    return jaxpr, [value[v] for v in jaxpr.constvars]


def _lift_consts(jaxpr):
    """A Jaxpr taking its constvars as leading invars."""
    return Jaxpr((), list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)


def _fresh_dummies(avals):
    return [Var(a) for a in avals]


def _rewrite_control_flow(e, invars, add_const):
    """Lift the constants of cond/while/scan bodies into operands (outer constvars)."""
    name = e.primitive.name
    p = dict(e.params)
    if name == "cond":
        index, ops = invars[0], list(invars[1:])
        prepared = [_prepare_sub(b) for b in p["branches"]]
        new_branches = []
        for i, (j, c) in enumerate(prepared):
            pre = []
            for k, (jk, ck) in enumerate(prepared):
                if k == i:
                    pre.extend(jk.constvars)
                else:
                    pre.extend(_fresh_dummies([v.aval for v in jk.constvars]))
            new_branches.append(ClosedJaxpr(Jaxpr((), pre + list(j.invars), j.outvars, j.eqns), []))
        const_ops = [add_const(v.aval, val) for j, c in prepared for v, val in zip(j.constvars, c)]
        p["branches"] = tuple(new_branches)
        return [index] + const_ops + ops, p
    if name == "while":
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        cc, bc, init = invars[:nc], invars[nc:nc + nb], invars[nc + nb:]
        cj, cv = _prepare_sub(p["cond_jaxpr"])
        bj, bv = _prepare_sub(p["body_jaxpr"])
        new_cc = [add_const(v.aval, x) for v, x in zip(cj.constvars, cv)]
        new_bc = [add_const(v.aval, x) for v, x in zip(bj.constvars, bv)]
        p["cond_jaxpr"] = ClosedJaxpr(_lift_consts(cj), [])
        p["body_jaxpr"] = ClosedJaxpr(_lift_consts(bj), [])
        p["cond_nconsts"] = nc + len(new_cc)
        p["body_nconsts"] = nb + len(new_bc)
        return new_cc + list(cc) + new_bc + list(bc) + list(init), p
    if name == "scan":
        n = p["num_consts"]
        j, c = _prepare_sub(p["jaxpr"])
        new = [add_const(v.aval, x) for v, x in zip(j.constvars, c)]
        p["jaxpr"] = ClosedJaxpr(_lift_consts(j), [])
        p["num_consts"] = n + len(new)
        return new + list(invars), p
    raise AssertionError(name)


def _prepare_jaxpr(jaxpr, consts):
    constvars = list(jaxpr.constvars)
    consts = list(consts)
    subst = {}

    def r(v):
        return subst.get(v, v) if isinstance(v, Var) else v

    def add_const(aval, value):
        v = Var(aval)
        constvars.append(v)
        consts.append(value)
        return v

    eqns = []
    for e in jaxpr.eqns:
        invars = [r(v) for v in e.invars]
        name = e.primitive.name
        body = None
        low = LOWERINGS.get(name)
        if (low is not None and low.kind == "inline") or (
                getattr(e.primitive, "call_like", False) and not _is_control(name)):
            body = (low.inline if low is not None and low.inline else _inline_generic)(e)
            if body is None:
                raise UnsupportedError(
                    f"jit (cpu backend): cannot lower the call-like primitive {name!r}: it has "
                    f"no sub-jaxpr that maps its operands to its results", source=e.source)
        if body is not None:
            bj, bc = _prepare_jaxpr(*body)
            if name in _REMAT_NAMES:
                eqns.append(Eqn(REMAT_BEGIN, [], [], {}, e.source))
            env = {}
            for cv, c in zip(bj.constvars, bc):
                env[cv] = add_const(cv.aval, c)
            for bv, a in zip(bj.invars, invars):
                env[bv] = a
            for be in bj.eqns:
                outs = []
                for o in be.outvars:
                    nv = DropVar(o.aval) if isinstance(o, DropVar) else Var(o.aval)
                    env[o] = nv
                    outs.append(nv)
                eqns.append(be.replace(invars=[env.get(v, v) if isinstance(v, Var) else v
                                               for v in be.invars], outvars=outs))
            for o, bo in zip(e.outvars, bj.outvars):
                subst[o] = env.get(bo, bo) if isinstance(bo, Var) else bo
            if name in _REMAT_NAMES:
                eqns.append(Eqn(REMAT_END, [], [], {}, e.source))
            continue
        if _is_control(name):
            invars, params = _rewrite_control_flow(e, invars, add_const)
            eqns.append(e.replace(invars=invars, params=params))
            continue
        eqns.append(e.replace(invars=invars) if invars != list(e.invars) else e)
    outvars = [r(v) for v in jaxpr.outvars]
    return Jaxpr(constvars, jaxpr.invars, outvars, eqns), consts


def prepare(closed):
    """Inline call-like equations, lift control-flow body constants, drop dead code.

    Returns a ClosedJaxpr with the same inputs and outputs as ``closed``.
    """
    from ..transforms.partial_eval import dce_closed
    jaxpr, consts = _prepare_jaxpr(closed.jaxpr, closed.consts)
    jaxpr, consts = _fold_uniform_consts(jaxpr, consts)
    jaxpr = _swap_transposed_dots(jaxpr)
    return dce_closed(ClosedJaxpr(jaxpr, consts))


def _swap_transposed_dots(jaxpr):
    """``transpose(dot_general(x, y))`` -> ``dot_general(y, x)`` when that is the same thing.

    The transpose rule of dot_general makes weight gradients this way (``(ct^T x)^T``);
    with the operands swapped BLAS writes the result in the wanted layout directly,
    saving a transposed copy of a weight-sized matrix.
    """
    uses = {}
    for e in jaxpr.eqns:
        for v in e.invars:
            if isinstance(v, Var):
                uses[v] = uses.get(v, 0) + 1
    for v in jaxpr.outvars:
        if isinstance(v, Var):
            uses[v] = uses.get(v, 0) + 2
    producer = {}
    for i, e in enumerate(jaxpr.eqns):
        if e.primitive.name == "dot_general":
            producer[e.outvars[0]] = i
    eqns = list(jaxpr.eqns)
    changed = False
    for i, e in enumerate(eqns):
        if e is None or e.primitive.name != "transpose" or not isinstance(e.invars[0], Var):
            continue
        u = e.invars[0]
        j = producer.get(u)
        if j is None or uses.get(u) != 1 or eqns[j] is None:
            continue
        d = eqns[j]
        (xc, yc), (xb, yb) = d.params["dimension_numbers"]
        if xb or yb:
            continue
        x, y = d.invars
        nxf = len(x.aval.shape) - len(xc)
        nyf = len(y.aval.shape) - len(yc)
        swap = tuple(range(nxf, nxf + nyf)) + tuple(range(nxf))
        if tuple(e.params["permutation"]) != swap:
            continue
        eqns[j] = d.replace(invars=[y, x], outvars=list(e.outvars),
                            params=dict(d.params, dimension_numbers=((yc, xc), ((), ()))))
        eqns[i] = None
        changed = True
    if not changed:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, [e for e in eqns if e is not None])


def _uniform_value(c):
    """The single value of an array whose elements are all identical (bitwise), else None."""
    if not isinstance(c, np.ndarray) or c.size < 2 or c.dtype.kind not in "biuf" or \
            c.dtype not in SUPPORTED_DTYPES:
        return None
    first = c.flat[0]
    if not np.all(c == first):
        return None
    if c.dtype.kind == "f" and not np.all(np.signbit(c) == np.signbit(first)):
        return None
    return first


def _identity_eqns(v, c):
    """Equations computing ``c`` if it is an identity matrix with size-1 axes between its
    first and last axis (jacfwd's basis, an np.eye), else None: ``iota_0 == iota_last``,
    which loops recompute in place (see Planner.plan_generator) instead of reading the
    constant from memory (8 MB for n = 1000)."""
    from ..primitives import convert_element_type_p, eq_p, iota_p
    if not isinstance(c, np.ndarray) or c.ndim < 2 or c.dtype.kind != "f" or \
            c.shape[0] != c.shape[-1] or any(n != 1 for n in c.shape[1:-1]) or c.shape[0] < 8:
        return None
    n = c.shape[0]
    flat = c.reshape(n, n)
    if flat[0, 0] != 1 or flat[0, 1] != 0 or np.count_nonzero(flat) != n or \
            not np.array_equal(flat, np.eye(n, dtype=c.dtype)):
        return None
    shape = tuple(c.shape)
    i0, i1 = Var(ShapedArray(shape, np.dtype(np.int64))), Var(ShapedArray(shape, np.dtype(np.int64)))
    same = Var(ShapedArray(shape, np.dtype(np.bool_)))
    return [Eqn(iota_p, [], [i0], dict(dtype=np.dtype(np.int64), shape=shape, dimension=0)),
            Eqn(iota_p, [], [i1], dict(dtype=np.dtype(np.int64), shape=shape,
                                       dimension=len(shape) - 1)),
            Eqn(eq_p, [i0, i1], [same], {}),
            Eqn(convert_element_type_p, [same], [v], dict(new_dtype=c.dtype))]


def _fold_uniform_consts(jaxpr, consts):
    """Constant arrays with one repeated value (the seed ``ones`` of a gradient, ``zeros``)
    become a broadcast of a literal: no memory traffic, and the value is in the code."""
    from ..primitives import broadcast_in_dim_p
    keep_v, keep_c, eqns = [], [], []
    for v, c in zip(jaxpr.constvars, consts):
        u = _uniform_value(c)
        if u is None:
            eye = _identity_eqns(v, c)
            if eye is not None:          # the standard basis of a Jacobian, an np.eye
                eqns.extend(eye)
                continue
            keep_v.append(v)
            keep_c.append(c)
            continue
        lit = Literal(np.asarray(u, dtype=c.dtype)[()], ShapedArray((), c.dtype))
        eqns.append(Eqn(broadcast_in_dim_p, [lit], [v],
                        dict(shape=tuple(c.shape), broadcast_dimensions=())))
    if not eqns:
        return jaxpr, consts
    return Jaxpr(keep_v, jaxpr.invars, jaxpr.outvars, eqns + list(jaxpr.eqns)), keep_c


# =====================================================================================
# Dimension classes: which dimensions are equal by construction
# =====================================================================================

