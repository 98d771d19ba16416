"""autograd's ``autograd.misc``, for ports that only change the import.

* :mod:`~autodiff.misc.optimizers`: ``sgd``, ``rmsprop``, ``adam`` with autograd's
  ``callback(params, iteration, gradient)`` protocol over any pytree;
* :mod:`~autodiff.misc.flatten`: ``flatten(tree) -> (vector, unflatten)`` and
  ``flatten_func``;
* :mod:`~autodiff.misc.fixed_points`: ``fixed_point``, differentiated implicitly.

>>> import numpy as np
>>> from autodiff.misc import flatten
>>> flatten((np.ones(2), 5.0))[0]
array([1., 1., 5.])
"""
from . import optimizers, fixed_points  # noqa: F401
# as in autograd, ``autodiff.misc.flatten`` is the function; the module stays importable
# as ``from autodiff.misc.flatten import flatten, flatten_func``
from .flatten import flatten, flatten_func  # noqa: F401
from .fixed_points import fixed_point  # noqa: F401

__all__ = ["optimizers", "fixed_points", "flatten", "flatten_func", "fixed_point", "const_graph"]


def const_graph(fun, *args, **kwargs):
    """autograd's ``const_graph``: ``fun`` (with ``args``/``kwargs`` bound when given), for
    functions called many times on arrays of one shape. autograd records the graph once;
    here wrap the result in ``ad.jit`` for that (it traces once per input signature).

    >>> import numpy as np
    >>> f = const_graph(lambda x, a: x * a, a=3.0)
    >>> f(np.ones(2))
    array([3., 3.])
    """
    import functools
    return functools.partial(fun, *args, **kwargs) if args or kwargs else fun
