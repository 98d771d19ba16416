"""The IR: :class:`Var`, :class:`Literal`, :class:`Eqn`, :class:`Jaxpr`, :class:`ClosedJaxpr`,
their structural keys and printing, the :class:`Primitive` registry, and the markers the
transforms' rules use (:class:`Zero`, :class:`UndefinedPrimal`)."""
import itertools

import numpy as np

from .avals import _VALID_KINDS, _scalar_aval, value_aval

__all__ = ["Var", "DropVar", "Literal", "Eqn", "Jaxpr", "ClosedJaxpr", "eqn_effectful", "param_key", "SIZE_PARAMS",
           "var_namer", "pp_param", "pp_jaxpr", "jaxpr_to_dot", "last_uses", "typecheck_jaxpr",
           "Zero", "UndefinedPrimal", "not_mapped"]

# ----------------------------------------------------------------------------
# IR: Var, Literal, Eqn, Jaxpr, ClosedJaxpr
# ----------------------------------------------------------------------------

_var_ids = itertools.count()


class Var:
    """A variable of the IR. Identity is the object; the name is given when printing."""

    __slots__ = ("aval", "id")

    def __init__(self, aval):
        self.aval = aval
        self.id = next(_var_ids)

    def __reduce__(self):
        # a fresh id on the receiving side (ids are unique per process); pickle's memo keeps
        # one object per variable, so the jaxpr's wiring survives
        return (type(self), (self.aval,))

    def __repr__(self):
        return f"Var({self.id}:{self.aval.str_short()})"


class DropVar(Var):
    """An output nobody reads (printed ``_``)."""
    __slots__ = ()


class Literal:
    """A scalar constant inlined into an equation."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval=None):
        if aval is None and isinstance(val, np.generic) and val.dtype.kind in _VALID_KINDS:
            self.aval = _scalar_aval(val.dtype)          # fast path: a numpy scalar
            self.val = val
            return
        self.aval = aval if aval is not None else value_aval(val)
        self.val = np.asarray(val, dtype=self.aval.dtype)[()]

    def __reduce__(self):
        return (Literal, (self.val, self.aval))

    def _key(self):
        v = self.val
        k = v.item() if hasattr(v, "item") else v
        if k == 0 and isinstance(k, float):
            k = repr(k)                  # keep 0.0 and -0.0 apart
        return ("lit", self.aval, k)

    def __repr__(self):
        return f"Literal({self.val!r})"


class Eqn:
    """``outvars = primitive[params](invars)``, with the user's source line."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source")

    def __init__(self, primitive, invars, outvars, params, source=None):
        self.primitive = primitive
        self.invars = tuple(invars)
        self.outvars = tuple(outvars)
        self.params = params
        self.source = source

    def replace(self, **kw):
        """A copy of the equation with the given fields (``primitive``, ``invars``, ``outvars``,
        ``params``, ``source``) replaced."""
        d = dict(primitive=self.primitive, invars=self.invars, outvars=self.outvars,
                 params=self.params, source=self.source)
        d.update(kw)
        return Eqn(**d)

    def __repr__(self):
        return f"Eqn({self.primitive.name}, {self.invars} -> {self.outvars})"


class Jaxpr:
    """An open program: ``constvars`` and ``invars`` in, ``outvars`` out.

    Immutable. Equality and hashing are structural: two jaxprs that differ only in
    variable identities are equal (the jit cache keys on this).
    """

    __slots__ = ("constvars", "invars", "outvars", "eqns", "_key_cache", "_hash")

    def __init__(self, constvars, invars, outvars, eqns):
        self.constvars = tuple(constvars)
        self.invars = tuple(invars)
        self.outvars = tuple(outvars)
        self.eqns = tuple(eqns)
        self._key_cache = {}
        self._hash = None

    def key(self, shapes=True):
        """Structural key; ``shapes=False`` keeps ranks and dtypes but drops sizes."""
        k = self._key_cache.get(shapes)
        if k is None:
            k = _jaxpr_key(self, shapes)
            self._key_cache[shapes] = k
        return k

    def __reduce__(self):
        return (Jaxpr, (self.constvars, self.invars, self.outvars, self.eqns))

    def __eq__(self, other):
        return isinstance(other, Jaxpr) and (self is other or self.key() == other.key())

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self.key())
        return self._hash

    in_avals = property(lambda self: [v.aval for v in self.invars],
                        doc="The abstract values (shape, dtype) of the inputs.")
    out_avals = property(lambda self: [v.aval for v in self.outvars],
                         doc="The abstract values of the outputs.")

    def __str__(self):
        return pp_jaxpr(self)

    __repr__ = __str__

    def to_dot(self, in_names=None, out_names=None):
        """Graphviz ``dot`` source of this program (see :func:`autodiff.render.jaxpr_to_dot`)."""
        return jaxpr_to_dot(self, in_names, out_names)

    def render(self, path, format=None):  # noqa: A002
        """Write a picture of this program to ``path`` (see :func:`autodiff.render.render`)."""
        return _render.render(self, path, format)

    def _repr_svg_(self):
        return _render.repr_svg(self)

    def _repr_html_(self):
        return _render.repr_html(self)


class ClosedJaxpr:
    """A :class:`Jaxpr` together with the values of its ``constvars``."""

    __slots__ = ("jaxpr", "consts", "_hash", "_names")

    def __init__(self, jaxpr, consts=(), names=None):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        assert len(self.consts) == len(jaxpr.constvars)
        self._hash = None
        self._names = names       # (input names, output names) for pictures, from make_jaxpr

    in_avals = property(lambda self: self.jaxpr.in_avals, doc="The inputs' abstract values.")
    out_avals = property(lambda self: self.jaxpr.out_avals, doc="The outputs' abstract values.")
    eqns = property(lambda self: self.jaxpr.eqns, doc="The equations of the program.")

    def __reduce__(self):
        # plain pickle works too: primitives travel by name (Primitive.__reduce__)
        return (ClosedJaxpr, (self.jaxpr, self.consts, self._names))

    def _const_key(self):
        return tuple(_value_key(c) for c in self.consts)

    def __eq__(self, other):
        return (isinstance(other, ClosedJaxpr) and
                (self is other or (self.jaxpr == other.jaxpr
                                   and self._const_key() == other._const_key())))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.jaxpr, self._const_key()))
        return self._hash

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    def to_dot(self, in_names=None, out_names=None):
        """Graphviz ``dot`` source of this program (see :func:`autodiff.render.jaxpr_to_dot`)."""
        return jaxpr_to_dot(self, in_names, out_names)

    render = Jaxpr.render
    _repr_svg_ = Jaxpr._repr_svg_
    _repr_html_ = Jaxpr._repr_html_

    def __call__(self, *args):
        return _Evaluator.eval_jaxpr(self.jaxpr, self.consts, *args)


def eqn_effectful(e):
    """Whether equation ``e`` has a side effect, so that it is never dead, folded or merged:
    its primitive is effectful (``debug_callback``), or a jaxpr among its params (a
    ``cond``'s branches, a ``scan``'s or ``while``'s body) holds an effectful equation,
    however deep.

    >>> import numpy as np, autodiff as ad
    >>> def f(x):
    ...     ad.lax.cond(x > 0, lambda v: ad.debug.print("{}", v), lambda v: None, x)
    ...     return x
    >>> [eqn_effectful(e) for e in ad.make_jaxpr(f)(1.0).jaxpr.eqns][-1]
    True
    """
    if getattr(e.primitive, "effectful", False):
        return True
    if getattr(e.params.get("callback"), "effectful", False):      # an io_callback
        return True
    return any(_jaxpr_effectful(j.jaxpr if isinstance(j, ClosedJaxpr) else j)
               for _, j in sub_jaxprs(e.params))


def sub_jaxprs(params):
    """``[(label, jaxpr), ...]`` of the sub-programs (``Jaxpr`` or ``ClosedJaxpr``) among an
    equation's parameters: a ``cond``'s ``branches[i]``, a ``scan``'s ``jaxpr``, ..."""
    out = []
    for k, v in sorted(params.items()):
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            out.append((k, v))
        elif (isinstance(v, (tuple, list)) and v
              and all(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v)):
            out.extend((f"{k}[{i}]", x) for i, x in enumerate(v))
    return out


_EFFECT_MEMO = {}


def _jaxpr_effectful(jaxpr):
    got = _EFFECT_MEMO.get(id(jaxpr))
    if got is None or got[0] is not jaxpr:
        if len(_EFFECT_MEMO) > 4096:
            _EFFECT_MEMO.clear()
        got = _EFFECT_MEMO[id(jaxpr)] = (jaxpr, any(eqn_effectful(e) for e in jaxpr.eqns))
    return got[1]


def _value_key(c):
    if isinstance(c, np.ndarray):
        if c.size <= 64:
            return ("arr", c.shape, c.dtype.str, c.tobytes())
        return ("arr-id", id(c), c.shape, c.dtype.str)
    return ("obj", id(c))       # a tracer too: by identity


_ATOM_TYPES = frozenset((int, bool, float, str, type(None)))


def _atoms_only(t):
    """A tuple (nested) of ints, strs, ... only: its own key (the common params: axes,
    shapes, dimension numbers), recognised without building a new tuple."""
    atoms = _ATOM_TYPES
    for x in t:
        tx = type(x)
        if tx is tuple:
            if not _atoms_only(x):
                return False
        elif tx not in atoms:
            return False
    return True


def param_key(v, shapes):
    """A hashable, structural key of an equation parameter (sizes dropped when ``shapes`` is false)."""
    tv = type(v)
    if tv in _ATOM_TYPES:
        return v
    if tv is tuple and _atoms_only(v):
        return v
    if isinstance(v, ClosedJaxpr):
        return ("closed", v.jaxpr.key(shapes), v._const_key())
    if isinstance(v, Jaxpr):
        return ("jaxpr", v.key(shapes))
    if isinstance(v, tuple):
        return tuple(param_key(x, shapes) for x in v)
    if isinstance(v, np.dtype):
        return v.str
    if callable(v) and not isinstance(v, type):
        return ("fn", id(v))
    return v


# Params that are sizes (dropped from shape-generic keys)
SIZE_PARAMS = {"shape", "new_sizes", "start_indices", "limit_indices", "slice_sizes",
               "padding_config", "axis_size", "length", "sizes"}


def _jaxpr_key(jaxpr, shapes):
    """The structural key behind :meth:`Jaxpr.key` (memoized there, once per jaxpr).

    Computed on every un-jitted grad call (the transform cache keys on it), so it is one
    pass of dictionary lookups building flat tuples: variables become their position in
    the program, avals ``(shape or rank, dtype, weak)``, literals ``(dtype, weak, bytes)``
    (bytes keep 0.0 and -0.0 apart), params their :func:`param_key`.
    """
    names = {}
    lit = Literal
    pk = param_key
    sized = SIZE_PARAMS
    for v in jaxpr.constvars:
        names[v] = len(names)
    for v in jaxpr.invars:
        names[v] = len(names)
    if shapes:
        parts = [tuple([(v.aval.shape, v.aval.dtype, v.aval.weak_type) for v in jaxpr.constvars]),
                 tuple([(v.aval.shape, v.aval.dtype, v.aval.weak_type) for v in jaxpr.invars])]
    else:
        parts = [tuple([(len(v.aval.shape), v.aval.dtype, v.aval.weak_type)
                        for v in jaxpr.constvars]),
                 tuple([(len(v.aval.shape), v.aval.dtype, v.aval.weak_type)
                        for v in jaxpr.invars])]
    append = parts.append
    for e in jaxpr.eqns:
        ins = []
        for v in e.invars:
            if v.__class__ is lit:
                a, x = v.aval, v.val
                ins.append((a.dtype, a.weak_type, x.tobytes() if isinstance(x, np.generic)
                            else v._key()))
            else:
                ins.append(names[v])
        outs = e.outvars
        if len(outs) == 1:
            o = outs[0]
            names[o] = len(names)
            a = o.aval
            out = (a.shape if shapes else len(a.shape), a.dtype, a.weak_type)
        else:
            out = []
            for o in outs:
                names[o] = len(names)
                a = o.aval
                out.append((a.shape if shapes else len(a.shape), a.dtype, a.weak_type))
            out = tuple(out)
        ps = e.params
        # (in the params' own order, not sorted: one primitive's binds pass them in one
        # order, and a key that tells two orders apart only costs a cache miss)
        if not ps:
            params = ()
        elif shapes:
            params = tuple([(k, pk(p, True)) for k, p in ps.items()])
        else:
            params = tuple([(k, "?" if k in sized else pk(p, False)) for k, p in ps.items()])
        append((e.primitive.name, tuple(ins), out, params))
    append(tuple([v._key() if v.__class__ is lit else names[v] for v in jaxpr.outvars]))
    return tuple(parts)


# ----------------------------------------------------------------------------
# Pretty printing and Graphviz
# ----------------------------------------------------------------------------

def var_namer():
    """A namer for printing: ``a``, ``b``, ... in first-seen order for the Vars of one program."""
    names = {}

    def name(v):
        if isinstance(v, Literal):
            val = v.val
            if v.aval.dtype == np.bool_:
                s = "True" if val else "False"
            elif np.issubdtype(v.aval.dtype, np.floating):
                s = repr(float(val))
            elif v.aval.dtype.kind == "c":
                s = repr(complex(val))
            else:
                s = str(int(val))
            return f"{s}:{v.aval.str_short()}"
        if isinstance(v, DropVar):
            return "_"
        n = names.get(v)
        if n is None:
            i = len(names)
            s = ""
            while True:
                s = chr(ord("a") + i % 26) + s
                i = i // 26 - 1
                if i < 0:
                    break
            names[v] = n = s
        return n

    return name


def pp_param(v, name, indent):
    """The printed form of parameter ``name``'s value ``v`` (sub-jaxprs indented)."""
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):
        inner = pp_jaxpr(v, indent + 4)
        return "\n" + inner
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, tuple) and v and all(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        return "(" + ", ".join(pp_param(x, name, indent) for x in v) + ")"
    if callable(v) and not isinstance(v, type):
        return getattr(v, "__name__", "<fn>")
    return repr(v) if isinstance(v, str) else str(v)


def pp_jaxpr(jaxpr, indent=0, name=None):
    """Jaxpr text in the familiar style: ``{ lambda consts ; ins. let ... in (outs,) }``."""
    name = name or var_namer()
    pad = " " * indent

    def decl(v):
        return f"{name(v)}:{v.aval.str_short()}"

    consts = " ".join(decl(v) for v in jaxpr.constvars)
    ins = " ".join(decl(v) for v in jaxpr.invars)
    lines = [f"{pad}{{ lambda {consts}{' ' if consts else ''}; {ins}. let"]
    for e in jaxpr.eqns:
        outs = " ".join(decl(v) for v in e.outvars)
        params = ""
        if e.params:
            items = [f"{k}={pp_param(v, name, indent + 4)}" for k, v in sorted(e.params.items())]
            params = "[" + " ".join(items) + "]"
        args = " ".join(name(v) for v in e.invars)
        lines.append(f"{pad}    {outs} = {e.primitive.name}{params} {args}".rstrip())
    outs = ", ".join(name(v) for v in jaxpr.outvars)
    if len(jaxpr.outvars) == 1:
        outs += ","
    lines.append(f"{pad}  in ({outs}) }}")
    return "\n".join(lines)


def jaxpr_to_dot(jaxpr, in_names=None, out_names=None):
    """Graphviz ``digraph`` source; the drawing lives in :mod:`autodiff.render`."""
    return _render.jaxpr_to_dot(jaxpr, in_names, out_names)


def last_uses(jaxpr):
    """Per equation, the variables read for the last time there (outputs are kept).

    Evaluators use it to release buffers as early as possible.
    """
    last = {}
    for i, e in enumerate(jaxpr.eqns):
        for v in e.invars:
            if isinstance(v, Var):
                last[v] = i
    keep = set(v for v in jaxpr.outvars if isinstance(v, Var))
    frees = [[] for _ in jaxpr.eqns]
    for v, i in last.items():
        if v not in keep:
            frees[i].append(v)
    return frees


def typecheck_jaxpr(jaxpr):
    """Check every equation: inputs defined, abstract_eval agrees with out avals."""
    env = set(jaxpr.constvars) | set(jaxpr.invars)
    for e in jaxpr.eqns:
        for v in e.invars:
            if isinstance(v, Var) and v not in env:
                raise TypeError(f"jaxpr typecheck: {e.primitive.name} reads undefined {v}")
        in_avals = [v.aval for v in e.invars]
        outs = e.primitive.abstract_eval(*in_avals, **e.params)
        outs = outs if e.primitive.multiple_results else [outs]
        for o, v in zip(outs, e.outvars):
            if o.shape != v.aval.shape or o.dtype != v.aval.dtype:
                raise TypeError(f"jaxpr typecheck: {e.primitive.name} produces {o}, "
                                f"equation says {v.aval}")
        env.update(e.outvars)
    for v in jaxpr.outvars:
        if isinstance(v, Var) and v not in env:
            raise TypeError(f"jaxpr typecheck: output {v} undefined")
    return True



# ----------------------------------------------------------------------------
# Markers used by the rules of the transforms
# ----------------------------------------------------------------------------

class Zero:
    """A symbolic zero tangent/cotangent: no equations are spent on it."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """A linear input of an equation being transposed (its value is what we solve for)."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


not_mapped = None   # batch dimension of an unbatched operand


class _Evaluator:
    """How ``ClosedJaxpr.__call__`` evaluates: tracing (the layer above, which binds on
    tracers and values) installs its ``eval_jaxpr`` here when it is imported."""
    eval_jaxpr = None


def install_evaluator(eval_jaxpr):
    """Called once by :mod:`autodiff.tracing`."""
    _Evaluator.eval_jaxpr = staticmethod(eval_jaxpr)


# the pictures of a program (a peer module that reads these classes): imported last, so that
# it finds them defined whichever of the two is imported first
from . import render as _render  # noqa: E402
