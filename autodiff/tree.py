"""``ad.tree``: JAX's ``jax.tree`` namespace, short names over :mod:`autodiff.tree_util`.

>>> import autodiff as ad
>>> ad.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (4, 6)}
>>> ad.tree.leaves([1, (2, None)])
[1, 2]
>>> [(ad.tree_util.keystr(p), v) for p, v in ad.tree.leaves_with_path({"w": [7]})]
[("['w'][0]", 7)]
"""
import dataclasses as _dataclasses

from . import tree_util as _tu

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]

all = _tu.tree_all                      # noqa: A001 - JAX's names
broadcast = _tu.tree_broadcast
reduce_associative = _tu.tree_reduce_associative
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map                      # noqa: A001
map_with_path = _tu.tree_map_with_path
reduce = _tu.tree_reduce
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten


def static(*, metadata=None, **kwargs):
    """A ``dataclasses.field`` marked static (``metadata={"static": True}``), so that
    :func:`~autodiff.tree_util.register_dataclass` makes it tree structure, not a leaf
    (JAX's ``jax.tree.static``); an explicit ``"static"`` in ``metadata`` wins.

    >>> import dataclasses, autodiff as ad
    >>> @ad.tree_util.register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: float
    ...     name: str = ad.tree.static(default="dense")
    >>> ad.tree.leaves(Layer(2.0))
    [2.0]
    """
    return _dataclasses.field(metadata={"static": True, **(metadata or {})}, **kwargs)
