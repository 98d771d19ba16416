"""``jax.lax``'s implicit solves: ``custom_root`` (the root's derivative by the implicit
function theorem) and ``custom_linear_solve`` (the solve's derivative by solving again, with
the transpose for reverse mode).

>>> import numpy as np, autodiff as ad
>>> ad.lax.custom_linear_solve(lambda x: 2.0 * x, np.array([4.0]),
...                            lambda mv, b: b / 2.0, symmetric=True)
array([2.])
"""


from . import numpy as anp
from .api import jvp, vjp
from .core import trace_flat, eval_jaxpr, get_aval
from .custom_derivatives import custom_jvp, custom_vjp
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
    reverse mode solves the transposed system once, ``b̄ = Aᵀ⁻¹ x̄`` (with
    ``transpose_solve(vecmat, x̄)``, or ``solve`` itself when ``symmetric``), and
    ``Ā`` follows as ``-b̄ xᵀ`` through ``matvec``'s own derivative; forward mode solves
    ``A dx = db - dA x`` with ``solve`` again.

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
    if transpose_solve is None and not symmetric:
        transpose_solve = None      # resolved lazily: only reverse mode needs it
    mv, consts = _closure_convert(lambda v: matvec(v), b)
    stop = lambda t: tree_map(anp.stop_gradient, t)
    # the solver may close over traced values too (``lambda mv, r: solve(A, r)``): they are
    # made explicit, and never differentiated (the derivative is implicit)
    sv, sconsts = _closure_convert(lambda r: solve(lambda v: mv(stop(consts), v), r), b)
    n_c = len(consts)

    @custom_jvp
    def implicit_solve(cs, b):
        # the solver runs on values: its iterations are never differentiated
        out = sv(stop(list(cs[n_c:])), stop(b))
        return out if has_aux else (out, None)

    @implicit_solve.defjvp
    def implicit_solve_jvp(primals, tangents):
        # forward mode (jvp, jacfwd, hessian's outer pass): A x = b gives
        # A dx = db - dA x, one more solve with the same operator
        cs, b = primals
        tcs, tb = tangents
        x, aux = implicit_solve(cs, b)
        _, dax = jvp(lambda c: mv(c, x), (list(cs[:n_c]),), (list(tcs[:n_c]),))
        dx, _ = implicit_solve(cs, tree_map(anp.subtract, tb, dax))
        return (x, aux), (dx, tree_map(anp.zeros_like, aux))

    def fwd(cs, b):
        x, aux = implicit_solve(cs, b)
        return (x, aux), (cs, x)

    def bwd(res, ct):
        cs, x = res
        cs_a = list(cs[:n_c])
        ct_x = ct[0]
        _, vjp_v = vjp(lambda v: mv(cs_a, v), x)
        vecmat = lambda u: vjp_v(u)[0]
        if symmetric:      # lin_solve: bwd itself differentiates (hessian, grad of grad)
            ct_b = lin_solve(cs, ct_x)[0]
        elif transpose_solve is not None:
            ct_b = transpose_solve(vecmat, ct_x)
            ct_b = ct_b[0] if has_aux and isinstance(ct_b, tuple) else ct_b
        else:
            raise TypeError("custom_linear_solve: reverse mode of a non-symmetric system needs "
                            "transpose_solve(vecmat, b)")
        # x = A⁻¹ b: Ā contributions reach matvec's constants as -(∂(A x)/∂θ)ᵀ b̄
        _, vjp_c = vjp(lambda c: mv(c, x), cs_a)
        ct_cs = list(vjp_c(tree_map(anp.negative, ct_b))[0])
        return ct_cs + [anp.zeros_like(c) for c in cs[n_c:]], ct_b

    @custom_vjp
    def lin_solve(cs, b):
        return implicit_solve(cs, b)

    lin_solve.defvjp(fwd, bwd)
    x, aux = lin_solve(list(consts) + list(sconsts), b)
    return (x, aux) if has_aux else x
