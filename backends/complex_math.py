"""numpy's complex-number algorithms, one Python source for every Numba target.

Generated kernels compute with native complex numbers; where the compiler's own complex
functions differ from numpy's beyond rounding, or an operation has numpy semantics a
plain expression lacks, the kernels call the functions here. Each target compiles this
one source: ``numba_complex`` for the CPU (``njit``, forced inline), ``cuda_math`` for
CUDA (device functions), through :func:`compile_for`, which binds the names below to
the target's own:

* the real functions are called as ``math.<name>`` and the target's complex ones as
  ``cmath.<name>`` (C99 names: ``acos``, not ``arccos``). On CUDA those are Python's
  ``math``/``cmath`` modules, which numba-cuda lowers to libdevice; the CPU binds both to
  numpy's function of that meaning (Numba's ``np.sinh`` of a complex number is the plain
  formula, ``cmath.sinh`` another algorithm: each target keeps what it computed before);
* ``cpow_principal(a, b)`` is ``a ** b`` by the principal branch, the target's own
  (Numba's ``**`` on the CPU);
* the functions call each other by name, as the target's compiled versions.

:data:`HELPERS` are numpy's semantics where a plain expression differs: ``cdiv`` (Smith's
division; inf/nan at zero, where Numba's raises), the lexicographic comparisons
``clt``/``cle``/``cgt``/``cge`` with numpy's NaN rules, ``cmax``/``cmin``
(``np.maximum``/``np.minimum``: the first NaN wins), ``csign`` (numpy 2's ``z/|z|``),
``cipow`` and ``cpow`` (numpy's ``npy_cpow``: binary exponentiation for integral
exponents ``|n| < 100``, ``0 ** b``). :data:`FUNCTIONS` are numpy's algorithms of a
numpy function (``c`` + its C99 name), where compilers' differ: ``tanh`` (NaN for
``|Re z| > 710`` there), ``expm1``/``log1p`` near 0, ``log`` near the unit circle,
``arccosh``'s side of the branch cut for a ``-0`` imaginary part, ``exp2``, and
``exp``/``sinh``/``cosh``/``sin``/``cos`` of a number with a zero part (an overflowing
``inf * sin(0)`` is NaN there). A target compiles the ones it uses.

As plain Python (this module's own functions, on Python complex numbers) they are the
device functions the CUDA simulator cannot check (tests/test_jit_complex.py):

>>> from autodiff.backends import complex_math as cm
>>> cm.ctanh(800 + 1j), cm.cdiv(1 + 1j, 2j), cm.cipow(1 + 1j, 7)
((1+0j), (0.5-0.5j), (8-8j))
>>> cm.complex_name("arccosh"), cm.c99_name("arctan2")
('cacosh', 'atan2')
"""
import cmath
import math
import types

__all__ = ["HELPERS", "FUNCTIONS", "c99_name", "complex_name", "compile_for",
           "cpow_principal"] + ["cisnan", "clt", "cle", "cgt", "cge", "cmax", "cmin", "cdiv",
                                "csign", "cipow", "cpow", "cexp", "clog", "cexpm1", "clog1p",
                                "cexp2", "csinh", "ccosh", "csin", "ccos", "ctanh", "cacosh"]

_NAN, _INF = float("nan"), float("inf")
_LN2 = 0.6931471805599453


def c99_name(numpy_name):
    """The C99 (Python ``math``) name of a numpy function: ``arcsin`` -> ``asin``."""
    return "a" + numpy_name[3:] if numpy_name.startswith("arc") else numpy_name


def complex_name(numpy_name):
    """The name of a numpy function's complex version in the targets' namespaces:
    ``c`` + its C99 name (``arccosh`` -> ``cacosh``)."""
    return "c" + c99_name(numpy_name)


# ---------------------------------------------------------------------------------------
# numpy's semantics where a plain expression differs
# ---------------------------------------------------------------------------------------

def cisnan(z):
    """Whether either part of ``z`` is NaN."""
    return (z.real != z.real) | (z.imag != z.imag)


# numpy's CLT/CLE/CGT/CGE (umath loops): a real-part decision needs both imaginary parts
# to be numbers; a tie on the real part is decided by the imaginary parts
def clt(a, b):
    return (((a.real < b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag < b.imag)))


def cle(a, b):
    return (((a.real < b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag <= b.imag)))


def cgt(a, b):
    return (((a.real > b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag > b.imag)))


def cge(a, b):
    return (((a.real > b.real) & (a.imag == a.imag) & (b.imag == b.imag))
            | ((a.real == b.real) & (a.imag >= b.imag)))


def cmax(a, b):
    """``np.maximum(a, b)``: ``a`` when it has a NaN or is lexicographically >= ``b``."""
    if cisnan(a) | cge(a, b):
        return a
    return b


def cmin(a, b):
    """``np.minimum(a, b)``."""
    if cisnan(a) | cle(a, b):
        return a
    return b


def cdiv(a, b):
    """``a / b`` as numpy divides complex numbers (Smith's method; no exception at 0)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            # numpy: the parts divided by |b.real| (= 0): a complex inf or nan
            return complex(ar / abr, ai / abr)
        rat = bi / br
        scl = 1.0 / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = 1.0 / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


def csign(z):
    """numpy 2's ``sign`` of a complex number: ``z/|z|``, 0 at 0, the unit direction of an
    infinite ``z`` with one infinite part, nan+nanj otherwise."""
    zr, zi = z.real, z.imag
    r = abs(z)
    if r != r:
        return complex(_NAN, _NAN)
    if r == _INF:
        if abs(zr) == _INF:
            if abs(zi) == _INF:
                return complex(_NAN, _NAN)
            return complex(1.0 if zr > 0 else -1.0, 0.0)
        return complex(0.0, 1.0 if zi > 0 else -1.0)
    if r == 0:
        return complex(0.0, 0.0)
    return complex(zr / r, zi / r)


def cpow_principal(a, b):
    """``a ** b`` by the principal branch, ``exp(b log a)`` (the CPU binds Numba's ``**``)."""
    return cmath.exp(b * cmath.log(a))


def cipow(z, n):
    """``z ** n`` for an integer ``n`` as numpy computes it (``npy_cpow``): ``z``, ``z*z``,
    ``z*(z*z)`` for n = 1, 2, 3, binary exponentiation for ``3 < |n| < 100``, then
    ``1 / z**|n|`` for negative ``n``; the principal power beyond."""
    if n == 0:
        return complex(1.0, 0.0)
    if z.real == 0 and z.imag == 0:       # numpy: 0 ** n is 0 for n > 0, else nan+nanj
        return complex(0.0, 0.0) if n > 0 else complex(_NAN, _NAN)
    w = complex(z.real, z.imag)
    if n == 1:
        return w
    if n == 2:
        return w * w
    if n == 3:
        return w * (w * w)
    if n >= 100 or n <= -100:
        return cpow_principal(w, complex(n, 0.0))
    m = n if n > 0 else -n
    acc = complex(1.0, 0.0)
    mask = 1
    while True:
        if m & mask:
            acc = acc * w
        mask <<= 1
        if m < mask:
            break
        w = w * w
    if n < 0:
        return cdiv(complex(1.0, 0.0), acc)
    return acc


def cpow(a, b):
    """``a ** b`` as numpy's ``npy_cpow``: 1 for ``b == 0``; for ``a == 0``, 0 when
    ``b.real > 0`` else nan+nanj; :func:`cipow` for an integral real ``b`` with
    ``|b| < 100``; the principal power otherwise."""
    br, bi = b.real, b.imag
    if br == 0 and bi == 0:
        return complex(1.0, 0.0)
    if a.real == 0 and a.imag == 0:
        return complex(0.0, 0.0) if br > 0 else complex(_NAN, _NAN)
    if bi == 0 and -100 < br < 100 and br == math.floor(br):
        return cipow(a, int(br))
    return cpow_principal(complex(a.real, a.imag), complex(br, bi))


# ---------------------------------------------------------------------------------------
# numpy's algorithms of its complex functions (npy_math's, from FreeBSD msun)
# ---------------------------------------------------------------------------------------

def cexp(z):
    """numpy's exp: ``(exp(x), y)`` for a zero imaginary part, the target's otherwise."""
    if z.imag == 0:
        return complex(math.exp(z.real), z.imag)
    return cmath.exp(z)


def clog(z):
    """log as numpy's own ``npy_clog``: the real part ``log1p((m-1)(m+1) + n²)/2`` when
    ``0.71 <= |z| <= 1.73`` (m, n the larger and smaller part), the target's otherwise
    (``log(|z|)`` loses the real part near the unit circle: ``log(1+1e-9j)``, 0 there,
    numpy 5e-19)."""
    ax, ay = abs(z.real), abs(z.imag)
    h = math.hypot(ax, ay)
    if 0.71 <= h <= 1.73:
        am, an = max(ax, ay), min(ax, ay)
        return complex(math.log1p((am - 1) * (am + 1) + an * an) / 2,
                       math.atan2(z.imag, z.real))
    return cmath.log(z)


def cexpm1(z):
    """numpy's expm1: ``expm1(x) cos y - 2 sin²(y/2) + i exp(x) sin y``."""
    x, y = z.real, z.imag
    s = math.sin(0.5 * y)
    return complex(math.expm1(x) * math.cos(y) - 2.0 * s * s, math.exp(x) * math.sin(y))


def clog1p(z):
    """numpy's log1p: ``log|1 + z| + i arg(1 + z)``."""
    x, y = z.real, z.imag
    return complex(math.log(math.hypot(x + 1.0, y)), math.atan2(y, x + 1.0))


def cexp2(z):
    """numpy's exp2: ``exp(z ln 2)``."""
    return cmath.exp(complex(z.real * _LN2, z.imag * _LN2))


def csinh(z):
    """numpy's sinh: ``(sinh x, y)`` for a zero imaginary part, the target's otherwise."""
    if z.imag == 0:
        return complex(math.sinh(z.real), z.imag)
    return cmath.sinh(z)


def ccosh(z):
    """numpy's cosh: ``(cosh x, x y)`` for a zero imaginary part, the target's otherwise."""
    if z.imag == 0:
        return complex(math.cosh(z.real), z.real * z.imag)
    return cmath.cosh(z)


def csin(z):
    """numpy's sin: ``-i sinh(i z)``."""
    w = csinh(complex(-z.imag, z.real))
    return complex(w.imag, -w.real)


def ccos(z):
    """numpy's cos: ``cosh(i z)``."""
    return ccosh(complex(-z.imag, z.real))


def ctanh(z):
    """numpy's tanh (Kahan's algorithm, as msun's ctanh): ±1 + tiny imaginary part for
    ``|x| >= 22``, no overflow."""
    x, y = z.real, z.imag
    if x != x:
        return complex(x, y if y == 0 else x * y)
    if abs(x) == _INF:
        return complex(math.copysign(1.0, x),
                       math.copysign(0.0, y if abs(y) == _INF else math.sin(y) * math.cos(y)))
    if abs(y) == _INF or y != y:
        return complex(y - y, y - y)
    if abs(x) >= 22:
        e = math.exp(-abs(x))
        return complex(math.copysign(1.0, x), 4 * math.sin(y) * math.cos(y) * e * e)
    t = math.tan(y)
    beta = 1.0 + t * t
    sh = math.sinh(x)
    rho = math.sqrt(1 + sh * sh)
    den = 1 + beta * sh * sh
    return complex((beta * rho * sh) / den, t / den)


def cacosh(z):
    """numpy's arccosh: from ``w = arccos(z)`` (whose branch cuts are right everywhere),
    ``(|Im w|, ±Re w)`` with the sign of ``Im z``."""
    w = cmath.acos(z)
    rx, ry = w.real, w.imag
    if rx != rx and ry != ry:
        return complex(ry, rx)
    if rx != rx:
        return complex(abs(ry), rx)
    if ry != ry:
        return complex(ry, ry)
    return complex(abs(ry), math.copysign(rx, z.imag))


HELPERS = ("cisnan", "clt", "cle", "cgt", "cge", "cmax", "cmin", "cdiv", "csign", "cipow",
           "cpow")
FUNCTIONS = ("cexp", "clog", "cexpm1", "clog1p", "cexp2", "csinh", "ccosh", "csin", "ccos",
             "ctanh", "cacosh")


def compile_for(decorate, module, **bindings):
    """Every function of :data:`HELPERS` and :data:`FUNCTIONS`, compiled for one target:
    ``{name: decorate(copy)}``, where each copy reads its globals from one namespace of
    this module's, with ``bindings`` (``math``, ``cmath``, ``cpow_principal``) replacing
    the names they name and the other functions replaced by their compiled copies (lazy
    compilers: nothing compiles until a kernel calls one). ``module``: the ``__module__``
    the copies report (the target module, whose helper cache keeps their code)."""
    namespace = dict(globals())
    namespace.update(bindings)
    out = {}
    for name in HELPERS + FUNCTIONS + ("cpow_principal",):
        if name in bindings:
            continue
        f = globals()[name]
        copy = types.FunctionType(f.__code__, namespace, name, f.__defaults__, f.__closure__)
        copy.__doc__, copy.__qualname__, copy.__module__ = f.__doc__, f.__qualname__, module
        out[name] = namespace[name] = decorate(copy)
    return out
