"""Learning-rate schedules (optax's): ``count -> value``, jittable (``count`` may be traced).
Part of :mod:`autodiff.optim`, which names them all; :func:`count_as_float` (a step count
as float64) also serves the transformations of :mod:`autodiff.optim_transforms`.

>>> import autodiff as ad
>>> float(ad.optim.linear_schedule(0.0, 1.0, 10)(5))
0.5
"""
import numpy as np

from . import numpy as anp

__all__ = ["count_as_float",
           "constant_schedule", "linear_schedule", "exponential_decay", "cosine_decay_schedule",
           "join_schedules", "warmup_cosine_decay_schedule", "piecewise_constant_schedule"]


# ----------------------------------------------------------------------------
# Learning-rate schedules: count -> value, jittable (count may be traced)
# ----------------------------------------------------------------------------

def count_as_float(count):
    """A step count (an int, an int32 array or a traced one) as float64."""
    return anp.astype(count, np.float64)


def constant_schedule(value):
    """``count -> value``.

    >>> import autodiff as ad
    >>> float(ad.optim.constant_schedule(0.1)(7))
    0.1
    """
    def schedule(count):
        return anp.full_like(count_as_float(count), value)
    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """From ``init_value`` to ``end_value`` linearly over ``transition_steps`` steps that start
    at ``transition_begin``, constant before and after (optax's ``linear_schedule``; with
    ``init_value=0`` it is a linear warmup).

    >>> import autodiff as ad
    >>> warmup = ad.optim.linear_schedule(0.0, 1.0, transition_steps=4)
    >>> [float(warmup(t)) for t in (0, 1, 4, 9)]
    [0.0, 0.25, 1.0, 1.0]
    """
    if transition_steps <= 0:
        return constant_schedule(init_value)

    def schedule(count):
        t = anp.clip(count_as_float(count) - transition_begin, 0.0, float(transition_steps))
        return (init_value - end_value) * (1.0 - t / transition_steps) + end_value
    return schedule


def exponential_decay(init_value, transition_steps, decay_rate, transition_begin=0,
                      staircase=False, end_value=None):
    """``init_value · decay_rate^((count - transition_begin) / transition_steps)`` (the
    exponent floored with ``staircase``), ``init_value`` before ``transition_begin``, and
    bounded by ``end_value`` when given (optax's ``exponential_decay``).

    >>> import autodiff as ad
    >>> s = ad.optim.exponential_decay(1.0, transition_steps=10, decay_rate=0.5)
    >>> [float(s(t)) for t in (0, 10, 20)]
    [1.0, 0.5, 0.25]
    """
    if transition_steps <= 0:
        raise ValueError(f"exponential_decay: transition_steps must be > 0, got "
                         f"{transition_steps}")
    if decay_rate == 0:
        raise ValueError("exponential_decay: decay_rate must not be 0")

    def schedule(count):
        p = anp.maximum(count_as_float(count) - transition_begin, 0.0) / transition_steps
        if staircase:
            p = anp.floor(p)
        v = init_value * anp.power(float(decay_rate), p)
        if end_value is not None:
            v = anp.maximum(v, end_value) if decay_rate < 1 else anp.minimum(v, end_value)
        return v
    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    """``init_value · ((1 - alpha)·c^exponent + alpha)`` with ``c = ½(1 + cos(π·t/T))``,
    ``t = min(count, decay_steps)`` (optax's ``cosine_decay_schedule``; SGDR without restarts).

    >>> import autodiff as ad
    >>> s = ad.optim.cosine_decay_schedule(1.0, decay_steps=10)
    >>> [round(float(s(t)), 6) for t in (0, 5, 10, 20)]
    [1.0, 0.5, 0.0, 0.0]
    """
    if decay_steps <= 0:
        raise ValueError(f"cosine_decay_schedule: decay_steps must be > 0, got {decay_steps}")

    def schedule(count):
        t = anp.minimum(count_as_float(count), float(decay_steps))
        c = 0.5 * (1.0 + anp.cos(np.pi * t / decay_steps))
        return init_value * ((1.0 - alpha) * c ** exponent + alpha)
    return schedule


def join_schedules(schedules, boundaries):
    """``schedules[i](count - boundaries[i-1])`` between consecutive ``boundaries`` (optax's
    ``join_schedules``: each later schedule restarts its own count at its boundary).

    >>> import autodiff as ad
    >>> s = ad.optim.join_schedules([ad.optim.constant_schedule(1.0),
    ...                              ad.optim.constant_schedule(0.1)], [3])
    >>> [float(s(t)) for t in (0, 2, 3, 5)]
    [1.0, 1.0, 0.1, 0.1]
    """
    if len(schedules) != len(boundaries) + 1:
        raise ValueError(f"join_schedules: {len(schedules)} schedules need "
                         f"{len(schedules) - 1} boundaries, got {len(boundaries)}")

    def schedule(count):
        out = schedules[0](count)
        for s, b in zip(schedules[1:], boundaries):
            out = anp.where(count_as_float(count) < b, out, s(count - b))
        return out
    return schedule


def warmup_cosine_decay_schedule(init_value, peak_value, warmup_steps, decay_steps,
                                 end_value=0.0, exponent=1.0):
    """Linear warmup from ``init_value`` to ``peak_value`` over ``warmup_steps``, then cosine
    decay to ``end_value`` at ``decay_steps`` (counted from 0, warmup included), as optax's
    ``warmup_cosine_decay_schedule``.

    >>> import autodiff as ad
    >>> s = ad.optim.warmup_cosine_decay_schedule(0.0, 1.0, warmup_steps=2, decay_steps=6)
    >>> [round(float(s(t)), 6) for t in (0, 1, 2, 4, 6, 9)]
    [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
    """
    alpha = 0.0 if peak_value == 0 else end_value / peak_value
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           cosine_decay_schedule(peak_value, max(decay_steps - warmup_steps, 1),
                                                 alpha, exponent)], [warmup_steps])


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    """``init_value`` times every ``scale`` whose ``boundary`` the count has reached
    (optax's ``piecewise_constant_schedule``; boundaries are step counts).

    >>> import autodiff as ad
    >>> s = ad.optim.piecewise_constant_schedule(1.0, {3: 0.1, 6: 0.5})
    >>> [round(float(s(t)), 6) for t in (0, 3, 5, 6, 100)]
    [1.0, 0.1, 0.1, 0.05, 0.05]
    """
    items = sorted((boundaries_and_scales or {}).items())
    for b, s in items:
        if b < 0:
            raise ValueError(f"piecewise_constant_schedule: boundary {b} must be >= 0")

    def schedule(count):
        v = anp.full_like(count_as_float(count), init_value)
        for b, s in items:
            v = anp.where(count_as_float(count) < b, v, v * s)
        return v
    return schedule
