"""autograd's ``misc.fixed_points.fixed_point``, differentiated implicitly.

``fixed_point(f, a, x0, distance, tol)`` iterates ``x ← f(a)(x)`` from ``x0`` until
``distance(x, x_prev) <= tol`` and returns the fixed point ``x* = f(a)(x*)``. Its
derivative with respect to ``a`` does not unroll the iterations: by the implicit
function theorem, ``x̄ᵀ dx*/da = wᵀ ∂f/∂a`` where ``w = x̄ + (∂f/∂x)ᵀ w`` is itself
the fixed point of a linear map, found by the same iteration in the backward pass.
The loops are ``lax.while_loop``, so the function also works under ``jit``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.misc.fixed_points import fixed_point
>>> def newton_sqrt(a):            # x* = √a is the fixed point of x ↦ (x + a/x)/2
...     return lambda x: 0.5 * (x + a / x)
>>> dist = lambda x, y: anp.abs(x - y)
>>> sqrt = lambda a: fixed_point(newton_sqrt, a, 1.0, dist, 1e-12)
>>> round(float(sqrt(2.0)), 12), round(float(ad.grad(sqrt)(2.0)), 12)   # √2, 1/(2√2)
(1.414213562373, 0.353553390593)
"""
from .. import numpy as anp
from ..api import trace_fun, vjp
from ..backends.interpreter import run_closed
from ..core import Tracer, get_aval, trace_state
from ..custom_cache import NEEDS_VALUES, cached_trace, function_key, value_key
from ..custom_derivatives import custom_vjp
# one while equation even on values: its steps run inside traced custom_vjp rules (and the
# adjoint's call a vjp each), cheaper traced once and interpreted than run step by step
from .._lax_control_flow import while_loop_traced as _while_loop_traced
from ..tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["fixed_point"]


def _iterate(step, x0, distance, tol):
    """``x ← step(x)`` until ``distance(x, x_prev) <= tol``, as a while_loop."""
    def cond(state):
        x, x_prev = state
        return distance(x, x_prev) > tol

    def body(state):
        x, _ = state
        return step(x), x

    x, _ = _while_loop_traced(cond, body, (step(x0), x0))
    return x


def _fixed_point(f, a, x0, distance, tol):
    x0 = tree_map(lambda x: anp.asarray(x) * 1.0, x0)      # the loop carries floats
    return _iterate(f(a), x0, distance, tol)


_fixed_point_cvjp = custom_vjp(_fixed_point, nondiff_argnums=(0, 3, 4))


def _fixed_point_fwd(f, a, x0, distance, tol):
    # through the custom rule again, so that x* is differentiated implicitly at any order
    x_star = _fixed_point_cvjp(f, a, x0, distance, tol)
    return x_star, (a, x_star)


def _adjoint_iteration(params):
    # w ↦ x̄ + (∂f/∂x at x*)ᵀ w, whose fixed point is the adjoint w
    f, a, x_star, x_star_bar = params[0], *params[1]
    _, vjp_x = vjp(f(a), x_star)
    return lambda w: tree_map(lambda u, v: u + v, vjp_x(w)[0], x_star_bar)


def _adjoint(f, distance, tol, a, x_star, x_star_bar):
    # the adjoint is itself a fixed point: solved (and differentiated) by fixed_point,
    # so second derivatives come from the implicit function theorem again, as in autograd
    w = _fixed_point_cvjp(lambda p: _adjoint_iteration((f, p)), (a, x_star, x_star_bar),
                          tree_map(anp.zeros_like, x_star_bar), distance, tol)
    _, vjp_a = vjp(lambda a: f(a)(x_star), a)
    return vjp_a(w)[0], tree_map(anp.zeros_like, x_star)


def _fixed_point_bwd(f, distance, tol, res, x_star_bar):
    a, x_star = res
    flat, tree = tree_flatten((a, x_star, x_star_bar))
    if not any(isinstance(x, Tracer) for x in flat):
        # a gradient's one backward pass, on values: the adjoint solve (a vjp and a loop) is
        # traced once per (f, distance, tol, shapes) and interpreted, not retraced per call
        fk, dk, tk = function_key(f), function_key(distance), value_key(tol)
        if fk is not None and dk is not None and tk is not None:
            avals = tuple(get_aval(x).strip_weak() for x in flat)
            got = cached_trace(
                "fixed_point adjoint", (fk, dk, tk, avals, tree, trace_state.grad_enabled),
                lambda: trace_fun(lambda *r: _adjoint(f, distance, tol, *r), flat, tree,
                                  concrete=False, name="fixed_point_adjoint"))
            if got is not NEEDS_VALUES:
                closed, out_tree = got
                return tree_unflatten(out_tree, run_closed(closed, flat))
    return _adjoint(f, distance, tol, a, x_star, x_star_bar)


_fixed_point_cvjp.defvjp(_fixed_point_fwd, _fixed_point_bwd)


def fixed_point(f, a, x0, distance, tol):
    """The fixed point of ``f(a)`` reached from ``x0``; differentiable in ``a``.

    ``f(a)`` must return the map ``x ↦ x'``; ``distance(x, x_prev)`` a scalar compared
    with ``tol``. The derivative with respect to ``x0`` is zero (the fixed point does
    not depend on where the iteration starts).
    """
    return _fixed_point_cvjp(f, a, x0, distance, tol)
