"""The IR pass pipeline ``jit`` runs on a traced program before a backend lowers it.

A backend receives the finished jaxpr and never traces: every rewrite that makes a
program easier to compile happens here, target-neutral, as a pure function
``ClosedJaxpr -> ClosedJaxpr`` (same inputs, same outputs, same values). In order::

    fold_constants   equations on constants only are evaluated once (simplify.py)
    cse              equal equations on equal inputs are merged, remat-aware (simplify.py)
    inline_calls     call-like equations are replaced by their bodies: each primitive
                     says how through its ``inline`` rule (custom_jvp_call, custom_vjp_call,
                     custom_lin); other call-like primitives (remat) inline their one
                     sub-jaxpr; a remat body is bracketed by REMAT_BEGIN/REMAT_END, which
                     keep a planner from fusing the recomputation into earlier loops. The
                     constants of cond/while/scan bodies become operands.
    uniform_consts   constant arrays holding one repeated value (a gradient's seed of ones,
                     zeros) become a broadcast literal; identity matrices (jacfwd's basis)
                     become ``iota == iota``, recomputed where they are read
    fold_identities  ``x*1``, ``1*x``, ``x/1``, ``x-0`` and exact ``x+0`` become ``x``: with
                     the seeds now literals, a gradient's ``ct * 1.0`` disappears (simplify.py)
    swap_dots        ``transpose(dot_general(x, y))`` becomes ``dot_general(y, x)``
    dce              equations whose results nobody reads are dropped (the one DCE,
                     simplify.py)

How a backend uses it: its ``jit`` entry calls :func:`run_pipeline` on the traced
ClosedJaxpr and hands the result to its lowering (``numba_cpu.lower`` for the CPU; a CUDA
emitter built on ``backends/plan.py`` calls the same function), which only plans and
emits. ``lower`` never runs these passes itself.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.transforms.passes import run_pipeline
>>> traced = ad.make_jaxpr(ad.grad(lambda x: anp.sum(anp.tanh(x))))(np.ones(3))
>>> print(run_pipeline(traced))
{ lambda ; a:f64[3]. let
    b:f64[3] = tanh a
    c:f64[3] = mul b b
    d:f64[3] = sub 1.0:f64[] c
  in (d,) }
"""
import numpy as np

from ..core import ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Primitive, ShapedArray, Var
from ..errors import UnsupportedError
from .remat import remat_p
from .simplify import cse, dce, dce_jaxpr, fold_constants, fold_identities
from ..primitives import broadcast_in_dim_p, convert_element_type_p, eq_p, iota_p

__all__ = ["run_pipeline", "PIPELINE", "inline_calls", "fold_uniform_consts", "swap_dots",
           "inline_sub_jaxpr", "REMAT_BEGIN", "REMAT_END"]


def _marker(name):
    """An unregistered, effectful (never dead, never merged) primitive: a fusion barrier."""
    p = Primitive.__new__(Primitive)
    p.name, p.multiple_results, p.call_like, p.effectful = name, True, False, True
    p.impl = lambda: []
    p.abstract_eval = lambda: []
    return p


# A remat body is recomputed where the backward pass needs it: its equations must not
# be fused into loops that run earlier (that would save the value after all).
REMAT_BEGIN = _marker("_remat_begin")
REMAT_END = _marker("_remat_end")

_CONTROL_FLOW = ("cond", "while", "scan")


def _closed(c):
    return c if isinstance(c, ClosedJaxpr) else ClosedJaxpr(c, [])


def _parts(sub):
    return (sub.jaxpr, list(sub.consts)) if isinstance(sub, ClosedJaxpr) else (sub, [])


# =====================================================================================
# inline_calls
# =====================================================================================

def inline_sub_jaxpr(e):
    """The default inline rule: a call-like equation whose one sub-jaxpr param maps its
    operands to its results -> ``(Jaxpr, consts)``, or None when it has no such param.

    Constants may be passed as leading operands (custom_jvp_call's convention)."""
    subs = [p for p in e.params.values() if isinstance(p, (Jaxpr, ClosedJaxpr))]
    if len(subs) != 1:
        return None
    jaxpr, consts = _parts(subs[0])
    if len(jaxpr.outvars) != len(e.outvars):
        return None
    if len(jaxpr.invars) == len(e.invars):
        return jaxpr, consts
    if not consts and len(jaxpr.constvars) + len(jaxpr.invars) == len(e.invars):
        return Jaxpr((), list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars,
                     jaxpr.eqns), []
    return None


def _inline_rule(prim):
    """How to inline ``prim``: its own ``inline`` rule, the default for other call-like
    primitives, None for control flow and ordinary primitives (they stay)."""
    rule = getattr(prim, "inline", None)
    if rule is not None:
        return rule
    if getattr(prim, "call_like", False) and prim.name not in _CONTROL_FLOW:
        return inline_sub_jaxpr
    return None


def inline_calls(closed):
    """Replace call-like equations by their bodies and lift control-flow body constants.

    Inside cond/while/scan bodies calls are inlined too, and each body's constants
    become leading operands of the equation (a body is then a closed function of its
    operands, which is what an emitter writes as a nested function).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = ad.checkpoint(lambda x: anp.sin(x) * 2.0)
    >>> cj = inline_calls(ad.make_jaxpr(f)(np.ones(2)))
    >>> [e.primitive.name for e in cj.jaxpr.eqns]
    ['_remat_begin', 'sin', 'mul', '_remat_end']
    """
    closed = _closed(closed)
    jaxpr, consts = _inline_jaxpr(closed.jaxpr, closed.consts)
    if jaxpr is closed.jaxpr:
        return closed
    return ClosedJaxpr(jaxpr, consts)


def _inline_jaxpr(jaxpr, consts):
    constvars, consts = list(jaxpr.constvars), list(consts)
    subst = {}
    changed = False

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
        rule = _inline_rule(e.primitive)
        if rule is not None:
            body = rule(e)
            if body is None:
                raise UnsupportedError(
                    f"jit: cannot inline the call-like primitive {name!r}: it has no inline "
                    f"rule and no single sub-jaxpr that maps its operands to its results; "
                    f"give the primitive an ``inline(eqn) -> (Jaxpr, consts)`` rule",
                    source=e.source)
            bj, bc = _inline_jaxpr(*body)
            if len(bj.invars) != len(invars) or len(bj.outvars) != len(e.outvars):
                raise UnsupportedError(
                    f"jit: the inline rule of {name!r} returned a body taking "
                    f"{len(bj.invars)} operands to {len(bj.outvars)} results for an equation "
                    f"with {len(invars)} and {len(e.outvars)}", source=e.source)
            remat = e.primitive is remat_p
            if remat:
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
            if remat:
                eqns.append(Eqn(REMAT_END, [], [], {}, e.source))
            changed = True
            continue
        if name in _CONTROL_FLOW:
            invars, params = _LIFT[name](e, invars, add_const)
            eqns.append(e.replace(invars=invars, params=params))
            changed = True
            continue
        if invars != list(e.invars):
            e = e.replace(invars=invars)
            changed = True
        eqns.append(e)
    if not changed:
        return jaxpr, list(consts)
    return Jaxpr(constvars, jaxpr.invars, [r(v) for v in jaxpr.outvars], eqns), consts


def _inline_body(sub):
    """A control-flow body, inlined and without dead code -> (Jaxpr, its constants)."""
    jaxpr, consts = _inline_jaxpr(*_parts(sub))
    value = dict(zip(jaxpr.constvars, consts))
    jaxpr, _ = dce_jaxpr(jaxpr)
    return jaxpr, [value[v] for v in jaxpr.constvars]


def _consts_first(jaxpr):
    return Jaxpr((), list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)


def _lift_cond(e, invars, add_const):
    p = dict(e.params)
    index, ops = invars[0], list(invars[1:])
    bodies = [_inline_body(b) for b in p["branches"]]
    branches = []
    for i, (j, _) in enumerate(bodies):
        # every branch takes the constants of all branches; its own are real, the
        # others' are placeholders it never reads
        pre = []
        for k, (jk, _) in enumerate(bodies):
            pre.extend(jk.constvars if k == i else [Var(v.aval) for v in jk.constvars])
        branches.append(ClosedJaxpr(Jaxpr((), pre + list(j.invars), j.outvars, j.eqns), []))
    const_ops = [add_const(v.aval, c) for j, cs in bodies for v, c in zip(j.constvars, cs)]
    p["branches"] = tuple(branches)
    return [index] + const_ops + ops, p


def _lift_while(e, invars, add_const):
    p = dict(e.params)
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cc, bc, init = invars[:nc], invars[nc:nc + nb], invars[nc + nb:]
    cj, cv = _inline_body(p["cond_jaxpr"])
    bj, bv = _inline_body(p["body_jaxpr"])
    new_cc = [add_const(v.aval, x) for v, x in zip(cj.constvars, cv)]
    new_bc = [add_const(v.aval, x) for v, x in zip(bj.constvars, bv)]
    p["cond_jaxpr"] = ClosedJaxpr(_consts_first(cj), [])
    p["body_jaxpr"] = ClosedJaxpr(_consts_first(bj), [])
    p["cond_nconsts"] = nc + len(new_cc)
    p["body_nconsts"] = nb + len(new_bc)
    return new_cc + list(cc) + new_bc + list(bc) + list(init), p


def _lift_scan(e, invars, add_const):
    p = dict(e.params)
    j, c = _inline_body(p["jaxpr"])
    new = [add_const(v.aval, x) for v, x in zip(j.constvars, c)]
    p["jaxpr"] = ClosedJaxpr(_consts_first(j), [])
    p["num_consts"] = p["num_consts"] + len(new)
    return new + list(invars), p


_LIFT = {"cond": _lift_cond, "while": _lift_while, "scan": _lift_scan}


# =====================================================================================
# fold_uniform_consts
# =====================================================================================

def _uniform_value(c):
    """The single value of an array whose elements are all identical (bitwise), else None."""
    if not isinstance(c, np.ndarray) or c.size < 2 or c.dtype.kind not in "biuf":
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
    which loops recompute in place instead of reading the constant from memory (8 MB for
    n = 1000)."""
    if not isinstance(c, np.ndarray) or c.ndim < 2 or c.dtype.kind != "f" or \
            c.shape[0] != c.shape[-1] or any(n != 1 for n in c.shape[1:-1]) or c.shape[0] < 8:
        return None
    n = c.shape[0]
    flat = c.reshape(n, n)
    if flat[0, 0] != 1 or flat[0, 1] != 0 or np.count_nonzero(flat) != n or \
            not np.array_equal(flat, np.eye(n, dtype=c.dtype)):
        return None
    shape = tuple(c.shape)
    i64 = np.dtype(np.int64)
    i0, i1 = Var(ShapedArray(shape, i64)), Var(ShapedArray(shape, i64))
    same = Var(ShapedArray(shape, np.dtype(np.bool_)))
    return [Eqn(iota_p, [], [i0], dict(dtype=i64, shape=shape, dimension=0)),
            Eqn(iota_p, [], [i1], dict(dtype=i64, shape=shape, dimension=len(shape) - 1)),
            Eqn(eq_p, [i0, i1], [same], {}),
            Eqn(convert_element_type_p, [same], [v], dict(new_dtype=c.dtype))]


def fold_uniform_consts(closed):
    """Constant arrays with one repeated value become a broadcast of a literal (no memory
    traffic, and the value is in the code); identity matrices become ``iota == iota``.

    >>> import numpy as np
    >>> from autodiff.core import ClosedJaxpr, Jaxpr, Var, ShapedArray, Eqn
    >>> from autodiff import primitives as P
    >>> c, x, y = (Var(ShapedArray((3,), np.dtype(np.float64))) for _ in range(3))
    >>> j = Jaxpr([c], [x], [y], [Eqn(P.mul_p, [x, c], [y], {})])
    >>> print(fold_uniform_consts(ClosedJaxpr(j, [np.full(3, 2.0)])))
    { lambda ; a:f64[3]. let
        b:f64[3] = broadcast_in_dim[broadcast_dimensions=() shape=(3,)] 2.0:f64[]
        c:f64[3] = mul a b
      in (c,) }
    """
    closed = _closed(closed)
    jaxpr = closed.jaxpr
    keep_v, keep_c, eqns = [], [], []
    for v, c in zip(jaxpr.constvars, closed.consts):
        u = _uniform_value(c)
        if u is None:
            eye = _identity_eqns(v, c)
            if eye is not None:
                eqns.extend(eye)
                continue
            keep_v.append(v)
            keep_c.append(c)
            continue
        lit = Literal(np.asarray(u, dtype=c.dtype)[()], ShapedArray((), c.dtype))
        eqns.append(Eqn(broadcast_in_dim_p, [lit], [v],
                        dict(shape=tuple(c.shape), broadcast_dimensions=())))
    if not eqns:
        return closed
    return ClosedJaxpr(Jaxpr(keep_v, jaxpr.invars, jaxpr.outvars, eqns + list(jaxpr.eqns)),
                       keep_c)


# =====================================================================================
# swap_dots
# =====================================================================================

def swap_dots(closed):
    """``transpose(dot_general(x, y))`` -> ``dot_general(y, x)`` when that is the same thing.

    The transpose rule of dot_general makes weight gradients this way (``(ct^T x)^T``);
    with the operands swapped BLAS writes the result in the wanted layout directly,
    saving a transposed copy of a weight-sized matrix. Only a dot read by nothing but
    the transpose is rewritten.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> cj = ad.make_jaxpr(lambda a, b: (a @ b).T)(np.ones((2, 3)), np.ones((3, 4)))
    >>> [e.primitive.name for e in swap_dots(cj).jaxpr.eqns]
    ['dot_general']
    """
    closed = _closed(closed)
    jaxpr = closed.jaxpr
    uses = {}
    for e in jaxpr.eqns:
        for v in e.invars:
            if isinstance(v, Var):
                uses[v] = uses.get(v, 0) + 1
    for v in jaxpr.outvars:
        if isinstance(v, Var):
            uses[v] = uses.get(v, 0) + 2
    producer = {e.outvars[0]: i for i, e in enumerate(jaxpr.eqns)
                if e.primitive.name == "dot_general"}
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
        return closed
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars,
                             [e for e in eqns if e is not None]), closed.consts)


# =====================================================================================
# the pipeline
# =====================================================================================

#: ``(name, pass)`` in the order :func:`run_pipeline` applies them.
PIPELINE = (
    ("fold_constants", fold_constants),
    ("cse", cse),
    ("inline_calls", inline_calls),
    ("uniform_consts", fold_uniform_consts),
    ("fold_identities", fold_identities),
    ("swap_dots", swap_dots),
    ("dce", dce),
)


def run_pipeline(closed, passes=PIPELINE):
    """Run the IR passes on ``closed`` (a ClosedJaxpr or Jaxpr): the program a backend
    lowers. Same inputs, outputs and values; ``passes`` defaults to :data:`PIPELINE`."""
    closed = _closed(closed)
    for _, p in passes:
        closed = p(closed)
    return closed
