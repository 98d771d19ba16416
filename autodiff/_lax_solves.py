"""``jax.lax``'s implicit solves: ``custom_root`` (the root's derivative by the implicit
function theorem) and ``custom_linear_solve`` (the solve's derivative by solving again, with
the transpose for reverse mode).

>>> import numpy as np, autodiff as ad
>>> ad.lax.custom_linear_solve(lambda x: 2.0 * x, np.array([4.0]),
...                            lambda mv, b: b / 2.0, symmetric=True)
array([2.])
"""


import numpy as np

from . import numpy as anp
from . import primitives as P
from .api import jvp, vjp
from .backends.interpreter import run_jaxpr
from .core import (ClosedJaxpr, Jaxpr, Primitive, UndefinedPrimal, Var, Zero, eval_jaxpr,
                   get_aval, trace_flat)
from .custom_derivatives import custom_jvp
from .errors import UnsupportedError
from .primitives import deftranspose
from .tracing import hoist_consts
from .transforms.jvp import jvp_eval, zeros_for
from .transforms.vmap import batch_jaxpr
from .tree_util import tree_flatten, tree_unflatten, tree_map

__all__ = ["custom_root", "custom_linear_solve"]


# implicit solves
# ----------------------------------------------------------------------------

def _closure_convert(f, example):
    """``f``'s closed-over traced values as explicit arguments: ``(g, consts)`` with
    ``g(consts, x) == f(x)``, so a custom rule can differentiate with respect to them."""
    flat, tree = tree_flatten(example)
    avals = [get_aval(anp.asarray(v)).strip_weak() for v in flat]
    box = []

    def flat_f(*xs):
        out = f(tree_unflatten(tree, list(xs)))
        leaves, otree = tree_flatten(out)
        box.append(otree)
        return [anp.asarray(l) for l in leaves]
    closed = trace_flat(flat_f, avals, None, name="closure_convert")
    consts = list(closed.consts)
    jaxpr, otree = closed.jaxpr, box[0]

    def g(cs, x):
        outs = eval_jaxpr(jaxpr, list(cs), *tree_flatten(x)[0])
        return tree_unflatten(otree, list(outs))
    return g, consts


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """The root ``x*`` of ``f`` found by ``solve(f, initial_guess)``, differentiated
    implicitly: ``f(x*(θ), θ) = 0`` gives ``dx* = -(∂f/∂x)⁻¹ ∂f/∂θ dθ``, the inverse
    applied by ``tangent_solve(g, y)`` (solve the linear ``g(x) = y``), for every value
    ``f`` closes over. The solver's iterations are never differentiated.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> def newton(f, x0):
    ...     x = x0
    ...     for _ in range(30):
    ...         x = x - f(x) / ad.grad(f)(x)
    ...     return x
    >>> def cube_root(a):                              # the root of x³ - a
    ...     return ad.lax.custom_root(lambda x: x ** 3 - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> print(f"{float(cube_root(8.0)):.12f} {float(ad.grad(cube_root)(8.0)):.12f}")   # 2, 1/12
    2.000000000000 0.083333333333
    """
    g, consts = _closure_convert(lambda x: f(x), initial_guess)
    stop = lambda t: tree_map(anp.stop_gradient, t)
    consts_s = stop(consts)
    out = solve(lambda x: g(consts_s, x), stop(initial_guess))
    sol, aux = (out if has_aux else (out, None))
    sol = stop(sol)

    @custom_jvp
    def root(cs, x):
        return x

    @root.defjvp
    def root_jvp(primals, tangents):
        cs, x = primals
        tcs, _ = tangents
        x = root(cs, x)        # the root as a function of cs again: higher derivatives
        # ∂f/∂θ · dθ at the root
        _, rhs = jvp(lambda c: g(c, x), (list(cs),), (list(tcs),))
        lin = lambda v: jvp(lambda y: g(list(cs), y), (x,), (v,))[1]
        dx = tangent_solve(lin, tree_map(anp.negative, rhs))
        return x, dx

    res = root(consts, sol)
    return (res, aux) if has_aux else res


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``x = solve(matvec, b)`` for the linear ``matvec``, differentiated implicitly in
    ``b`` and in everything ``matvec`` closes over, never through the solver:
    forward mode solves ``A dx = db - dA x`` with ``solve`` again, reverse mode solves the
    transposed system once, ``b̄ = Aᵀ⁻¹ x̄`` (with ``transpose_solve(vecmat, x̄)``, or
    ``solve`` itself when ``symmetric``), and ``Ā`` follows as ``-b̄ xᵀ`` through
    ``matvec``'s own derivative. The solve is one ``linear_solve`` equation whose transpose
    is again a ``linear_solve`` (of the transposed system), so derivatives of any order and
    in any mix of modes (``jacrev(grad(f))``, ``hessian``, ``vmap`` of either) hold.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> def f(b):
    ...     return ad.lax.custom_linear_solve(lambda v: A @ v, b,
    ...                                       lambda mv, r: anp.linalg.solve(A, r), symmetric=True)
    >>> np.allclose(ad.jacrev(f)(np.array([1.0, 2.0])), np.linalg.inv(A))
    True
    >>> np.allclose(ad.jacfwd(f)(np.array([1.0, 2.0])), np.linalg.inv(A))
    True
    """
    b_leaves, b_tree = tree_flatten(b)
    b_leaves = [anp.asarray(l) for l in b_leaves]
    b_avals = [get_aval(l).strip_weak() for l in b_leaves]
    nb = len(b_leaves)

    def on_tree(fun, name, n_lead=0, lead_avals=()):
        """``fun(lead..., tree) -> tree`` as a flat body: ``(Jaxpr, consts, out_tree)``, the
        body's inputs the values it closes over, then ``lead``, then the leaves of ``b``."""
        box = []

        def flat(*args):
            out = fun(list(args[:n_lead]), tree_unflatten(b_tree, list(args[n_lead:])))
            leaves, tree = tree_flatten(out)
            box.append(tree)
            return [anp.asarray(l) for l in leaves]
        body, consts = hoist_consts(trace_flat(flat, list(lead_avals) + b_avals, name=name))
        return body.jaxpr, consts, box[0]

    mv_jaxpr, mv_consts, mv_tree = on_tree(lambda _, v: matvec(v), "matvec")
    if mv_tree != b_tree:
        raise TypeError(f"custom_linear_solve: matvec maps the structure of b ({b_tree}) to "
                        f"{mv_tree}; a linear operator's output has its input's structure")
    n_m = len(mv_consts)
    m_avals = [v.aval for v in mv_jaxpr.invars[:n_m]]
    # each solver is a body of its own constants, the operator's, then b: it sees the
    # operator through them (so every use of the primitive is self-consistent), and is
    # never differentiated (the primitive's rules give the derivative)
    aux_tree = []

    def run_solve(cm, r):
        out = solve(lambda v: _apply_tree(mv_jaxpr, cm, v, b_tree), r)
        if has_aux:
            out, aux = out
            leaves, tree = tree_flatten(aux)
            aux_tree.append(tree)
            return list(tree_flatten(out)[0]) + list(leaves)
        return out
    s_jaxpr, s_consts, _ = on_tree(run_solve, "solve", n_m, m_avals)
    if symmetric:
        t_jaxpr, t_consts = _drop_aux(s_jaxpr, nb), s_consts
    elif transpose_solve is not None:
        def run_tsolve(cm, r):
            vecmat = lambda u: _vecmat_tree(mv_jaxpr, cm, u, b_tree, b_avals)
            out = transpose_solve(vecmat, r)
            return out[0] if has_aux and isinstance(out, tuple) else out
        t_jaxpr, t_consts, _ = on_tree(run_tsolve, "transpose_solve", n_m, m_avals)
    else:
        t_jaxpr, t_consts = None, []
    outs = linear_solve_p.bind(*mv_consts, *s_consts, *t_consts, *b_leaves, matvec=mv_jaxpr,
                               solve=s_jaxpr, transpose_solve=t_jaxpr,
                               counts=(n_m, len(s_consts), len(t_consts), nb))
    x = tree_unflatten(b_tree, list(outs[:nb]))
    return (x, tree_unflatten(aux_tree[0], list(outs[nb:]))) if has_aux else x


def _apply_tree(jaxpr, consts, v, tree):
    """The operator ``jaxpr`` (consts, then leaves) applied to the tree ``v``."""
    outs = eval_jaxpr(jaxpr, [], *consts, *[anp.asarray(l) for l in tree_flatten(v)[0]])
    return tree_unflatten(tree, list(outs))


def _transpose_apply(matvec, consts, us, avals):
    """The transpose of the linear body ``matvec`` (``consts``, then vectors of ``avals``)
    applied to the leaves ``us``: its vjp, at zeros (the point does not matter)."""
    zeros = [P.full(a.shape, 0, a.dtype) for a in avals]
    _, back = vjp(lambda *vs: eval_jaxpr(matvec, [], *consts, *vs), *zeros)
    return list(back(list(us)))


def _vecmat_tree(mv_jaxpr, consts, u, tree, avals):
    """The transpose of the linear operator ``mv_jaxpr`` applied to the tree ``u``."""
    us = [anp.asarray(l) for l in tree_flatten(u)[0]]
    return tree_unflatten(tree, _transpose_apply(mv_jaxpr, consts, us, avals))


def _drop_aux(jaxpr, nb):
    """A solver's body without its aux results (a transposed solve returns only x)."""
    if len(jaxpr.outvars) == nb:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, list(jaxpr.outvars[:nb]), jaxpr.eqns)


# the linear_solve primitive: x = A⁻¹ b, linear in b, implicit in A
# ----------------------------------------------------------------------------
# Operands (``counts``): the operator's constants (the "matvec group"), the solver's, the
# transposed solver's, then b's leaves. ``matvec`` is a body over (matvec group, leaves);
# each solver a body over (its own constants, matvec group, leaves), so it reaches the
# operator through the equation's own operands. The outputs are x's leaves, then the
# solver's aux leaves. Jit inlines the solver; vmap batches every body; jvp solves again;
# the transpose is the transposed system's linear_solve (so every order composes).

linear_solve_p = Primitive("linear_solve", multiple_results=True)
linear_solve_p.call_like = True


def _groups(args, counts):
    n_m, n_s, n_t, _ = counts
    args = list(args)
    return (args[:n_m], args[n_m:n_m + n_s], args[n_m + n_s:n_m + n_s + n_t],
            args[n_m + n_s + n_t:])


def _widen(body, n_own, avals):
    """``body`` (own constants, matvec group, leaves) with new unused inputs of ``avals``
    at the front of its matvec group (the group grew: batching or transposing hoisted)."""
    if body is None or not avals:
        return body
    invars = list(body.invars)
    new = [Var(a) for a in avals]
    return Jaxpr(body.constvars, invars[:n_own] + new + invars[n_own:], body.outvars,
                 body.eqns)


def _linear_solve_impl(*args, matvec, solve, transpose_solve, counts):
    cm, cs, _, b = _groups(args, counts)
    return [np.asarray(o) for o in run_jaxpr(solve, [], cs + cm + b)]


def _linear_solve_aval(*avals, matvec, solve, transpose_solve, counts):
    return [v.aval for v in solve.outvars]


def _linear_solve_inline(e):
    # a compiled program runs the solver: its body over the equation's operands, in order
    n_m, n_s, n_t, _ = e.params["counts"]
    s = e.params["solve"]
    own, group, leaves = s.invars[:n_s], s.invars[n_s:n_s + n_m], s.invars[n_s + n_m:]
    skip_t = [Var(v.aval) for v in e.invars[n_m + n_s:n_m + n_s + n_t]]
    return Jaxpr((), list(group) + list(own) + skip_t + list(leaves), list(s.outvars),
                 s.eqns), []


def _linear_solve_jvp(primals, tangents, *, matvec, solve, transpose_solve, counts):
    # A x = b: A dx = db - dA x, the same solve of a new right-hand side (linear in it, so
    # reverse mode transposes it); the solvers' own constants have no derivative
    cm, cs, ct, b = _groups(primals, counts)
    dcm, _, _, db = _groups(tangents, counts)
    params = dict(matvec=matvec, solve=solve, transpose_solve=transpose_solve, counts=counts)
    outs = linear_solve_p.bind(*primals, **params)
    nb = counts[3]
    x = outs[:nb]
    aux_t = [zeros_for(P.aval_of(o)) for o in outs[nb:]]
    if all(isinstance(t, Zero) for t in dcm + db):
        return outs, [zeros_for(P.aval_of(o)) for o in x] + aux_t
    rhs = [P.instantiate(t) for t in db]
    if not all(isinstance(t, Zero) for t in dcm):
        _, dax = jvp_eval(matvec, [], cm + list(x),
                          list(dcm) + [zeros_for(P.aval_of(v)) for v in x])
        rhs = [P.sub(r, P.instantiate(d)) for r, d in zip(rhs, dax)]
    dx = linear_solve_p.bind(*cm, *cs, *ct, *rhs, **params)[:nb]
    return outs, list(dx) + aux_t


def _linear_solve_transpose(cts, *args, matvec, solve, transpose_solve, counts):
    # x = A⁻¹ b is linear in b: b̄ = A⁻ᵀ x̄, the transposed system's linear_solve (operator
    # the transpose of matvec, the two solvers swapped)
    cm, cs, ct, b = _groups(args, counts)
    if any(isinstance(a, UndefinedPrimal) for a in cm + cs + ct):
        raise UnsupportedError("custom_linear_solve: a derivative reached the operator's "
                               "constants through a linear use; differentiate its jvp instead")
    if transpose_solve is None:
        raise TypeError("custom_linear_solve: reverse mode of a non-symmetric system needs "
                        "transpose_solve(vecmat, b) (or symmetric=True)")
    n_m, n_s, n_t, nb = counts
    avals = [a.aval if isinstance(a, UndefinedPrimal) else P.aval_of(a) for a in b]
    m_avals = [v.aval for v in matvec.invars[:n_m]]

    def vecmat(*args):
        return _transpose_apply(matvec, args[:n_m], args[n_m:], avals)
    # the transpose's own constants (arrays its rules make) join the front of the group
    vm, hoisted = hoist_consts(trace_flat(vecmat, m_avals + avals, name="vecmat"))
    h_avals = [P.aval_of(h) for h in hoisted]
    tparams = dict(matvec=vm.jaxpr, solve=_widen(transpose_solve, n_t, h_avals),
                   transpose_solve=_widen(_drop_aux(solve, nb), n_s, h_avals),
                   counts=(len(hoisted) + n_m, n_t, n_s, nb))
    cts_x = [_instantiate(c, a) for c, a in zip(cts[:nb], avals)]
    ct_b = linear_solve_p.bind(*hoisted, *cm, *ct, *cs, *cts_x, **tparams)[:nb]
    return [None] * (len(args) - nb) + list(ct_b)


def _instantiate(c, aval):
    return P.full(aval.shape, 0, aval.dtype) if c is None or isinstance(c, Zero) else c


def _linear_solve_batch(args, dims, *, matvec, solve, transpose_solve, counts):
    # every body batched: the operands moved to axis 0, b's leaves batched whenever anything
    # is (the solution then depends on the batch), every result batched
    size = next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    n_m, n_s, n_t, nb = counts
    cm, cs, ct, _ = _groups([P.moveaxis(a, d) for a, d in zip(args, dims)], counts)
    b = [P.moveaxis(a, d, size=size) for a, d in zip(_groups(args, counts)[3],
                                                      _groups(dims, counts)[3])]
    fm, fs, ft, _ = [[d is not None for d in g] for g in _groups(dims, counts)]

    def batched(body, flags):
        if body is None:
            return None, []
        bj, hoisted, _ = batch_jaxpr(ClosedJaxpr(body, []), size, flags + [True] * nb,
                                     [True] * len(body.outvars), as_body=True)
        return bj.jaxpr, hoisted

    m_j, m_h = batched(matvec, fm)
    h_avals = [P.aval_of(h) for h in m_h]
    s_j, s_h = batched(solve, fs + fm)
    s_j = _widen(s_j, len(s_h) + n_s, h_avals)
    t_j, t_h = batched(transpose_solve, ft + fm)
    t_j = _widen(t_j, len(t_h) + n_t, h_avals)
    outs = linear_solve_p.bind(*m_h, *cm, *s_h, *cs, *t_h, *ct, *b, matvec=m_j, solve=s_j,
                               transpose_solve=t_j,
                               counts=(len(m_h) + n_m, len(s_h) + n_s, len(t_h) + n_t, nb))
    return outs, [0] * len(outs)


linear_solve_p.impl = _linear_solve_impl
linear_solve_p.abstract_eval = _linear_solve_aval
linear_solve_p.inline = _linear_solve_inline
linear_solve_p.jvp = _linear_solve_jvp
linear_solve_p.batch = _linear_solve_batch
deftranspose(linear_solve_p, _linear_solve_transpose)     # linear in b (checked by the rule)
