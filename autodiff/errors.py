"""Typed errors. Each names the user's source line that caused it and the fix.

Every class subclasses the builtin a Python user would already catch
(docs/design.md, convention 6), so ``except TypeError`` keeps working.
"""


class AutodiffError(Exception):
    """Base class of every error autodiff raises on purpose."""

    def __init__(self, message, source=None):
        self.source = source
        if source:
            message = f"{message}\n  (at {source})"
        super().__init__(message)


class ConcretizationError(AutodiffError, TypeError):
    """A traced value was used where a concrete Python value is needed.

    Under ``jit`` values are abstract (only shape and dtype are known), so
    ``if x > 0:`` cannot be decided. Use ``ad.lax.cond`` / ``ad.lax.while_loop``,
    ``anp.where``, or mark the argument static.
    """


class ShapeError(AutodiffError, ValueError):
    """Operand shapes are incompatible."""


class DTypeError(AutodiffError, TypeError):
    """An input has a dtype the operation cannot take (strings, objects, ints under grad)."""


class UnsupportedError(AutodiffError, NotImplementedError):
    """A primitive or feature that a transform or backend cannot handle, named."""


class UnsupportedDTypeError(UnsupportedError):
    """A backend has no kernel for a dtype in the program (float16, for one).

    The one lowering error ``jit`` does not raise: it logs it once per function and runs
    that signature on the numpy interpreter instead (the cache entry's state is
    "interpreted", with this error's message as its reason). Cast the inputs to a
    supported dtype (float32, float64, the integers, bool) to get a compiled kernel.
    """


class TracerLeakError(AutodiffError, TypeError):
    """A traced value escaped the function being transformed and was used later."""


class TapeError(AutodiffError, RuntimeError):
    """Misuse of the tape (``Variable.backward``): a consumed graph, a non-scalar output."""


class NaNError(AutodiffError, FloatingPointError):
    """Raised under ``config.debug_nans`` at the first equation that produced a NaN."""


class PyTreeError(AutodiffError, TypeError):
    """A registered pytree node's aux data cannot key a cache (unhashable, no value key)."""


class ConfigError(AutodiffError, ValueError):
    """A value ``ad.config.update`` (or its environment variable) cannot take, named."""




__all__ = [
    "AutodiffError", "ConcretizationError", "ShapeError", "DTypeError",
    "UnsupportedError", "UnsupportedDTypeError", "TracerLeakError", "NaNError", "TapeError", "PyTreeError",
    "ConfigError",
]
