"""Named ``vmap`` axes: the ones in scope while a function is traced, and the one
``batch_eval`` resolves.

``vmap(f, axis_name="i")`` pushes an :class:`AxisFrame` while it traces ``f`` and names its
axis while it batches the traced program. The collectives of ``ad.lax`` (``psum``,
``all_gather``, ``axis_index``, ...) look their name up here when the user calls them (an
unbound name raises ``NameError`` at the user's line), and their batch rules
(``autodiff.primitives.collectives``) read the axis being batched. Both stacks are per
thread, in ``trace_state``.

>>> import numpy as np, autodiff as ad
>>> ad.vmap(lambda x: x - ad.lax.pmean(x, "i"), axis_name="i")(np.arange(4.0))
array([-1.5, -0.5,  0.5,  1.5])
"""
import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import tracing
from .ir import ClosedJaxpr, sub_jaxprs
from .source_info import trace_state, user_source
from .tracing import Tracer

__all__ = ["AxisFrame", "tracing_axis", "batching_axis", "frame_of", "batching",
           "scope_key", "axis_names", "at_axis_level", "collective_axes"]


@dataclass(frozen=True, eq=False)
class AxisFrame:
    """A named ``vmap`` axis being traced: its ``name`` and ``size``, the ``trace`` (and its
    ``level``) the vmap records into, and ``index``, the hidden mapped input
    ``arange(size)`` whose tracer is ``axis_index(name)``."""
    name: Any
    size: int
    trace: Any
    index: Any

    @property
    def level(self):
        """The level of the vmap's trace: tracers at it or deeper may vary along the axis."""
        return self.trace.level


# how many named vmaps are tracing, in any thread: a cheap test for hot paths (jit's call),
# which then read this thread's frames
tracing_count = 0


@contextlib.contextmanager
def tracing_axis(frame):
    """``frame``'s name is bound while the body runs (the vmap traces its function)."""
    global tracing_count
    prev = trace_state.axis_frames
    trace_state.axis_frames = prev + (frame,)
    tracing_count += 1
    try:
        yield frame
    finally:
        tracing_count -= 1
        trace_state.axis_frames = prev


@contextlib.contextmanager
def batching_axis(name, size):
    """The vmap batching a program resolves collectives over ``name`` (``None``: an
    unnamed vmap, which resolves none)."""
    prev = trace_state.batching_axes
    trace_state.batching_axes = prev + ((name, size),)
    try:
        yield
    finally:
        trace_state.batching_axes = prev


def batching():
    """``(name, size)`` of the innermost axis being batched, or ``None``."""
    axes = trace_state.batching_axes
    return axes[-1] if axes else None


def axis_names(axis_name):
    """``axis_name`` as a tuple of names (JAX: a tuple or list names several axes)."""
    if isinstance(axis_name, (tuple, list)):
        return tuple(axis_name)
    return (axis_name,)


def frame_of(name, caller):
    """The innermost :class:`AxisFrame` named ``name``; ``NameError`` naming the user's line
    when no enclosing ``vmap`` binds it."""
    for f in reversed(trace_state.axis_frames):
        if f.name == name:
            return f
    bound = [f.name for f in trace_state.axis_frames]
    src = user_source()
    where = f" (at {src})" if src is not None else ""
    raise NameError(
        f"{caller}: unbound axis name {name!r}{where}. A collective computes across the "
        f"batch of an enclosing ad.vmap(..., axis_name={name!r}); the axis names in scope "
        f"here are {bound}.")


def scope_key():
    """The named axes in scope, as a hashable key: traced programs that depend on them
    (``jit``'s inline cache) are kept per scope."""
    return tuple((f.name, f.size) for f in trace_state.axis_frames)


def at_axis_level(frame, x):
    """``x`` as a tracer of the named vmap's trace (``frame``) or a deeper one.

    A concrete value, or a tracer of a trace enclosing the vmap, is the same for every
    element of the axis; it becomes a constant of the vmap's program, so a collective (or a
    loop whose body holds one) applied to it is recorded there and resolved by that vmap."""
    if isinstance(x, Tracer) and x._trace.level >= frame.level:
        return x
    if not isinstance(x, Tracer):
        x = np.asarray(x)
    return Tracer(frame.trace, frame.trace.lift(x, literal=False))


def collective_axes(params):
    """The axis names the collectives inside an equation's sub-programs (``params``: a
    scan's body, a cond's branches, however deep) compute over."""
    names = set()

    def walk(jaxpr):
        for e in jaxpr.eqns:
            if e.primitive.collective:
                names.update(e.params["axes"])
            for _, j in sub_jaxprs(e.params):
                walk(j.jaxpr if isinstance(j, ClosedJaxpr) else j)
    for _, j in sub_jaxprs(params):
        walk(j.jaxpr if isinstance(j, ClosedJaxpr) else j)
    return names


def _record_axis_program(prim, args, params):
    # tracing._eager's hook: see there
    names = collective_axes(params)
    frames = [f for f in trace_state.axis_frames if f.name in names]
    if not frames or not args:
        return None
    frame = max(frames, key=lambda f: f.level)       # the innermost one they name
    return prim.bind(at_axis_level(frame, args[0]), *args[1:], **params)


tracing._axis_program_hook = _record_axis_program
