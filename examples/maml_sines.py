"""MAML: meta-learn an initialization that fits a new sine wave from 10 points in one step.

    python examples/maml_sines.py [--iterations 4000] [--figure PATH]

(The figure goes to ``examples/out/maml_sines.png``, ignored by git, unless ``--figure``
names another path.)

Each task is a sine wave ``A sin(x + φ)`` (A in [0.1, 5], φ in [0, π]). The model is an MLP
1-40-40-1. Adapting to a task is ``inner_steps`` gradient steps on its 10 support points;
the meta-objective is the loss on 10 query points *after* adapting, averaged over a batch
of tasks with ``ad.vmap``. Its gradient differentiates through the inner gradient steps
(gradient of a gradient: second order, no first-order approximation), and one meta-step
is one ``ad.jit`` kernel. The script checks that meta-gradient against central
differences, and that after meta-training one inner step on a new task beats the
meta-learned initialization itself. The figure shows a new task before and after
adaptation. Needs matplotlib for the figure (``pip install -e ".[examples]"``).
"""
import argparse
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"

ALPHA = 0.02          # inner learning rate
K = 10                # support and query points per task


def init(seed=0, sizes=(1, 40, 40, 1)):
    rng = np.random.default_rng(seed)
    return [{"w": rng.standard_normal((m, n)) * np.sqrt(2.0 / m), "b": np.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    h = x
    for layer in params[:-1]:
        h = ad.nn.relu(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def task_loss(params, x, y):
    return anp.mean((mlp(params, x) - y) ** 2)


def adapt(params, x, y, steps=1, alpha=ALPHA):
    for _ in range(steps):
        g = ad.grad(task_loss)(params, x, y)
        params = ad.tree_util.tree_map(lambda p, d: p - alpha * d, params, g)
    return params


def maml_loss(params, xs, ys, xq, yq, inner_steps=1):
    """Query loss after adapting on the support set, averaged over a batch of tasks."""
    def one(xs, ys, xq, yq):
        return task_loss(adapt(params, xs, ys, inner_steps), xq, yq)
    return anp.mean(ad.vmap(one)(xs, ys, xq, yq))


def sample_tasks(rng, n_tasks):
    amp = rng.uniform(0.1, 5.0, (n_tasks, 1, 1))
    phase = rng.uniform(0.0, np.pi, (n_tasks, 1, 1))
    x = rng.uniform(-5.0, 5.0, (n_tasks, 2 * K, 1))
    y = amp * np.sin(x + phase)
    return x[:, :K], y[:, :K], x[:, K:], y[:, K:], amp, phase


def plot(params, rng, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs, ys, _, _, amp, phase = sample_tasks(rng, 1)
    grid = np.linspace(-5, 5, 200)[:, None]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=90)
    ax.plot(grid, amp[0] * np.sin(grid + phase[0]), "k-", lw=3, alpha=0.3, label="new task")
    ax.plot(xs[0], ys[0], "C3^", label=f"{K} support points")
    ax.plot(grid, mlp(params, grid), "C1:", label="meta-learned initialization")
    for steps, style in ((1, "C0--"), (10, "C0-")):
        ax.plot(grid, mlp(adapt(params, xs[0], ys[0], steps), grid), style,
                label=f"after {steps} gradient step{'s' if steps > 1 else ''}")
    ax.set_xlabel("x")
    ax.set_title("MAML on sine waves")
    ax.legend(fontsize=8)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(iterations=4000, meta_batch=25, lr=3e-3, seed=0, figure=str(OUT / "maml_sines.png"),
         log=print, use_jit=True):
    rng = np.random.default_rng(seed)
    params = init(seed)

    # the meta-gradient goes through the inner gradient step: check it numerically
    xs, ys, xq, yq, _, _ = sample_tasks(rng, 4)
    g = ad.grad(maml_loss)(params, xs, ys, xq, yq)
    flat, unravel = ad.flatten_util.ravel_pytree(params)
    v = rng.standard_normal(flat.shape)
    eps = 1e-5
    fd = (maml_loss(unravel(flat + eps * v), xs, ys, xq, yq)
          - maml_loss(unravel(flat - eps * v), xs, ys, xq, yq)) / (2 * eps)
    assert np.isclose(np.dot(ad.flatten_util.ravel_pytree(g)[0], v), fd, rtol=1e-5)

    opt = ad.optim.Adam(lr=lr)
    state = opt.init(params)

    def meta_step(params, state, xs, ys, xq, yq):
        value, grads = ad.value_and_grad(maml_loss)(params, xs, ys, xq, yq)
        updates, state = opt.update(grads, state, params)
        return ad.optim.apply_updates(params, updates), state, value
    if use_jit:
        meta_step = ad.jit(meta_step)

    losses = []
    for _ in range(iterations):
        xs, ys, xq, yq, _, _ = sample_tasks(rng, meta_batch)
        params, state, value = meta_step(params, state, xs, ys, xq, yq)
        losses.append(float(value))

    # on new tasks: one inner step from the meta-learned initialization helps
    xs, ys, xq, yq, _, _ = sample_tasks(np.random.default_rng(seed + 1), 100)
    before = float(np.mean([task_loss(params, xq[i], yq[i]) for i in range(100)]))
    after = float(maml_loss(params, xs, ys, xq, yq))
    k = max(1, iterations // 10)
    log(f"{iterations} meta-steps: meta-loss {np.mean(losses[:k]):.3f} -> "
        f"{np.mean(losses[-k:]):.3f}; on 100 new tasks: query loss {before:.3f} at the "
        f"initialization, {after:.3f} after one step")
    if iterations >= 1000:           # after meta-training, adapting helps on new tasks
        assert after < before
    if figure:
        plot(params, np.random.default_rng(seed + 2), figure)
        log(f"wrote {figure}")
    return losses, before, after


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=4000)
    ap.add_argument("--figure", default=str(OUT / "maml_sines.png"))
    args = ap.parse_args()
    main(args.iterations, figure=args.figure)
