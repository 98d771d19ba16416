"""The public transforms are typed: a user's annotated script passes ``mypy --strict``, and
the same script with mistakes fails with the errors expected on the lines that say so.

mypy reads ``autodiff``, ``autodiff.api``, ``autodiff.batching``, ``autodiff.jacobians`` and
``autodiff.jit`` (the annotated public surface) and treats the other modules as untyped (``follow_imports = skip``), as a user's
mypy sees a library whose annotations are still being written.

The same check runs after the README's editable install (``pip install -e .``) in a fresh
virtual environment, with plain ``mypy --strict --python-executable``: the project's build
backend makes editable installs strict, which static tools can follow
(build_backend/autodiff_build.py).
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TYPED = ROOT / "tests" / "typed"

CONFIG = """[mypy]
strict = True
cache_dir = {cache}

[mypy-autodiff.*]
follow_imports = skip

[mypy-autodiff]
follow_imports = silent

[mypy-autodiff.api]
follow_imports = silent

[mypy-autodiff.jit]
follow_imports = silent

[mypy-autodiff.batching]
follow_imports = silent

[mypy-autodiff.jacobians]
follow_imports = silent

[mypy-autodiff.jit_runtime]
follow_imports = silent
"""


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory):
    pytest.importorskip("mypy")
    tmp = tmp_path_factory.mktemp("mypy")
    (tmp / "mypy.ini").write_text(CONFIG.format(cache=tmp / "cache"))
    env = dict(os.environ, MYPYPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(tmp / "mypy.ini"),
                          "--no-error-summary", "--show-error-codes",
                          str(TYPED / "user_script.py"), str(TYPED / "user_script_wrong.py")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    return _errors_by_file(res)


def _errors_by_file(res):
    errors = {}
    for line in res.stdout.splitlines():
        m = re.match(r"(.*?):(\d+): error: (.*)  \[([\w-]+)\]$", line)
        if m:
            errors.setdefault(pathlib.Path(m.group(1)).name, []).append(
                (int(m.group(2)), m.group(4), m.group(3)))
        elif line.strip() and ": note:" not in line:
            raise AssertionError(f"unexpected mypy output: {line}\n{res.stdout}{res.stderr}")
    return errors


@pytest.fixture(scope="module")
def editable_install(tmp_path_factory):
    """The README's install (``pip install -e .``, pip's defaults: the project's own build
    backend, in an isolated build environment) of a copy of the project, in a fresh virtual
    environment that sees this one's packages (numpy, numba, mypy); its own autodiff comes
    first on its path.
    A copy, so that the link tree strict mode writes under ``build/`` stays out of the
    checkout the suite runs from."""
    pytest.importorskip("mypy")
    tmp = tmp_path_factory.mktemp("editable")
    project = tmp / "project"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    project.mkdir()
    for name in ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, project / name)
    for name in ("autodiff", "transforms", "backends", "build_backend"):
        shutil.copytree(ROOT / name, project / name, ignore=skip)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    res = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "-e", str(project)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, ("pip install -e failed (its build environment needs "
                                 "setuptools and wheel from an index):\n" + res.stderr[-3000:])
    return python, project


def test_editable_install_is_visible_to_python_and_pip(editable_install):
    python, project = editable_install
    res = subprocess.run([str(python), "-c", "import autodiff.transforms, autodiff.backends, "
                          "importlib.metadata as m; print(autodiff.transforms.__file__); "
                          "print(m.version('autodiff-numba'))"],
                         cwd=project.parent, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    where, version = res.stdout.split()
    # strict mode: a tree of links under the copy's build/, each to the copy's source file
    assert pathlib.Path(where).resolve() == (project / "transforms" / "__init__.py").resolve()
    assert version == re.search(r'__version__ = "([^"]+)"',
                                (ROOT / "autodiff" / "__init__.py").read_text()).group(1)


def test_mypy_strict_sees_the_editable_install(editable_install, tmp_path):
    """``mypy --strict`` with nothing but the environment's Python (no MYPYPATH, no config):
    the typed script passes and the wrong one fails with the same errors as above."""
    python, _ = editable_install
    res = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--python-executable",
                          str(python), "--cache-dir", str(tmp_path / "cache"),
                          "--no-error-summary", "--show-error-codes",
                          str(TYPED / "user_script.py"), str(TYPED / "user_script_wrong.py")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    errors = _errors_by_file(res)
    assert "user_script.py" not in errors, errors.get("user_script.py")
    assert sorted((line, code) for line, code, _ in errors["user_script_wrong.py"]) == \
        _expected_errors()


def test_typed_user_script_passes_mypy_strict(mypy_output):
    assert "user_script.py" not in mypy_output, mypy_output.get("user_script.py")


def _expected_errors():
    expected = []
    for i, line in enumerate((TYPED / "user_script_wrong.py").read_text().splitlines(), 1):
        m = re.search(r"# expect: ([\w-]+)", line)
        if m:
            expected.append((i, m.group(1)))
    return expected


def test_wrong_script_fails_with_the_expected_errors(mypy_output):
    expected = _expected_errors()
    got = [(line, code) for line, code, _ in mypy_output.get("user_script_wrong.py", [])]
    assert len(expected) == 6 and sorted(got) == expected, mypy_output
    messages = " | ".join(msg for _, _, msg in mypy_output["user_script_wrong.py"])
    assert '"JitFunction"' in messages and '"CacheInfo" has no attribute "hitz"' in messages


def test_typed_user_script_runs():
    res = subprocess.run([sys.executable, str(TYPED / "user_script.py")], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("(16, 3) ")
