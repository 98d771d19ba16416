"""``autodiff.lax.linalg``'s remaining JAX names (eig, schur, hessenberg, tridiagonal,
householder_product, ormqr, lu_pivots_to_permutation, cholesky_update, symmetric_product,
qdwh, the enums) and column-pivoted QR in ``lax.linalg.qr`` and ``scipy.linalg.qr`` /
``qr_multiply``: values against numpy/scipy/LAPACK, eagerly, under ``jit`` and ``vmap``;
derivatives against central differences."""
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import UnsupportedError
from autodiff.lax import linalg as L
from autodiff.scipy import linalg as asl

sl = pytest.importorskip("scipy.linalg")
lapack = pytest.importorskip("scipy.linalg.lapack")

RNG = np.random.default_rng(1234)


def _distinct_real(n, rng=RNG):
    """A nonsymmetric matrix with well separated real eigenvalues 1..n."""
    s = rng.standard_normal((n, n)) + n * np.eye(n)
    return s @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(s)


def _fd(f, a, d, h=1e-6):
    return (np.asarray(f(a + h * d)) - np.asarray(f(a - h * d))) / (2 * h)


# --------------------------------------------------------------------- the names

JAX_LAX_LINALG = ["cholesky", "cholesky_update", "EigImplementation", "eig", "eigh",
                  "EighImplementation", "hessenberg", "householder_product", "lu",
                  "lu_pivots_to_permutation", "ormqr", "qr", "schur", "svd", "SvdAlgorithm",
                  "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve",
                  "qdwh"]


def test_every_public_jax_lax_linalg_function_is_there():
    import autodiff.lax.linalg as mod
    missing = [n for n in JAX_LAX_LINALG if not hasattr(mod, n)]
    assert missing == []
    assert set(JAX_LAX_LINALG) <= set(mod.__all__)
    assert L.EigImplementation.LAPACK.value == "lapack"
    assert L.SvdAlgorithm.JACOBI.value == "Jacobi"
    assert L.EighImplementation.QDWH.value == "qdwh"


# --------------------------------------------------------------------- eig

@pytest.mark.parametrize("cplx", [False, True])
def test_eig_matches_lapack_and_the_eigen_equations(cplx):
    a = RNG.standard_normal((5, 5)) + (1j * RNG.standard_normal((5, 5)) if cplx else 0)
    w, vl, vr = L.eig(a)
    W, VL, VR = sl.eig(a, left=True, right=True)
    for got, ref in ((w, W), (vl, VL), (vr, VR)):
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, ref, atol=1e-12)
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-12)
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=0), 1.0)
    jw, jvl, jvr = ad.jit(L.eig)(a)
    np.testing.assert_allclose(jw, W, atol=1e-12)
    np.testing.assert_allclose(jvl, VL, atol=1e-12)
    np.testing.assert_allclose(jvr, VR, atol=1e-12)


def test_eig_flags_batch_vmap_and_dtypes():
    b = RNG.standard_normal((3, 4, 4))
    out = L.eig(b, compute_left_eigenvectors=False)
    assert isinstance(out, list) and len(out) == 2
    only_w = L.eig(b, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(only_w) == 1 and only_w[0].shape == (3, 4)
    for i in range(3):
        w, v = np.linalg.eig(b[i])
        np.testing.assert_allclose(out[0][i], w, atol=1e-12)
        np.testing.assert_allclose(out[1][i], v, atol=1e-12)
    vw, vl, vr = ad.vmap(L.eig)(b)
    np.testing.assert_allclose(vr[2], sl.eig(b[2])[1], atol=1e-12)
    np.testing.assert_allclose(vl[1], sl.eig(b[1], left=True, right=False)[1], atol=1e-12)
    w32 = L.eig(b[0].astype(np.float32), compute_left_eigenvectors=False)[0]
    assert w32.dtype == np.complex64
    with pytest.warns(DeprecationWarning):
        L.eig(b[0], use_magma=False)
    with pytest.raises(ValueError, match="square"):
        L.eig(np.ones((2, 3)))


def test_eig_eigenvalue_grad_matches_finite_differences():
    a = _distinct_real(4)
    d = RNG.standard_normal((4, 4))

    def f(x):
        w, = L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
        return anp.sum(anp.sort(anp.real(w)) * np.arange(1.0, 5.0))

    g = ad.grad(f)(a)
    gj = ad.jit(ad.grad(f))(a)
    np.testing.assert_allclose(np.sum(g * d), _fd(f, a, d), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gj, g, atol=1e-12)
    # the left/right eigenvector formula: dλ_k/dA = conj(y_k) x_kᵀ / (y_kᴴ x_k)
    w, vl, vr = sl.eig(a, left=True, right=True)
    rank = np.argsort(np.argsort(w.real)) + 1.0           # the weight of each eigenvalue
    ref = sum(rank[i] * np.real(np.outer(vl[:, i].conj(), vr[:, i]) / (vl[:, i].conj() @ vr[:, i]))
              for i in range(4))
    np.testing.assert_allclose(g, ref, atol=1e-8)


def test_eig_eigenvector_derivatives_need_the_opt_in():
    a = _distinct_real(3)
    with pytest.raises(UnsupportedError, match="enable_eigvec_derivs"):
        ad.grad(lambda x: anp.sum(anp.real(L.eig(x)[0])))(a)
    with pytest.raises(NotImplementedError):          # JAX's exception type
        ad.jvp(lambda x: L.eig(x, compute_left_eigenvectors=False)[1], (a,), (a,))


@pytest.mark.parametrize("cplx", [False, True])
def test_eig_eigenvector_jvp_matches_finite_differences_of_lapack(cplx):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 4)) + (1j * rng.standard_normal((4, 4)) if cplx else 0)
    d = rng.standard_normal((4, 4)) + (1j * rng.standard_normal((4, 4)) if cplx else 0)

    def f(x):
        return L.eig(x, enable_eigvec_derivs=True)

    def ref(x):
        w, vl, vr = sl.eig(x, left=True, right=True)
        return np.concatenate([w[None], vl, vr])

    primals, tangents = ad.jvp(f, (a,), (d,))
    fd = _fd(ref, a, d)
    np.testing.assert_allclose(tangents[0], fd[0], atol=1e-6)
    np.testing.assert_allclose(tangents[1], fd[1:5], atol=1e-6)
    np.testing.assert_allclose(tangents[2], fd[5:], atol=1e-6)
    _, tj = ad.jit(lambda x, t: ad.jvp(f, (x,), (t,)))(a, d)
    np.testing.assert_allclose(tj[2], tangents[2], atol=1e-10)


# --------------------------------------------------------------------- schur

def _quasi_upper(t):
    n = t.shape[-1]
    below = np.tril(t, -2)
    sub = np.diagonal(t, -1)
    # no two consecutive nonzero subdiagonal entries (2x2 blocks only)
    return np.allclose(below, 0) and not np.any((sub[:-1] != 0) & (sub[1:] != 0)) if n > 2 \
        else np.allclose(below, 0)


def test_schur_real_complex_batched_and_jitted():
    a = RNG.standard_normal((5, 5))
    t, z = L.schur(a)
    assert _quasi_upper(t)
    np.testing.assert_allclose(z @ t @ z.T, a, atol=1e-12)
    np.testing.assert_allclose(z.T @ z, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(t, sl.schur(a)[0], atol=1e-12)
    c = a + 1j * RNG.standard_normal((5, 5))
    tc, zc = L.schur(c)
    np.testing.assert_allclose(np.tril(tc, -1), 0, atol=1e-14)
    np.testing.assert_allclose(zc @ tc @ zc.conj().T, c, atol=1e-12)
    b = RNG.standard_normal((2, 3, 4, 4))
    tb, zb = ad.jit(L.schur)(b)
    assert tb.shape == (2, 3, 4, 4)
    for i in range(2):
        for j in range(3):
            assert _quasi_upper(tb[i, j])
            np.testing.assert_allclose(zb[i, j] @ tb[i, j] @ zb[i, j].T, b[i, j], atol=1e-12)
    only_t = ad.jit(lambda x: L.schur(x, compute_schur_vectors=False))(a)
    np.testing.assert_allclose(only_t, t, atol=1e-12)
    ts, zs = L.schur(a, sort_eig_vals=True, select_callable="lhp")
    np.testing.assert_allclose(ts, sl.schur(a, sort="lhp")[0], atol=1e-12)
    with pytest.raises(ValueError, match="select_callable"):
        L.schur(a, sort_eig_vals=True)


def test_schur_diagonal_grad_matches_finite_differences():
    a = _distinct_real(4)
    d = RNG.standard_normal((4, 4))

    def f(x):
        t = L.schur(x, compute_schur_vectors=False)
        return anp.sum(anp.diagonal(t) * np.arange(1.0, 5.0))

    g = ad.grad(f)(a)
    np.testing.assert_allclose(np.sum(g * d), _fd(f, a, d), rtol=1e-6)
    np.testing.assert_allclose(ad.jit(ad.grad(f))(a), g, atol=1e-10)


# --------------------------------------------------------------------- hessenberg, tridiagonal

@pytest.mark.parametrize("cplx", [False, True])
def test_hessenberg_matches_gehrd_and_reconstructs(cplx):
    n = 6
    a = RNG.standard_normal((n, n)) + (1j * RNG.standard_normal((n, n)) if cplx else 0)
    packed, taus = L.hessenberg(a)
    h_ref, tau_ref, info = (lapack.zgehrd if cplx else lapack.dgehrd)(a)
    assert info == 0 and taus.shape == (n - 1,)
    np.testing.assert_allclose(packed, h_ref, atol=1e-12)
    np.testing.assert_allclose(taus, tau_ref, atol=1e-12)
    # Q from the reflectors (rows/columns 1: of the packed matrix), then Q H Qᴴ = a
    q = np.eye(n, dtype=a.dtype)
    q[1:, 1:] = L.householder_product(packed[1:, :-1], taus)
    h = np.triu(packed, -1)
    np.testing.assert_allclose(q @ h @ q.conj().T, a, atol=1e-12)
    np.testing.assert_allclose(h, sl.hessenberg(a), atol=1e-12)
    b = np.stack([a, 2 * a])
    pj, tj = ad.jit(L.hessenberg)(b)
    np.testing.assert_allclose(pj[0], h_ref, atol=1e-12)
    np.testing.assert_allclose(tj[1], tau_ref, atol=1e-12)
    pv, tv = ad.vmap(L.hessenberg)(b)
    np.testing.assert_allclose(pv[0], h_ref, atol=1e-12)
    np.testing.assert_allclose(tv[0], tau_ref, atol=1e-12)


def test_hessenberg_grad_matches_finite_differences():
    a = RNG.standard_normal((4, 4))
    d = RNG.standard_normal((4, 4))

    def f(x):
        p, t = L.hessenberg(x)
        return anp.sum(anp.triu(p, -1) ** 2 * np.arange(16.0).reshape(4, 4)) + anp.sum(t)

    g = ad.grad(f)(a)
    np.testing.assert_allclose(np.sum(g * d), _fd(f, a, d), rtol=1e-6)


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_matches_sytrd_and_leaves_the_other_triangle(cplx, lower):
    n = 5
    a = RNG.standard_normal((n, n)) + (1j * RNG.standard_normal((n, n)) if cplx else 0)
    # a is not Hermitian: only the ``lower`` (upper) triangle may be read
    packed, d, e, taus = L.tridiagonal(a, lower=lower)
    herm = (np.tril(a, -1) if lower else np.triu(a, 1))
    herm = herm + herm.conj().T + np.diag(np.diag(a).real)
    c, d_ref, e_ref, tau_ref, info = (lapack.zhetrd if cplx else lapack.dsytrd)(
        herm, lower=int(lower))
    assert info == 0
    np.testing.assert_allclose(d, d_ref, atol=1e-12)
    np.testing.assert_allclose(e, e_ref, atol=1e-12)
    np.testing.assert_allclose(taus, tau_ref, atol=1e-12)
    keep = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    np.testing.assert_allclose(packed[keep], c[keep], atol=1e-12)
    np.testing.assert_array_equal(packed[~keep], a[~keep])        # untouched, as LAPACK
    assert d.dtype == np.float64 and e.dtype == np.float64 and taus.dtype == a.dtype
    t = np.diag(d) + np.diag(e, -1) + np.diag(e, 1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(herm), atol=1e-12)
    pj, dj, ej, tj = ad.jit(lambda x: L.tridiagonal(x, lower=lower))(np.stack([a, a]))
    np.testing.assert_allclose(dj[1], d_ref, atol=1e-12)
    np.testing.assert_allclose(tj[0], tau_ref, atol=1e-12)
    pv, dv, ev, tv = ad.vmap(lambda x: L.tridiagonal(x, lower=lower))(np.stack([a, a]))
    np.testing.assert_allclose(ev[1], e_ref, atol=1e-12)
    np.testing.assert_allclose(pv[0], packed, atol=1e-12)


# --------------------------------------------------------------------- Householder products

@pytest.mark.parametrize("shape", [(5, 3), (4, 4)])
def test_householder_product_and_ormqr_match_lapack(shape):
    a = RNG.standard_normal(shape)
    m, n = shape
    h, taus = np.linalg.qr(a, mode="raw")
    refl = h.T
    np.testing.assert_allclose(L.householder_product(refl, taus),
                               lapack.dorgqr(refl, taus)[0], atol=1e-12)
    q_full = np.linalg.qr(a, mode="complete")[0]
    c = RNG.standard_normal((m, 2))
    c2 = RNG.standard_normal((2, m))
    np.testing.assert_allclose(L.ormqr(refl, taus, c), q_full @ c, atol=1e-12)
    np.testing.assert_allclose(L.ormqr(refl, taus, c, transpose=True), q_full.T @ c, atol=1e-12)
    np.testing.assert_allclose(L.ormqr(refl, taus, c2, left=False), c2 @ q_full, atol=1e-12)
    np.testing.assert_allclose(L.ormqr(refl, taus, c2, left=False, transpose=True),
                               c2 @ q_full.T, atol=1e-12)
    jq = ad.jit(L.householder_product)(np.stack([refl, refl]), np.stack([taus, taus]))
    np.testing.assert_allclose(jq[1], np.linalg.qr(a)[0], atol=1e-12)
    with pytest.raises(ValueError, match="rows"):
        L.ormqr(refl, taus, c2)


def test_complex_ormqr_and_householder_product_match_unmqr():
    a = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
    h, taus = np.linalg.qr(a, mode="raw")
    refl = h.T
    q = np.linalg.qr(a, mode="complete")[0]
    c = RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))
    np.testing.assert_allclose(L.ormqr(refl, taus, c, transpose=True), q.conj().T @ c,
                               atol=1e-12)
    np.testing.assert_allclose(L.householder_product(refl, taus), lapack.zungqr(refl, taus)[0],
                               atol=1e-12)


def test_householder_product_grad_matches_finite_differences():
    a = RNG.standard_normal((4, 3))
    taus = np.array([1.2, 1.5, 0.7])
    d = RNG.standard_normal((4, 3))
    w = RNG.standard_normal((4, 3))

    def f(x):
        return anp.sum(L.householder_product(x, taus) * w)

    np.testing.assert_allclose(np.sum(ad.grad(f)(a) * d), _fd(f, a, d), rtol=1e-6)


# --------------------------------------------------------------------- pivots, updates, products

def test_lu_pivots_to_permutation_matches_lu():
    a = RNG.standard_normal((3, 6, 6))
    packed, piv, perm = L.lu(a[0])
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(piv, 6), perm)
    pivs = np.stack([sl.lu_factor(x)[1] for x in a]).astype(np.int32)
    perms = ad.jit(lambda p: L.lu_pivots_to_permutation(p, 8))(pivs)
    assert perms.dtype == np.int32 and perms.shape == (3, 8)
    np.testing.assert_array_equal(ad.vmap(lambda p: L.lu_pivots_to_permutation(p, 8))(pivs),
                                  perms)
    for i in range(3):
        p, _, _ = sl.lu(a[i], p_indices=True)
        expect = np.arange(8)
        for k, j in enumerate(pivs[i]):
            expect[[k, j]] = expect[[j, k]]
        np.testing.assert_array_equal(perms[i], expect)
        np.testing.assert_array_equal(np.argsort(perms[i][:6]), p)
    with pytest.raises(ValueError, match="exceed"):
        L.lu_pivots_to_permutation(pivs, 3)


def test_cholesky_update_values_and_grad():
    x = RNG.standard_normal((5, 5))
    spd = x @ x.T + 5 * np.eye(5)
    r = np.linalg.cholesky(spd).T
    w = RNG.standard_normal(5)
    r2 = L.cholesky_update(r, w)
    np.testing.assert_allclose(r2, np.linalg.cholesky(spd + np.outer(w, w)).T, atol=1e-12)
    np.testing.assert_allclose(ad.jit(L.cholesky_update)(r, w), r2, atol=1e-12)
    dw = RNG.standard_normal(5)
    f = lambda v: anp.sum(L.cholesky_update(r, v) * np.arange(25.0).reshape(5, 5))  # noqa: E731
    np.testing.assert_allclose(np.dot(ad.grad(f)(w), dw), _fd(f, w, dw), rtol=1e-6)
    np.testing.assert_allclose(L.cholesky_update(r, np.zeros(5)), r)


def test_symmetric_product():
    a = RNG.standard_normal((2, 3, 4))
    c = RNG.standard_normal((2, 3, 3))
    c = c + np.swapaxes(c, -1, -2)
    out = L.symmetric_product(a, c, alpha=2.0, beta=-0.5)
    np.testing.assert_allclose(out, 2 * a @ np.swapaxes(a, -1, -2) - 0.5 * c, atol=1e-12)
    skew = np.triu(np.ones((3, 3)), 1)
    sym = L.symmetric_product(a[0], skew, beta=1.0, symmetrize_output=True)
    np.testing.assert_allclose(sym, sym.T)
    np.testing.assert_allclose(np.tril(sym), np.tril(a[0] @ a[0].T), atol=1e-12)


def test_tridiagonal_solve_perturb_singular_gives_a_finite_answer():
    # a zero pivot of a nonsingular matrix: the plain elimination breaks down, the
    # perturbed one recovers the solution
    dl, d, du = np.array([0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, 0.0])
    b = np.array([[1.0], [2.0], [3.0]])
    with np.errstate(all="ignore"):
        bad = L.tridiagonal_solve(dl, d, du, b)
    assert not np.all(np.isfinite(bad))
    x = L.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    a = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), atol=1e-6)
    # a singular matrix: finite and large, as inverse iteration wants
    dl2, du2 = np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])
    with np.errstate(all="ignore"):
        assert not np.all(np.isfinite(L.tridiagonal_solve(dl2, d, du2, b)))
    x2 = ad.jit(lambda *v: L.tridiagonal_solve(*v, perturb_singular=True))(dl2, d, du2, b)
    assert np.all(np.isfinite(x2)) and np.abs(x2).max() > 1e10
    ok = L.tridiagonal_solve(dl, 4 * d, du, b, perturb_singular=True)
    a4 = np.diag(4 * d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(ok, np.linalg.solve(a4, b), atol=1e-12)


# --------------------------------------------------------------------- qdwh

@pytest.mark.parametrize("shape", [(5, 3), (4, 4)])
def test_qdwh_is_the_polar_decomposition(shape):
    x = RNG.standard_normal(shape)
    u, h, k, ok = L.qdwh(x)
    u_ref, h_ref = sl.polar(x)
    np.testing.assert_allclose(u, u_ref, atol=1e-10)
    np.testing.assert_allclose(h, h_ref, atol=1e-10)
    assert bool(ok) and 1 <= int(k) <= 10 and np.asarray(k).dtype == np.int32
    uj, hj, kj, okj = ad.jit(L.qdwh)(x)
    np.testing.assert_allclose(uj, u_ref, atol=1e-10)
    assert int(kj) == int(k) and bool(okj)
    xc = x + 1j * RNG.standard_normal(shape)
    uc, hc, _, _ = L.qdwh(xc)
    np.testing.assert_allclose(uc @ hc, xc, atol=1e-10)
    np.testing.assert_allclose(uc.conj().T @ uc, np.eye(shape[1]), atol=1e-10)


def test_qdwh_dynamic_shape_and_errors():
    x = RNG.standard_normal((4, 3))
    padded = np.zeros((6, 5))
    padded[:4, :3] = x
    u, h, _, ok = L.qdwh(padded, dynamic_shape=(4, 3))
    u_ref, h_ref = sl.polar(x)
    np.testing.assert_allclose(u[:4, :3], u_ref, atol=1e-10)
    np.testing.assert_allclose(h[:3, :3], h_ref, atol=1e-10)
    assert np.all(u[4:] == 0) and np.all(h[3:] == 0)
    with pytest.raises(ValueError, match="M >= N"):
        L.qdwh(np.ones((2, 3)))
    _, _, k, ok = L.qdwh(x, max_iterations=1)
    assert int(k) == 1 and not bool(ok)


# --------------------------------------------------------------------- pivoted QR

def _check_pivoted(a, q, r, p, economic):
    m, n = a.shape[-2:]
    k = min(m, n) if economic else m
    assert q.shape[-2:] == (m, k) and r.shape[-2:] == (k, n) and p.shape[-1] == n
    assert p.dtype == np.int32
    np.testing.assert_allclose(q @ r, np.take_along_axis(a, p[..., None, :], -1), atol=1e-12)
    dr = np.abs(np.diagonal(r, 0, -2, -1))
    assert np.all(np.diff(dr, axis=-1) <= 1e-12)
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=1e-14)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5)])
@pytest.mark.parametrize("full", [True, False])
def test_lax_qr_pivoting(shape, full):
    a = RNG.standard_normal(shape) * np.array([1.0, 10.0, 0.1, 3.0, 0.5][:shape[1]])
    q, r, p = L.qr(a, pivoting=True, full_matrices=full)
    _check_pivoted(a, q, r, p, not full)
    q_ref, r_ref, p_ref = sl.qr(a, pivoting=True, mode="full" if full else "economic")
    np.testing.assert_array_equal(p, p_ref)
    np.testing.assert_allclose(r, r_ref, atol=1e-12)
    qj, rj, pj = ad.jit(lambda x: L.qr(x, pivoting=True, full_matrices=full))(a)
    np.testing.assert_array_equal(pj, p_ref)
    np.testing.assert_allclose(rj, r_ref, atol=1e-12)
    b = RNG.standard_normal((3,) + shape)
    qv, rv, pv = ad.vmap(lambda x: L.qr(x, pivoting=True, full_matrices=full))(b)
    _check_pivoted(b, qv, rv, pv, not full)
    qb, rb, pb = L.qr(b, pivoting=True, full_matrices=full)
    np.testing.assert_array_equal(pb, pv)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_scipy_qr_pivoting_modes(mode):
    a = RNG.standard_normal((5, 3)) * np.array([0.1, 5.0, 1.0])
    out = asl.qr(a, mode=mode, pivoting=True)
    ref = sl.qr(a, mode=mode, pivoting=True)
    assert len(out) == len(ref)
    for got, want in zip(out, ref):
        np.testing.assert_allclose(got, want, atol=1e-12)
        assert np.asarray(got).dtype == want.dtype
    outj = ad.jit(lambda x: asl.qr(x, mode=mode, pivoting=True))(a)
    for got, want in zip(outj, ref):
        np.testing.assert_allclose(got, want, atol=1e-12)
    ac = a + 1j * RNG.standard_normal((5, 3))
    qc, rc, pc = asl.qr(ac, pivoting=True)
    np.testing.assert_array_equal(pc, sl.qr(ac, pivoting=True)[2])
    _check_pivoted(ac, qc, rc, pc, False)


def test_scipy_qr_pivoting_without_scipy_uses_the_same_rule():
    from autodiff.scipy.linalg import _geqp3_pivots_numpy
    for shape in [(6, 4), (4, 6), (5, 5)]:
        a = RNG.standard_normal(shape) * RNG.uniform(0.1, 10, shape[1])
        np.testing.assert_array_equal(_geqp3_pivots_numpy(a), sl.qr(a, pivoting=True)[2])


@pytest.mark.parametrize("mode", ["right", "left"])
def test_qr_multiply_pivoting(mode):
    a = RNG.standard_normal((5, 3)) * np.array([0.1, 5.0, 1.0])
    c = RNG.standard_normal((2, 5)) if mode == "right" else RNG.standard_normal((3, 2))
    cq, r, p = asl.qr_multiply(a, c, mode=mode, pivoting=True)
    cq_ref, r_ref, p_ref = sl.qr_multiply(a, c, mode=mode, pivoting=True)
    np.testing.assert_allclose(cq, cq_ref, atol=1e-12)
    np.testing.assert_allclose(r, r_ref, atol=1e-12)
    np.testing.assert_array_equal(p, p_ref)
    cqj, rj, pj = ad.jit(lambda x, y: asl.qr_multiply(x, y, mode=mode, pivoting=True))(a, c)
    np.testing.assert_allclose(cqj, cq_ref, atol=1e-12)
    np.testing.assert_array_equal(pj, p_ref)


def test_pivoted_qr_derivative_is_qr_at_the_fixed_permutation():
    # well separated column norms: the pivots do not change within the finite difference
    a = RNG.standard_normal((5, 4)) * np.array([0.3, 4.0, 1.0, 10.0])
    d = RNG.standard_normal((5, 4))

    def f(x):
        _, r, _ = L.qr(x, pivoting=True, full_matrices=False)
        return anp.sum(anp.abs(anp.diagonal(r)) * np.array([1.0, 2.0, 3.0, 4.0]))

    def g(x):
        q, r, _ = asl.qr(x, pivoting=True, mode="economic")
        return anp.sum(q * np.arange(20.0).reshape(5, 4)) + anp.sum(r ** 2)

    for fun in (f, g):
        gr = ad.grad(fun)(a)
        np.testing.assert_allclose(np.sum(gr * d), _fd(fun, a, d), rtol=1e-6)
        np.testing.assert_allclose(ad.jit(ad.grad(fun))(a), gr, atol=1e-10)
    _, (dq, dr, dp) = ad.jvp(lambda x: L.qr(x, pivoting=True), (a,), (d,))
    p = L.qr(a, pivoting=True)[2]
    _, (dq0, dr0) = ad.jvp(lambda x: anp.linalg.qr(x, mode="complete"), (a[:, p],), (d[:, p],))
    np.testing.assert_allclose(dr, dr0, atol=1e-12)
    assert not np.any(np.asarray(dp, dtype=float))


def test_qr_rejects_bad_mode():
    with pytest.raises(ValueError, match="Mode"):
        asl.qr(np.eye(2), mode="bogus")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(asl.qr(np.eye(2), pivoting=True)) == 3
