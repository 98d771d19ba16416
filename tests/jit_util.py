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
