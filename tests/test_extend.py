"""autograd's extension API (autodiff.extend): primitives whose derivatives come from the
user's rules, in every transform."""
import warnings

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.extend import primitive, defvjp, defjvp, defvjp_argnum, defjvp_argnum, def_linear


@primitive
def straight_through_round(x):
    return anp.round(x)


# the rule, not the body (whose derivative is 0), gives the gradient
defvjp(straight_through_round, lambda ans, x: lambda g: g)


@primitive
def power_sum(x, mode, p=2.0):
    return anp.sum(x ** p) if mode == "sum" else anp.max(x ** p)


defvjp(power_sum, lambda ans, x, mode, p=2.0: lambda g: g * p * x ** (p - 1))

X = np.array([1.0, 2.0, 3.0])


def test_vjp_rule_is_used_not_the_body():
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sum(straight_through_round(x) * x))(np.array([0.4, 1.6])),
                                  [0.4 + 0.0, 1.6 + 2.0])
    assert straight_through_round(np.array([0.4, 1.6])).tolist() == [0.0, 2.0]   # eager: the body


def test_static_arguments_and_kwargs_reach_body_and_rules():
    np.testing.assert_allclose(ad.grad(power_sum)(X, "sum", p=3.0), 3 * X ** 2)
    np.testing.assert_allclose(ad.jit(ad.grad(lambda x: power_sum(x, "sum", p=3.0)))(X), 3 * X ** 2)
    np.testing.assert_allclose(ad.vmap(ad.grad(lambda x: power_sum(x, "sum")))(np.stack([X, 2 * X])),
                               [2 * X, 4 * X])
    assert power_sum(X, "max") == 9.0


def test_missing_rule_warns_and_gives_zero():
    @primitive
    def f(a, b):
        return a * anp.sin(b)
    defvjp(f, lambda ans, a, b: lambda g: g * anp.sin(b))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ga, gb = ad.grad(f, argnums=(0, 1))(2.0, 0.5)
    assert ga == pytest.approx(np.sin(0.5)) and gb == 0.0
    assert any("no vjp rule for argument 1" in str(m.message) for m in w)


def test_jvp_rules_give_both_modes_and_higher_orders():
    @primitive
    def cube(x):
        return x ** 3
    defjvp(cube, lambda g, ans, x: 3 * x ** 2 * g)
    assert ad.jvp(cube, (2.0,), (1.0,))[1] == 12.0
    assert ad.grad(cube)(2.0) == 12.0
    assert ad.grad(ad.grad(cube))(2.0) == 12.0
    np.testing.assert_allclose(ad.jacrev(cube)(X), np.diag(3 * X ** 2))


def test_argnum_forms_and_def_linear():
    @primitive
    def mul(a, b):
        return a * b
    defvjp_argnum(mul, lambda i, ans, args, kw: (lambda g: g * args[1 - i]))
    assert ad.grad(mul, argnums=(0, 1))(3.0, 4.0) == (4.0, 3.0)

    @primitive
    def mul2(a, b):
        return a * b
    defjvp_argnum(mul2, lambda i, g, ans, args, kw: g * args[1 - i])
    assert ad.jvp(lambda a: mul2(a, 5.0), (2.0,), (1.0,))[1] == 5.0

    @primitive
    def matvec(A, x):
        return A @ x
    def_linear(matvec)
    A = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(ad.jacrev(lambda x: matvec(A, x))(np.ones(2)), A)
    np.testing.assert_allclose(ad.grad(lambda A: anp.sum(matvec(A, np.array([1.0, 2.0]))))(A),
                               [[1.0, 2.0], [1.0, 2.0]])
