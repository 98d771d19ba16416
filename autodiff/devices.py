"""Where arrays live and when they are ready.

Computation on the CPU backends is synchronous: when a function returns, its results
are computed. ``block_until_ready`` is there for code written for JAX's asynchronous
dispatch (benchmarks that wait before stopping a clock); it returns its argument.

>>> import numpy as np, autodiff as ad
>>> ad.block_until_ready({"w": np.ones(2)})
{'w': array([1., 1.])}
"""
from .tree_util import tree_leaves

__all__ = ["block_until_ready"]


def block_until_ready(tree):
    """Wait until every array in ``tree`` is computed (leaves with their own
    ``block_until_ready``, such as device arrays, are waited for); returns ``tree``."""
    for leaf in tree_leaves(tree):
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait):
            wait()
    return tree
