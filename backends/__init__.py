"""IR -> callable: the numpy interpreter (the reference), Numba CPU, Numba CUDA."""
