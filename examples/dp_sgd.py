"""DP-SGD: differentially private training with per-example gradients from ``vmap(grad)``.

    python examples/dp_sgd.py [--steps 300] [--figure PATH]

(The figure goes to ``examples/out/dp_sgd.png``, ignored by git, unless ``--figure``
names another path.)

Each step of DP-SGD (Abadi et al., 2016) needs the gradient of every example on its own:
``ad.vmap(ad.grad(example_loss), in_axes=(None, 0, 0))`` gives them as one batched
program. Each is clipped to norm ``C``, they are summed, Gaussian noise of standard
deviation ``sigma * C`` is added (``ad.random``, so the step stays one ``ad.jit`` kernel)
and the sum is divided by the batch size. The model is logistic regression on synthetic
data; the script checks the per-example gradients against a Python loop of ``ad.grad``,
that clipping bounds every example's contribution, and that training with noise still
learns; the figure compares the loss curves for several noise multipliers. (The privacy
budget epsilon follows from sigma, the sampling rate and the number of steps by a privacy
accountant, which is not part of this example.) Needs matplotlib for the figure.
"""
import argparse
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal(d)
    x = rng.standard_normal((n, d))
    y = (x @ w_true + 0.5 * rng.standard_normal(n) > 0).astype(np.float64)
    return x, y


def example_loss(w, x, y):
    """Logistic loss of one example."""
    z = anp.dot(x, w)
    return anp.logaddexp(0.0, z) - y * z


def loss(w, x, y):
    return anp.mean(ad.vmap(example_loss, in_axes=(None, 0, 0))(w, x, y))


per_example_grads = ad.vmap(ad.grad(example_loss), in_axes=(None, 0, 0))


def clipped_sum(grads, clip):
    norms = anp.sqrt(anp.sum(grads ** 2, axis=1, keepdims=True))
    return anp.sum(grads / anp.maximum(1.0, norms / clip), axis=0)


def make_step(clip, sigma, lr, batch, use_jit=True):
    def step(w, x, y, key):
        g = clipped_sum(per_example_grads(w, x, y), clip)
        noise = sigma * clip * ad.random.normal(key, w.shape)
        return w - lr * (g + noise) / batch
    return ad.jit(step) if use_jit else step


def train(x, y, sigma, steps, batch=64, clip=1.0, lr=0.5, seed=0, use_jit=True):
    rng = np.random.default_rng(seed)
    key = ad.random.key(seed)
    step = make_step(clip, sigma, lr, batch, use_jit)
    w = np.zeros(x.shape[1])
    losses = []
    for _ in range(steps):
        idx = rng.choice(len(y), batch, replace=False)
        key, sub = ad.random.split(key)
        w = step(w, x[idx], y[idx], sub)
        losses.append(float(loss(w, x, y)))
    return np.asarray(w), losses


def plot(curves, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.0, 3.8), dpi=90)
    for sigma, losses in curves.items():
        ax.plot(losses, label=f"noise multiplier σ = {sigma}" if sigma else "no noise (σ = 0)")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_title("DP-SGD: clipped per-example gradients + Gaussian noise")
    ax.legend(fontsize=8)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(steps=300, n=2000, d=20, sigmas=(0.0, 1.0, 4.0), figure=str(OUT / "dp_sgd.png"),
         log=print,
         use_jit=True):
    x, y = make_data(n, d)
    w0 = np.random.default_rng(1).standard_normal(d) * 0.1

    # per-example gradients: one batched program, equal to a loop of ad.grad
    pg = np.asarray(per_example_grads(w0, x[:16], y[:16]))
    loop = np.stack([ad.grad(example_loss)(w0, x[i], y[i]) for i in range(16)])
    assert np.allclose(pg, loop, rtol=1e-12, atol=1e-14)
    # clipping bounds each example's contribution by the clip norm
    one = np.asarray(clipped_sum(pg[:1] * 100.0, 1.0))
    assert np.isclose(np.linalg.norm(one), 1.0)

    curves, acc = {}, {}
    for sigma in sigmas:
        w, curves[sigma] = train(x, y, sigma, steps, use_jit=use_jit)
        acc[sigma] = float(np.mean((x @ w > 0) == (y > 0.5)))
    log("  ".join(f"σ={s}: loss {curves[s][-1]:.3f}, accuracy {acc[s]:.3f}" for s in sigmas))
    start = float(loss(np.zeros(d), x, y))
    for sigma in sigmas:
        assert curves[sigma][-1] < start            # every run learns something
    if figure:
        plot(curves, figure)
        log(f"wrote {figure}")
    return curves, acc


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--figure", default=str(OUT / "dp_sgd.png"))
    args = ap.parse_args()
    main(args.steps, figure=args.figure)
