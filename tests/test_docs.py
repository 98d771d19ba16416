"""Every docstring example in the library runs and prints what it says."""
import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import autodiff


def _modules():
    names = ["autodiff"]
    for pkg in ("autodiff", "autodiff.transforms", "autodiff.backends", "autodiff.numpy",
                "autodiff.scipy", "autodiff.scipy.stats", "autodiff.scipy.sparse",
                "autodiff.misc",
                "autodiff.example_libraries", "autodiff.experimental"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.iter_modules(mod.__path__):
            names.append(f"{pkg}.{info.name}")
    return sorted(set(names))


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    try:
        mod = importlib.import_module(name)
    except ImportError as e:          # optional backends (e.g. CUDA) may be absent
        pytest.skip(f"{name} not importable here: {e}")
    np.set_printoptions(legacy=False)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                          verbose=False)
    assert res.failed == 0, f"{res.failed} docstring example(s) failed in {name}"
