"""Progress bars for long loops: ``scan_tqdm``, ``loop_tqdm`` (jax-tqdm's names) and
``reporter`` (the ``progress=`` option of the optimizer loops).

``scan_tqdm(n)`` decorates a ``lax.scan`` body ``(carry, x) -> (carry, y)`` and
``loop_tqdm(n)`` a ``lax.fori_loop`` body ``(i, val) -> val``; the decorated body drives a
`tqdm <https://tqdm.github.io>`_ bar from inside the loop, eagerly, under ``grad``/``vmap``
and inside ``jit`` (compiled kernels included). As with jax-tqdm, a scan's ``xs`` carry the
iteration number: ``xs = np.arange(n)``, or a tuple whose first element is
``np.arange(n)`` (``x`` is then ``(i, *rest)``).

>>> import io, numpy as np, autodiff as ad
>>> from autodiff.progress import scan_tqdm
>>> shown = io.StringIO()                       # the terminal, here (default: stderr)
>>> @scan_tqdm(200, file=shown, bar_format="{n}/{total}")
... def step(c, i):
...     return c * 0.99 + 1.0, c
>>> c, ys = ad.jit(lambda c0: ad.lax.scan(step, c0, np.arange(200)))(0.0)
>>> shown.getvalue().split("\\r")[-1].strip()   # the bar's last state
'200/200'
>>> round(float(c), 6)
86.602033

How it works: the bar lives on the host. The body asks, once per step, whether the step is
on the schedule (every ``print_rate`` steps, and the last step); only then a ``lax.cond``
branch calls the host through ``ad.debug.callback``, so a compiled loop leaves its kernel
``n / print_rate + 1`` times, not ``n`` times. The branch's result (an exact zero, ``-0.0``)
is added to one carry leaf: the data dependency keeps the call from being removed as dead
code, and adding ``-0.0`` changes no bit of any value, NaN and ``-0.0`` included.
"""
import functools

import numpy as np

from . import lax
from .core import Tracer
from .debug import callback as _host_callback
from .source_info import user_source
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["scan_tqdm", "loop_tqdm", "reporter", "ProgressReporter"]

TQDM_TYPES = ("auto", "std", "notebook")


def tqdm_class(tqdm_type="auto"):
    """The tqdm class for ``tqdm_type`` ("auto", "std" or "notebook"), imported on demand;
    an ``ImportError`` naming the ``progress`` extra when tqdm is missing."""
    if tqdm_type not in TQDM_TYPES:
        raise ValueError(f"tqdm_type must be one of {TQDM_TYPES}, got {tqdm_type!r}")
    try:
        if tqdm_type == "auto":
            from tqdm.auto import tqdm
        elif tqdm_type == "std":
            from tqdm.std import tqdm
        else:
            from tqdm.notebook import tqdm
    except ImportError as e:
        raise ImportError(
            "autodiff.progress draws its bars with tqdm, which is not installed: install the "
            "`progress` extra (pip install \"autodiff-numba[progress]\", or pip install "
            "\"tqdm>=4.60\")") from e
    return tqdm


class _HostBar:
    """The host side of a decorated loop body: one tqdm bar per run of the loop, opened
    at step 0 (or at the first step seen) and closed at step ``n - 1``."""

    def __init__(self, n, print_rate, tqdm_type, tqdm_kwargs):
        self.n, self.print_rate = n, print_rate
        self.tqdm = tqdm_class(tqdm_type)
        self.kwargs = {"desc": f"Running for {n:,} iterations", **tqdm_kwargs}
        self.bar = None
        self.last = -1
        self.tick = self._tick          # one bound method: its identity keys the IR equation

    def _tick(self, i):
        i = int(i)
        if i % self.print_rate and i != self.n - 1:  # the throttle when the body calls always
            return
        if self.bar is None or i <= self.last:       # a new run of the loop
            self.close()
            self.bar = self.tqdm(total=self.n, **self.kwargs)
        self.last = i
        done = self.n if i >= self.n - 1 else i
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)
        if i >= self.n - 1:
            self.close()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        self.bar, self.last = None, -1

    def __getstate__(self):        # a pickled jitted function carries no open bar
        return {**self.__dict__, "bar": None, "last": -1, "tick": None}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.tick = self._tick


def _check_n(n, print_rate, who):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{who}(n): n must be the loop's number of steps, a positive int; "
                         f"got {n!r}")
    if print_rate is None:
        print_rate = max(1, int(n) // 20)
    if isinstance(print_rate, bool) or not isinstance(print_rate, (int, np.integer)) \
            or print_rate < 1:
        raise ValueError(f"{who}: print_rate must be a positive int (update the bar every "
                         f"print_rate steps), got {print_rate!r}")
    return int(n), min(int(print_rate), int(n))


def _dtype(x):
    return x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def _tick_on_schedule(host, index, carry):
    """``carry`` with the host bar ticked at ``index`` when it is on the schedule."""
    leaves, tree = tree_flatten(carry)
    numeric = [k for k, l in enumerate(leaves) if _dtype(l).kind in "fciu"]
    if not numeric:             # nothing to hang the call on: call every step, the host throttles
        _host_callback(host.tick, index)
        return carry
    k = min(numeric, key=lambda j: int(np.prod(np.shape(leaves[j]))))
    dtype = _dtype(leaves[k])
    zero = np.zeros((), dtype) if dtype.kind in "iu" else np.asarray(-0.0, dtype)

    def call(i):
        _host_callback(host.tick, i)
        return zero

    on_schedule = (index % host.print_rate == 0) | (index == host.n - 1)
    leaves[k] = leaves[k] + lax.cond(on_schedule, call, lambda i: zero, index)
    return tree_unflatten(tree, leaves)


def _index_of(x, who):
    i = x[0] if isinstance(x, (tuple, list)) and len(x) else x
    ok = isinstance(i, (int, np.integer)) and not isinstance(i, bool)
    if not ok and hasattr(i, "dtype") and hasattr(i, "shape"):
        ok = np.dtype(i.dtype).kind in "iu" and tuple(i.shape) == ()
    if not ok:
        got = f"{type(i).__name__}" + (f" {i.dtype}{list(i.shape)}" if hasattr(i, "shape")
                                       else "")
        src = user_source()
        raise TypeError(
            f"{who}: the scan's xs must carry the iteration number, as in jax-tqdm: "
            f"lax.scan(step, init, np.arange(n)) or lax.scan(step, init, (np.arange(n), data)) "
            f"with x = (i, data_i); the body got x = {got}" + (f"\n  (at {src})" if src else ""))
    return i


def scan_tqdm(n, print_rate=None, tqdm_type="auto", **tqdm_kwargs):
    """Decorate a ``lax.scan`` body ``(carry, x) -> (carry, y)`` with a tqdm bar of ``n`` steps.

    ``x`` must be the iteration number or a tuple starting with it (scan over
    ``np.arange(n)`` or ``(np.arange(n), data)``). The bar is updated every ``print_rate``
    steps (default ``n // 20``) and closed at step ``n - 1``; ``tqdm_type`` is "auto",
    "std" or "notebook"; other keyword arguments go to ``tqdm`` (``desc``, ``file``,
    ``position``, ``leave``, ...). Results equal the undecorated body's, bit for bit.

    >>> import io, numpy as np, autodiff as ad
    >>> from autodiff.progress import scan_tqdm
    >>> shown = io.StringIO()
    >>> @scan_tqdm(50, print_rate=10, file=shown, bar_format="{n}/{total}", mininterval=0)
    ... def step(c, x):
    ...     i, a = x
    ...     return c + a * i, c
    >>> c, _ = ad.lax.scan(step, 0.0, (np.arange(50), np.full(50, 0.5)))
    >>> list(dict.fromkeys(shown.getvalue().replace("\\r", " ").split()))  # every 10 steps
    ['0/50', '10/50', '20/50', '30/50', '40/50', '50/50']
    >>> float(c)
    612.5
    """
    n, print_rate = _check_n(n, print_rate, "scan_tqdm")
    host = _HostBar(n, print_rate, tqdm_type, tqdm_kwargs)

    def decorate(body):
        def wrapped(carry, x):
            i = _index_of(x, "scan_tqdm")
            return body(_tick_on_schedule(host, i, carry), x)
        return _as_body(wrapped, body, host)
    return decorate


def loop_tqdm(n, print_rate=None, tqdm_type="auto", **tqdm_kwargs):
    """Decorate a ``lax.fori_loop`` body ``(i, val) -> val`` with a tqdm bar of ``n`` steps
    (the loop runs ``i`` over ``range(0, n)``); options as :func:`scan_tqdm`.

    >>> import io, autodiff as ad
    >>> from autodiff.progress import loop_tqdm
    >>> shown = io.StringIO()
    >>> @loop_tqdm(100, file=shown, bar_format="{n}/{total}")
    ... def step(i, val):
    ...     return val + i
    >>> ad.lax.fori_loop(0, 100, step, 0), shown.getvalue().split("\\r")[-1].strip()
    (np.int64(4950), '100/100')
    """
    n, print_rate = _check_n(n, print_rate, "loop_tqdm")
    host = _HostBar(n, print_rate, tqdm_type, tqdm_kwargs)

    def decorate(body):
        def wrapped(i, val):
            _index_of(i, "loop_tqdm")
            return body(i, _tick_on_schedule(host, i, val))
        return _as_body(wrapped, body, host)
    return decorate


def _as_body(wrapped, body, host):
    """``wrapped`` named and documented as the ``body`` it decorates, with its bar."""
    functools.update_wrapper(wrapped, body, assigned=("__module__", "__name__", "__qualname__",
                                                      "__doc__"), updated=())
    wrapped.progress_bar = host
    return wrapped


class ProgressReporter:
    """What :func:`reporter` returns: ``update(step, value)`` once per step, ``close()``
    at the end (also a context manager)."""

    def __init__(self, progress, total, desc=None):
        self.fn = self.bar = None
        self.own = False
        if progress is True:
            self.bar = tqdm_class("auto")(total=total, desc=desc)
            self.own = True
        elif hasattr(progress, "update") and hasattr(progress, "close"):   # a tqdm bar
            self.bar = progress
        elif callable(progress):
            self.fn = progress
        elif progress not in (None, False):
            raise TypeError(f"progress must be True, a tqdm bar or a callable(step, value), "
                            f"got {type(progress).__name__}")
        self.done = 0

    def update(self, step, value=None):
        """Report that step ``step`` (counted from 0) ran; ``value`` goes to a callable."""
        if self.fn is not None:
            self.fn(step, value)
        if self.bar is not None:
            self.bar.update(step + 1 - self.done)
        self.done = step + 1

    def close(self):
        """Close the bar if :func:`reporter` opened it (a bar passed in stays open)."""
        if self.own:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def reporter(progress, total, desc=None):
    """A :class:`ProgressReporter` for a Python loop of ``total`` steps: ``progress`` is
    ``True`` (a new tqdm bar), a tqdm bar (updated, left open), a callable
    ``progress(step, value)``, or ``None``/``False`` (nothing). This is the ``progress=``
    option of :mod:`autodiff.misc.optimizers`' loops.

    >>> from autodiff.progress import reporter
    >>> seen = []
    >>> with reporter(lambda step, value: seen.append((step, value)), total=3) as rep:
    ...     for step in range(3):
    ...         rep.update(step, step ** 2)
    >>> seen
    [(0, 0), (1, 1), (2, 4)]
    """
    return ProgressReporter(progress, total, desc)
