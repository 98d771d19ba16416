"""autograd's ``autograd.wrap_util``: turn an operator on one-argument functions into
one on many-argument functions (``unary_to_nary``), and name the results.

>>> import numpy as np, autodiff as ad
>>> from autodiff.wrap_util import unary_to_nary
>>> @unary_to_nary
... def double_grad(fun, x):                 # an operator written for f(x) ...
...     return ad.grad(ad.grad(fun))(x)
>>> float(double_grad(lambda a, b: a ** 3 * b, argnum=0)(2.0, 5.0))   # ... used on f(a, b)
60.0
"""
import functools

__all__ = ["unary_to_nary", "wraps", "wrap_nary_f", "get_name", "get_doc"]


def get_name(f):
    """``f``'s ``__name__`` (``"[unknown name]"`` without one)."""
    return getattr(f, "__name__", "[unknown name]")


def get_doc(f):
    """``f``'s docstring (``""`` without one)."""
    return getattr(f, "__doc__", "") or ""


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    """A decorator naming a wrapper after ``fun``: ``namestr``/``docstr`` are formatted
    with ``fun`` (its name), ``doc`` (its docstring) and ``kwargs``.

    >>> def f(x):
    ...     "doc of f"
    >>> @wraps(f, "grad_of_{fun}", "Gradient. {doc}")
    ... def g(x): ...
    >>> g.__name__, g.__doc__
    ('grad_of_f', 'Gradient. doc of f')
    """
    def _wraps(f):
        try:
            f.__name__ = namestr.format(fun=get_name(fun), **kwargs)
            f.__doc__ = docstr.format(fun=get_name(fun), doc=get_doc(fun), **kwargs)
        except (AttributeError, TypeError):        # builtins and partials keep their names
            pass
        return f
    return _wraps


def wrap_nary_f(fun, op, argnum):
    """Name ``fun`` as the result of the operator ``op`` on argument ``argnum``."""
    namestr = "{op}_of_{fun}_wrt_argnum_{argnum}"
    docstr = """\
    {op} of function {fun} with respect to argument number {argnum}. Takes the
    same arguments as {fun} but returns the {op}.
    """
    return wraps(fun, namestr, docstr, op=get_name(op), argnum=argnum)


def unary_to_nary(unary_operator):
    """``unary_operator(fun, x, ...)`` (an operator on functions of one argument) becomes
    ``nary_operator(fun, argnum=0, ...)``, returning a function of all of ``fun``'s
    arguments that applies the operator to argument ``argnum`` (an int, or a tuple:
    then ``x`` is the tuple of those arguments), the others held fixed.
    """
    @wraps(unary_operator)
    def nary_operator(fun, argnum=0, *nary_op_args, **nary_op_kwargs):
        assert type(argnum) in (int, tuple, list), argnum

        @wrap_nary_f(fun, unary_operator, argnum)
        def nary_f(*args, **kwargs):
            @wraps(fun)
            def unary_f(x):
                if isinstance(argnum, int):
                    subargs = args[:argnum] + (x,) + args[argnum + 1:]
                else:
                    subargs = list(args)
                    for i, v in zip(argnum, x):
                        subargs[i] = v
                    subargs = tuple(subargs)
                return fun(*subargs, **kwargs)
            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *nary_op_args, **nary_op_kwargs)
        return nary_f
    return nary_operator
