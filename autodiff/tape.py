"""The seed's tape API (work in progress: issue 8)."""
import contextlib

from .core import trace_state


class Variable:
    pass


class Function:
    pass


def is_grad_enabled():
    return trace_state.grad_enabled


@contextlib.contextmanager
def no_grad():
    old = trace_state.grad_enabled
    trace_state.grad_enabled = False
    try:
        yield
    finally:
        trace_state.grad_enabled = old


@contextlib.contextmanager
def enable_grad():
    old = trace_state.grad_enabled
    trace_state.grad_enabled = True
    try:
        yield
    finally:
        trace_state.grad_enabled = old
