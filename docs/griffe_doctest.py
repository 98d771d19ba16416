"""Griffe extensions for the API reference.

``DoctestBlocks``: the library's docstrings are prose with doctest
examples (``>>>`` lines and their output); shown as Markdown, the output would be read as
Markdown too (``J["s"]["w"]`` as a link, ``>>>`` as nested quotes). Each run of doctest
lines becomes an indented code block.

``SphinxRoles``: ``:func:`grad``` and the other Sphinx roles become cross-references.
"""
import inspect
import re

import griffe

_PROMPT = re.compile(r"^\s*>>>( |$)")


def indent_doctests(text):
    lines = inspect.cleandoc(text).split("\n")
    out, i = [], 0
    while i < len(lines):
        if not _PROMPT.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        block = []
        while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
            block.append(lines[i][len(indent):])
            i += 1
        if out and out[-1].strip():
            out.append("")
        out += [indent + "    " + b for b in block] + [""]
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    def __init__(self):
        super().__init__()
        self._done = set()

    def on_object(self, *, obj, **kwargs):
        doc = obj.docstring
        if doc is not None and id(doc) not in self._done and ">>>" in doc.value:
            doc.value = indent_doctests(doc.value)
            self._done.add(id(doc))

    def on_instance(self, *, obj, **kwargs):
        self.on_object(obj=obj)


# ------------------------------------------------------------------ Sphinx roles
# The docstrings name other objects with Sphinx roles (:func:`grad`, :mod:`autodiff.numpy`,
# :meth:`JitFunction.lower`), which Markdown would show as raw text. Each becomes an
# autorefs cross-reference to the object it names, resolved in the library itself (the
# public ``autodiff.<name>`` first, the pages document those), marked optional: a name no
# page documents (an internal helper, a numpy function) renders as code, without a link
# and without a warning.

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj|const):"
                   r"`(?:([^`<]*?)\s*<([^`>]+)>|([^`]+))`")


def _resolves(path):
    """Whether the dotted ``path`` names an object: its longest importable module prefix,
    then attributes."""
    import importlib
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:           # noqa: BLE001 - not a module (or an optional backend)
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def resolve_role(target, module, parent=None):
    """The full dotted name a role's target means, seen from ``module`` (and, inside a
    class, from ``parent``), or None. ``~a.b.c`` and ``.c`` are Sphinx's short forms."""
    target = target.lstrip("~").rstrip("()")
    if target.startswith("."):
        package = module.rsplit(".", 1)[0] if "." in module else module
        candidates = [package + target, module + target]
    elif target.startswith("autodiff."):
        candidates = [target]
    elif target.split(".")[0] in ("numpy", "scipy", "math", "cmath", "numba", "jax"):
        return None                 # another library's object: shown as code
    else:
        parts = module.split(".")
        public = ".".join(parts[:next((i for i, s in enumerate(parts) if s.startswith("_")),
                                      len(parts))])
        candidates = [f"autodiff.{target}", f"{public}.{target}", f"{module}.{target}"]
        if parent:
            candidates.insert(0, f"{parent}.{target}")
    return next((c for c in candidates if _resolves(c)), None)


def convert_roles(text, module, parent=None):
    def link(m):
        shown = (m.group(1) or m.group(2) or m.group(3)).strip()
        target = (m.group(2) or m.group(3)).strip()
        if shown.startswith("~"):
            shown = shown.lstrip("~").rsplit(".", 1)[-1]
        shown = shown.lstrip(".")
        full = resolve_role(target, module, parent)
        if full is None:
            return f"`{shown}`"
        return f'<autoref identifier="{full}" optional><code>{shown}</code></autoref>'
    return _ROLE.sub(link, text)


class SphinxRoles(griffe.Extension):
    def __init__(self):
        super().__init__()
        self._done = set()

    def on_object(self, *, obj, **kwargs):
        doc = obj.docstring
        if doc is None or id(doc) in self._done or ":`" not in doc.value:
            return
        module = obj.path if obj.is_module else obj.module.path
        parent = obj.path if obj.is_class else (
            obj.parent.path if obj.parent is not None and obj.parent.is_class else None)
        doc.value = convert_roles(doc.value, module, parent)
        self._done.add(id(doc))

    def on_instance(self, *, obj, **kwargs):
        self.on_object(obj=obj)


class OnlyExports(griffe.Extension):
    """A module that has ``__all__`` documents none of the names it imports for its own use
    (``Tracer``, ``Var``, ``tree_flatten`` in ``autodiff.checkpoint``) and none of its
    module-level variables (type variables, constants) unless ``__all__`` lists them. (mkdocstrings' ``filters: public``
    would do the first but counts ``__doc__``, ``__slots__`` ... of classes as public.)"""

    def on_package(self, *, pkg, **kwargs):
        todo = [pkg]
        while todo:
            module = todo.pop()
            todo += [m for m in module.modules.values() if not m.is_alias]
            exports = module.exports
            if exports is None:
                continue
            names = {getattr(e, "name", e) for e in exports}
            for name, member in list(module.members.items()):
                if name not in names and (member.is_alias or member.is_attribute):
                    del module.members[name]
