"""autograd's ``examples/fixed_points.py``, ported by changing the imports.

Square roots as fixed points of Newton's iteration, differentiated implicitly (the
iterations are not unrolled), to first and second order. The edited lines::

    import autodiff.numpy as np                               # import autograd.numpy as np
    from autodiff import grad                                 # from autograd import grad
    from autodiff.misc.fixed_points import fixed_point        # from autograd.misc.fixed_points import ...

Run: ``python examples/port_autograd_fixed_points.py``
"""
import autodiff.numpy as np
from autodiff import grad
from autodiff.misc.fixed_points import fixed_point


def newton_sqrt_iter(a):
    return lambda x: 0.5 * (x + a / x)


def grad_descent_sqrt_iter(a):
    return lambda x: x - 0.05 * (x ** 2 - a)


def sqrt(a, guess=10.0):
    return fixed_point(newton_sqrt_iter, a, guess, distance, 1e-4)
    # return fixed_point(grad_descent_sqrt_iter, a, guess, distance, 1e-4)


def distance(x, y):
    return np.abs(x - y)


if __name__ == "__main__":
    print(np.sqrt(2.0))
    print(sqrt(2.0))
    print()
    print(grad(np.sqrt)(2.0))
    print(grad(sqrt)(2.0))
    print()
    print(grad(grad(np.sqrt))(2.0))
    print(grad(grad(sqrt))(2.0))
    assert abs(grad(grad(sqrt))(2.0) - grad(grad(np.sqrt))(2.0)) < 1e-6
