"""Pytrees: flatten/unflatten round trips, registration, prefixes, and use in transforms."""
import collections
import dataclasses

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])


class Pair:
    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), p.tag),
                        lambda tag, ch: Pair(ch[0], ch[1], tag))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


@dataclasses.dataclass
class Layer:
    w: object
    name: str


tu.register_dataclass(Layer, data_fields=["w"], meta_fields=["name"])

TREES = [
    1.0,
    None,
    (),
    [1, (2, 3), {"b": 4, "a": [5]}],
    {"z": None, "a": (1,), 3: 2.0},
    Point(1, (2, 3)),
    Pair(1, [2, 3], tag="hello"),
    Params(w=np.ones(2), b=3.0),
    Layer(w=(1, 2), name="dense"),
    [[[]], {}],
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_roundtrip(tree):
    leaves, td = tu.tree_flatten(tree)
    back = tu.tree_unflatten(td, leaves)
    assert tu.tree_structure(back) == td
    assert len(leaves) == td.num_leaves
    leaves2, td2 = tu.tree_flatten(back)
    assert td2 == td and hash(td2) == hash(td)
    assert all(a is b for a, b in zip(leaves, leaves2))


def test_leaf_order_and_dict_keys_sorted():
    leaves, td = tu.tree_flatten({"b": (1, 2), "a": [3, None], "c": Point(4, 5)})
    assert leaves == [3, 1, 2, 4, 5]
    out = tu.tree_unflatten(td, [x * 10 for x in leaves])
    assert out == {"a": [30, None], "b": (10, 20), "c": Point(40, 50)}
    assert type(out["c"]) is Point


def test_structure_distinguishes_containers():
    s = tu.tree_structure
    assert s((1, 2)) != s([1, 2])
    assert s((1,)) != s((1, 2))
    assert s({"a": 1}) != s({"b": 1})
    assert s(Pair(1, 2, "x")) != s(Pair(1, 2, "y"))             # aux data is part of it
    assert s(Layer(1, "a")) != s(Layer(1, "b"))
    assert s(None) != s(1)
    assert s(Point(1, 2)) != s((1, 2))
    assert repr(s((1, [2, {"k": 3}]))) == "(*, [*, {'k': *}])"


def test_registered_classes():
    leaves, td = tu.tree_flatten(Pair(np.ones(2), 3.0, "z"))
    assert len(leaves) == 2
    p = tu.tree_unflatten(td, [1, 2])
    assert (p.a, p.b, p.tag) == (1, 2, "z")
    assert tu.tree_leaves(Params(1.0, 2.0)) == [1.0, 2.0]
    layer = tu.tree_map(lambda v: v * 2, Layer(w=(1, 2), name="dense"))
    assert layer.w == (2, 4) and layer.name == "dense"


def test_tree_map_multiple_trees_and_is_leaf():
    out = tu.tree_map(lambda a, b: a + b, (1, {"x": 2}), (10, {"x": 20}))
    assert out == (11, {"x": 22})
    with pytest.raises(ValueError, match="mismatch"):
        tu.tree_map(lambda a, b: a + b, (1, 2), [1, 2])
    out = tu.tree_map(lambda p: len(p), [(1, 2), (3,)], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [2, 1]
    # a second tree may extend the first below its leaves
    assert tu.tree_map(lambda a, b: (a, b), (1, 2), ((3, 4), 5)) == ((1, (3, 4)), (2, 5))


def test_unflatten_leaf_count_errors():
    td = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match="too few"):
        tu.tree_unflatten(td, [1])
    with pytest.raises(ValueError, match="too many"):
        tu.tree_unflatten(td, [1, 2, 3])


def test_broadcast_prefix():
    assert tu.broadcast_prefix(0, (1, [2, 3])) == [0, 0, 0]
    assert tu.broadcast_prefix((0, None), (1, [2, 3])) == [0, None, None]
    assert tu.broadcast_prefix((0, [1, None]), (1, [2, 3])) == [0, 1, None]
    with pytest.raises(ValueError):
        tu.broadcast_prefix((0, 1, 2), (1, 2))


def test_tree_reductions():
    assert tu.tree_all((True, [1, {"a": True}]))
    assert not tu.tree_all((True, [0]))
    assert tu.tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 10) == 10
    assert tu.flatten_up_to(tu.tree_structure((0, 0)), ((1, 2), [3])) == [(1, 2), [3]]


def test_transforms_accept_every_kind_of_node():
    params = {"p": Point(np.array([1.0, 2.0]), 3.0),
              "pair": Pair(np.array(0.5), [np.array([1.0])], "k"),
              "params": Params(w=np.array([2.0]), b=None),
              "layer": Layer(w=np.array([1.0, -1.0]), name="d")}

    def loss(t):
        return (anp.sum(t["p"].x ** 2) + t["p"].y * t["pair"].a + anp.sum(t["pair"].b[0])
                + anp.sum(t["params"].w) * anp.sum(t["layer"].w ** 2))

    g = ad.grad(loss)(params)
    assert tu.tree_structure(g) == tu.tree_structure(params)
    np.testing.assert_array_equal(g["p"].x, [2.0, 4.0])
    assert g["p"].y == 0.5 and g["pair"].a == 3.0 and g["pair"].tag == "k"
    np.testing.assert_array_equal(g["params"].w, [2.0])
    assert g["params"].b is None
    np.testing.assert_array_equal(g["layer"].w, [4.0, -4.0])
    assert g["layer"].name == "d"
    # outputs may be pytrees too
    out, t = ad.jvp(lambda t: {"s": Point(t["p"].y * 2, t["p"].x)}, (params,),
                    (tu.tree_map(np.ones_like, params),))
    assert isinstance(out["s"], Point) and t["s"].x == 2.0


def test_flat_tuple_fast_path_is_the_general_structure():
    # a tuple of plain leaves (a loop carry) takes a shared treedef; it equals, hashes and
    # rebuilds as the structure the general walk builds, and leaf-count errors stay
    x = (1.0, np.ones(2), np.float32(3.0), 4)
    leaves, td = tu.tree_flatten(x)
    general = tu.tree_flatten((x, None))[1].children[0]        # built node by node
    assert td == general and hash(td) == hash(general) and repr(td) == "(*, *, *, *)"
    assert leaves[1] is x[1] and tu.tree_unflatten(td, leaves) == x
    with pytest.raises(ValueError, match="too few"):
        tu.tree_unflatten(td, leaves[:3])
    with pytest.raises(ValueError, match="too many"):
        tu.tree_unflatten(td, leaves + [5.0])
    # a tracer is a leaf there too; a namedtuple or a nested tuple is not a flat tuple
    seen = []
    ad.grad(lambda v: seen.append(tu.tree_flatten((v, v * 2.0))[1]) or v)(1.0)
    assert seen[0] == td.__class__(tuple, None, (tu.LEAF, tu.LEAF))
    P = collections.namedtuple("P", "a b")
    leaves, td = tu.tree_flatten(P(1.0, 2.0))
    assert td.node_type is P and tu.tree_unflatten(td, leaves) == P(1.0, 2.0)
