"""Fit a neural ODE with ``odeint`` and its adjoint gradient; plot the fit.

A port of autograd's ``examples/ode_net.py`` (and of the spiral demo of Chen et al.,
"Neural Ordinary Differential Equations", 2018) that changes only the imports:

    from autodiff.scipy.integrate import odeint
    from autodiff.example_libraries import optimizers, stax

The data is a trajectory of the cubic spiral ``dy/dt = (y**3) @ A``. The model is
``dy/dt = MLP(y**3)``, integrated by ``odeint`` (adaptive Dormand–Prince); its gradient
comes from the adjoint ODE solved backwards in time (memory flat in the number of
solver steps), and the whole training step is one ``jit``-compiled kernel.

Run: ``python examples/neural_ode.py [PATH]`` (writes the figure to
``examples/out/neural_ode.png``, ignored by git, or to PATH; ``-`` for none; matplotlib,
``pip install -e ".[examples]"``). Tens of seconds the first time (compilation),
a few seconds once the compiled kernel is in the disk cache.
"""
import pathlib
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
# figures go here unless a path is given (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def true_dynamics(y, t):
    return (y ** 3) @ TRUE_A


init_mlp, mlp = stax.serial(stax.Dense(32), stax.Tanh, stax.Dense(2))


def model_dynamics(y, t, params):
    return mlp(params, y ** 3)


def predict(params):
    return odeint(model_dynamics, Y0, T, params, **TOL)


def loss(params, target):
    return anp.mean(anp.abs(predict(params) - target))        # L1, as in ode_net.py


def plot(path, target, fitted, initial):
    """Phase portrait (y1 against y2) of the data and of the model before and after
    training, and y1, y2 against time (matplotlib, Agg backend: no window)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9.0, 3.8), dpi=90)
    a.plot(target[:, 0], target[:, 1], "k-", lw=3, alpha=0.35, label="data")
    a.plot(initial[:, 0], initial[:, 1], "C7:", label="model before training")
    a.plot(fitted[:, 0], fitted[:, 1], "C3--", label="model after training")
    a.set_xlabel("$y_1$")
    a.set_ylabel("$y_2$")
    a.set_title("phase portrait of dy/dt = (y**3) @ A")
    a.legend(fontsize=8)
    for k, color in ((0, "C0"), (1, "C1")):
        b.plot(T, target[:, k], "-", color=color, lw=3, alpha=0.35, label=f"data $y_{k + 1}$")
        b.plot(T, fitted[:, k], "--", color=color, label=f"fit $y_{k + 1}$")
    b.set_xlabel("t")
    b.set_ylabel("y(t)")
    b.set_title("trajectories: odeint with the adjoint gradient")
    b.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(figure=str(OUT / "neural_ode.png"), num_steps=1000):
    target = odeint(true_dynamics, Y0, T, **TOL)
    _, params = init_mlp(ad.random.key(0), (-1, 2))
    initial = predict(params)
    opt_init, opt_update, get_params = optimizers.adam(optimizers.exponential_decay(1e-2, 500, 0.5))

    @ad.jit
    def step(i, opt_state):
        value, g = ad.value_and_grad(loss)(get_params(opt_state), target)
        return value, opt_update(i, g, opt_state)

    opt_state = opt_init(params)
    # compile once, up front: lower() traces and generates the kernel's source, compile()
    # blocks until Numba has built it (or loaded it from the disk cache); without this the
    # first steps would run on the interpreter while the kernel compiles in the background
    t0 = time.perf_counter()
    lowered = step.lower(0, opt_state)
    t1 = time.perf_counter()
    lowered.compile()
    t2 = time.perf_counter()
    print(f"trace + lower {t1 - t0:.2f} s, compile (or load from the disk cache) "
          f"{t2 - t1:.1f} s")
    for i in range(num_steps):
        value, opt_state = step(i, opt_state)
        if i % 200 == 0 or i == num_steps - 1:
            print(f"step {i:4d}  L1 loss {float(value):.4f}")
    info = step.cache_info()
    assert info.size == info.compiled == 1, info      # every step called the kernel
    print(f"{num_steps} compiled steps in {time.perf_counter() - t2:.2f} s")
    fitted = predict(get_params(opt_state))
    err0, err = np.abs(initial - target).mean(), np.abs(fitted - target).mean()
    print(f"mean |error| of the trajectory: {err0:.3f} before, {err:.3f} after training")
    assert err < 0.25 * err0, "the fit did not improve enough"
    if figure and figure != "-":
        plot(figure, target, fitted, initial)
        print(f"wrote {figure}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
