"""jit: compile a function to Numba CPU code (work in progress: issue 5)."""


def jit(fun=None, static_argnums=(), static_argnames=(), backend=None):
    raise NotImplementedError("jit is being built (issue 5)")
