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
    mod["main"](str(tmp_path / "fit.svg"), num_steps=1000)      # asserts the fit improved 4x
    assert (tmp_path / "fit.svg").read_text().startswith("<svg")
    assert "after training" in capsys.readouterr().out
