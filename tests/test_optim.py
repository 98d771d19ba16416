"""ad.optim: the update rules against reference loops and closed forms, both forms agreeing;
and optimizers, schedules, clipping, chaining and masked weight decay against the published
update equations on fixed inputs. The expected numbers of the latter are written here:
computed from the equations in numpy (and checked once, offline, against optax 0.2.8 to
1e-16); no peer library runs at test time."""
import importlib.util
import os

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import optim

HERE = os.path.dirname(os.path.abspath(__file__))


# Reference implementations: PyTorch's documented algorithms, written as plain loops.
def ref_sgd(p, grads, lr, momentum=0.0, nesterov=False, wd=0.0):
    p, buf, out = p.copy(), None, []
    for g in grads:
        g = g + wd * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p.copy())
    return out


def ref_adam(p, grads, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False):
    p, m, v, out = p.copy(), np.zeros_like(p), np.zeros_like(p), []
    for t, g in enumerate(grads, start=1):
        if decoupled:
            p = p - lr * wd * p
        elif wd:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
        out.append(p.copy())
    return out


def _grad_seq(rng, shape, n):
    return [rng.standard_normal(shape) for _ in range(n)]


def _run_functional(opt, p0, grads):
    params = {"w": p0.copy()}
    state = opt.init(params)
    out = []
    for g in grads:
        updates, state = opt.update({"w": g}, state, params)
        params = ad.optim.apply_updates(params, updates)
        out.append(params["w"])
    return out


def _run_imperative(cls, p0, grads, **hp):
    w = ad.Variable(p0)
    opt = cls([w], **hp)
    out = []
    for g in grads:
        opt.zero_grad()
        w.grad = g                                 # as if backward() had produced it
        opt.step()
        out.append(w.numpy().copy())
    return out


SGD_CASES = [dict(), dict(momentum=0.9), dict(momentum=0.8, nesterov=True),
             dict(momentum=0.5, weight_decay=0.1), dict(weight_decay=0.3)]


@pytest.mark.parametrize("hp", SGD_CASES, ids=lambda d: ",".join(d) or "plain")
def test_sgd_matches_reference(rng, hp):
    p0, grads = rng.standard_normal((3, 2)), _grad_seq(rng, (3, 2), 6)
    ref = ref_sgd(p0, grads, 0.05, hp.get("momentum", 0.0), hp.get("nesterov", False),
                  hp.get("weight_decay", 0.0))
    fun = _run_functional(ad.optim.sgd(0.05, **hp), p0, grads)
    imp = _run_imperative(ad.optim.SGD, p0, grads, lr=0.05, **hp)
    for r, f, i in zip(ref, fun, imp):
        np.testing.assert_allclose(f, r, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(i, r, rtol=1e-12, atol=1e-14)


ADAM_CASES = [(ad.optim.adam, ad.optim.Adam, dict(), False),
              (ad.optim.adam, ad.optim.Adam, dict(weight_decay=0.1), False),
              (ad.optim.adamw, ad.optim.AdamW, dict(weight_decay=0.1), True),
              (ad.optim.adamw, ad.optim.AdamW, dict(), True)]


@pytest.mark.parametrize("fn,cls,hp,decoupled", ADAM_CASES,
                         ids=["adam", "adam-l2", "adamw", "adamw-default"])
def test_adam_family_matches_reference(rng, fn, cls, hp, decoupled):
    p0, grads = rng.standard_normal(4), _grad_seq(rng, (4,), 8)
    wd = hp.get("weight_decay", 1e-2 if decoupled else 0.0)
    ref = ref_adam(p0, grads, 0.01, b1=0.8, b2=0.99, eps=1e-6, wd=wd, decoupled=decoupled)
    fun = _run_functional(fn(0.01, b1=0.8, b2=0.99, eps=1e-6, **hp), p0, grads)
    imp = _run_imperative(cls, p0, grads, lr=0.01, betas=(0.8, 0.99), eps=1e-6, **hp)
    for r, f, i in zip(ref, fun, imp):
        np.testing.assert_allclose(f, r, rtol=1e-12)
        np.testing.assert_allclose(i, r, rtol=1e-12)


def test_closed_forms():
    # Adam's first step is -lr·sign(g) (up to eps), whatever the gradient's scale
    upd, _ = ad.optim.adam(0.1).update(np.array([1e-3, -50.0]), ad.optim.adam(0.1).init(np.zeros(2)))
    np.testing.assert_allclose(upd, [-0.1, 0.1], rtol=1e-4)
    # heavy-ball momentum on a constant gradient: p_k = -lr·g·Σ_j (1-μ^j)/(1-μ)
    opt = ad.optim.sgd(1.0, momentum=0.5)
    p, st = np.zeros(1), opt.init(np.zeros(1))
    for _ in range(3):
        u, st = opt.update(np.ones(1), st, p)
        p = ad.optim.apply_updates(p, u)
    np.testing.assert_allclose(p, [-(1 + 1.5 + 1.75)])
    assert int(st.count) == 3


def test_float32_stays_float32():
    p = {"w": np.ones(3, np.float32)}
    for opt in (ad.optim.sgd(0.1, momentum=0.9), ad.optim.adam(0.1), ad.optim.adamw(0.1)):
        st = opt.init(p)
        for _ in range(2):
            u, st = opt.update({"w": np.full(3, 0.5, np.float32)}, st, p)
            assert u["w"].dtype == np.float32
            p = ad.optim.apply_updates(p, u)
        assert p["w"].dtype == np.float32
    w = ad.Variable(np.ones(2, np.float32))
    opt = ad.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert w.dtype == np.float32 and w.numpy().dtype == np.float32


def test_learning_rate_schedule_and_param_groups():
    sched = lambda count: 0.1 / (1.0 + count)      # 0.1, 0.05, ...
    opt = ad.optim.sgd(sched)
    p, st = np.zeros(1), opt.init(np.zeros(1))
    for _ in range(2):
        u, st = opt.update(np.ones(1), st, p)
        p = p + u
    np.testing.assert_allclose(p, [-0.15])
    a, b = ad.Variable(np.ones(1)), ad.Variable(np.ones(1))
    opt = ad.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    a.grad, b.grad = np.ones(1), np.ones(1)
    opt.step()
    np.testing.assert_allclose([a.numpy()[0], b.numpy()[0]], [0.9, 0.5])
    opt.param_groups[0]["lr"] = 0.2                 # schedules edit param_groups
    opt.step()
    np.testing.assert_allclose(a.numpy(), [0.7])


def test_imperative_details():
    a, b = ad.Variable(np.ones(2)), ad.Variable(np.ones(2))
    opt = ad.optim.Adam({"a": a, "b": b}, lr=0.1)
    (a * 3.0).sum().backward()                       # b has no gradient: left alone
    loss = opt.step(closure=lambda: (a * a).sum())
    assert isinstance(loss, ad.Variable)
    np.testing.assert_allclose(a.numpy(), [0.9, 0.9], rtol=1e-6)
    np.testing.assert_array_equal(b.numpy(), [1.0, 1.0])
    assert a.is_leaf and a.requires_grad
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    a.grad = np.ones(2)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad, [0.0, 0.0])
    with pytest.raises(ValueError, match="leaf"):
        ad.optim.SGD([a * 2.0], lr=0.1)
    with pytest.raises(TypeError, match="Variables"):
        ad.optim.SGD([np.ones(2)], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        ad.optim.Adam([a], lr=-1.0)
    with pytest.raises(ValueError, match="beta"):
        ad.optim.adam(0.1, b1=1.0)
    with pytest.raises(ValueError, match="params"):
        ad.optim.sgd(0.1, weight_decay=0.1).update(np.ones(1), ad.optim.sgd(0.1).init(np.ones(1)))
    # the classes double as functional optimizers
    opt = ad.optim.SGD(lr=0.5)
    u, _ = opt.update({"w": np.ones(2)}, opt.init({"w": np.zeros(2)}))
    np.testing.assert_allclose(u["w"], [-0.5, -0.5])
    assert ad.optim.Adam(0.3).defaults["lr"] == 0.3


def test_functional_update_is_traceable():
    opt = ad.optim.adam(0.05)

    def step(p, st, g):
        u, st = opt.update(g, st, p)
        return ad.optim.apply_updates(p, u), st

    p, st = np.array([1.0, -1.0]), opt.init(np.zeros(2))
    jaxpr = ad.make_jaxpr(step)(p, st, np.ones(2))   # everything traces: jit can compile it
    assert len(jaxpr.eqns) > 5
    jstep = ad.jit(step)
    out = jstep(p, st, np.ones(2))
    ref = step(p, st, np.ones(2))
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-12)


def test_optimizers_minimize_a_quadratic():
    A = np.array([[3.0, 0.5], [0.5, 1.0]])
    f = lambda x: 0.5 * x @ A @ x - x.sum()         # minimum at A⁻¹·1
    xstar = np.linalg.solve(A, np.ones(2))
    for opt in (ad.optim.sgd(0.2, momentum=0.5, nesterov=True), ad.optim.adam(0.05)):
        x, st = np.zeros(2), opt.init(np.zeros(2))
        for _ in range(250):
            u, st = opt.update(ad.grad(f)(x), st, x)
            x = ad.optim.apply_updates(x, u)
        np.testing.assert_allclose(x, xstar, atol=1e-4)


# ----------------------------------------------------------------------------
# the published update equations on fixed inputs (numbers written here)
# ----------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------
# the examples
# ----------------------------------------------------------------------------

def _load_example(name):
    path = os.path.join(HERE, "..", "examples", name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("kind,lr", [("adam", 0.02), ("sgd", 0.05)])
def test_train_mlp_example(kind, lr):
    mod = _load_example("train_mlp.py")
    res = mod.main(samples=64, hidden=16, steps=150, lr=lr, kind=kind, verbose=False,
                   use_jit=False)
    f, i = res["functional"], res["imperative"]
    assert f[-1] < mod.THRESHOLD and i[-1] < mod.THRESHOLD
    assert f[-1] < 0.05 * f[0]
    np.testing.assert_allclose(f, i, rtol=1e-8)      # both forms take the same steps


def test_tape_example_runs(capsys):
    _load_example("tape.py")
    out = capsys.readouterr().out
    assert "x.grad = [1. 2.]  w.grad = [2. 3.]" in out
