"""The tape's ``backward()``: reverse mode over the recorded jaxpr, cached by its structure.

``y.backward()`` and :func:`autodiff.tape.grad` collect the equations ``y`` depends on into
a jaxpr (inputs: the leaves that require grad, plus constants), build its reverse-mode
program with :mod:`autodiff.transforms.reverse`, run it (on the interpreter, or compiled
inside :func:`jit_backward`) and accumulate the gradients. Programs are cached by the
recorded jaxpr's structural key (:func:`cache_info`).

>>> import numpy as np, autodiff as ad
>>> x = ad.Variable(np.array([1.0, 2.0]))
>>> (x * x).sum().backward()
>>> x.grad
array([2., 4.])
"""
import collections
import functools
import threading
import warnings

import numpy as np

from . import primitives as P
from .api import StraightLine
from .backends.interpreter import run_closed
from .cache import ProgramCache
from .core import (ClosedJaxpr, Jaxpr, Tracer, Var, eval_jaxpr, trace_flat, trace_state,
                   user_source)
from .errors import DTypeError, ShapeError, TapeError
from .jit import jit
from .tape import Variable, readonly_array, wrap_variable
from .transforms import reverse

__all__ = ["backward", "grad", "recorded_jaxpr", "cache_info", "clear_cache", "jit_backward"]

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
    n_in = n_const + n_diff
    lin = reverse.linearize_jaxpr(ClosedJaxpr(jaxpr, []), [False] * n_const + [True] * n_diff)

    def program(*args):
        res = eval_jaxpr(lin.known.jaxpr, lin.known.consts, *args[:n_in])
        outs, residuals = res[:n_out], res[n_out:]
        cts = reverse.backward(lin, residuals, args[n_in:])
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
    prog = entry.program
    if use_jit and not entry.jit_failed:
        if entry.run is None:
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
        entry.straight = StraightLine(prog)
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
            if a.dtype.kind == "c":
                # as grad: a complex output has no implicit seed (JAX's contract)
                raise DTypeError(f"backward: the output is complex ({a.dtype}); gradients "
                                 f"are defined for real outputs. Reduce it to a real number "
                                 f"first (anp.abs(y) ** 2, y.real), or pass grad= the cotangent",
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
            diff_args = [wrap_variable(tape, v) for v in diff_vars]
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
                tape.values[v] = readonly_array(np.asarray(o, v.aval.dtype))
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
    >>> g.item()
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
