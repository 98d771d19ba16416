"""One-line docstrings for the ``autodiff.numpy`` functions that are numpy's own on
concrete input and do not carry a longer docstring: the numpy function they mirror, and
that they trace and differentiate."""

def fill(namespace, prefix="numpy"):
    """Give every public function in ``namespace`` without a docstring a one-liner naming
    the numpy function it follows."""
    items = namespace.items() if isinstance(namespace, dict) else vars(namespace).items()
    for name, obj in list(items):
        if name.startswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        if (getattr(obj, "__doc__", None) or "").strip():
            continue
        if not (getattr(obj, "__module__", "") or "").startswith("autodiff"):
            continue
        ref = getattr(obj, "__wrapped_numpy__", None)
        ref_name = getattr(ref, "__name__", None) or name
        try:
            obj.__doc__ = (f"``{prefix}.{ref_name}`` for concrete and traced values (numpy's own result "
                           "on numpy input); differentiable where numpy's is, jittable and vmappable.")
        except (AttributeError, TypeError):
            pass

