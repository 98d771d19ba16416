"""autograd's differential operators (``autodiff.differential_operators``): closed forms,
finite differences, and the same numbers under ``jit`` and ``vmap``."""
from collections import OrderedDict

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import differential_operators as D

X = np.array([0.3, -1.2, 2.0])
V = np.array([1.0, -0.5, 0.25])


def cubic(c, x):
    # f = c·Σx³ + x0·x1: ∇ = 3c·x² + (x1, x0, 0); H = diag(6c·x) + offdiag(0,1)
    return c * anp.sum(x ** 3) + x[0] * x[1]


def cubic_grad(c, x):
    return 3 * c * x ** 2 + np.array([x[1], x[0], 0.0])


def cubic_hess(c, x):
    H = np.diag(6 * c * x)
    H[0, 1] = H[1, 0] = 1.0
    return H


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def test_grad_and_value_and_grad_take_argnum_positionally():
    g = D.grad(cubic, 1)(2.0, X)
    np.testing.assert_allclose(g, cubic_grad(2.0, X), rtol=1e-12)
    np.testing.assert_allclose(g, fd_grad(lambda x: cubic(2.0, x), X), rtol=1e-7)
    v, g2 = D.value_and_grad(cubic, 1)(2.0, X)
    np.testing.assert_allclose(v, 2 * np.sum(X ** 3) + X[0] * X[1], rtol=1e-12)
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    dc, dx = D.grad(cubic, (0, 1))(2.0, X)               # tuple argnum: a tuple of gradients
    np.testing.assert_allclose(dc, np.sum(X ** 3), rtol=1e-12)
    np.testing.assert_allclose(dx, g, rtol=1e-12)
    with pytest.raises(ad.errors.ShapeError, match="scalar output"):   # autograd: TypeError
        D.value_and_grad(lambda x: x * 2)(X)


def test_elementwise_grad_is_the_diagonal_for_elementwise_functions():
    f = lambda x: anp.tanh(x) * x                           # d/dx = tanh + x(1 - tanh²)
    want = np.tanh(X) + X * (1 - np.tanh(X) ** 2)
    np.testing.assert_allclose(D.elementwise_grad(f)(X), want, rtol=1e-12)
    np.testing.assert_allclose(ad.jit(D.elementwise_grad(f))(X), want, rtol=1e-12)
    # a 2-D output of any shape: the ones-cotangent vjp = ∇Σf
    M = np.arange(6.0).reshape(2, 3) / 7
    np.testing.assert_allclose(D.elementwise_grad(anp.sin)(M), np.cos(M), rtol=1e-12)
    # second derivative by nesting: d²/dx² sin = -sin
    np.testing.assert_allclose(D.elementwise_grad(D.elementwise_grad(anp.sin))(X), -np.sin(X),
                               rtol=1e-12)
    # argnum selects the argument; the others are held fixed
    np.testing.assert_allclose(D.elementwise_grad(lambda a, x: a * x ** 2, 1)(3.0, X), 6 * X,
                               rtol=1e-12)


def test_deriv_is_forward_mode_with_ones():
    t = 0.7
    got = D.deriv(lambda t: anp.stack([t ** 3, anp.exp(2 * t)]))(t)
    np.testing.assert_allclose(got, [3 * t ** 2, 2 * np.exp(2 * t)], rtol=1e-12)


def test_make_vjp_returns_vjp_fn_first_and_a_bare_cotangent():
    A = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
    vjp_fn, y = D.make_vjp(lambda A, x: A @ anp.sin(x), argnum=1)(A, X)
    np.testing.assert_allclose(y, A @ np.sin(X), rtol=1e-12)
    ct = np.array([1.0, 2.0])
    np.testing.assert_allclose(vjp_fn(ct), np.cos(X) * (A.T @ ct), rtol=1e-12)
    np.testing.assert_allclose(vjp_fn(2 * ct), 2 * np.cos(X) * (A.T @ ct), rtol=1e-12)  # reusable
    ad_vjp = ad.vjp(lambda x: A @ anp.sin(x), X)[1](ct)
    assert isinstance(ad_vjp, tuple)                  # JAX's layout differs: a tuple
    np.testing.assert_allclose(vjp_fn(ct), ad_vjp[0], rtol=1e-12)


def test_make_jvp_returns_value_and_tangent():
    jvp = D.make_jvp(cubic, 1)(2.0, X)
    value, tangent = jvp(V)
    np.testing.assert_allclose(value, cubic(2.0, X), rtol=1e-12)
    np.testing.assert_allclose(tangent, cubic_grad(2.0, X) @ V, rtol=1e-12)


def test_hessian_tensor_product_against_the_closed_form_hessian():
    H = cubic_hess(2.0, X)
    htp = D.hessian_tensor_product(cubic, 1)
    np.testing.assert_allclose(htp(2.0, X, V), H @ V, rtol=1e-12)
    assert D.hessian_vector_product is D.hessian_tensor_product
    np.testing.assert_allclose(ad.jit(htp)(2.0, X, V), H @ V, rtol=1e-12)
    # a matrix argument: contracted over both axes, result shaped like the argument
    W = np.arange(4.0).reshape(2, 2) / 3
    T = np.array([[1.0, 0.0], [2.0, -1.0]])
    got = D.hessian_tensor_product(lambda w: anp.sum(w ** 4))(W, T)
    np.testing.assert_allclose(got, 12 * W ** 2 * T, rtol=1e-12)
    # vmapped over a batch of vectors: each row is H·v
    Vs = np.stack([V, 2 * V, np.ones(3)])
    got = ad.vmap(lambda v: htp(2.0, X, v))(Vs)
    np.testing.assert_allclose(got, Vs @ H.T, rtol=1e-12)


def test_make_hvp_reuses_one_linearization():
    hvp_fn, g = D.make_hvp(cubic, 1)(2.0, X)
    np.testing.assert_allclose(g, cubic_grad(2.0, X), rtol=1e-12)
    for v in (V, np.eye(3)[1]):
        np.testing.assert_allclose(hvp_fn(v), cubic_hess(2.0, X) @ v, rtol=1e-12)


def test_tensor_jacobian_product_and_hessian_and_jacobian():
    f = lambda x: anp.stack([x[0] * x[1], anp.sin(x[2]), x[0] ** 2])
    J = np.array([[X[1], X[0], 0], [0, 0, np.cos(X[2])], [2 * X[0], 0, 0]])
    u = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(D.tensor_jacobian_product(f)(X, u), u @ J, rtol=1e-12)
    assert D.vector_jacobian_product is D.tensor_jacobian_product
    np.testing.assert_allclose(D.jacobian(f)(X), J, rtol=1e-12)
    np.testing.assert_allclose(D.hessian(cubic, 1)(2.0, X), cubic_hess(2.0, X), rtol=1e-12)


def test_make_ggnvp_is_jt_hg_j_v():
    A = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
    f = lambda x: anp.tanh(A @ x)
    x = X / 4                                                # tanh well away from saturation
    # J = diag(1 - tanh²(Ax))·A; default g = ½Σy², H_g = I
    J = (1 - np.tanh(A @ x) ** 2)[:, None] * A
    np.testing.assert_allclose(D.make_ggnvp(f)(x)(V), J.T @ J @ V, rtol=1e-12)
    # a custom g(y) = Σ y⁴/4: H_g = diag(3y²)
    y = np.tanh(A @ x)
    got = D.make_ggnvp(f, lambda y: anp.sum(y ** 4) / 4)(x)(V)
    np.testing.assert_allclose(got, J.T @ np.diag(3 * y ** 2) @ J @ V, rtol=1e-12)


def test_grad_and_aux_returns_the_aux_unchanged():
    def f(x):
        return anp.sum(anp.exp(x)), {"mean": anp.mean(x)}
    g, aux = D.grad_and_aux(f)(X)
    np.testing.assert_allclose(g, np.exp(X), rtol=1e-12)
    np.testing.assert_allclose(aux["mean"], X.mean(), rtol=1e-12)
    g, aux = ad.jit(D.grad_and_aux(f))(X)
    np.testing.assert_allclose(g, np.exp(X), rtol=1e-12)
    with pytest.raises(TypeError, match="pair"):
        D.grad_and_aux(lambda x: anp.sum(x))(X)


def test_grad_named_and_multigrad_dict():
    def f(a, b, *rest, scale=2.0, **extra):
        return scale * a * b ** 2 + sum(r ** 3 for r in rest) + extra.get("k", 0.0) * a
    np.testing.assert_allclose(D.grad_named(f, "b")(1.5, 2.0), 2 * 2 * 1.5 * 2.0, rtol=1e-12)
    with pytest.raises(TypeError, match="no positional parameter 'zz'"):
        D.grad_named(f, "zz")
    g = D.multigrad_dict(f)(1.5, 2.0, 1.0, 3.0, k=4.0)
    assert isinstance(g, OrderedDict) and list(g) == ["a", "b", "rest", "scale", "extra"]
    np.testing.assert_allclose(g["a"], 2 * 2.0 ** 2 + 4.0, rtol=1e-12)
    np.testing.assert_allclose(g["b"], 2 * 2 * 1.5 * 2.0, rtol=1e-12)
    np.testing.assert_allclose(g["rest"], (3.0, 27.0), rtol=1e-12)      # 3r²
    np.testing.assert_allclose(g["scale"], 1.5 * 4.0, rtol=1e-12)       # a default, too
    np.testing.assert_allclose(g["extra"]["k"], 1.5, rtol=1e-12)


def test_checkpoint_gives_the_same_gradient():
    f = lambda x: anp.sum(anp.sin(anp.cos(x)) ** 2)
    np.testing.assert_allclose(D.grad(D.checkpoint(f))(X), D.grad(f)(X), rtol=1e-12)


def test_top_level_names_are_the_same_objects():
    for name in ("elementwise_grad", "grad_and_aux", "hessian_tensor_product", "make_vjp",
                 "make_jvp", "multigrad_dict", "hessian_vector_product", "make_hvp"):
        assert getattr(ad, name) is getattr(D, name)


def test_bad_argnum_is_a_clear_error():
    with pytest.raises(TypeError, match="argnum=3 but the function got 2"):
        D.make_vjp(cubic, 3)(2.0, X)
    with pytest.raises(TypeError, match="one int"):
        D.hessian_tensor_product(cubic, (0, 1))
