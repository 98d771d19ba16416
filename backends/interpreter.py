"""The reference backend: evaluate a jaxpr with each primitive's numpy ``impl``.

Buffers are released at their last use, so the peak memory of a run is that of
the program (what checkpointing is measured against), not of every
intermediate ever computed.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.backends.interpreter import run_closed
>>> cj = ad.make_jaxpr(lambda x: anp.exp(x) + 1.0)(np.zeros(2))
>>> run_closed(cj, [np.zeros(2)])
[array([2., 2.])]
"""
import numpy as np

from ..cache import ProgramCache
from ..config import config
from ..core import Literal, Var, check_nans, last_uses

__all__ = ["run_jaxpr", "run_closed"]

# id(jaxpr) -> (jaxpr, its plan). Keyed by identity, not structure: a plan names the
# jaxpr's own Var objects. The entry holds the jaxpr, so its id cannot be reused by
# another jaxpr while the entry lives (autodiff.cache, listed as "interpreter").
_plans = ProgramCache("interpreter", "interpreter_cache_size")


def run_jaxpr(jaxpr, consts, args):
    """Evaluate ``jaxpr`` on numpy values; returns the list of outputs.

    numpy's floating-point warnings are silenced: a traced program computes branches it
    then discards (``where(x > 0, log(x), 0)``, the untaken side of a batched ``cond``),
    as a compiled backend does; ``config.debug_nans`` is the tool for real NaNs.
    """
    with np.errstate(all="ignore"):
        return _run_jaxpr(jaxpr, consts, args)


def _plan(jaxpr):
    """Per equation: (primitive, impl, params, operands, outputs, multiple, dead after).

    Operands are ``(True, value)`` for literals and ``(False, var)`` otherwise; built once
    per jaxpr (a scan body runs thousands of times on the first call of a jitted function).
    """
    steps = []
    for e, fr in zip(jaxpr.eqns, last_uses(jaxpr)):
        ops = tuple((True, v.val) if isinstance(v, Literal) else (False, v) for v in e.invars)
        steps.append((e, e.primitive.impl, e.params, ops, tuple(e.outvars),
                      e.primitive.multiple_results, tuple(fr)))
    return steps


def _run_jaxpr(jaxpr, consts, args):
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    key = id(jaxpr)
    entry = _plans.get(key)
    if entry is None or entry[0] is not jaxpr:
        entry = (jaxpr, _plan(jaxpr))
        _plans.put(key, entry)
    debug = config.debug_nans
    for e, impl, params, ops, outs, multiple, fr in entry[1]:
        out = impl(*[x if lit else env[x] for lit, x in ops], **params)
        if debug:
            check_nans(e.primitive, out, e.source)
        if multiple:
            for v, o in zip(outs, out):
                env[v] = o
        else:
            env[outs[0]] = out
        for v in fr:
            del env[v]
    return [v.val if isinstance(v, Literal) else env[v] for v in jaxpr.outvars]


def run_closed(closed, args):
    return run_jaxpr(closed.jaxpr, closed.consts, args)
