"""Every public name of the numeric namespaces has a docstring and is exercised by some
test (issue 14's "done when").

"Exercised" is read from the other test files, strictly: the name must be reached
through its own namespace — an attribute of one of the namespace's aliases in the tests
(``anp.cumsum``, ``m.cumsum`` in the breadth registries where ``m`` is numpy or
``autodiff.numpy``, ``S.gammainc``, ``SL.schur``, ``ad.nn.relu6``, ...), or a quoted name
in a file that looks names up with ``getattr(<alias>, name)`` (the parametrized
registries). A scipy.stats distribution's function counts when a registry case of
``tests/test_scipy_all_modes.py`` is named after it (``"gamma.logcdf"``) or the tests call
it as ``ST.gamma.logcdf``. A name of numpy's own (``np.cumsum(``) or a bare word in a
comment never counts."""
import functools
import inspect
import pathlib
import re
import types

import pytest

import autodiff as ad
import autodiff.numpy as anp
import autodiff.scipy.linalg as SL
import autodiff.scipy.special as S
import autodiff.scipy.stats as ST

TESTS = pathlib.Path(__file__).parent
SOURCES = {p.name: p.read_text() for p in TESTS.glob("test_*.py") if p.name != pathlib.Path(__file__).name}

# names that are numpy's own objects re-exported (dtypes, constants, printing, I/O) or
# internal helpers that happen to live in a namespace: not functions of this library
_NOT_OURS = {"Tracer", "npfunc", "asarray_", "dtype_of", "elementwise_args", "float_type", "is_concrete",
             "is_python_scalar", "normalize_axes", "normalize_axis", "promote", "result_type", "shape_of",
             "to_output", "user_source", "broadcast_shapes", "ndim_", "shape_", "DTypeError", "ShapeError",
             "custom_jvp", "Continuous", "LinAlgError", "UnsupportedError"}


def _ours(obj):
    mod = getattr(obj, "__module__", "") or ""
    return mod.startswith("autodiff")


def _public(ns, names=None):
    out = []
    for name in (names if names is not None else dir(ns)):
        if name.startswith("_") or name in _NOT_OURS:
            continue
        obj = getattr(ns, name)
        if isinstance(obj, types.ModuleType) or not callable(obj) or not _ours(obj):
            continue
        if inspect.isclass(obj) and issubclass(obj, tuple):      # result namedtuples
            continue
        out.append((name, obj))
    return out


NAMESPACES = {
    "numpy": _public(anp),
    "numpy.linalg": _public(anp.linalg),
    "numpy.fft": _public(anp.fft, anp.fft.__all__),
    "scipy.special": _public(S, S.__all__),
    "scipy.linalg": _public(SL),
    "nn": _public(ad.nn),
    "nn.initializers": [(n, getattr(ad.nn.initializers, n)) for n in dir(ad.nn.initializers)
                        if not n.startswith("_") and callable(getattr(ad.nn.initializers, n))],
    "scipy.stats": _public(ST, ["mode", "rankdata", "sem", "gaussian_kde"]) +
    [(f"{d}.{f}", getattr(getattr(ST, d), f)) for d in ST.DISTRIBUTIONS for f in getattr(ST, d).__all__],
}


# how the tests spell each namespace
ALIASES = {
    "numpy": [r"\banp_?", r"\bm"],
    "numpy.linalg": [r"\banp_?\.linalg", r"\bm\.linalg"],
    "numpy.fft": [r"\banp\.fft"],
    "scipy.special": [r"\bS", r"\bad\.scipy\.special", r"\bspecial"],
    "scipy.linalg": [r"\bSL", r"\bad\.scipy\.linalg", r"\basl"],
    "nn": [r"\bad\.nn", r"\bnn"],
    "nn.initializers": [r"\bad\.nn\.initializers", r"\binitializers", r"\bI"],     # I = ad.nn.initializers
    "scipy.stats": [r"\bST", r"\bad\.scipy\.stats"],
}


_ALL_SOURCE = "\n".join(SOURCES.values())


@functools.lru_cache(maxsize=None)
def _attributes(ns):
    """Every ``<alias>.<name>`` (and ``<alias>.<a>.<b>`` as "a.b") the tests write for ``ns``."""
    found = set()
    for a in ALIASES[ns]:
        found.update(re.findall(rf"{a}\.(\w+)", _ALL_SOURCE))
        found.update(".".join(m) for m in re.findall(rf"{a}\.(\w+)\.(\w+)", _ALL_SOURCE))
    return found


@functools.lru_cache(maxsize=None)
def _registry_strings(ns):
    """Quoted names in the test files that look names of ``ns`` up by string
    (``getattr(<alias>, ...)``): the parametrized registries."""
    pats = [re.compile(rf"getattr\({a}\s*,") for a in ALIASES[ns]]
    found = set()
    for src in SOURCES.values():
        if any(p.search(src) for p in pats):
            found.update(re.findall(r"[\"'](\w+)[\"']", src))
    return found


@functools.lru_cache(maxsize=None)
def _stats_case_names():
    import test_scipy_all_modes as tsb           # the registry is the specification
    return frozenset(c.name for c in tsb.ALL)


def _exercised(ns, label):
    if ns == "scipy.stats" and "." in label:
        return label in _stats_case_names() or label in _attributes(ns)
    return label in _attributes(ns) or label in _registry_strings(ns)


ALL = [(ns, name, obj) for ns, items in NAMESPACES.items() for name, obj in items]


@pytest.mark.parametrize("ns", sorted(NAMESPACES))
def test_every_public_name_has_a_docstring(ns):
    missing = [name for name, obj in NAMESPACES[ns] if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not missing, f"{ns}: public names without a docstring: {missing}"


@pytest.mark.parametrize("ns", sorted(NAMESPACES))
def test_every_public_name_is_exercised_by_a_test(ns):
    missing = [name for name, _ in NAMESPACES[ns] if not _exercised(ns, name)]
    assert not missing, f"{ns}: public names no test mentions: {missing}"


def test_the_namespaces_are_broad():
    # the counts the issue asks for (measured against jax's namespaces in the bench
    # environment by benchmarks/api_coverage.py); a floor here so the breadth does not
    # silently shrink
    assert len(NAMESPACES["numpy"]) >= 334      # its __all__: internals no longer counted
    assert len(NAMESPACES["numpy.linalg"]) >= 33
    assert len(NAMESPACES["scipy.special"]) >= 54
    assert len(ST.DISTRIBUTIONS) >= 28
    assert len(NAMESPACES["scipy.linalg"]) >= 41
    assert len(NAMESPACES["nn"]) >= 36
    assert len(NAMESPACES["nn.initializers"]) >= 20


def test_the_exercised_check_is_strict():
    # numpy's own spelling never counts: the tests write np.testing everywhere, anp.testing nowhere
    assert not _exercised("numpy", "testing")
    assert _exercised("numpy", "cumsum") and _exercised("scipy.linalg", "schur")
    assert not _exercised("scipy.special", "no_such_function")
    # a distribution's function counts only through its registry case or ST.<dist>.<fn>
    assert _exercised("scipy.stats", "gamma.logcdf") and not _exercised("scipy.stats", "gamma.no_such_function")
