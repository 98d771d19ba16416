"""ad.optim: the update rules against reference loops and closed forms, both forms agreeing."""
import importlib.util
import os

import numpy as np
import pytest

import autodiff as ad

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
