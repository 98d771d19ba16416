"""Functional, counter-based random numbers with JAX's ``jax.random`` API.

A key is a ``uint32[2]`` array; nothing is stateful. Every draw is a pure function of
its key, computed by the Threefry-2x32 block cipher (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3", SC 2011; 20 rounds) written with the library's own uint32
primitives (wrapping ``add``/``mul``, ``xor``/``or``, shifts as multiplication and floor
division by powers of two). So draws trace into the IR like any other computation:
``jit`` compiles them, ``vmap`` maps over keys, and the same key gives the same bits
eagerly, under ``jit`` and under ``vmap``. Reuse of a key gives the same numbers, as in
JAX: ``split`` or ``fold_in`` for fresh ones.

>>> import numpy as np, autodiff as ad
>>> key = ad.random.key(0)
>>> k1, k2 = ad.random.split(key)
>>> x = ad.random.normal(k1, (3,))
>>> bool(np.all(x == ad.random.normal(k1, (3,))))       # same key, same numbers
True
>>> bool(np.all(ad.jit(lambda k: ad.random.normal(k, (3,)))(k1) == x))
True
>>> ad.random.uniform(k2, (2,)).dtype                   # numpy's default float
dtype('float64')

Keys: ``clone(key)`` is the key itself (keys are immutable values here), ``key_impl``
names the cipher, ``key_dtype()`` is the keys' dtype (``uint32``; JAX's typed keys have
their own dtype).

Differences from JAX worth knowing: the default float dtype is float64 (numpy's,
docs/design.md, convention 10), ``key`` returns the same raw ``uint32[2]`` key as ``PRNGKey`` (no typed key
arrays), and the bit streams are not JAX's (same cipher, different counter layout), so
seeds do not reproduce JAX's numbers. Samplers with a rejection step (``gamma``,
``poisson``) are exact: every value draws proposals, round after round of a ``while_loop``,
until one is accepted.

The keys, the cipher and raw bits are ``autodiff._random_keys``; the distributions
``autodiff._random_distributions``.
"""
from ._random_keys import (key, PRNGKey, key_data, wrap_key_data, split, fold_in, bits,  # noqa: F401
                           threefry_2x32, clone, key_impl, key_dtype)
from ._random_distributions import *  # noqa: F401,F403
from ._random_distributions import __all__ as _distributions

__all__ = ["key", "PRNGKey", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "threefry_2x32", "clone", "key_impl", "key_dtype"] + _distributions
