"""The IR and the tracer: what every transform and backend shares.

A function is traced into a :class:`Jaxpr`: a typed, immutable list of equations
``outs = primitive[params](ins)`` over :class:`Var` s and :class:`Literal` s, each
equation remembering the user's ``file:line``. Transforms are functions
``Jaxpr -> Jaxpr``; backends are functions ``Jaxpr -> callable``.

Tracing. ``bind`` on a :class:`Tracer` records an equation into the tracer's
:class:`JaxprTrace`; ``bind`` on concrete values runs the primitive's ``impl``.
Traces nest: each has a level, an operation records into the innermost trace any
of its inputs belongs to, and a tracer of an outer trace used inside an inner one
is lifted to a constant input of the inner jaxpr. So a transform called on tracers
(``grad`` inside ``grad``) evaluates its rewritten jaxpr with ``bind`` and thereby
inlines it into the outer trace: that is all composition needs.

Concrete mode. Under ``grad``/``jvp``/``vjp`` without ``jit``, a trace knows the
values of its inputs and computes any intermediate value on demand (``bool(x > 0)``
forces just the equations it depends on), so Python control flow on values works.
Under ``jit`` the trace is abstract and the same request raises
:class:`~autodiff.errors.ConcretizationError`.

>>> import autodiff as ad, autodiff.numpy as anp, numpy as np
>>> print(ad.make_jaxpr(lambda x: anp.sin(x) * 2.0)(np.ones(3)))
{ lambda ; a:f64[3]. let
    b:f64[3] = sin a
    c:f64[3] = mul b 2.0:f64[]
  in (c,) }
"""
import functools
import itertools
import os
import sys
import threading
import types

import numpy as np

from ._tracer_methods import ArrayMethods
from .cache import ProgramCache
from .errors import ConcretizationError, DTypeError, ShapeError, TracerLeakError

# ----------------------------------------------------------------------------
# Abstract values
# ----------------------------------------------------------------------------

_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "bool", "complex128": "c128", "complex64": "c64"}


class ShapedArray:
    """Abstract value: shape, dtype, and whether the dtype is weak (from a Python scalar)."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        # built once per traced value: keep the common case (a tuple, a np.dtype) cheap
        self.shape = tuple(map(int, shape))
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = None

    ndim = property(lambda self: len(self.shape), doc="Number of dimensions.")
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)),
                    doc="Number of elements.")

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def __reduce__(self):
        # the cached hash is not sent: it need not hold in another process
        return (ShapedArray, (self.shape, self.dtype, self.weak_type))

    def strip_weak(self):
        """The same aval without the weak-type flag."""
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def update(self, shape=None, dtype=None, weak_type=None):
        """A copy with ``shape``, ``dtype`` or ``weak_type`` replaced where given."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self):
        """The short form used in printed jaxprs, e.g. ``f64[3,2]``."""
        dt = _SHORT.get(self.dtype.name, self.dtype.name)
        return f"{dt}[{','.join(map(str, self.shape))}]"

    __str__ = str_short

    def __repr__(self):
        return f"ShapedArray({self.str_short()}{', weak' if self.weak_type else ''})"


_scalar_avals = {}


def _scalar_aval(dtype, weak=False):
    """The (shared) aval of a scalar of ``dtype``: literals are made by the thousand."""
    key = (dtype, weak)
    a = _scalar_avals.get(key)
    if a is None:
        a = _scalar_avals[key] = ShapedArray((), dtype, weak)
    return a


def is_float_dtype(dtype):
    """Whether ``dtype`` is a real floating-point type."""
    return np.issubdtype(np.dtype(dtype), np.floating)


def is_inexact_dtype(dtype):
    """Whether ``dtype`` is floating-point or complex."""
    return np.issubdtype(np.dtype(dtype), np.inexact)


_VALID_KINDS = set("biuf")


def get_aval(x):
    """The abstract value of a tracer, array, or Python/numpy scalar."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return ShapedArray(x.shape, x.dtype)
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return ShapedArray((), python_scalar_dtype(x), weak_type=True)
    if isinstance(x, np.generic):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return ShapedArray((), x.dtype)
    raise _bad_dtype(x)


def python_scalar_dtype(x):
    """The dtype a Python scalar ``x`` is traced as (``float`` -> float64, ``int`` -> int64,
    ``bool`` -> bool)."""
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float64)
    if isinstance(x, complex):
        return np.dtype(np.complex128)
    raise _bad_dtype(x)


def _bad_dtype(x):
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind == "c" or isinstance(x, complex):
        from .errors import UnsupportedError
        return UnsupportedError(
            "complex numbers are not supported yet; split them into real and imaginary "
            "float arrays", source=user_source())
    what = f"dtype {x.dtype}" if hasattr(x, "dtype") else f"type {type(x).__name__}"
    return DTypeError(
        f"expected a numeric array or scalar, got a value of {what}: {_short_repr(x)}. "
        f"Pass numbers as numpy arrays of a float, int or bool dtype.", source=user_source())


def _short_repr(x):
    r = repr(x)
    return r if len(r) < 60 else r[:57] + "..."


# ----------------------------------------------------------------------------
# Source locations: the user's file:line for every equation and every error
# ----------------------------------------------------------------------------

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_PKG_ROOTS = (_PKG_DIR,)
_SKIP_DIRS = set()


def register_internal_dir(path):
    """Frames from files under ``path`` are never blamed as the user's line."""
    global _PKG_ROOTS
    _PKG_ROOTS = _PKG_ROOTS + (os.path.dirname(os.path.abspath(path)),)
    _internal_file_cache.clear()          # answers given before this call may change
    _internal_code_cache.clear()


class SourceInfo:
    """A user source location (file and line), formatted lazily."""

    __slots__ = ("filename", "lineno", "function")

    def __init__(self, filename, lineno, function=""):
        self.filename = filename
        self.lineno = lineno
        self.function = function

    def __str__(self):
        return f"{self.filename}:{self.lineno}"

    def __repr__(self):
        return f"SourceInfo({self})"

    def short(self):
        """``file.py:line`` without the directory."""
        return f"{os.path.basename(self.filename)}:{self.lineno}"


# Memo tables of facts about code (is a file / code object autodiff's own, which globals
# a code object reads), read for every frame of every traced operation. They are bounded
# program caches like the others (autodiff.cache, listed as "source"), read through the
# bare table on this hot path: a hit costs one C dict lookup and is not counted (misses
# and evictions are), no recency update, so the oldest entries go first once
# ``ad.config.source_cache_size`` is reached.
_internal_file_cache = ProgramCache("source", "source_cache_size")   # file name -> bool
_internal_file_get = _internal_file_cache.table.get


def is_internal_file(filename):
    r = _internal_file_get(filename)
    if r is None:
        r = filename.startswith(_PKG_ROOTS) or filename.startswith("<frozen") or \
            os.sep + "numpy" + os.sep in filename
        _internal_file_cache.misses += 1
        _internal_file_cache.put(filename, r)
    return r


# code object -> is it autodiff's (or numpy's) own code
_internal_code_cache = ProgramCache("source", "source_cache_size")
_internal_code_get = _internal_code_cache.table.get


def at_source(source, fn, *args, **kw):
    """Call ``fn`` so the equations it emits carry ``source``, the user's line they stem from
    (transforms re-emitting an equation keep the line of the equation they transform)."""
    prev = trace_state.source
    trace_state.source = source or prev
    try:
        return fn(*args, **kw)
    finally:
        trace_state.source = prev


def user_source(depth=1):
    """The innermost frame outside autodiff (and numpy): the user's line."""
    f = sys._getframe(depth)
    get = _internal_code_get
    while f is not None:
        code = f.f_code
        internal = get(code)
        if internal is None:
            internal = is_internal_file(code.co_filename)
            _internal_code_cache.misses += 1
            _internal_code_cache.put(code, internal)
        if not internal:
            return SourceInfo(code.co_filename, f.f_lineno, code.co_name)
        f = f.f_back
    return None


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
        self.aval = aval if aval is not None else get_aval(val)
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
        from .render import render
        return render(self, path, format)

    def _repr_svg_(self):
        from .render import repr_svg
        return repr_svg(self)

    def _repr_html_(self):
        from .render import repr_html
        return repr_html(self)


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
        return eval_jaxpr(self.jaxpr, self.consts, *args)


def _value_key(c):
    if isinstance(c, np.ndarray):
        if c.size <= 64:
            return ("arr", c.shape, c.dtype.str, c.tobytes())
        return ("arr-id", id(c), c.shape, c.dtype.str)
    if isinstance(c, Tracer):
        return ("tracer", id(c))
    return ("obj", id(c))


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
    # computed once per jaxpr, on every un-jitted grad call (its transform cache keys on
    # it): kept to dictionary lookups and small tuples
    names = {}

    if shapes:
        def av(a):
            return (a.shape, a.dtype, a.weak_type)
    else:
        def av(a):
            return (len(a.shape), a.dtype, a.weak_type)

    for v in itertools.chain(jaxpr.constvars, jaxpr.invars):
        names[v] = len(names)
    parts = [tuple(av(v.aval) for v in jaxpr.constvars), tuple(av(v.aval) for v in jaxpr.invars)]
    lit = Literal
    for e in jaxpr.eqns:
        ins = tuple(v._key() if v.__class__ is lit else names[v] for v in e.invars)
        outs = e.outvars
        for v in outs:
            names[v] = len(names)
        ps = e.params
        if not ps:
            params = ()
        elif len(ps) == 1:
            (k, p), = ps.items()
            params = ((k, param_key(p, shapes) if (shapes or k not in SIZE_PARAMS) else "?"),)
        else:
            params = tuple(sorted(
                (k, param_key(p, shapes) if (shapes or k not in SIZE_PARAMS) else "?")
                for k, p in ps.items()))
        parts.append((e.primitive.name, ins,
                      av(outs[0].aval) if len(outs) == 1 else tuple(av(v.aval) for v in outs),
                      params))
    parts.append(tuple(v._key() if v.__class__ is lit else names[v] for v in jaxpr.outvars))
    return tuple(parts)


# ----------------------------------------------------------------------------
# Pretty printing and Graphviz
# ----------------------------------------------------------------------------

def var_namer():
    names = {}

    def name(v):
        if isinstance(v, Literal):
            val = v.val
            if v.aval.dtype == np.bool_:
                s = "True" if val else "False"
            elif np.issubdtype(v.aval.dtype, np.floating):
                s = repr(float(val))
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
    from .render import jaxpr_to_dot as draw
    return draw(jaxpr, in_names, out_names)


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
# Primitives
# ----------------------------------------------------------------------------

primitives = {}   # name -> Primitive: the registry every test enumerates


class Primitive:
    """A named operation with its rules, declared once in :mod:`autodiff.primitives`.

    Rules (attributes, ``None`` until declared):
      ``impl(*arrays, **params)`` numpy evaluation;
      ``abstract_eval(*avals, **params)`` output aval(s);
      ``jvp(primals, tangents, **params)`` -> (primal_out, tangent_out), written with
      library ops so it can be differentiated again (tangents may be ``Zero``);
      ``transpose(cts, *args, **params)`` for linear primitives (``args`` mixes
      ``UndefinedPrimal`` for linear inputs and values for the rest);
      ``batch(args, dims, **params)`` -> (out, out_dims) for vmap.
    """

    def __init__(self, name, multiple_results=False):
        if name in primitives:
            raise ValueError(f"primitive {name!r} declared twice")
        self.name = name
        self.multiple_results = multiple_results
        self.impl = None
        self.abstract_eval = None
        self.jvp = None
        self.transpose = None
        self.batch = None
        self.differentiable = True   # False for integer/boolean-valued ops (zero tangents)
        self.is_linear = False       # set by primitives.deftranspose, never by hand
        self.linear_argnums = None   # with is_linear: the operands it is linear in (None: all)
        self.call_like = False       # carries sub-jaxprs in params
        primitives[name] = self

    def __repr__(self):
        return f"Primitive({self.name})"

    def __reduce__(self):
        # by name: the rules are closures, and the receiving process has declared the same
        # primitive (on import of autodiff, or of the module that defines an extension)
        return (_primitive_named, (self.name,))

    def bind(self, *args, **params):
        """Apply the primitive: evaluated at once on concrete values, recorded as an equation on
        tracers."""
        return bind(self, args, params)


def _primitive_named(name):
    """Unpickling side of :meth:`Primitive.__reduce__`."""
    try:
        return primitives[name]
    except KeyError:
        raise ValueError(
            f"unpickling a jaxpr that uses primitive {name!r}, which this process has not "
            f"declared; import the module that defines it before loading the jaxpr") from None


# ----------------------------------------------------------------------------
# Traces and tracers
# ----------------------------------------------------------------------------

class _TraceState(threading.local):
    def __init__(self):
        self.stack = []           # active JaxprTraces, outermost first
        self.grad_enabled = True  # seed semantics: no_grad regions stop gradients
        self.source = None        # set by IR-to-IR passes: equations they emit inherit it
        self.dynamic = None       # a trace that records every traced op (checkpoint bodies)


trace_state = _TraceState()


class Tracer(ArrayMethods):
    """A traced array value. Behaves like an array; records operations as equations.

    Operators and array methods come from :class:`~autodiff._tracer_methods.ArrayMethods`
    (defined with the class, dispatching to ``autodiff.numpy`` on first use).
    """

    __slots__ = ("_trace", "ivar", "aval", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, trace, var):
        self._trace = trace
        self.ivar = var
        self.aval = var.aval

    shape = property(lambda self: self.aval.shape, doc="Like ``numpy.ndarray.shape``, on a "
                     "traced value: the tuple of its dimensions.")
    dtype = property(lambda self: self.aval.dtype, doc="Like ``numpy.ndarray.dtype``, on a "
                     "traced value: the data type of its elements.")
    ndim = property(lambda self: len(self.aval.shape), doc="Like ``numpy.ndarray.ndim``, on "
                    "a traced value: its number of dimensions.")
    size = property(lambda self: self.aval.size, doc="Like ``numpy.ndarray.size``, on a "
                    "traced value: its number of elements.")

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return self.aval.shape[0]

    def __repr__(self):
        t = self._trace
        mode = "concrete" if t.concrete else "abstract"
        return f"Tracer<{self.aval.str_short()}, {mode}, level {t.level}>"

    # -- conversion to Python values: concrete traces only -----------------
    def concrete_value(self, what):
        """The value behind this tracer when the trace is concrete (under ``grad`` without ``jit``),
        else ``ConcretizationError`` naming ``what`` needed it."""
        return self._trace.force(self, what)

    def __bool__(self):
        if self.aval.shape not in ((), (1,)) and self.aval.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self.concrete_value("bool()"))

    def __int__(self):
        return int(self.concrete_value("int()"))

    def __float__(self):
        return float(self.concrete_value("float()"))

    def __index__(self):
        if self.aval.dtype.kind not in "iub":
            raise TypeError("only integer traced values can be used as an index")
        return int(self.concrete_value(_NUMPY_INDEX_HINT))

    def __complex__(self):
        return complex(self.concrete_value("complex()"))

    def __hash__(self):
        raise TypeError("traced values are unhashable; mark the argument static "
                        "(static_argnums) if it must be a dict key")

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.aval.shape[0]))

    def __array__(self, dtype=None, copy=None):
        t = self._trace
        t._check_alive(self)                 # a leaked tracer says so, whatever its use
        if t.concrete and self.aval.dtype.kind in "iub":
            # An integer or boolean value has no derivative, so handing numpy its concrete
            # value loses nothing: ``np_table[idx]`` under grad/jvp/vjp (numpy calls
            # ``__array__`` on an index array) computes the entries as a constant.
            v = np.asarray(t.force(self, "a numpy array"))
            return v if dtype is None else v.astype(dtype, copy=False)
        raise ConcretizationError(
            "a traced value was passed to a function that converts it to a numpy array "
            "(np.asarray / a numpy function without autodiff support). Use the "
            "autodiff.numpy (anp) equivalent so the operation is recorded. " + _NUMPY_INDEX_HINT,
            source=user_source())

    def __setitem__(self, idx, value):
        src = user_source()
        raise TypeError("traced values are immutable: `x[idx] = v` cannot be recorded. "
                        "Use the functional update `x = x.at[idx].set(v)` instead."
                        + (f"\n  (at {src})" if src else ""))


class _ArrayMeta(type):
    def __instancecheck__(cls, x):
        if isinstance(x, (np.ndarray, Tracer)):
            return True
        if isinstance(x, np.generic):
            return x.dtype.kind in "biufc"
        return hasattr(x, "__autodiff_array__")

    def __subclasscheck__(cls, sub):
        return isinstance(sub, type) and issubclass(sub, (np.ndarray, Tracer))


class Array(metaclass=_ArrayMeta):
    """What autodiff calls an array, for ``isinstance`` checks and annotations (JAX's
    ``jax.Array``): numpy arrays and numeric numpy scalars (what ``anp`` returns on
    concrete values), traced values, and array-like objects of autodiff (tape Variables).

    >>> import numpy as np, autodiff as ad
    >>> isinstance(np.ones(2), ad.Array), isinstance(np.float64(1.0), ad.Array)
    (True, True)
    >>> ad.grad(lambda x: float(isinstance(x, ad.Array)) * x)(2.0)
    np.float64(1.0)
    >>> isinstance([1.0], ad.Array)
    False
    """

    def __new__(cls, *args, **kwargs):
        raise TypeError("ad.Array is a type for isinstance checks and annotations; make "
                        "arrays with autodiff.numpy (anp.asarray, anp.zeros, ...)")


_NUMPY_INDEX_HINT = (
    "(numpy's own indexing a[i] of a numpy array by a traced index lands here: numpy "
    "accepts only a Python int or a real array as an index, never a traced value. Arrays "
    "the traced function closes over or names as globals are indexable by traced values; "
    "for any other numpy array a use anp.take(a, i, axis=0), or a[i0, i1] -> "
    "anp.take(anp.take(a, i0, axis=0), i1, axis=0).)")


class JaxprTrace:
    """Records equations for one level of tracing.

    ``concrete`` traces know their input values and compute intermediates lazily,
    on demand, so Python control flow on values works.
    """

    def __init__(self, concrete, level, name="trace"):
        self.concrete = concrete
        self.level = level
        self.name = name
        self.eqns = []
        self.invars = []
        self.constvars = []        # lifted outer tracers and array constants
        self.const_values = []
        self._lifted = {}          # id(outer tracer or array) -> Var
        self._lifted_keep = []     # keep lifted objects alive so ids stay unique
        self.values = {}           # Var -> concrete value (concrete mode, lazily filled)
        self.producer = {}         # Var -> Eqn (concrete mode)
        self.closed = False

    def new_arg(self, aval, value=None):
        """A new input variable of ``aval`` (holding ``value`` when the trace is concrete), as a
        tracer."""
        v = Var(aval)
        self.invars.append(v)
        if self.concrete:
            self.values[v] = value
        return Tracer(self, v)

    def lift(self, x):
        """A Var of this trace standing for ``x`` (an outer tracer or a constant)."""
        if isinstance(x, Tracer) and x._trace is self:
            return x.ivar
        if not isinstance(x, Tracer):
            if np.ndim(x) == 0:
                return Literal(x)
            if type(x) is _TableView:
                x = _plain_array(x)        # the user's array is the constant, not our view
        key = id(x)
        v = self._lifted.get(key)
        if v is None:
            if isinstance(x, Tracer):
                aval = x.aval
            else:
                aval = get_aval(x).strip_weak()
            v = Var(aval)
            self._lifted[key] = v
            self._lifted_keep.append(x)
            self.constvars.append(v)
            self.const_values.append(x)
            if self.concrete:
                self.values[v] = _LazyOuter(x) if isinstance(x, Tracer) else x
        return v

    def add_eqn(self, prim, invars, out_avals, params, source):
        """Record ``outvars = prim[params](invars)`` (new variables of ``out_avals``) with the
        user's ``source``; returns the tracers of the outputs."""
        outvars = [Var(a) for a in out_avals]
        e = Eqn(prim, invars, outvars, params, source)
        self.eqns.append(e)
        if self.concrete:
            for v in outvars:
                self.producer[v] = e
        return [Tracer(self, v) for v in outvars]

    # -- concrete values -----------------------------------------------------
    def force(self, tracer, what):
        """The concrete value of ``tracer``, or ``ConcretizationError`` naming ``what`` needed it
        when the trace is abstract (under ``jit``)."""
        self._check_alive(tracer)
        if not self.concrete:
            raise ConcretizationError(
                f"a traced value with only a shape and dtype ({tracer.aval.str_short()}) was "
                f"used as {what}, which needs a concrete value. Under jit values are abstract: "
                f"use ad.lax.cond / ad.lax.while_loop / anp.where for control flow on values, "
                f"or pass the argument via static_argnums.", source=user_source())
        return self.value_of(tracer.ivar)

    def value_of(self, var):
        """The concrete value of variable ``var``, computed on demand from the recorded equations."""
        if isinstance(var, Literal):
            return var.val
        values = self.values
        stack = [var]
        while stack:
            v = stack[-1]
            if v in values:
                val = values[v]
                if isinstance(val, _LazyOuter):
                    values[v] = val.get()
                stack.pop()
                continue
            e = self.producer[v]
            missing = [u for u in e.invars if isinstance(u, Var) and u not in values]
            if missing:
                stack.extend(missing)
                continue
            for u in e.invars:
                if isinstance(u, Var) and isinstance(values[u], _LazyOuter):
                    values[u] = values[u].get()
            ins = [u.val if isinstance(u, Literal) else values[u] for u in e.invars]
            outs = e.primitive.impl(*ins, **e.params)
            if not e.primitive.multiple_results:
                outs = [outs]
            for o, ov in zip(outs, e.outvars):
                values[ov] = o
            stack.pop()
        return values[var]

    def _check_alive(self, tracer):
        if self.closed:
            raise TracerLeakError(
                f"a traced value ({tracer.aval.str_short()}) escaped the transformed function "
                f"it belongs to ({self.name}) and was used after that trace ended, e.g. stored "
                f"in a global or a list. Return it from the function instead.",
                source=user_source())

    def to_jaxpr(self, out_tracers_or_vals):
        """``(jaxpr, const_values)``: the recorded program with these outputs (tracers or values)."""
        outvars = [self.lift(x) for x in out_tracers_or_vals]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return jaxpr, list(self.const_values)


class _LazyOuter:
    """The concrete value of an outer tracer, fetched only if needed."""

    __slots__ = ("tracer",)

    def __init__(self, tracer):
        self.tracer = tracer

    def get(self):
        return self.tracer._trace.force(self.tracer, "a value")


def current_trace():
    """The innermost active trace, or ``None`` outside every transform."""
    st = trace_state.stack
    return st[-1] if st else None


class new_trace:
    """Context manager pushing a fresh trace; concrete when ``concrete`` is true."""

    def __init__(self, concrete, name="trace"):
        self.concrete = concrete
        self.name = name

    def __enter__(self):
        st = trace_state.stack
        self.trace = JaxprTrace(self.concrete, len(st), self.name)
        st.append(self.trace)
        return self.trace

    def __exit__(self, *exc):
        st = trace_state.stack
        assert st and st[-1] is self.trace
        st.pop()
        self.trace.closed = True
        return False


# ----------------------------------------------------------------------------
# bind: the single entry point of every operation
# ----------------------------------------------------------------------------

def bind(prim, args, params):
    """Apply ``prim`` to ``args``: evaluated at once outside traces, recorded as an equation
    of the innermost trace otherwise."""
    # the hot path of tracing: every recorded equation passes here once
    trace = None
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if trace is None or t.level > trace.level:
                trace = t
    if trace is None:
        return _eager(prim, args, params)
    state = trace_state
    dyn = state.dynamic
    if dyn is not None and trace.level < dyn.level:
        trace = dyn   # ops on closed-over values stay inside the checkpointed body
    invars = []
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if t.closed:
                t._check_alive(a)
            invars.append(a.ivar if t is trace else trace.lift(a))
        elif isinstance(a, np.ndarray):
            invars.append(trace.lift(a) if a.ndim > 0 else Literal(a[()]))
        else:
            invars.append(Literal(a))
    src = state.source or user_source(2)
    try:
        out_avals = prim.abstract_eval(*[v.aval for v in invars], **params)
    except (ShapeError, DTypeError) as err:
        if err.source is None:
            raise type(err)(str(err), source=src) from None
        raise
    if not prim.multiple_results:
        out = trace.add_eqn(prim, invars, [out_avals], params, src)
        if not state.grad_enabled and trace.level >= 0:   # the tape (level -1) records nothing
            out = _no_grad(prim, out)
        return out[0]
    outs = trace.add_eqn(prim, invars, out_avals, params, src)
    if not state.grad_enabled and trace.level >= 0:
        outs = _no_grad(prim, outs)
    return outs


def _no_grad(prim, outs):
    # seed semantics: inside ad.no_grad() results carry no derivative
    if prim.name == "stop_gradient":
        return outs
    sg = primitives["stop_gradient"]
    return [bind(sg, (o,), {}) if o.aval.dtype.kind == "f" else o for o in outs]





def _eager(prim, args, params):
    from .config import config
    vals = [a if isinstance(a, np.ndarray) else np.asarray(a) for a in args]
    with np.errstate(all="ignore"):   # discarded branches (where-tricks, batched cond) stay quiet, as when compiled
        out = prim.impl(*vals, **params)
    if config.debug_nans:      # inside an IR pass, name the line the equation came from
        check_nans(prim, out, trace_state.source)
    return out


def check_nans(prim, out, source=None):
    """Raise ``NaNError`` naming ``prim`` and ``source`` if ``out`` holds a NaN (``debug_nans``)."""
    from .errors import NaNError
    outs = out if prim.multiple_results else [out]
    for o in outs:
        o = np.asarray(o)
        if o.dtype.kind == "f" and np.isnan(o).any():
            raise NaNError(f"debug_nans: primitive {prim.name!r} produced NaN",
                           source=source or user_source())


# ----------------------------------------------------------------------------
# Tracing a Python function, evaluating a jaxpr
# ----------------------------------------------------------------------------

# ----------------------------------------------------------------------------
# Closed-over numpy arrays indexed by traced values
# ----------------------------------------------------------------------------
#
# numpy's ``ndarray.__getitem__`` (C, not overridable) converts an index object with
# ``__index__`` and, when that fails, with ``__array__``; both must produce real numbers,
# and its result is always an ndarray. So ``table[i]`` for a plain numpy ``table`` and a
# traced ``i`` can never return a traced value. Two routes make it work anyway:
#   * concrete traces (grad/jvp/vjp without jit): an integer tracer converts to its value
#     (``Tracer.__index__`` / ``__array__``): integers carry no derivative, and the table
#     is a constant, so the entries are the right constant;
#   * every trace: while a user function is traced, the numpy arrays in its closure cells
#     and the module globals its code names are replaced by ``_TableView`` s (a view of
#     the same memory whose ``__getitem__`` sends a traced index to ``anp``'s gather), and
#     put back afterwards. That covers lookup tables, images and grids read inside
#     ``jit``, ``fori_loop``/``scan``/``while_loop`` bodies and ``vmap``. Arrays reached
#     another way (an attribute, a dict entry, a non-differentiated argument under jit)
#     stay plain, and their error names ``anp.take``. (Another thread running the same
#     function untraced meanwhile sees the view, which behaves as the array itself.)

class _TableView(np.ndarray):
    """A view of a user's numpy array, live only while a function that closes over it is
    traced: indexing it by a traced value records a gather; every other use is numpy's
    (results are plain ndarrays, writes go to the user's array)."""

    def __getitem__(self, idx):
        base = self.__dict__.get("_ad_base")
        if base is None:
            base = self.view(np.ndarray)
        if _index_has_tracer(idx):
            from .numpy._indexing import getitem
            return getitem(base, idx)
        return base[idx]

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(_plain_array(x) for x in inputs)
        if kwargs.get("out") is not None:
            kwargs["out"] = tuple(_plain_array(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        args = tuple(_plain_array(x) for x in args)
        kwargs = {k: _plain_array(v) for k, v in kwargs.items()}
        for x in itertools.chain(args, kwargs.values()):
            if isinstance(x, Tracer):
                # a traced operand numpy's dispatcher does not consult (np.take's indices)
                return x.__array_function__(func, types, args, kwargs)
        return func(*args, **kwargs)

    def __reduce__(self):
        return _plain_array(self).__reduce__()


def _plain_array(x):
    if isinstance(x, _TableView):
        base = x.__dict__.get("_ad_base")
        return base if base is not None else x.view(np.ndarray)
    if isinstance(x, (list, tuple)) and any(isinstance(e, _TableView) for e in x):
        return type(x)(_plain_array(e) for e in x)
    return x


def _index_has_tracer(idx):
    if isinstance(idx, Tracer):
        return True
    if isinstance(idx, (tuple, list)):
        return any(_index_has_tracer(i) for i in idx)
    return False


def _table_view(a):
    v = a.view(_TableView)
    v.__dict__["_ad_base"] = a
    return v


# code object -> the global names it (or a nested function) reads; see _internal_file_cache
_code_names_cache = ProgramCache("source", "source_cache_size")
_code_names_get = _code_names_cache.table.get


def _code_global_names(code):
    names = _code_names_get(code)
    if names is None:
        found = set(code.co_names)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                found |= _code_global_names(c)
        names = frozenset(found)
        _code_names_cache.misses += 1
        _code_names_cache.put(code, names)
    return names


def _liftable(x):
    return type(x) is np.ndarray and x.ndim > 0 and x.dtype.kind in _VALID_KINDS


def _swap_in_table_views(fun):
    """Replace the numpy arrays ``fun`` (a user function, found through the closures of
    autodiff's own wrappers) closes over or names as globals by ``_TableView`` s.
    Returns the undo list ``[(setter, original, view)]``."""
    undo = []
    seen = set()
    stack = [(fun, 0)]
    while stack:
        f, depth = stack.pop()
        if id(f) in seen or depth > 6:
            continue
        seen.add(id(f))
        if isinstance(f, functools.partial):
            stack.append((f.func, depth + 1))
            continue
        f = getattr(f, "__func__", f)                  # bound methods
        if not isinstance(f, types.FunctionType):
            f = getattr(f, "__wrapped__", None)
            if f is not None:
                stack.append((f, depth + 1))
            continue
        code = f.__code__
        user = not is_internal_file(code.co_filename)
        for cell in f.__closure__ or ():
            try:
                x = cell.cell_contents
            except ValueError:                          # an empty cell (not yet assigned)
                continue
            if user and _liftable(x):
                v = _table_view(x)
                cell.cell_contents = v
                undo.append((cell, None, x, v))
            elif callable(x) and not isinstance(x, type):
                stack.append((x, depth + 1))
        if user:
            g = f.__globals__
            for name in _code_global_names(code):
                x = g.get(name)
                if _liftable(x):
                    v = _table_view(x)
                    g[name] = v
                    undo.append((g, name, x, v))
        w = f.__dict__.get("__wrapped__")
        if w is not None:
            stack.append((w, depth + 1))
    return undo


def _restore_tables(undo):
    for holder, name, orig, view in reversed(undo):
        if name is None:
            if holder.cell_contents is view:        # unless the function rebound it
                holder.cell_contents = orig
        elif holder.get(name) is view:
            holder[name] = orig


def trace_flat(fun, in_avals, concrete_values=None, name="trace"):
    """Trace ``fun(*flat_args) -> list of outputs`` into a ClosedJaxpr.

    With ``concrete_values`` (one per input; arrays or outer tracers) the trace is
    concrete. Returns ``(closed_jaxpr, outs)``: outs as produced (for aux handling).
    Numpy arrays the traced user function closes over are indexable by traced values
    while it runs (see ``_TableView``).
    """
    concrete = concrete_values is not None
    undo = _swap_in_table_views(fun)
    try:
        return _trace_flat(fun, in_avals, concrete_values, concrete, name)
    finally:
        if undo:
            _restore_tables(undo)


def _trace_flat(fun, in_avals, concrete_values, concrete, name):
    with new_trace(concrete, name) as trace:
        if concrete:
            args = [trace.new_arg(a, _LazyOuter(v) if isinstance(v, Tracer) else v)
                    for a, v in zip(in_avals, concrete_values)]
        else:
            args = [trace.new_arg(a) for a in in_avals]
        # a transform sees the no_grad regions inside ``fun``, not one around the call
        # (as torch.func.grad): with ad.no_grad(): ad.grad(f)(x) is still f's gradient
        enabled, trace_state.grad_enabled = trace_state.grad_enabled, True
        try:
            outs = fun(*args)
        finally:
            trace_state.grad_enabled = enabled
        outs = [full_lower_input(o) for o in outs]
        jaxpr, consts = trace.to_jaxpr(outs)
    return ClosedJaxpr(jaxpr, consts)


def hoist_consts(closed):
    """Constants of a traced jaxpr become its leading inputs: ``(ClosedJaxpr, consts)``.

    What a control-flow body needs: its sub-jaxpr has no constants, and the values it closes
    over (outer tracers, arrays) become leading operands of the equation."""
    j = closed.jaxpr
    if not j.constvars:
        return ClosedJaxpr(j, []), []
    return (ClosedJaxpr(Jaxpr((), list(j.constvars) + list(j.invars), j.outvars, j.eqns), []),
            list(closed.consts))


def full_lower_input(x):
    """Normalize an output leaf of a traced function (numbers -> arrays)."""
    if isinstance(x, Tracer):
        return x
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in _VALID_KINDS:
            raise _bad_dtype(x)
        return _plain_array(x)
    if hasattr(x, "__autodiff_array__"):
        return x.__autodiff_array__()
    if isinstance(x, (bool, int, float, np.generic)):
        get_aval(x)
        return np.asarray(x)
    raise _bad_dtype(x)


def eval_jaxpr(jaxpr, consts, *args):
    """Evaluate with ``bind``: concrete values compute, tracers record (inlining)."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]

    for e in jaxpr.eqns:
        outs = bind(e.primitive, [read(v) for v in e.invars], e.params)
        if e.primitive.multiple_results:
            for v, o in zip(e.outvars, outs):
                env[v] = o
        else:
            env[e.outvars[0]] = outs
    return [read(v) for v in jaxpr.outvars]


def eval_closed(closed, *args):
    """Evaluate a ClosedJaxpr on ``args`` (its consts bound); returns the list of outputs."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def is_concrete(x):
    """True when ``x``'s value is available (a numpy value or a concrete tracer)."""
    if isinstance(x, Tracer):
        return x._trace.concrete and (x._trace.closed is False)
    return True


def concrete_or_error(x, what="a concrete value"):
    """The concrete value of ``x``, or ``ConcretizationError`` saying ``what`` needed it."""
    if isinstance(x, Tracer):
        return x.concrete_value(what)
    return x


def new_jaxpr_like(jaxpr, eqns=None, invars=None, outvars=None, constvars=None):
    """A copy of ``jaxpr`` with the given parts replaced."""
    return Jaxpr(jaxpr.constvars if constvars is None else constvars,
                 jaxpr.invars if invars is None else invars,
                 jaxpr.outvars if outvars is None else outvars,
                 jaxpr.eqns if eqns is None else eqns)


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
