"""mkdocs hook: pages generated from the library itself at build time.

``api/numpy.md`` lists every public ``autodiff.numpy`` (and ``.linalg``, ``.fft``) function
with the first line of its docstring and what differs from numpy, read from the
generated docstrings (``autodiff/numpy/_docs.py``), so the page never goes stale.
"""
import importlib.util
import inspect
import pathlib

from mkdocs.structure.files import File

# the Sphinx roles of the docstrings (:func:`histogram`) become cross-references here too
_spec = importlib.util.spec_from_file_location(
    "griffe_doctest", pathlib.Path(__file__).with_name("griffe_doctest.py"))
_griffe_doctest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_griffe_doctest)


def _summary(obj):
    doc = inspect.getdoc(obj) or ""
    text = doc.strip().split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
    return _griffe_doctest.convert_roles(text, getattr(obj, "__module__", None) or "autodiff")


def _differs(obj):
    doc = inspect.getdoc(obj) or ""
    head = "What differs from numpy\n-----------------------\n"
    i = doc.find(head)
    if i < 0:
        return ""
    body = doc[i + len(head):].split("\n\n")[0]
    notes = [ln[2:] for ln in body.split("\n") if ln.startswith("* Not taken")
             or ln.startswith("* Parameters of this version")]
    return " ".join(notes).replace("|", "\\|")


def _table(module, prefix):
    rows = ["| function | what it is | differs on traced values |", "|---|---|---|"]
    for name in sorted(dir(module)):
        obj = getattr(module, name)
        if name.startswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        if not (getattr(obj, "__module__", "") or "").startswith("autodiff"):
            continue
        rows.append(f"| `{prefix}.{name}` | {_summary(obj)} | {_differs(obj)} |")
    return "\n".join(rows)


def numpy_page():
    import autodiff.numpy as anp
    parts = [
        "# autodiff.numpy",
        "",
        "numpy's functions, for concrete arrays and traced values alike. On numpy input a "
        "function that mirrors numpy returns numpy's own result; on traced values it records "
        "primitives, so it is differentiable, jittable and vmappable. Each function's "
        "docstring (`help(anp.sum)`) carries numpy's documentation under a header that says "
        "what differs; the table lists the parameters a traced call does not take.",
        "",
        "```python",
        "import autodiff.numpy as anp",
        "help(anp.sum)",
        "```",
        "",
        "## `autodiff.numpy`",
        "",
        _table(anp, "anp"),
    ]
    for sub in ("linalg", "fft"):
        mod = getattr(anp, sub, None)
        if mod is not None:
            parts += ["", f"## `autodiff.numpy.{sub}`", "", _table(mod, f"anp.{sub}")]
    return "\n".join(parts) + "\n"


def on_files(files, config):
    files.append(File.generated(config, "api/numpy.md", content=numpy_page()))
    return files


# ---------------------------------------------------------------- signatures
# mkdocstrings formats a long signature with Black or Ruff when one is installed, else
# leaves it on one line. The site formats every signature the same way, installed
# formatters or not, with the small formatter below (one parameter per line, Black's
# layout), handed to mkdocstrings-python in place of its formatter lookup.

def _split_top_level(params):
    """``params`` split at the commas outside brackets and strings."""
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(params):
        if quote:
            if c == quote and params[i - 1] != "\\":
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(params[start:i].strip())
            start = i + 1
    parts.append(params[start:].strip())
    return [p for p in parts if p]


def format_signature(code, line_length):
    """``def name(params) -> ret: pass`` laid out as Black would: unchanged when it fits,
    else the parameters on one indented line, else one per line with a trailing comma."""
    if len(code) <= line_length or not code.startswith("def ") or "(" not in code:
        return code + "\n"
    head, rest = code.split("(", 1)
    depth, close = 1, None
    for i, c in enumerate(rest):                  # the parenthesis closing the parameters
        depth += (c == "(") - (c == ")")
        if depth == 0:
            close = i
            break
    if close is None:
        return code + "\n"
    params, tail = _split_top_level(rest[:close]), rest[close:]
    one_line = "    " + ", ".join(params)
    if len(one_line) <= line_length:
        return f"{head}(\n{one_line}\n{tail}\n"
    return f"{head}(\n" + "".join(f"    {p},\n" for p in params) + f"{tail}\n"


def on_config(config):
    from mkdocstrings_handlers.python._internal import rendering
    rendering._get_formatter = lambda: format_signature
    return config
