"""The project's own files agree with its metadata: one version, the license named in
pyproject.toml is the LICENSE file's, and the files a contributor looks for exist."""
import importlib.metadata
import pathlib
import re
import tomllib

import autodiff

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_version_lives_in_one_place():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "autodiff.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+([ab]|rc|\.dev)?\d*", autodiff.__version__)
    assert importlib.metadata.version("autodiff") == autodiff.__version__
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {autodiff.__version__}" in changelog


def test_license_file_matches_the_metadata():
    assert PYPROJECT["project"]["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "License :: OSI Approved :: Apache Software License" in \
        PYPROJECT["project"]["classifiers"]


def test_contributing_covers_primitives_and_benchmarks():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    assert "## Adding a primitive" in text and "## Benchmarks" in text
    for path in re.findall(r"`((?:autodiff|backends|tests|benchmarks)/[\w/]+\.py)`", text):
        assert (ROOT / path).exists(), f"CONTRIBUTING.md names {path}, which does not exist"


def test_runtime_requirements_stay_light():
    deps = " ".join(PYPROJECT["project"]["dependencies"])
    for heavy in ("dask", "distributed", "matplotlib", "mkdocs", "scikit-learn", "jax", "mypy"):
        assert heavy not in deps
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert any(d.startswith("dask") for d in extras["distributed"])
    # CI installs only the test extra: it carries what the suite's tests import
    for extra in ("distributed", "docs", "render"):
        for dep in extras[extra]:
            assert dep in extras["test"], f"{dep} of [{extra}] is missing from [test]"
