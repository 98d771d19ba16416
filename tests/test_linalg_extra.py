"""``linalg.svd`` / ``linalg.qr`` (compositions of eigh and Householder reflections) and
the complex-valued ``eig`` / ``eigvals`` that raise when traced. The shared case table of
``test_numpy.py`` checks values eagerly/traced/concretely and ``test_grad.py`` their
derivatives; here: jit, vmap, closed-form derivatives and the sign conventions."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("shape,dt", [((5, 3), np.float32), ((5, 3), np.float64), ((3, 5), np.float64),
                                      ((2, 4, 3), np.float64)])
def test_qr_matches_numpy_under_jit_and_vmap(shape, dt):
    a = RNG.normal(size=shape).astype(dt)
    q, r = ad.jit(lambda x: tuple(anp.linalg.qr(x)))(a)
    qn, rn = np.linalg.qr(a)
    tol = 1e-12 if dt == np.float64 else 2e-5
    assert q.dtype == dt and r.dtype == dt
    np.testing.assert_allclose(q, qn, atol=tol)          # LAPACK's signs, reproduced
    np.testing.assert_allclose(r, rn, atol=tol)
    if len(shape) == 3:
        qv, rv = ad.vmap(lambda x: tuple(anp.linalg.qr(x)))(a)
        np.testing.assert_allclose(qv, qn, atol=tol)


def test_qr_of_triangular_input_keeps_signs():
    a = np.triu(RNG.normal(size=(3, 3))) - 4 * np.eye(3)
    q, r = ad.jit(lambda x: tuple(anp.linalg.qr(x)))(a)
    np.testing.assert_allclose(q, np.linalg.qr(a)[0], atol=1e-14)
    np.testing.assert_allclose(r, np.linalg.qr(a)[1], atol=1e-14)


def test_qr_derivative_keeps_q_orthonormal_and_r_triangular():
    a, t = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 3))
    (q, r), (dq, dr) = ad.jvp(lambda x: tuple(anp.linalg.qr(x)), (a,), (t,))
    # QᵀdQ is antisymmetric; dR is upper triangular; dA = dQ R + Q dR
    np.testing.assert_allclose(q.T @ dq + dq.T @ q, 0, atol=1e-12)
    np.testing.assert_allclose(np.tril(dr, -1), 0, atol=1e-12)
    np.testing.assert_allclose(dq @ r + q @ dr, t, atol=1e-12)
    ad.check_grads(lambda x: anp.linalg.qr(x)[1], (a.T[:, :3] + 2 * np.eye(3),), order=2,
                   modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_svd_jit_and_closed_form_derivative(shape):
    a = RNG.normal(size=shape)
    s = ad.jit(lambda x: anp.linalg.svd(x, compute_uv=False))(a)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    u, s2, vt = ad.jit(lambda x: tuple(anp.linalg.svd(x, full_matrices=False)))(a)
    np.testing.assert_allclose((u * s2[..., None, :]) @ vt, a, atol=1e-12)
    k = min(shape[-2:])
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(k), u.shape[:-2] + (k, k)),
                               atol=1e-12)
    # dσ_i = u_iᵀ dA v_i (distinct singular values)
    t = RNG.normal(size=shape)
    _, ds = ad.jvp(lambda x: anp.linalg.svd(x, compute_uv=False), (a,), (t,))
    np.testing.assert_allclose(ds, np.einsum("...ji,...jk,...ik->...i", u, t, vt), rtol=1e-10, atol=1e-12)
    # the nuclear norm's gradient is U Vᵀ
    g = ad.grad(lambda x: anp.sum(anp.linalg.svd(x, compute_uv=False)))(a)
    np.testing.assert_allclose(g, u @ vt, atol=1e-10)


def test_svd_concrete_and_traced_agree_on_signs():
    a = RNG.normal(size=(4, 3))
    eager = anp.linalg.svd(a, full_matrices=False)
    traced = ad.jit(lambda x: tuple(anp.linalg.svd(x, full_matrices=False)))(a)
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(e, t, atol=1e-12)
    # numpy's default full_matrices=True: numpy's own eagerly, and traced a full
    # orthogonal U whose first columns are the thin one's
    assert anp.linalg.svd(a)[0].shape == (4, 4)
    u, s, vt = ad.jit(lambda x: tuple(anp.linalg.svd(x)))(a)
    assert u.shape == (4, 4) and vt.shape == (3, 3)
    np.testing.assert_allclose(u.T @ u, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(u[:, :3] * s @ vt, a, atol=1e-12)


def test_eig_is_numpy_eagerly_and_complex_when_traced():
    # issue 16: traced eig/eigvals are complex (JAX's rule), numpy's order; the full
    # complex coverage is in test_linalg_complex.py
    a = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(np.sort_complex(anp.linalg.eigvals(a)), [-1j, 1j])
    np.testing.assert_allclose(ad.jit(anp.linalg.eigvals)(a), np.linalg.eigvals(a), atol=1e-15)
    # Re tr A = Re Σ w: its gradient is the identity
    g = ad.grad(lambda x: anp.real(anp.sum(anp.linalg.eigvals(x))))(a)
    np.testing.assert_allclose(g, np.eye(2), atol=1e-14)
    s = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(np.sort(ad.jit(anp.linalg.eigvals)(s).real), np.linalg.eigvalsh(s),
                               rtol=1e-13)
