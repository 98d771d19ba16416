"""The ported examples of issue 13 run and pass their own checks (each asserts its result
against a closed form or an independent method)."""
import importlib.util
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name,argv", [
    ("vi_reparam", []),
    ("hmc_banana", ["--chains", "4", "--samples", "2500"]),
    ("minimize_pytree", []),
])
def test_example_self_checks(name, argv, capsys):
    _load(name).main(argv)
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("ok:")
