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
"""
import collections
import functools
import threading
import warnings
import weakref

import numpy as np

from . import primitives as P
from .cache import ProgramCache
from .config import config
from .core import (ClosedJaxpr, Eqn, Jaxpr, JaxprTrace, Literal, ShapedArray, Tracer, Var,
                   check_nans, eval_jaxpr, get_aval, is_inexact_dtype, trace_flat, trace_state,
                   user_source)
from .errors import DTypeError, ShapeError, TapeError

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

    def const_var(self, value):
        v = Var(get_aval(value).strip_weak())
        self.values[v] = value
        return v

    def new_arg(self, aval, value=None):      # JaxprTrace API: a leaf without grad
        return _wrap(self, self.const_var(np.asarray(value, aval.dtype)))

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
            return [_wrap(self, invars[0])]     # bind's no_grad wrapping of an eager result
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
            outs.append(_wrap(self, v))
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
            res.append(_wrap(self, v))
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

def _wrap(tape, var, leaf=False):
    t = Variable.__new__(Variable)
    t._trace = tape
    t.ivar = var
    t.aval = var.aval
    t.grad = None
    t._leaf = leaf
    live = tape.live
    live[var] = live.get(var, 0) + 1
    return t


def _readonly(x):
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
    >>> y.is_leaf, x.is_leaf, float(y) == np.e
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
        float_ = arr.dtype.kind == "f"
        if requires_grad is None:
            requires_grad = float_
        elif requires_grad and not float_:
            raise DTypeError(f"only float Variables can require gradients, got dtype "
                             f"{arr.dtype}; pass requires_grad=False or cast to float",
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
        """True when gradients flow to this Variable (a float leaf or a recorded result)."""
        return self.ivar in self._trace.graph and self.aval.dtype.kind == "f"

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
        if flag and self.aval.dtype.kind != "f":
            raise DTypeError(f"only float Variables can require gradients, got dtype "
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
        return _readonly(self._value())

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
            raise TypeError("a Variable that requires grad was converted to a numpy array "
                            "(np.asarray or a numpy function without autodiff support), which "
                            "would silently drop its gradient. Use v.numpy() or v.detach() "
                            "for the value, or the autodiff.numpy function.")
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
        return _wrap(tape, tape.const_var(_readonly(self._value())), leaf=True)

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


# ----------------------------------------------------------------------------
# backward: reverse mode over the recorded jaxpr, cached by its structure
# ----------------------------------------------------------------------------

CacheInfo = collections.namedtuple("CacheInfo", "hits misses size capacity")


# recorded graph's structure -> its backward program (autodiff.cache, listed as "tape")
_cache = ProgramCache("tape", "tape_cache_size")
_jit_mode = threading.local()


def cache_info():
    """Hits and misses of the backward-program cache (the seed's graph cache).

    >>> import numpy as np, autodiff as ad
    >>> ad.tape.clear_cache()
    >>> for _ in range(3):
    ...     x = ad.Variable(np.ones(3))
    ...     (x * x).sum().backward()
    >>> ad.tape.cache_info()[:3]                  # hits, misses, size
    (2, 1, 1)
    """
    return CacheInfo(_cache.hits, _cache.misses, len(_cache), _cache.capacity)


def clear_cache():
    """Empty the backward-program cache and reset its counters."""
    _cache.clear()


def jit_backward(fun=None, enabled=True):
    """Compile backward programs with ``ad.jit`` (a context manager and a decorator).

    Inside it, a cache miss traces *and compiles* the backward program; hits reuse
    the compiled code. Where ``ad.jit`` cannot compile a program it falls back to
    the interpreter with a warning.

    >>> import numpy as np, autodiff as ad
    >>> with ad.tape.jit_backward(enabled=False):
    ...     x = ad.Variable(np.ones(2))
    ...     (x * 3.0).sum().backward()
    >>> x.grad
    array([3., 3.])
    """
    if fun is not None and callable(fun):
        return _JitMode(enabled)(fun)
    return _JitMode(enabled)


class _JitMode:
    def __init__(self, enabled):
        self.enabled = bool(enabled)
        self._prev = []

    def __enter__(self):
        self._prev.append(getattr(_jit_mode, "on", False))
        _jit_mode.on = self.enabled
        return self

    def __exit__(self, *exc):
        _jit_mode.on = self._prev.pop()
        return False

    def __call__(self, fun):
        enabled = self.enabled

        @functools.wraps(fun)
        def wrapped(*args, **kwargs):
            with _JitMode(enabled):
                return fun(*args, **kwargs)
        return wrapped


def _collect_graph(tape, out_vars, wrt):
    """The recorded sub-program ``out_vars`` depend on, in topological order.

    Returns ``(eqns, const_vars, diff_vars)``: ``diff_vars`` are the inputs
    differentiated (``wrt``, or every live leaf requiring grad), ``const_vars``
    the other inputs. Raises when a consumed (freed) equation is reached.
    """
    producer, graph, owner, freed = tape.producer, tape.graph, tape.leaf_owner, tape.freed
    consts, diff, order = [], [], []
    seen_v, seen_e = set(), set()
    expand = {}                  # Var -> the eqn producing it that the walk expands
    stack = []

    def visit(u):
        seen_v.add(u)
        if wrt is not None:
            if u in wrt:
                diff.append(u)
                return
            pe = producer.get(u) if u in graph else None
        else:
            pe = producer.get(u)
            if pe is None:
                r = owner.get(u) if u in graph else None
                if r is not None and r() is not None:
                    diff.append(u)
                else:
                    consts.append(u)
                return
        if pe is None:
            consts.append(u)
        else:
            expand[u] = pe
            if pe not in seen_e:
                stack.append((pe, False))

    for v in reversed(out_vars):
        if v not in seen_v:
            visit(v)
    while stack:
        e, done = stack.pop()
        if done:
            order.append(e)
            continue
        if e in seen_e:
            continue
        if e in freed:
            raise TapeError(
                "trying to backward through the graph a second time: its recorded operations "
                "were consumed by an earlier backward(). Pass retain_graph=True to the first "
                f"backward() to keep them (this operation was recorded at {e.source})",
                source=user_source())
        seen_e.add(e)
        stack.append((e, True))
        for u in reversed(e.invars):
            if type(u) is Var:
                if u not in seen_v:
                    visit(u)
                elif u in expand and expand[u] not in seen_e:
                    # reached again before its producer was expanded (it is still
                    # lower on the stack): push it again so it is emitted before e
                    stack.append((expand[u], False))
    # inputs in creation order: readable, and stable for code run again (cache keys)
    consts.sort(key=_var_id)
    diff.sort(key=_var_id)
    return order, consts, diff


def _var_id(v):
    return v.id


def recorded_jaxpr(*outputs):
    """The recorded program the given Variables depend on, as a :class:`~autodiff.core.Jaxpr`.

    Its inputs are the constants it reads, then the leaves that require grad.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> x = ad.Variable(np.array([1.0, 2.0]))
    >>> print(ad.tape.recorded_jaxpr(anp.tanh(x * 2.0).sum()))
    { lambda ; a:f64[2]. let
        b:f64[2] = mul a 2.0:f64[]
        c:f64[2] = tanh b
        d:f64[] = reduce_sum[axes=(0,)] c
      in (d,) }
    """
    if not outputs:
        raise TypeError("recorded_jaxpr needs at least one Variable")
    tape = outputs[0]._trace
    out_vars = [y.ivar for y in outputs]
    old, tape.freed = tape.freed, set()
    try:
        order, consts, diff = _collect_graph(tape, out_vars, None)
    finally:
        tape.freed = old
    return Jaxpr((), consts + diff, out_vars, order)


def _vjp_program(jaxpr, n_const, n_diff, n_out):
    """``(consts, diff inputs, out cotangents) -> (outs, input cotangents)`` as a ClosedJaxpr."""
    from .transforms.reverse import backward, linearize_jaxpr
    n_in = n_const + n_diff
    lin = linearize_jaxpr(ClosedJaxpr(jaxpr, []), [False] * n_const + [True] * n_diff)

    def program(*args):
        res = eval_jaxpr(lin.known.jaxpr, lin.known.consts, *args[:n_in])
        outs, residuals = res[:n_out], res[n_out:]
        cts = backward(lin, residuals, args[n_in:])
        return list(outs) + [P.instantiate(c) for c in cts]

    avals = list(jaxpr.in_avals) + [a.strip_weak() for a in jaxpr.out_avals]
    return trace_flat(program, avals, name="tape_backward")


class _Entry:
    __slots__ = ("program", "run", "recorded", "jit_failed", "straight", "uses")

    def __init__(self, program, recorded):
        self.program = program
        self.recorded = recorded        # keeps params' functions alive: ids in keys stay unique
        self.run = None
        self.jit_failed = False
        self.straight = None            # the program as straight-line Python (second use on)
        self.uses = 0


def _runner(entry, use_jit):
    from .backends.interpreter import run_closed
    prog = entry.program
    if use_jit and not entry.jit_failed:
        if entry.run is None:
            from .jit import jit
            try:
                jitted = jit(lambda *a: eval_jaxpr(prog.jaxpr, prog.consts, *a))
            except NotImplementedError as e:
                _jit_fallback(entry, e)
            else:
                def run(args, jitted=jitted):
                    try:
                        return list(jitted(*args))
                    except NotImplementedError as e:
                        _jit_fallback(entry, e)
                        return run_closed(prog, args)
                entry.run = run
        if entry.run is not None:
            return entry.run
    # as the un-jitted grad path does: interpret the first use, then run the program as
    # generated straight-line code (no per-equation environment bookkeeping)
    if entry.straight is None:
        entry.uses += 1
        if entry.uses < 2:
            return lambda args: run_closed(prog, args)
        from .api import _StraightLine
        entry.straight = _StraightLine(prog)
    return entry.straight


def _jit_fallback(entry, err):
    entry.jit_failed = True
    entry.run = None
    warnings.warn(f"tape backward: ad.jit could not compile the backward program ({err}); "
                  f"using the interpreter", RuntimeWarning, stacklevel=4)


def _backward_core(outputs, grads, retain_graph, wrt_vars, create_graph=False):
    """Run the cached backward program; returns ``(diff_vars, cotangents, tape)``."""
    outputs = list(outputs)
    tape = None
    for y in outputs:
        if not isinstance(y, Variable):
            raise TypeError(f"backward: expected Variables, got {type(y).__name__}")
        if tape is None:
            tape = y._trace
        elif y._trace is not tape:
            raise TapeError("backward: the outputs were recorded on different tapes (threads)")
        if not y.requires_grad:
            raise TapeError(
                "backward: the output does not require grad (no Variable requiring grad went "
                "into it, it was computed under no_grad, or it was detached)",
                source=user_source(3))
    cts = []
    for i, y in enumerate(outputs):
        g = None if grads is None else grads[i]
        a = y.aval
        if g is None:
            if a.size != 1:
                raise TapeError(f"backward: grad can be implicitly created only for outputs "
                                f"with one element; this one has shape {a.shape}. Pass "
                                f"grad=ones of that shape (or reduce the output first)",
                                source=user_source(3))
            g = np.ones(a.shape, a.dtype)
        else:
            if isinstance(g, Variable):
                g = g if create_graph else g._value()
            elif not isinstance(g, Tracer):
                g = np.asarray(g, a.dtype)
            if P.shape_of(g) != a.shape:
                raise ShapeError(f"backward: grad of shape {P.shape_of(g)} for an output of "
                                 f"shape {a.shape}", source=user_source(3))
        cts.append(g)
    out_vars = [y.ivar for y in outputs]
    order, const_vars, diff_vars = _collect_graph(tape, out_vars, wrt_vars)
    jaxpr = Jaxpr((), const_vars + diff_vars, out_vars, order)
    use_jit = getattr(_jit_mode, "on", False) and not create_graph
    key = (jaxpr.key(), len(const_vars), use_jit)   # which inputs are differentiated
    entry = _cache.get(key)
    old = trace_state.grad_enabled
    trace_state.grad_enabled = True      # building the program must not see no_grad
    try:
        if entry is None:
            entry = _Entry(_vjp_program(jaxpr, len(const_vars), len(diff_vars), len(out_vars)),
                           jaxpr)
            _cache.put(key, entry)
        vals = [tape.value_of(v) for v in const_vars]
        if create_graph:
            diff_args = [_wrap(tape, v) for v in diff_vars]
            res = eval_jaxpr(entry.program.jaxpr, entry.program.consts,
                             *(vals + diff_args + cts))
        else:
            vals += [tape.value_of(v) for v in diff_vars]
            res = _runner(entry, use_jit)(vals + [np.asarray(c) for c in cts])
    finally:
        trace_state.grad_enabled = old
    n_out = len(out_vars)
    if not create_graph:
        for v, o in zip(out_vars, res[:n_out]):
            if v not in tape.values:
                tape.values[v] = _readonly(np.asarray(o, v.aval.dtype))
    if not (create_graph if retain_graph is None else retain_graph):
        tape.freed.update(order)
        # the previous step's graph is usually garbage by now: sweep (amortized: once
        # the tape has doubled since the last sweep), so a training loop holds a few
        # steps' equations and constants at most
        if len(tape.eqns) >= 2 * tape._kept:
            tape.collect()
    return diff_vars, res[n_out:], tape


def backward(tensors, grad_tensors=None, retain_graph=None, inputs=None):
    """Accumulate gradients of several outputs at once (``torch.autograd.backward``).

    >>> import numpy as np, autodiff as ad
    >>> x = ad.Variable(np.array([1.0, 2.0]))
    >>> ad.tape.backward([x * 2.0, x * x], [np.ones(2), np.ones(2)])
    >>> x.grad                                   # 2 + 2x
    array([4., 6.])
    """
    if isinstance(tensors, Variable):
        tensors = [tensors]
        if grad_tensors is not None:
            grad_tensors = [grad_tensors]
    wrt = None
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Variable) else list(inputs)
        wrt = {v.ivar for v in inputs}
    diff_vars, cts, tape = _backward_core(tensors, grad_tensors, retain_graph, wrt)
    owners = tape.leaf_owner
    for v, g in zip(diff_vars, cts):
        if inputs is not None:
            targets = [x for x in inputs if x.ivar is v]
        else:
            r = owners.get(v)
            targets = [r()] if r is not None and r() is not None else []
        for x in targets:
            g = np.asarray(g, x.aval.dtype)
            x.grad = g if x.grad is None else x.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` (``torch.autograd.grad``), as a tuple.

    Nothing is accumulated into ``.grad``. ``inputs`` may be any Variables in the
    graph, not only leaves. With ``create_graph=True`` the gradients are
    Variables recorded on the tape, so they can be differentiated again.

    >>> import numpy as np, autodiff as ad
    >>> x = ad.Variable(np.array(3.0))
    >>> (g,) = ad.tape.grad(x ** 3, [x], create_graph=True)     # 3x²
    >>> float(g)
    27.0
    >>> ad.tape.grad(g, [x])                                      # 6x
    (array(18.),)
    """
    outputs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    single = isinstance(inputs, Variable)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is not None and isinstance(grad_outputs, (Variable, np.ndarray, float, int)):
        grad_outputs = [grad_outputs]
    for x in inputs:
        if not isinstance(x, Variable) or not x.requires_grad:
            raise TapeError("ad.tape.grad: every input must be a Variable that requires grad",
                            source=user_source())
    wrt = {x.ivar for x in inputs}
    diff_vars, cts, _ = _backward_core(outputs, grad_outputs, retain_graph, wrt, create_graph)
    by_var = dict(zip(diff_vars, cts))
    res = []
    for x in inputs:
        g = by_var.get(x.ivar)
        if g is None:
            if not allow_unused:
                raise TapeError("ad.tape.grad: an input was not used to compute the outputs; "
                                "pass allow_unused=True to get None for it",
                                source=user_source())
            res.append(None)
        else:
            res.append(g if create_graph else np.asarray(g, x.aval.dtype))
    return tuple(res)


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
    from .api import as_array
    from .custom_derivatives import custom_vjp_call_p, _split_consts
    from .tree_util import tree_unflatten
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
    call_jaxpr, consts = _split_consts(closed)
    outs = custom_vjp_call_p.bind(*consts, *flat, call_jaxpr=call_jaxpr, fwd=fwd_flat,
                                  bwd=bwd_flat, num_consts=len(consts),
                                  out_avals=tuple(v.aval for v in call_jaxpr.outvars))
    return tree_unflatten(box["out_tree"], outs)


def _function_rules(cls, n, dyn_idx, statics, needs, flat_example):
    """``fun``, ``fwd``, ``bwd`` of the custom_vjp behind ``cls``, made once per signature
    so that recorded equations of the same structure have equal keys."""
    from .api import as_array
    from .tree_util import tree_flatten, tree_unflatten
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


# Variables take the operators' fast path (no promotion or broadcasting needed) as plain
# tracers do: ``y * 1.01`` on a Variable binds ``mul`` directly.
from .numpy import _base as _anp_base  # noqa: E402
_anp_base.FAST_TRACED_TYPES.add(Variable)
