"""``scipy.optimize.minimize`` over a pytree of parameters, via ``ravel_pytree``.

    python examples/minimize_pytree.py [--samples 400] [--hidden 3]

A tiny softplus-output regression model whose parameters are a dict of arrays
(``{"hidden": {"w", "b"}, "out": {"w", "b"}}``). scipy wants one flat float64 vector:
``ad.flatten_util.ravel_pytree`` gives it and the function back to the tree, and the
loss and its gradient (``ad.value_and_grad``, compiled with ``jit``) are written against
the tree. The script checks the result two ways: scipy's L-BFGS reaches a point where
the gradient vanishes, and Newton's method (``ad.hessian`` of the flat loss) started
from there does not move it.
"""
import argparse

import numpy as np
import scipy.optimize

import autodiff as ad
import autodiff.numpy as anp
from autodiff.flatten_util import ravel_pytree


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 2))
    y = np.log1p(np.exp(1.5 * x[:, 0] - x[:, 1] ** 2 + 0.3)) + 0.05 * rng.normal(size=n)
    return x, y


def init(hidden, seed=1):
    rng = np.random.default_rng(seed)
    return {"hidden": {"w": 0.5 * rng.normal(size=(2, hidden)), "b": np.zeros(hidden)},
            "out": {"w": 0.5 * rng.normal(size=hidden), "b": np.array(0.0)}}


def predict(params, x):
    h = anp.tanh(x @ params["hidden"]["w"] + params["hidden"]["b"])
    return anp.logaddexp(0.0, h @ params["out"]["w"] + params["out"]["b"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=3)
    args = ap.parse_args(argv)
    x, y = make_data(args.samples)
    params0 = init(args.hidden)
    flat0, unravel = ravel_pytree(params0)

    def loss(params):
        r = predict(params, x) - y
        return anp.mean(r ** 2) + 1e-4 * anp.sum(ravel_pytree(params)[0] ** 2)

    flat_loss = lambda v: loss(unravel(v))
    value_and_grad = ad.jit(ad.value_and_grad(flat_loss))

    def fun(v):
        val, g = value_and_grad(v)
        return float(val), np.asarray(g, np.float64)

    res = scipy.optimize.minimize(fun, np.asarray(flat0), jac=True, method="L-BFGS-B",
                                  options={"maxiter": 5000, "gtol": 1e-12, "ftol": 1e-15})
    params = unravel(res.x)
    gnorm = float(np.linalg.norm(fun(res.x)[1]))
    print(f"scipy {res.message}; {res.nit} iterations, loss {res.fun:.6f}, |grad| {gnorm:.2e}")
    print("fitted tree:", {k: {n: np.round(v, 3).tolist() for n, v in d.items()} for k, d in params.items()})
    # Newton polish: at a minimum the step H⁻¹g is ~0
    H = ad.hessian(flat_loss)(res.x)
    step = np.linalg.solve(H, fun(res.x)[1])
    print(f"Newton step from the scipy optimum: {np.linalg.norm(step):.2e}")
    assert set(params) == {"hidden", "out"} and params["hidden"]["w"].shape == (2, args.hidden)
    assert gnorm < 1e-6, "scipy did not reach a stationary point"
    assert np.linalg.norm(step) < 1e-4, "Newton moves away from scipy's point: not a minimum"
    assert np.all(np.linalg.eigvalsh(0.5 * (H + H.T)) > -1e-8), "Hessian not positive semidefinite"
    assert res.fun < 0.05, "the model did not fit the data"
    print("ok: scipy.optimize over the pytree reached a verified minimum")


if __name__ == "__main__":
    main()
