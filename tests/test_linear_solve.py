"""custom_linear_solve as one ``linear_solve`` equation: derivatives of every order and mode
(reverse over reverse included), under vmap and jit, against closed forms and finite
differences. The solvers (a dense solve, cg, bicgstab) are never differentiated."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy.sparse.linalg import bicgstab, cg

A0 = np.array([[4.0, 1.0, 0.3], [0.5, 3.0, -0.2], [0.1, -0.4, 2.5]])
SPD = A0 @ A0.T + np.eye(3)
B0 = np.array([1.0, -2.0, 0.5])


def _solve_ns(a, b):
    return ad.lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: anp.linalg.solve(a, r),
                                      transpose_solve=lambda vm, r: anp.linalg.solve(a.T, r))


def _solve_cg(a, b):
    return cg(lambda v: a @ v, b, tol=1e-14, atol=0.0)[0]


def _solve_bicgstab(a, b):
    return bicgstab(lambda v: a @ v, b, tol=1e-14, atol=0.0)[0]


def _loss(solver):
    return lambda a, b: anp.sum(anp.sin(solver(a, b)))


def _np_loss(a, b):
    return np.sum(np.sin(np.linalg.solve(a, b)))


def _np_grad_b(a, b):
    x = np.linalg.solve(a, b)
    return np.linalg.solve(a.T, np.cos(x))


def _np_grad_a(a, b):
    return -np.outer(_np_grad_b(a, b), np.linalg.solve(a, b))


def _fd(f, x, eps=1e-6):
    """Central differences of the array function ``f`` at ``x``: shape out + in."""
    x = np.asarray(x, float)
    cols = []
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        cols.append((np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(f(x)) + x.shape)


SOLVERS = {"dense": (_solve_ns, A0), "cg": (_solve_cg, SPD), "bicgstab": (_solve_bicgstab, A0)}


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_first_derivatives_match_closed_forms(name):
    solver, a = SOLVERS[name]
    ga, gb = ad.grad(_loss(solver), (0, 1))(a, B0)
    np.testing.assert_allclose(gb, _np_grad_b(a, B0), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(ga, _np_grad_a(a, B0), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_reverse_over_reverse_equals_forward_over_reverse_and_differences(name):
    # jacrev(grad) transposes the transposed solve: before linear_solve this raised
    solver, a = SOLVERS[name]
    f = _loss(solver)
    h_rr = ad.jacrev(ad.grad(f, 1), 1)(a, B0)
    h_fr = ad.jacfwd(ad.grad(f, 1), 1)(a, B0)
    want = _fd(lambda b: _np_grad_b(a, b), B0)
    np.testing.assert_allclose(h_rr, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h_fr, want, rtol=1e-6, atol=1e-8)
    # mixed: the gradient in b, differentiated in the matrix
    m_rr = ad.jacrev(ad.grad(f, 1), 0)(a, B0)
    np.testing.assert_allclose(m_rr, _fd(lambda aa: _np_grad_b(aa, B0), a), rtol=1e-6,
                               atol=1e-8)
    # and the matrix gradient, differentiated again in the matrix
    a_rr = ad.jacrev(ad.grad(f, 0), 0)(a, B0)
    np.testing.assert_allclose(a_rr, _fd(lambda aa: _np_grad_a(aa, B0), a), rtol=1e-6,
                               atol=1e-8)


def test_third_order_reverse():
    f = lambda b: _loss(_solve_ns)(A0, b)                 # noqa: E731
    t = ad.jacrev(ad.jacrev(ad.grad(f)))(B0)
    want = _fd(lambda b: _fd(lambda c: _np_grad_b(A0, c), b, 1e-5), B0, 1e-4)
    np.testing.assert_allclose(t, want, rtol=1e-4, atol=1e-6)


def test_hessian_and_jit_of_reverse_over_reverse():
    f = lambda b: _loss(_solve_ns)(A0, b)                 # noqa: E731
    want = _fd(lambda b: _np_grad_b(A0, b), B0)
    np.testing.assert_allclose(ad.hessian(f)(B0), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.jit(ad.jacrev(ad.grad(f)))(B0), want, rtol=1e-6, atol=1e-8)


def test_vmap_over_matrices_and_right_hand_sides_then_grad():
    a = np.stack([A0, A0 + 0.5 * np.eye(3), A0.T + np.eye(3)])
    b = np.stack([B0, 2 * B0, B0[::-1]])
    f = _loss(_solve_ns)
    got = ad.vmap(ad.grad(f, (0, 1)))(a, b)
    got_outer = ad.grad(lambda a, b: anp.sum(ad.vmap(f)(a, b)), (0, 1))(a, b)
    for k in range(3):
        np.testing.assert_allclose(got[0][k], _np_grad_a(a[k], b[k]), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(got[1][k], _np_grad_b(a[k], b[k]), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(got_outer[0][k], _np_grad_a(a[k], b[k]), rtol=1e-9,
                                   atol=1e-11)
    # vmap over b alone (the matrix shared), of a second-order reverse derivative
    h = ad.vmap(ad.jacrev(ad.grad(f, 1), 1), in_axes=(None, 0))(A0, b)
    for k in range(3):
        np.testing.assert_allclose(h[k], _fd(lambda c: _np_grad_b(A0, c), b[k]), rtol=1e-6,
                                   atol=1e-8)


def test_pytree_right_hand_side_and_aux():
    def matvec(v):
        return {"u": 2.0 * v["u"] + v["w"][0], "w": 3.0 * v["w"]}

    def solve(mv, r):
        w = r["w"] / 3.0
        return {"u": (r["u"] - w[0]) / 2.0, "w": w}, anp.sum(r["u"])

    def tsolve(vm, r):
        u = r["u"] / 2.0
        return {"u": u, "w": (r["w"] - anp.concatenate([anp.sum(u, keepdims=True),
                                                          anp.zeros(1)])) / 3.0}

    def f(u, w):
        x, aux = ad.lax.custom_linear_solve(matvec, {"u": u, "w": w}, solve, tsolve,
                                            has_aux=True)
        return anp.sum(x["u"] ** 2) + anp.sum(x["w"] ** 3) + 0.0 * aux

    u, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    m = np.zeros((4, 4))
    for i in range(4):
        e = np.eye(4)[i]
        out = matvec({"u": e[:2], "w": e[2:]})
        m[:, i] = np.concatenate([out["u"], out["w"]])

    def np_f(z):
        x = np.linalg.solve(m, z)
        return np.sum(x[:2] ** 2) + np.sum(x[2:] ** 3)
    z = np.concatenate([u, w])
    gu, gw = ad.grad(f, (0, 1))(u, w)
    np.testing.assert_allclose(np.concatenate([gu, gw]), _fd(np_f, z), rtol=1e-6, atol=1e-8)
    h = ad.jacrev(ad.grad(f, 0), 0)(u, w)
    want = _fd(lambda zz: _fd(np_f, zz, 1e-5), z, 1e-4)[:2, :2]
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-6)


def test_nonsymmetric_reverse_without_transpose_solve_says_what_to_pass():
    def f(b):
        return anp.sum(ad.lax.custom_linear_solve(lambda v: A0 @ v, b,
                                                  lambda mv, r: anp.linalg.solve(A0, r)))
    # forward mode needs only the solver
    np.testing.assert_allclose(ad.jacfwd(f)(B0), np.linalg.solve(A0.T, np.ones(3)), rtol=1e-12)
    with pytest.raises(TypeError, match="transpose_solve"):
        ad.grad(f)(B0)


def test_one_equation_in_the_program():
    closed = ad.make_jaxpr(lambda a, b: _solve_ns(a, b))(A0, B0)
    assert sum(e.primitive.name == "linear_solve" for e in closed.eqns) == 1
    assert not any(e.primitive.name in ("while", "solve") for e in closed.eqns)
    # its gradient program holds two: the solve and the transposed solve
    g = ad.make_jaxpr(ad.grad(_loss(_solve_ns), 1))(A0, B0)
    assert sum(e.primitive.name == "linear_solve" for e in g.eqns) == 2
