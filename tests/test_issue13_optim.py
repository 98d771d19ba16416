"""Optimizers, schedules, clipping, chaining and masked weight decay against the published
update equations on fixed inputs. The expected numbers are written here: computed from
the equations in numpy (and checked once, offline, against optax 0.2.8 to 1e-16); no
peer library runs at test time."""
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import optim

P0 = np.array([1.0, -2.0, 0.5])
GS = [np.array([0.3, -1.2, 2.0]), np.array([-0.4, 0.8, 1.0]), np.array([0.1, 0.1, -0.5])]


def run(opt, params=P0, grads=GS):
    p, s = params.copy(), opt.init(params)
    for g in grads:
        u, s = opt.update(g, s, p)
        p = optim.apply_updates(p, u)
    return p


# three steps from P0 with the gradients GS (optax's equations and defaults unless given)
THREE_STEPS = {
    "rmsprop": (lambda: optim.rmsprop(0.1, decay=0.9, eps=1e-8),
                [0.875048065949402, -1.8894786187250128, 0.11179392158336982]),
    "rmsprop centered, momentum": (
        lambda: optim.rmsprop(0.1, decay=0.9, eps=1e-8, centered=True, momentum=0.5),
        [0.7381320560095525, -1.7138518136275316, -0.24691896844173072]),
    "adagrad": (lambda: optim.adagrad(0.1, initial_accumulator_value=0.1, eps=1e-7),
                [0.982120964318118, -1.9642414567618032, 0.3785631825530384]),
    "adadelta": (lambda: optim.adadelta(1.0, rho=0.9, eps=1e-6),
                 [0.9992889764634821, -1.9997913151378421, 0.4959056675465173]),
    "lion": (lambda: optim.lion(0.01, b1=0.9, b2=0.99, weight_decay=0.1),
             [0.987012989, -2.004015988, 0.4885314895]),
    "adamax": (lambda: optim.adamax(0.1),
               [0.9186751015425254, -1.8830235973508602, 0.28889800916420283]),
    "nadam": (lambda: optim.nadam(0.1),
              [0.9133587911520005, -1.8844589645749932, 0.23449540563675936]),
    "clip by value, then scale": (lambda: optim.chain(optim.clip(0.5), optim.scale(-0.1)),
                                  [1.0, -2.01, 0.45]),
    "clip by global norm": (lambda: optim.chain(optim.clip_by_global_norm(1.0), optim.scale(-0.1)),
                            [1.0070569420331204, -2.018599288732487, 0.39041574963749454]),
    "decayed weights": (lambda: optim.chain(optim.add_decayed_weights(0.5),
                                            optim.scale_by_learning_rate(0.1)),
                        [0.8583, -1.69245, 0.2031875]),
    "warmup cosine schedule": (
        lambda: optim.chain(optim.scale_by_schedule(
            optim.warmup_cosine_decay_schedule(0.0, 1.0, 1, 3)), optim.scale(-0.1)),
        [1.035, -2.085, 0.425]),
    "staircase exponential": (
        lambda: optim.chain(optim.scale_by_schedule(
            optim.exponential_decay(1.0, 2, 0.5, staircase=True)), optim.scale(-0.1)),
        [1.005, -1.965, 0.225]),
    "sgd with a piecewise schedule": (
        lambda: optim.sgd(optim.piecewise_constant_schedule(1.0, {1: 0.5, 2: 0.1})),
        [0.895, -1.205, -1.975]),
}


@pytest.mark.parametrize("name", list(THREE_STEPS))
def test_three_steps_against_the_written_numbers(name):
    make, want = THREE_STEPS[name]
    np.testing.assert_allclose(run(make()), want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", ["rmsprop centered, momentum", "adagrad", "lion", "nadam",
                                  "clip by global norm", "warmup cosine schedule"])
def test_a_jitted_step_gives_the_same_numbers(name):
    opt = THREE_STEPS[name][0]()
    step = ad.jit(lambda p, s, g: opt.update(g, s, p))
    p, s = P0.copy(), opt.init(P0)
    for g in GS:
        u, s = step(p, s, g)
        p = optim.apply_updates(p, u)
    np.testing.assert_allclose(p, THREE_STEPS[name][1], rtol=1e-13, atol=1e-15)


def test_rmsprop_and_adagrad_are_their_equations():
    # transcriptions of the published updates, step by step
    nu, acc, p_r, p_a = np.zeros(3), np.full(3, 0.1), P0.copy(), P0.copy()
    for g in GS:
        nu = 0.9 * nu + 0.1 * g ** 2
        p_r = p_r - 0.1 * g / np.sqrt(nu + 1e-8)
        acc = acc + g ** 2
        p_a = p_a - 0.1 * g / np.sqrt(acc + 1e-7)
    np.testing.assert_allclose(run(optim.rmsprop(0.1)), p_r, rtol=1e-14)
    np.testing.assert_allclose(run(optim.adagrad(0.1)), p_a, rtol=1e-14)


SCHEDULES = {
    "linear warmup": (lambda: optim.linear_schedule(0.0, 1.0, 4, transition_begin=1),
                      [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0, 1.0]),
    "cosine": (lambda: optim.cosine_decay_schedule(2.0, 5, alpha=0.1, exponent=2.0),
               [2.0, 1.672644118671816, 0.97108647120309, 0.414855881328184,
                0.216413528796911, 0.2, 0.2, 0.2, 0.2]),
    "warmup cosine": (lambda: optim.warmup_cosine_decay_schedule(0.1, 1.0, 2, 6, end_value=0.05),
                      [0.1, 0.55, 1.0, 0.86087572106361, 0.525, 0.18912427893639, 0.05, 0.05,
                       0.05]),
    "exponential": (lambda: optim.exponential_decay(1.0, 3, 0.5, transition_begin=2,
                                                    end_value=0.3),
                    [1.0, 1.0, 1.0, 0.7937005259841, 0.629960524947437, 0.5, 0.39685026299205,
                     0.314980262473718, 0.3]),
    "piecewise constant": (lambda: optim.piecewise_constant_schedule(1.0, {3: 0.1, 6: 0.5}),
                           [1.0, 1.0, 1.0, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05]),
    "constant": (lambda: optim.constant_schedule(0.3), [0.3] * 9),
}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedules_eager_and_jitted(name):
    make, want = SCHEDULES[name]
    s = make()
    np.testing.assert_allclose([float(s(t)) for t in range(9)], want, rtol=1e-13)
    # a traced int32 count, as in a jitted optimizer step
    got = ad.jit(lambda c: s(c))(np.int32(4))
    np.testing.assert_allclose(got, want[4], rtol=1e-13)


def test_cosine_closed_form():
    s = optim.cosine_decay_schedule(1.0, 10)
    for t in (0, 3, 7, 10, 15):
        np.testing.assert_allclose(s(t), 0.5 * (1 + np.cos(np.pi * min(t, 10) / 10)), atol=1e-15)


def test_global_norm_clipping_and_value_clipping_on_a_pytree():
    tree = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}          # norm 5
    np.testing.assert_allclose(optim.global_norm(tree), 5.0)
    u, _ = optim.clip_by_global_norm(2.5).update(tree, ())
    np.testing.assert_allclose(u["a"], [1.5, 0.0])
    np.testing.assert_allclose(u["b"], [[2.0]])
    u, _ = optim.clip_by_global_norm(10.0).update(tree, ())           # under the limit: as is
    np.testing.assert_array_equal(u["a"], tree["a"])
    u, _ = optim.clip(1.0).update(tree, ())
    np.testing.assert_array_equal(u["b"], [[1.0]])
    with pytest.raises(ValueError, match="max_norm"):
        optim.clip_by_global_norm(0.0)


def test_weight_decay_masks_tree_and_callable():
    params = {"w": np.array([2.0, -1.0]), "b": np.array([4.0])}
    zeros = {"w": np.zeros(2), "b": np.zeros(1)}
    by_tree = optim.add_decayed_weights(0.1, mask={"w": True, "b": False})
    by_fn = optim.add_decayed_weights(0.1, mask=lambda p: {k: k != "b" for k in p})
    for tx in (by_tree, by_fn):
        u, _ = tx.update(zeros, tx.init(params), params)
        np.testing.assert_allclose(u["w"], [0.2, -0.1])
        np.testing.assert_array_equal(u["b"], [0.0])
    # adamw-style chain with the mask: one step from zero gradients decays only w
    tx = optim.chain(optim.add_decayed_weights(0.1, mask={"w": True, "b": False}),
                     optim.scale_by_learning_rate(0.5))
    new = optim.apply_updates(params, tx.update(zeros, tx.init(params), params)[0])
    np.testing.assert_allclose(new["w"], [1.9, -0.95])
    np.testing.assert_array_equal(new["b"], [4.0])
    with pytest.raises(ValueError, match="needs the current params"):
        by_tree.update(zeros, ())


def test_chain_state_and_errors():
    tx = optim.chain(optim.trace(0.9), optim.scale_by_schedule(lambda c: 1.0 / (c + 1.0)),
                     optim.scale(-1.0))
    s = tx.init(P0)
    assert len(s) == 3 and isinstance(s[1], optim.ScaleByScheduleState)
    u1, s = tx.update(GS[0], s)
    u2, s = tx.update(GS[1], s)
    np.testing.assert_allclose(u1, -GS[0])                             # trace = g, lr 1
    np.testing.assert_allclose(u2, -(0.9 * GS[0] + GS[1]) / 2.0)       # trace, lr 1/2
    with pytest.raises(TypeError, match="GradientTransformations"):
        optim.chain(optim.scale(1.0), 3)
    with pytest.raises(ValueError, match="entries"):
        tx.update(GS[0], s[:2])


# ------------------------------------------------------------------ PyTorch's classes

def test_pytorch_rmsprop_adagrad_adadelta_classes():
    # PyTorch's algorithms, transcribed (torch.optim docs), three steps
    lr, alpha, eps, wd, mom = 0.01, 0.99, 1e-8, 0.1, 0.9
    p, v, gavg, buf = P0.copy(), np.zeros(3), np.zeros(3), np.zeros(3)
    for g in GS:
        g = g + wd * p
        v = alpha * v + (1 - alpha) * g * g
        gavg = alpha * gavg + (1 - alpha) * g
        buf = mom * buf + g / (np.sqrt(v - gavg ** 2) + eps)
        p = p - lr * buf
    want_rms = p
    p, acc = P0.copy(), np.zeros(3)
    for t, g in enumerate(GS, 1):
        clr = 0.5 / (1 + (t - 1) * 0.1)
        acc = acc + g * g
        p = p - clr * g / (np.sqrt(acc) + 1e-10)
    want_ada = p
    p, sq, dl = P0.copy(), np.zeros(3), np.zeros(3)
    for g in GS:
        sq = 0.9 * sq + 0.1 * g * g
        d = np.sqrt(dl + 1e-6) / np.sqrt(sq + 1e-6) * g
        dl = 0.9 * dl + 0.1 * d * d
        p = p - 1.0 * d
    want_delta = p
    for make, want in [
        (lambda w: optim.RMSprop([w], lr=lr, alpha=alpha, eps=eps, weight_decay=wd,
                                 momentum=mom, centered=True), want_rms),
        (lambda w: optim.Adagrad([w], lr=0.5, lr_decay=0.1), want_ada),
        (lambda w: optim.Adadelta([w]), want_delta),
    ]:
        w = ad.Variable(P0.copy())
        opt = make(w)
        for g in GS:
            w.grad = g
            opt.step()
        np.testing.assert_allclose(w.numpy(), want, rtol=1e-12)
    # the functional form of a class gives the same numbers
    np.testing.assert_allclose(run(optim.Adagrad(0.5, lr_decay=0.1)), want_ada, rtol=1e-12)


def test_a_short_training_run_converges_with_a_chained_optimizer():
    # least squares in two parameters: chain(clip_by_global_norm, rmsprop-scaling, cosine lr)
    A = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.3]])
    b = A @ np.array([0.7, -1.3])
    loss = lambda w: anp.sum((A @ w - b) ** 2)
    tx = optim.chain(optim.clip_by_global_norm(5.0), optim.scale_by_rms(0.9),
                     optim.scale_by_learning_rate(optim.cosine_decay_schedule(0.05, 400, 0.01)))
    step = ad.jit(lambda w, s: tx.update(ad.grad(loss)(w), s, w))
    w, s = np.zeros(2), tx.init(np.zeros(2))
    for _ in range(400):
        u, s = step(w, s)
        w = optim.apply_updates(w, u)
    np.testing.assert_allclose(w, [0.7, -1.3], atol=2e-3)
