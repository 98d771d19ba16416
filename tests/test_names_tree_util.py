"""jax.tree_util's remaining names (issue 36), against outputs recorded from JAX 0.10.2
(the expression that produced each expected value is beside it)."""
import collections
import operator

import numpy as np
import pytest

import autodiff as ad
from autodiff import tree_util as tu

P = collections.namedtuple("P", ["x", "y"])


def test_is_tree_node_and_all_leaves():
    # jtu.is_tree_node(int), (list), (type(None)), (P), (dict) -> False True True True True
    assert [tu.is_tree_node(t) for t in (int, list, type(None), P, dict)] == [False, True, True, True, True]
    # jtu.all_leaves([1, 2.0, None]), ([1, (2,)]), ([]), ([None]) -> False False True False
    assert [tu.all_leaves(x) for x in ([1, 2.0, None], [1, (2,)], [], [None])] == [False, False, True, False]
    assert tu.all_leaves([1.0, np.ones(2)])


def test_flatten_one_level():
    # jtu.flatten_one_level({"b": 1, "a": (2, 3)}) -> (((2, 3), 1), ('a', 'b'))
    assert tu.flatten_one_level({"b": 1, "a": (2, 3)}) == (((2, 3), 1), ("a", "b"))
    # jtu.flatten_one_level([1, (2,)]) -> ([1, (2,)], None)
    assert tu.flatten_one_level([1, (2,)]) == ([1, (2,)], None)
    # jtu.flatten_one_level(None) -> ((), None); namedtuple: ([1, 2], P)
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(P(1, 2)) == ([1, 2], P)
    # jtu.flatten_one_level(1.0) raises ValueError "can't tree-flatten type: <class 'float'>"
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(1.0)
    # jtu.flatten_one_level_with_keys({"b": 1, "a": (2, 3)})
    #   -> (((DictKey(key='a'), (2, 3)), (DictKey(key='b'), 1)), ('a', 'b'))
    pairs, aux = tu.flatten_one_level_with_keys({"b": 1, "a": (2, 3)})
    assert pairs == ((tu.DictKey("a"), (2, 3)), (tu.DictKey("b"), 1)) and aux == ("a", "b")
    assert str(pairs[0][0]) == "['a']"


def test_tree_broadcast():
    # jtu.tree_broadcast((1, {"a": 2}), ((0, 0), {"a": [5, 6]})) -> ((1, 1), {'a': [2, 2]})
    assert tu.tree_broadcast((1, {"a": 2}), ((0, 0), {"a": [5, 6]})) == ((1, 1), {"a": [2, 2]})
    # jtu.tree_broadcast(1, [0, (0, 0)]) -> [1, (1, 1)]
    assert tu.tree_broadcast(1, [0, (0, 0)]) == [1, (1, 1)]
    with pytest.raises(ValueError):
        tu.tree_broadcast([1, 2], (0, 0))


def test_tree_reduce_associative():
    # jtu.tree_reduce_associative(operator.add, [1, 2, (3, 4)]) -> 10
    assert tu.tree_reduce_associative(operator.add, [1, 2, (3, 4)]) == 10
    # jtu.tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) -> '((ab)(c(de)))'
    assert tu.tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == "((ab)(c(de)))"
    # jtu.tree_reduce_associative(operator.add, [], identity=0) -> 0; without identity: TypeError
    assert tu.tree_reduce_associative(operator.add, [], identity=0) == 0
    with pytest.raises(TypeError, match="identity"):
        tu.tree_reduce_associative(operator.add, [])


def test_treedef_helpers():
    td = tu.tree_structure({"a": (1, 2), "b": [3]})
    # jtu.treedef_children(td) -> [PyTreeDef((*, *)), PyTreeDef([*])]
    kids = tu.treedef_children(td)
    assert kids == [tu.tree_structure((0, 0)), tu.tree_structure([0])]
    # treedef_is_leaf: td False, leaf True, None True
    assert (tu.treedef_is_leaf(td), tu.treedef_is_leaf(tu.tree_structure(1)),
            tu.treedef_is_leaf(tu.tree_structure(None))) == (False, True, True)
    # jtu.treedef_tuple([td, leaf]) -> PyTreeDef(({'a': (*, *), 'b': [*]}, *))
    tt = tu.treedef_tuple([td, tu.tree_structure(1)])
    assert tt == tu.tree_structure(({"a": (1, 2), "b": [3]}, 1))
    assert str(tt) == "({'a': (*, *), 'b': [*]}, *)"
    # td.num_leaves, td.num_nodes -> 3, 6 ; td.flatten_up_to(...) -> [5, [6], 7]
    assert (td.num_leaves, td.num_nodes) == (3, 6)
    assert td.flatten_up_to({"a": (5, [6]), "b": [7]}) == [5, [6], 7]
    # td.compose(tree_structure((1, 2))) -> PyTreeDef({'a': ((*, *), (*, *)), 'b': [(*, *)]})
    assert td.compose(tu.tree_structure((1, 2))) == tu.tree_structure(
        {"a": ((0, 0), (0, 0)), "b": [(0, 0)]})
    assert td.node_data() == (dict, ("a", "b"))


class Mode:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Mode) and self.name == other.name


tu.register_static(Mode)


def test_register_static():
    # jtu.tree_leaves([S(1), 2.0]) -> [2.0] with S registered static
    assert tu.tree_leaves([Mode("train"), 2.0]) == [2.0]
    out = tu.tree_map(lambda v: v * 2, [Mode("train"), 2.0])
    assert out[0] == Mode("train") and out[1] == 4.0
    # static under jit: the value selects the Python branch, a new value retraces
    f = ad.jit(lambda m, x: x * 2.0 if m.name == "train" else x)
    assert float(f(Mode("train"), np.float64(3.0))) == 6.0
    assert float(f(Mode("eval"), np.float64(3.0))) == 3.0


@tu.register_pytree_with_keys_class
class KPair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten_with_keys(self):
        return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_register_pytree_with_keys_class():
    # [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(K(1, [2]))[0]] -> ['.a', '.b[0]']
    pairs, _ = tu.tree_flatten_with_path(KPair(1, [2]))
    assert [tu.keystr(p) for p, _ in pairs] == [".a", ".b[0]"]
    assert tu.tree_leaves(KPair(1, [2])) == [1, 2]
    g = ad.grad(lambda p: p.a * p.b[0] ** 2)(KPair(np.float64(3.0), [np.float64(2.0)]))
    assert isinstance(g, KPair) and float(g.a) == 4.0 and float(g.b[0]) == 12.0


def test_default_registry_and_aliases():
    assert tu.default_registry.flatten({"a": 1, "b": [2]})[0] == [1, 2]
    assert tu.default_registry.is_node(dict) and not tu.default_registry.is_node(float)
    assert tu.default_registry.flatten_one_level([1, 2]) == ([1, 2], None)
    path = (tu.DictKey("w"), tu.SequenceKey(0))
    assert isinstance(path, tu.KeyPath.__origin__) and tu.keystr(path) == "['w'][0]"


def test_is_leaf_on_reductions():
    tree = {"a": (1, 0), "b": (2, 3)}
    # is_leaf stops at the tuples: tree_all of two non-empty tuples is True
    assert not tu.tree_all(tree)
    assert tu.tree_all(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert tu.tree_reduce(lambda a, b: a + b, tree, (), is_leaf=lambda x: isinstance(x, tuple)) == (1, 0, 2, 3)
