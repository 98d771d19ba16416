"""jacfwd, jacrev, jacobian, hessian, hvp: finite differences, closed forms, and vectorization.

Jacobians are vmap of jvp / vjp over a basis: one batched program, never a Python
loop over basis vectors (``test_jacrev_program_size_does_not_grow`` proves it).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.errors import DTypeError


def fd_jacobian(f, x, eps=1e-6):
    """Central differences: J[..., i] = (f(x + eps e_i) - f(x - eps e_i)) / 2 eps."""
    x = np.asarray(x, dtype=np.float64)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    out_shape = np.shape(f(x))
    return np.stack(cols, axis=-1).reshape(out_shape + x.shape)


# R^n -> R^m test functions: tall (m > n), wide (m < n), square
def tall(x):            # R^3 -> R^5
    return anp.stack([anp.sin(x[0]) * x[1], x[1] ** 2, anp.exp(x[2]) - x[0],
                      x[0] * x[1] * x[2], anp.tanh(x[0] + x[2])])


def wide(x):            # R^5 -> R^2
    return anp.stack([anp.sum(x ** 3) / 3.0, anp.dot(anp.cos(x), x)])


def square(x):          # R^4 -> R^4
    A = np.arange(16.0).reshape(4, 4) / 10.0 - 0.7
    return anp.tanh(A @ x) + x * anp.roll(x, 1)


def matrix_in(m):       # R^{2x3} -> R^{3}
    return anp.sum(anp.sin(m) * m[::-1], axis=0) + anp.log1p(m[0] ** 2)


FUNS = [(tall, (3,)), (wide, (5,)), (square, (4,)), (matrix_in, (2, 3))]


@pytest.mark.parametrize("f,shape", FUNS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_jacfwd_jacrev_agree_with_finite_differences(f, shape, rng):
    x = rng.uniform(-1, 1, shape)
    fd = fd_jacobian(f, x)
    jf, jr, ja = ad.jacfwd(f)(x), ad.jacrev(f)(x), ad.jacobian(f)(x)
    assert jf.shape == jr.shape == ja.shape == fd.shape
    np.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ja, jr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jf, fd, rtol=1e-6, atol=1e-8)
    assert type(jf) is np.ndarray and type(jr) is np.ndarray and type(ja) is np.ndarray


def test_seed_jacobian_computer_example():
    # the seed's JacobianComputer: f: R^3 -> R^2 from slicing and add
    def f(x):
        return x[0:2] + x[1:3]
    J = ad.jacobian(f)(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(J, [[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    assert J.shape == (2, 3)


def test_seed_hessian_computer_example():
    H = ad.hessian(lambda x: (x ** 2).sum())(np.array([1.0, -2.0, 3.0]))
    np.testing.assert_array_equal(H, 2 * np.eye(3))


def test_hessian_of_quadratic_form_is_symmetrized_matrix(rng):
    A = rng.normal(size=(5, 5))
    x = rng.normal(size=5)
    H = ad.hessian(lambda x: x @ A @ x)(x)
    np.testing.assert_allclose(H, A + A.T, rtol=1e-12, atol=1e-12)


def test_hessian_matches_finite_differences_of_gradient(rng):
    f = lambda x: anp.sum(anp.sin(x) ** 3) + anp.prod(anp.cos(x[:2]))
    x = rng.uniform(-1, 1, 4)
    H = ad.hessian(f)(x)
    np.testing.assert_allclose(H, fd_jacobian(ad.grad(f), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-12)


def test_hessian_closed_form_sum_sin_cubed(rng):
    # d²/dx² sin³x = 6 sin x cos² x - 3 sin³ x, on the diagonal only
    x = rng.uniform(-2, 2, 7)
    H = ad.hessian(lambda x: anp.sum(anp.sin(x) ** 3))(x)
    s, c = np.sin(x), np.cos(x)
    np.testing.assert_allclose(H, np.diag(6 * s * c ** 2 - 3 * s ** 3), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f", [lambda x: anp.sum(anp.sin(x) ** 3),
                               lambda x: anp.log(anp.sum(anp.exp(x))) * anp.dot(x, x)])
def test_hvp_equals_hessian_times_vector(f, rng):
    x, v = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(ad.hvp(f, x, v), ad.hessian(f)(x) @ v, rtol=1e-11, atol=1e-12)


def test_hvp_does_not_form_the_hessian():
    # the hvp program works on vectors: no n x n intermediate
    n = 50
    jaxpr = ad.make_jaxpr(lambda x, v: ad.hvp(lambda x: anp.sum(anp.sin(x) ** 3), x, v))(
        np.ones(n), np.ones(n))
    for e in jaxpr.eqns:
        for v in e.outvars:
            assert v.aval.size <= n, f"{e.primitive.name} makes {v.aval}"


def _n_eqns(f, x):
    return len(ad.make_jaxpr(f)(x).eqns)


def test_jacrev_program_size_does_not_grow_with_output_size():
    # one batched backward pass: same equation count for 3 outputs and 300 outputs
    def f_of(m):
        W = np.linspace(-1, 1, 4 * m).reshape(m, 4)
        return lambda x: anp.tanh(W @ anp.sin(x)) * 2.0
    x = np.linspace(0.1, 0.4, 4)
    small, large = _n_eqns(ad.jacrev(f_of(3)), x), _n_eqns(ad.jacrev(f_of(300)), x)
    assert small == large
    assert ad.jacrev(f_of(300))(x).shape == (300, 4)


def test_jacfwd_program_size_does_not_grow_with_input_size():
    f = lambda x: anp.stack([anp.sum(anp.sin(x)), anp.sum(x ** 2)])
    assert _n_eqns(ad.jacfwd(f), np.ones(3)) == _n_eqns(ad.jacfwd(f), np.ones(400))


def test_hessian_program_size_does_not_grow():
    f = lambda x: anp.sum(anp.sin(x) ** 3)
    assert _n_eqns(ad.hessian(f), np.ones(3)) == _n_eqns(ad.hessian(f), np.ones(200))


def test_jacobian_uses_a_batched_matmul_not_a_loop():
    W = np.arange(12.0).reshape(3, 4)
    jaxpr = ad.make_jaxpr(ad.jacrev(lambda x: anp.tanh(W @ x)))(np.ones(4))
    dots = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(dots) == 2       # the primal matmul and one batched transposed matmul


# ---------------------------------------------------------------------------
# pytrees, argnums, has_aux: JAX's nesting (output structure outside, input inside)
# ---------------------------------------------------------------------------

def _tree_f(p):
    return (anp.sin(p["a"]) * p["b"][0], {"z": anp.sum(p["a"] ** 2) * p["b"]})


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_pytree_jacobian_nesting_and_values(jac, rng):
    p = {"a": rng.normal(size=3), "b": rng.normal(size=2)}
    J = jac(_tree_f)(p)
    assert isinstance(J, tuple) and len(J) == 2
    assert set(J[0]) == {"a", "b"} and set(J[1]) == {"z"} and set(J[1]["z"]) == {"a", "b"}
    assert J[0]["a"].shape == (3, 3) and J[0]["b"].shape == (3, 2)
    assert J[1]["z"]["a"].shape == (2, 3) and J[1]["z"]["b"].shape == (2, 2)
    a, b = p["a"], p["b"]
    np.testing.assert_allclose(J[0]["a"], np.diag(np.cos(a) * b[0]), atol=1e-12)
    np.testing.assert_allclose(J[0]["b"], np.stack([np.sin(a), np.zeros(3)], 1), atol=1e-12)
    np.testing.assert_allclose(J[1]["z"]["a"], np.outer(b, 2 * a), atol=1e-12)
    np.testing.assert_allclose(J[1]["z"]["b"], np.sum(a ** 2) * np.eye(2), atol=1e-12)


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_argnums_tuple_and_has_aux(jac, rng):
    x, y = rng.normal(size=3), rng.normal(size=2)

    def f(x, y, scale):
        out = anp.sin(x) * anp.sum(y) * scale
        return out, {"norm": anp.sum(out ** 2)}
    (jx, jy), aux = jac(f, argnums=(0, 1), has_aux=True)(x, y, 2.0)
    np.testing.assert_allclose(jx, np.diag(np.cos(x) * y.sum() * 2.0), atol=1e-12)
    np.testing.assert_allclose(jy, np.outer(np.sin(x) * 2.0, np.ones(2)), atol=1e-12)
    np.testing.assert_allclose(aux["norm"], np.sum((np.sin(x) * y.sum() * 2.0) ** 2))
    assert isinstance(aux["norm"], np.float64)
    j1 = jac(lambda x, y: x * y, argnums=1)(x, 3.0)
    np.testing.assert_allclose(j1, x)
    j_single_tuple = jac(lambda x, y: x * y, argnums=(1,))(x, 3.0)
    assert isinstance(j_single_tuple, tuple) and len(j_single_tuple) == 1


def test_hessian_of_pytree_input_nests_blocks(rng):
    a, b = rng.normal(size=3), 1.7
    H = ad.hessian(lambda p: anp.sum(p["a"] ** 3) * p["b"])({"a": a, "b": b})
    np.testing.assert_allclose(H["a"]["a"], np.diag(6 * a * b), atol=1e-12)
    np.testing.assert_allclose(H["a"]["b"], 3 * a ** 2, atol=1e-12)
    np.testing.assert_allclose(H["b"]["a"], 3 * a ** 2, atol=1e-12)
    assert H["b"]["b"] == 0.0 and isinstance(H["b"]["b"], np.float64)


def test_hessian_has_aux_and_argnums(rng):
    x, y = rng.normal(size=3), rng.normal(size=3)
    H, aux = ad.hessian(lambda x, y: (anp.sum(x * x * y), x + y), argnums=1, has_aux=True)(x, y)
    np.testing.assert_array_equal(H, np.zeros((3, 3)))
    np.testing.assert_allclose(aux, x + y)
    Hs = ad.hessian(lambda x, y: anp.sum(x * x * y), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(Hs[0][0], np.diag(2 * y), atol=1e-12)
    np.testing.assert_allclose(Hs[0][1], np.diag(2 * x), atol=1e-12)
    np.testing.assert_allclose(Hs[1][0], np.diag(2 * x), atol=1e-12)


def test_hvp_on_pytrees(rng):
    p = {"a": rng.normal(size=3), "b": 0.5}
    v = {"a": rng.normal(size=3), "b": 2.0}
    f = lambda p: anp.sum(p["a"] ** 3) * p["b"]
    out = ad.hvp(f, p, v)
    H = ad.hessian(f)(p)
    np.testing.assert_allclose(out["a"], H["a"]["a"] @ v["a"] + H["a"]["b"] * v["b"])
    np.testing.assert_allclose(out["b"], H["b"]["a"] @ v["a"] + H["b"]["b"] * v["b"])


# ---------------------------------------------------------------------------
# shapes, dtypes, scalars, edge cases
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_scalar_matrix_and_float32(jac):
    d = jac(anp.sin)(0.5)
    assert isinstance(d, np.float64) and d == np.cos(0.5)
    m = np.arange(6.0).reshape(2, 3) / 7
    J = jac(lambda m: m @ m.T)(m)
    assert J.shape == (2, 2, 2, 3)
    np.testing.assert_allclose(J, fd_jacobian(lambda m: m @ m.T, m), rtol=1e-7, atol=1e-9)
    x32 = np.linspace(0, 1, 3, dtype=np.float32)
    J32 = jac(lambda x: anp.sin(x) * 2.0)(x32)
    assert J32.dtype == np.float32
    np.testing.assert_allclose(J32, np.diag(2 * np.cos(x32)), rtol=1e-6)


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_constant_and_empty_functions(jac):
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(jac(lambda x: np.ones(3))(x), np.zeros((3, 2)))
    np.testing.assert_array_equal(jac(lambda x: x * 2)(np.zeros(0)), np.zeros((0, 0)))
    J = jac(lambda x, y: x * y, argnums=0)(x, np.array([3.0, 4.0]))
    np.testing.assert_array_equal(J, np.diag([3.0, 4.0]))
    # no input leaves / no output leaves: empty structures, as in JAX
    assert jac(lambda t, x: anp.sin(x))((), x) == ()
    assert jac(lambda x: ())(x) == ()


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_int_and_bool_outputs_have_zero_float_blocks(jac):
    x = np.array([0.1, 0.5, 0.2])
    J = jac(lambda x: (anp.sin(x), anp.argmax(x), x > 0))(x)
    np.testing.assert_allclose(J[0], np.diag(np.cos(x)))
    for blk, shape in zip(J[1:], [(3,), (3, 3)]):
        assert blk.dtype == np.float64 and blk.shape == shape and not blk.any()


def test_jacobian_picks_the_cheaper_mode(monkeypatch):
    from autodiff import api
    calls = []
    for name in ("forward", "backward"):
        orig = getattr(api._Linearized, name)

        def spy(self, *a, _orig=orig, _name=name):
            calls.append(_name)
            return _orig(self, *a)
        monkeypatch.setattr(api._Linearized, name, spy)
    ad.jacobian(tall)(np.ones(3))          # 3 inputs, 5 outputs: forward
    assert calls == ["forward"]
    calls.clear()
    ad.jacobian(wide)(np.ones(5))          # 5 inputs, 2 outputs: reverse
    assert calls == ["backward"]


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian, ad.hessian])
def test_integer_input_is_a_dtype_error(jac):
    with pytest.raises(DTypeError, match="float"):
        jac(lambda x: x * 2.0)(np.arange(3))


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_python_control_flow_on_values(jac):
    def f(x):
        if x[0] > 0:            # decided on the concrete value, as under grad
            return x * 2.0
        return x ** 3
    np.testing.assert_array_equal(jac(f)(np.array([1.0, 2.0])), 2 * np.eye(2))
    np.testing.assert_array_equal(jac(f)(np.array([-1.0, 2.0])), np.diag([3.0, 12.0]))


# ---------------------------------------------------------------------------
# composition
# ---------------------------------------------------------------------------

def test_third_derivatives_by_nesting(rng):
    x = rng.normal(size=3)
    T = ad.jacfwd(ad.jacrev(ad.jacrev(lambda x: anp.sum(anp.sin(x) * x[0]))))(x)
    assert T.shape == (3, 3, 3)
    # compare with differentiating the closed-form Hessian numerically
    H = lambda x: ad.hessian(lambda x: anp.sum(anp.sin(x) * x[0]))(x)
    np.testing.assert_allclose(T, fd_jacobian(H, x), rtol=1e-6, atol=1e-8)


def test_vmap_of_jacobian_and_grad_of_jacobian(rng):
    xs = rng.normal(size=(4, 3))
    per = ad.vmap(ad.jacrev(tall))(xs)
    for i in range(4):
        np.testing.assert_allclose(per[i], ad.jacfwd(tall)(xs[i]), rtol=1e-12, atol=1e-12)
    # d/dx trace(J(x)) by reverse mode through jacfwd, against finite differences
    x4 = np.r_[xs[0], 0.2]
    g = ad.grad(lambda x: anp.trace(ad.jacfwd(square)(x)))(x4)
    fd = fd_jacobian(lambda x: np.trace(ad.jacfwd(square)(x)), x4)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


def test_jacobians_of_custom_derivative_functions(rng):
    @ad.custom_vjp
    def f(x):
        return anp.sin(x) * x

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * (anp.cos(x) * x + anp.sin(x)),))

    @ad.custom_jvp
    def h(x):
        return anp.exp(x) * 2.0

    @h.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return h(x), h(x) * t

    x = rng.normal(size=3)
    want_f = np.diag(np.cos(x) * x + np.sin(x))
    for jac in (ad.jacfwd, ad.jacrev, ad.jacobian):
        np.testing.assert_allclose(jac(f)(x), want_f, atol=1e-12)
        np.testing.assert_allclose(jac(h)(x), np.diag(2 * np.exp(x)), atol=1e-12)
    np.testing.assert_allclose(ad.hessian(lambda x: anp.sum(h(x)))(x), np.diag(2 * np.exp(x)))
    # second derivatives through the user's bwd: d²/dx² (x sin x) = 2 cos x - x sin x
    np.testing.assert_allclose(ad.hessian(lambda x: anp.sum(f(x)))(x),
                               np.diag(2 * np.cos(x) - x * np.sin(x)), atol=1e-12)


def _assert_same_tree(ours, theirs, path="J"):
    """Same nesting (tuples/lists/dicts with the same keys), same leaves."""
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs), path
        for k in theirs:
            _assert_same_tree(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, type(theirs)) and len(ours) == len(theirs), path
        for i, (o, t) in enumerate(zip(ours, theirs)):
            _assert_same_tree(o, t, f"{path}[{i}]")
    else:
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-11, atol=1e-12,
                                   err_msg=path)


@pytest.mark.slow          # importing jax takes seconds
def test_matches_jax_when_installed(rng):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    p = {"a": rng.normal(size=3), "b": rng.normal(size=2)}

    def f(np_):
        return lambda p: (np_.sin(p["a"]) * p["b"][0], {"z": np_.sum(p["a"] ** 2) * p["b"]})

    def g(np_):      # pytree in, scalar out
        return lambda p, s: np_.sum(np_.sin(p["a"]) ** 3) * np_.prod(np_.cos(p["b"])) * s
    # (jax.jit: one XLA compile per function instead of one per operation)
    for ours, theirs in [(ad.jacfwd, jax.jacfwd), (ad.jacrev, jax.jacrev)]:
        _assert_same_tree(ours(f(anp))(p), jax.jit(theirs(f(jnp)))(p))
        _assert_same_tree(ad.jacobian(g(anp), argnums=(0, 1))(p, 1.5),
                          jax.jit(theirs(g(jnp), argnums=(0, 1)))(p, 1.5))
    _assert_same_tree(ad.hessian(g(anp), argnums=(0, 1))(p, 1.5),
                      jax.jit(jax.hessian(g(jnp), argnums=(0, 1)))(p, 1.5))
    x = rng.normal(size=4)
    h = lambda np_: lambda x: np_.sum(np_.sin(x) ** 3) * np_.prod(np_.cos(x))
    _assert_same_tree(ad.hessian(h(anp))(x), jax.jit(jax.hessian(h(jnp)))(x))
