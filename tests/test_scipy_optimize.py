"""``autodiff.scipy.optimize.minimize``: JAX's BFGS (and L-BFGS) against scipy's and
closed forms, eagerly, under ``jit`` and under ``vmap``."""
import numpy as np
import pytest
import scipy.optimize

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def rosen(x):
    return anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _logistic_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    p = 1 / (1 + np.exp(-X @ np.array([1.0, -2.0, 0.5])))
    return X, (rng.uniform(size=n) < p).astype(float)


def nll(w, X, y, lam):
    z = X @ w
    return anp.mean(anp.logaddexp(0.0, z) - y * z) + lam * anp.sum(w ** 2)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
@pytest.mark.parametrize("n", [2, 5])
def test_rosenbrock_converges(method, n):
    x0 = np.full(n, -1.2) if n == 2 else np.linspace(-1, 1, n)
    r = minimize(rosen, x0, method=method)
    assert isinstance(r, OptimizeResults)
    assert bool(r.success) and int(r.status) == 0
    np.testing.assert_allclose(r.x, np.ones(n), atol=1e-5)
    np.testing.assert_allclose(r.fun, rosen(r.x), rtol=1e-12)
    np.testing.assert_allclose(r.jac, ad.grad(rosen)(r.x), rtol=1e-12)
    assert np.max(np.abs(r.jac)) < 1e-5                # gtol, inf-norm
    assert 0 < int(r.nit) < 200 * n and int(r.nfev) >= int(r.nit) + 1
    assert int(r.njev) == int(r.nfev)


def test_matches_scipy_bfgs_and_hess_inv():
    X, y = _logistic_data()
    r = minimize(nll, np.zeros(3), args=(X, y, 0.01), method="BFGS", tol=1e-10)
    rs = scipy.optimize.minimize(lambda w: float(nll(w, X, y, 0.01)), np.zeros(3),
                                 jac=lambda w: ad.grad(nll)(w, X, y, 0.01), method="BFGS",
                                 options=dict(gtol=1e-10))
    np.testing.assert_allclose(r.x, rs.x, atol=1e-8)
    np.testing.assert_allclose(r.fun, rs.fun, rtol=1e-12)
    # the BFGS estimate approaches the inverse Hessian at the optimum
    H = ad.hessian(nll)(r.x, X, y, 0.01)
    np.testing.assert_allclose(r.hess_inv @ H, np.eye(3), atol=0.1)


def test_quadratic_closed_form_under_jit_and_vmap():
    A = np.array([[3.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])

    def quad(x, b):
        return 0.5 * x @ A @ x - b @ x

    def solve(b):
        return minimize(quad, anp.zeros(3), args=(b,), method="BFGS",
                        options=dict(gtol=1e-10)).x

    b = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(solve(b), np.linalg.solve(A, b), atol=1e-9)
    np.testing.assert_allclose(ad.jit(solve)(b), np.linalg.solve(A, b), atol=1e-9)
    B = np.stack([b, 2 * b, -b])
    np.testing.assert_allclose(ad.vmap(solve)(B), np.linalg.solve(A, B.T).T, atol=1e-9)


def test_jit_result_fields_equal_eager():
    f = ad.jit(lambda x0: minimize(rosen, x0, method="BFGS"))
    x0 = np.array([-1.0, 2.0])
    rj, re = f(x0), minimize(rosen, x0, method="BFGS")
    assert int(rj.nit) == int(re.nit) and int(rj.nfev) == int(re.nfev)
    np.testing.assert_allclose(rj.x, re.x, rtol=1e-10)
    np.testing.assert_allclose(rj.hess_inv, re.hess_inv, rtol=1e-8, atol=1e-12)


def test_pytree_x0_and_maxiter_status():
    def loss(p):
        return anp.sum((p["w"] - np.array([1.0, 2.0])) ** 2) + (p["b"] - 3.0) ** 2
    r = minimize(loss, {"w": np.zeros(2), "b": np.array(0.0)}, method="BFGS")
    np.testing.assert_allclose(r.x["w"], [1.0, 2.0], atol=1e-8)
    np.testing.assert_allclose(r.x["b"], 3.0, atol=1e-8)
    assert set(r.jac) == {"w", "b"}
    r = minimize(rosen, np.full(2, -1.2), method="BFGS", options=dict(maxiter=3))
    assert int(r.nit) == 3 and int(r.status) == 1 and not bool(r.success)


def test_bad_arguments():
    with pytest.raises(ValueError, match="not recognized"):
        minimize(rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match="tuple"):
        minimize(nll, np.zeros(3), args=[1], method="BFGS")


def test_integer_and_list_x0_and_float32():
    r = minimize(lambda x: anp.sum((x - 1.5) ** 2), [0, 0], method="BFGS")
    assert r.x.dtype == np.float64
    np.testing.assert_allclose(r.x, [1.5, 1.5], atol=1e-8)
    target = np.array([1.0, 2.0], np.float32)
    r = ad.jit(lambda x0: minimize(lambda x: anp.sum((x - target) ** 2), x0,
                                   method="BFGS"))(np.zeros(2, np.float32))
    assert r.x.dtype == np.float32
    np.testing.assert_allclose(r.x, target, rtol=1e-6)
