"""Classify scikit-learn's bundled handwritten digits with an MLP trained by a jitted step.

    python examples/digits_mlp.py [--steps 300] [--figure PATH]

(The figure goes to ``examples/out/digits_mlp.png``, ignored by git, unless ``--figure``
names another path.)

The data (8x8 images, 1797 samples) ship with scikit-learn, so nothing is downloaded.
An MLP 64-64-10 (tanh, softmax cross-entropy) is trained full-batch with Adam; the
update step (``ad.value_and_grad`` of the loss plus the optimizer) is one ``ad.jit``
kernel. The script checks the gradient against central differences once, and the test
accuracy at the end; the figure shows the loss curve and test digits with their
predicted labels. Needs the ``examples`` extra (scikit-learn, matplotlib).
"""
import argparse
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def load(seed=0, test_fraction=0.25):
    from sklearn.datasets import load_digits
    digits = load_digits()
    x = digits.data / 16.0
    y = digits.target
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test], digits.images[test]


def init(seed=0, sizes=(64, 64, 10)):
    rng = np.random.default_rng(seed)
    return [{"w": rng.standard_normal((m, n)) / np.sqrt(m), "b": np.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def logits(params, x):
    h = x
    for layer in params[:-1]:
        h = anp.tanh(h @ layer["w"] + layer["b"])
    return h @ params[-1]["w"] + params[-1]["b"]


def loss(params, x, onehot):
    return -anp.mean(anp.sum(onehot * ad.nn.log_softmax(logits(params, x)), axis=-1))


def plot(losses, images, labels, predicted, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = plt.figure(figsize=(9.0, 3.6), dpi=90)
    grid = fig.add_gridspec(2, 7)
    ax = fig.add_subplot(grid[:, :2])
    ax.semilogy(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("training cross-entropy")
    ax.set_title("MLP on sklearn digits")
    for k in range(10):
        a = fig.add_subplot(grid[k // 5, 2 + k % 5])
        a.imshow(images[k], cmap="gray_r")
        ok = predicted[k] == labels[k]
        a.set_title(f"predicted {predicted[k]}", color="C2" if ok else "C3", fontsize=9)
        a.axis("off")
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(steps=300, lr=0.01, seed=0, figure=str(OUT / "digits_mlp.png"), log=print, use_jit=True):
    x, y, xt, yt, images = load(seed)
    onehot = np.eye(10)[y]
    params = init(seed)

    # the gradient, once, against central differences along a random direction
    g = ad.grad(loss)(params, x[:64], onehot[:64])
    flat, unravel = ad.flatten_util.ravel_pytree(params)
    v = np.random.default_rng(1).standard_normal(flat.shape)
    eps = 1e-6
    fd = (loss(unravel(flat + eps * v), x[:64], onehot[:64])
          - loss(unravel(flat - eps * v), x[:64], onehot[:64])) / (2 * eps)
    assert np.isclose(np.dot(ad.flatten_util.ravel_pytree(g)[0], v), fd, rtol=1e-6)

    opt = ad.optim.Adam(lr=lr)
    state = opt.init(params)

    def step(params, state):
        value, grads = ad.value_and_grad(loss)(params, x, onehot)
        updates, state = opt.update(grads, state, params)
        return ad.optim.apply_updates(params, updates), state, value
    if use_jit:
        step = ad.jit(step)

    losses = []
    for _ in range(steps):
        params, state, value = step(params, state)
        losses.append(float(value))
    predicted = np.argmax(np.asarray(logits(params, xt)), axis=-1)
    accuracy = float(np.mean(predicted == yt))
    log(f"{steps} Adam steps: training loss {losses[0]:.3f} -> {losses[-1]:.4f}, "
        f"test accuracy {accuracy:.3f} on {len(yt)} digits")
    assert losses[-1] < 0.5 * losses[0]
    if figure:
        plot(losses, images, yt, predicted, figure)
        log(f"wrote {figure}")
    return accuracy


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--figure", default=str(OUT / "digits_mlp.png"))
    args = ap.parse_args()
    acc = main(args.steps, figure=args.figure)
    if acc < 0.93:
        raise SystemExit(f"test accuracy {acc:.3f} below 0.93")
