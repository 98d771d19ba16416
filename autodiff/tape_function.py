"""Custom ``Function`` s of the tape API: ``forward(ctx, ...)`` / ``backward(ctx, grad_output)``,
on top of ``custom_vjp`` (so they work under every transform, not only the tape).

>>> import numpy as np, autodiff as ad
>>> class Square(ad.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2.0 * x * g
>>> ad.grad(lambda v: Square.apply(v).sum())(np.array([1.0, 3.0]))
array([2., 6.])
"""
import numpy as np

from . import primitives as P
from .api import as_array
from .core import Tracer, get_aval, is_inexact_dtype, trace_flat, user_source
from .custom_derivatives import split_consts, custom_vjp_call_p
from .errors import ShapeError
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["Function", "FunctionCtx"]

# ----------------------------------------------------------------------------
# custom Functions: forward(ctx, ...) / backward(ctx, grad_output), on custom_vjp
# ----------------------------------------------------------------------------

class FunctionCtx:
    """The ``ctx`` of a :class:`Function`: ``save_for_backward`` arrays, keep other attributes.

    Array attributes set on ``ctx`` in ``forward`` (other than saved tensors) are
    carried to ``backward`` as residuals too; other attributes must not depend on
    values (they are recorded once per input signature).
    """

    def __init__(self, needs_input_grad=()):
        self._saved = ()
        self.needs_input_grad = tuple(needs_input_grad)

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` for ``backward`` (read them back as ``ctx.saved_tensors``)."""
        self._saved = tensors

    @property
    def saved_tensors(self):
        """The tensors given to :meth:`save_for_backward`, as a tuple."""
        return tuple(self._saved)

    def mark_non_differentiable(self, *args):
        """Accepted for compatibility; non-float outputs already carry no gradient."""


def _is_array_arg(a):
    return isinstance(a, (np.ndarray, Tracer, np.generic))


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False


class Function:
    """A differentiable operation with a hand-written backward, in the seed's style.

    Subclass with static methods ``forward(ctx, *inputs)`` and
    ``backward(ctx, *grad_outputs)`` (one gradient, or ``None``, per input);
    call with ``MyOp.apply(*inputs)``. Works on Variables (recorded on the tape)
    and inside every functional transform (it is a ``custom_vjp``). Array
    arguments are differentiable; other arguments (Python numbers, strings) are
    static. ``forward`` must not branch on values (use ``anp.where``).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> class RoundSTE(ad.Function):          # straight-through estimator
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return anp.round(x)
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g
    >>> x = ad.Variable(np.array([0.4, 1.6]))
    >>> (RoundSTE.apply(x) * 3.0).sum().backward()
    >>> x.grad
    array([3., 3.])
    >>> ad.grad(lambda v: anp.sum(RoundSTE.apply(v) ** 2))(np.array([0.4, 1.6]))   # 2·round(v)
    array([0., 4.])
    """

    @staticmethod
    def forward(ctx, *args):
        """The operation: override as a static method ``forward(ctx, *inputs)``."""
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The gradient: override as a static method ``backward(ctx, *grad_outputs)`` returning one
        gradient (or ``None``) per input."""
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args):
        """Run the operation on ``args``: recorded on the tape for Variables, a ``custom_vjp``
        inside transforms."""
        return _apply_function(cls, args)


def _apply_function(cls, args):
    n = len(args)
    dyn_idx = tuple(i for i, a in enumerate(args) if _is_array_arg(a))
    flat = [as_array(args[i]) for i in dyn_idx]
    needs = tuple(i in dyn_idx and is_inexact_dtype(P.dtype_of(args[i])) for i in range(n))
    if not any(isinstance(x, Tracer) for x in flat):
        return cls.forward(FunctionCtx(needs), *args)          # plain numpy: just run it
    in_avals = tuple(get_aval(x).strip_weak() for x in flat)
    statics = tuple((i, args[i]) for i in range(n) if i not in dyn_idx)
    key = (in_avals, dyn_idx, statics) if _hashable(statics) else None
    cache = cls.__dict__.get("_ad_rules")
    if cache is None:
        cache = {}
        setattr(cls, "_ad_rules", cache)
    rules = cache.get(key) if key is not None else None
    if rules is None:
        rules = _function_rules(cls, n, dyn_idx, dict(statics), needs, flat)
        if key is not None:
            if len(cache) > 256:
                cache.clear()
            cache[key] = rules
    fun_flat, fwd_flat, bwd_flat, box = rules
    closed = trace_flat(fun_flat, list(in_avals), name=f"{cls.__name__}.forward")
    call_jaxpr, consts = split_consts(closed)
    outs = custom_vjp_call_p.bind(*consts, *flat, call_jaxpr=call_jaxpr, fwd=fwd_flat,
                                  bwd=bwd_flat, num_consts=len(consts),
                                  out_avals=tuple(v.aval for v in call_jaxpr.outvars))
    return tree_unflatten(box["out_tree"], outs)


def _function_rules(cls, n, dyn_idx, statics, needs, flat_example):
    """``fun``, ``fwd``, ``bwd`` of the custom_vjp behind ``cls``, made once per signature
    so that recorded equations of the same structure have equal keys."""
    box = {}
    name = cls.__name__
    dyn_avals = [get_aval(x).strip_weak() for x in flat_example]

    def full(xs):
        it = iter(xs)
        return [next(it) if i in dyn_idx else statics[i] for i in range(n)]

    def run_forward(xs):
        ctx = FunctionCtx(needs)
        out = cls.forward(ctx, *full(xs))
        leaves, tree = tree_flatten(out)
        box["out_tree"] = tree
        return ctx, [as_array(o) for o in leaves]

    def fun_flat(*xs):
        return run_forward(xs)[1]

    def fwd_flat(xs):
        ctx, outs = run_forward(xs)
        saved = list(ctx.saved_tensors)
        saved_mask = [s is not None for s in saved]
        arrays, names, static_attrs = [], [], {}
        for k, v in vars(ctx).items():
            if k in ("_saved", "needs_input_grad"):
                continue
            if _is_array_arg(v):
                names.append(k)
                arrays.append(v)
            else:
                static_attrs[k] = v
        box["res"] = (saved_mask, names, static_attrs)
        res = [as_array(s) for s in saved if s is not None] + [as_array(a) for a in arrays]
        return outs, res

    def bwd_flat(res, cts):
        saved_mask, names, static_attrs = box["res"]
        ctx = FunctionCtx(needs)
        it = iter(res)
        ctx._saved = tuple(next(it) if m else None for m in saved_mask)
        for k in names:
            setattr(ctx, k, next(it))
        for k, v in static_attrs.items():
            setattr(ctx, k, v)
        ct = tree_unflatten(box["out_tree"], list(cts))
        g = cls.backward(ctx, *ct) if isinstance(ct, tuple) else cls.backward(ctx, ct)
        if not isinstance(g, (tuple, list)):
            g = (g,)
        g = tuple(g)
        if len(g) != n:
            raise TypeError(f"{name}.backward returned {len(g)} gradients for {n} inputs of "
                            f"forward (return None for inputs without a gradient)")
        out = []
        for i, a in zip(dyn_idx, dyn_avals):
            c = g[i]
            if c is None:
                out.append(P.full(a.shape, 0, a.dtype))
                continue
            c = P.convert(as_array(c), a.dtype)
            cs = P.shape_of(c)
            if cs != a.shape:
                try:
                    ok = tuple(np.broadcast_shapes(cs, a.shape)) == a.shape
                except ValueError:
                    ok = False
                if not ok:
                    raise ShapeError(f"{name}.backward returned a gradient of shape {cs} for an "
                                     f"input of shape {a.shape}", source=user_source())
                c = P.broadcast_in_dim(c, a.shape,
                                       tuple(range(len(a.shape) - len(cs), len(a.shape))))
            out.append(c)
        return out

    return fun_flat, fwd_flat, bwd_flat, box
