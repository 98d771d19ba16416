"""Pictures of programs: what to_dot draws, render() to files, and notebook display."""
import re
import shutil
import subprocess

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import render as R
from autodiff.errors import UnsupportedError

HAVE_DOT = shutil.which("dot") is not None


def loss(params, x):
    h = anp.tanh(x @ params["w"] + params["b"])
    return anp.sum(h) / 32.0, h


CLOSED = ad.make_jaxpr(loss)({"w": np.ones(3), "b": 0.5}, np.ones((4, 3)))


def _node_lines(dot):
    return [l.strip() for l in dot.splitlines() if "[" in l and "->" not in l
            and not l.strip().startswith(("node", "edge"))]


def test_inputs_and_outputs_are_named_from_pytree_paths():
    dot = CLOSED.to_dot()
    assert "in0 [label=\"params['b']: f64[]\"" in dot
    assert "in1 [label=\"params['w']: f64[3]\"" in dot
    assert 'in2 [label="x: f64[4,3]"' in dot
    assert 'out0 [label="out[0]: f64[]"' in dot and 'out1 [label="out[1]: f64[4]"' in dot


def test_literals_parameters_and_operand_order():
    dot = CLOSED.to_dot()
    div = next(l for l in _node_lines(dot) if "<b>div</b>" in l)
    # both operands of the division, in order: the sum, then the literal 32.0
    ports = re.findall(r'<td port="i(\d)">([^<]*)</td>', div)
    assert [p[0] for p in ports] == ["0", "1"] and ports[1][1] == "32.0"
    assert "axes=(0,)" in dot                                  # reduce_sum's parameter
    assert "dimension_numbers=" in dot                         # dot_general's
    # x @ w: x is operand 0 of dot_general, w operand 1
    eqn = next(l.split()[0] for l in _node_lines(dot) if "<b>dot_general</b>" in l)
    assert f"in2 -> {eqn}:i0;" in dot and f"in1 -> {eqn}:i1;" in dot


def test_source_lines_in_tooltips():
    dot = CLOSED.to_dot()
    line = loss.__code__.co_firstlineno + 1
    assert f'tooltip="{__file__}:{line} (in loss)"' in dot


def test_sub_jaxprs_are_nested_clusters():
    def f(x):
        def body(h, xi):
            h = ad.lax.cond(xi.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, h)
            return h, h.sum()
        return ad.lax.scan(body, anp.zeros(3), x)[1]
    dot = ad.make_jaxpr(f)(np.ones((4, 3))).to_dot()
    assert 'label="scan jaxpr"' in dot
    assert 'label="cond branches[0]"' in dot and 'label="cond branches[1]"' in dot
    assert dot.count("subgraph cluster_") == 3
    # the branches' clusters sit inside the scan body's: balanced braces around them
    assert dot.index("cluster_1") > dot.index("cluster_0")
    assert dot.count("{") == dot.count("}")
    assert "lhead=cluster_0" in dot


def test_gradient_jaxpr_draws_every_equation():
    closed = ad.make_jaxpr(ad.grad(lambda p, x: loss(p, x)[0]))({"w": np.ones(3), "b": 0.5},
                                                               np.ones((4, 3)))
    dot = closed.to_dot()
    assert dot.count("shape=plaintext label=<") == len(closed.eqns)
    assert "in0 [label=\"p['b']: f64[]\"" in dot and "out['w']" in dot


@pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot program is not installed")
def test_render_svg_and_png(tmp_path):
    svg = CLOSED.render(str(tmp_path / "loss.svg"))
    text = open(svg).read()
    assert "<svg" in text and "32.0" in text and "dot_general" in text
    png = ad.make_jaxpr(anp.tanh)(1.0).render(str(tmp_path / "tanh.png"))
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_render_dot_needs_no_graphviz(tmp_path, monkeypatch):
    monkeypatch.setattr(R.shutil, "which", lambda name: None)
    path = CLOSED.render(str(tmp_path / "loss.dot"))
    assert open(path).read().strip() == CLOSED.to_dot()
    with pytest.raises(UnsupportedError, match="Graphviz's `dot` program"):
        CLOSED.render(str(tmp_path / "loss.svg"))
    with pytest.raises(ValueError, match="cannot tell the format"):
        CLOSED.render(str(tmp_path / "loss"))


def test_notebook_display_falls_back_to_html(monkeypatch):
    monkeypatch.setattr(R, "_can_draw", lambda: False)
    assert CLOSED._repr_svg_() is None
    page = CLOSED._repr_html_()
    assert page.startswith("<pre") and "reduce_sum" in page
    line = loss.__code__.co_firstlineno + 1
    assert f'title="{__file__}:{line}"' in page                # source line on hover
    assert page.count("<span title=") == len(CLOSED.eqns)


@pytest.mark.skipif(not HAVE_DOT, reason="Graphviz's dot program is not installed")
def test_notebook_display_is_svg_with_graphviz():
    pytest.importorskip("graphviz")
    svg = CLOSED._repr_svg_()
    assert svg is not None and "<svg" in svg and CLOSED._repr_html_() is None
    # the same picture as dot itself draws from to_dot()
    direct = subprocess.run(["dot", "-Tsvg"], input=CLOSED.to_dot().encode(),
                            capture_output=True, check=True).stdout.decode()
    assert svg.count("<g id=\"node") == direct.count("<g id=\"node")
