"""Taylor mode (ad.jet, ad.taylor): coefficients against nested jvp and closed forms.

Every differentiable primitive of the registry has a case (the ``jet=`` flag of its row in
``tests/op_records/``; a test fails for one without), and the jet of each case equals the
derivatives of t ↦ f(x(t)) from nesting ``jvp`` six times, for a cubic input path, to
1e-10 relative.
"""
import math

import numpy as np
import pytest
from numpy.polynomial import hermite, polynomial

import autodiff as ad
import autodiff.numpy as anp
import autodiff.scipy.linalg   # noqa: F401
import autodiff.scipy.special  # noqa: F401
from autodiff import primitives as P
from autodiff.core import primitives as REGISTRY
from autodiff.errors import ShapeError
from autodiff.transforms.jet import jet_rules, rule_for, NONDIFFERENTIABLE, OPAQUE, jet_jaxpr
from op_records import M, ROWS

ORDER = 6
rng = np.random.default_rng(18)


def nested_derivatives(g, order):
    """[g(0), g'(0), …, g^(order)(0)] of a function of a scalar t, by nesting jvp."""
    out, d = [], g
    for _ in range(order + 1):
        out.append(np.asarray(ad.jvp(d, (0.0,), (1.0,))[0]))     # traced: .at works
        d = (lambda h: lambda t: ad.jvp(h, (t,), (np.float64(1.0),))[1])(d)
    return out


def path(x0, terms):
    """t ↦ x0 + Σ_k terms[k] t^(k+1) / (k+1)!."""
    return lambda t: x0 + sum(c * (t ** (k + 1) / math.factorial(k + 1))
                              for k, c in enumerate(terms))


def check_against_nested(f, args, order=ORDER, rtol=1e-10, n_terms=3):
    floats = [np.issubdtype(np.asarray(a).dtype, np.floating) for a in args]
    terms = [[rng.normal(size=np.shape(a)) * 0.3 if k < n_terms else np.zeros(np.shape(a))
              for k in range(order)] if fl else [np.zeros(np.shape(a), np.asarray(a).dtype)] * order
             for a, fl in zip(args, floats)]
    y, ys = ad.jet(f, tuple(args), tuple(terms))

    def g(t):
        return f(*[path(a, s[:n_terms])(t) if fl else a for a, s, fl in zip(args, terms, floats)])

    ref = nested_derivatives(g, order)
    got = [np.asarray(y)] + [np.asarray(c) for c in ys]
    for k, (a, b) in enumerate(zip(got, ref)):
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=f"order {k}")


# ----------------------------------------------------------------------------
# One case per primitive: (function, arguments); the primitive must appear in its IR.
# The cases are the ``jet=`` flags of the op records' rows (tests/op_records/)
# ----------------------------------------------------------------------------

_JETS = {n: c for n, c in ((n, r.jet_case()) for n, r in ROWS.items()) if c is not None}
CASES = {n: (c.f, c.args) for n, c in _JETS.items()}
RTOL = {n: c.rtol for n, c in _JETS.items()}


def _prims_in(closed):
    names = set()
    for e in closed.jaxpr.eqns:
        names.add(e.primitive.name)
        for v in e.params.values():
            for j in (v if isinstance(v, (tuple, list)) else [v]):
                inner = getattr(j, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    names |= _prims_in(j)
                elif hasattr(j, "eqns"):
                    names |= _prims_in(ad.ClosedJaxpr(j, []))
    return names


def test_every_primitive_has_a_taylor_rule():
    missing = sorted(n for n, p in REGISTRY.items() if rule_for(p) is None)
    assert not missing, f"primitives without a Taylor rule: {missing}"


def test_every_differentiable_primitive_has_a_case():
    missing = sorted(n for n in REGISTRY
                     if n not in NONDIFFERENTIABLE and n not in OPAQUE and n not in CASES)
    assert not missing, f"primitives without a jet test case: {missing}"


def test_nondifferentiable_list_matches_the_registry():
    # every primitive marked non-differentiable by its own jvp declaration is listed with
    # a reason, and nothing differentiable is listed
    flagged = {n for n, p in REGISTRY.items() if getattr(p, "differentiable", True) is False}
    assert flagged <= set(NONDIFFERENTIABLE), sorted(flagged - set(NONDIFFERENTIABLE))
    assert set(NONDIFFERENTIABLE) <= set(REGISTRY)
    assert all(isinstance(r, str) and r for r in NONDIFFERENTIABLE.values())
    assert set(NONDIFFERENTIABLE) - flagged <= {"stop_gradient"}


@pytest.mark.parametrize("name", sorted(NONDIFFERENTIABLE))
def test_nondifferentiable_rules_give_zero_coefficients(name):
    prim = REGISTRY[name]
    x = np.array([0.5, -1.5, 2.25])
    b = np.array([True, False, True])
    i = np.array([3, 1, 2])
    args = {"and": [i, i], "or": [i, i], "xor": [i, i], "not": [b], "reduce_and": [b],
            "reduce_or": [b], "iota": []}.get(name)
    params = {"reduce_and": dict(axes=(0,)), "reduce_or": dict(axes=(0,)),
              "argmax": dict(axis=0, index_dtype=np.int64),
              "argmin": dict(axis=0, index_dtype=np.int64), "argsort": dict(dimension=0),
              "iota": dict(dtype=np.int64, shape=(3,), dimension=0)}.get(name, {})
    if args is None:
        binary = name in ("eq", "ne", "lt", "le", "gt", "ge", "floor_divide")
        args = [x, x * 2] if binary else [x]
    ins = [[a, np.ones_like(a, dtype=float), np.ones_like(a, dtype=float)] for a in args]
    out = jet_rules[prim](ins, **params)
    np.testing.assert_array_equal(out[0], prim.bind(*args, **params))
    assert out[1:] == ([None, None] if args else [])
    if name not in ("iota",) and np.issubdtype(np.asarray(args[0]).dtype, np.floating):
        # and through the transform: the coefficients of stop_gradient(x)·x are x's alone
        f = (lambda v: ad.stop_gradient(v) * v) if name == "stop_gradient" else \
            (lambda v: prim.bind(*([v] * len(args)), **params))
        _, ys = ad.jet(f, (x,), ((np.ones(3), np.ones(3)),))
        zero = np.zeros(np.shape(f(x)))
        want = [x, x] if name == "stop_gradient" else [zero] * 2
        np.testing.assert_allclose(np.asarray(ys, dtype=float), np.asarray(want, dtype=float))


@pytest.mark.parametrize("name", sorted(n for n in OPAQUE if n in REGISTRY))
def test_opaque_primitives_say_what_to_do(name):
    from autodiff.errors import UnsupportedError
    prim = REGISTRY[name]
    assert getattr(prim, "differentiable", True), "an opaque primitive would be zero-ruled"
    x = np.array([0.5, 1.5])
    with pytest.raises(UnsupportedError, match="custom_jvp"):
        rule_for(prim)([[x, x]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_jet_matches_nested_jvp(name):
    f, args = CASES[name]
    assert name in _prims_in(ad.make_jaxpr(f)(*args)), f"case {name} does not use {name}"
    check_against_nested(f, args, rtol=RTOL.get(name, 1e-10))


def test_integer_pow_is_exact_at_zero():
    # x³ at 0 along v: [0, 0, 0, 6v³, 0]; a quotient recurrence would divide by x₀ = 0
    ds = ad.taylor(lambda x: x ** 3 - 2 * x ** 2, 4)(np.zeros(2), np.array([1.0, 2.0]))
    np.testing.assert_allclose(np.array(ds, dtype=float),
                               [[0, 0], [0, 0], [-4, -16], [6, 48], [0, 0]])


def test_reduce_prod_and_cumprod_with_a_zero_entry():
    x = np.array([0.0, 1.5, -0.5, 2.0])
    check_against_nested(anp.prod, [x])
    check_against_nested(anp.cumprod, [x])


def test_batched_linear_algebra():
    A = np.stack([M, M.T @ M / 4 + np.eye(3)])
    check_against_nested(lambda a: anp.linalg.slogdet(a)[1] + anp.linalg.eigh(a)[0][..., 0], [A],
                         order=4)


# ----------------------------------------------------------------------------
# Closed forms up to order 12
# ----------------------------------------------------------------------------

def _assert_close_scaled(got, want, rtol=1e-10):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * max(1.0, np.max(np.abs(b))),
                                   err_msg=f"order {k}")


def test_tanh_derivatives_closed_form():
    # tanh^(n) = p_n(tanh) with p_0 = T, p_{n+1} = p_n'(T) (1 - T²)
    x = np.array([-0.8, 0.1, 0.3, 1.2])
    T = np.tanh(x)
    p, want = np.array([0.0, 1.0]), []
    for _ in range(13):
        want.append(polynomial.polyval(T, p))
        p = polynomial.polymul(polynomial.polyder(p), [1.0, 0.0, -1.0])
    _assert_close_scaled(ad.taylor(anp.tanh, 12)(x), want)


def test_exp_sin_derivatives_closed_form():
    # (e^g)^(n) = e^g B_n(g', …, g^(n)) (complete Bell polynomials), g^(k) = sin(x + kπ/2)
    x = np.array([0.3, 1.1, -2.0])
    g = [np.sin(x + k * np.pi / 2) for k in range(14)]
    B = [np.ones_like(x)]
    for n in range(12):
        B.append(sum(math.comb(n, i) * B[n - i] * g[i + 1] for i in range(n + 1)))
    want = [np.exp(np.sin(x)) * b for b in B]
    _assert_close_scaled(ad.taylor(lambda v: anp.exp(anp.sin(v)), 12)(x), want)


def test_gaussian_hermite_closed_form():
    # d^n/dx^n e^{-x²} = (-1)^n H_n(x) e^{-x²}, physicists' Hermite polynomials
    x = np.array([-1.1, 0.0, 0.4, 2.0])
    want = [(-1) ** n * hermite.hermval(x, [0] * n + [1]) * np.exp(-x * x) for n in range(13)]
    _assert_close_scaled(ad.taylor(lambda v: anp.exp(-v * v), 12)(x), want)


def test_log_and_power_closed_forms():
    x = np.array([0.5, 1.5, 3.0])
    # log^(n)(x) = (-1)^(n-1) (n-1)! / x^n ;  (x^a)^(n) = a(a-1)…(a-n+1) x^(a-n)
    want = [np.log(x)] + [(-1) ** (n - 1) * math.factorial(n - 1) / x ** n for n in range(1, 13)]
    _assert_close_scaled(ad.taylor(anp.log, 12)(x), want)
    a = 2.5
    want = [np.prod([a - i for i in range(n)]) * x ** (a - n) for n in range(13)]
    _assert_close_scaled(ad.taylor(lambda v: v ** a, 12)(x), want)


def test_sin_along_a_direction():
    # f^(k)(x)[v, …, v] for f = Σ sin: Σ sin^(k)(x) v^k
    x, v = np.array([0.2, 0.9]), np.array([1.5, -0.5])
    ds = ad.taylor(lambda u: anp.sum(anp.sin(u)), 8)(x, v)
    want = [np.sum(np.sin(x + k * np.pi / 2) * v ** k) for k in range(9)]
    _assert_close_scaled(ds, want)


# ----------------------------------------------------------------------------
# Composition: jit, vmap, grad, make_jaxpr, scan
# ----------------------------------------------------------------------------

def bench_fn(x):
    return anp.tanh(anp.sin(x) * anp.exp(-x ** 2))


taylor4 = ad.jit(ad.taylor(bench_fn, 4))


def test_jet_under_jit_matches_the_interpreter():
    x = np.array([0.3, -0.4])
    want = ad.taylor(bench_fn, 4)(x)
    got = taylor4(x)
    _assert_close_scaled(got, want, rtol=1e-12)
    x2 = np.array([1.0, 2.0])
    _assert_close_scaled(taylor4(x2), ad.taylor(bench_fn, 4)(x2), rtol=1e-12)


def test_jet_under_vmap():
    xs = np.array([0.3, -0.4, 1.2])
    got = ad.vmap(ad.taylor(bench_fn, 5))(xs)
    want = [ad.taylor(bench_fn, 5)(x) for x in xs]
    _assert_close_scaled(got, np.array(want, dtype=float).T, rtol=1e-12)


def test_grad_of_a_taylor_coefficient():
    # d/dx f^(3)(x) = f^(4)(x), and the jet of a grad: (f')^(k) = f^(k+1)
    x = 0.3
    d3 = lambda v: ad.taylor(bench_fn, 3)(v)[3]
    np.testing.assert_allclose(ad.grad(d3)(x), ad.taylor(bench_fn, 4)(x)[4], rtol=1e-10)
    np.testing.assert_allclose(ad.taylor(ad.grad(bench_fn), 4)(x)[1:],
                               ad.taylor(bench_fn, 5)(x)[2:], rtol=1e-10)


def test_make_jaxpr_of_jet_and_quadratic_size():
    def n_eqns(k):
        return len(ad.make_jaxpr(ad.taylor(bench_fn, k))(0.3).jaxpr.eqns)
    sizes = {k: n_eqns(k) for k in (2, 4, 8)}
    # at most quadratic: doubling the order at most quadruples the program (plus slack for
    # the linear part), where nesting grad doubles it or more per order
    assert sizes[8] <= 4.5 * sizes[4] and sizes[4] <= 4.5 * sizes[2], sizes
    printed = str(ad.make_jaxpr(ad.taylor(anp.sin, 2))(0.3))
    assert "sin" in printed and "cos" in printed


def test_jet_jaxpr_is_an_ir_transform():
    closed = ad.make_jaxpr(bench_fn)(0.3)
    jj = jet_jaxpr(closed, 3, [True])
    assert len(jj.jaxpr.invars) == 4 and len(jj.jaxpr.outvars) == 4
    from autodiff.backends.interpreter import run_closed
    outs = run_closed(jj, [np.float64(0.3), np.float64(1.0), np.float64(0.0), np.float64(0.0)])
    want = ad.taylor(bench_fn, 3)(0.3)
    np.testing.assert_allclose([outs[k] * math.factorial(k) for k in range(4)], want, rtol=1e-12)


def test_ode_solution_taylor_coefficients_in_time_through_scan():
    # RK4 for y' = -λ y, y(0) = y0, over [0, T] in N steps as a lax.scan; jet in T
    lam, y0, N = 0.7, 1.3, 10

    def solve(T):
        h = T / N

        def step(y, _):
            k1 = -lam * y
            k2 = -lam * (y + h / 2 * k1)
            k3 = -lam * (y + h / 2 * k2)
            k4 = -lam * (y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        y, _ = ad.lax.scan(step, y0 * anp.ones_like(T), None, length=N)
        return y

    T = np.float64(1.5)
    ds = ad.taylor(solve, 6)(T)
    check_against_nested(solve, [T])                               # the numerical solution
    # RK4 on this ODE is y0 R(-λT/N)^N, R(z) = 1 + z + z²/2 + z³/6 + z⁴/24: a polynomial in T
    p = y0 * polynomial.polypow([(-lam / N) ** i / math.factorial(i) for i in range(5)], N)
    want = [polynomial.polyval(T, polynomial.polyder(p, k)) for k in range(7)]
    _assert_close_scaled(ds, want)
    exact = [y0 * (-lam) ** k * np.exp(-lam * T) for k in range(7)]
    np.testing.assert_allclose(np.asarray(ds, dtype=float), exact, rtol=1e-3)   # RK4, h = 0.15


def test_taylor_series_of_an_ode_by_jet_recursion():
    # the classic use: y' = y², y(0) = 1 (y = 1/(1 - t)) has Taylor coefficients 1, 1, 1, …;
    # each pass of jet on the right-hand side gives one more coefficient
    f = lambda y: y * y
    y0, terms = np.float64(1.0), []
    for k in range(8):
        fy, fs = ad.jet(f, (y0,), (terms or [],)) if terms else (f(y0), [])
        nxt = fy if k == 0 else fs[k - 1]          # y^(k+1) = (f∘y)^(k)
        terms = list(terms) + [nxt]
    np.testing.assert_allclose(terms, [math.factorial(k + 1) for k in range(8)], rtol=1e-12)


def test_pytree_inputs_and_outputs():
    def f(d):
        return {"s": anp.sin(d["a"]) * d["b"], "c": anp.cos(d["a"])}
    x = {"a": np.float64(0.4), "b": np.float64(2.0)}
    v = {"a": np.float64(1.0), "b": np.float64(0.0)}
    z = {"a": np.float64(0.0), "b": np.float64(0.0)}
    y, ys = ad.jet(f, (x,), ((v, z, z),))
    np.testing.assert_allclose(ys["s"], [2 * np.cos(0.4), -2 * np.sin(0.4), -2 * np.cos(0.4)])
    np.testing.assert_allclose(ys["c"], [-np.sin(0.4), -np.cos(0.4), np.sin(0.4)])


@ad.custom_jvp
def my_exp(x):
    return anp.exp(x)


my_exp.defjvp(lambda primals, tangents: (my_exp(primals[0]), my_exp(primals[0]) * tangents[0]))


def test_custom_jvp_by_its_rule_when_the_true_function_is_opaque(monkeypatch):
    # without a Taylor rule for exp, my_exp's true function cannot be jetted; its rule
    # (which calls my_exp again) gives every order by recursion
    monkeypatch.delitem(jet_rules, P.exp_p)
    monkeypatch.setattr(P.exp_p, "vectorized", False)     # and no rule derived for it
    x = np.array([0.2, -1.0])
    ds = ad.taylor(lambda v: my_exp(anp.sin(v)), 6)(x)
    g = [np.sin(x + k * np.pi / 2) for k in range(8)]
    B = [np.ones_like(x)]
    for n in range(6):
        B.append(sum(math.comb(n, i) * B[n - i] * g[i + 1] for i in range(n + 1)))
    _assert_close_scaled(ds, [np.exp(np.sin(x)) * b for b in B])


def test_custom_jvp_around_a_pure_callback():
    @ad.custom_jvp
    def host_exp(x):
        return ad.pure_callback(np.exp, ad.ShapeDtypeStruct(x.shape, x.dtype), x)
    host_exp.defjvp(lambda p, t: (host_exp(p[0]), host_exp(p[0]) * t[0]))
    x = np.array([0.3, 1.1])
    _assert_close_scaled(ad.taylor(lambda v: host_exp(2.0 * v), 5)(x),
                         [2.0 ** k * np.exp(2 * x) for k in range(6)])
    from autodiff.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="custom_jvp"):
        ad.taylor(lambda v: ad.pure_callback(np.exp, ad.ShapeDtypeStruct(v.shape, v.dtype), v),
                  2)(x)


def test_a_primitive_without_a_rule_names_itself_and_the_line(monkeypatch):
    from autodiff.errors import UnsupportedError
    monkeypatch.delitem(jet_rules, P.sin_p)
    monkeypatch.setattr(P.sin_p, "vectorized", False)     # and no rule derived for it:
    monkeypatch.setattr(P.sin_p, "jvp", None)              # neither elementwise nor from a jvp
    with pytest.raises(UnsupportedError, match="'sin'") as info:
        ad.taylor(lambda x: anp.sin(x) * 2.0, 2)(0.3)
    assert "test_jet.py" in str(info.value)


def test_order_zero_and_integer_inputs():
    assert [float(d) for d in ad.taylor(anp.sin, 0)(0.5)] == [np.sin(0.5)]
    y, ys = ad.jet(anp.sin, (0.5,), ((),))
    assert ys == [] and np.isclose(y, np.sin(0.5))
    # an integer input has no Taylor series: its terms are ignored, the float one's are not
    y, ys = ad.jet(lambda x, n: x ** 2 * n, (1.5, np.int64(3)),
                   ((1.0, 0.0), (np.int64(1), np.int64(0))))
    np.testing.assert_allclose(ys, [9.0, 6.0])


def test_bad_series_are_clear_errors():
    with pytest.raises(TypeError, match="tuples"):
        ad.jet(anp.sin, 0.3, ((1.0,),))
    with pytest.raises(TypeError, match="one length"):
        ad.jet(lambda a, b: a * b, (0.3, 0.4), ((1.0,), (1.0, 0.0)))
    with pytest.raises(ShapeError, match="shaped like its input"):
        ad.jet(anp.sin, (np.ones(3),), ((np.ones(2),),))
    with pytest.raises(TypeError, match="order"):
        ad.taylor(anp.sin, -1)
