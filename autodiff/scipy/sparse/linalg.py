"""``jax.scipy.sparse.linalg``: conjugate gradients (``cg``), BiCGSTAB (``bicgstab``) and
restarted GMRES (``gmres``) for ``A x = b`` with ``A`` a function (or a matrix), ``b`` any
pytree of arrays.

Each solver is a :func:`autodiff.lax.while_loop`, so it runs under ``jit`` and ``vmap``;
derivatives come from :func:`autodiff.lax.custom_linear_solve`: implicitly, by one more
solve with the transposed operator, in ``b`` and in everything ``A`` closes over, never
through the iterations. The tolerance is scipy's non-legacy rule, ``‖r‖ ≤ max(tol ‖b‖,
atol)`` (for ``gmres`` the preconditioned residual, as JAX), and the iterations are JAX's
(and scipy's). ``info`` is ``None`` for ``cg``/``bicgstab``, ``0`` or ``-1`` (a NaN) for
``gmres``, as in JAX.

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


def _inexact(x):
    """Integer and boolean arrays as floats (GMRES's basis and rotations are inexact)."""
    return x if np.issubdtype(x.dtype, np.inexact) else anp.astype(x, np.float64)


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


# --- GMRES ------------------------------------------------------------------------------
# The Krylov basis is a pytree shaped like b whose leaves carry a leading axis of
# ``restart + 1`` rows, each leaf flattened: row j of every leaf together is basis vector j.
# Rows not yet built are zero, so projecting on all rows is projecting on the built ones.

def _norm(tree):
    return anp.sqrt(_vdot_real_tree(tree, tree))


def _safe_normalize(tree, thresh):
    """``(tree / ‖tree‖, ‖tree‖)``, or ``(0, 0)`` where ``‖tree‖ ≤ thresh``: no division
    by a vanishing norm, hence no NaN at a (happy) breakdown."""
    norm = _norm(tree)
    ok = norm > thresh
    scale = anp.where(ok, 1.0 / anp.where(ok, norm, 1.0), 0.0)
    unit = tree_map(lambda leaf: anp.astype(leaf * scale, leaf.dtype), tree)
    return unit, anp.where(ok, norm, 0.0)


def _new_basis(first, restart):
    return tree_map(lambda leaf: anp.at(anp.zeros((restart + 1, np.size(leaf)), leaf.dtype))
                    [0].set(anp.reshape(leaf, (-1,))), first)


def _basis_vector(V, k, like):
    return tree_map(lambda X, leaf: anp.reshape(X[k], np.shape(leaf)), V, like)


def _set_basis_vector(V, k, tree):
    return tree_map(lambda X, leaf: anp.at(X)[k].set(anp.astype(anp.reshape(leaf, (-1,)),
                                                                  X.dtype)), V, tree)


def _overlaps(V, w, dtype):
    """``Vᴴ w``: the overlap of ``w`` with every row of the basis."""
    return anp.astype(sum(anp.matmul(anp.conj(X), anp.reshape(leaf, (-1,)))
                          for X, leaf in zip(tree_leaves(V), tree_leaves(w))), dtype)


def _combination(V, coefficients, like):
    """``Σ_j coefficients[j] V[j]`` (only the first ``len(coefficients)`` rows)."""
    m = np.shape(coefficients)[0]
    return tree_map(lambda X, leaf: anp.astype(anp.reshape(anp.matmul(coefficients, X[:m]),
                                                           np.shape(leaf)), leaf.dtype),
                    V, like)


def _arnoldi_step(k, A, M, V, like, dtype):
    """Extend the orthonormal basis of the Krylov space of ``M∘A`` by row ``k + 1``;
    returns it, the new Hessenberg column ``h`` (``M A V[k] = Σ_j h[j] V[j]``) and whether
    the new vector vanished (an invariant subspace was found: a happy breakdown)."""
    w = M(A(_basis_vector(V, k, like)))
    w_norm0 = _norm(w)
    h = anp.zeros(np.shape(tree_leaves(V)[0])[0], dtype)
    for _ in range(2):      # classical Gram-Schmidt, twice ("twice is enough")
        overlaps = _overlaps(V, w, dtype)
        w = _sub(w, _combination(V, overlaps, w))
        h = h + overlaps
    # what is left at rounding level of A v is no new direction
    unit, w_norm = _safe_normalize(w, np.finfo(dtype).eps * w_norm0)
    V = _set_basis_vector(V, k + 1, unit)
    h = anp.at(h)[k + 1].set(anp.astype(w_norm, dtype))
    return V, h, w_norm == 0


def _givens(a, b):
    """``(c, s)`` with ``c`` real, ``|c|² + |s|² = 1``, such that the rotation
    ``(x, y) -> (c x + s y, -s̄ x + c y)`` takes ``(a, b)`` to ``(ρ a/|a|, 0)``."""
    abs_a = anp.abs(a)
    rho = anp.hypot(abs_a, anp.abs(b))
    rho_ = anp.where(rho > 0, rho, 1.0)
    phase = anp.where(abs_a > 0, a / anp.where(abs_a > 0, abs_a, 1.0), 1.0)
    c = anp.where(rho > 0, abs_a / rho_, 1.0)
    s = anp.where(rho > 0, phase * anp.conj(b) / rho_, 0.0)
    return c, s


def _rotate_rows(Z, k, c, s):
    """The Givens rotation ``(c, s)`` applied to entries (rows) ``k`` and ``k + 1``."""
    x, y = Z[k], Z[k + 1]
    Z = anp.at(Z)[k].set(c * x + s * y)
    return anp.at(Z)[k + 1].set(c * y - anp.conj(s) * x)


def _triangular_solve(R, g):
    """``R y = g``, ``R`` upper triangular; a zero pivot (a singular operator) gives 0 in
    ``y`` rather than an infinity."""
    d = anp.diagonal(R)
    zero = d == 0
    R = R + anp.diag(anp.astype(zero, R.dtype))
    return anp.linalg.solve_triangular(R, anp.where(zero, 0, g), lower=False)


def _gmres_cycle_incremental(A, M, b, x, unit_residual, residual_norm, ptol, restart, dtype):
    """One cycle of ``restart`` Arnoldi steps that keeps the QR factorization of the
    Hessenberg matrix by Givens rotations: the residual of the small least-squares problem
    is known after each step, and the cycle stops once it is at most ``ptol``."""
    V = _new_basis(unit_residual, restart)
    R = anp.zeros((restart, restart + 1), dtype)      # row k: triangular column k
    Q = anp.eye(restart + 1, dtype=dtype)             # the product of the rotations so far
    g = anp.at(anp.zeros(restart + 1, dtype))[0].set(anp.astype(residual_norm, dtype))

    def cond_fun(carry):
        k, err, *_ = carry
        return anp.logical_and(k < restart, err > ptol)

    def body_fun(carry):
        k, _, V, R, Q, g = carry
        V, h, _ = _arnoldi_step(k, A, M, V, b, dtype)
        column = anp.matmul(Q, h)           # the earlier rotations applied to h
        c, s = _givens(column[k], column[k + 1])
        column = anp.at(_rotate_rows(column, k, c, s))[k + 1].set(0)
        R = anp.at(R)[k].set(column)
        Q = _rotate_rows(Q, k, c, s)
        g = _rotate_rows(g, k, c, s)
        return k + 1, anp.abs(g[k + 1]), V, R, Q, g

    init = (np.int64(0), residual_norm, V, R, Q, g)
    k, _, V, R, _, g = while_loop(cond_fun, body_fun, init)
    # only the k built columns count: g[k] is the residual estimate, not a coefficient
    built = anp.arange(restart) < k
    R = anp.where(built[:, None], R[:, :restart], anp.eye(restart, dtype=dtype))
    y = _triangular_solve(anp.transpose(R), anp.where(built, g[:restart], 0))
    return _add(x, _combination(V, y, x))


def _gmres_cycle_batched(A, M, b, x, unit_residual, residual_norm, ptol, restart, dtype):
    """One cycle that builds the whole basis of ``restart`` vectors (fewer at a breakdown),
    then solves the small least-squares problem ``min ‖H y - ‖r‖ e₁‖`` once."""
    del ptol
    V = _new_basis(unit_residual, restart)
    # unbuilt columns stay unit columns: the least-squares problem keeps full rank
    H = anp.eye(restart, restart + 1, dtype=dtype)

    def cond_fun(carry):
        k, breakdown, _, _ = carry
        return anp.logical_and(k < restart, anp.logical_not(breakdown))

    def body_fun(carry):
        k, _, V, H = carry
        V, h, breakdown = _arnoldi_step(k, A, M, V, b, dtype)
        return k + 1, breakdown, V, anp.at(H)[k].set(h)

    _, _, V, H = while_loop(cond_fun, body_fun, (np.int64(0), np.bool_(False), V, H))
    rhs = anp.at(anp.zeros(restart + 1, dtype))[0].set(anp.astype(residual_norm, dtype))
    y = anp.linalg.lstsq(anp.transpose(H), rhs)[0]
    return _add(x, _combination(V, y, x))


def _gmres_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity, restart,
                 cycle):
    dtype = _result_dtype(b)
    b_norm = _norm(b)
    atol = anp.maximum(tol * b_norm, atol)
    # the inner tolerance is on the preconditioned residual (the one GMRES minimizes)
    ratio = anp.where(b_norm > 0, atol / anp.where(b_norm > 0, b_norm, 1.0), 1.0)
    ptol = _norm(M(b)) * anp.minimum(1.0, ratio)
    tiny = np.finfo(dtype).tiny

    def residual(x):
        return _safe_normalize(M(_sub(b, A(x))), tiny)

    def cond_fun(value):
        _, k, _, residual_norm = value
        return anp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x = cycle(A, M, b, x, unit_residual, residual_norm, ptol, restart, dtype)
        return (x, k + 1) + residual(x)

    x_final, *_ = while_loop(cond_fun, body_fun, (x0, np.int64(0)) + residual(x0))
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
    """Solve ``A x = b`` by restarted GMRES, for a general (non-symmetric, possibly complex)
    ``A``: a function ``v -> A v``, a square matrix or an object with ``@``; ``b``, ``x0``
    arrays or pytrees of arrays. Each cycle builds an orthonormal basis of ``restart``
    (at most ``size(b)``) Krylov vectors of ``M A`` and takes the ``x`` of that space with
    the least preconditioned residual ``‖M (b - A x)‖``, from which the next cycle starts;
    ``maxiter`` (default ``10 · size(b)``) counts cycles. ``M`` is a left preconditioner
    approximating ``A⁻¹``. It stops when ``‖M (b - A x)‖ ≤ max(tol ‖b‖, atol)``, as JAX.

    ``solve_method="batched"`` builds the whole basis of each cycle, then solves its small
    least-squares problem; ``"incremental"`` updates a QR factorization by Givens rotations
    at each step and ends a cycle early once that problem's residual is small enough.
    A breakdown (the Krylov space is invariant) ends a cycle, exactly solved, without NaN.
    Returns ``(x, info)`` as JAX's ``gmres``: ``info`` is ``-1`` where ``x`` has a NaN,
    else ``0``. Derivatives are implicit (one more GMRES solve with ``Aᵀ``).

    >>> import numpy as np
    >>> from autodiff.scipy.sparse.linalg import gmres
    >>> A = np.array([[3.0, 1.0, 0.0], [-1.0, 2.0, 1.0], [0.0, 1.0, 4.0]])
    >>> b = np.array([1.0, 0.0, 2.0])
    >>> x, info = gmres(A, b, tol=1e-10, solve_method="incremental")
    >>> bool(np.allclose(x, np.linalg.solve(A, b))), int(info)
    (True, 0)
    >>> x, _ = gmres(lambda v: A @ v, b, tol=1e-10, restart=2)     # restarted every 2 steps
    >>> bool(np.allclose(x, np.linalg.solve(A, b)))
    True
    """
    cycles = {"incremental": _gmres_cycle_incremental, "batched": _gmres_cycle_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method!r}, must be either "
                         f"'incremental' or 'batched'")
    if isinstance(restart, (bool, np.bool_)) or not isinstance(restart, (int, np.integer)) \
            or restart < 1:
        raise TypeError(f"gmres: restart must be a positive int, got {restart!r}")
    b = tree_map(lambda leaf: _inexact(anp.asarray(leaf)), b)
    if x0 is not None and tree_structure(x0) == tree_structure(b):
        x0 = tree_map(lambda x, leaf: anp.astype(x, np.result_type(x.dtype, leaf.dtype)),
                      tree_map(anp.asarray, x0), b)
    size = sum(int(np.size(leaf)) for leaf in tree_leaves(b))
    solve = functools.partial(_gmres_solve, restart=max(min(int(restart), size), 1),
                              cycle=cycles[solve_method])
    x, _ = _isolve(solve, A, b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    info = anp.where(anp.isnan(_norm(x)), -1, 0)
    return x, info
