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


# ---------------------------------------------------------------------------------------
# eigh / eigvalsh with UPLO (issue 33): numpy reads one triangle of a (possibly
# non-symmetric) input, so the derivative is the one finite differences of numpy's own
# eigh(a, UPLO) give: zero on the triangle it ignores, both a_ij and a_ji's share on the
# one it reads. Eigenvectors are compared with numpy's signs (the traced 'U' path runs
# LAPACK's 'U' code, as numpy does), or through gauge-invariant functions.

def _fd_grad(f, x, eps=1e-6):
    """Central differences of the real scalar ``f`` w.r.t. every real entry of real ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _fd_dir(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


def _gapped(shape, seed, complex_=False, gap=0.3):
    """A random non-symmetric matrix (stack) whose Hermitian parts from either triangle
    have eigenvalue gaps >= gap, so that finite differences of eigenvectors are accurate."""
    rs = np.random.RandomState(seed)
    while True:
        a = rs.randn(*shape) + (1j * rs.randn(*shape) if complex_ else 0)
        if all(np.diff(np.linalg.eigvalsh(a, u), axis=-1).min() >= gap for u in "LU"):
            return a


def _ignored(g, uplo):
    return np.tril(g, -1) if uplo == "U" else np.triu(g, 1)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(6, 6), (2, 3, 4, 4)])
def test_eigvalsh_uplo_gradient_is_numpys_finite_differences(uplo, shape):
    a = _gapped(shape, 0)
    c = np.random.RandomState(1).randn(*shape[:-1])
    f = lambda x: anp.sum(anp.linalg.eigvalsh(x, uplo) * c)
    g = ad.grad(f)(a)
    want = _fd_grad(lambda x: np.sum(np.linalg.eigvalsh(x, uplo) * c), a)
    np.testing.assert_allclose(g, want, atol=1e-7)
    assert np.all(_ignored(g, uplo) == 0)                       # exactly, not just small
    t = np.random.RandomState(2).randn(*shape)
    _, dw = ad.jvp(lambda x: anp.linalg.eigvalsh(x, uplo), (a,), (t,))
    np.testing.assert_allclose(dw, _fd_dir(lambda x: np.linalg.eigvalsh(x, uplo), a, t), atol=1e-7)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(a), g, atol=1e-12)
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="interpret")(a), g, atol=1e-12)
    if len(shape) > 2:                                         # vmap over the stack
        per = ad.vmap(ad.vmap(ad.grad(lambda x, k: anp.sum(anp.linalg.eigvalsh(x, uplo) * k))))(a, c)
        np.testing.assert_allclose(per, g, atol=1e-12)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("shape", [(6, 6), (2, 4, 4)])
def test_eigh_uplo_eigenvector_derivatives_are_numpys(uplo, shape):
    # the regression of issue 33: traced eigh(a, 'U') ran LAPACK's 'L' path on aᵀ, whose
    # eigenvectors differ from numpy's eigh(a, 'U') in sign, so dv disagreed with finite
    # differences of numpy's v by O(1) (2.6 here before the fix)
    a = _gapped(shape, 3)
    rs = np.random.RandomState(4)
    t, u = rs.randn(*shape), rs.randn(*shape)
    (w, v), (dw, dv) = ad.jvp(lambda x: tuple(anp.linalg.eigh(x, uplo)), (a,), (t,))
    wn, vn = np.linalg.eigh(a, uplo)
    np.testing.assert_array_equal(v, vn)                        # numpy's signs, traced
    np.testing.assert_allclose(dv, _fd_dir(lambda x: np.linalg.eigh(x, uplo)[1], a, t), atol=1e-7)
    np.testing.assert_allclose(dw, _fd_dir(lambda x: np.linalg.eigh(x, uplo)[0], a, t), atol=1e-7)
    # reverse mode against the same finite differences (autograd's check_grads 'rev')
    _, pull = ad.vjp(lambda x: anp.linalg.eigh(x, uplo)[1], a)
    ct, = pull(u)
    fd = np.sum(u * _fd_dir(lambda x: np.linalg.eigh(x, uplo)[1], a, t))
    np.testing.assert_allclose(np.sum(ct * t), fd, rtol=1e-6, atol=1e-7)
    assert np.all(_ignored(ct, uplo) == 0)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_uplo_gauge_invariant_gradient_matches_numpy_and_jit(uplo):
    a = _gapped((2, 5, 5), 5)
    rs = np.random.RandomState(6)
    c, C = rs.randn(2, 5), rs.randn(2, 5, 5)

    def f(x, m=anp):
        w, v = m.linalg.eigh(x, uplo)
        return m.sum(w * c) + m.sum(v ** 2 * C)                 # sign-invariant in v
    g = ad.grad(f)(a)
    np.testing.assert_allclose(g, _fd_grad(lambda x: f(x, np), a), atol=1e-7)
    assert np.all(_ignored(g, uplo) == 0)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(a), g, atol=1e-11)
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="interpret")(a), g, atol=1e-11)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_uplo_complex_derivatives_wrt_real_and_imaginary_parts(uplo):
    a = _gapped((5, 5), 7, complex_=True)
    rs = np.random.RandomState(8)
    c, C = rs.randn(5), rs.randn(5, 5)

    def f(x, m=anp):
        w, v = m.linalg.eigh(x, uplo)
        return m.sum(w * c) + m.sum(m.abs(v) ** 2 * C)          # phase-invariant in v
    g = ad.grad(f)(a)                   # conj(df/dx + i df/dy) = df/dx - i df/dy
    gx = _fd_grad(lambda x: f(x + 1j * a.imag, np), a.real)
    gy = _fd_grad(lambda y: f(a.real + 1j * y, np), a.imag)
    np.testing.assert_allclose(g.real, gx, atol=1e-7)
    np.testing.assert_allclose(-g.imag, gy, atol=1e-7)
    assert np.all(_ignored(g, uplo) == 0)
    np.testing.assert_allclose(np.diagonal(g).imag, 0, atol=0)  # Im diag is never read
    ge = ad.grad(lambda x: anp.sum(anp.linalg.eigvalsh(x, uplo) * c))(a)
    fe = lambda x: np.sum(np.linalg.eigvalsh(x, uplo) * c)
    np.testing.assert_allclose(ge.real, _fd_grad(lambda x: fe(x + 1j * a.imag), a.real), atol=1e-7)
    np.testing.assert_allclose(-ge.imag, _fd_grad(lambda y: fe(a.real + 1j * y), a.imag), atol=1e-7)
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="interpret")(a), g, atol=1e-11)
    # traced eigenvectors are numpy's, phases included
    _, v = ad.jvp(lambda x: tuple(anp.linalg.eigh(x, uplo)), (a,), (np.zeros_like(a),))[0]
    np.testing.assert_array_equal(v, np.linalg.eigh(a, uplo)[1])


def test_autograd_eigh_upper_tests_pass_in_both_modes():
    # autograd's test_linalg.py (test_eigvalh_upper, ..._broadcasting) on non-symmetric
    # input, with forward mode too, which compares with finite differences of the function
    from autodiff.builtins import tuple as ag_tuple
    from autodiff.test_util import check_grads
    D = 6
    mat = _gapped((D, D), 9)
    for uplo in ("L", "U"):
        check_grads(lambda x: anp.linalg.eigvalsh(x, uplo), modes=["fwd", "rev"], order=2)(mat)
        check_grads(lambda x: ag_tuple(anp.linalg.eigh(x, uplo)), modes=["fwd", "rev"], order=2)(mat)
    m = np.random.RandomState(10).randn(2, 3, D, D) + 10 * np.eye(D)
    hmat = np.einsum("...ij,...kj->...ik", m, m)
    check_grads(lambda x: ag_tuple(anp.linalg.eigh(x, "U")), modes=["fwd", "rev"], order=2)(hmat)


def test_eigh_uplo_spelling():
    a = _gapped((3, 3), 11)
    np.testing.assert_allclose(ad.jit(lambda x: anp.linalg.eigvalsh(x, "u"))(a),
                               np.linalg.eigvalsh(a, "U"), rtol=1e-13)
    np.testing.assert_allclose(ad.grad(lambda x: anp.linalg.eigvalsh(x, "u")[0])(a),
                               ad.grad(lambda x: anp.linalg.eigvalsh(x, "U")[0])(a), rtol=1e-13)
    with pytest.raises(ValueError, match="UPLO"):
        ad.jit(lambda x: anp.linalg.eigh(x, "X"))(a)


# ---------------------------------------------------------------------------------------
# jit's CPU kernel honours eigh_p's ``upper`` (issue 33): the kernel runs LAPACK's 'U' path
# when numpy's UPLO='U' does, so jitted eigenvectors carry numpy's signs (phases), for
# real and complex input, single matrices and stacks. Before, the kernel always ran the 'L'
# path on aᴴ: the right decomposition with other column signs (1.9 off for 'U').

def _eigh_case(shape, dt, seed):
    rs = np.random.RandomState(seed)
    a = rs.randn(*shape)
    if np.dtype(dt).kind == "c":
        a = a + 1j * rs.randn(*shape)       # Hermitian-ish: numpy reads one triangle only
    return a.astype(dt)


def _same_vectors(v, vn, tol):
    assert v.dtype == vn.dtype and v.shape == vn.shape
    np.testing.assert_allclose(v, vn, atol=tol)
    # the same signs / phases column by column, not just close after normalisation
    dots = np.sum(np.conj(vn) * v, axis=-2)
    np.testing.assert_allclose(dots, 1, atol=50 * tol)


@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("shape", [(6, 6), (2, 3, 5, 5)])
def test_jit_cpu_eigh_uplo_is_numpys(uplo, dt, shape):
    a = _eigh_case(shape, dt, 21)
    tol = 1e-12 if np.dtype(dt) in (np.float64, np.complex128) else 1e-5
    wn, vn = np.linalg.eigh(a, uplo)
    w, v = ad.jit(lambda x: tuple(anp.linalg.eigh(x, uplo)), backend="cpu")(a)
    assert w.dtype == wn.dtype
    np.testing.assert_allclose(w, wn, atol=tol)
    _same_vectors(v, vn, tol)
    we = ad.jit(lambda x: anp.linalg.eigvalsh(x, uplo), backend="cpu")(a)
    np.testing.assert_allclose(we, np.linalg.eigvalsh(a, uplo), atol=tol)


def test_jit_cpu_eigh_L_and_U_kernels_do_not_collide():
    # the same input shape and dtype through both paths, in either order: each kernel keeps
    # its own path (the flag is part of the kernel's source, so of its cache key)
    a = _eigh_case((5, 5), np.float64, 22)
    for uplo in ("U", "L", "U"):
        v = ad.jit(lambda x: anp.linalg.eigh(x, uplo)[1], backend="cpu")(a)
        _same_vectors(v, np.linalg.eigh(a, uplo)[1], 1e-12)
    assert np.abs(np.linalg.eigh(a, "U")[1] - np.linalg.eigh(a, "L")[1]).max() > 1e-3


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_jit_cpu_grad_of_sign_dependent_eigenvector_function(uplo):
    a = _gapped((2, 5, 5), 23)
    C = np.random.RandomState(24).randn(5)

    def f(x):
        w, v = anp.linalg.eigh(x, uplo)
        return anp.sum(v[..., 0, :] * C) + anp.sum(w)           # flips with each column's sign
    g = ad.grad(f)(a)
    np.testing.assert_allclose(ad.jit(ad.grad(f), backend="cpu")(a), g, atol=1e-11)
    np.testing.assert_allclose(ad.jit(f, backend="cpu")(a), f(a), atol=1e-12)
    ac = _eigh_case((4, 4), np.complex128, 25)
    fc = lambda x: anp.sum(anp.real(anp.linalg.eigh(x, uplo)[1][0] * C[:4]))
    np.testing.assert_allclose(ad.jit(ad.grad(fc), backend="cpu")(ac), ad.grad(fc)(ac), atol=1e-10)


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_jit_cpu_eigh_non_finite_read_triangle_gives_nan(dt):
    # NaN in the triangle eigh reads: all NaN (real and complex alike; the complex kernel
    # raised from inside Numba before); NaN in the ignored triangle: numpy's answer
    a = _eigh_case((2, 4, 4), dt, 26)
    a[0, 3, 0] = np.nan
    a[1, 0, 3] = np.nan
    for uplo, read in (("L", 0), ("U", 1)):
        w, v = ad.jit(lambda x: tuple(anp.linalg.eigh(x, uplo)), backend="cpu")(a)
        assert np.isnan(w[read]).all() and np.isnan(v[read]).all()
        wn, vn = np.linalg.eigh(a[1 - read], uplo)
        np.testing.assert_allclose(w[1 - read], wn, atol=1e-12)
        _same_vectors(v[1 - read], vn, 1e-12)
