"""The IR and the tracer: what every transform and backend shares.

A function is traced into a :class:`Jaxpr`: a typed, immutable list of equations
``outs = primitive[params](ins)`` over :class:`Var` s and :class:`Literal` s, each
equation remembering the user's ``file:line``. Transforms are functions
``Jaxpr -> Jaxpr``; backends are functions ``Jaxpr -> callable``.

Tracing. ``bind`` on a :class:`Tracer` records an equation into the tracer's
:class:`JaxprTrace`; ``bind`` on concrete values runs the primitive's ``impl``.
Traces nest: each has a level, an operation records into the innermost trace any
of its inputs belongs to, and a tracer of an outer trace used inside an inner one
is lifted to a constant input of the inner jaxpr. So a transform called on tracers
(``grad`` inside ``grad``) evaluates its rewritten jaxpr with ``bind`` and thereby
inlines it into the outer trace: that is all composition needs.

Concrete mode. Under ``grad``/``jvp``/``vjp`` without ``jit``, a trace knows the
values of its inputs and computes any intermediate value on demand (``bool(x > 0)``
forces just the equations it depends on), so Python control flow on values works.
Under ``jit`` the trace is abstract and the same request raises
:class:`~autodiff.errors.ConcretizationError`.

>>> import autodiff as ad, autodiff.numpy as anp, numpy as np
>>> print(ad.make_jaxpr(lambda x: anp.sin(x) * 2.0)(np.ones(3)))
{ lambda ; a:f64[3]. let
    b:f64[3] = sin a
    c:f64[3] = mul b 2.0:f64[]
  in (c,) }
"""
# The IR and the tracer live in four modules; this one is their common front, so that
# ``from autodiff.core import X`` (and ``ad.core.X``) names everything they share.
from .avals import *  # noqa: F401,F403
from .source_info import *  # noqa: F401,F403
from .ir import *  # noqa: F401,F403
from .tracing import *  # noqa: F401,F403
from . import avals, source_info, ir, tracing  # noqa: F401
# shared state other layers read (the caches' registry, pickles of primitives, tests)
from .source_info import _internal_file_cache, _internal_code_cache  # noqa: F401
from .closure_tables import code_names_cache as _code_names_cache  # noqa: F401
from .tracing import _trace_flat  # noqa: F401
from .tracing import _primitive_named  # noqa: F401

__all__ = source_info.__all__ + avals.__all__ + ir.__all__ + tracing.__all__
