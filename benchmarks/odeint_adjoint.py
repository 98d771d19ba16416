"""odeint's adjoint gradient vs differentiating through the solver's steps.

For the Lotka–Volterra system over growing time spans (so the adaptive solver takes
more and more steps), measures the peak Python-heap memory (tracemalloc: numpy arrays
included) and the time of one reverse-mode gradient with respect to the parameters:

* adjoint: ``ad.grad`` of ``odeint`` (custom_vjp, backward ODE solve);
* direct: ``ad.grad`` through the same Dormand–Prince loop (``while_loop`` with
  ``max_steps``, which reverse mode turns into a ``scan`` that stores every step).

Also the jitted adjoint gradient's time per call. Peers: JAX's ``odeint`` (also an
adjoint method) when JAX is installed.

Run: ``python benchmarks/odeint_adjoint.py``
"""
import os
import sys
import time
import tracemalloc

import numpy as np
from scipy.integrate import solve_ivp

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import autodiff as ad  # noqa: E402
import autodiff.numpy as anp  # noqa: E402
from autodiff.scipy import integrate  # noqa: E402

ad.config.update("jit_background_compile", False)
THETA = np.array([1.5, 1.0, 3.0, 1.0])
Y0 = np.array([1.0, 1.0])
TOL = 1e-8


def lv(y, t, th):
    return anp.stack([th[0] * y[0] - th[1] * y[0] * y[1], -th[2] * y[1] + th[3] * y[0] * y[1]])


def adjoint_loss(th, t):
    return anp.sum(integrate.odeint(lv, Y0, t, th, rtol=TOL, atol=TOL))


def direct_loss(th, t, mxstep):
    return anp.sum(integrate._solve(lambda y, s: lv(y, s, th), Y0, t, TOL, TOL, mxstep, np.inf))


def peak_and_time(fun):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fun()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, peak, dt


def neural_field(y, t, W):
    return anp.tanh(W @ y) - 0.1 * y


def neural_rows(n=64):
    """A 64-dimensional state with a 64x64 weight matrix: residuals per step are big."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((n, n)) / np.sqrt(n)
    y0 = rng.standard_normal(n)
    adj = lambda W, t: anp.sum(integrate.odeint(neural_field, y0, t, W, rtol=TOL, atol=TOL) ** 2)
    rows = []
    for span in (1.0, 4.0, 16.0):
        t = np.array([0.0, span])
        steps = len(solve_ivp(lambda t, y: np.tanh(W @ y) - 0.1 * y, (0, span), y0,
                              rtol=TOL, atol=TOL).t) - 1
        mxstep = int(1.5 * steps) + 20
        direct = lambda W, t: anp.sum(integrate._solve(lambda y, s: neural_field(y, s, W), y0, t,
                                                       TOL, TOL, mxstep, np.inf) ** 2)
        ad.grad(adj)(W, t)
        g_adj, m_adj, t_adj = peak_and_time(lambda: ad.grad(adj)(W, t))
        g_dir, m_dir, t_dir = peak_and_time(lambda: ad.grad(direct)(W, t))
        rows.append((span, steps, m_adj, m_dir, t_adj, t_dir,
                     np.abs(g_adj - g_dir).max() / np.abs(g_dir).max()))
    return rows


def print_rows(title, rows):
    print(title)
    print("| span | steps (scipy RK45) | adjoint peak | direct peak | adjoint time | direct time "
          "| rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for span, steps, ma, md, ta, td, rd in rows:
        print(f"| {span:g} | {steps} | {ma / 1e6:.2f} MB | {md / 1e6:.2f} MB | {ta * 1e3:.0f} ms "
              f"| {td * 1e3:.0f} ms | {rd:.1e} |")


def main():
    rows = []
    for span in (2.0, 5.0, 10.0, 20.0):
        t = np.array([0.0, span])
        steps = len(solve_ivp(lambda t, y: np.asarray(lv(y, t, THETA)), (0, span), Y0,
                              rtol=TOL, atol=TOL).t) - 1       # RK45: the same method family
        mxstep = int(1.5 * steps) + 20
        ad.grad(adjoint_loss)(THETA, t)                          # warm tracing caches
        g_adj, m_adj, t_adj = peak_and_time(lambda: ad.grad(adjoint_loss)(THETA, t))
        g_dir, m_dir, t_dir = peak_and_time(lambda: ad.grad(direct_loss)(THETA, t, mxstep))
        rows.append((span, steps, m_adj, m_dir, t_adj, t_dir,
                     np.abs(g_adj - g_dir).max() / np.abs(g_dir).max()))
    print_rows(f"Lotka-Volterra, rtol=atol={TOL:g}, gradient w.r.t. 4 parameters (eager)", rows)
    print_rows(f"\ntanh(W y) - y/10, y in R^64, gradient w.r.t. W (64x64), rtol=atol={TOL:g} "
               f"(eager)", neural_rows())

    t = np.array([0.0, 10.0])
    jg = ad.jit(ad.grad(adjoint_loss))
    t0 = time.perf_counter()
    jg(THETA, t)
    compile_s = time.perf_counter() - t0
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        jg(THETA, t)
    per = (time.perf_counter() - t0) / reps
    print(f"\njit(grad(odeint)) span 10: first call (trace + compile) {compile_s:.1f} s, "
          f"then {per * 1e3:.2f} ms per call")
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        from jax.experimental.ode import odeint as jodeint
    except ImportError:
        print("JAX not installed: no peer numbers")
        return
    jl = lambda th, t: jnp.sum(jodeint(lambda y, t, th: jnp.stack(
        [th[0] * y[0] - th[1] * y[0] * y[1], -th[2] * y[1] + th[3] * y[0] * y[1]]),
        jnp.asarray(Y0), t, th, rtol=TOL, atol=TOL))
    jjg = jax.jit(jax.grad(jl))
    jjg(THETA, t).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(reps):
        jjg(THETA, t).block_until_ready()
    print(f"JAX jit(grad(odeint)) span 10: {(time.perf_counter() - t0) / reps * 1e3:.2f} ms per call; "
          f"max |ours - JAX| / |JAX| = "
          f"{np.abs(np.asarray(jg(THETA, t)) - np.asarray(jjg(THETA, t))).max() / np.abs(np.asarray(jjg(THETA, t))).max():.1e}")


if __name__ == "__main__":
    sys.exit(main())
