"""Griffe extension for the API reference: the library's docstrings are prose with doctest
examples (``>>>`` lines and their output); shown as Markdown, the output would be read as
Markdown too (``J["s"]["w"]`` as a link, ``>>>`` as nested quotes). Each run of doctest
lines becomes an indented code block."""
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
