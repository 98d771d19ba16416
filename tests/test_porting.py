"""Ports by changing imports: autograd's ``misc``, ``test_util``, ``builtins``,
``hessian_vector_product``; JAX's ``example_libraries``; ``scipy.signal``.

Reference numbers were produced once with autograd 1.7 and JAX 0.10 (x64) on the same
inputs and are written here; neither library is imported by the tests.
"""
import numpy as np
import pytest
import scipy.signal

import autodiff as ad
import autodiff.numpy as anp
from autodiff.builtins import dict as ag_dict, isinstance as ag_isinstance, list as ag_list
from autodiff.builtins import tuple as ag_tuple, type as ag_type
from autodiff.example_libraries import optimizers as jopt
from autodiff.example_libraries import stax
from autodiff.misc import flatten, flatten_func
from autodiff.misc import optimizers as agopt
from autodiff.misc.fixed_points import fixed_point
from autodiff.scipy.signal import convolve, convolve2d, correlate, correlate2d
from autodiff.test_util import check_grads

C = np.array([1.0, 4.0])           # the fixed quadratic 0.5 Σ c x², gradient c·x


# ----------------------------------------------------------------------------
# autograd.misc.flatten

def test_flatten_roundtrip_shapes_dtypes_and_order():
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": (np.float32(2.5), [np.array([7, 8])])}
    vec, unflatten = flatten(tree)
    # dict keys sorted, leaves raveled in order: b's float32 scalar, b's ints, w
    np.testing.assert_array_equal(vec, [2.5, 7, 8, 0, 1, 2, 3, 4, 5])
    assert vec.dtype == np.float64
    back = unflatten(vec)
    assert back["b"][0].dtype == np.float32 and back["b"][1][0].dtype == np.int64
    np.testing.assert_array_equal(back["w"], tree["w"])
    assert flatten(())[0].shape == (0,)


def test_flatten_is_differentiable_both_ways():
    tree = {"a": np.array([1.0, 2.0]), "b": 3.0}
    vec, unflatten = flatten(tree)
    g = ad.grad(lambda v: anp.sum(unflatten(v)["a"] ** 2) * unflatten(v)["b"])(vec)
    np.testing.assert_allclose(g, [6.0, 12.0, 5.0])        # ∂/∂a = 2ab, ∂/∂b = Σa²
    g = ad.grad(lambda t: anp.sum(flatten(t)[0] ** 3))(tree)
    np.testing.assert_allclose(g["a"], [3.0, 12.0])
    np.testing.assert_allclose(g["b"], 27.0)


def test_flatten_func():
    f, unflatten, x = flatten_func(lambda p, s: {"y": p[0] * s, "z": p[1] ** 2}, (np.ones(2), 3.0))
    np.testing.assert_allclose(f(x, 2.0), [2.0, 2.0, 9.0])
    np.testing.assert_allclose(ad.jacobian(f)(x, 2.0), [[2, 0, 0], [0, 2, 0], [0, 0, 6]])


# ----------------------------------------------------------------------------
# autograd.misc.optimizers: trajectories on the quadratic, callback protocol

AUTOGRAD_TRAJECTORIES = {   # x before each of 3 iterations, then the result (autograd 1.7)
    "sgd": (dict(step_size=0.1, mass=0.9),
            [[1.0, -0.5], [0.99, -0.48], [0.9711, -0.4428], [0.944379, -0.391608]]),
    "rmsprop": (dict(step_size=0.1),
                [[1.0, -0.5], [0.900000001, -0.3245883976770556],
                 [0.8091326219024965, -0.2123679289706136], [0.7260460379553575, -0.13719271158487062]]),
    "adam": (dict(step_size=0.1),
             [[1.0, -0.5], [0.900000001, -0.4000000005], [0.8004122297123382, -0.30118742062343007],
              [0.701586274504415, -0.2048712509707239]]),
}


@pytest.mark.parametrize("name", sorted(AUTOGRAD_TRAJECTORIES))
def test_autograd_optimizer_trajectory_and_callback(name):
    kwargs, expected = AUTOGRAD_TRAJECTORIES[name]
    seen = []

    def loss(p, i):
        return 0.5 * anp.sum(C * p["a"] ** 2)

    def callback(x, i, g):
        assert set(x) == {"a"} and set(g) == {"a"}         # the structure of x0
        np.testing.assert_allclose(g["a"], C * x["a"])
        seen.append((i, x["a"].copy()))

    out = getattr(agopt, name)(ad.grad(loss), {"a": np.array([1.0, -0.5])}, callback=callback,
                               num_iters=3, **kwargs)
    assert [i for i, _ in seen] == [0, 1, 2]
    np.testing.assert_allclose([x for _, x in seen] + [out["a"]], expected, rtol=1e-12, atol=1e-15)


def test_autograd_optimizer_on_nested_pytree_converges():
    def loss(p, i):
        w, (b, c) = p
        return anp.sum((w - 1.0) ** 2) + (b + 2.0) ** 2 + anp.sum(c ** 2)
    w, (b, c) = agopt.adam(ad.grad(loss), (np.zeros(3), (0.5, np.ones(2))), num_iters=400,
                           step_size=0.05)
    np.testing.assert_allclose(w, 1.0, atol=1e-3)
    np.testing.assert_allclose([b, *c], [-2.0, 0.0, 0.0], atol=1e-3)


# ----------------------------------------------------------------------------
# jax.example_libraries.optimizers

JAX_TRAJECTORIES = {   # params after each of 3 updates from [1, -0.5] (JAX 0.10, x64)
    "sgd": ((0.1,), [[0.9, -0.3], [0.81, -0.18], [0.729, -0.108]]),
    "momentum": ((0.1, 0.9), [[0.9, -0.3], [0.72, 0.0], [0.486, 0.27]]),
    "nesterov": ((0.1, 0.9), [[0.81, -0.12], [0.5751, 0.1332], [0.327321, 0.216648]]),
    "adagrad": ((0.1,), [[0.99, -0.49], [0.973964554020799, -0.47400071417640344],
                         [0.9538414350174558, -0.45399483133622837]]),
    "rmsprop": ((0.1,), [[0.6837722497945491, -0.183772237936009],
                         [0.4988706266547627, -0.06953148413139647],
                         [0.36918057387599246, -0.024435296572975884]]),
    "rmsprop_momentum": ((0.1,), [[0.6837722497945491, -0.183772237936009],
                                  [0.21426565146985693, 0.21507350172619544],
                                  [-0.2682567097274776, 0.44530850488992935]]),
    "adam": ((0.1,), [[0.900000001, -0.4000000005], [0.8004122297123382, -0.30118742062343007],
                      [0.701586274504415, -0.2048712509707239]]),
    "adamax": ((0.1,), [[0.900000001, -0.4000000005], [0.8051683281175395, -0.3104367534375959],
                        [0.7154994747395158, -0.2309097532446795]]),
    "sm3": ((0.1,), [[0.99, -0.49], [0.973964554020799, -0.47400071417640344],
                     [0.9538414350174558, -0.45399483133622837]]),
}


@pytest.mark.parametrize("name", sorted(JAX_TRAJECTORIES))
def test_jax_optimizer_trajectory(name):
    args, expected = JAX_TRAJECTORIES[name]
    opt_init, opt_update, get_params = getattr(jopt, name)(*args)
    state = opt_init(np.array([1.0, -0.5]))
    got = []
    for i in range(3):
        state = opt_update(i, C * get_params(state), state)
        got.append(get_params(state))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_jax_sm3_on_a_matrix():
    opt_init, opt_update, get_params = jopt.sm3(0.1)
    w = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    state = opt_init(np.array([[1.0, -2.0, 0.5], [0.3, 1.5, -1.0]]))
    for i in range(2):
        state = opt_update(i, 2 * w * get_params(state), state)
    np.testing.assert_allclose(get_params(state),
                               [[0.9746361704520443, -1.973946676314825, 0.4775505595548536],
                                [0.2740497790315252, 1.4739526206586837, -0.973964554020799]],
                               rtol=1e-12)


@pytest.mark.parametrize("name,schedule,expected", [
    ("exponential_decay", jopt.exponential_decay(0.1, 10, 0.5),
     [0.1, 0.07071067811865477, 0.06155722066724582, 0.05, 0.03535533905932738]),
    ("inverse_time_decay", jopt.inverse_time_decay(0.1, 10, 0.5),
     [0.1, 0.08, 0.07407407407407407, 0.06666666666666667, 0.05714285714285715]),
    ("staircase", jopt.inverse_time_decay(0.1, 10, 0.5, staircase=True),
     [0.1, 0.1, 0.1, 0.06666666666666667, 0.06666666666666667]),
    ("polynomial_decay", jopt.polynomial_decay(0.1, 10, 0.01, 2.0), [0.1, 0.0325, 0.0181, 0.01, 0.01]),
    ("piecewise_constant", jopt.piecewise_constant([5, 10], [1.0, 0.5, 0.1]), [1.0, 1.0, 0.5, 0.5, 0.1]),
])
def test_jax_schedules(name, schedule, expected):
    steps = [0, 5, 7, 10, 15]
    np.testing.assert_allclose([float(schedule(i)) for i in steps], expected, rtol=1e-12)
    # traced step numbers (inside jit or scan) give the same values
    traced = ad.lax.scan(lambda c, i: (c, anp.asarray(schedule(i), np.float64)), 0.0,
                         np.array(steps))[1]
    np.testing.assert_allclose(traced, expected, rtol=1e-12)


def test_jax_optimizer_state_is_a_pytree_through_scan_and_pack():
    opt_init, opt_update, get_params = jopt.adam(0.1)
    params = {"w": np.array([1.0, -0.5]), "b": (np.ones((2, 2)),)}
    loss = lambda p: 0.5 * anp.sum(C * p["w"] ** 2) + anp.sum(p["b"][0] ** 2)
    state = opt_init(params)

    def step(state, i):
        return opt_update(i, ad.grad(loss)(get_params(state)), state), None
    scanned = get_params(ad.lax.scan(step, state, np.arange(3))[0])
    np.testing.assert_allclose(scanned["w"], JAX_TRAJECTORIES["adam"][1][-1], rtol=1e-12)
    eager = state
    for i in range(3):
        eager = step(eager, i)[0]
    np.testing.assert_allclose(get_params(eager)["b"][0], scanned["b"][0], rtol=1e-12)
    repacked = jopt.pack_optimizer_state(jopt.unpack_optimizer_state(eager))
    np.testing.assert_allclose(get_params(repacked)["w"], get_params(eager)["w"])
    assert repacked.tree_def == eager.tree_def


def test_l2_norm_and_clip_grads():
    assert float(jopt.l2_norm([np.array([3.0]), np.array([4.0])])) == 5.0
    np.testing.assert_allclose(jopt.clip_grads({"a": np.array([3.0, 4.0])}, 1.0)["a"], [0.6, 0.8])
    np.testing.assert_allclose(jopt.clip_grads({"a": np.array([0.3, 0.4])}, 1.0)["a"], [0.3, 0.4])


# ----------------------------------------------------------------------------
# jax.example_libraries.stax

def _mlp():
    return stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(8), stax.Relu, stax.Dense(3),
                       stax.LogSoftmax)


def test_stax_dense_shapes_and_glorot_statistics():
    init_fun, _ = stax.Dense(300, b_init=stax.zeros)
    out_shape, (W, b) = init_fun(np.random.default_rng(0), (-1, 200))
    assert out_shape == (-1, 300) and W.shape == (200, 300) and b.shape == (300,)
    sigma = np.sqrt(2.0 / (200 + 300))               # Glorot: variance 2/(fan_in + fan_out)
    assert abs(W.std() / sigma - 1) < 0.02
    assert np.abs(W).max() <= 2 * sigma / 0.87962566103423978 + 1e-12   # truncated at 2σ'
    _, (W_key, _) = init_fun(ad.random.key(0), (-1, 200))
    assert abs(W_key.std() / sigma - 1) < 0.02


def test_stax_mlp_output_and_gradient():
    init_fun, apply_fun = _mlp()
    out_shape, params = init_fun(ad.random.key(1), (-1, 5))
    assert out_shape == (-1, 3)
    x = np.random.default_rng(1).standard_normal((4, 5))
    logp = apply_fun(params, x)
    np.testing.assert_allclose(np.exp(logp).sum(1), 1.0, rtol=1e-12)
    W1, b1 = params[0]
    h = np.maximum(np.tanh(x @ W1 + b1) @ params[2][0] + params[2][1], 0)
    z = h @ params[4][0] + params[4][1]
    np.testing.assert_allclose(logp, z - np.log(np.exp(z).sum(1, keepdims=True)), rtol=1e-12)
    check_grads(lambda p: apply_fun(p, x)[:, 0].sum(), (params,), order=1, modes=["rev"])


def test_stax_conv_matches_direct_loops_and_layouts_agree():
    rng = np.random.default_rng(2)
    init_fun, apply_fun = stax.Conv(3, (2, 3), strides=(1, 2), padding="SAME")
    out_shape, (W, b) = init_fun(rng, (2, 5, 7, 4))
    assert out_shape == (2, 5, 4, 3) and W.shape == (2, 3, 4, 3) and b.shape == (1, 1, 1, 3)
    x = rng.standard_normal((2, 5, 7, 4))
    y = apply_fun((W, b), x)
    xp = np.pad(x, ((0, 0), (0, 1), (1, 1), (0, 0)))     # SAME: H pads (0, 1), W pads (1, 1)
    ref = np.empty((2, 5, 4, 3))
    for i in range(5):
        for j in range(4):
            ref[:, i, j] = np.einsum("nhwc,hwco->no", xp[:, i:i + 2, 2 * j:2 * j + 3], W)
    np.testing.assert_allclose(y, ref + b, rtol=1e-12, atol=1e-12)
    # the same convolution in NCHW / OIHW layout
    _, apply_nchw = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 3), (1, 2), "SAME")
    y2 = apply_nchw((np.transpose(W, (3, 2, 0, 1)), np.transpose(b, (0, 3, 1, 2))),
                    np.transpose(x, (0, 3, 1, 2)))
    np.testing.assert_allclose(np.transpose(y2, (0, 2, 3, 1)), y, rtol=1e-12, atol=1e-12)


def test_stax_pooling_values_and_shapes():
    x = np.arange(2 * 4 * 5 * 1, dtype=float).reshape(2, 4, 5, 1)
    init_fun, apply_fun = stax.MaxPool((2, 2), strides=(2, 2))
    assert init_fun(None, x.shape)[0] == (2, 2, 2, 1)
    np.testing.assert_array_equal(apply_fun((), x)[0, :, :, 0], [[6, 8], [16, 18]])
    init_fun, apply_fun = stax.SumPool((2, 2), strides=(2, 2), padding="SAME")
    assert init_fun(None, x.shape)[0] == (2, 2, 3, 1)
    np.testing.assert_array_equal(apply_fun((), x)[0, :, :, 0], [[12, 20, 13], [52, 60, 33]])
    _, apply_fun = stax.AvgPool((2, 2), strides=(2, 2), padding="SAME")
    # windows cut by the border are averaged over the entries inside the input
    np.testing.assert_array_equal(apply_fun((), x)[0, :, :, 0], [[3, 5, 6.5], [13, 15, 16.5]])


def test_stax_combinators_batchnorm_dropout_under_jit_grad_vmap():
    init_fun, apply_fun = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
        stax.MaxPool((2, 2), (2, 2)), stax.Flatten,
        stax.FanOut(2), stax.parallel(stax.Dense(3), stax.serial(stax.Dense(3), stax.Softplus)),
        stax.FanInConcat(), stax.Dropout(0.8), stax.Dense(2), stax.LogSoftmax)
    out_shape, params = init_fun(ad.random.key(3), (-1, 6, 6, 2))
    assert out_shape == (-1, 2)
    x = np.random.default_rng(3).standard_normal((5, 6, 6, 2))
    key = ad.random.key(4)
    y = apply_fun(params, x, rng=key)
    assert y.shape == (5, 2)
    np.testing.assert_allclose(ad.jit(apply_fun)(params, x, rng=key), y, rtol=1e-10)
    loss = lambda p: -apply_fun(p, x, rng=key)[:, 1].mean()
    check_grads(loss, (params,), order=1, modes=["rev"], atol=1e-4, rtol=1e-4)
    per_example = ad.vmap(lambda xi: apply_fun(params, xi[None], rng=key)[0])(x)
    assert per_example.shape == (5, 2)
    with pytest.raises(ValueError, match="rng"):
        stax.Dropout(0.5)[1]((), x)
    np.testing.assert_array_equal(stax.Dropout(0.5, mode="test")[1]((), x), x)


def test_stax_dropout_keeps_rate_fraction_and_rescales():
    _, apply_fun = stax.Dropout(0.75)
    y = apply_fun((), np.ones(20000), rng=ad.random.key(5))
    kept = y != 0
    assert abs(kept.mean() - 0.75) < 0.015
    np.testing.assert_allclose(y[kept], 1 / 0.75)


# ----------------------------------------------------------------------------
# autograd.misc.fixed_points

def test_fixed_point_value_and_implicit_derivative():
    a = 0.8
    solve = lambda a: fixed_point(lambda a: lambda x: anp.cos(a * x), a, 0.5,
                                  lambda x, y: anp.abs(x - y), 1e-14)
    x = float(solve(a))
    assert abs(x - np.cos(a * x)) < 1e-13
    # x = cos(ax)  ⇒  dx/da = -x sin(ax) / (1 + a sin(ax))
    s = np.sin(a * x)
    np.testing.assert_allclose(ad.grad(solve)(a), -x * s / (1 + a * s), rtol=1e-10)
    np.testing.assert_allclose(ad.jit(ad.grad(solve))(a), -x * s / (1 + a * s), rtol=1e-10)


def test_fixed_point_vector_parameters():
    # x = A x + b has x* = (I - A)^{-1} b; d(Σ x*)/db = (I - A)^{-T} 1
    A = np.array([[0.2, 0.1], [0.0, 0.4]])
    f = lambda b: lambda x: A @ x + b
    dist = lambda x, y: anp.sqrt(anp.sum((x - y) ** 2))
    b = np.array([1.0, 2.0])
    loss = lambda b: anp.sum(fixed_point(f, b, np.zeros(2), dist, 1e-13))
    np.testing.assert_allclose(ad.grad(loss)(b), np.linalg.solve((np.eye(2) - A).T, np.ones(2)),
                               rtol=1e-10)


# ----------------------------------------------------------------------------
# test_util, builtins, hessian_vector_product

def test_check_grads_both_signatures_and_it_can_fail():
    f = lambda x, y: anp.sum(anp.sin(x) * y ** 2)
    check_grads(f, (np.array([0.3, 1.1]), np.array([2.0, -1.0])), order=2)        # JAX
    check_grads(f, modes=["rev"], order=1)(np.array([0.3, 1.1]), np.array([2.0, -1.0]))
    check_grads(f, argnum=1)(np.array([0.3, 1.1]), np.array([2.0, -1.0]))          # autograd
    check_grads(f, 1)(np.array([0.3, 1.1]), np.array([2.0, -1.0]))

    @ad.custom_jvp
    def wrong(x):
        return x ** 2

    @wrong.defjvp
    def wrong_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return x ** 2, 3 * x * t                     # should be 2·x·t
    with pytest.raises(AssertionError, match="JVP"):
        check_grads(wrong, (1.3,), order=1)
    with pytest.raises(AssertionError):
        check_grads(wrong, modes=["fwd"], order=1)(1.3)


def test_builtins_containers_and_isinstance():
    def f(x):
        assert ag_isinstance(x, np.ndarray) and ag_type(x) is np.ndarray
        t = ag_tuple((x, 2 * x))
        l = ag_list([x ** 2])
        d = ag_dict(a=x, b=t)
        assert ag_isinstance(t, tuple) and ag_isinstance(l, list) and ag_isinstance(d, dict)
        return anp.sum(d["b"][1] * l[0])
    np.testing.assert_allclose(ad.grad(f)(np.array([1.0, 2.0])), [6.0, 24.0])   # d(2x³) = 6x²
    assert not ag_isinstance(1.0, np.ndarray) and ag_type(1.0) is float


def test_hessian_vector_product():
    hvp = ad.hessian_vector_product(lambda c, x: c * anp.sum(x ** 3) + x[0] * x[1], argnum=1)
    x, v = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    # H = diag(6 c x) + [[0, 1], [1, 0]]
    np.testing.assert_allclose(hvp(2.0, x, v), [12 * 1 - 1, -24 + 1])


# ----------------------------------------------------------------------------
# scipy.signal

@pytest.mark.parametrize("sa,sb", [((7,), (3,)), ((3,), (6,)), ((5, 6), (2, 3)), ((2, 3), (4, 6)),
                                   ((4, 3), (2, 5)), ((3, 4, 5), (2, 2, 3))])
@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve_and_correlate_match_scipy(sa, sb, mode):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    try:
        ref = scipy.signal.convolve(a, b, mode, method="direct")
    except ValueError:
        with pytest.raises(ValueError):
            convolve(a, b, mode)
        return
    np.testing.assert_allclose(convolve(a, b, mode), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(correlate(a, b, mode),
                               scipy.signal.correlate(a, b, mode, method="direct"),
                               rtol=1e-12, atol=1e-12)


def test_convolve2d_and_gradients():
    rng = np.random.default_rng(5)
    a, k = rng.standard_normal((6, 5)), rng.standard_normal((3, 2))
    for mode in ("full", "valid", "same"):
        np.testing.assert_allclose(convolve2d(a, k, mode), scipy.signal.convolve2d(a, k, mode),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(correlate2d(a, k, mode), scipy.signal.correlate2d(a, k, mode),
                                   rtol=1e-12, atol=1e-12)
    check_grads(lambda a, k: convolve2d(a, k, "same"), (a, k), order=2)
    with pytest.raises(NotImplementedError):
        convolve2d(a, k, boundary="wrap")


def test_convolve_autograd_tensor_form_matches_convnet_layout():
    # autograd's convnet: inputs (N, C, H, W) with weights (C, O, kh, kw) -> (N, O, H', W')
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 3, 6, 7)), rng.standard_normal((3, 4, 3, 2))
    y = convolve(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [0]), mode="valid")
    ref = np.array([[sum(scipy.signal.convolve2d(x[n, c], w[c, o], "valid") for c in range(3))
                     for o in range(4)] for n in range(2)])
    np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-12)
    y_swapped = convolve(w, x, ([2, 3], [2, 3]), ([0], [1]), mode="valid")   # positional form
    np.testing.assert_allclose(y_swapped, np.transpose(ref, (1, 0, 2, 3)), rtol=1e-12, atol=1e-12)
    full = convolve(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [0]))
    assert full.shape == (2, 4, 8, 8)
    check_grads(lambda w: convolve(x, w, axes=([2, 3], [2, 3]), dot_axes=([1], [0]),
                                   mode="valid"), (w,), order=1)


def test_fixed_point_second_derivative_is_implicit_too():
    sqrt = lambda a: fixed_point(lambda a: lambda x: 0.5 * (x + a / x), a, 10.0,
                                 lambda x, y: anp.abs(x - y), 1e-12)
    np.testing.assert_allclose(ad.grad(ad.grad(sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-9)


@pytest.mark.parametrize("padding,expected", [
    # x = [1, 2, 3] dilated by stride 2 to [1, 0, 2, 0, 3], then cross-correlated with
    # W = [a, b, c] = [1, 10, 100]: SAME pads (2, 1) -> 6 outputs, VALID (2, 2) -> 7
    ("SAME", [100, 10, 201, 20, 302, 30]),
    ("VALID", [100, 10, 201, 20, 302, 30, 3]),
    ([(0, 0)], [201, 20, 302]),
])
def test_stax_conv1d_transpose_by_hand(padding, expected):
    init_fun, apply_fun = stax.Conv1DTranspose(1, (3,), strides=(2,), padding=padding)
    out_shape, (W, b) = init_fun(np.random.default_rng(0), (1, 3, 1))
    assert out_shape == (1, len(expected), 1) and W.shape == (3, 1, 1)
    y = apply_fun((np.array([1.0, 10.0, 100.0]).reshape(3, 1, 1), np.zeros((1, 1, 1))),
                  np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1))
    np.testing.assert_allclose(y[0, :, 0], expected)


def test_stax_conv_transpose_shapes_and_gradient():
    init_fun, apply_fun = stax.ConvTranspose(2, (3, 2), strides=(2, 3), padding="SAME")
    out_shape, params = init_fun(ad.random.key(7), (2, 4, 5, 3))
    assert out_shape == (2, 8, 15, 2)                        # SAME: size · stride
    x = np.random.default_rng(7).standard_normal((2, 4, 5, 3))
    assert apply_fun(params, x).shape == out_shape
    check_grads(lambda p, x: anp.sum(apply_fun(p, x) ** 2), (params, x), order=1, modes=["rev"])


def test_check_jvp_and_check_vjp_of_given_rules():
    from autodiff.test_util import check_jvp, check_vjp
    f = lambda x, y: anp.sin(x) * y
    args = (np.array([0.3, 1.1]), np.array([2.0, -1.0]))
    check_jvp(f, lambda p, t: ad.jvp(f, p, t), args)
    check_vjp(f, lambda *a: ad.vjp(f, *a), args)
    check_jvp(anp.tanh, np.array([0.4]))                      # autograd's form
    check_vjp(anp.tanh, np.array([0.4]))
    wrong_jvp = lambda p, t: (f(*p), anp.cos(p[0]) * t[0] * p[1])      # misses ∂/∂y
    with pytest.raises(AssertionError, match="JVP"):
        check_jvp(f, wrong_jvp, args)
    wrong_vjp = lambda x, y: (f(x, y), lambda g: (g * anp.cos(x) * y, g))    # ∂/∂y wrong
    with pytest.raises(AssertionError, match="VJP"):
        check_vjp(f, wrong_vjp, args)


def test_jax_optimizer_under_vmap_is_an_ensemble_of_runs():
    opt_init, opt_update, get_params = jopt.adam(0.1)
    starts = np.array([[1.0, -0.5], [2.0, 3.0]])
    states = ad.vmap(opt_init)(starts)
    for i in range(3):
        states = ad.vmap(lambda s: opt_update(i, C * get_params(s), s))(states)
    batched = ad.vmap(get_params)(states)
    np.testing.assert_allclose(batched[0], JAX_TRAJECTORIES["adam"][1][-1], rtol=1e-12)
    single = opt_init(starts[1])
    for i in range(3):
        single = opt_update(i, C * get_params(single), single)
    np.testing.assert_allclose(batched[1], get_params(single), rtol=1e-12)
