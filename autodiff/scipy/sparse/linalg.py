"""``jax.scipy.sparse.linalg``: conjugate gradients (``cg``) and BiCGSTAB (``bicgstab``)
for ``A x = b`` with ``A`` a function (or a matrix), ``b`` any pytree of arrays.

Each solver is a :func:`autodiff.lax.while_loop`, so it runs under ``jit`` and ``vmap``;
derivatives come from :func:`autodiff.lax.custom_linear_solve`: implicitly, by one more
solve with the transposed operator, in ``b`` and in everything ``A`` closes over, never
through the iterations. The tolerance is scipy's non-legacy rule, ``‖r‖ ≤ max(tol ‖b‖,
atol)``, and the iterations are JAX's (and scipy's). ``info`` is ``None``, as in JAX.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.scipy.sparse.linalg import cg
>>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> x, _ = cg(A, np.array([1.0, 2.0]), tol=1e-12)
>>> bool(np.allclose(x, np.linalg.solve(A, [1.0, 2.0])))
True
>>> g = ad.grad(lambda b: anp.sum(cg(lambda v: A @ v, b, tol=1e-12)[0]))(np.ones(2))
>>> bool(np.allclose(g, np.linalg.solve(A.T, np.ones(2))))
True
"""
import functools
import operator

import numpy as np

from ... import numpy as anp
from ..._lax_control_flow import while_loop
from ...core import Tracer
from ...tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab", "gmres"]


def _vdot_real_part(x, y):
    """``Re(x^H y)`` without the real-imaginary cross terms (CG's ``z^H M z``, real)."""
    result = anp.vdot(anp.real(x), anp.real(y))
    if anp.iscomplexobj(x) or anp.iscomplexobj(y):
        result = result + anp.vdot(anp.imag(x), anp.imag(y))
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(anp.vdot, x, y)))


def _mul(scalar, tree):
    return tree_map(lambda leaf: scalar * leaf, tree)


_add = functools.partial(tree_map, operator.add)
_sub = functools.partial(tree_map, operator.sub)


def _identity(x):
    return x


def _normalize_matvec(f):
    """A function ``v -> A v`` from a function, a square matrix or a ``@``-able object."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Tracer)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(anp.dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _result_dtype(tree):
    return np.result_type(*[anp.asarray(leaf).dtype for leaf in tree_leaves(tree)])


def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = anp.maximum(tol ** 2 * bs, atol ** 2)

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = anp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
        return anp.logical_and(rs > atol2, k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / anp.astype(_vdot_real_tree(p, Ap), dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = anp.astype(_vdot_real_tree(r_, z_), dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _result_dtype(p0)
    gamma0 = anp.astype(_vdot_real_tree(r0, z0), dtype)
    x_final, *_ = while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, np.int64(0)))
    return x_final


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = anp.maximum(tol ** 2 * bs, atol ** 2)

    def cond_fun(value):
        x, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        # k < 0 marks a breakdown
        return anp.logical_and(anp.logical_and(rs > atol2, k < maxiter), k >= 0)

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(functools.partial(anp.where, exit_early),
                      _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(functools.partial(anp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = anp.where(anp.logical_or(omega_ == 0, alpha_ == 0), -11, k + 1)
        k_ = anp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    one = anp.ones((), _result_dtype(b))
    init = (x0, r0, r0, one, one, one, r0, r0, np.int64(0))
    x_final, *_ = while_loop(cond_fun, body_fun, init)
    return x_final


def _shapes(tree):
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(solve_fn, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None,
            check_symmetric=False):
    from ..._lax_solves import custom_linear_solve
    b = tree_map(anp.asarray, b)
    if x0 is None:
        x0 = tree_map(anp.zeros_like, b)
    x0 = tree_map(anp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(int(np.size(leaf)) for leaf in tree_leaves(b))   # scipy's
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: "
                         f"{_shapes(x0)} vs {_shapes(b)}")
    solve = functools.partial(solve_fn, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # real-valued positive-definite linear operators are symmetric
    symmetric = check_symmetric and all(not np.issubdtype(anp.asarray(leaf).dtype,
                                                          np.complexfloating)
                                        for leaf in tree_leaves(b))
    x = custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by conjugate gradients, ``A`` Hermitian positive definite: a
    function ``v -> A v`` (returning the structure of ``v``), a square matrix or an
    object with ``@``. ``b`` and ``x0`` are arrays or pytrees of arrays; ``M`` a
    preconditioner approximating ``A⁻¹`` (same forms as ``A``). Stops when
    ``‖r‖ ≤ max(tol ‖b‖, atol)`` or after ``maxiter`` (default ``10 · size(b)``)
    iterations. Returns ``(x, None)``, as JAX's ``cg``; derivatives are implicit.

    >>> import numpy as np
    >>> from autodiff.scipy.sparse.linalg import cg
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> x, info = cg(lambda v: A @ v, np.array([1.0, 2.0]), tol=1e-10)
    >>> x.round(6), info
    (array([0.090909, 0.636364]), None)
    """
    return _isolve(_cg_solve, A, b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by BiCGSTAB, for a general (non-symmetric) ``A``; arguments,
    stopping rule and result as :func:`cg`. Derivatives are implicit (a second solve
    with ``Aᵀ``).

    >>> import numpy as np
    >>> from autodiff.scipy.sparse.linalg import bicgstab
    >>> A = np.array([[3.0, 1.0], [-1.0, 2.0]])
    >>> x, _ = bicgstab(A, np.array([1.0, 1.0]), tol=1e-10)
    >>> bool(np.allclose(x, np.linalg.solve(A, [1.0, 1.0])))
    True
    """
    return _isolve(_bicgstab_solve, A, b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Not implemented: ``gmres`` raises ``NotImplementedError`` naming the alternatives
    (:func:`bicgstab` for general ``A``, :func:`cg` for symmetric positive definite ``A``).

    >>> import numpy as np
    >>> from autodiff.scipy.sparse.linalg import gmres
    >>> gmres(np.eye(2), np.ones(2))
    Traceback (most recent call last):
    ...
    autodiff.errors.UnsupportedError: jax.scipy.sparse.linalg.gmres is not implemented; ...
    """
    from ...errors import UnsupportedError
    raise UnsupportedError("jax.scipy.sparse.linalg.gmres is not implemented; use bicgstab "
                           "(same arguments) for a general A, or cg for a symmetric positive "
                           "definite one")
