"""Random numbers are drawn with numpy (concrete constants in a trace): ``anp.random`` is ``numpy.random``."""
from numpy.random import *  # noqa: F401,F403
from numpy.random import default_rng, seed, randn, rand, normal, uniform, Generator  # noqa: F401
