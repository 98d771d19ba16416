"""Taylor mode: push a truncated Taylor series through a jaxpr in one pass.

A value on the input path ``x(t) = x₀ + x₁ t + x₂ t² + … + x_K t^K`` is carried as
its list of (normalized) Taylor coefficients ``[x₀, x₁, …, x_K]``; each primitive's
Taylor rule, ``p.taylor`` (declared beside the primitive: ``primitives._rules.deftaylor``),
maps the coefficient lists of its inputs to those of its output. Rules are written with
the primitives' ``bind``, so the coefficient program is IR again: it prints, jits (and
fuses), vmaps and differentiates like any other. The cost per elementwise operation grows
like K² (Cauchy products and the standard recurrences of Griewank & Walther, *Evaluating
Derivatives*, ch. 13; :mod:`autodiff.primitives.taylor_series`), not like the 2^K of
nesting ``jvp`` K times.

This module is the machinery: the evaluator (:func:`jet_eval`, :func:`jet_jaxpr`), the
rule lookup (:func:`rule_for`, with the rules it derives for a primitive declared without
one) and the user functions :func:`jet` and :func:`taylor`.

A coefficient that cannot be nonzero is ``None`` and costs no equations (a linear
input path ``x₀ + v t`` keeps ``x₂ … x_K`` symbolic until the first nonlinear op).

The public convention (:func:`autodiff.jet`, as in JAX) scales coefficients by
factorials: the ``k``-th series term is the ``k``-th derivative of the path in ``t``;
:func:`jet_eval` works with the normalized ones (``x_k = term_k / k!``).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> y, ys = ad.jet(anp.exp, (0.0,), ((1.0, 0.0, 0.0),))       # d^k/dt^k e^t at 0
>>> float(y), [float(c) for c in ys]
(1.0, [1.0, 1.0, 1.0])
"""
import math
from collections.abc import Mapping, MutableMapping

import numpy as np

from ..api_util import as_array, outputs, trace_fun
from ..core import (Eqn, Literal, ShapedArray, Var, Zero, at_source, eval_jaxpr, is_inexact_dtype,
                    last_uses, register_internal_dir, trace_flat, trace_state, user_source)
from ..errors import ShapeError, UnsupportedError
from .. import primitives as P
from ..primitives.taylor_series import has_series, scale, series_integrate
from ..tree_util import tree_flatten, tree_unflatten

__all__ = ["jet_rules", "NONDIFFERENTIABLE", "OPAQUE", "rule_for", "jet_eval", "jet_jaxpr",
           "call_rule", "is_jettable", "jet", "taylor"]

register_internal_dir(__file__)


# ============================================================================
# The rules: each primitive's ``taylor`` attribute, and the tables that read them
# ============================================================================

class _RuleTable(MutableMapping):
    """``Primitive -> rule(ins, **params)``: a view of the declared rules (``p.taylor``) of
    the registered primitives. Setting an entry declares the rule; deleting one removes it
    (``jet`` then derives one where it can, see :func:`rule_for`)."""

    def __getitem__(self, prim):
        rule = getattr(prim, "taylor", None)
        if rule is None:
            raise KeyError(prim)
        return rule

    def __setitem__(self, prim, rule):
        prim.taylor = rule

    def __delitem__(self, prim):
        self[prim]                                # KeyError when there is none
        prim.taylor = None

    def __iter__(self):
        return (p for p in list(P.primitives.values()) if p.taylor is not None)

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"<Taylor rules of {len(self)} primitives>"


jet_rules = _RuleTable()


class _ReasonTable(Mapping):
    """``name -> reason`` for the registered primitives whose Taylor rule carries the
    attribute ``attr`` (set by the declaration helpers in ``primitives._rules``)."""

    def __init__(self, attr):
        self._attr = attr

    def _items(self):
        return {n: getattr(p.taylor, self._attr) for n, p in list(P.primitives.items())
                if getattr(p.taylor, self._attr, None)}

    def __getitem__(self, name):
        return self._items()[name]

    def __iter__(self):
        return iter(self._items())

    def __len__(self):
        return len(self._items())

    def __repr__(self):
        return repr(self._items())


# Primitives whose output has no derivative of any order (integer, boolean or piecewise
# constant results, or a derivative cut by definition: ``defjvp_zero(p, reason)``): their
# rule gives zero higher coefficients. The registry test checks it against the primitives'
# own ``differentiable`` flag.
NONDIFFERENTIABLE = _ReasonTable("no_derivative")

# Primitives with no derivative at all, not even zero (opaque host code,
# ``deftaylor_opaque(p, reason)``): Taylor mode through them is an error that says what to do.
OPAQUE = _ReasonTable("opaque")


def rule_for(prim):
    """The Taylor rule of ``prim``: its own (``prim.taylor``), or one derived from its other
    declarations (a unary elementwise primitive's jvp, a composite's ``inline`` body, any
    other primitive's jvp); ``None`` when it has none."""
    if prim.taylor is not None:
        return prim.taylor
    if (getattr(prim, "vectorized", False) and prim.differentiable and prim.jvp is not None
            and not prim.multiple_results):
        return _derived_unary_rule(prim)
    if getattr(prim, "inline", None) is not None:
        return _inline_rule(prim)
    if prim.differentiable and prim.jvp is not None:
        return _derived_rule(prim)
    return None


def _avals(ins):
    return [ShapedArray(tuple(P.shape_of(s[0])), P.dtype_of(s[0])) for s in ins]


def _derived_unary_rule(prim):
    """The Taylor rule of an elementwise unary primitive, from its jvp rule alone.

    With ``y = f(x)``, ``y' = g(x) x'`` where ``g(x)`` is the jvp at a unit tangent. So
    ``y_k = (1/k) Σ_{j=1}^k j x_j g_{k-j}``, and ``g``'s coefficients up to ``K - 1`` come
    from Taylor-evaluating ``g``'s own program one order lower (its primitives' rules,
    this one's included, at decreasing orders). A hand-written rule is faster (declared
    with ``deftaylor`` it wins); this one makes a new elementwise primitive work in ``jet``
    from its ``defjvp`` declaration.
    """
    def rule(ins, **params):
        if len(ins) != 1:
            raise UnsupportedError(
                f"Taylor mode (jet) through {prim.name}: its rule is derived for one-operand "
                f"primitives only; declare one beside the primitive with "
                f"autodiff.primitives.deftaylor", source=trace_state.source)
        x = ins[0]
        K = len(x) - 1
        y0 = prim.bind(x[0], **params)
        if K == 0 or not has_series(x):
            return [y0] + [None] * K
        a = _avals(ins)[0]
        one = np.ones(a.shape, a.dtype)
        g = trace_flat(lambda v: [P.instantiate(prim.jvp((v,), (one,), **params)[1])], [a],
                       name=f"{prim.name}_derivative")
        if K == 1:
            w = list(eval_jaxpr(g.jaxpr, g.consts, x[0]))
        else:
            outs, series = jet_eval(g.jaxpr, g.consts, [x[0]], [x[1:K]], K - 1)
            w = [outs[0]] + list(series[0])
        return series_integrate(x, w, y0)
    return rule


def _derived_rule(prim):
    """The Taylor rule of any primitive with a jvp rule (a factorization: ``qr``, ``svd``).

    Along the curve ``x(t) = Σ x_j tʲ`` the output ``y(t) = f(x(t))`` has ``y' = jvp(x; x')``,
    linear in ``x'``. Taylor-evaluating the jvp's own program at order ``K - 1`` on the
    series of ``x`` and of ``x' = Σ (j+1) x_{j+1} tʲ`` gives ``y'``'s coefficients ``w``, and
    ``y_k = w_{k-1} / k``. The jvp program holds ``f`` itself, so the rule recurses down
    one order per level (K levels for order K, each as costly as one jvp).
    """
    def rule(ins, **params):
        K = len(ins[0]) - 1
        xs = [s[0] for s in ins]
        y0 = prim.bind(*xs, **params)
        outs0 = list(y0) if prim.multiple_results else [y0]
        if K == 0 or not any(has_series(s) for s in ins):
            res = [[o] + [None] * K for o in outs0]
            return res if prim.multiple_results else res[0]
        avals = _avals(ins)
        fl = [i for i, a in enumerate(avals) if _is_float(a)]

        def tangent(*args):
            tans = iter(args[len(avals):])
            ts = [next(tans) if i in fl else Zero(a) for i, a in enumerate(avals)]
            _, tout = prim.jvp(list(args[:len(avals)]), ts, **params)
            return [P.instantiate(t) for t in (tout if prim.multiple_results else [tout])]
        g = trace_flat(tangent, avals + [avals[i] for i in fl], name=f"{prim.name}_derivative")
        # x' = Σ (j+1) x_{j+1} tʲ: its value and its coefficients 1 .. K-1
        prims = xs + [P.zeros_like(xs[i]) if ins[i][1] is None else ins[i][1] for i in fl]
        series = [list(s[1:K]) for s in ins] + [[scale(ins[i][j + 1], j + 1) for j in range(1, K)]
                                               for i in fl]
        if K == 1:
            w = [[o] for o in eval_jaxpr(g.jaxpr, g.consts, *prims)]
        else:
            wo, ws = jet_eval(g.jaxpr, g.consts, prims, series, K - 1)
            w = [[o] + list(s) for o, s in zip(wo, ws)]
        res = [[o] + [scale(c, 1.0 / (k + 1)) for k, c in enumerate(wk)]
               for o, wk in zip(outs0, w)]
        return res if prim.multiple_results else res[0]
    return rule


def call_rule(body):
    """The Taylor rule of a call-like primitive: jet of its body, ``body(ins, params) ->
    (Jaxpr, consts)``; one coefficient list per result."""
    def rule(ins, **params):
        K = len(ins[0]) - 1
        jaxpr, consts = body(ins, params)
        outs, oser = jet_eval(jaxpr, consts, [s[0] for s in ins], [s[1:] for s in ins], K)
        return [[o] + list(s) for o, s in zip(outs, oser)]
    return rule


def _inline_rule(prim):
    """The Taylor rule of a composite or call primitive without its own: jet of the body its
    ``inline(eqn) -> (Jaxpr, consts)`` rule gives for the operands' avals (what ``jit``
    compiles in its place: logsumexp's definition, a custom_vjp function's primal)."""
    def body(ins, params):
        return prim.inline(Eqn(prim, [Var(a) for a in _avals(ins)], [], params))
    calls = call_rule(body)
    if prim.multiple_results:
        return calls
    return lambda ins, **params: calls(ins, **params)[0]


def is_jettable(jaxpr):
    """Whether every primitive of ``jaxpr`` (and of the bodies it calls) has a Taylor rule
    that is not an error (opaque host code has none)."""
    for e in jaxpr.eqns:
        rule = rule_for(e.primitive)
        if rule is None or getattr(rule, "opaque", None):
            return False
        for v in e.params.values():
            for j in (v if isinstance(v, (tuple, list)) else [v]):
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns") and not is_jettable(inner):
                    return False
    return True


# ============================================================================
# The transform
# ============================================================================

def _is_float(aval):
    return is_inexact_dtype(aval.dtype)


def _fit(c, aval):
    """A coefficient of a rank-0 operand meeting a full-rank one: give it the output shape."""
    if c is None or tuple(P.shape_of(c)) == tuple(aval.shape):
        return c
    return P.broadcast_in_dim(c, tuple(aval.shape), ())


def jet_eval(jaxpr, consts, primals, series, order):
    """Evaluate ``jaxpr`` on Taylor polynomials -> ``(outs, out_series)``.

    ``series[i]`` holds the normalized coefficients ``[x_1, …, x_order]`` of input ``i``
    (``None`` entries, or ``None`` for the whole list, are zeros); the result lists the
    output coefficients the same way. Runs with ``bind``: on tracers it records the
    coefficient program into the enclosing trace.
    """
    env = {}
    none = [None] * order
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = [c] + none
    for v, p, s in zip(jaxpr.invars, primals, series):
        s = none if s is None or not _is_float(v.aval) else list(s)
        env[v] = [p] + s

    def read(v):
        return [v.val] + none if isinstance(v, Literal) else env[v]

    for e, frees in zip(jaxpr.eqns, last_uses(jaxpr)):
        ins = [read(v) for v in e.invars]
        prim = e.primitive
        if not any(has_series(s) for s in ins):
            out = at_source(e.source, prim.bind, *[s[0] for s in ins], **e.params)
            outs = [[o] + none for o in out] if prim.multiple_results else [[out] + none]
        else:
            rule = rule_for(prim)
            if rule is None:
                raise UnsupportedError(f"Taylor mode (jet) of primitive {prim.name!r} is not "
                                       f"supported: it has no Taylor rule", source=e.source)
            outs = at_source(e.source, rule, ins, **e.params)
            outs = outs if prim.multiple_results else [outs]
        for v, s in zip(e.outvars, outs):
            env[v] = ([s[0]] + ([_fit(c, v.aval) for c in s[1:]] if _is_float(v.aval) else none))
        for v in frees:                           # release buffers after their last use
            env.pop(v, None)
    res = [read(v) for v in jaxpr.outvars]
    return [s[0] for s in res], [s[1:] for s in res]


def jet_jaxpr(closed, order, nonzeros):
    """The Taylor program of ``closed`` as a new ClosedJaxpr.

    Inputs: the primals, then the ``order`` normalized coefficients of each input with
    ``nonzeros[i]`` set (in input order); outputs: the primal outputs, then ``order``
    coefficients of every output (zeros materialized).
    """
    jaxpr = closed.jaxpr
    in_avals = [v.aval for v in jaxpr.invars]
    n = len(in_avals)
    s_avals = [ShapedArray(a.shape, a.dtype) for a, nz in zip(in_avals, nonzeros) if nz
               for _ in range(order)]

    def fun(*args):
        it = iter(args[n:])
        series = [[next(it) for _ in range(order)] if nz else None for nz in nonzeros]
        outs, out_series = jet_eval(jaxpr, closed.consts, args[:n], series, order)
        res = list(outs)
        for o, s in zip(outs, out_series):
            res += [P.full(P.shape_of(o), 0, P.dtype_of(o)) if c is None else c for c in s]
        return res

    return trace_flat(fun, in_avals + s_avals, name="jet")


# ============================================================================
# The user-facing transforms
# ============================================================================

def _check_series(name, primals, series):
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError(f"{name}: primals and series must be tuples (one entry per argument), "
                        f"e.g. jet(f, (x,), ((v, 0.0, 0.0),))")
    if len(primals) != len(series):
        raise TypeError(f"{name}: {len(primals)} primals but {len(series)} series")
    orders = {len(s) for s in series if isinstance(s, (tuple, list))}
    if any(not isinstance(s, (tuple, list)) for s in series) or len(orders) > 1:
        raise TypeError(f"{name}: each series must be a list of Taylor terms, all of one "
                        f"length (the order); got lengths {sorted(orders)}")
    return orders.pop() if orders else 0


def _jet_flat(fun, flat_p, in_tree, flat_s, K):
    """jet on flat inputs with normalized coefficients -> (outs, out_tree, derivative terms)."""
    closed, out_tree = trace_fun(fun, flat_p, in_tree, name="jet", differentiated=True)
    outs, oser = jet_eval(closed.jaxpr, closed.consts, flat_p, flat_s, K)
    terms = [[P.full(P.shape_of(o), 0, P.dtype_of(o)) if c is None
              else scale(c, math.factorial(k + 1)) for k, c in enumerate(s)]
             for o, s in zip(outs, oser)]
    return outs, out_tree, terms


def jet(fun, primals, series):
    """Taylor-mode differentiation: push a truncated Taylor series through ``fun``.

    ``primals`` is a tuple of inputs and ``series`` a tuple (one per input) of lists of
    terms ``[x₁, …, x_K]`` of the input path ``x(t) = x₀ + Σ_k x_k t^k / k!`` (each term
    shaped like its input). Returns ``(fun(*primals), series_out)`` with ``series_out``
    the terms ``[y₁, …, y_K]`` of ``y(t) = fun(x(t))``, scaled the same way:
    ``y_k = d^k/dt^k fun(x(t))`` at ``t = 0`` (JAX's ``jax.experimental.jet.jet``
    convention). One pass whose cost grows like K² per operation, for every primitive;
    the result is IR again, so ``jit``, ``vmap``, ``grad`` and ``make_jaxpr`` apply.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> y, (y1, y2, y3) = ad.jet(anp.sin, (0.5,), ((1.0, 0.0, 0.0),))
    >>> np.allclose([y1, y2, y3], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)])
    True
    """
    K = _check_series("jet", primals, series)
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_p = [as_array(x) for x in flat_p]
    terms = []                                    # per order, the flat leaves of every input
    for k in range(K):
        flat_k, tree_k = tree_flatten(tuple(s[k] for s in series))
        if tree_k != in_tree:
            raise TypeError(f"jet: series term {k + 1} has structure {tree_k}, the primals "
                            f"{in_tree}")
        terms.append([as_array(c) for c in flat_k])
    flat_s = []
    for i, p in enumerate(flat_p):
        shape, dt = P.shape_of(p), P.dtype_of(p)
        for k in range(K):
            if P.shape_of(terms[k][i]) != shape:
                raise ShapeError(f"jet: series term {k + 1} of an input has shape "
                                 f"{P.shape_of(terms[k][i])}, the input {shape}: every term "
                                 f"is shaped like its input", source=user_source())
        flat_s.append([P.mul(P.convert(terms[k][i], dt), 1.0 / math.factorial(k + 1))
                       for k in range(K)] if is_inexact_dtype(dt) else None)
    outs, out_tree, oterms = _jet_flat(fun, flat_p, in_tree, flat_s, K)
    return (outputs(tree_unflatten(out_tree, outs)),
            outputs(tree_unflatten(out_tree, oterms)))


def taylor(fun, order):
    """The directional derivatives ``[f(x), f'(x)·v, f''(x)[v, v], …, f^(order)(x)[v, …, v]]``
    of ``fun`` at ``x`` along ``v`` (default: ones), from one Taylor-mode pass.

    These are derivatives (the Taylor coefficients times ``k!``); for a scalar ``x`` the
    plain ``f^(k)(x)``. Nested ``grad`` gives the same numbers at a cost that grows much
    faster with ``order``. The input path ``x + v t`` has no higher terms, so they cost
    no equations.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> [float(d) for d in ad.taylor(anp.exp, 4)(0.0)]
    [1.0, 1.0, 1.0, 1.0, 1.0]
    >>> [float(d) for d in ad.taylor(lambda x: x ** 3, 3)(2.0)]    # x³, 3x², 6x, 6
    [8.0, 12.0, 12.0, 6.0]
    """
    if isinstance(order, bool) or int(order) != order or order < 0:
        raise TypeError(f"taylor: order must be a non-negative int, got {order!r}")
    K = int(order)

    def derivatives(x, v=None):
        flat_p, in_tree = tree_flatten((x,))
        flat_p = [as_array(a) for a in flat_p]
        if v is None:
            flat_v = [np.ones(P.shape_of(a), P.dtype_of(a)) for a in flat_p]
        else:
            flat_v, v_tree = tree_flatten((v,))
            if v_tree != in_tree:
                raise TypeError(f"taylor: v has structure {v_tree}, x {in_tree}")
            flat_v = [as_array(a) for a in flat_v]
        flat_s = [([P.convert(t, P.dtype_of(a))] + [None] * (K - 1) if K else [])
                  if is_inexact_dtype(P.dtype_of(a)) else None for a, t in zip(flat_p, flat_v)]
        outs, out_tree, oterms = _jet_flat(fun, flat_p, in_tree, flat_s, K)
        return [outputs(tree_unflatten(out_tree, outs))] + [
            outputs(tree_unflatten(out_tree, [t[k] for t in oterms])) for k in range(K)]

    derivatives.__name__ = f"taylor_{K}_{getattr(fun, '__name__', 'fun')}"
    derivatives.__doc__ = f"[f(x), f'(x)·v, …, f^({K})(x)[v, …]] of {fun!r} from one jet pass"
    return derivatives
