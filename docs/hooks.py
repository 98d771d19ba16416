"""mkdocs hook: pages generated from the library itself at build time.

``api/numpy.md`` lists every public ``autodiff.numpy`` (and ``.linalg``, ``.fft``) function
with the first line of its docstring and what differs from numpy, read from the
generated docstrings (``autodiff/numpy/_docs.py``), so the page never goes stale.
"""
import inspect

from mkdocs.structure.files import File


def _summary(obj):
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ").replace("|", "\\|")


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
