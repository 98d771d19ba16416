"""Gaussian-process regression: fit kernel hyperparameters by maximising the marginal
likelihood with exact gradients, then predict.

    python examples/gp_regression.py [--points 30] [--seed 0] [--figure PATH]

(The figure goes to ``examples/out/gp_regression.png``, ignored by git, unless ``--figure``
names another path.)

The negative log marginal likelihood of y ~ N(0, K(θ) + σ_n² I),

    nlml(θ) = ½ yᵀ K⁻¹ y + ½ log|K| + n/2 log 2π,

is written with a Cholesky factor (``anp.linalg.cholesky`` / ``solve_triangular``).
Its gradient comes from ``ad.grad``; the script checks it against central differences
and against the classical formula ½ tr((K⁻¹ - ααᵀ) ∂K/∂θ), hands it to
``scipy.optimize.minimize``, checks the Hessian at the optimum is positive definite,
and checks the posterior mean recovers the underlying function. The figure (matplotlib,
``pip install -e ".[examples]"``) shows the data, the posterior mean and its ±2σ band.
"""
import argparse
import pathlib

import numpy as np
from scipy.optimize import minimize

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def rbf_kernel(X1, X2, log_ell, log_sf):
    d2 = anp.sum((X1[:, None, :] - X2[None, :, :]) ** 2, axis=-1)
    return anp.exp(2 * log_sf) * anp.exp(-0.5 * d2 / anp.exp(2 * log_ell))


def nlml(theta, X, y):
    """Negative log marginal likelihood; theta = (log ℓ, log σ_f, log σ_n)."""
    log_ell, log_sf, log_sn = theta[0], theta[1], theta[2]
    n = len(y)
    K = rbf_kernel(X, X, log_ell, log_sf) + anp.exp(2 * log_sn) * anp.eye(n)
    L = anp.linalg.cholesky(K)
    alpha = anp.linalg.solve_triangular(L, y, lower=True)          # L⁻¹ y
    return 0.5 * anp.dot(alpha, alpha) + anp.sum(anp.log(anp.diag(L))) + 0.5 * n * np.log(2 * np.pi)


def predict(theta, X, y, Xs):
    log_ell, log_sf, log_sn = theta
    K = rbf_kernel(X, X, log_ell, log_sf) + np.exp(2 * log_sn) * np.eye(len(y))
    Ks = rbf_kernel(Xs, X, log_ell, log_sf)
    L = np.linalg.cholesky(K)
    a = np.linalg.solve(L.T, np.linalg.solve(L, y))
    v = np.linalg.solve(L, Ks.T)
    var = np.exp(2 * log_sf) - np.sum(v ** 2, axis=0)
    return Ks @ a, var


def plot(X, y, Xs, mu, var, f, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sd = np.sqrt(var)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=90)
    ax.fill_between(Xs[:, 0], mu - 2 * sd, mu + 2 * sd, color="C0", alpha=0.25,
                    label="posterior mean ± 2σ")
    ax.plot(Xs[:, 0], mu, "C0", label="posterior mean")
    ax.plot(Xs[:, 0], f(Xs), "k--", lw=1, label="true function")
    ax.plot(X[:, 0], y, "C3.", ms=8, label="observations")
    ax.set_xlabel("x")
    ax.set_title("GP regression, hyperparameters by ad.grad + L-BFGS")
    ax.legend(fontsize=8)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(points=30, seed=0, figure=None):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-4, 4, (points, 1))
    f = lambda x: np.sin(1.5 * x[:, 0]) + 0.3 * x[:, 0]
    y = f(X) + 0.1 * rng.standard_normal(points)

    obj = lambda th: nlml(th, X, y)
    grad = ad.grad(obj)
    theta0 = np.array([0.0, 0.0, np.log(0.5)])

    # gradient vs central differences and vs the classical trace formula
    g = grad(theta0)
    eps = 1e-6
    fd = np.array([(obj(theta0 + eps * e) - obj(theta0 - eps * e)) / (2 * eps) for e in np.eye(3)])
    print("grad at θ0      ", g)
    print("central diffs   ", fd)
    assert np.allclose(g, fd, rtol=1e-6, atol=1e-8)
    ell, sf, sn = np.exp(theta0)
    d2 = (X - X.T) ** 2
    Kf = sf ** 2 * np.exp(-0.5 * d2 / ell ** 2)
    Ki = np.linalg.inv(Kf + sn ** 2 * np.eye(len(y)))
    a = Ki @ y
    dK = [Kf * d2 / ell ** 2, 2 * Kf, 2 * sn ** 2 * np.eye(len(y))]        # ∂K/∂log θ
    g_ref = np.array([0.5 * np.trace((Ki - np.outer(a, a)) @ dk) for dk in dK])
    assert np.allclose(g, g_ref, rtol=1e-9), (g, g_ref)

    res = minimize(obj, theta0, jac=grad, method="L-BFGS-B")
    th = res.x
    print(f"optimum: ℓ = {np.exp(th[0]):.3f}, σ_f = {np.exp(th[1]):.3f}, σ_n = {np.exp(th[2]):.3f}, "
          f"nlml = {res.fun:.4f} ({res.nit} iterations)")
    assert res.success and np.linalg.norm(grad(th)) < 1e-4
    H = ad.hessian(obj)(th)
    w = np.linalg.eigvalsh(H)
    print("Hessian eigenvalues at the optimum", w)
    assert w.min() > 0
    assert 0.03 < np.exp(th[2]) < 0.3                     # the true noise level is 0.1

    Xs = np.linspace(-3.5, 3.5, 50)[:, None]
    mu, var = predict(th, X, y, Xs)
    err = np.max(np.abs(mu - f(Xs)))
    print(f"max |posterior mean - f| on [-3.5, 3.5]: {err:.3f}; max posterior sd {np.sqrt(var.max()):.3f}")
    assert err < 0.3
    if figure:
        Xp = np.linspace(-5, 5, 200)[:, None]
        plot(X, y, Xp, *predict(th, X, y, Xp), f, figure)
        print(f"wrote {figure}")
    print("OK")
    return th


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--figure", default=str(OUT / "gp_regression.png"))
    args = ap.parse_args()
    main(args.points, args.seed, args.figure)
