"""Scientific workloads written the way JAX / autograd users write them.

Each test is a small, complete piece of numerical work (a fit, a filter, a solver, a
simulation) checked against an independent reference: a closed form, a hand-derived
gradient, central differences, or scipy. Together they exercise the transforms in
combination (grad of scan, vmap of grad, hessian of a Cholesky, ...), pytrees of
parameters, float32 end to end, and numpy idioms on traced values.
"""
import dataclasses
from collections import namedtuple

import numpy as np
import pytest
from scipy.optimize import minimize

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax


def central_diff(f, x, eps=1e-6):
    """Gradient of scalar f at float64 array x by central differences."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ----------------------------------------------------------------------------
# 1. logistic regression: scipy BFGS with jac=ad.grad vs hand-written Newton
# ----------------------------------------------------------------------------

def test_logistic_regression_scipy_bfgs_matches_newton():
    rng = np.random.default_rng(0)
    n, d, lam = 200, 3, 1e-2
    X = rng.standard_normal((n, d))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-X @ np.array([1.5, -2.0, 0.5])))).astype(float)

    def nll(w):
        z = X @ w
        return anp.sum(anp.logaddexp(0.0, z) - y * z) / n + 0.5 * lam * anp.sum(w ** 2)

    g = ad.grad(nll)(np.zeros(d))
    assert isinstance(g, np.ndarray) and g.dtype == np.float64
    assert isinstance(nll(np.zeros(d)), np.floating)
    res = minimize(nll, np.zeros(d), jac=ad.grad(nll), method="BFGS", options={"gtol": 1e-10})

    w = np.zeros(d)                                   # Newton with the textbook derivatives
    for _ in range(30):
        p = 1 / (1 + np.exp(-X @ w))
        grad = X.T @ (p - y) / n + lam * w
        H = (X.T * (p * (1 - p))) @ X / n + lam * np.eye(d)
        w = w - np.linalg.solve(H, grad)
    np.testing.assert_allclose(res.x, w, atol=1e-6)
    p = 1 / (1 + np.exp(-X @ w))
    H_ref = (X.T * (p * (1 - p))) @ X / n + lam * np.eye(d)
    np.testing.assert_allclose(ad.hessian(nll)(w), H_ref, atol=1e-12)


# ----------------------------------------------------------------------------
# 2. Gaussian-process marginal likelihood: cholesky / solve_triangular / slogdet
# ----------------------------------------------------------------------------

def _gp_data():
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (15, 1))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(15)


def _gp_nlml_chol(params, X, y):
    log_ell, log_sf, log_sn = params
    d2 = anp.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = anp.exp(2 * log_sf) * anp.exp(-0.5 * d2 / anp.exp(2 * log_ell)) + anp.exp(2 * log_sn) * anp.eye(len(X))
    L = anp.linalg.cholesky(K)
    alpha = anp.linalg.solve_triangular(L, y, lower=True)
    return 0.5 * anp.dot(alpha, alpha) + anp.sum(anp.log(anp.diag(L))) + 0.5 * len(X) * anp.log(2 * anp.pi)


def _gp_nlml_slogdet(params, X, y):
    ell, sf, sn = anp.exp(params[0]), anp.exp(params[1]), anp.exp(params[2])
    d2 = anp.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = sf ** 2 * anp.exp(-0.5 * d2 / ell ** 2) + sn ** 2 * anp.eye(len(X))
    _, logdet = anp.linalg.slogdet(K)
    return 0.5 * y @ anp.linalg.solve(K, y) + 0.5 * logdet + 0.5 * len(X) * np.log(2 * np.pi)


def test_gp_marginal_likelihood_gradient_and_hessian():
    X, y = _gp_data()
    p = np.array([0.1, 0.2, -1.5])
    f1 = lambda p: _gp_nlml_chol(p, X, y)
    f2 = lambda p: _gp_nlml_slogdet(p, X, y)
    np.testing.assert_allclose(f1(p), f2(p), rtol=1e-12)
    g1, g2 = ad.grad(f1)(p), ad.grad(f2)(p)
    np.testing.assert_allclose(g1, central_diff(f1, p), rtol=1e-6)
    np.testing.assert_allclose(g1, g2, rtol=1e-10)
    # the analytic GP gradient: 1/2 tr((K^-1 - a a^T) dK/dθ) for θ = log σ_n
    ell, sf, sn = np.exp(p)
    d2 = (X - X.T) ** 2
    K = sf ** 2 * np.exp(-0.5 * d2 / ell ** 2) + sn ** 2 * np.eye(len(X))
    Ki = np.linalg.inv(K)
    a = Ki @ y
    np.testing.assert_allclose(g1[2], 0.5 * np.trace((Ki - np.outer(a, a)) @ (2 * sn ** 2 * np.eye(len(X)))),
                               rtol=1e-9)
    H = ad.hessian(f1)(p)
    np.testing.assert_allclose(H, H.T, atol=1e-10)
    for i in range(3):
        np.testing.assert_allclose(H[i], central_diff(lambda q: ad.grad(f1)(q)[i], p), rtol=1e-5, atol=1e-6)
    res = minimize(f1, p, jac=ad.grad(f1), method="L-BFGS-B")
    assert res.success and res.fun < f1(p)
    assert np.linalg.norm(ad.grad(f2)(res.x)) < 1e-4


# ----------------------------------------------------------------------------
# 3. MLP classifier: nested-dict params, softmax cross entropy, ad.optim.adam;
#    gradient agrees with autograd's
# ----------------------------------------------------------------------------

def test_mlp_classifier_adam_and_autograd_agreement():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((120, 2))
    labels = (np.arctan2(X[:, 1], X[:, 0]) // (2 * np.pi / 3)).astype(int) % 3
    Y = np.eye(3)[labels]
    params = {"l1": {"W": 0.5 * rng.standard_normal((2, 16)), "b": np.zeros(16)},
              "l2": {"W": 0.5 * rng.standard_normal((16, 3)), "b": np.zeros(3)}}

    def forward(p, x):
        h = anp.tanh(x @ p["l1"]["W"] + p["l1"]["b"])
        return h @ p["l2"]["W"] + p["l2"]["b"]

    def loss(p, x, y):
        return -anp.mean(anp.sum(y * ad.nn.log_softmax(forward(p, x)), axis=-1))

    autograd = pytest.importorskip("autograd")
    import autograd.numpy as agnp
    from autograd.scipy.special import logsumexp as ag_lse

    def loss_ag(p, x, y):
        lg = agnp.tanh(x @ p["l1"]["W"] + p["l1"]["b"]) @ p["l2"]["W"] + p["l2"]["b"]
        return -agnp.mean(agnp.sum(y * (lg - ag_lse(lg, axis=-1, keepdims=True)), axis=-1))

    g, g_ag = ad.grad(loss)(params, X, Y), autograd.grad(loss_ag)(params, X, Y)
    for layer in g:
        for k in g[layer]:
            np.testing.assert_allclose(g[layer][k], g_ag[layer][k], atol=1e-14)
    # the integer-label form in ad.nn agrees with the one-hot form
    np.testing.assert_allclose(ad.nn.softmax_cross_entropy(forward(params, X), labels), loss(params, X, Y),
                               rtol=1e-12)

    opt = ad.optim.adam(0.05)
    state = opt.init(params)
    step = ad.value_and_grad(loss)
    l0 = loss(params, X, Y)
    for _ in range(150):
        l, g = step(params, X, Y)
        updates, state = opt.update(g, state, params)
        params = ad.optim.apply_updates(params, updates)
    assert isinstance(params["l1"]["W"], np.ndarray)
    assert l < 0.1 * l0
    assert np.mean(np.argmax(forward(params, X), -1) == labels) > 0.95


# ----------------------------------------------------------------------------
# 4. molecular physics: Lennard-Jones forces = -grad E, relaxation, normal modes
# ----------------------------------------------------------------------------

def _lj_energy(pos):
    n = pos.shape[0]
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = anp.sum(diff ** 2, axis=-1)[np.triu_indices(n, 1)]
    inv6 = (1.0 / r2) ** 3
    return anp.sum(4.0 * (inv6 ** 2 - inv6))


def test_lennard_jones_forces_relaxation_and_normal_modes():
    rng = np.random.default_rng(3)
    pos = np.array([[0, 0, 0], [1.12, 0, 0], [0.56, 0.97, 0], [0.56, 0.32, 0.91]]) + 0.01 * rng.standard_normal((4, 3))
    F = -ad.grad(_lj_energy)(pos)
    F_ref = np.zeros_like(pos)
    for i in range(4):
        for j in range(4):
            if i != j:
                r = pos[i] - pos[j]
                r2 = r @ r
                F_ref[i] += 24 * (2 / r2 ** 7 - 1 / r2 ** 4) * r
    np.testing.assert_allclose(F, F_ref, atol=1e-12)
    np.testing.assert_allclose(F.sum(0), 0, atol=1e-12)            # Newton's third law

    flat = lambda x: _lj_energy(x.reshape(4, 3))
    res = minimize(flat, pos.ravel(), jac=ad.grad(flat), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(res.fun, -6.0, atol=1e-9)           # the regular tetrahedron
    w, _ = anp.linalg.eigh(ad.hessian(flat)(res.x))
    np.testing.assert_allclose(w[:6], 0, atol=1e-5)                 # 3 translations + 3 rotations
    # six springs of stiffness k = V''(2^(1/6)) = 36 * 2^(2/3) on a regular tetrahedron (unit
    # masses): vibrational eigenvalues k, k, 2k, 2k, 2k, 4k
    k = 36 * 2 ** (2 / 3)
    np.testing.assert_allclose(w[6:] / k, [1, 1, 2, 2, 2, 4], rtol=1e-6)


def test_pendulum_hamiltonian_leapfrog_conserves_energy():
    def H(q, p, m=1.0, l=1.0, g=9.81):
        return p ** 2 / (2 * m * l ** 2) + m * g * l * (1 - anp.cos(q))

    dHdq, dHdp = ad.grad(H, argnums=0), ad.grad(H, argnums=1)
    assert dHdq(1.0, 0.0) == pytest.approx(9.81 * np.sin(1.0), rel=1e-14)
    q, p, dt = 1.0, 0.0, 1e-3
    E0 = H(q, p)
    for _ in range(500):
        p = p - 0.5 * dt * dHdq(q, p)
        q = q + dt * dHdp(q, p)
        p = p - 0.5 * dt * dHdq(q, p)
    assert isinstance(q, np.floating)
    assert abs(H(q, p) - E0) < 1e-4 * E0          # leapfrog: O(dt²) bounded energy error
    # the small-angle period check: q(t) ≈ cos(sqrt(g/l) t) for a small amplitude
    q, p = 1e-3, 0.0
    for _ in range(300):
        p = p - 0.5 * dt * dHdq(q, p)
        q = q + dt * dHdp(q, p)
        p = p - 0.5 * dt * dHdq(q, p)
    assert q == pytest.approx(1e-3 * np.cos(np.sqrt(9.81) * 0.3), rel=1e-5)


# ----------------------------------------------------------------------------
# 5. Newton's method with jacfwd, unrolled vs implicit differentiation (custom_vjp)
# ----------------------------------------------------------------------------

def _F(x, a):
    return anp.stack([x[0] ** 2 + x[1] ** 2 - a, x[0] - x[1] ** 3])


def _newton(a, x0, iters=20):
    x = x0
    for _ in range(iters):                  # a Python loop on concrete values, under grad too
        x = x - anp.linalg.solve(ad.jacfwd(_F)(x, a), _F(x, a))
    return x


def test_newton_jacfwd_and_implicit_differentiation():
    x0 = np.array([1.0, 0.5])
    x = _newton(2.0, x0)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-14)
    J, dFda = ad.jacfwd(_F)(x, 2.0), ad.jacfwd(_F, argnums=1)(x, 2.0)
    implicit = -np.linalg.solve(J, dFda)
    np.testing.assert_allclose(implicit, [0.375, 0.125], rtol=1e-12)       # by hand: x = y = 1
    np.testing.assert_allclose(ad.jacfwd(lambda a: _newton(a, x0))(2.0), implicit, rtol=1e-10)
    np.testing.assert_allclose(ad.jacrev(lambda a: _newton(a, x0))(2.0), implicit, rtol=1e-10)

    @ad.custom_vjp
    def root(a):
        return _newton(a, x0)

    def root_fwd(a):
        x = root(a)
        return x, (x, a)

    def root_bwd(res, g):
        x, a = res
        lam = anp.linalg.solve(ad.jacfwd(_F)(x, a).T, g)
        return (-anp.dot(lam, ad.jacfwd(_F, argnums=1)(x, a)),)

    root.defvjp(root_fwd, root_bwd)
    val = ad.grad(lambda a: anp.sum(root(a) ** 2))(2.0)
    assert val == pytest.approx(2 * x @ implicit, rel=1e-12)


# ----------------------------------------------------------------------------
# 6. per-example gradients: vmap(grad) and vmap(value_and_grad(has_aux))
# ----------------------------------------------------------------------------

def test_per_example_gradients_and_clipping():
    rng = np.random.default_rng(4)
    X, y, w = rng.standard_normal((8, 3)), rng.standard_normal(8), rng.standard_normal(3)

    def loss(w, xi, yi):
        r = anp.dot(xi, w) - yi
        return r ** 2, r

    g = ad.vmap(ad.grad(lambda *a: loss(*a)[0]), in_axes=(None, 0, 0))(w, X, y)
    ref = 2 * (X @ w - y)[:, None] * X
    np.testing.assert_allclose(g, ref, rtol=1e-13)
    (vals, res), g2 = ad.vmap(ad.value_and_grad(loss, has_aux=True), in_axes=(None, 0, 0))(w, X, y)
    np.testing.assert_allclose(res, X @ w - y, rtol=1e-13)
    np.testing.assert_allclose(vals, (X @ w - y) ** 2, rtol=1e-13)
    np.testing.assert_allclose(g2, ref, rtol=1e-13)

    # DP-SGD style: clip each example's gradient to norm <= 1, average; differentiate it too
    def clipped_mean_grad(w):
        g = ad.vmap(ad.grad(lambda *a: loss(*a)[0]), in_axes=(None, 0, 0))(w, X, y)
        n = anp.linalg.norm(g, axis=1, keepdims=True)
        return anp.mean(g / anp.maximum(n, 1.0), axis=0)

    n = np.linalg.norm(ref, axis=1, keepdims=True)
    np.testing.assert_allclose(clipped_mean_grad(w), np.mean(ref / np.maximum(n, 1), 0), rtol=1e-13)
    J = ad.jacrev(clipped_mean_grad)(w)
    np.testing.assert_allclose(J, ad.jacfwd(clipped_mean_grad)(w), atol=1e-12)
    for i in range(3):
        np.testing.assert_allclose(J[i], central_diff(lambda v: clipped_mean_grad(v)[i], w), atol=1e-6)


# ----------------------------------------------------------------------------
# 7. Kalman filter log likelihood with lax.scan vs a Python loop
# ----------------------------------------------------------------------------

def test_kalman_filter_scan_gradient_hessian():
    rng = np.random.default_rng(5)
    T = 25
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    C = np.array([[1.0, 0.0]])
    x, xs = np.array([0.0, 1.0]), []
    for _ in range(T):
        x = A @ x + 0.05 * rng.standard_normal(2)
        xs.append(x)
    ys = np.array(xs) @ C.T + 0.3 * rng.standard_normal((T, 1))

    def step(Q, R, carry, y):
        m, P, ll = carry
        m, P = A @ m, A @ P @ A.T + Q
        S = C @ P @ C.T + R
        K = P @ C.T @ anp.linalg.inv(S)
        r = y - C @ m
        ll = ll - 0.5 * (r @ anp.linalg.solve(S, r) + anp.linalg.slogdet(S)[1] + np.log(2 * np.pi))
        return (m + K @ r, (anp.eye(2) - K @ C) @ P, ll), m

    def ll_scan(p):
        Q, R = anp.exp(p[0]) * anp.eye(2), anp.exp(p[1]) * anp.eye(1)
        (_, _, ll), ms = lax.scan(lambda c, y: step(Q, R, c, y), (np.zeros(2), np.eye(2), 0.0), ys)
        return ll, ms

    def ll_loop(p):
        Q, R = anp.exp(p[0]) * anp.eye(2), anp.exp(p[1]) * anp.eye(1)
        carry = (np.zeros(2), np.eye(2), 0.0)
        for y in ys:
            carry, _ = step(Q, R, carry, y)
        return carry[2]

    # the same filter in plain numpy, for the finite-difference reference
    def ll_np(p):
        Q, R = np.exp(p[0]) * np.eye(2), np.exp(p[1]) * np.eye(1)
        m, P, ll = np.zeros(2), np.eye(2), 0.0
        for y in ys:
            m, P = A @ m, A @ P @ A.T + Q
            S = C @ P @ C.T + R
            K = P @ C.T @ np.linalg.inv(S)
            r = y - C @ m
            ll -= 0.5 * (r @ np.linalg.solve(S, r) + np.linalg.slogdet(S)[1] + np.log(2 * np.pi))
            m, P = m + K @ r, (np.eye(2) - K @ C) @ P
        return ll

    p = np.array([np.log(0.0025), np.log(0.09)])
    ll, ms = ll_scan(p)
    assert ms.shape == (T, 2)
    np.testing.assert_allclose(ll, ll_np(p), rtol=1e-13)
    g = ad.grad(lambda p: ll_scan(p)[0])(p)
    np.testing.assert_allclose(g, central_diff(ll_np, p), rtol=1e-6)
    np.testing.assert_allclose(g, ad.grad(ll_loop)(p), rtol=1e-12)
    np.testing.assert_allclose(ad.jacfwd(lambda p: ll_scan(p)[0])(p), g, rtol=1e-12)
    (_, ms2), g2 = ad.value_and_grad(ll_scan, has_aux=True)(p)
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    np.testing.assert_allclose(ms2, ms)
    np.testing.assert_allclose(ad.hessian(lambda p: ll_scan(p)[0])(p), ad.hessian(ll_loop)(p), rtol=1e-10)


# ----------------------------------------------------------------------------
# 8. neural ODE: RK4 in lax.fori_loop vs Python loop, params a dict
# ----------------------------------------------------------------------------

def test_neural_ode_rk4_fori_loop():
    rng = np.random.default_rng(6)
    th = {"W": 0.5 * rng.standard_normal((3, 3)), "b": 0.1 * rng.standard_normal(3)}
    y0, target = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    f = lambda y, th: anp.tanh(y @ th["W"] + th["b"])
    dt = 0.1

    def rk4_step(y, th):
        k1 = f(y, th)
        k2 = f(y + dt / 2 * k1, th)
        k3 = f(y + dt / 2 * k2, th)
        k4 = f(y + dt * k3, th)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def loss_fori(th):
        return anp.mean((lax.fori_loop(0, 10, lambda i, y: rk4_step(y, th), y0) - target) ** 2)

    def loss_py(th):
        y = y0
        for _ in range(10):
            y = rk4_step(y, th)
        return anp.mean((y - target) ** 2)

    assert loss_fori(th) == pytest.approx(loss_py(th), rel=1e-14)
    g, gp = ad.grad(loss_fori)(th), ad.grad(loss_py)(th)
    for k in th:
        np.testing.assert_allclose(g[k], gp[k], atol=1e-14)
    fd = central_diff(lambda b: loss_py({"W": th["W"], "b": b}), th["b"])
    np.testing.assert_allclose(g["b"], fd, rtol=1e-6, atol=1e-9)
    # linear ODE y' = a y: RK4 over [0, 1] approximates e^a, and d/da y(1) ≈ e^a
    lin = lambda a: lax.fori_loop(0, 100, lambda i, y: y + 0.01 / 6 * (
        a * y + 2 * a * (y + 0.005 * a * y) + 2 * a * (y + 0.005 * a * (y + 0.005 * a * y))
        + a * (y + 0.01 * a * (y + 0.005 * a * (y + 0.005 * a * y)))), 1.0)
    assert lin(0.7) == pytest.approx(np.exp(0.7), rel=1e-9)
    assert ad.grad(lin)(0.7) == pytest.approx(np.exp(0.7), rel=1e-8)


# ----------------------------------------------------------------------------
# 9. Gaussian mixture maximum likelihood with logsumexp; Sinkhorn transport
# ----------------------------------------------------------------------------

def test_gaussian_mixture_mle_logsumexp():
    from scipy.special import logsumexp
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(-2, 0.5, 100), rng.normal(1.5, 1.0, 150)])

    def nll(p, lse=anp.logsumexp, lsm=ad.nn.log_softmax, lib=anp):
        logits, mu, logs = p[0:2], p[2:4], p[4:6]
        lp = lsm(logits) - logs - 0.5 * np.log(2 * np.pi) - 0.5 * ((x[:, None] - mu) / lib.exp(logs)) ** 2
        return -lib.sum(lse(lp, axis=1))

    nll_np = lambda p: nll(p, logsumexp, lambda l: l - logsumexp(l), np)
    p0 = np.array([0.0, 0.0, -1.0, 1.0, 0.0, 0.0])
    assert nll(p0) == pytest.approx(nll_np(p0), rel=1e-13)
    np.testing.assert_allclose(ad.grad(nll)(p0), central_diff(nll_np, p0), rtol=1e-6)
    res = minimize(nll, p0, jac=ad.grad(nll), method="BFGS")
    assert res.success
    w = np.exp(res.x[:2] - logsumexp(res.x[:2]))
    # the EM fixed point: each mean is the responsibility-weighted data mean
    lp = np.log(w) - res.x[4:] - 0.5 * ((x[:, None] - res.x[2:4]) / np.exp(res.x[4:])) ** 2
    r = np.exp(lp - logsumexp(lp, axis=1, keepdims=True))
    np.testing.assert_allclose(res.x[2:4], (r * x[:, None]).sum(0) / r.sum(0), atol=1e-4)
    np.testing.assert_allclose(sorted(res.x[2:4]), [-2, 1.5], atol=0.25)
    # logsumexp edge cases: -inf entries get zero weight, large values do not overflow
    np.testing.assert_allclose(ad.grad(anp.logsumexp)(np.array([-np.inf, 0.0, 1.0])),
                               [0, 1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-14)
    np.testing.assert_allclose(ad.grad(anp.logsumexp)(np.array([1000.0, 1000.0])), [0.5, 0.5])


def test_sinkhorn_divergence_gradient():
    rng = np.random.default_rng(8)
    n, m, eps = 5, 6, 0.5
    xs, yt = rng.standard_normal((n, 2)), rng.standard_normal((m, 2))
    loga, logb = np.full(n, -np.log(n)), np.full(m, -np.log(m))

    def sinkhorn_cost(xs, iters=60):
        C = anp.sum((xs[:, None, :] - yt[None, :, :]) ** 2, -1)
        f, g = anp.zeros(n), anp.zeros(m)
        for _ in range(iters):
            f = -eps * anp.logsumexp((g[None, :] - C) / eps + logb[None, :], axis=1)
            g = -eps * anp.logsumexp((f[:, None] - C) / eps + loga[:, None], axis=0)
        P = anp.exp((f[:, None] + g[None, :] - C) / eps + loga[:, None] + logb[None, :])
        return anp.sum(P * C), P

    cost, P = sinkhorn_cost(xs)
    np.testing.assert_allclose(P.sum(0), np.exp(logb), atol=1e-12)   # column marginals exact
    np.testing.assert_allclose(P.sum(1), np.exp(loga), atol=1e-6)
    g = ad.grad(lambda x: sinkhorn_cost(x)[0])(xs)
    np.testing.assert_allclose(g, central_diff(lambda x: sinkhorn_cost(x)[0], xs, eps=1e-5), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------
# 10. Monte Carlo gradient estimators: reparameterization and score function
# ----------------------------------------------------------------------------

def test_monte_carlo_gradient_estimators():
    rng = np.random.default_rng(9)
    eps = rng.standard_normal(100_000)

    def reparam(theta):       # E[(mu + s eps)^2] = mu^2 + s^2
        z = theta[0] + anp.exp(theta[1]) * eps
        return anp.mean(z ** 2)

    th = np.array([0.5, np.log(0.8)])
    g = ad.grad(reparam)(th)
    # exact for this sample: d/dmu mean(z^2) = 2 mean(z), d/dlog s = 2 mean(z s eps)
    z = 0.5 + 0.8 * eps
    np.testing.assert_allclose(g, [2 * z.mean(), 2 * np.mean(z * 0.8 * eps)], rtol=1e-12)
    np.testing.assert_allclose(g, [1.0, 1.28], atol=0.03)             # the population value

    zs = 0.5 + eps
    score = ad.vmap(ad.grad(lambda mu, z: -0.5 * (z - mu) ** 2), in_axes=(None, 0))(0.5, zs)
    np.testing.assert_allclose(score, zs - 0.5, rtol=1e-14)
    assert np.mean(zs ** 2 * score) == pytest.approx(1.0, abs=0.05)   # d/dmu E[z^2] = 2 mu


# ----------------------------------------------------------------------------
# 11. pytrees of parameters: namedtuple, registered dataclass, None leaves
# ----------------------------------------------------------------------------

Linear = namedtuple("Linear", ["W", "b"])


@ad.tree_util.register_dataclass
@dataclasses.dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray


def test_pytree_params_namedtuple_dataclass_sgd():
    rng = np.random.default_rng(10)
    X = rng.standard_normal((30, 2))
    Y = X @ np.array([[1.0, -1.0, 0.5], [0.5, 2.0, 0.0]]) + np.array([0.1, 0.2, -0.3])

    def mse(p):
        return anp.mean((X @ p.W + p.b - Y) ** 2)

    for cls in (Linear, Affine):
        p = cls(np.zeros((2, 3)), np.zeros(3))
        g = ad.grad(mse)(p)
        assert type(g) is cls
        np.testing.assert_allclose(g.W, 2 * X.T @ (X @ p.W + p.b - Y) / Y.size, rtol=1e-13)
        opt = ad.optim.sgd(0.3, momentum=0.9)
        state = opt.init(p)
        for _ in range(200):
            u, state = opt.update(ad.grad(mse)(p), state, p)
            p = ad.optim.apply_updates(p, u)
        assert type(p) is cls and mse(p) < 1e-8
    g = ad.grad(lambda d: d["a"] ** 2 * d["c"][1])({"a": 2.0, "b": None, "c": (1.0, 3.0)})
    assert g["b"] is None and g["a"] == 12.0 and g["c"] == (0.0, 4.0)


# ----------------------------------------------------------------------------
# 12. float32 end to end: values, gradients, hessians, optimizer states stay float32
# ----------------------------------------------------------------------------

def test_float32_end_to_end():
    rng = np.random.default_rng(11)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
    p = {"W": f32(3, 4), "b": f32(4)}
    X, Y = f32(10, 3), f32(10, 4)

    def loss(p):
        h = anp.tanh(X @ p["W"] + p["b"])
        reg = 1e-3 * anp.sum(p["W"] ** 2) + anp.linalg.slogdet(p["W"][:, :3] @ p["W"][:, :3].T + anp.eye(3, dtype=np.float32))[1]
        return anp.mean((ad.nn.softmax(h) * np.pi - Y) ** 2) + reg + anp.logsumexp(p["b"])

    assert loss(p).dtype == np.float32
    val, g = ad.value_and_grad(loss)(p)
    assert val.dtype == np.float32 and all(v.dtype == np.float32 for v in g.values())
    p64 = {k: v.astype(np.float64) for k, v in p.items()}
    g64 = ad.grad(lambda q: loss(q))(p64)
    for k in p:
        np.testing.assert_allclose(g[k], g64[k], rtol=2e-4, atol=2e-5)
    assert ad.hessian(lambda b: loss({"W": p["W"], "b": b}))(p["b"]).dtype == np.float32
    assert ad.jacfwd(lambda b: anp.tanh(b) * 2.0)(p["b"]).dtype == np.float32
    assert ad.vmap(lambda x: anp.sum(x ** 2) / 2)(X).dtype == np.float32
    c, ys = lax.scan(lambda c, x: (c * 0.9 + x, c), np.float32(0), p["b"])
    assert c.dtype == np.float32 and ys.dtype == np.float32
    for opt in (ad.optim.adam(1e-3), ad.optim.sgd(1e-3, momentum=0.9)):
        state = opt.init(p)
        u, state = opt.update(g, state, p)
        assert all(v.dtype == np.float32 for v in ad.optim.apply_updates(p, u).values())


# ----------------------------------------------------------------------------
# 13. Python control flow under grad, higher-order derivatives
# ----------------------------------------------------------------------------

def test_python_control_flow_and_higher_order():
    def piecewise(x):
        if x < 0:
            return x ** 2
        elif x < 1:
            return anp.sin(x)
        s = 0.0
        for i in range(int(x * 3)):
            s = s + x ** i
        return s

    assert ad.grad(piecewise)(-1.0) == -2.0
    assert ad.grad(piecewise)(0.5) == pytest.approx(np.cos(0.5), rel=1e-15)
    assert ad.grad(piecewise)(1.5) == pytest.approx(sum(i * 1.5 ** (i - 1) for i in range(4)))

    def doubling(x):
        while x < 100:
            x = x * 2
        return x
    assert ad.grad(doubling)(3.0) == 64.0

    # d^n/dx^n e^x sin x = 2^(n/2) e^x sin(x + n pi/4), by grad of grad of ...
    d = lambda x: anp.sin(x) * anp.exp(x)
    for n in range(1, 6):
        d = ad.grad(d)
        assert d(0.7) == pytest.approx(2 ** (n / 2) * np.exp(0.7) * np.sin(0.7 + n * np.pi / 4), rel=1e-13)
    g = lambda x: anp.sum(anp.tanh(x) ** 3)
    x = np.array([0.1, 0.5])
    H = ad.hessian(g)(x)
    np.testing.assert_allclose(H, ad.jacrev(ad.jacrev(g))(x), atol=1e-15)
    np.testing.assert_allclose(H, ad.jacfwd(ad.jacfwd(g))(x), atol=1e-15)
    t = np.tanh(x)
    # d/dx tanh³ = 3 t² (1 - t²), so d²/dx² = 6 t (1 - t²)² - 6 t³ (1 - t²)
    np.testing.assert_allclose(np.diag(H), 6 * t * (1 - t ** 2) ** 2 - 6 * t ** 3 * (1 - t ** 2), rtol=1e-12)
    assert ad.jacfwd(ad.hessian(g))(x).shape == (2, 2, 2)
    v = np.array([0.3, -1.0])
    np.testing.assert_allclose(ad.hvp(g, x, v), H @ v, atol=1e-15)
    # grad through vmap through grad
    F = lambda w: anp.sum(ad.vmap(ad.grad(lambda w, xi: anp.sin(anp.dot(w, xi))), in_axes=(None, 0))(w, np.eye(3)) ** 2)
    np.testing.assert_allclose(ad.grad(F)(np.ones(3)), -2 * np.cos(1) * np.sin(1), rtol=1e-14)


# ----------------------------------------------------------------------------
# 14. autograd-style check_grads over numpy functions with broadcasting / axes
# ----------------------------------------------------------------------------

_R = np.random.default_rng(12)


def _pos(*s):
    return _R.uniform(0.5, 2.0, s)


@pytest.mark.parametrize("fun,args", [
    (lambda x, y: anp.arctan2(x, y) * anp.hypot(x, y), (_R.standard_normal((3, 1)), _pos(4))),
    (lambda x, y: x ** y, (_pos(2, 3), _R.standard_normal(3))),
    (lambda x: anp.median(x, axis=(0, 2), keepdims=True), (_R.standard_normal((3, 4, 5)),)),
    (lambda x: anp.quantile(x, [0.2, 0.9], axis=None, keepdims=True), (_R.standard_normal((3, 4)),)),
    (lambda x: anp.var(x, axis=(0, 2), ddof=1, keepdims=True), (_R.standard_normal((3, 4, 5)),)),
    (lambda x: anp.sinc(x), (np.array([0.0, 1e-3, 0.12, 0.7, -2.3]),)),
    (lambda x: anp.einsum("...ij,...j->...i", x, x[..., 0]), (_R.standard_normal((2, 3, 3)),)),
    (lambda x: x[::-2, None, ..., np.array([0, 2, 2])], (_R.standard_normal((5, 2, 3)),)),
    (lambda x: x[x[:, 0] > 0], (_R.standard_normal((6, 2)),)),
    (lambda x: anp.at(x)[np.array([0, 2, 0])].multiply(x[:3] + 2.0), (_R.standard_normal(4),)),
    (lambda x: anp.at(x)[1:, ::2].add(anp.ones((2, 2))), (_R.standard_normal((3, 4)),)),
    (lambda A, b: anp.linalg.solve(A @ anp.swapaxes(A, -1, -2) + anp.eye(3), b), (_R.standard_normal((2, 3, 3)), _R.standard_normal((2, 3, 1)))),
    (lambda x: anp.linalg.norm(x, ord="nuc"), (_R.standard_normal((4, 3)),)),
    (lambda x: anp.sort(x, axis=0)[-1] + anp.cumprod(x, axis=1)[:, -1], (_R.standard_normal((3, 3)),)),
])
def test_check_grads_autograd_style(fun, args):
    ad.check_grads(fun, modes=["fwd", "rev"], order=2)(*args)


def test_at_multiply_repeated_indices_applies_every_update():
    x = np.full(4, 2.0)
    v = np.array([3.0, 5.0, 7.0])
    idx = np.array([0, 2, 2])
    out = anp.at(x)[idx].multiply(v)
    np.testing.assert_allclose(out, [6.0, 2.0, 70.0, 2.0])                  # numpy's multiply.at
    np.testing.assert_allclose(anp.at(x)[np.array([2, 2])].max(np.array([7.0, 5.0])), [2, 2, 7, 2])
    gx, gv = ad.grad(lambda x, v: anp.sum(anp.at(x)[idx].multiply(v)), argnums=(0, 1))(x, v)
    np.testing.assert_allclose(gx, [3.0, 1.0, 35.0, 1.0])
    np.testing.assert_allclose(gv, [2.0, 14.0, 10.0])


def test_numpy_interop_on_traced_values():
    x = np.array([0.3, 0.7, 1.1])
    A = np.arange(6.0).reshape(2, 3)
    # numpy functions and ufuncs called on traced values dispatch to autodiff
    f = lambda x: np.sum(np.sin(x) * np.exp(x)) + np.linalg.norm(x) + np.dot(A, x).max()
    ref = lambda x: anp.sum(anp.sin(x) * anp.exp(x)) + anp.linalg.norm(x) + anp.max(anp.dot(A, x))
    np.testing.assert_allclose(ad.grad(f)(x), ad.grad(ref)(x), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(f)(x), central_diff(f, x), rtol=1e-7)
    # numpy arrays / numpy scalars / lists on either side of an operator with a tracer
    g = ad.grad(lambda x: anp.sum(A * x + A @ x @ A + np.float64(2) / x + [1.0, 2.0, 3.0] * x))(x)
    # the (3,)-shaped terms broadcast against the (2, 3) ones, so they count twice in the sum
    np.testing.assert_allclose(g, A.sum(0) + 2 * (A.T @ A.sum(1) - 2 / x ** 2 + [1, 2, 3]), rtol=1e-14)
    # 0-d, size-1 and empty inputs; results are numpy values
    assert ad.grad(lambda x: x ** 2)(np.array(3.0)) == 6.0
    assert np.shape(ad.grad(lambda x: x ** 2)(np.array(3.0))) == ()
    assert ad.grad(lambda x: anp.sum(x ** 2))(np.zeros(0)).shape == (0,)
    assert ad.grad(lambda x: anp.sum(x @ x.T))(np.zeros((0, 3))).shape == (0, 3)
    assert ad.vmap(lambda x: x * 2)(np.zeros((0, 3))).shape == (0, 3)
    assert type(anp.sum(np.ones(3))) is np.float64
    assert type(ad.vmap(anp.sin)(np.ones(3))) is np.ndarray
    assert ad.grad(ad.nn.relu)(0.0) == 0.0
    assert ad.grad(anp.hypot, argnums=(0, 1))(0.0, 0.0) == (0.0, 0.0)


# ----------------------------------------------------------------------------
# 15. jit versions of a few workloads (compiled once; compared with the eager run)
# ----------------------------------------------------------------------------

def test_jit_logistic_regression_gradient_descent():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((50, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) > 0).astype(float)

    def nll(w):
        z = X @ w
        return anp.mean(anp.logaddexp(0.0, z) - y * z) + 0.05 * anp.sum(w ** 2)

    @ad.jit
    def step(w, lr):
        return w - lr * ad.grad(nll)(w)

    w, w_eager = np.zeros(3), np.zeros(3)
    for _ in range(30):
        w = step(w, 1.0)
        w_eager = w_eager - 1.0 * ad.grad(nll)(w_eager)
    assert isinstance(w, np.ndarray)
    np.testing.assert_allclose(w, w_eager, rtol=1e-12)
    assert step.cache_info().misses == 1
    np.testing.assert_allclose(ad.grad(ad.jit(nll))(w), ad.grad(nll)(w), rtol=1e-12)


def test_jit_kalman_scan_matches_eager():
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    ys = np.sin(np.linspace(0, 3, 12))[:, None]

    def ll(p):
        def step(c, y):
            m, P, l = c
            m, P = A @ m, A @ P @ A.T + anp.exp(p[0]) * anp.eye(2)
            s = P[0, 0] + anp.exp(p[1])
            r = y[0] - m[0]
            k = P[:, 0] / s
            return (m + k * r, P - anp.outer(k, P[0]), l - 0.5 * (r ** 2 / s + anp.log(s))), r
        (_, _, l), rs = lax.scan(step, (np.zeros(2), np.eye(2), 0.0), ys)
        return l

    p = np.array([-3.0, -2.0])
    vg = ad.jit(ad.value_and_grad(ll))
    v, g = vg(p)
    v0, g0 = ad.value_and_grad(ll)(p)
    assert v == pytest.approx(v0, rel=1e-12)
    np.testing.assert_allclose(g, g0, rtol=1e-10)


# ----------------------------------------------------------------------------
# 16. the tape (PyTorch style): a loss that branches on intermediates (logaddexp,
#     where on a comparison of a computed Variable), trained with ad.optim.SGD
# ----------------------------------------------------------------------------

def test_tape_logistic_regression_matches_functional():
    rng = np.random.default_rng(14)
    X = rng.standard_normal((40, 3))
    y = (X @ np.array([2.0, -1.0, 0.5]) + 0.3 * rng.standard_normal(40) > 0).astype(float)

    def loss(w, b):
        z = X @ w + b
        hinge = anp.where(z * (2 * y - 1) < 1, 1 - z * (2 * y - 1), 0.0)    # branch on an intermediate
        return anp.mean(anp.logaddexp(0.0, z) - y * z) + 0.1 * anp.mean(hinge)

    w0, b0 = np.zeros(3), np.array(0.0)
    w, b = ad.Variable(w0.copy()), ad.Variable(b0.copy())
    l = loss(w, b)
    l.backward()
    gw, gb = ad.grad(loss, argnums=(0, 1))(w0, b0)
    np.testing.assert_allclose(w.grad, gw, rtol=1e-14)
    np.testing.assert_allclose(b.grad, gb, rtol=1e-14)

    opt = ad.optim.SGD([w, b], lr=0.5)
    wf, bf = w0.copy(), b0.copy()
    for _ in range(50):
        opt.zero_grad()
        loss(w, b).backward()
        opt.step()
        gw, gb = ad.grad(loss, argnums=(0, 1))(wf, bf)
        wf, bf = wf - 0.5 * gw, bf - 0.5 * gb
    np.testing.assert_allclose(w.numpy(), wf, rtol=1e-12)
    assert loss(w, b).item() < 0.5 * float(loss(w0, b0))


def test_jit_reversed_then_sliced_view():
    # composed index maps (rev of slice, slice of rev, strided) must read the right elements
    x = np.arange(5.0)
    np.testing.assert_array_equal(ad.jit(lambda x: x[::-1][1::2][::-1] + 0.0)(x), [1.0, 3.0])
    np.testing.assert_array_equal(ad.jit(lambda x: x[1:][::-1][:2] * 1.0)(x), [4.0, 3.0])
    np.testing.assert_array_equal(ad.jit(lambda x: x[::-1][:3])(x), [4.0, 3.0, 2.0])
    np.testing.assert_array_equal(ad.jit(lambda x: anp.flip(x)[1:3] * 2.0)(x), [6.0, 4.0])


def test_scipy_conventions_ported_code_relies_on():
    from scipy.linalg import solve_triangular as scipy_solve_triangular
    rng = np.random.default_rng(15)
    L = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal(4)
    # scipy's defaults: lower=False, trans=0/'N'; a Cholesky solve written for scipy/JAX
    for kw in ({}, {"trans": "N"}, {"trans": "T"}, {"trans": 1}):
        np.testing.assert_allclose(ad.jvp(lambda U, b: anp.linalg.solve_triangular(U, b, **kw), (L.T, b), (L.T, b))[0],
                                   scipy_solve_triangular(L.T, b, **kw), rtol=1e-12)
    chol_solve = lambda K, y: anp.linalg.solve_triangular(
        anp.linalg.cholesky(K).T, anp.linalg.solve_triangular(anp.linalg.cholesky(K), y, lower=True))
    K = L @ L.T
    np.testing.assert_allclose(ad.jvp(chol_solve, (K, b), (K, b))[0], np.linalg.solve(K, b), rtol=1e-10)
    # sinc: exact derivatives at and near 0 (sinc''(0) = -π²/3)
    assert ad.grad(ad.grad(anp.sinc))(0.0) == pytest.approx(-np.pi ** 2 / 3, rel=1e-14)
    # near 0 the closed form cancels catastrophically; the Maclaurin series
    # sinc''(x) = -π²/3 (1 - 3t²/10 + O(t⁴)), t = πx, is the reference
    x = 1e-3
    assert ad.grad(ad.grad(anp.sinc))(x) == pytest.approx(-np.pi ** 2 / 3 * (1 - 0.3 * (np.pi * x) ** 2), rel=1e-9)
