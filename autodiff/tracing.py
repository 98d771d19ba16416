"""Primitives and tracing: the :class:`Primitive` registry, :class:`Tracer`, :class:`JaxprTrace`,
``bind`` (record on tracers, evaluate on values), tracing a Python function into a jaxpr
(:func:`trace_flat`) and evaluating one (:func:`eval_jaxpr`)."""
import math

import numpy as np

from ._tracer_methods import ArrayMethods
from .closure_tables import TableView, plain_array, restore_tables, swap_in_table_views
from .config import config
from .errors import (AutodiffError, ConcretizationError, DerivativeLossError, DTypeError,
                     NaNError, ShapeError, TracerLeakError)
from .source_info import trace_state, user_source
from .traceback_util import boundaries, filter_traceback
from .avals import _VALID_KINDS, _bad_dtype, value_aval
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, install_evaluator
from . import tree_util as _tree_util

__all__ = ["primitives", "collective_primitives", "Primitive", "get_aval", "Tracer", "Array",
           "JaxprTrace", "current_trace", "staged",
           "new_trace", "bind", "check_nans", "trace_flat", "hoist_consts", "full_lower_input",
           "eval_jaxpr", "eval_closed", "is_concrete", "concrete_or_error", "new_jaxpr_like"]

# ----------------------------------------------------------------------------
# Primitives
# ----------------------------------------------------------------------------

primitives = {}   # name -> Primitive: the registry every test enumerates
# name -> Primitive of the named-axis collectives (autodiff.primitives.collectives): they
# live only between a named vmap's trace and its batch_eval, so no backend lowers them and
# the registry's per-primitive suites (lowering, samples, special values) do not list them
collective_primitives = {}


class Primitive:
    """A named operation with its rules, declared once in :mod:`autodiff.primitives`.

    Rules (attributes, ``None`` until declared):
      ``impl(*arrays, **params)`` numpy evaluation;
      ``abstract_eval(*avals, **params)`` output aval(s);
      ``jvp(primals, tangents, **params)`` -> (primal_out, tangent_out), written with
      library ops so it can be differentiated again (tangents may be ``Zero``);
      ``transpose(cts, *args, **params)`` for linear primitives (``args`` mixes
      ``UndefinedPrimal`` for linear inputs and values for the rest);
      ``batch(args, dims, **params)`` -> (out, out_dims) for vmap;
      ``taylor(ins, **params)`` -> the output's Taylor coefficients for jet.
    """

    collective = False      # class default: a Primitive made without __init__ is none

    def __init__(self, name, multiple_results=False, collective=False):
        registry = collective_primitives if collective else primitives
        if name in primitives or name in collective_primitives:
            raise ValueError(f"primitive {name!r} declared twice")
        self.name = name
        self.multiple_results = multiple_results
        self.impl = None
        self.abstract_eval = None
        self.jvp = None
        self.transpose = None
        self.batch = None
        self.taylor = None           # Taylor rule (jet); see primitives._rules.deftaylor
        self.differentiable = True   # False for integer/boolean-valued ops (zero tangents)
        self.is_linear = False       # set by primitives.deftranspose, never by hand
        self.linear_argnums = None   # with is_linear: the operands it is linear in (None: all)
        self.call_like = False       # carries sub-jaxprs in params
        # derivative zero everywhere (floor, stop_gradient), or a predicate of the equation
        # (sign: on real operands)
        self.zero_derivative = False
        # a named-axis collective: vmap's batch_eval always applies its batch rule, which
        # reads the axis being batched (autodiff.named_axes)
        self.collective = collective
        registry[name] = self

    def __repr__(self):
        return f"Primitive({self.name})"

    def __reduce__(self):
        # by name: the rules are closures, and the receiving process has declared the same
        # primitive (on import of autodiff, or of the module that defines an extension)
        return (_primitive_named, (self.name,))

    def bind(self, *args, **params):
        """Apply the primitive: evaluated at once on concrete values, recorded as an equation on
        tracers."""
        try:                 # a public boundary (autodiff.traceback_util); try is free
            return bind(self, args, params)
        except AutodiffError as e:
            filter_traceback(e)
            raise


def _primitive_named(name):
    """Unpickling side of :meth:`Primitive.__reduce__`."""
    try:
        return primitives[name] if name in primitives else collective_primitives[name]
    except KeyError:
        raise ValueError(
            f"unpickling a jaxpr that uses primitive {name!r}, which this process has not "
            f"declared; import the module that defines it before loading the jaxpr") from None



def get_aval(x):
    """The abstract value of a tracer, array, or Python/numpy scalar."""
    if isinstance(x, Tracer):
        return x.aval
    return value_aval(x)



# ----------------------------------------------------------------------------
# Traces and tracers
# ----------------------------------------------------------------------------




@boundaries     # a leaked tracer's error leaves these without autodiff's frames
class Tracer(ArrayMethods):
    """A traced array value. Behaves like an array; records operations as equations.

    Operators and array methods come from :class:`~autodiff._tracer_methods.ArrayMethods`
    (defined with the class, dispatching to ``autodiff.numpy`` on first use).
    """

    __slots__ = ("_trace", "ivar", "aval", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, trace, var):
        self._trace = trace
        self.ivar = var
        self.aval = var.aval

    shape = property(lambda self: self.aval.shape, doc="Like ``numpy.ndarray.shape``, on a "
                     "traced value: the tuple of its dimensions.")
    dtype = property(lambda self: self.aval.dtype, doc="Like ``numpy.ndarray.dtype``, on a "
                     "traced value: the data type of its elements.")
    ndim = property(lambda self: len(self.aval.shape), doc="Like ``numpy.ndarray.ndim``, on "
                    "a traced value: its number of dimensions.")
    size = property(lambda self: self.aval.size, doc="Like ``numpy.ndarray.size``, on a "
                    "traced value: its number of elements.")

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return self.aval.shape[0]

    # traced values are immutable, as jax.Array: a copy is the value itself (a deepcopy
    # must not copy the trace, which would leak a tracer of a trace nobody owns)
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        t = self._trace
        mode = "concrete" if t.concrete else "abstract"
        return f"Tracer<{self.aval.str_short()}, {mode}, level {t.level}>"

    # -- conversion to Python values: concrete traces only -----------------
    def concrete_value(self, what):
        """The value behind this tracer when the trace is concrete (under ``grad`` without ``jit``),
        else ``ConcretizationError`` naming ``what`` needed it."""
        return self._trace.force(self, what)

    def _constant_value(self, what):
        """The value behind this tracer for a conversion that makes it a constant (``float()``,
        ``math.exp``, numpy's item assignment): refused with :class:`DerivativeLossError` when
        the value carries a derivative, which the constant would silently drop."""
        t = self._trace
        t._check_alive(self)
        if t.concrete and t.carries_derivative(self.ivar):
            raise DerivativeLossError(_derivative_loss_message(self, what), source=user_source())
        return t.force(self, what)

    @property
    def primal(self):
        """The value behind this tracer as a numpy constant: no derivative flows through it
        (a deliberate constant, as ``ad.stop_gradient``; under ``jit`` values are abstract
        and this raises ``ConcretizationError``).

        >>> import autodiff as ad
        >>> ad.grad(lambda x: x.primal * x)(3.0)
        np.float64(3.0)
        """
        return self._trace.force(self, ".primal")

    def __bool__(self):
        if self.aval.shape not in ((), (1,)) and self.aval.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.concrete_value("bool()"))

    def __int__(self):
        return int(self.concrete_value("int()"))

    def __float__(self):
        return float(self._constant_value(
            "float() (math.* functions and numpy's item assignment call it)"))

    def __index__(self):
        if self.aval.dtype.kind not in "iub":
            raise TypeError(f"only integer traced values can be used as an index; this one is "
                            f"{self.aval.str_short()} (cast with x.astype(int), or use an int)"
                            + _at(user_source()))
        return int(self.concrete_value(_NUMPY_INDEX_HINT))

    def __complex__(self):
        return complex(self._constant_value("complex()"))

    def __format__(self, spec):
        # a string drops no derivative: f"{loss:.3f}" inside grad prints the value (under
        # jit values are abstract and this names the fix)
        if not spec:
            return str(self)
        return format(self.concrete_value(f"format spec {spec!r}"), spec)

    def __hash__(self):
        raise TypeError("traced values are unhashable; mark the argument static "
                        "(static_argnums) if it must be a dict key")

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.aval.shape[0]))

    def __array__(self, dtype=None, copy=None):
        t = self._trace
        t._check_alive(self)                 # a leaked tracer says so, whatever its use
        if t.concrete:
            # A value without a derivative (an integer or boolean, a non-differentiated
            # input, a stop_gradient) loses nothing as a numpy constant: ``np_table[idx]``
            # under grad/jvp/vjp (numpy calls ``__array__`` on an index array) computes the
            # entries as a constant. One with a derivative raises DerivativeLossError.
            v = np.asarray(self._constant_value(
                "numpy's conversion to an array (np.asarray, np.float64, np.array)"))
            return v if dtype is None else v.astype(dtype, copy=False)
        raise ConcretizationError(
            "a traced value was passed to a function that converts it to a numpy array "
            "(np.asarray / a numpy function without autodiff support). Use the "
            "autodiff.numpy (anp) equivalent so the operation is recorded. " + _NUMPY_INDEX_HINT,
            source=user_source())

    def __setitem__(self, idx, value):
        src = user_source()
        raise TypeError("traced values are immutable: `x[idx] = v` cannot be recorded. "
                        "Use the functional update `x = x.at[idx].set(v)` instead."
                        + (f"\n  (at {src})" if src else ""))


# a tracer is a leaf of every pytree: the flat-tuple fast path of tree_util takes it
_tree_util.FAST_LEAF_TYPES.add(Tracer)


class _ArrayMeta(type):
    def __instancecheck__(cls, x):
        if isinstance(x, (np.ndarray, Tracer)):
            return True
        if isinstance(x, np.generic):
            return x.dtype.kind in "biufc"
        return hasattr(x, "__autodiff_array__")

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, (np.ndarray, Tracer))


class Array(metaclass=_ArrayMeta):
    """What autodiff calls an array, for ``isinstance`` checks and annotations (JAX's
    ``jax.Array``): numpy arrays and numeric numpy scalars (what ``anp`` returns on
    concrete values), traced values, and array-like objects of autodiff (tape Variables).

    >>> import numpy as np, autodiff as ad
    >>> isinstance(np.ones(2), ad.Array), isinstance(np.float64(1.0), ad.Array)
    (True, True)
    >>> ad.grad(lambda x: float(isinstance(x, ad.Array)) * x)(2.0)
    np.float64(1.0)
    >>> isinstance([1.0], ad.Array)
    False
    """

    def __new__(cls, *args, **kwargs):
        raise TypeError("ad.Array is a type for isinstance checks and annotations; make "
                        "arrays with autodiff.numpy (anp.asarray, anp.zeros, ...)")


def _at(src):
    return f"\n  (at {src})" if src else ""


def _derivative_loss_message(tracer, what):
    return (
        f"{what} made a constant of a traced value that carries a derivative "
        f"({tracer.aval.str_short()}): the derivative through it would be silently dropped. "
        f"Keep the value traced: use the autodiff.numpy function (anp.exp for math.exp, "
        f"anp.asarray for np.asarray / np.float64), and build arrays functionally "
        f"(g = g.at[i].set(v), or anp.stack([...]), instead of numpy's item assignment "
        f"g[i] = v). If a constant is meant, say so: ad.stop_gradient(x) or x.primal.")


_NUMPY_INDEX_HINT = (
    "(numpy's own indexing a[i] of a numpy array by a traced index lands here: numpy "
    "accepts only a Python int or a real array as an index, never a traced value. Arrays "
    "the traced function closes over or names as globals are indexable by traced values; "
    "for any other numpy array a use anp.take(a, i, axis=0), or a[i0, i1] -> "
    "anp.take(anp.take(a, i0, axis=0), i1, axis=0).)")


class JaxprTrace:
    """Records equations for one level of tracing.

    ``concrete`` traces know their input values and compute intermediates lazily,
    on demand, so Python control flow on values works.
    """

    def __init__(self, concrete, level, name="trace"):
        self.concrete = concrete
        self.level = level
        self.name = name
        self.eqns = []
        self.invars = []
        self.constvars = []        # lifted outer tracers and array constants
        self.const_values = []
        self._lifted = {}          # id(outer tracer or array) -> Var
        self._lifted_keep = []     # keep lifted objects alive so ids stay unique
        self.values = {}           # Var -> concrete value (concrete mode, lazily filled)
        self.producer = {}         # Var -> Eqn (concrete mode)
        self.closed = False
        self.eager = 0             # > 0: small values are computed as they are recorded
        self.wrt = _NO_VARS        # invars being differentiated (grad, jvp, jacobians, jet)
        self.outer = None          # Var -> the outer tracer it stands for (lazily a dict)
        self._free = None          # Vars known to carry no derivative (carries_derivative)

    def value_now(self, e):
        """Compute ``e``'s outputs now when its inputs' values are at hand and it is cheap
        (small outputs, no sub-programs): inside a loop on values (``lax.while_loop`` under
        ``grad``), whose predicate needs every step's values, so the lazy walk of
        :meth:`value_of` finds them at once. Otherwise (or if the operation raises) the
        values stay lazy: the error, if any, comes when the value is needed."""
        prim = e.primitive
        if prim.call_like:
            return
        for o in e.outvars:
            shape = o.aval.shape
            if shape and math.prod(shape) > _EAGER_MAX_SIZE:
                return
        values = self.values
        ins = []
        for u in e.invars:
            if u.__class__ is Literal:
                ins.append(u.val)
                continue
            x = values.get(u, _MISSING)
            if x is _MISSING or x.__class__ is _LazyOuter:
                return
            ins.append(x)
        try:
            outs = prim.impl(*ins, **e.params)
        except Exception:
            return
        if prim.multiple_results:
            for o, ov in zip(outs, e.outvars):
                values[ov] = o
        else:
            values[e.outvars[0]] = outs

    def new_arg(self, aval, value=None):
        """A new input variable of ``aval`` (holding ``value`` when the trace is concrete), as a
        tracer."""
        v = Var(aval)
        self.invars.append(v)
        if self.concrete:
            self.values[v] = value
            if value.__class__ is _LazyOuter:
                self._note_outer(v, value.tracer)
        return Tracer(self, v)

    def _note_outer(self, v, tracer):
        if self.outer is None:
            self.outer = {}
        self.outer[v] = tracer

    def carries_derivative(self, var):
        """Whether ``var``'s value depends on an input being differentiated (``wrt``, or an
        outer tracer that carries a derivative of its own trace) through operations whose
        derivative is not zero everywhere: converting it to a constant would drop that
        derivative. Integer and boolean values carry none. Abstract traces answer False (their
        values cannot be converted at all, and say so). Walks the producers once per question;
        what a walk finds derivative-free is remembered."""
        if not self.concrete:
            return False
        free = self._free
        if free is None:
            free = self._free = set()
        wrt, producer, outer = self.wrt, self.producer, self.outer or {}
        seen, stack = set(), [var]
        while stack:
            v = stack.pop()
            if v.__class__ is Literal or v in seen or v in free:
                continue
            seen.add(v)
            if v.aval.dtype.kind not in "fc":
                continue
            if v in wrt:
                return True
            e = producer.get(v)
            if e is not None:
                zero = e.primitive.zero_derivative
                if not (zero is True or (zero and zero(e))):
                    stack.extend(e.invars)
                continue
            t = outer.get(v)
            if t is not None and not t._trace.closed and t._trace.carries_derivative(t.ivar):
                return True
        free |= seen
        return False

    def lift(self, x, literal=True):
        """A Var of this trace standing for ``x`` (an outer tracer or a constant); a 0-d
        constant is a Literal unless ``literal`` is false."""
        if isinstance(x, Tracer) and x._trace is self:
            return x.ivar
        if not isinstance(x, Tracer):
            if literal and (x.ndim if isinstance(x, np.ndarray) else np.ndim(x)) == 0:
                return Literal(x)
            if type(x) is TableView:
                x = plain_array(x)        # the user's array is the constant, not our view
        key = id(x)
        v = self._lifted.get(key)
        if v is None:
            if isinstance(x, Tracer):
                aval = x.aval
            else:
                aval = get_aval(x).strip_weak()
            v = Var(aval)
            self._lifted[key] = v
            self._lifted_keep.append(x)
            self.constvars.append(v)
            self.const_values.append(x)
            if self.concrete:
                if isinstance(x, Tracer):
                    self.values[v] = _LazyOuter(x)
                    self._note_outer(v, x)
                else:
                    self.values[v] = x
        return v

    def add_eqn(self, prim, invars, out_avals, params, source):
        """Record ``outvars = prim[params](invars)`` (new variables of ``out_avals``) with the
        user's ``source``; returns the tracers of the outputs."""
        outvars = [Var(a) for a in out_avals]
        e = Eqn(prim, invars, outvars, params, source)
        self.eqns.append(e)
        if self.concrete:
            for v in outvars:
                self.producer[v] = e
            if self.eager:
                self.value_now(e)
        return [Tracer(self, v) for v in outvars]

    # -- concrete values -----------------------------------------------------
    def force(self, tracer, what):
        """The concrete value of ``tracer``, or ``ConcretizationError`` naming ``what`` needed it
        when the trace is abstract (under ``jit``)."""
        self._check_alive(tracer)
        if not self.concrete:
            raise ConcretizationError(
                f"a traced value with only a shape and dtype ({tracer.aval.str_short()}) was "
                f"used as {what}, which needs a concrete value. Under jit values are abstract: "
                f"use ad.lax.cond / ad.lax.while_loop / anp.where for control flow on values, "
                f"or pass the argument via static_argnums.", source=user_source())
        return self.value_of(tracer.ivar)

    def can_force(self, var):
        """Whether :meth:`value_of` can compute ``var`` here: every outer tracer its value
        reads is itself known, which fails when this concrete trace (``grad``, ``jvp``)
        sits inside an abstract one (``jit``, ``vmap``) and ``var`` depends on that one's
        tracers. Asks without computing anything (a loop on values asks before each step)."""
        if not self.concrete or self.closed:
            return False
        values, producer = self.values, self.producer
        seen, stack = set(), [var]
        while stack:
            v = stack.pop()
            if v.__class__ is Literal or v in seen:
                continue
            seen.add(v)
            val = values.get(v, _MISSING)
            if val is _MISSING:
                stack.extend(producer[v].invars)
            elif val.__class__ is _LazyOuter:
                t = val.tracer
                if not t._trace.can_force(t.ivar):
                    return False
        return True

    def value_of(self, var):
        """The concrete value of variable ``var``, computed on demand from the recorded equations."""
        if var.__class__ is Literal:
            return var.val
        values = self.values
        val = values.get(var, _MISSING)
        if val is not _MISSING and val.__class__ is not _LazyOuter:
            return val
        # a depth-first walk to the values already known: each equation's operands are
        # looked up once per visit (control flow on values forces one or two new equations
        # per loop step, so this runs once per step of a Python loop under grad)
        producer = self.producer
        stack = [var]
        while stack:
            v = stack[-1]
            val = values.get(v, _MISSING)
            if val is not _MISSING:
                if val.__class__ is _LazyOuter:
                    values[v] = val.get()
                stack.pop()
                continue
            e = producer[v]
            ins, missing = [], None
            for u in e.invars:
                if u.__class__ is Literal:
                    ins.append(u.val)
                    continue
                x = values.get(u, _MISSING)
                if x is _MISSING:
                    if missing is None:
                        missing = []
                    missing.append(u)
                    continue
                if x.__class__ is _LazyOuter:
                    x = values[u] = x.get()
                ins.append(x)
            if missing is not None:
                stack.extend(missing)
                continue
            outs = e.primitive.impl(*ins, **e.params)
            if e.primitive.multiple_results:
                for o, ov in zip(outs, e.outvars):
                    values[ov] = o
            else:
                values[e.outvars[0]] = outs
            stack.pop()
        return values[var]

    def _check_alive(self, tracer):
        if self.closed:
            raise TracerLeakError(
                f"a traced value ({tracer.aval.str_short()}) escaped the transformed function "
                f"it belongs to ({self.name}) and was used after that trace ended, e.g. stored "
                f"in a global or a list. Return it from the function instead.",
                source=user_source())

    def to_jaxpr(self, out_tracers_or_vals):
        """``(jaxpr, const_values)``: the recorded program with these outputs (tracers or values)."""
        outvars = [self.lift(x) for x in out_tracers_or_vals]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return jaxpr, list(self.const_values)


_MISSING = object()
_NO_VARS = frozenset()
_EAGER_MAX_SIZE = 256          # JaxprTrace.value_now: outputs up to this many elements


class _LazyOuter:
    """The concrete value of an outer tracer, fetched only if needed."""

    __slots__ = ("tracer",)

    def __init__(self, tracer):
        self.tracer = tracer

    def get(self):
        return self.tracer._trace.force(self.tracer, "a value")


def current_trace():
    """The innermost active trace, or ``None`` outside every transform."""
    st = trace_state.stack
    return st[-1] if st else None


def staged(f):
    """``f`` run so that even operations on traced values it closes over are recorded in
    the innermost trace (the body being traced), not in the trace those values belong to:
    what a body whose operations must stay inside it needs (a checkpointed function, whose
    closed-over results would otherwise be saved as its inputs; a ``cond`` branch, whose
    closed-over operations would otherwise run, and be differentiated, whichever branch
    is taken)."""
    def run(*args, **kwargs):
        prev = trace_state.dynamic
        trace_state.dynamic = current_trace()
        try:
            return f(*args, **kwargs)
        finally:
            trace_state.dynamic = prev
    return run


class new_trace:
    """Context manager pushing a fresh trace; concrete when ``concrete`` is true."""

    def __init__(self, concrete, name="trace"):
        self.concrete = concrete
        self.name = name

    def __enter__(self):
        st = trace_state.stack
        self.trace = JaxprTrace(self.concrete, len(st), self.name)
        st.append(self.trace)
        return self.trace

    def __exit__(self, *exc):
        st = trace_state.stack
        assert st and st[-1] is self.trace
        st.pop()
        self.trace.closed = True
        return False


# ----------------------------------------------------------------------------
# bind: the single entry point of every operation
# ----------------------------------------------------------------------------

def bind(prim, args, params):
    """Apply ``prim`` to ``args``: evaluated at once outside traces, recorded as an equation
    of the innermost trace otherwise."""
    # the hot path of tracing: every recorded equation passes here once
    trace = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if trace is None or t.level > trace.level:
                trace = t
    if trace is None:
        return _eager(prim, args, params)
    state = trace_state
    dyn = state.dynamic
    if dyn is not None and trace.level < dyn.level:
        trace = dyn   # ops on closed-over values stay inside the checkpointed body
    invars = []
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if t.closed:
                t._check_alive(a)
            invars.append(a.ivar if t is trace else trace.lift(a))
        elif isinstance(a, np.ndarray):
            invars.append(trace.lift(a) if a.ndim > 0 else Literal(a[()]))
        else:
            invars.append(Literal(a))
    src = state.source or user_source(2)
    try:
        out_avals = prim.abstract_eval(*[v.aval for v in invars], **params)
    except (ShapeError, DTypeError) as err:
        if err.source is None:
            raise type(err)(str(err), source=src) from None
        raise
    if not prim.multiple_results:
        if trace.__class__ is JaxprTrace:
            # JaxprTrace.add_eqn for one output, inlined (the tape overrides add_eqn)
            v = Var(out_avals)
            e = Eqn(prim, invars, (v,), params, src)
            trace.eqns.append(e)
            if trace.concrete:
                trace.producer[v] = e
                if trace.eager:
                    trace.value_now(e)
            out = Tracer(trace, v)
            if state.grad_enabled:
                return out
            return _no_grad(prim, [out])[0]
        out = trace.add_eqn(prim, invars, [out_avals], params, src)
        if not state.grad_enabled and trace.level >= 0:   # the tape (level -1) records nothing
            out = _no_grad(prim, out)
        return out[0]
    outs = trace.add_eqn(prim, invars, out_avals, params, src)
    if not state.grad_enabled and trace.level >= 0:
        outs = _no_grad(prim, outs)
    return outs


def _no_grad(prim, outs):
    # seed semantics: inside ad.no_grad() results carry no derivative
    if prim.name == "stop_gradient":
        return outs
    sg = primitives["stop_gradient"]
    return [bind(sg, (o,), {}) if o.aval.dtype.kind in "fc" else o for o in outs]





# set by autodiff.named_axes: a program (scan, cond, ...) on concrete operands whose body
# holds a collective over a named vmap axis in scope is recorded in that vmap's trace
_axis_program_hook = None


def _eager(prim, args, params):
    if prim.call_like and trace_state.axis_frames and _axis_program_hook is not None:
        out = _axis_program_hook(prim, args, params)
        if out is not None:
            return out
    vals = [a if isinstance(a, np.ndarray) else np.asarray(a) for a in args]
    with np.errstate(all="ignore"):   # discarded branches (where-tricks, batched cond) stay quiet, as when compiled
        out = prim.impl(*vals, **params)
    if config.debug_nans:      # inside an IR pass, name the line the equation came from
        check_nans(prim, out, trace_state.source)
    return out


def check_nans(prim, out, source=None):
    """Raise ``NaNError`` naming ``prim`` and ``source`` if ``out`` holds a NaN (``debug_nans``)."""
    outs = out if prim.multiple_results else [out]
    for o in outs:
        o = np.asarray(o)
        if o.dtype.kind in "fc" and np.isnan(o).any():
            raise NaNError(f"debug_nans: primitive {prim.name!r} produced NaN",
                           source=source or user_source())


# ----------------------------------------------------------------------------
# Tracing a Python function, evaluating a jaxpr
# ----------------------------------------------------------------------------

def trace_flat(fun, in_avals, concrete_values=None, name="trace", differentiated=False):
    """Trace ``fun(*flat_args) -> list of outputs`` into a ClosedJaxpr.

    With ``concrete_values`` (one per input; arrays or outer tracers) the trace is
    concrete. ``differentiated``: the inputs are what a derivative is taken with respect to
    (grad, jvp, the Jacobians, jet), so converting a value computed from them to a constant
    (``float(x)``) raises :class:`DerivativeLossError`; otherwise (checkpoint, custom rules)
    only values from outer differentiated tracers carry a derivative. Returns ``(closed_jaxpr, outs)``: outs as produced (for aux handling).
    Numpy arrays the traced user function closes over are indexable by traced values
    while it runs (see ``TableView``).
    """
    concrete = concrete_values is not None
    undo = swap_in_table_views(fun)
    try:
        return _trace_flat(fun, in_avals, concrete_values, concrete, name, differentiated)
    finally:
        if undo:
            restore_tables(undo)


def _trace_flat(fun, in_avals, concrete_values, concrete, name, differentiated=False):
    with new_trace(concrete, name) as trace:
        if concrete:
            args = [trace.new_arg(a, _LazyOuter(v) if isinstance(v, Tracer) else v)
                    for a, v in zip(in_avals, concrete_values)]
            if differentiated:
                trace.wrt = frozenset(a.ivar for a in args if a.aval.dtype.kind in "fc")
        else:
            args = [trace.new_arg(a) for a in in_avals]
        # a transform sees the no_grad regions inside ``fun``, not one around the call
        # (as torch.func.grad): with ad.no_grad(): ad.grad(f)(x) is still f's gradient
        enabled, trace_state.grad_enabled = trace_state.grad_enabled, True
        try:
            outs = fun(*args)
        finally:
            trace_state.grad_enabled = enabled
        outs = [full_lower_input(o) for o in outs]
        jaxpr, consts = trace.to_jaxpr(outs)
    return ClosedJaxpr(jaxpr, consts)


def hoist_consts(closed):
    """Constants of a traced jaxpr become its leading inputs: ``(ClosedJaxpr, consts)``.

    What a control-flow body needs: its sub-jaxpr has no constants, and the values it closes
    over (outer tracers, arrays) become leading operands of the equation."""
    j = closed.jaxpr
    if not j.constvars:
        return ClosedJaxpr(j, []), []
    return (ClosedJaxpr(Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), []),
            list(closed.consts))


def full_lower_input(x):
    """Normalize an output leaf of a traced function (numbers -> arrays)."""
    if isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return plain_array(x)
    if hasattr(x, "__autodiff_array__"):
        return x.__autodiff_array__()
    if isinstance(x, (bool, int, float, np.generic)):
        get_aval(x)
        return np.asarray(x)
    raise _bad_dtype(x)


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluate with ``bind``: concrete values compute, tracers record (inlining)."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for e in jaxpr.eqns:
        outs = bind(e.primitive, [read(v) for v in e.invars], e.params)
        if e.primitive.multiple_results:
            for v, o in zip(e.outvars, outs):
                env[v] = o
        else:
            env[e.outvars[0]] = outs
    return [read(v) for v in jaxpr.outvars]



install_evaluator(eval_jaxpr)     # ClosedJaxpr.__call__ (autodiff.ir)

def eval_closed(closed, *args):
    """Evaluate a ClosedJaxpr on ``args`` (its consts bound); returns the list of outputs."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def is_concrete(x):
    """True when ``x``'s value is available (a numpy value or a concrete tracer)."""
    if isinstance(x, Tracer):
        return x._trace.concrete and (x._trace.closed is False)
    return True


def concrete_or_error(x, what="a concrete value"):
    """The concrete value of ``x``, or ``ConcretizationError`` saying ``what`` needed it."""
    if isinstance(x, Tracer):
        return x.concrete_value(what)
    return x


def new_jaxpr_like(jaxpr, eqns=None, invars=None, outvars=None, constvars=None):
    """A copy of ``jaxpr`` with the given parts replaced."""
    return Jaxpr(jaxpr.constvars if constvars is None else constvars,
                 jaxpr.invars if invars is None else invars,
                 jaxpr.outvars if outvars is None else outvars,
                 jaxpr.eqns if eqns is None else eqns)

