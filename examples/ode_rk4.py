"""A damped oscillator integrated with 4th-order Runge-Kutta inside ``ad.lax.scan``.

    x'' + c x' + k x = 0,    state y = (x, v)

The integrator is one ``scan`` equation in the IR however many steps it takes, so
tracing, differentiating and compiling it cost the same for 10 steps or 100,000.
This script

1. integrates the oscillator and compares with the closed-form solution,
2. differentiates the final state with respect to the damping and the initial
   state (reverse mode) and checks against finite differences,
3. takes the Hessian of an energy through the loop,
4. recovers an unknown damping coefficient from an observed trajectory by
   gradient descent (Gauss-Newton steps built from ``jacfwd``),
5. runs the same under ``ad.jit`` when it is available,
6. plots the trajectory against the exact solution, and the fit (matplotlib,
   ``pip install -e ".[examples]"``).

Run: ``python examples/ode_rk4.py [--steps 500] [--figure PATH]`` (the figure goes to
``examples/out/ode_rk4.png``, ignored by git, unless ``--figure`` names another path).
"""
import argparse
import pathlib
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff import lax

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def oscillator(y, k, c):
    """The right-hand side f(y) of y' = f(y) for y = (x, v)."""
    return anp.stack([y[1], -k * y[0] - c * y[1]])


def rk4_step(f, y, dt):
    k1 = f(y)
    k2 = f(y + dt / 2 * k1)
    k3 = f(y + dt / 2 * k2)
    k4 = f(y + dt * k3)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(params, y0, dt=0.01, n_steps=500):
    """RK4 for ``n_steps`` steps; returns (final state, positions x(t_1..t_n))."""
    k, c = params[0], params[1]

    def step(y, _):
        y = rk4_step(lambda y: oscillator(y, k, c), y, dt)
        return y, y[0]

    return lax.scan(step, y0, None, length=n_steps)


def exact_position(t, k, c, x0, v0):
    """Closed form of the underdamped oscillator (c^2 < 4k)."""
    w = np.sqrt(k - c ** 2 / 4)
    a = x0
    b = (v0 + c / 2 * x0) / w
    return np.exp(-c / 2 * t) * (a * np.cos(w * t) + b * np.sin(w * t))


def finite_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def plot(t, xs, exact, observed, first_guess, fitted, cs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.6), dpi=90)
    a.plot(t, exact, "k-", lw=3, alpha=0.3, label="exact")
    a.plot(t, xs, "C0--", label="RK4 in lax.scan")
    a.set_xlabel("t")
    a.set_ylabel("x(t)")
    a.set_title("damped oscillator")
    a.legend(fontsize=8)
    b.plot(t, observed, "k-", lw=3, alpha=0.3, label="observed (c = 0.4)")
    b.plot(t, first_guess, "C1:", label="first guess (c = 0.1)")
    b.plot(t, fitted, "C0--", label=f"fitted (c = {cs[-1]:.6f})")
    b.set_xlabel("t")
    b.set_title(f"damping recovered in {len(cs) - 1} Gauss-Newton steps")
    b.legend(fontsize=8)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(n=500, use_jit=True, figure=None):
    params = np.array([4.0, 0.4])          # stiffness k, damping c
    y0 = np.array([1.0, 0.0])
    dt = 0.01 * 500 / n

    # 1. integrate
    y_final, xs = integrate(params, y0, dt, n)
    t = dt * np.arange(1, n + 1)
    err = np.max(np.abs(xs - exact_position(t, *params, *y0)))
    print(f"final state after {n} RK4 steps: x = {y_final[0]:.6f}, v = {y_final[1]:.6f}")
    print(f"max |x - exact| over the trajectory: {err:.2e}")
    print("the traced program is one scan equation:")
    print(ad.make_jaxpr(lambda p, y: integrate(p, y, dt, n)[0])(params, y0))

    # 2. gradients of the final state, reverse mode through the loop
    def final_x(params, y0):
        return integrate(params, y0, dt, n)[0][0]

    g_params, g_y0 = ad.grad(final_x, argnums=(0, 1))(params, y0)
    fd_params = finite_difference(lambda p: final_x(p, y0), params)
    fd_y0 = finite_difference(lambda y: final_x(params, y), y0)
    print(f"d x(T) / d(k, c)   = {g_params}   finite differences {fd_params}")
    print(f"d x(T) / d(x0, v0) = {g_y0}   finite differences {fd_y0}")
    assert np.allclose(g_params, fd_params, rtol=1e-5)
    assert np.allclose(g_y0, fd_y0, rtol=1e-5)

    # 3. the Hessian of an energy, through the loop
    def energy(params):
        y = integrate(params, y0, dt, 100)[0]
        return 0.5 * params[0] * y[0] ** 2 + 0.5 * y[1] ** 2

    H = ad.hessian(energy)(params)
    print("Hessian of the energy at T w.r.t. (k, c):")
    print(H)
    assert np.allclose(H, finite_difference(ad.grad(energy), params), rtol=1e-4, atol=1e-8)

    # 4. recover the damping from an observed trajectory (Gauss-Newton on c)
    observed = integrate(params, y0, dt, n)[1]

    def residuals(c):
        return integrate(anp.stack([params[0], c]), y0, dt, n)[1] - observed

    c = 0.1
    cs = [c]
    for it in range(6):
        r = residuals(c)
        J = ad.jacfwd(residuals)(c)                   # (n,) forward mode through the scan
        c = c - float(np.dot(J, r) / np.dot(J, J))
        cs.append(c)
        print(f"Gauss-Newton step {it + 1}: damping c = {c:.10f}")
    assert abs(c - params[1]) < 1e-8
    if figure:
        plot(t, xs, exact_position(t, *params, *y0), observed,
             integrate(np.array([params[0], cs[0]]), y0, dt, n)[1],
             integrate(np.array([params[0], c]), y0, dt, n)[1], cs, figure)
        print(f"wrote {figure}")
    if not use_jit:
        return c

    # 5. compiled, each phase timed on its own (see jit_phases)
    try:
        jit_phases(final_x, params, y0, g_params, g_y0)
    except NotImplementedError as e:
        print(f"(ad.jit not available in this build: {e})")
    return c


def _median_time(f, *args, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _show(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def jit_phases(final_x, params, y0, g_params, g_y0):
    """Time ``jit(grad(final_x))`` phase by phase, check its gradients, and return
    ``{phase: seconds}``.

    A jitted function's first calls for a new signature run the traced program on the
    numpy interpreter (the interpreter tier) while nothing is compiled yet; from the
    ``ad.config.jit_compile_after``-th call its kernel compiles in a background worker,
    and later calls switch to it. What each call ran is read from ``cache_info()`` after
    it (``compiled`` counts the signatures that call their kernel), not assumed: with
    ``jit_background_compile`` off the first call compiles (or loads the kernel from the
    disk cache) before it returns."""
    grad_fn = ad.grad(final_x, argnums=(0, 1))
    phases = {"un-jitted grad": _median_time(grad_fn, params, y0)}
    t0 = time.perf_counter()
    ad.make_jaxpr(grad_fn)(params, y0)
    phases["trace"] = time.perf_counter() - t0
    print(f"jit(grad): trace alone (ad.make_jaxpr) {_show(phases['trace'])}")

    fast_grad = ad.jit(grad_fn)
    background = ad.config.jit_background_compile
    calls = 0
    # the calls before the kernel is in place (the loop stops once cache_info() says so)
    while fast_grad.cache_info().compiled == 0 and calls < ad.config.jit_compile_after:
        t0 = time.perf_counter()
        g = fast_grad(params, y0)
        seconds = time.perf_counter() - t0
        calls += 1
        assert np.allclose(g[0], g_params) and np.allclose(g[1], g_y0)
        if background:
            what = "ran on the numpy interpreter: no kernel yet"
            if calls == ad.config.jit_compile_after:
                what += "; then lowered, and its background compile started"
        else:
            what = "compiled, or loaded from the disk cache, before running (blocking)"
        if calls == 1:
            what = "trace + " + what
        phases[f"call {calls}"] = seconds
        print(f"  call {calls}: {_show(seconds)} ({what})")
    t0 = time.perf_counter()
    ad.wait_for_compiles()
    phases["wait for the compile"] = time.perf_counter() - t0
    assert fast_grad.cache_info().compiled == 1, fast_grad.cache_info()
    if background:
        print(f"  ad.wait_for_compiles(): {_show(phases['wait for the compile'])} (the rest "
              f"of the background compile, or a load from the disk cache)")
    g = fast_grad(params, y0)
    assert np.allclose(g[0], g_params) and np.allclose(g[1], g_y0)
    phases["compiled call"] = _median_time(fast_grad, params, y0)
    print(f"  compiled call: {_show(phases['compiled call'])} (median of 5; un-jitted grad "
          f"{_show(phases['un-jitted grad'])}); same gradients")
    return phases

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--figure", default=str(OUT / "ode_rk4.png"))
    args = ap.parse_args()
    main(args.steps, figure=args.figure)
