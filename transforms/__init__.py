"""IR-to-IR passes: jvp, partial evaluation (linearize), transpose, vmap, remat, simplification.

Every pass is a pure function of jaxprs; the user-facing wrappers in
:mod:`autodiff.api` trace, call these, and evaluate the result.
"""

from ..core import register_internal_dir as _register

_register(__file__)   # errors blame the user's line, never a frame in this package
