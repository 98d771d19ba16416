"""Bad input gets a typed error that names the user's file:line and says what to do.

Each test triggers the error on a known line of this file and checks the class (and
the builtin it subclasses, docs/design.md, convention 6), the ``source`` it carries, and the
message's content.
"""
import inspect
import os

import numpy as np
import pytest

import autodiff as ad
import autodiff.numpy as anp
from autodiff import errors
from autodiff.errors import (ConcretizationError, DTypeError, ShapeError, TracerLeakError,
                             UnsupportedError)

HERE = os.path.abspath(__file__)


def _line_of(fn, text):
    """Absolute line number of the first line of ``fn``'s source containing ``text``."""
    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return start + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def _assert_points_here(err, fn, text):
    assert err.source is not None, "error carries no source location"
    assert os.path.abspath(err.source.filename) == HERE, err.source
    assert err.source.lineno == _line_of(fn, text), (err.source, _line_of(fn, text))
    assert f"test_errors.py:{err.source.lineno}" in str(err)


def test_error_classes_subclass_builtins():
    assert issubclass(ConcretizationError, TypeError)
    assert issubclass(DTypeError, TypeError)
    assert issubclass(TracerLeakError, TypeError)
    assert issubclass(ShapeError, ValueError)
    assert issubclass(UnsupportedError, NotImplementedError)
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.AutodiffError)


# ----------------------------------------------------------------------------
# ConcretizationError: Python control flow on an abstract value
# ----------------------------------------------------------------------------

def _branchy(x):
    if x > 0:                       # <- the offending line
        return x
    return -x


def test_python_if_on_abstract_tracer():
    with pytest.raises(ConcretizationError) as e:
        ad.make_jaxpr(_branchy)(1.0)
    _assert_points_here(e.value, _branchy, "if x > 0")
    msg = str(e.value)
    assert "ad.lax.cond" in msg and "bool" in msg
    assert isinstance(e.value, TypeError)


def _loopy(x):
    n = 0
    while x > n:                    # <- the offending line
        n += 1
    return x * n


def _to_float(x):
    return float(x) * 2.0           # <- the offending line


def _to_index(x):
    return np.arange(4.0)[int(x)]   # <- the offending line


def test_other_conversions_on_abstract_tracers():
    for fn, text in [(_loopy, "while x > n"), (_to_float, "float(x) *"), (_to_index, "[int(x)]")]:
        with pytest.raises(ConcretizationError) as e:
            ad.make_jaxpr(fn)(1.0)
        _assert_points_here(e.value, fn, text)
        assert "ad.lax" in str(e.value)


def test_python_if_works_with_concrete_tracers():
    # under grad without jit the trace knows values: the same code differentiates
    assert ad.grad(_branchy)(2.0) == 1.0
    assert ad.grad(_branchy)(-2.0) == -1.0
    assert ad.grad(_loopy)(2.5) == 3.0


def _to_numpy(x):
    return np.asarray(x) + 1        # <- the offending line


def test_numpy_conversion_of_a_tracer():
    with pytest.raises(ConcretizationError) as e:
        ad.grad(_to_numpy)(1.0)
    _assert_points_here(e.value, _to_numpy, "np.asarray(x)")
    assert "autodiff.numpy" in str(e.value)


def test_ambiguous_truth_value_is_numpys_error():
    with pytest.raises(ValueError, match="ambiguous"):
        ad.grad(lambda x: anp.sum(x) if x > 0 else 0.0)(np.ones(2))


# ----------------------------------------------------------------------------
# ShapeError: both shapes, the user's line
# ----------------------------------------------------------------------------

def _mismatch(x, y):
    return anp.sum(x * y)           # <- the offending line


def test_binary_op_shape_mismatch():
    for make in [ad.make_jaxpr, ad.grad]:
        with pytest.raises(ShapeError) as e:
            make(_mismatch)(np.ones((2, 3)), np.ones(4))
        _assert_points_here(e.value, _mismatch, "x * y")
        assert "(2, 3)" in str(e.value) and "(4,)" in str(e.value)
        assert isinstance(e.value, ValueError)


def _bad_matmul(x):
    return x @ np.ones((2, 2))      # <- the offending line


def _bad_reshape(x):
    return anp.reshape(x, (4,))     # <- the offending line


def test_other_shape_errors_name_shapes_and_line():
    with pytest.raises(ShapeError) as e:
        ad.make_jaxpr(_bad_matmul)(np.ones(3))
    _assert_points_here(e.value, _bad_matmul, "x @")
    assert "(3,)" in str(e.value) and "(2, 2)" in str(e.value)
    with pytest.raises(ShapeError) as e:
        ad.make_jaxpr(_bad_reshape)(np.ones(3))
    _assert_points_here(e.value, _bad_reshape, "anp.reshape")


def _bad_prim(x):
    from autodiff import primitives as P
    return P.add(x, np.ones(2))     # <- the offending line


def test_primitive_level_shape_error_carries_source():
    with pytest.raises(ShapeError) as e:
        ad.make_jaxpr(_bad_prim)(np.ones(3))
    _assert_points_here(e.value, _bad_prim, "P.add")
    assert "(3,)" in str(e.value) and "(2,)" in str(e.value)


def test_transform_argument_shape_errors():
    with pytest.raises(ShapeError, match=r"tangent shape"):
        ad.jvp(anp.sin, (np.ones(3),), (np.ones(2),))
    _, vjp_fn = ad.vjp(anp.sin, np.ones(3))
    with pytest.raises(ShapeError, match=r"cotangent shape"):
        vjp_fn(np.ones(2))
    with pytest.raises(ShapeError, match=r"scalar output"):
        ad.grad(anp.sin)(np.ones(3))


# ----------------------------------------------------------------------------
# DTypeError: strings and objects as array inputs
# ----------------------------------------------------------------------------

def test_strings_and_objects_as_inputs():
    def call_grad_str():
        return ad.grad(anp.sin)("abc")          # <- the offending line

    def call_jaxpr_obj():
        return ad.make_jaxpr(anp.sin)(object())  # <- the offending line

    def call_jvp_strarray():
        return ad.jvp(anp.sin, (np.array(["a", "b"]),), (np.zeros(2),))  # <- offending

    for fn, text in [(call_grad_str, "ad.grad"), (call_jaxpr_obj, "ad.make_jaxpr"),
                     (call_jvp_strarray, "ad.jvp")]:
        with pytest.raises(DTypeError) as e:
            fn()
        _assert_points_here(e.value, fn, text)
        assert "numeric" in str(e.value)
        assert isinstance(e.value, TypeError)


def _mix_strings(x):
    return anp.sum(x * np.array(["a", "b"]))   # <- the offending line


def _mix_objects(x):
    return anp.sin(x) + np.array([object(), 1])   # <- the offending line


def test_strings_and_objects_inside_traced_code():
    for fn, text in [(_mix_strings, "np.array([\"a\""), (_mix_objects, "object()")]:
        with pytest.raises(DTypeError) as e:
            ad.grad(lambda x: anp.sum(fn(x)))(np.ones(2))
        _assert_points_here(e.value, fn, text)


def test_strings_in_eager_anp_calls():
    with pytest.raises(DTypeError):
        anp.asarray(np.array([object()]))
    with pytest.raises(DTypeError):
        ad.make_jaxpr(lambda x: anp.where(x > 0, x, "a"))(np.ones(2))


def test_complex_output_of_grad_names_holomorphic():
    with pytest.raises(DTypeError, match="holomorphic=True") as e:
        ad.grad(lambda x: x * x)(1j)
    assert e.value.source is not None and "test_errors.py" in str(e.value.source)


def test_integer_grad_input_names_the_fix():
    with pytest.raises(DTypeError) as e:
        ad.grad(lambda x: x * 2.0)(np.arange(3))
    assert "astype" in str(e.value) and "argnums" in str(e.value)


# ----------------------------------------------------------------------------
# TracerLeakError: a tracer escaping its trace and used later
# ----------------------------------------------------------------------------

_LEAKED = []


def _leaky(x):
    _LEAKED.append(x)
    return x * 2.0


def _use_leaked():
    return _LEAKED[-1] + 1.0        # <- the offending line


def test_tracer_leak_from_grad():
    _LEAKED.clear()
    ad.grad(_leaky)(1.0)
    with pytest.raises(TracerLeakError) as e:
        _use_leaked()
    _assert_points_here(e.value, _use_leaked, "_LEAKED[-1]")
    assert "escaped" in str(e.value) and "Return it" in str(e.value)
    assert isinstance(e.value, TypeError)


def test_tracer_leak_from_make_jaxpr_and_into_another_trace():
    _LEAKED.clear()
    ad.make_jaxpr(_leaky)(1.0)
    with pytest.raises(TracerLeakError):
        anp.sin(_LEAKED[-1])
    with pytest.raises(TracerLeakError):
        ad.grad(lambda y: y * _LEAKED[-1])(2.0)
    with pytest.raises(TracerLeakError):
        float(_LEAKED[-1])


def test_tracer_leak_from_nested_trace_into_outer():
    # an inner tracer smuggled out to the outer (still live) trace
    box = []

    def outer(x):
        ad.grad(lambda y: box.append(y) or y * x)(2.0)
        return x * box[0]
    with pytest.raises(TracerLeakError):
        ad.grad(outer)(3.0)


def test_tracer_in_a_list_is_not_a_leak_while_live():
    def f(x):
        acc = [x]
        for _ in range(3):
            acc.append(acc[-1] * 2.0)
        return acc[-1]
    assert ad.grad(f)(1.0) == 8.0


def test_leaked_tracer_converted_by_numpy_is_a_leak_error():
    _LEAKED.clear()
    ad.grad(_leaky)(1.0)
    with pytest.raises(TracerLeakError):
        np.asarray(_LEAKED[-1])
    with pytest.raises(TracerLeakError):
        np.sin(_LEAKED[-1])


def test_a_jit_error_for_arguments_off_the_fast_path_carries_no_internal_keyerror():
    """jit's fast path keys its cache by array and scalar types; any other argument (a
    tuple, a device array) takes the slow path. An error raised there used to show the
    fast path's KeyError first ("During handling of the above exception ..."), naming
    an internal table instead of the user's mistake."""
    f = ad.jit(lambda x, pair: anp.dot(x, pair[0]))
    with pytest.raises(ShapeError) as info:
        f(np.ones(3), (np.ones(4), 1.0))
    assert not isinstance(info.value.__context__, KeyError), info.value.__context__
    assert "KeyError" not in "".join(
        __import__("traceback").format_exception(info.value))
