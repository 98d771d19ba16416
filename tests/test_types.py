"""The public transforms are typed: a user's annotated script passes ``mypy --strict``, and
the same script with mistakes fails with the errors expected on the lines that say so.

mypy reads ``autodiff``, ``autodiff.api``, ``autodiff.batching``, ``autodiff.jacobians`` and
``autodiff.jit`` (the annotated public surface) and treats the other modules as untyped (``follow_imports = skip``), as a user's
mypy sees a library whose annotations are still being written.
"""
import os
import pathlib
import re
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

[mypy-autodiff._jit_runtime]
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
    errors = {}
    for line in res.stdout.splitlines():
        m = re.match(r"(.*?):(\d+): error: (.*)  \[([\w-]+)\]$", line)
        if m:
            errors.setdefault(pathlib.Path(m.group(1)).name, []).append(
                (int(m.group(2)), m.group(4), m.group(3)))
        elif line.strip() and ": note:" not in line:
            raise AssertionError(f"unexpected mypy output: {line}\n{res.stdout}{res.stderr}")
    return errors


def test_typed_user_script_passes_mypy_strict(mypy_output):
    assert "user_script.py" not in mypy_output, mypy_output.get("user_script.py")


def test_wrong_script_fails_with_the_expected_errors(mypy_output):
    expected = []
    for i, line in enumerate((TYPED / "user_script_wrong.py").read_text().splitlines(), 1):
        m = re.search(r"# expect: ([\w-]+)", line)
        if m:
            expected.append((i, m.group(1)))
    got = [(line, code) for line, code, _ in mypy_output.get("user_script_wrong.py", [])]
    assert len(expected) == 6 and sorted(got) == expected, mypy_output
    messages = " | ".join(msg for _, _, msg in mypy_output["user_script_wrong.py"])
    assert '"JitFunction"' in messages and '"CacheInfo" has no attribute "hitz"' in messages


def test_typed_user_script_runs():
    res = subprocess.run([sys.executable, str(TYPED / "user_script.py")], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("(16, 3) ")
