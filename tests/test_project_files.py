"""The project's own files agree with its metadata: one version, the license named in
pyproject.toml is the LICENSE file's, and the files a contributor looks for exist."""
import importlib.metadata
import os
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
    assert importlib.metadata.version(PYPROJECT["project"]["name"]) == autodiff.__version__
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


def test_distribution_name_is_ours_and_the_docs_install_it():
    """``autodiff`` on PyPI is an unrelated project: the distribution has its own name, the
    installed metadata carries it (``pip show``), and every ``pip install`` of a published
    package in the README, CONTRIBUTING and the docs names it."""
    name = PYPROJECT["project"]["name"]
    assert name == "autodiff-numba"
    assert (importlib.metadata.distribution(name).read_text("top_level.txt") or "").split() \
        == ["autodiff"]                       # what it installs: the one import root
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + sorted(
        p for p in (ROOT / "docs").glob("*.md") if p.name not in ("distributed.md", "progress.md"))
    installs = []
    for page in pages:
        for cmd in re.findall(r"pip install ([^`\n]*)", page.read_text()):
            installs.append((page.name, cmd))
            assert not re.match(r"""["']?autodiff(\[|["'\s]|$)""", cmd), \
                f"{page.name} tells users to pip install {cmd!r}: the distribution is {name}"
    assert ("index.md", f"{name}                 # or, from a checkout: pip install -e .") \
        in installs
    readme = (ROOT / "README.md").read_text()
    assert f"pip install {name}`" in readme and "python3 -m venv .venv && . .venv/bin/activate" \
        in readme


def test_readme_commands_are_the_ones_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    example = 'python3 -m pip install -e ".[examples]" && python3 examples/quickstart.py'
    tests = 'python3 -m pip install -e ".[test]" && python3 -m pytest -q -n auto --dist loadfile tests'
    assert example in readme and tests in readme
    assert (ROOT / "examples" / "quickstart.py").is_file()
    assert 'pip install -e ".[test]"' in ci and "pytest -q -n auto --dist loadfile tests" in ci


def test_a_checkout_imports_its_top_level_subpackages():
    # `python -m pytest` in the repository root puts the checkout first on sys.path, ahead of
    # any install's mapping (the strict editable install maps transforms/ and backends/ in a
    # tree of links elsewhere): autodiff/__init__.py finds them beside the package
    import subprocess
    import sys
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
            "if 'editable' not in repr(f).lower()]; "
            "import autodiff.backends.plan, autodiff.transforms.passes, os; "
            "print(os.path.relpath(autodiff.backends.plan.__file__))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == os.path.join("backends", "plan.py")
