"""Checkpointing (rematerialization): trade recomputation for the memory of reverse mode.

Reverse mode normally saves every intermediate value the backward pass reads (the
*residuals*). ``checkpoint(f)`` saves only f's inputs and recomputes the rest of
what f's backward needs when the backward pass reaches f. A *policy* decides what
may still be saved (:data:`checkpoint_policies`); ``checkpoint_sequential`` applies
the seed design's strategies to a chain of layers; :func:`print_saved_residuals`
shows what reverse mode will keep.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> f = ad.checkpoint(lambda x: anp.sum(anp.tanh(anp.tanh(x))))
>>> x = np.array([0.3, -1.2])
>>> bool(np.allclose(ad.grad(f)(x), ad.grad(lambda x: anp.sum(anp.tanh(anp.tanh(x))))(x)))
True

The mechanism lives in :mod:`autodiff.transforms.remat` (the ``remat`` primitive).
"""
import functools
import math
from typing import NamedTuple, Optional

import numpy as np

from .api_util import as_array, as_tuple, split_static, to_output, trace_fun
from .core import Tracer, Var, is_inexact_dtype
from .tracing import staged
from .tree_util import tree_flatten, tree_map, tree_unflatten
from .transforms import remat as _R
from .transforms.partial_eval import dce_jaxpr
from .transforms.reverse import linearize_jaxpr

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "every",
           "checkpoint_sequential", "print_saved_residuals", "saved_residuals"]


# ----------------------------------------------------------------------------
# checkpoint / remat
# ----------------------------------------------------------------------------

def checkpoint(fun, policy=None, prevent_cse=True, static_argnums=()):
    """Make ``fun`` recompute its intermediates in the backward pass instead of saving them.

    ``policy`` (one of :data:`checkpoint_policies`, or a function
    ``(prim, *avals, **params) -> bool``) names the values that may still be saved;
    the default saves none (:data:`checkpoint_policies.nothing_saveable`), so only
    ``fun``'s inputs are kept. ``prevent_cse`` keeps simplification from merging the
    recomputation with the forward computation. ``static_argnums`` marks arguments
    that are Python values (they are baked into the trace). Composes with every
    transform, nests, and holds under ``jit``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> layer = ad.checkpoint(lambda x: anp.sin(anp.sin(x)))
    >>> g = ad.grad(lambda x: anp.sum(layer(x)))(np.array([0.5]))
    >>> bool(np.allclose(g, np.cos(np.sin(0.5)) * np.cos(0.5)))
    True
    """
    pol = _R.as_policy(policy)
    static_argnums = as_tuple(static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint expects a function, got {fun!r}")

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        f, dyn = split_static(fun, args, static_argnums)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        closed, out_tree = trace_fun(staged(f), flat, in_tree, name="checkpoint",
                                     kwargs=kwargs)
        body, consts = _R.consts_to_invars(closed)
        body, _ = dce_jaxpr(body)
        outs = _R.remat_p.bind(*consts, *flat, jaxpr=body, policy=pol, prevent_cse=prevent_cse)
        if not any(isinstance(o, Tracer) for o in outs):
            outs = [to_output(o) for o in outs]
        return tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint


def checkpoint_name(x, name):
    """Label ``x`` (any pytree) as ``name`` for the name-based checkpoint policies.

    The identity on values; inside a checkpoint, ``save_only_these_names(name)``
    saves it and ``save_anything_except_these_names(name)`` recomputes it.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> pol = ad.checkpoint_policies.save_only_these_names("h")
    >>> f = ad.checkpoint(lambda x: anp.sum(anp.sin(ad.checkpoint_name(anp.sin(x), "h"))),
    ...                   policy=pol)
    >>> float(ad.grad(f)(0.0))
    1.0
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: the name must be a string, got {name!r}")

    def one(l):
        l = as_array(l)
        return _R.name_p.bind(l, name=name) if isinstance(l, Tracer) else l
    return tree_map(one, x)


class checkpoint_policies:
    """The save-or-recompute policies of :func:`checkpoint` (and selective strategies).

    * ``everything_saveable``: save all (no recomputation; plain reverse mode)
    * ``nothing_saveable``: save nothing but the checkpoint's inputs (the default)
    * ``dots_saveable``: save the results of matrix products (``dot_general``)
    * ``save_only_these_names(*names)``: save only values labelled by ``checkpoint_name``
    * ``save_anything_except_these_names(*names)``: save all but those labelled values
    * ``dots_with_no_batch_dims_saveable`` (``checkpoint_dots_with_no_batch_dims``): save
      matrix products without batch dimensions
    * ``save_any_names_but_these(*names)``: save labelled values except those names
    * ``save_from_both_policies(p1, p2)``: save what either policy saves
    * ``offload_dot_with_no_batch_dims(src, dst)``, ``save_and_offload_only_these_names(...)``:
      JAX's offloading policies; saved values live in host memory here, so they save

    >>> import autodiff as ad
    >>> ad.checkpoint_policies.save_only_these_names("h")
    save_only_these_names('h')
    """
    everything_saveable = _R.everything_saveable
    nothing_saveable = _R.nothing_saveable
    dots_saveable = _R.dots_saveable
    checkpoint_dots = _R.dots_saveable
    save_only_these_names = staticmethod(_R.save_only_these_names)
    save_anything_except_these_names = staticmethod(_R.save_anything_except_these_names)
    dots_with_no_batch_dims_saveable = _R.dots_with_no_batch_dims_saveable
    checkpoint_dots_with_no_batch_dims = _R.dots_with_no_batch_dims_saveable
    save_any_names_but_these = staticmethod(_R.save_any_names_but_these)
    save_from_both_policies = staticmethod(_R.save_from_both_policies)
    offload_dot_with_no_batch_dims = staticmethod(_R.offload_dot_with_no_batch_dims)
    save_and_offload_only_these_names = staticmethod(_R.save_and_offload_only_these_names)
    Policy = _R.Policy

    def __init__(self):
        raise TypeError("checkpoint_policies is a namespace; use its attributes")


# ----------------------------------------------------------------------------
# checkpoint_sequential: the seed's strategies over a chain of layers
# ----------------------------------------------------------------------------

class every:
    """Strategy: a checkpoint every ``k`` layers (segments of ``k`` layers each).

    Saves the input of every segment; the backward pass recomputes one segment at a
    time. Memory ~ n/k segment inputs + k layers' residuals; one extra forward.

    >>> import autodiff as ad
    >>> ad.every(4)
    every(4)
    """

    __slots__ = ("k",)

    def __init__(self, k):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"every(k): k must be a positive integer, got {k!r}")
        self.k = int(k)

    def __repr__(self):
        return f"every({self.k})"

    def __eq__(self, other):
        return isinstance(other, every) and other.k == self.k

    def __hash__(self):
        return hash(("every", self.k))


def _segment(fns):
    def run_segment(x):
        for f in fns:
            x = f(x)
        return x
    return run_segment


def _plan(fns, strategy):
    """The chain as a list of (function, policy or None) steps."""
    n = len(fns)
    if isinstance(strategy, str):
        if strategy == "none":
            return [(_segment(fns), None)]
        if strategy == "sqrt_n":
            k = max(1, math.ceil(math.sqrt(n)))
            return [(_segment(fns[i:i + k]), _R.nothing_saveable) for i in range(0, n, k)]
    elif isinstance(strategy, every):
        k = strategy.k
        return [(_segment(fns[i:i + k]), _R.nothing_saveable) for i in range(0, n, k)]
    elif strategy is None:
        return [(_segment(fns), None)]
    elif isinstance(strategy, _R.Policy) or callable(strategy):
        pol = _R.as_policy(strategy)
        return [(f, pol) for f in fns]
    raise ValueError(f"checkpoint_sequential: unknown strategy {strategy!r}; use 'none', "
                     f"'sqrt_n', ad.every(k), or a policy from ad.checkpoint_policies")


def checkpoint_sequential(fns, strategy="sqrt_n"):
    """A callable applying the layers ``fns`` in order, checkpointed by ``strategy``.

    Strategies (the seed's): ``"none"`` saves everything; ``"sqrt_n"`` checkpoints
    segments of ⌈√n⌉ layers (O(√n) residual memory for one extra forward);
    ``ad.every(k)`` checkpoints segments of ``k`` layers; a policy from
    ``ad.checkpoint_policies`` (selective) checkpoints each layer with that policy.
    Each layer maps one value (any pytree) to the next; close over parameters.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> layers = [lambda h: anp.tanh(h * 0.5)] * 9
    >>> f = lambda x: anp.sum(ad.checkpoint_sequential(layers, "sqrt_n")(x))
    >>> g0 = ad.grad(lambda x: anp.sum(ad.checkpoint_sequential(layers, "none")(x)))
    >>> bool(np.allclose(ad.grad(f)(np.ones(3)), g0(np.ones(3))))
    True
    """
    fns = list(fns)
    for f in fns:
        if not callable(f):
            raise TypeError(f"checkpoint_sequential: every layer must be callable, got {f!r}")
    plan = _plan(fns, strategy)
    steps = [(f if pol is None else checkpoint(f, policy=pol)) for f, pol in plan]

    def sequential(x):
        for step in steps:
            x = step(x)
        return x

    sequential.strategy = strategy
    sequential.num_checkpoints = sum(pol is not None for _, pol in plan)
    return sequential


# ----------------------------------------------------------------------------
# What reverse mode keeps
# ----------------------------------------------------------------------------

class SavedResidual(NamedTuple):
    """One value reverse mode keeps from the forward pass for the backward pass."""
    aval: object                 # ShapedArray
    nbytes: int
    source: Optional[object]     # SourceInfo of the equation that produced it
    primitive: Optional[str]     # its primitive, or None for an input / constant
    argument: Optional[int]      # flat index (over all leaves) of the input it is, if any
    where: str = ""              # that input as ``args[i]`` or ``args[i] leaf j``

    def describe(self):
        if self.argument is not None:
            where = f"the input {self.where or self.argument} (kept anyway, not a copy)"
        elif self.primitive is None:
            where = "a constant of the function"
        else:
            where = f"{self.primitive}" + (f" at {self.source}" if self.source else "")
        return f"{self.aval.str_short():<16} {self.nbytes:>12,} bytes  from {where}"


def _nbytes(aval):
    return int(aval.size) * aval.dtype.itemsize


def _linearized_jaxprs(fun, args, kwargs):
    flat, in_tree = tree_flatten(tuple(args))
    flat = [as_array(x) for x in flat]
    closed, _ = trace_fun(fun, flat, in_tree, name="saved_residuals", kwargs=kwargs)
    nonzeros = [is_inexact_dtype(a.dtype) for a in closed.in_avals]
    lin = linearize_jaxpr(closed, nonzeros)
    return lin.known, lin.unknown, lin.n_res, lin.n_out


def _origin(var, jaxpr):
    """(producing equation, or ('arg', i) / ('const', None)) of ``var``, through remat bodies."""
    stack = []          # enclosing (eqn, outer jaxpr) of the body being searched
    while True:
        prod = None
        for e in jaxpr.eqns:
            if var in e.outvars:
                prod = e
                break
        if prod is None:
            if var in jaxpr.invars:
                i = jaxpr.invars.index(var)
                if not stack:
                    return ("arg", i)
                e, jaxpr = stack.pop()
                var = e.invars[i]
                if not isinstance(var, Var):
                    return ("const", None)
                continue
            return ("const", None)
        if prod.primitive is _R.remat_p:
            body = prod.params["jaxpr"]
            inner = body.outvars[list(prod.outvars).index(var)]
            if not isinstance(inner, Var):
                return ("const", None)
            stack.append((prod, jaxpr))
            jaxpr, var = body, inner
            continue
        return ("eqn", prod)


def saved_residuals(fun, *args, **kwargs):
    """The values reverse mode of ``fun`` at ``args`` saves, as :class:`SavedResidual` records.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> from autodiff.checkpoint import saved_residuals
    >>> [r.primitive for r in saved_residuals(lambda x: anp.sum(anp.sin(x)), np.ones(3))]
    ['cos']
    """
    known, _, n_res, n_out = _linearized_jaxprs(fun, args, kwargs)
    kj = known.jaxpr
    paths = []
    for i, a in enumerate(args):
        k = len(tree_flatten(a)[0])
        paths.extend(f"args[{i}]" if k == 1 else f"args[{i}] leaf {j}" for j in range(k))
    out = []
    for v in kj.outvars[n_out:]:
        if not isinstance(v, Var):
            continue
        kind, what = _origin(v, kj)
        if kind == "arg":
            out.append(SavedResidual(v.aval, _nbytes(v.aval), None, None, what, paths[what]))
        elif kind == "const":
            out.append(SavedResidual(v.aval, _nbytes(v.aval), None, None, None))
        else:
            out.append(SavedResidual(v.aval, _nbytes(v.aval), what.source, what.primitive.name,
                                     None))
    return out


def print_saved_residuals(fun, *args, **kwargs):
    """Print what reverse mode of ``fun`` at ``args`` keeps: shape, bytes, producing line.

    Inputs of ``fun`` are listed but not counted as extra memory: they exist anyway.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.print_saved_residuals(lambda x: anp.sum(anp.sin(x) * x), np.ones(3))
    f64[3]                     24 bytes  from cos at ...
    f64[3]                     24 bytes  from the input args[0] (kept anyway, not a copy)
    f64[3]                     24 bytes  from sin at ...
    saved: 2 values, 48 bytes (plus 1 input)
    """
    res = saved_residuals(fun, *args, **kwargs)
    for r in res:
        print(r.describe())
    extra = [r for r in res if r.argument is None]
    n_in = len(res) - len(extra)
    print(f"saved: {len(extra)} values, {sum(r.nbytes for r in extra):,} bytes"
          f" (plus {n_in} input{'s' if n_in != 1 else ''})")


def residual_bytes(fun, *args, **kwargs):
    """``(saved, peak)`` residual bytes of reverse mode, counted in the IR.

    ``saved``: bytes the forward pass keeps for the backward pass, inputs excluded.
    ``peak``: ``saved`` plus the largest set of values one checkpoint recomputes and
    holds while it is transposed (nested checkpoints counted recursively).
    """
    known, unknown, n_res, n_out = _linearized_jaxprs(fun, args, kwargs)
    kj = known.jaxpr
    inputs = set(kj.invars)
    saved = sum(_nbytes(v.aval) for v in kj.outvars[n_out:]
                if isinstance(v, Var) and v not in inputs)
    uj = unknown.jaxpr
    linear = [False] * n_res + [True] * (len(uj.invars) - n_res)
    return saved, saved + _max_internal(uj, linear)


def _max_internal(jaxpr, linear):
    avals, nested = _R.internal_residuals(jaxpr, linear)
    here = sum(_nbytes(a) for a in avals)
    return here + max((_max_internal(j, l) for j, l in nested), default=0)
