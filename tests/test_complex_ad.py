"""Complex numbers in the core (docs/complex.md): the derivative conventions, the four
complex-structure primitives, promotion, the dtype contract of the derivative operators,
Taylor mode, and the two places where autodiff deliberately differs from JAX.

Oracles: finite differences in both real directions (``_fd_grad``), closed forms, and
JAX's outputs written as numbers (computed once with jax 0.10.2, x64, on the inputs below).
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors
from autodiff import primitives as P

Z = np.array([0.3 + 0.4j, -1.2 + 0.7j, 0.5 - 1.1j])
X = np.array([0.4, -0.9, 1.3])


def _fd_grad(f, z, eps=1e-6):
    """conj(df/dx + i df/dy) of a real-valued ``f`` of complex ``z``, by central differences:
    the convention of ``ad.grad``."""
    g = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e.flat[k] = eps
        dx = (f(z + e) - f(z - e)) / (2 * eps)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        g.flat[k] = dx - 1j * dy
    return g


def _fd_jvp(f, z, t, eps=1e-6):
    return (f(z + eps * t) - f(z - eps * t)) / (2 * eps)


def _pair(u, v):
    """The pairing transposes are taken in: Re Σ u·v (no conjugation)."""
    return float(np.real(np.sum(np.asarray(u) * np.asarray(v))))


# ------------------------------------------------------------------------------------------
# grad's convention, against finite differences and JAX's written outputs
# ------------------------------------------------------------------------------------------

REAL_FUNS = {
    "abs2": lambda np_: lambda z: np_.sum(np_.abs(z) ** 2),
    "abs": lambda np_: lambda z: np_.sum(np_.abs(z)),
    "angle": lambda np_: lambda z: np_.sum(np_.angle(z) * np_.abs(z)),
    "parts": lambda np_: lambda z: np_.sum(np_.real(z) ** 2 * np_.imag(z)),
    "holo_real": lambda np_: lambda z: np_.sum(np_.real(np_.sin(z) * z ** 3)),
    "conj_mix": lambda np_: lambda z: np_.sum(np_.imag(np_.exp(np_.conj(z)) * z)),
    "log_sqrt": lambda np_: lambda z: np_.sum(np_.abs(np_.log(z) + np_.sqrt(z))),
    "pow": lambda np_: lambda z: np_.sum(np_.real(z ** (1.5 + 0.5j))),
    "trig": lambda np_: lambda z: np_.sum(np_.real(np_.arcsinh(z) + np_.arctanh(z)
                                                   + np_.arcsin(z) + np_.arccos(z)
                                                   + np_.arctan(z) + np_.tanh(z))),
    "mixed_real": lambda np_: lambda z: np_.sum(np_.abs(z * np_.array([1.0, 2.0, 3.0]) + 2.0)),
    "vdot": lambda np_: lambda z: np_.real(np_.vdot(z, z * np_.array([1.0, 2j, -1.0]))),
}

# jax.grad(f(jnp))(Z) for each function above (jax 0.10.2, jax_enable_x64)
JAX_GRADS = {
    "abs2": [(0.6-0.8j), (-2.4-1.4j), (1+2.2j)],
    "abs": [(0.6-0.8j), (-0.8637789008984333-0.5038710255240861j),
            (0.413802944301184+0.9103664774626048j)],
    "angle": [(-0.24362286919903264-1.3418361744012899j),
              (-2.761372908258203-0.4530971973631349j),
              (0.43690604531312627-1.4554158950300367j)],
    "parts": [(0.24-0.09j), (-1.68-1.44j), (-1.1-0.25j)],
    "holo_real": [(-0.4651185620498145+0.20726406585231866j),
                  (-3.827904141641219+7.924357867884343j),
                  (-8.970482559671131+0.3947319756327714j)],
    "conj_mix": [(-0.18603679492827135-0.6600476948698604j),
                 (0.20006315560694102-0.3709810406147636j),
                 (1.3813898656351242+1.2423609974008625j)],
    "vdot": [(0.6-0.8j), 0j, (-1-2.2j)],
}


@pytest.mark.parametrize("name", sorted(REAL_FUNS))
def test_grad_of_real_function_is_conj_of_the_real_gradient(name):
    f = REAL_FUNS[name](anp)
    g = ad.grad(f)(Z)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, _fd_grad(REAL_FUNS[name](np), Z), rtol=1e-7, atol=1e-8)
    if name in JAX_GRADS:
        np.testing.assert_allclose(g, JAX_GRADS[name], rtol=1e-12, atol=1e-14)


def test_grad_matches_jax_live():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    for name in ("abs2", "abs", "angle", "parts", "holo_real", "conj_mix", "log_sqrt", "pow",
                 "trig", "mixed_real", "vdot"):
        np.testing.assert_allclose(ad.grad(REAL_FUNS[name](anp))(Z),
                                   jax.grad(REAL_FUNS[name](jnp))(Z), rtol=1e-10, atol=1e-12,
                                   err_msg=name)


def test_gradient_descent_with_the_conjugate_step_converges():
    # the minimum of |z - c|² is z = c; the descent direction is conj(grad)
    c = np.array([1.0 - 2.0j, 0.5j])
    loss = lambda z: anp.sum(anp.abs(z - c) ** 2)
    z = np.zeros(2, complex)
    for _ in range(60):
        z = z - 0.25 * np.conj(ad.grad(loss)(z))
    np.testing.assert_allclose(z, c, atol=1e-12)


# ------------------------------------------------------------------------------------------
# holomorphic=True
# ------------------------------------------------------------------------------------------

def test_holomorphic_grad_and_jacobians():
    f = lambda z: anp.sum(anp.sin(z) * z ** 2)
    want = np.cos(Z) * Z ** 2 + 2 * Z * np.sin(Z)
    np.testing.assert_allclose(ad.grad(f, holomorphic=True)(Z), want, rtol=1e-14)
    v, g = ad.value_and_grad(f, holomorphic=True)(Z)
    np.testing.assert_allclose(v, np.sum(np.sin(Z) * Z ** 2), rtol=1e-14)
    h = lambda z: anp.exp(z) * z[::-1]
    J = np.diag(np.exp(Z) * Z[::-1]) + np.exp(Z)[:, None] * np.eye(3)[::-1]
    for jac in (ad.jacfwd, ad.jacrev, ad.jacobian):
        got = jac(h, holomorphic=True)(Z)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, J, rtol=1e-14, err_msg=jac.__name__)
    H = ad.hessian(lambda z: anp.sum(z ** 3), holomorphic=True)(Z)
    np.testing.assert_allclose(H, np.diag(6 * Z), rtol=1e-14)


def test_jacobians_of_mixed_real_and_complex():
    # real inputs, complex outputs: forward mode over the real basis
    k = lambda x: anp.exp(1j * x) * x
    want = np.diag(1j * np.exp(1j * X) * X + np.exp(1j * X))
    np.testing.assert_allclose(ad.jacfwd(k)(X), want, rtol=1e-14)
    np.testing.assert_allclose(ad.jacobian(k)(X), want, rtol=1e-14)
    # complex inputs, real outputs: reverse mode, each row grad's convention
    r = lambda z: anp.abs(z) ** 2 * anp.real(z)
    rows = ad.jacrev(r)(Z)
    for i in range(3):
        np.testing.assert_allclose(rows[i], _fd_grad(lambda z: (np.abs(z) ** 2 * z.real)[i], Z),
                                   rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ad.jacobian(r)(Z), rows, rtol=1e-14)


@pytest.mark.parametrize("call,match", [
    (lambda: ad.grad(lambda z: z * z)(Z[0]), "holomorphic=True"),
    (lambda: ad.jacrev(lambda z: z * z)(Z), "holomorphic=True"),
    (lambda: ad.jacfwd(anp.sin)(Z), "real inputs"),
    (lambda: ad.jacobian(lambda z: z * z)(Z), "holomorphic=True"),
    (lambda: ad.grad(lambda x: x * x, holomorphic=True)(1.0), "complex inputs"),
    (lambda: ad.jacfwd(lambda z: anp.abs(z), holomorphic=True)(Z), "complex outputs"),
    (lambda: ad.jvp(anp.sin, (X,), (X * 1j,)), "real"),
    (lambda: ad.vjp(anp.sin, X)[1](X * 1j), "real"),
])
def test_dtype_contract_errors_are_typed_and_name_the_line(call, match):
    with pytest.raises(errors.DTypeError, match=match) as e:
        call()
    assert "test_complex_ad.py" in str(e.value)


# ------------------------------------------------------------------------------------------
# the complex-structure primitives: values, transposes, jvp
# ------------------------------------------------------------------------------------------

def test_parts_primitives_values_and_dtypes():
    z32 = Z.astype(np.complex64)
    assert P.real(z32).dtype == P.imag(z32).dtype == np.float32
    np.testing.assert_array_equal(anp.real(Z), Z.real)
    np.testing.assert_array_equal(anp.imag(Z), Z.imag)
    np.testing.assert_array_equal(anp.conj(Z), Z.conj())
    np.testing.assert_array_equal(P.complex_(Z.real, Z.imag), Z)
    assert P.complex_(np.float32(1), np.float32(2)).dtype == np.complex64
    np.testing.assert_array_equal(P.imag(X), np.zeros(3))       # real input: zeros
    assert P.conj(X) is X and P.real(X) is X
    # traced, and the tracer's attributes
    out = ad.jit(lambda z: (z.real, z.imag, z.conj(), anp.angle(z), anp.abs(z)),
                 backend="interpret")(Z)
    for got, want in zip(out, (Z.real, Z.imag, Z.conj(), np.angle(Z), np.abs(Z))):
        np.testing.assert_allclose(got, want, rtol=1e-15)
    with pytest.raises(errors.DTypeError):
        ad.make_jaxpr(lambda a, b: P.complex_p.bind(a, b))(X, X.astype(np.float32))


@pytest.mark.parametrize("f,real_in", [
    (lambda z: P.real(z), False), (lambda z: P.imag(z), False), (lambda z: P.conj(z), False),
    (lambda xy: P.complex_(xy[0], xy[1]), True),
    (lambda x: P.convert(x, np.complex128), True), (lambda z: P.convert(z, np.float64), False),
])
def test_transpose_identity_of_real_linear_maps(f, real_in):
    # <ct, L t> = <L^T ct, t> with the pairing Re Σ u·v, for random t and ct
    rng = np.random.default_rng(3)
    if real_in:
        t = rng.normal(size=(2, 3)) if f.__code__.co_varnames[0] == "xy" else rng.normal(size=3)
    else:
        t = rng.normal(size=3) + 1j * rng.normal(size=3)
    y, pull = ad.vjp(f, t)
    ct = rng.normal(size=np.shape(y)) + (1j * rng.normal(size=np.shape(y))
                                         if np.iscomplexobj(y) else 0)
    (lt_ct,) = pull(ct)
    assert np.asarray(lt_ct).dtype == np.asarray(t).dtype
    np.testing.assert_allclose(_pair(ct, f(t)), _pair(lt_ct, t), rtol=1e-13)


@pytest.mark.parametrize("name,f", [
    ("abs", anp.abs), ("sign", anp.sign), ("angle", anp.angle), ("sqrt", anp.sqrt),
    ("log", anp.log), ("arccosh", anp.arccosh), ("exp_conj", lambda z: anp.exp(anp.conj(z))),
    ("logistic", lambda z: P.logistic_p.bind(z)), ("reciprocal", lambda z: 1.0 / z),
])
def test_jvp_in_both_real_directions_against_finite_differences(name, f):
    npf = {"abs": np.abs, "sign": np.sign, "angle": np.angle, "sqrt": np.sqrt, "log": np.log,
           "arccosh": np.arccosh, "exp_conj": lambda z: np.exp(np.conj(z)),
           "logistic": lambda z: 1 / (1 + np.exp(-z)), "reciprocal": lambda z: 1.0 / z}[name]
    for t in (np.ones(3) + 0j, 1j * np.ones(3)):
        got = ad.jvp(f, (Z,), (t,))[1]
        np.testing.assert_allclose(got, _fd_jvp(npf, Z, t), rtol=1e-7, atol=1e-8, err_msg=name)


def test_where_autodiff_differs_from_jax():
    # JAX (0.10.2) gives sign a zero derivative and arccosh the derivative 1/sqrt(z^2 - 1),
    # whose sign is wrong where Re z < 0; finite differences side with the rules here
    fs = lambda z: anp.sum(anp.real(anp.sign(z) * z ** 2))
    np.testing.assert_allclose(ad.grad(fs)(Z),
                               _fd_grad(lambda z: np.sum(np.real(np.sign(z) * z ** 2)), Z),
                               rtol=1e-7, atol=1e-8)
    fa = lambda z: anp.sum(anp.real(anp.arccosh(z)))
    got = ad.grad(fa)(Z)
    np.testing.assert_allclose(got, _fd_grad(lambda z: np.sum(np.real(np.arccosh(z))), Z),
                               rtol=1e-7, atol=1e-8)
    jax_style = np.conj(1 / np.sqrt(Z * Z - 1))
    assert np.abs(got[1] - jax_style[1]) > 0.5          # Re Z[1] < 0: the branches differ


# ------------------------------------------------------------------------------------------
# promotion, real-only functions, Taylor mode, vmap, tape
# ------------------------------------------------------------------------------------------

def test_promotion_follows_numpy():
    x32, c64 = np.ones(2, np.float32), np.ones(2, np.complex64)
    cases = [lambda a: a * c64, lambda a: a + 1j, lambda a: anp.exp(1j * a),
             lambda a: a * np.complex128(1j), lambda a: a.astype(complex)]
    for fn in cases:
        want = np.result_type(fn(x32.copy()) if False else np.asarray(fn(x32)))
        traced = ad.jit(fn, backend="interpret")(x32)
        assert traced.dtype == want, (fn, traced.dtype, want)
    assert np.asarray(anp.multiply(x32, 1j)).dtype == np.complex64
    assert ad.jit(lambda a, b: a * b, backend="interpret")(x32, 2j).dtype == np.complex64


@pytest.mark.parametrize("fn", [anp.floor, anp.ceil, anp.cbrt,
                                lambda z: anp.arctan2(z, z), lambda z: z % 2.0])
def test_real_only_functions_refuse_complex_with_a_typed_error(fn):
    with pytest.raises(errors.DTypeError):
        ad.jit(fn, backend="interpret")(Z)


def test_jet_through_complex_intermediates():
    # Taylor coefficients of f(z(t)) along a complex polynomial path, against nested jvps
    c = [np.ones(3) + 0.3j, 0.5j * np.ones(3), 0.2 + 0.1j * np.ones(3)]
    path = lambda t: Z + c[0] * t + c[1] * t ** 2 / 2 + c[2] * t ** 3 / 6
    for f in (lambda z: anp.abs(z) ** 2, lambda z: anp.sign(z) * anp.angle(z),
              lambda z: anp.exp(anp.conj(z)) * z + anp.real(z) * anp.imag(z)):
        _, series = ad.jet(f, (Z,), (tuple(c),))
        g = lambda t: f(path(t))
        d1 = lambda t: ad.jvp(g, (t,), (1.0,))[1]
        d2 = lambda t: ad.jvp(d1, (t,), (1.0,))[1]
        d3 = lambda t: ad.jvp(d2, (t,), (1.0,))[1]
        for got, want in zip(series, (d1(0.0), d2(0.0), d3(0.0))):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_vmap_and_second_order():
    zs = np.stack([Z, 2 * Z])
    f = lambda z: anp.sum(anp.abs(anp.sin(z)) ** 2)
    per = ad.vmap(ad.grad(f))(zs)
    for k in range(2):
        np.testing.assert_allclose(per[k], ad.grad(f)(zs[k]), rtol=1e-14)
    # a Hessian-vector product of a real function of the parts, against finite differences
    u = lambda z: anp.sum(anp.real(z) ** 2 * anp.imag(z) + anp.abs(z) ** 4)
    v = np.array([1.0, -0.5j, 0.25 + 0.5j])
    hv = ad.jvp(ad.grad(u), (Z,), (v,))[1]
    fd = _fd_jvp(lambda z: _fd_grad(lambda w: np.sum(w.real ** 2 * w.imag + np.abs(w) ** 4),
                                    z, eps=1e-5), Z, v, eps=1e-4)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6)


def test_reciprocal_follows_numpy_special_values_and_has_the_right_derivative():
    # numpy's complex reciprocal is Smith's 1/z, whose special values differ from 1/z:
    # reciprocal(0j) is nan+nanj (1/0j is inf+nanj), reciprocal(inf) is 0-0j
    z = np.array([0j, 1 + 1j, 2j, np.inf + 0j, -3 + 0.5j, 0.2 - 4j, 1e300 + 1e300j, -0.0 + 0j,
                  -np.inf - 0j, 3 - 0j])
    with np.errstate(all="ignore"):
        want = np.reciprocal(z)
        for f in (anp.reciprocal, ad.jit(anp.reciprocal, backend="interpret")):
            got = f(z)
            for g, w in ((got.real, want.real), (got.imag, want.imag)):
                np.testing.assert_array_equal(g, w)
                fin = ~np.isnan(w)
                np.testing.assert_array_equal(np.signbit(g[fin]), np.signbit(w[fin]))
    # d(1/z) = -t/z², in both branches of the division
    t = np.ones(3) + 0.5j
    np.testing.assert_allclose(ad.jvp(anp.reciprocal, (Z,), (t,))[1], -t / Z ** 2, rtol=1e-14)
    np.testing.assert_allclose(ad.grad(lambda z: anp.sum(anp.abs(anp.reciprocal(z)) ** 2))(Z),
                               -2 * np.conj(Z) / np.abs(Z) ** 4, rtol=1e-13)
