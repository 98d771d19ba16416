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


class DerivativeLossError(ConcretizationError):
    """A value that carries a derivative was converted to a constant: ``float(x)``,
    ``math.exp(x)``, ``np.float64(x)``, ``np.asarray(x)``, numpy's item assignment
    ``g[i] = x`` under ``grad`` / ``jvp`` / the Jacobians / ``jet`` without ``jit``, or
    ``float(v)`` of a tape ``Variable`` that requires grad. The derivative through the
    constant would silently be zero, so this raises instead; the message names the line.

    The fix keeps the value traced (the ``autodiff.numpy`` function: ``anp.exp`` for
    ``math.exp``; ``x.at[i].set(v)`` or ``anp.stack`` for item assignment), or says the
    constant is meant (``ad.stop_gradient(x)``, ``x.primal``, a Variable's ``.item()`` /
    ``.detach()``). Values without a derivative (integers, non-differentiated arguments,
    ``bool()`` for control flow, ``int()`` for indexing) keep converting.

    >>> import autodiff as ad
    >>> try:
    ...     ad.grad(lambda x: float(x) * x)(2.0)
    ... except ad.errors.DerivativeLossError as e:
    ...     print("refused")
    refused
    >>> ad.grad(lambda x: float(ad.stop_gradient(x)) * x)(2.0)
    np.float64(2.0)
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
    "AutodiffError", "ConcretizationError", "DerivativeLossError", "ShapeError", "DTypeError",
    "UnsupportedError", "UnsupportedDTypeError", "TracerLeakError", "NaNError", "TapeError", "PyTreeError",
    "ConfigError",
]
