"""numpy names that carry no computation on arrays (dtypes, constant builders, window
functions, I/O and printing helpers, floating-point error handling), re-exported as numpy's
own so that code written for ``numpy``, ``jax.numpy`` or autograd finds them here too.

* ``seterr``, ``geterr``, ``errstate``, ``seterrcall``, ``geterrcall``: numpy's own. They
  govern plain numpy code; autodiff evaluates its own operations quietly, as compiled code
  does (a discarded ``where`` branch may divide by zero). To stop at the first operation
  that makes a NaN use ``ad.config.update("debug_nans", True)``.
* ``isscalar``: numpy's, except that a 0-d traced value counts as a scalar (under
  ``grad(f)(2.0)`` the argument is a 0-d traced value; autograd says True there too).
* ``Array``: the type for ``isinstance`` checks and annotations (``ad.Array``).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> anp.hanning(3)
array([0., 1., 0.])
>>> with anp.errstate(divide="ignore"):
...     float(np.float64(1.0) / 0.0)
inf
>>> anp.isscalar(2.0), ad.grad(lambda x: x * anp.isscalar(x))(3.0)
(True, np.float64(1.0))
"""
import numpy as np

from ..core import Array, Tracer
from ._base import shape_of

__all__ = [
    # dtypes and dtype helpers
    "double", "single", "float_", "int_", "uint", "csingle", "cdouble", "complex64",
    "complex128", "complex_", "complexfloating", "unsignedinteger", "generic", "flexible",
    "character", "object_", "isdtype", "promote_types", "can_cast", "isscalar", "iterable",
    "ComplexWarning", "intp", "uintp", "intc", "uintc", "short", "ushort", "byte", "ubyte",
    "long", "ulong", "longlong", "ulonglong", "half", "longdouble", "str_", "bytes_",
    "min_scalar_type", "typename", "ndindex", "ndenumerate",
    # constant builders, windows, index helpers
    "bartlett", "blackman", "hamming", "hanning", "kaiser", "indices", "mgrid", "ogrid", "s_",
    "index_exp", "mask_indices", "diag_indices_from", "fromfunction",
    # I/O and printing
    "array_repr", "array_str", "save", "savez", "savez_compressed", "load", "loadtxt",
    "savetxt", "genfromtxt", "frombuffer", "fromfile", "fromiter",
    "fromstring", "get_printoptions", "set_printoptions", "printoptions", "ufunc",
    "from_dlpack",
    # floating-point error handling, the array type
    "seterr", "geterr", "errstate", "seterrcall", "geterrcall", "Array",
]

bool = np.bool_            # not in __all__: it would shadow the builtin inside autodiff.numpy
double, single, float_, int_, uint = np.float64, np.float32, np.float64, np.int64, np.uint64
csingle, cdouble, complex64, complex128, complex_ = (np.complex64, np.complex128, np.complex64,
                                                     np.complex128, np.complex128)
complexfloating, unsignedinteger, generic, flexible, character, object_ = (
    np.complexfloating, np.unsignedinteger, np.generic, np.flexible, np.character, np.object_)
isdtype = getattr(np, "isdtype", None) or (lambda dtype, kind: np.issubdtype(dtype, kind))
promote_types, can_cast, iterable = np.promote_types, np.can_cast, np.iterable
ComplexWarning = np.exceptions.ComplexWarning
bartlett, blackman, hamming, hanning, kaiser = np.bartlett, np.blackman, np.hamming, np.hanning, np.kaiser
indices, mgrid, ogrid, s_, index_exp = np.indices, np.mgrid, np.ogrid, np.s_, np.index_exp
mask_indices, fromfunction = np.mask_indices, np.fromfunction
# the remaining scalar types and index iterators autograd.numpy (all of numpy) offers
intp, uintp, intc, uintc, short, ushort, byte, ubyte = (
    np.intp, np.uintp, np.intc, np.uintc, np.short, np.ushort, np.byte, np.ubyte)
long, ulong, longlong, ulonglong, half, longdouble, str_, bytes_ = (
    np.long, np.ulong, np.longlong, np.ulonglong, np.half, np.longdouble, np.str_, np.bytes_)
min_scalar_type, typename, ndindex, ndenumerate = (
    np.min_scalar_type, np.typename, np.ndindex, np.ndenumerate)
savez_compressed, loadtxt, savetxt, genfromtxt = (
    np.savez_compressed, np.loadtxt, np.savetxt, np.genfromtxt)


def diag_indices_from(arr):
    """Indices of the main diagonal of a square ``arr`` (``numpy.diag_indices_from``); only
    the shape is read, so traced arrays work."""
    sh = shape_of(arr)
    if len(sh) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(sh)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return np.diag_indices(sh[0], len(sh))


array_repr, array_str, save, savez, load = np.array_repr, np.array_str, np.save, np.savez, np.load
frombuffer, fromfile, fromiter, fromstring = np.frombuffer, np.fromfile, np.fromiter, np.fromstring
get_printoptions, set_printoptions, printoptions = np.get_printoptions, np.set_printoptions, np.printoptions
ufunc = np.ufunc
from_dlpack = np.from_dlpack
seterr, geterr, errstate = np.seterr, np.geterr, np.errstate
seterrcall, geterrcall = np.seterrcall, np.geterrcall


def isscalar(element):
    """``numpy.isscalar``; a 0-d traced value is a scalar too."""
    if isinstance(element, Tracer):
        return element.aval.shape == ()
    return np.isscalar(element)
