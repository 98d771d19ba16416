"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``.

The two examples of the JAX documentation, as specifications: a numerically stable
``log1pexp`` (custom_jvp) and gradient clipping (custom_vjp), through every mode and
nested; then the mechanics (pytrees, nondiff_argnums, closures, errors).
"""
from functools import partial

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@ad.custom_jvp
def log1pexp(x):
    return anp.log1p(anp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # σ(x) written so that exp(x) = inf gives 1, not inf/inf
    return log1pexp(x), t * (1 - 1 / (1 + anp.exp(x)))


def naive_log1pexp(x):
    return anp.log1p(anp.exp(x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_log1pexp_is_stable_where_the_naive_rule_is_not():
    assert np.isnan(ad.grad(naive_log1pexp)(1000.0))
    g = ad.grad(log1pexp)(1000.0)
    assert g == 1.0 and type(g) is np.float64
    assert ad.grad(log1pexp)(0.0) == 0.5
    y, t = ad.jvp(log1pexp, (1000.0,), (2.0,))
    assert t == 2.0
    (ct,) = ad.vjp(log1pexp, np.array([1000.0, 0.0, -3.0]))[1](np.ones(3))
    np.testing.assert_allclose(ct, [1.0, 0.5, sigmoid(-3.0)], rtol=1e-14)


def test_log1pexp_values_and_derivatives_every_mode():
    x = np.array([-2.0, 0.3, 4.0])
    np.testing.assert_allclose(log1pexp(x), np.log1p(np.exp(x)))
    g = ad.grad(lambda x: anp.sum(log1pexp(x)))(x)
    np.testing.assert_allclose(g, sigmoid(x), rtol=1e-14)
    y, lin = ad.linearize(log1pexp, x)
    np.testing.assert_allclose(lin(np.ones(3)), sigmoid(x), rtol=1e-14)
    np.testing.assert_allclose(ad.jacfwd(log1pexp)(x), np.diag(sigmoid(x)), rtol=1e-14)
    np.testing.assert_allclose(ad.jacrev(log1pexp)(x), np.diag(sigmoid(x)), rtol=1e-14)


def test_log1pexp_nested():
    # the rule is traced with autodiff ops, so it is differentiated in turn:
    # d²/dx² = σ(1-σ), d³/dx³ = σ(1-σ)(1-2σ)
    for x in [-1.5, 0.0, 3.0]:
        s = sigmoid(x)
        np.testing.assert_allclose(ad.grad(ad.grad(log1pexp))(x), s * (1 - s), rtol=1e-12)
        np.testing.assert_allclose(ad.grad(ad.grad(ad.grad(log1pexp)))(x),
                                   s * (1 - s) * (1 - 2 * s), rtol=1e-10, atol=1e-14)
        d2_fwd = ad.jvp(ad.grad(log1pexp), (x,), (1.0,))[1]
        np.testing.assert_allclose(d2_fwd, s * (1 - s), rtol=1e-12)
    xs = np.array([0.5, -1.0])
    H = ad.hessian(lambda x: anp.sum(log1pexp(x)))(xs)
    np.testing.assert_allclose(H, np.diag(sigmoid(xs) * (1 - sigmoid(xs))), rtol=1e-12)
    ad.check_grads(log1pexp, (xs,), order=2, modes=("fwd", "rev"))


def test_custom_jvp_rule_is_used_not_the_function():
    # a deliberately different rule: derivatives follow the rule, values the function
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), 3.0 * t

    assert f(0.5) == np.sin(0.5)
    assert ad.grad(f)(0.5) == 3.0
    assert ad.jvp(f, (0.5,), (2.0,)) == (np.sin(0.5), 6.0)
    assert ad.grad(lambda x: f(x) * x)(0.5) == 3.0 * 0.5 + np.sin(0.5)
    # check_grads catches a wrong rule in both modes
    with pytest.raises(AssertionError):
        ad.check_grads(f, (np.array([0.5]),), order=1, modes=("fwd",))


# ----------------------------------------------------------------------------
# custom_vjp: gradient clipping
# ----------------------------------------------------------------------------

@partial(ad.custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
    return x


def clip_gradient_fwd(lo, hi, x):
    return x, None


def clip_gradient_bwd(lo, hi, res, g):
    return (anp.clip(g, lo, hi),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def test_clip_gradient():
    assert clip_gradient(-1.0, 1.0, 2.0) == 2.0
    assert ad.grad(lambda x: 5.0 * clip_gradient(-1.0, 1.0, x))(2.0) == 1.0
    assert ad.grad(lambda x: -5.0 * clip_gradient(-1.0, 1.0, x))(2.0) == -1.0
    assert ad.grad(lambda x: 0.5 * clip_gradient(-1.0, 1.0, x))(2.0) == 0.5
    g = ad.grad(lambda x: anp.sum(clip_gradient(-1.0, 1.0, x) * np.array([3.0, 0.5, -2.0])))(
        np.ones(3))
    np.testing.assert_array_equal(g, [1.0, 0.5, -1.0])
    out, vjp_fn = ad.vjp(lambda x: clip_gradient(-0.1, 0.2, x), np.ones(3))
    np.testing.assert_array_equal(vjp_fn(np.array([-1.0, 0.15, 1.0]))[0], [-0.1, 0.15, 0.2])


def test_clip_gradient_nested():
    # d/dx sin(cg(x)) = clip(cos x); its derivative is -sin x where |cos x| < 1/2, else 0
    f = lambda x: anp.sin(clip_gradient(-0.5, 0.5, x))
    for x in [0.3, 1.2, 2.0, 4.0]:
        g = ad.grad(f)(x)
        assert g == np.clip(np.cos(x), -0.5, 0.5)
        want = -np.sin(x) if abs(np.cos(x)) < 0.5 else 0.0
        np.testing.assert_allclose(ad.grad(ad.grad(f))(x), want, rtol=1e-14)
    # clipping applies to the gradient of an inner function of a larger computation
    # (the cotangent 10 reaching cg is clipped to 1, then flows on through x³)
    h = lambda x: anp.sum(10.0 * clip_gradient(-1.0, 1.0, x ** 3))
    np.testing.assert_array_equal(ad.grad(h)(np.array([0.5, 2.0])), [0.75, 12.0])
    # the inner gradient is clip(x): slope 1 inside the bounds, 0 where it is clipped
    hh = lambda x: ad.grad(lambda y: x * clip_gradient(-1.0, 1.0, y))(1.0)
    assert hh(0.5) == 0.5 and ad.grad(hh)(0.5) == 1.0
    assert hh(2.0) == 1.0 and ad.grad(hh)(2.0) == 0.0


def test_custom_vjp_forward_mode_is_the_functions_derivative():
    # forward mode has no user rule to apply: it differentiates the function itself
    assert ad.jvp(lambda x: 5.0 * clip_gradient(-1.0, 1.0, x), (2.0,), (1.0,)) == (10.0, 5.0)


@ad.custom_vjp
def sq_with_residual(x, y):
    return x * x * y


sq_with_residual.defvjp(
    lambda x, y: (x * x * y, (x, y)),
    lambda res, g: (2 * res[0] * res[1] * g, res[0] * res[0] * g))


def test_custom_vjp_correct_rule_passes_check_grads_and_nests():
    x, y = np.array([0.5, -1.5]), np.array([2.0, 3.0])
    ad.check_grads(sq_with_residual, (x, y), order=2, modes=("rev",))
    gx, gy = ad.grad(lambda a, b: anp.sum(sq_with_residual(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * x * y)
    np.testing.assert_allclose(gy, x * x)
    H = ad.hessian(lambda a: anp.sum(sq_with_residual(a, y)))(x)
    np.testing.assert_allclose(H, np.diag(2 * y))


def test_check_grads_catches_a_wrong_vjp_rule():
    @ad.custom_vjp
    def f(x):
        return anp.sin(x)
    f.defvjp(lambda x: (anp.sin(x), x), lambda x, g: (2.0 * g,))
    with pytest.raises(AssertionError, match="VJP"):
        ad.check_grads(f, (np.array([0.5, 1.0]),), order=1, modes=("rev",))


# ----------------------------------------------------------------------------
# mechanics
# ----------------------------------------------------------------------------

def test_custom_jvp_pytrees_and_nondiff_argnums():
    @partial(ad.custom_jvp, nondiff_argnums=(1,))
    def scale(p, k):
        return {"out": p["a"] * k + p["b"]}

    @scale.defjvp
    def scale_jvp(k, primals, tangents):
        (p,), (t,) = primals, tangents
        return scale(p, k), {"out": t["a"] * k + t["b"]}

    p = {"a": np.array([1.0, 2.0]), "b": np.array(0.5)}
    g = ad.grad(lambda p: anp.sum(scale(p, 3)["out"]))(p)
    np.testing.assert_array_equal(g["a"], [3.0, 3.0])
    assert g["b"] == 2.0


def test_custom_vjp_none_cotangent_and_closure():
    w = np.array([2.0, 3.0])

    @ad.custom_vjp
    def f(x, n):
        return x * w * n

    f.defvjp(lambda x, n: (x * w * n, n), lambda n, g: (g * w * n, None))
    g = ad.grad(lambda x: anp.sum(f(x, 2.0)))(np.ones(2))
    np.testing.assert_array_equal(g, [4.0, 6.0])
    assert ad.grad(lambda n: anp.sum(f(np.ones(2), n)))(2.0) == 0.0


def test_custom_rules_without_transforms_just_call_the_function():
    assert log1pexp(0.0) == np.log(2.0)
    assert type(log1pexp(np.array([0.0, 1.0]))) is np.ndarray


def test_custom_rule_errors():
    @ad.custom_jvp
    def f(x):
        return x

    with pytest.raises(TypeError, match="defjvp"):
        f(1.0)

    @ad.custom_vjp
    def g(x, y):
        return x * y
    with pytest.raises(TypeError, match="defvjp"):
        g(1.0, 2.0)
    g.defvjp(lambda x, y: (x * y, None), lambda res, ct: (ct,))     # one cotangent too few
    with pytest.raises(TypeError, match="cotangent"):
        ad.grad(g)(1.0, 2.0)

    @ad.custom_jvp
    def h(x):
        return (x, x)

    @h.defjvp
    def h_jvp(primals, tangents):
        return h(*primals), tangents[0]     # wrong structure: one tangent for two outputs
    with pytest.raises(TypeError, match="structure"):
        ad.jvp(h, (1.0,), (1.0,))


def test_custom_jvp_inside_custom_vjp_and_make_jaxpr():
    @ad.custom_vjp
    def outer(x):
        return log1pexp(x) * 2.0
    outer.defvjp(lambda x: (outer(x), x), lambda x, g: (g * 2.0 * ad.grad(log1pexp)(x),))
    np.testing.assert_allclose(ad.grad(outer)(1.5), 2 * sigmoid(1.5), rtol=1e-14)
    closed = ad.make_jaxpr(ad.grad(outer))(1.5)
    assert closed.out_avals[0].shape == ()
    ad.core.typecheck_jaxpr(closed.jaxpr)


def test_a_jvp_rule_closing_over_a_vmapped_value_says_to_pass_it():
    # the rule closes over y, a value of vmap's trace; grad of the vmap runs the rule after
    # that trace ended (the primal closing over it is fine: it is closure-converted)
    def f(x, y):
        @ad.custom_jvp
        def k(z):
            return anp.sin(z) * y
        k.defjvp(lambda p, t: (k(p[0]), anp.cos(p[0]) * y * t[0]))
        return k(x)
    xs, ys = np.arange(3.0), np.arange(3.0) + 1
    # inside the vmap the rule's closure is alive: the derivative is the rule's
    np.testing.assert_allclose(ad.vmap(ad.grad(f))(xs, ys), np.cos(xs) * ys, rtol=1e-12)
    with pytest.raises(ad.errors.TracerLeakError, match="pass that value to k as an argument"):
        ad.grad(lambda x: anp.sum(ad.vmap(f)(x, ys)))(xs)
