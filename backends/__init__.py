"""IR -> callable: the numpy interpreter (the reference), Numba CPU, Numba CUDA."""

from ..core import register_internal_dir as _register

_register(__file__)   # errors blame the user's line, never a frame in this package
