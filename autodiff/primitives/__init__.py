"""The primitive set, each declared once with all of its rules beside it.

The set is small and closed (lax-like). Elementwise binary primitives take
operands of one dtype and one shape (rank-0 operands broadcast); everything
numpy-level (broadcasting, promotion, indexing) is composed from these in
:mod:`autodiff.numpy`.

Rules of a primitive ``p``:
  ``p.impl``           numpy evaluation (the reference semantics)
  ``p.abstract_eval``  shapes and dtypes
  ``p.jvp``            forward derivative, written with these same ops so its output
                       can be differentiated again
  ``p.transpose``      for linear primitives: cotangents of the linear inputs
  ``p.batch``          vmap: ``(args, dims) -> (out, out_dim)``
  ``p.taylor``         jet: the output's Taylor coefficients from the operands'
                       (``deftaylor``; the series arithmetic is in :mod:`.taylor_series`)

The control-flow primitives (``cond``, ``while``, ``scan``) are in :mod:`.control_flow`,
which sits above the transforms its rules use: import them from there (``autodiff.lax``
does).

>>> from autodiff import primitives as P
>>> import numpy as np
>>> P.sin_p.impl(np.zeros(2))
array([0., 0.])
>>> P.sin_p.abstract_eval(P.ShapedArray((2,), np.float64))
ShapedArray(f64[2])
"""
from ..core import primitives, Primitive, ShapedArray  # noqa: F401  (the registry and its types)
from ._rules import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .dot import *  # noqa: F401,F403
from .cumulative import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from . import _rules, elementwise, shape, reductions, indexing, dot  # noqa: F401
from . import cumulative, linalg, fft, taylor_series  # noqa: F401
from . import collectives  # noqa: F401  (named-axis collectives: core.collective_primitives)

__all__ = (["primitives", "Primitive", "ShapedArray"] + _rules.__all__
           + elementwise.__all__ + shape.__all__ + reductions.__all__ + indexing.__all__
           + dot.__all__ + cumulative.__all__ + linalg.__all__ + fft.__all__)
