"""The tape API: Variables, backward(), grad modes, detach, custom Functions, the graph cache.

Gradients are checked against closed forms and against the functional ``ad.grad``
(the same reverse mode, reached without the tape) and finite differences.
"""
import gc
import threading

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import tape as T
from autodiff.errors import DTypeError, ShapeError, TapeError


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of a scalar numpy function."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


# ----------------------------------------------------------------------------
# the seed's scenario and basic semantics
# ----------------------------------------------------------------------------

def test_seed_scenario():
    x = ad.Variable(np.array([2.0, 3.0]))
    w = ad.Variable(np.array([1.0, 2.0]))
    z = (x * w).sum()
    assert z.item() == 8.0
    z.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 2.0])
    np.testing.assert_array_equal(w.grad, [2.0, 3.0])
    assert isinstance(x.grad, np.ndarray) and x.grad.dtype == np.float64
    assert x.is_leaf and w.is_leaf and not z.is_leaf
    assert x.requires_grad and z.requires_grad
    assert z.grad is None                      # non-leaves do not keep .grad
    assert z.grad_fn == "reduce_sum" and x.grad_fn is None


def _model(x, w, b):
    h = anp.tanh(x @ w + b)                    # matmul, broadcasting add
    return anp.sum(h[:, 1:] ** 2) + anp.mean(anp.exp(-h)) * anp.max(w)


def test_gradients_match_functional_grad_and_finite_differences(rng):
    x = rng.standard_normal((4, 3))
    w0, b0 = rng.standard_normal((3, 2)), rng.standard_normal(2)
    w, b = ad.Variable(w0), ad.Variable(b0)
    loss = _model(x, w, b)
    np.testing.assert_allclose(loss.item(), _model(x, w0, b0), rtol=1e-12)
    loss.backward()
    gw, gb = ad.grad(_model, argnums=(1, 2))(x, w0, b0)
    np.testing.assert_allclose(w.grad, gw, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad, gb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.grad, fd_grad(lambda v: _model(x, v, b0), w0), rtol=1e-5,
                               atol=1e-8)


FUNCS = {
    "reductions": lambda a, b: anp.sum(anp.max(a, axis=1, keepdims=True) * b)
                               + anp.prod(anp.mean(a, axis=0)),
    "indexing": lambda a, b: anp.sum(a[np.array([0, 2, 2])] ** 2) + a[1, ::2].sum() * b[0, -1],
    "where_stack": lambda a, b: anp.sum(anp.where(a > 0, a * b, anp.exp(a))
                                        * anp.stack([b[:, 0]] * 4, axis=1)),
    "linalg": lambda a, b: anp.linalg.norm(a @ a.T + 3 * anp.eye(3)) + anp.sum(
        anp.linalg.solve(a[:, :3] @ a[:, :3].T + 3 * anp.eye(3), b[:, 0])),
    "softmax": lambda a, b: anp.sum(anp.softmax(a, axis=-1) * anp.log1p(b * b)),
    "concat_cumsum": lambda a, b: anp.sum(anp.cumsum(anp.concatenate([a, b], axis=1), axis=1)
                                          * anp.sin(anp.concatenate([b, a], axis=1))),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_tape_matches_functional_grad(name, rng):
    f = FUNCS[name]
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    a, b = ad.Variable(a0), ad.Variable(b0)
    out = f(a, b)
    np.testing.assert_allclose(out.item(), f(a0, b0), rtol=1e-12)
    out.backward()
    ga, gb = ad.grad(f, argnums=(0, 1))(a0, b0)
    np.testing.assert_allclose(a.grad, ga, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad, gb, rtol=1e-10, atol=1e-12)


def test_non_scalar_backward_takes_a_cotangent():
    x = ad.Variable(np.array([1.0, 2.0, 3.0]))
    y = x ** 2                                    # vjp with v: 2·x·v
    with pytest.raises(TapeError, match="implicitly"):
        y.backward()
    v = np.array([1.0, -1.0, 0.5])
    y.backward(v)
    np.testing.assert_allclose(x.grad, 2 * np.array([1.0, 2.0, 3.0]) * v)
    with pytest.raises(ShapeError):
        (x * 2.0).backward(np.ones(2))


def test_size_one_output_needs_no_argument():
    x = ad.Variable(np.array([3.0]))
    (x * x).backward()                           # shape (1,): accepted like a scalar
    np.testing.assert_allclose(x.grad, [6.0])


def test_gradients_accumulate_until_zero_grad():
    x = ad.Variable(np.array([1.0, -2.0]))
    for k in (1, 2):
        (x ** 3).sum().backward()                 # 3x² each time
        np.testing.assert_allclose(x.grad, k * 3 * np.array([1.0, 4.0]))
    x.zero_grad()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    (x ** 3).sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 12.0])


def test_retain_graph_and_freed_graph_error():
    x = ad.Variable(np.array([1.0, 2.0]))
    y = anp.sin(x)
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(x.grad, 2 * np.cos([1.0, 2.0]))
    with pytest.raises(TapeError, match="second time") as err:
        z.backward()
    assert "test_tape.py" in str(err.value)       # names the user's lines
    with pytest.raises(RuntimeError):              # TapeError is a RuntimeError, like torch's
        (y * 2.0).sum().backward()                 # reaches the consumed sin equation
    # forward values of consumed graphs are still available
    np.testing.assert_allclose(y.numpy(), np.sin([1.0, 2.0]))


def test_backward_of_a_variable_without_grad_raises():
    x = ad.Variable(np.array([1.0, 2.0]), requires_grad=False)
    y = (x * 2.0).sum()
    assert not y.requires_grad
    with pytest.raises(TapeError, match="does not require grad"):
        y.backward()


def test_int_variables_cannot_require_grad():
    i = ad.Variable(np.arange(3))
    assert not i.requires_grad
    with pytest.raises(DTypeError):
        ad.Variable(np.arange(3), requires_grad=True)
    x = ad.Variable(np.array([1.0, 2.0, 3.0]))
    (x[i] * x).sum().backward()                  # integer Variables index float ones
    np.testing.assert_allclose(x.grad, 2 * np.array([1.0, 2.0, 3.0]))


# ----------------------------------------------------------------------------
# no_grad / enable_grad / detach
# ----------------------------------------------------------------------------

def test_no_grad_records_nothing_and_enable_grad_nests():
    x = ad.Variable(np.array([1.0, 2.0]))
    w = ad.Variable(np.array([3.0, 4.0]))
    tape = T.current_tape()
    n = tape.size
    assert ad.is_grad_enabled()
    with ad.no_grad():
        assert not ad.is_grad_enabled()
        y = anp.tanh(x * w).sum() + x[0]
        assert tape.size == n                    # the tape stays empty
        with ad.enable_grad():
            assert ad.is_grad_enabled()
            z = (x * w).sum()
        assert tape.size == n + 2                # mul and reduce_sum recorded
        assert not ad.is_grad_enabled()
    assert ad.is_grad_enabled()
    np.testing.assert_allclose(float(y), np.tanh(3.0) + np.tanh(8.0) + 1.0)
    assert not y.requires_grad and y.is_leaf
    assert z.requires_grad
    z.backward()
    np.testing.assert_allclose(x.grad, [3.0, 4.0])


def test_grad_modes_as_decorators():
    x = ad.Variable(np.array([2.0]))

    @ad.no_grad()
    def f(v):
        assert not ad.is_grad_enabled()
        return v * v

    @ad.no_grad
    def g(v):
        return v * v

    @ad.enable_grad()
    def h(v):
        return v * v

    assert not f(x).requires_grad and not g(x).requires_grad
    with ad.no_grad():
        assert h(x).requires_grad
    with T.set_grad_enabled(False):
        assert not ad.is_grad_enabled()
    assert ad.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with ad.no_grad():
        t = threading.Thread(target=lambda: seen.append(ad.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_no_grad_in_functional_transforms_is_stop_gradient():
    def f(x):
        with ad.no_grad():
            c = x * x                              # a constant to the derivative
        return c * x
    # d/dx [sg(x²)·x] = x²
    np.testing.assert_allclose(ad.grad(f)(3.0), 9.0)
    np.testing.assert_allclose(ad.grad(f)(np.float64(-2.0)), 4.0)


def test_detach_cuts_the_gradient():
    x = ad.Variable(np.array([1.5, -0.5]))
    y = x * x
    d = y.detach()
    assert d.is_leaf and not d.requires_grad
    np.testing.assert_allclose(d.numpy(), [2.25, 0.25])
    (d * x).sum().backward()                     # d/dx [sg(x²)·x] = x²
    np.testing.assert_allclose(x.grad, [2.25, 0.25])
    x.grad = None
    (y * x).sum().backward()                     # without detach: 3x²
    np.testing.assert_allclose(x.grad, 3 * np.array([2.25, 0.25]))


def test_inplace_update_of_a_leaf_under_no_grad():
    w = ad.Variable(np.array([1.0, 2.0]))
    (w * w).sum().backward()
    with pytest.raises(TapeError, match="in-place"):
        w -= 0.1 * w.grad
    wid = id(w)
    with ad.no_grad():
        w -= 0.25 * w.grad                       # w - 0.5·w
    assert id(w) == wid and w.is_leaf and w.requires_grad
    np.testing.assert_allclose(w.numpy(), [0.5, 1.0])
    w.grad = None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad, [1.0, 2.0])


def test_recorded_graph_keeps_the_values_it_saw():
    w = ad.Variable(np.array([3.0]))
    y = (w * w).sum()
    w.data = np.array([10.0])                    # replace the leaf's value after recording
    y.backward()
    np.testing.assert_allclose(w.grad, [6.0])    # derivative at the recorded value
    np.testing.assert_allclose(y.item(), 9.0)
    a = np.array([1.0, 2.0])
    x = ad.Variable(np.array([1.0, 1.0]))
    z = (x * a).sum()
    a[:] = 100.0                                 # mutating an input array later is harmless
    z.backward()
    np.testing.assert_allclose(z.item(), 3.0)
    np.testing.assert_allclose(x.grad, [1.0, 2.0])


def test_requires_grad_toggle_and_numpy_conversion():
    x = ad.Variable(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="numpy"):
        np.asarray(x)                            # would silently drop the gradient
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    assert not x.numpy().flags.writeable
    x.requires_grad_(False)
    np.testing.assert_array_equal(np.asarray(x), [1.0, 2.0])
    assert not (x * 2.0).requires_grad
    x.requires_grad = True
    y = x * 2.0
    with pytest.raises(TapeError):
        y.requires_grad = False                   # only leaves
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [2.0, 2.0])


def _array_code(v):
    """numpy on the left, numpy ufuncs, methods, properties, slicing, builtins."""
    y = (np.ones(3) + v).T.reshape(-1)
    y = anp.concatenate([y, np.sin(v)[0]])
    return (y[::2] * 2).sum() + v.max() - abs(v).mean() + np.sum(v @ v.T)


def test_variable_is_array_like():
    x0 = np.arange(6.0).reshape(2, 3) / 4
    x = ad.Variable(x0)
    assert x.shape == (2, 3) and x.ndim == 2 and x.dtype == np.float64 and len(x) == 2
    out = _array_code(x)
    assert isinstance(out, ad.Variable)
    np.testing.assert_allclose(out.item(), _array_code(x0), rtol=1e-12)
    out.backward()
    np.testing.assert_allclose(x.grad, ad.grad(_array_code)(x0), rtol=1e-12)
    assert "requires_grad=True" in repr(x)
    assert bool(x[1, 2] > 1.0) and int(x[1, 1] * 4) == 4
    with pytest.raises(TypeError, match="at"):
        x[0, 0] = 1.0
    assert {x: 1}[x] == 1                       # hashable by identity, like torch tensors


def test_variables_in_functional_transforms_are_recorded():
    x = ad.Variable(np.array([0.3, -0.7]))
    g = ad.grad(lambda v: anp.sum(anp.sin(v) * v))(x)   # cos(x)·x + sin(x)
    assert isinstance(g, ad.Variable) and g.requires_grad
    xv = np.array([0.3, -0.7])
    np.testing.assert_allclose(g.numpy(), np.cos(xv) * xv + np.sin(xv))
    g.sum().backward()                                   # d/dx: 2cos(x) - x·sin(x)
    np.testing.assert_allclose(x.grad, 2 * np.cos(xv) - xv * np.sin(xv))
    ys = ad.vmap(lambda r: anp.dot(r, x))(np.eye(2))
    np.testing.assert_allclose(ys.numpy(), xv)
    # a Variable closed over by a functional transform is a constant there
    w = ad.Variable(np.array(2.0))
    gx = ad.grad(lambda u: u * u * w)(3.0)               # 2·u·w = 12, recorded
    gx.backward()
    np.testing.assert_allclose(gx.item(), 12.0)
    np.testing.assert_allclose(w.grad, 6.0)              # d(2uw)/dw at u=3


def test_tape_grad_higher_order():
    x = ad.Variable(np.array([0.5, 1.0]))
    (g,) = T.grad(anp.sum(anp.tanh(x)), [x], create_graph=True)
    t = np.tanh([0.5, 1.0])
    np.testing.assert_allclose(g.numpy(), 1 - t ** 2)
    (h,) = T.grad(g.sum(), x)
    np.testing.assert_allclose(h, -2 * t * (1 - t ** 2))
    assert x.grad is None                                # tape.grad does not accumulate
    y = x * 3.0                                          # gradient w.r.t. an intermediate
    (gy,) = T.grad((y * y).sum(), [y])
    np.testing.assert_allclose(gy, 2 * y.numpy())
    u = ad.Variable(np.ones(2))
    with pytest.raises(TapeError, match="allow_unused"):
        T.grad((x * 2.0).sum(), [x, u])
    assert T.grad((x * 2.0).sum(), [x, u], allow_unused=True)[1] is None


def test_backward_of_several_outputs_and_inputs_filter():
    x = ad.Variable(np.array([1.0, 2.0]))
    w = ad.Variable(np.array([3.0, 5.0]))
    T.backward([(x * w).sum(), (x * x).sum()])           # w + 2x
    np.testing.assert_allclose(x.grad, [5.0, 9.0])
    np.testing.assert_allclose(w.grad, [1.0, 2.0])
    x.grad = w.grad = None
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad, [1.0, 2.0])


# ----------------------------------------------------------------------------
# custom Functions
# ----------------------------------------------------------------------------

class RoundSTE(ad.Function):
    @staticmethod
    def forward(ctx, x):
        return anp.round(x)

    @staticmethod
    def backward(ctx, g):
        return g


class ScaledCube(ad.Function):
    """y = s·x³ with a deliberately declared gradient 3·s·x² (+ a marker 0.5)."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x)
        ctx.s = s                                  # a static attribute
        ctx.x2 = x * x                             # an array attribute (a residual)
        return s * x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (3.0 * ctx.s * ctx.x2 + 0.5), None


class SplitSum(ad.Function):
    """Two outputs; backward receives one cotangent per output."""

    @staticmethod
    def forward(ctx, x):
        return anp.sum(x), anp.sum(x * x)

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 + 10.0 * g2                      # declared, not the true 2x·g2


def test_straight_through_estimator_both_apis():
    xv = np.array([0.4, 1.6, -2.5])
    c = np.array([1.0, 2.0, 3.0])
    x = ad.Variable(xv)
    y = RoundSTE.apply(x)
    np.testing.assert_array_equal(y.numpy(), np.round(xv))
    (y * c).sum().backward()
    np.testing.assert_array_equal(x.grad, c)      # identity backward, not round's zero
    g = ad.grad(lambda v: anp.sum(RoundSTE.apply(v) * c))(xv)
    np.testing.assert_array_equal(g, c)
    np.testing.assert_array_equal(RoundSTE.apply(xv), np.round(xv))   # plain numpy: forward
    gv = ad.vmap(ad.grad(lambda v: anp.sum(RoundSTE.apply(v) ** 2)))(np.stack([xv, 2 * xv]))
    np.testing.assert_allclose(gv, 2 * np.round(np.stack([xv, 2 * xv])))


def test_function_with_saved_tensors_static_args_and_attributes():
    xv = np.array([1.0, -2.0])
    x = ad.Variable(xv)
    y = ScaledCube.apply(x, 2.0)
    np.testing.assert_allclose(y.numpy(), 2.0 * xv ** 3)
    y.sum().backward()
    declared = 3.0 * 2.0 * xv ** 2 + 0.5
    np.testing.assert_allclose(x.grad, declared)
    g = ad.grad(lambda v: anp.sum(ScaledCube.apply(v, 2.0)))(xv)
    np.testing.assert_allclose(g, declared)
    # forward mode goes through the declared rule as well (custom_vjp's linear map is
    # the derivative of forward, the true 6x²)
    _, t = ad.jvp(lambda v: ScaledCube.apply(v, 2.0), (xv,), (np.ones(2),))
    np.testing.assert_allclose(t, 6.0 * xv ** 2)


def test_function_with_two_outputs():
    x = ad.Variable(np.array([1.0, 2.0]))
    s, q = SplitSum.apply(x)
    np.testing.assert_allclose([s.item(), q.item()], [3.0, 5.0])
    (s + q).backward()
    np.testing.assert_allclose(x.grad, [11.0, 11.0])


def test_function_bad_backward_arity():
    class Bad(ad.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g                                # should return two gradients

    a, b = ad.Variable(np.ones(2)), ad.Variable(np.ones(2))
    with pytest.raises(TypeError, match="2 inputs"):
        Bad.apply(a, b).sum().backward()


def test_function_reuses_the_graph_cache():
    T.clear_cache()
    for i in range(3):
        x = ad.Variable(np.full(3, float(i)))
        (RoundSTE.apply(x) * x).sum().backward()
        np.testing.assert_allclose(x.grad, np.round(np.full(3, float(i))) + i)
    info = T.cache_info()
    assert (info.misses, info.hits) == (1, 2)


# ----------------------------------------------------------------------------
# the graph cache and tape memory
# ----------------------------------------------------------------------------

def _step(W, b, x):
    loss = anp.mean(anp.tanh(x @ W + b) ** 2)
    loss.backward()
    return loss


def test_graph_cache_hits_for_same_shapes_and_misses_for_new_ones(rng):
    T.clear_cache()
    W = ad.Variable(rng.standard_normal((3, 4)))
    b = ad.Variable(np.zeros(4))
    for _ in range(4):
        _step(W, b, rng.standard_normal((5, 3)))
    assert T.cache_info()[:3] == (3, 1, 1)
    loss = _step(W, b, rng.standard_normal((7, 3)))          # new batch size: a new program
    assert T.cache_info()[:3] == (3, 2, 2)
    # cached programs give the same gradients as a fresh build
    x = rng.standard_normal((5, 3))
    W.grad = b.grad = None
    _step(W, b, x)
    assert T.cache_info().hits == 4
    gW = ad.grad(lambda w: anp.mean(anp.tanh(x @ w + b.numpy()) ** 2))(W.numpy())
    np.testing.assert_allclose(W.grad, gW, rtol=1e-12)
    assert np.isfinite(loss.item())


def test_jit_backward_uses_compiled_program(rng):
    np.testing.assert_allclose(ad.jit(lambda a: a * 2.0)(np.ones(2)), [2.0, 2.0])
    T.clear_cache()
    W = ad.Variable(rng.standard_normal((3, 2)))
    b = ad.Variable(np.zeros(2))
    x = rng.standard_normal((4, 3))
    with T.jit_backward():
        for _ in range(3):
            W.grad = b.grad = None
            _step(W, b, x)
    assert T.cache_info()[:2] == (2, 1)
    gW = ad.grad(lambda w: anp.mean(anp.tanh(x @ w) ** 2))(W.numpy())
    np.testing.assert_allclose(W.grad, gW, rtol=1e-10)


def test_long_loops_do_not_grow_the_tape(rng):
    W = ad.Variable(rng.standard_normal((4, 3)))
    b = ad.Variable(np.zeros(3))
    x = rng.standard_normal((8, 4))
    tape = T.current_tape()
    sizes = []
    for i in range(400):                      # training: backward consumes each graph
        loss = _step(W, b, x)
        with ad.no_grad():
            W -= 0.01 * W.grad
            b -= 0.01 * b.grad
        W.zero_grad(); b.zero_grad()
        sizes.append((tape.size, len(tape.values)))
    assert max(s for s, _ in sizes[100:]) <= sizes[50][0] + 20
    assert max(v for _, v in sizes[100:]) <= sizes[50][1] + 20
    for i in range(3000):                     # evaluation without no_grad, never backward
        out = anp.tanh(x @ W + b)
    gc.collect()
    assert tape.size < 2 * T._GC_MIN + 50
    for i in range(2000):                     # no_grad: nothing recorded, values released
        with ad.no_grad():
            out = anp.tanh(x @ W + b)
    assert len(tape.values) < 2 * T._GC_MIN + 50
    assert out.shape == (8, 3) and loss.shape == ()


def test_dead_variables_release_their_values():
    tape = T.current_tape()
    x = ad.Variable(np.ones(1000))
    n = len(tape.values)
    y = anp.exp(x)
    y.numpy()                                  # forces and caches the value
    assert len(tape.values) == n + 1
    del y
    assert len(tape.values) == n               # computed values die with their Variable
    with ad.no_grad():
        z = x * 2.0
    assert len(tape.values) == n + 1
    del z
    assert len(tape.values) == n


def test_outer_no_grad_does_not_reach_into_transforms():
    with ad.no_grad():
        np.testing.assert_allclose(ad.grad(anp.sin)(1.0), np.cos(1.0))
        x = ad.Variable(np.array(1.0))
        g = ad.grad(anp.sin)(x)                      # computed, not recorded
    np.testing.assert_allclose(float(g), np.cos(1.0))
    assert not g.requires_grad


def test_copy_and_pickle_leaves():
    import copy
    import pickle
    w = ad.Variable(np.array([1.0, 2.0]))
    (w * w).sum().backward()
    for c in (copy.deepcopy(w), pickle.loads(pickle.dumps(w))):
        assert c is not w and c.is_leaf and c.requires_grad
        np.testing.assert_array_equal(c.numpy(), w.numpy())
        np.testing.assert_array_equal(c.grad, [2.0, 4.0])
        (c * 3.0).sum().backward()
        np.testing.assert_array_equal(c.grad, [5.0, 7.0])
    np.testing.assert_array_equal(w.grad, [2.0, 4.0])
    with pytest.raises(TapeError):
        copy.deepcopy(w * 2.0)


def test_jit_backward_plumbing_with_a_stub_compiler(monkeypatch):
    """The jit path calls ad.jit once per cached program and falls back on failure."""
    import sys
    jit_mod = sys.modules["autodiff.tape_backward"]  # the jit that backward() calls
    compiled = []

    def stub_jit(fun, **kw):
        compiled.append(fun)
        return lambda *a: fun(*a)
    monkeypatch.setattr(jit_mod, "jit", stub_jit)
    T.clear_cache()
    x = ad.Variable(np.array([1.0, 2.0]))
    with T.jit_backward():
        for _ in range(3):
            x.grad = None
            (anp.sin(x) * x).sum().backward()
    assert len(compiled) == 1 and T.cache_info()[:2] == (2, 1)
    np.testing.assert_allclose(x.grad, np.cos([1.0, 2.0]) * [1.0, 2.0] + np.sin([1.0, 2.0]))

    def failing_jit(fun, **kw):
        raise NotImplementedError("no compiler here")
    monkeypatch.setattr(jit_mod, "jit", failing_jit)
    T.clear_cache()
    x.grad = None
    with T.jit_backward(), pytest.warns(RuntimeWarning, match="interpreter"):
        (x * x).sum().backward()
    np.testing.assert_allclose(x.grad, [2.0, 4.0])
