"""The examples ported from autograd and JAX by changing imports run and pass their own
checks (each asserts its accuracy or its agreement with a closed form)."""
import pathlib
import runpy

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("name", ["port_autograd_neural_net", "port_autograd_fixed_points",
                                  "port_jax_mnist_classifier"])
def test_ported_example_runs(name, capsys):
    runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    assert capsys.readouterr().out.strip()


@pytest.mark.slow
def test_neural_ode_example_fits(tmp_path, capsys):
    mod = runpy.run_path(str(EXAMPLES / "neural_ode.py"))
    figure = tmp_path / "out" / "fit.png"                           # the folder made on demand
    mod["main"](str(figure), num_steps=1000)      # asserts the fit improved 4x
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 5000
    out = capsys.readouterr().out
    assert "after training" in out and f"wrote {figure}" in out
    assert "1000 compiled steps" in out           # lower().compile() put the kernel in place
