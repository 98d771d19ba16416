"""Derivatives: every differentiable function, closed forms, compositions, IR size.

* ``check_grads(order=2, modes=("fwd", "rev"))`` on every differentiable case of
  ``test_numpy.CASES`` (float64 and float32, broadcasting shapes included);
* n-th derivatives by nested ``grad`` against closed forms, n = 1..6;
* every pair of transforms composed;
* the size of the gradient IR stays linear in the size of the function;
* conventions at kinks (docs/design.md, convention 5) and error messages for bad inputs.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import DTypeError, ShapeError

from test_numpy import CASES, FLOATS, _closed_over

DIFF_CASES = [c for c in CASES if c.diff]


def _float_only(c, args):
    """Close over integer/bool arrays (indices, masks): only float arrays are differentiated."""
    f, arrays = _closed_over(c, args)
    fpos = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]

    def g(*xs):
        full = list(arrays)
        for i, x in zip(fpos, xs):
            full[i] = x
        return f(*full)
    return g, [arrays[i] for i in fpos]


@pytest.mark.parametrize("dt", FLOATS, ids=["f32", "f64"])
@pytest.mark.parametrize("c", DIFF_CASES, ids=lambda c: c.id)
def test_check_grads_numpy_functions(c, dt):
    args = c.make_args(np.random.default_rng(1), dt, grad=True)
    f, xs = _float_only(c, args)
    if not xs:
        pytest.skip("no float inputs")
    order = 2 if c.hess else 1
    out_dts = [a.dtype for a in ad.make_jaxpr(f)(*xs).out_avals]
    if dt == np.float64 and all(d == np.float64 for d in out_dts):
        ad.check_grads(f, xs, order=order, modes=("fwd", "rev"))
    else:
        # float32 somewhere: a small step keeps central differences off the kinks of
        # max/sort/interp; rounding error (~1e-7/eps) stays far below the tolerance
        ad.check_grads(f, xs, order=order, modes=("fwd", "rev"), eps=1e-3, atol=5e-2,
                       rtol=5e-2)


@settings(max_examples=10, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       name=st.sampled_from(["add", "subtract", "multiply", "divide", "power", "arctan2",
                             "maximum", "hypot"]),
       seed=st.integers(0, 2 ** 16))
def test_check_grads_broadcasting_property(shapes, name, seed):
    # the transposes of broadcasting sum the cotangent back to each operand's shape
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2, shapes.input_shapes[0])
    y = rng.uniform(0.5, 2, shapes.input_shapes[1]) + (0.25 if name == "maximum" else 0.0)
    ad.check_grads(getattr(anp, name), (x, y), order=2, modes=("fwd", "rev"))


def test_every_differentiable_case_keeps_float32():
    # the gradient of a float32 function is float32 (no silent upcast)
    for c in DIFF_CASES[::7]:
        args = c.make_args(np.random.default_rng(1), np.float32, grad=True)
        f, xs = _float_only(c, args)
        if not xs:
            continue
        out, vjp_fn = ad.vjp(f, *xs)
        cts = vjp_fn(ad.tree_util.tree_map(lambda o: np.ones_like(o), out))
        for ct, x in zip(cts, xs):
            assert np.asarray(ct).dtype == x.dtype, c.id


# ----------------------------------------------------------------------------
# higher derivatives by nested grad, against closed forms
# ----------------------------------------------------------------------------

def nth_grad(f, n):
    for _ in range(n):
        f = ad.grad(f)
    return f


def _tanh_derivs(x, nmax):
    # d/dx tanh = 1 - t²: each derivative is a polynomial in t, differentiated by the chain rule
    t = math.tanh(x)
    p = np.polynomial.Polynomial([0.0, 1.0])       # tanh itself
    dt = np.polynomial.Polynomial([1.0, 0.0, -1.0])
    out = []
    for _ in range(nmax):
        p = p.deriv() * dt
        out.append(p(t))
    return out


def _gauss_derivs(x, nmax):
    # d^n/dx^n exp(-x²) = (-1)^n H_n(x) exp(-x²) with Hermite polynomials H_n
    out = []
    for n in range(1, nmax + 1):
        c = np.zeros(n + 1)
        c[n] = 1
        out.append((-1) ** n * np.polynomial.hermite.hermval(x, c) * math.exp(-x * x))
    return out


def _log1px2_derivs(x, nmax):
    # log(1 + x²) = log(x + i) + log(x - i): the n-th derivative is
    # 2 Re[(-1)^(n-1) (n-1)! / (x + i)^n]
    z = complex(x, 1.0)
    return [2 * ((-1) ** (n - 1) * math.factorial(n - 1) / z ** n).real for n in range(1, nmax + 1)]


CLOSED_FORMS = [
    ("tanh", anp.tanh, _tanh_derivs),
    ("sin", anp.sin, lambda x, n: [math.sin(x + k * math.pi / 2) for k in range(1, n + 1)]),
    ("exp(-x^2)", lambda x: anp.exp(-x * x), _gauss_derivs),
    ("log(1+x^2)", lambda x: anp.log(1 + x ** 2), _log1px2_derivs),
]


@pytest.mark.parametrize("name,f,derivs", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
@pytest.mark.parametrize("x", [-1.3, 0.4, 2.1])
def test_nth_derivative_closed_form(name, f, derivs, x):
    want = derivs(x, 6)
    for n in range(1, 7):
        got = nth_grad(f, n)(x)
        assert isinstance(got, np.float64)
        assert abs(got - want[n - 1]) <= 1e-8 * abs(want[n - 1]), (n, got, want[n - 1])


def test_nth_derivative_forward_and_mixed_match():
    # forward-over-forward and reverse-over-forward give the same 4th derivative
    def d_fwd(f):
        return lambda x: ad.jvp(f, (x,), (1.0,))[1]
    x = 0.7
    want = _tanh_derivs(x, 4)[3]
    assert abs(d_fwd(d_fwd(d_fwd(d_fwd(anp.tanh))))(x) - want) < 1e-10
    assert abs(ad.grad(d_fwd(ad.grad(d_fwd(anp.tanh))))(x) - want) < 1e-10


# ----------------------------------------------------------------------------
# every composition of two transforms
# ----------------------------------------------------------------------------

def _f(x):
    return anp.sum(anp.sin(x) * x ** 2)


def _df(x):
    return np.cos(x) * x ** 2 + 2 * x * np.sin(x)


def _d2f(x):       # diagonal Hessian of _f
    return -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)


X = np.array([0.3, -1.1, 2.0])
V = np.array([1.0, 0.5, -2.0])


def test_grad_of_grad():
    g2 = ad.grad(lambda x: anp.sum(ad.grad(_f)(x) * V))(X)
    np.testing.assert_allclose(g2, _d2f(X) * V, rtol=1e-12)


def test_jvp_of_grad():
    g, t = ad.jvp(ad.grad(_f), (X,), (V,))
    np.testing.assert_allclose(g, _df(X), rtol=1e-12)
    np.testing.assert_allclose(t, _d2f(X) * V, rtol=1e-12)


def test_grad_of_jvp():
    g = ad.grad(lambda x: ad.jvp(_f, (x,), (V,))[1])(X)
    np.testing.assert_allclose(g, _d2f(X) * V, rtol=1e-12)


def test_vjp_of_jvp():
    out, vjp_fn = ad.vjp(lambda x: ad.jvp(lambda y: anp.sin(y) * y ** 2, (x,), (V,))[1], X)
    (ct,) = vjp_fn(np.ones(3))
    np.testing.assert_allclose(out, _df(X) * V, rtol=1e-12)
    np.testing.assert_allclose(ct, _d2f(X) * V, rtol=1e-12)


def test_linearize_of_grad():
    g, lin = ad.linearize(ad.grad(_f), X)
    np.testing.assert_allclose(g, _df(X), rtol=1e-12)
    np.testing.assert_allclose(lin(V), _d2f(X) * V, rtol=1e-12)
    np.testing.assert_allclose(lin(2 * V), 2 * _d2f(X) * V, rtol=1e-12)   # reusable, linear


def test_grad_of_linearize():
    def f(x):
        _, lin = ad.linearize(lambda y: anp.sin(y) * y ** 2, x)
        return anp.sum(lin(V))
    np.testing.assert_allclose(ad.grad(f)(X), _d2f(X) * V, rtol=1e-12)


def test_jvp_of_jvp_and_vjp_of_vjp():
    t2 = ad.jvp(lambda x: ad.jvp(_f, (x,), (V,))[1], (X,), (V,))[1]
    np.testing.assert_allclose(t2, np.sum(_d2f(X) * V * V), rtol=1e-12)

    def inner(x):
        _, vjp_fn = ad.vjp(lambda y: anp.sin(y) * y ** 2, x)
        return vjp_fn(V)[0]
    _, vjp_fn = ad.vjp(inner, X)
    np.testing.assert_allclose(vjp_fn(np.ones(3))[0], _d2f(X) * V, rtol=1e-12)


def test_hvp_and_hessian_agree():
    H = ad.hessian(_f)(X)
    np.testing.assert_allclose(H, np.diag(_d2f(X)), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ad.hvp(_f, X, V), _d2f(X) * V, rtol=1e-12)


def test_third_order_mixed_modes():
    # d³/dx³ sum(sin(x) x²) along V three times, by four different mode orders
    def d3(x):
        return (-np.cos(x) * x ** 2 - 6 * x * np.sin(x) + 6 * np.cos(x))
    want = np.sum(d3(X) * V ** 3)
    fwd = lambda f: (lambda x: ad.jvp(f, (x,), (V,))[1])
    rev = lambda f: (lambda x: anp.sum(ad.grad(f)(x) * V))
    for a in (fwd, rev):
        for b in (fwd, rev):
            for c in (fwd, rev):
                got = a(b(c(_f)))(X)
                np.testing.assert_allclose(got, want, rtol=1e-11)


def test_value_and_grad_has_aux():
    (v, aux), g = ad.value_and_grad(lambda x: (anp.sum(x ** 2), {"m": anp.mean(x)}),
                                    has_aux=True)(X)
    assert v == np.sum(X ** 2) and aux["m"] == np.mean(X)
    np.testing.assert_allclose(g, 2 * X)
    g, aux = ad.grad(lambda x: (anp.sum(x ** 2), x[0]), has_aux=True)(X)
    np.testing.assert_allclose(g, 2 * X)
    assert aux == X[0]


def test_grad_argnums_and_pytrees():
    params = {"w": np.array([1.0, 2.0]), "b": (np.float64(0.5), [np.array(3.0)])}

    def loss(p, x):
        return anp.sum(p["w"] * x) + p["b"][0] * p["b"][1][0]
    g = ad.grad(loss)(params, np.array([3.0, 4.0]))
    np.testing.assert_allclose(g["w"], [3.0, 4.0])
    assert g["b"][0] == 3.0 and g["b"][1][0] == 0.5
    gw, gx = ad.grad(loss, argnums=(0, 1))(params, np.array([3.0, 4.0]))
    np.testing.assert_allclose(gx, [1.0, 2.0])


def test_python_control_flow_under_grad():
    def f(x):
        y = x
        while anp.sum(y) < 10.0:
            y = y * 2.0
        if y[0] > 3:
            return anp.sum(anp.sin(y))
        return anp.sum(y)
    x = np.array([1.0, 1.5])
    # sum(x) = 2.5 doubles twice: y = 4x, and d/dx sum(sin(4x)) = 4 cos(4x)
    np.testing.assert_allclose(ad.grad(f)(x), 4 * np.cos(4 * x), rtol=1e-14)


# ----------------------------------------------------------------------------
# IR size: reverse mode stays linear in the size of the function
# ----------------------------------------------------------------------------

def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = anp.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return anp.mean((out - y) ** 2)


def _mlp_args():
    rng = np.random.default_rng(0)
    params = ((rng.normal(size=(4, 8)), rng.normal(size=8)),
              (rng.normal(size=(8, 2)), rng.normal(size=2)))
    return params, rng.normal(size=(5, 4)), rng.normal(size=(5, 2))


def test_grad_ir_is_linear_in_function_size():
    params, x, y = _mlp_args()
    n_loss = len(ad.make_jaxpr(_mlp_loss)(params, x, y).eqns)
    n_grad = len(ad.make_jaxpr(ad.grad(_mlp_loss))(params, x, y).eqns)
    flat, unravel = ad.tree_util.tree_flatten(params)
    v = ad.tree_util.tree_map(np.ones_like, params)
    hvp = lambda p: ad.jvp(lambda q: ad.grad(_mlp_loss)(q, x, y), (p,), (v,))[1]
    n_hvp = len(ad.make_jaxpr(hvp)(params).eqns)
    assert n_grad <= 4 * n_loss, (n_loss, n_grad)
    assert n_hvp <= 4 * n_grad, (n_grad, n_hvp)


def test_grad_ir_has_no_dead_or_zero_work():
    # symbolic zeros: no tangent work for non-differentiated inputs, nothing for constants
    closed = ad.make_jaxpr(ad.grad(lambda x, y: anp.sum(anp.sin(x) * y)))(X, V)
    names = [e.primitive.name for e in closed.eqns]
    assert names.count("sin") <= 1 and names.count("cos") == 1, names
    assert len(names) <= 4, str(closed)


# ----------------------------------------------------------------------------
# conventions at kinks (docs/design.md, convention 5)
# ----------------------------------------------------------------------------

def test_ties_share_gradient_equally():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    for f in [lambda x: anp.max(x), lambda x: anp.amax(x), lambda x: -anp.min(-x),
              lambda x: anp.sort(x)[-1] + anp.sort(x)[-2] - anp.sort(x)[-2]]:
        np.testing.assert_allclose(ad.grad(f)(x), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(anp.maximum(x, 3.0)))(x),
                               [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(anp.minimum(x, 1.0)))(x),
                               [0.5, 0, 0, 0])
    g = ad.grad(lambda a, b: anp.maximum(a, b), argnums=(0, 1))(2.0, 2.0)
    assert g == (0.5, 0.5)
    # sorting ties: both tied slots get the mean of their cotangents
    g = ad.grad(lambda x: anp.sort(x)[1] * 3.0)(np.array([5.0, 1.0, 1.0]))
    np.testing.assert_allclose(g, [0.0, 1.5, 1.5])
    # forward mode agrees
    t = ad.jvp(lambda x: anp.max(x), (x,), (np.array([0.0, 1.0, 3.0, 0.0]),))[1]
    assert t == 2.0


def test_derivatives_at_zero():
    assert ad.grad(anp.abs)(0.0) == 0.0
    assert ad.grad(lambda x: anp.sum(anp.abs(x)))(np.array([0.0, -2.0, 3.0])).tolist() == [0, -1, 1]
    assert ad.grad(lambda x: x ** 0)(2.0) == 0.0
    assert ad.grad(lambda x: x ** 0)(0.0) == 0.0
    assert ad.grad(lambda x: anp.power(x, 0.0))(0.0) == 0.0
    assert ad.grad(lambda x: x ** 2)(0.0) == 0.0
    assert ad.grad(lambda x: x ** 1.0)(0.0) == 1.0
    assert ad.grad(ad.grad(lambda x: x ** 2))(0.0) == 2.0
    # std/norm of constant or zero data: zero gradient, not nan
    np.testing.assert_array_equal(ad.grad(anp.std)(np.array([2.0])), [0.0])
    np.testing.assert_array_equal(ad.grad(anp.std)(np.array([2.0, 2.0])), [0.0, 0.0])
    np.testing.assert_array_equal(ad.grad(anp.linalg.norm)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(ad.grad(lambda x: anp.sqrt(x) * 0 + x)(1.0), 1.0)


def test_hypot_second_derivatives_where_equal():
    # H of r = sqrt(x² + y²) is (1/r)(I - u uᵀ), u = (x, y)/r;
    # at x = y = 1 that is [[1, -1], [-1, 1]] / (2√2)
    H = ad.hessian(lambda v: anp.hypot(v[0], v[1]))(np.array([1.0, 1.0]))
    np.testing.assert_allclose(H, np.array([[1, -1], [-1, 1]]) / (2 * np.sqrt(2)), rtol=1e-12)
    H = ad.hessian(lambda v: anp.hypot(v[0], v[1]))(np.array([-2.0, 2.0]))
    r = np.sqrt(8.0)
    u = np.array([-2.0, 2.0]) / r
    np.testing.assert_allclose(H, (np.eye(2) - np.outer(u, u)) / r, rtol=1e-12)


def test_size_one_output_is_a_scalar_for_grad():
    g = ad.grad(lambda x: x[:1] * 3.0)(np.array([2.0, 5.0]))
    np.testing.assert_array_equal(g, [3.0, 0.0])
    g = ad.grad(lambda x: anp.reshape(anp.sum(x), (1, 1)))(np.array([2.0, 5.0]))
    np.testing.assert_array_equal(g, [1.0, 1.0])
    with pytest.raises(ShapeError, match=r"scalar"):
        ad.grad(lambda x: x * 2)(np.ones(2))


def test_results_are_numpy_values():
    assert type(ad.grad(lambda x: x * x)(2.0)) is np.float64
    assert type(ad.grad(lambda x: x * x)(np.float32(2.0))) is np.float32
    out, t = ad.jvp(anp.sin, (np.array([1.0]),), (np.array([1.0]),))
    assert type(out) is np.ndarray and type(t) is np.ndarray
    out, vjp_fn = ad.vjp(lambda x: anp.sum(x), np.ones(2))
    assert type(out) is np.float64
    (ct,) = vjp_fn(1.0)
    assert type(ct) is np.ndarray
    y, lin = ad.linearize(anp.sin, 1.0)
    assert type(y) is np.float64 and type(lin(1.0)) is np.float64
    g = ad.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
    assert type(g) is tuple and all(type(v) is np.float64 for v in g)


def test_vjp_returns_one_cotangent_per_primal():
    out, vjp_fn = ad.vjp(lambda x, y: x * y, np.ones(2), 3.0)
    cts = vjp_fn(np.array([1.0, 2.0]))
    assert isinstance(cts, tuple) and len(cts) == 2
    np.testing.assert_array_equal(cts[0], [3.0, 6.0])
    assert cts[1] == 3.0
    with pytest.raises(ShapeError):
        vjp_fn(np.ones(3))


def test_stop_gradient():
    assert ad.grad(lambda x: x * ad.stop_gradient(x))(3.0) == 3.0
    assert ad.grad(lambda x: anp.stop_gradient(x) ** 2 + x)(3.0) == 1.0
    # d²/dx² x³·sg(x) = 6x·sg(x), the stopped factor stays a constant at every order
    assert ad.grad(ad.grad(lambda x: x ** 3 * ad.stop_gradient(x)))(2.0) == 24.0


def test_jvp_tangent_dtype_and_shape_checks():
    with pytest.raises(ShapeError):
        ad.jvp(anp.sin, (np.ones(3),), (np.ones(2),))
    # integer inputs get no tangent (their derivative is zero), outputs stay exact
    y, t = ad.jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0))
    assert y == 6.0 and t == 3.0


def test_grad_of_integer_input_is_a_clear_error():
    with pytest.raises(DTypeError, match=r"float") as e:
        ad.grad(lambda x: x * 2.0)(3)
    assert "test_grad.py" in str(e.value)
    assert "2.0" in str(e.value) or "astype" in str(e.value)   # says what to do
    with pytest.raises(DTypeError, match=r"argnums"):
        ad.grad(lambda x, n: x * n, argnums=(0, 1))(2.0, 3)
    # an integer argument outside argnums is fine
    assert ad.grad(lambda x, n: x * n)(2.0, 3) == 3.0
    with pytest.raises(DTypeError):
        ad.grad(lambda x: anp.sum(x))(np.array([1, 2]))
    with pytest.raises(DTypeError):
        ad.grad(lambda x: (x > 1.0))(2.0)
    with pytest.raises(DTypeError):
        ad.jacrev(lambda x: x)(np.array([1, 2]))


def test_nondifferentiable_outputs_have_zero_derivative():
    g = ad.grad(lambda x: anp.sum(anp.floor(x) + anp.round(x) + anp.sign(x)) + x[0])(X)
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0])
    g = ad.grad(lambda x: anp.sum(x[anp.argmax(x)] * 2.0))(X)
    np.testing.assert_array_equal(g, [0.0, 0.0, 2.0])


def test_no_perturbation_confusion():
    # the inner derivative must not pick up the outer variable's perturbation
    assert ad.grad(lambda x: x * ad.grad(lambda y: x + y)(1.0))(2.0) == 1.0
    assert ad.grad(lambda x: ad.grad(lambda y: x * y)(3.0))(2.0) == 1.0
    inner = lambda x: ad.jvp(lambda y: x * y, (3.0,), (1.0,))[1]
    assert ad.jvp(inner, (2.0,), (1.0,)) == (2.0, 1.0)
    assert ad.grad(lambda x: ad.jvp(lambda y: x * y ** 2, (3.0,), (1.0,))[1])(2.0) == 6.0

    def f(x):
        def g(y):
            return anp.sin(x * y) if y > 0 else y      # control flow on an inner value
        return ad.grad(g)(x)
    x = 0.7
    np.testing.assert_allclose(ad.grad(f)(x), np.cos(x * x) - 2 * x * x * np.sin(x * x),
                               rtol=1e-14)


def test_repeated_calls_reuse_transforms_but_not_values():
    # the transformed programs are cached by structure: constants stay inputs
    for c in [1.0, 2.0, -3.0]:
        g = ad.grad(lambda x: anp.sum(x * np.array([c, 2 * c])))(np.ones(2))
        np.testing.assert_array_equal(g, [c, 2 * c])
    # a Python float closed over is a literal, part of the structure
    for c in [1.0, 2.0]:
        assert ad.grad(lambda x: x * c)(5.0) == c
    # the same structure at different shapes and dtypes
    for x in [np.ones(2), np.ones(3), np.ones(3, np.float32), np.ones((2, 2))]:
        g = ad.grad(lambda x: anp.sum(anp.sin(x)))(x)
        np.testing.assert_allclose(g, np.cos(x), rtol=1e-6)
        assert g.dtype == x.dtype and g.shape == x.shape
    # a custom rule's closure is different on every call: never served from the cache
    for k in [2.0, 3.0]:
        @ad.custom_jvp
        def f(x):
            return x * k
        f.defjvp(lambda p, t, k=k: (f(p[0]), t[0] * k))
        assert ad.grad(f)(1.0) == k


def test_vjp_pytrees_multiple_outputs_and_aux():
    out, vjp_fn = ad.vjp(lambda x, y: {"a": x * y, "b": (anp.sin(x), y)}, np.ones(2), 2.0)
    gx, gy = vjp_fn({"a": np.ones(2), "b": (np.ones(2), 1.0)})
    np.testing.assert_allclose(gx, 2.0 + np.cos(1.0))
    assert gy == 3.0
    out, vjp_fn, aux = ad.vjp(lambda x: (x * 2, x ** 2), np.ones(2), has_aux=True)
    np.testing.assert_array_equal(aux, [1.0, 1.0])
    np.testing.assert_array_equal(vjp_fn(np.ones(2))[0], [2.0, 2.0])
    with pytest.raises(TypeError, match="structure"):
        vjp_fn((np.ones(2), np.ones(2)))
    y, lin = ad.linearize(lambda x, y: x * y, 2.0, 3.0)
    assert (lin(1.0, 0.0), lin(0.0, 1.0)) == (3.0, 2.0)


def test_constant_functions_have_zero_derivatives():
    assert ad.grad(lambda x: 1.0)(2.0) == 0.0
    assert ad.grad(lambda x: x * 0 + 1)(2.0) == 0.0
    assert ad.jvp(lambda x: 3.0, (1.0,), (1.0,)) == (3.0, 0.0)
    g = ad.grad(lambda x, y: anp.sum(y * 2.0), argnums=(0, 1))(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(g[0], np.zeros(2))


@pytest.mark.parametrize("c", [c for c in CASES if not c.concrete_only][::5], ids=lambda c: c.id)
def test_straight_line_programs_match_the_interpreter(c):
    # the grad path runs its cached programs as generated straight-line code
    from autodiff.api import _StraightLine
    from autodiff.backends.interpreter import run_closed
    args = c.make_args(np.random.default_rng(0), np.float64)
    f, arrays = _closed_over(c, args)
    closed = ad.make_jaxpr(f)(*arrays)
    with np.errstate(all="ignore"):
        want = run_closed(closed, arrays)
        got = _StraightLine(closed)(arrays)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(), (5,)])
def test_straight_line_operators_match_the_ufuncs_bitwise(dtype, shape):
    # straight-line code writes real-float arithmetic and comparisons as Python operators
    # (numpy scalars' own math, 10-20x cheaper than a ufunc call): same bits, same types,
    # special values included, against the interpreter's ufuncs
    from autodiff.backends.interpreter import run_closed, straight_line

    def f(x, y):
        outs = [x + y, x - y, x * y, x / y, -x, anp.abs(y), x * 0.5 + 1.0]
        return outs + [x > y, x < y, x >= y, x <= y, x == y, x != y]

    vals = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-300, 3.0], dtype)
    rng = np.random.default_rng(1)
    for _ in range(12):
        xs = rng.choice(vals, size=shape).astype(dtype)
        ys = rng.choice(vals, size=shape).astype(dtype)
        x, y = (xs[()], ys[()]) if shape == () else (xs, ys)
        closed = ad.make_jaxpr(f)(x, y)
        assert any(e.primitive.name == "mul" for e in closed.jaxpr.eqns)
        with np.errstate(all="ignore"):
            want = run_closed(closed, [x, y])
            got = straight_line(closed.jaxpr)(closed.consts, [x, y])
        for g, w in zip(got, want):
            assert type(g) is type(w), (type(g), type(w))
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_array_equal(np.atleast_1d(g).view(np.uint8),
                                          np.atleast_1d(w).view(np.uint8))


def test_repeated_grad_calls_are_identical():
    # first call interpreted, later ones straight-line: bit-identical results
    f = lambda x: anp.sum(anp.linalg.slogdet(x @ x.T + np.eye(3))[1] * anp.tanh(x[0]))
    x = np.random.default_rng(3).normal(size=(3, 3))
    first = ad.grad(f)(x)
    for _ in range(3):
        np.testing.assert_array_equal(ad.grad(f)(x), first)
    ad.config.update("debug_nans", True)
    try:
        np.testing.assert_array_equal(ad.grad(f)(x), first)
    finally:
        ad.config.update("debug_nans", False)


def test_check_grads_itself():
    # integer arguments (indices, exponents) are held fixed, not perturbed
    ad.check_grads(lambda x, i: x[i] * anp.sin(x[0]), (np.array([1.0, 2.0, 3.0]), 2), order=2)
    ad.check_grads(lambda x, n: anp.sum(x ** n), (np.array([1.0, 2.0]), 3), order=3)
    # pytrees in and out
    ad.check_grads(lambda p: {"s": anp.sin(p["a"]) * p["b"][0]},
                   ({"a": np.array([0.3, 0.4]), "b": [np.array(2.0)]},), order=2)
    # a wrong derivative is reported with the numbers
    @ad.custom_jvp
    def f(x):
        return anp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), anp.sin(p[0]) * t[0]))
    with pytest.raises(AssertionError, match=r"JVP .*\n.*expected"):
        ad.check_grads(f, (np.array([0.3, 1.0]),), order=1, modes=("fwd",))
    # a derivative right at first order but wrong at the second is caught at order 2
    @ad.custom_jvp
    def g(x):
        return x ** 3
    g.defjvp(lambda p, t: (g(p[0]), 3.0 * ad.stop_gradient(p[0]) ** 2 * t[0]))
    ad.check_grads(g, (np.array([0.5, 1.5]),), order=1)
    with pytest.raises(AssertionError):
        ad.check_grads(g, (np.array([0.5, 1.5]),), order=2, modes=("fwd",))


def test_keyword_arguments_pass_through_untouched():
    def f(x, scale=1.0, mode="square"):
        return anp.sum(x ** 2) * scale if mode == "square" else anp.sum(x)
    np.testing.assert_array_equal(ad.grad(f)(np.ones(2), scale=3.0), [6.0, 6.0])
    np.testing.assert_array_equal(ad.grad(f)(np.ones(2), mode="sum"), [1.0, 1.0])
    v, g = ad.value_and_grad(f)(np.ones(2), scale=3.0)
    assert v == 6.0
    closed = ad.make_jaxpr(f)(np.ones(2), scale=3.0)
    assert "3.0" in str(closed) and len(closed.in_avals) == 1
    np.testing.assert_array_equal(ad.hessian(f)(np.ones(2), scale=2.0), 4 * np.eye(2))
