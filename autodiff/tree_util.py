"""Pytrees: nested containers of arrays that every transform accepts.

Containers are tuples, lists, dicts (keys sorted), ``None`` (an empty node),
namedtuples, and classes registered with :func:`register_pytree_node` or
:func:`register_dataclass`. Everything else is a leaf.

>>> from autodiff import tree_util as tu
>>> leaves, tree = tu.tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves
[3, 1, 2]
>>> tu.tree_unflatten(tree, [x * 10 for x in leaves])
{'a': [30, None], 'b': (10, 20)}
"""
import collections as _collections
import dataclasses
import typing as _typing

import numpy as np
from collections import namedtuple as _namedtuple  # noqa: F401  (documented support)

from .errors import PyTreeError
from .source_info import user_source

_registry = {}
_attr_names = {}          # registered classes whose children are attributes: their names
_key_registry = {}        # type -> flatten_with_keys(x) -> (((key, child), ...), aux)


class PyTreeDef:
    """The structure of a pytree: a node type, its static aux data, and children."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash", "_aux_key")

    def __init__(self, node_type, aux, children):
        self.node_type = node_type
        self.aux = aux
        self.children = children if children.__class__ is _Children else _Children(children)
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self._hash = None
        self._aux_key = _UNSET

    def _key(self):
        k = self._aux_key
        if k is _UNSET:
            k = self._aux_key = aux_key(self.aux, self.node_type)
        return (self.node_type, k, self.children)

    def __eq__(self, other):
        return self is other or (isinstance(other, PyTreeDef) and self._key() == other._key())

    def __reduce__(self):
        # pickles by content: the cached hash and aux key are rebuilt on first use
        return (PyTreeDef, (self.node_type, self.aux, tuple(self.children)))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self):
        if self.node_type is None:
            return "*"
        name = getattr(self.node_type, "__name__", str(self.node_type))
        inner = ", ".join(repr(c) for c in self.children)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{name}({inner})"

    @property
    def num_nodes(self):
        """Number of nodes of the structure, leaves included."""
        return 1 + sum(getattr(c, "num_nodes", 1) for c in self.children)

    def unflatten(self, leaves):
        """The pytree of this structure with ``leaves`` in place of its leaves
        (``tree_unflatten(self, leaves)``)."""
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this structure's leaves (``flatten_up_to(self, tree)``).

        >>> tree_structure({"a": 0, "b": 0}).flatten_up_to({"a": (1, 2), "b": [3]})
        [(1, 2), [3]]
        """
        return flatten_up_to(self, tree)

    def walk(self, f_node, f_leaf, leaves):
        """Fold the structure bottom-up over ``leaves``: ``f_leaf(leaf)`` at each leaf and
        ``f_node(children_results, node_data)`` at each node (a dict's data is its key list);
        returns the root's result (JAX's ``PyTreeDef.walk``).

        >>> tree_structure([1, (2, 3)]).walk(lambda kids, _: sum(kids), lambda x: x * 10,
        ...                                   [1, 2, 3])
        60
        """
        it = iter(leaves)

        def rec(td):
            if td.node_type is None:
                leaf = next(it)
                return f_leaf(leaf) if f_leaf is not None else leaf
            kids = tuple(rec(c) for c in td.children)
            data = list(td.aux) if td.node_type is dict else td.aux
            return f_node(kids, data) if f_node is not None else kids
        return rec(self)

    def node_data(self):
        """``(node_type, aux)`` of the root node, ``None`` for a leaf (JAX's ``node_data``).

        >>> tree_structure({"b": 1, "a": 2}).node_data()
        (<class 'dict'>, ('a', 'b'))
        """
        return None if self.node_type is None else (self.node_type, self.aux)

    def compose(self, inner):
        """This structure with every leaf replaced by the structure ``inner``.

        >>> tree_structure([0, 0]).compose(tree_structure((0, 0))).num_leaves
        4
        """
        if self.node_type is None:
            return inner
        return PyTreeDef(self.node_type, self.aux, tuple(c.compose(inner) for c in self.children))


_UNSET = object()


class _Children(tuple):
    """A treedef's child structures: a tuple, and callable as JAX's ``treedef.children()``
    (which returns them as a list)."""
    __slots__ = ()

    def __call__(self):
        return list(self)


class _Tagged(tuple):
    """A value key of unhashable aux data: ``(kind, content)``, never equal to user data."""
    __slots__ = ()


def aux_key(aux, node_type=None):
    """A hashable stand-in for a pytree node's aux data that compares by value.

    Hashable aux is its own key. Dicts, lists, sets, numpy arrays (and containers of them)
    get a key built from their content, so a treedef whose aux is a dict works as a jit
    cache key; anything else unhashable raises :class:`~autodiff.errors.PyTreeError`.

    >>> aux_key({"n": 3, "sizes": [1, 2]}) == aux_key({"sizes": [1, 2], "n": 3})
    True
    """
    try:
        hash(aux)
        return aux
    except TypeError:
        pass
    if isinstance(aux, dict):
        return _Tagged(("dict", type(aux), frozenset((k, aux_key(v, node_type))
                                                    for k, v in aux.items())))
    if isinstance(aux, (list, tuple)):
        return _Tagged(("seq", type(aux), tuple(aux_key(v, node_type) for v in aux)))
    if isinstance(aux, (set, frozenset)):
        return _Tagged(("set", type(aux), frozenset(aux_key(v, node_type) for v in aux)))
    if isinstance(aux, np.ndarray):
        return _Tagged(("ndarray", aux.shape, aux.dtype.str, aux.tobytes()))
    who = getattr(node_type, "__name__", repr(node_type))
    raise PyTreeError(
        f"the aux data of pytree node {who} holds an unhashable {type(aux).__name__} "
        f"({str(aux)[:60]!r}): jit keys its cache on the pytree structure, so aux data must be "
        f"hashable or a dict/list/set/numpy array of such. Return a tuple (or a frozen "
        f"dataclass) as aux data from {who}'s flatten function, or give "
        f"{type(aux).__name__} __hash__ and __eq__.", source=user_source())


LEAF = PyTreeDef(None, None, ())


def register_pytree_node(node_type, flatten_fn, unflatten_fn):
    """Register a container type.

    ``flatten_fn(x) -> (children, aux)`` with hashable ``aux``;
    ``unflatten_fn(aux, children) -> x``.
    """
    _registry[node_type] = (flatten_fn, unflatten_fn)
    return node_type


def register_dataclass(cls=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass as a pytree (also usable as a decorator).

    ``data_fields`` are children (arrays); ``meta_fields`` are static, hashable
    aux data; ``drop_fields`` are neither (left unset on unflattening). By default (both
    ``None``, as in JAX) a field declared with ``metadata=dict(static=True)`` is a meta
    field and every other field is a data field.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: object
    ...     b: object
    ...     name: str = dataclasses.field(default="dense", metadata=dict(static=True))
    >>> tree_leaves(Params(1.0, 2.0))
    [1.0, 2.0]
    >>> tree_unflatten(tree_structure(Params(1.0, 2.0)), [3.0, 4.0]).name
    'dense'
    """
    def wrap(cls):
        is_dc = dataclasses.is_dataclass(cls)
        all_fields = dataclasses.fields(cls) if is_dc else ()
        dropped = {drop_fields} if isinstance(drop_fields, str) else set(drop_fields)
        fields = [f.name for f in all_fields if f.name not in dropped]
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            "specified when either is specified. Got "
                            f"data_fields={data_fields!r} meta_fields={meta_fields!r}.")
        if data_fields is None:
            if not is_dc:
                raise TypeError("register_dataclass: data_fields and meta_fields are required"
                                f" when nodetype is not a dataclass. Got nodetype={cls!r}.")
            static = {f.name for f in all_fields if f.metadata.get("static", False)}
            data = [f for f in fields if f not in static]
            meta = [f for f in fields if f in static]
        else:
            data, meta = list(data_fields), list(meta_fields)
        if is_dc:
            init = {f.name for f in all_fields if f.init} - dropped
            given = set(data) | set(meta)
            if given != init:
                msg = ("data_fields and meta_fields must include all dataclass fields with "
                       "``init=True`` and only them.")
                if init - given:
                    msg += (f" Missing fields: {init - given}. Add them to drop_fields to "
                            "suppress this error.")
                if given - init:
                    msg += f" Unexpected fields: {given - init}."
                raise ValueError(msg)
        if set(data) & set(meta):
            raise ValueError("data_fields and meta_fields must not overlap. Overlapping "
                             f"fields: {set(data) & set(meta)}.")

        def flatten(x):
            return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

        def unflatten(aux, children):
            kwargs = dict(zip(data, children))
            kwargs.update(zip(meta, aux))
            obj = object.__new__(cls)
            for k, v in kwargs.items():
                object.__setattr__(obj, k, v)
            return obj

        register_pytree_node(cls, flatten, unflatten)
        _attr_names[cls] = tuple(data)        # key paths name the fields (GetAttrKey)
        return cls

    return wrap if cls is None else wrap(cls)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten_node(x):
    """(node_type, aux, children) for a container, or None for a leaf."""
    t = type(x)
    if t is tuple:
        return tuple, None, x
    if t is list:
        return list, None, x
    if t is dict:
        keys = tuple(sorted(x, key=_sort_key))
        return dict, keys, [x[k] for k in keys]
    if x is None:
        return type(None), None, ()
    reg = _registry.get(t)
    if reg is not None:
        out = reg[0](x)
        if out.__class__ is not tuple or len(out) != 2:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ValueError("The to_iterable function for a custom PyTree node should "
                                 f"return a (children, aux_data) tuple, got {out!r}")
        children, aux = out
        if children.__class__ is not tuple and children.__class__ is not list:
            try:
                children = tuple(children)
            except TypeError:
                raise ValueError("The to_iterable function for a custom PyTree node should "
                                 "return a (children, aux_data) tuple where 'children' is "
                                 f"iterable, got {out!r}") from None
        return t, aux, children
    if _is_namedtuple(x):
        return t, None, tuple(x)
    return None


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float, str)) else (0 if not isinstance(k, str) else 1, k)


# A tuple of plain leaves (a loop's carry, a function's arguments) is the common pytree of
# the hot paths (every step of a while_loop on values flattens and rebuilds one): its
# treedef is shared per length, and flattening or rebuilding it walks nothing.
# Tracers join the leaf types when autodiff.tracing is imported.
FAST_LEAF_TYPES = {float, int, complex, np.ndarray, np.float64, np.float32, np.int64,
                   np.int32, np.complex128, np.bool_}
_FLAT_TUPLES = {}


def _flat_tuple_def(n):
    td = _FLAT_TUPLES.get(n)
    if td is None:
        td = _FLAT_TUPLES[n] = PyTreeDef(tuple, None, (LEAF,) * n)
    return td


def tree_flatten(tree, is_leaf=None):
    """Return ``(leaves, treedef)``."""
    if tree.__class__ is tuple and is_leaf is None:
        fast, reg = FAST_LEAF_TYPES, _registry
        for x in tree:
            t = x.__class__
            if t not in fast or t in reg:
                break
        else:
            return list(tree), _flat_tuple_def(len(tree))
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    node = _flatten_node(x)
    if node is None:
        leaves.append(x)
        return LEAF
    t, aux, children = node
    return PyTreeDef(t, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_unflatten(treedef, leaves):
    """Rebuild a pytree of ``treedef``'s structure from ``leaves``."""
    if treedef.__class__ is PyTreeDef and _FLAT_TUPLES.get(len(treedef.children)) is treedef:
        out = tuple(leaves)
        n = len(treedef.children)
        if len(out) < n:
            raise ValueError("tree_unflatten: too few leaves")
        if len(out) > n:
            raise ValueError(f"tree_unflatten: {len(out) - n} leaves too many for {treedef}")
        return out
    it = iter(leaves)
    out = _unflatten(treedef, it)
    rest = list(it)
    if rest:
        raise ValueError(f"tree_unflatten: {len(rest)} leaves too many for {treedef}")
    return out


def _unflatten(td, it):
    t = td.node_type
    if t is None:
        try:
            return next(it)
        except StopIteration:
            raise ValueError("tree_unflatten: too few leaves") from None
    children = [_unflatten(c, it) for c in td.children]
    if t is tuple:
        return tuple(children)
    if t is list:
        return children
    if t is dict:
        return dict(zip(td.aux, children))
    if t is type(None):
        return None
    reg = _registry.get(t)
    if reg is not None:
        return reg[1](td.aux, children)
    return t(*children)  # namedtuple


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree`` in flattening order (``is_leaf(x)`` true stops the descent at ``x``).

    >>> import autodiff as ad
    >>> ad.tree_util.tree_leaves({"b": (1, 2), "a": [3]})
    [3, 1, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The :class:`PyTreeDef` of ``tree``: its containers without the leaves."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` leafwise; ``rest`` trees must have ``tree``'s structure (or extend it).

    >>> tree_map(lambda a, b: a + b, (1, {"x": 2}), (10, {"x": 20}))
    (11, {'x': 22})
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def flatten_up_to(treedef, tree):
    """Leaves of ``tree`` cut at the leaves of ``treedef`` (a prefix structure)."""
    out = []
    _flatten_up_to(treedef, tree, out)
    return out


def _flatten_up_to(td, x, out):
    if td.node_type is None:
        out.append(x)
        return
    node = _flatten_node(x)
    if node is None or node[0] is not td.node_type or len(node[2]) != len(td.children) or \
            (node[1] is not td.aux and aux_key(node[1], node[0]) != td._key()[1]):
        raise ValueError("pytree structure mismatch: " + _mismatch_message(td, x, node))
    for c, child in zip(td.children, node[2]):
        _flatten_up_to(c, child, out)


def _mismatch_message(td, x, node):
    """JAX's wording for a value ``x`` that does not match the node ``td``."""
    t = td.node_type
    if t is type(None):
        return f"Expected None, got {x!r}."
    builtin = {list: "list", tuple: "tuple", dict: "dict"}.get(t)
    if builtin is not None:
        if type(x) is not t:
            return f"Expected {builtin}, got {x!r}."
        if t is dict:
            return (f"Dict key mismatch; expected keys: {list(td.aux)!r}; "
                    f"dict: {x!r}.")
        return (f"{builtin.capitalize()} arity mismatch: {len(x)} != {len(td.children)}; "
                f"{builtin}: {x!r}.")
    if t not in _registry and isinstance(t, type) and hasattr(t, "_fields"):
        if not _is_namedtuple(x):
            return f"Expected named tuple, got {x!r}."
        if type(x) is not t:
            return (f"Named tuple type mismatch: expected type: {t.__name__!r}, "
                    f"tuple: {x!r}.")
        return (f"Named tuple arity mismatch: {len(x)} != {len(td.children)}; "
                f"tuple: {x!r}.")
    if node is None or node[0] is not t:
        return (f"Custom node type mismatch; expected type: {t!r}; value: {x!r}.")
    if len(node[2]) != len(td.children):
        return (f"Custom node arity mismatch: {len(node[2])} != {len(td.children)}; "
                f"value: {x!r}.")
    return (f"Mismatch custom node data: {node[1]!r} != {td.aux!r}; value: {x!r}.")


def broadcast_prefix(prefix, tree, is_leaf=None):
    """Expand a prefix pytree (e.g. vmap's ``in_axes``) to one value per leaf of ``tree``."""
    out = []
    _broadcast_prefix(prefix, tree, out, is_leaf)
    return out


def _broadcast_prefix(prefix, x, out, is_leaf):
    pnode = _flatten_node(prefix) if prefix is not None else None
    if prefix is None or pnode is None:
        out.extend([prefix] * len(tree_leaves(x, is_leaf)))
        return
    node = _flatten_node(x)
    if node is None or node[0] is not pnode[0] or len(node[2]) != len(pnode[2]):
        raise ValueError(f"prefix {tree_structure(prefix)} does not match {tree_structure(x)}")
    for p, c in zip(pnode[2], node[2]):
        _broadcast_prefix(p, c, out, is_leaf)


def tree_all(tree, *, is_leaf=None):
    """Whether every leaf of ``tree`` is truthy.

    >>> tree_all({"a": True, "b": (1, 0)})
    False
    """
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(fn, tree, initializer=None, is_leaf=None):
    """``functools.reduce(fn, leaves)`` over the leaves of ``tree``, starting from ``initializer``
    when given.

    >>> import operator, autodiff as ad
    >>> ad.tree_util.tree_reduce(operator.add, {"a": 1, "b": (2, 3)})
    6
    """
    import functools
    leaves = tree_leaves(tree, is_leaf)
    return functools.reduce(fn, leaves) if initializer is None else functools.reduce(fn, leaves, initializer)


def register_pytree_node_class(cls):
    """Class decorator: ``cls`` defines ``tree_flatten(self) -> (children, aux)`` and the
    classmethod ``tree_unflatten(aux, children)``, as in JAX.

    >>> @register_pytree_node_class
    ... class Box:
    ...     def __init__(self, x, name):
    ...         self.x, self.name = x, name
    ...     def tree_flatten(self):
    ...         return [self.x], self.name
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(children[0], aux)
    >>> tree_map(lambda v: v * 2, Box(1.5, "b")).x
    3.0
    """
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


import functools as _functools  # noqa: E402


class Partial(_functools.partial):
    """A ``functools.partial`` that is a pytree: its bound arguments (positional and
    keyword) are the children, the function is static. So it can be passed to and
    returned from transformed functions.

    >>> import numpy as np, autodiff as ad
    >>> scale = Partial(np.multiply, np.array([2.0, 3.0]))
    >>> tree_leaves(scale)
    [array([2., 3.])]
    >>> ad.jit(lambda f, x: f(x))(scale, np.ones(2))
    array([2., 3.])
    """

    def __new__(cls, func, *args, **kw):
        # a Partial of a Partial keeps the inner function static (no nested pytree of funcs)
        if isinstance(func, Partial):
            args, kw = func.args + args, {**func.keywords, **kw}
            func = func.func
        elif isinstance(func, _functools.partial):
            # a plain functools.partial is the (static) function itself, as in JAX: a shim
            # stops functools from merging its arguments into this Partial's children
            func = _PartialShim(func)
        return super().__new__(cls, func, *args, **kw)


class _PartialShim:
    """A ``functools.partial`` held as a Partial's function: calls, compares and hashes
    as the partial it wraps."""
    __slots__ = ("wrapped",)

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def __call__(self, *args, **kw):
        return self.wrapped(*args, **kw)

    def __eq__(self, other):
        other = other.wrapped if isinstance(other, _PartialShim) else other
        return self.wrapped == other

    def __hash__(self):
        return hash(self.wrapped)

    def __getattr__(self, name):
        return getattr(self.wrapped, name)

    def __repr__(self):
        return repr(self.wrapped)

    def __reduce__(self):
        return (_PartialShim, (self.wrapped,))


def _partial_flatten(p):
    keys = tuple(sorted(p.keywords))
    return (list(p.args) + [p.keywords[k] for k in keys]), (p.func, len(p.args), keys)


def _partial_unflatten(aux, children):
    func, n, keys = aux
    children = list(children)
    return Partial(func, *children[:n], **dict(zip(keys, children[n:])))


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


# ----------------------------------------------------------------------------
# key paths: where each leaf sits, JAX's spelling
# ----------------------------------------------------------------------------

class _KeyBase:
    """Equality and hash of a key class include its type, so ``SequenceKey(1)`` and
    ``FlattenedIndexKey(1)`` differ (they would compare equal as bare namedtuples)."""
    __slots__ = ()

    def __eq__(self, other):
        return type(self) is type(other) and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple.__hash__(self)))


class SequenceKey(_KeyBase, _namedtuple("SequenceKey", ["idx"])):
    """The position of a child of a tuple or list: prints ``[0]``."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.idx!r}]"


class DictKey(_KeyBase, _namedtuple("DictKey", ["key"])):
    """The key of a child of a dict: prints ``['w']``."""
    __slots__ = ()

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(_KeyBase, _namedtuple("GetAttrKey", ["name"])):
    """The attribute holding a child (namedtuples, dataclasses): prints ``.name``."""
    __slots__ = ()

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(_KeyBase, _namedtuple("FlattenedIndexKey", ["key"])):
    """The index of a child of a registered node without key names: prints ``[<flat index 0>]``."""
    __slots__ = ()

    def __str__(self):
        return f"[<flat index {self.key}>]"


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register a container whose children have key names:
    ``flatten_with_keys(x) -> (((key, child), ...), aux)`` (JAX's signature)."""
    def flatten(x):
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func or flatten, unflatten_func)
    _key_registry[nodetype] = flatten_with_keys
    return nodetype


# JAX's other built-in containers: an OrderedDict keeps its insertion order, a defaultdict
# sorts its keys like a dict and keeps its default_factory as tree structure
register_pytree_with_keys(
    _collections.OrderedDict,
    lambda x: (tuple((DictKey(k), v) for k, v in x.items()), tuple(x)),
    lambda keys, children: _collections.OrderedDict(zip(keys, children)))
register_pytree_with_keys(
    _collections.defaultdict,
    lambda x: (tuple((DictKey(k), x[k]) for k in sorted(x, key=_sort_key)),
               (x.default_factory, tuple(sorted(x, key=_sort_key)))),
    lambda aux, children: _collections.defaultdict(aux[0], zip(aux[1], children)))


def _child_keys(x, node):
    t, aux, children = node
    if t is tuple or t is list:
        return [SequenceKey(i) for i in range(len(children))]
    if t is dict:
        return [DictKey(k) for k in aux]
    if t in _key_registry:
        return [k for k, _ in _key_registry[t](x)[0]]
    if t in _attr_names:
        return [GetAttrKey(n) for n in _attr_names[t]]
    if t not in _registry and _is_namedtuple(x):
        return [GetAttrKey(n) for n in type(x)._fields]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``([(key_path, leaf), ...], treedef)``: each leaf with the tuple of keys leading to it.
    ``is_leaf(x)`` (``is_leaf(key_path, x)`` with ``is_leaf_takes_path=True``) true stops
    the descent at ``x``.

    >>> pairs, _ = tree_flatten_with_path({"w": [1.0, 2.0], "b": 3.0})
    >>> [(keystr(p), v) for p, v in pairs]
    [("['b']", 3.0), ("['w'][0]", 1.0), ("['w'][1]", 2.0)]
    >>> tree_flatten_with_path([1, (2, 3)], lambda p, x: len(p) == 1,
    ...                        is_leaf_takes_path=True)[0][1]
    ((SequenceKey(idx=1),), (2, 3))
    """
    out = []
    pred = None
    if is_leaf is not None:
        pred = is_leaf if is_leaf_takes_path else (lambda _, x: is_leaf(x))
    treedef = _flatten_with_path(tree, (), out, pred)
    return out, treedef


def _flatten_with_path(x, path, out, is_leaf):
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return LEAF
    node = _flatten_node(x)
    if node is None:
        out.append((path, x))
        return LEAF
    t, aux, children = node
    return PyTreeDef(t, aux, tuple(_flatten_with_path(c, path + (k,), out, is_leaf)
                                   for k, c in zip(_child_keys(x, node), children)))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
    """``[(key_path, leaf), ...]`` (:func:`tree_flatten_with_path` without the treedef).

    >>> tree_leaves_with_path([5, {"k": 6}])
    [((SequenceKey(idx=0),), 5), ((SequenceKey(idx=1), DictKey(key='k')), 6)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
    """``f(key_path, leaf, *others)`` leafwise, e.g. to treat biases and weights apart.

    >>> tree_map_with_path(lambda p, v: 0.0 if keystr(p).endswith("['b']") else v,
    ...                    {"b": 1.0, "w": 2.0})
    {'b': 0.0, 'w': 2.0}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [flatten_up_to(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(p, v, *xs) for (p, v), *xs in zip(pairs, *others)])


def keystr(keys, *, simple=False, separator=""):
    """A key path as text: ``"['w'][0]"``; ``simple=True`` drops brackets and quotes
    (``"w/0"`` with ``separator="/"``)."""
    if not simple:
        return separator.join(str(k) for k in keys)
    def bare(k):
        for field in ("idx", "key", "name"):
            if hasattr(k, field):
                return str(getattr(k, field))
        return str(k)
    return separator.join(bare(k) for k in keys)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn a tree of ``outer`` structure whose leaves-trees have ``inner`` structure
    inside out (JAX's ``tree_transpose``); ``inner_treedef=None`` takes the structure of
    the first subtree.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        subtrees = flatten_up_to(outer_treedef, pytree_to_transpose)
        inner_treedef = tree_structure(subtrees[0]) if subtrees else LEAF
    n_in, n_out = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_in * n_out:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}: "
                        f"tree_transpose needs {n_out} x {n_in} leaves, the tree has "
                        f"{treedef.num_leaves}")
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, [r[j] for r in rows])
                                          for j in range(n_in)])


# ----------------------------------------------------------------------------
# one level at a time, the registry, and treedef helpers (JAX's remaining names)
# ----------------------------------------------------------------------------

KeyEntry = _typing.TypeVar("KeyEntry", bound=_typing.Hashable)
"""One key of a key path: a :class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`,
:class:`FlattenedIndexKey` or a registered node's own key (JAX's type alias)."""
KeyPath = _typing.Tuple[KeyEntry, ...]
KeyPath.__doc__ = """A key path: the tuple of keys (:data:`KeyEntry`) from the root to a leaf, as
:func:`tree_flatten_with_path` gives them (JAX's type alias)."""


def is_tree_node(typ):
    """Whether instances of the type ``typ`` are pytree nodes (containers) rather than leaves.

    >>> is_tree_node(list), is_tree_node(type(None)), is_tree_node(float)
    (True, True, False)
    """
    return (typ in (tuple, list, dict, type(None)) or typ in _registry
            or (isinstance(typ, type) and issubclass(typ, tuple) and hasattr(typ, "_fields")))


def all_leaves(iterable, is_leaf=None):
    """Whether every element of ``iterable`` is a leaf (``None`` is a node, as in JAX).

    >>> all_leaves([1, 2.0]), all_leaves([1, (2,)]), all_leaves([None])
    (True, False, False)
    """
    return all(tree_structure(x, is_leaf).node_type is None for x in iterable)


def _one_level(tree, who):
    node = _flatten_node(tree)
    if node is None:
        raise ValueError(f"{who}: can't tree-flatten type: {type(tree)} (a leaf has no level "
                         f"to flatten; test with is_tree_node(type(x)) first)")
    return node


def flatten_one_level(tree):
    """``(children, aux)`` of the root node of ``tree``: only its first level.

    >>> flatten_one_level({"b": 1, "a": (2, 3)})
    (((2, 3), 1), ('a', 'b'))
    >>> flatten_one_level([1, (2,)])
    ([1, (2,)], None)
    """
    t, aux, children = _one_level(tree, "flatten_one_level")
    if t is dict:
        return tuple(children), aux
    if t is not tuple and t is not list and t is not type(None) and t not in _registry:
        return list(children), t          # a namedtuple: JAX gives its type as aux
    return children, aux


def flatten_one_level_with_keys(tree):
    """``(((key, child), ...), aux)`` of the root node of ``tree``.

    >>> flatten_one_level_with_keys({"b": 1, "a": 2})
    (((DictKey(key='a'), 2), (DictKey(key='b'), 1)), ('a', 'b'))
    """
    node = _one_level(tree, "flatten_one_level_with_keys")
    _, aux = flatten_one_level(tree)
    return tuple(zip(_child_keys(tree, node), node[2])), aux


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``full_tree``'s structure with each leaf taken from ``prefix_tree``'s leaf above it.

    >>> tree_broadcast((1, {"a": 2}), ((0, 0), {"a": [5, 6]}))
    ((1, 1), {'a': [2, 2]})
    """
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = flatten_up_to(treedef, full_tree)
    except ValueError as e:
        raise ValueError(f"pytree structure error: {tree_structure(prefix_tree, is_leaf)} is "
                         f"not a prefix of {tree_structure(full_tree, is_leaf)}: {e}") from None
    return tree_unflatten(treedef, [tree_map(lambda _, v=v: v, sub, is_leaf=is_leaf)
                                    for v, sub in zip(leaves, subtrees)])


_NO_IDENTITY = object()


def tree_reduce_associative(operation, tree, *, identity=_NO_IDENTITY, is_leaf=None):
    """Reduce the leaves with an associative ``operation`` as a balanced tree of calls
    (depth log n, JAX's order: the first half against the second).

    >>> tree_reduce_associative(lambda a, b: f"({a}{b})", ["a", "b", "c", "d", "e"])
    '((ab)(c(de)))'
    >>> tree_reduce_associative(max, [], identity=0)
    0
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_IDENTITY:
            raise TypeError("tree_reduce_associative: the tree has no leaves; pass identity= "
                            "(the operation's neutral element) to reduce an empty tree")
        return identity

    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))
    return reduce(leaves)


def treedef_children(treedef):
    """The structures of the root's children.

    >>> treedef_children(tree_structure({"a": (1, 2), "b": [3]}))
    [(*, *), [*]]
    """
    return list(treedef.children)


def treedef_is_leaf(treedef):
    """Whether ``treedef`` is one node (a leaf, or an empty container such as ``None``).

    >>> treedef_is_leaf(tree_structure(1.0)), treedef_is_leaf(tree_structure([1]))
    (True, False)
    """
    return treedef.num_nodes == 1


def treedef_tuple(treedefs):
    """The structure of a tuple whose items have the structures ``treedefs``.

    >>> treedef_tuple([tree_structure([1]), tree_structure(1)]).num_leaves
    2
    """
    return PyTreeDef(tuple, None, tuple(treedefs))


def register_static(cls):
    """Register ``cls`` as a pytree node with no children: its instances are static
    structure (hashable aux data), never leaves, so transforms do not trace them.

    >>> @register_static
    ... class Mode:
    ...     def __init__(self, name): self.name = name
    ...     def __hash__(self): return hash(self.name)
    ...     def __eq__(self, other): return isinstance(other, Mode) and self.name == other.name
    >>> tree_leaves([Mode("train"), 2.0])
    [2.0]
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: ``cls`` defines ``tree_flatten_with_keys(self) -> (((key, child),
    ...), aux)`` and the classmethod ``tree_unflatten(aux, children)`` (and optionally
    ``tree_flatten``), as in JAX; key paths then use its keys.

    >>> @register_pytree_with_keys_class
    ... class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    ...     def tree_flatten_with_keys(self):
    ...         return ((GetAttrKey("a"), self.a), (GetAttrKey("b"), self.b)), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Pair(1, [2]))]
    ['.a', '.b[0]']
    """
    flat = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              (lambda x: x.tree_flatten()) if flat is not None else None)
    return cls


class PyTreeRegistry:
    """The registry of pytree node types, as an object (JAX's ``default_registry``): its
    methods are the module's functions.

    >>> default_registry.flatten({"a": 1, "b": [2]})[0]
    [1, 2]
    >>> default_registry.is_node(dict)
    True
    """

    def flatten(self, tree, leaf_predicate=None):
        """``(leaves, treedef)`` of ``tree``: :func:`tree_flatten`."""
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, aux_data)`` of the top node of ``tree``: :func:`flatten_one_level`."""
        return flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        """``(((key, child), ...), aux_data)`` of the top node of ``tree``:
        :func:`flatten_one_level_with_keys`."""
        return flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """``([(key_path, leaf), ...], treedef)`` of ``tree``: :func:`tree_flatten_with_path`."""
        return tree_flatten_with_path(tree, leaf_predicate)

    def is_node(self, typ):
        """Whether instances of ``typ`` are pytree nodes: :func:`is_tree_node`."""
        return is_tree_node(typ)

    def register_node(self, node_type, flatten_fn, unflatten_fn, flatten_with_keys_fn=None):
        """Registers ``node_type`` as a pytree node (:func:`register_pytree_node`, or
        :func:`register_pytree_with_keys` when ``flatten_with_keys_fn`` is given); returns ``node_type``."""
        if flatten_with_keys_fn is None:
            return register_pytree_node(node_type, flatten_fn, unflatten_fn)
        return register_pytree_with_keys(node_type, flatten_with_keys_fn, unflatten_fn, flatten_fn)

    def register_dataclass_node(self, cls, data_fields, meta_fields):
        """Registers the dataclass ``cls`` as a pytree node with these data and meta
        fields (:func:`register_dataclass`); returns ``cls``."""
        return register_dataclass(cls, data_fields, meta_fields)


default_registry = PyTreeRegistry()


__all__ = [
    "KeyEntry", "KeyPath", "is_tree_node", "all_leaves", "flatten_one_level",
    "flatten_one_level_with_keys", "tree_broadcast", "tree_reduce_associative",
    "treedef_children", "treedef_is_leaf", "treedef_tuple", "register_static",
    "register_pytree_with_keys_class", "PyTreeRegistry", "default_registry",
    "PyTreeDef", "register_pytree_node", "register_dataclass", "tree_flatten",
    "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "flatten_up_to",
    "broadcast_prefix", "tree_all", "tree_reduce", "register_pytree_node_class", "Partial",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "register_pytree_with_keys",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "tree_transpose",
]
