"""autodiff.distributed.data_parallel_value_and_grad on a 2-worker LocalCluster (worker
processes, loopback only, started once for this module): equal to one process's
value_and_grad over the concatenated data (1e-12), bit-identical reruns, the function
unpickled once per worker, the weights/sum/aux/argnums options and the errors."""
import sys

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.distributed import NoClientError, data_parallel_value_and_grad

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def mlp_loss(params, shard):
    """Mean squared error of a one-hidden-layer tanh network over the shard's rows."""
    x, y = shard
    h = anp.tanh(x @ params["w1"] + params["b1"])
    return anp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def make_problem(n=64, d=3, hidden=5, seed=0):
    rng = np.random.default_rng(seed)
    params = {"w1": rng.standard_normal((d, hidden)) * 0.5, "b1": np.zeros(hidden),
              "w2": rng.standard_normal(hidden) * 0.5, "b2": np.float64(0.1)}
    x = rng.standard_normal((n, d))
    y = np.sin(x @ np.arange(1.0, d + 1))
    return params, x, y


def split(x, y, bounds):
    return [(x[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def assert_tree_close(a, b, rtol):
    for k in b:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=1e-15, err_msg=k)


def assert_tree_identical(a, b):
    for k in b:
        assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k


def test_equals_one_process_and_reruns_are_bit_identical(client):
    params, x, y = make_problem()
    shards = client.scatter(split(x, y, [0, 16, 32, 48, 64]))      # 4 equal shards
    f = data_parallel_value_and_grad(mlp_loss, client)
    value, grad = f(params, shards)
    v1, g1 = ad.value_and_grad(mlp_loss)(params, (x, y))            # one process, all rows
    assert value == pytest.approx(v1, rel=1e-12)
    assert_tree_close(grad, g1, rtol=1e-12)
    for _ in range(2):
        value2, grad2 = f(params, shards)
        assert np.asarray(value2).tobytes() == np.asarray(value).tobytes()
        assert_tree_identical(grad2, grad)
    # the tree's additions as tasks on the workers: the same bits
    f_workers = data_parallel_value_and_grad(mlp_loss, client, reduce_on="workers")
    value_w, grad_w = f_workers(params, shards)
    assert np.asarray(value_w).tobytes() == np.asarray(value).tobytes()
    assert_tree_identical(grad_w, grad)
    # a gradient step moves the loss down: the gradient has the right sign and scale
    stepped = {k: params[k] - 0.1 * grad[k] for k in params}
    assert f(stepped, shards)[0] < value
    # shipped once: each worker unpickled one runner, compiled one signature, served calls
    stats = f.worker_stats()
    assert len(stats) == 2
    assert all(s["loads"] == 1 and s["compiled"] == 1 for s in stats.values()), stats
    assert sum(s["calls"] for s in stats.values()) == 4 * 4


def test_unequal_shards_with_weights_and_plain_data(client):
    params, x, y = make_problem(n=30, seed=1)
    shards = split(x, y, [0, 7, 19, 30])          # data, not futures: scattered per call
    f = data_parallel_value_and_grad(mlp_loss, client, jit=False)
    value, grad = f(params, shards, weights=[7, 12, 11])
    v1, g1 = ad.value_and_grad(mlp_loss)(params, (x, y))
    assert value == pytest.approx(v1, rel=1e-12)
    assert_tree_close(grad, g1, rtol=1e-12)
    # without weights: the plain mean of the shards' means (documented), checked by hand
    value_m, grad_m = f(params, shards)
    parts = [ad.value_and_grad(mlp_loss)(params, s) for s in shards]
    assert value_m == pytest.approx(np.mean([v for v, _ in parts]), rel=1e-12)
    assert_tree_close(grad_m, {k: np.mean([g[k] for _, g in parts], axis=0) for k in g1},
                      rtol=1e-12)
    assert abs(value_m - v1) > 1e-6                  # the two semantics do differ here
    # parameters over 1 MiB are scattered once per call and reduced on the workers
    big = {**params, "unused": np.zeros(150_000)}
    value_b, grad_b = f(big, shards, weights=[7, 12, 11])
    assert value_b == value and not np.any(grad_b["unused"])
    assert_tree_identical({k: grad_b[k] for k in grad}, grad)


def test_sum_aux_argnums_and_extra_args(client):
    def loss(w, shard, lam):
        x, y = shard
        r = x @ w - y
        return anp.sum(r ** 2) + lam * anp.sum(w ** 2), anp.max(anp.abs(r))

    rng = np.random.default_rng(2)
    x, y, w = rng.standard_normal((12, 3)), rng.standard_normal(12), rng.standard_normal(3)
    shards = client.scatter(split(x, y, [0, 4, 8, 12]))
    f = data_parallel_value_and_grad(loss, client, has_aux=True, reduce="sum")
    (value, aux), grad = f(w, shards, 0.5)
    r = x @ w - y
    assert value == pytest.approx(np.sum(r ** 2) + 3 * 0.5 * np.sum(w ** 2), rel=1e-12)
    np.testing.assert_allclose(grad, 2 * x.T @ r + 3 * 2 * 0.5 * w, rtol=1e-12)
    np.testing.assert_allclose(aux, [np.max(np.abs(r[k:k + 4])) for k in (0, 4, 8)],
                               rtol=1e-14)
    # argnums=2: the derivative in lam, summed over shards: 3 * |w|^2
    f_lam = data_parallel_value_and_grad(lambda w, s, lam: loss(w, s, lam)[0], client,
                                         argnums=2, reduce="sum", jit=False)
    assert f_lam(w, shards, 0.5)[1] == pytest.approx(3 * np.sum(w ** 2), rel=1e-12)


def test_default_client_and_errors(client, monkeypatch):
    params, x, y = make_problem(n=8)
    f = data_parallel_value_and_grad(mlp_loss, jit=False)     # the default client: `client`
    v1, _ = ad.value_and_grad(mlp_loss)(params, (x, y))
    assert f(params, split(x, y, [0, 4, 8]))[0] == pytest.approx(v1, rel=1e-12)
    with pytest.raises(ValueError, match="reduce must be one of"):
        data_parallel_value_and_grad(mlp_loss, client, reduce="max")
    with pytest.raises(ValueError, match="reduce_on must be"):
        data_parallel_value_and_grad(mlp_loss, client, reduce_on="scheduler")
    with pytest.raises(ValueError, match="shards is empty"):
        f(params, [])
    with pytest.raises(ValueError, match="2 weights for 3 shards"):
        f(params, split(x, y, [0, 2, 4, 8]), weights=[1, 2])
    monkeypatch.setattr(distributed, "get_client", _no_client)
    with pytest.raises(NoClientError, match=r"Client\(\"tcp://scheduler:8786\"\)"):
        f(params, split(x, y, [0, 4, 8]))
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match="`distributed` extra"):
        f(params, split(x, y, [0, 4, 8]))


def _no_client():
    raise ValueError("No global client found and no address provided")


def test_importing_autodiff_imports_no_dask():
    import subprocess
    code = "import sys, autodiff, autodiff.distributed; print('distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_the_example_trains_on_the_cluster(client):
    import runpy
    import pathlib
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "dask_data_parallel.py"
    mod = runpy.run_path(str(path))
    lines = []
    # the example checks its first step against one process to 1e-12 itself
    _, losses = mod["train"](client, n=256, steps=8, lr=0.05, progress=False, log=lines.append)
    assert len(losses) == 8 and losses[-1] < losses[0]
    assert "4 shards of 64 rows on 2 workers" in lines[0]
