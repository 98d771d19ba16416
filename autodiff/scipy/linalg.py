"""``scipy.linalg`` Cholesky and triangular solves, differentiable.

>>> import numpy as np
>>> from autodiff.scipy.linalg import cho_factor, cho_solve
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> cho_solve(cho_factor(a), np.array([1.0, 2.0]))
array([-0.125,  0.75 ])
"""
from ..numpy.linalg import solve_triangular  # noqa: F401  (scipy's signature and defaults)
from ..numpy import linalg as _la
from ..numpy import swapaxes as _swapaxes


def cholesky(a, lower=False):
    """Cholesky factor with scipy's default ``lower=False`` (``a = UᵀU``).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cholesky
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]))
    array([[2.        , 1.        ],
           [0.        , 1.41421356]])
    """
    return _la.cholesky(a) if lower else _swapaxes(_la.cholesky(a), -1, -2)


def cho_factor(a, lower=False):
    """``(c, lower)`` for :func:`cho_solve`; ``c`` holds the factor in its ``lower``
    (or upper) triangle and zeros in the other (scipy leaves arbitrary data there).

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cho_factor
    >>> cho_factor(np.array([[4.0, 0.0], [0.0, 9.0]]), lower=True)[0]
    array([[2., 0.],
           [0., 3.]])
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b):
    """Solve ``a x = b`` given ``cho_factor(a)``: two triangular solves.

    >>> import numpy as np
    >>> from autodiff.scipy.linalg import cho_factor, cho_solve
    >>> cho_solve(cho_factor(np.array([[2.0, 0.0], [0.0, 4.0]])), np.array([2.0, 2.0]))
    array([1. , 0.5])
    """
    c, lower = c_and_lower
    if lower:        # a = L Lᵀ: L y = b, then Lᵀ x = y
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, lower=True, trans=1)
    y = solve_triangular(c, b, lower=False, trans=1)    # a = Uᵀ U: Uᵀ y = b, then U x = y
    return solve_triangular(c, y, lower=False)
