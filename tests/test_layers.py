"""The package's layers: every import (at module level or inside a function) points to the
same or a lower layer, and function-local imports stay rare.

A layer lists modules by name (a name ending in ``.*`` covers a package's modules). Lower
layers never import higher ones: the Tracer's array methods are installed by the numpy
layer (``autodiff.numpy`` calls ``tracing.install_array_methods``), the numpy interpreter
evaluates through each primitive's ``impl``, control flow sits above the transforms whose
rules it uses, and each primitive carries its own Taylor rule, so ``transforms/jet.py``
imports no user API.
"""
import ast
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = {"autodiff": ROOT / "autodiff", "autodiff.transforms": ROOT / "transforms",
           "autodiff.backends": ROOT / "backends"}

# lowest first
LAYERS = [
    # 0: no autodiff imports beyond this layer: errors, configuration, pytrees, caches
    ["autodiff.errors", "autodiff.config", "autodiff.tree_util", "autodiff.tree",
     "autodiff.wrap_util", "autodiff.pickling", "autodiff.cache", "autodiff.source_info",
     "autodiff.traceback_util", "autodiff.dtypes"],
    # 1: the IR
    ["autodiff.avals", "autodiff.ir", "autodiff.render"],
    # 2: tracing
    ["autodiff._tracer_methods", "autodiff.closure_tables", "autodiff.tracing", "autodiff.core", "autodiff.custom_cache",
     "autodiff.builtins", "autodiff.named_axes"],
    # 3: the reference evaluator of programs (through each primitive's impl)
    ["autodiff.backends.interpreter", "autodiff.api_util"],
    # 4: the primitives and their rules (control flow excepted)
    ["autodiff.primitives", "autodiff.primitives._rules", "autodiff.primitives.taylor_series",
     "autodiff.primitives.elementwise", "autodiff.primitives.shape",
     "autodiff.primitives.reductions", "autodiff.primitives.indexing", "autodiff.primitives.dot",
     "autodiff.primitives.cumulative", "autodiff.primitives.linalg", "autodiff.primitives.fft",
     "autodiff.primitives.collectives",
     "autodiff.callback"],
    # 5: IR -> IR passes
    ["autodiff.transforms", "autodiff.transforms.*"],
    # 6: primitives whose rules are built from the passes
    ["autodiff.primitives.control_flow", "autodiff.custom_derivatives",
     "autodiff.batching"],
    # 7: the transformation API
    ["autodiff.api", "autodiff.jacobians",
     "autodiff.shapes", "autodiff.check", "autodiff.checkpoint", "autodiff.ad_checkpoint"],
    # 8: the numpy namespace
    ["autodiff.numpy", "autodiff.numpy.*"],
    # 9: libraries on top of it
    ["autodiff.lax", "autodiff._lax_*", "autodiff.lax_*", "autodiff.nn", "autodiff.scipy",
     "autodiff.scipy.*", "autodiff.image", "autodiff.random", "autodiff._random_*",
     "autodiff.flatten_util",
     "autodiff.differential_operators", "autodiff.extend", "autodiff.tracer", "autodiff.ops",
     "autodiff.typing", "autodiff.experimental", "autodiff.experimental.*"],
    # 10: compilation and devices
    ["autodiff.backends", "autodiff.backends.*", "autodiff.jit", "autodiff._jit_*",
     "autodiff.pmap",
     "autodiff.jit_*", "autodiff._compile_worker", "autodiff.devices", "autodiff.debug"],
    # 11: everything a user reaches last
    ["autodiff.tape", "autodiff._tape_*", "autodiff.tape_*", "autodiff.optim", "autodiff._optim_*",
     "autodiff.optim_*", "autodiff.misc", "autodiff.misc.*", "autodiff.example_libraries",
     "autodiff.example_libraries.*", "autodiff.distributed", "autodiff._dask_worker",
     "autodiff.progress", "autodiff.test_util", "autodiff"],
]


def _modules():
    mods = {}
    for pkg, top in SOURCES.items():
        for path in top.rglob("*.py"):
            rel = path.relative_to(top).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            mods[".".join((pkg,) + rel)] = path
    return mods


MODULES = _modules()


def layer_of(name):
    for i, layer in enumerate(LAYERS):
        for pat in layer:
            if name == pat or (pat.endswith("*") and name.startswith(pat[:-1])
                               and name != pat[:-2]):
                return i
    return None


def _target(mod, node, is_pkg):
    """The autodiff modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "autodiff"]
    if node.level:
        parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if base.split(".")[0] != "autodiff":
        return []
    out = []
    for a in node.names:
        sub = f"{base}.{a.name}"
        out.append(sub if sub in MODULES else base)
    return out


def imports():
    """(importer, imported, line, inside a function) for every internal import statement."""
    rows = []
    for mod, path in sorted(MODULES.items()):
        tree = ast.parse(path.read_text(), str(path))
        is_pkg = path.name == "__init__.py"

        def visit(node, local):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for t in dict.fromkeys(_target(mod, child, is_pkg)):
                        rows.append((mod, t, child.lineno, local))
                visit(child, local or isinstance(child, (ast.FunctionDef,
                                                         ast.AsyncFunctionDef, ast.Lambda)))
        visit(tree, False)
    return rows


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_no_upward_import():
    bad = [f"{MODULES[a].relative_to(ROOT)}:{line} imports {b} (layer {layer_of(a)} -> "
           f"{layer_of(b)})" for a, b, line, _ in imports()
           if layer_of(b) is not None and layer_of(b) > layer_of(a)]
    assert bad == [], "\n".join(bad)


def test_function_local_imports_are_rare():
    rows = imports()
    statements = {(a, line): local for a, b, line, local in rows}
    local = sum(statements.values())
    assert local < 0.10 * len(statements), f"{local} of {len(statements)} imports are local"
