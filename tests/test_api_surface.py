"""JAX's utility surface: ravel_pytree, eval_shape/ShapeDtypeStruct, debug.print/callback,
block_until_ready, ad.tree and key paths."""
import collections
import dataclasses

import numpy as np
import pytest
import scipy.optimize

import autodiff as ad
import autodiff.numpy as anp
from autodiff import tree_util as tu
from autodiff.flatten_util import ravel_pytree


# ---------------------------------------------------------------- ravel_pytree
def test_ravel_pytree_round_trip_order_and_dtypes():
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": np.array([7.0]), "n": (np.int32(3), None)}
    flat, unravel = ravel_pytree(tree)
    leaves = tu.tree_leaves(tree)
    np.testing.assert_array_equal(flat, np.concatenate([np.ravel(l) for l in leaves]))
    assert flat.dtype == np.float64
    back = unravel(flat)
    assert tu.tree_structure(back) == tu.tree_structure(tree)
    for a, b in zip(tu.tree_leaves(back), leaves):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)
    f32, unr = ravel_pytree([np.ones(2, np.float32), np.zeros((), np.float32)])
    assert f32.dtype == np.float32 and f32.shape == (3,)
    with pytest.raises(ValueError, match="length 3"):
        unr(np.ones(4, np.float32))
    empty, unr0 = ravel_pytree({})
    assert empty.shape == (0,) and unr0(empty) == {}


def test_ravel_pytree_under_transforms():
    params = {"a": np.array([1.0, 2.0]), "b": np.array(3.0)}
    flat, unravel = ravel_pytree(params)

    def loss_flat(v):
        p = unravel(v)
        return anp.sum(p["a"] ** 2) * p["b"]
    g = ad.grad(loss_flat)(flat)
    np.testing.assert_allclose(g, [2 * 1 * 3, 2 * 2 * 3, 1 + 4])
    np.testing.assert_allclose(ad.jit(ad.grad(loss_flat))(flat), g)
    # ravel inside grad: the gradient of a function of the flat vector comes back as a tree
    gt = ad.grad(lambda p: anp.sum(ravel_pytree(p)[0] ** 3))(params)
    np.testing.assert_allclose(gt["a"], 3 * params["a"] ** 2)
    np.testing.assert_allclose(gt["b"], 27.0)
    vm = ad.vmap(lambda v: unravel(v)["a"])(np.stack([flat, 2 * flat]))
    np.testing.assert_allclose(vm, [[1.0, 2.0], [2.0, 4.0]])


def test_scipy_minimize_over_a_pytree():
    """Least squares y = X w + b: scipy.optimize over the flat vector, gradient by ad.grad."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.7
    params0 = {"w": np.zeros(3), "b": np.array(0.0)}
    flat0, unravel = ravel_pytree(params0)

    def loss(p):
        r = X @ p["w"] + p["b"] - y
        return anp.mean(r ** 2)
    f = lambda v: float(loss(unravel(v)))
    g = lambda v: np.asarray(ad.grad(lambda v: loss(unravel(v)))(v))
    res = scipy.optimize.minimize(f, flat0, jac=g, method="BFGS", options={"gtol": 1e-10})
    p = unravel(res.x)
    np.testing.assert_allclose(p["w"], [1.0, -2.0, 0.5], atol=1e-6)
    np.testing.assert_allclose(p["b"], 0.7, atol=1e-6)


# ---------------------------------------------------------------- eval_shape
def test_eval_shape_is_abstract_and_matches_real_results():
    calls = []

    def f(x, params):
        calls.append(type(x).__name__)
        h = anp.tanh(x @ params["w"] + params["b"])
        return {"out": anp.sum(h, axis=-1), "h": h.astype(np.float32)}
    params = {"w": np.ones((4, 5)), "b": np.zeros(5)}
    x = np.ones((3, 4))
    shapes = ad.eval_shape(f, x, params)
    real = f(x, params)
    for k in real:
        assert shapes[k] == ad.ShapeDtypeStruct(real[k].shape, real[k].dtype)
    assert calls[0] == "Tracer"
    # no data of the inputs' size is touched: a terabyte-sized aval is fine
    big = ad.ShapeDtypeStruct((10 ** 6, 10 ** 6), np.float64)
    out = ad.eval_shape(lambda a: anp.sum(a, axis=0), big)
    assert out.shape == (10 ** 6,) and out.dtype == np.float64
    s = ad.ShapeDtypeStruct((2, 3), anp.float32)
    assert (s.ndim, s.size, s.dtype, len(s)) == (2, 6, np.dtype(np.float32), 2)
    assert hash(s) == hash(ad.ShapeDtypeStruct((2, 3), np.float32))
    g = ad.eval_shape(ad.grad(lambda w: anp.sum(w ** 2)), s)
    assert g == s


# ---------------------------------------------------------------- debug
def test_debug_print_eager_and_under_grad(capsys):
    def f(x):
        ad.debug.print("x={x} n={}", 3, x=x)
        return anp.sum(x ** 2)
    f(np.array([1.0, 2.0]))
    ad.grad(f)(np.array([3.0, 4.0]))
    ad.hessian(f)(np.array([5.0, 6.0]))
    out = capsys.readouterr().out.splitlines()
    assert out == ["x=[1. 2.] n=3", "x=[3. 4.] n=3", "x=[5. 6.] n=3"]


def test_debug_print_under_jit_prints_values_at_every_call(capsys):
    f = ad.jit(lambda x: (ad.debug.print("x is {}", x), x * 2)[1], backend="interpret")
    f(np.ones(3))
    f(np.zeros(3))
    assert capsys.readouterr().out.splitlines() == ["x is [1. 1. 1.]", "x is [0. 0. 0.]"]


def test_debug_callback():
    seen = []
    ad.grad(lambda x: (ad.debug.callback(lambda v, s: seen.append((v, s)), x, s=2), anp.sum(x))[1])(np.ones(2))
    assert len(seen) == 1 and isinstance(seen[0][0], np.ndarray) and seen[0][1] == 2
    np.testing.assert_array_equal(seen[0][0], [1.0, 1.0])
    seen.clear()
    ad.jit(lambda x: (ad.debug.callback(seen.append, x), x)[1], backend="interpret")(np.ones(2))
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], [1.0, 1.0])


def test_block_until_ready_returns_its_argument():
    t = {"a": np.ones(2), "b": [np.zeros(1), 3.0]}
    assert ad.block_until_ready(t) is t

    class Lazy:
        waited = False

        def block_until_ready(self):
            Lazy.waited = True
    ad.block_until_ready([Lazy()])
    assert Lazy.waited


# ---------------------------------------------------------------- ad.tree and key paths
Point = collections.namedtuple("Point", ["x", "y"])


@tu.register_dataclass
@dataclasses.dataclass
class Layer:
    w: object
    b: object


class Opaque:
    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Opaque, lambda o: ([o.a, o.b], None), lambda aux, ch: Opaque(*ch))


class Named:
    def __init__(self, **kw):
        self.kw = kw


tu.register_pytree_with_keys(
    Named, lambda n: (tuple((tu.DictKey(k), n.kw[k]) for k in sorted(n.kw)), tuple(sorted(n.kw))),
    lambda aux, ch: Named(**dict(zip(aux, ch))))


def test_key_paths_for_every_node_kind():
    tree = {"layers": [Layer(1.0, 2.0)], "pt": Point(3.0, (4.0,)), "o": Opaque(5.0, 6.0),
            "n": Named(q=7.0), "none": None}
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert [v for _, v in pairs] == tu.tree_leaves(tree)
    assert treedef == tu.tree_structure(tree)
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['layers'][0].w", "['layers'][0].b", "['n']['q']", "['o'][<flat index 0>]",
        "['o'][<flat index 1>]", "['pt'].x", "['pt'].y[0]"]
    assert tu.keystr(pairs[0][0], simple=True, separator="/") == "layers/0/w"
    assert isinstance(pairs[0][0][1], tu.SequenceKey) and pairs[0][0][1].idx == 0


def test_tree_map_with_path_and_jax_tree_namespace():
    params = {"dense": {"w": np.ones(2), "b": np.ones(2)}, "out": {"w": np.ones(1), "b": np.ones(1)}}
    decayed = ad.tree.map_with_path(lambda p, v, g: v - 0.1 * g * (p[-1].key == "w"),
                                    params, params)
    np.testing.assert_allclose(decayed["dense"]["w"], 0.9)
    np.testing.assert_allclose(decayed["dense"]["b"], 1.0)
    assert ad.tree.map(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    leaves, td = ad.tree.flatten({"a": 1, "b": 2})
    assert ad.tree.unflatten(td, [5, 6]) == {"a": 5, "b": 6}
    assert ad.tree.reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert ad.tree.all([True, (1, 2.0)]) and not ad.tree.all([True, 0])
    assert ad.tree.structure((1, 2)) == tu.tree_structure((0, 0))
    t = ad.tree.transpose(ad.tree.structure([0, 0, 0]), ad.tree.structure({"a": 0, "b": 0}),
                          [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 6}])
    assert t == {"a": [1, 3, 5], "b": [2, 4, 6]}
    assert [tu.keystr(p) for p, _ in ad.tree.leaves_with_path(Point(1, 2))] == [".x", ".y"]
    assert len(ad.tree.flatten_with_path([1, 2])[0]) == 2


def test_linearize_has_aux_returns_the_aux_as_jax():
    x = np.array([0.3, -1.2])
    y, f_jvp, aux = ad.linearize(lambda v: (anp.sum(anp.sin(v) * v), {"c": anp.cos(v)}), x,
                                 has_aux=True)
    assert y == pytest.approx(np.sum(np.sin(x) * x), rel=1e-14)
    np.testing.assert_allclose(aux["c"], np.cos(x), rtol=1e-14)
    t = np.array([1.0, 2.0])
    assert f_jvp(t) == pytest.approx(np.dot(np.cos(x) * x + np.sin(x), t), rel=1e-13)
    with pytest.raises(TypeError):          # without has_aux a pair output is just an output
        ad.linearize(lambda v: (anp.sin(v), v), x)[1](t, t)
