"""``autodiff.scipy.sparse.linalg.gmres``: JAX's restarted GMRES (``solve_method``
"batched" and "incremental"), against numpy's dense solve and a numpy reference of the
restarted iteration, with pytrees, complex operators, preconditioners, ``jit``, ``vmap``
and implicit derivatives."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy.sparse.linalg import gmres

METHODS = ["batched", "incremental"]


def _system(n, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    A = 3.0 * np.eye(n) + rng.normal(size=(n, n)) / np.sqrt(n)
    b = rng.normal(size=n)
    if complex_:
        A = A + 1j * rng.normal(size=(n, n)) / np.sqrt(n)
        b = b + 1j * rng.normal(size=n)
    return A, b


def _reference_gmres(A, b, x0, restart, cycles, M=None):
    """Restarted GMRES by its definition: each cycle takes the x in x0 + K_restart(MA, M r0)
    with the least ``‖M (b - A x)‖`` (dense least squares over an explicit basis)."""
    M = np.eye(len(b)) if M is None else M
    x = np.array(x0, dtype=np.result_type(A, b))
    for _ in range(cycles):
        r = M @ (b - A @ x)
        K = [r]
        for _ in range(restart - 1):
            K.append(M @ (A @ K[-1]))
        K = np.linalg.qr(np.stack(K, axis=1))[0]
        y = np.linalg.lstsq(M @ A @ K, r, rcond=None)[0]
        x = x + K @ y
    return x


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n,restart", [(5, 2), (12, 4), (30, 7), (30, 20)])
def test_matches_numpy_solve_with_restarts(method, n, restart):
    A, b = _system(n, seed=n)
    x, info = gmres(A, b, tol=1e-11, restart=restart, solve_method=method)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9, atol=1e-10)
    assert int(info) == 0
    # a function, and an object with @, give the same
    x_fun, _ = gmres(lambda v: A @ v, b, tol=1e-11, restart=restart, solve_method=method)
    np.testing.assert_allclose(x_fun, x, rtol=1e-12, atol=1e-14)

    class Op:
        shape = A.shape

        def __matmul__(self, v):
            return A @ v
    np.testing.assert_allclose(gmres(Op(), b, tol=1e-11, restart=restart,
                                     solve_method=method)[0], x, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("cycles", [1, 2, 3])
def test_maxiter_counts_restart_cycles(method, cycles):
    # with tol = 0 each cycle runs to its full basis: the result is exactly `cycles` cycles
    # of the minimal-residual projection, whichever the solve method
    A, b = _system(10, seed=3)
    x0 = np.linspace(-1.0, 1.0, 10)
    x, _ = gmres(A, b, x0, tol=0.0, restart=3, maxiter=cycles, solve_method=method)
    np.testing.assert_allclose(x, _reference_gmres(A, b, x0, 3, cycles), rtol=1e-10)
    # more cycles, smaller residual
    if cycles > 1:
        x_less, _ = gmres(A, b, x0, tol=0.0, restart=3, maxiter=cycles - 1,
                          solve_method=method)
        assert np.linalg.norm(b - A @ x) < np.linalg.norm(b - A @ x_less)


@pytest.mark.parametrize("method", METHODS)
def test_x0(method):
    A, b = _system(9, seed=4)
    ref = np.linalg.solve(A, b)
    x, _ = gmres(A, b, x0=np.ones(9), tol=1e-11, restart=3, solve_method=method)
    np.testing.assert_allclose(x, ref, rtol=1e-9)
    # the exact solution as x0: no cycle runs, x0 is returned as it is
    x, _ = gmres(A, b, x0=ref, tol=1e-8, solve_method=method)
    np.testing.assert_array_equal(x, ref)


@pytest.mark.parametrize("method", METHODS)
def test_jacobi_preconditioner(method):
    rng = np.random.default_rng(5)
    n = 15
    d = np.logspace(0, 4, n)                 # badly scaled rows, diagonally dominant
    A = np.diag(d) + rng.normal(size=(n, n)) * d[:, None] / (4 * n)
    b = rng.normal(size=n)
    ref = np.linalg.solve(A, b)
    jacobi = np.diag(1.0 / np.diag(A))
    for M in (jacobi, lambda v: v / np.diag(A)):
        x, _ = gmres(A, b, tol=1e-12, restart=4, M=M, solve_method=method)
        np.testing.assert_allclose(x, ref, rtol=1e-9)
    # one cycle is left-preconditioned GMRES: it minimizes ‖M (b - A x)‖ over the Krylov
    # space of M A, and it is much better than one unpreconditioned cycle
    x1, _ = gmres(A, b, tol=0.0, restart=4, maxiter=1, M=jacobi, solve_method=method)
    np.testing.assert_allclose(x1, _reference_gmres(A, b, np.zeros(n), 4, 1, M=jacobi),
                               rtol=1e-9)
    x1_plain, _ = gmres(A, b, tol=0.0, restart=4, maxiter=1, solve_method=method)
    assert np.linalg.norm(x1 - ref) < 1e-2 * np.linalg.norm(x1_plain - ref)


@pytest.mark.parametrize("method", METHODS)
def test_pytree_b_with_function_A(method):
    rng = np.random.default_rng(6)
    B = 3.0 * np.eye(7) + rng.normal(size=(7, 7)) / 3

    def A(v):       # a coupled operator on {"u": (3,), "w": (2, 2)}
        flat = B @ anp.concatenate([v["u"], anp.reshape(v["w"], (4,))])
        return {"u": flat[:3], "w": anp.reshape(flat[3:], (2, 2))}
    b = {"u": np.array([1.0, -2.0, 0.5]), "w": np.array([[0.3, 0.0], [2.0, -1.0]])}
    ref = np.linalg.solve(B, np.concatenate([b["u"], b["w"].ravel()]))
    for x0 in (None, {"u": np.ones(3), "w": np.zeros((2, 2))}):
        x, _ = gmres(A, b, x0, tol=1e-11, restart=3, solve_method=method)
        assert set(x) == {"u", "w"} and x["w"].shape == (2, 2)
        np.testing.assert_allclose(np.concatenate([x["u"], x["w"].ravel()]), ref, rtol=1e-9)
    xj, _ = ad.jit(lambda b: gmres(A, b, tol=1e-11, restart=3, solve_method=method))(b)
    np.testing.assert_allclose(np.concatenate([xj["u"], xj["w"].ravel()]), ref, rtol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_complex(method):
    A, b = _system(11, seed=7, complex_=True)
    x, _ = gmres(A, b, tol=1e-11, restart=4, solve_method=method)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-9)
    x2, _ = gmres(A, b, tol=0.0, restart=4, maxiter=2, solve_method=method)
    np.testing.assert_allclose(x2, _reference_gmres(A, b, np.zeros(11), 4, 2), rtol=1e-9)
    # a real operator, a complex right-hand side
    Ar = A.real
    np.testing.assert_allclose(gmres(Ar, b, tol=1e-11, restart=4, solve_method=method)[0],
                               np.linalg.solve(Ar, b), rtol=1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_jit_equals_eager_and_vmap_over_b(method):
    A, b = _system(10, seed=8)
    f = lambda b: gmres(A, b, tol=1e-10, restart=4, solve_method=method)[0]
    np.testing.assert_allclose(ad.jit(f)(b), f(b), rtol=1e-12, atol=1e-15)
    g = ad.jit(lambda A, b: gmres(A, b, tol=1e-10, restart=4, solve_method=method))
    xj, info = g(A, b)
    np.testing.assert_allclose(xj, f(b), rtol=1e-12, atol=1e-15)
    assert int(info) == 0
    B = np.random.default_rng(9).normal(size=(4, 10))
    B[2] = 0.0                                   # one member already solved
    xs = ad.vmap(f)(B)
    np.testing.assert_allclose(xs, np.linalg.solve(A, B.T).T, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(xs[2], np.zeros(10))
    np.testing.assert_allclose(ad.jit(ad.vmap(f))(B), xs, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_grad_wrt_b_and_a_matrix_entry(method):
    n = 8
    A, b = _system(n, seed=10)
    E = np.zeros((n, n))
    E[2, 5] = 1.0

    def solve(a, b):
        return gmres(lambda v: (A + a * E) @ v, b, tol=1e-12, restart=3,
                     solve_method=method)[0]
    loss = lambda a, b: anp.sum(anp.sin(solve(a, b)))
    ref = lambda a, b: np.sum(np.sin(np.linalg.solve(A + a * E, b)))
    a0 = 0.3
    x = np.linalg.solve(A + a0 * E, b)
    # closed forms: dx = A⁻¹ (db - dA x)
    gb_ref = np.linalg.solve((A + a0 * E).T, np.cos(x))
    ga_ref = -gb_ref @ (E @ x)
    ga, gb = ad.grad(loss, argnums=(0, 1))(a0, b)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-8)
    np.testing.assert_allclose(ga, ga_ref, rtol=1e-8)
    np.testing.assert_allclose(ga, _fd(lambda a: ref(a, b), a0), rtol=1e-6)
    fd_b = [_fd(lambda t: ref(a0, b + t * e), 0.0) for e in np.eye(n)]
    np.testing.assert_allclose(gb, fd_b, rtol=1e-6, atol=1e-9)
    gaj, gbj = ad.jit(ad.grad(loss, argnums=(0, 1)))(a0, b)
    np.testing.assert_allclose(gaj, ga, rtol=1e-9)
    np.testing.assert_allclose(gbj, gb, rtol=1e-9)
    # forward mode: the same derivative, dx = A⁻¹ (db - dA x)
    db = np.linspace(1.0, 2.0, n)
    _, dx = ad.jvp(solve, (a0, b), (1.0, db))
    np.testing.assert_allclose(dx, np.linalg.solve(A + a0 * E, db - E @ x), rtol=1e-8)
    # the Jacobian in b is A⁻¹, row by row under vmap
    np.testing.assert_allclose(ad.jacrev(lambda b: solve(a0, b))(b),
                               np.linalg.inv(A + a0 * E), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_zero_rhs_and_breakdown_give_no_nan(method):
    A, b = _system(7, seed=12)
    x, info = gmres(A, np.zeros(7), solve_method=method)
    np.testing.assert_array_equal(x, np.zeros(7))
    assert int(info) == 0
    xj, _ = ad.jit(lambda b: gmres(A, b, solve_method=method))(np.zeros(7))
    np.testing.assert_array_equal(xj, np.zeros(7))
    g = ad.grad(lambda b: anp.sum(gmres(A, b, solve_method=method)[0]))(np.zeros(7))
    assert np.all(np.isfinite(g))
    # happy breakdown: the Krylov space is invariant after one (identity) or two steps
    x, _ = gmres(2.0 * np.eye(7), b, tol=1e-12, solve_method=method)
    np.testing.assert_allclose(x, b / 2, rtol=1e-14)
    D = np.diag(np.arange(1.0, 8.0))
    e = np.zeros(7)
    e[[1, 4]] = [1.0, -2.0]             # two eigenvectors: breakdown at step 2 of 7
    for tol in (1e-12, 0.0):
        x, info = gmres(D, e, tol=tol, restart=7, solve_method=method)
        np.testing.assert_allclose(x, np.linalg.solve(D, e), rtol=1e-13, atol=1e-15)
        assert int(info) == 0
    # a singular operator: a consistent b is solved, an inconsistent one gives no NaN
    S = np.diag([1.0, 2.0, 0.0])
    x, info = gmres(S, np.array([1.0, 1.0, 0.0]), tol=1e-12, maxiter=3, solve_method=method)
    np.testing.assert_allclose(x, [1.0, 0.5, 0.0], atol=1e-12)
    assert int(info) == 0
    x, info = gmres(S, np.ones(3), tol=1e-12, maxiter=3, solve_method=method)
    assert np.all(np.isfinite(x)) and int(info) == 0
    assert np.linalg.norm(np.ones(3) - S @ x) < 1.1      # least possible: 1, at x = 0: √3


def test_incremental_checks_the_residual_inside_a_cycle():
    # a near-identity operator converges in few steps: "incremental" ends its cycle at the
    # first step whose least-squares residual is at most tol ‖b‖, "batched" builds all
    # `restart` vectors first
    rng = np.random.default_rng(13)
    A = np.eye(20) + 1e-2 * rng.normal(size=(20, 20))
    b = rng.normal(size=20)
    tol = 1e-6
    steps = next(k for k in range(1, 20)
                 if np.linalg.norm(b - A @ _reference_gmres(A, b, np.zeros(20), k, 1))
                 <= tol * np.linalg.norm(b))
    assert 1 < steps < 15
    x, _ = gmres(A, b, tol=tol, restart=15, maxiter=1, solve_method="incremental")
    np.testing.assert_allclose(x, _reference_gmres(A, b, np.zeros(20), steps, 1), rtol=1e-10)
    x, _ = gmres(A, b, tol=tol, restart=15, maxiter=1, solve_method="batched")
    np.testing.assert_allclose(x, _reference_gmres(A, b, np.zeros(20), 15, 1), rtol=1e-10)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("tol,atol", [(1e-3, 0.0), (1e-8, 0.0), (0.0, 1e-6), (1e-12, 1e-4)])
def test_stopping_rule(method, tol, atol):
    # JAX's rule: cycles go on while ‖M (b - A x)‖ > max(tol ‖b‖, atol)
    A, b = _system(12, seed=14)
    bound = max(tol * np.linalg.norm(b), atol)
    x, _ = gmres(A, b, tol=tol, atol=atol, restart=2, solve_method=method)
    assert np.linalg.norm(b - A @ x) <= bound
    if method == "batched":     # whole cycles: exactly the first cycle count that does
        cycles, ref = 0, np.zeros(12)
        while np.linalg.norm(b - A @ ref) > bound:
            cycles, ref = cycles + 1, _reference_gmres(A, b, ref, 2, 1)
        assert cycles > 1
        np.testing.assert_allclose(x, ref, rtol=1e-9)


def test_dtypes_and_errors():
    A, b = _system(6, seed=15)
    x, _ = gmres(A.astype(np.float32), b.astype(np.float32), tol=1e-5)
    assert x.dtype == np.float32
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-4)
    x, _ = gmres(np.eye(3), np.array([1, 2, 3]))       # integer b: solved in floats
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0])
    restart_too_big, _ = gmres(A, b, tol=1e-12, restart=100)
    np.testing.assert_allclose(restart_too_big, np.linalg.solve(A, b), rtol=1e-10)
    with pytest.raises(ValueError, match="solve_method"):
        gmres(A, b, solve_method="qr")
    with pytest.raises(TypeError, match="restart"):
        gmres(A, b, restart=0)
    with pytest.raises(ValueError, match="matching tree structure"):
        gmres(lambda v: v, {"x": np.zeros(2)}, {"y": np.zeros(2)})
    with pytest.raises(ValueError, match="square matrix"):
        gmres(np.zeros((3, 2)), np.zeros(2))
    # info: -1 where the solution has a NaN (here the operator makes one once x != 0)
    x, info = gmres(lambda v: v + anp.where(v[1] != 0, np.nan, 0.0), np.ones(2), maxiter=2)
    assert np.isnan(x).any() and int(info) == -1
