"""Control flow (ad.lax): cond, switch, while_loop, fori_loop, scan, map.

Every rule of every control-flow primitive is checked against a trusted peer:
values against plain Python loops and the numpy interpreter, jvp and grad against
central finite differences (and the implicit-function theorem for Newton's
method), vmap against a Python loop over the batch, reverse mode against forward
mode (the dot-product identity <ct, J t> = <J^T ct, t>), and the IR against
``typecheck_jaxpr``, recursively through the sub-jaxprs.
"""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import core, lax
from autodiff.backends.interpreter import run_closed
from autodiff.errors import ConcretizationError, DTypeError, ShapeError, UnsupportedError

RTOL = 1e-6


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def num_jac(f, x, eps=1e-6):
    """Central-difference Jacobian of f at x: shape f(x).shape + x.shape."""
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(f(x))
    out = np.zeros(f0.shape + x.shape)
    for i in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[(...,) + i] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return out


def sub_jaxprs(jaxpr):
    """Every jaxpr nested in the params of ``jaxpr``'s equations, recursively."""
    for e in jaxpr.eqns:
        for p in e.params.values():
            for q in (p if isinstance(p, tuple) else (p,)):
                if isinstance(q, core.ClosedJaxpr):
                    q = q.jaxpr
                if isinstance(q, core.Jaxpr):
                    yield q
                    yield from sub_jaxprs(q)


def typecheck_all(closed):
    j = closed.jaxpr if isinstance(closed, core.ClosedJaxpr) else closed
    core.typecheck_jaxpr(j)
    for s in sub_jaxprs(j):
        core.typecheck_jaxpr(s)


def count_eqns(jaxpr):
    j = jaxpr.jaxpr if isinstance(jaxpr, core.ClosedJaxpr) else jaxpr
    return len(j.eqns) + sum(len(s.eqns) for s in sub_jaxprs(j))


def prims_in(jaxpr):
    j = jaxpr.jaxpr if isinstance(jaxpr, core.ClosedJaxpr) else jaxpr
    names = {e.primitive.name for e in j.eqns}
    for s in sub_jaxprs(j):
        names |= {e.primitive.name for e in s.eqns}
    return names


def check_against_interpreter(f, *args):
    """The traced program, run by the reference interpreter, equals the eager call."""
    closed = ad.make_jaxpr(f)(*args)
    typecheck_all(closed)
    got = run_closed(closed, ad.tree_util.tree_flatten(args)[0])
    want = ad.tree_util.tree_flatten(f(*args))[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    return closed


def dot_product_test(f, x, rng):
    """Reverse mode is the transpose of forward mode: <ct, J t> == <J^T ct, t>."""
    y, f_vjp = ad.vjp(f, x)
    t = rng.standard_normal(np.shape(x))
    ct = rng.standard_normal(np.shape(y))
    _, jt = ad.jvp(f, (x,), (t,))
    (jct,) = f_vjp(ct)
    np.testing.assert_allclose(np.sum(ct * jt), np.sum(jct * t), rtol=1e-9)


# ---------------------------------------------------------------------------
# the damped oscillator, integrated with RK4 inside scan (the acceptance case)
# ---------------------------------------------------------------------------

def rk4_final(params, y0, dt=0.05, n=40):
    """x'' = -k x - c x', RK4 with step dt for n steps; returns the final (x, v)."""
    k, c = params[0], params[1]

    def f(y):
        return anp.stack([y[1], -k * y[0] - c * y[1]])

    def step(y, _):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None

    return lax.scan(step, y0, None, length=n)[0]


def rk4_python(params, y0, dt=0.05, n=40):
    k, c = params

    def f(y):
        return np.array([y[1], -k * y[0] - c * y[1]])
    y = np.array(y0, dtype=float)
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


P0 = np.array([2.0, 0.3])       # stiffness k, damping c
Y0 = np.array([1.0, -0.5])


def test_rk4_values_match_python_loop():
    np.testing.assert_allclose(rk4_final(P0, Y0), rk4_python(P0, Y0), rtol=1e-13)
    check_against_interpreter(rk4_final, P0, Y0)


def test_rk4_gradient_wrt_damping_and_initial_state():
    def loss(params, y0):
        y = rk4_final(params, y0)
        return y[0] ** 2 + 0.5 * y[1]
    gp, gy = ad.grad(loss, argnums=(0, 1))(P0, Y0)
    np.testing.assert_allclose(gp, num_jac(lambda p: loss(p, Y0), P0), rtol=1e-6)
    np.testing.assert_allclose(gy, num_jac(lambda y: loss(P0, y), Y0), rtol=1e-6)
    # the damping entry on its own, against the Python-loop integrator
    dc = num_jac(lambda c: rk4_python([P0[0], c], Y0)[0] ** 2 + 0.5 * rk4_python([P0[0], c], Y0)[1],
                 np.array(P0[1]))
    np.testing.assert_allclose(gp[1], dc, rtol=1e-6)


def test_rk4_jacobians_forward_and_reverse_agree():
    jr = ad.jacrev(rk4_final, argnums=(0, 1))(P0, Y0)
    jf = ad.jacfwd(rk4_final, argnums=(0, 1))(P0, Y0)
    for a, b, x, i in zip(jr, jf, (P0, Y0), (0, 1)):
        np.testing.assert_allclose(a, b, rtol=1e-10)
        want = num_jac(lambda z: rk4_final(*[(z if j == i else (P0, Y0)[j]) for j in (0, 1)]), x)
        np.testing.assert_allclose(a, want, rtol=1e-6, atol=1e-9)


def test_rk4_hessian_through_scan():
    def energy(params):
        y = rk4_final(params, Y0, n=20)
        return params[0] * y[0] ** 2 + y[1] ** 2
    H = ad.hessian(energy)(P0)
    np.testing.assert_allclose(H, H.T, rtol=1e-10)
    np.testing.assert_allclose(H, num_jac(ad.grad(energy), P0), rtol=1e-5, atol=1e-8)


def test_rk4_under_jit():
    # one compiled program gives the value and both gradients (one Numba compile)
    loss = lambda p, y: rk4_final(p, y)[0]
    jitted = _jit_or_skip(ad.value_and_grad(loss, argnums=(0, 1)))
    value, g = jitted(P0, Y0)
    np.testing.assert_allclose(value, rk4_python(P0, Y0)[0], rtol=1e-12)
    want = ad.grad(loss, argnums=(0, 1))(P0, Y0)
    for a, b in zip(g, want):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    np.testing.assert_allclose(g[0], num_jac(lambda p: rk4_python(p, Y0)[0], P0), rtol=1e-6)
    np.testing.assert_allclose(g[1], num_jac(lambda y: rk4_python(P0, y)[0], Y0), rtol=1e-6)


def _jit_or_skip(f):
    # (named for history: jit exists, so a failure here fails the test)
    return ad.jit(f)


# ---------------------------------------------------------------------------
# Newton's method for x**3 = a with while_loop (the acceptance case)
# ---------------------------------------------------------------------------

def cube_root(a, max_steps=None):
    def step(x):
        return x - (x ** 3 - a) / (3.0 * x ** 2)
    return lax.while_loop(lambda x: abs(x ** 3 - a) > 1e-13 * (1.0 + abs(a)), step,
                          1.0 + a / 3.0, max_steps=max_steps)


@pytest.mark.parametrize("a", [0.5, 8.0, 27.0, 1000.0])
def test_newton_converges_and_jvp_is_the_implicit_derivative(a):
    x = cube_root(a)
    np.testing.assert_allclose(x, np.cbrt(a), rtol=1e-12)
    # x(a)^3 - a = 0  =>  dx/da = 1 / (3 x^2)
    _, dx = ad.jvp(cube_root, (a,), (1.0,))
    np.testing.assert_allclose(dx, 1.0 / (3.0 * np.cbrt(a) ** 2), rtol=1e-10)
    # bounded reverse mode agrees
    g = ad.grad(lambda a: cube_root(a, max_steps=60))(a)
    np.testing.assert_allclose(g, 1.0 / (3.0 * np.cbrt(a) ** 2), rtol=1e-10)


def test_newton_under_jit():
    jc = _jit_or_skip(cube_root)
    np.testing.assert_allclose(jc(8.0), 2.0, rtol=1e-12)
    g = _jit_or_skip(ad.grad(lambda a: cube_root(a, max_steps=60)))(8.0)
    np.testing.assert_allclose(g, 1.0 / 12.0, rtol=1e-10)


def test_unbounded_while_reverse_mode_names_the_fix_under_jit():
    # traced abstractly the loop is one ``while`` equation: reverse mode needs max_steps
    with pytest.raises(UnsupportedError, match="max_steps"):
        ad.jit(ad.grad(cube_root))(8.0)
    with pytest.raises(NotImplementedError, match="max_steps"):   # UnsupportedError's builtin
        ad.jit(ad.jacrev(cube_root))(8.0)
    out, f_vjp = ad.vjp(ad.jit(cube_root), 8.0)
    np.testing.assert_allclose(out, 2.0)
    with pytest.raises(UnsupportedError, match="max_steps=N"):
        f_vjp(1.0)


def test_while_on_values_runs_in_python_and_differentiates_the_steps_taken():
    # outside jit a concrete predicate runs the loop in Python: grad of an unbounded loop
    # works (d a^(1/3) / da = 1 / (3 a^(2/3))), through the steps actually taken
    for a in (8.0, 27.0):
        want = 1.0 / (3.0 * a ** (2.0 / 3.0))
        np.testing.assert_allclose(ad.grad(cube_root)(a), want, rtol=1e-10)
        np.testing.assert_allclose(ad.jacrev(cube_root)(a), want, rtol=1e-10)
        out, f_vjp = ad.vjp(cube_root, a)
        np.testing.assert_allclose(f_vjp(1.0)[0], want, rtol=1e-10)
    # a bounded loop stops at max_steps in Python too, and agrees with the compiled one
    capped = lambda a: cube_root(a, max_steps=3)
    np.testing.assert_allclose(capped(8.0), ad.jit(capped)(8.0), rtol=1e-15)
    np.testing.assert_allclose(ad.grad(capped)(8.0), ad.jit(ad.grad(capped))(8.0), rtol=1e-12)
    # make_jaxpr traces abstractly: there the loop stays one while equation
    jvp_prog = ad.make_jaxpr(lambda a: ad.jvp(cube_root, (a,), (1.0,))[1])(8.0)
    assert "while" in {e.primitive.name for e in jvp_prog.jaxpr.eqns}
    x = ad.Variable(np.array(8.0))            # the tape knows values: Python steps, backward
    cube_root(x).backward()
    np.testing.assert_allclose(x.grad, 1.0 / 12.0, rtol=1e-10)


def test_while_on_values_checks_types_and_predicate():
    with pytest.raises(DTypeError, match="boolean scalar"):
        lax.while_loop(lambda x: x, lambda x: x - 1.0, 3.0)
    with pytest.raises(ShapeError, match="same types"):
        lax.while_loop(lambda x: x[0] < 3.0, lambda x: np.ones(3), np.zeros(2))
    # a Python-scalar result takes the loop value's dtype, as in the traced loop
    out = lax.while_loop(lambda x: x < 3, lambda x: 3, np.float32(0.0))
    assert out == 3 and out.dtype == np.float32


def _count_up(a, c):
    """a**k, k the number of steps a, a + 1, ... takes to reach c (bound closed over)."""
    return lax.while_loop(lambda s: s[0] < c, lambda s: (s[0] + 1.0, s[1] * a), (a, 1.0),
                          max_steps=100)[1]


def test_while_on_values_inside_jit_and_vmap_traces_what_it_cannot_know():
    # grad/jvp know a's value, but the bound c belongs to the enclosing jit or vmap: the
    # loop is traced from there (it was a ConcretizationError). a = 0.5: k = ceil(c - a)
    a, cs = 0.5, np.array([3.0, 4.0, 1.2])
    k = np.ceil(cs - a)
    value, deriv = a ** k, k * a ** (k - 1)
    out = ad.jit(lambda c: ad.jvp(lambda a: _count_up(a, c), (a,), (1.0,)))(3.0)
    np.testing.assert_allclose(out, (value[0], deriv[0]), rtol=RTOL)
    np.testing.assert_allclose(ad.jit(lambda c: ad.grad(lambda a: _count_up(a, c))(a))(3.0),
                               deriv[0], rtol=RTOL)
    np.testing.assert_allclose(ad.jit(lambda a, c: ad.grad(_count_up)(a, c))(a, 4.0),
                               deriv[1], rtol=RTOL)
    np.testing.assert_allclose(ad.vmap(lambda c: ad.grad(lambda a: _count_up(a, c))(a))(cs),
                               deriv, rtol=RTOL)
    np.testing.assert_allclose(
        ad.vmap(lambda c: ad.jvp(lambda a: _count_up(a, c), (a,), (1.0,))[1])(cs), deriv,
        rtol=RTOL)
    # a body closing over a jit value: the Python loop runs until its predicate needs it
    g = lambda a, c: lax.while_loop(lambda s: s[0] < 3.0, lambda s: (s[0] + c, s[1] * a),
                                    (a, 1.0))[1]
    np.testing.assert_allclose(ad.jit(lambda c: ad.jvp(lambda a: g(a, c), (1.1,), (1.0,)))(1.0),
                               (1.1 ** 2, 2 * 1.1), rtol=RTOL)
    # random.gamma's rejection loop under vmap(grad): the eager gradients, key by key
    keys = ad.random.split(ad.random.PRNGKey(3), 3)
    batched = ad.vmap(lambda k: ad.grad(lambda a: ad.random.gamma(k, a))(1.5))(keys)
    one_by_one = [ad.grad(lambda a: ad.random.gamma(k, a))(1.5) for k in keys]
    np.testing.assert_allclose(batched, one_by_one, rtol=1e-10)


def test_second_derivatives_of_newton():
    # x(a) = a^(1/3): x'' = -2 / (9 a^(5/3))
    a = 8.0
    want = -2.0 / (9.0 * a ** (5.0 / 3.0))
    np.testing.assert_allclose(ad.jacfwd(ad.jacfwd(cube_root))(a), want, rtol=1e-9)
    np.testing.assert_allclose(ad.hessian(lambda a: cube_root(a, max_steps=60))(a), want,
                               rtol=1e-9)
    np.testing.assert_allclose(ad.grad(ad.grad(lambda a: cube_root(a, max_steps=60)))(a), want,
                               rtol=1e-9)


def test_unbounded_while_linearize_is_forward_mode():
    y, f_jvp = ad.linearize(cube_root, 8.0)
    np.testing.assert_allclose(y, 2.0)
    np.testing.assert_allclose(f_jvp(2.0), 2.0 / 12.0, rtol=1e-10)
    np.testing.assert_allclose(ad.jacfwd(cube_root)(27.0), 1.0 / 27.0, rtol=1e-10)


def test_bounded_while_stops_at_max_steps():
    def count(n, max_steps):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0),
                              max_steps=max_steps)
    assert count(5, None) == (5, 32.0)
    assert count(5, 3) == (3, 8.0)
    # the bounded reverse mode (a scan of max_steps) gives the same values and derivative
    f = lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x), (0, 1.0),
                                 max_steps=8)[1]
    np.testing.assert_allclose(ad.grad(f)(1.5), 5 * 1.5 ** 4)
    f3 = lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x), (0, 1.0),
                                  max_steps=3)[1]
    np.testing.assert_allclose(ad.grad(f3)(1.5), 3 * 1.5 ** 2)


# ---------------------------------------------------------------------------
# values against Python loops and against the interpreter
# ---------------------------------------------------------------------------

def test_scan_pytrees_and_reverse_match_python_loop(rng):
    xs = {"a": rng.standard_normal((6, 3)), "b": rng.standard_normal(6)}
    init = (np.zeros(3), 1.0)

    def body(c, x):
        s, p = c
        s = s + x["a"] * x["b"]
        p = p * anp.cos(x["b"])
        return (s, p), {"s": anp.sum(s), "p": p}

    for reverse in (False, True):
        (s, p), ys = lax.scan(body, init, xs, reverse=reverse)
        ws, wp, wys_s, wys_p = np.zeros(3), 1.0, [0.0] * 6, [0.0] * 6
        order = range(5, -1, -1) if reverse else range(6)
        for i in order:
            ws = ws + xs["a"][i] * xs["b"][i]
            wp = wp * np.cos(xs["b"][i])
            wys_s[i], wys_p[i] = ws.sum(), wp
        np.testing.assert_allclose(s, ws)
        np.testing.assert_allclose(p, wp)
        np.testing.assert_allclose(ys["s"], wys_s)
        np.testing.assert_allclose(ys["p"], wys_p)
        check_against_interpreter(lambda xs: lax.scan(body, init, xs, reverse=reverse), xs)


def test_scan_length_only_and_no_ys():
    c, ys = lax.scan(lambda c, _: (c * 2.0, None), 1.0, None, length=10)
    assert c == 1024.0 and ys is None
    c, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=0)
    assert c == 0 and ys.shape == (0,)


def test_cond_and_switch_values(rng):
    x = rng.standard_normal(4)
    t = lambda x, y: (anp.sin(x) * y, y + 1.0)
    f = lambda x, y: (x * 0.0, y)
    for p in (True, False):
        got = lax.cond(p, t, f, x, 2.0)
        want = (np.sin(x) * 2.0, 3.0) if p else (x * 0.0, 2.0)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w)
        check_against_interpreter(lambda x: lax.cond(p, t, f, x, 2.0), x)
    # a numeric predicate: nonzero is true
    assert lax.cond(np.float64(0.0), lambda: 1.0, lambda: 2.0) == 2.0
    # a Python-scalar result takes the other branch's dtype
    out = lax.cond(True, lambda x: x * 2, lambda x: 0.0, np.float32(1.5))
    assert out.dtype == np.float32 and out == 3.0
    fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    for i, want in [(-3, 3.0), (0, 3.0), (1, 20.0), (2, -2.0), (9, -2.0)]:
        assert lax.switch(i, fs, 2.0) == want
    check_against_interpreter(lambda i, x: lax.switch(i, fs, x), np.int64(1), 2.0)


def test_while_and_fori_values_match_python_loops():
    def collatz_steps(n):
        def body(c):
            m, k = c
            return lax.cond(m % 2 == 0, lambda m: m // 2, lambda m: 3 * m + 1, m), k + 1
        return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    def collatz_python(n):
        k = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        return k
    for n in (1, 6, 27):
        assert collatz_steps(np.int64(n)) == collatz_python(n)
    check_against_interpreter(collatz_steps, np.int64(27))

    body = lambda i, x: x * 1.5 + i
    want = 2.0
    for i in range(3, 9):
        want = want * 1.5 + i
    np.testing.assert_allclose(lax.fori_loop(3, 9, body, 2.0), want)
    assert lax.fori_loop(5, 2, body, 2.0) == 2.0          # empty range
    # traced bounds: a while loop
    closed = ad.make_jaxpr(lambda lo, hi, x: lax.fori_loop(lo, hi, body, x))(3, 9, 2.0)
    assert "while" in prims_in(closed) and "scan" not in prims_in(closed)
    np.testing.assert_allclose(run_closed(closed, [np.int64(3), np.int64(9), 2.0])[0], want)
    # static bounds: a scan
    closed = ad.make_jaxpr(lambda x: lax.fori_loop(3, 9, body, x))(2.0)
    assert "scan" in prims_in(closed)


def test_map_matches_list_comprehension(rng):
    xs = rng.standard_normal((5, 3))
    np.testing.assert_allclose(lax.map(lambda x: anp.sum(x ** 2), xs), (xs ** 2).sum(1))


# ---------------------------------------------------------------------------
# forward mode: jvp against finite differences
# ---------------------------------------------------------------------------

def test_jvp_of_every_primitive_matches_finite_differences(rng):
    x = rng.uniform(0.5, 1.5, 3)
    t = rng.standard_normal(3)
    fns = {
        "scan": lambda x: lax.scan(lambda c, xi: (c * xi + anp.sin(c), c ** 2), x[0], x)[1],
        "scan_consts": lambda x: lax.scan(lambda c, _: (c * x + 0.1, anp.sum(c)), x, None,
                                          length=4)[0],
        "cond": lambda x: lax.cond(x[0] > 1.0, lambda y: anp.exp(y), lambda y: y ** 3, x),
        "switch": lambda x: lax.switch(1, [anp.sin, anp.cos, anp.tanh], x * x),
        "while": lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * x),
                                          (0, x))[1],
        "fori": lambda x: lax.fori_loop(0, 4, lambda i, c: anp.sin(c) * x + i, x),
    }
    for name, f in fns.items():
        _, jt = ad.jvp(f, (x,), (t,))
        np.testing.assert_allclose(jt, num_jac(f, x) @ t, rtol=1e-6, atol=1e-9, err_msg=name)


def test_jvp_with_traced_fori_bounds():
    def f(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x, 1.0)
    closed = ad.make_jaxpr(lambda x, n: ad.jvp(lambda x: f(x, n), (x,), (1.0,)))(1.1, 5)
    assert "while" in prims_in(closed)
    out, dout = run_closed(closed, [1.1, np.int64(5)])
    np.testing.assert_allclose(dout, 5 * 1.1 ** 4)


# ---------------------------------------------------------------------------
# reverse mode: grad against finite differences, vjp against jvp
# ---------------------------------------------------------------------------

GRAD_CASES = {
    "scan": lambda x: anp.sum(lax.scan(lambda c, xi: (anp.tanh(c * xi) + xi, c * xi), 0.5, x)[1]),
    "scan_reverse": lambda x: anp.sum(lax.scan(lambda c, xi: (anp.sin(c) + xi, c * c), 0.1, x,
                                               reverse=True)[1] * anp.arange(3.0)),
    "scan_closure": lambda x: lax.scan(lambda c, _: (c * x[0] + anp.sin(x[1]) * c, None), x[2],
                                       None, length=5)[0],
    "scan_matrix_carry": lambda x: anp.sum(lax.scan(
        lambda m, _: (anp.tanh(m @ anp.outer(x, x)) + anp.eye(3), None),
        anp.eye(3) * 0.3, None, length=3)[0]),
    "scan_swapped_carry": lambda x: lax.scan(
        lambda c, _: ((c[1] * 1.5, anp.sin(c[0]) * c[2], c[2]), None), (x[0], x[1], x[2]), None,
        length=4)[0][0],
    "cond_constant_branch_taken": lambda x: lax.cond(x[0] < -1.0, lambda y: anp.sum(y * y),
                                                     lambda y: 1.0, x),
    "cond_constant_branch_not_taken": lambda x: lax.cond(x[0] > -1.0, lambda y: anp.sum(y * y),
                                                         lambda y: 1.0, x),
    "cond_true": lambda x: lax.cond(anp.sum(x) > 0, lambda y: anp.sum(anp.sin(y) * y),
                                    lambda y: anp.sum(y ** 3), x),
    "cond_false": lambda x: lax.cond(anp.sum(x) < 0, lambda y: anp.sum(anp.sin(y) * y),
                                     lambda y: anp.sum(y ** 3), x),
    "cond_closure": lambda x: lax.cond(x[0] > 0, lambda: x[1] * x[2], lambda: x[0]),
    "switch": lambda x: lax.switch(2, [lambda y: y[0], lambda y: y[1] ** 2,
                                       lambda y: anp.prod(y)], x),
    "fori_static": lambda x: anp.sum(lax.fori_loop(1, 4, lambda i, c: anp.sin(c) * i + x, x)),
    "while_bounded": lambda x: anp.sum(lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * anp.cos(c[1]) + x), (0, x),
        max_steps=10)[1]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_finite_differences(name, rng):
    f = GRAD_CASES[name]
    x = rng.uniform(0.2, 1.0, 3)
    g = ad.grad(f)(x)
    np.testing.assert_allclose(g, num_jac(f, x), rtol=1e-6, atol=1e-9)
    dot_product_test(f, x, rng)


def test_linearized_programs_typecheck(rng):
    """The primal/residual/linear programs reverse mode builds are well-typed IR."""
    from autodiff.api import _Linearized
    from autodiff.tree_util import tree_flatten
    x = rng.uniform(0.2, 1.0, 3)
    for name, f in GRAD_CASES.items():
        flat, tree = tree_flatten((x,))
        lin = _Linearized(f, flat, tree, False)
        typecheck_all(lin.unknown)
        from autodiff.transforms.transpose import transpose_jaxpr
        n_res = lin.n_res
        tj = transpose_jaxpr(lin.unknown, [False] * n_res + [True] * lin.n_t)
        typecheck_all(tj)


def test_grad_with_respect_to_scanned_inputs_and_ys(rng):
    xs = rng.standard_normal((7, 2))
    w = rng.standard_normal(2)

    def f(xs, w):
        def body(h, x):
            h = anp.tanh(h * w + x)
            return h, anp.sum(h * x)
        h, ys = lax.scan(body, anp.zeros(2), xs)
        return anp.sum(h) + anp.sum(ys ** 2)
    gx, gw = ad.grad(f, argnums=(0, 1))(xs, w)
    np.testing.assert_allclose(gx, num_jac(lambda xs: f(xs, w), xs), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gw, num_jac(lambda w: f(xs, w), w), rtol=1e-6, atol=1e-9)


def test_residuals_of_loop_constants_are_not_stacked(rng):
    """A matrix the body only reads is passed to the linear scan once, not once per step."""
    from autodiff.api import _Linearized
    from autodiff.tree_util import tree_flatten
    W = rng.standard_normal((20, 20)) * 0.1

    def f(W):
        return anp.sum(lax.scan(lambda h, _: (anp.tanh(W @ h), None), anp.ones(20), None,
                                length=50)[0])
    flat, tree = tree_flatten((W,))
    lin = _Linearized(f, flat, tree, False)
    res_bytes = sum(np.asarray(r).nbytes for r in lin.residuals)
    # per step only h (20) and tanh'(.) (20) are saved: 50 * 40 doubles, plus W once
    assert res_bytes <= (50 * 40 + 400 + 100) * 8


# ---------------------------------------------------------------------------
# vmap against a Python loop over the batch
# ---------------------------------------------------------------------------

def _loop(f, *batched):
    outs = [f(*args) for args in zip(*batched)]
    return ad.tree_util.tree_map(lambda *xs: np.stack(xs), *outs)


def _assert_tree_close(a, b, **kw):
    for x, y in zip(ad.tree_util.tree_flatten(a)[0], ad.tree_util.tree_flatten(b)[0]):
        np.testing.assert_allclose(x, y, **kw)


def test_vmap_scan_over_each_operand_kind(rng):
    B = 4
    xs = rng.standard_normal((B, 6, 2))
    inits = rng.standard_normal((B, 2))
    ws = rng.standard_normal((B, 2))

    def f(init, xs, w):
        return lax.scan(lambda c, x: (anp.sin(c * w) + x, anp.sum(c)), init, xs)
    _assert_tree_close(ad.vmap(f)(inits, xs, ws), _loop(f, inits, xs, ws), rtol=1e-12)
    # only xs batched, along its second axis
    xs_t = np.swapaxes(xs, 0, 1)
    got = ad.vmap(f, in_axes=(None, 1, None))(inits[0], xs_t, ws[0])
    _assert_tree_close(got, _loop(lambda x: f(inits[0], x, ws[0]), xs), rtol=1e-12)
    # only the closed-over constant batched: the carry becomes batched through the body
    got = ad.vmap(f, in_axes=(None, None, 0))(inits[0], xs[0], ws)
    _assert_tree_close(got, _loop(lambda w: f(inits[0], xs[0], w), ws), rtol=1e-12)
    # out_axes on the stacked ys
    got = ad.vmap(lambda xs: f(inits[0], xs, ws[0])[1], out_axes=1)(xs)
    np.testing.assert_allclose(got, _loop(lambda x: f(inits[0], x, ws[0])[1], xs).T)


def test_vmap_cond_batched_operand_and_batched_predicate(rng):
    xs = rng.standard_normal(6)
    f = lambda x: lax.cond(x > 0, lambda y: anp.sqrt(y), lambda y: y ** 2, x)
    with np.errstate(invalid="ignore"):      # both branches run on every lane
        np.testing.assert_allclose(ad.vmap(f)(xs), [f(x) for x in xs])
    closed = ad.make_jaxpr(ad.vmap(f))(xs)
    assert "select" in prims_in(closed) and "cond" not in prims_in(closed)
    g = lambda x, y: lax.cond(y > 0, lambda a: a * 2.0, lambda a: a - 1.0, x)
    np.testing.assert_allclose(ad.vmap(g, in_axes=(0, None))(xs, 1.0), xs * 2.0)
    closed = ad.make_jaxpr(ad.vmap(g, in_axes=(0, None)))(xs, 1.0)
    assert "cond" in prims_in(closed)        # unbatched predicate: still a cond
    idx = np.array([0, 1, 2, 5, -1, 1])
    fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    sw = lambda i, x: lax.switch(i, fs, x)
    np.testing.assert_allclose(ad.vmap(sw)(idx, xs), [sw(i, x) for i, x in zip(idx, xs)])


def test_vmap_while_runs_until_every_lane_is_done(rng):
    a = np.array([0.5, 8.0, 27.0, 1000.0, 3.0])
    np.testing.assert_allclose(ad.vmap(cube_root)(a), np.cbrt(a), rtol=1e-12)
    steps = lambda n: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0),
                                     (0, 1.0))
    ns = np.array([0, 3, 1, 7])
    got = ad.vmap(steps)(ns)
    np.testing.assert_array_equal(got[0], ns)
    np.testing.assert_allclose(got[1], 2.0 ** ns)
    # unbatched predicate, batched body constant
    g = lambda w: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w), (0, 1.0))[1]
    np.testing.assert_allclose(ad.vmap(g)(np.array([1.0, 2.0, 3.0])), [1.0, 8.0, 27.0])
    # bounded: max_steps holds per lane
    bounded = lambda n: lax.while_loop(lambda c: c < n, lambda c: c + 1, 0, max_steps=4)
    np.testing.assert_array_equal(ad.vmap(bounded)(ns), np.minimum(ns, 4))


def test_vmap_fori_reverse_scan_and_vmap_of_vmap(rng):
    xs = rng.standard_normal((3, 4))
    f = lambda x: lax.fori_loop(0, 3, lambda i, c: c + anp.sin(c) * i, x)
    np.testing.assert_allclose(ad.vmap(f)(xs), _loop(f, xs))
    xs = rng.standard_normal((2, 3, 5))
    h = lambda x: lax.scan(lambda c, x: (c + x, c * x), 0.0, x, reverse=True)
    want = _loop(lambda r: _loop(h, r), xs)
    _assert_tree_close(ad.vmap(ad.vmap(h))(xs), want, rtol=1e-12)
    # the outer vmap over the middle axis
    _assert_tree_close(ad.vmap(ad.vmap(h), in_axes=1)(np.swapaxes(xs, 0, 1)), want, rtol=1e-12)


def test_linearize_of_scan_and_zero_cotangents():
    xs = np.array([1.0, 2.0, 3.0])
    f = lambda x: lax.scan(lambda c, x: (c * x, anp.sin(c)), 1.0, x)
    (c, ys), f_jvp = ad.linearize(f, xs)
    t = np.array([0.3, -1.0, 0.5])
    for a, b in zip(f_jvp(t), ad.jvp(f, (xs,), (t,))[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    _, f_vjp = ad.vjp(f, xs)
    np.testing.assert_allclose(f_vjp((0.0, np.zeros(3)))[0], np.zeros(3))
    only_ys = f_vjp((0.0, np.ones(3)))[0]
    fy = lambda x: np.sum(f(x)[1])
    np.testing.assert_allclose(only_ys, num_jac(fy, xs), rtol=1e-6)
    g = lambda x: lax.cond(x > 0, lambda x: (x * 2.0, x), lambda x: (x, x), x)
    _, g_vjp = ad.vjp(g, 1.5)
    assert g_vjp((0.0, 0.0)) == (0.0,)
    np.testing.assert_allclose(g_vjp((1.0, 0.0))[0], 2.0)


def test_grad_of_vmap_and_vmap_of_grad(rng):
    a = np.array([0.5, 8.0, 27.0])
    bounded = lambda a: cube_root(a, max_steps=60)
    want = 1.0 / (3.0 * np.cbrt(a) ** 2)
    with np.errstate(all="ignore"):          # select evaluates both branches on every lane
        np.testing.assert_allclose(ad.vmap(ad.grad(bounded))(a), want, rtol=1e-10)
        np.testing.assert_allclose(ad.grad(lambda a: anp.sum(ad.vmap(bounded)(a)))(a), want,
                                   rtol=1e-10)
    ps = np.array([[2.0, 0.3], [1.0, 0.1], [3.0, 0.5]])
    loss = lambda p: rk4_final(p, Y0, n=15)[0]
    np.testing.assert_allclose(ad.vmap(ad.grad(loss))(ps), _loop(ad.grad(loss), ps), rtol=1e-10)
    np.testing.assert_allclose(ad.grad(lambda ps: anp.sum(ad.vmap(loss)(ps)))(ps),
                               _loop(ad.grad(loss), ps), rtol=1e-10)
    c = lambda x: lax.cond(x > 0.0, lambda y: anp.sin(y) * y, lambda y: y ** 3, x)
    xs = np.array([-1.0, 0.5, 2.0])
    want = np.where(xs > 0, np.cos(xs) * xs + np.sin(xs), 3 * xs ** 2)
    np.testing.assert_allclose(ad.vmap(ad.grad(c))(xs), want, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(ad.vmap(c)(x)))(xs), want, rtol=1e-12)


# ---------------------------------------------------------------------------
# nesting
# ---------------------------------------------------------------------------

def test_scan_inside_scan(rng):
    x = rng.uniform(0.1, 0.9, (4, 3))

    def f(x):
        def outer(c, row):
            inner_c, inner_ys = lax.scan(lambda d, v: (d * v + c, anp.sin(d)), c, row)
            return inner_c * 0.5, anp.sum(inner_ys)
        c, ys = lax.scan(outer, 1.0, x)
        return c + anp.sum(ys)

    def f_py(x):
        c = 1.0
        total = 0.0
        for row in x:
            d = c
            for v in row:
                total += np.sin(d)
                d = d * v + c
            c = d * 0.5
        return c + total
    np.testing.assert_allclose(f(x), f_py(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(f)(x), num_jac(f_py, x), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ad.jacfwd(f)(x), num_jac(f_py, x), rtol=1e-6, atol=1e-9)
    closed = check_against_interpreter(f, x)
    assert sum(e.primitive.name == "scan" for s in sub_jaxprs(closed.jaxpr) for e in s.eqns) == 1


def test_cond_inside_scan_and_while_inside_cond(rng):
    xs = rng.standard_normal(8)

    def f(w):
        def body(c, x):
            c = lax.cond(x > 0, lambda c: c * w + x, lambda c: anp.sin(c) - w * x, c)
            return c, c
        return anp.sum(lax.scan(body, 0.3, xs)[1])

    def f_py(w):
        c, total = 0.3, 0.0
        for x in xs:
            c = c * w + x if x > 0 else np.sin(c) - w * x
            total += c
        return total
    np.testing.assert_allclose(f(0.7), f_py(0.7), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(f)(0.7), num_jac(f_py, np.array(0.7)), rtol=1e-6)
    np.testing.assert_allclose(ad.hessian(f)(0.7), num_jac(ad.grad(f), np.array(0.7)),
                               rtol=1e-5)

    def g(a):
        return lax.cond(a > 1.0, lambda a: cube_root(a), lambda a: a, a)
    np.testing.assert_allclose(ad.jvp(g, (8.0,), (1.0,))[1], 1.0 / 12.0, rtol=1e-10)


# ---------------------------------------------------------------------------
# the IR: size independent of the loop length, printing
# ---------------------------------------------------------------------------

def test_ir_size_does_not_grow_with_length():
    def integrate(params, n):
        return rk4_final(params, Y0, n=n)
    small = ad.make_jaxpr(lambda p: integrate(p, 10))(P0)
    big = ad.make_jaxpr(lambda p: integrate(p, 100_000))(P0)
    assert count_eqns(small) == count_eqns(big) < 100
    # the same holds for the derivative programs
    g_small = ad.make_jaxpr(ad.grad(lambda p: integrate(p, 10)[0]))(P0)
    g_big = ad.make_jaxpr(ad.grad(lambda p: integrate(p, 100_000)[0]))(P0)
    assert count_eqns(g_small) == count_eqns(g_big)
    assert small.jaxpr.key(shapes=False) == big.jaxpr.key(shapes=False)


def test_pretty_printing_nests_sub_jaxprs():
    def f(x):
        c, ys = lax.scan(lambda c, x: (c + x, lax.cond(x > 0, anp.sin, anp.cos, c)), 0.0, x)
        return c, ys
    text = str(ad.make_jaxpr(f)(np.ones(3)))
    assert "scan[jaxpr=" in text and "cond[branches=(" in text
    assert "length=3 num_carry=1 num_consts=0 reverse=False" in text
    lines = text.splitlines()
    scan_line = next(i for i, l in enumerate(lines) if "scan[" in l)
    inner = lines[scan_line + 1]
    assert inner.startswith(" " * 8 + "{ lambda ;")     # nested one level deeper
    assert any(l.startswith(" " * 16 + "{ lambda") for l in lines)   # branches: two levels
    text = str(ad.make_jaxpr(cube_root)(8.0))
    assert "while[body_jaxpr=" in text and "cond_jaxpr=" in text and "max_steps=None" in text


def test_every_control_flow_primitive_has_every_rule():
    for name in ("cond", "while", "scan"):
        p = core.primitives[name]
        for rule in ("impl", "abstract_eval", "jvp", "batch", "transpose", "partial_eval"):
            assert getattr(p, rule, None) is not None, (name, rule)
        assert p.multiple_results and p.call_like


# ---------------------------------------------------------------------------
# checkpointed bodies
# ---------------------------------------------------------------------------

def test_scan_of_checkpointed_body_saves_less(rng):
    from autodiff.api import _Linearized
    from autodiff.tree_util import tree_flatten
    W = rng.standard_normal((8, 8)) * 0.3

    def body(h, _):
        for _ in range(4):
            h = anp.tanh(W @ h)
        return h, None

    def residual_bytes(b):
        f = lambda h0: anp.sum(lax.scan(b, h0, None, length=30)[0])
        flat, tree = tree_flatten((np.ones(8),))
        lin = _Linearized(f, flat, tree, False)
        return sum(np.asarray(r).nbytes for r in lin.residuals), ad.grad(f)(np.ones(8))

    cb = ad.checkpoint(body)
    plain_bytes, plain_g = residual_bytes(body)
    ckpt_bytes, ckpt_g = residual_bytes(cb)
    np.testing.assert_allclose(ckpt_g, plain_g, rtol=1e-12)
    assert ckpt_bytes < plain_bytes / 2


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_error_messages():
    with pytest.raises(DTypeError, match="carry"):
        lax.scan(lambda c, x: (c + x, None), 0, np.ones(3))          # int carry becomes float
    with pytest.raises(ShapeError, match="shape"):
        lax.scan(lambda c, x: (anp.stack([c, c]), None), 0.0, np.ones(3))
    with pytest.raises(TypeError, match="structure"):
        lax.scan(lambda c, x: ((c, c), None), 0.0, np.ones(3))
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(ShapeError, match="leading lengths"):
        lax.scan(lambda c, x: (c, None), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(ValueError, match="length="):
        lax.scan(lambda c, x: (c, None), 0.0, None)
    with pytest.raises(DTypeError, match="true_fun"):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), np.ones(2))
    with pytest.raises(ShapeError, match="pred must be a scalar"):
        lax.cond(np.ones(2) > 0, lambda: 1.0, lambda: 2.0)
    with pytest.raises(DTypeError, match="boolean scalar"):
        lax.while_loop(lambda x: x, lambda x: x + 1.0, 0.0)
    with pytest.raises(DTypeError, match="body_fun"):
        lax.while_loop(lambda x: x < 3, lambda x: x + 1.0, 0)
    with pytest.raises(ConcretizationError, match="ad.lax.scan") as info:
        lax.scan(lambda c, x: (c if x > 0 else -c, None), 1.0, np.ones(2))
    assert "test_control_flow.py" in str(info.value)       # names the user's line
    with pytest.raises(TypeError, match="max_steps"):
        lax.while_loop(lambda x: x < 3, lambda x: x + 1, 0, max_steps=2.5)


def test_python_if_on_traced_value_under_jit_points_to_lax():
    def f(x):
        if x > 0:
            return x
        return -x
    jf = _jit_or_skip(f)
    with pytest.raises(ConcretizationError, match="ad.lax.cond"):
        jf(1.0)


def test_while_on_values_runs_cond_once_per_step_in_every_mode():
    # inside jit the loop is traced (an effect in cond_fun is not also run on values)
    seen = []

    def f(a):
        def cond(x):
            ad.debug.callback(seen.append, x)
            return x < a
        return lax.while_loop(cond, lambda x: x + 1.0, 0.0)

    for g in (f, ad.jit(f), ad.grad(lambda a: f(a) * a)):
        seen.clear()
        g(3.0)
        assert [float(v) for v in seen] == [0.0, 1.0, 2.0, 3.0], g


def test_eager_while_loop_bodies_have_jax_functional_updates():
    """Outside transforms while_loop runs its functions on values, step by step; they
    see numpy arrays that also have ``.at[]`` (as traced values do), so a body written
    for jit (``ys.at[k].set(v).at[j].add(w)``, chained) runs as it is. It used to
    raise AttributeError: 'numpy.ndarray' object has no attribute 'at'. Results are
    plain numpy arrays, and they equal jit's and the gradient's."""
    def body(c):
        k, ys, s = c
        ys = ys.at[k].set(np.sin(k * 0.5) + ys[(k + 1) % 4]).at[(k + 2) % 4].add(0.25)
        return k + 1, ys, s + np.sum(ys)

    def f(y0):
        return lax.while_loop(lambda c: c[0] < 4, body, (0, y0, 0.0))
    y0 = np.linspace(0.0, 1.0, 4)
    got = f(y0)
    assert type(got[1]) is np.ndarray
    want = ad.jit(f)(y0)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)
    np.testing.assert_array_equal(y0, np.linspace(0.0, 1.0, 4))        # not written into
    g = ad.grad(lambda y0: f(y0)[2] + anp.sum(f(y0)[1] ** 2))(y0)
    np.testing.assert_allclose(g, ad.jit(ad.grad(lambda y0: ad.lax.while_loop(
        lambda c: c[0] < 4, body, (0, y0, 0.0), max_steps=4)[2] + anp.sum(ad.lax.while_loop(
            lambda c: c[0] < 4, body, (0, y0, 0.0), max_steps=4)[1] ** 2)))(y0), rtol=1e-12)
