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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built once for the tests below (about 15 s)."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    out = tmp_path_factory.mktemp("site") / "site"
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-d", str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300, env={**_env(), "NO_MKDOCS_2_WARNING": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def test_mkdocs_build_strict(site):
    api = (site / "api" / "transforms" / "index.html").read_text()
    assert "value_and_grad" in api and "&gt;&gt;&gt;" in api        # docstrings and examples
    numpy_page = (site / "api" / "numpy" / "index.html").read_text()
    assert "anp.sum" in numpy_page and "Not taken on traced values" in numpy_page
    for name in ("loss.svg", "loss_grad.svg", "rk4_scan.svg"):
        assert (site / "img" / name).read_text().lstrip().startswith(("<?xml", "<svg"))


# ---------------------------------------------------------------- the API reference

_RAW_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):")


def _api_pages(site):
    return sorted((site / "api").glob("*/index.html"))


def test_no_raw_sphinx_roles_and_real_cross_references(site):
    pages = sorted(site.rglob("*.html"))
    assert len(_api_pages(site)) >= 10
    raw = [(p.relative_to(site), m.group(0)) for p in pages
           for m in _RAW_ROLE.finditer(p.read_text())]
    assert not raw, f"raw Sphinx roles in the built site: {raw[:10]}"
    # :func:`no_grad` in the tape layer's docstrings links to its entry; :class:`Variable`
    # in autodiff.optim's links across pages; a numpy name stays code, without a link
    tape = (site / "api" / "tape" / "index.html").read_text()
    assert 'href="#autodiff.no_grad"' in tape
    optim = (site / "api" / "nn_optim" / "index.html").read_text()
    assert 'href="../tape/#autodiff.Variable"' in optim
    links = sum(p.read_text().count('class="autorefs autorefs-internal"')
                for p in _api_pages(site))
    assert links >= 30


def _lookup(path):
    """``(parent, object)`` that the dotted ``path`` names (its longest module prefix, then
    attributes)."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        parent = None
        for attr in parts[i:]:
            parent, obj = obj, getattr(obj, attr)
        if parent is None and i > 1:
            parent = importlib.import_module(".".join(parts[:i - 1]))
        return parent, obj
    raise AssertionError(f"{path} names nothing")


def test_api_pages_show_public_names_only(site):
    """Every entry (heading) of the API pages is public: no ``_`` name, nothing a module
    leaves out of its ``__all__`` (the names it imports for its own use, its type
    variables) unless the page names it itself (``::: autodiff.lax.map``)."""
    internal = []
    for page in _api_pages(site):
        source = ROOT / "docs" / "api" / f"{page.parent.name}.md"
        named = set(re.findall(r"^::: ([\w.]+)", source.read_text(), re.M)) \
            if source.exists() else set()
        for path in sorted(set(re.findall(r'<h\d id="(autodiff\.[\w.]+)"', page.read_text()))):
            parent, obj = _lookup(path)
            name = path.rsplit(".", 1)[-1]
            if any(part.startswith("_") for part in path.split(".")):
                internal.append((page.parent.name, path))
            elif (inspect.ismodule(parent) and not inspect.ismodule(obj) and path not in named
                  and name not in getattr(parent, "__all__", [name])):
                internal.append((page.parent.name, path))
    assert not internal, f"internal names on the API pages: {internal}"
    transforms = (site / "api" / "transforms" / "index.html").read_text()
    for name in ("Tracer", "Var", "tree_flatten", "tree_map", "trace_fun", "current_trace"):
        assert f'id="autodiff.checkpoint.{name}"' not in transforms
    assert 'id="autodiff.checkpoint.checkpoint_sequential"' in transforms


def test_signatures_are_formatted(site):
    """A signature longer than the line length (80) is laid out one parameter per line."""
    import html
    sigs = []
    for page in _api_pages(site):
        for block in re.findall(r'doc-signature highlight"><pre><span></span><code>(.*?)</code>',
                                page.read_text(), re.S):
            sigs.append(html.unescape(re.sub(r"<[^>]+>", "", block)).rstrip())
    assert len(sigs) > 100
    jit = next(s for s in sigs if s.startswith("JitFunction("))
    assert jit.splitlines()[:3] == ["JitFunction(", "    fun,", "    static_argnums=(),"]
    too_long = [s for s in sigs if len(s.splitlines()) == 1 and len(s) > 80]
    assert not too_long, too_long[:5]


def test_signature_formatter_and_role_conversion():
    hooks = _docs_module("hooks")
    code = "def xxxx(a, b: dict[str, int] = {'k,': 1}, *, c=(1, 2)) -> int: pass"
    assert hooks.format_signature(code, 80) == code + "\n"
    assert hooks.format_signature(code, 60) == (
        "def xxxx(\n    a, b: dict[str, int] = {'k,': 1}, *, c=(1, 2)\n) -> int: pass\n")
    assert hooks.format_signature(code, 30) == (
        "def xxxx(\n    a,\n    b: dict[str, int] = {'k,': 1},\n    *,\n    c=(1, 2),\n"
        ") -> int: pass\n")
    roles = _docs_module("griffe_doctest")
    text = roles.convert_roles(":func:`grad`, :func:`~autodiff.render.jaxpr_to_dot`, "
                               ":func:`numpy.sum`, :class:`FreshArray`",
                               "autodiff.numpy._creation")
    assert text == ('<autoref identifier="autodiff.grad" optional><code>grad</code></autoref>, '
                    '<autoref identifier="autodiff.render.jaxpr_to_dot" optional>'
                    '<code>jaxpr_to_dot</code></autoref>, `numpy.sum`, '
                    '<autoref identifier="autodiff.numpy._creation.FreshArray" optional>'
                    '<code>FreshArray</code></autoref>')


def _docs_module(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- stale claims

STALE = [  # (pattern, what the code does instead)
    (r"no GPU backend", 'jit(backend="cuda") runs numba-cuda kernels (docs/cuda.md)'),
    (r"numba-cuda\s+next|CUDA (comes )?next|GPU (comes )?next", "the CUDA backend exists"),
    (r"complex[^.\n]{0,20}(for now|not (yet )?supported|are refused)|"
     r"(refuses?|rejects?) complex (numbers|dtypes|inputs|values)",
     "complex numbers work everywhere (complex.md)"),
    (r"Not yet: complex results", "sort_complex and wofz return complex results"),
]   # (the pip install name: tests/test_project_files.py)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_stale_claims(page):
    text = re.sub(r"\s+", " ", page.read_text())
    for pattern, truth in STALE:
        m = re.search(pattern, text, re.I)
        assert m is None, f"{page.name} says {m.group(0)!r}, but {truth}"


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
                "autodiff.scipy.sparse", "autodiff.misc", "autodiff.example_libraries"):
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
