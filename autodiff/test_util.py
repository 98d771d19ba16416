"""``check_grads`` with autograd's and JAX's signatures, over :func:`autodiff.check_grads`.

* JAX (``jax.test_util``): ``check_grads(f, args, order, modes=("fwd", "rev"),
  atol=None, rtol=None, eps=None)`` checks ``f`` with respect to every argument in
  ``args`` (a tuple) and returns ``None``.
* autograd (``autograd.test_util``): ``check_grads(f, argnum=0, modes=["fwd", "rev"],
  order=2)`` returns a checker; ``check_grads(f)(*args)`` checks the derivative with
  respect to ``args[argnum]`` only.

Both raise ``AssertionError`` with the expected and computed values on a mismatch.
Forward mode is compared with central differences, reverse mode with forward mode by
the adjoint identity ``<vjp(u), v> = <u, jvp(v)>``.

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.test_util import check_grads
>>> check_grads(anp.sin, (np.array([0.3, 1.2]),), order=2)             # JAX's form
>>> check_grads(lambda x, y: anp.sum(x * anp.exp(y)), argnum=1)(np.ones(2), np.zeros(2))
>>> check_grads(lambda x: x ** 3, modes=["rev"], order=1)(1.5)        # autograd's form

``check_jvp`` and ``check_vjp`` check a given forward/reverse rule: JAX's
``check_jvp(f, f_jvp, args)`` with ``f_jvp(primals, tangents) -> (out, tangent_out)``
(e.g. ``functools.partial(ad.jvp, f)``), ``check_vjp(f, f_vjp, args)`` with
``f_vjp(*args) -> (out, vjp_fn)``; or autograd's ``check_jvp(f, x)`` / ``check_vjp(f, x)``,
which check our own rules for ``f`` at ``x``.

>>> import functools, autodiff as ad
>>> from autodiff.test_util import check_jvp, check_vjp
>>> check_jvp(anp.tanh, functools.partial(ad.jvp, anp.tanh), (np.array([0.2, -1.0]),))
>>> check_vjp(anp.tanh, functools.partial(ad.vjp, anp.tanh), (np.array([0.2, -1.0]),))
"""
import numbers

import numpy as np

from .check import check_grads as _check_grads, _check_close
from .tree_util import tree_flatten, tree_unflatten

__all__ = ["check_grads", "check_jvp", "check_vjp", "scalar_close", "check_equivalent",
           "combo_check", "make_numerical_jvp", "TOL", "RTOL", "EPS"]

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    """Whether two numbers agree to ``TOL`` absolutely or ``RTOL`` relatively (autograd's).

    >>> scalar_close(1.0, 1.0 + 1e-9), scalar_close(1.0, 1.1)
    (True, False)
    """
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def check_equivalent(x, y):
    """Assert that two pytrees of arrays have one structure and equal values (to 1e-6),
    autograd's ``check_equivalent``.

    >>> check_equivalent({"a": np.ones(2)}, {"a": np.ones(2) + 1e-9})
    """
    lx, tx = tree_flatten(x)
    ly, ty = tree_flatten(y)
    assert tx == ty, f"different structures: {tx} and {ty}"
    for a, b in zip(lx, ly):
        assert np.shape(a) == np.shape(b), f"different shapes: {np.shape(a)} and {np.shape(b)}"
        assert np.allclose(a, b, rtol=RTOL, atol=TOL), f"values differ:\n{a}\n{b}"


def make_numerical_jvp(f, x):
    """``v -> (f(x + v·EPS/2) − f(x − v·EPS/2)) / EPS``, the central-difference JVP of
    ``f`` at ``x`` (pytrees of floats), as autograd's.

    >>> round(float(make_numerical_jvp(lambda t: t ** 2, 3.0)(1.0)), 6)
    6.0
    """
    lx, tree = tree_flatten(x)

    def jvp(v):
        lv = tree_flatten(v)[0]
        plus = tree_unflatten(tree, [a + b * (EPS / 2) for a, b in zip(lx, lv)])
        minus = tree_unflatten(tree, [a - b * (EPS / 2) for a, b in zip(lx, lv)])
        fp, tp = tree_flatten(f(plus))
        fm, _ = tree_flatten(f(minus))
        return tree_unflatten(tp, [(np.asarray(a) - np.asarray(b)) / EPS for a, b in zip(fp, fm)])
    return jvp


def combo_check(fun, *args, **kwargs):
    """autograd's ``combo_check(fun, argnums, modes=..., order=...)(*arg_lists, **kwarg_lists)``:
    :func:`check_grads` for every combination of the listed argument values, with respect
    to each argument in ``argnums``.

    >>> import autodiff.numpy as anp
    >>> combo_check(lambda x, y: x * anp.sin(y), [0, 1], modes=["rev"], order=1)(
    ...     [1.0, 2.0], [0.3, -0.5])
    """
    import itertools
    argnums = args[0] if args else kwargs.pop("argnums", [0])
    argnums = [argnums] if isinstance(argnums, int) else list(argnums)
    modes = kwargs.pop("modes", ["fwd", "rev"])
    order = kwargs.pop("order", 2)

    def checker(*arg_lists, **kwarg_lists):
        kw_names = list(kwarg_lists)
        for vals in itertools.product(*arg_lists):
            for kw_vals in itertools.product(*[kwarg_lists[k] for k in kw_names]):
                kw = dict(zip(kw_names, kw_vals))
                for i in argnums:
                    check_grads(lambda *a: fun(*a, **kw), argnum=i, modes=modes, order=order)(*vals)
    return checker


def check_grads(f, args=None, order=None, modes=("fwd", "rev"), atol=None, rtol=None, eps=None,
                argnum=None):
    """JAX's ``check_grads(f, args, order, ...)`` when ``args`` is a tuple or list;
    otherwise autograd's ``check_grads(f, argnum=0, modes=..., order=2)(*args)``."""
    if isinstance(args, (tuple, list)):
        return _check_grads(f, tuple(args), 2 if order is None else order, modes, eps, atol, rtol)
    if isinstance(args, numbers.Integral):          # autograd's positional argnum
        argnum = args
    argnum = 0 if argnum is None else argnum
    order = 2 if order is None else order

    def checker(*xs, **kwargs):
        before, after = xs[:argnum], xs[argnum + 1:]

        def f_of_one(x):
            return f(*before, x, *after, **kwargs)
        _check_grads(f_of_one, (xs[argnum],), order, modes, eps, atol, rtol)
    return checker


def _float_leaves(args):
    leaves, tree = tree_flatten(tuple(args))
    return [np.asarray(l, np.float64) for l in leaves], tree


def _central_difference(f, leaves, tree, v, eps):
    plus = f(*tree_unflatten(tree, [l + eps * d for l, d in zip(leaves, v)]))
    minus = f(*tree_unflatten(tree, [l - eps * d for l, d in zip(leaves, v)]))
    return [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * eps)
            for p, m in zip(tree_flatten(plus)[0], tree_flatten(minus)[0])]


def check_jvp(f, f_jvp, args=None, atol=1e-5, rtol=1e-5, eps=1e-4, err_msg=""):
    """JAX's ``check_jvp(f, f_jvp, args)``: ``f_jvp`` against central differences along a
    random direction. autograd's ``check_jvp(f, x)``: our forward mode of ``f`` at ``x``."""
    if args is None:
        return _check_grads(f, (f_jvp,), 1, ("fwd",), None, None, None)
    leaves, tree = _float_leaves(args)
    rng = np.random.default_rng(0)
    v = [rng.standard_normal(l.shape) for l in leaves]
    _, t_out = f_jvp(tuple(tree_unflatten(tree, leaves)), tuple(tree_unflatten(tree, v)))
    for e, g in zip(_central_difference(f, leaves, tree, v, eps), tree_flatten(t_out)[0]):
        _check_close(f"JVP {err_msg}".strip(), e, g, atol, rtol)


def check_vjp(f, f_vjp, args=None, atol=1e-5, rtol=1e-5, eps=1e-4, err_msg=""):
    """JAX's ``check_vjp(f, f_vjp, args)``: ``<vjp(u), v>`` against ``<u, (f(x+εv) -
    f(x-εv))/2ε>``. autograd's ``check_vjp(f, x)``: our reverse mode of ``f`` at ``x``."""
    if args is None:
        return _check_grads(f, (f_vjp,), 1, ("rev",), None, None, None)
    leaves, tree = _float_leaves(args)
    rng = np.random.default_rng(0)
    v = [rng.standard_normal(l.shape) for l in leaves]
    out, vjp_fn = f_vjp(*tree_unflatten(tree, leaves))
    out_leaves, out_tree = tree_flatten(out)
    u = [rng.standard_normal(np.shape(o)) for o in out_leaves]
    cts = tree_flatten(vjp_fn(tree_unflatten(out_tree, u)))[0]
    lhs = sum(float(np.sum(np.asarray(c, np.float64) * d)) for c, d in zip(cts, v))
    fd = _central_difference(f, leaves, tree, v, eps)
    rhs = sum(float(np.sum(a * b)) for a, b in zip(u, fd))
    _check_close(f"VJP {err_msg}".strip(), rhs, lhs, atol, rtol)
