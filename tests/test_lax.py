"""The rest of ``jax.lax``: associative_scan, cumulative reductions, sort_key_val, top_k,
reduce, reduce_window, conv_general_dilated, custom_root, custom_linear_solve,
map(batch_size=), the elementwise and structural wrappers. Checked against numpy/scipy
and closed forms, with gradients against finite differences, under jit and vmap."""
import math

import numpy as np
import pytest
import scipy.signal
import scipy.special

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax

RNG = np.random.default_rng(13)


# ---------------------------------------------------------------- associative_scan
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 16, 17])
def test_associative_scan_matches_sequential(n):
    x = RNG.normal(size=n)
    np.testing.assert_allclose(lax.associative_scan(anp.add, x), np.cumsum(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(lax.associative_scan(anp.maximum, x), np.maximum.accumulate(x))
    np.testing.assert_allclose(lax.associative_scan(anp.add, x, reverse=True),
                               np.cumsum(x[::-1])[::-1], rtol=1e-12, atol=1e-12)


def test_associative_scan_pytree_linear_recurrence_axis_and_noncommutative():
    """h_t = a_t h_{t-1} + b_t as a scan over affine maps (associative, not commutative)."""
    a, b = RNG.uniform(0.5, 1.0, size=(3, 11)), RNG.normal(size=(3, 11))
    combine = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
    A, B = lax.associative_scan(combine, (a, b), axis=1)
    h, want = np.zeros(3), []
    for t in range(11):
        h = a[:, t] * h + b[:, t]
        want.append(h)
    np.testing.assert_allclose(B, np.stack(want, 1), rtol=1e-12)
    np.testing.assert_allclose(A, np.cumprod(a, axis=1), rtol=1e-12)


def test_associative_scan_is_parallel_prefix_in_the_ir():
    n = 1024
    jaxpr = ad.make_jaxpr(lambda x: lax.associative_scan(anp.add, x))(np.ones(n))
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert not {"scan", "while", "cumsum"} & set(names)       # no sequential loop, no cumsum
    assert names.count("add") <= 2 * math.log2(n)               # two vectorized adds per level


@pytest.fixture(scope="module")
def scan_jit():
    combine = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
    return ad.jit(lambda a, b: lax.associative_scan(combine, (a, b))[1])


def test_associative_scan_jit_grad_vmap(scan_jit):
    a, b = RNG.uniform(0.5, 1.0, size=7), RNG.normal(size=7)
    f = lambda a, b: lax.associative_scan(lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (a, b))[1]
    np.testing.assert_allclose(scan_jit(a, b), f(a, b), rtol=1e-13)
    ad.check_grads(lambda a, b: anp.sum(anp.sin(f(a, b))), (a, b), order=2)
    av, bv = RNG.uniform(0.5, 1, size=(4, 7)), RNG.normal(size=(4, 7))
    np.testing.assert_allclose(ad.vmap(f)(av, bv), np.stack([f(x, y) for x, y in zip(av, bv)]), rtol=1e-13)


# ---------------------------------------------------------------- cumulative reductions
def test_cumlogsumexp_is_stable_and_exact():
    x = np.array([-1000.0, 0.0, 1000.0, 999.0, -5.0])
    want = [scipy.special.logsumexp(x[:i + 1]) for i in range(5)]
    np.testing.assert_allclose(lax.cumlogsumexp(x), want, rtol=1e-14)
    y = RNG.normal(size=(3, 6))
    np.testing.assert_allclose(lax.cumlogsumexp(y, axis=1, reverse=True),
                               np.log(np.cumsum(np.exp(y[:, ::-1]), axis=1))[:, ::-1], rtol=1e-12)
    ad.check_grads(lambda y: anp.sum(lax.cumlogsumexp(y, axis=1) ** 2), (y,), order=2)


def test_cummax_cummin_cumsum_cumprod():
    x = RNG.normal(size=(4, 5))
    np.testing.assert_array_equal(lax.cummax(x, axis=1), np.maximum.accumulate(x, axis=1))
    np.testing.assert_array_equal(lax.cummin(x, axis=0, reverse=True),
                                  np.minimum.accumulate(x[::-1], axis=0)[::-1])
    np.testing.assert_allclose(lax.cumsum(x, axis=1, reverse=True), np.cumsum(x[:, ::-1], 1)[:, ::-1])
    np.testing.assert_allclose(lax.cumprod(x), np.cumprod(x, axis=0))
    traced = ad.jit(lambda x: lax.cummax(x, axis=1), backend="interpret")(x)
    np.testing.assert_array_equal(traced, np.maximum.accumulate(x, axis=1))
    # d cummax: the gradient goes to the running maximum's position
    g = ad.grad(lambda v: anp.sum(lax.cummax(v)))(np.array([1.0, 3.0, 2.0, 4.0]))
    np.testing.assert_array_equal(g, [1.0, 2.0, 0.0, 1.0])


# ---------------------------------------------------------------- sorting
def test_sort_key_val_and_top_k():
    k = np.array([3, 1, 2, 1])
    v = np.array([30.0, 10.0, 20.0, 11.0])
    sk, sv = lax.sort_key_val(k, v)
    np.testing.assert_array_equal(sk, [1, 1, 2, 3])
    np.testing.assert_array_equal(sv, [10.0, 11.0, 20.0, 30.0])           # stable
    g = ad.grad(lambda v: anp.sum(lax.sort_key_val(k, v)[1] * np.arange(4.0)))(v)
    np.testing.assert_array_equal(g, [3.0, 0.0, 2.0, 1.0])
    x = RNG.normal(size=(3, 8))
    vals, idx = lax.top_k(x, 3)
    np.testing.assert_array_equal(idx, np.argsort(-x, axis=1)[:, :3])
    np.testing.assert_array_equal(vals, np.take_along_axis(x, idx, 1))
    tv, ti = lax.top_k(np.array([1.0, 5.0, 5.0, 2.0]), 2)
    np.testing.assert_array_equal(ti, [1, 2])                               # ties: lower index first
    gk = ad.grad(lambda x: anp.sum(lax.top_k(x, 2)[0]))(np.array([1.0, 5.0, 3.0, 2.0]))
    np.testing.assert_array_equal(gk, [0.0, 1.0, 1.0, 0.0])
    vi = ad.vmap(lambda r: lax.top_k(r, 2)[1])(x)
    np.testing.assert_array_equal(vi, np.argsort(-x, axis=1)[:, :2])


# ---------------------------------------------------------------- reduce
def test_reduce_monoids_and_generic():
    x = RNG.normal(size=(3, 4, 5))
    np.testing.assert_allclose(lax.reduce(x, 0.0, lax.add, (0, 2)), x.sum((0, 2)))
    np.testing.assert_allclose(lax.reduce(x, 2.0, lax.mul, (1,)), 2.0 * x.prod(1))
    np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, (2,)), x.max(2))
    # a computation it does not know: the balanced tree gives the same as numpy's
    f = lambda a, b: anp.logaddexp(a, b)
    np.testing.assert_allclose(lax.reduce(x, -np.inf, f, (1,)), scipy.special.logsumexp(x, axis=1), rtol=1e-13)
    # variadic: argmax
    def pick(a, b):
        take_b = anp.greater(b[0], a[0])
        return anp.where(take_b, b[0], a[0]), anp.where(take_b, b[1], a[1])
    idx = np.broadcast_to(np.arange(5), x.shape)
    m, i = lax.reduce((x, idx), (-np.inf, 0), pick, (2,))
    np.testing.assert_array_equal(i, x.argmax(2))
    np.testing.assert_array_equal(m, x.max(2))
    ad.check_grads(lambda x: anp.sum(lax.reduce(x, -np.inf, f, (1,))), (x,), order=1)


# ---------------------------------------------------------------- reduce_window
def _pool_ref(x, window, strides, op, init, pads):
    xp = np.pad(x, pads, constant_values=init)
    out_shape = [(n - w) // s + 1 for n, w, s in zip(xp.shape, window, strides)]
    out = np.empty(out_shape)
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + w) for i, s, w in zip(idx, strides, window))
        out[idx] = op(np.append(xp[sl].ravel(), init))
    return out


@pytest.mark.parametrize("padding", ["VALID", "SAME", ((1, 0), (0, 2))])
def test_reduce_window_pools(padding):
    x = RNG.normal(size=(5, 7))
    if padding == "VALID":
        pads = [(0, 0), (0, 0)]
    elif padding == "SAME":
        pads = [(0, 1), (0, 1)]           # out = ceil(n / s): 3, 4 with a 2x2 window, stride 2
    else:
        pads = list(padding)
    mx = lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), padding)
    np.testing.assert_array_equal(mx, _pool_ref(x, (2, 2), (2, 2), np.max, -np.inf, pads))
    sm = lax.reduce_window(x, 0.0, lax.add, (3, 2), (1, 2), padding if padding != "SAME" else "VALID")
    np.testing.assert_allclose(sm, _pool_ref(x, (3, 2), (1, 2), np.sum, 0.0,
                                             pads if padding != "SAME" else [(0, 0), (0, 0)]), rtol=1e-13)
    ad.check_grads(lambda x: anp.sum(lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 1), padding) ** 2),
                   (x,), order=1)


def test_reduce_window_dilation():
    x = np.arange(10.0)
    out = lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID", window_dilation=(3,))
    np.testing.assert_array_equal(out, x[:-3] + x[3:])
    up = lax.reduce_window(np.array([1.0, 2.0, 3.0]), 0.0, lax.add, (1,), (1,), "VALID", base_dilation=(2,))
    np.testing.assert_array_equal(up, [1.0, 0.0, 2.0, 0.0, 3.0])


# ---------------------------------------------------------------- convolution
def _conv_ref(x, w, strides, pads, lhs_dil, rhs_dil, groups):
    """Direct definition: N C S... × O I K... -> N O S'... (cross-correlation)."""
    ns = x.ndim - 2
    if any(d > 1 for d in lhs_dil):
        shape = x.shape[:2] + tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dil))
        xd = np.zeros(shape)
        xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in lhs_dil)] = x
        x = xd
    x = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    ks = w.shape[2:]
    eff = [(k - 1) * d + 1 for k, d in zip(ks, rhs_dil)]
    out_sp = [(n - e) // s + 1 for n, e, s in zip(x.shape[2:], eff, strides)]
    out = np.zeros((N, O) + tuple(out_sp))
    og = O // groups
    for o in range(O):
        g = o // og
        for pos in np.ndindex(*out_sp):
            for k in np.ndindex(*ks):
                sp = tuple(p * s + kk * d for p, s, kk, d in zip(pos, strides, k, rhs_dil))
                out[(slice(None), o) + pos] += x[(slice(None), slice(g * I, (g + 1) * I)) + sp] @ w[(o, slice(None)) + k]
    return out


CONV_CASES = [
    dict(x=(2, 3, 9), w=(4, 3, 3), strides=(1,), padding="VALID"),
    dict(x=(1, 2, 8), w=(2, 2, 3), strides=(2,), padding=((2, 1),)),
    dict(x=(2, 2, 6, 5), w=(3, 2, 3, 2), strides=(1, 2), padding="SAME"),
    dict(x=(1, 4, 5, 5), w=(6, 2, 2, 2), strides=(1, 1), padding="VALID", groups=2),
    dict(x=(1, 1, 4, 4), w=(1, 1, 3, 3), strides=(1, 1), padding=((2, 2), (2, 2)), lhs_dil=(2, 2)),
    dict(x=(1, 2, 9), w=(1, 2, 3), strides=(1,), padding="VALID", rhs_dil=(2,)),
]


def _same_pads(n, k, s, d):
    e = (k - 1) * d + 1
    out = -(-n // s)
    tot = max((out - 1) * s + e - n, 0)
    return (tot // 2, tot - tot // 2)


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"x{c['x']}w{c['w']}")
def test_conv_general_dilated_matches_definition(case):
    x, w = RNG.normal(size=case["x"]), RNG.normal(size=case["w"])
    ns = x.ndim - 2
    ld, rd, g = case.get("lhs_dil", (1,) * ns), case.get("rhs_dil", (1,) * ns), case.get("groups", 1)
    pad = case["padding"]
    if pad == "VALID":
        pads = [(0, 0)] * ns
    elif pad == "SAME":
        pads = [_same_pads(n, k, s, d) for n, k, s, d in zip(x.shape[2:], w.shape[2:], case["strides"], rd)]
    else:
        pads = list(pad)
    out = lax.conv_general_dilated(x, w, case["strides"], pad, lhs_dilation=ld, rhs_dilation=rd,
                                   feature_group_count=g)
    np.testing.assert_allclose(out, _conv_ref(x, w, case["strides"], pads, ld, rd, g), rtol=1e-12, atol=1e-12)


def test_conv_layouts_scipy_and_gradients():
    x, w = RNG.normal(size=(2, 7, 6, 3)), RNG.normal(size=(3, 2, 3, 4))      # NHWC, HWIO
    out = lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    ref = lax.conv_general_dilated(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), "VALID")
    np.testing.assert_allclose(out, ref.transpose(0, 2, 3, 1), rtol=1e-12)
    # one channel: scipy's correlate
    a, k = RNG.normal(size=(8, 9)), RNG.normal(size=(3, 2))
    np.testing.assert_allclose(lax.conv(a[None, None], k[None, None], (1, 1), "VALID")[0, 0],
                               scipy.signal.correlate2d(a, k, mode="valid"), rtol=1e-12)
    xs, ws = RNG.normal(size=(1, 2, 5, 4)), RNG.normal(size=(2, 2, 2, 2))
    f = lambda x, w: anp.sum(anp.tanh(lax.conv_general_dilated(x, w, (2, 1), "SAME", rhs_dilation=(1, 2))))
    ad.check_grads(f, (xs, ws), order=1)
    vm = ad.vmap(lambda x: lax.conv(x[None], ws, (1, 1), "VALID")[0])(xs[0][None].repeat(3, 0))
    assert vm.shape == (3, 2, 4, 3)


def test_conv_under_jit():
    xs, ws = RNG.normal(size=(2, 2, 6, 5)), RNG.normal(size=(3, 2, 3, 2))
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 2), "SAME")
    np.testing.assert_allclose(ad.jit(f)(xs, ws), f(xs, ws), rtol=1e-12)


# ---------------------------------------------------------------- implicit solves
def _newton(f, x0):
    x = x0
    for _ in range(40):
        x = x - f(x) / ad.grad(f)(x)
    return x


def test_custom_root_scalar_grad_jvp_and_jit():
    def cube_root(a):
        return lax.custom_root(lambda x: x ** 3 - a, 1.0, _newton, lambda g, y: y / g(1.0))
    for a in (2.0, 8.0, 27.0):
        assert abs(cube_root(a) - a ** (1 / 3)) < 1e-12
        np.testing.assert_allclose(ad.grad(cube_root)(a), a ** (-2 / 3) / 3, rtol=1e-12)
        np.testing.assert_allclose(ad.jvp(cube_root, (a,), (1.0,))[1], a ** (-2 / 3) / 3, rtol=1e-12)
        np.testing.assert_allclose(ad.grad(ad.grad(cube_root))(a), -2 / 9 * a ** (-5 / 3), rtol=1e-9)
    np.testing.assert_allclose(ad.jit(ad.grad(cube_root))(8.0), 1 / 12, rtol=1e-12)


def test_custom_root_vector_with_closed_over_matrix():
    """Root of A x + sin(x) - b: dx/db = (A + diag cos x)⁻¹."""
    A = np.array([[3.0, 0.5], [0.2, 2.0]])

    def solve(f, x0):
        x = x0
        for _ in range(50):
            x = x - anp.linalg.solve(ad.jacobian(f)(x), f(x))
        return x

    def root(b, A):
        return lax.custom_root(lambda x: A @ x + anp.sin(x) - b, np.zeros(2), solve,
                               lambda g, y: anp.linalg.solve(ad.jacobian(g)(y), y))
    b = np.array([1.0, -0.5])
    x = root(b, A)
    np.testing.assert_allclose(A @ x + np.sin(x), b, atol=1e-12)
    J = A + np.diag(np.cos(x))
    np.testing.assert_allclose(ad.jacrev(root)(b, A), np.linalg.inv(J), rtol=1e-10)
    np.testing.assert_allclose(ad.jacfwd(root)(b, A), np.linalg.inv(J), rtol=1e-10)
    # ∂x/∂A_ij = -J⁻¹ e_i x_j
    gA = ad.jacrev(root, argnums=1)(b, A)
    want = -np.einsum("ki,j->kij", np.linalg.inv(J), x)
    np.testing.assert_allclose(gA, want, rtol=1e-10)


def _cg(matvec, b, iters=50):
    """Conjugate gradients in a lax.while_loop: not reverse-differentiable itself."""
    def body(s):
        x, r, p, k = s
        Ap = matvec(p)
        alpha = anp.dot(r, r) / anp.dot(p, Ap)
        x, r_new = x + alpha * p, r - alpha * Ap
        beta = anp.dot(r_new, r_new) / anp.dot(r, r)
        return x, r_new, r_new + beta * p, k + 1
    cond = lambda s: anp.logical_and(s[3] < iters, anp.sqrt(anp.dot(s[1], s[1])) > 1e-14)
    x0 = anp.zeros_like(b)
    return lax.while_loop(cond, body, (x0, b, b, 0))[0]


def test_custom_linear_solve_implicit_gradients():
    M = RNG.normal(size=(4, 4))
    A = M @ M.T + 4 * np.eye(4)
    b = RNG.normal(size=4)

    def f(b, A):
        return lax.custom_linear_solve(lambda v: A @ v, b, lambda mv, r: _cg(mv, r), symmetric=True)
    x = f(b, A)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10)
    np.testing.assert_allclose(ad.jacrev(f)(b, A), np.linalg.inv(A), rtol=1e-8, atol=1e-10)
    # d sum(x) / dA = -A⁻ᵀ 1 xᵀ
    gA = ad.grad(lambda A: anp.sum(f(b, A)))(A)
    np.testing.assert_allclose(gA, -np.outer(np.linalg.solve(A.T, np.ones(4)), x), rtol=1e-8)
    np.testing.assert_allclose(ad.jit(ad.grad(lambda b: anp.sum(f(b, A))))(b),
                               np.linalg.solve(A.T, np.ones(4)), rtol=1e-8)


def test_custom_linear_solve_nonsymmetric_needs_transpose_solve():
    A = np.array([[2.0, 1.0], [0.0, 3.0]])
    solve = lambda mv, r: anp.linalg.solve(A, r)
    tsolve = lambda vm, r: anp.linalg.solve(A.T, r)
    f = lambda b: lax.custom_linear_solve(lambda v: A @ v, b, solve, transpose_solve=tsolve)
    np.testing.assert_allclose(ad.jacrev(f)(np.ones(2)), np.linalg.inv(A), rtol=1e-12)
    g = lambda b: lax.custom_linear_solve(lambda v: A @ v, b, solve)
    with pytest.raises(TypeError, match="transpose_solve"):
        ad.grad(lambda b: anp.sum(g(b)))(np.ones(2))


# ---------------------------------------------------------------- map(batch_size=) and wrappers
@pytest.mark.parametrize("bs", [1, 3, 7, 10])
def test_map_batch_size(bs):
    xs = {"a": RNG.normal(size=(7, 2)), "b": np.arange(7.0)}
    f = lambda d: anp.sum(d["a"] ** 2) + d["b"]
    np.testing.assert_allclose(lax.map(f, xs, batch_size=bs), lax.map(f, xs), rtol=1e-14)
    g = ad.grad(lambda a: anp.sum(lax.map(lambda r: anp.sin(r), a, batch_size=bs)))(xs["a"])
    np.testing.assert_allclose(g, np.cos(xs["a"]), rtol=1e-14)


def test_elementwise_and_structural_wrappers():
    np.testing.assert_array_equal(lax.div(np.array([7, -7]), np.array([2, 2])), [3, -3])   # toward zero
    np.testing.assert_array_equal(lax.rem(np.array([7.0, -7.0]), 2.0), [1.0, -1.0])
    np.testing.assert_array_equal(lax.round(np.array([0.5, 1.5, -0.5])), [1.0, 2.0, -1.0])
    np.testing.assert_array_equal(lax.round(np.array([0.5, 1.5]), 1), [0.0, 2.0])
    np.testing.assert_array_equal(lax.clamp(0.0, np.array([-1.0, 0.5, 3.0]), 1.0), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(lax.logistic(0.0), 0.5)
    np.testing.assert_array_equal(lax.pad(np.arange(3.0), -1.0, [(1, -1, 1)]), [-1.0, 0.0, -1.0, 1.0, -1.0])
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 1), [[0, 1, 2], [0, 1, 2]])
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, 0), [0, 1, 1, 0])
    x = RNG.normal(size=(2, 3, 4))
    y = RNG.normal(size=(2, 4, 5))
    np.testing.assert_allclose(lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), x @ y, rtol=1e-13)
    np.testing.assert_array_equal(lax.collapse(x, 1), x.reshape(2, 12))
    assert lax.max is not max and lax.max(1.0, 2.0) == 2.0
    assert "max" not in lax.__all__ and "associative_scan" in lax.__all__


def test_reduce_max_min_of_empty_axes_give_the_identity():
    # JAX's lax.reduce_max/min: -inf/+inf (the integer extremes, False/True) where the
    # reduced axes are empty; numpy (and anp.max) raise there
    cases = [(np.zeros((0, 3)), -np.inf, np.inf),
             (np.zeros((2, 0, 3), np.int32), np.iinfo(np.int32).min, np.iinfo(np.int32).max),
             (np.zeros((0, 2), bool), False, True)]
    for x, lo, hi in cases:
        f = lambda x: (ad.lax.reduce_max(x, (0, 1) if x.ndim == 3 else (0,)),
                       ad.lax.reduce_min(x, (0, 1) if x.ndim == 3 else (0,)))
        for got in (f(x), ad.jit(f)(x), ad.vmap(f)(x[None])[0:2]):
            got = [np.asarray(g).reshape(-1) for g in got]
            assert got[0].size and (got[0] == lo).all() and (got[1] == hi).all()
            assert got[0].dtype == x.dtype
    x = np.array([[1.0, -2.0], [3.0, 0.5]])                   # non-empty: unchanged
    np.testing.assert_array_equal(ad.lax.reduce_max(x, (0,)), [3.0, 0.5])


def test_sort_with_several_keys_is_lexicographic_and_differentiable():
    rng = np.random.default_rng(5)
    k1 = rng.integers(0, 3, (4, 12))
    k2 = rng.integers(0, 2, (4, 12)).astype(np.float64)
    v = rng.normal(size=(4, 12))
    idx = np.lexsort((k2, k1), axis=-1)                  # k1 first, then k2, stable
    for run in (ad.lax.sort, ad.jit(ad.lax.sort, static_argnames="num_keys")):
        a, b, c = run((k1, k2, v), num_keys=2)
        np.testing.assert_array_equal(a, np.take_along_axis(k1, idx, -1))
        np.testing.assert_array_equal(b, np.take_along_axis(k2, idx, -1))
        np.testing.assert_array_equal(c, np.take_along_axis(v, idx, -1))
    w = np.arange(12.0)
    g = ad.grad(lambda c: anp.sum(ad.lax.sort((k1, k2, c), num_keys=2)[2] * w))(v)
    np.testing.assert_allclose(np.take_along_axis(g, idx, -1), np.broadcast_to(w, v.shape))
    with pytest.raises(ValueError, match="num_keys=3"):
        ad.lax.sort((k1, v), num_keys=3)
