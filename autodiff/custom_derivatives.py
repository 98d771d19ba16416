"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``.

Both are call primitives carrying the traced function, so every transform sees
them: forward mode applies the user's rule, reverse mode transposes it (for
``custom_vjp`` the backward function *is* the transpose), vmap batches the
function and the rule together, and the rules' own operations are traced, so
derivatives of any order work.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> @ad.custom_jvp
... def log1pexp(x):
...     return anp.log1p(anp.exp(x))
>>> @log1pexp.defjvp
... def log1pexp_jvp(primals, tangents):
...     (x,), (t,) = primals, tangents
...     return log1pexp(x), t * (1 - 1 / (1 + anp.exp(x)))
>>> float(ad.grad(log1pexp)(1000.0))          # the naive rule would give nan
1.0
"""
import functools
import inspect

import numpy as np

from . import primitives as P
from .core import (ClosedJaxpr, Jaxpr, Primitive, ShapedArray, Tracer, UndefinedPrimal, Zero,
                   eval_jaxpr, get_aval, trace_flat, trace_state)
from .custom_cache import NEEDS_VALUES, cached_trace, function_key, shared_rules, value_key
from .errors import TracerLeakError, UnsupportedError
from .tree_util import tree_flatten, tree_unflatten
from .backends.interpreter import run_jaxpr
from .core import is_concrete, is_internal_file, user_source
from .api_util import as_array, trace_fun
from .batching import vmap
from .transforms.vmap import batch_jaxpr
from .named_axes import batching
from .transforms.jvp import jvp_eval
from .tree_util import tree_flatten as tf
from .errors import ShapeError


def _has_tracer(flat):
    return any(isinstance(x, Tracer) for x in flat)


# id(closed jaxpr) -> (closed, its split jaxpr): a cached body gives the same call_jaxpr
# object every call, so its structural key (memoized on the jaxpr, part of the enclosing
# program's key) and its interpreter plan are computed once. The entry holds the closed
# jaxpr, so its id is not reused while the entry lives.
_SPLIT = {}


def split_consts(closed):
    """A jaxpr whose constants are leading inputs, plus those constants."""
    j = closed.jaxpr
    return Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), list(closed.consts)


def _split_consts_cached(closed):
    """``split_consts`` of a closed jaxpr that the trace cache holds (memoized)."""
    hit = _SPLIT.get(id(closed))
    if hit is None or hit[0] is not closed:
        if len(_SPLIT) >= 4096:
            _SPLIT.clear()
        hit = _SPLIT[id(closed)] = (closed, split_consts(closed)[0])
    return hit[1], list(closed.consts)


def _call_impl(*args, call_jaxpr, **_):
    return run_jaxpr(call_jaxpr, [], list(args))


def _call_aval(*avals, call_jaxpr, **_):
    return [v.aval for v in call_jaxpr.outvars]


def _call_inline(e):
    # inline rule (autodiff.transforms.passes.inline_calls): a compiled program runs the
    # primal function; its operands are the constants then the arguments
    return e.params["call_jaxpr"], []


def _inline(call_jaxpr, args):
    return eval_jaxpr(call_jaxpr, [], *args)


def _concrete_tracers(flat):
    """True when ``flat`` holds tracers and every one knows its value (grad/jvp/vjp without
    jit): the primal body and the user's fwd / jvp rule are then traced with values, so
    Python control flow on them works, as it does in ordinary functions under grad."""
    return _has_tracer(flat) and all(is_concrete(x) for x in flat)


def _abstract(flat):
    """Some input is a tracer without a value (the rule would be traced abstractly; the
    others may be constants of the program)."""
    return any(isinstance(x, Tracer) and not is_concrete(x) for x in flat)


def _result_has_tracer(out):
    return _has_tracer(tree_flatten(out)[0])


class _Reentry:
    """Counts the concrete pre-tracings of rules in progress (in this thread, across all
    custom functions). A rule that calls its own function (``fwd`` calling ``f(x)``)
    pre-traces the rule of that inner call again (a derivative of the next order runs
    it); the nesting stops at ``LIMIT`` levels, past which a rule is traced when a
    transform needs it (abstractly). Rules of autodiff's own custom functions (scipy
    special functions, random) never branch on values and are not pre-traced: their
    rules call each other in towers (gammaln -> digamma -> polygamma ...)."""

    LIMIT = 3

    def __init__(self):
        import threading
        self._local = threading.local()

    def active(self):
        return getattr(self._local, "depth", 0) >= self.LIMIT

    def __enter__(self):
        self._local.depth = getattr(self._local, "depth", 0) + 1

    def __exit__(self, *exc):
        self._local.depth -= 1
        return False


_PRETRACING = _Reentry()


def _pretrace_wanted(fun, concrete):
    """Whether to pre-trace the rules of a call of the custom function ``fun`` now."""
    if not concrete or _PRETRACING.active():
        return False
    fun = getattr(fun, "__wrapped__", fun)    # a library wrapper of a user's function
    code = getattr(fun, "__code__", None)
    return code is None or not is_internal_file(code.co_filename)


def _flat_rule_from_trace(closed, n_out):
    """``(xs) -> (outs, rest)`` evaluating a jaxpr the rule was traced into with values."""
    def run(*xs):
        res = eval_jaxpr(closed.jaxpr, closed.consts, *xs)
        return list(res[:n_out]), list(res[n_out:])
    return run


def _with_argnames(fun, nums, names):
    """``nondiff_argnums`` plus the positions of the parameters ``nondiff_argnames`` names
    (JAX's keyword; such an argument is passed positionally, as the rules receive it)."""
    nums = tuple(nums)
    names = (names,) if isinstance(names, str) else tuple(names)
    if not names:
        return nums
    params = [p for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    pos = {p.name: i for i, p in enumerate(params)}
    for n in names:
        if n not in pos:
            raise ValueError(f"nondiff_argnames: {n!r} is not a positional parameter of "
                             f"{getattr(fun, '__name__', fun)} (those are {list(pos)})")
    return tuple(sorted(set(nums) | {pos[n] for n in names}))


def _nondiff_split(args, nondiff_argnums):
    nd = {i % len(args) for i in nondiff_argnums} if args else set()
    return nd


def _call_key(custom, args, kwargs, nd):
    """What a call's traces depend on besides its inputs' avals: the custom function with
    its rules, the static arguments and the keyword arguments (by value), the no_grad
    state. ``None`` when one of them cannot be keyed by value (see ``custom_cache``)."""
    fk = function_key(custom)
    if fk is None:
        return None
    static = []
    for i in sorted(nd):
        k = value_key(args[i])
        if k is None:
            return None
        static.append(k)
    kw = []
    for name in sorted(kwargs):
        k = value_key(kwargs[name])
        if k is None:
            return None
        kw.append((name, k))
    return (fk, tuple(static), tuple(kw), trace_state.grad_enabled)


def _avals_key(flat):
    return tuple(get_aval(x).strip_weak() for x in flat)


def _trace_cached(kind, key, fun, flat, in_tree, concrete, name):
    """``trace_fun(fun, flat, in_tree)``: from the cache when ``key`` allows (an abstract
    trace serves every value), else traced now (with values when ``concrete``, so Python
    control flow on them works)."""
    if key is not None:
        got = cached_trace(kind, key + (_avals_key(flat), in_tree),
                           lambda: trace_fun(fun, flat, in_tree, concrete=False, name=name),
                           values_ok=concrete)
        if got is not NEEDS_VALUES:
            return got[0], got[1], True
    return trace_fun(fun, flat, in_tree, concrete=concrete, name=name) + (False,)


# ----------------------------------------------------------------------------
# custom_jvp
# ----------------------------------------------------------------------------

custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.call_like = True
custom_jvp_call_p.impl = _call_impl
custom_jvp_call_p.abstract_eval = _call_aval
custom_jvp_call_p.inline = _call_inline


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    for t in tangents[:num_consts]:
        if not isinstance(t, Zero):
            raise UnsupportedError(
                "a custom_jvp function closes over a value that is being differentiated; pass "
                "that value as an argument instead")
    xs = primals[num_consts:]
    ts = [P.instantiate(t) for t in tangents[num_consts:]]
    outs, touts = jvp(list(xs), ts)
    return list(outs), list(touts)


def _batched_body(call_jaxpr, args, dims):
    """What both custom calls' batch rules share: the operands with their batch axis first,
    the batched body (its constants hoisted to leading operands), which outputs it batches,
    the batch size and the name of the axis being batched (the rules are mapped again later,
    by jvp or grad, and their collectives must see it)."""
    cur = batching()
    mapped = [P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None]
    size = mapped[0] if mapped else cur[1]
    args = [P.moveaxis(a, d) for a, d in zip(args, dims)]
    in_dims = [0 if d is not None else None for d in dims]
    n_out = len(call_jaxpr.outvars)
    body, hoisted, out_b = batch_jaxpr(ClosedJaxpr(call_jaxpr, []), size,
                                       [d is not None for d in in_dims], [False] * n_out,
                                       as_body=True)
    out_dims = [0 if b else None for b in out_b]
    return args, in_dims, body.jaxpr, hoisted, out_dims, size, cur[0] if cur else None


def _custom_jvp_call_batch(args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    args, in_dims, call, hoisted, out_dims, size, name = _batched_body(call_jaxpr, args, dims)
    x_dims = in_dims[num_consts:]

    def batched_jvp(xs, ts):
        f = lambda xs, ts: tuple(map(list, jvp(list(xs), list(ts))))
        outs, touts = vmap(f, in_axes=(x_dims, x_dims), out_axes=(out_dims, out_dims),
                           axis_name=name, axis_size=size)(list(xs), list(ts))
        return list(outs), list(touts)

    outs = custom_jvp_call_p.bind(*hoisted, *args, call_jaxpr=call, jvp=batched_jvp,
                                  num_consts=num_consts + len(hoisted),
                                  symbolic_zeros=symbolic_zeros)
    return outs, out_dims


custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch


class custom_jvp:
    """A function with a user-defined forward-mode rule (reverse mode by transposition).

    ``@f.defjvp`` registers ``rule(primals, tangents) -> (primal_out, tangent_out)``;
    the tangent output must be linear in the tangents. Keyword arguments of a call are
    not differentiated: they reach both ``fun`` and the rule as keywords,
    ``rule(primals, tangents, **kwargs)``.
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _with_argnames(fun, nondiff_argnums, nondiff_argnames)
        self.jvp_rule = None

    def key_parts(self):
        """The function and its rule, which a cache key of a function calling this one reads
        (:mod:`autodiff.custom_cache`)."""
        return self.fun, (self.jvp_rule,)

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the forward rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``; returns
        it, so it also works as a decorator (``@f.defjvp``).
        """
        self.jvp_rule = jvp
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument: ``fn(tangent, primal_out, *primals)``."""
        def rule(primals, tangents):
            out = self(*primals)
            tout = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                c = fn(t, out, *primals)
                tout = c if tout is None else tout + c
            return out, tout if tout is not None else out * 0
        self.jvp_rule = rule

    def __call__(self, *args, **kwargs):
        if self.jvp_rule is None:
            raise TypeError(f"custom_jvp function {self.fun.__name__} has no jvp rule: "
                            f"decorate one with @{self.fun.__name__}.defjvp")
        if kwargs:
            return functools.partial(self, **kwargs) if False else self._call(args, kwargs)
        return self._call(args, {})

    def _call(self, args, kwargs):
        nd = _nondiff_split(args, self.nondiff_argnums)
        static = {i: args[i] for i in nd}
        dyn = tuple(a for i, a in enumerate(args) if i not in nd)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        fun, rule = self.fun, self.jvp_rule
        n_args = len(args)      # (the rule may be shared by later calls: no arguments held)

        def full_args(d):
            it = iter(d)
            return [static[i] if i in static else next(it) for i in range(n_args)]

        def f(*d):
            return fun(*full_args(d), **kwargs)

        if not _has_tracer(flat):
            # no transform is looking: run the body on the values (Python control flow,
            # plain numpy and all), unless it reads a traced value it closes over
            out = fun(*args, **kwargs)
            if not _result_has_tracer(out):
                return out
        concrete = _concrete_tracers(flat)
        key = _call_key(self, args, kwargs, nd)
        closed, out_tree, cached = _trace_cached("custom_jvp body", key, f, flat, in_tree,
                                                 concrete, "custom_jvp")
        call_jaxpr, consts = (_split_consts_cached if cached else split_consts)(closed)

        def jvp_user_flat(xs, ts):
            p = tree_unflatten(in_tree, xs)
            t = tree_unflatten(in_tree, ts)
            p_full = full_args(p)
            t_dyn = list(t)
            t_full = []
            it = iter(t_dyn)
            for i in range(n_args):
                t_full.append(None if i in static else next(it))
            try:
                if nd:
                    res = rule(*[static[i] for i in sorted(nd)],
                               tuple(p_full[i] for i in range(n_args) if i not in nd),
                               tuple(t_full[i] for i in range(n_args) if i not in nd),
                               **kwargs)
                else:
                    # keyword arguments are not differentiated: the rule gets them as keywords
                    res = rule(tuple(p_full), tuple(t_full), **kwargs)
            except TracerLeakError as e:
                # the rule runs when the derivative is taken, which may be after the trace of
                # a value it closes over ended (grad of vmap: vmap traces first)
                raise TracerLeakError(
                    f"{e.args[0]}\n  The custom_jvp rule of {fun.__name__} closes over a traced "
                    f"value (of an enclosing vmap, jit or loop); pass that value to "
                    f"{fun.__name__} as an argument instead (JAX has the same rule)") from None
            if not isinstance(res, (tuple, list)) or len(res) != 2:
                what = (f"a {type(res).__name__} of length {len(res)}"
                        if isinstance(res, (tuple, list)) else f"a {type(res).__name__}")
                raise TypeError(f"custom_jvp rule of {fun.__name__} must produce a pair (list or "
                                f"tuple of length two) of the primal and tangent outputs, got "
                                f"{what}")
            out, tout = res
            of, otree = tree_flatten(out)
            tf, ttree = tree_flatten(tout)
            if otree != out_tree or ttree != out_tree:
                raise TypeError(f"custom_jvp rule of {fun.__name__} returned structures {otree} "
                                f"and {ttree}; the function returns {out_tree}")
            of = [as_array(o) for o in of]
            tf = [P.convert(as_array(t), P.dtype_of(o)) for t, o in zip(tf, of)]
            tf = [P.broadcast_in_dim(t, P.shape_of(o), tuple(range(len(P.shape_of(o)) - len(P.shape_of(t)), len(P.shape_of(o)))))
                  if P.shape_of(t) != P.shape_of(o) else t for t, o in zip(tf, of)]
            return of, tf

        def jvp_traced(xs, ts, values_ok):
            """The rule as a traced program (from the cache): ``(xs, ts) -> (outs, touts)``,
            or None when it needs values (``values_ok``: the caller traces it with values
            then; else the abstract trace's error propagates)."""
            both = list(xs) + list(ts)
            n = len(xs)

            def trace():
                closed, _ = trace_fun(
                    lambda *a: sum(map(list, jvp_user_flat(list(a[:n]), list(a[n:]))), []),
                    both, tree_flatten(tuple(both))[1], concrete=False, name="custom_jvp_rule")
                return (closed,)
            got = cached_trace("custom_jvp rule", key + (_avals_key(both), in_tree), trace,
                               values_ok)
            if got is NEEDS_VALUES:
                return None
            run = _flat_rule_from_trace(got[0], len(got[0].jaxpr.outvars) // 2)
            return lambda xs, ts: run(*xs, *ts)

        def jvp_flat(xs, ts):
            # called by the jvp transform: on abstract primals a cached trace of the rule
            # when the key allows; on values (an eager jvp) the user's rule, which may then
            # check them (a singular matrix raises LinAlgError eagerly)
            run = jvp_traced(xs, ts, False) if key is not None and _abstract(xs) else None
            return run(xs, ts) if run is not None else jvp_user_flat(xs, ts)

        pretrace = _pretrace_wanted(fun, concrete)
        by_key = cached          # the rule's behaviour is decided by the key (abstract traces)
        if pretrace:
            # the rule traced now: abstractly once per key, or on the primals' values when it
            # needs them (a Python loop in it then works under grad)
            zeros = [np.zeros(P.shape_of(x), P.dtype_of(x)) for x in flat]
            run = jvp_traced(flat, zeros, True) if key is not None else None
            by_key = by_key and run is not None
            jvp_flat = run or self._pretrace_rule(jvp_user_flat, flat, in_tree) or jvp_flat
        if by_key:
            # every call with this key binds the same rule object, so grad's linearized
            # program of the enclosing function is cached and reused (autodiff.api)
            jvp_flat, = shared_rules("custom_jvp", key + (_avals_key(flat), in_tree, pretrace),
                                     lambda: (jvp_flat,))
        outs = custom_jvp_call_p.bind(*consts, *flat, call_jaxpr=call_jaxpr, jvp=jvp_flat,
                                      num_consts=len(consts), symbolic_zeros=False)
        return tree_unflatten(out_tree, outs)

    def _pretrace_rule(self, jvp_flat, flat, in_tree):
        """The rule traced now, on the primals' values (tangents stand in as zeros: a rule
        is linear in them and never branches on them), as a straight-line jaxpr that the
        jvp transform later inlines. None when the trace closes over a traced value."""
        n = len(flat)
        zeros = [np.zeros(P.shape_of(x), P.dtype_of(x)) for x in flat]
        with _PRETRACING:
            closed, _ = trace_fun(lambda *a: sum(map(list, jvp_flat(list(a[:n]), list(a[n:]))), []),
                                  list(flat) + zeros, tree_flatten(tuple(flat) + tuple(zeros))[1],
                                  concrete=True, name="custom_jvp_rule")
        if _has_tracer(closed.consts):
            return None
        run = _flat_rule_from_trace(closed, len(closed.jaxpr.outvars) // 2)
        return lambda xs, ts: run(*xs, *ts)


# ----------------------------------------------------------------------------
# custom_vjp
# ----------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.call_like = True
custom_vjp_call_p.impl = _call_impl
custom_vjp_call_p.abstract_eval = _call_aval
custom_vjp_call_p.inline = _call_inline

custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.call_like = True


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, out_avals):
    for t in tangents[:num_consts]:
        if not isinstance(t, Zero):
            raise UnsupportedError(
                "a custom_vjp function closes over a value that is being differentiated; pass "
                "that value as an argument instead")
    consts, xs = list(primals[:num_consts]), list(primals[num_consts:])
    outs, res = fwd(xs)
    ts = [P.instantiate(t) for t in tangents[num_consts:]]
    touts = custom_lin_p.bind(*res, *consts, *xs, *ts, num_res=len(res), num_consts=num_consts,
                              call_jaxpr=call_jaxpr, bwd=bwd, out_avals=tuple(out_avals))
    return list(outs), list(touts)


def custom_lin_forward(*args, num_res, num_consts, call_jaxpr, bwd, out_avals):
    """What a ``custom_lin`` equation computes when evaluated forward: the tangent outputs
    of the function's own jvp at the primals (the true derivative; ``bwd`` is its
    transpose, used in reverse mode)."""
    rest = args[num_res:]
    n = (len(rest) - num_consts) // 2
    consts_xs = list(rest[:num_consts + n])
    ts = [Zero(ShapedArray(P.shape_of(c), P.dtype_of(c))) for c in rest[:num_consts]] + list(rest[num_consts + n:])
    _, touts = jvp_eval(call_jaxpr, [], consts_xs, ts)
    return [P.instantiate(t) for t in touts]


def _custom_lin_inline(e):
    # inline rule: a custom_lin's forward meaning is the jvp of its function, traced to IR
    params = e.params
    closed = trace_flat(lambda *a: custom_lin_forward(*a, **params),
                        [v.aval for v in e.invars], name="custom_lin")
    return closed.jaxpr, list(closed.consts)


def _custom_lin_impl(*args, **params):
    return [np.asarray(x) for x in custom_lin_forward(*args, **params)]


def _custom_lin_transpose(cts, *args, num_res, num_consts, call_jaxpr, bwd, out_avals):
    res = list(args[:num_res])
    n_x = (len(args) - num_res - num_consts) // 2
    cts = [P.instantiate(c) for c in cts]
    in_cts = bwd(res, cts)
    return [None] * (num_res + num_consts + n_x) + list(in_cts)


def _custom_lin_jvp(primals, tangents, **params):
    flat = list(primals)
    closed, _ = trace_fun(lambda *a: custom_lin_forward(*a, **params), flat,
                          tf(tuple(flat))[1], concrete=False, name="custom_lin")
    outs, touts = jvp_eval(closed.jaxpr, closed.consts, flat, list(tangents))
    return outs, touts


def _custom_lin_batch(args, dims, *, num_res, num_consts, call_jaxpr, bwd, out_avals):
    # A batched custom_lin is again a custom_lin: its forward map is the batched
    # function's jvp, its transpose the user's bwd under vmap. A primal and its tangent
    # are batched together (the jvp of the batched function needs matching shapes).
    size = next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    n_x = (len(args) - num_res - num_consts) // 2
    res, consts, xs, ts = _split4(args, num_res, num_consts, n_x)
    rd, cd, xd, td = _split4(dims, num_res, num_consts, n_x)
    res = [P.moveaxis(r, d) for r, d in zip(res, rd)]
    consts = [P.moveaxis(c, d) for c, d in zip(consts, cd)]
    x_batched = [a is not None or b is not None for a, b in zip(xd, td)]
    xs = [P.moveaxis(x, d, size=size) if m else x for x, d, m in zip(xs, xd, x_batched)]
    ts = [P.moveaxis(t, d, size=size) if m else t for t, d, m in zip(ts, td, x_batched)]
    in_dims = [None if d is None else 0 for d in cd] + [0 if m else None for m in x_batched]
    n_out = len(call_jaxpr.outvars)
    bj = batch_jaxpr(ClosedJaxpr(call_jaxpr, []), size, in_dims, [0] * n_out)
    j = bj.jaxpr
    call = Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns)
    res_dims = [None if d is None else 0 for d in rd]

    def bbwd(r, cts):
        g = vmap(lambda r, c: list(bwd(list(r), list(c))), in_axes=(res_dims, 0),
                 out_axes=0)(list(r), list(cts))
        # a tangent shared by the whole batch gets the sum of its per-example cotangents
        return [c if m else P.reduce_sum(c, (0,)) for c, m in zip(g, x_batched)]

    outs = custom_lin_p.bind(*res, *bj.consts, *consts, *xs, *ts, num_res=num_res,
                             num_consts=num_consts + len(bj.consts), call_jaxpr=call, bwd=bbwd,
                             out_avals=tuple(v.aval for v in j.outvars))
    return outs, [0] * n_out


def _split4(seq, a, b, c):
    seq = list(seq)
    return seq[:a], seq[a:a + b], seq[a + b:a + b + c], seq[a + b + c:]


custom_lin_p.impl = _custom_lin_impl
custom_lin_p.abstract_eval = lambda *avals, out_avals, **_: list(out_avals)
custom_lin_p.transpose = _custom_lin_transpose
custom_lin_p.jvp = _custom_lin_jvp
custom_lin_p.is_linear = True
custom_lin_p.batch = _custom_lin_batch
custom_lin_p.inline = _custom_lin_inline


def _custom_vjp_call_batch(args, dims, *, call_jaxpr, fwd, bwd, num_consts, out_avals):
    args, in_dims, call, hoisted, out_dims, size, name = _batched_body(call_jaxpr, args, dims)
    x_dims = in_dims[num_consts:]

    def bfwd(xs):
        outs, res = vmap(lambda xs: tuple(map(list, fwd(list(xs)))), in_axes=(x_dims,),
                         out_axes=(out_dims, 0), axis_name=name, axis_size=size)(list(xs))
        return list(outs), list(res)

    def bbwd(res, cts):
        g = vmap(lambda r, c: list(bwd(list(r), list(c))), in_axes=(0, out_dims), out_axes=0,
                 axis_name=name, axis_size=size)(list(res), list(cts))
        return [P.reduce_sum(c, (0,)) if d is None else c for c, d in zip(g, x_dims)]

    outs = custom_vjp_call_p.bind(*hoisted, *args, call_jaxpr=call, fwd=bfwd, bwd=bbwd,
                                  num_consts=num_consts + len(hoisted),
                                  out_avals=tuple(v.aval for v in call.outvars))
    return outs, out_dims


custom_vjp_call_p.jvp = _custom_vjp_call_jvp
custom_vjp_call_p.batch = _custom_vjp_call_batch


class custom_vjp:
    """A function with a user-defined reverse-mode rule.

    ``f.defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)``,
    ``bwd(residuals, out_cotangent) -> tuple of input cotangents`` (one per argument).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> @ad.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (anp.clip(g, -1.0, 1.0),))
    >>> float(ad.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
    1.0

    Under ``grad`` without ``jit``, ``bwd`` runs on concrete values, so Python control
    flow on the residuals and cotangents works (under ``jit`` it is traced, and such code
    raises ``ConcretizationError`` naming its line):

    >>> @ad.custom_vjp
    ... def halve_big_grads(x):
    ...     return x
    >>> halve_big_grads.defvjp(lambda x: (x, None),
    ...                        lambda _, g: (g * 0.5 if g > 1.0 else g,))
    >>> float(ad.grad(lambda x: 4.0 * halve_big_grads(x))(1.0))
    2.0
    """

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _with_argnames(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = self.bwd = None

    def key_parts(self):
        """The function and its rules, which a cache key of a function calling this one reads
        (:mod:`autodiff.custom_cache`)."""
        return self.fun, (self.fwd, self.bwd)

    def defvjp(self, fwd, bwd):
        """Set the reverse rules: ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals,
        cotangent) -> one cotangent per argument`` (a tuple).
        """
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise TypeError(f"custom_vjp function {self.fun.__name__} has no rule: call "
                            f"{self.fun.__name__}.defvjp(fwd, bwd)")
        nd = _nondiff_split(args, self.nondiff_argnums)
        static = {i: args[i] for i in nd}
        dyn = tuple(a for i, a in enumerate(args) if i not in nd)
        flat, in_tree = tree_flatten(dyn)
        flat = [as_array(x) for x in flat]
        fun, fwd_user, bwd_user = self.fun, self.fwd, self.bwd
        # (the rules below may be shared by later calls: they hold counts, not the arguments)
        n_args, n_dyn = len(args), len(dyn)

        def full_args(d):
            it = iter(d)
            return [static[i] if i in static else next(it) for i in range(n_args)]

        if not _has_tracer(flat):
            # no transform is looking: run the body on the values (Python control flow,
            # plain numpy and all), unless it reads a traced value it closes over
            out = fun(*args, **kwargs)
            if not _result_has_tracer(out):
                return out
        concrete = _concrete_tracers(flat)
        key = _call_key(self, args, kwargs, nd)
        closed, out_tree, cached = _trace_cached("custom_vjp body", key,
                                                 lambda *d: fun(*full_args(d), **kwargs), flat,
                                                 in_tree, concrete, "custom_vjp")
        call_jaxpr, consts = (_split_consts_cached if cached else split_consts)(closed)
        # shapes and dtypes of the arguments for bwd_flat (not the tracers: a cached trace
        # holding this closure must not keep this call's trace alive)
        x_avals = [(P.shape_of(x), P.dtype_of(x)) for x in flat]
        box = {}

        def fwd_user_flat(xs):
            out, res = fwd_user(*full_args(tree_unflatten(in_tree, xs)), **kwargs)
            of, otree = tree_flatten(out)
            if otree != out_tree:
                raise TypeError(f"custom_vjp fwd of {fun.__name__} returned {otree}, the "
                                f"function returns {out_tree}")
            rf, rtree = tree_flatten(res)
            box["res_tree"] = rtree
            rf = [as_array(r) for r in rf]
            return [as_array(o) for o in of], rf

        def bwd_flat(res, cts):
            r = tree_unflatten(box["res_tree"], res)
            ct = tree_unflatten(out_tree, cts)
            if nd:
                g = bwd_user(*[static[i] for i in sorted(nd)], r, ct)
            else:
                g = bwd_user(r, ct)
            if not isinstance(g, (tuple, list)):
                raise TypeError(f"custom_vjp bwd of {fun.__name__} must return a tuple with one "
                                f"cotangent per argument, got {type(g).__name__}")
            g = tuple(g)
            if len(g) != n_dyn:
                raise TypeError(f"custom_vjp bwd of {fun.__name__} returned {len(g)} cotangents "
                                f"for {n_dyn} arguments")
            gf, _ = tree_flatten(g, is_leaf=lambda x: x is None)
            out = []
            for i, (c, (x_shape, x_dtype)) in enumerate(zip(gf, x_avals)):
                if c is None:
                    out.append(P.full(x_shape, 0, x_dtype))
                else:
                    c = as_array(c)
                    c = P.convert(c, x_dtype)
                    cs, xs = P.shape_of(c), x_shape
                    if len(cs) > len(xs) or any(d not in (1, e) for d, e in zip(cs[::-1], xs[::-1])):
                        raise ShapeError(f"custom_vjp bwd of {fun.__name__} returned a cotangent of "
                                         f"shape {cs} for argument leaf {i}, which has shape {xs}; "
                                         f"bwd must return one cotangent of its argument's shape per "
                                         f"argument", source=user_source())
                    if P.shape_of(c) != x_shape:
                        c = P.broadcast_in_dim(c, x_shape, tuple(range(len(x_shape) - len(P.shape_of(c)), len(x_shape))))
                    out.append(c)
            return out

        n_out = len(call_jaxpr.outvars)

        def fwd_traced(xs, values_ok):
            """``fwd`` as a traced program (from the cache), or None when it needs values
            (``values_ok``: the caller traces it with values then; else the abstract
            trace's error propagates)."""
            def trace():
                closed, _ = trace_fun(lambda *d: sum(map(list, fwd_user_flat(list(d))), []),
                                      xs, tree_flatten(tuple(xs))[1], concrete=False,
                                      name="custom_vjp_fwd")
                return closed, box["res_tree"]
            got = cached_trace("custom_vjp fwd", key + (_avals_key(xs), in_tree), trace,
                               values_ok)
            if got is NEEDS_VALUES:
                return None
            fwd_closed, box["res_tree"] = got
            return _flat_rule_from_trace(fwd_closed, n_out)

        def fwd_flat(xs):
            # called by the jvp rule, when a transform needs fwd: on abstract inputs a cached
            # trace of it when the key allows; on values (an eager jvp) the user's function,
            # which may then check them (a singular matrix raises LinAlgError eagerly)
            run = fwd_traced(xs, False) if key is not None and _abstract(xs) else None
            return run(*xs) if run is not None else fwd_user_flat(xs)

        pretrace = _pretrace_wanted(fun, concrete)
        by_key = cached          # the rules' behaviour is decided by the key (abstract traces)
        if pretrace:
            # fwd traced now, on the inputs' values when it needs them (a Python loop in it
            # then works under grad), else abstractly, once per key
            run = fwd_traced(flat, True) if key is not None else None
            if run is None:
                by_key = False
                with _PRETRACING:
                    fwd_closed, _ = trace_fun(
                        lambda *d: sum(map(list, fwd_user_flat(list(d))), []),
                        flat, tree_flatten(tuple(flat))[1], concrete=True,
                        name="custom_vjp_fwd")
                if not _has_tracer(fwd_closed.consts):
                    run = _flat_rule_from_trace(fwd_closed, n_out)
            if run is not None:
                fwd_flat = (lambda run: lambda xs: run(*xs))(run)
        if by_key:
            # every call with this key binds the same rule objects, so grad's linearized
            # program of the enclosing function is cached and reused (autodiff.api)
            fwd_flat, bwd_flat = shared_rules(
                "custom_vjp", key + (_avals_key(flat), in_tree, pretrace),
                lambda: (fwd_flat, bwd_flat))
        outs = custom_vjp_call_p.bind(*consts, *flat, call_jaxpr=call_jaxpr, fwd=fwd_flat,
                                      bwd=bwd_flat, num_consts=len(consts),
                                      out_avals=tuple(v.aval for v in call_jaxpr.outvars))
        return tree_unflatten(out_tree, outs)


# ============================================================================
# Taylor rules (jet). custom_vjp_call and custom_lin need none of their own: jet derives
# them from their ``inline`` bodies (the primal function; the jvp of the function).
# ============================================================================
from .core import is_inexact_dtype, trace_flat  # noqa: E402
from .errors import UnsupportedError  # noqa: E402
from .primitives.taylor_series import has_series, scale  # noqa: E402
from .transforms.jet import is_jettable, jet_eval  # noqa: E402
from .transforms.partial_eval import dce_closed  # noqa: E402


def _custom_jvp_call_taylor(ins, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    # By the true function where it can be: the user's rule gives one derivative, jet needs
    # all of them. Where it cannot (opaque host code inside, e.g. a pure_callback), by the
    # rule: z' = T(x, x') with T the rule's tangent map, so the series of z' to order K-1
    # is the jet of T at order K-1 (and z_k = (z')_{k-1} / k); T may call the function
    # again, which recurses with one order less.
    K = len(ins[0]) - 1
    if is_jettable(call_jaxpr):
        outs, oser = jet_eval(call_jaxpr, [], [s[0] for s in ins], [s[1:] for s in ins], K)
        return [[o] + list(s) for o, s in zip(outs, oser)]
    if any(has_series(s) for s in ins[:num_consts]):
        raise UnsupportedError("a custom_jvp function closes over a value that is being "
                               "differentiated; pass that value as an argument instead")
    z0 = custom_jvp_call_p.bind(
        *[s[0] for s in ins], call_jaxpr=call_jaxpr, jvp=jvp, num_consts=num_consts,
        symbolic_zeros=symbolic_zeros)
    xs = ins[num_consts:]
    x0 = [s[0] for s in xs]
    floats = [is_inexact_dtype(P.dtype_of(x)) for x in x0]
    avals = [ShapedArray(P.shape_of(x), P.dtype_of(x)) for x in x0]

    def tangent_map(*args):
        it = iter(args[len(x0):])
        ts = [next(it) if fl else P.full(a.shape, 0, P.tangent_dtype(a.dtype))
              for fl, a in zip(floats, avals)]
        _, touts = jvp(list(args[:len(x0)]), ts)
        return [P.instantiate(t) for t in touts]

    T = dce_closed(trace_flat(tangent_map, avals + [a for a, fl in zip(avals, floats) if fl],
                              name="custom_jvp_rule"))
    # x'(t) has the coefficients (m + 1) x_{m+1}
    dx = [[P.zeros_like(s[0]) if s[1] is None else s[1]]
          + [scale(s[m + 1], m + 1) for m in range(1, K)] for s, fl in zip(xs, floats) if fl]
    w, ws = jet_eval(T.jaxpr, T.consts, x0 + [d[0] for d in dx],
                     [s[1:K] for s in xs] + [d[1:] for d in dx], K - 1)
    return [[z] + [scale(([wi] + list(wsi))[k - 1], 1.0 / k) for k in range(1, K + 1)]
            for z, wi, wsi in zip(z0, w, ws)]


P.deftaylor(custom_jvp_call_p, _custom_jvp_call_taylor)
