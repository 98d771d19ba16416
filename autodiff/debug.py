"""``ad.debug.print`` and ``ad.debug.callback``: look at values inside transformed code.

Eagerly and under ``grad``/``jvp``/``vjp``/``hessian`` without ``jit`` (where traced
values carry their numbers) the values are printed or passed to the callback as numpy
arrays, at each call, as in JAX:

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> def f(x):
...     ad.debug.print("x = {x}, sum = {}", anp.sum(x), x=x)
...     return anp.sum(x ** 2)
>>> g = ad.grad(f)(np.array([1.0, 2.0]))
x = [1. 2.], sum = 3.0

Under ``jit``, ``vmap`` and ``make_jaxpr`` the values do not exist while tracing, so the
call becomes a ``debug_callback`` equation (effectful: never removed as dead code, kept in
program order) that runs wherever the program runs: on the interpreter, and inside the
compiled kernel through a Numba object-mode call back into Python; under ``vmap`` once
per batch element.

Also here, with JAX's names: ``log`` (``print`` through :mod:`logging`), ``breakpoint``
(a debugger at run time, with the frame's array values), and, for code written for
sharded JAX, ``inspect_array_sharding`` / ``visualize_array_sharding`` /
``visualize_sharding``, which report the one device every array here lives on.
"""
import builtins
import logging

import numpy as np

from .cache import ProgramCache
from .core import Tracer, is_concrete
from .tree_util import tree_map, tree_leaves
from .callback import debug_callback
from . import devices as _dev

__all__ = ["print", "callback", "log", "breakpoint", "DebugTraceWarning", "DebugEffect",
           "OrderedDebugEffect", "SingleDeviceSharding", "inspect_array_sharding",
           "visualize_array_sharding", "visualize_sharding"]

_builtin_print = print


class DebugTraceWarning(UserWarning):
    """Kept for code that filters it: ``debug.print`` no longer falls back to printing
    shapes at trace time (it prints values at every call, inside ``jit`` too)."""


def _value(x):
    if isinstance(x, Tracer):
        return np.asarray(x.concrete_value("ad.debug"))
    return x


def _all_concrete(tree):
    return all(is_concrete(l) for l in tree_leaves(tree))


def print(fmt, *args, ordered=False, **kwargs):  # noqa: A001 - JAX's name
    """``print(fmt.format(*args, **kwargs))`` with the values of (traced) arrays, at every
    call: eagerly, under ``grad``/``vmap`` (once per batch element) and inside ``jit``.

    >>> import numpy as np, autodiff as ad
    >>> ad.debug.print("{a} and {b:.2f}", a=np.arange(2), b=np.float64(1.0 / 3))
    [0 1] and 0.33
    """
    callback(_printer(fmt), *args, ordered=ordered, **kwargs)


# format string -> its printer (autodiff.cache, listed as "debug.print")
_printers = ProgramCache("debug.print", "debug_print_cache_size")


def _printer(fmt):
    # one function object per format string: equations of equal traces stay equal (the
    # printer is a param of the callback equation), so jit's and linearize's caches hit
    p = _printers.get(fmt)
    if p is None:
        with _printers.lock:             # two threads must get the same function
            p = _printers.table.get(fmt)
            if p is None:
                def p(*args, **kwargs):
                    _builtin_print(fmt.format(*args, **kwargs))
                p.__name__ = "debug.print"
                _printers.put(fmt, p)
    return p


def callback(fn, *args, ordered=False, **kwargs):
    """Call ``fn(*args, **kwargs)`` with numpy values, for its side effects, wherever the
    program runs: eagerly and under ``grad`` at once; under ``jit`` each time the compiled
    kernel (or, on a first call, the interpreter) reaches it; under ``vmap`` once per batch
    element. Calls run in program order (``ordered`` is accepted: they always are).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> seen = []
    >>> _ = ad.grad(lambda x: (ad.debug.callback(seen.append, x), anp.sum(x * x))[1])(np.ones(2))
    >>> seen
    [array([1., 1.])]
    >>> f = ad.jit(lambda x: (ad.debug.callback(seen.append, x * 2), x + 1)[1])
    >>> _ = f(np.ones(2)); _ = f(np.zeros(2))
    >>> seen[1:]
    [array([2., 2.]), array([0., 0.])]
    """
    if _all_concrete((args, kwargs)):
        args, kwargs = tree_map(_value, (args, kwargs))
        fn(*args, **kwargs)
        return
    debug_callback(fn, *args, **kwargs)


class DebugEffect:
    """The effect of a debug callback equation (JAX's ``jax.debug.DebugEffect``): such an
    equation is never removed as dead code. ``debug_effect`` is its one instance."""

    def __repr__(self):
        return "Debug"


class OrderedDebugEffect(DebugEffect):
    """An ordered debug effect (``ordered=True``); here every debug callback runs in
    program order, so both effects behave the same."""

    def __repr__(self):
        return "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()


_logger = logging.getLogger("autodiff.debug")
_loggers = ProgramCache("debug.log", "debug_print_cache_size")


def log(fmt, *args, ordered=False, **kwargs):
    """Like :func:`print`, but the text goes to the ``logging`` logger ``"autodiff.debug"``
    at level INFO (JAX's logs to ``"jax._src.debugging"``).

    >>> import logging, sys, numpy as np, autodiff as ad
    >>> logging.basicConfig(stream=sys.stdout, format="%(name)s %(message)s", force=True)
    >>> logging.getLogger("autodiff.debug").setLevel(logging.INFO)
    >>> ad.jit(lambda x: (ad.debug.log("x = {}", x), x + 1)[1])(np.arange(2.0))
    autodiff.debug x = [0. 1.]
    array([1., 2.])
    """
    p = _loggers.get(fmt)
    if p is None:
        with _loggers.lock:
            p = _loggers.table.get(fmt)
            if p is None:
                def p(*a, **kw):
                    _logger.info(fmt.format(*a, **kw))
                p.__name__ = "debug.log"
                _loggers.put(fmt, p)
    callback(p, *args, ordered=ordered, **kwargs)


def _is_value(v):
    return isinstance(v, (Tracer, np.ndarray, np.generic, float, int, complex)) \
        and not isinstance(v, bool)


_frames = ProgramCache("debug.breakpoint", "debug_print_cache_size")


def _debugger_for(names, where):
    # one function per (names, line): its frame holds the values under the user's names,
    # so ``p x`` in the debugger shows the run-time value of the traced ``x``
    key = (names, where)
    fn = _frames.get(key)
    if fn is None:
        src = (f"def _frame({', '.join(names)}):\n"
               f"    __import__('pdb').Pdb().set_trace(__import__('sys')._getframe())\n")
        ns = {}
        exec(compile(src, f"<ad.debug.breakpoint at {where}>", "exec"), ns)
        fn = ns["_frame"]
        _frames.put(key, fn)
    return fn


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,  # noqa: A001
               token=None, **kwargs):
    """Stop in :mod:`pdb` when the program reaches this line, with the caller's array
    values (``p x``, ``x.shape``) as local variables: eagerly and under ``grad`` at once,
    under ``jit`` each time the compiled program runs (the values are the run-time ones,
    not tracers), as JAX's ``jax.debug.breakpoint``. ``c`` continues.

    Locals that are arrays or numbers are passed; other objects are not (use
    :func:`callback` for them). The keyword arguments are JAX's and are accepted.

    >>> import numpy as np, autodiff as ad, pdb
    >>> seen = []
    >>> real = pdb.Pdb.set_trace
    >>> pdb.Pdb.set_trace = lambda self, frame=None: seen.append(dict(frame.f_locals))
    >>> def f(x):
    ...     y = x * 2
    ...     ad.debug.breakpoint()
    ...     return y + 1
    >>> _ = ad.jit(f)(np.arange(2.0))
    >>> pdb.Pdb.set_trace = real
    >>> seen[0]["y"]
    array([0., 2.])
    """
    import sys
    frame = sys._getframe(1)
    names, values = [], []
    for k, v in frame.f_locals.items():
        if k.isidentifier() and not k.startswith("__") and _is_value(v):
            names.append(k)
            values.append(v)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    del frame
    callback(_debugger_for(tuple(names), where), *values, ordered=ordered)


class SingleDeviceSharding:
    """The layout of an array that lives whole on one device (JAX's
    ``jax.sharding.SingleDeviceSharding``): every array here has this one.

    >>> import numpy as np, autodiff as ad
    >>> ad.debug.SingleDeviceSharding(ad.devices()[0]).device_set
    {CpuDevice(id=0)}
    """

    def __init__(self, device, *, memory_kind="device"):
        self._device, self.memory_kind = device, memory_kind

    @property
    def device_set(self):
        """The devices holding parts of the array: the one device."""
        return {self._device}

    @property
    def num_devices(self):
        """How many devices hold parts of the array: ``1``."""
        return 1

    @property
    def is_fully_replicated(self):
        """Whether every device holds the whole array: ``True`` (the one device does)."""
        return True

    @property
    def is_fully_addressable(self):
        """Whether this process can reach every device of the layout: ``True``."""
        return True

    def shard_shape(self, global_shape):
        """The shape of each shard: the whole array."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape):
        """``{device: index}``: the one device holds every element."""
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("SingleDeviceSharding", self._device))


def _sharding_of(x):
    if getattr(x, "_autodiff_device", None) == "cuda":
        return SingleDeviceSharding(_dev.devices("cuda")[0])
    return SingleDeviceSharding(_dev.CpuDevice(0))


def inspect_array_sharding(value, *, callback):
    """Call ``callback(sharding)`` for each array leaf of ``value``: a
    :class:`SingleDeviceSharding` of the device it lives on. The layout is known at trace
    time, so the call happens then (under ``jit``: once per trace), as in JAX.

    >>> import numpy as np, autodiff as ad
    >>> seen = []
    >>> ad.debug.inspect_array_sharding({"w": np.ones(3)}, callback=seen.append)
    >>> seen
    [SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)]
    """
    for leaf in tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_sharding(shape, sharding, *, use_color=True, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Print a box for an array of ``shape`` (1-D or 2-D) labelled with the device that
    holds it: one box, one device here (JAX draws the same on one CPU; it needs ``rich``,
    this prints plain text). The style arguments are JAX's; ``scale`` and the widths are
    honoured, ``use_color``/``color_map`` accepted.

    >>> import autodiff as ad
    >>> ad.debug.visualize_sharding((4, 8), ad.debug.SingleDeviceSharding(ad.devices()[0]))
    ┌─────────┐
    │         │
    │  CPU 0  │
    │         │
    └─────────┘
    """
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding: shows 1-D and 2-D arrays, got shape {shape}; "
                         "reshape (or index) to two dimensions first")
    device = next(iter(sharding.device_set))
    label = f"{getattr(device, 'platform', 'cpu').upper()} {getattr(device, 'id', 0)}"
    width = builtins.max(min_width, builtins.min(max_width, int(round(len(label) + 2 * scale * 2))))
    width = builtins.max(width, len(label) + 2)
    rows = 1 if len(shape) == 1 else builtins.max(3, int(round(3 * scale)))
    lines = ["┌" + "─" * width + "┐"]
    for r in range(rows):
        text = label if r == rows // 2 else ""
        lines.append("│" + text.center(width) + "│")
    lines.append("└" + "─" * width + "┘")
    _builtin_print("\n".join(lines))


def visualize_array_sharding(arr, **kwargs):
    """:func:`visualize_sharding` of ``arr``'s shape and layout (JAX's name).

    >>> import numpy as np, autodiff as ad
    >>> ad.debug.visualize_array_sharding(np.ones(4))
    ┌─────────┐
    │  CPU 0  │
    └─────────┘
    """
    shape = getattr(arr, "shape", None)
    if shape is None:
        shape = np.shape(arr)
    visualize_sharding(shape, _sharding_of(arr), **kwargs)
