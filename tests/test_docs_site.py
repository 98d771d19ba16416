"""The documentation: the site builds with ``mkdocs build --strict`` (offline), every code
block of README.md and docs/*.md runs (in order, one namespace per file), every public
callable has a docstring, and ``help(anp.sum)`` shows numpy's documentation.

Code blocks: a ```` ```python ```` block runs; if it holds ``>>>`` prompts it runs as a
doctest (its printed output is compared). Blocks in other languages (``bash``, program
output without a language) and ```` ```python no-run ```` blocks are not run.
"""
import doctest
import importlib
import inspect
import pathlib
import pkgutil
import pydoc
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def code_blocks(text):
    """``[(info string, code, line number), ...]`` of the fenced blocks at column 0."""
    return [(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 2)
            for m in _FENCE.finditer(text)]


def test_code_block_extraction():
    text = "a\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python no-run\ny\n```\n"
    assert code_blocks(text) == [("python", "x = 1\n", 3), ("bash", "ls\n", 7),
                                 ("python no-run", "y\n", 10)]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_code_blocks_run_in_order(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # blocks that write files write them here
    ns = {"__name__": f"docs_{page.stem}"}
    blocks = [b for b in code_blocks(page.read_text()) if b[0] == "python"]
    if page.name in ("README.md", "guide.md", "index.md"):
        assert blocks, f"{page.name} should show runnable code"
    np.set_printoptions(legacy=False)
    for info, code, line in blocks:
        where = f"{page.relative_to(ROOT)}:{line}"
        if re.search(r"^\s*>>> ", code, re.M):
            test = doctest.DocTestParser().get_doctest(code, ns, where, str(page), line - 1)
            runner = doctest.DocTestRunner(
                optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, clear_globs=False)
            assert runner.failures == 0, f"the doctest block at {where} failed (output above)"
        else:
            try:
                exec(compile(code, where, "exec"), ns)
            except Exception as e:      # noqa: BLE001 - name the block, keep the traceback
                raise AssertionError(f"the code block at {where} raised "
                                     f"{type(e).__name__}: {e}") from e


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**_env(), "NO_MKDOCS_2_WARNING": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    site = tmp_path / "site"
    api = (site / "api" / "transforms" / "index.html").read_text()
    assert "value_and_grad" in api and "&gt;&gt;&gt;" in api        # docstrings and examples
    numpy_page = (site / "api" / "numpy" / "index.html").read_text()
    assert "anp.sum" in numpy_page and "Not taken on traced values" in numpy_page
    for name in ("loss.svg", "loss_grad.svg", "rk4_scan.svg"):
        assert (site / "img" / name).read_text().lstrip().startswith(("<?xml", "<svg"))


def test_every_picture_the_docs_show_exists():
    for page in sorted((ROOT / "docs").glob("*.md")):
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} shows {target}, which is missing"
    shown = (ROOT / "docs" / "examples.md").read_text()
    for png in sorted((ROOT / "docs" / "img" / "examples").glob("*.png")):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"img/examples/{png.name}" in shown


def _env():
    import os
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    return env


# ---------------------------------------------------------------- docstrings

def _public_modules():
    names = ["autodiff"]
    for pkg in ("autodiff", "autodiff.numpy", "autodiff.scipy", "autodiff.scipy.stats",
                "autodiff.misc", "autodiff.example_libraries"):
        mod = importlib.import_module(pkg)
        names += [f"{pkg}.{i.name}" for i in pkgutil.iter_modules(mod.__path__)
                  if not i.name.startswith("_")]
    return sorted(set(names))


def _public_callables():
    """``(qualified name, object)`` of every public function, class, method and property:
    a module's ``__all__`` (else its names defined there), and the public members of its
    classes."""
    seen = set()
    for modname in _public_modules():
        try:
            mod = importlib.import_module(modname)
        except ImportError:
            continue                       # an optional backend absent here
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n, v in vars(mod).items() if not n.startswith("_")
                     and getattr(v, "__module__", None) == modname]
        for n in names:
            obj = getattr(mod, n, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            yield f"{modname}.{n}", obj
            if inspect.isclass(obj) and (obj.__module__ or "").startswith("autodiff"):
                for m, v in vars(obj).items():
                    if m.startswith("_"):
                        continue
                    f = v if isinstance(v, property) else getattr(v, "__func__", v)
                    if isinstance(v, property) or callable(f):
                        yield f"{modname}.{n}.{m}", f


def test_every_public_callable_has_a_docstring():
    found = list(_public_callables())
    assert len(found) > 800                    # the enumeration reaches the namespaces
    missing = [name for name, obj in found if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not missing, f"{len(missing)} public callables without a docstring: {missing}"


def test_help_of_anp_sum_shows_numpy_documentation():
    import autodiff.numpy as anp
    text = pydoc.render_doc(anp.sum, renderer=pydoc.plaintext)
    assert "What differs from numpy" in text
    assert "Sum of array elements over a given axis." in text          # numpy's own words
    assert "Parameters" in text and "keepdims" in text
    assert ">>>" not in anp.sum.__doc__.split("numpy's documentation")[1]    # no numpy doctests
    # a function whose traced version takes fewer parameters says which
    import autodiff.numpy._docs as D

    def traced(a, axis=None):
        return a
    assert D._differences(traced, np.sum, "numpy.sum")[-1].startswith(
        "* Not taken on traced values: ``dtype``, ``out``, ``keepdims``")
