"""``check_grads`` with autograd's and JAX's signatures, over :func:`autodiff.check_grads`.

* JAX (``jax.test_util``): ``check_grads(f, args, order, modes=("fwd", "rev"),
  atol=None, rtol=None, eps=None)`` checks ``f`` with respect to every argument in
  ``args`` (a tuple) and returns ``None``.
* autograd (``autograd.test_util``): ``check_grads(f, argnum=0, modes=["fwd", "rev"],
  order=2)`` returns a checker; ``check_grads(f)(*args)`` checks the derivative with
  respect to ``args[argnum]`` only.

Both raise ``AssertionError`` with the expected and computed values on a mismatch.
Forward mode is compared with central differences, reverse mode with forward mode by
the adjoint identity ``<vjp(u), v> = <u, jvp(v)>``.

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.test_util import check_grads
>>> check_grads(anp.sin, (np.array([0.3, 1.2]),), order=2)             # JAX's form
>>> check_grads(lambda x, y: anp.sum(x * anp.exp(y)), argnum=1)(np.ones(2), np.zeros(2))
>>> check_grads(lambda x: x ** 3, modes=["rev"], order=1)(1.5)        # autograd's form
"""
import numbers

from .check import check_grads as _check_grads

__all__ = ["check_grads"]


def check_grads(f, args=None, order=None, modes=("fwd", "rev"), atol=None, rtol=None, eps=None,
                argnum=None):
    """JAX's ``check_grads(f, args, order, ...)`` when ``args`` is a tuple or list;
    otherwise autograd's ``check_grads(f, argnum=0, modes=..., order=2)(*args)``."""
    if isinstance(args, (tuple, list)):
        return _check_grads(f, tuple(args), 2 if order is None else order, modes, eps, atol, rtol)
    if isinstance(args, numbers.Integral):          # autograd's positional argnum
        argnum = args
    argnum = 0 if argnum is None else argnum
    order = 2 if order is None else order

    def checker(*xs, **kwargs):
        before, after = xs[:argnum], xs[argnum + 1:]

        def f_of_one(x):
            return f(*before, x, *after, **kwargs)
        _check_grads(f_of_one, (xs[argnum],), order, modes, eps, atol, rtol)
    return checker
