"""autograd's differential operators, with autograd's names, signatures and result layouts.

Code written for ``autograd`` ports by changing ``from autograd import ...`` to
``from autodiff.differential_operators import ...`` (the names that do not clash with
JAX's are also importable from ``autodiff`` itself). Every operator takes
``argnum`` (an int, or a tuple: the derivative is then taken with respect to the
tuple of those arguments and comes back as a tuple), is built from autodiff's own
transforms, and so composes with ``jit``, ``vmap`` and further differentiation.

What differs from autograd: nothing in the results. autograd's ``make_vjp`` returns
``(vjp_fn, value)`` and its ``vjp_fn(g)`` returns the cotangent of ``args[argnum]``
itself (JAX's ``ad.vjp`` returns ``(value, vjp_fn)`` and a tuple); these follow
autograd.

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.differential_operators import elementwise_grad, make_vjp
>>> elementwise_grad(anp.sin)(np.array([0.0, np.pi]))              # cos, elementwise
array([ 1., -1.])
>>> vjp_fn, value = make_vjp(lambda x: x ** 2)(np.array([1.0, 3.0]))
>>> vjp_fn(np.array([1.0, 1.0])), value
(array([2., 6.]), array([1., 9.]))
"""
import inspect
from collections import OrderedDict

from . import api
from . import numpy as anp
from .tree_util import tree_map
from .checkpoint import checkpoint as _checkpoint

__all__ = ["grad", "value_and_grad", "elementwise_grad", "deriv", "jacobian", "hessian",
           "grad_and_aux", "grad_named", "make_vjp", "make_jvp", "make_hvp",
           "hessian_tensor_product", "hessian_vector_product", "tensor_jacobian_product",
           "vector_jacobian_product", "make_ggnvp", "multigrad_dict", "checkpoint",
           "holomorphic_grad", "make_jvp_reversemode"]


def _unary(fun, argnum, args, kwargs):
    """``(x, f)``: the differentiated argument (a tuple for a tuple ``argnum``) and
    ``f(x)``, ``fun`` with the other arguments fixed (autograd's ``unary_to_nary``)."""
    n = len(args)
    nums = argnum if isinstance(argnum, (tuple, list)) else (argnum,)
    for i in nums:
        if not isinstance(i, int) or not -n <= i < n:
            raise TypeError(f"argnum={argnum!r} but the function got {n} positional arguments")
    nums = tuple(i % n for i in nums)
    single = not isinstance(argnum, (tuple, list))
    x = args[nums[0]] if single else tuple(args[i] for i in nums)

    def f(x):
        full = list(args)
        for i, v in zip(nums, (x,) if single else x):
            full[i] = v
        return fun(*full, **kwargs)
    return x, f


def _ones_like(tree):
    return tree_map(lambda v: anp.ones_like(v, dtype=anp.result_type(v, 1.0)), tree)


def make_vjp(fun, argnum=0):
    """autograd's ``make_vjp``: ``make_vjp(fun, argnum)(*args) -> (vjp_fn, value)``, where
    ``vjp_fn(g)`` is the cotangent of ``args[argnum]`` (not wrapped in a tuple).

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import make_vjp
    >>> vjp_fn, y = make_vjp(lambda a, b: a * b, argnum=1)(2.0, 5.0)
    >>> float(vjp_fn(1.0)), float(y)
    (2.0, 10.0)
    """
    def vjp_maker(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        value, pullback = api.vjp(f, x)
        return (lambda g: pullback(g)[0]), value
    return vjp_maker


def make_jvp(fun, argnum=0):
    """autograd's ``make_jvp``: ``make_jvp(fun, argnum)(*args)`` is ``jvp(v) -> (value,
    J·v)``, forward mode.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import make_jvp
    >>> value, tangent = make_jvp(anp.exp)(0.0)(3.0)
    >>> float(value), float(tangent)
    (1.0, 3.0)
    """
    def jvp_maker(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)

        def jvp(v):
            return api.jvp(f, (x,), (v,))
        return jvp
    return jvp_maker


def grad(fun, argnum=0):
    """autograd's ``grad``: the gradient of a scalar-output ``fun`` w.r.t. ``args[argnum]``.

    >>> import autodiff.numpy as anp
    >>> from autodiff.differential_operators import grad
    >>> float(grad(lambda x, y: x * y ** 2, 1)(3.0, 2.0))
    12.0
    """
    return api.grad(fun, argnums=tuple(argnum) if isinstance(argnum, list) else argnum)


def value_and_grad(fun, argnum=0):
    """autograd's ``value_and_grad``: ``(fun(*args), gradient)`` of a scalar-output ``fun``
    (what ``scipy.optimize.minimize(..., jac=True)`` takes).

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import value_and_grad
    >>> value_and_grad(lambda x: anp.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    """
    return api.value_and_grad(fun, argnums=tuple(argnum) if isinstance(argnum, list) else argnum)


def elementwise_grad(fun, argnum=0):
    """autograd's ``elementwise_grad``: the vector-Jacobian product with a cotangent of ones,
    in one reverse pass. For a function acting elementwise (diagonal Jacobian) it is the
    derivative of each output with respect to its input; in general it is the gradient
    of ``sum(fun(x))``. The output may have any shape.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import elementwise_grad
    >>> elementwise_grad(lambda x: x ** 3)(np.array([1.0, 2.0]))          # 3x²
    array([ 3., 12.])
    """
    def gradfun(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        value, pullback = api.vjp(f, x)
        return pullback(_ones_like(value))[0]
    return gradfun


def deriv(fun, argnum=0):
    """autograd's ``deriv``: the Jacobian-vector product with a tangent of ones, in one
    forward pass (for a scalar input, the derivative of every output).

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import deriv
    >>> deriv(lambda t: anp.stack([t ** 2, anp.sin(t)]))(0.0)              # (2t, cos t)
    array([0., 1.])
    """
    def derivfun(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        return api.jvp(f, (x,), (_ones_like(x),))[1]
    return derivfun


def jacobian(fun, argnum=0):
    """autograd's ``jacobian``: shape ``out.shape + in.shape``, w.r.t. ``args[argnum]``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import jacobian
    >>> jacobian(lambda x: x[::-1] * 2.0)(np.zeros(2))
    array([[0., 2.],
           [2., 0.]])
    """
    return api.jacobian(fun, argnums=tuple(argnum) if isinstance(argnum, list) else argnum)


def hessian(fun, argnum=0):
    """autograd's ``hessian``: the exact Hessian of a scalar ``fun`` w.r.t. ``args[argnum]``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import hessian
    >>> hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 3.0]))        # [[2y, 2x], [2x, 0]]
    array([[6., 2.],
           [2., 0.]])
    """
    return api.hessian(fun, argnums=tuple(argnum) if isinstance(argnum, list) else argnum)


def grad_and_aux(fun, argnum=0):
    """autograd's ``grad_and_aux``: ``fun`` returns ``(scalar, aux)``; the result is
    ``(gradient of the scalar, aux)``, aux unchanged (a pytree of arrays, as autograd needs).

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import grad_and_aux
    >>> g, aux = grad_and_aux(lambda x: (anp.sum(x ** 2), {"x3": x ** 3}))(np.array([1.0, -1.0]))
    >>> g, aux
    (array([ 2., -2.]), {'x3': array([ 1., -1.])})
    """
    def gradfun(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)

        def pair(x):
            out = f(x)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"grad_and_aux: the function must return a pair (value, aux), "
                                f"it returned {type(out).__name__}")
            return tuple(out)
        return api.grad(pair, has_aux=True)(x)
    return gradfun


def grad_named(fun, argname):
    """autograd's ``grad_named``: the gradient w.r.t. the positional parameter named
    ``argname`` (not ``*args`` / ``**kwargs``).

    >>> from autodiff.differential_operators import grad_named
    >>> float(grad_named(lambda a, b: a * b ** 3, "b")(2.0, 1.0))
    6.0
    """
    params = [p.name for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argname not in params:
        raise TypeError(f"grad_named: {getattr(fun, '__name__', fun)} has no positional "
                        f"parameter {argname!r} (it has {params})")
    return grad(fun, params.index(argname))


def make_hvp(fun, argnum=0):
    """autograd's ``make_hvp``: ``make_hvp(fun, argnum)(*args) -> (hvp_fn, gradient)``;
    ``hvp_fn(v)`` is ``H·v``, reusing one linearization of the gradient for many ``v``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import make_hvp
    >>> hvp_fn, g = make_hvp(lambda x: anp.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> hvp_fn(np.array([1.0, 0.0])), g                        # diag(6x)·v, 3x²
    (array([6., 0.]), array([ 3., 12.]))
    """
    def hvp_maker(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        g, pullback = api.vjp(api.grad(f), x)
        return (lambda v: pullback(v)[0]), g
    return hvp_maker


def hessian_tensor_product(fun, argnum=0):
    """autograd's ``hessian_tensor_product``: ``htp(*args, tensor, **kwargs)`` is the Hessian
    of the scalar ``fun`` w.r.t. ``args[argnum]`` contracted with ``tensor`` over all of that
    argument's axes, computed forward-over-reverse without forming the Hessian.
    ``hessian_vector_product`` is the same function.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import hessian_tensor_product
    >>> htp = hessian_tensor_product(lambda c, x: c * anp.sum(x ** 3), argnum=1)
    >>> htp(2.0, np.array([1.0, 2.0]), np.array([1.0, 1.0]))       # 6c·x·v
    array([12., 24.])
    """
    if isinstance(argnum, (tuple, list)):
        raise TypeError("hessian_tensor_product: argnum must be one int (the Hessian of a "
                        "tuple of arguments is not a tensor autograd contracts)")

    def htp(*args_and_tensor, **kwargs):
        if not args_and_tensor:
            raise TypeError("hessian_tensor_product: call it as htp(*args, tensor)")
        *args, tensor = args_and_tensor
        x, f = _unary(fun, argnum, tuple(args), kwargs)
        return api.jvp(api.grad(f), (x,), (tensor,))[1]
    return htp


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """autograd's ``tensor_jacobian_product``: ``tjp(*args, tensor, **kwargs)`` is
    ``tensor`` contracted with the Jacobian over all output axes (a vector-Jacobian
    product, one reverse pass). ``vector_jacobian_product`` is the same function.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import tensor_jacobian_product
    >>> tjp = tensor_jacobian_product(lambda x: anp.stack([x[0] * x[1], x[1]]))
    >>> tjp(np.array([2.0, 3.0]), np.array([1.0, 10.0]))       # vᵀJ = (y, x + 10)
    array([ 3., 12.])
    """
    if isinstance(argnum, (tuple, list)):
        raise TypeError("tensor_jacobian_product: argnum must be one int")

    def tjp(*args_and_tensor, **kwargs):
        if not args_and_tensor:
            raise TypeError("tensor_jacobian_product: call it as tjp(*args, tensor)")
        *args, tensor = args_and_tensor
        x, f = _unary(fun, argnum, tuple(args), kwargs)
        return api.vjp(f, x)[1](tensor)[0]
    return tjp


vector_jacobian_product = tensor_jacobian_product


def make_ggnvp(f, g=None, f_argnum=0):
    """autograd's ``make_ggnvp``: generalized Gauss-Newton products ``Jᵀ H_g J v`` for
    ``g(f(x))``, with ``J`` the Jacobian of ``f`` and ``H_g`` the Hessian of the scalar ``g``
    at ``f(x)`` (default ``g(y) = ½ Σ y²`` over the last axis, so the product is ``JᵀJv``).
    ``make_ggnvp(f, g)(*args)`` returns ``ggnvp(v)``.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import make_ggnvp
    >>> A = np.array([[1.0, 2.0], [0.0, 1.0]])
    >>> make_ggnvp(lambda x: A @ x)(np.zeros(2))(np.array([1.0, 0.0]))    # AᵀA·v
    array([1., 2.])
    """
    if g is None:
        def g(y):
            return 0.5 * anp.sum(y ** 2, axis=-1)

    def ggnvp_maker(*args, **kwargs):
        x, fx = _unary(f, f_argnum, args, kwargs)
        y, f_vjp = api.vjp(fx, x)
        _, g_hvp = api.vjp(api.grad(g), y)

        def ggnvp(v):
            jv = api.jvp(fx, (x,), (v,))[1]
            return f_vjp(g_hvp(jv)[0])[0]
        return ggnvp
    return ggnvp_maker


def multigrad_dict(fun):
    """autograd's ``multigrad_dict``: the gradients w.r.t. every argument at once, as an
    ``OrderedDict`` from parameter name to gradient, in the signature's order. Parameters
    left at their defaults are differentiated too (at the default value); ``*args`` gives
    a tuple of gradients and ``**kwargs`` a dict.

    >>> from autodiff.differential_operators import multigrad_dict
    >>> g = multigrad_dict(lambda a, b=3.0: a * b ** 2)(2.0)
    >>> {k: float(v) for k, v in g.items()}
    {'a': 9.0, 'b': 12.0}
    """
    sig = inspect.signature(fun)

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        names = list(bound.arguments)

        def of_dict(d):
            pos, kw = [], {}
            for p in sig.parameters.values():
                v = d[p.name]
                if p.kind == p.VAR_POSITIONAL:
                    pos.extend(v)
                elif p.kind == p.VAR_KEYWORD:
                    kw.update(v)
                elif p.kind == p.KEYWORD_ONLY:
                    kw[p.name] = v
                else:
                    pos.append(v)
            return fun(*pos, **kw)

        arguments = {n: (tuple(v) if sig.parameters[n].kind == inspect.Parameter.VAR_POSITIONAL
                         else dict(v) if sig.parameters[n].kind == inspect.Parameter.VAR_KEYWORD
                         else v) for n, v in bound.arguments.items()}
        g = api.grad(of_dict)(arguments)
        return OrderedDict((n, g[n]) for n in names)
    return gradfun


def checkpoint(fun):
    """autograd's ``checkpoint``: ``fun``'s intermediates are recomputed in the backward
    pass instead of stored (``ad.checkpoint`` with no policy).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> from autodiff.differential_operators import checkpoint, grad
    >>> f = checkpoint(lambda x: anp.sin(anp.sin(x)))
    >>> bool(np.isclose(grad(f)(0.0), 1.0))
    True
    """
    return _checkpoint(fun)


def holomorphic_grad(fun, argnum=0):
    """autograd's ``holomorphic_grad``: the complex derivative f'(z) of a holomorphic
    ``fun`` with respect to a complex argument (``grad(..., holomorphic=True)``).

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import holomorphic_grad
    >>> complex(holomorphic_grad(lambda z: z ** 2)(np.complex128(1 + 2j)))    # 2z
    (2+4j)
    """
    def gradfun(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        return api.grad(f, holomorphic=True)(x)
    return gradfun


def make_jvp_reversemode(fun, argnum=0):
    """autograd's ``make_jvp_reversemode``: ``make_jvp_reversemode(fun, argnum)(*args)`` is
    ``v -> J·v`` computed by reverse mode twice (the transpose of the VJP, itself linear
    in the cotangent), for functions whose forward mode is unavailable.

    >>> import numpy as np, autodiff.numpy as anp
    >>> from autodiff.differential_operators import make_jvp_reversemode
    >>> make_jvp_reversemode(lambda x: x * np.array([1.0, 2.0]))(np.ones(2))(np.array([3.0, 4.0]))
    array([3., 8.])
    """
    def jvp_maker(*args, **kwargs):
        x, f = _unary(fun, argnum, args, kwargs)
        y, pullback = api.vjp(f, x)

        def jvp(v):
            # u -> J^T u is linear: its own vjp at any point, applied to v, is J v
            zero = tree_map(lambda t: anp.zeros_like(t), y)
            return api.vjp(lambda u: pullback(u)[0], zero)[1](v)[0]
        return jvp
    return jvp_maker
