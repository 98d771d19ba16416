"""Regressions from porting a sixth round of published JAX research code by changing imports
only: a semi-Lagrangian fluid step and image warping that read arrays at fractional positions
with ``jax.scipy.ndimage.map_coordinates``, and quadrature with
``jax.scipy.integrate.trapezoid``."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy.integrate import trapezoid
from autodiff.scipy.ndimage import map_coordinates

nd = pytest.importorskip("scipy.ndimage")

RNG = np.random.default_rng(0)
IMG = RNG.normal(size=(5, 6))
COORDS = [RNG.uniform(-2.0, 7.0, 40), RNG.uniform(-2.0, 8.0, 40)]
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}   # JAX's meanings


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_map_coordinates_matches_scipy_eagerly_and_under_jit(order, mode):
    ref = nd.map_coordinates(IMG, np.stack(COORDS), order=order,
                             mode=SCIPY_MODE.get(mode, mode), cval=0.5)
    out = map_coordinates(IMG, COORDS, order, mode=mode, cval=0.5)
    np.testing.assert_allclose(out, ref, atol=1e-12)
    jitted = ad.jit(lambda a, c0, c1: map_coordinates(a, [c0, c1], order, mode=mode, cval=0.5))
    np.testing.assert_allclose(jitted(IMG, *COORDS), ref, atol=1e-12)


def test_map_coordinates_integer_input_and_errors():
    ints = np.arange(30).reshape(5, 6)
    out = map_coordinates(ints, COORDS, 1, mode="nearest")
    assert out.dtype == ints.dtype
    np.testing.assert_array_equal(
        out, nd.map_coordinates(ints, np.stack(COORDS), order=1, mode="nearest"))
    with pytest.raises(NotImplementedError, match="order"):
        map_coordinates(IMG, COORDS, 3)
    with pytest.raises(ValueError, match="input.ndim"):
        map_coordinates(IMG, COORDS[:1], 1)


def test_map_coordinates_gradients_in_values_and_coordinates():
    def loss(a, c0):
        return anp.sum(map_coordinates(a, [c0, COORDS[1]], 1, mode="wrap") ** 2)

    ga, gc = ad.grad(loss, (0, 1))(IMG, COORDS[0])
    h = 1e-6
    e = np.zeros(40)
    e[7] = h
    np.testing.assert_allclose(gc[7], (loss(IMG, COORDS[0] + e) - loss(IMG, COORDS[0] - e))
                               / (2 * h), rtol=1e-6)
    E = np.zeros_like(IMG)
    E[2, 3] = h
    np.testing.assert_allclose(ga[2, 3], (loss(IMG + E, COORDS[0]) - loss(IMG - E, COORDS[0]))
                               / (2 * h), rtol=1e-6)
    gj = ad.jit(ad.grad(loss, 1))(IMG, COORDS[0])
    np.testing.assert_allclose(gj, gc, rtol=1e-12)


def test_semi_lagrangian_advection_step_matches_scipy():
    # the step of a ported stable-fluids solver: dye carried back along the velocity
    n = 12
    vel = RNG.normal(size=(2, n, n))
    dye = RNG.uniform(size=(n, n))

    def advect(f, v, dt):
        coords = anp.mgrid[:n, :n] - v * dt
        return map_coordinates(f, coords, order=1, mode="wrap")

    ref = nd.map_coordinates(dye, np.mgrid[:n, :n] - vel * 0.7, order=1, mode="grid-wrap")
    np.testing.assert_allclose(advect(dye, vel, 0.7), ref, atol=1e-12)
    np.testing.assert_allclose(ad.jit(advect)(dye, vel, 0.7), ref, atol=1e-12)
    g = ad.grad(lambda dt: anp.sum(advect(dye, vel, dt) ** 2))(0.7)
    fd = (np.sum(nd.map_coordinates(dye, np.mgrid[:n, :n] - vel * (0.7 + 1e-6), order=1,
                                    mode="grid-wrap") ** 2)
          - np.sum(nd.map_coordinates(dye, np.mgrid[:n, :n] - vel * (0.7 - 1e-6), order=1,
                                      mode="grid-wrap") ** 2)) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_scipy_integrate_trapezoid():
    x = np.linspace(0.0, 1.0, 11)
    y = np.exp(x)
    np.testing.assert_allclose(trapezoid(y, x), np.trapezoid(y, x) if hasattr(np, "trapezoid")
                               else np.trapz(y, x), rtol=1e-14)
    assert float(trapezoid(np.array([0.0, 1.0, 4.0]), dx=0.5)) == 1.5
    g = ad.grad(lambda y: trapezoid(y ** 2, dx=0.1))(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, [0.1, 0.4, 0.3])
    np.testing.assert_allclose(ad.jit(lambda y: trapezoid(y, x, axis=0))(y), trapezoid(y, x))


# -- jax.lax.linalg (GP code's ``from jax.lax.linalg import cholesky, triangular_solve``,
#    Crank-Nicolson solvers' ``tridiagonal_solve``) -------------------------------------------

def test_lax_linalg_import_paths_and_jax_conventions():
    import autodiff.lax.linalg as lax_linalg
    from autodiff.lax.linalg import eigh, lu, qr, svd

    assert ad.lax.linalg is lax_linalg
    a = RNG.normal(size=(4, 4))
    s = a @ a.T + np.eye(4)
    np.testing.assert_allclose(lax_linalg.cholesky(s), np.linalg.cholesky(s))
    v, w = eigh(s)                       # JAX's order: vectors first
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s))
    np.testing.assert_allclose(s @ v, v * w, atol=1e-12)
    q, r = qr(a[:, :2])
    assert q.shape == (4, 4) and r.shape == (4, 2)
    np.testing.assert_allclose(q @ r, a[:, :2], atol=1e-12)
    u, sv, vh = svd(a[:, :3], full_matrices=False)
    np.testing.assert_allclose((u * sv) @ vh, a[:, :3], atol=1e-12)
    packed, pivots, perm = lu(a)
    low, up = np.tril(packed, -1) + np.eye(4), np.triu(packed)
    np.testing.assert_allclose(a[perm], low @ up, atol=1e-12)
    assert pivots.dtype == perm.dtype == np.int32


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
def test_lax_linalg_triangular_solve_sides_and_transposes(left_side, lower, transpose_a):
    from autodiff.lax.linalg import triangular_solve

    a = RNG.normal(size=(4, 4))
    t = (np.tril(a) if lower else np.triu(a)) + 3 * np.eye(4)
    op = t.T if transpose_a else t
    b = RNG.normal(size=(4, 3)) if left_side else RNG.normal(size=(3, 4))
    x = triangular_solve(t, b, left_side=left_side, lower=lower, transpose_a=transpose_a)
    np.testing.assert_allclose(op @ x if left_side else x @ op, b, atol=1e-12)
    xc = triangular_solve(t * (1 + 0.5j), b + 0j, left_side=left_side, lower=lower,
                          transpose_a=transpose_a, conjugate_a=True)
    opc = op * (1 - 0.5j)
    np.testing.assert_allclose(opc @ xc if left_side else xc @ opc, b, atol=1e-12)


def test_lax_linalg_triangular_solve_gradient_in_a_gp_likelihood():
    from autodiff.lax.linalg import cholesky, triangular_solve

    x = RNG.uniform(size=(6, 1))
    y = np.sin(6 * x[:, 0])

    def nll(ls, xp=anp):
        k = xp.exp(-0.5 * (x - x.T) ** 2 / ls ** 2) + 1e-2 * np.eye(6)
        chol = cholesky(k)
        alpha = triangular_solve(chol, y[:, None], left_side=True, lower=True)
        return 0.5 * xp.sum(alpha ** 2) + xp.sum(xp.log(xp.diag(chol)))

    k = np.exp(-0.5 * (x - x.T) ** 2 / 0.3 ** 2) + 1e-2 * np.eye(6)
    ref = 0.5 * y @ np.linalg.solve(k, y) + np.log(np.diag(np.linalg.cholesky(k))).sum()
    np.testing.assert_allclose(nll(0.3), ref, rtol=1e-12)
    fd = (nll(0.3 + 1e-6) - nll(0.3 - 1e-6)) / 2e-6
    np.testing.assert_allclose(ad.grad(nll)(0.3), fd, rtol=1e-6)
    np.testing.assert_allclose(ad.jit(ad.grad(nll))(0.3), fd, rtol=1e-6)


def test_lax_linalg_tridiagonal_solve_crank_nicolson():
    sl = pytest.importorskip("scipy.linalg")
    from autodiff.lax.linalg import tridiagonal_solve

    m = 12
    dl = np.r_[0.0, RNG.uniform(-1, 0, m - 1)]
    du = np.r_[RNG.uniform(-1, 0, m - 1), 0.0]
    d = RNG.uniform(3, 4, m)
    b = RNG.normal(size=(m, 2))
    ab = np.stack([np.r_[0.0, du[:-1]], d, np.r_[dl[1:], 0.0]])
    np.testing.assert_allclose(tridiagonal_solve(dl, d, du, b), sl.solve_banded((1, 1), ab, b),
                               atol=1e-12)
    np.testing.assert_allclose(ad.jit(tridiagonal_solve)(dl, d, du, b),
                               sl.solve_banded((1, 1), ab, b), atol=1e-12)
    batched = tridiagonal_solve(np.stack([dl, dl]), np.stack([d, 2 * d]), np.stack([du, du]),
                                np.stack([b, b]))
    ab[1] = 2 * d
    np.testing.assert_allclose(batched[1], sl.solve_banded((1, 1), ab, b), atol=1e-12)

    def loss(d):
        return anp.sum(tridiagonal_solve(dl, d, du, b) ** 2)

    e = np.zeros(m)
    e[3] = 1e-6
    np.testing.assert_allclose(ad.grad(loss)(d)[3], (loss(d + e) - loss(d - e)) / 2e-6,
                               rtol=1e-6)
