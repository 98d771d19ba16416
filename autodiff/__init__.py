"""autodiff: composable function transformations for numpy code, compiled with Numba.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> f = lambda x: anp.sum(anp.tanh(x) ** 2)
>>> g = ad.grad(f)(np.array([0.5, -1.0]))
>>> np.allclose(g, 2 * np.tanh([0.5, -1.0]) * (1 - np.tanh([0.5, -1.0]) ** 2))
True
"""
__version__ = "0.1.0"


def _checkout_layout():
    """Find ``autodiff.transforms`` and ``autodiff.backends`` when autodiff is imported from a
    source checkout. The repository keeps ``transforms/`` and ``backends/`` at its top level
    (pyproject's ``package-dir`` maps them into the package for installs); a process started in
    the repository root (``python -m pytest``, ``python examples/...``) has that folder first on
    ``sys.path``, so it imports this very directory, ahead of any install's mapping: the
    subpackages are then found beside it. An installed package (a wheel, or the strict
    editable install's tree of links) has them inside, and nothing changes."""
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if (not os.path.isdir(os.path.join(here, "backends"))
            and os.path.isfile(os.path.join(root, "backends", "__init__.py"))
            and os.path.isfile(os.path.join(root, "pyproject.toml"))):
        __path__.append(root)


_checkout_layout()

from . import errors, tree_util
from .config import config
from .core import ClosedJaxpr, Jaxpr, ShapedArray
from . import primitives as _primitives  # noqa: F401  (registers the primitive set)
from . import numpy  # noqa: F401
from .api import (make_jaxpr, grad, value_and_grad, jvp, vjp, linearize, vmap, jacfwd, jacrev,
                  jacobian, hessian, hvp, stop_gradient, linear_transpose, named_call,
                  named_scope, ensure_compile_time_eval)
from .custom_derivatives import custom_jvp, custom_vjp
from .callback import pure_callback, io_callback
from .check import check_grads
from .differential_operators import (hessian_vector_product, hessian_tensor_product,
                                     elementwise_grad, deriv, grad_and_aux, grad_named, make_vjp,
                                     make_jvp, make_hvp, tensor_jacobian_product,
                                     vector_jacobian_product, make_ggnvp, multigrad_dict)
from .jit import jit, wait_for_compiles, disable_jit
from .pmap import pmap
from . import lax, optim, nn
from .transforms.jet import jet, taylor
from . import random, flatten_util, debug, tree, extend, dtypes, ops, typing
from . import image  # noqa: F401  (jax.image)
from .shapes import ShapeDtypeStruct, eval_shape, typeof
from .config import debug_nans, enable_x64
from .devices import (block_until_ready, device_put, device_get, device_count,
                      local_device_count, default_backend, process_index, process_count)
# JAX's old top-level pytree names (``jax.tree_map``, ...), still in many scripts
from .tree_util import (tree_map, tree_leaves, tree_flatten, tree_unflatten,  # noqa: E402
                        tree_structure, tree_reduce, tree_transpose, tree_all)
from .dtypes import float0  # noqa: E402
from .core import Array
from .tape import Variable, Function, no_grad, enable_grad, is_grad_enabled
from .checkpoint import (checkpoint, remat, checkpoint_sequential, every, checkpoint_policies,
                         checkpoint_name, print_saved_residuals)
from . import ad_checkpoint  # noqa: E402

__all__ = [
    "config", "errors", "tree_util", "numpy", "make_jaxpr", "grad", "value_and_grad", "jvp",
    "vjp", "linearize", "vmap", "jacfwd", "jacrev", "jacobian", "hessian", "hvp",
    "stop_gradient", "custom_jvp", "custom_vjp", "check_grads", "hessian_vector_product",
    "hessian_tensor_product", "elementwise_grad", "deriv", "grad_and_aux", "grad_named", "make_vjp",
    "make_jvp", "make_hvp", "tensor_jacobian_product", "vector_jacobian_product", "make_ggnvp",
    "multigrad_dict", "Jaxpr", "ClosedJaxpr",
    "ShapedArray", "jit", "wait_for_compiles", "disable_jit", "lax", "optim", "nn", "Variable", "Function", "no_grad",
    "enable_grad", "is_grad_enabled", "checkpoint", "remat", "checkpoint_sequential", "every",
    "checkpoint_policies", "checkpoint_name", "print_saved_residuals", "random",
    "flatten_util", "debug", "tree", "extend", "dtypes", "ops", "typing", "ShapeDtypeStruct",
    "eval_shape", "block_until_ready",
    "jet", "taylor", "pure_callback", "io_callback", "device_put", "device_get", "Array",
    "devices",
    "holomorphic_grad", "primitive", "linear_transpose", "named_call", "named_scope",
    "ensure_compile_time_eval", "device_count", "local_device_count", "default_backend",
    "process_index", "process_count", "tree_map", "tree_leaves", "tree_flatten",
    "tree_unflatten", "tree_structure", "tree_reduce", "tree_transpose", "tree_all",
    "float0", "typeof", "debug_nans", "enable_x64", "ad_checkpoint", "pmap", "image",
]

from .differential_operators import holomorphic_grad  # noqa: E402
from .extend import primitive  # noqa: E402

# autograd's top-level container functions (``from autograd import tuple, isinstance``)
# are served lazily, so that they never shadow the builtins inside this package
_AUTOGRAD_BUILTINS = frozenset(("tuple", "list", "dict", "isinstance", "type"))


def __getattr__(name):
    if name in _AUTOGRAD_BUILTINS:
        from . import builtins as _ag_builtins
        return getattr(_ag_builtins, name)
    raise AttributeError(f"module 'autodiff' has no attribute {name!r}")
