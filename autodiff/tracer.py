"""autograd's ``tracer`` module for scripts that record their own traces: subclass
:class:`Node`, then ``trace(start_node, fun, x)`` calls your node class once per
operation ``fun`` performs that depends on ``x``, as autograd's examples ``print_trace.py``
and ``dot_graph.py`` do. Returns ``(end_value, end_node)``.

The operations are the library's primitives (the equations ``ad.make_jaxpr`` shows),
evaluated with values so Python control flow on them works, as autograd's boxes: a
node's ``fun`` is callable and named after its primitive (``fun.__name__``, e.g.
``"sin"``, ``"mul"``), ``args`` are the operands' values and ``kwargs`` the primitive's
parameters. ``trace(node, grad(f), x)`` records the equations of the gradient. autograd's
boxes themselves (``autograd.tracer.Box``, ``new_box``) do not exist here.

>>> import autodiff.numpy as anp
>>> from autodiff.tracer import Node, trace
>>> class Names(Node):
...     def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
...         self.names = parents[0].names + [fun.__name__]
...     def initialize_root(self, x):
...         self.names = []
>>> value, node = trace(Names.new_root(1.0), lambda x: anp.sin(x + x) * 2.0, 1.0)
>>> node.names, round(float(value), 12)
(['add', 'sin', 'mul'], 1.818594853651)
"""
import warnings

import numpy as np

from .api_util import as_array, trace_fun
from .ir import Literal
from .tracing import bind
from .tree_util import tree_flatten, tree_unflatten
from .core import Tracer
from .tracing import is_concrete
from .api import stop_gradient

__all__ = ["Node", "trace", "getval"]


def getval(x):
    """The value behind ``x`` with no derivative attached (autograd's
    ``autograd.tracer.getval``): a traced value becomes its numpy value where that value
    is available (under ``grad``/``jvp`` without ``jit``), so the result can go to scipy
    or other host code, as autograd's unboxed value can; under ``jit`` it is
    ``ad.stop_gradient(x)``. Anything else is returned unchanged.

    >>> import numpy as np, scipy.special, autodiff as ad
    >>> from autodiff.tracer import getval
    >>> def f(x):
    ...     print(type(getval(x)).__name__)
    ...     return x * scipy.special.erfcx(getval(x))     # a constant factor for scipy
    >>> round(float(ad.grad(f)(1.0)), 12) == round(float(scipy.special.erfcx(1.0)), 12)
    float64
    True
    """
    if isinstance(x, Tracer):
        if is_concrete(x):
            return np.asarray(x.concrete_value("getval"))[()]
        return stop_gradient(x)
    return x


class Node:
    """A node of a trace: subclasses define ``__init__(value, fun, args, kwargs,
    parent_argnums, parents)`` (an operation's result) and ``initialize_root(x)`` (the
    input); :meth:`new_root` builds the input's node."""

    __slots__ = ()

    def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
        raise NotImplementedError("a Node subclass defines __init__")

    def initialize_root(self, *args, **kwargs):
        """Set up the root node (the traced input); a subclass defines it."""
        raise NotImplementedError("a Node subclass defines initialize_root")

    @classmethod
    def new_root(cls, *args, **kwargs):
        """The root node: an instance made without ``__init__``, then
        ``initialize_root(*args, **kwargs)``."""
        root = cls.__new__(cls)
        root.initialize_root(*args, **kwargs)
        return root


class _Operation:
    """The ``fun`` a node sees: one primitive with its parameters, callable on values."""

    def __init__(self, eqn):
        self.primitive, self.params = eqn.primitive, dict(eqn.params)
        self.__name__ = self.__qualname__ = eqn.primitive.name

    def __call__(self, *args):
        """Apply the primitive to ``args``."""
        return bind(self.primitive, list(args), self.params)

    def __repr__(self):
        return f"<operation {self.__name__}>"


def trace(start_node, fun, x):
    """Evaluate ``fun(x)``, building a node of ``type(start_node)`` for every operation
    that depends on ``x``; returns ``(end_value, end_node)``, with ``end_node`` ``None``
    (and a warning, as autograd) when the result does not depend on ``x``."""
    flat, in_tree = tree_flatten((x,))
    flat = [as_array(v) for v in flat]
    closed, out_tree = trace_fun(fun, flat, in_tree, concrete=True, name="trace")
    jaxpr = closed.jaxpr
    env, nodes = dict(zip(jaxpr.constvars, closed.consts)), {}
    for v, a in zip(jaxpr.invars, flat):
        env[v] = a
        nodes[v] = start_node

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    node_type = type(start_node)
    for e in jaxpr.eqns:
        args = [read(v) for v in e.invars]
        outs = bind(e.primitive, args, e.params)
        outs = list(outs) if e.primitive.multiple_results else [outs]
        env.update(zip(e.outvars, outs))
        argnums = [i for i, v in enumerate(e.invars) if not isinstance(v, Literal) and v in nodes]
        if argnums:
            value = outs[0] if len(outs) == 1 else tuple(outs)
            node = node_type(value, _Operation(e), tuple(args), dict(e.params), argnums,
                             [nodes[e.invars[i]] for i in argnums])
            for v in e.outvars:
                nodes[v] = node
    outs = [read(v) for v in jaxpr.outvars]
    value = tree_unflatten(out_tree, outs)
    if len(outs) == 1 and not isinstance(jaxpr.outvars[0], Literal) and jaxpr.outvars[0] in nodes:
        return value, nodes[jaxpr.outvars[0]]
    warnings.warn("Output seems independent of input.")
    return value, None
