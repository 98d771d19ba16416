"""Docstrings of the ``autodiff.numpy`` functions: ours, then what differs from numpy,
then numpy's own documentation (as ``jax.numpy`` does), generated when the namespace is
imported, never copied by hand.

The "what differs" header is computed, not written per function: on numpy input a
function that mirrors numpy returns numpy's own result; on traced values it records
primitives; the parameters numpy has and the traced version does not take are listed
from the two signatures. numpy's documentation follows without its Examples section (its
examples call ``np.``, and the doctests of this package run every ``>>>`` prompt), and
the few prompts elsewhere in it lose their ``>>>``.

>>> import autodiff.numpy as anp
>>> print(anp.prod.__doc__.splitlines()[0])
``numpy.prod`` for concrete and traced values (numpy's own result on numpy input); differentiable where numpy's is, jittable and vmappable.
>>> "What differs from numpy" in anp.sum.__doc__ and "Sum of array elements" in anp.sum.__doc__
True
"""
import inspect
import re

import numpy as np

_SECTION = re.compile(r"^([ ]*)([A-Z][A-Za-z ]+)\n\1-{3,}[ ]*$", re.M)
_PROMPT = re.compile(r"^([ ]*)(>>>|\.\.\.)( |$)", re.M)


def _numpy_text(ref):
    """numpy's docstring of ``ref`` without its Examples section or doctest prompts."""
    doc = inspect.cleandoc(getattr(ref, "__doc__", None) or "")
    if not doc:
        return ""
    heads = list(_SECTION.finditer(doc))
    for k, m in enumerate(heads):
        if m.group(2).strip() == "Examples":
            end = heads[k + 1].start() if k + 1 < len(heads) else len(doc)
            doc = doc[:m.start()] + doc[end:]
            break
    return _PROMPT.sub(r"\1    ", doc).rstrip()


def _params(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [p.name for p in sig.parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)], \
        any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())


def _differences(obj, ref, qualname):
    lines = []
    if getattr(obj, "__wrapped_numpy__", None) is ref:
        lines.append(f"* On numpy arrays and Python numbers this calls ``{qualname}`` itself: "
                     f"the same result, dtype and errors.")
    lines.append("* On traced values (inside ``grad``, ``vmap``, ``jit``, ...) it records "
                 "primitives of the IR, so it is differentiable (where the function is), "
                 "jittable and vmappable; float64 stays float64 and Python numbers are weak.")
    ours, theirs = _params(obj), _params(ref)
    if ours is not None and theirs is not None:
        (mine, var_kw), (numpys, _) = ours, theirs
        missing = [p for p in numpys if p not in mine]
        extra = [p for p in mine if p not in numpys]
        if missing and not var_kw:
            lines.append("* Not taken on traced values: " +
                         ", ".join(f"``{p}``" for p in missing) + ".")
        if extra:
            lines.append("* Parameters of this version only: " +
                         ", ".join(f"``{p}``" for p in extra) + ".")
    return lines


def _one_liner(prefix, ref_name):
    return (f"``{prefix}.{ref_name}`` for concrete and traced values (numpy's own result "
            "on numpy input); differentiable where numpy's is, jittable and vmappable.")


def _numpy_module(prefix):
    mod = np
    for part in prefix.split(".")[1:]:
        mod = getattr(mod, part, None)
        if mod is None:
            return None
    return mod


def fill(namespace, prefix="numpy"):
    """Docstrings for every public function in ``namespace``: our own (or a one-liner naming
    the numpy function it follows), then what differs from numpy, then numpy's docs. (The
    tracers' array methods carry theirs from their definition: autodiff._tracer_methods.)"""
    items = namespace.items() if isinstance(namespace, dict) else vars(namespace).items()
    np_mod = _numpy_module(prefix)
    for name, obj in list(items):
        if name.startswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        if not (getattr(obj, "__module__", "") or "").startswith("autodiff"):
            continue
        own = inspect.cleandoc(getattr(obj, "__doc__", None) or "")
        if "What differs from numpy" in own:
            continue                          # the same function under a second name
        ref = getattr(obj, "__wrapped_numpy__", None)
        if ref is None and np_mod is not None:
            ref = getattr(np_mod, name, None)
        ref_name = getattr(ref, "__name__", None) or name
        parts = [own or _one_liner(prefix, ref_name)]
        numpy_doc = _numpy_text(ref) if callable(ref) else ""
        if numpy_doc:
            qualname = f"{prefix}.{ref_name}"
            title = "What differs from numpy"
            parts.append("\n".join([title, "-" * len(title)] +
                                   _differences(obj, ref, qualname)))
            title = f"numpy's documentation of ``{qualname}`` (numpy {np.__version__})"
            parts.append(f"{title}\n{'-' * len(title)}\n\n{numpy_doc}")
        try:
            obj.__doc__ = "\n\n".join(parts)
        except (AttributeError, TypeError):
            pass
