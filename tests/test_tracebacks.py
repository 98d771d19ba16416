"""Errors that leave a transform end at the user's line: autodiff's frames are dropped
from the traceback (a note says how many, and how to keep them)."""
import os
import traceback

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors
from autodiff.config import Config

PKG_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in
                 (ad, ad.transforms, ad.backends))


def branchy(x):
    if x > 0:                                    # BRANCH
        return x
    return -x


def mismatched(x):
    return anp.dot(x, anp.ones(3))               # MISMATCH


def divides(x):
    return x / 0 if isinstance(x, int) else 1 // 0     # USER_BUG


def _line_of(marker):
    for i, line in enumerate(open(__file__), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return i
    raise LookupError(marker)


def _frames(call):
    with pytest.raises(Exception) as info:
        call()
    return info.value, traceback.extract_tb(info.value.__traceback__)


CASES = {
    "jit, Python if on a traced value": (lambda: ad.jit(branchy)(1.0),
                                         errors.ConcretizationError, "BRANCH"),
    "grad, shape mismatch": (lambda: ad.grad(lambda x: anp.sum(mismatched(x)))(np.ones(2)),
                             errors.ShapeError, "MISMATCH"),
    "jit of grad, shape mismatch": (
        lambda: ad.jit(ad.grad(lambda x: anp.sum(mismatched(x))))(np.ones(2)),
        errors.ShapeError, "MISMATCH"),
    "vmap, shape mismatch": (lambda: ad.vmap(mismatched)(np.ones((4, 2))),
                             errors.ShapeError, "MISMATCH"),
    "jvp, shape mismatch": (lambda: ad.jvp(mismatched, (np.ones(2),), (np.ones(2),)),
                            errors.ShapeError, "MISMATCH"),
    "user's own bug under grad": (lambda: ad.grad(divides)(1.0), ZeroDivisionError,
                                  "USER_BUG"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_last_frame_is_the_users_line(case):
    call, exc_type, marker = CASES[case]
    exc, frames = _frames(call)
    assert isinstance(exc, exc_type)
    assert frames[-1].filename == __file__ and frames[-1].lineno == _line_of(marker)
    assert not [f for f in frames if f.filename.startswith(PKG_DIRS)]
    assert len(frames) <= 5                      # the test's call, the lambda, the user's code
    notes = getattr(exc, "__notes__", [])
    assert len(notes) == 1 and "AUTODIFF_TRACEBACK_FILTERING=off" in notes[0]
    assert int(notes[0].split("removed ")[1].split()[0]) >= 3


def test_errors_on_the_call_itself_end_at_the_call():
    exc, frames = _frames(lambda: ad.grad(lambda x: anp.sum(x))(np.arange(3)))   # ints
    assert isinstance(exc, errors.DTypeError)
    assert frames[-1].filename == __file__ and "np.arange(3)" in frames[-1].line


def test_filtering_off_keeps_every_frame():
    ad.config.update("traceback_filtering", "off")
    try:
        exc, frames = _frames(CASES["grad, shape mismatch"][0])
    finally:
        ad.config.update("traceback_filtering", "on")
    assert frames[-1].filename.startswith(PKG_DIRS)         # where the error was raised
    assert any(f.filename == __file__ and f.lineno == _line_of("MISMATCH") for f in frames)
    assert not getattr(exc, "__notes__", [])


def test_environment_variable_and_bad_values(monkeypatch):
    monkeypatch.setenv("AUTODIFF_TRACEBACK_FILTERING", "off")
    assert Config().traceback_filtering == "off"
    monkeypatch.setenv("AUTODIFF_TRACEBACK_FILTERING", "1")
    assert Config().traceback_filtering == "on"
    with pytest.raises(ValueError, match="'on' or 'off'"):
        ad.config.update("traceback_filtering", "yes")


def test_successful_calls_are_unchanged():
    f = ad.jit(lambda x: anp.sum(anp.sin(x)))
    assert np.isclose(f(np.zeros(3)), 0.0)
    assert np.allclose(ad.grad(lambda x: anp.sum(x ** 2))(np.ones(2)), [2.0, 2.0])


# ----------------------------------------------------------------------------
# a leaked tracer used outside every transform: no transform's boundary sees its error
# leave, so the tracer's operators and methods, anp's functions and Primitive.bind are
# boundaries themselves (autodiff.traceback_util.boundaries)
# ----------------------------------------------------------------------------

def _leak(transform, rank):
    """A tracer of the given rank that ``transform`` saw and ``f`` stored in a list."""
    box = []

    def f(x):
        box.append(x)
        return anp.sum(x * 2.0)
    shape = (3,) * (rank + (transform is ad.vmap))
    transform(f)(np.ones(shape) if shape else 1.0)
    return box[0]


LEAK_USES = {
    "x * 3": lambda t: t * 3.0,                                # LEAK_USE
    "1 + x": lambda t: 1.0 + t,                                # LEAK_USE
    "x[0]": lambda t: t[0],                                    # LEAK_USE
    "x.sum()": lambda t: t.sum(),                              # LEAK_USE
    "x.reshape": lambda t: t.reshape(3, 1),                    # LEAK_USE
    "anp.sin": lambda t: anp.sin(t),                           # LEAK_USE
    "anp.dot": lambda t: anp.dot(t, np.ones(3)),               # LEAK_USE
    "np.sin": lambda t: np.sin(t),                             # LEAK_USE
    "np.asarray": lambda t: np.asarray(t),                     # LEAK_USE
    "float": lambda t: float(t),                               # LEAK_USE
}
LEAK_LINES = {i for i, line in enumerate(open(__file__), start=1)
              if line.rstrip().endswith("# LEAK_USE")}


@pytest.mark.parametrize("transform", [ad.grad, ad.jit, ad.vmap])
@pytest.mark.parametrize("use", sorted(LEAK_USES))
def test_leaked_tracer_error_shows_only_the_users_frames(transform, use):
    leaked = _leak(transform, 0 if use == "float" else 1)
    assert isinstance(leaked, ad.tracing.Tracer)
    exc, frames = _frames(lambda: LEAK_USES[use](leaked))
    assert isinstance(exc, errors.TracerLeakError), exc
    text = "".join(traceback.format_exception(exc))
    assert not [f for f in frames if f.filename.startswith(PKG_DIRS)], text
    assert frames[-1].filename == __file__ and frames[-1].lineno in LEAK_LINES, text
    assert "escaped the transformed function" in text and "Return it" in text
    notes = getattr(exc, "__notes__", [])
    assert len(notes) == 1 and "AUTODIFF_TRACEBACK_FILTERING=off" in notes[0]


def test_leaked_tracer_error_keeps_every_frame_when_filtering_is_off():
    leaked = _leak(ad.jit, 1)
    ad.config.update("traceback_filtering", "off")
    try:
        exc, frames = _frames(lambda: leaked * 3.0)
    finally:
        ad.config.update("traceback_filtering", "on")
    assert isinstance(exc, errors.TracerLeakError)
    assert frames[-1].name == "_check_alive" and frames[-1].filename.startswith(PKG_DIRS)


def test_uncaught_leaked_tracer_error_in_a_script(tmp_path):
    # what a newcomer sees: the interpreter's own traceback names the script's lines only
    import subprocess
    import sys
    script = tmp_path / "leaky.py"
    script.write_text("import numpy as np, autodiff as ad, autodiff.numpy as anp\n"
                      "saved = []\n"
                      "def loss(w):\n"
                      "    saved.append(w)\n"
                      "    return anp.sum(w ** 2)\n"
                      "ad.grad(loss)(np.ones(3))\n"
                      "print(anp.tanh(saved[0]) + 1.0)\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1
    frames = [ln for ln in run.stderr.splitlines() if ln.startswith("  File ")]
    assert frames == [f'  File "{script}", line 7, in <module>'], run.stderr
    assert "TracerLeakError" in run.stderr and "print(anp.tanh(saved[0]) + 1.0)" in run.stderr
