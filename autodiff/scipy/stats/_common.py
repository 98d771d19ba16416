"""The machinery every distribution module shares: scipy's argument conventions
(shape parameters, then ``loc`` and ``scale``, positionally or by keyword), the
location-scale transform, and supports (outside them a density is 0 and its log -inf).
"""
import math

import numpy as np

from ... import numpy as anp
from ...core import Tracer
from ...numpy._base import npfunc, asarray, promote

LOG_2PI = math.log(2 * math.pi)


def floats(*xs):
    """Promote to one float dtype (Python scalars weak) and broadcast."""
    xs = [x if isinstance(x, (int, float)) and not isinstance(x, bool) else asarray(x) for x in xs]
    xs = promote(*xs, to_float=True)
    return anp.broadcast_arrays(*xs)


def quiet(fun):
    """Run on concrete inputs with numpy's floating-point warnings off (values outside a
    support are computed and then discarded by ``where``)."""
    import functools

    @functools.wraps(fun)
    def run(*args, **kw):
        if any(isinstance(a, Tracer) for a in args) or any(isinstance(v, Tracer) for v in kw.values()):
            return fun(*args, **kw)
        with np.errstate(all="ignore"):
            return fun(*args, **kw)
    return run


def safe(cond, x, fill):
    """``x`` where ``cond``, else the harmless ``fill``: a branch never sees (and so never
    differentiates) a value outside its domain."""
    return anp.where(cond, x, fill)


class Continuous:
    """A location-scale family from its standardized functions of ``(z, *shapes)``.

    ``logpdf`` is required; ``cdf``, ``sf``, ``logcdf``, ``logsf``, ``ppf``, ``isf`` are
    optional (the missing log-forms fall back to log of the plain ones). ``support``
    is a function ``(z, *shapes) -> bool`` mask (default: everywhere).
    """

    def __init__(self, name, nshape, logpdf, cdf=None, sf=None, logcdf=None, logsf=None, ppf=None,
                 isf=None, support=None, shape_names=(), argcheck=None):
        self.name, self.nshape = name, nshape
        self.std = dict(logpdf=logpdf, cdf=cdf, sf=sf, logcdf=logcdf, logsf=logsf, ppf=ppf, isf=isf)
        self.support = support
        self.shape_names = shape_names
        # argcheck(*shapes) -> bool mask of valid shape parameters (scipy's _argcheck):
        # every function is nan where it is false
        self.argcheck = argcheck

    def _split(self, args, kw, fname):
        args = list(args)
        shapes = args[:self.nshape]
        for nm in self.shape_names[len(shapes):]:
            if nm not in kw:
                raise TypeError(f"{self.name}.{fname}: missing shape parameter {nm!r}")
            shapes.append(kw.pop(nm))
        rest = args[self.nshape:]
        loc = rest[0] if len(rest) > 0 else kw.pop("loc", 0.0)
        scale = rest[1] if len(rest) > 1 else kw.pop("scale", 1.0)
        if kw:
            raise TypeError(f"{self.name}.{fname}: unexpected arguments {sorted(kw)}")
        return shapes, loc, scale

    def _std_x(self, x, shapes, loc, scale):
        vals = floats(x, loc, scale, *shapes)
        x, loc, scale, shapes = vals[0], vals[1], vals[2], vals[3:]
        z = anp.divide(anp.subtract(x, loc), scale)
        return z, loc, scale, shapes

    def make(self, fname):
        """The public ``fname`` (logpdf, pdf, cdf, ...) with scipy's signature."""
        fam = self

        def in_support(z, shapes):
            return fam.support(z, *shapes) if fam.support is not None else anp.ones_like(z, dtype=bool)

        def bad_scale(scale, out, shapes=()):
            ok = anp.greater(scale, 0.0)
            if fam.argcheck is not None:
                ok = anp.logical_and(ok, fam.argcheck(*shapes))
            return anp.where(ok, out, np.nan)

        @quiet
        def logpdf(x, *args, **kw):
            shapes, loc, scale = fam._split(args, kw, "logpdf")
            z, loc, scale, shapes = fam._std_x(x, shapes, loc, scale)
            ok = in_support(z, shapes)
            val = fam.std["logpdf"](z, *shapes)
            out = anp.where(ok, anp.subtract(val, anp.log(scale)), -np.inf)
            return bad_scale(scale, out, shapes)

        @quiet
        def pdf(x, *args, **kw):
            return anp.exp(logpdf(x, *args, **kw))

        def _tail(which, log):
            @quiet
            def f(x, *args, **kw):
                shapes, loc, scale = fam._split(args, kw, which)
                z, loc, scale, shapes = fam._std_x(x, shapes, loc, scale)
                std = fam.std
                if log:
                    if std["log" + which] is not None:
                        out = std["log" + which](z, *shapes)
                    else:
                        out = anp.log(std[which](z, *shapes) if std[which] is not None else
                                      anp.subtract(1.0, std["cdf" if which == "sf" else "sf"](z, *shapes)))
                else:
                    if std[which] is not None:
                        out = std[which](z, *shapes)
                    elif std["log" + which] is not None:
                        out = anp.exp(std["log" + which](z, *shapes))
                    else:
                        out = anp.subtract(1.0, std["cdf" if which == "sf" else "sf"](z, *shapes))
                return bad_scale(scale, out, shapes)
            return f

        def _inverse(which):
            @quiet
            def f(q, *args, **kw):
                shapes, loc, scale = fam._split(args, kw, which)
                vals = floats(q, loc, scale, *shapes)
                q, loc, scale, shapes = vals[0], vals[1], vals[2], vals[3:]
                if fam.std[which] is not None:
                    z = fam.std[which](q, *shapes)
                else:
                    other = "ppf" if which == "isf" else "isf"
                    z = fam.std[other](anp.subtract(1.0, q), *shapes)
                out = anp.add(loc, anp.multiply(scale, z))
                bad = anp.logical_or(anp.less(q, 0.0), anp.greater(q, 1.0))
                return bad_scale(scale, anp.where(bad, np.nan, out), shapes)
            return f

        table = dict(logpdf=logpdf, pdf=pdf, cdf=_tail("cdf", False), logcdf=_tail("cdf", True),
                     sf=_tail("sf", False), logsf=_tail("sf", True), ppf=_inverse("ppf"),
                     isf=_inverse("isf"))
        f = npfunc(None)(table[fname])
        sig = ", ".join(["x" if fname not in ("ppf", "isf") else "q"] + list(self.shape_names) +
                        ["loc=0", "scale=1"])
        f.__name__ = fname
        f.__qualname__ = f"{self.name}.{fname}"
        f.__doc__ = f"``scipy.stats.{self.name}.{fname}({sig})``, differentiable in every argument."
        return f

    def has(self, fname):
        s = self.std
        if fname in ("logpdf", "pdf"):
            return True
        if fname in ("cdf", "logcdf"):
            return s["cdf"] is not None or s["logcdf"] is not None or s["sf"] is not None
        if fname in ("sf", "logsf"):
            return s["sf"] is not None or s["logsf"] is not None or s["cdf"] is not None
        if fname in ("ppf", "isf"):
            return s["ppf"] is not None or s["isf"] is not None
        return False

    def export(self, namespace):
        """Define every function the family has in a module's ``namespace``."""
        names = [n for n in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf") if self.has(n)]
        for n in names:
            namespace[n] = self.make(n)
        namespace["__all__"] = names


def discrete(name, fname, fun, params, argcheck=None):
    """A public pmf-family function with scipy's signature ``f(k, *params, loc=0)``; nan
    where ``argcheck(*params)`` (scipy's ``_argcheck``) is false."""
    @npfunc(None)
    @quiet
    def f(k, *args, **kw):
        args = list(args)
        for nm in params[len(args):]:
            if nm not in kw:
                raise TypeError(f"{name}.{fname}: missing parameter {nm!r}")
            args.append(kw.pop(nm))
        loc = args[len(params)] if len(args) > len(params) else kw.pop("loc", 0)
        if kw:
            raise TypeError(f"{name}.{fname}: unexpected arguments {sorted(kw)}")
        vals = floats(k, loc, *args[:len(params)])
        k, loc, ps = vals[0], vals[1], vals[2:]
        if fname in ("ppf", "isf"):      # k is a probability; loc shifts the quantile
            out = anp.add(fun(k, *ps), loc)
        else:
            out = fun(anp.subtract(k, loc), *ps)
        out = anp.astype(out, anp.dtype_of(k)) if anp.dtype_of(out) != anp.dtype_of(k) else out
        if argcheck is not None:
            out = anp.where(argcheck(*ps), out, np.nan)
        return out
    f.__name__ = fname
    f.__qualname__ = f"{name}.{fname}"
    f.__doc__ = f"``scipy.stats.{name}.{fname}(k, {', '.join(params)}, loc=0)``."
    return f


def is_int(k):
    return anp.equal(k, anp.floor(k))
