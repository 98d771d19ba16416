"""autograd's differential operators that JAX spells differently.

``hessian_vector_product(fun, argnum=0)`` returns ``hvp(*args, vector)``: the Hessian
of the scalar ``fun`` with respect to ``args[argnum]``, contracted with ``vector``
(over all of the argument's axes), computed forward-over-reverse without forming
the Hessian.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> hvp = ad.hessian_vector_product(lambda x, c: c * anp.sum(x ** 3))
>>> hvp(np.array([1.0, 2.0]), 2.0, np.array([1.0, 1.0]))      # 6c·x·v
array([12., 24.])
"""
from .api import grad, jvp

__all__ = ["hessian_vector_product"]


def hessian_vector_product(fun, argnum=0):
    """autograd's ``hessian_vector_product``: ``H(args)·vector`` w.r.t. ``args[argnum]``."""
    def hvp(*args_and_vector, **kwargs):
        *args, vector = args_and_vector
        before, after = args[:argnum], args[argnum + 1:]

        def g(x):
            return grad(lambda x: fun(*before, x, *after, **kwargs))(x)
        return jvp(g, (args[argnum],), (vector,))[1]
    return hvp
