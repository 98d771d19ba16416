"""The numerical gradient checker: ``check_grads(f, args, order=2, modes=("fwd", "rev"))``.

Forward mode is checked against central differences along random directions;
reverse mode by the adjoint identity ``<vjp(u), v> == <u, jvp(v)>``; higher orders
by recursing on the directional derivative ``a -> jvp(f, a, v)`` and, with reverse
mode, on the cotangent map ``a -> vjp(f, a)(u)`` (so order 2 checks forward over
forward, reverse over forward, forward over reverse and reverse over reverse).

Complex inputs (docs/complex.md): a complex leaf is moved in both of its real
directions, once by ``eps·d`` and once by ``i·eps·d`` (two central differences), and
the pairing of the adjoint identity is ``<u, v> = Re(Σ u·v)`` (no conjugation), the
one the transpose rules are written for; cotangents of complex outputs are random
complex arrays.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> ad.check_grads(anp.sin, (np.array([0.3, 1.2]),), order=2)
>>> ad.check_grads(lambda z: anp.abs(z) ** 2, (np.array([0.3 + 1j, -1.2j]),), order=2)
"""
import numpy as np

from .avals import real_dtype
from .api import jvp, vjp
from .api_util import as_array
from .tree_util import tree_flatten, tree_unflatten, tree_map

__all__ = ["check_jvp", "check_vjp", "check_grads"]

_EPS = {np.dtype(np.float64): 1e-4, np.dtype(np.float32): 2e-2, np.dtype(np.float16): 1e-1}
_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2, np.dtype(np.float16): 1e-1}


def _dtype(leaves):
    dts = [real_dtype(np.asarray(l).dtype) for l in leaves if np.asarray(l).dtype.kind in "fc"]
    if not dts:
        return np.dtype(np.float64)
    return min(dts, key=lambda d: d.itemsize)


def _wide(x):
    """``x`` as float64, or complex128 when it is complex (the checks compare in these)."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _inner(xs, ys):
    # <u, v> = Re(Σ u·v): the pairing of the transpose rules (docs/complex.md)
    return sum(float(np.real(np.sum(_wide(x) * _wide(y)))) for x, y in zip(xs, ys))


def _rand_like(rng, leaves, part=None):
    """Random directions (or cotangents) like ``leaves``: standard normal for float leaves;
    for complex ones, real and imaginary parts standard normal (``part=None``), or only
    the real (``"re"``) or only the imaginary (``"im"``) one; zeros for the rest."""
    out = []
    for l in leaves:
        dt = np.asarray(l).dtype
        if dt.kind == "f":
            out.append(rng.standard_normal(np.shape(l)).astype(dt))
        elif dt.kind == "c":
            re = rng.standard_normal(np.shape(l)) if part != "im" else 0.0
            im = rng.standard_normal(np.shape(l)) if part != "re" else 0.0
            out.append(np.asarray(re + 1j * np.asarray(im)).astype(dt))
        else:
            out.append(np.zeros_like(l))
    return out


def _check_close(name, expected, got, atol, rtol):
    e, g = _wide(expected), _wide(got)
    if e.dtype.kind == "c" or g.dtype.kind == "c":
        e, g = e.astype(np.complex128), g.astype(np.complex128)
    if e.shape != g.shape:
        raise AssertionError(f"check_grads {name}: shape mismatch, expected {e.shape}, got {g.shape}")
    with np.errstate(invalid="ignore"):
        err = np.abs(e - g)
        bound = atol + rtol * np.abs(e)
        # a nan (or an equal inf) at the same place in both agrees, as numpy's
        # assert_allclose (and JAX's check_grads) count it
        ok = (err <= bound) | (np.isnan(e) & np.isnan(g)) | (e == g)
    if not np.all(ok):
        i = np.unravel_index(np.argmax(np.where(ok, -np.inf, np.nan_to_num(err - bound,
                                                                           nan=np.inf))),
                             err.shape) if err.size else ()
        raise AssertionError(
            f"check_grads {name} mismatch:\n  expected {e}\n  got      {g}\n"
            f"  max abs err {err.max() if err.size else 0:.3g} at {i}; atol={atol:g} rtol={rtol:g}")


def _central(p, m, eps):
    # an output that is the same infinity on both sides has derivative 0 there (JAX's
    # _safe_subtract), not (inf - inf)/2eps = nan
    with np.errstate(invalid="ignore"):
        return np.where(p == m, 0, p - m) / (2 * eps)


def check_jvp(f, args, eps, atol, rtol, rng):
    """Compare ``jvp(f)`` along a random direction with central differences of step ``eps``; raise
    ``AssertionError`` with the largest difference."""
    leaves, tree = tree_flatten(args)
    leaves = [np.asarray(as_array(l)) for l in leaves]
    args_t = tree_unflatten(tree, leaves)
    # a complex leaf moves along both of its real directions: by eps·d, then by i·eps·d
    parts = ("re", "im") if any(l.dtype.kind == "c" for l in leaves) else (None,)
    for part in parts:
        v = _rand_like(rng, leaves, part)
        _, tout = jvp(f, tuple(args_t), tuple(tree_unflatten(tree, v)))
        # only inexact leaves move: integer ones (indices, counts) stay what they were
        plus = f(*tree_unflatten(tree, [(l + eps * d).astype(l.dtype) if l.dtype.kind in "fc"
                                        else l for l, d in zip(leaves, v)]))
        minus = f(*tree_unflatten(tree, [(l - eps * d).astype(l.dtype) if l.dtype.kind in "fc"
                                         else l for l, d in zip(leaves, v)]))
        fd = tree_map(lambda p, m: _central(_wide(p), _wide(m), eps), plus, minus)
        what = "" if part is None else f" (complex inputs moved along {'i·' * (part == 'im')}d)"
        for e, g in zip(tree_flatten(fd)[0], tree_flatten(tout)[0]):
            _check_close(f"JVP (forward mode vs central differences{what})", e, g, atol, rtol)


def check_vjp(f, args, atol, rtol, rng):
    """Check ``vjp(f)`` against ``jvp(f)`` by the transpose identity ``<u, J v> == <J^T u, v>`` for
    random ``u``, ``v`` (complex ones for complex leaves, ``<a, b> = Re(Σ a·b)``); raise
    ``AssertionError`` on mismatch."""
    leaves, tree = tree_flatten(args)
    leaves = [np.asarray(as_array(l)) for l in leaves]
    args_t = tree_unflatten(tree, leaves)
    out, f_vjp = vjp(f, *args_t)
    out_leaves, out_tree = tree_flatten(out)
    u = _rand_like(rng, out_leaves)
    v = _rand_like(rng, leaves)
    cts = f_vjp(tree_unflatten(out_tree, u))
    _, tout = jvp(f, tuple(args_t), tuple(tree_unflatten(tree, v)))
    lhs = _inner(tree_flatten(cts)[0], v)
    rhs = _inner(u, tree_flatten(tout)[0])
    _check_close("VJP (adjoint identity <vjp(u), v> = <u, jvp(v)>)", rhs, lhs, atol, rtol)


def check_grads(f, args=None, order=2, modes=("fwd", "rev"), eps=None, atol=None, rtol=None, seed=0):
    """Check derivatives of ``f`` at ``args`` up to ``order``; raises ``AssertionError`` with a diff.

    Without ``args`` it returns the checker, autograd's spelling:
    ``check_grads(f, modes=["rev"], order=1)(*args)``.
    """
    if args is None:
        return lambda *a: check_grads(f, a, order, modes, eps, atol, rtol, seed)
    if isinstance(modes, str):
        modes = (modes,)
    args = tuple(args)
    leaves, tree = tree_flatten(args)
    dt = _dtype([np.asarray(as_array(l)) for l in leaves])
    eps = eps if eps is not None else _EPS.get(dt, 1e-4)
    tol = _TOL.get(dt, 1e-5)
    atol = atol if atol is not None else tol
    rtol = rtol if rtol is not None else tol
    rng = np.random.default_rng(seed)
    _check(f, args, order, modes, eps, atol, rtol, rng)


def _check(f, args, order, modes, eps, atol, rtol, rng):
    # JAX's recursion: forward mode recurses on the directional derivative
    # ``a -> jvp(f, a, v)``, reverse mode on the cotangent map ``a -> vjp(f, a)(u)`` (u a
    # fixed random cotangent), each checked in every mode asked for; so order 2 with both
    # modes checks forward over forward, reverse over forward, forward over reverse and
    # reverse over reverse (``grad(grad(f))``), and reverse mode alone never transposes a
    # forward-mode derivative
    leaves, tree = tree_flatten(args)
    if "fwd" in modes:
        check_jvp(f, args, eps, atol, rtol, rng)
        if order > 1:
            v = tree_unflatten(tree, _rand_like(rng, [np.asarray(as_array(l)) for l in leaves]))

            def f_dir(*a):
                return jvp(f, a, tuple(v))[1]
            _check(f_dir, args, order - 1, modes, eps, atol, rtol, rng)
    if "rev" in modes:
        check_vjp(f, args, atol, rtol, rng)
        if order > 1:
            # the structure vjp gives the output (a traced call's: numpy functions that
            # return a tuple eagerly may build a list when traced)
            out_leaves, out_tree = tree_flatten(vjp(f, *args)[0])
            u = tree_unflatten(out_tree, _rand_like(
                rng, [np.asarray(as_array(l)) for l in out_leaves]))

            def f_vjp(*a):
                return vjp(f, *a)[1](u)
            _check(f_vjp, args, order - 1, modes, eps, atol, rtol, rng)
