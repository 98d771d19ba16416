"""Pictures of programs: a jaxpr as a Graphviz graph, rendered to a file or in a notebook.

``jaxpr_to_dot`` draws each equation as a box with one port per operand, in operand
order (a literal operand shows its value in its port), the primitive with its
parameters, and the results with their types; hovering an equation (in SVG) shows the
user's source line. Inputs and outputs are named from the pytree paths of the arguments
and results when the jaxpr comes from ``ad.make_jaxpr`` (``x``, ``params['w']``,
``out[1]``). Sub-jaxprs (the branches of ``cond``, the bodies of ``scan`` and
``while``, ...) are drawn as nested clusters next to the equation that carries them.

``render(jaxpr, "loss.svg")`` runs Graphviz's ``dot`` program for ``.svg``, ``.png``,
``.pdf`` and writes the source itself for ``.dot``/``.gv``. In Jupyter, a jaxpr displays as
that SVG when the ``graphviz`` Python package (the ``render`` extra) and the ``dot``
program are installed, and as its text with source lines on hover otherwise.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> closed = ad.make_jaxpr(lambda x: anp.sum(x) / 32.0)(np.ones(3))
>>> dot = closed.to_dot()
>>> '<td port="i1">32.0</td>' in dot          # the literal operand of the division
True
>>> 'in0 [label="x: f64[3]"' in dot
True
"""
import html
import os
import shutil
import subprocess

import numpy as np

from .errors import UnsupportedError
from .ir import ClosedJaxpr, Jaxpr, Literal, Var, pp_jaxpr, sub_jaxprs, var_namer

__all__ = ["jaxpr_to_dot", "render", "svg", "html_text"]

_MAX_PARAM = 48          # characters of one parameter's value before it is cut


def _jaxpr_parts(j):
    return (j.jaxpr, getattr(j, "_names", None)) if isinstance(j, ClosedJaxpr) else (j, None)


def _is_jaxpr(v):
    return isinstance(v, (Jaxpr, ClosedJaxpr))


def _param_text(params):
    items = []
    for k, v in sorted(params.items()):
        if _is_jaxpr(v) or (isinstance(v, (tuple, list)) and v and all(_is_jaxpr(x) for x in v)):
            continue
        if isinstance(v, np.dtype):
            s = v.name
        elif callable(v) and not isinstance(v, type):
            s = getattr(v, "__name__", "<fn>")
        else:
            s = repr(v) if isinstance(v, str) else str(v)
        if len(s) > _MAX_PARAM:
            s = s[:_MAX_PARAM - 3] + "..."
        items.append(f"{k}={s}")
    return items


def _literal_text(lit):
    v = lit.val
    s = repr(v.item()) if hasattr(v, "item") else repr(v)
    return s if len(s) <= 12 else s[:11] + "…"


def _esc(s):
    """Text inside an HTML-like label."""
    return html.escape(str(s), quote=False)


def _q(s):
    """Text inside a double-quoted dot string."""
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


class _Drawer:
    def __init__(self):
        self.name = var_namer()
        self.lines = []
        self.n_clusters = 0

    def emit(self, s, depth):
        self.lines.append("  " * depth + s)

    def jaxpr(self, jaxpr, prefix, depth, names=None, top=True):
        in_names, out_names = names or (None, None)
        producer = {}
        for i, v in enumerate(jaxpr.constvars):
            node = f"{prefix}const{i}"
            self.emit(f'{node} [label="const {self.name(v)}: {v.aval.str_short()}" shape=box '
                      f'style=dashed];', depth)
            producer[v] = node
        for i, v in enumerate(jaxpr.invars):
            node = f"{prefix}in{i}"
            shown = in_names[i] if in_names and i < len(in_names) else self.name(v)
            self.emit(f'{node} [label="{_q(shown)}: {v.aval.str_short()}" shape=box '
                      f'tooltip="input {i}: {_q(shown)} ({self.name(v)})"];', depth)
            producer[v] = node
        for i, e in enumerate(jaxpr.eqns):
            node = f"{prefix}eqn{i}"
            ports = []
            for k, v in enumerate(e.invars):
                text = _literal_text(v) if isinstance(v, Literal) else self.name(v)
                ports.append(f'<td port="i{k}">{_esc(text)}</td>')
            width = max(len(ports), 1)
            head = f"<b>{_esc(e.primitive.name)}</b>"
            params = _param_text(e.params)
            if params:
                head += "<br/>" + "<br/>".join(_esc(p) for p in params)
            outs = ", ".join(f"{self.name(v)}: {v.aval.str_short()}" for v in e.outvars)
            rows = []
            if ports:
                rows.append("<tr>" + "".join(ports) + "</tr>")
            rows.append(f'<tr><td colspan="{width}" bgcolor="#e8eef7">{head}</td></tr>')
            rows.append(f'<tr><td colspan="{width}">{_esc(outs)}</td></tr>')
            label = ('<<table border="0" cellborder="1" cellspacing="0" cellpadding="3">'
                     + "".join(rows) + "</table>>")
            tip = str(e.source) if e.source is not None else e.primitive.name
            if e.source is not None and getattr(e.source, "function", ""):
                tip += f" (in {e.source.function})"
            self.emit(f'{node} [shape=plaintext label={label} tooltip="{_q(tip)}"];', depth)
            for k, v in enumerate(e.invars):
                if isinstance(v, Var) and v in producer:
                    self.emit(f"{producer[v]} -> {node}:i{k};", depth)
            for label_, sub in sub_jaxprs(e.params):
                self.cluster(sub, f"{e.primitive.name} {label_}", node, depth)
            for v in e.outvars:
                producer[v] = node
        for i, v in enumerate(jaxpr.outvars):
            node = f"{prefix}out{i}"
            shown = out_names[i] if out_names and i < len(out_names) else f"out {i}"
            style = "shape=box peripheries=2" if top else "shape=box style=rounded"
            self.emit(f'{node} [label="{_q(shown)}: {v.aval.str_short()}" {style}];', depth)
            if isinstance(v, Var) and v in producer:
                self.emit(f"{producer[v]} -> {node};", depth)
            elif isinstance(v, Literal):
                self.emit(f'{node}_lit [label="{_q(_literal_text(v))}" shape=plaintext];', depth)
                self.emit(f"{node}_lit -> {node};", depth)

    def cluster(self, sub, title, owner, depth):
        inner, _ = _jaxpr_parts(sub)
        k = self.n_clusters
        self.n_clusters += 1
        prefix = f"c{k}_"
        self.emit(f"subgraph cluster_{k} {{", depth)
        self.emit(f'label="{_q(title)}"; style=rounded; color="#7a8ca8"; fontname="monospace";',
                  depth + 1)
        self.jaxpr(inner, prefix, depth + 1, top=False)
        if not inner.invars and not inner.eqns and not inner.outvars:
            self.emit(f'{prefix}empty [label="(empty)" shape=plaintext];', depth + 1)
        self.emit("}", depth)
        first = (f"{prefix}in0" if inner.invars else f"{prefix}eqn0" if inner.eqns
                 else f"{prefix}out0" if inner.outvars else f"{prefix}empty")
        self.emit(f'{owner} -> {first} [style=dashed arrowhead=none color="#7a8ca8" '
                  f'lhead=cluster_{k}];', depth)


def jaxpr_to_dot(jaxpr, in_names=None, out_names=None):
    """Graphviz ``digraph`` source of a :class:`~autodiff.Jaxpr` or ``ClosedJaxpr``.

    Equations are boxes with one port per operand (``eqnN:iK`` is operand ``K``), literal
    operands shown in their port, parameters under the primitive's name, the results
    with their types below; the tooltip is the user's source line. ``in_names`` /
    ``out_names`` label the inputs and outputs (``make_jaxpr`` records them from the
    pytree paths of the arguments and results). Sub-jaxprs are nested clusters.

    >>> import numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> f = lambda p: anp.sum(p["w"] * 2.0)
    >>> dot = ad.make_jaxpr(f)({"w": np.ones(2)}).to_dot()
    >>> "p['w']: f64[2]" in dot and "eqn0:i0" in dot
    True
    """
    inner, names = _jaxpr_parts(jaxpr)
    if in_names is not None or out_names is not None:
        names = (in_names, out_names)
    d = _Drawer()
    d.lines = ["digraph jaxpr {", "  rankdir=TB;", "  compound=true;",
               '  node [fontname="monospace" fontsize=10];',
               '  edge [fontname="monospace" fontsize=9];']
    d.jaxpr(inner, "", 1, names)
    d.lines.append("}")
    return "\n".join(d.lines)


def _dot_program():
    exe = shutil.which("dot")
    if exe is None:
        raise UnsupportedError(
            "rendering a jaxpr to an image needs Graphviz's `dot` program, which is not on "
            "PATH; install Graphviz (e.g. `apt install graphviz`, `brew install graphviz` or "
            "`conda install graphviz`), or render to a '.dot' file and lay it out elsewhere")
    return exe


def svg(jaxpr):
    """The SVG picture of ``jaxpr`` (text), laid out by Graphviz's ``dot``."""
    out = subprocess.run([_dot_program(), "-Tsvg"], input=jaxpr_to_dot(jaxpr).encode(),
                         capture_output=True, check=True)
    return out.stdout.decode()


def render(jaxpr, path, format=None):  # noqa: A002 - Graphviz's word
    """Write a picture of ``jaxpr`` to ``path``; returns ``path``.

    The format comes from ``format`` or the file's extension: ``"dot"``/``"gv"`` write the
    Graphviz source (no Graphviz needed); ``"svg"``, ``"png"``, ``"pdf"`` (and the other
    formats of ``dot -T``) run Graphviz's ``dot`` program. Also a method:
    ``ad.make_jaxpr(f)(x).render("f.svg")``.

    >>> import os, tempfile, numpy as np, autodiff as ad, autodiff.numpy as anp
    >>> closed = ad.make_jaxpr(lambda x: anp.tanh(x) * 2.0)(np.ones(2))
    >>> path = closed.render(os.path.join(tempfile.mkdtemp(), "f.dot"))
    >>> open(path).read().startswith("digraph")
    True
    """
    fmt = (format or os.path.splitext(path)[1].lstrip(".")).lower()
    if not fmt:
        raise ValueError(f"render: cannot tell the format of {path!r}; give the file an "
                         f"extension ('.svg', '.png', '.dot') or pass format=")
    source = jaxpr_to_dot(jaxpr)
    if fmt in ("dot", "gv"):
        with open(path, "w") as f:
            f.write(source + "\n")
        return path
    res = subprocess.run([_dot_program(), f"-T{fmt}", "-o", path], input=source.encode(),
                         capture_output=True)
    if res.returncode != 0:
        raise ValueError(f"render: Graphviz could not write {path!r} as {fmt!r}: "
                         f"{res.stderr.decode().strip()}")
    return path


def html_text(jaxpr):
    """The jaxpr's text as HTML, each equation's source line shown on hover (what a
    notebook displays when Graphviz is not installed)."""
    inner, _ = _jaxpr_parts(jaxpr)
    name = var_namer()
    text = pp_jaxpr(inner, name=name).split("\n")
    # pp_jaxpr prints one line per top-level equation between the header and the footer;
    # sub-jaxprs print nested lines, which carry no source of their own here
    lines, k = [], 0
    eqn_lines = _top_eqn_lines(text, len(inner.eqns))
    for i, line in enumerate(text):
        if k < len(inner.eqns) and i == eqn_lines[k]:
            src = inner.eqns[k].source
            k += 1
            if src is not None:
                lines.append(f'<span title="{html.escape(str(src))}">{_esc(line)}</span>')
                continue
        lines.append(_esc(line))
    return ('<pre style="font-family: monospace; line-height: 1.3">' + "\n".join(lines)
            + "</pre>")


def _top_eqn_lines(text, n):
    """Indices of the lines where the top-level equations start (indented by 4 spaces)."""
    idx = [i for i, line in enumerate(text[1:-1], start=1)
           if line.startswith("    ") and not line.startswith("     ")]
    return idx[:n] + [-1] * (n - len(idx[:n]))


def repr_svg(jaxpr):
    """``_repr_svg_`` of jaxprs: the SVG when the ``graphviz`` package and ``dot`` are there."""
    if not _can_draw():
        return None
    import graphviz
    try:
        return graphviz.Source(jaxpr_to_dot(jaxpr)).pipe(format="svg").decode()
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError):
        return None


def repr_html(jaxpr):
    """``_repr_html_`` of jaxprs: ``None`` when :func:`repr_svg` gives a picture (the notebook
    shows that), else the text with source lines on hover."""
    if _can_draw():
        return None
    return html_text(jaxpr)


def _can_draw():
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None
