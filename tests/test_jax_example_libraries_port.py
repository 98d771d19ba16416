"""JAX's tests of ``jax.example_libraries`` (``optimizers`` and ``stax``), ported to autodiff.

Sources (jax-ml/jax): ``tests/optimizers_test.py`` (every optimizer drives a quadratic to
its minimum eagerly and with a jitted ``update_fun``, schedules, the pytree structure
checks, ``l2_norm``/``clip_grads``, issue 758's jacrev/jacfwd through a scan of updates,
pack/unpack round trip) and ``tests/stax_test.py`` (the layers' ``init_fun`` output shapes
agree with ``apply_fun``; Softmax sums to one; BatchNorm normalizes). Beyond JAX's
checks, each optimizer's first steps are compared with a numpy transcription of its
update rule, the schedules with their closed forms, and Dense, Conv, the pools and
BatchNorm with numpy/scipy values; a serial network's gradient goes through
``ad.check_grads``.

Not ported: ``testDeviceTupleState`` (commented out in JAX), CUDA-only skips.
"""
import functools
import zlib

import numpy as np
import pytest
import scipy.signal as osp_signal

import autodiff as ad
import autodiff.numpy as anp
from autodiff import random
from autodiff.example_libraries import optimizers, stax


def _rng(*key):
    return np.random.RandomState(zlib.crc32(repr(key).encode()))


def assert_close(expected, actual, rtol=1e-12, atol=1e-12):
    e_leaves = ad.tree_util.tree_leaves(expected)
    a_leaves = ad.tree_util.tree_leaves(actual)
    assert len(e_leaves) == len(a_leaves)
    for e, a in zip(e_leaves, a_leaves):
        e, a = np.asarray(e), np.asarray(a)
        assert e.shape == a.shape, f"shape {a.shape} != expected {e.shape}"
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                   atol=atol)


# ---------------------------------------------------------------------------------------
# optimizers_test.py
# ---------------------------------------------------------------------------------------

def _check_funs(optimizer, loss, x0, *args):
    init_fun, update_fun, get_params = optimizer(*args)
    opt_state = init_fun(x0)
    assert_close(x0, get_params(opt_state))
    opt_state2 = update_fun(0, ad.grad(loss)(x0), opt_state)
    assert (ad.tree_util.tree_structure(opt_state)
            == ad.tree_util.tree_structure(opt_state2))


def _check_run(optimizer, loss, x0, num_steps, *args, jit=True):
    init_fun, update_fun, get_params = optimizer(*args)
    updates = [update_fun]
    if jit:
        updates.append(ad.jit(update_fun) if jit == "numba"
                       else ad.jit(update_fun, backend="interpret"))
    finals = []
    for update in updates:
        opt_state = init_fun(x0)
        for i in range(num_steps):
            g = ad.grad(loss)(get_params(opt_state))
            opt_state = update(i, g, opt_state)
        xstar = get_params(opt_state)
        assert float(loss(xstar)) < 1e-2
        finals.append(xstar)
    assert_close(finals[0], finals[-1], rtol=1e-10, atol=1e-12)


def _check_optimizer(optimizer, loss, x0, num_steps, *args, jit=True):
    _check_funs(optimizer, loss, x0, *args)
    _check_run(optimizer, loss, x0, num_steps, *args, jit=jit)


def _dot_loss(x):
    return anp.dot(x, x)


def test_sgd_scalar():
    """OptimizerTests.testSgdScalar (and a real jit of update_fun)."""
    _check_optimizer(optimizers.sgd, lambda x: x ** 2, 1., 100, 0.1, jit="numba")


def test_sgd_vector():
    """OptimizerTests.testSgdVector."""
    _check_optimizer(optimizers.sgd, _dot_loss, anp.ones(2), 100, 0.1)


def test_sgd_nested_tuple():
    """OptimizerTests.testSgdNestedTuple."""
    def loss(xyz):
        x, (y, z) = xyz
        return sum(anp.dot(a, a) for a in [x, y, z])
    x0 = (anp.ones(2), (anp.ones(2), anp.ones(2)))
    _check_optimizer(optimizers.sgd, loss, x0, 100, 0.1)


def test_momentum_vector():
    """OptimizerTests.testMomentumVector."""
    _check_optimizer(optimizers.momentum, _dot_loss, anp.ones(2), 100, 0.1, 0.)


def test_momentum_dict():
    """OptimizerTests.testMomentumDict."""
    def loss(dct):
        return anp.dot(dct['x'], dct['x'])
    _check_optimizer(optimizers.momentum, loss, {'x': anp.ones(2)}, 100, 0.1, 0.)


def test_rmsprop_vector():
    """OptimizerTests.testRmspropVector."""
    _check_optimizer(optimizers.rmsprop, _dot_loss, anp.ones(2), 100, 0.1)


def test_adam_vector():
    """OptimizerTests.testAdamVector (and a real jit of update_fun)."""
    _check_optimizer(optimizers.adam, _dot_loss, anp.ones(2), 100, 0.1, jit="numba")


def test_sgd_closure():
    """OptimizerTests.testSgdClosure."""
    def loss(y, x):
        return y ** 2 * x ** 2
    _check_run(optimizers.sgd, functools.partial(loss, 1.), 1., 20, 0.1)


def test_adagrad():
    """OptimizerTests.testAdagrad."""
    def loss(xs):
        x1, x2 = xs
        return anp.sum(x1 ** 2) + anp.sum(x2 ** 2)
    _check_optimizer(optimizers.adagrad, loss, (anp.ones(2), anp.ones((2, 2))), 100, 0.1)


def test_sm3_scalar():
    """OptimizerTests.testSM3Scalar."""
    _check_optimizer(optimizers.sm3, lambda x: x ** 2, anp.array(1.), 100, 0.1)


def test_sm3_vector():
    """OptimizerTests.testSM3Vector."""
    def loss(xs):
        x1, x2 = xs
        return anp.sum(x1 ** 2) + anp.sum(x2 ** 2)
    _check_optimizer(optimizers.sm3, loss, (anp.ones(2), anp.ones((2, 2))), 100, 0.1)


def test_adamax_vector():
    """OptimizerTests.testAdaMaxVector."""
    _check_optimizer(optimizers.adamax, _dot_loss, anp.ones(2), 100, 0.1)


@pytest.mark.parametrize("opt,sched,extra", [
    ("sgd", optimizers.exponential_decay(0.1, 3, 2.), ()),
    ("sgd", optimizers.inverse_time_decay(0.1, 3, 2.), ()),
    ("adam", optimizers.inverse_time_decay(0.1, 3, 2.), ()),
    ("momentum", optimizers.inverse_time_decay(0.1, 3, 2., staircase=True), (0.9,)),
    ("rmsprop_momentum", optimizers.polynomial_decay(1.0, 50, 0.1), ()),
    ("rmsprop", optimizers.piecewise_constant([25, 75], [1.0, 0.5, 0.1]), ()),
], ids=["sgd-exp", "sgd-inv", "adam-inv", "momentum-inv-stair", "rmsprop_mom-poly",
        "rmsprop-piecewise"])
def test_schedules_with_optimizers(opt, sched, extra):
    """OptimizerTests.test*Schedule: optimizers accept schedules (init/update/get_params
    round trip keeps the state's structure)."""
    _check_funs(getattr(optimizers, opt), _dot_loss, anp.ones(2), sched, *extra)


def test_schedule_values():
    """The schedules' values against their closed forms (JAX's formulas), concrete and
    traced steps."""
    i = np.arange(0, 100)
    cases = [
        (optimizers.constant(0.3), np.full(i.shape, 0.3)),
        (optimizers.exponential_decay(0.1, 3, 2.), 0.1 * 2. ** (i / 3)),
        (optimizers.inverse_time_decay(0.1, 3, 2.), 0.1 / (1 + 2. * i / 3)),
        (optimizers.inverse_time_decay(0.1, 3, 2., staircase=True),
         0.1 / (1 + 2. * np.floor(i / 3))),
        (optimizers.polynomial_decay(1.0, 50, 0.1, power=2.),
         (1.0 - 0.1) * (1 - np.minimum(i, 50) / 50) ** 2 + 0.1),
        (optimizers.piecewise_constant([25, 75], [1.0, 0.5, 0.1]),
         np.array([1.0, 0.5, 0.1])[np.sum(i[:, None] > np.array([25, 75]), 1)]),
    ]
    for sched, expected in cases:
        assert_close(expected, np.array([float(sched(int(k))) for k in i]), rtol=1e-12)
        assert_close(expected, ad.vmap(sched)(i), rtol=1e-12)


def _np_reference(name, args, x0, grads):
    """numpy transcriptions of JAX's update rules: the parameters after each gradient."""
    x = np.array(x0, float)
    out = []
    if name == "sgd":
        (step,) = args
        for g in grads:
            x = x - step * g
            out.append(x)
    elif name in ("momentum", "nesterov"):
        step, mass = args
        v = np.zeros_like(x)
        for g in grads:
            v = mass * v + g
            x = x - step * (mass * v + g if name == "nesterov" else v)
            out.append(x)
    elif name == "adagrad":
        step, mom = args
        gsq, m = np.zeros_like(x), np.zeros_like(x)
        for g in grads:
            gsq = gsq + g ** 2
            inv = np.where(gsq > 0, 1 / np.sqrt(gsq), 0.)
            m = (1 - mom) * (g * inv) + mom * m
            x = x - step * m
            out.append(x)
    elif name == "rmsprop":
        step, gamma, eps = args
        avg = np.zeros_like(x)
        for g in grads:
            avg = avg * gamma + g ** 2 * (1 - gamma)
            x = x - step * g / np.sqrt(avg + eps)
            out.append(x)
    elif name == "rmsprop_momentum":
        step, gamma, eps, mom = args
        avg, m = np.zeros_like(x), np.zeros_like(x)
        for g in grads:
            avg = avg * gamma + g ** 2 * (1 - gamma)
            m = mom * m + step * g / np.sqrt(avg + eps)
            x = x - m
            out.append(x)
    elif name == "adam":
        step, b1, b2, eps = args
        m, v = np.zeros_like(x), np.zeros_like(x)
        for i, g in enumerate(grads):
            m = (1 - b1) * g + b1 * m
            v = (1 - b2) * g ** 2 + b2 * v
            mhat, vhat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
            x = x - step * mhat / (np.sqrt(vhat) + eps)
            out.append(x)
    elif name == "adamax":
        step, b1, b2, eps = args
        m, u = np.zeros_like(x), np.zeros_like(x)
        for i, g in enumerate(grads):
            m = (1 - b1) * g + b1 * m
            u = np.maximum(b2 * u, np.abs(g))
            x = x - (step / (1 - b1 ** (i + 1))) * m / (u + eps)
            out.append(x)
    return out


_RULES = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)),
          ("adagrad", (0.1, 0.9)), ("rmsprop", (0.1, 0.9, 1e-8)),
          ("rmsprop_momentum", (0.1, 0.9, 1e-8, 0.9)), ("adam", (0.1, 0.9, 0.999, 1e-8)),
          ("adamax", (0.1, 0.9, 0.999, 1e-8))]


@pytest.mark.parametrize("name,args", _RULES, ids=[r[0] for r in _RULES])
def test_update_rules_against_numpy(name, args):
    """Four steps of each optimizer with fixed gradients against the numpy transcription
    of JAX's update rule (the values, not only convergence)."""
    rng = _rng("rule", name)
    x0 = rng.randn(3)
    grads = [rng.randn(3) for _ in range(4)]
    expected = _np_reference(name, args, x0, grads)
    init_fun, update_fun, get_params = getattr(optimizers, name)(*args)
    state = init_fun(x0)
    for i, g in enumerate(grads):
        state = update_fun(i, g, state)
        assert_close(expected[i], get_params(state), rtol=1e-12, atol=1e-12)


def test_traced_step_size():
    """OptimizerTests.testTracedStepSize: the step size is a jit argument."""
    init_fun, _, _ = optimizers.sgd(0.1)
    opt_state = init_fun(anp.ones(2))

    @functools.partial(ad.jit, backend="interpret")
    def update(opt_state, step_size):
        _, update_fun, get_params = optimizers.sgd(step_size)
        x = get_params(opt_state)
        return update_fun(0, ad.grad(_dot_loss)(x), opt_state)

    new = update(opt_state, 0.9)
    assert_close(np.full(2, 1 - 0.9 * 2), optimizers.sgd(0.1)[2](new))


def test_update_fun_structure_mismatch_error():
    """OptimizerTests.testUpdateFunStructureMismatchErrorMessage."""
    @optimizers.optimizer
    def opt_maker():
        def init_fun(x0):
            return {'x': x0}

        def update_fun(i, g, opt_state):
            x = opt_state['x']
            return {'x': x - 0.1 * g, 'v': g}  # bug!

        def get_params(opt_state):
            return opt_state['x']
        return init_fun, update_fun, get_params

    init_fun, update_fun, get_params = opt_maker()
    opt_state = init_fun(anp.zeros(3))
    with pytest.raises(TypeError):
        update_fun(opt_state)
    with pytest.raises(TypeError, match="structure"):
        update_fun(0, anp.zeros(3), opt_state)


def test_utility_norm():
    """OptimizerTests.testUtilityNorm."""
    x0 = (anp.ones(2), (anp.ones(3), anp.ones(4)))
    assert_close(np.sqrt(9.0), optimizers.l2_norm(x0))


def test_utility_clip_grads():
    """OptimizerTests.testUtilityClipGrads."""
    g = (anp.ones(2), (anp.ones(3), anp.ones(4)))
    norm = optimizers.l2_norm(g)
    assert_close(g, optimizers.clip_grads(g, 1.1 * norm))
    assert_close(0.9 * norm, optimizers.l2_norm(optimizers.clip_grads(g, 0.9 * norm)))


def test_issue_758():
    """OptimizerTests.testIssue758: jacrev and jacfwd through a scan of 75 sgd updates.
    x_{k+1} = x_k - 0.05 p, so loss(p) = 1 - (0.5 - 75·0.05 p) and d loss/dp = 3.75."""
    def harmonic_bond(conf, params):
        return anp.sum(conf * params)

    opt_init, opt_update, get_params = optimizers.sgd(5e-2)
    x0 = np.array([0.5], dtype=np.float64)

    def minimize_structure(test_params):
        energy_fn = functools.partial(harmonic_bond, params=test_params)
        grad_fn = ad.grad(energy_fn, argnums=(0,))
        opt_state = opt_init(x0)

        def apply_carry(carry, _):
            i, x = carry
            g = grad_fn(get_params(x))[0]
            return (i + 1, opt_update(i, g, x)), _

        (trip, opt_final), _ = ad.lax.scan(apply_carry, (0, opt_state), anp.zeros((75, 0)))
        assert int(trip) == 75
        return opt_final

    initial_params = anp.array(0.5)
    minimize_structure(initial_params)

    def loss(test_params):
        return 1.0 - get_params(minimize_structure(test_params))[0]

    J1 = ad.jacrev(loss, argnums=(0,))(initial_params)
    J2 = ad.jacfwd(loss, argnums=(0,))(initial_params)
    assert_close(J1, J2, rtol=1e-6)
    assert_close((3.75,), J1, rtol=1e-12)


def test_unpack_pack_round_trip():
    """OptimizerTests.testUnpackPackRoundTrip."""
    opt_init, _, _ = optimizers.momentum(0.1, mass=0.9)
    rng = _rng("pack")
    params = [{'w': rng.randn(1, 2), 'bias': rng.randn(2)}]
    expected = opt_init(params)
    ans = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(expected))
    assert ans.tree_def == expected.tree_def
    assert ans.subtree_defs == expected.subtree_defs
    assert_close(expected.packed_state, ans.packed_state, 0, 0)


# ---------------------------------------------------------------------------------------
# stax_test.py
# ---------------------------------------------------------------------------------------

def random_inputs(rng, input_shape):
    if type(input_shape) is tuple:
        return rng.randn(*input_shape)
    if type(input_shape) is list:
        return [random_inputs(rng, shape) for shape in input_shape]
    raise TypeError(type(input_shape))


def _check_shape_agreement(init_fun, apply_fun, input_shape, key=()):
    rng_key = random.PRNGKey(0)
    rng_key, init_key = random.split(rng_key)
    result_shape, params = init_fun(init_key, input_shape)
    inputs = random_inputs(_rng("stax", input_shape, key), input_shape)
    result = apply_fun(params, inputs, rng=rng_key)
    assert result.shape == result_shape
    return params, inputs, result


@pytest.mark.parametrize("shape", [(2, 3), (5,)])
def test_randn_init_shape(shape):
    """StaxTest.testRandnInitShape (and the default stddev 1e-2)."""
    out = stax.randn()(random.PRNGKey(0), shape)
    assert out.shape == shape
    big = stax.randn()(random.PRNGKey(1), (4000,))
    assert abs(float(np.std(big)) - 1e-2) < 1e-3


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4)])
def test_glorot_init_shape(shape):
    """StaxTest.testGlorotInitShape (and glorot normal's variance 2/(fan_in + fan_out))."""
    out = stax.glorot()(random.PRNGKey(0), shape)
    assert out.shape == shape
    big = np.asarray(stax.glorot()(random.PRNGKey(1), (200, 300)))
    assert abs(float(np.var(big)) / (2 / 500) - 1) < 0.05


_CONV_CASES = [(c, f, p, s) for c in [2, 3] for f in [(1, 1), (2, 3)]
               for p in ["SAME", "VALID"] for s in [None, (2, 1)]]


@pytest.mark.parametrize("channels,filter_shape,padding,strides", _CONV_CASES)
def test_conv_shape(channels, filter_shape, padding, strides):
    """StaxTest.testConvShape."""
    init_fun, apply_fun = stax.Conv(channels, filter_shape, strides=strides, padding=padding)
    _check_shape_agreement(init_fun, apply_fun, (2, 10, 11, 1))


_CONVT_CASES = [(c, f, p, s) for c in [2, 3] for f in [(1, 1), (2, 3), (3, 3)]
                for p in ["SAME", "VALID"] for s in [None, (2, 1), (2, 2)]][::2]


@pytest.mark.parametrize("channels,filter_shape,padding,strides", _CONVT_CASES)
def test_conv_transpose_shape(channels, filter_shape, padding, strides):
    """StaxTest.testConvTransposeShape (a rotation through JAX's product)."""
    init_fun, apply_fun = stax.ConvTranspose(channels, filter_shape, strides=strides,
                                             padding=padding)
    _check_shape_agreement(init_fun, apply_fun, (2, 10, 11, 1))


_CONV1T_CASES = [(c, f, p, s) for c in [2, 3] for f in [(1,), (2,), (3,)]
                 for p in ["SAME", "VALID"] for s in [None, (1,), (2,)]][::2]


@pytest.mark.parametrize("channels,filter_shape,padding,strides", _CONV1T_CASES)
def test_conv1d_transpose_shape(channels, filter_shape, padding, strides):
    """StaxTest.testConv1DTransposeShape (a rotation through JAX's product)."""
    init_fun, apply_fun = stax.Conv1DTranspose(channels, filter_shape, strides=strides,
                                               padding=padding)
    _check_shape_agreement(init_fun, apply_fun, (2, 10, 1))


@pytest.mark.parametrize("out_dim", [3, 4])
@pytest.mark.parametrize("input_shape", [(2, 3), (3, 4)])
def test_dense_shape(out_dim, input_shape):
    """StaxTest.testDenseShape, and the value x @ W + b."""
    init_fun, apply_fun = stax.Dense(out_dim)
    (W, b), x, out = _check_shape_agreement(init_fun, apply_fun, input_shape)
    assert W.shape == (input_shape[-1], out_dim) and b.shape == (out_dim,)
    assert_close(x @ np.asarray(W) + np.asarray(b), out)


_ACTIVATIONS = {
    "Relu": lambda x: np.maximum(x, 0),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "LeakyRelu": lambda x: np.where(x >= 0, x, 0.01 * x),
}


@pytest.mark.parametrize("input_shape", [(2, 3), (2, 3, 4)])
@pytest.mark.parametrize("nonlinear", sorted(_ACTIVATIONS))
def test_nonlinear_shape(input_shape, nonlinear):
    """StaxTest.testNonlinearShape, and the activation's values."""
    init_fun, apply_fun = getattr(stax, nonlinear)
    _, x, out = _check_shape_agreement(init_fun, apply_fun, input_shape)
    assert_close(_ACTIVATIONS[nonlinear](x), out, rtol=1e-14, atol=1e-15)


def _np_pool(x, window, strides, spatial, kind):
    """VALID pooling in numpy over the spatial axes (window dims in their order)."""
    x = np.moveaxis(x, spatial, list(range(len(spatial))))
    out_sizes = [(n - k) // s + 1 for n, k, s in zip(x.shape, window, strides)]
    out = np.empty(tuple(out_sizes) + x.shape[len(spatial):])
    for idx in np.ndindex(*out_sizes):
        sl = tuple(slice(i * s, i * s + k) for i, s, k in zip(idx, strides, window))
        block = x[sl]
        red = tuple(range(len(spatial)))
        out[idx] = block.max(red) if kind == "max" else block.mean(red)
    return np.moveaxis(out, list(range(len(spatial))), spatial)


_POOL_CASES = [(w, s, m, spec) for w in [(1, 1), (2, 3)] for s in [None, (2, 1)]
               for m in [False, True] for spec in ["NHWC", "NCHW", "WHNC", "WHCN"]]


@pytest.mark.parametrize("window_shape,strides,max_pool,spec", _POOL_CASES)
def test_pooling_shape(window_shape, strides, max_pool, spec):
    """StaxTest.testPoolingShape, and the pooled values against numpy."""
    layer = stax.MaxPool if max_pool else stax.AvgPool
    init_fun, apply_fun = layer(window_shape, padding="VALID", strides=strides, spec=spec)
    _, x, out = _check_shape_agreement(init_fun, apply_fun, (2, 5, 6, 4))
    spatial = [i for i, c in enumerate(spec) if c not in "NC"]
    expected = _np_pool(x, window_shape, strides or (1, 1), spatial,
                        "max" if max_pool else "avg")
    assert_close(expected, out, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("input_shape", [(2, 3), (2, 3, 4)])
def test_flatten_shape(input_shape):
    """StaxTest.testFlattenShape."""
    _, x, out = _check_shape_agreement(*stax.Flatten, input_shape)
    assert_close(x.reshape(x.shape[0], -1), out, 0, 0)


@pytest.mark.parametrize("spec", ["conv", "conv-flatten-dense"])
def test_serial_compose_layers_shape(spec):
    """StaxTest.testSerialComposeLayersShape."""
    layers = ([stax.Conv(3, (2, 2))] if spec == "conv"
              else [stax.Conv(3, (2, 2)), stax.Flatten, stax.Dense(4)])
    _check_shape_agreement(*stax.serial(*layers), (2, 5, 6, 1))


@pytest.mark.parametrize("input_shape", [(3, 4), (2, 5, 6, 1)])
def test_dropout_shape(input_shape):
    """StaxTest.testDropoutShape: kept entries are scaled by 1/rate, the rest are zero."""
    _, x, out = _check_shape_agreement(*stax.Dropout(0.9), input_shape)
    out = np.asarray(out)
    kept = out != 0
    assert_close(x[kept] / 0.9, out[kept])


@pytest.mark.parametrize("input_shape", [(3, 4), (2, 5, 6, 1)])
def test_fan_in_sum(input_shape):
    """StaxTest.testFanInSum."""
    _, (a, b), out = _check_shape_agreement(*stax.FanInSum, [input_shape, input_shape])
    assert_close(a + b, out)


@pytest.mark.parametrize("input_shapes,axis", [([(2, 3), (2, 1)], 1), ([(2, 3), (2, 1)], -1),
                                               ([(1, 2, 4), (1, 1, 4)], 1)])
def test_fan_in_concat(input_shapes, axis):
    """StaxTest.testFanInConcat."""
    _, xs, out = _check_shape_agreement(*stax.FanInConcat(axis), input_shapes)
    assert_close(np.concatenate(xs, axis), out, 0, 0)


def test_issue_182():
    """StaxTest.testIssue182: Softmax rows sum to one (and equal numpy's softmax)."""
    init_fun, apply_fun = stax.Softmax
    inputs = np.arange(30.).astype("float32").reshape(10, 3)
    out_shape, params = init_fun(random.PRNGKey(0), (10, 3))
    out = apply_fun(params, inputs)
    assert out_shape == out.shape
    assert np.allclose(np.sum(np.asarray(out), -1), 1.)
    e = np.exp(inputs - inputs.max(-1, keepdims=True))
    assert_close(e / e.sum(-1, keepdims=True), out, rtol=1e-6, atol=1e-7)


def test_batch_norm_no_scale_or_center():
    """StaxTest.testBatchNormNoScaleOrCenter: zero mean, unit std over the batch axes."""
    init_fun, apply_fun = stax.BatchNorm(axis=(0, 1, 2), center=False, scale=False)
    inputs = random_inputs(_rng("bn"), (4, 5, 6, 7))
    out_shape, params = init_fun(random.PRNGKey(0), (4, 5, 6, 7))
    out = np.asarray(apply_fun(params, inputs))
    assert np.allclose(np.mean(out, axis=(0, 1, 2)), 0, atol=1e-4)
    assert np.allclose(np.std(out, axis=(0, 1, 2)), 1, atol=1e-4)
    mean = inputs.mean((0, 1, 2))
    var = inputs.var((0, 1, 2))
    assert_close((inputs - mean) / np.sqrt(var + 1e-5), out, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis,channels", [((0, 1, 2), 7), ((0, 2, 3), 5)],
                         ids=["NHWC", "NCHW"])
def test_batch_norm_shape(axis, channels):
    """StaxTest.testBatchNormShapeNHWC and testBatchNormShapeNCHW (JAX issue 461), and the
    value gamma * normalized + beta."""
    init_fun, apply_fun = stax.BatchNorm(axis=axis)
    input_shape = (4, 5, 6, 7)
    out_shape, params = init_fun(random.PRNGKey(0), input_shape)
    inputs = random_inputs(_rng("bn", axis), input_shape)
    beta, gamma = params
    assert out_shape == input_shape
    assert beta.shape == (channels,) and gamma.shape == (channels,)
    rng = _rng("bn-params", axis)
    beta, gamma = rng.randn(channels), rng.randn(channels)
    out = apply_fun((beta, gamma), inputs)
    assert out.shape == out_shape
    shape = [1] * 4
    shape[[i for i in range(4) if i not in axis][0]] = channels
    norm = (inputs - inputs.mean(axis, keepdims=True)) / np.sqrt(
        inputs.var(axis, keepdims=True) + 1e-5)
    assert_close(gamma.reshape(shape) * norm + beta.reshape(shape), out, 1e-12, 1e-12)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv_values(padding):
    """Conv (NHWC input, HWIO kernel) against scipy's 2-d correlation per channel pair."""
    init_fun, apply_fun = stax.Conv(2, (2, 3), padding=padding)
    input_shape = (2, 5, 6, 3)
    (W, b), x, out = _check_shape_agreement(init_fun, apply_fun, input_shape)
    W, b = np.asarray(W), np.asarray(b)
    assert W.shape == (2, 3, 3, 2) and b.shape == (1, 1, 1, 2)
    b = b.reshape(-1)
    expected = np.zeros(out.shape)
    for n in range(2):
        for o in range(2):
            acc = sum(osp_signal.correlate2d(
                np.pad(x[n, :, :, c], [(0, 1), (1, 1)]) if padding == "SAME" else x[n, :, :, c],
                W[:, :, c, o], mode="valid") for c in range(3))
            expected[n, :, :, o] = acc + b[o]
    assert_close(expected, out, rtol=1e-12, atol=1e-12)


def test_serial_network_grads():
    """A small Conv-Relu-Flatten-Dense-LogSoftmax network: check_grads of the loss with
    respect to the parameters, and a real jit of apply_fun against the eager value."""
    init_fun, apply_fun = stax.serial(stax.Conv(2, (2, 2)), stax.Tanh, stax.Flatten,
                                      stax.Dense(3), stax.LogSoftmax)
    _, params = init_fun(random.PRNGKey(0), (2, 4, 4, 1))
    x = _rng("net").randn(2, 4, 4, 1)

    def loss(params):
        return -anp.mean(apply_fun(params, x)[:, 0])

    ad.check_grads(loss, (params,), order=1, modes=["fwd", "rev"])
    assert_close(apply_fun(params, x), ad.jit(apply_fun)(params, x), 1e-12, 1e-12)
