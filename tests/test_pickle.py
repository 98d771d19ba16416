"""Jitted and transformed functions, jaxprs, Lowered and tape leaves survive pickle and
cloudpickle, and run in other processes: a spawned process pool, a Dask LocalCluster
(2 worker processes, loopback only, started once for this module) and dask.delayed."""
import concurrent.futures
import multiprocessing
import pathlib
import pickle
import runpy

import cloudpickle
import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
PICKLERS = [pytest.param(pickle, id="pickle"), pytest.param(cloudpickle, id="cloudpickle")]


def loss(w, x):
    return anp.sum(anp.tanh(x @ w) ** 2)


@ad.jit
def decorated(x):
    return anp.sum(anp.sin(x) * x)


jitted_loss = ad.jit(loss)
X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
W = np.array([0.3, -0.2, 0.5])


def _grad_loss_closed_form(w, x):
    t = np.tanh(x @ w)
    return x.T @ (2 * t * (1 - t ** 2))


def _roundtrip(mod, obj):
    return mod.loads(mod.dumps(obj))


@pytest.mark.parametrize("mod", PICKLERS)
def test_jitted_function_roundtrips_before_and_after_its_first_call(mod):
    f = ad.jit(loss, static_argnames=())
    f.clear_cache()
    recipe = len(mod.dumps(f))
    g = _roundtrip(mod, f)                     # before: the cache holds a lock, no kernel
    assert np.isclose(g(W, X), np.sum(np.tanh(X @ W) ** 2), rtol=1e-12)
    f(W, X)
    assert len(mod.dumps(f)) == recipe                       # the recipe, not the cache
    h = _roundtrip(mod, f)                     # after: the cache holds a compiled kernel
    # in this process jit(loss) with f's options is f itself (one cache per function)
    assert h is f and np.isclose(h(W, X), np.sum(np.tanh(X @ W) ** 2), rtol=1e-12)


@pytest.mark.parametrize("mod", PICKLERS)
def test_jit_options_survive(mod):
    f = ad.jit(lambda x, n: anp.sum(x ** n), static_argnums=1, backend="interpret") \
        if mod is cloudpickle else ad.jit(anp.sum, backend="interpret")
    g = _roundtrip(mod, f)
    assert g._backend == "interpret" and g._static_argnums == f._static_argnums
    args = (X, 3) if mod is cloudpickle else (X,)
    assert np.isclose(g(*args), f(*args), rtol=1e-12)


def test_module_level_decorated_function_goes_by_reference():
    # ``decorated`` is what the module attribute holds: plain pickle sends its name
    assert pickle.loads(pickle.dumps(decorated)) is decorated
    assert cloudpickle.loads(cloudpickle.dumps(decorated)) is decorated


@pytest.mark.parametrize("mod", PICKLERS)
@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jacrev", "jacfwd", "hessian",
                                       "jacobian"])
def test_transformed_functions_roundtrip(mod, transform):
    f = getattr(ad, transform)(loss)
    g = _roundtrip(mod, f)
    want, got = f(W, X), g(W, X)
    for a, b in zip(np.atleast_1d(want) if transform != "value_and_grad" else want,
                    np.atleast_1d(got) if transform != "value_and_grad" else got):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    if transform == "grad":
        np.testing.assert_allclose(got, _grad_loss_closed_form(W, X), rtol=1e-12)


@pytest.mark.parametrize("mod", PICKLERS)
def test_vmap_of_grad_and_jit_of_grad_roundtrip(mod):
    per_example = ad.vmap(ad.grad(loss), in_axes=(None, 0))
    g = _roundtrip(mod, ad.jit(per_example))
    got = g(W, X[:, None, :])
    want = np.stack([_grad_loss_closed_form(W, X[i:i + 1]) for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_lambdas_and_closures_need_cloudpickle():
    scale = 3.0
    f = ad.jit(ad.grad(lambda x: scale * anp.sum(x ** 2)))
    g = cloudpickle.loads(cloudpickle.dumps(f))
    np.testing.assert_allclose(g(np.ones(2)), [6.0, 6.0])
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(f)            # as for the lambda itself: pickle sends functions by name


@pytest.mark.parametrize("mod", PICKLERS)
def test_closed_jaxpr_roundtrips_and_evaluates(mod):
    closed = ad.make_jaxpr(ad.grad(loss))(W, X)
    back = _roundtrip(mod, closed)
    assert back == closed and str(back) == str(closed)
    ad.core.typecheck_jaxpr(back.jaxpr)
    np.testing.assert_allclose(ad.core.eval_closed(back, W, X)[0],
                               _grad_loss_closed_form(W, X), rtol=1e-12)


def test_jaxpr_with_control_flow_and_constants_roundtrips():
    def f(x):
        c = np.arange(3.0)                                       # a constant of the jaxpr
        return ad.lax.scan(lambda h, xi: (h * 0.5 + xi * c, h.sum()), anp.zeros(3), x)[1]
    closed = ad.make_jaxpr(f)(np.ones((4, 3)))
    back = pickle.loads(pickle.dumps(closed))
    assert back == closed
    np.testing.assert_allclose(ad.core.eval_closed(back, np.ones((4, 3)))[0],
                               ad.core.eval_closed(closed, np.ones((4, 3)))[0])


def test_unknown_primitive_is_named_on_load():
    closed = ad.make_jaxpr(anp.sin)(1.0)
    data = pickle.dumps(closed).replace(b"sin", b"zzz")
    with pytest.raises(ValueError, match="primitive 'zzz'"):
        pickle.loads(data)


@pytest.mark.parametrize("mod", PICKLERS)
def test_lowered_roundtrips_and_compiles_on_the_receiving_side(mod):
    f = ad.jit(loss)
    low = f.lower(W, X)
    back = _roundtrip(mod, low)
    assert back.source == low.source and str(back.jaxpr) == str(low.jaxpr)
    c = back.compile()
    assert c.cache_info().compiled == 1
    assert np.isclose(c(W, X), np.sum(np.tanh(X @ W) ** 2), rtol=1e-12)


@pytest.mark.parametrize("mod", PICKLERS)
def test_tape_leaf_variable_roundtrips(mod):
    v = ad.Variable(np.array([2.0, 3.0]))
    (v * v).sum().backward()
    back = _roundtrip(mod, v)
    np.testing.assert_allclose(back.grad, [4.0, 6.0])
    z = (back * back * back).sum()
    back.grad = None
    z.backward()
    np.testing.assert_allclose(back.grad, [12.0, 27.0])


# ---------------------------------------------------------------- other processes

def _worker_call(fn, *args):
    return np.asarray(fn(*args))


def test_spawned_process_pool_runs_jit_and_grad():
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        jobs = [pool.submit(_worker_call, jitted_loss, W, X),
                pool.submit(_worker_call, ad.jit(ad.grad(loss)), W, X),
                pool.submit(_worker_call, decorated, X[0]),
                pool.submit(_worker_call, ad.hessian(loss), W, X)]
        got = [j.result(timeout=120) for j in jobs]
    assert np.isclose(got[0], np.sum(np.tanh(X @ W) ** 2), rtol=1e-12)
    np.testing.assert_allclose(got[1], _grad_loss_closed_form(W, X), rtol=1e-12)
    assert np.isclose(got[2], np.sum(np.sin(X[0]) * X[0]), rtol=1e-12)
    np.testing.assert_allclose(got[3], ad.hessian(loss)(W, X), rtol=1e-12)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    cl = distributed.Client(cluster)
    try:
        yield cl
    finally:
        cl.close()
        cluster.close()


def test_dask_workers_run_a_jitted_closure_and_its_gradient(client):
    offset = 0.25                                     # a closure: cloudpickle sends it by value

    @ad.jit
    def f(w, x):
        return anp.sum((x @ w - offset) ** 2)

    df = ad.jit(ad.grad(f))
    futures = client.map(df, [W * k for k in range(4)], [X] * 4)
    got = client.gather(futures)
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, 2 * X.T @ (X @ (W * k) - offset), rtol=1e-12)
    # both workers took part, each tracing and compiling on its own first call
    assert len(client.run(lambda: 1)) == 2


def test_dask_delayed_with_processes(client):
    import dask

    parts = [dask.delayed(jitted_loss)(W, X[i:i + 2]) for i in (0, 2)]
    total = dask.delayed(sum)(parts)
    assert np.isclose(total.compute(), np.sum(np.tanh(X @ W) ** 2), rtol=1e-12)


def test_dask_sweep_example_runs_on_the_cluster(client, capsys):
    mod = runpy.run_path(str(EXAMPLES / "dask_sweep.py"))
    lams, val, w_dp, w_exact = mod["main"](client=client, n=800, d=6, steps=12)
    assert val.shape == lams.shape and np.all(np.isfinite(val))
    np.testing.assert_allclose(w_dp, w_exact, atol=1e-3)
    assert "data-parallel gradient descent" in capsys.readouterr().out
