"""Fit a neural ODE with ``odeint`` and its adjoint gradient; plot the fit.

A port of autograd's ``examples/ode_net.py`` (and of the spiral demo of Chen et al.,
"Neural Ordinary Differential Equations", 2018) that changes only the imports:

    from autodiff.scipy.integrate import odeint
    from autodiff.example_libraries import optimizers, stax

The data is a trajectory of the cubic spiral ``dy/dt = (y**3) @ A``. The model is
``dy/dt = MLP(y**3)``, integrated by ``odeint`` (adaptive Dormand–Prince); its gradient
comes from the adjoint ODE solved backwards in time (memory flat in the number of
solver steps), and the whole training step is one ``jit``-compiled kernel.

Run: ``python examples/neural_ode.py`` (writes ``neural_ode_fit.svg``; pass another path
as the first argument, or ``-`` for none). About 20 s the first time (compilation),
a few seconds once the compiled kernel is in the disk cache.
"""
import sys
import time

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff.example_libraries import optimizers, stax
from autodiff.scipy.integrate import odeint

TRUE_A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
Y0 = np.array([2.0, 0.0])
T = np.linspace(0.0, 1.5, 25)
TOL = dict(rtol=1e-6, atol=1e-6)


def true_dynamics(y, t):
    return (y ** 3) @ TRUE_A


init_mlp, mlp = stax.serial(stax.Dense(32), stax.Tanh, stax.Dense(2))


def model_dynamics(y, t, params):
    return mlp(params, y ** 3)


def predict(params):
    return odeint(model_dynamics, Y0, T, params, **TOL)


def loss(params, target):
    return anp.mean(anp.abs(predict(params) - target))        # L1, as in ode_net.py


def svg_plot(path, target, fitted, initial):
    """Phase portrait (y1 against y2) of the data and of the model before/after."""
    allpts = np.concatenate([target, fitted, initial])
    lo, hi = allpts.min(0) - 0.1, allpts.max(0) + 0.1
    W, H = 480, 480

    def pts(ys):
        xy = (ys - lo) / (hi - lo) * [W - 40, -(H - 40)] + [20, H - 20]
        return " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<polyline points="{pts(initial)}" fill="none" stroke="#bbb" stroke-width="2"/>',
             f'<polyline points="{pts(target)}" fill="none" stroke="black" stroke-width="3"/>',
             f'<polyline points="{pts(fitted)}" fill="none" stroke="#d62728" stroke-width="2" '
             f'stroke-dasharray="6,4"/>',
             '<text x="20" y="20" font-size="14">data (black), neural ODE fit (red), '
             'before training (grey)</text>', "</svg>"]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(svg_path="neural_ode_fit.svg", num_steps=1000):
    target = odeint(true_dynamics, Y0, T, **TOL)
    _, params = init_mlp(ad.random.key(0), (-1, 2))
    initial = predict(params)
    opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(1e-2, 500, 0.5))

    @ad.jit
    def step(i, opt_state):
        value, g = ad.value_and_grad(loss)(get_params(opt_state), target)
        return value, opt_update(i, g, opt_state)

    ad.config.update("jit_background_compile", False)     # compile once, up front
    opt_state = opt_init(params)
    t0 = time.perf_counter()
    for i in range(num_steps):
        value, opt_state = step(i, opt_state)
        if i == 0:
            print(f"first step (trace + compile): {time.perf_counter() - t0:.1f} s, "
                  f"loss {float(value):.4f}")
            t1 = time.perf_counter()
        elif i % 200 == 0 or i == num_steps - 1:
            print(f"step {i:4d}  L1 loss {float(value):.4f}")
    print(f"{num_steps - 1} compiled steps in {time.perf_counter() - t1:.2f} s")
    fitted = predict(get_params(opt_state))
    err0, err = np.abs(initial - target).mean(), np.abs(fitted - target).mean()
    print(f"mean |error| of the trajectory: {err0:.3f} before, {err:.3f} after training")
    assert err < 0.25 * err0, "the fit did not improve enough"
    if svg_path and svg_path != "-":
        svg_plot(svg_path, target, fitted, initial)
        print(f"wrote {svg_path}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
