"""autograd's ``autograd.builtins``: ``tuple``, ``list``, ``dict``, ``isinstance``, ``type``.

autograd needs its own containers so that a container of traced values is itself
traced. Here every transform takes and returns pytrees, so Python's own ``tuple``,
``list`` and ``dict`` already work: these names *are* the builtins, kept so that
``from autograd.builtins import tuple as ag_tuple`` ports by changing the import.
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

__all__ = ["tuple", "list", "dict", "isinstance", "type"]

tuple = _py.tuple
list = _py.list
dict = _py.dict


def type(obj):
    """``builtins.type``, except a traced value reports ``numpy.ndarray``."""
    return np.ndarray if _py.isinstance(obj, Tracer) else _py.type(obj)


def isinstance(obj, classinfo):
    """``builtins.isinstance``, except a traced value is an instance of ``numpy.ndarray``."""
    if _py.isinstance(obj, Tracer):
        classes = classinfo if _py.isinstance(classinfo, _py.tuple) else (classinfo,)
        return any(c is np.ndarray or _py.isinstance(obj, c) for c in classes)
    return _py.isinstance(obj, classinfo)
