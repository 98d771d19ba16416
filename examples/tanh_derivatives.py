"""The derivatives of tanh up to order 6, three ways, checked against each other and plotted.

    python examples/tanh_derivatives.py [--order 6] [--figure PATH]

(The figure goes to ``examples/out/tanh_derivatives.png``, ignored by git, unless ``--figure``
names another path.)

1. nested ``ad.grad`` (reverse over reverse over ...), mapped over a grid with ``ad.vmap``;
2. ``ad.taylor(tanh, order)``: all orders in one Taylor-mode pass;
3. the closed form: with t = tanh x, d/dx P(t) = P'(t)(1 - t²), so every derivative is a
   polynomial in t, built here by repeated polynomial differentiation.

Needs matplotlib for the figure (``pip install -e ".[examples]"``).
"""
import argparse
import pathlib

import numpy as np
from numpy.polynomial import polynomial as npoly

import autodiff as ad
import autodiff.numpy as anp

# figures go here unless --figure says otherwise (ignored by git, made on demand)
OUT = pathlib.Path(__file__).resolve().parent / "out"


def closed_form(x, order):
    """[tanh^(k)(x) for k = 0..order] from the polynomials P_k(t), t = tanh x."""
    t = np.tanh(x)
    p = np.array([0.0, 1.0])                        # P_0(t) = t
    one_minus_t2 = np.array([1.0, 0.0, -1.0])
    out = []
    for _ in range(order + 1):
        out.append(npoly.polyval(t, p))
        p = npoly.polymul(npoly.polyder(p), one_minus_t2)
    return np.stack(out)


def nested_grads(x, order):
    fs = [anp.tanh]
    for _ in range(order):
        fs.append(ad.grad(fs[-1]))
    return np.stack([np.asarray(ad.vmap(f)(x)) for f in fs])


def taylor_mode(x, order):
    series = ad.vmap(lambda xi: anp.stack(ad.taylor(anp.tanh, order)(xi)))(x)   # (n, order+1)
    return np.asarray(series).T


def plot(x, ds, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=90)
    for k, d in enumerate(ds):
        ax.plot(x, d, label=f"order {k}" if k else "tanh")
    ax.set_xlabel("x")
    ax.set_title("tanh and its derivatives (ad.grad, nested)")
    ax.set_ylim(-6, 6)
    ax.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main(order=6, points=200, figure=str(OUT / "tanh_derivatives.png"), log=print):
    x = np.linspace(-4.0, 4.0, points)
    want = closed_form(x, order)
    nested = nested_grads(x, order)
    series = taylor_mode(x, order)
    err_nested = np.max(np.abs(nested - want) / (1 + np.abs(want)))
    err_taylor = np.max(np.abs(series - want) / (1 + np.abs(want)))
    log(f"orders 0..{order} on {points} points: max relative error nested grad "
        f"{err_nested:.1e}, Taylor mode {err_taylor:.1e}")
    assert err_nested < 1e-10 and err_taylor < 1e-10
    if figure:
        plot(x, nested, figure)
        log(f"wrote {figure}")
    return nested


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", type=int, default=6)
    ap.add_argument("--figure", default=str(OUT / "tanh_derivatives.png"))
    args = ap.parse_args()
    main(args.order, figure=args.figure)
