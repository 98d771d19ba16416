"""Global settings: ``ad.config.update(name, value)`` and attribute reads.

>>> import autodiff as ad
>>> ad.config.update("cache_size", 256)
>>> ad.config.cache_size
256
>>> ad.config.update("cache_size", 1024)
"""
import contextlib
import numbers
import os

from .errors import ConfigError


def _default_cache_dir():
    base = os.environ.get("AUTODIFF_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "autodiff")


def _caller():
    """``file:line`` of the code that called ``config.update`` (or set the attribute)."""
    import sys
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else None


def _blas_threads(value, source):
    """Validate a ``jit_blas_threads`` value: ``"auto"`` or an integer >= 1 (also as text)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            return "auto"
        if text.lstrip("+").isdigit():
            value = int(text)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(
            f"jit_blas_threads must be 'auto' or an integer >= 1 (threads per matrix product "
            f"inside jitted code), got {value!r}; use ad.config.update('jit_blas_threads', "
            f"'auto') or e.g. 2", source)
    value = int(value)
    if value < 1:
        raise ConfigError(
            f"jit_blas_threads must be 'auto' or an integer >= 1, got {value}; 1 runs every "
            f"matrix product on the calling thread", source)
    return value


class Config:
    """Process-wide options. Unknown names raise, so typos do not pass silently."""

    _defaults = {
        # Capacities of the program caches (autodiff.cache lists them: ad.config.caches()).
        "cache_size": 1024,            # LRU capacity of each jitted function's graph cache
        "kernel_cache_size": 1024,     # compiled Numba kernels held in memory (all functions)
        "linearize_cache_size": 1024,  # grad/vjp/linearize: jvp + partial-eval programs by structure
        "tape_cache_size": 1024,       # Variable.backward: backward programs by graph structure
        "remat_cache_size": 1024,      # checkpoint/remat: transformed bodies, per rule
        "interpreter_cache_size": 4096,  # the numpy interpreter's per-jaxpr evaluation plans
        "source_cache_size": 50_000,   # code object / file name -> "is it autodiff's own code"
        "debug_print_cache_size": 1024,  # ad.debug.print: one printer per format string
        "custom_rule_cache_size": 1024,  # custom_vjp/custom_jvp bodies and rules traced by key
        "cache_dir": None,             # disk cache for compiled kernels; None -> user cache dir
        "disk_cache": True,            # write/read compiled kernels on disk
        "explain_cache_misses": False, # log why a jitted call retraced or recompiled
        "debug_nans": False,           # raise at the first equation producing a NaN
        "jit_parallel_threshold": 1_000_000,  # work units (elements x op cost) before prange is used
        "default_backend": "cpu",
        "jit_background_compile": True,  # a cache miss runs the interpreter while Numba compiles
        "jit_compile_process": True,   # ... in a worker process (needs the disk cache); else a thread
        "jit_compile_after": 2,        # ... starting at a signature's n-th call (1: its first)
        "jit_llvm_tier": True,         # specialized serial programs: llvmlite directly, no Numba
        "jit_dynamic_shapes": None,    # None: specialize, then generalize a dimension once it changes
        "traceback_filtering": "on",   # "off": errors keep autodiff's internal frames
        "jit_blas_threads": "auto",    # threads per matrix product in kernels: "auto" or int >= 1
        "jit_cuda_fuse_launches": True,  # backend="cuda": merge kernel launches (backends/cuda_launches.py)
        "jit_cuda_loop_products": True,  # backend="cuda": products in loop bodies as loop nests
        "jit_cuda_bound_launches": True,  # backend="cuda": launches bound once per arg types
        "jit_cuda_reuse_results": True,  # backend="cuda": dropped results back to the pool
    }

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._defaults))
        object.__setattr__(self, "_listeners", [])
        if self._values["cache_dir"] is None:
            self._values["cache_dir"] = _default_cache_dir()
        env_tb = os.environ.get("AUTODIFF_TRACEBACK_FILTERING")
        if env_tb:
            self._values["traceback_filtering"] = "off" if env_tb.lower() in (
                "off", "0", "false", "no") else "on"
        env_nans = os.environ.get("AUTODIFF_DEBUG_NANS")
        if env_nans:
            self._values["debug_nans"] = env_nans not in ("0", "false", "False")
        env_proc = os.environ.get("AUTODIFF_JIT_COMPILE_PROCESS")
        if env_proc:
            self._values["jit_compile_process"] = env_proc.strip().lower() not in (
                "0", "false", "off", "no")
        env_llvm = os.environ.get("AUTODIFF_JIT_LLVM_TIER")
        if env_llvm:
            self._values["jit_llvm_tier"] = env_llvm.strip().lower() not in (
                "0", "false", "off", "no")
        env_blas = os.environ.get("AUTODIFF_JIT_BLAS_THREADS")
        if env_blas:
            self._values["jit_blas_threads"] = _blas_threads(
                env_blas, "the environment variable AUTODIFF_JIT_BLAS_THREADS")

    def update(self, name, value):
        """Set option ``name`` to ``value`` (unknown names raise ``AttributeError`` listing the
        known ones). JAX's option names (``"jax_enable_x64"``, ``"jax_debug_nans"``,
        ``"jax_disable_jit"``, ``"jax_platform_name"``, ...) are accepted too, so ported
        scripts run unchanged: see :data:`JAX_OPTIONS`.

        >>> import autodiff as ad
        >>> ad.config.update("jax_enable_x64", True)      # float64 is already the default
        >>> ad.config.update("jax_debug_nans", False)     # the same as "debug_nans"
        >>> ad.config.jax_enable_x64, ad.config.debug_nans
        (True, False)
        """
        if name in JAX_OPTIONS:
            _jax_option(self, name, value)
            return
        if name not in self._values:
            raise AttributeError(
                f"unknown config option {name!r}; known options: {sorted(self._values)}")
        if name == "traceback_filtering" and value not in ("on", "off"):
            raise ValueError(f"traceback_filtering must be 'on' or 'off', got {value!r}")
        if name == "jit_blas_threads":
            value = _blas_threads(value, _caller())
        if name in _CAPACITIES:
            value = _capacity(name, value, _caller())
        self._values[name] = value
        for fn in self._listeners:
            fn(name, value)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            if name in JAX_OPTIONS:
                return _jax_read(self, name)
            raise AttributeError(f"unknown config option {name!r}") from None

    def __setattr__(self, name, value):
        self.update(name, value)

    @property
    def x64_enabled(self):
        """Always ``True``: float64 is numpy's (and so autodiff's) default float type
        (``jax.config.x64_enabled``)."""
        return True

    def on_update(self, fn):
        """Register ``fn(name, value)`` called after every update (caches resize themselves)."""
        self._listeners.append(fn)
        return fn

    def values(self):
        """A copy of every option's current value, by name."""
        return dict(self._values)

    def caches(self):
        """``{name: CacheStats(hits, misses, size, capacity, evictions, caches)}`` of every
        program cache (see :mod:`autodiff.cache`; ``*cache_size`` options bound them).

        >>> import autodiff as ad
        >>> ad.config.caches()["tape"].capacity == ad.config.tape_cache_size
        True
        """
        return _cache.caches()

    def clear_caches(self):
        """Empty every program cache in memory and zero its counters (the disk cache of
        compiled kernels stays).

        >>> import autodiff as ad
        >>> ad.config.clear_caches()
        >>> ad.config.caches()["linearize"].size
        0
        """
        _cache.clear_caches()


# ----------------------------------------------------------------------------
# JAX's option names (``jax.config.update("jax_enable_x64", True)`` opens most scripts)
# ----------------------------------------------------------------------------

# JAX's name -> our option it sets (None: JAX's option, handled in ``_jax_option``)
JAX_OPTIONS = {
    "jax_enable_x64": None,                 # float64 is numpy's default here: True is a no-op
    "jax_debug_nans": "debug_nans",
    "jax_disable_jit": None,                # as ``with ad.disable_jit():`` until set back
    "jax_explain_cache_misses": "explain_cache_misses",
    "jax_traceback_filtering": "traceback_filtering",
    "jax_platform_name": "default_backend",
    "jax_platforms": "default_backend",
    "jax_compilation_cache_dir": "cache_dir",
    "jax_default_matmul_precision": None,   # every product is float64-exact on the CPU
    "jax_numpy_rank_promotion": None,       # numpy's broadcasting ("allow")
    "jax_num_cpu_devices": None,
    "jax_log_compiles": None,
    "jax_default_prng_impl": None,
}
_jax_values = {"jax_enable_x64": True, "jax_disable_jit": False,
               "jax_default_matmul_precision": None, "jax_numpy_rank_promotion": "allow",
               "jax_num_cpu_devices": 1, "jax_log_compiles": False,
               "jax_default_prng_impl": "threefry2x32"}


def _platform(name, value):
    """JAX's platform names (``"cpu"``, ``"gpu"``, ``"cuda"``; ``jax_platforms`` may list
    several, first preferred) -> our backend name."""
    first = str(value).split(",")[0].strip().lower()
    if first in ("cpu", "interpret"):
        return first
    if first in ("gpu", "cuda"):
        return "cuda"
    raise ConfigError(f"{name}={value!r}: the backends here are 'cpu' and 'cuda' ('gpu' is "
                      f"an alias of 'cuda')", _caller())


def _jax_option(cfg, name, value):
    import warnings
    ours = JAX_OPTIONS[name]
    if name in ("jax_platform_name", "jax_platforms"):
        if value is None or value == "":
            return
        value = _platform(name, value)
    elif name == "jax_traceback_filtering":
        value = "off" if value == "off" else "on"   # JAX's "auto", "tracebackhide", ... filter
    elif name == "jax_enable_x64":
        if not value:
            warnings.warn("jax_enable_x64=False has no effect: autodiff follows numpy's dtypes "
                          "(float64 stays float64, float32 stays float32); cast inputs to "
                          "float32 for 32-bit computation", UserWarning, stacklevel=3)
    elif name == "jax_disable_jit":
        value = bool(value)      # autodiff.jit's listener enters or leaves disable_jit()
    elif name == "jax_numpy_rank_promotion":
        if value not in ("allow", "warn", "raise"):
            raise ConfigError(f"jax_numpy_rank_promotion must be 'allow', 'warn' or 'raise', "
                              f"got {value!r}", _caller())
        if value != "allow":
            warnings.warn(f"jax_numpy_rank_promotion={value!r} is not enforced: autodiff.numpy "
                          f"broadcasts ranks as numpy does", UserWarning, stacklevel=3)
    if ours is None:
        old, _jax_values[name] = _jax_values[name], value
        if value != old:
            for fn in cfg._listeners:
                fn(name, value)
    else:
        cfg.update(ours, value)


def _jax_read(cfg, name):
    ours = JAX_OPTIONS[name]
    return _jax_values[name] if ours is None else cfg._values[ours]


_CAPACITIES = frozenset(n for n in Config._defaults if n.endswith("cache_size"))


def _capacity(name, value, source=None):
    """A cache capacity: a whole number >= 1 (ConfigError otherwise)."""
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok and isinstance(value, float) and value.is_integer():
        ok = True
    if not ok or value < 1:
        raise ConfigError(f"ad.config.update({name!r}, {value!r}): a cache capacity must be a "
                          f"whole number >= 1 (entries); got {type(value).__name__} {value!r}", source)
    return int(value)


config = Config()


@contextlib.contextmanager
def debug_nans(value=True):
    """``with ad.debug_nans():`` raises at the first traced equation (under ``jit``, ``grad``,
    ...) that produces a NaN inside the block (``jax.debug_nans``); the option is restored
    on exit. Plain numpy calls outside transforms are numpy's and are not checked.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> with ad.debug_nans():
    ...     try:
    ...         ad.jit(anp.log)(np.array([-1.0]))
    ...     except FloatingPointError as e:
    ...         print("caught")
    caught
    >>> ad.config.debug_nans
    False
    """
    old = config._values["debug_nans"]
    config.update("debug_nans", bool(value))
    try:
        yield
    finally:
        config.update("debug_nans", old)


@contextlib.contextmanager
def enable_x64(new_val=True):
    """``jax.enable_x64`` / ``jax.experimental.enable_x64``: float64 is always enabled here
    (numpy's dtypes), so this context changes nothing; ``new_val=False`` warns that it has
    no effect.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> with ad.enable_x64():
    ...     print(anp.sum(np.ones(2)).dtype)
    float64
    """
    if not new_val:
        import warnings
        warnings.warn("enable_x64(False) has no effect: autodiff follows numpy's dtypes; "
                      "cast inputs to float32 for 32-bit computation", UserWarning,
                      stacklevel=3)
    yield

# the program caches read this module's options: imported last, so that whichever of the two
# is imported first finds the other's names defined
from . import cache as _cache  # noqa: E402
