"""The user-facing transforms: trace, rewrite the IR, evaluate.

Each transform traces the user's function into a jaxpr (concretely, with values,
when its inputs are concrete, so Python control flow on values works), applies
the IR passes of :mod:`autodiff.transforms`, and evaluates the result: with the
numpy interpreter on concrete inputs, or with ``bind`` on tracers, which inlines
the rewritten IR into the enclosing trace. That is why everything composes.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.grad(lambda x: anp.sin(x) * x)(1.0)            # cos(1)·1 + sin(1)
np.float64(1.3817732906760363)
>>> ad.grad(ad.grad(anp.tanh))(0.5)
np.float64(-0.7268619813835873)
"""
import functools
import inspect
import typing
from typing import Any, Callable, Optional, ParamSpec, Sequence, TypeVar, Union

import numpy as np

from . import primitives as P
from .cache import ProgramCache
from .core import ClosedJaxpr, Tracer, eval_jaxpr, is_concrete, is_inexact_dtype, user_source
from .errors import DTypeError, ShapeError
from .traceback_util import shown_error
from .tree_util import (LEAF, register_pytree_node, tree_flatten, tree_map, tree_structure,
                        tree_unflatten)
from .transforms.jvp import jvp_eval
from .transforms.partial_eval import dce_closed
from .transforms.reverse import linearize_jaxpr, vjp_jaxpr
from .backends.interpreter import run_closed
from .api_util import (Transformed, argnum_alias, argnums_split, as_array, as_tuple, aux_fun,
                       check_complex, evaluate, int_arg_name, is_py_number, outputs,
                       split_aux_tree, split_static, to_output, trace_fun)
from .tree_util import keystr, tree_flatten_with_path
from .backends.interpreter import straight_line
from .transforms.simplify import cse
from .config import config
from .core import Jaxpr, trace_state
from .custom_cache import SharedRule
from .transforms.reverse import backward
from .dtypes import float0_zeros, is_float0
from .shapes import ShapeDtypeStruct

__all__ = ["Transformed", "make_jaxpr", "grad", "value_and_grad", "jvp", "vjp", "linearize", "vmap",
           "jacfwd", "jacrev", "jacobian", "hessian", "hvp", "stop_gradient",
           "linear_transpose", "named_call", "named_scope", "ensure_compile_time_eval"]


_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T")
_Argnums = Union[int, Sequence[int]]


# ----------------------------------------------------------------------------
# inputs, outputs, tracing
# ----------------------------------------------------------------------------

@typing.overload
def make_jaxpr(fun: Callable[_P, Any], static_argnums: _Argnums = ...,
               return_shape: typing.Literal[False] = ...) -> Callable[_P, ClosedJaxpr]: ...


@typing.overload
def make_jaxpr(fun: Callable[_P, Any], static_argnums: _Argnums = ..., *,
               return_shape: typing.Literal[True]) -> Callable[_P, tuple[ClosedJaxpr, Any]]: ...


def make_jaxpr(fun: Callable[_P, Any], static_argnums: _Argnums = (),
               return_shape: bool = False) -> Callable[_P, Any]:
    """The jaxpr of ``fun`` traced abstractly at the given arguments.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> print(ad.make_jaxpr(lambda x, y: anp.sum(x * y))(np.ones(3), np.ones(3)))
    { lambda ; a:f64[3] b:f64[3]. let
        c:f64[3] = mul a b
        d:f64[] = reduce_sum[axes=(0,)] c
      in (d,) }
    """
    static_argnums = as_tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        f, dyn = split_static(fun, args, static_argnums)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        closed, out_tree = trace_fun(f, flat, in_tree, concrete=False, name="make_jaxpr",
                                     kwargs=kwargs)
        closed = dce_closed(closed)
        closed = ClosedJaxpr(closed.jaxpr, closed.consts,
                             names=_io_names(fun, len(args), static_argnums, dyn, out_tree))
        if return_shape:
            shapes = tree_unflatten(out_tree, [ShapeDtype(a.shape, a.dtype) for a in closed.out_avals])
            return closed, shapes
        return closed
    return Transformed(wrapped, make_jaxpr, fun, dict(static_argnums=static_argnums,
                                                      return_shape=return_shape))


def _io_names(fun, n_args, static_argnums, dyn, out_tree):
    """Names of a traced function's input and output leaves, from its parameter names and
    the pytree paths (``params['w']``, ``out[1]``), for pictures of its jaxpr."""
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    positions = [i for i in range(n_args) if i not in static_argnums]
    arg_names = [params[i] if i < len(params) else f"args[{i}]" for i in positions]
    ins = [arg_names[path[0].idx] + keystr(path[1:])
           for path, _ in tree_flatten_with_path(tuple(dyn))[0]]
    outs = [("out" + keystr(path)) for path, _ in
            tree_flatten_with_path(tree_unflatten(out_tree, list(range(out_tree.num_leaves))))[0]]
    return ins, outs


# make_jaxpr(return_shape=True) gives ShapeDtypeStructs, as JAX (comparable and hashable)
ShapeDtype = ShapeDtypeStruct


# ----------------------------------------------------------------------------
# forward mode
# ----------------------------------------------------------------------------

def _boundary(fun):
    """A public entry point whose errors leave without autodiff's frames."""
    @functools.wraps(fun)
    def entry(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            shown = shown_error(e)
            if shown is None:
                raise
            raise shown from None
    return entry


@_boundary
def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """Forward mode: ``(fun(*primals), J·tangents)``. An integer or bool primal's tangent
    may be a ``float0`` zero (JAX's convention; what ``grad(allow_int=True)`` returns).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.jvp(anp.sin, (0.0,), (2.0,))
    (np.float64(0.0), np.float64(2.0))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (one entry per argument)")
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    flat_p, in_tree = tree_flatten(tuple(primals))
    flat_t, t_tree = tree_flatten(tuple(tangents), is_leaf=is_float0)   # float0: a leaf here
    if in_tree != t_tree:
        raise TypeError(f"jvp: primal structure {in_tree} and tangent structure {t_tree} differ")
    weak = [is_py_number(x) for x in flat_p]
    t_weak = [is_py_number(x) for x in flat_t]
    flat_p = [as_array(x) for x in flat_p]
    # a float0 tangent (JAX's, and what grad(allow_int=True) returns) is the zero tangent
    # of an integer or bool primal: checked for its shape, then dropped like any int tangent
    flat_t = [x if is_float0(x) else as_array(x) for x in flat_t]
    for i, (p, t) in enumerate(zip(flat_p, flat_t)):
        t_shape = np.shape(t) if is_float0(t) else P.shape_of(t)
        if P.shape_of(p) != t_shape:
            raise ShapeError(f"jvp: tangent shape {t_shape} does not match primal shape "
                             f"{P.shape_of(p)}", source=user_source())
        pd = P.dtype_of(p)
        if is_float0(t):
            if is_inexact_dtype(pd):
                raise DTypeError(f"jvp: the tangent of primal leaf {i} has dtype float0 but the "
                                 f"primal is {pd}; float0 is the tangent of integer and bool "
                                 f"primals only (pass a zero of dtype {pd})",
                                 source=user_source())
            continue
        td = P.dtype_of(t)
        if pd != td and pd.kind == "f" and td.kind == "f" and not t_weak[i] and not weak[i]:
            raise DTypeError(f"jvp: the tangent of primal leaf {i} has dtype {td} but the primal "
                             f"is {pd}; tangents must have their primal's dtype (cast it: "
                             f"t.astype(np.{pd.name}))", source=user_source())
        if td.kind == "c" and pd.kind != "c":
            raise DTypeError(f"jvp: the tangent of primal leaf {i} is complex ({td}) but the "
                             f"primal is real ({pd}); a real input has real tangents (make the "
                             f"primal complex with x.astype(complex) to push complex ones)",
                             source=user_source())
    f = aux_fun(fun, has_aux)
    closed, out_tree = trace_fun(f, flat_p, in_tree, name="jvp", weak=weak, differentiated=True)
    ts = [P.convert(t, P.dtype_of(p)) if is_inexact_dtype(P.dtype_of(p)) else None
          for p, t in zip(flat_p, flat_t)]
    outs, touts = jvp_eval(closed.jaxpr, closed.consts, flat_p, ts)
    touts = [P.instantiate(t) for t in touts]
    out_tree, aux_tree, n_out = split_aux_tree(out_tree, has_aux)
    out = tree_unflatten(out_tree, outs[:n_out])
    tout = tree_unflatten(out_tree, touts[:n_out])
    if has_aux:
        aux = tree_unflatten(aux_tree, outs[n_out:])
        return outputs(out), outputs(tout), outputs(aux)
    return outputs(out), outputs(tout)


# ----------------------------------------------------------------------------
# reverse mode: linearize (jvp + partial eval) and transpose
# ----------------------------------------------------------------------------

class StraightLine:
    """A closed jaxpr as one generated Python function (``backends.interpreter.straight_line``).

    The programs of the un-jitted grad path are run on every call; as straight-line code
    they skip the interpreter's per-equation bookkeeping. Same semantics as the reference
    interpreter; under ``debug_nans`` the interpreter runs instead.
    """

    __slots__ = ("closed", "fn")

    def __init__(self, closed):
        self.closed = closed
        # written once, run on every call: equal equations (the primal's and a jvp rule's
        # copy of one broadcast, a product rule's ct*x and x*ct) are computed once
        self.fn = straight_line(cse(closed).jaxpr)

    def __call__(self, args):
        if config.debug_nans:
            return run_closed(self.closed, args)
        with np.errstate(all="ignore"):     # as the interpreter: discarded branches stay quiet
            return self.fn(self.closed.consts, args)


_StraightLine = StraightLine      # the name older code and tests use


def _run_program(prog, slot, closed, args):
    """Evaluate one of ``prog``'s programs; on concrete values from its second use on as
    straight-line code (compiled once, then reused by every call with this structure)."""
    for a in args:                      # a plain loop: this runs twice per grad call
        if isinstance(a, Tracer):
            return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    for c in closed.consts:
        if isinstance(c, Tracer):
            return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    compiled = prog.compiled.get(slot)
    if compiled is None:
        if slot not in prog.compiled:
            prog.compiled[slot] = None         # first use: interpret; compile if it returns
            return run_closed(closed, args)
        compiled = prog.compiled[slot] = StraightLine(closed)
    return compiled(args)


class _LinearizedProgram:
    """The transformed IR of one traced jaxpr: what every call with the same structure reuses.

    ``known``: ``(consts..., primals...) -> (outs..., residuals...)``;
    ``unknown``: ``(residuals..., tangents...) -> out tangents`` (linear in the tangents);
    ``transposed`` (built on first use): ``(residuals..., out cotangents...) -> in cotangents``.
    """

    __slots__ = ("source", "known", "unknown", "n_res", "n_t", "_lin", "_transposed",
                 "grad_enabled", "compiled", "shared", "bwd_on_values")

    def __init__(self, closed, nonzeros, n_out):
        self.source = closed.jaxpr       # keeps callables in params alive (their ids key us)
        self.grad_enabled = trace_state.grad_enabled
        j = closed.jaxpr
        nc = len(j.constvars)
        # constants become leading inputs, so the program does not depend on their values
        open_j = ClosedJaxpr(Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), [])
        # aux outputs' tangents are not wanted: only the n_out main outputs get one
        self._lin = lin = linearize_jaxpr(open_j, [False] * nc + list(nonzeros), n_out)
        self.known, self.unknown, self.n_res, self.n_t = lin.known, lin.unknown, lin.n_res, lin.n_t
        self._transposed = None
        self.compiled = {}
        self.shared = False              # True once in _LIN_CACHE (later calls reuse it)
        self.bwd_on_values = False       # its transpose cannot be traced: run on values

    def transposed(self):
        if self._transposed is None:
            # traced in the no_grad state the program was made in (part of its cache key)
            old, trace_state.grad_enabled = trace_state.grad_enabled, self.grad_enabled
            try:
                self._transposed = vjp_jaxpr(self._lin)
            finally:
                trace_state.grad_enabled = old
        return self._transposed


# structural key -> _LinearizedProgram (autodiff.cache, listed as "linearize")
_LIN_CACHE = ProgramCache("linearize", "linearize_cache_size")


class _HashedKey:
    """A key hashed once (a tuple re-hashes its whole nested content on every lookup)."""

    __slots__ = ("key", "h")

    def __init__(self, key):
        self.key, self.h = key, hash(key)

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return self.h == other.h and self.key == other.key


_SCALAR_PARAM_TYPES = frozenset({int, bool, float, str, type(None)})
_PLAIN_PARAM_ITEM_TYPES = _SCALAR_PARAM_TYPES | {tuple}     # one level down, as below


def _params_cacheable(jaxpr):
    """False when a param is keyed by identity rather than content: a Python callable (its
    id, not its behaviour, is in the key) or a large constant of a sub-jaxpr. Such traces
    would miss the cache on every call and fill it with entries nobody reuses. A custom
    function's rules shared by every call with the same key (``custom_cache.SharedRule``)
    are the exception: their identity is stable, so such programs are reused."""
    # checked on every un-jitted grad call: most params are ints and tuples of them
    scalar, plain_item = _SCALAR_PARAM_TYPES, _PLAIN_PARAM_ITEM_TYPES
    for e in jaxpr.eqns:
        for v in e.params.values():
            if v.__class__ in scalar:
                continue
            for x in (v if isinstance(v, (tuple, list)) else (v,)):
                if x.__class__ in plain_item:
                    continue
                if isinstance(x, ClosedJaxpr):
                    if any(isinstance(c, Tracer) or np.size(c) > 64 for c in x.consts):
                        return False
                    x = x.jaxpr
                if isinstance(x, Jaxpr):
                    if not _params_cacheable(x):
                        return False
                elif x.__class__ is SharedRule:
                    continue            # a custom rule every call with its key shares
                elif (callable(x) and not isinstance(x, type)) or isinstance(x, dict):
                    return False
    return True


def _linearized_program(closed, nonzeros, n_out):
    """jvp + partial evaluation of ``closed``, cached by its structure (not its values).

    Without jit every call retraces (Python control flow may differ), but a trace with
    the same structure as an earlier one gets that one's transformed programs: the
    repeated ``grad`` call skips the jvp, partial-evaluation and transpose passes.
    """
    if not _params_cacheable(closed.jaxpr):
        return _LinearizedProgram(closed, nonzeros, n_out)
    try:
        key = _HashedKey((closed.jaxpr.key(), tuple(nonzeros), n_out, trace_state.grad_enabled))
    except TypeError:                    # a param that is not hashable (an array, a list)
        return _LinearizedProgram(closed, nonzeros, n_out)
    prog = _LIN_CACHE.get(key)
    if prog is None:
        prog = _LinearizedProgram(closed, nonzeros, n_out)
        prog.shared = True
        _LIN_CACHE.put(key, prog)
    return prog


class Linearized:
    """The pieces of a linearization, shared by vjp, grad and linearize."""

    def __init__(self, fun, flat_args, in_tree, has_aux, diff_mask=None):
        f = aux_fun(fun, has_aux)
        closed, out_tree = trace_fun(f, flat_args, in_tree, name="linearize",
                                     differentiated=True)
        self.out_tree, self.aux_tree, self.n_out = split_aux_tree(out_tree, has_aux)
        avals = closed.in_avals
        if diff_mask is None:
            diff_mask = [True] * len(avals)
        self.nonzeros = [m and is_inexact_dtype(a.dtype) for m, a in zip(diff_mask, avals)]
        self.in_avals = avals
        prog = _linearized_program(closed, self.nonzeros, self.n_out)
        n_all_out = len(closed.jaxpr.outvars)
        res = _run_program(prog, "known", prog.known, list(closed.consts) + list(flat_args))
        self.outs = res[:n_all_out]
        self.residuals = res[n_all_out:]
        self.program = prog
        self.unknown = prog.unknown
        self.n_res = prog.n_res
        self.n_t = prog.n_t
        self.out_avals = closed.out_avals[:self.n_out]

    def primal_out(self):
        return tree_unflatten(self.out_tree, self.outs[:self.n_out])

    def aux(self):
        return tree_unflatten(self.aux_tree, self.outs[self.n_out:])

    def backward(self, cts_flat):
        """Cotangents of every flat input (zeros for non-differentiated ones)."""
        prog = self.program
        args = list(self.residuals) + list(cts_flat)
        on_values = all(is_concrete(a) for a in args)
        if on_values and (not prog.shared or prog.bwd_on_values) and prog._transposed is None:
            cts = self._backward_on_values(cts_flat)
        else:
            try:
                transposed = prog.transposed()
            except Exception:
                # a shared program whose custom bwd cannot be traced abstractly (Python
                # control flow on its residuals or cotangents, plain numpy): it runs on the
                # values, now and on every later call with this structure
                if not on_values:
                    raise
                prog.bwd_on_values = True
                transposed = None
            if transposed is None:
                cts = self._backward_on_values(cts_flat)
            else:
                cts = _run_program(prog, "transposed", transposed, args)
        it = iter(cts)
        out = []
        for nz, a in zip(self.nonzeros, self.in_avals):
            if nz:
                out.append(next(it))
            else:
                out.append(np.zeros(a.shape, a.dtype))
        return out

    def _backward_on_values(self, cts_flat):
        # A program no later call reuses (its trace holds per-call callables, as custom_vjp
        # rules do, so it is not cached): the backward pass runs once, on the values (or on
        # concrete tracers of an outer grad, which record it), rather than being traced to
        # a jaxpr and interpreted. A custom_vjp's bwd then sees concrete residuals and
        # cotangents, so Python control flow on them works (as the primal body under grad);
        # under jit it is traced abstractly as before.
        prog = self.program
        old, trace_state.grad_enabled = trace_state.grad_enabled, prog.grad_enabled
        try:
            with np.errstate(all="ignore"):      # as the straight-line programs
                cts = backward(prog._lin, self.residuals, list(cts_flat))
        finally:
            trace_state.grad_enabled = old
        cts = [P.instantiate(c) for c in cts]
        return [c if isinstance(c, Tracer) else np.asarray(c) for c in cts]

    def forward(self, tangents_flat):
        uj = self.unknown
        ts = [t for t, nz in zip(tangents_flat, self.nonzeros) if nz]
        return evaluate(uj, list(self.residuals) + ts)


_Linearized = Linearized        # the name tests and older code use


@_boundary
def vjp(fun: Callable[..., Any], *primals: Any,
        has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse mode: ``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns one cotangent per primal.

    The returned ``vjp_fn`` is reusable.

    >>> import numpy as np, autodiff as ad
    >>> out, f_vjp = ad.vjp(lambda x, y: x * y, 2.0, 3.0)
    >>> f_vjp(1.0)
    (np.float64(3.0), np.float64(2.0))
    """
    flat, in_tree = tree_flatten(tuple(primals))
    flat = [as_array(x) for x in flat]
    lin = Linearized(fun, flat, in_tree, has_aux)
    vjp_fn = VJPFunction(lin, in_tree)
    if has_aux:
        return outputs(lin.primal_out()), vjp_fn, outputs(lin.aux())
    return outputs(lin.primal_out()), vjp_fn


class _SavedLinearMap:
    """A linear map of a linearization, with its residuals as pytree leaves (JAX's vjp and
    linearize functions are pytrees too): it can be returned from ``jit`` (the residuals
    come back as arrays) and passed into a jitted function. Subclasses define ``__call__``.
    """

    def __init__(self, lin, in_tree):
        self._lin, self._in_tree = lin, in_tree

    def _flatten(self):
        return list(self._lin.residuals), (self._lin, self._in_tree, type(self))

    @staticmethod
    def _unflatten(aux, residuals):
        lin, in_tree, kind = aux
        copy = object.__new__(Linearized)
        copy.__dict__.update(lin.__dict__)
        copy.residuals = list(residuals)
        return kind(copy, in_tree)


class VJPFunction(_SavedLinearMap):
    """``vjp_fn`` of :func:`vjp`: ``vjp_fn(ct)`` returns one cotangent per primal. A pytree
    whose leaves are the saved residuals, so ``jit`` may return it.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> y, f_vjp = ad.jit(lambda x: ad.vjp(anp.sin, x))(np.zeros(2))
    >>> f_vjp(np.ones(2))
    (array([1., 1.]),)
    """

    def __call__(self, ct):
        lin = self._lin
        ct_flat, ct_tree = tree_flatten(ct, is_leaf=is_float0)
        if ct_tree != lin.out_tree:
            raise TypeError(f"vjp_fn: cotangent structure {ct_tree} does not match the output "
                            f"structure {lin.out_tree}")
        cts = []
        for c, a in zip(ct_flat, lin.out_avals):
            if is_float0(c):
                # JAX's cotangent of an integer or bool output: a zero that carries nothing
                if is_inexact_dtype(a.dtype):
                    raise DTypeError(f"vjp_fn: a float0 cotangent for an output of dtype "
                                     f"{a.dtype}; float0 is the cotangent of integer and bool "
                                     f"outputs", source=user_source())
                c = np.zeros(np.shape(c), a.dtype)
            c = as_array(c)
            if P.shape_of(c) != a.shape:
                raise ShapeError(f"vjp_fn: cotangent shape {P.shape_of(c)} does not match the "
                                 f"output shape {a.shape}", source=user_source())
            if P.dtype_of(c).kind == "c" and a.dtype.kind != "c":
                raise DTypeError(f"vjp_fn: the cotangent is complex ({P.dtype_of(c)}) but the "
                                 f"output is real ({a.dtype}); a real output has real "
                                 f"cotangents", source=user_source())
            cts.append(P.convert(c, a.dtype) if is_inexact_dtype(a.dtype) else c)
        grads = lin.backward(cts)
        return outputs(tree_unflatten(self._in_tree, grads))


class JVPFunction(_SavedLinearMap):
    """``jvp_fn`` of :func:`linearize`: ``jvp_fn(*tangents)`` evaluates the saved linear map.
    A pytree whose leaves are the saved residuals, so ``jit`` may return it.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> y, f_jvp = ad.jit(lambda x: ad.linearize(anp.exp, x))(np.zeros(2))
    >>> f_jvp(np.full(2, 3.0))
    array([3., 3.])
    """

    def __call__(self, *tangents):
        lin, in_tree = self._lin, self._in_tree
        t_flat, t_tree = tree_flatten(tuple(tangents), is_leaf=is_float0)
        if t_tree != in_tree:
            raise TypeError(f"linearize: tangent structure {t_tree} differs from {in_tree}")
        t_flat = [t if is_float0(t) else as_array(t) for t in t_flat]   # float0: an int's zero
        for i, (t, a) in enumerate(zip(t_flat, lin.in_avals)):
            t_shape = np.shape(t) if is_float0(t) else P.shape_of(t)
            if tuple(t_shape) != tuple(a.shape):
                raise ShapeError(f"linearize: the linearized function was called on a tangent "
                                 f"of shape {tuple(t_shape)} for primal leaf {i} of shape "
                                 f"{tuple(a.shape)}; tangents must match the primals' shapes",
                                 source=user_source())
        outs = lin.forward(t_flat)
        return outputs(tree_unflatten(lin.out_tree, outs))


for _cls in (VJPFunction, JVPFunction):
    register_pytree_node(_cls, _SavedLinearMap._flatten, _SavedLinearMap._unflatten)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes=()) -> Callable:
    """The transpose of the linear function ``fun`` (JAX's ``jax.linear_transpose``):
    ``transpose_fun(out_ct)`` returns one cotangent per primal, in their structures.

    ``primals`` (arrays or ``ShapeDtypeStruct``s) give the input shapes and dtypes. The
    transpose is ``fun``'s ``vjp`` at zero inputs, which for a linear ``fun`` is the same at
    every point; ``fun`` is not checked for linearity (a nonlinear one gets the transpose
    of its linearization at zero).

    >>> import numpy as np, autodiff as ad
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> t = ad.linear_transpose(lambda x: A @ x, np.zeros(2))
    >>> t(np.array([1.0, 0.0]))                  # Aᵀ [1, 0]
    (array([1., 2.]),)
    """
    from .shapes import eval_shape
    del reduce_axes                       # JAX's, for named axes; nothing to reduce here
    leaves, tree = tree_flatten(tuple(primals))
    in_avals = [(tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape),
                 np.dtype(getattr(x, "dtype", None) or np.result_type(x))) for x in leaves]
    out_leaves, out_tree = tree_flatten(eval_shape(
        fun, *tree_unflatten(tree, [np.zeros(s, d) for s, d in in_avals])))
    in_dt = [d for _, d in in_avals]
    out_dt = [np.dtype(o.dtype) for o in out_leaves]
    integer = all(d.kind in "iu" for d in in_dt + out_dt)
    if not integer and not all(d.kind in "fc" for d in in_dt + out_dt):
        raise TypeError(f"linear_transpose only supports [float or complex] -> [float or "
                        f"complex], and integer -> integer functions, but got "
                        f"{[str(d) for d in in_dt]} -> {[str(d) for d in out_dt]}")
    # an integer-linear map is transposed in float64 (exact below 2**53) and cast back:
    # the reverse pass gives integer inputs no cotangent
    work = [np.float64 if integer else d for d in in_dt]
    _, f_vjp = vjp(fun, *tree_unflatten(tree, [np.zeros(s, d)
                                               for (s, _), d in zip(in_avals, work)]))

    return _LinearTranspose(f_vjp, out_tree, tuple((tuple(o.shape), np.dtype(o.dtype))
                                                   for o in out_leaves), tuple(in_dt), integer)


class _LinearTranspose:
    """The function :func:`linear_transpose` returns: checks the cotangent's structure and
    types against ``fun``'s output (``TypeError``, as JAX) and applies the saved ``vjp``.
    A pytree (its leaves are the ``vjp``'s residuals), so ``jit`` may return it."""

    def __init__(self, f_vjp, out_tree, out_avals, in_dt, integer):
        self._f_vjp, self._out_tree, self._out_avals = f_vjp, out_tree, out_avals
        self._in_dt, self._integer = in_dt, integer

    def __call__(self, out_cotangent):
        ct_leaves, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != self._out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected "
                            f"{self._out_tree} but got {ct_tree}")
        for c, (shape, dt) in zip(ct_leaves, self._out_avals):
            c = as_array(c)
            c_dt, c_shape = P.dtype_of(c), P.shape_of(c)
            if c_shape != shape or (c_dt.kind == "c") != (dt.kind == "c") or \
                    (self._integer and c_dt.kind not in "iub"):
                raise TypeError(f"cotangent type does not match function output, expected "
                                f"{dt}{list(shape)} but got {c_dt}{list(c_shape)}")
        if not self._integer:
            return self._f_vjp(out_cotangent)
        cts = self._f_vjp(tree_map(lambda c: P.convert(as_array(c), np.float64),
                                   out_cotangent))
        flat, ct_tree = tree_flatten(cts)
        return outputs(tree_unflatten(ct_tree, [P.convert(_rint(c), d)
                                                for c, d in zip(flat, self._in_dt)]))


def _rint(x):
    return P.round_p.bind(x)            # half to even, as numpy's rint


register_pytree_node(
    _LinearTranspose,
    lambda t: ([t._f_vjp], (t._out_tree, t._out_avals, t._in_dt, t._integer)),
    lambda aux, ch: _LinearTranspose(ch[0], *aux))


def named_call(fun: Callable[_P, _R], *, name: Optional[str] = None) -> Callable[_P, _R]:
    """JAX's ``jax.named_call``: ``fun`` itself (the name only labels JAX's profiles).

    >>> import autodiff as ad
    >>> ad.named_call(abs, name="magnitude")(-2)
    2
    """
    del name
    return fun


class named_scope:
    """JAX's ``with jax.named_scope("layer"):`` context manager: accepted, no effect.

    >>> import autodiff as ad
    >>> with ad.named_scope("block"):
    ...     y = 1.0 + 1.0
    """

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class ensure_compile_time_eval:
    """JAX's ``with jax.ensure_compile_time_eval():``: accepted, no effect. Values that do
    not depend on traced arguments are already computed with numpy while tracing.

    >>> import numpy as np, autodiff as ad
    >>> with ad.ensure_compile_time_eval():
    ...     c = np.float64(2.0) ** 3
    """

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@_boundary
def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), jvp_fn)`` where ``jvp_fn`` evaluates the saved linear map; with
    ``has_aux`` (``fun`` returns ``(out, aux)``), ``(out, jvp_fn, aux)`` as in JAX.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> y, f_jvp = ad.linearize(anp.exp, 0.0)
    >>> f_jvp(3.0)
    np.float64(3.0)
    >>> y, f_jvp, aux = ad.linearize(lambda x: (anp.sin(x), x * 2.0), 0.0, has_aux=True)
    >>> f_jvp(3.0), aux
    (np.float64(3.0), np.float64(0.0))
    """
    flat, in_tree = tree_flatten(tuple(primals))
    flat = [as_array(x) for x in flat]
    lin = Linearized(fun, flat, in_tree, has_aux)
    jvp_fn = JVPFunction(lin, in_tree)
    if has_aux:
        return outputs(lin.primal_out()), jvp_fn, outputs(lin.aux())
    return outputs(lin.primal_out()), jvp_fn


def _value_and_grad_core(fun, argnums, has_aux, allow_int, holomorphic):
    """``core(args, kwargs, want_value) -> (value, aux, gradient)`` behind ``grad`` and
    ``value_and_grad`` (``grad`` asks for no value: its output conversion is skipped)."""
    single = isinstance(argnums, int)

    def core(args, kwargs, want_value):
        nums = argnums_split(args, argnums)
        dyn = tuple(args[i] for i in nums)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        ints = [k for k, x in enumerate(flat) if not is_inexact_dtype(P.dtype_of(x))]
        if holomorphic:
            check_complex("grad", True, [P.dtype_of(x) for x in flat])
        if ints and not allow_int:
            name, i = int_arg_name(fun, args, nums, ints[0])
            raise DTypeError(
                f"grad requires float inputs, got {P.dtype_of(flat[ints[0]])} in argument "
                f"{i}{name} (argnums={argnums}). Pass floats (e.g. x.astype(float) or 2.0 "
                f"rather than 2), leave the integer argument out of argnums, or pass "
                f"allow_int=True for a zero (float0) gradient.", source=user_source())
        all_flat = flat

        def f(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return fun(*full, **kwargs)

        if ints:
            # integer leaves are held fixed: only the float leaves are linearized
            full_tree, f_all = in_tree, f
            flat = [x for k, x in enumerate(all_flat) if k not in ints]
            in_tree = tree_structure(tuple(flat))

            def f(*floats):
                it = iter(floats)
                leaves = [all_flat[k] if k in ints else next(it) for k in range(len(all_flat))]
                return f_all(*tree_unflatten(full_tree, leaves))

        lin = Linearized(f, flat, in_tree, has_aux)
        if len(lin.out_avals) != 1:
            raise TypeError("grad requires a function returning a single scalar; "
                            f"it returned {lin.out_tree}. Use jacrev or vjp for other outputs.")
        a = lin.out_avals[0]
        if a.shape and a.size != 1:
            raise ShapeError(f"grad requires a scalar output, got shape {a.shape}. Sum it, or "
                             f"use ad.jacrev / ad.vjp.", source=user_source())
        kind = a.dtype.kind
        if kind not in "fc":
            raise DTypeError(f"grad requires a float-valued function, it returned {a.dtype}",
                             source=user_source())
        if holomorphic or kind == "c":
            check_complex("grad", holomorphic, out_dtypes=[a.dtype], real_out=True)
        grads = lin.backward([np.ones(a.shape, a.dtype)])      # the seed: d out / d out
        if ints:
            it = iter(grads)
            grads = [float0_zeros(P.shape_of(x)) if k in ints else next(it)
                     for k, x in enumerate(all_flat)]
            in_tree = full_tree
        if single and len(grads) == 1 and in_tree.node_type is tuple and \
                in_tree.children[0] is LEAF:
            g = to_output(grads[0])              # (the common case: one array argument)
        else:
            g = tree_unflatten(in_tree, grads)
            g = outputs(g[0] if single else g)
        if not want_value:
            return None, (outputs(lin.aux()) if has_aux else None), g
        return (outputs(lin.primal_out()), outputs(lin.aux()) if has_aux else None, g)
    return core


def value_and_grad(fun: Callable[_P, Any], argnums: _Argnums = 0, has_aux: bool = False, *,
                   argnum: Optional[_Argnums] = None, allow_int: bool = False,
                   holomorphic: bool = False) -> Callable[_P, tuple[Any, Any]]:
    """``(fun(*args), gradient)`` in one pass; ``has_aux`` gives ``((value, aux), grad)``.
    ``argnum`` is autograd's name for ``argnums``. ``allow_int=True`` accepts integer and
    bool inputs among ``argnums`` and gives them a zero gradient of dtype
    ``ad.dtypes.float0`` (JAX's convention, see :mod:`autodiff.dtypes`); without it they
    raise ``DTypeError`` naming the argument.

    Complex numbers (docs/complex.md): for a real-valued function of complex inputs the
    gradient is JAX's, the cotangent of 1.0, i.e. ``conj(df/dx + i df/dy)``;
    ``holomorphic=True`` gives ``f'(z)`` for a holomorphic function (complex inputs and
    output); a complex output without it raises ``DTypeError``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.value_and_grad(lambda x: anp.sum(x ** 2))(np.array([1.0, 2.0]))
    (np.float64(5.0), array([2., 4.]))
    >>> ad.value_and_grad(lambda z: z ** 2, holomorphic=True)(np.complex128(1 + 1j))
    (np.complex128(2j), np.complex128(2+2j))
    """
    argnums = argnum_alias(argnums, argnum)
    core = _value_and_grad_core(fun, argnums, has_aux, allow_int, holomorphic)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        value, aux, g = core(args, kwargs, True)
        if has_aux:
            return (value, aux), g
        return value, g
    return Transformed(wrapped, value_and_grad, fun, dict(argnums=argnums, has_aux=has_aux,
                                                          allow_int=allow_int,
                                                          holomorphic=holomorphic))


def grad(fun: Callable[_P, Any], argnums: _Argnums = 0, has_aux: bool = False, *,
         argnum: Optional[_Argnums] = None, allow_int: bool = False,
         holomorphic: bool = False) -> Callable[_P, Any]:
    """Gradient of a scalar-valued ``fun`` with respect to ``args[argnums]`` (``argnum``:
    autograd's spelling of the same). ``allow_int=True``: integer inputs get a zero
    gradient of dtype ``ad.dtypes.float0``, as in JAX (see :mod:`autodiff.dtypes`).
    Complex inputs and ``holomorphic``: as :func:`value_and_grad` (docs/complex.md);
    for ``|z|²`` the gradient is ``2·conj(z)``, JAX's.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> ad.grad(lambda x, y: anp.sum(x * y), argnums=(0, 1))(np.ones(2), np.arange(2.0))
    (array([0., 1.]), array([1., 1.]))
    >>> ad.grad(lambda x, y: x * y ** 2, argnum=1)(3.0, 2.0)
    np.float64(12.0)
    >>> ad.grad(lambda z: anp.abs(z) ** 2)(np.complex128(3 + 4j))
    np.complex128(6-8j)
    """
    argnums = argnum_alias(argnums, argnum)
    core = _value_and_grad_core(fun, argnums, has_aux, allow_int, holomorphic)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        _, aux, g = core(args, kwargs, False)
        if has_aux:
            return g, aux
        return g
    return Transformed(wrapped, grad, fun, dict(argnums=argnums, has_aux=has_aux,
                                                allow_int=allow_int, holomorphic=holomorphic))


def stop_gradient(x: _T) -> _T:
    """Identity whose derivative is zero (the seed's ``detach``), over pytrees.

    >>> import autodiff as ad
    >>> ad.grad(lambda x: x * ad.stop_gradient(x))(3.0)
    np.float64(3.0)
    """
    def one(l):
        l = as_array(l)
        if isinstance(l, Tracer):
            return P.stop_gradient_p.bind(l)
        return to_output(l)
    return tree_map(one, x)


# vmap and the Jacobians are built on the transforms above; they live in their own modules
# and are named here too (``from autodiff.api import vmap`` keeps working)
from .batching import vmap  # noqa: E402
from .jacobians import hessian, hvp, jacfwd, jacobian, jacrev  # noqa: E402
