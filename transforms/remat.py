"""Rematerialization: the ``remat`` primitive, its rules, and the save-or-recompute policies.

``outs = remat[jaxpr, policy, prevent_cse](*operands)`` calls ``jaxpr`` on the
operands. ``jaxpr`` is a :class:`~autodiff.core.Jaxpr` with no ``constvars``: the
constants of the traced function are its *leading operands* (closure conversion),
so a backend lowers the equation by inlining ``jaxpr`` with its invars bound to
the operands. ``policy`` (a :class:`Policy`) decides which primal values reverse
mode may save; ``prevent_cse`` keeps simplification from merging the equation.

How reverse mode recomputes (``vjp = transpose ∘ partial_eval ∘ jvp``):

* **jvp**: the body is differentiated; the result is again one ``remat`` equation
  (primals and tangents in, primal and tangent outputs out).
* **partial_eval** (:func:`_remat_partial_eval`) splits that body. The *known*
  equation (another ``remat``) computes the primal outputs plus the values the
  policy lets it save. The *unknown* equation (a ``remat`` too) receives those
  saved values and the checkpoint's inputs, and recomputes every other primal
  value it needs inside itself before its tangent equations.
* **transpose**: the unknown equation's body is transposed as a unit and bound as
  one more ``remat``, so the recomputation runs when the backward pass reaches
  this equation -- not up front -- and its buffers die with it.

``name[name=...]`` is the identity, used by :func:`autodiff.checkpoint_name` to
label values for the name-based policies.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> f = ad.checkpoint(lambda x: anp.sin(anp.sin(x)))
>>> print(ad.make_jaxpr(f)(np.ones(2)))
{ lambda ; a:f64[2]. let
    b:f64[2] = remat[jaxpr=
        { lambda ; a:f64[2]. let
            b:f64[2] = sin a
            c:f64[2] = sin b
          in (c,) } policy=nothing_saveable prevent_cse=True] a
  in (b,) }
"""
from ..core import (ClosedJaxpr, DropVar, Eqn, Jaxpr, Primitive, ShapedArray,
                    UndefinedPrimal, Var, Zero, trace_flat)
from .. import primitives as P
from ..backends.interpreter import run_jaxpr
from ..cache import ProgramCache
from .jet import call_rule
from .jvp import jvp_jaxpr
from .partial_eval import dce_jaxpr, split_equations
from .transpose import backward_pass
from .vmap import batch_jaxpr

__all__ = ["remat_p", "name_p", "Policy", "everything_saveable", "nothing_saveable",
           "dots_saveable", "save_only_these_names", "save_anything_except_these_names",
           "dots_with_no_batch_dims_saveable", "save_any_names_but_these",
           "save_from_both_policies", "offload_dot_with_no_batch_dims",
           "save_and_offload_only_these_names",
           "as_policy", "consts_to_invars", "inline_remat"]


# ----------------------------------------------------------------------------
# Policies: which primal values of a checkpointed body reverse mode may save
# ----------------------------------------------------------------------------

class Policy:
    """Decides, value by value, whether reverse mode may save it (else it is recomputed).

    ``saveable(eqn, var, names)``: ``var`` is an output of ``eqn`` (an equation of
    the checkpointed body) and ``names`` the labels given to it with
    :func:`autodiff.checkpoint_name`. Policies compare structurally, so two
    ``save_only_these_names("h")`` are the same policy (the jit cache relies on it).
    """

    __slots__ = ()

    def saveable(self, eqn, var, names):
        raise NotImplementedError

    def _key(self):
        return (type(self).__name__,)

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return type(self).__name__


class _EverythingSaveable(Policy):
    __slots__ = ()

    def saveable(self, eqn, var, names):
        return True

    def __repr__(self):
        return "everything_saveable"


class _NothingSaveable(Policy):
    __slots__ = ()

    def saveable(self, eqn, var, names):
        return False

    def __repr__(self):
        return "nothing_saveable"


class _DotsSaveable(Policy):
    __slots__ = ()

    def saveable(self, eqn, var, names):
        # matrix products are the expensive values to recompute; everything
        # elementwise around them is cheap
        return eqn.primitive.name == "dot_general"

    def __repr__(self):
        return "dots_saveable"


class _DotsNoBatchSaveable(Policy):
    __slots__ = ()

    def saveable(self, eqn, var, names):
        # a matrix product without batch dimensions (a layer's weights times activations)
        if eqn.primitive.name != "dot_general":
            return False
        (_, _), (lhs_b, rhs_b) = eqn.params["dimension_numbers"]
        return not lhs_b and not rhs_b

    def __repr__(self):
        return "dots_with_no_batch_dims_saveable"


class _Names(Policy):
    __slots__ = ("names", "only")

    def __init__(self, names, only):
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"checkpoint policy names must be strings, got {n!r}")
        self.names = frozenset(names)
        self.only = only

    def saveable(self, eqn, var, names):
        hit = bool(names & self.names)
        return hit if self.only else not hit

    def _key(self):
        return (self.only, tuple(sorted(self.names)))

    def __repr__(self):
        fn = "save_only_these_names" if self.only else "save_anything_except_these_names"
        return f"{fn}({', '.join(map(repr, sorted(self.names)))})"


class _AnyNamesBut(Policy):
    """Save only values labelled by ``checkpoint_name``, except those with the given names."""

    __slots__ = ("names",)

    def __init__(self, names):
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"checkpoint policy names must be strings, got {n!r}")
        self.names = frozenset(names)

    def saveable(self, eqn, var, names):
        return bool(names) and not (names & self.names)

    def _key(self):
        return (tuple(sorted(self.names)),)

    def __repr__(self):
        return f"save_any_names_but_these({', '.join(map(repr, sorted(self.names)))})"


class _Either(Policy):
    """Save a value that either policy saves (JAX's ``save_from_both_policies``)."""

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = as_policy(a), as_policy(b)

    def saveable(self, eqn, var, names):
        return bool(self.a.saveable(eqn, var, names) or self.b.saveable(eqn, var, names))

    def _key(self):
        return (self.a, self.b)

    def __repr__(self):
        return f"save_from_both_policies({self.a!r}, {self.b!r})"


class _CallablePolicy(Policy):
    """A JAX-style policy function ``fn(prim, *avals, **params) -> bool``."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def saveable(self, eqn, var, names):
        return bool(self.fn(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params))

    def _key(self):
        return (id(self.fn),)

    def __repr__(self):
        return getattr(self.fn, "__name__", "policy")


everything_saveable = _EverythingSaveable()
nothing_saveable = _NothingSaveable()
dots_saveable = _DotsSaveable()


def save_only_these_names(*names):
    """Save only values labelled with one of ``names`` by ``checkpoint_name``."""
    return _Names(names, only=True)


def save_anything_except_these_names(*names):
    """Save every value except those labelled with one of ``names``."""
    return _Names(names, only=False)


dots_with_no_batch_dims_saveable = _DotsNoBatchSaveable()


def save_any_names_but_these(*names):
    """Save only values labelled by ``checkpoint_name``, except those labelled with one of
    ``names``."""
    return _AnyNamesBut(names)


def save_from_both_policies(policy_1, policy_2):
    """Save a value that either policy saves (a logical or of the two)."""
    return _Either(policy_1, policy_2)


def offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"):
    """JAX's offloading variant of :data:`dots_with_no_batch_dims_saveable`. Saved values
    already live in host memory here, so offloading is saving: the same policy."""
    return dots_with_no_batch_dims_saveable


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src="device",
                                      offload_dst="pinned_host"):
    """JAX's offloading variant of :func:`save_only_these_names`: both groups of names are
    saved (host memory is where saved values live here). The groups must not overlap."""
    saved = frozenset(names_which_can_be_saved)
    offloaded = frozenset(names_which_can_be_offloaded)
    both = saved & offloaded
    if both:
        raise ValueError(f"names_which_can_be_saved and names_which_can_be_offloaded must "
                         f"not share names; both hold {sorted(both)}")
    return _Names(saved | offloaded, only=True)


def as_policy(policy):
    """``None`` -> :data:`nothing_saveable`; a :class:`Policy` as is; a callable wrapped."""
    if policy is None:
        return nothing_saveable
    if isinstance(policy, Policy):
        return policy
    if callable(policy):
        return _CallablePolicy(policy)
    raise TypeError(f"checkpoint policy must be one of ad.checkpoint_policies or a function "
                    f"(prim, *avals, **params) -> bool, got {policy!r}")


# ----------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------

def consts_to_invars(closed):
    """``(Jaxpr whose leading invars are closed's constvars, consts)``: remat's body form."""
    j = closed.jaxpr
    if not j.constvars:
        return j, []
    return Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), list(closed.consts)


def _strip(aval):
    return ShapedArray(aval.shape, aval.dtype)


def _source_key(jaxpr):
    return tuple((s.filename, s.lineno) if s is not None else None
                 for s in (e.source for e in jaxpr.eqns))


def _cached(fn):
    """Memoize a rule's body transformation by the body's structure (and source lines).

    Layers traced separately but alike (every segment of checkpoint_sequential) share
    one transformed body; source lines are part of the key so residual reports name
    the right lines. A program cache, not a per-call memo: its entries outlive the trace
    that made them (the next grad of the same model hits), so it is bounded like the
    others (autodiff.cache, listed as "remat", ``ad.config.remat_cache_size`` per rule).
    """
    cache = ProgramCache("remat", "remat_cache_size")

    def wrapped(jaxpr, *args):
        key = (jaxpr, _source_key(jaxpr)) + args
        try:
            r = cache.get(key)
        except TypeError:        # an unhashable param somewhere in the body
            return fn(jaxpr, *args)
        if r is None:
            r = fn(jaxpr, *args)
            cache.put(key, r)
        return r

    wrapped.cache = cache
    return wrapped


# ----------------------------------------------------------------------------
# The remat primitive
# ----------------------------------------------------------------------------

remat_p = Primitive("remat", multiple_results=True)
remat_p.call_like = True


def _remat_impl(*args, jaxpr, policy, prevent_cse):
    return run_jaxpr(jaxpr, [], list(args))


def _remat_abstract_eval(*avals, jaxpr, policy, prevent_cse):
    return [v.aval for v in jaxpr.outvars]


@_cached
def _jvp_body(jaxpr, nonzeros):
    closed, out_nz = jvp_jaxpr(ClosedJaxpr(jaxpr, []), list(nonzeros), instantiate=False)
    body, consts = consts_to_invars(closed)
    return body, consts, tuple(out_nz)


def _remat_jvp(primals, tangents, *, jaxpr, policy, prevent_cse):
    # d(remat f) = remat (d f): the tangent program stays inside the checkpoint, so
    # partial evaluation can decide there what to save
    nonzeros = tuple(not isinstance(t, Zero) for t in tangents)
    body, consts, out_nz = _jvp_body(jaxpr, nonzeros)
    ts = [t for t in tangents if not isinstance(t, Zero)]
    outs = remat_p.bind(*consts, *primals, *ts, jaxpr=body, policy=policy,
                        prevent_cse=prevent_cse)
    n = len(jaxpr.outvars)
    it = iter(outs[n:])
    touts = [next(it) if nz else Zero(_strip(v.aval)) for nz, v in zip(out_nz, jaxpr.outvars)]
    return list(outs[:n]), touts


class _Split:
    """A checkpointed body split by partial evaluation under a policy.

    * ``known``: (used known inputs) -> (known outputs..., saved values...)
    * ``unknown``: (needed known inputs..., saved values..., unknown inputs...) -> unknown outputs;
      it recomputes every other primal value it reads.
    """

    __slots__ = ("known", "known_used", "unknown", "needed", "saved_avals", "out_unknowns")


def _var_names(eqns):
    """Labels of each variable from ``name`` equations (a label also covers its input)."""
    names = {}
    for e in eqns:
        if e.primitive is name_p:
            (x,), (o,) = e.invars, e.outvars
            s = names.get(x, frozenset()) | {e.params["name"]}
            names[o] = names.get(o, frozenset()) | s
            if isinstance(x, Var):
                names[x] = s
    for e in reversed(eqns):       # name(name(x)): x carries both labels
        if e.primitive is name_p and isinstance(e.invars[0], Var):
            names[e.invars[0]] = names.get(e.invars[0], frozenset()) | names[e.outvars[0]]
    return names


@_cached
def _split_body(jaxpr, unknowns, policy):
    known_eqns, unknown_eqns, unk = split_equations(jaxpr, unknowns)
    out_unk = tuple(isinstance(v, Var) and v in unk for v in jaxpr.outvars)
    un_inputs = [v for v, u in zip(jaxpr.invars, unknowns) if u]
    kn_inputs = [v for v, u in zip(jaxpr.invars, unknowns) if not u]
    un_outs = [v for v, u in zip(jaxpr.outvars, out_unk) if u]
    kn_outs = [v for v, u in zip(jaxpr.outvars, out_unk) if not u]
    uj, _ = dce_jaxpr(Jaxpr((), un_inputs, un_outs, unknown_eqns))

    # what the unknown side reads from the known side: save it if the policy allows,
    # else recompute its producer (and, transitively, what that reads)
    producer = {o: e for e in known_eqns for o in e.outvars}
    kn_input_set = set(kn_inputs)
    names = _var_names(known_eqns)
    needed, saved, recompute = [], [], set()
    seen = set()
    no_names = frozenset()
    stack = []
    for e in uj.eqns:
        stack.extend(v for v in e.invars if isinstance(v, Var))
    stack.extend(v for v in uj.outvars if isinstance(v, Var))
    while stack:
        v = stack.pop()
        if v in seen or v in unk:
            continue
        seen.add(v)
        if v in kn_input_set:
            needed.append(v)
            continue
        e = producer[v]
        if id(e) in recompute:
            continue
        cheap = not any(isinstance(u, Var) for u in e.invars) and not e.primitive.call_like
        if not cheap and policy.saveable(e, v, names.get(v, no_names)):
            saved.append(v)
            continue
        recompute.add(id(e))
        stack.extend(u for u in e.invars if isinstance(u, Var))

    saved_set = set(saved)
    rec_eqns = []
    for e in known_eqns:
        if id(e) in recompute:
            if any(o in saved_set for o in e.outvars):
                e = e.replace(outvars=[DropVar(o.aval) if o in saved_set else o
                                       for o in e.outvars])
            rec_eqns.append(e)
    order = {v: i for i, v in enumerate(kn_inputs)}
    needed.sort(key=order.__getitem__)

    s = _Split()
    kj, used = dce_jaxpr(Jaxpr((), kn_inputs, kn_outs + saved, known_eqns), prune_invars=True)
    s.known = kj
    s.known_used = tuple(i for i, u in enumerate(used) if u)
    s.unknown = Jaxpr((), needed + saved + un_inputs, un_outs, rec_eqns + list(uj.eqns))
    s.needed = tuple(order[v] for v in needed)
    s.saved_avals = tuple(v.aval for v in saved)
    s.out_unknowns = out_unk
    return s


def _remat_partial_eval(eqn, unknowns):
    s = _split_body(eqn.params["jaxpr"], tuple(unknowns), eqn.params["policy"])
    known_ops = [v for v, u in zip(eqn.invars, unknowns) if not u]
    unknown_ops = [v for v, u in zip(eqn.invars, unknowns) if u]
    res = [Var(a) for a in s.saved_avals]
    known, unknown = [], []
    k_out = [v for v, u in zip(eqn.outvars, s.out_unknowns) if not u] + res
    if k_out:
        known.append(Eqn(remat_p, [known_ops[i] for i in s.known_used], k_out,
                         dict(eqn.params, jaxpr=s.known), eqn.source))
    u_out = [v for v, u in zip(eqn.outvars, s.out_unknowns) if u]
    if u_out:
        unknown.append(Eqn(remat_p, [known_ops[i] for i in s.needed] + res + unknown_ops, u_out,
                           dict(eqn.params, jaxpr=s.unknown), eqn.source))
    return known, unknown


@_cached
def _transpose_body(jaxpr, linear, ct_nonzeros):
    nonlin_avals = [_strip(v.aval) for v, l in zip(jaxpr.invars, linear) if not l]
    ct_avals = [_strip(v.aval) for v, nz in zip(jaxpr.outvars, ct_nonzeros) if nz]
    nn = len(nonlin_avals)

    def fun(*xs):
        it = iter(xs[:nn])
        args = [None if l else next(it) for l in linear]
        ci = iter(xs[nn:])
        cts = [next(ci) if nz else Zero(_strip(v.aval))
               for v, nz in zip(jaxpr.outvars, ct_nonzeros)]
        # the body's non-linear equations (the recomputation) run here, forward,
        # followed by the transposed linear equations
        res = backward_pass(jaxpr, [], list(linear), args, cts)
        return [P.instantiate(c) for c, l in zip(res, linear) if l]

    closed = trace_flat(fun, nonlin_avals + ct_avals, name="remat_transpose")
    return consts_to_invars(closed)


def _remat_transpose(cts, *args, jaxpr, policy, prevent_cse):
    linear = tuple(isinstance(a, UndefinedPrimal) for a in args)
    cts = list(cts)
    ct_nz = tuple(c is not None and not isinstance(c, Zero) for c in cts)
    body, consts = _transpose_body(jaxpr, linear, ct_nz)
    nonlin = [a for a, l in zip(args, linear) if not l]
    outs = remat_p.bind(*consts, *nonlin, *[c for c, nz in zip(cts, ct_nz) if nz],
                        jaxpr=body, policy=policy, prevent_cse=prevent_cse)
    it = iter(outs)
    return [next(it) if l else None for l in linear]


def _remat_batch(args, dims, *, jaxpr, policy, prevent_cse):
    size = next(P.shape_of(a)[d] for a, d in zip(args, dims) if d is not None)
    args = [P.moveaxis(a, d) for a, d in zip(args, dims)]
    in_dims = [0 if d is not None else None for d in dims]
    n_out = len(jaxpr.outvars)
    bj = batch_jaxpr(ClosedJaxpr(jaxpr, []), size, in_dims, [0] * n_out)
    body, consts = consts_to_invars(bj)
    outs = remat_p.bind(*consts, *args, jaxpr=body, policy=policy, prevent_cse=prevent_cse)
    return outs, [0] * n_out


remat_p.impl = _remat_impl
remat_p.abstract_eval = _remat_abstract_eval
remat_p.jvp = _remat_jvp
remat_p.partial_eval = _remat_partial_eval
remat_p.transpose = _remat_transpose
remat_p.batch = _remat_batch
# Taylor mode inlines the body: it is forward-only, there is nothing to save
P.deftaylor(remat_p, call_rule(lambda ins, params: (params["jaxpr"], [])))


def _remat_dce(e, used_outputs):
    """DCE of a remat equation: its body keeps only what the used outputs need."""
    body, used_in = dce_jaxpr(e.params["jaxpr"], used_outputs, prune_invars=True,
                              prune_calls=True)
    return Eqn(remat_p, [v for v, u in zip(e.invars, used_in) if u],
               [o for o, u in zip(e.outvars, used_outputs) if u], dict(e.params, jaxpr=body),
               e.source)


remat_p.dce_rule = _remat_dce


# ----------------------------------------------------------------------------
# name: the identity, carrying a label for the name-based policies
# ----------------------------------------------------------------------------

name_p = Primitive("name")
name_p.impl = lambda x, *, name: x
name_p.abstract_eval = lambda x, *, name: x
name_p.jvp = lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0])
name_p.transpose = lambda ct, x, *, name: [ct]
name_p.batch = lambda args, dims, *, name: (name_p.bind(args[0], name=name), dims[0])
P.deftaylor(name_p, lambda ins, *, name: [name_p.bind(ins[0][0], name=name)] + list(ins[0][1:]))


def inline_remat(closed):
    """The same program with every ``remat`` body inlined (recursively), vars renamed.

    This is how a backend lowers ``remat``: the body's equations run in place, in the
    program's order, so a recomputation still happens where the backward pass needs
    it. Run common-subexpression elimination *before* inlining, never after: merged
    with the forward pass, a recomputed value would live from forward to backward.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> cj = ad.make_jaxpr(ad.checkpoint(lambda x: anp.sin(x) * 2.0))(np.ones(2))
    >>> print(inline_remat(cj))
    { lambda ; a:f64[2]. let
        b:f64[2] = sin a
        c:f64[2] = mul b 2.0:f64[]
      in (c,) }
    """
    j = closed.jaxpr
    eqns = []

    def emit(jaxpr, args):
        """Append ``jaxpr``'s equations on ``args``; returns its output atoms."""
        env = dict(zip(jaxpr.invars, args))

        def rd(v):
            return env.get(v, v) if isinstance(v, Var) else v

        for e in jaxpr.eqns:
            ins = [rd(v) for v in e.invars]
            if e.primitive is remat_p:
                outs = emit(e.params["jaxpr"], ins)
            else:
                outs = [DropVar(o.aval) if isinstance(o, DropVar) else Var(o.aval)
                        for o in e.outvars]
                eqns.append(e.replace(invars=ins, outvars=outs))
            env.update(zip(e.outvars, outs))
        return [rd(v) for v in jaxpr.outvars]

    outs = emit(Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns),
                list(j.constvars) + list(j.invars))
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outs, eqns), closed.consts)


def internal_residuals(jaxpr, linear):
    """Avals of the values a transposed ``remat`` body holds for its linear equations.

    These are the residuals of one checkpoint, recomputed in the backward pass and
    alive only while it is transposed. Returns ``(avals, nested)`` where ``nested``
    lists ``(jaxpr, linear)`` of remat equations inside (for a recursive count).
    """
    lin = {v for v, l in zip(jaxpr.invars, linear) if l}
    nonlin_read, nested = [], []
    seen = set(jaxpr.invars)     # the equation's operands are counted by its caller
    for e in jaxpr.eqns:
        is_lin = [isinstance(v, Var) and v in lin for v in e.invars]
        if not any(is_lin):
            continue
        lin.update(e.outvars)
        if e.primitive is remat_p:
            nested.append((e.params["jaxpr"], tuple(is_lin)))
        for v, l in zip(e.invars, is_lin):
            if isinstance(v, Var) and not l and v not in seen:
                seen.add(v)
                nonlin_read.append(v)
    return [v.aval for v in nonlin_read], nested
