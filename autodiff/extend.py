"""autograd's extension API (``autograd.extend``), on top of ``custom_vjp``/``custom_jvp``:
code that defines its own primitives ports by changing the import.

``@primitive`` marks a function whose derivative is given by rules instead of by tracing
its body; ``defvjp(f, vjpmaker_0, vjpmaker_1, ...)`` gives, per positional argument, a
``vjpmaker(ans, *args, **kwargs) -> (g -> cotangent)``; ``defjvp(f, jvp_0, ...)`` gives
``jvp(g, ans, *args, **kwargs) -> tangent``. With VJPs only, reverse mode uses them
(``grad``, ``vjp``, ``jacrev``); with JVPs, forward mode uses them and reverse mode is
their transpose. Bodies and rules are written with ``autodiff.numpy`` (as autograd's are
with ``autograd.numpy``), so the primitive also works under ``jit`` and ``vmap``.
Arguments that are not arrays or numbers (strings, callables, ...) are passed through
undifferentiated; keyword arguments reach the body and every rule untouched.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.extend import primitive, defvjp
>>> @primitive
... def logsumexp(x):
...     m = anp.max(x)
...     return m + anp.log(anp.sum(anp.exp(x - m)))
>>> defvjp(logsumexp, lambda ans, x: lambda g: g * anp.exp(x - ans))
>>> ad.grad(logsumexp)(np.array([0.0, np.log(3.0)]))
array([0.25, 0.75])
"""
import functools
import warnings

import numpy as np

from .core import Tracer, is_concrete
from .custom_derivatives import custom_jvp, custom_vjp
from .tree_util import tree_map, tree_flatten, tree_unflatten, tree_leaves
from .api import stop_gradient
from .callback import pure_callback
from .errors import ConcretizationError, UnsupportedError
from .shapes import ShapeDtypeStruct

__all__ = ["primitive", "defvjp", "defjvp", "defvjp_argnum", "defjvp_argnum",
           "defvjp_argnums", "defjvp_argnums", "def_linear", "Primitive", "notrace_primitive",
           "register_notrace", "Box", "VSpace", "vspace"]

Box = Tracer
"""autograd's ``Box`` (a value being traced) is autodiff's :class:`~autodiff.core.Tracer`:
``isinstance(x, Box)`` tells a traced value from a plain one, as in autograd."""

_warned = set()


def _is_data(x):
    """Arrays, numbers and tracers are differentiated; everything else is static."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, float, int, complex)) and not isinstance(x, bool):
        return True
    if isinstance(x, (list, tuple)):
        return len(x) > 0 and all(_is_data(v) for v in x)
    return False


def _has_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tracer(v) for v in x)
    if isinstance(x, dict):
        return any(_has_tracer(v) for v in x.values())
    return False


class Primitive:
    """A function with autograd-style derivative rules (see :func:`primitive`)."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vjps = {}          # argnum -> vjpmaker(ans, *args, **kwargs)
        self.jvps = {}          # argnum -> jvp(g, ans, *args, **kwargs)
        self.vjp_argnum = None  # vjpmaker(argnum, ans, args, kwargs)
        self.jvp_argnum = None  # jvp(argnum, g, ans, args, kwargs)

    def __repr__(self):
        return f"autograd-style primitive {self.fun.__name__}"

    def __call__(self, *args, **kwargs):
        if not _has_tracer(args):
            return self.fun(*args, **kwargs)
        static = tuple(i for i, a in enumerate(args) if not _is_data(a))
        if self.jvps or self.jvp_argnum is not None:
            return self._with_jvp(args, kwargs, static)
        return self._with_vjp(args, kwargs, static)

    # -- rules ------------------------------------------------------------------
    def _vjp_maker(self, i):
        if i in self.vjps:
            return self.vjps[i]
        if self.vjp_argnum is not None:
            return lambda ans, *args, **kw: self.vjp_argnum(i, ans, args, kw)
        return None

    def _jvp_fn(self, i):
        if i in self.jvps:
            return self.jvps[i]
        if self.jvp_argnum is not None:
            return lambda g, ans, *args, **kw: self.jvp_argnum(i, g, ans, args, kw)
        return None

    def _missing(self, kind, i, arg):
        key = (self.fun, kind, i)
        if isinstance(arg, Tracer) and arg.aval.dtype.kind in "fc" and key not in _warned:
            _warned.add(key)
            warnings.warn(f"{self.fun.__name__}: no {kind} rule for argument {i} "
                          f"(def{kind}); its derivative is taken as zero", stacklevel=4)

    def _with_vjp(self, args, kwargs, static):
        fun = self.fun
        n = len(args)

        def full(dyn):
            it = iter(dyn)
            return [args[i] if i in static else next(it) for i in range(n)]
        dyn_idx = [i for i in range(n) if i not in static]

        @functools.wraps(fun)
        def body(*dyn):
            return _call_body(fun, full, dyn, kwargs, self, dyn_idx)

        def fwd(*dyn):
            ans = _call_body(fun, full, dyn, kwargs, self, dyn_idx)
            return ans, (ans, dyn)

        def bwd(res, g):
            ans, dyn = res
            a = full(dyn)
            cts = []
            for i in dyn_idx:
                maker = self._vjp_maker(i)
                if maker is None:
                    self._missing("vjp", i, args[i])
                    cts.append(None)
                else:
                    cts.append(maker(ans, *a, **kwargs)(g))
            return tuple(cts)
        f = custom_vjp(body)
        f.defvjp(fwd, bwd)
        return f(*[args[i] for i in dyn_idx])

    def _with_jvp(self, args, kwargs, static):
        fun = self.fun
        n = len(args)
        dyn_idx = [i for i in range(n) if i not in static]

        def full(dyn):
            it = iter(dyn)
            return [args[i] if i in static else next(it) for i in range(n)]

        @functools.wraps(fun)
        def body(*dyn):
            return _call_body(fun, full, dyn, kwargs)
        f = custom_jvp(body)

        @f.defjvp
        def rule(primals, tangents):
            a = full(primals)
            ans = f(*primals)
            out = None
            for i, t in zip(dyn_idx, tangents):
                jf = self._jvp_fn(i)
                if jf is None:
                    self._missing("jvp", i, args[i])
                    continue
                c = jf(t, ans, *a, **kwargs)
                out = c if out is None else out + c
            return ans, (out if out is not None else ans * 0)
        return f(*[args[i] for i in dyn_idx])


def _call_body(fun, full, dyn, kwargs, prim=None, dyn_idx=()):
    """Run a primitive's body on the dynamic arguments ``dyn``. A body written with
    ``autodiff.numpy`` is traced (so it also works under ``jit``, ``vmap`` and forward mode);
    a body that calls numpy, scipy or C code on its arguments (autograd's bodies always see
    plain values) cannot be traced: where the values are known (``grad``/``jvp`` without
    ``jit``) it then runs on them as a host call, as in autograd, and its forward-mode
    derivative (``jvp``, ``hessian``) is the Jacobian its VJP rules give on those values."""
    try:
        return fun(*full(dyn), **kwargs)
    except (ConcretizationError, UnsupportedError) as err:
        if not all(is_concrete(x) for x in tree_leaves(dyn)):
            raise type(err)(f"{err}\n(in the body of the primitive {fun.__name__}: under "
                            f"jit its body must be written with autodiff.numpy, or call host "
                            f"code through ad.pure_callback)") from err
        err_to_raise = err
    values = tree_map(_plain_value, list(dyn))
    try:
        out = fun(*full(values), **kwargs)
    except Exception:
        raise err_to_raise from None
    probe = (values, out)

    def host(*args):
        seen, ans = probe
        if all(a is b or (np.shape(a) == np.shape(b) and np.array_equal(a, b))
               for a, b in zip(tree_leaves(args), tree_leaves(seen))):
            return ans
        return fun(*full(list(args)), **kwargs)
    host.__name__ = getattr(fun, "__name__", "primitive")
    spec = tree_map(lambda o: ShapeDtypeStruct(np.shape(o), np.result_type(o)), out)

    @custom_jvp
    def call(*d):
        return pure_callback(host, spec, *d)

    @call.defjvp
    def call_jvp(primals, tangents):
        ans = call(*primals)
        if prim is None or not isinstance(out, (np.ndarray, np.generic, float, int)):
            raise UnsupportedError(
                f"the primitive {host.__name__} runs host code (numpy or scipy, not "
                f"autodiff.numpy) and has no JVP rule for this output; forward mode (jvp, "
                f"jacfwd, and hessian, which is forward-over-reverse) needs one: give it with "
                f"autodiff.extend.defjvp, or write the body with autodiff.numpy")
        return ans, _jvp_from_vjps(prim, full, primals, tangents, dyn_idx, kwargs)
    return call(*dyn)


def _jvp_from_vjps(prim, full, primals, tangents, dyn_idx, kwargs):
    """J·t for a primitive with VJP rules only, on known values: the Jacobian's rows are the
    rules' cotangents for the output's standard basis (one rule call per output element)."""
    from . import numpy as anp
    vals = [np.asarray(_plain_value(p)) for p in primals]
    args = full(vals)
    ans = np.asarray(prim.fun(*args, **kwargs))
    tout = None
    for i, x, t in zip(dyn_idx, vals, tangents):
        maker = prim._vjp_maker(i)
        if maker is None:
            continue
        vjp = maker(ans, *args, **kwargs)
        rows = []
        for k in range(ans.size):
            g = np.zeros(ans.size, ans.dtype)
            g[k] = 1.0
            c = _plain_value(vjp(g.reshape(ans.shape)))
            rows.append(np.broadcast_to(np.asarray(c, x.dtype), x.shape).ravel())
        jac = np.array(rows).reshape(ans.shape + (x.size,))
        term = anp.tensordot(jac, anp.reshape(t, (x.size,)), axes=1)
        tout = term if tout is None else tout + term
    return anp.zeros(ans.shape, ans.dtype) if tout is None else tout


def primitive(fun):
    """Mark ``fun`` as a primitive: its derivatives come from :func:`defvjp` /
    :func:`defjvp` rules, not from tracing its body."""
    return Primitive(fun)


def defvjp(prim, *vjpmakers, argnums=None):
    """``vjpmakers[k](ans, *args, **kwargs)`` returns the map ``g ↦ cotangent of
    args[argnums[k]]`` (default ``argnums = 0, 1, ...``); ``None`` skips an argument."""
    argnums = range(len(vjpmakers)) if argnums is None else argnums
    for i, m in zip(argnums, vjpmakers):
        if m is not None:
            prim.vjps[i] = m


def defvjp_argnum(prim, makervjp):
    """One rule for every argument: ``makervjp(argnum, ans, args, kwargs) -> (g -> ct)``."""
    prim.vjp_argnum = makervjp


def defvjp_argnums(prim, makervjp):
    """``makervjp(argnums, ans, args, kwargs) -> (g -> tuple of cts)`` for all arguments
    at once (autograd's ``defvjp_argnums``)."""
    def per_arg(i, ans, args, kwargs):
        n = len(args)
        return lambda g: makervjp(tuple(range(n)), ans, args, kwargs)(g)[i]
    prim.vjp_argnum = per_arg


def defjvp(prim, *jvpfuns, argnums=None):
    """``jvpfuns[k](g, ans, *args, **kwargs)``: the tangent of the output for a tangent
    ``g`` of ``args[argnums[k]]`` (linear in ``g``); ``None`` skips an argument."""
    argnums = range(len(jvpfuns)) if argnums is None else argnums
    for i, j in zip(argnums, jvpfuns):
        if j is not None:
            prim.jvps[i] = j


def defjvp_argnum(prim, makejvp):
    """One rule for every argument: ``makejvp(argnum, g, ans, args, kwargs)``."""
    prim.jvp_argnum = makejvp


def def_linear(prim):
    """``prim`` is linear in each argument (multilinear): its JVP substitutes the tangent
    for the argument, and reverse mode is the transpose of that.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> from autodiff.extend import primitive, def_linear
    >>> scale = primitive(lambda a, x: a * x)
    >>> def_linear(scale)
    >>> float(ad.grad(lambda a: anp.sum(scale(a, np.array([1.0, 2.0]))))(3.0))
    3.0
    """
    def jvp(i, g, ans, args, kwargs):
        a = list(args)
        a[i] = g
        return prim.fun(*a, **kwargs)
    prim.jvp_argnum = jvp


def defjvp_argnums(prim, makejvp):
    """``makejvp(argnums, gs, ans, args, kwargs)``: the output tangent for the tangents
    ``gs`` of the arguments ``argnums``, all at once (autograd's ``defjvp_argnums``).

    >>> import numpy as np, autodiff as ad
    >>> mul = primitive(lambda x, y: x * y)
    >>> defjvp_argnums(mul, lambda nums, gs, ans, args, kw:
    ...                sum(g * args[1 - i] for i, g in zip(nums, gs)))
    >>> float(ad.jvp(lambda x: mul(x, 3.0), (2.0,), (1.0,))[1])
    3.0
    """
    prim.jvp_argnum = lambda i, g, ans, args, kwargs: makejvp((i,), (g,), ans, args, kwargs)


def notrace_primitive(fun):
    """A function whose result carries no derivative: it sees its arguments' values (never
    traced values where they are concrete) and returns a constant, as autograd's
    ``notrace_primitive`` (for integer helpers, shapes, comparisons).

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> argmax = notrace_primitive(np.argmax)
    >>> float(ad.grad(lambda x: x[argmax(x)] * 2.0)(np.array([1.0, 5.0, 2.0]))[1])
    2.0
    """

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        args, kwargs = tree_map(_plain_value, (args, kwargs))
        return fun(*args, **kwargs)
    return wrapped


def _plain_value(x):
    if isinstance(x, Tracer):
        if is_concrete(x):
            return np.asarray(x.concrete_value("notrace_primitive"))
        return stop_gradient(x)
    return x


def register_notrace(trace_type, primitive_fun):
    """autograd's per-trace-type opt-out; here :func:`notrace_primitive` covers every
    transform, so registering is accepted and changes nothing."""
    return primitive_fun


class VSpace:
    """The vector space of a value (autograd's ``VSpace``): its shape and dtype, zeros,
    ones, a standard basis, random vectors, and the inner product. Arrays, numbers and
    pytrees of them (the space of each leaf) have one.

    >>> import numpy as np
    >>> vs = vspace(np.zeros((2,)))
    >>> vs.shape, vs.size, vs.zeros().tolist(), [b.tolist() for b in vs.standard_basis()]
    ((2,), 2, [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]])
    >>> float(vs.inner_prod(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """

    def __init__(self, value):
        leaves, self._tree = tree_flatten(value)
        self._leaves = [(np.shape(v), np.result_type(np.asarray(v) if not isinstance(v, Tracer)
                                                   else v.aval.dtype, np.float64)) for v in leaves]
        self.shape = self._leaves[0][0] if self._is_array() else tuple(s for s, _ in self._leaves)
        self.dtype = self._leaves[0][1] if self._is_array() else None
        self.size = int(sum(np.prod(s, dtype=np.int64) for s, _ in self._leaves))
        self.ndim = len(self.shape) if self._is_array() else None
        self.iscomplex = any(np.dtype(d).kind == "c" for _, d in self._leaves)

    def _is_array(self):
        return self._tree.node_type is None

    def _build(self, fill):
        return tree_unflatten(self._tree, [fill(s, d) for s, d in self._leaves])

    def zeros(self):
        """The zero vector of this space: a value of its shape and dtype (a pytree of
        arrays for a pytree space) filled with zeros."""
        return self._build(lambda s, d: np.zeros(s, d))

    def ones(self):
        """A value of this space filled with ones."""
        return self._build(lambda s, d: np.ones(s, d))

    def randn(self):
        """A random value of this space, each element drawn from the standard normal
        (``np.random.randn``) and cast to the leaf's dtype."""
        return self._build(lambda s, d: np.random.randn(*s).astype(d) if s else d.type(np.random.randn()))

    def standard_basis(self):
        """A generator of the ``size`` standard basis vectors: values of this space with
        one element 1 and the rest 0, in flattened order."""
        for i in range(self.size):
            flat = np.zeros(self.size)
            flat[i] = 1.0
            yield self._unflat(flat)

    def _unflat(self, flat):
        out, k = [], 0
        for s, d in self._leaves:
            n = int(np.prod(s, dtype=np.int64))
            out.append(flat[k:k + n].reshape(s).astype(d))
            k += n
        return tree_unflatten(self._tree, out)

    def _flat(self, x):
        return np.concatenate([np.ravel(np.asarray(v)) for v in tree_leaves(x)] or [np.zeros(0)])

    def add(self, x, y):
        """``x + y``, elementwise, for two values of this space; returns a value of it."""
        return self._unflat(self._flat(x) + self._flat(y))

    def scalar_mul(self, x, a):
        """``a * x``: the value ``x`` of this space scaled by the scalar ``a``."""
        return self._unflat(self._flat(x) * a)

    def inner_prod(self, x, y):
        """The real inner product of ``x`` and ``y``: ``Re(vdot(x, y))`` over all the
        flattened elements, a NumPy scalar."""
        return np.real(np.vdot(self._flat(x), self._flat(y)))

    def covector(self, x):
        """The covector of ``x``: its complex conjugate (``x`` itself for real spaces), a
        value of this space."""
        return self._unflat(np.conj(self._flat(x)))

    def __eq__(self, other):
        return isinstance(other, VSpace) and self._tree == other._tree and self._leaves == other._leaves

    def __repr__(self):
        return f"VSpace(shape={self.shape}, dtype={self.dtype})"


def vspace(value):
    """The :class:`VSpace` of ``value``."""
    return VSpace(value)
