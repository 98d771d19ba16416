"""``odeint``: an adaptive Dormand–Prince solver whose gradient is the adjoint method.

``odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf)`` solves
``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` and returns ``y`` at every time in
``t`` (stacked along a new leading axis), with JAX's semantics: ``y0`` may be any
pytree, ``t`` must be increasing, ``func`` takes ``y`` first (scipy's ``odeint``
convention, not ``solve_ivp``'s).

How it works. Each output interval is a ``lax.while_loop`` of Dormand–Prince 5(4)
steps with error control (a step is accepted when the RMS of its error estimate,
scaled by ``atol + rtol·max(|y|, |y_new|)``, is at most 1; the next step is
``0.9·ratio^(-1/5)`` times this one, between 0.2× and 10×), and the output is read off
the 4th-order dense-output polynomial of the step that crosses it. The intervals are
one ``lax.scan``, so the whole solve is two equations in the IR and ``jit`` compiles it.

Reverse mode is the adjoint method (Pontryagin; Chen et al. 2018, "Neural ODEs"),
through ``custom_vjp``: the backward pass integrates, from ``t[-1]`` down to ``t[0]``,
the augmented system

    dy/dt = f,   dā/dt = -āᵀ ∂f/∂y,   dθ̄/dt = -āᵀ ∂f/∂θ,   dt̄₀/dt = -āᵀ ∂f/∂t

adding each output's cotangent to ``ā`` as it passes that time. Nothing from the
forward steps is stored, so memory does not grow with the number of steps (the
price: a second solve, and gradients accurate to the solver's tolerance). ``func``
may close over values being differentiated (they are found by tracing ``func`` and
passed to the backward pass explicitly). Forward mode (``jvp``) differentiates the
solver's steps.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.scipy.integrate import odeint
>>> decay = lambda y, t, k: -k * y
>>> t = np.array([0.0, 1.0, 2.0])
>>> np.round(odeint(decay, 1.0, t, 0.5), 7)                 # exp(-k t)
array([1.       , 0.6065307, 0.3678794])
>>> g = ad.grad(lambda k: odeint(decay, 1.0, t, k)[-1])(0.5)   # d/dk exp(-2k) = -2 exp(-1)
>>> round(float(g), 7)
-0.7357589
"""
import numpy as np

from .. import numpy as anp
from ..builtins import tuple as _autograd_tuple
from ..api import evaluate, trace_fun, vjp, vmap
from ..core import ClosedJaxpr, Tracer
from ..custom_derivatives import custom_vjp
from .._lax_control_flow import scan, while_loop
from ..flatten_util import flatten
from ..tree_util import tree_flatten, tree_unflatten

__all__ = ["odeint", "trapezoid"]

# Dormand–Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Table II.5.2)
_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_BETA = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),    # = the 5th-order weights
)
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
_C_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# weights of y(t + dt/2) in Shampine's dense output for Dormand–Prince (Shampine 1986)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def _combine(weights, ks):
    out = None
    for w, k in zip(weights, ks):
        if w != 0.0:
            out = w * k if out is None else out + w * k
    return out


def _rms(x):
    return anp.sqrt(anp.mean(x * x))


def _dopri5_step(f, y, fy, t, dt):
    """One Dormand–Prince step: (y_new, f(y_new), error estimate, y at the midpoint)."""
    ks = [fy]
    for a, b in zip(_ALPHA, _BETA):
        yi = y + dt * _combine(b, ks)
        ks.append(f(yi, t + a * dt))
    y_new = yi                      # the last stage is evaluated at the solution (FSAL)
    return y_new, ks[-1], dt * _combine(_C_ERR, ks), y + dt * _combine(_C_MID, ks)


def _fit_quartic(y0, y1, y_mid, f0, f1, dt):
    """Coefficients (highest power first) of the quartic p(s), s ∈ [0, 1], with
    p(0) = y0, p(1/2) = y_mid, p(1) = y1, p'(0) = dt·f0, p'(1) = dt·f1."""
    a = -2 * dt * f0 + 2 * dt * f1 - 8 * y0 - 8 * y1 + 16 * y_mid
    b = 5 * dt * f0 - 3 * dt * f1 + 18 * y0 + 14 * y1 - 32 * y_mid
    c = -4 * dt * f0 + dt * f1 - 11 * y0 - 5 * y1 + 16 * y_mid
    return anp.stack([a, b, c, dt * f0, y0])


def _polyval(coeffs, s):
    out = coeffs[0]
    for i in range(1, 5):
        out = out * s + coeffs[i]
    return out


def _initial_step(f, t0, y0, f0, rtol, atol):
    """Hairer, Nørsett & Wanner's starting step (Solving ODEs I, II.4), RMS norms."""
    scale = atol + anp.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = anp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / anp.maximum(d1, 1e-300))
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    big = anp.maximum(d1, d2)
    h1 = anp.where(big <= 1e-15, anp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / anp.maximum(big, 1e-300)) ** (1 / 5))
    return anp.minimum(100 * h0, h1)


def _solve(f, y0, t, rtol, atol, mxstep, hmax):
    """The solver on a flat state vector: ``y`` at every ``t`` (no custom derivative;
    with a finite ``mxstep`` it is differentiable in reverse mode step by step)."""
    f0 = f(y0, t[0])
    dt0 = anp.minimum(_initial_step(f, t[0], y0, f0, rtol, atol), hmax)
    max_steps = None if mxstep == np.inf else int(mxstep)
    coeffs0 = anp.stack([anp.zeros_like(y0)] * 4 + [y0])

    def interval(carry, target):
        def not_there(state):
            _, _, t_cur, _, _, _, n = state
            return (t_cur < target) & (n < mxstep)

        def attempt(state):
            y, fy, t_cur, dt, last_t, coeffs, n = state
            y_new, f_new, err, y_mid = _dopri5_step(f, y, fy, t_cur, dt)
            ratio = _rms(err / (atol + rtol * anp.maximum(anp.abs(y), anp.abs(y_new))))
            accept = ratio <= 1.0
            factor = anp.clip(0.9 * anp.maximum(ratio, 1e-10) ** -0.2, 0.2, 10.0)
            factor = anp.where(accept, factor, anp.minimum(factor, 1.0))
            coeffs = anp.where(accept, _fit_quartic(y, y_new, y_mid, fy, f_new, dt), coeffs)
            return (anp.where(accept, y_new, y), anp.where(accept, f_new, fy),
                    anp.where(accept, t_cur + dt, t_cur), anp.minimum(dt * factor, hmax),
                    anp.where(accept, t_cur, last_t), coeffs, n + 1)

        y, fy, t_cur, dt, last_t, coeffs = carry
        state = while_loop(not_there, attempt, (y, fy, t_cur, dt, last_t, coeffs, 0),
                           max_steps=max_steps)
        y, fy, t_cur, dt, last_t, coeffs, _ = state
        span = t_cur - last_t
        s = anp.where(span > 0, (target - last_t) / anp.where(span > 0, span, 1.0), 0.0)
        return (y, fy, t_cur, dt, last_t, coeffs), _polyval(coeffs, s)

    carry = (y0, f0, t[0], dt0, t[0], coeffs0)
    _, ys = scan(interval, carry, t[1:])
    return anp.concatenate([y0[None], ys])


def _odeint_flat(f, rtol, atol, mxstep, hmax, y0, t, *params):
    return _solve(lambda y, s: f(y, s, *params), y0, t, rtol, atol, mxstep, hmax)


_odeint_adjoint = custom_vjp(_odeint_flat, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(f, rtol, atol, mxstep, hmax, y0, t, *params):
    # through the custom rule again, so derivatives of the residuals are adjoints too
    ys = _odeint_adjoint(f, rtol, atol, mxstep, hmax, y0, t, *params)
    return ys, (ys, t, params)


def _odeint_bwd(f, rtol, atol, mxstep, hmax, res, g):
    ys, t, params = res
    params = list(params)
    n = ys.shape[1]
    p_flat, unflatten_p = flatten(params)
    n_p = p_flat.shape[0]

    def aug_dynamics(aug, s, *params):
        # s = -t runs backwards; d/ds of (y, ā, t̄₀, θ̄) is (-f, āᵀ∂f/∂y, āᵀ∂f/∂t, āᵀ∂f/∂θ)
        y, y_bar = aug[:n], aug[n:2 * n]
        y_dot, f_vjp = vjp(f, y, -s, *params)
        y_bar_dot, t_bar_dot, *p_bar_dot = f_vjp(y_bar)
        return anp.concatenate([-y_dot, y_bar_dot, anp.reshape(t_bar_dot, (1,)),
                                anp.asarray(flatten(p_bar_dot)[0], aug.dtype)])

    def back(carry, xs):
        y_bar, t0_bar, p_bar = carry
        y_i, t_i, t_prev, g_i, g_prev = xs
        # moving the output time t_i moves y(t_i) along f: t̄_i = f(y_i, t_i)·ḡ_i
        t_bar = anp.dot(f(y_i, t_i, *params), g_i)
        t0_bar = t0_bar - t_bar
        aug = anp.concatenate([y_i, y_bar, anp.reshape(t0_bar, (1,)), p_bar])
        aug = _odeint_adjoint(aug_dynamics, rtol, atol, mxstep, hmax, aug,
                              anp.stack([-t_i, -t_prev]), *params)[1]
        y_bar = aug[n:2 * n] + g_prev
        return (y_bar, aug[2 * n], aug[2 * n + 1:]), t_bar

    xs = (ys[:0:-1], t[:0:-1], t[-2::-1], g[:0:-1], g[-2::-1])
    init = (g[-1], anp.zeros((), ys.dtype), anp.zeros(n_p, ys.dtype))
    (y0_bar, t0_bar, p_bar), ts_bar = scan(back, init, xs)
    t_bar = anp.concatenate([anp.reshape(t0_bar, (1,)), ts_bar[::-1]])
    return (y0_bar, anp.asarray(t_bar, t.dtype), *unflatten_p(p_bar))


_odeint_adjoint.defvjp(_odeint_fwd, _odeint_bwd)


def _closure_convert(func, y0_flat, unflatten_y, t0, arg_leaves, arg_tree):
    """``func`` as ``f(y_flat, t, *params)`` whose every traced input is explicit:
    closed-over tracers become trailing parameters, so the backward pass can
    differentiate with respect to them."""
    y_tree = tree_flatten(unflatten_y(y0_flat))[1]

    def flat_func(y, t, *leaves):
        args = tree_unflatten(arg_tree, list(leaves[:len(arg_leaves)]))
        dy = func(unflatten_y(y), t, *args)
        dy_leaves, dy_tree = tree_flatten(dy)
        # JAX ravels func's output: any structure with y0's number of entries will do
        # (a list of scalars for an array state, an array for a list state)
        if sum(int(np.size(a)) for a in dy_leaves) != int(np.shape(y)[0]):
            raise ValueError(f"odeint: func must return the structure and shapes of y0, "
                             f"{y_tree} with shapes "
                             f"{[np.shape(a) for a in tree_flatten(unflatten_y(y))[0]]}; got "
                             f"{dy_tree} with shapes {[np.shape(a) for a in dy_leaves]}")
        flat = anp.concatenate([anp.reshape(anp.asarray(a), (-1,)) for a in dy_leaves])
        return anp.asarray(flat, anp.result_type(y))

    in_vals = [y0_flat, t0, *arg_leaves]
    closed, _ = trace_fun(lambda *a: flat_func(*a), in_vals, tree_flatten(tuple(in_vals))[1],
                          concrete=False, name="odeint_func")
    traced = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    hoisted = [closed.consts[i] for i in traced]

    def f(y, t, *params):
        leaves, extra = params[:len(arg_leaves)], params[len(arg_leaves):]
        consts = list(closed.consts)
        for i, c in zip(traced, extra):
            consts[i] = c
        return evaluate(ClosedJaxpr(closed.jaxpr, consts), [y, t, *leaves])[0]
    return f, hoisted


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf, **kwargs):
    """Solve ``dy/dt = func(y, t, *args)``, ``y(t[0]) = y0``; ``y`` at each time in ``t``.

    Args:
      func: ``func(y, t, *args)``, returning the derivative with ``y``'s structure.
      y0: the initial state, an array or any pytree of arrays.
      t: 1-d increasing array of output times; ``t[0]`` is the initial time.
      *args: extra arguments to ``func``, differentiable.
      rtol, atol: relative and absolute error tolerances of each step.
      mxstep: the most steps (accepted or rejected) per output interval; the solve
        stops there silently, as JAX's does.
      hmax: the largest step allowed.
      args: (keyword only) autograd's and scipy's spelling, ``odeint(func, y0, t,
        args=(a, b))``, the same as ``odeint(func, y0, t, a, b)``. Other scipy options
        (``full_output``, ``tcrit``, ...) raise ``TypeError``. autograd's positional
        spelling, a single extra argument built with ``autodiff.builtins.tuple``
        (``odeint(func, y0, t, tuple((params,)))``), is read the same way; a plain tuple
        there is one argument to ``func``, as in JAX.

    ``func`` may return any structure with as many entries as ``y0`` (JAX ravels it: a
    list of scalars for an array state is fine). Complex ``y0`` or ``args`` are solved as
    the real system of their (real, imaginary) parts, so the adjoint stays real.

    Returns: the solution with a leading axis of ``len(t)`` on every leaf of ``y0``.
    Reverse-mode derivatives (with respect to ``y0``, ``t``, ``args`` and values
    ``func`` closes over) come from the adjoint ODE, solved with the same tolerances.
    """
    if "args" in kwargs:
        if args:
            raise TypeError("odeint: pass extra arguments positionally or as args=(...), not both")
        extra = kwargs.pop("args")
        args = tuple(extra) if isinstance(extra, (tuple, list)) else (extra,)
    elif len(args) == 1 and type(args[0]) is _autograd_tuple:
        args = tuple(args[0])       # autograd's odeint(func, y0, t, tuple((a, b))): scipy's args
    if kwargs:
        raise TypeError(f"odeint: unsupported option(s) {sorted(kwargs)}; supported: rtol, atol, "
                        f"mxstep, hmax, args")
    t = anp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-d array of times, got shape {t.shape}")
    if any(np.dtype(anp.result_type(l)).kind == "c" for l in tree_flatten((y0, args))[0]):
        return _odeint_complex(func, y0, t, args, rtol, atol, mxstep, hmax)
    leaves, _ = tree_flatten(y0)
    dtype = np.result_type(*[getattr(l, "dtype", np.result_type(l)) for l in leaves], t.dtype,
                           np.float32)
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    y0_flat, unflatten_y = flatten(y0)
    y0_flat = anp.asarray(y0_flat, dtype)
    t = anp.asarray(t, dtype)
    arg_leaves, arg_tree = tree_flatten(tuple(args))
    f, hoisted = _closure_convert(func, y0_flat, unflatten_y, t[0], arg_leaves, arg_tree)
    ys = _odeint_adjoint(f, float(rtol), float(atol), mxstep, float(hmax), y0_flat, t,
                         *arg_leaves, *hoisted)
    return _unstack(ys, unflatten_y)


def _to_real(x):
    """A complex leaf as (re, im) stacked on a new leading axis; real leaves unchanged."""
    x = anp.asarray(x)
    if np.dtype(anp.result_type(x)).kind != "c":
        return x
    return anp.stack([anp.real(x), anp.imag(x)])


def _odeint_complex(func, y0, t, args, rtol, atol, mxstep, hmax):
    """Complex states or arguments: solve the equivalent real system in (Re, Im) pairs, so
    the step control and the adjoint run in real arithmetic (JAX's odeint accepts these)."""
    y_leaves, y_tree = tree_flatten(y0)
    y_cplx = [np.dtype(anp.result_type(l)).kind == "c" for l in y_leaves]
    a_leaves, a_tree = tree_flatten(tuple(args))
    a_cplx = [np.dtype(anp.result_type(l)).kind == "c" for l in a_leaves]

    def from_real(leaves, flags):
        return [l[0] + 1j * l[1] if c else l for l, c in zip(leaves, flags)]

    def real_func(y_r, s, *args_r):
        y = tree_unflatten(y_tree, from_real(list(y_r), y_cplx))
        a = tree_unflatten(a_tree, from_real(list(args_r), a_cplx))
        dy_leaves = tree_flatten(func(y, s, *a))[0]
        if len(dy_leaves) != len(y_leaves):       # e.g. a list returned for an array state
            dy = anp.concatenate([anp.reshape(anp.asarray(d), (-1,)) for d in dy_leaves])
            sizes = np.cumsum([int(np.size(l)) for l in y_leaves])[:-1]
            dy_leaves = [anp.reshape(p, np.shape(l))
                         for p, l in zip(anp.split(dy, sizes), y_leaves)]
        return tuple(_to_real(d) if c else anp.real(d) for d, c in zip(dy_leaves, y_cplx))

    out = odeint(real_func, tuple(_to_real(l) for l in y_leaves), t,
                 *[_to_real(l) for l in a_leaves], rtol=rtol, atol=atol, mxstep=mxstep,
                 hmax=hmax)
    leaves = [o[:, 0] + 1j * o[:, 1] if c else o for o, c in zip(out, y_cplx)]
    return tree_unflatten(y_tree, leaves)


def _unstack(ys, unflatten_y):
    """A (len(t), n) array as the pytree of ``y0`` with a leading time axis on each leaf."""
    return vmap(unflatten_y)(ys)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along ``axis``: ``jax.scipy.integrate.trapezoid`` (scipy's).

    The same function as ``autodiff.numpy.trapezoid``, differentiable in ``y`` and ``x``.

    >>> import numpy as np
    >>> from autodiff.scipy.integrate import trapezoid
    >>> float(trapezoid(np.array([0.0, 1.0, 4.0]), dx=0.5))
    1.5
    """
    return anp.trapezoid(y, x=x, dx=dx, axis=axis)
