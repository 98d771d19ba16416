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
from ..core import DropVar, Literal, Var, check_nans, last_uses

__all__ = ["run_jaxpr", "run_closed", "straight_line", "hot_runner"]

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
    entry = _entry(jaxpr)
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


def _entry(jaxpr):
    """The cached ``[jaxpr, plan, straight-line function or None, uses]`` of ``jaxpr``."""
    key = id(jaxpr)
    entry = _plans.get(key)
    if entry is None or entry[0] is not jaxpr:
        entry = [jaxpr, _plan(jaxpr), None, 0]
        _plans.put(key, entry)
    return entry


# Arithmetic and comparisons of real floats written as Python operators in straight-line
# code: on numpy scalars (the values of scalar programs, loop bodies on values) a ufunc
# call costs 0.2-0.7 us of dispatch where the scalar's own operator costs 0.02-0.04 us, for
# the same IEEE result and result type (numpy's scalar math; on arrays the operator is the
# ufunc). Only float32/float64 operands (integer scalars warn on overflow where arrays
# wrap; complex and float16 scalar math are left to the ufuncs).
_OPERATORS = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "div": "{} / {}",
              "neg": "-{}", "abs": "abs({})", "gt": "{} > {}", "lt": "{} < {}",
              "ge": "{} >= {}", "le": "{} <= {}", "eq": "{} == {}", "ne": "{} != {}"}
_OPERATOR_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _operator_form(e):
    """The Python-operator template of equation ``e``, or None (see ``_OPERATORS``)."""
    form = _OPERATORS.get(e.primitive.name)
    if form is None or e.params or len(e.outvars) != 1:
        return None
    if not any(isinstance(v, Var) for v in e.invars):     # (Python scalars stay ufuncs)
        return None
    for v in e.invars:
        if v.aval.dtype not in _OPERATOR_DTYPES:
            return None
        if isinstance(v, Literal) and not isinstance(v.val, (np.generic, np.ndarray)):
            return None
    if isinstance(e.outvars[0], DropVar):
        return None
    return form


def straight_line(jaxpr):
    """``jaxpr`` as one generated Python function ``fn(consts, args) -> outputs``.

    One line per equation (``v3 = f0(v1, v2, **p0)``, each primitive's ``impl``), buffers
    deleted at their last use: the interpreter's semantics without its per-equation
    bookkeeping (environment dictionary, operand lists). No NaN checks and no
    floating-point error state: callers run it inside ``np.errstate(all="ignore")`` and use
    the interpreter under ``debug_nans``.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> cj = ad.make_jaxpr(lambda x: anp.exp(x) + 1.0)(np.zeros(2))
    >>> straight_line(cj.jaxpr)(cj.consts, [np.zeros(2)])
    [array([2., 2.])]
    """
    names, glb = {}, {}

    def name(v):
        if isinstance(v, Literal):
            k = f"l{len(glb)}"
            glb[k] = v.val
            return k
        return names[v]

    consts = [f"c{k}" for k in range(len(jaxpr.constvars))]
    for v, c in zip(jaxpr.constvars, consts):
        names[v] = c
    args = [f"a{k}" for k in range(len(jaxpr.invars))]
    for v, a in zip(jaxpr.invars, args):
        names[v] = a
    last = {}
    for i, e in enumerate(jaxpr.eqns):
        for v in e.invars:
            if isinstance(v, Var):
                last[v] = i
    keep = set(v for v in jaxpr.outvars if isinstance(v, Var)) | set(jaxpr.constvars)
    body = []
    if consts:
        body.append(f"    {', '.join(consts)}, = consts")
    if args:
        body.append(f"    {', '.join(args)}, = args")
    for i, e in enumerate(jaxpr.eqns):
        ins = [name(v) for v in e.invars]
        op = _operator_form(e)
        if op is not None:
            names[e.outvars[0]] = out = f"v{len(names)}"
            body.append(f"    {out} = {op.format(*ins)}")
        else:
            fn = f"f{i}"
            glb[fn] = e.primitive.impl
            if e.params:
                glb[f"p{i}"] = e.params
                ins.append(f"**p{i}")
            outs = []
            for v in e.outvars:
                if isinstance(v, DropVar):
                    outs.append("_")
                else:
                    names[v] = f"v{len(names)}"
                    outs.append(names[v])
            lhs = ", ".join(outs) + ("," if e.primitive.multiple_results and len(outs) == 1
                                     else "")
            # an equation with no results (a debug_callback) is a bare call
            body.append(f"    {lhs} = {fn}({', '.join(ins)})" if outs
                        else f"    {fn}({', '.join(ins)})")
        dead = [names[v] for v in dict.fromkeys(e.invars)
                if isinstance(v, Var) and last.get(v) == i and v not in keep]
        if dead:
            body.append(f"    del {', '.join(dead)}")
    outs = ", ".join(name(v) for v in jaxpr.outvars)
    src = "\n".join(["def run(consts, args):"] + body + [f"    return [{outs}]"])
    exec(compile(src, "<autodiff straight-line program>", "exec"), glb)
    return glb["run"]


def _interpret(jaxpr):
    return lambda consts, args: _run_jaxpr(jaxpr, consts, args)


def hot_runner(jaxpr):
    """``fn(consts, args) -> outputs`` for a jaxpr run many times (a loop body on values):
    the interpreter for its first use, generated straight-line code (:func:`straight_line`,
    cached with the jaxpr's plan) from its second on; the interpreter under ``debug_nans``.
    Callers silence floating-point warnings around their loop, as :func:`run_jaxpr` does
    around each run, and ask again after a few iterations (the second use compiles).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> cj = ad.make_jaxpr(lambda x: x * 2.0)(np.ones(2))
    >>> [hot_runner(cj.jaxpr)(cj.consts, [np.ones(2)]) for _ in range(3)][-1]
    [array([2., 2.])]
    """
    if config.debug_nans:
        return _interpret(jaxpr)
    entry = _entry(jaxpr)
    fn = entry[2]
    if fn is None:
        entry[3] += 1
        if entry[3] < 2:
            return _interpret(jaxpr)
        fn = entry[2] = straight_line(jaxpr)
    return fn
