"""The user-facing structured control flow of ``autodiff.lax`` (``cond``, ``switch``,
``while_loop``, ``fori_loop``, ``scan``; ``autodiff.lax`` defines ``map`` on ``scan``) and
the thin wrappers over primitives with JAX's names (``select``, ``dynamic_slice``,
``dynamic_update_slice``, ``stop_gradient``). The primitives and their rules are
``autodiff.primitives.control_flow``; ``autodiff.lax`` names all of these.

``while_loop_traced`` (not part of the API) is ``while_loop`` as one equation even on
values, for ``autodiff.misc.fixed_points``.

>>> import numpy as np, autodiff as ad
>>> ad.lax.fori_loop(0, 3, lambda i, x: x + i, 0.0)
np.float64(3.0)
"""
import numpy as _np

from . import primitives as _P
from .api import stop_gradient as _api_stop_gradient
from .api_util import as_array as _api_as_array, to_output as _api_to_output
from .core import ShapedArray as _ShapedArray, Tracer as _Tracer, user_source as _user_source
from .core import current_trace as _current_trace
from .tracing import staged as _staged
from .errors import (ConcretizationError as _ConcretizationError, DTypeError as _DTypeError,
                     ShapeError as _ShapeError)
from .numpy._base import asarray as _asarray, promote as _promote, to_output as _array_output
from .tree_util import PyTreeDef as _PyTreeDef, tree_map as _tree_map
from .tree_util import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
# the primitives and their rules: autodiff.primitives.control_flow (this module is the user API)
from .primitives.control_flow import cond_p, scan_p, while_p
from .primitives.control_flow import join_branches as _join_branches, trace_body as _trace_body

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "select", "cond_p",
           "while_p", "scan_p", "dynamic_slice", "dynamic_update_slice", "stop_gradient",
           "while_loop_traced"]


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false`` (both branches computed; differentiable).

    ``pred`` is a bool array of the operands' shape (or a scalar). On concrete inputs the
    result is a numpy value, a numpy scalar when 0-d (docs/design.md, convention 2).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.select(np.array([True, False]), np.ones(2), np.zeros(2))
    array([1., 0.])
    >>> ad.lax.select(True, 1.0, 2.0)
    np.float64(1.0)
    """
    out = _P.select(pred, on_true, on_false)
    if isinstance(out, _np.ndarray) and out.ndim == 0:
        return out[()]
    return out


def _plain(aval):
    return _ShapedArray(aval.shape, aval.dtype)

# ============================================================================
# The user-facing functions
# ============================================================================

_as_array = _api_as_array


def _output(tree):
    return _tree_map(lambda x: x if isinstance(x, _Tracer) else _api_to_output(_np.asarray(x)), tree)


def _is_python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, _np.generic)


def _weak_fits(x, dtype):
    """Whether the Python scalar ``x`` may take ``dtype`` (JAX's weak types: an int fits any
    numeric dtype, a float a float or complex one, a bool only bool)."""
    kind = _np.dtype(dtype).kind
    if isinstance(x, bool):
        return kind == "b"
    if isinstance(x, int):
        return kind in "iufc"
    return kind in ("fc" if isinstance(x, float) else "c")


def _trace_user(fun, in_tree, in_avals, who, out_dtypes=None):
    """Trace a user function of pytrees. Python-scalar outputs take ``out_dtypes[i]``.

    Returns ``(ClosedJaxpr, consts, out_tree, weak)``: ``weak[i]`` marks outputs that were
    Python scalars.
    """
    box = {}

    # a branch records even the operations on values it closes over (as JAX's tracing
    # does): computed outside, they would run whichever branch is taken, and their
    # derivative too (grad of cond(x > 0, f, lambda _: sqrt(x)) at 0 would be 0 * inf = nan)
    call = _staged(fun) if who in ("cond", "switch") else fun

    def flat_fun(*tracers):
        out = call(*_tree_unflatten(in_tree, list(tracers)))
        leaves, tree = _tree_flatten(out)
        box["tree"] = tree
        box["weak"] = [_is_python_scalar(l) for l in leaves]
        res = []
        for i, l in enumerate(leaves):
            if _is_python_scalar(l) and out_dtypes is not None and i < len(out_dtypes) \
                    and out_dtypes[i] is not None and _weak_fits(l, out_dtypes[i]):
                l = _np.asarray(l, out_dtypes[i])
            res.append(_as_array(l))
        return res

    try:
        closed, consts = _trace_body(flat_fun, in_avals, who)
    except _ConcretizationError as err:
        raise _ConcretizationError(
            f"{err.args[0].split(chr(10))[0]}\nInside the functions given to ad.lax.{who} "
            f"values are always abstract: use ad.lax.cond / switch / while_loop / anp.where "
            f"for decisions on traced values there.", source=err.source) from None
    return closed, consts, box["tree"], box["weak"]


def _located(cls, message):
    """A builtin exception whose message ends with the user's source line."""
    src = _user_source()
    return cls(f"{message}\n  (at {src})" if src else message)


def _tuple_tree(*trees):
    """The structure of the argument tuple ``(tree_0, tree_1, ...)``."""
    return _PyTreeDef(tuple, None, tuple(trees))


def _flat_operands(tree_of_values):
    leaves, tree = _tree_flatten(tree_of_values)
    leaves = [_as_array(l) for l in leaves]
    return leaves, tree, [_plain(_P.aval_of(l)) for l in leaves]


def _describe(avals):
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


class _ShapeTypeError(_ShapeError, TypeError):
    """A shape mismatch between a loop's carry (or cond's branches) and what the function
    returned: a ``ShapeError`` that is also the ``TypeError`` JAX raises there."""


def _check_same(what_a, avals_a, what_b, avals_b, tree_a, tree_b, who, fix):
    if tree_a != tree_b:
        raise _located(TypeError,
                       f"ad.lax.{who}: {what_a} has structure {tree_a} but {what_b} has "
                       f"structure {tree_b}; they must match. {fix}")
    for i, (a, b) in enumerate(zip(avals_a, avals_b)):
        if a.shape != b.shape:
            raise _ShapeTypeError(f"ad.lax.{who}: leaf {i} of {what_a} has shape {a.shape} "
                                  f"but of {what_b} shape {b.shape}: {what_a} "
                                  f"{_describe(avals_a)}, {what_b} {_describe(avals_b)}. {fix}",
                                  source=_user_source())
        if a.dtype != b.dtype:
            raise _DTypeError(f"ad.lax.{who}: leaf {i} of {what_a} has dtype {a.dtype} but of "
                             f"{what_b} dtype {b.dtype}: {what_a} {_describe(avals_a)}, "
                             f"{what_b} {_describe(avals_b)}. {fix}", source=_user_source())


def _scalar_operand(x, who, what):
    x = _as_array(x)
    a = _P.aval_of(x)
    if a.shape != ():
        raise _ShapeTypeError(f"ad.lax.{who}: {what} must be a scalar, got shape {a.shape}. "
                              f"For an elementwise choice use anp.where or ad.lax.select.",
                              source=_user_source())
    return x, a


_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one primitive.

    Both branches are traced; they must return the same pytree of shapes and dtypes.
    Under ``vmap`` a batched ``pred`` becomes a ``select`` of both branches. JAX's older
    spellings work too: ``cond(pred, true_fun, false_fun, operand=x)`` and
    ``cond(pred, true_operand, true_fun, false_operand, false_fun)``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = lambda x: ad.lax.cond(x > 0, anp.sin, lambda x: x ** 2, x)
    >>> f(np.float64(-3.0)), ad.grad(f)(-3.0)
    (np.float64(9.0), np.float64(-6.0))
    >>> ad.vmap(f)(np.array([-1.0, 2.0]))
    array([1.        , 0.90929743])
    >>> ad.lax.cond(False, 1.0, lambda a: a + 1.0, 2.0, lambda b: b * 10.0)
    np.float64(20.0)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise _located(TypeError, "ad.lax.cond: pass the operands either positionally "
                                      "or as operand=, not both")
        operands = (operand,)
    if (not callable(true_fun) and callable(false_fun) and len(operands) == 2
            and callable(operands[1])):
        # JAX's old signature: cond(pred, true_operand, true_fun, false_operand, false_fun)
        true_op, true_f, false_op, false_f = true_fun, false_fun, operands[0], operands[1]
        return cond(pred, lambda ops: true_f(ops[0]), lambda ops: false_f(ops[1]),
                    (true_op, false_op))
    if not callable(true_fun) or not callable(false_fun):
        raise _located(TypeError,
                       "ad.lax.cond(pred, true_fun, false_fun, *operands): true_fun and "
                       "false_fun must be callables")
    pred, a = _scalar_operand(pred, "cond", "pred")
    if a.dtype != _np.bool_:
        pred = _P.ne(pred, _np.asarray(0, a.dtype))
    index = _P.convert(pred, _np.int32)
    return _cond_bind(index, (false_fun, true_fun), operands, "cond")


def switch(index, branches, *operands):
    """``branches[index](*operands)``; ``index`` is clamped to ``[0, len(branches) - 1]``.

    >>> import numpy as np, autodiff as ad
    >>> fs = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    >>> [float(ad.lax.switch(i, fs, 2.0)) for i in (0, 1, 2, 7)]
    [3.0, 20.0, -2.0, -2.0]
    """
    branches = tuple(branches)
    if not branches or not all(callable(b) for b in branches):
        raise _located(TypeError,
                       "ad.lax.switch(index, branches, *operands): branches must be a "
                       "non-empty sequence of callables")
    index, a = _scalar_operand(index, "switch", "index")
    if a.dtype.kind not in "iub":
        raise _DTypeError(f"ad.lax.switch: index must be an integer, got {a.dtype}",
                         source=_user_source())
    if len(branches) == 1:
        return branches[0](*operands)
    index = _P.convert(index, _np.int32)
    index = _P.max_(_P.min_(index, _np.int32(len(branches) - 1)), _np.int32(0))
    return _cond_bind(index, branches, operands, "switch")


def _cond_bind(index, funs, operands, who):
    ops, ops_tree, avals = _flat_operands(tuple(operands))
    traced = [_trace_user(f, ops_tree, avals, who) for f in funs]
    # a Python-scalar result takes the dtype another branch gives that output
    n_out = min(len(t[3]) for t in traced)
    target = []
    for i in range(n_out):
        strong = [t[0].out_avals[i].dtype for t in traced if not t[3][i]]
        target.append(strong[0] if strong else None)
    for k, (f, t) in enumerate(zip(funs, traced)):
        if any(t[3][i] and target[i] is not None and t[0].out_avals[i].dtype != target[i]
               for i in range(n_out)):
            traced[k] = _trace_user(f, ops_tree, avals, who, out_dtypes=target)
    names = (["false_fun", "true_fun"] if who == "cond"
             else [f"branches[{i}]" for i in range(len(funs))])
    for name, t in zip(names[1:], traced[1:]):
        _check_same(f"the output of {names[0]}", traced[0][0].out_avals,
                    f"the output of {name}", t[0].out_avals, traced[0][2], t[2], who,
                    "Every branch must return the same types.")
    branches, consts = _join_branches([(t[0], t[1]) for t in traced])
    outs = cond_p.bind(index, *consts, *ops, branches=branches)
    return _output(_tree_unflatten(traced[0][2], outs))


def while_loop(cond_fun, body_fun, init_val, max_steps=None):
    """``while cond_fun(val): val = body_fun(val)``.

    Traced abstractly (under ``jit``, ``vmap``, ``make_jaxpr``) it is one ``while``
    primitive: ``max_steps=N`` bounds the loop (it stops after at most ``N`` steps even
    if ``cond_fun`` still holds) and makes it differentiable in reverse mode; without it
    only forward mode (``jvp``, ``jacfwd``) is available there, as in JAX. On values
    (outside transforms, and under ``grad``/``jvp``/the tape, which know their values)
    it runs as a Python loop, so reverse mode differentiates the steps actually taken,
    bounded or not, as autograd does; under ``grad``/``jvp`` inside ``jit`` or ``vmap``, until
    the predicate needs a value of theirs (the rest of the loop is then the primitive).

    >>> import numpy as np, autodiff as ad
    >>> def newton_cbrt(a):     # solve x**3 = a
    ...     step = lambda x: x - (x ** 3 - a) / (3 * x ** 2)
    ...     return ad.lax.while_loop(lambda x: abs(x ** 3 - a) > 1e-12, step, 1.0 + a / 3,
    ...                              max_steps=50)
    >>> float(newton_cbrt(8.0)), float(ad.grad(newton_cbrt)(8.0))     # 1 / (3 a^(2/3))
    (2.0, 0.08333333333333333)
    """
    if not callable(cond_fun) or not callable(body_fun):
        raise _located(TypeError, "ad.lax.while_loop(cond_fun, body_fun, init_val): cond_fun "
                                  "and body_fun must be callables")
    if max_steps is not None:
        if isinstance(max_steps, _Tracer) or int(max_steps) != max_steps or max_steps < 0:
            raise _located(TypeError,
                           f"ad.lax.while_loop: max_steps must be a non-negative Python int, "
                           f"got {max_steps!r}")
        max_steps = int(max_steps)
    init, tree, avals = _flat_operands(init_val)
    inner = _current_trace()
    # inside an abstract trace (jit, vmap, make_jaxpr) the functions may close over its
    # tracers: do not call them on values there (an effect in cond_fun would run twice)
    if (inner is None or inner.concrete) and all(
            not isinstance(x, _Tracer) or x._trace.can_force(x.ivar) for x in init):
        done, init, max_steps = _while_on_values(cond_fun, body_fun, init, tree, avals,
                                                 max_steps)
        if done:
            return _output(_tree_unflatten(tree, init))
    return _while_traced(cond_fun, body_fun, init, tree, avals, max_steps)


def _while_traced(cond_fun, body_fun, init, tree, avals, max_steps):
    """The loop as one ``while`` equation (bodies traced once)."""
    arg_tree = _tuple_tree(tree)
    cj, c_consts, c_tree, _ = _trace_user(cond_fun, arg_tree, avals, "while_loop")
    out = cj.out_avals
    if c_tree.num_leaves != 1 or c_tree.children:
        raise _DTypeError(f"ad.lax.while_loop: cond_fun must return a boolean scalar, got the "
                          f"pytree {c_tree}", source=_user_source())
    if len(out) != 1 or out[0].shape != () or out[0].dtype != _np.bool_:
        raise _DTypeError(f"ad.lax.while_loop: cond_fun must return a boolean scalar, got "
                         f"{_describe(out)}", source=_user_source())
    bj, b_consts, b_tree, _ = _trace_user(body_fun, arg_tree, avals, "while_loop",
                                          out_dtypes=[a.dtype for a in avals])
    _check_same("the loop value (init_val)", avals, "the output of body_fun", bj.out_avals,
                tree, b_tree, "while_loop",
                "body_fun must return a value of the same types as init_val.")
    outs = while_p.bind(*c_consts, *b_consts, *init, cond_jaxpr=cj, body_jaxpr=bj,
                        cond_nconsts=len(c_consts), body_nconsts=len(b_consts),
                        max_steps=max_steps)
    # a carry the body returns unchanged ends as it started: the loop's output is the
    # input itself (so vmap keeps it unbatched, out_axes=None, as JAX's forwarding does)
    outs = _forward_carries(bj.jaxpr, len(b_consts), init, outs)
    return _output(_tree_unflatten(tree, outs))


def _forward_carries(jaxpr, nconsts, init, outs):
    """``outs`` with each carry that ``jaxpr`` (consts, carries, ... -> carries, ...)
    passes through unchanged replaced by its initial value."""
    iv = jaxpr.invars
    return [init[k] if k < len(init) and jaxpr.outvars[k] is iv[nconsts + k] else o
            for k, o in enumerate(outs)]


def while_loop_traced(cond_fun, body_fun, init_val):
    """``while_loop`` as one equation even on values: for a body that is itself costly to
    call from Python (``misc.fixed_points``'s adjoint iteration calls a vjp per step, cheaper
    traced once and interpreted)."""
    init, tree, avals = _flat_operands(init_val)
    return _while_traced(cond_fun, body_fun, init, tree, avals, None)


def _while_on_values(cond_fun, body_fun, leaves, tree, avals, max_steps):
    """Run the loop in Python while its predicate has a value: outside transforms, and under
    ``grad``/``jvp``/the tape, whose traces know their values (each step's equations go
    into the enclosing trace, so reverse mode differentiates the steps taken: a loop that
    stops after 20 steps costs 20, whatever ``max_steps`` says, and an unbounded loop has
    reverse mode too, as in autograd). Under ``jit``/``vmap`` the predicate is abstract or
    batched: the rest of the loop is the ``while`` primitive, from where it got to.

    Returns ``(done, leaves, max_steps left)``.
    """
    trace = _current_trace()
    if trace is not None and getattr(trace, "concrete", False) and hasattr(trace, "eager"):
        # every step's predicate needs that step's values: computed as they are recorded
        trace.eager += 1
        try:
            return _while_steps(cond_fun, body_fun, leaves, tree, avals, max_steps)
        finally:
            trace.eager -= 1
    return _while_steps(cond_fun, body_fun, leaves, tree, avals, max_steps)


def _while_steps(cond_fun, body_fun, leaves, tree, avals, max_steps):
    steps = 0
    expected = [(a.shape, a.dtype) for a in avals]
    Tracer, bool_ = _Tracer, _np.dtype(_np.bool_)
    from .numpy._creation import FreshArray

    def user(leaves, copy):
        # the functions see numpy arrays that also have JAX's .at[] (FreshArray), as they
        # would see traced values: a body written for jit (x.at[i].set(v)) runs as it is.
        # body_fun gets copies: an in-place update (x += 1) must not reach the caller's
        # arrays, nor another leaf that is the same array (as JAX, whose arrays are
        # immutable); cond_fun gets read-only views
        out = []
        for x in leaves:
            if isinstance(x, _np.ndarray):
                x = _np.array(x).view(FreshArray) if copy else x.view(FreshArray)
                if not copy:
                    x.flags.writeable = False
            out.append(x)
        return _tree_unflatten(tree, out)
    while max_steps is None or steps < max_steps:
        pred = cond_fun(user(leaves, False))
        if not isinstance(pred, (Tracer, _np.ndarray, _np.generic, bool, int, float, complex)):
            p_leaves, p_tree = _tree_flatten(pred)
            if len(p_leaves) != 1 or p_leaves[0] is not pred:
                raise _DTypeError(f"ad.lax.while_loop: cond_fun must return a boolean scalar, "
                                  f"got the pytree {p_tree}", source=_user_source())
        if isinstance(pred, Tracer):        # (the usual case: checked without a new aval)
            pa = pred.aval
            # a concrete trace (grad, jvp) inside jit or vmap: the predicate may read that
            # trace's abstract values (a bound closed over), and then the rest is traced
            concrete = pred._trace.can_force(pred.ivar)
        else:
            pa, concrete = _P.aval_of(_as_array(pred)), True
        if pa.shape != () or pa.dtype != bool_:
            raise _DTypeError(f"ad.lax.while_loop: cond_fun must return a boolean scalar, got "
                              f"{pa.str_short()}", source=_user_source())
        if not concrete:
            break
        if not bool(pred):
            return True, leaves, None
        out, out_tree = _tree_flatten(body_fun(user(leaves, True)))
        out = [_P.convert(_as_array(o), a.dtype)
               if _is_python_scalar(o) and _weak_fits(o, a.dtype)
               else o if isinstance(o, Tracer) else _as_array(o)
               for o, a in zip(out, avals)]
        # every step's output is checked; the full check (and its message) on a mismatch
        if out_tree != tree or len(out) != len(expected) or any(
                (o.aval.shape, o.aval.dtype) != sd if isinstance(o, Tracer)
                else (_P.shape_of(o), _P.dtype_of(o)) != sd for o, sd in zip(out, expected)):
            _check_same("the loop value (init_val)", avals, "the output of body_fun",
                        [_plain(_P.aval_of(o)) for o in out], tree, out_tree, "while_loop",
                        "body_fun must return a value of the same types as init_val.")
        leaves = out
        steps += 1
    if max_steps is not None and steps >= max_steps:
        return True, leaves, None
    return False, leaves, None if max_steps is None else max_steps - steps


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With Python-int bounds it is a ``scan`` (differentiable in both modes); with traced
    bounds a ``while_loop`` (forward mode only). As in JAX, bounds may be floats: known
    ones count from ``int(lower)`` to ``int(upper)``, traced ones make ``i`` a float.
    Integer bounds of different dtypes are promoted (JAX requires equal dtypes).
    ``unroll`` is accepted for JAX compatibility and ignored, as ``scan``'s; as in JAX it
    is an error (``ValueError``) with traced bounds.

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.fori_loop(0, 5, lambda i, x: x * 2.0 + i, 1.0)
    np.float64(58.0)
    >>> float(ad.grad(lambda x: ad.lax.fori_loop(0, 5, lambda i, x: x * 2.0 + i, x))(1.0))
    32.0
    """
    if not callable(body_fun):
        raise _located(TypeError, "ad.lax.fori_loop(lower, upper, body_fun, init_val): "
                                  "body_fun must be a callable (i, val) -> val")
    static = not isinstance(lower, _Tracer) and not isinstance(upper, _Tracer)
    if static:
        lo, hi = _np.asarray(lower), _np.asarray(upper)
        if lo.shape or hi.shape or lo.dtype.kind not in "iuf" or hi.dtype.kind not in "iuf":
            raise _located(TypeError,
                           f"ad.lax.fori_loop: lower and upper must be integer (or float) "
                           f"scalars, got {lower!r} and {upper!r}")
        # known float bounds count in ints, int(lower) to int(upper), as JAX's do
        idt = (_np.result_type(lo.dtype, hi.dtype) if lo.dtype.kind in "iu"
               and hi.dtype.kind in "iu" else _np.asarray(0).dtype)
        lo_i, hi_i = int(lo), int(hi)

        def step(carry, _):
            i, x = carry
            return (i + _np.asarray(1, idt), body_fun(i, x)), None

        (_, out), _ = scan(step, (_np.asarray(lo_i, idt), init_val), None,
                           length=max(hi_i - lo_i, 0))
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise _located(ValueError, "ad.lax.fori_loop: unroll needs loop bounds known at trace "
                                   "time (Python ints); these are traced")
    lower, upper = _as_array(lower), _as_array(upper)
    for b in (lower, upper):
        a = _P.aval_of(b)
        if a.shape != () or a.dtype.kind not in "iuf":
            raise _located(TypeError,
                           f"ad.lax.fori_loop: lower and upper must be integer (or float) "
                           f"scalars, got {a.str_short()}")
    idt = _np.result_type(_P.dtype_of(lower), _P.dtype_of(upper))
    lower, upper = _P.convert(lower, idt), _P.convert(upper, idt)

    def body(carry):
        i, hi, x = carry
        return i + _np.asarray(1, idt), hi, body_fun(i, x)

    _, _, out = while_loop(lambda c: c[0] < c[1], body, (lower, upper, init_val))
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``. One equation in the IR whatever the length.

    ``f`` takes and returns pytrees; ``xs`` may be ``None`` with ``length`` given;
    ``reverse=True`` walks ``xs`` from the end (ys stay aligned with xs). ``unroll``
    (a bool or a non-negative int, as in JAX) is accepted for JAX compatibility and
    ignored.

    >>> import numpy as np, autodiff as ad
    >>> def running_max(c, x):
    ...     m = ad.numpy.maximum(c, x)
    ...     return m, m
    >>> ad.lax.scan(running_max, -np.inf, np.array([1.0, 3.0, 2.0, 5.0]))
    (np.float64(5.0), array([1., 3., 3., 5.]))
    """
    if not callable(f):
        raise _located(TypeError,
                       "ad.lax.scan(f, init, xs): f must be a callable (carry, x) -> (carry, y)")
    if isinstance(unroll, _Tracer):
        raise _ConcretizationError("ad.lax.scan: unroll must be a Python int or bool, known "
                                   "at trace time; got a traced value", source=_user_source())
    if not isinstance(unroll, (bool, _np.bool_)) and (
            not isinstance(unroll, (int, _np.integer)) or unroll < 0):
        raise _located(ValueError, f"ad.lax.scan: unroll must be a bool or a non-negative "
                                   f"int, got {unroll!r}")
    x_leaves, x_tree, x_full = _flat_operands(xs)
    lengths = set()
    for a in x_full:
        if not a.shape:
            raise _ShapeError(f"ad.lax.scan: every leaf of xs needs a leading axis to scan "
                             f"over; got a scalar in xs {_describe(x_full)}",
                             source=_user_source())
        lengths.add(a.shape[0])
    if length is not None:
        if isinstance(length, _Tracer) or int(length) != length or length < 0:
            raise _located(TypeError,
                           f"ad.lax.scan: length must be a non-negative Python int, got "
                           f"{length!r}")
        lengths.add(int(length))
    if len(lengths) > 1:
        raise _ShapeError(f"ad.lax.scan: xs leaves have different leading lengths "
                         f"{sorted(lengths)} (xs {_describe(x_full)}"
                         f"{'' if length is None else f', length={length}'})",
                         source=_user_source())
    if not lengths:
        raise _located(ValueError,
                       "ad.lax.scan: with xs=None, give the number of steps as length=")
    n = lengths.pop()
    init_leaves, k_tree, k_avals = _flat_operands(init)
    x_avals = [_ShapedArray(a.shape[1:], a.dtype) for a in x_full]
    nk = len(init_leaves)

    def body(carry, x):
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise _located(TypeError,
                           "ad.lax.scan: f must return a pair (new_carry, y); got "
                           f"{type(out).__name__}")
        return tuple(out)

    in_tree = _tuple_tree(k_tree, x_tree)
    jc, consts, out_tree, _ = _trace_user(body, in_tree, k_avals + x_avals, "scan",
                                          out_dtypes=[a.dtype for a in k_avals])
    c_tree, y_tree = out_tree.children
    _check_same("the carry (init)", k_avals, "the carry returned by f", jc.out_avals[:nk],
                k_tree, c_tree, "scan",
                "f must return a carry of the same types as init (e.g. start from 0.0, "
                "not 0, for a float carry).")
    outs = scan_p.bind(*consts, *init_leaves, *x_leaves, jaxpr=jc, num_consts=len(consts),
                       num_carry=nk, length=n, reverse=bool(reverse))
    outs = _forward_carries(jc.jaxpr, len(consts), init_leaves, outs[:nk]) + list(outs[nk:])
    return (_output(_tree_unflatten(k_tree, outs[:nk])),
            _output(_tree_unflatten(y_tree, outs[nk:])))


# ============================================================================
# Thin wrappers over primitives, with JAX's names and signatures
# ============================================================================

def _start_indices(starts):
    out = []
    for s in starts:
        if isinstance(s, _Tracer):
            out.append(s if s.aval.dtype.kind in "iu" else _P.convert(s, _np.int64))
        else:
            out.append(_np.asarray(s, dtype=_np.int64))
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    """``operand[s0:s0+n0, s1:s1+n1, ...]`` with start indices that may be traced (sizes
    static). Starts are clamped so the slice stays in bounds, as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> ad.jit(lambda x, i: ad.lax.dynamic_slice(x, (i,), (2,)))(np.arange(5.0), 3)
    array([3., 4.])
    """
    out = _P.dynamic_slice(_asarray(operand), _start_indices(start_indices), slice_sizes)
    return out if isinstance(out, _Tracer) else _array_output(_np.asarray(out))


def dynamic_update_slice(operand, update, start_indices):
    """``operand`` with the block at ``start_indices`` replaced by ``update`` (functional;
    starts may be traced and are clamped into bounds).

    >>> import numpy as np, autodiff as ad
    >>> ad.lax.dynamic_update_slice(np.zeros(4), np.ones(2), (1,))
    array([0., 1., 1., 0.])
    """
    x, u = _promote(_asarray(operand), _asarray(update))
    out = _P.dynamic_update_slice(x, u, _start_indices(start_indices))
    return out if isinstance(out, _Tracer) else _array_output(_np.asarray(out))


def stop_gradient(x):
    """Identity whose derivative is zero, over pytrees (same as ``ad.stop_gradient``).

    >>> import autodiff as ad
    >>> ad.grad(lambda x: x * ad.lax.stop_gradient(x))(3.0)
    np.float64(3.0)
    """
    return _api_stop_gradient(x)
