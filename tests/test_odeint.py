"""``autodiff.scipy.integrate.odeint``: the solution against scipy and closed forms, the
adjoint gradient against finite differences and against differentiating the solver's
own steps, and the memory claim of the adjoint method."""
import tracemalloc

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import autodiff as ad
import autodiff.numpy as anp
from autodiff.scipy import integrate
from autodiff.scipy.integrate import odeint

TOL = dict(rtol=1e-10, atol=1e-10)


def lotka_volterra(y, t, theta):
    prey, pred = y[0], y[1]
    return anp.stack([theta[0] * prey - theta[1] * prey * pred,
                      -theta[2] * pred + theta[3] * prey * pred])


THETA = np.array([1.5, 1.0, 3.0, 1.0])
Y0 = np.array([1.0, 1.0])
T = np.linspace(0.0, 3.0, 4)


def lv_loss(y0, t, theta):
    return anp.sum(odeint(lotka_volterra, y0, t, theta, **TOL) ** 2)


def test_solution_matches_solve_ivp_at_tight_tolerances():
    t = np.linspace(0.0, 10.0, 21)
    ref = solve_ivp(lambda t, y: np.asarray(lotka_volterra(y, t, THETA)), (0, 10), Y0,
                    method="DOP853", t_eval=t, rtol=1e-13, atol=1e-13).y.T
    np.testing.assert_allclose(odeint(lotka_volterra, Y0, t, THETA, **TOL), ref,
                               rtol=2e-8, atol=2e-8)
    # looser tolerances give a correspondingly looser (but still controlled) answer
    err = np.abs(odeint(lotka_volterra, Y0, t, THETA, rtol=1e-6, atol=1e-6) - ref).max()
    assert 1e-9 < err < 1e-3


def test_time_dependent_linear_system_closed_form():
    # y' = A y + sin(t) e1 with A a rotation generator: checks the t argument and dense output
    def f(y, t):
        return anp.stack([y[1] + anp.sin(t), -y[0]])
    t = np.array([0.0, 0.3, 0.31, 2.0, 5.0])
    ys = odeint(f, np.array([1.0, 0.0]), t, **TOL)
    # x'' + x = cos t, x(0)=1, x'(0)=0  ⇒  x = cos t + t sin t / 2, y = x' - sin t
    x = np.cos(t) + t * np.sin(t) / 2
    np.testing.assert_allclose(ys[:, 0], x, rtol=1e-8, atol=1e-9)


def test_pytree_state_scalar_state_and_float32():
    f = lambda y, t: {"x": y["v"], "v": -y["x"], "w": -y["w"]}
    out = odeint(f, {"x": 1.0, "v": 0.0, "w": np.ones((2, 1))}, np.linspace(0, np.pi, 3), **TOL)
    assert out["x"].shape == (3,) and out["w"].shape == (3, 2, 1)
    np.testing.assert_allclose(out["x"], [1.0, 0.0, -1.0], atol=1e-8)
    np.testing.assert_allclose(out["v"], [0.0, -1.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(out["w"][:, 1, 0], np.exp(-np.linspace(0, np.pi, 3)), rtol=1e-8)
    with pytest.raises(ValueError, match="structure"):
        odeint(lambda y, t: {"x": y["v"], "v": np.zeros(2)}, {"x": 1.0, "v": 0.0}, np.ones(2))
    y32 = odeint(lambda y, t, k: -k * y, np.float32(1.0), np.array([0.0, 1.0], np.float32),
                 np.float32(0.5), rtol=1e-5, atol=1e-5)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32[1], np.exp(-0.5), rtol=5e-5)     # a few ulp(f32) per step


def test_dense_output_quartic_interpolates_its_five_conditions():
    y0, y1, ym, f0, f1, dt = 0.3, -1.2, 0.7, 2.0, -0.5, 0.25
    c = np.asarray(integrate._fit_quartic(y0, y1, ym, f0, f1, dt))
    p, dp = np.poly1d(c), np.poly1d(c).deriv()
    np.testing.assert_allclose([p(0), p(0.5), p(1), dp(0), dp(1)], [y0, ym, y1, dt * f0, dt * f1],
                               atol=1e-14)


def test_adjoint_gradient_closed_form_of_decay():
    # y = y0 exp(-k t): ∂/∂k = -t y, ∂/∂y0 = exp(-k t), ∂y(t_i)/∂t_i = -k y(t_i)
    t = np.array([0.0, 0.5, 2.0])
    w = np.array([0.0, 1.0, 2.0])
    loss = lambda y0, t, k: anp.sum(w * odeint(lambda y, t, k: -k * y, y0, t, k, **TOL))
    g_y0, g_t, g_k = ad.grad(loss, argnums=(0, 1, 2))(1.5, t, 0.7)
    y = 1.5 * np.exp(-0.7 * t)
    np.testing.assert_allclose(g_y0, np.sum(w * np.exp(-0.7 * t)), rtol=1e-8)
    np.testing.assert_allclose(g_k, np.sum(w * -t * y), rtol=1e-8)
    # moving t_0 moves the whole solution: ∂/∂t_0 = -Σ_i w_i ∂y_i/∂t_i
    np.testing.assert_allclose(g_t, np.array([0.0, 0.0, 0.0]) + w * -0.7 * y
                               - np.array([np.sum(w * -0.7 * y), 0, 0]), rtol=1e-8, atol=1e-12)


def test_adjoint_gradient_matches_finite_differences():
    g_y0, g_t, g_theta = ad.grad(lv_loss, argnums=(0, 1, 2))(Y0, T, THETA)
    eps = 1e-5

    def fd(fun, x):
        x = np.asarray(x, float)
        return np.array([(fun(x + eps * e) - fun(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])
    np.testing.assert_allclose(g_theta, fd(lambda th: lv_loss(Y0, T, th), THETA), rtol=1e-6)
    np.testing.assert_allclose(g_y0, fd(lambda y: lv_loss(y, T, THETA), Y0), rtol=1e-6)
    np.testing.assert_allclose(g_t, fd(lambda t: lv_loss(Y0, t, THETA), T), rtol=1e-6, atol=1e-6)


def test_adjoint_gradient_matches_differentiating_the_solver_steps():
    def direct(y0, t, theta):
        # the same solver without the custom rule; a finite mxstep makes its loop
        # reverse-differentiable step by step (memory grows with the steps)
        ys = integrate._solve(lambda y, s: lotka_volterra(y, s, theta), y0, t, 1e-10, 1e-10,
                              4000, np.inf)
        return anp.sum(ys ** 2)
    adj = ad.grad(lv_loss, argnums=(0, 1, 2))(Y0, T, THETA)
    ref = ad.grad(direct, argnums=(0, 1, 2))(Y0, T, THETA)
    for a, r in zip(adj, ref):
        np.testing.assert_allclose(a, r, rtol=1e-6, atol=1e-6)
    # the two agree to the solver tolerance, not to rounding: they are different algorithms
    assert np.abs(adj[2] - ref[2]).max() > 1e-12


def test_closed_over_parameters_are_differentiated():
    explicit = ad.grad(lambda th: lv_loss(Y0, T, th))(THETA)
    closure = ad.grad(lambda th: anp.sum(
        odeint(lambda y, t: lotka_volterra(y, t, th), Y0, T, **TOL) ** 2))(THETA)
    np.testing.assert_allclose(closure, explicit, rtol=1e-12)


def test_forward_mode_and_vmap():
    v = np.array([1.0, 0.0, -1.0, 0.5])
    _, tangent = ad.jvp(lambda th: lv_loss(Y0, T, th), (THETA,), (v,))
    np.testing.assert_allclose(tangent, ad.grad(lambda th: lv_loss(Y0, T, th))(THETA) @ v,
                               rtol=1e-6)
    y0s = np.array([[1.0, 1.0], [0.5, 2.0]])
    batched = ad.vmap(lambda y0: odeint(lotka_volterra, y0, T, THETA, **TOL))(y0s)
    for b, y0 in zip(batched, y0s):
        np.testing.assert_allclose(b, odeint(lotka_volterra, y0, T, THETA, **TOL), rtol=1e-9)


_jit_value_and_grad = ad.jit(ad.value_and_grad(lambda y0, theta: lv_loss(y0, T, theta), argnums=1))


def test_jit_value_and_adjoint_gradient():
    value, grad = _jit_value_and_grad(Y0, THETA)
    np.testing.assert_allclose(value, lv_loss(Y0, T, THETA), rtol=1e-12)
    np.testing.assert_allclose(grad, ad.grad(lambda th: lv_loss(Y0, T, th))(THETA), rtol=1e-9)
    value2, _ = _jit_value_and_grad(Y0, THETA * 1.01)       # same kernel, new numbers
    np.testing.assert_allclose(value2, lv_loss(Y0, T, THETA * 1.01), rtol=1e-12)


def _peak_bytes(fun):
    tracemalloc.start()
    try:
        fun()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_adjoint_memory_does_not_grow_with_the_number_of_steps():
    # 10x the time span takes ~10x the solver steps; the adjoint's peak memory stays put
    # (benchmarks/odeint_adjoint.py: differentiating the steps grows linearly instead)
    tol = dict(rtol=1e-7, atol=1e-7)

    def loss(theta, span):
        return anp.sum(odeint(lotka_volterra, Y0, np.array([0.0, span]), theta, **tol))

    def steps(span):
        return len(solve_ivp(lambda t, y: np.asarray(lotka_volterra(y, t, THETA)), (0, span), Y0,
                             method="RK45", **tol).t)
    assert steps(15.0) > 8 * steps(1.5)
    ad.grad(loss)(THETA, 1.5)                              # warm caches
    short = _peak_bytes(lambda: ad.grad(loss)(THETA, 1.5))
    long = _peak_bytes(lambda: ad.grad(loss)(THETA, 15.0))
    assert long < 1.2 * short, (short, long)


def test_autograd_and_scipy_spelling_of_extra_arguments():
    f = lambda y, t, a, b: -a * y + b
    t = np.array([0.0, 1.0])
    ref = odeint(f, 1.0, t, 2.0, 0.5, **TOL)
    np.testing.assert_allclose(odeint(f, 1.0, t, args=(2.0, 0.5), **TOL), ref, rtol=1e-14)
    # y = b/a + (1 - b/a) exp(-a t)
    np.testing.assert_allclose(ref[1], 0.25 + 0.75 * np.exp(-2.0), rtol=1e-9)
    with pytest.raises(TypeError, match="full_output"):
        odeint(f, 1.0, t, args=(2.0, 0.5), full_output=True)


def test_second_derivatives_reverse_over_reverse_and_forward_over_reverse():
    # y(1) = 1.5 exp(-k): d²/dk² = 1.5 exp(-k); the adjoint's own gradient is an adjoint
    loss = lambda k: odeint(lambda y, t, k: -k * y, 1.5, np.array([0.0, 1.0]), k, **TOL)[-1]
    np.testing.assert_allclose(ad.grad(ad.grad(loss))(0.7), 1.5 * np.exp(-0.7), rtol=1e-8)
    np.testing.assert_allclose(ad.hessian(loss)(0.7), 1.5 * np.exp(-0.7), rtol=1e-8)


# ----------------------------------------------------------------------------
# issue 33: autograd's examples/ode_net.py, ported by changing the imports: scipy's `args`
# tuple passed positionally as `autodiff.builtins.tuple((params,))`

from autodiff.builtins import dict as ag_dict, list as ag_list, tuple as ag_tuple  # noqa: E402

_RS = np.random.RandomState(0)
D, H = 2, 4
NET = [(0.5 * _RS.randn(D, H), 0.5 * _RS.randn(H)), (0.5 * _RS.randn(H, D), 0.5 * _RS.randn(D))]
NET_T = np.linspace(0.0, 1.0, 5)
NET_Y0 = np.array([1.0, -0.5])
NET_TARGET = np.cos(NET_T)[:, None] * np.array([1.0, 0.5])


def nn_predict(inputs, t, params):
    for W, b in params:
        outputs = anp.dot(inputs, W) + b
        inputs = anp.tanh(outputs)
    return outputs


def nn_predict_dict(inputs, t, params):
    return nn_predict(inputs, t, [params["l0"], params["l1"]])


_NET_SPELLINGS = {
    "builtins_tuple": lambda p: odeint(nn_predict, NET_Y0, NET_T, ag_tuple((p,)), **TOL),
    "builtins_tuple_of_builtins_list": lambda p: odeint(
        nn_predict, NET_Y0, NET_T, ag_tuple((ag_list(ag_tuple(wb) for wb in p),)), **TOL),
    "builtins_tuple_of_builtins_dict": lambda p: odeint(
        nn_predict_dict, NET_Y0, NET_T, ag_tuple((ag_dict(l0=p[0], l1=p[1]),)), **TOL),
    "args_keyword_builtins_tuple": lambda p: odeint(
        nn_predict, NET_Y0, NET_T, args=ag_tuple((p,)), **TOL),
}


def _net_loss(solve):
    return lambda params: anp.sum((solve(params) - NET_TARGET) ** 2)


_PLAIN_NET_LOSS = _net_loss(lambda p: odeint(nn_predict, NET_Y0, NET_T, args=(p,), **TOL))


@pytest.mark.parametrize("spelling", sorted(_NET_SPELLINGS))
def test_neural_ode_gradient_with_autograd_builtins_args(spelling):
    loss = _net_loss(_NET_SPELLINGS[spelling])
    np.testing.assert_allclose(loss(NET), _PLAIN_NET_LOSS(NET), rtol=1e-12)
    grads = ad.grad(loss)(NET)
    ref = ad.grad(_PLAIN_NET_LOSS)(NET)
    assert len(grads) == 2
    for (gW, gb), (rW, rb), (W, b) in zip(grads, ref, NET):
        assert gW.shape == W.shape and gb.shape == b.shape
        np.testing.assert_allclose(gW, rW, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(gb, rb, rtol=1e-9, atol=1e-12)
    eps = 1e-5
    for layer, which, idx in [(0, 0, (1, 2)), (0, 1, (3,)), (1, 0, (2, 1)), (1, 1, (0,))]:
        def shifted(h):
            p = [[np.array(W), np.array(b)] for W, b in NET]
            p[layer][which][idx] += h
            return float(loss([ag_tuple(wb) for wb in p]))
        fd = (shifted(eps) - shifted(-eps)) / (2 * eps)
        np.testing.assert_allclose(grads[layer][which][idx], fd, rtol=1e-6, atol=1e-8)


def test_plain_tuple_positional_argument_stays_one_argument():
    # JAX's convention: a plain tuple among *args is one argument to func
    f = lambda y, t, ab: -ab[0] * y + ab[1]
    t = np.array([0.0, 1.0])
    np.testing.assert_allclose(odeint(f, 1.0, t, (2.0, 0.5), **TOL)[1],
                               0.25 + 0.75 * np.exp(-2.0), rtol=1e-9)
    g = ad.grad(lambda ab: odeint(f, 1.0, t, ab, **TOL)[1])((2.0, 0.5))
    assert type(g) is tuple and len(g) == 2


def test_builtins_tuple_is_a_pytree_and_any_tuple_is_an_instance():
    t = ag_tuple((np.ones(2), [3.0]))
    assert isinstance((1, 2), ag_tuple) and isinstance(t, tuple)   # autograd's TupleMeta
    assert ag_tuple((1, 2)) == (1, 2) and hash(ag_tuple((1, 2))) == hash((1, 2))
    leaves, tree = ad.tree_util.tree_flatten(t)
    assert len(leaves) == 2
    back = ad.tree_util.tree_unflatten(tree, leaves)
    assert type(back) is ag_tuple and isinstance(back, tuple)
    g = ad.grad(lambda p: anp.sum(p[0] * p[1][0]))(t)
    np.testing.assert_allclose(g[0], [3.0, 3.0])
