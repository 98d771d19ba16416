"""Draw the pictures of docs/pictures.md: a loss, its gradient and a scan, as SVG files
in docs/img/ (needs Graphviz's ``dot``).

    python docs/make_pictures.py
"""
import pathlib

import numpy as np

import autodiff as ad
import autodiff.numpy as anp

IMG = pathlib.Path(__file__).resolve().parent / "img"


def loss(params, x, y):
    pred = anp.tanh(x @ params["w"] + params["b"])
    return anp.mean((pred - y) ** 2)


def rk4_path(y0, dt):
    def step(y, _):
        f = lambda y: anp.stack([y[1], -anp.sin(y[0])])       # a pendulum
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y[0]
    return ad.lax.scan(step, y0, None, length=100)[1]


def main():
    IMG.mkdir(exist_ok=True)
    params = {"w": np.zeros(3), "b": 0.0}
    x, y = np.ones((32, 3)), np.ones(32)
    ad.make_jaxpr(loss)(params, x, y).render(str(IMG / "loss.svg"))
    ad.make_jaxpr(ad.grad(loss))(params, x, y).render(str(IMG / "loss_grad.svg"))
    ad.make_jaxpr(rk4_path)(np.array([1.0, 0.0]), 0.1).render(str(IMG / "rk4_scan.svg"))


if __name__ == "__main__":
    main()
