"""numpy.random itself (not anp.random) in a function that jit traces warns once per line,
naming the line and ad.random: the draw would be frozen into the compiled program."""
import warnings

import numpy as np
import numpy.random as npr
import pytest
from numpy.random import normal

import autodiff as ad
import autodiff.numpy as anp
from autodiff.numpy.random import FrozenRandomWarning

RNG = np.random.default_rng(0)


def helper(x):
    return x * np.random.rand()                      # line reported for the helper


def direct(x):
    return x + np.random.rand()


def aliased(x):
    return x + npr.normal(size=2)


def imported(x):
    return x + normal(size=2)


def generator(x):
    return x + RNG.normal(size=2)


def through_helper(x):
    return helper(x)


def nested(x):
    g = lambda y: y + np.random.uniform()
    return g(x)


def no_draw(x):
    np.random.seed(0)                                # not a draw
    ok = isinstance(RNG, np.random.Generator)        # nor a type lookup
    return x + anp.sin(x) * ok


def _line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if text in ln)


def _frozen_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = ad.jit(fn)(np.zeros(2))
    return out, [x for x in w if issubclass(x.category, FrozenRandomWarning)]


@pytest.mark.parametrize("fn, what, where", [
    (direct, "numpy.random.rand", (direct, "np.random.rand")),
    (aliased, "numpy.random.normal", (aliased, "npr.normal")),
    (imported, "numpy.random.normal", (imported, "normal(size")),
    (generator, "Generator.normal", (generator, "RNG.normal")),
    (through_helper, "numpy.random.rand", (helper, "np.random.rand")),
    (nested, "numpy.random.uniform", (nested, "np.random.uniform")),
])
def test_numpy_random_in_a_jitted_function_warns_naming_the_line(fn, what, where):
    from autodiff.numpy import random as R
    R._warned.clear()
    out, w = _frozen_warnings(fn)
    assert len(w) == 1, [str(x.message) for x in w]
    msg = str(w[0].message)
    assert what in msg and "ad.random" in msg
    assert w[0].filename == __file__ and w[0].lineno == _line_of(*where)
    # the number really is frozen: a second call with the same input repeats it
    jitted = ad.jit(fn)
    np.testing.assert_array_equal(jitted(np.zeros(2)), jitted(np.zeros(2)))
    # once per line: tracing again (a new jit) does not warn again
    assert _frozen_warnings(fn)[1] == []


def test_no_warning_without_draws_or_outside_jit():
    from autodiff.numpy import random as R
    R._warned.clear()
    assert _frozen_warnings(no_draw)[1] == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        direct(np.zeros(2))                           # eager: numpy, no warning
        ad.grad(lambda x: anp.sum(direct(x)))(np.zeros(2))   # concrete trace: fresh draws
