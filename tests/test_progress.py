"""autodiff.progress: tqdm bars driven from scan / fori_loop bodies (eagerly, under grad,
vmap and inside compiled kernels), throttled to every print_rate steps, results unchanged
bit for bit; the progress= option of the optimizer loops."""
import sys

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff.misc import optimizers
from autodiff.progress import loop_tqdm, reporter, scan_tqdm

N = 200


class FakeBar:
    """Records what the host side asks of a tqdm bar."""
    made = []

    def __init__(self, total, **kwargs):
        self.total, self.kwargs, self.n = total, kwargs, 0
        self.updates, self.closed = [], False
        FakeBar.made.append(self)

    def update(self, k):
        self.n += k
        self.updates.append(self.n)

    def close(self):
        self.closed = True


@pytest.fixture
def fake_bars():
    FakeBar.made = []
    return FakeBar.made


def step(c, i):
    return c * 0.99 + anp.sin(c) * 0.01 + 1.0, c


def run(body, n=N):
    def f(c0):
        c, ys = ad.lax.scan(body, c0, np.arange(n))
        return anp.sum(c) + anp.sum(ys)
    return f


def last_render(text):
    return text.split("\r")[-1].strip()


def test_jitted_scan_shows_the_bar_reaching_n_on_stderr(capsys):
    body = scan_tqdm(N)(step)
    f, f_plain = ad.jit(run(body)), ad.jit(run(step))
    c0 = np.array([0.5, -1.0])
    for _ in range(2):                     # the second call runs the compiled kernel
        out = f(c0)
        err = capsys.readouterr().err
        assert f"{N}/{N}" in last_render(err), err
        assert "Running for 200 iterations" in err
        assert out == f_plain(c0)          # bit for bit the undecorated body's value
        assert out == pytest.approx(run(step)(c0), rel=1e-13)
    assert f.cache_info().compiled == 1
    assert "call_host" in f.lower(c0).as_text()


def test_updates_every_print_rate_steps_and_closes_at_the_end(fake_bars):
    body = scan_tqdm(N, print_rate=30)(step)
    body.progress_bar.tqdm = FakeBar
    f = ad.jit(run(body))
    f(np.ones(2))
    f(np.ones(2))                           # compiled: a new bar for a new run of the loop
    assert len(fake_bars) == 2
    for bar in fake_bars:
        assert bar.total == N and bar.closed
        assert bar.updates == [30, 60, 90, 120, 150, 180, 200]


def test_grad_of_a_decorated_scan_is_the_undecorated_gradient(fake_bars):
    body = scan_tqdm(N, print_rate=50)(step)
    body.progress_bar.tqdm = FakeBar
    c0 = np.array([0.3, 2.0])
    expected = ad.grad(run(step))(c0)
    np.testing.assert_array_equal(ad.grad(run(body))(c0), expected)
    jg = ad.jit(ad.grad(run(body)))
    np.testing.assert_array_equal(jg(c0), jg(c0))
    np.testing.assert_allclose(jg(c0), expected, rtol=1e-13)
    # each of the 4 runs draws one bar to the end (the backward loop draws none)
    assert [b.updates for b in fake_bars] == [[50, 100, 150, 200]] * 4
    # finite differences of the decorated function agree with its gradient
    eps = 1e-6
    fd = [(run(body)(c0 + eps * e) - run(body)(c0 - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(expected, fd, rtol=1e-6)


def test_vmap_of_a_decorated_scan_draws_one_bar(fake_bars):
    body = scan_tqdm(N)(step)
    body.progress_bar.tqdm = FakeBar
    cs = np.array([[0.1, 0.2], [1.0, -3.0], [2.0, 0.0]])
    out = ad.vmap(run(body))(cs)
    assert len(fake_bars) == 1 and fake_bars[0].updates == list(range(10, 201, 10))
    np.testing.assert_array_equal(out, ad.vmap(run(step))(cs))
    np.testing.assert_allclose(out, [run(step)(c) for c in cs], rtol=1e-14)
    assert len(fake_bars) == 1 and fake_bars[0].n == N and fake_bars[0].closed


def test_loop_tqdm_with_fori_loop_under_jit(capsys):
    @loop_tqdm(N, print_rate=7)
    def body(i, val):
        x, k = val
        return x * 1.01 - 0.5 * i, k + i

    f = ad.jit(lambda x: ad.lax.fori_loop(0, N, body, (x, 0)))
    x, k = f(np.float64(2.0))
    assert f"{N}/{N}" in last_render(capsys.readouterr().err)
    x_ref, k_ref = 2.0, 0
    for i in range(N):
        x_ref, k_ref = x_ref * 1.01 - 0.5 * i, k_ref + i
    assert k == k_ref == N * (N - 1) // 2 and np.asarray(k).dtype == np.int64
    assert x == pytest.approx(x_ref, rel=1e-12)


def test_the_index_may_lead_a_tuple_of_xs_and_carries_keep_their_dtypes(fake_bars):
    @scan_tqdm(10, print_rate=3)
    def body(carry, x):
        i, a = x
        s, count = carry
        return (s + a * np.float32(0.5), count + 1), i * 2

    body.progress_bar.tqdm = FakeBar
    init = (np.zeros(3, np.float32), np.int32(0))
    xs = (np.arange(10), np.ones(10, np.float32))
    (s, count), ys = ad.jit(lambda c: ad.lax.scan(body, c, xs))(init)
    assert s.dtype == np.float32 and count.dtype == np.int32 and int(count) == 10
    np.testing.assert_array_equal(s, np.full(3, 5.0, np.float32))
    np.testing.assert_array_equal(ys, np.arange(10) * 2)
    assert fake_bars[0].updates == [3, 6, 10]        # steps 0, 3, 6 and the last, 9


def test_the_hidden_dependency_changes_no_bit():
    @scan_tqdm(4, print_rate=1, disable=True)
    def body(c, i):
        return c, c

    c0 = np.array([-0.0, np.nan, -np.inf, 5e-324])
    c, ys = ad.lax.scan(body, c0, np.arange(4))
    assert c.tobytes() == c0.tobytes()
    assert ys.tobytes() == np.tile(c0, (4, 1)).tobytes()


def test_a_carry_without_numbers_still_gets_a_bar(fake_bars):
    @scan_tqdm(5, print_rate=2)
    def body(c, i):
        return c, i * 1.5

    body.progress_bar.tqdm = FakeBar
    _, ys = ad.lax.scan(body, None, np.arange(5))
    np.testing.assert_array_equal(ys, np.arange(5) * 1.5)
    assert fake_bars[0].updates == [2, 5] and fake_bars[0].closed


def test_errors_name_the_fix(monkeypatch):
    body = scan_tqdm(3)(step)
    with pytest.raises(TypeError, match=r"np\.arange\(n\)") as e:
        ad.lax.scan(body, 0.0, np.ones(3))          # xs without the iteration number
    assert "test_progress.py" in str(e.value)
    with pytest.raises(ValueError, match="positive int"):
        scan_tqdm(0)
    with pytest.raises(ValueError, match="print_rate"):
        loop_tqdm(10, print_rate=0)
    with pytest.raises(ValueError, match="tqdm_type"):
        scan_tqdm(10, tqdm_type="rich")
    for name in ("tqdm", "tqdm.auto", "tqdm.std"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match="`progress` extra"):
        scan_tqdm(10)


def test_pickled_jitted_function_with_a_bar_runs(fake_bars):
    import cloudpickle
    body = scan_tqdm(20, print_rate=5)(step)
    body.progress_bar.tqdm = FakeBar
    f = ad.jit(run(body, 20))
    f(np.ones(1))                             # an open bar would not pickle; a closed one is gone
    g = cloudpickle.loads(cloudpickle.dumps(f))
    assert g(np.ones(1)) == f(np.ones(1))


def test_optimizer_loops_take_progress(capsys):
    grad = ad.grad(lambda p, i: anp.sum((p["w"] - 3.0) ** 2))
    x0 = {"w": np.zeros(2)}
    seen = []
    p = optimizers.adam(grad, x0, num_iters=25, step_size=0.1,
                        progress=lambda i, x: seen.append((i, x["w"][0])))
    np.testing.assert_array_equal(p["w"], optimizers.adam(grad, x0, num_iters=25,
                                                          step_size=0.1)["w"])
    assert [i for i, _ in seen] == list(range(25)) and seen[0][1] == 0.0
    optimizers.sgd(grad, x0, None, 40, progress=True)            # num_iters positional
    assert "40/40" in last_render(capsys.readouterr().err)
    bar = FakeBar(total=100)
    optimizers.rmsprop(grad, x0, num_iters=30, progress=bar)
    optimizers.adagrad(grad, x0, num_iters=70, progress=bar)
    assert bar.n == 100 and not bar.closed                         # the user's bar stays open
    with pytest.raises(TypeError, match="progress must be"):
        optimizers.sgd(grad, x0, progress="yes")


def test_reporter_with_nothing_does_nothing():
    with reporter(None, total=3) as rep:
        for i in range(3):
            rep.update(i, None)
    assert rep.done == 3


def test_a_bare_host_call_in_an_eager_scan_body_runs_every_step():
    # the straight-line runner of hot loop bodies once wrote a result-less equation as
    # " = f(...)" (an IndentationError from the second step on)
    seen = []

    def body(c, i):
        ad.debug.callback(seen.append, i)
        return c + 1.0, c

    c, _ = ad.lax.scan(body, 0.0, np.arange(30))
    assert float(c) == 30.0 and [int(i) for i in seen] == list(range(30))
