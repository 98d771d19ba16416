"""autograd's ``autograd.builtins``: ``tuple``, ``list``, ``dict``, ``isinstance``, ``type``.

autograd needs its own containers so that a container of traced values is itself
traced. Here every transform takes and returns pytrees, so Python's own containers
already work: ``list`` and ``dict`` *are* the builtins, kept so that
``from autograd.builtins import list`` ports by changing the import. ``tuple`` is a
subclass of Python's, registered as a pytree node (its children are its items), for one
reason: autograd's ``odeint(func, y0, t, tuple((params,)))`` passes scipy's ``args``
tuple positionally, where JAX's ``odeint(func, y0, t, *args)`` would take it as one
argument; the type tells the two apart (``autodiff.scipy.integrate.odeint``). As in
autograd, every tuple is an instance of it (``isinstance((1, 2), tuple)`` holds with this
``tuple`` imported) and ``type`` reports Python's ``tuple`` for it; its treedef is its
own, as a namedtuple's is.
``isinstance`` and ``type`` see through tracers the way autograd's do: a traced array
is an ``numpy.ndarray``.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.builtins import tuple as ag_tuple, isinstance as ag_isinstance
>>> def f(x):
...     assert ag_isinstance(x, np.ndarray)
...     pair = ag_tuple((anp.sin(x), anp.cos(x)))
...     return pair[0] * pair[1]
>>> float(ad.grad(f)(0.0))        # d/dx sin x cos x = cos 2x
1.0
"""
import builtins as _py

import numpy as np

from .core import Tracer
from .tree_util import SequenceKey, register_pytree_with_keys

__all__ = ["tuple", "list", "dict", "isinstance", "type"]

list = _py.list
dict = _py.dict


class _TupleMeta(_py.type):
    # autograd's TupleMeta: any tuple is an instance, so a module that imports this
    # ``tuple`` over the builtin keeps its ``isinstance(x, tuple)`` checks
    def __instancecheck__(cls, instance):
        return _py.isinstance(instance, _py.tuple)


class tuple(_py.tuple, metaclass=_TupleMeta):
    """autograd's ``tuple``: Python's, marked (a subclass) so that ``odeint`` can read it
    as scipy's positional ``args``; a pytree node like a plain tuple."""
    __slots__ = ()


register_pytree_with_keys(
    tuple, lambda x: (_py.tuple((SequenceKey(i), c) for i, c in enumerate(x)), None),
    lambda _, children: tuple(children), lambda x: (_py.list(x), None))


def type(obj):
    """``builtins.type``, except a traced value reports ``numpy.ndarray`` and autograd's
    ``tuple`` reports Python's (as in autograd, where it builds a plain tuple)."""
    if _py.isinstance(obj, Tracer):
        return np.ndarray
    t = _py.type(obj)
    return _py.tuple if t is tuple else t


def isinstance(obj, classinfo):
    """``builtins.isinstance``, except a traced value is an instance of ``numpy.ndarray``."""
    if _py.isinstance(obj, Tracer):
        classes = classinfo if _py.isinstance(classinfo, _py.tuple) else (classinfo,)
        return any(c is np.ndarray or _py.isinstance(obj, c) for c in classes)
    return _py.isinstance(obj, classinfo)
