"""``pmap`` on one machine: JAX's data-parallel map, run as a compiled named ``vmap``.

JAX's ``pmap`` places each slice of the mapped axis on its own device and compiles ``fun``
for them; its collectives (``lax.psum(g, "batch")`` to average gradients, ...) then talk
between devices. autodiff has one device, so ``pmap(fun, axis_name)`` is
``jit(vmap(fun, axis_name=axis_name))``: the same numbers, the collectives computed across
the batch, for code written for ``pmap`` (data-parallel training loops, per-device
statistics) to run unchanged. Unlike JAX it accepts a mapped axis larger than the number of
devices. To spread work over processes or machines see ``docs/distributed.md``.

>>> import numpy as np, autodiff as ad
>>> ad.pmap(lambda x: x / ad.lax.psum(x, "i"), axis_name="i")(np.arange(1.0, 4.0))
array([0.16666667, 0.33333333, 0.5       ])
"""
import functools

from .batching import vmap
from .jit import jit

__all__ = ["pmap"]


def _static_nums(nums):
    if isinstance(nums, int):
        return (nums,)
    return tuple(int(n) for n in nums)


def _check_hashable(values, nums):
    for i, v in zip(nums, values):
        try:
            hash(v)
        except TypeError as err:
            # JAX's error (a ValueError): a static argument keys the compiled programs
            raise ValueError(
                f"Non-hashable static arguments are not supported: pmap's static argument "
                f"{i} is of type {type(v).__name__} ({err}). Pass a hashable value (a tuple "
                f"instead of a list or an array), or map the argument with in_axes=None "
                f"instead of static_broadcasted_argnums.") from None


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """JAX's ``pmap`` with its signature, as ``jit(vmap(fun, in_axes, out_axes, axis_name))``
    on this machine's one device (module docstring). ``static_broadcasted_argnums`` are
    passed to every element unmapped and are static for ``jit`` (hashable, as in JAX);
    ``devices`` is accepted and ignored; ``backend`` chooses ``jit``'s backend;
    ``donate_argnums`` is ``jit``'s.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> def step(w, x, y):            # data-parallel SGD step, the gradient averaged
    ...     g = ad.grad(lambda w: anp.mean((x @ w - y) ** 2))(w)
    ...     return w - 0.1 * ad.lax.pmean(g, "devices")
    >>> xs, ys = np.ones((2, 3, 2)), np.ones((2, 3))
    >>> ad.pmap(step, "devices", in_axes=(None, 0, 0))(np.zeros(2), xs, ys)
    array([[0.2, 0.2],
           [0.2, 0.2]])
    """
    del devices
    static = _static_nums(static_broadcasted_argnums)

    def mapped(*args, **kwargs):
        # the static arguments (jit's static_argnums: one program per value) reach every
        # element as they are; the others are mapped
        n = len(args)
        fixed = {i % n for i in static}
        dynamic = [i for i in range(n) if i not in fixed]
        axes = in_axes
        if fixed and isinstance(in_axes, (tuple, list)):
            axes = tuple(a for i, a in enumerate(in_axes) if i not in fixed)

        def on_dynamic(*dyn):
            full = list(args)
            for i, v in zip(dynamic, dyn):
                full[i] = v
            return fun(*full, **kwargs)
        return vmap(on_dynamic, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                    axis_size=axis_size)(*[args[i] for i in dynamic])
    compiled = jit(mapped, static_argnums=static, backend=backend,
                   donate_argnums=donate_argnums)

    @functools.wraps(fun)
    def run(*args, **kwargs):
        fixed = sorted({i % len(args) for i in static}) if args else []
        _check_hashable([args[i] for i in fixed], fixed)
        return compiled(*args, **kwargs)
    return run
