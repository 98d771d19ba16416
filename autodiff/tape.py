"""The seed's tape API: ``Variable``, ``backward()``, ``no_grad``, custom ``Function`` s.

Imperative reverse mode on the library's own IR. Operations on a
:class:`Variable` are ``bind`` calls like any other: they record jaxpr equations
on a *tape*, a concrete :class:`~autodiff.core.JaxprTrace` that is never pushed on
the trace stack and sits at a level below every functional transform (so
``ad.grad`` of code touching Variables nests inside it, and its result is
recorded on the tape). Values are computed lazily, on demand (``float(y)``,
``y.numpy()``, ``if y > 0:``), so a training step usually runs its forward pass
once, inside ``backward()``.

``y.backward()`` collects the equations ``y`` depends on into a jaxpr (inputs: the
leaves that require grad, plus constants), applies the library's reverse mode to
it (``transforms.reverse``: jvp → partial evaluation → transpose), runs the result
and accumulates gradients into ``x.grad``. The transformed program is cached by
the recorded jaxpr's structural key, so running the same model code again with
the same shapes reuses it (the seed's graph cache; :func:`cache_info`), compiled
with ``ad.jit`` inside :func:`jit_backward`.

>>> import numpy as np, autodiff as ad
>>> x = ad.Variable(np.array([2.0, 3.0]))
>>> w = ad.Variable(np.array([1.0, 2.0]))
>>> z = (x * w).sum()
>>> z.backward()
>>> x.grad, w.grad
(array([1., 2.]), array([2., 3.]))

Memory: a Variable's death releases its value; equations no live Variable
depends on are swept from the tape periodically, so a long loop does not grow it.

This module holds the recording (grad modes, :class:`Tape`, :class:`Variable`);
``backward()`` and the program cache are :mod:`autodiff.tape_backward`, custom Functions
:mod:`autodiff.tape_function`; all their public names are ``autodiff.tape``'s. Within the
package, :func:`wrap_variable` (a Variable for a tape variable) and :func:`readonly_array`
serve ``tape_backward``.
"""
import functools
import threading
import weakref

import numpy as np

from . import primitives as P
from .config import config
from .core import (Eqn, JaxprTrace, Literal, ShapedArray, Tracer, Var,
                   check_nans, get_aval, trace_state,
                   user_source)
from .errors import DerivativeLossError, DTypeError, ShapeError, TapeError
from .numpy import _base as _anp_base

__all__ = ["Variable", "Function", "FunctionCtx", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "backward", "grad", "current_tape", "recorded_jaxpr", "cache_info", "clear_cache",
           "jit_backward"]

_MISSING = object()
_config_values = config._values      # read on the hot path without Config.__getattr__


# ----------------------------------------------------------------------------
# grad mode: no_grad / enable_grad (context managers and decorators)
# ----------------------------------------------------------------------------

def is_grad_enabled():
    """Whether operations on Variables are recorded (``False`` inside :func:`no_grad`).

    >>> import autodiff as ad
    >>> with ad.no_grad():
    ...     print(ad.is_grad_enabled())
    False
    """
    return trace_state.grad_enabled


class _GradMode:
    """Sets grad mode on entry, restores it on exit; also a function decorator."""

    def __init__(self, enabled):
        self.enabled = bool(enabled)
        self._prev = []

    def __enter__(self):
        self._prev.append(trace_state.grad_enabled)
        trace_state.grad_enabled = self.enabled
        return self

    def __exit__(self, *exc):
        trace_state.grad_enabled = self._prev.pop()
        return False

    def __call__(self, fun):
        enabled = self.enabled

        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with _GradMode(enabled):
                return fun(*args, **kwargs)
        return wrapped


def no_grad(fun=None):
    """Nothing inside is recorded on the tape; in functional transforms it acts as
    ``stop_gradient``. A context manager and a decorator (``@ad.no_grad()`` or
    ``@ad.no_grad``); :func:`enable_grad` nested inside records again.

    >>> import numpy as np, autodiff as ad
    >>> x = ad.Variable(np.array([1.0, 2.0]))
    >>> with ad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> ad.grad(lambda v: v * ad.no_grad()(lambda u: u * u)(v))(3.0)   # d/dv v·sg(v²)
    np.float64(9.0)
    """
    if fun is not None and callable(fun):
        return _GradMode(False)(fun)
    return _GradMode(False)


def enable_grad(fun=None):
    """Record again (inside :func:`no_grad`). A context manager and a decorator.

    >>> import numpy as np, autodiff as ad
    >>> x = ad.Variable(np.array([1.0]))
    >>> with ad.no_grad():
    ...     with ad.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """
    if fun is not None and callable(fun):
        return _GradMode(True)(fun)
    return _GradMode(True)


class set_grad_enabled(_GradMode):
    """Set grad mode now (``set_grad_enabled(False)``) or for a ``with`` block.

    >>> import autodiff as ad
    >>> with ad.tape.set_grad_enabled(False):
    ...     ad.is_grad_enabled()
    False
    >>> ad.is_grad_enabled()
    True
    """

    def __init__(self, mode):
        super().__init__(mode)
        self._prev.append(trace_state.grad_enabled)
        trace_state.grad_enabled = self.enabled

    def __enter__(self):
        return self


# ----------------------------------------------------------------------------
# The tape: a concrete trace below every transform, with lazy values
# ----------------------------------------------------------------------------

_GC_MIN = 1024      # operations between sweeps of unreachable equations (at least)


class Tape(JaxprTrace):
    """The recording of one thread's Variable operations.

    ``eqns``: recorded equations in program order. A ``Var`` is *in the graph* when
    it is a leaf that requires grad or the output of a recorded equation;
    operations none of whose inputs are in the graph (or done under
    :func:`no_grad`) are computed at once and not recorded.
    """

    def __init__(self):
        super().__init__(concrete=True, level=-1, name="tape")
        self.graph = set()        # Vars that carry gradient (leaves requiring grad, recorded outs)
        self.leaf_owner = {}      # leaf Var -> weakref(Variable) whose .grad it feeds
        self.live = {}            # Var -> number of live Variable objects holding it
        self.pinned = set()       # producer-less Vars (leaves, constants) read by recorded eqns
        self.freed = set()        # Eqns consumed by a backward() without retain_graph
        self._ops = 0             # operations since the last sweep
        self._gc_at = _GC_MIN
        self._kept = 0            # equations kept by the last sweep

    size = property(lambda self: len(self.eqns), doc="number of recorded equations")

    def __repr__(self):
        return (f"Tape({len(self.eqns)} equations, {len(self.live)} live variables, "
                f"{len(self.values)} values)")

    # -- variables ------------------------------------------------------------
    def new_leaf(self, value, requires_grad):
        v = Var(ShapedArray(value.shape, value.dtype))
        self.values[v] = value
        if requires_grad:
            self.graph.add(v)
        return v

    def carries_derivative(self, var):
        """A leaf that requires grad, or a recorded value whose graph no ``backward()`` has
        consumed yet, while gradients are recorded: ``float(v)`` of it would drop the gradient
        (``v.item()`` and ``v.detach()`` read the value on purpose). After
        ``loss.backward()`` (without ``retain_graph``) no backward pass goes through
        ``loss`` again, so ``float(loss)`` (the usual log line) drops nothing."""
        if not (trace_state.grad_enabled and var in self.graph
                and var.aval.dtype.kind in "fc"):
            return False
        e = self.producer.get(var)
        return e is None or e not in self.freed

    def const_var(self, value):
        v = Var(get_aval(value).strip_weak())
        self.values[v] = value
        return v

    def new_arg(self, aval, value=None):      # JaxprTrace API: a leaf without grad
        return wrap_variable(self, self.const_var(np.asarray(value, aval.dtype)))

    def lift(self, x):
        if isinstance(x, Tracer):
            if x._trace is self:
                return x.ivar
            x = x._trace.force(x, "a value")      # a Variable of another thread's tape
        if not isinstance(x, np.ndarray) and np.ndim(x) == 0:
            return Literal(x)
        if x.flags.writeable:
            # values are computed lazily: snapshot arrays the caller may mutate in place
            x = np.array(x, copy=True)
        return self.const_var(x)

    # -- recording ----------------------------------------------------------------
    def add_eqn(self, prim, invars, out_avals, params, source):
        graph = self.graph
        self._ops += 1
        if self._ops >= self._gc_at:
            self.collect(invars)
        if trace_state.grad_enabled:
            for v in invars:
                if v in graph:
                    return self._record(prim, invars, out_avals, params, source)
        elif prim is P.stop_gradient_p and type(invars[0]) is Var and invars[0] not in graph:
            return [wrap_variable(self, invars[0])]     # bind's no_grad wrapping of an eager result
        return self._eager(prim, invars, out_avals, params, source)

    def _record(self, prim, invars, out_avals, params, source):
        producer, pinned = self.producer, self.pinned
        for u in invars:
            if type(u) is Var and u not in producer:
                pinned.add(u)
        outvars = [Var(a) for a in out_avals]
        e = Eqn(prim, invars, outvars, params, source)
        self.eqns.append(e)
        graph = self.graph
        outs = []
        for v in outvars:
            producer[v] = e
            graph.add(v)
            outs.append(wrap_variable(self, v))
        return outs

    def _eager(self, prim, invars, out_avals, params, source):
        values = self.values
        ins = [u.val if type(u) is Literal else
               values[u] if u in values else self.value_of(u) for u in invars]
        out = prim.impl(*ins, **params)
        if _config_values["debug_nans"]:
            check_nans(prim, out, source)
        outs = out if prim.multiple_results else [out]
        res = []
        for o, a in zip(outs, out_avals):
            v = Var(a)
            values[v] = np.asarray(o, a.dtype) if not isinstance(o, np.ndarray) else o
            res.append(wrap_variable(self, v))
        # constants lifted just for this operation are not needed any more
        live, pinned, producer = self.live, self.pinned, self.producer
        for u in invars:
            if type(u) is Var and u not in live and u not in pinned and u not in producer:
                values.pop(u, None)
        return res

    # -- values -----------------------------------------------------------------
    def value_of(self, var):
        """The value of ``var``, computing what it depends on; only ``var``'s is kept."""
        if isinstance(var, Literal):
            return var.val
        values = self.values
        x = values.get(var, _MISSING)
        if x is not _MISSING:
            return x
        producer = self.producer
        env = {}
        stack = [var]
        debug = _config_values["debug_nans"]
        while stack:
            v = stack[-1]
            if v in env or v in values:
                stack.pop()
                continue
            e = producer.get(v)
            if e is None:
                raise TapeError(f"the value of a variable ({v.aval}) is no longer available on "
                                f"the tape", source=user_source())
            missing = [u for u in e.invars
                       if type(u) is Var and u not in env and u not in values]
            if missing:
                stack.extend(missing)
                continue
            ins = [u.val if isinstance(u, Literal) else (env[u] if u in env else values[u])
                   for u in e.invars]
            out = e.primitive.impl(*ins, **e.params)
            if debug:
                check_nans(e.primitive, out, e.source)
            if e.primitive.multiple_results:
                env.update(zip(e.outvars, out))
            else:
                env[e.outvars[0]] = out
            stack.pop()
        x = env[var]
        if not isinstance(x, np.ndarray):
            x = np.asarray(x, var.aval.dtype)
        values[var] = x
        return x

    def release(self, v):
        """The last Variable holding ``v`` died: drop its value unless an equation needs it."""
        if v in self.producer or v not in self.pinned:
            self.values.pop(v, None)

    # -- memory -------------------------------------------------------------------
    def collect(self, extra_roots=()):
        """Sweep equations no live Variable depends on (mark from live Vars)."""
        producer = self.producer
        roots = [v for v in self.live]
        roots.extend(v for v in extra_roots if type(v) is Var)
        keep_eqns = set()
        keep_vars = set(roots)
        stack = list(roots)
        while stack:
            v = stack.pop()
            e = producer.get(v)
            if e is None or e in keep_eqns:
                continue
            keep_eqns.add(e)
            for u in e.invars:
                if type(u) is Var:
                    keep_vars.add(u)
                    stack.append(u)
            keep_vars.update(e.outvars)
        self.eqns = [e for e in self.eqns if e in keep_eqns]
        self.producer = {v: e for v, e in producer.items() if e in keep_eqns}
        self.values = {v: x for v, x in self.values.items() if v in keep_vars}
        self.graph = {v for v in self.graph if v in keep_vars}
        self.pinned = {v for v in self.pinned if v in keep_vars}
        self.freed = {e for e in self.freed if e in keep_eqns}
        self.leaf_owner = {v: r for v, r in self.leaf_owner.items()
                           if v in keep_vars and r() is not None}
        self._ops = 0
        self._kept = len(self.eqns)
        self._gc_at = max(_GC_MIN, 2 * self._kept)


_tapes = threading.local()


def current_tape():
    """This thread's tape (where new Variables record).

    >>> import numpy as np, autodiff as ad
    >>> t = ad.tape.current_tape()
    >>> n = t.size
    >>> with ad.no_grad():
    ...     _ = ad.Variable(np.ones(2)) * 3.0
    >>> t.size == n
    True
    """
    t = getattr(_tapes, "tape", None)
    if t is None:
        t = _tapes.tape = Tape()
    return t


# ----------------------------------------------------------------------------
# Variable
# ----------------------------------------------------------------------------

def wrap_variable(tape, var, leaf=False):
    """A Variable reading tape variable ``var`` (a leaf if ``leaf``); counts as a live use."""
    t = Variable.__new__(Variable)
    t._trace = tape
    t.ivar = var
    t.aval = var.aval
    t.grad = None
    t._leaf = leaf
    live = tape.live
    live[var] = live.get(var, 0) + 1
    return t


def readonly_array(x):
    """``x``, or a read-only view of it when it is a writeable numpy array."""
    if isinstance(x, np.ndarray) and x.flags.writeable:
        x = x.view()
        x.flags.writeable = False
    return x


class Variable(Tracer):
    """An array that records the operations done on it, for ``backward()``.

    ``Variable(data, requires_grad=None)``: ``data`` is copied; float arrays require
    grad by default, others cannot. Variables take every operator, indexing,
    method and ``autodiff.numpy`` function an array does, and are accepted by the
    functional transforms (``ad.grad(f)(x)`` is then recorded too).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = ad.Variable(np.array([0.0, 1.0]))
    >>> y = anp.sum(anp.exp(x) * x)
    >>> y.backward()
    >>> x.grad                                   # (1 + x) e^x
    array([1.        , 5.43656366])
    >>> y.is_leaf, x.is_leaf, y.item() == np.e
    (False, True, True)
    """

    __slots__ = ("grad", "_leaf")
    __hash__ = object.__hash__          # identity, as for torch tensors (== is elementwise)

    def __init__(self, data, requires_grad=None):
        if isinstance(data, Variable):
            data = data.numpy()
        elif isinstance(data, Tracer):
            raise TypeError("Variable() got a traced value of a functional transform; "
                            "Variables wrap concrete arrays")
        arr = np.array(data, copy=True)
        get_aval(arr)                                   # DTypeError for strings, objects
        float_ = arr.dtype.kind in "fc"                 # float or complex
        if requires_grad is None:
            requires_grad = float_
        elif requires_grad and not float_:
            raise DTypeError(f"only float (or complex) Variables can require gradients, got "
                             f"dtype {arr.dtype}; pass requires_grad=False or cast to float",
                             source=user_source())
        arr.flags.writeable = False
        tape = current_tape()
        v = tape.new_leaf(arr, bool(requires_grad))
        self._trace = tape
        self.ivar = v
        self.aval = v.aval
        self.grad = None
        self._leaf = True
        tape.live[v] = tape.live.get(v, 0) + 1
        if requires_grad:
            tape.leaf_owner[v] = weakref.ref(self)

    def __del__(self):
        try:
            live, v = self._trace.live, self.ivar
            n = live.get(v, 0)
            if n <= 1:
                live.pop(v, None)
                self._trace.release(v)
            else:
                live[v] = n - 1
        except Exception:       # interpreter shutdown or a half-built object
            pass

    # -- flags ----------------------------------------------------------------
    @property
    def requires_grad(self):
        """True when gradients flow to this Variable (a float or complex leaf or a recorded
        result)."""
        return self.ivar in self._trace.graph and self.aval.dtype.kind in "fc"

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, flag=True):
        """Set ``requires_grad`` of a leaf; returns ``self``."""
        flag = bool(flag)
        if flag == self.requires_grad:
            return self
        if not self.is_leaf:
            raise TapeError("requires_grad can only be changed on leaf Variables; use "
                            "y.detach() to cut a computed Variable from the graph",
                            source=user_source())
        if flag and self.aval.dtype.kind not in "fc":
            raise DTypeError(f"only float (or complex) Variables can require gradients, got dtype "
                             f"{self.aval.dtype}", source=user_source())
        self._rebind(self._value(), flag)
        return self

    @property
    def is_leaf(self):
        """Created by the user (or does not require grad): ``.grad`` is filled for leaves."""
        return self._leaf or not self.requires_grad

    @property
    def grad_fn(self):
        """Name of the primitive that produced this Variable (``None`` for leaves)."""
        e = self._trace.producer.get(self.ivar)
        return None if e is None or self._leaf else e.primitive.name

    # -- values -------------------------------------------------------------------
    def _value(self):
        return self._trace.value_of(self.ivar)

    def numpy(self):
        """The value as a (read-only) numpy array; computes it if needed."""
        return readonly_array(self._value())

    def item(self):
        """The value of a one-element Variable as a Python number (as torch's ``.item()``: an
        explicit read of the value, for logging; ``float(v)`` of a Variable that requires grad
        raises instead, since the number would silently drop the gradient)."""
        return self._value().item()

    def tolist(self):
        """The value as nested Python lists (an explicit read, as :meth:`item`)."""
        return self._value().tolist()

    @property
    def data(self):
        """The value as a read-only numpy array; assign a new array to replace a leaf's."""
        return self.numpy()

    @data.setter
    def data(self, value):
        arr = np.array(value.numpy() if isinstance(value, Variable) else value, copy=True)
        if arr.shape != self.aval.shape:
            raise ShapeError(f"cannot set data of shape {arr.shape} on a Variable of shape "
                             f"{self.aval.shape}", source=user_source())
        self._set_value(arr)

    def _set_value(self, arr):
        """Replace the value (leaves only). Already recorded equations keep the old one."""
        if not self._leaf and self.requires_grad:
            raise TapeError("only a leaf Variable's data can be replaced", source=user_source())
        arr = np.asarray(arr, self.aval.dtype)
        if arr.flags.writeable:
            arr.flags.writeable = False
        self._rebind(arr, self.requires_grad)

    def _rebind(self, arr, requires_grad):
        tape = current_tape()
        old, old_tape = self.ivar, self._trace
        v = tape.new_leaf(arr, requires_grad)
        tape.live[v] = tape.live.get(v, 0) + 1
        if requires_grad:
            tape.leaf_owner[v] = weakref.ref(self)
        self._trace, self.ivar, self._leaf = tape, v, True
        n = old_tape.live.get(old, 0)
        if n <= 1:
            old_tape.live.pop(old, None)
            old_tape.release(old)
        else:
            old_tape.live[old] = n - 1

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise TapeError("only leaf Variables can be deep-copied (a computed Variable "
                            "belongs to its graph); copy y.detach() instead",
                            source=user_source())
        new = Variable(self._value(), requires_grad=self.requires_grad)
        new.grad = None if self.grad is None else np.array(self.grad, copy=True)
        memo[id(self)] = new
        return new

    def __reduce__(self):
        if not self.is_leaf:
            raise TapeError("only leaf Variables can be pickled; pickle y.detach() instead",
                            source=user_source())
        return (_rebuild_variable, (np.array(self._value()), self.requires_grad, self.grad))

    def __array__(self, dtype=None, copy=None):
        if self.requires_grad and trace_state.grad_enabled:
            raise DerivativeLossError(
                "a Variable that requires grad was converted to a numpy array (np.asarray, "
                "np.float64 or a numpy function without autodiff support), which would "
                "silently drop its gradient. Use v.numpy(), v.item() or v.detach() for the "
                "value, or the autodiff.numpy function.", source=user_source())
        x = self._value()
        return x.astype(dtype) if dtype is not None else x

    def __repr__(self):
        try:
            body = np.array2string(self._value(), separator=", ", prefix="Variable(")
        except Exception as e:          # never let repr fail
            body = f"<{self.aval.str_short()}: {type(e).__name__}>"
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Variable({body}{flag})"

    __str__ = __repr__

    # -- graph --------------------------------------------------------------------
    def detach(self):
        """A new Variable with this value and no gradient history (the seed's ``detach``)."""
        tape = current_tape()
        return wrap_variable(tape, tape.const_var(readonly_array(self._value())), leaf=True)

    def zero_grad(self):
        """Reset the accumulated gradient to zeros (kept ``None`` if none yet)."""
        if self.grad is not None:
            self.grad = np.zeros_like(self.grad)

    def backward(self, grad=None, retain_graph=None, *, gradient=None, inputs=None):
        """Accumulate d(self)/d(leaf) · ``grad`` into ``leaf.grad`` for every leaf.

        ``grad`` may be omitted for single-element outputs. Without
        ``retain_graph=True`` the recorded graph is consumed: a second backward
        through it raises :class:`~autodiff.errors.TapeError`. ``inputs`` limits the
        leaves that receive gradients.
        """
        if gradient is not None:
            grad = gradient
        backward([self], None if grad is None else [grad], retain_graph=retain_graph,
                 inputs=inputs)

    # -- in-place updates of leaves (``w -= lr * w.grad`` under no_grad) ----------
    def _inplace(self, op, other):
        if not self.is_leaf:
            return op(self, other)              # a computed Variable: rebinding is enough
        if self.requires_grad and trace_state.grad_enabled:
            raise TapeError("a leaf Variable that requires grad is used in an in-place "
                            "operation; do the update inside `with ad.no_grad():`",
                            source=user_source())
        with _GradMode(False):
            new = op(self, other)
        val = new._value() if isinstance(new, Tracer) else np.asarray(new)
        if val.shape != self.aval.shape:
            raise ShapeError(f"in-place update would change the shape {self.aval.shape} to "
                             f"{val.shape}", source=user_source())
        self._set_value(np.array(val, self.aval.dtype))
        return self

    def __iadd__(self, other):
        return self._inplace(lambda a, b: a + b, other)

    def __isub__(self, other):
        return self._inplace(lambda a, b: a - b, other)

    def __imul__(self, other):
        return self._inplace(lambda a, b: a * b, other)

    def __itruediv__(self, other):
        return self._inplace(lambda a, b: a / b, other)


def _rebuild_variable(value, requires_grad, grad):
    v = Variable(value, requires_grad=requires_grad)
    v.grad = grad
    return v


# Variables take the operators' fast path (no promotion or broadcasting needed) as plain
# tracers do: ``y * 1.01`` on a Variable binds ``mul`` directly.
_anp_base.FAST_TRACED_TYPES.add(Variable)


# backward() and custom Functions live in their own modules (backward() is built on the
# classes above, which it imports); ``autodiff.tape`` names them all
from .tape_backward import (backward, cache_info, clear_cache, grad, jit_backward,  # noqa: E402
                            recorded_jaxpr)
from .tape_function import Function, FunctionCtx  # noqa: E402
