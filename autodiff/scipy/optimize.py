"""``minimize``: JAX's ``jax.scipy.optimize.minimize`` (BFGS with a strong-Wolfe line search).

``minimize(fun, x0, args=(), *, method, tol=None, options=None)`` minimizes the scalar
function ``fun(x, *args)`` from ``x0`` and returns an :class:`OptimizeResults` with JAX's
fields ``x, success, status, fun, jac, hess_inv, nfev, njev, nit``. The gradient comes
from ``value_and_grad``; nothing of scipy is imported.

``method`` is ``"BFGS"`` (case-insensitive) or JAX's
``"l-bfgs-experimental-do-not-rely-on-this"`` (limited-memory BFGS; its ``hess_inv`` is
None; it also takes complex ``x0``, minimizing over the real and imaginary parts, as JAX's
does). ``options`` take JAX's names: ``maxiter`` (default ``200 * x0.size``), ``gtol``
(default ``1e-5``: stop when the ``norm`` of the gradient is below it), ``norm`` (default
``inf``), ``line_search_maxiter`` (default 20), and for L-BFGS ``maxcor`` (default 10).
``tol``, when given and ``options`` have no ``gtol``, is the ``gtol`` (scipy's rule).

``x0`` may be an array of any shape or a pytree of arrays (it is raveled with
``ravel_pytree``; ``x`` and ``jac`` come back in its structure). The iteration and its line
search are ``lax.while_loop``\\ s, so ``minimize`` runs under ``jit`` and ``vmap``; outside
them it runs the loops in Python on numpy values. ``status``: 0 converged, 1 ``maxiter``
reached, 3 the line search found no step satisfying the Wolfe conditions (``x`` is then
the best point found); ``success`` is ``status == 0``.

>>> import numpy as np, autodiff.numpy as anp
>>> from autodiff.scipy.optimize import minimize
>>> rosen = lambda x: anp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
>>> res = minimize(rosen, np.zeros(3), method="BFGS")
>>> bool(res.success), np.round(res.x, 6)
(True, array([1., 1., 1.]))
"""
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as anp
from ..api import value_and_grad
from .._lax_control_flow import while_loop
from ..flatten_util import ravel_pytree
from ..tree_util import tree_map

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns (JAX's fields).

    ``x``: the solution; ``success``: whether the gradient's norm fell below ``gtol``;
    ``status``: 0 converged, 1 ``maxiter`` reached, 3 line search failure; ``fun``,
    ``jac``: the function and its gradient at ``x``; ``hess_inv``: the BFGS estimate of the
    inverse Hessian (None for L-BFGS); ``nfev``, ``njev``: function and gradient
    evaluations; ``nit``: iterations.

    >>> OptimizeResults._fields[:3]
    ('x', 'success', 'status')
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize the scalar ``fun(x, *args)`` from ``x0`` (JAX's ``scipy.optimize.minimize``).

    See the module's docstring for the methods and options.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> quad = lambda x, c: anp.sum((x - c) ** 2) + x[0] * x[1]
    >>> res = ad.jit(lambda c: minimize(quad, anp.zeros(2), (c,), method="BFGS"))(
    ...     np.array([1.0, 2.0]))
    >>> np.allclose(res.x, [0.0, 2.0], atol=1e-6), int(res.status)   # 2(x - c) + (x1, x0) = 0
    (True, 0)
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: the args argument to minimize must be a tuple, got "
                        f"{type(args).__name__} {args!r}")
    options = dict(options)
    if tol is not None and "gtol" not in options:
        options["gtol"] = tol
    if isinstance(x0, (list, tuple)) and all(np.ndim(v) == 0 for v in x0):
        x0 = anp.asarray(x0)          # a list of numbers is an array_like (scipy's x0)

    name = method.lower() if isinstance(method, str) else method
    lbfgs = name in ("l-bfgs-experimental-do-not-rely-on-this", "l-bfgs")
    if name != "bfgs" and not lbfgs:
        raise ValueError(f"minimize: method {method!r} not recognized; autodiff has "
                         f"'BFGS' and 'l-bfgs-experimental-do-not-rely-on-this' (JAX's)")

    def _inexact(v):
        v = anp.asarray(v)
        kind = np.dtype(anp.result_type(v)).kind
        if kind == "c" and not lbfgs:
            raise TypeError("minimize: x0 must be real for method='BFGS' (complex x0 is "
                            "supported by the L-BFGS method, as in JAX)")
        return v if kind in "fc" else anp.astype(v, np.float64)   # integers: float64
    flat0, unravel = ravel_pytree(tree_map(_inexact, x0))
    flat0 = anp.asarray(flat0)
    n = int(np.size(flat0))
    is_complex = np.dtype(anp.result_type(flat0)).kind == "c"
    if is_complex:
        # complex x as the real vector (Re x, Im x): the quasi-Newton updates are then real
        flat0 = anp.concatenate([anp.real(flat0), anp.imag(flat0)])

    def flat_fun(x):
        if is_complex:
            x = x[:n] + 1j * x[n:]
        return fun(unravel(x), *args)

    if lbfgs:
        r = _minimize_lbfgs(flat_fun, flat0, **options)
    else:
        r = _minimize_bfgs(flat_fun, flat0, **options)
    x, jac = r.x, r.jac
    if is_complex:
        # jac in autodiff's (and JAX's) convention for real functions of complex x:
        # df/dRe - i df/dIm, what ``grad`` returns
        x, jac = x[:n] + 1j * x[n:], jac[:n] - 1j * jac[n:]
    return r._replace(x=unravel(x), jac=unravel(jac))


# ----------------------------------------------------------------------------
# line search: strong Wolfe conditions (Nocedal & Wright, Algorithms 3.5 and 3.6)
# ----------------------------------------------------------------------------

def _cubic_min(a_lo, f_lo, d_lo, a_hi, f_hi, d_hi):
    """The minimizer of the cubic through both points' values and slopes, bisection where
    it is not finite or falls within 10% of either end."""
    delta = a_hi - a_lo
    safe = anp.where(delta == 0, 1.0, delta)
    d1 = d_lo + d_hi - 3.0 * (f_lo - f_hi) / (-safe)
    disc = d1 * d1 - d_lo * d_hi
    d2 = anp.sign(delta) * anp.sqrt(anp.where(disc > 0, disc, 0.0))
    den = d_hi - d_lo + 2.0 * d2
    a = a_hi - delta * (d_hi + d2 - d1) / anp.where(den == 0, 1.0, den)
    lo = anp.minimum(a_lo, a_hi) + 0.1 * anp.abs(delta)
    hi = anp.maximum(a_lo, a_hi) - 0.1 * anp.abs(delta)
    ok = (disc > 0) & (den != 0) & anp.isfinite(a) & (a >= lo) & (a <= hi)
    return anp.where(ok, a, a_lo + 0.5 * delta)


class _LSState(NamedTuple):
    k: Any
    zooming: Any
    done: Any
    a_lo: Any
    f_lo: Any
    d_lo: Any
    g_lo: Any
    a_hi: Any
    f_hi: Any
    d_hi: Any
    a_best: Any
    f_best: Any
    g_best: Any
    nfev: Any


def _line_search(vg, x, p, f0, g0, start, maxiter, c1=1e-4, c2=0.9):
    """``(a, f(x + a p), g(x + a p), failed, nfev)`` with ``a`` meeting the strong Wolfe
    conditions, or the best Armijo point (``a = 0`` when there is none) and
    ``failed = True``."""
    d0 = anp.dot(g0, p)
    zero = anp.zeros_like(f0)
    init = _LSState(k=0, zooming=False, done=False,
                    a_lo=zero, f_lo=f0, d_lo=d0, g_lo=g0,
                    a_hi=zero, f_hi=f0, d_hi=d0,
                    a_best=zero, f_best=f0, g_best=g0, nfev=0)

    def cond(s):
        return anp.logical_not(s.done) & (s.k < maxiter)

    def body(s):
        a = anp.where(s.zooming,
                      _cubic_min(s.a_lo, s.f_lo, s.d_lo, s.a_hi, s.f_hi, s.d_hi),
                      anp.where(s.k == 0, start, 2.0 * s.a_lo))
        f, g = vg(x + a * p)
        d = anp.dot(g, p)
        finite = anp.isfinite(f) & anp.all(anp.isfinite(g))
        armijo_fail = anp.logical_not(finite) | (f > f0 + c1 * a * d0)
        curv_ok = anp.abs(d) <= -c2 * d0
        # bracketing: a too long step (or no decrease on the last) closes [lo, a];
        # an uphill slope closes [a, lo]; otherwise step further
        too_far = armijo_fail | ((s.k > 0) & (f >= s.f_lo))
        # zooming: a step without sufficient decrease, or above lo, is the new hi
        hi_new = armijo_fail | (f >= s.f_lo)
        done = anp.where(s.zooming, anp.logical_not(hi_new) & curv_ok,
                         anp.logical_not(too_far) & curv_ok)
        uphill = d >= 0
        flip = d * (s.a_hi - s.a_lo) >= 0       # zoom: the slope at a points to lo: hi = lo
        replace_hi_by_a = anp.where(s.zooming, hi_new, too_far)
        replace_hi_by_lo = anp.where(s.zooming, anp.logical_not(hi_new) & flip,
                                     anp.logical_not(too_far) & uphill)
        move_lo = anp.where(s.zooming, anp.logical_not(hi_new),
                            anp.logical_not(too_far))
        zooming = s.zooming | too_far | (anp.logical_not(too_far) & uphill)

        def pick(new, keep_hi_lo, old):
            return anp.where(replace_hi_by_a, new, anp.where(replace_hi_by_lo, keep_hi_lo, old))
        a_hi = pick(a, s.a_lo, s.a_hi)
        f_hi = pick(f, s.f_lo, s.f_hi)
        d_hi = pick(d, s.d_lo, s.d_hi)
        better = anp.logical_not(armijo_fail) & (f < s.f_best)
        return _LSState(
            k=s.k + 1, zooming=zooming, done=done,
            a_lo=anp.where(move_lo, a, s.a_lo), f_lo=anp.where(move_lo, f, s.f_lo),
            d_lo=anp.where(move_lo, d, s.d_lo), g_lo=anp.where(move_lo, g, s.g_lo),
            a_hi=a_hi, f_hi=f_hi, d_hi=d_hi,
            a_best=anp.where(done | better, a, s.a_best),
            f_best=anp.where(done | better, f, s.f_best),
            g_best=anp.where(done | better, g, s.g_best),
            nfev=s.nfev + 1)

    s = while_loop(cond, body, init)
    return s.a_best, s.f_best, s.g_best, anp.logical_not(s.done), s.nfev


def _start_step(f, old_f, d0):
    """scipy's and JAX's first trial step: the one that would repeat the last decrease,
    at most 1."""
    cand = 1.01 * 2.0 * (f - old_f) / anp.where(d0 == 0, -1.0, d0)
    return anp.where(anp.isfinite(cand) & (cand > 0) & (cand < 1), cand, 1.0)


def _status(converged, failed, k, maxiter):
    return anp.where(converged, 0, anp.where(failed, 3, anp.where(k >= maxiter, 1, -1)))


# ----------------------------------------------------------------------------
# BFGS
# ----------------------------------------------------------------------------

class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    H: Any
    old_f: Any


def _norm(g, norm):
    return anp.linalg.norm(g, ord=norm)


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=20):
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = int(np.size(x0))
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    eye = anp.eye(n, dtype=anp.result_type(x0))
    init = _BFGSState(converged=_norm(g0, norm) < gtol, failed=False, k=0, nfev=1,
                      x=x0, f=f0, g=g0, H=eye, old_f=f0 + anp.linalg.norm(g0) / 2)

    def cond(s):
        return anp.logical_not(s.converged) & anp.logical_not(s.failed) & (s.k < maxiter)

    def body(s):
        p = -(s.H @ s.g)
        start = _start_step(s.f, s.old_f, anp.dot(s.g, p))
        a, f1, g1, failed, nfev = _line_search(vg, s.x, p, s.f, s.g, start,
                                               line_search_maxiter)
        sk = a * p
        yk = g1 - s.g
        sy = anp.dot(yk, sk)
        rho = 1.0 / anp.where(sy == 0, 1.0, sy)
        w = eye - rho * anp.outer(sk, yk)
        H1 = w @ s.H @ w.T + rho * anp.outer(sk, sk)
        H1 = anp.where((sy > 0) & anp.all(anp.isfinite(H1)), H1, s.H)
        return _BFGSState(converged=_norm(g1, norm) < gtol, failed=failed, k=s.k + 1,
                          nfev=s.nfev + nfev, x=s.x + sk, f=f1, g=g1, H=H1, old_f=s.f)

    s = while_loop(cond, body, init)
    status = _status(s.converged, s.failed, s.k, maxiter)
    return OptimizeResults(x=s.x, success=s.converged & anp.logical_not(s.failed),
                           status=status, fun=s.f, jac=s.g, hess_inv=s.H, nfev=s.nfev,
                           njev=s.nfev, nit=s.k)


# ----------------------------------------------------------------------------
# L-BFGS (two-loop recursion over the last ``maxcor`` pairs, kept in ring buffers)
# ----------------------------------------------------------------------------

class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    S: Any
    Y: Any
    rho: Any
    gamma: Any
    pairs: Any
    old_f: Any


def _two_loop(g, S, Y, rho, gamma, k, m):
    """``H_k g`` by the two-loop recursion; slot ``i`` holds pair ``k - 1 - ((k - 1 - i)
    mod m)``; unused slots have ``rho = 0`` and contribute nothing."""
    q = g
    alphas = []
    for j in range(m):                       # newest to oldest
        i = (k - 1 - j) % m
        a = rho[i] * anp.dot(S[i], q)
        q = q - a * Y[i]
        alphas.append((i, a))
    r = gamma * q
    for i, a in reversed(alphas):            # oldest to newest
        b = rho[i] * anp.dot(Y[i], r)
        r = r + S[i] * (a - b)
    return r


def _minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=20,
                    maxcor=10, **ignored):
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = int(np.size(x0))
    m = int(maxcor)
    dt = anp.result_type(x0)
    vg = value_and_grad(fun)
    f0, g0 = vg(x0)
    init = _LBFGSState(converged=_norm(g0, norm) < gtol, failed=False, k=0, nfev=1,
                       x=x0, f=f0, g=g0, S=anp.zeros((m, n), dt), Y=anp.zeros((m, n), dt),
                       rho=anp.zeros(m, dt), gamma=anp.ones((), dt), pairs=0,
                       old_f=f0 + anp.linalg.norm(g0) / 2)

    def cond(s):
        return anp.logical_not(s.converged) & anp.logical_not(s.failed) & (s.k < maxiter)

    def body(s):
        p = -_two_loop(s.g, s.S, s.Y, s.rho, s.gamma, s.pairs, m)
        start = _start_step(s.f, s.old_f, anp.dot(s.g, p))
        a, f1, g1, failed, nfev = _line_search(vg, s.x, p, s.f, s.g, start,
                                               line_search_maxiter)
        sk = a * p
        yk = g1 - s.g
        sy = anp.dot(yk, sk)
        keep = sy > 0                         # curvature pairs that keep H positive
        slot = s.pairs % m
        S = anp.where(keep, s.S.at[slot].set(sk), s.S)
        Y = anp.where(keep, s.Y.at[slot].set(yk), s.Y)
        rho = anp.where(keep, s.rho.at[slot].set(1.0 / anp.where(keep, sy, 1.0)), s.rho)
        yy = anp.dot(yk, yk)
        gamma = anp.where(keep & (yy > 0), sy / anp.where(yy > 0, yy, 1.0), s.gamma)
        return _LBFGSState(converged=_norm(g1, norm) < gtol, failed=failed, k=s.k + 1,
                           nfev=s.nfev + nfev, x=s.x + sk, f=f1, g=g1, S=S, Y=Y, rho=rho,
                           gamma=gamma, pairs=anp.where(keep, s.pairs + 1, s.pairs),
                           old_f=s.f)

    s = while_loop(cond, body, init)
    status = _status(s.converged, s.failed, s.k, maxiter)
    return OptimizeResults(x=s.x, success=s.converged & anp.logical_not(s.failed),
                           status=status, fun=s.f, jac=s.g, hess_inv=None, nfev=s.nfev,
                           njev=s.nfev, nit=s.k)
