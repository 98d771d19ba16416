"""Checkpointing: gradients unchanged, residuals and run-time memory reduced, policies obeyed."""
import gc
import tracemalloc

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.backends.interpreter import run_closed
from autodiff.checkpoint import residual_bytes, saved_residuals
from autodiff.core import typecheck_jaxpr
from autodiff.transforms.remat import inline_remat, remat_p
from autodiff.transforms.simplify import simplify_jaxpr

P = ad.checkpoint_policies
TOL = 1e-12




# ----------------------------------------------------------------------------
# a chain of tanh-dense layers
# ----------------------------------------------------------------------------

def make_params(n, width=6, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((width, width)) / np.sqrt(width),
             0.3 * rng.standard_normal(width)) for _ in range(n)]


def dense(h, w, b):
    return anp.tanh(h @ w + b)


def layers_of(params):
    return [(lambda h, w=w, b=b: dense(h, w, b)) for w, b in params]


def chain_loss(strategy):
    def loss(params, x):
        return anp.sum(ad.checkpoint_sequential(layers_of(params), strategy)(x) ** 2)
    return loss


def plain_loss(params, x):
    h = x
    for w, b in params:
        h = dense(h, w, b)
    return anp.sum(h ** 2)


def flat(tree):
    leaves = ad.tree_util.tree_leaves(tree)
    return np.concatenate([np.ravel(l) for l in leaves])


def assert_same_grads(g, ref):
    np.testing.assert_allclose(flat(g), flat(ref), rtol=0, atol=TOL)


STRATEGIES = ["none", "sqrt_n", ad.every(1), ad.every(3), ad.every(100), P.everything_saveable,
              P.nothing_saveable, P.dots_saveable]


@pytest.fixture
def problem():
    rng = np.random.default_rng(1)
    return make_params(7), rng.standard_normal((3, 6))


# ----------------------------------------------------------------------------
# gradients agree
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", STRATEGIES, ids=repr)
def test_strategies_give_the_plain_gradient(strategy, problem):
    params, x = problem
    ref = ad.grad(plain_loss, argnums=(0, 1))(params, x)
    g = ad.grad(chain_loss(strategy), argnums=(0, 1))(params, x)
    assert_same_grads(g, ref)
    # and the value is unchanged
    np.testing.assert_allclose(chain_loss(strategy)(params, x), plain_loss(params, x), atol=TOL)


def test_gradient_matches_finite_differences(problem):
    params, x = problem
    f = lambda x: chain_loss("sqrt_n")(params, x)     # noqa: E731
    g = ad.grad(f)(x)
    eps = 1e-6
    e = np.zeros_like(x)
    e[1, 2] = eps
    fd = (f(x + e) - f(x - e)) / (2 * eps)
    assert abs(g[1, 2] - fd) < 1e-7


def name_layer(h, w, b):
    pre = ad.checkpoint_name(h @ w + b, "pre")
    return ad.checkpoint_name(anp.tanh(pre), "act") * anp.sin(pre)


def name_plain(params, x):
    h = x
    for w, b in params:
        h = name_layer(h, w, b)
    return anp.sum(h ** 2)


@pytest.mark.parametrize("policy", [P.save_only_these_names("pre"),
                                    P.save_only_these_names("act", "pre"),
                                    P.save_anything_except_these_names("pre"),
                                    P.save_anything_except_these_names("act"),
                                    P.dots_saveable, None])
def test_name_policies_give_the_plain_gradient(policy, problem):
    params, x = problem
    layers = [(lambda h, w=w, b=b: name_layer(h, w, b)) for w, b in params]
    f = lambda p, x: anp.sum(ad.checkpoint_sequential(  # noqa: E731
        [(lambda h, w=w, b=b: name_layer(h, w, b)) for w, b in p], policy
        if policy is not None else "sqrt_n")(x) ** 2)
    assert len(layers) == 7
    assert_same_grads(ad.grad(f, argnums=(0, 1))(params, x),
                      ad.grad(name_plain, argnums=(0, 1))(params, x))


@pytest.mark.parametrize("outer,inner", [(None, None), (None, P.dots_saveable),
                                         (P.everything_saveable, None),
                                         (P.save_only_these_names("pre"), P.nothing_saveable)])
def test_nested_checkpoints(outer, inner, problem):
    params, x = problem
    (w1, b1), (w2, b2) = params[:2]
    lay = ad.checkpoint(name_layer, policy=inner)

    def f(w1, w2, x):
        block = ad.checkpoint(lambda h: lay(lay(h, w1, b1), w2, b2), policy=outer)
        return anp.sum(ad.checkpoint(lambda h: block(block(h)))(x) ** 2)

    def f0(w1, w2, x):
        h = x
        for _ in range(2):
            h = name_layer(name_layer(h, w1, b1), w2, b2)
        return anp.sum(h ** 2)

    assert_same_grads(ad.grad(f, argnums=(0, 1, 2))(w1, w2, x),
                      ad.grad(f0, argnums=(0, 1, 2))(w1, w2, x))
    # the abstractly traced gradient program, run by the interpreter, agrees too
    prog = ad.make_jaxpr(ad.grad(f, argnums=(0, 1, 2)))(w1, w2, x)
    assert_same_grads(run_closed(prog, [w1, w2, x]), ad.grad(f0, argnums=(0, 1, 2))(w1, w2, x))


def test_higher_order_and_forward_mode(problem):
    params, _ = problem
    w, b = params[0]
    v = np.linspace(-1, 1, 6)
    g = ad.checkpoint(lambda h: dense(dense(h, w, b), w, b))
    f = lambda h: anp.sum(g(h) ** 3)                    # noqa: E731
    f0 = lambda h: anp.sum(dense(dense(h, w, b), w, b) ** 3)   # noqa: E731
    np.testing.assert_allclose(ad.hessian(f)(v), ad.hessian(f0)(v), atol=TOL)
    np.testing.assert_allclose(ad.jacrev(ad.grad(f))(v), ad.hessian(f0)(v), atol=TOL)
    np.testing.assert_allclose(ad.grad(ad.grad(lambda s: f(s * v)))(0.7),
                               ad.grad(ad.grad(lambda s: f0(s * v)))(0.7), atol=TOL)
    np.testing.assert_allclose(ad.jvp(f, (v,), (v,))[1], ad.jvp(f0, (v,), (v,))[1], atol=TOL)
    _, lin = ad.linearize(g, v)
    _, lin0 = ad.linearize(lambda h: dense(dense(h, w, b), w, b), v)
    np.testing.assert_allclose(lin(v), lin0(v), atol=TOL)


def test_vmap_composes(problem):
    params, x = problem
    f = chain_loss("sqrt_n")
    xs = np.stack([x, 2 * x, -x])
    per = ad.vmap(ad.grad(f, argnums=1), in_axes=(None, 0))(params, xs)
    ref = np.stack([ad.grad(plain_loss, argnums=1)(params, xi) for xi in xs])
    np.testing.assert_allclose(per, ref, atol=TOL)
    # grad of a vmapped checkpoint
    fv = lambda p, xs: anp.sum(ad.vmap(lambda xi: f(p, xi))(xs))          # noqa: E731
    fv0 = lambda p, xs: anp.sum(ad.vmap(lambda xi: plain_loss(p, xi))(xs))  # noqa: E731
    assert_same_grads(ad.grad(fv)(params, xs), ad.grad(fv0)(params, xs))


def test_pytrees_static_args_kwargs_and_python_control_flow():
    x = np.array([0.3, -0.7, 1.1])

    @ad.checkpoint
    def f(d, k):
        return {"a": anp.sin(d["x"]) * d["y"], "pass": d["x"], "k": k * 2}

    def loss(x, y):
        r = f({"x": x, "y": y}, np.int64(3))
        return anp.sum(r["a"] + 2.0 * r["pass"]) + r["k"]

    gx, gy = ad.grad(loss, argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx, np.cos(x) * x + 2.0, atol=TOL)
    np.testing.assert_allclose(gy, np.sin(x), atol=TOL)

    p = ad.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(p(x, 3)))(x), 3 * x ** 2, atol=TOL)
    s = ad.checkpoint(lambda x, scale=1.0: x * scale)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(s(x, scale=3.0)))(x), 3.0)
    # under grad (no jit) the checkpointed function sees concrete values
    c = ad.checkpoint(lambda x: anp.sin(x) if anp.sum(x) > 0 else anp.cos(x))
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(c(x)))(x), np.cos(x), atol=TOL)
    np.testing.assert_allclose(ad.grad(lambda x: anp.sum(c(x)))(-x), -np.sin(-x), atol=TOL)


def test_concrete_call_returns_numpy_values():
    x = np.array([0.5, 1.5])
    out = ad.checkpoint(lambda x: anp.tanh(x) * 2)(x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, 2 * np.tanh(x))
    assert isinstance(ad.checkpoint(anp.sum)(x), np.floating)
    assert ad.remat is ad.checkpoint
    np.testing.assert_allclose(ad.checkpoint_name(x, "x"), x)


# ----------------------------------------------------------------------------
# what is saved
# ----------------------------------------------------------------------------

def _extra(res):
    """Residuals that are not the function's own inputs, by producing primitive."""
    return sorted(r.primitive for r in res if r.argument is None)


def test_policies_decide_what_is_saved():
    rng = np.random.default_rng(2)
    w, b, x = rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal((2, 4))
    f = lambda pol: (lambda w, x: anp.sum(  # noqa: E731
        ad.checkpoint(name_layer, policy=pol)(x, w, b)))
    plain = _extra(saved_residuals(lambda w, x: anp.sum(name_layer(x, w, b)), w, x))
    assert _extra(saved_residuals(f(P.everything_saveable), w, x)) == plain
    assert _extra(saved_residuals(f(P.nothing_saveable), w, x)) == []
    assert _extra(saved_residuals(f(None), w, x)) == []
    assert _extra(saved_residuals(f(P.dots_saveable), w, x)) == ["dot_general"]
    assert _extra(saved_residuals(f(P.save_only_these_names("pre")), w, x)) == ["name"]
    # save all except the labelled values: neither 'pre' nor what 'pre' labels is kept
    pre_line = name_layer.__code__.co_firstlineno + 1
    res = saved_residuals(f(P.save_anything_except_these_names("pre")), w, x)
    assert _extra(res) != []
    assert all(r.source.lineno != pre_line for r in res if r.argument is None)
    res = saved_residuals(f(P.save_only_these_names("pre")), w, x)
    assert [r.source.lineno for r in res if r.argument is None] == [pre_line]
    # a JAX-style policy function works too
    only_sin = lambda prim, *avals, **params: prim.name == "sin"   # noqa: E731
    assert _extra(saved_residuals(f(only_sin), w, x)) == ["sin"]


def test_closed_over_parameters_are_used_inside_the_checkpoint():
    # `h @ w + b` broadcasts the closed-over b: that must happen inside the body, or
    # the broadcast (activation-sized) would be saved for every layer
    params = make_params(4)
    x = np.ones((3, 6))
    res = saved_residuals(lambda p, x: chain_loss(ad.every(4))(p, x), params, x)
    assert [r.primitive for r in res if r.argument is None] == ["mul"]   # d(h**2) = 2h
    assert all(r.primitive != "broadcast_in_dim" for r in res)


def test_print_saved_residuals_names_shapes_bytes_and_lines(capsys):
    w = np.ones((3, 3))
    x = np.ones((2, 3))

    def f(w, x):
        h = anp.tanh(x @ w)          # the residual line
        return anp.sum(h * h)

    ad.print_saved_residuals(f, w, x)
    out = capsys.readouterr().out
    line = f.__code__.co_firstlineno + 1
    assert f"test_checkpoint.py:{line}" in out
    assert "f64[2,3]" in out and "48 bytes" in out
    assert "input args[0]" in out and "input args[1]" in out
    assert out.strip().splitlines()[-1].startswith("saved: ")


def test_sqrt_n_residual_bytes_and_growth():
    # IR counts: sqrt_n saves at most a quarter of what 'none' saves, its peak (saved plus
    # one segment recomputed) is under a quarter at n = 64 and grows like sqrt(n)
    # (x4 layers -> about x2 bytes), while 'none' grows like n
    x = np.ones((4, 8))
    counts = {}
    for n in (16, 64):
        params = make_params(n, width=8)
        for s in ("none", "sqrt_n"):
            counts[n, s] = residual_bytes(chain_loss(s), params, x)
    act = x.nbytes
    assert counts[16, "none"][0] == 2 * 16 * act         # x and tanh' of every layer
    assert counts[16, "sqrt_n"][0] <= counts[16, "none"][0] / 4
    assert counts[64, "sqrt_n"][1] <= counts[64, "none"][1] / 4
    assert counts[64, "none"][1] == 4 * counts[16, "none"][1]
    assert counts[64, "sqrt_n"][1] <= 2.2 * counts[16, "sqrt_n"][1]
    # every(k): n/k boundaries saved
    params = make_params(12, width=8)
    saved, _ = residual_bytes(chain_loss(ad.every(3)), params, x)
    assert saved == (12 // 3 - 1 + 1) * act     # 3 inner boundaries + d(h**2)


def test_recomputation_happens_in_the_backward_program():
    params = make_params(4)
    x = np.ones((3, 6))
    prog = ad.make_jaxpr(ad.grad(chain_loss("sqrt_n")))(params, x)

    def tanhs(eqns):
        n = 0
        for e in eqns:
            if e.primitive.name == "tanh":
                n += 1
            if e.primitive is remat_p:
                n += tanhs(e.params["jaxpr"].eqns)
        return n

    # forward: 4 tanh; backward recomputes each segment's tanh once more
    assert tanhs(prog.eqns) == 8
    prog_save = ad.make_jaxpr(ad.grad(chain_loss(P.everything_saveable)))(params, x)
    assert tanhs(prog_save.eqns) == 4
    # CSE must not merge the recomputation back into the forward pass
    simple = simplify_jaxpr(prog)
    assert tanhs(simple.eqns) == 8
    assert_same_grads(run_closed(simple, [a for wb in params for a in wb] + [x]),
                      ad.grad(plain_loss)(params, x))


def test_inlined_programs_as_a_backend_runs_them(problem):
    # a backend lowers remat by inlining its body: same values, recomputation kept
    params, x = problem
    args = [a for wb in params for a in wb] + [x]
    ref = ad.grad(plain_loss)(params, x)
    for strategy in ("sqrt_n", ad.every(2), P.dots_saveable):
        prog = simplify_jaxpr(ad.make_jaxpr(ad.grad(chain_loss(strategy)))(params, x))
        flat_prog = inline_remat(prog)
        typecheck_jaxpr(flat_prog.jaxpr)
        assert all(e.primitive is not remat_p for e in flat_prog.eqns)
        assert_same_grads(run_closed(flat_prog, args), ref)
    tanh = [e for e in inline_remat(ad.make_jaxpr(ad.grad(chain_loss("sqrt_n")))(params, x)).eqns
            if e.primitive.name == "tanh"]
    assert len(tanh) == 2 * len(params)


def _peak_bytes(closed, args):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    out = run_closed(closed, args)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, out


def _measure_peaks():
    """Peak bytes of the interpreter running grad of a 16- and a 64-layer chain, without and
    with sqrt_n checkpointing (run in a fresh process by the test below)."""
    width = 32
    x = np.random.default_rng(3).standard_normal((32, width))
    peaks = {}
    for n in (16, 64):
        params = make_params(n, width=width)
        args = [a for wb in params for a in wb] + [x]
        outs = {}
        for s in ("none", "sqrt_n"):
            prog = ad.make_jaxpr(ad.grad(chain_loss(s), argnums=1))(params, x)
            peaks[f"{n},{s}"], outs[s] = _peak_bytes(prog, args)
        np.testing.assert_allclose(outs["sqrt_n"][0], outs["none"][0], atol=TOL)
    return x.nbytes, peaks


def test_measured_peak_memory_of_the_interpreter():
    # gradient w.r.t. the input only (parameters are not differentiated), so what the
    # interpreter holds at its peak is residuals and temporaries, not the gradient. Measured
    # in a fresh process: tracemalloc counts every thread's allocations, and threads that
    # earlier tests of the same worker left running (Dask's event loop, a compile thread)
    # would add theirs to the peak
    import json
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import json, test_checkpoint as t; act, p = t._measure_peaks(); "
            "print('PEAKS ' + json.dumps([act, p]))")
    res = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    act, raw = json.loads([ln for ln in res.stdout.splitlines() if ln.startswith("PEAKS ")][0][6:])
    peaks = {(int(k.split(",")[0]), k.split(",")[1]): v for k, v in raw.items()}
    assert peaks[64, "none"] >= 64 * act          # every layer's tanh' alive at once
    assert peaks[64, "sqrt_n"] <= 0.4 * peaks[64, "none"]
    # run-time growth: x4 layers costs 'none' about x4, 'sqrt_n' about x2
    assert peaks[64, "none"] >= 3.2 * peaks[16, "none"]
    assert peaks[64, "sqrt_n"] <= 2.5 * peaks[16, "sqrt_n"]


def test_num_checkpoints_of_strategies():
    fns = [anp.sin] * 10
    assert ad.checkpoint_sequential(fns, "none").num_checkpoints == 0
    assert ad.checkpoint_sequential(fns, "sqrt_n").num_checkpoints == 3      # ceil(sqrt 10) = 4
    assert ad.checkpoint_sequential(fns, ad.every(4)).num_checkpoints == 3
    assert ad.checkpoint_sequential(fns, P.dots_saveable).num_checkpoints == 10
    x = np.array([0.4])
    np.testing.assert_allclose(ad.checkpoint_sequential(fns)(x), np.sin(np.sin(np.sin(
        np.sin(np.sin(np.sin(np.sin(np.sin(np.sin(np.sin(x)))))))))), atol=TOL)


def test_errors():
    with pytest.raises(ValueError, match="strategy"):
        ad.checkpoint_sequential([anp.sin], "sqrtn")
    with pytest.raises(ValueError):
        ad.every(0)
    with pytest.raises(TypeError):
        ad.checkpoint(anp.sin, policy="dots")
    with pytest.raises(TypeError):
        ad.checkpoint_name(np.ones(2), 3)
    with pytest.raises(TypeError):
        ad.checkpoint_sequential([1, 2])
    assert P.save_only_these_names("a", "b") == P.save_only_these_names("b", "a")
    assert hash(ad.every(2)) == hash(ad.every(2))


# ----------------------------------------------------------------------------
# under jit
# ----------------------------------------------------------------------------

@pytest.fixture
def small_problem():
    # compiling is the cost under jit: keep the chain short
    rng = np.random.default_rng(4)
    return make_params(4, width=4), rng.standard_normal((2, 4))


@pytest.mark.parametrize("strategy", ["none", "sqrt_n", ad.every(2), P.dots_saveable], ids=repr)
def test_under_jit(strategy, small_problem):
    params, x = small_problem
    g = ad.jit(ad.grad(chain_loss(strategy), argnums=(0, 1)))(params, x)
    assert_same_grads(g, ad.grad(plain_loss, argnums=(0, 1))(params, x))


def test_nested_under_jit(small_problem):
    params, x = small_problem
    (w, b) = params[0]
    inner = ad.checkpoint(name_layer, policy=P.save_only_these_names("pre"))
    f = lambda x: anp.sum(ad.checkpoint(lambda h: inner(inner(h, w, b), w, b))(x) ** 2)  # noqa
    f0 = lambda x: anp.sum(name_layer(name_layer(x, w, b), w, b) ** 2)   # noqa: E731
    np.testing.assert_allclose(ad.jit(ad.grad(f))(x), ad.grad(f0)(x), atol=TOL)
    np.testing.assert_allclose(ad.grad(ad.jit(f))(x), ad.grad(f0)(x), atol=TOL)
