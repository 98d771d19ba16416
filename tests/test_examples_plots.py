"""Every plotting example runs at a small size, passes its own checks and writes its figure
(matplotlib's Agg backend: no window)."""
import pathlib
import runpy

import numpy as np
import pytest

pytest.importorskip("matplotlib")
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
PNG = b"\x89PNG\r\n\x1a\n"

SMALL = {
    "tanh_derivatives": dict(order=4, points=50),
    "checkpoint_memory": dict(depths=(4, 16), width=16),
    "gp_regression": dict(points=25),
    "ode_rk4": dict(n=100, use_jit=False),
    # the jitted steps of these are compiled in test_optim / test_jit already; here they
    # run on the interpreter (use_jit=False) to keep the suite short
    "train_mlp": dict(samples=64, hidden=8, steps=40, use_jit=False),
    "digits_mlp": dict(steps=30, use_jit=False),
    "maml_sines": dict(iterations=5, meta_batch=4, use_jit=False),
    "dp_sgd": dict(steps=30, n=300, sigmas=(0.0, 2.0), use_jit=False),
    "hamiltonian_md": dict(n_side=3, steps=200, use_jit=False),
}


def _run(name, figure):
    mod = runpy.run_path(str(EXAMPLES / f"{name}.py"))
    return mod["main"](figure=str(figure), **SMALL[name])


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_runs_and_writes_its_figure(name, tmp_path, capsys):
    figure = tmp_path / f"{name}.png"
    result = _run(name, figure)
    assert figure.read_bytes()[:8] == PNG and figure.stat().st_size > 5000
    assert str(figure) in capsys.readouterr().out
    if name == "tanh_derivatives":
        # order 1 is 1 - tanh², order 2 is -2 tanh (1 - tanh²)
        x = np.linspace(-4.0, 4.0, 50)
        t = np.tanh(x)
        np.testing.assert_allclose(result[1], 1 - t ** 2, rtol=1e-12)
        np.testing.assert_allclose(result[2], -2 * t * (1 - t ** 2), rtol=1e-12, atol=1e-15)
    elif name == "checkpoint_memory":
        assert result["sqrt_n"][-1] < result["none"][-1] / 2
    elif name == "train_mlp":
        for losses in result.values():
            assert losses[-1] < 0.5 * losses[0]
        np.testing.assert_allclose(result["functional"], result["imperative"], rtol=1e-8)
    elif name == "digits_mlp":
        assert result > 0.85                      # test accuracy after 30 full-batch steps
    elif name == "maml_sines":
        losses, before, after = result
        assert len(losses) == 5 and np.all(np.isfinite(losses)) and before > 0 and after > 0
    elif name == "dp_sgd":
        curves, acc = result
        assert acc[0.0] > 0.8 and acc[2.0] > 0.7
    elif name == "hamiltonian_md":
        assert result < 1e-3                      # relative energy deviation
    elif name == "ode_rk4":
        assert abs(result - 0.4) < 1e-8           # the recovered damping
    elif name == "gp_regression":
        assert 0.03 < np.exp(result[2]) < 0.3     # the noise level, true value 0.1


@pytest.mark.slow
def test_hamiltonian_md_compiled(tmp_path):
    # the example's point is one jitted scan; its Numba compile takes 15-25 s on 2 busy
    # cores (the backend's compile time for this program, not the example's), so it runs here
    mod = runpy.run_path(str(EXAMPLES / "hamiltonian_md.py"))
    drift = mod["main"](n_side=3, steps=200, figure=str(tmp_path / "md.png"))
    assert drift < 1e-3 and (tmp_path / "md.png").read_bytes()[:8] == PNG
