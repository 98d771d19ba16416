"""Control flow primitives (work in progress: issue 7)."""
from .primitives import select  # noqa: F401


def cond(*a, **k):
    raise NotImplementedError


switch = while_loop = fori_loop = scan = cond
