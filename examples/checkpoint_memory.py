"""Checkpointing: the memory reverse mode keeps, against the depth of a network, per strategy.

    python examples/checkpoint_memory.py [--max-depth 64] [--figure PATH]

(The figure goes to ``examples/out/checkpoint_memory.png``, ignored by git, unless ``--figure``
names another path.)

A chain of ``depth`` tanh layers of width 64. For each depth and each strategy of
``ad.checkpoint_sequential`` (``"none"``: keep everything; ``"sqrt_n"``: segments of
⌈√depth⌉ layers; ``ad.every(4)``) the script counts the bytes of the residuals that
reverse mode saves (``autodiff.checkpoint.saved_residuals``, from the IR: no run needed),
checks that every strategy gives the same gradient, and plots bytes against depth:
linear for ``"none"``, about √depth for ``"sqrt_n"``.
"""
import argparse
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp
from autodiff.checkpoint import saved_residuals

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"

STRATEGIES = {"none": "none", "sqrt_n": "sqrt_n", "every(4)": ad.every(4)}


def make_loss(depth, width, strategy, seed=0):
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(depth)]
    layers = [(lambda w: lambda h: anp.tanh(h @ w))(w) for w in ws]
    net = ad.checkpoint_sequential(layers, strategy)
    return lambda x: anp.sum(net(x) ** 2)


def residual_bytes(loss, x):
    """Bytes reverse mode saves beyond the inputs (which exist anyway)."""
    return sum(r.nbytes for r in saved_residuals(loss, x) if r.argument is None)


def plot(depths, table, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.0, 4.0), dpi=90)
    for name, nbytes in table.items():
        ax.plot(depths, np.array(nbytes) / 1024, "o-", label=name)
    ax.set_xlabel("depth (layers)")
    ax.set_ylabel("saved residuals (KiB)")
    ax.set_title("reverse-mode memory by checkpoint strategy")
    ax.legend()
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(depths=(4, 9, 16, 25, 36, 49, 64), width=64, figure=str(OUT / "checkpoint_memory.png"),
         log=print):
    x = np.linspace(-1.0, 1.0, width)
    table = {name: [] for name in STRATEGIES}
    for depth in depths:
        grads = {}
        for name, strategy in STRATEGIES.items():
            loss = make_loss(depth, width, strategy)
            table[name].append(residual_bytes(loss, x))
            grads[name] = ad.grad(loss)(x)
        for name in STRATEGIES:
            assert np.allclose(grads[name], grads["none"], rtol=1e-10, atol=1e-12)
        log(f"depth {depth:3d}: " + ", ".join(f"{n} {table[n][-1] / 1024:6.1f} KiB"
                                               for n in STRATEGIES))
    none, sqrt_n = np.array(table["none"]), np.array(table["sqrt_n"])
    assert np.all(np.diff(none) > 0)                       # grows with depth
    if len(depths) > 1 and depths[-1] >= 16:
        # linear vs ~sqrt: the ratio none/sqrt_n grows like sqrt(depth)
        assert none[-1] / sqrt_n[-1] > 0.5 * np.sqrt(depths[-1])
    if figure:
        plot(depths, table, figure)
        log(f"wrote {figure}")
    return table


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-depth", type=int, default=64)
    ap.add_argument("--figure", default=str(OUT / "checkpoint_memory.png"))
    args = ap.parse_args()
    ds = tuple(k * k for k in range(2, int(np.sqrt(args.max_depth)) + 1))
    main(ds, figure=args.figure)
