"""Derivatives of linear algebra against matrix-calculus identities.

``check_grads`` (both modes, second order, float32 and float64) already runs on every
``linalg`` function via ``test_grad``; here each derivative is compared with its
closed form, for single matrices and stacks, plus the triangle conventions
(numpy reads the lower triangle in ``cholesky`` and ``eigh``).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

RNG = np.random.default_rng(42)


def spd(n, batch=()):
    a = RNG.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def general(n, batch=()):
    return RNG.normal(size=batch + (n, n)) + 2 * np.eye(n)


def sym(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def mT(a):
    return np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_det_and_slogdet(batch):
    A = general(3, batch)
    g = ad.grad(lambda a: anp.sum(anp.linalg.det(a)))(A)
    np.testing.assert_allclose(g, np.linalg.det(A)[..., None, None] * mT(np.linalg.inv(A)),
                               rtol=1e-10)
    g = ad.grad(lambda a: anp.sum(anp.linalg.slogdet(a)[1]))(A)
    np.testing.assert_allclose(g, mT(np.linalg.inv(A)), rtol=1e-10)
    # the sign has zero derivative
    g = ad.grad(lambda a: anp.sum(anp.linalg.slogdet(a)[0]))(A)
    np.testing.assert_array_equal(g, np.zeros_like(A))
    # second order: d/dt A(t)^{-T} = -A^{-T} Vᵀ A^{-T}
    V = RNG.normal(size=A.shape)
    hv = ad.jvp(ad.grad(lambda a: anp.sum(anp.linalg.slogdet(a)[1])), (A,), (V,))[1]
    Ai = np.linalg.inv(A)
    np.testing.assert_allclose(hv, -mT(Ai) @ mT(V) @ mT(Ai), rtol=1e-9)


def test_inv():
    A = general(3)
    V, G = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    Ai = np.linalg.inv(A)
    _, t = ad.jvp(anp.linalg.inv, (A,), (V,))
    np.testing.assert_allclose(t, -Ai @ V @ Ai, rtol=1e-10)
    (ct,) = ad.vjp(anp.linalg.inv, A)[1](G)
    np.testing.assert_allclose(ct, -Ai.T @ G @ Ai.T, rtol=1e-10)


@pytest.mark.parametrize("vec", [False, True])
def test_solve(vec):
    A = general(3)
    b = RNG.normal(size=(3,) if vec else (3, 2))
    x = np.linalg.solve(A, b)
    g = RNG.normal(size=b.shape)
    ga, gb = ad.vjp(anp.linalg.solve, A, b)[1](g)
    lam = np.linalg.solve(A.T, g)
    np.testing.assert_allclose(gb, lam, rtol=1e-10)
    np.testing.assert_allclose(ga, -np.outer(lam, x) if vec else -lam @ x.T, rtol=1e-10)


def test_cholesky():
    A = spd(4)
    L = np.linalg.cholesky(A)
    V = sym(RNG.normal(size=(4, 4)))
    _, dL = ad.jvp(anp.linalg.cholesky, (A,), (V,))
    np.testing.assert_allclose(np.triu(dL, 1), 0, atol=1e-14)          # stays lower
    np.testing.assert_allclose(dL @ L.T + L @ dL.T, V, rtol=1e-10, atol=1e-12)
    # reads the lower triangle only: the upper triangle's gradient is zero
    g = ad.grad(lambda a: anp.sum(anp.linalg.cholesky(a) * np.arange(16.0).reshape(4, 4)))(A)
    np.testing.assert_array_equal(np.triu(g, 1), 0)
    # upper=True reads the upper triangle (numpy's convention)
    g = ad.grad(lambda a: anp.sum(anp.linalg.cholesky(a, upper=True)))(A)
    np.testing.assert_array_equal(np.tril(g, -1), 0)
    # a stack, and logdet through cholesky: 2 Σ log diag L has gradient A⁻¹
    As = spd(3, (2,))
    g = ad.grad(lambda a: 2 * anp.sum(anp.log(anp.diagonal(anp.linalg.cholesky(a), 0, 1, 2))))(As)
    # (the symmetric A⁻¹ folded onto the lower triangle that cholesky reads)
    Ai = np.linalg.inv(As)
    np.testing.assert_allclose(g, np.tril(Ai) + np.tril(Ai, -1), rtol=1e-10)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [False, True])
def test_triangular_solve(lower, trans):
    A = spd(3)
    T = np.tril(A) if lower else np.triu(A)
    Top = T.T if trans else T
    b = RNG.normal(size=(3, 2))
    f = lambda a, b: anp.linalg.solve_triangular(a, b, lower=lower, trans=trans)
    x = np.linalg.solve(Top, b)
    np.testing.assert_allclose(f(A, b), x, rtol=1e-12)
    g = RNG.normal(size=b.shape)
    ga, gb = ad.vjp(f, A, b)[1](g)
    lam = np.linalg.solve(Top.T, g)
    np.testing.assert_allclose(gb, lam, rtol=1e-10)
    gT = -lam @ x.T
    gT = gT.T if trans else gT
    # only the triangle the routine reads gets a gradient
    np.testing.assert_allclose(ga, np.tril(gT) if lower else np.triu(gT), rtol=1e-10, atol=1e-14)


def test_eigh():
    A = spd(4)
    w, V = np.linalg.eigh(A)
    dA = sym(RNG.normal(size=(4, 4)))
    (_, _), (dw, dV) = ad.jvp(lambda a: tuple(anp.linalg.eigh(a)), (A,), (dA,))
    np.testing.assert_allclose(dw, np.einsum("ji,jk,ki->i", V, dA, V), rtol=1e-10)
    # differentiate A V = V diag(w): dA V + A dV = dV diag(w) + V diag(dw); Vᵀ dV antisymmetric
    np.testing.assert_allclose(dA @ V + A @ dV, dV * w + V * dw, atol=1e-10)
    np.testing.assert_allclose(V.T @ dV + dV.T @ V, 0, atol=1e-10)
    # eigenvalue gradient of Σ wᵢ cᵢ is V diag(c) Vᵀ, folded onto the lower triangle
    c = np.array([1.0, -2.0, 0.5, 3.0])
    g = ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a) * c))(A)
    full = V @ np.diag(c) @ V.T
    np.testing.assert_allclose(g, np.tril(full) + np.tril(full, -1), rtol=1e-10, atol=1e-12)
    gU = ad.grad(lambda a: anp.sum(anp.linalg.eigh(a, UPLO="U")[0] * c))(A)
    np.testing.assert_allclose(gU, np.triu(full) + np.triu(full, 1), rtol=1e-10, atol=1e-12)


def test_eigh_stack():
    A = spd(3, (2,))
    g = ad.grad(lambda a: anp.sum(anp.linalg.eigvalsh(a)))(A)     # Σ w = trace
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(3), A.shape), atol=1e-12)


def test_norms():
    x = RNG.normal(size=5)
    np.testing.assert_allclose(ad.grad(anp.linalg.norm)(x), x / np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda x: anp.linalg.norm(x, 1))(x), np.sign(x))
    np.testing.assert_allclose(ad.grad(lambda x: anp.linalg.norm(x, 3))(x),
                               np.sign(x) * x ** 2 / np.linalg.norm(x, 3) ** 2, rtol=1e-12)
    i = np.argmax(np.abs(x))
    np.testing.assert_allclose(ad.grad(lambda x: anp.linalg.norm(x, np.inf))(x),
                               np.sign(x) * (np.arange(5) == i))
    A = RNG.normal(size=(4, 3))
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(ad.grad(anp.linalg.norm)(A), A / np.linalg.norm(A), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda a: anp.linalg.norm(a, "fro"))(A),
                               A / np.linalg.norm(A), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda a: anp.linalg.norm(a, "nuc"))(A), U @ Vt,
                               rtol=1e-8)
    np.testing.assert_allclose(ad.grad(lambda a: anp.linalg.norm(a, 2))(A),
                               np.outer(U[:, 0], Vt[0]), rtol=1e-8)
    # axis and keepdims: row norms
    g = ad.grad(lambda a: anp.sum(anp.linalg.norm(a, axis=1, keepdims=True)))(A)
    np.testing.assert_allclose(g, A / np.linalg.norm(A, axis=1, keepdims=True), rtol=1e-12)
    # zero vector: zero (sub)gradient, no nan
    np.testing.assert_array_equal(ad.grad(anp.linalg.norm)(np.zeros(3)), np.zeros(3))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(n):
    A = general(3) / 2
    V = RNG.normal(size=(3, 3))
    _, t = ad.jvp(lambda a: anp.linalg.matrix_power(a, n), (A,), (V,))
    if n >= 0:
        want = sum((np.linalg.matrix_power(A, k) @ V @ np.linalg.matrix_power(A, n - 1 - k)
                    for k in range(n)), np.zeros((3, 3)))
    else:
        B = np.linalg.inv(A)
        dB = -B @ V @ B
        m = -n
        want = sum((np.linalg.matrix_power(B, k) @ dB @ np.linalg.matrix_power(B, m - 1 - k)
                    for k in range(m)), np.zeros((3, 3)))
    np.testing.assert_allclose(t, want, rtol=1e-10, atol=1e-12)


def test_trace():
    A = RNG.normal(size=(2, 3, 3))
    np.testing.assert_array_equal(ad.grad(lambda a: anp.sum(anp.linalg.trace(a)))(A),
                                  np.broadcast_to(np.eye(3), A.shape))
    np.testing.assert_array_equal(ad.grad(lambda a: anp.trace(a))(A[0]), np.eye(3))
    B = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(ad.grad(lambda b: anp.trace(b, 1))(B), np.eye(3, 4, 1))


@pytest.mark.parametrize("name,f,make", [
    ("inv", anp.linalg.inv, lambda: general(3, (2,))),
    ("solve", lambda a: anp.linalg.solve(a, np.arange(6.0).reshape(2, 3, 1)),
     lambda: general(3, (2,))),
    ("det", anp.linalg.det, lambda: general(3)),
    ("slogdet", lambda a: anp.linalg.slogdet(a)[1], lambda: general(3, (2,))),
    ("cholesky", anp.linalg.cholesky, lambda: spd(3, (2,))),
    ("eigh", lambda a: anp.linalg.eigh(a)[0], lambda: spd(3)),
    ("norm", lambda a: anp.linalg.norm(a, "nuc"), lambda: general(3)),
    ("matrix_power", lambda a: anp.linalg.matrix_power(a, 3), lambda: general(3)),
    ("trace", anp.linalg.trace, lambda: general(3, (2,))),
    ("pinv", anp.linalg.pinv, lambda: RNG.normal(size=(4, 3))),
])
def test_linalg_third_order(name, f, make):
    # orders beyond two, mixing modes (every rule is written in differentiable ops)
    ad.check_grads(f, (make(),), order=3, modes=("fwd", "rev"))
