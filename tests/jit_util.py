"""Helpers for tests of jitted code: a jit test must show that the compiled backend ran.

``jit`` runs a signature on the numpy interpreter when the backend has no kernel for a
dtype (``UnsupportedDTypeError``, logged): a test comparing jit against the interpreter
would then compare the interpreter with itself and pass whatever the lowering does.
"""


def assert_compiled(jitted, *args, **kwargs):
    """Call ``jitted(*args, **kwargs)`` and fail unless that call ran a compiled kernel.

    Returns the call's result. The cache entry of the signature must be in state
    "compiled" (not "interpreted" or "pending"), with a kernel.
    """
    out = jitted(*args, **kwargs)
    entry = jitted._entry_for(*args, **kwargs)
    assert entry is not None, f"{jitted!r}: no cache entry after the call"
    assert entry.state == "compiled" and entry.kernel is not None, (
        f"{jitted!r} did not run a compiled kernel: state {entry.state!r}"
        + (f" ({entry.reason})" if getattr(entry, "reason", None) else ""))
    return out


def prims_in(jaxpr, acc):
    """Add to ``acc`` the names of the primitives of ``jaxpr``, its sub-jaxprs included."""
    from autodiff.core import ClosedJaxpr, Jaxpr
    for e in jaxpr.eqns:
        acc.add(e.primitive.name)
        for p in e.params.values():
            for q in (p if isinstance(p, tuple) else (p,)):
                if isinstance(q, ClosedJaxpr):
                    prims_in(q.jaxpr, acc)
                elif isinstance(q, Jaxpr):
                    prims_in(q, acc)
    return acc


def run_lowered(closed, args):
    """Compile a hand-built ClosedJaxpr with the cpu backend and run it."""
    import numpy as np
    from autodiff.backends import compile_cache, numba_cpu
    from autodiff.transforms.passes import run_pipeline
    prog = numba_cpu.lower(run_pipeline(closed))
    k = compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
    call = [np.ascontiguousarray(c) for c in prog.consts]
    call += [np.ascontiguousarray(a) if np.ndim(a) else np.asarray(a)[()] for a in args]
    if prog.params and prog.params[-1][0] == "sizes":
        call.append(prog.sizes)
    out = k.dispatcher(*call)
    return list(out) if isinstance(out, tuple) else [out]
