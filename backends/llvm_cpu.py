"""The direct LLVM tier: a kernel's text compiled by llvmlite, without Numba's front end.

Numba's cost on a new program is its front end: type inference and lowering of every
generated function (0.1-0.5 s each, growing faster than their length) and ~0.4 s to import
its registries in a fresh process (issue 31, benchmarks/RESULTS_compile.md). The kernels
the CPU emitter writes, specialized to their shapes, use a small dialect of Python: loops
over constant ranges, scalar arithmetic, element reads and writes of C-contiguous arrays
of constant shape, ``np.empty``/``np.full``, ``reshape``, ``matmul_into`` and calls of the
branch-free helpers of ``numba_math``/``numba_runtime``. This module compiles that dialect
straight to LLVM IR (llvmlite is a dependency already) and lets LLVM optimize it as Numba
would (O3, the host CPU, the same fast-math flags: ``reassoc``/``contract`` on the
kernel's own arithmetic, none inside the helpers, whose range reductions need exact
rounding). The helpers are compiled from their own source, so the vectorizable
transcendentals stay vectorizable and there is one definition of each.

Typing follows Numba's rules for this dialect: numpy's promotion of scalar types, an
integer literal is int64 and a float literal float64, ``/`` of integers is float64, ``//``
and ``%`` of integers are Python's (0 for a zero divisor: ``error_model='numpy'``), a
variable assigned values of several types has their common type, ``select``'s integer
literal next to a float is weak. Whatever the compiler does not know (a construct, a
helper, a dtype such as complex, run-time sizes, a ``prange`` loop, a host callback) raises
:class:`Unsupported` and the program goes to Numba instead (``jit_runtime.llvm_entry``
returns None): this tier never guesses.

Functions: every function of the kernel module (chunks of a long body, control-flow bodies)
and every shared loop nest (``Program.pieces``) is an LLVM function of its own, ``noinline``
and compiled once per argument signature, so LLVM's time stays linear in the program;
the ``numba_math``/``numba_runtime`` helpers are inlined. Memory: intermediate arrays live
in one workspace per call (on the stack when small, else ``malloc``), each allocation or
call site at a fixed region; an array name is a pointer variable, so loops and branches
may rebind it (a scan's carry, a cond's result). A site inside a loop has two regions used
in turn, which is sound because an array bound in a loop body is rebound on every
iteration (bindings elsewhere in a loop are declined), so no value is read more than one
iteration after it was written; a function's results always lie in its own region (a
parameter handed back is copied).

Helpers that call LAPACK (the solvers and decompositions of ``numba_runtime``) go through
Numba overloads this compiler cannot read; their ``numba_runtime.C_ABI`` row makes them C
calls instead, of a symbol ``autodiff_cabi_<helper>_<dtype>`` that the loading process binds
to a Numba-compiled, disk-cached wrapper (:func:`_bind_c_entries`).

Calls: the kernel is ``void kernel(i8* p0, ..., i8* out0, ...)`` and beside it a
``METH_FASTCALL`` builtin reads the arrays' data pointers (and scalar arguments), releases
the GIL while the kernel runs, and returns None or the one scalar result as a Python
number; :class:`FastKernel` allocates the outputs, so nothing a kernel returns aliases
memory it frees. Compiled code lives in one MCJIT engine per process (not on disk: a
program compiles in tens of milliseconds).

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.backends import llvm_cpu, numba_cpu
>>> from autodiff.transforms.passes import run_pipeline
>>> closed = run_pipeline(ad.make_jaxpr(lambda x: anp.sum(anp.tanh(x) * 2.0))(np.ones(4)))
>>> prog = numba_cpu.lower(closed, dynamic_dims=frozenset())
>>> k = llvm_cpu.compile_program(prog)
>>> x = np.linspace(-1.0, 1.0, 4)
>>> bool(np.isclose(k.entry_point(x), np.sum(np.tanh(x) * 2.0)))
True
"""
import ast
import ctypes
import hashlib
import os
import re
import threading

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir

__all__ = ["Unsupported", "FastKernel", "compile_program", "supports", "compile_source",
           "GEMM_INLINE_MAX"]


class Unsupported(Exception):
    """The program uses something this tier does not compile (it goes to Numba)."""


# products with m*n*k up to this run as loops in the kernel (a BLAS call costs more)
GEMM_INLINE_MAX = 4096
# workspaces up to this many bytes live on the stack
STACK_WORKSPACE_MAX = 16384
_ALIGN = 64

_I1, _I8, _I32, _I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_F32, _F64 = ir.FloatType(), ir.DoubleType()
_VOIDP = _I8.as_pointer()
_FAST = ("reassoc", "contract")

_DT = {np.dtype(n): n for n in ("float64", "float32", "int64", "int32", "int16", "int8",
                                 "uint64", "uint32", "uint16", "uint8", "bool")}
_LL = {"float64": _F64, "float32": _F32, "int64": _I64, "int32": _I32,
       "int16": ir.IntType(16), "int8": _I8, "uint64": _I64, "uint32": _I32,
       "uint16": ir.IntType(16), "uint8": _I8, "bool": _I1}
F64, F32, I64, BOOL = (np.dtype(n) for n in ("float64", "float32", "int64", "bool"))


def _ll(dt):
    try:
        return _LL[_DT[np.dtype(dt)]]
    except KeyError:
        raise Unsupported(f"dtype {dt}") from None


def _mem_ll(dt):
    """The in-memory LLVM type of one element (numpy's bool is a byte)."""
    return _I8 if np.dtype(dt) == BOOL else _ll(dt)


def _is_float(dt):
    return dt.kind == "f"


def _is_int(dt):
    return dt.kind in "iu"


# =====================================================================================
# Values
# =====================================================================================

class S:
    """A scalar value: an LLVM value and its numpy dtype (``lit``: an integer literal)."""
    __slots__ = ("v", "dt", "lit")

    def __init__(self, v, dt, lit=False):
        self.v, self.dt, self.lit = v, np.dtype(dt), lit


class A:
    """A C-contiguous array: its data pointer (typed), dtype and constant shape. ``own``:
    it lies in this function's workspace (not a parameter's memory or a table)."""
    __slots__ = ("ptr", "dt", "shape", "own")

    def __init__(self, ptr, dt, shape, own=True):
        self.ptr, self.dt, self.shape = ptr, np.dtype(dt), tuple(int(n) for n in shape)
        self.own = own

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))


class ArrayVar:
    """An array variable: a stack slot holding the data pointer (promoted to a register by
    LLVM), so that a loop or a branch may rebind it; dtype and shape are fixed."""
    __slots__ = ("slot", "dt", "shape", "own")

    def __init__(self, slot, dt, shape, own):
        self.slot, self.dt, self.shape, self.own = slot, dt, shape, own


class Var:
    """A scalar variable: a stack slot (promoted to a register by LLVM)."""
    __slots__ = ("slot", "dt")

    def __init__(self, slot, dt):
        self.slot, self.dt = slot, dt


class Func:
    """A helper function to inline: its definition and the module it resolves names in."""
    __slots__ = ("node", "mod", "fast")

    def __init__(self, node, mod, fast):
        self.node, self.mod, self.fast = node, mod, fast


# =====================================================================================
# Source modules: the helpers' definitions and constants, read without importing Numba
# =====================================================================================

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODULES = {}
_MODULES_LOCK = threading.Lock()
# numba_intrinsics' functions: LLVM instructions of this compiler
_INTRINSICS = {"select", "fmuladd", "fabs", "copysign", "f64_as_i64", "i64_as_f64",
               "f32_as_i32", "i32_as_f32"}


class SourceModule:
    """A backend module's top level read from its file: function definitions, imported
    names, and the values of its constant assignments (numbers, numpy scalars, tuples and
    tables), evaluated with numpy alone. An ``@njit`` helper is compiled from here."""

    def __init__(self, name, text=None):
        self.name = name
        if text is None:
            with open(os.path.join(_HERE, name + ".py"), encoding="utf-8") as f:
                text = f.read()
        tree = ast.parse(text)
        self.functions, self.imports, self.values = {}, {}, {}
        ns = {"np": np, "__builtins__": __builtins__}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                self.functions[node.name] = node
                if not node.decorator_list:      # a plain Python function (a table builder)
                    self._run(node, ns)
            elif isinstance(node, ast.ImportFrom):
                mod = (node.module or "").split(".")[-1]
                for a in node.names:
                    self.imports[a.asname or a.name] = (mod, a.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                self._run(node, ns)
        self.values = ns

    @staticmethod
    def _run(node, ns):
        try:
            exec(compile(ast.Module([node], []), "<autodiff llvm_cpu>", "exec"), ns)
        except Exception:     # noqa: BLE001 - a name this tier cannot evaluate stays unknown
            pass


def _c_abi():
    """``numba_runtime.C_ABI``, read from its source: the helpers called as C functions."""
    return source_module("numba_runtime").values.get("C_ABI", {})


def _c_abi_dtypes():
    return source_module("numba_runtime").values.get("C_ABI_DTYPES", ())


def source_module(name):
    with _MODULES_LOCK:
        m = _MODULES.get(name)
        if m is None:
            m = _MODULES[name] = SourceModule(name)
        return m


# =====================================================================================
# The compiler
# =====================================================================================

def _promote(a, b):
    """numpy's (and Numba's) scalar promotion of two dtypes."""
    if a == b:
        return a
    if a == BOOL:
        return b if b != BOOL else BOOL
    if b == BOOL:
        return a
    return np.promote_types(a, b)


_LIBM = {  # numpy function -> libm names (float64, float32)
    "exp": ("exp", "expf"), "log": ("log", "logf"), "sin": ("sin", "sinf"),
    "cos": ("cos", "cosf"), "tan": ("tan", "tanf"), "tanh": ("tanh", "tanhf"),
    "sinh": ("sinh", "sinhf"), "cosh": ("cosh", "coshf"), "arcsin": ("asin", "asinf"),
    "arccos": ("acos", "acosf"), "arctan": ("atan", "atanf"), "arcsinh": ("asinh", "asinhf"),
    "arccosh": ("acosh", "acoshf"), "arctanh": ("atanh", "atanhf"),
    "expm1": ("expm1", "expm1f"), "log1p": ("log1p", "log1pf"), "log10": ("log10", "log10f"),
    "log2": ("log2", "log2f"), "cbrt": ("cbrt", "cbrtf"), "exp2": ("exp2", "exp2f"),
    "arctan2": ("atan2", "atan2f"), "hypot": ("hypot", "hypotf"), "fmod": ("fmod", "fmodf"),
    "power": ("pow", "powf"), "nextafter": ("nextafter", "nextafterf"),
}
_LLVM_UNARY = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil",
               "trunc": "llvm.trunc", "rint": "llvm.rint", "fabs": "llvm.fabs"}
_CASTS = {"float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32",
          "uint16", "uint8", "bool_", "intp"}


def _has_continue(body):
    """Whether a loop body continues (its own ``continue``, not a nested loop's)."""
    todo = list(body)
    while todo:
        st = todo.pop()
        if isinstance(st, ast.Continue):
            return True
        if isinstance(st, (ast.For, ast.While, ast.FunctionDef)):
            continue
        todo.extend(ast.iter_child_nodes(st))
    return False


def _wrap64(v):
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def _fold_int(op, x, y):
    """An int64 operation on two literals, as the kernel would compute it (or None)."""
    if isinstance(op, ast.Add):
        return _wrap64(x + y)
    if isinstance(op, ast.Sub):
        return _wrap64(x - y)
    if isinstance(op, ast.Mult):
        return _wrap64(x * y)
    if isinstance(op, (ast.FloorDiv, ast.Mod)) and y != 0 and not (x == -2 ** 63 and y == -1):
        return x // y if isinstance(op, ast.FloorDiv) else x % y
    return None


class _Return(Exception):
    pass


class _Spec(list):
    """What a sub-function returns: ``("A", dtype, shape)`` / ``("S", dtype)`` per slot."""
    single = False


class Compiler:
    """Compiles one kernel module's text (see the module docstring) into an LLVM module."""

    def __init__(self, text, entry, param_avals, out_avals, pieces=()):
        self.entry = entry
        self.param_avals = param_avals
        self.out_avals = out_avals
        self.kmod = self._kernel_module("<kernel>", text)
        # the shared loop nests (Program.pieces): modules of the same dialect
        self.pieces = {name: src for name, src in pieces}
        self.piece_mods = {}
        if entry not in self.kmod.functions:
            raise Unsupported("no entry function")
        self.hints = {}
        self.symbol = entry

    @staticmethod
    def _kernel_module(name, text):
        m = SourceModule.__new__(SourceModule)
        m.name, m.functions, m.imports, m.values = name, {}, {}, {"np": np}
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                m.functions[node.name] = node
            elif isinstance(node, ast.ImportFrom):
                mod = (node.module or "").split(".")[-1]
                for a in node.names:
                    m.imports[a.asname or a.name] = (mod, a.name)
            elif isinstance(node, ast.Assign):
                SourceModule._run(node, m.values)
            elif not isinstance(node, (ast.Expr, ast.Import)):
                raise Unsupported(f"module statement {type(node).__name__}")
        return m

    # ------------------------------------------------------------------ driver
    def build(self):
        for _ in range(6):
            self.retry = False
            mod = self._build_once()
            if not self.retry:
                return mod
        raise Unsupported("variable types do not settle")

    def _build_once(self):
        self.module = ir.Module(name="autodiff_fast")
        self.module.triple = llvm.get_process_triple()
        np_params = len(self.param_avals) + len(self.out_avals)
        fnty = ir.FunctionType(ir.VoidType(), [_VOIDP] * np_params)
        self.fn = ir.Function(self.module, fnty, name=self.symbol)
        self.fn.attributes.add("nounwind")
        entry_bb = self.fn.append_basic_block("entry")
        body_bb = self.fn.append_basic_block("body")
        self.alloca_b = ir.IRBuilder(entry_bb)
        self.b = ir.IRBuilder(body_bb)
        self.ws_slot = self.alloca_b.alloca(_VOIDP, name="ws")
        self.ws_size = 0
        self.n_scope = 0
        self.declared = {}
        self.loop_depth = self.branch_depth = 0
        self.loops, self.loop_branch, self.loop_continues = [], [], []
        self.kind = "kernel"
        self.subs = {}
        node = self.kmod.functions[self.entry]
        args = node.args.args
        if len(args) != len(self.param_avals):
            raise Unsupported("parameter count")
        env = {}
        for i, (a, aval) in enumerate(zip(args, self.param_avals)):
            p = self.fn.args[i]
            dt = np.dtype(aval.dtype)
            if aval.shape:
                # a pointer variable like every array name: a loop may rebind a parameter
                # after reading it (a scan's carry), so reads must go through the slot
                self._bind_array(env, a.arg, A(self.b.bitcast(p, _mem_ll(dt).as_pointer()),
                                               dt, aval.shape, own=False))
            else:
                ptr = self.b.bitcast(p, _mem_ll(dt).as_pointer())
                v = self.b.load(ptr)
                env[a.arg] = self._store_var(("k", a.arg), env, a.arg,
                                             S(self._from_mem(v, dt), dt))
        self.outs = [self.fn.args[len(self.param_avals) + k] for k in range(len(self.out_avals))]
        self.out_bind = self._output_bindings(node)
        scope = ("k",)
        self.fast = True
        try:
            self._block(node.body, env, scope, self.kmod)
        except _Return:
            pass
        if not self.b.block.is_terminated:
            raise Unsupported("kernel without return")
        # the workspace: on the stack when small, else malloc'd (freed before the return)
        with self.alloca_b.goto_block(entry_bb):
            if self.ws_size <= STACK_WORKSPACE_MAX:
                arr = self.alloca_b.alloca(ir.ArrayType(_I8, max(self.ws_size, 1)))
                arr.align = _ALIGN
                self.alloca_b.store(self.alloca_b.bitcast(arr, _VOIDP), self.ws_slot)
            else:
                mal = self._declare("malloc", ir.FunctionType(_VOIDP, [_I64]))
                self.alloca_b.store(self.alloca_b.call(mal, [ir.Constant(_I64, self.ws_size)]),
                                    self.ws_slot)
            self.alloca_b.branch(body_bb)
        return self.module

    def _output_bindings(self, node):
        """kernel variable -> output index, for arrays returned as allocated (no copy)."""
        ret = node.body[-1] if node.body else None
        if not isinstance(ret, ast.Return) or ret.value is None:
            raise Unsupported("kernel does not end in a return")
        elts = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        if len(elts) != len(self.out_avals):
            raise Unsupported("output count")
        self.ret_elts = elts
        allocs = {}
        for st in node.body:              # one np.empty-like assignment at the top level ...
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                n = st.targets[0].id
                is_alloc = (isinstance(st.value, ast.Call) and
                            isinstance(st.value.func, ast.Attribute) and
                            st.value.func.attr in ("empty", "full", "zeros"))
                allocs[n] = allocs.get(n, 0) + (1 if is_alloc else 1000)
        for st in ast.walk(node):         # ... and no other binding anywhere
            if isinstance(st, (ast.For, ast.While, ast.If)):
                for sub in ast.walk(st):
                    for t in (sub.targets if isinstance(sub, ast.Assign) else
                              [sub.target] if isinstance(sub, (ast.AugAssign, ast.For))
                              else []):
                        for name in ast.walk(t):
                            if isinstance(name, ast.Name):
                                allocs[name.id] = allocs.get(name.id, 0) + 1000
        bind = {}
        for k, e in enumerate(elts):
            if isinstance(e, ast.Name) and allocs.get(e.id) == 1 and e.id not in bind and \
                    self.out_avals[k].shape:
                bind[e.id] = k
        return bind

    # ------------------------------------------------------------------ helpers
    def _declare(self, name, fnty):
        f = self.declared.get(name)
        if f is None:
            f = self.module.globals.get(name)
            if f is None:
                f = ir.Function(self.module, fnty, name=name)
            self.declared[name] = f
        return f

    def _intrinsic(self, name, dt, n):
        t = _ll(dt)
        tag = {_F64: "f64", _F32: "f32"}[t]
        return self._declare(f"{name}.{tag}", ir.FunctionType(t, [t] * n))

    def _from_mem(self, v, dt):
        return self.b.icmp_unsigned("!=", v, ir.Constant(_I8, 0)) if dt == BOOL else v

    def _to_mem(self, v, dt):
        return self.b.zext(v, _I8) if dt == BOOL else v

    def _region(self, nbytes):
        """A workspace region of ``nbytes`` for one site (an allocation or a call). In a
        loop the site has two regions used in turn: a value bound in the loop's body is
        rebound every iteration (see :meth:`_bind_array`), so it is read at most one
        iteration later, and the other region is what the next iteration writes."""
        size = (max(nbytes, 1) + _ALIGN - 1) // _ALIGN * _ALIGN
        b = self.b
        ws = b.load(self.ws_slot)
        off = self.ws_size
        if not self.loop_depth:
            self.ws_size += size
            return b.gep(ws, [ir.Constant(_I64, off)])
        self.ws_size += 2 * size
        turn = self.alloca_b.alloca(_I1)
        self.alloca_b.store(ir.Constant(_I1, 0), turn)
        t = b.load(turn)
        b.store(b.not_(t), turn)
        o = b.select(t, ir.Constant(_I64, off + size), ir.Constant(_I64, off))
        return b.gep(ws, [o])

    def _alloc(self, dt, shape):
        n = int(np.prod(shape, dtype=np.int64)) if shape else 1
        p = self._region(max(n, 1) * np.dtype(dt).itemsize)
        return A(self.b.bitcast(p, _mem_ll(dt).as_pointer()), dt, shape)

    def _bind_array(self, env, name, a):
        """Bind array ``a`` to ``name``: a pointer variable, so that loops and branches may
        rebind it (a scan's carry, a cond's result). The workspace of a site in a loop is
        double-buffered (:meth:`_region`), which is sound when every array name bound in a
        loop is rebound on each iteration: so such a binding must stand at the top level of
        the loop's body (not inside a branch of it), in a body without ``continue``."""
        cur = env.get(name)
        if isinstance(cur, (Var, S)):
            raise Unsupported("a name both scalar and array")
        if self.kind == "inline":
            raise Unsupported("an array bound in a helper")
        if self.loop_depth and (self.branch_depth != self.loop_branch[-1] or
                                self.loop_continues[-1]):
            raise Unsupported("an array bound in a branch of a loop, or in a loop with "
                              "continue")
        if isinstance(cur, ArrayVar):
            if cur.dt != a.dt or cur.shape != a.shape:
                raise Unsupported("an array variable changing dtype or shape")
            cur.own = cur.own and a.own
        else:
            cur = ArrayVar(self.alloca_b.alloca(_VOIDP, name=name), a.dt, a.shape, a.own)
            env[name] = cur
        self.b.store(self.b.bitcast(a.ptr, _VOIDP), cur.slot)

    def _store_var(self, key, env, name, val):
        """Assign scalar ``val`` to variable ``name``: its slot's type is the common type of
        every value assigned to it (learnt over builds: ``self.hints``)."""
        cur = env.get(name)
        if isinstance(cur, Var):
            if cur.dt != val.dt:
                u = _promote(cur.dt, val.dt)
                if u != cur.dt:
                    # (not ``hints.get(key) != u``: numpy's dtype equals None, float64's alias)
                    if key not in self.hints or self.hints[key] != u:
                        self.hints[key] = u
                        self.retry = True
            self.b.store(self.cast(val, cur.dt).v, cur.slot)
            return cur
        dt = self.hints.get(key, val.dt)
        slot = self.alloca_b.alloca(_ll(dt), name=name)
        var = Var(slot, dt)
        self.b.store(self.cast(val, dt).v, slot)
        env[name] = var
        return var

    # ------------------------------------------------------------------ statements
    def _block(self, stmts, env, scope, mod):
        for st in stmts:
            if self.b.block.is_terminated:
                self.b.position_at_end(self.fn.append_basic_block("dead"))
            try:
                self._stmt(st, env, scope, mod)
            except Unsupported as err:
                if not getattr(err, "where", None):    # the innermost statement says where
                    err.where = f"{mod.name}:{st.lineno}: {ast.unparse(st).splitlines()[0][:100]}"
                    err.args = (f"{err.args[0]} ({err.where})",)
                raise

    def _stmt(self, st, env, scope, mod):
        if isinstance(st, ast.Assign):
            if len(st.targets) != 1:
                raise Unsupported("chained assignment")
            self._assign(st.targets[0], st.value, env, scope, mod)
        elif isinstance(st, ast.AugAssign):
            t = st.target
            cur = ast.Name(t.id, ast.Load()) if isinstance(t, ast.Name) else \
                ast.Subscript(t.value, t.slice, ast.Load())
            self._assign(t, ast.BinOp(cur, st.op, st.value), env, scope, mod)
        elif isinstance(st, ast.For):
            self._for(st, env, scope, mod)
        elif isinstance(st, ast.If):
            self._if(st, env, scope, mod)
        elif isinstance(st, ast.While):
            self._while(st, env, scope, mod)
        elif isinstance(st, (ast.Break, ast.Continue)):
            if not self.loops:
                raise Unsupported("break outside a loop")
            cont, brk = self.loops[-1]
            self.b.branch(brk if isinstance(st, ast.Break) else cont)
        elif isinstance(st, ast.Return):
            self._return(st, env, scope, mod)
        elif isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant):
                return                     # a docstring
            self._expr(st.value, env, scope, mod)
        elif isinstance(st, ast.Pass):
            return
        else:
            raise Unsupported(f"statement {type(st).__name__}")

    def _assign(self, target, value, env, scope, mod):
        if isinstance(target, ast.Name):
            if (self.kind == "kernel" and target.id in self.out_bind and self.loop_depth == 0 and
                    self.branch_depth == 0 and
                    isinstance(value, ast.Call)):
                v = self._expr(value, env, scope, mod, out=self.out_bind[target.id])
            else:
                v = self._expr(value, env, scope, mod)
            if isinstance(v, S):
                self._store_var(scope + (target.id,), env, target.id, v)
            elif isinstance(v, A):
                self._bind_array(env, target.id, v)
            elif isinstance(v, tuple):
                if self.loop_depth or self.branch_depth:
                    raise Unsupported("a tuple bound in a loop or branch")
                env[target.id] = v
            else:
                raise Unsupported("assigned value")
        elif isinstance(target, ast.Tuple):
            v = self._expr(value, env, scope, mod)
            if not isinstance(v, tuple) or len(v) != len(target.elts):
                raise Unsupported("tuple unpacking")
            for t, x in zip(target.elts, v):
                if not isinstance(t, ast.Name):
                    raise Unsupported("unpacking target")
                if isinstance(x, S):
                    self._store_var(scope + (t.id,), env, t.id, x)
                elif isinstance(x, A):
                    self._bind_array(env, t.id, x)
                else:
                    raise Unsupported("unpacking a nested tuple")
        elif isinstance(target, ast.Subscript):
            arr = self._expr(target.value, env, scope, mod)
            if not isinstance(arr, A):
                raise Unsupported("item assignment to a non-array")
            idx = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            if 0 < len(idx) < len(arr.shape):          # X[i] = row (or a scalar: filled)
                sub = self._expr(ast.Subscript(target.value, target.slice, ast.Load()), env,
                                 scope, mod)
                v = self._expr(value, env, scope, mod)
                if isinstance(v, A) and v.size == sub.size:
                    self._copy(v, sub)
                elif isinstance(v, S):
                    fv = self._to_mem(self.cast(v, sub.dt).v, sub.dt)
                    self._loop(sub.size, lambda i: self.b.store(fv, self.b.gep(sub.ptr, [i])))
                else:
                    raise Unsupported("row assignment")
                return
            ptr = self._element(arr, target.slice, env, scope, mod)
            v = self._expr(value, env, scope, mod)
            if not isinstance(v, S):
                raise Unsupported("array assigned to an element")
            self.b.store(self._to_mem(self.cast(v, arr.dt).v, arr.dt), ptr)
        else:
            raise Unsupported(f"assignment target {type(target).__name__}")

    def _range(self, call, env, scope, mod):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and
                call.func.id in ("range", "prange") and not call.keywords):
            raise Unsupported("loop over something other than range")
        args = [self.cast(self._scalar(a, env, scope, mod), I64).v for a in call.args]
        if len(args) == 1:
            return ir.Constant(_I64, 0), args[0], 1
        if len(args) == 2:
            return args[0], args[1], 1
        step = args[2]
        if not (isinstance(step, ir.Constant) and step.constant):
            raise Unsupported("range step")
        return args[0], args[1], int(step.constant)

    def _for(self, st, env, scope, mod):
        if st.orelse or not isinstance(st.target, ast.Name):
            raise Unsupported("for-else / unpacking loop")
        start, stop, step = self._range(st.iter, env, scope, mod)
        name = st.target.id
        var = self._store_var(scope + (name,), env, name, S(start, I64))
        if var.dt != I64:
            raise Unsupported("loop variable type")
        cond_bb = self.fn.append_basic_block("for.cond")
        body_bb = self.fn.append_basic_block("for.body")
        inc_bb = self.fn.append_basic_block("for.inc")
        end_bb = self.fn.append_basic_block("for.end")
        counter = self.alloca_b.alloca(_I64)      # the loop's own counter (the body may
        self.b.store(start, counter)              # assign the loop variable)
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        i = self.b.load(counter)
        c = self.b.icmp_signed("<" if step > 0 else ">", i, stop)
        self.b.cbranch(c, body_bb, end_bb)
        self.b.position_at_end(body_bb)
        self.b.store(i, var.slot)
        self._loop_body(st.body, env, scope, mod, inc_bb, end_bb)
        self.b.position_at_end(inc_bb)
        self.b.store(self.b.add(self.b.load(counter), ir.Constant(_I64, step)), counter)
        self.b.branch(cond_bb)
        self.b.position_at_end(end_bb)

    def _loop_body(self, body, env, scope, mod, continue_bb, break_bb):
        self.loop_depth += 1
        self.loops.append((continue_bb, break_bb))
        self.loop_branch.append(self.branch_depth)
        self.loop_continues.append(_has_continue(body))
        self._block(body, env, scope, mod)
        self.loop_continues.pop()
        self.loop_branch.pop()
        self.loops.pop()
        self.loop_depth -= 1
        if not self.b.block.is_terminated:
            self.b.branch(continue_bb)

    def _while(self, st, env, scope, mod):
        if st.orelse:
            raise Unsupported("while-else")
        cond_bb = self.fn.append_basic_block("while.cond")
        body_bb = self.fn.append_basic_block("while.body")
        end_bb = self.fn.append_basic_block("while.end")
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        self.b.cbranch(self._truth(self._scalar(st.test, env, scope, mod)), body_bb, end_bb)
        self.b.position_at_end(body_bb)
        self._loop_body(st.body, env, scope, mod, cond_bb, end_bb)
        self.b.position_at_end(end_bb)

    def _if(self, st, env, scope, mod):
        c = self._truth(self._scalar(st.test, env, scope, mod))
        then_bb = self.fn.append_basic_block("if.then")
        else_bb = self.fn.append_basic_block("if.else")
        end_bb = self.fn.append_basic_block("if.end")
        self.b.cbranch(c, then_bb, else_bb)
        self.branch_depth += 1
        for bb, body in ((then_bb, st.body), (else_bb, st.orelse)):
            self.b.position_at_end(bb)
            self._block(body, env, scope, mod)
            if not self.b.block.is_terminated:
                self.b.branch(end_bb)
        self.branch_depth -= 1
        self.b.position_at_end(end_bb)

    def _return(self, st, env, scope, mod):
        if self.kind == "sub":
            return self._sub_return(st, env, scope, mod)
        if self.kind == "inline":
            if st.value is None:
                raise Unsupported("helper without a value")
            v = self._expr(st.value, env, scope, mod)
            self.ret_values.append((v, self.b.block))
            self.b.branch(self.ret_bb)
            return
        # the kernel's return: every output into its buffer
        for k, (e, aval) in enumerate(zip(self.ret_elts, self.out_avals)):
            if isinstance(e, ast.Name) and self.out_bind.get(e.id) == k:
                continue
            v = self._expr(e, env, scope, mod)
            dt = np.dtype(aval.dtype)
            dst = self.b.bitcast(self.outs[k], _mem_ll(dt).as_pointer())
            if isinstance(v, S):
                self.b.store(self._to_mem(self.cast(v, dt).v, dt), dst)
            elif isinstance(v, A):
                if v.size != int(np.prod(aval.shape, dtype=np.int64)):
                    raise Unsupported("output shape")
                self._copy(v, A(dst, dt, aval.shape))
            else:
                raise Unsupported("returned value")
        if self.ws_size > STACK_WORKSPACE_MAX:
            fr = self._declare("free", ir.FunctionType(ir.VoidType(), [_VOIDP]))
            self.b.call(fr, [self.b.load(self.ws_slot)])
        self.b.ret_void()
        raise _Return()

    def _copy(self, src, dst):
        """dst[...] = src[...] element by element (same size, C order), with casts."""
        n = src.size
        self._loop(n, lambda i: self.b.store(
            self._to_mem(self.cast(S(self._from_mem(self.b.load(self.b.gep(src.ptr, [i])),
                                                    src.dt), src.dt), dst.dt).v, dst.dt),
            self.b.gep(dst.ptr, [i])))

    def _loop(self, n, body):
        """``for i in range(n): body(i)`` with a fresh counter."""
        slot = self.alloca_b.alloca(_I64)
        self.b.store(ir.Constant(_I64, 0), slot)
        cond_bb = self.fn.append_basic_block("l.cond")
        body_bb = self.fn.append_basic_block("l.body")
        end_bb = self.fn.append_basic_block("l.end")
        self.b.branch(cond_bb)
        self.b.position_at_end(cond_bb)
        i = self.b.load(slot)
        self.b.cbranch(self.b.icmp_signed("<", i, ir.Constant(_I64, n)), body_bb, end_bb)
        self.b.position_at_end(body_bb)
        body(i)
        self.b.store(self.b.add(self.b.load(slot), ir.Constant(_I64, 1)), slot)
        self.b.branch(cond_bb)
        self.b.position_at_end(end_bb)

    # ------------------------------------------------------------------ expressions
    def _scalar(self, node, env, scope, mod):
        v = self._expr(node, env, scope, mod)
        if not isinstance(v, S):
            raise Unsupported("a scalar was expected")
        return v

    def _truth(self, v):
        if v.dt == BOOL:
            return v.v
        if _is_float(v.dt):
            return self.b.fcmp_unordered("!=", v.v, ir.Constant(v.v.type, 0.0))
        return self.b.icmp_unsigned("!=", v.v, ir.Constant(v.v.type, 0))

    def cast(self, v, dt):
        dt = np.dtype(dt)
        if v.dt == dt:
            return v
        b, x, src = self.b, v.v, v.dt
        t = _ll(dt)
        if dt == BOOL:
            return S(self._truth(v), BOOL)
        if src == BOOL:
            return S(b.uitofp(x, t) if _is_float(dt) else b.zext(x, t), dt)
        if _is_float(src) and _is_float(dt):
            return S(b.fpext(x, t) if dt.itemsize > src.itemsize else b.fptrunc(x, t), dt)
        if _is_float(src):
            return S(b.fptosi(x, t) if dt.kind == "i" else b.fptoui(x, t), dt)
        if _is_float(dt):
            return S(b.sitofp(x, t) if src.kind == "i" else b.uitofp(x, t), dt)
        if dt.itemsize == src.itemsize:
            return S(x, dt)
        if dt.itemsize < src.itemsize:
            return S(b.trunc(x, t), dt)
        return S(b.sext(x, t) if src.kind == "i" else b.zext(x, t), dt)

    def _const(self, value):
        if isinstance(value, (bool, np.bool_)):
            return S(ir.Constant(_I1, int(bool(value))), BOOL)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            dt = np.dtype(type(value)) if isinstance(value, np.integer) else I64
            if not isinstance(value, np.integer) and not -2**63 <= value < 2**63:
                raise Unsupported("integer literal out of int64")
            return S(ir.Constant(_ll(dt), int(value)), dt, lit=not isinstance(value, np.integer))
        if isinstance(value, (float, np.floating)):
            dt = np.dtype(type(value)) if isinstance(value, np.floating) else F64
            return S(ir.Constant(_ll(dt), float(value)), dt)
        raise Unsupported(f"constant {type(value).__name__}")

    def _global(self, name, mod):
        """A name of module ``mod``: a value, a helper function, or an intrinsic."""
        if name in mod.functions:
            return Func(mod.functions[name], mod, mod is self.kmod or mod.name in self.pieces)
        if name in mod.imports:
            src, orig = mod.imports[name]
            if src in self.pieces:
                pm = self.piece_mods.get(src)
                if pm is None:
                    pm = self.piece_mods[src] = self._kernel_module(src, self.pieces[src])
                return self._global(orig, pm)
            if src == "numba_intrinsics" and orig in _INTRINSICS:
                return ("intrinsic", orig)
            if src == "numba_runtime" and orig in _c_abi():
                return ("cabi", orig)
            if src in ("numba_math", "numba_runtime", "trig_reduction", "numba_intrinsics"):
                return self._global(orig, source_module(src))
            raise Unsupported(f"name {name} from {src}")
        if name in mod.values and name != "np":
            return mod.values[name]
        if name in ("range", "prange", "min", "max", "abs", "float", "int", "bool",
                    "np", "True", "False"):
            return ("builtin", name)
        raise Unsupported(f"unknown name {name}")

    def _expr(self, node, env, scope, mod, out=None):
        b = self.b
        if isinstance(node, ast.Constant):
            return self._const(node.value)
        if isinstance(node, ast.Name):
            v = env.get(node.id)
            if isinstance(v, Var):
                return S(b.load(v.slot), v.dt)
            if isinstance(v, ArrayVar):
                return A(b.bitcast(b.load(v.slot), _mem_ll(v.dt).as_pointer()), v.dt, v.shape,
                         v.own)
            if v is not None:
                return v
            g = self._global(node.id, mod)
            if isinstance(g, (int, float, bool, np.number, np.bool_)):
                return self._const(g)
            if isinstance(g, np.ndarray):
                return self._table(node.id, g, mod)
            if isinstance(g, tuple) and all(isinstance(x, (int, float, np.number)) for x in g) \
                    and g and g[0] not in ("builtin", "intrinsic"):
                return tuple(self._const(x) for x in g)
            raise Unsupported(f"name {node.id}")
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self._expr(node.left, env, scope, mod),
                               self._expr(node.right, env, scope, mod))
        if isinstance(node, ast.UnaryOp):
            v = self._scalar(node.operand, env, scope, mod)
            if isinstance(node.op, ast.USub):
                if v.dt == BOOL:
                    v = self.cast(v, I64)
                if v.lit and isinstance(v.v, ir.Constant):
                    return S(ir.Constant(v.v.type, _wrap64(-v.v.constant)), v.dt, True)
                r = b.fneg(v.v, flags=self._flags()) if _is_float(v.dt) else b.neg(v.v)
                return S(r, v.dt, v.lit)
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, ast.Not):
                return S(b.not_(self._truth(v)), BOOL)
            if isinstance(node.op, ast.Invert):
                if _is_float(v.dt):
                    raise Unsupported("~ of a float")
                if v.dt == BOOL:        # Numba (Python): ~True == -2
                    v = self.cast(v, I64)
                return S(b.not_(v.v), v.dt)
        if isinstance(node, ast.Compare):      # a < b < c: (a < b) & (b < c), b once
            left = self._scalar(node.left, env, scope, mod)
            res = None
            for op, right in zip(node.ops, node.comparators):
                right = self._scalar(right, env, scope, mod)
                c = self._compare(op, left, right).v
                res = c if res is None else b.and_(res, c)
                left = right
            return S(res, BOOL)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node, env, scope, mod)
        if isinstance(node, ast.IfExp):
            c = self._truth(self._scalar(node.test, env, scope, mod))
            x = self._scalar(node.body, env, scope, mod)
            y = self._scalar(node.orelse, env, scope, mod)
            dt = _promote(x.dt, y.dt)
            return S(b.select(c, self.cast(x, dt).v, self.cast(y, dt).v), dt)
        if isinstance(node, ast.Subscript):
            base = self._expr(node.value, env, scope, mod)
            if isinstance(base, tuple):
                if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int)):
                    raise Unsupported("tuple index")
                return base[node.slice.value]
            if not isinstance(base, A):
                raise Unsupported("subscript of a scalar")
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if 0 < len(idx) < len(base.shape):       # A[i]: the sub-array (a view)
                rest = base.shape[len(idx):]
                sub = A(base.ptr, base.dt, base.shape[:len(idx)], base.own)
                off = self._offset(sub, idx, env, scope, mod)
                step = int(np.prod(rest, dtype=np.int64))
                return A(b.gep(base.ptr, [b.mul(off, ir.Constant(_I64, step))]), base.dt, rest,
                         base.own)
            ptr = self._element(base, node.slice, env, scope, mod)
            return S(self._from_mem(b.load(ptr), base.dt), base.dt)
        if isinstance(node, ast.Tuple):
            return tuple(self._expr(e, env, scope, mod) for e in node.elts)
        if isinstance(node, ast.Call):
            return self._call(node, env, scope, mod, out)
        if isinstance(node, ast.Attribute):
            if node.attr == "shape" and not (isinstance(node.value, ast.Name) and
                                             node.value.id == "np"):
                base = self._expr(node.value, env, scope, mod)
                if isinstance(base, A):
                    return tuple(S(ir.Constant(_I64, n), I64, True) for n in base.shape)
            if isinstance(node.value, ast.Name) and node.value.id == "np":
                if node.attr in ("inf", "nan", "pi", "e"):
                    return self._const(float(getattr(np, node.attr)))
            raise Unsupported(f"attribute {node.attr}")
        raise Unsupported(f"expression {type(node).__name__}")

    def _flags(self):
        return _FAST if self.fast else ()

    def _table(self, name, arr, mod):
        """A module's constant numpy array as an LLVM global (a lookup table)."""
        key = f"tab.{mod.name}.{name}"
        g = self.module.globals.get(key)
        arr = np.ascontiguousarray(arr)
        dt = arr.dtype
        if g is None:
            ty = ir.ArrayType(_mem_ll(dt), arr.size)
            g = ir.GlobalVariable(self.module, ty, name=key)
            g.global_constant = True
            g.linkage = "internal"
            g.initializer = ir.Constant(ty, [int(x) if _is_int(dt) else float(x)
                                             for x in arr.ravel()])
        return A(self.b.gep(g, [ir.Constant(_I32, 0), ir.Constant(_I32, 0)]), dt, arr.shape,
                 own=False)

    def _element(self, arr, index, env, scope, mod):
        idx = list(index.elts) if isinstance(index, ast.Tuple) else [index]
        if len(idx) != len(arr.shape) and not (arr.shape == () and len(idx) == 1):
            raise Unsupported("partial indexing")
        return self.b.gep(arr.ptr, [self._offset(arr, idx, env, scope, mod)])

    def _offset(self, arr, idx, env, scope, mod):
        """The element offset of index expressions ``idx`` in ``arr`` (C order)."""
        off = None
        stride = 1
        dims = arr.shape or (1,)
        for k in range(len(dims) - 1, -1, -1):
            node = idx[k]
            if isinstance(node, ast.Constant) and isinstance(node.value, int):
                c = node.value + (dims[k] if node.value < 0 else 0)
                term = ir.Constant(_I64, c * stride)
            else:
                i = self._scalar(node, env, scope, mod)
                if not _is_int(i.dt):
                    raise Unsupported("non-integer index")
                iv = self.cast(i, I64).v if i.dt != I64 else i.v
                if i.dt.kind == "i" and not i.lit:     # Numba wraps negative indices
                    neg = self.b.icmp_signed("<", iv, ir.Constant(_I64, 0))
                    iv = self.b.select(neg, self.b.add(iv, ir.Constant(_I64, dims[k])), iv)
                term = iv if stride == 1 else self.b.mul(iv, ir.Constant(_I64, stride))
            off = term if off is None else self.b.add(off, term)
            stride *= dims[k]
        return off

    def _compare(self, op, x, y):
        b = self.b
        dt = _promote(x.dt, y.dt)
        if dt == BOOL:
            dt = I64 if not isinstance(op, (ast.Eq, ast.NotEq)) else BOOL
        xv, yv = self.cast(x, dt).v, self.cast(y, dt).v
        sym = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
               ast.NotEq: "!="}.get(type(op))
        if sym is None:
            raise Unsupported("comparison operator")
        if _is_float(dt):
            r = b.fcmp_unordered(sym, xv, yv) if sym == "!=" else b.fcmp_ordered(sym, xv, yv)
        elif dt.kind == "u" or dt == BOOL:
            r = b.icmp_unsigned(sym, xv, yv)
        else:
            r = b.icmp_signed(sym, xv, yv)
        return S(r, BOOL)

    def _boolop(self, node, env, scope, mod):
        """``and``/``or`` with Python's short circuit, over truth values."""
        res = self.alloca_b.alloca(_I1)
        end_bb = self.fn.append_basic_block("bool.end")
        is_and = isinstance(node.op, ast.And)
        for k, e in enumerate(node.values):
            v = self._truth(self._scalar(e, env, scope, mod))
            self.b.store(v, res)
            if k == len(node.values) - 1:
                self.b.branch(end_bb)
            else:
                nxt = self.fn.append_basic_block("bool.next")
                if is_and:
                    self.b.cbranch(v, nxt, end_bb)
                else:
                    self.b.cbranch(v, end_bb, nxt)
                self.b.position_at_end(nxt)
        self.b.position_at_end(end_bb)
        return S(self.b.load(res), BOOL)

    def _binop(self, op, x, y):
        if not (isinstance(x, S) and isinstance(y, S)):
            raise Unsupported("array arithmetic")
        b, fl = self.b, self._flags()
        if isinstance(op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            dt = _promote(x.dt, y.dt)
            if _is_float(dt):
                raise Unsupported("bitwise op of floats")
            xv, yv = self.cast(x, dt).v, self.cast(y, dt).v
            f = {ast.BitAnd: b.and_, ast.BitOr: b.or_, ast.BitXor: b.xor}[type(op)]
            return S(f(xv, yv), dt)
        if isinstance(op, (ast.LShift, ast.RShift)):
            dt = _promote(x.dt, y.dt)
            if not _is_int(dt):
                raise Unsupported("shift of a non-integer")
            xv, yv = self.cast(x, dt).v, self.cast(y, dt).v
            if isinstance(op, ast.LShift):
                return S(b.shl(xv, yv), dt)
            return S(b.ashr(xv, yv) if dt.kind == "i" else b.lshr(xv, yv), dt)
        if isinstance(op, ast.Div):
            dt = _promote(x.dt, y.dt)
            if not _is_float(dt):
                dt = F64
            return S(b.fdiv(self.cast(x, dt).v, self.cast(y, dt).v, flags=fl), dt)
        dt = _promote(x.dt, y.dt)
        if dt == BOOL:
            dt = I64
        xv, yv = self.cast(x, dt).v, self.cast(y, dt).v
        lit = x.lit and y.lit
        if lit and dt == I64 and isinstance(xv, ir.Constant) and isinstance(yv, ir.Constant):
            folded = _fold_int(op, xv.constant, yv.constant)     # shapes such as 3 * 4
            if folded is not None:
                return S(ir.Constant(_I64, folded), I64, True)
        if isinstance(op, ast.Pow):
            if not _is_float(dt):
                raise Unsupported("integer power")
            return S(b.call(self._intrinsic("llvm.pow", dt, 2), [xv, yv]), dt)
        if _is_float(dt):
            if isinstance(op, ast.Add):
                return S(b.fadd(xv, yv, flags=fl), dt)
            if isinstance(op, ast.Sub):
                return S(b.fsub(xv, yv, flags=fl), dt)
            if isinstance(op, ast.Mult):
                return S(b.fmul(xv, yv, flags=fl), dt)
            raise Unsupported("float // or % outside numba_runtime's helpers")
        if isinstance(op, ast.Add):
            return S(b.add(xv, yv), dt, lit)
        if isinstance(op, ast.Sub):
            return S(b.sub(xv, yv), dt, lit)
        if isinstance(op, ast.Mult):
            return S(b.mul(xv, yv), dt, lit)
        if isinstance(op, (ast.FloorDiv, ast.Mod)):
            return S(self._int_divmod(xv, yv, dt, isinstance(op, ast.Mod)), dt)
        raise Unsupported("binary operator")

    def _int_divmod(self, x, y, dt, mod):
        """Python's floor division / modulo of integers; 0 for a zero divisor (numpy)."""
        b = self.b
        t = x.type
        zero = ir.Constant(t, 0)
        yz = b.icmp_unsigned("==", y, zero)
        one = ir.Constant(t, 1)
        ys = b.select(yz, one, y)              # no trap on a zero divisor
        if dt.kind == "u":
            r = b.urem(x, ys) if mod else b.udiv(x, ys)
            return b.select(yz, zero, r)
        # x == INT_MIN and y == -1 would trap (SIGFPE): divide by 1 and negate (numpy wraps)
        ym1 = b.icmp_signed("==", y, ir.Constant(t, -1))
        ys = b.select(ym1, one, ys)
        q = b.select(ym1, b.neg(x), b.sdiv(x, ys))
        r = b.srem(x, ys)
        adj = b.and_(b.icmp_signed("!=", r, zero),
                     b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                   b.icmp_signed("<", ys, zero)))
        if mod:
            res = b.select(adj, b.add(r, ys), r)
        else:
            res = b.select(adj, b.sub(q, one), q)
        return b.select(yz, zero, res)

    # ------------------------------------------------------------------ calls
    def _call(self, node, env, scope, mod, out=None):
        f = node.func
        if node.keywords:
            raise Unsupported("keyword arguments")
        if isinstance(f, ast.Attribute):
            if isinstance(f.value, ast.Name) and f.value.id == "np" and f.value.id not in env:
                return self._np_call(f.attr, node.args, env, scope, mod, out)
            base = self._expr(f.value, env, scope, mod)
            if isinstance(base, A) and f.attr == "reshape":
                shape = self._shape_arg(node.args, env, scope, mod)
                if int(np.prod(shape, dtype=np.int64)) != base.size:
                    raise Unsupported("reshape size")
                return A(base.ptr, base.dt, shape, base.own)
            if isinstance(base, A) and f.attr == "fill" and len(node.args) == 1:
                fv = self._to_mem(self.cast(self._scalar(node.args[0], env, scope, mod),
                                            base.dt).v, base.dt)
                self._loop(base.size, lambda i: self.b.store(fv, self.b.gep(base.ptr, [i])))
                return None
            if isinstance(base, A) and f.attr == "astype" and len(node.args) == 1:
                dst = self._out_array(out, self._dtype_arg(node.args[0]), base.shape)
                self._copy(base, dst)
                return dst
            if isinstance(base, A) and f.attr == "copy" and not node.args:
                dst = self._out_array(out, base.dt, base.shape)
                self._copy(base, dst)
                return dst
            if isinstance(base, S) and f.attr in ("real", "conjugate"):
                return base
            raise Unsupported(f"method {f.attr}")
        if not isinstance(f, ast.Name):
            raise Unsupported("call of an expression")
        if f.id == "matmul_into" and f.id not in env:
            return self._matmul(node.args, env, scope, mod)
        g = env.get(f.id)
        if g is None:
            g = self._global(f.id, mod)
        if isinstance(g, Func):
            args = [self._expr(a, env, scope, mod) for a in node.args]
            return self._call_sub(g, args) if g.fast else self._inline(g, args)
        if isinstance(g, tuple) and g[0] == "intrinsic":
            return self._intrinsic_call(g[1], node.args, env, scope, mod)
        if isinstance(g, tuple) and g[0] == "builtin":
            return self._builtin(g[1], node.args, env, scope, mod)
        if isinstance(g, tuple) and g[0] == "cabi":
            return self._cabi_call(g[1], node.args, env, scope, mod)
        raise Unsupported(f"call of {f.id}")

    def _cabi_call(self, name, args, env, scope, mod):
        """A call of a ``numba_runtime`` helper through its C entry point (its ``C_ABI``
        row: arrays as data pointer and dimensions, int64 scalars, results through
        pointers). The object code names it ``autodiff_cabi_<name>_<dtype>``; the process
        that loads the code binds that symbol to the Numba-compiled wrapper
        (:func:`_bind_c_entries`), so the kernel itself needs no Numba to compile."""
        kinds = _c_abi()[name]
        vals = [self._expr(a, env, scope, mod) for a in args]
        if len(vals) != sum(k[0] in "ai" for k in kinds):
            raise Unsupported(f"{name}: arguments")
        dts = {v.dt for v in vals if isinstance(v, A)}
        if len(dts) != 1 or next(iter(dts)).name not in _c_abi_dtypes():
            raise Unsupported(f"{name} of {sorted(d.name for d in dts)}")
        dt = dts.pop()
        b = self.b
        types_, cargs, outs = [], [], []
        it = iter(vals)
        for k in kinds:
            if k[0] == "a":
                v = next(it)
                if not isinstance(v, A) or len(v.shape) != int(k[1:]):
                    raise Unsupported(f"{name}: an array argument")
                types_ += [_VOIDP] + [_I64] * len(v.shape)
                cargs += [b.bitcast(v.ptr, _VOIDP)] + [ir.Constant(_I64, d) for d in v.shape]
            elif k == "i":
                v = next(it)
                if not isinstance(v, S) or not (_is_int(v.dt) or v.dt == BOOL):
                    raise Unsupported(f"{name}: an integer argument")
                types_.append(_I64)
                cargs.append(self.cast(v, I64).v)
            elif k[0] in "oO":           # an array result shaped as the first argument
                first = next(v for v in vals if isinstance(v, A))
                if len(first.shape) != int(k[1:]):
                    raise Unsupported(f"{name}: an array result")
                out = self._alloc(dt if k[0] == "o" else I64, first.shape)
                types_ += [_VOIDP] + [_I64] * len(first.shape)
                cargs += [b.bitcast(out.ptr, _VOIDP)] + [ir.Constant(_I64, d)
                                                         for d in first.shape]
                outs.append(out)
            else:
                rdt = dt if k == "r" else F64
                slot = self.alloca_b.alloca(_mem_ll(rdt))
                types_.append(_VOIDP)
                cargs.append(b.bitcast(slot, _VOIDP))
                outs.append((slot, rdt))
        fn = self._declare(f"{_CABI_PREFIX}{name}_{dt.name}",
                           ir.FunctionType(ir.VoidType(), types_))
        b.call(fn, cargs)
        res = tuple(o if isinstance(o, A) else S(self._from_mem(b.load(o[0]), o[1]), o[1])
                    for o in outs)
        return None if not res else res[0] if len(res) == 1 else res

    def _matmul(self, args, env, scope, mod):
        """``matmul_into(a, b, out, flags)`` (blas_pool's contract: ``out = op(a) @ op(b)``,
        flags bit 1 transposes a, bit 2 b): loops in the kernel for small products, numpy's
        CBLAS for the others, the GEMM pool (through its hook word) for those worth its
        threads."""
        if len(args) != 4:
            raise Unsupported("matmul_into arguments")
        a, bm, out = (self._expr(x, env, scope, mod) for x in args[:3])
        fl = self._scalar(args[3], env, scope, mod)
        if not (isinstance(a, A) and isinstance(bm, A) and isinstance(out, A) and
                isinstance(fl.v, ir.Constant)):
            raise Unsupported("matmul_into operands")
        if not (len(a.shape) == len(bm.shape) == len(out.shape) == 2) or \
                not (a.dt == bm.dt == out.dt) or a.dt not in (F64, F32):
            raise Unsupported("matmul_into shapes or dtypes")
        flags = int(fl.v.constant)
        ta, tb = bool(flags & 1), bool(flags & 2)
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        k2, n = (bm.shape[1], bm.shape[0]) if tb else bm.shape
        if k != k2 or out.shape != (m, n):
            raise Unsupported("matmul_into shapes")
        big = 2 * m * n * k >= _GEMM_POOL_FLOPS
        if big and _cblas() is None:
            raise Unsupported("a large product without CBLAS")
        b = self.b
        if not big and (m * n * k <= GEMM_INLINE_MAX or _cblas() is None):
            # a loop nest of its own per shape (noinline, shared by every product of that
            # shape: an unrolled net's products compile once, not once per step)
            fn = self._small_gemm(a.dt, a.shape, bm.shape, ta, tb, m, n, k)
            b.call(fn, [b.bitcast(x.ptr, _VOIDP) for x in (a, bm, out)])
            return None
        bits = _cblas()[0]
        it = _I64 if bits == 64 else _I32
        t = _ll(a.dt)
        fnty = ir.FunctionType(ir.VoidType(), [_I32, _I32, _I32, it, it, it, t, _VOIDP, it,
                                               _VOIDP, it, t, _VOIDP, it])
        fn = self._declare("autodiff_cblas_dgemm" if a.dt == F64 else "autodiff_cblas_sgemm",
                           fnty)
        c32 = lambda v: ir.Constant(_I32, v)          # noqa: E731
        ci = lambda v: ir.Constant(it, v)             # noqa: E731

        def cblas():
            b.call(fn, [c32(101), c32(112 if ta else 111), c32(112 if tb else 111), ci(m),
                        ci(n), ci(k), ir.Constant(t, 1.0), b.bitcast(a.ptr, _VOIDP),
                        ci(a.shape[1]), b.bitcast(bm.ptr, _VOIDP), ci(bm.shape[1]),
                        ir.Constant(t, 0.0), b.bitcast(out.ptr, _VOIDP), ci(n)])
        if not big:
            cblas()
            return None
        # A product worth the GEMM pool's threads calls it through the process's hook word
        # (blas_pool.gemm_pool_entry, set once the pool is loaded: attach_gemm_pool); until
        # then it runs as numpy's own matmul would, CBLAS with OpenBLAS's threads.
        hook = self.module.globals.get(_HOOK_SYMBOL)
        if hook is None:
            hook = ir.GlobalVariable(self.module, _I64, _HOOK_SYMBOL)
        h = b.load(hook)
        c64 = lambda v: ir.Constant(_I64, v)          # noqa: E731
        with b.if_else(b.icmp_unsigned("!=", h, c64(0))) as (pool, otherwise):
            with pool:
                pty = ir.FunctionType(ir.VoidType(), [_I64] * 8).as_pointer()
                b.call(b.inttoptr(h, pty),
                       [c64(a.dt.itemsize), c64(flags & 3), c64(m), c64(n), c64(k)] +
                       [b.ptrtoint(x.ptr, _I64) for x in (a, bm, out)])
            with otherwise:
                cblas()
        return None

    def _small_gemm(self, dt, ashape, bshape, ta, tb, m, n, k):
        name = (f"{self.symbol}.gemm.{dt.name}.{ashape[0]}x{ashape[1]}.{bshape[0]}x{bshape[1]}"
                f".{int(ta)}{int(tb)}")
        fn = self.module.globals.get(name)
        if fn is not None:
            return fn
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [_VOIDP] * 3), name=name)
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        fn.attributes.add("nounwind")
        saved = {key: getattr(self, key, None) for key in self._STATE}
        try:
            self.fn = fn
            entry_bb = fn.append_basic_block("entry")
            body_bb = fn.append_basic_block("body")
            self.alloca_b = ir.IRBuilder(entry_bb)
            self.alloca_b.position_before(self.alloca_b.branch(body_bb))
            self.b = b = ir.IRBuilder(body_bb)
            t = _mem_ll(dt).as_pointer()
            pa, pb, po = (b.bitcast(x, t) for x in fn.args)

            def at(ptr, cols, trans, r, c):
                i, j = (c, r) if trans else (r, c)
                return b.gep(ptr, [b.add(b.mul(i, ir.Constant(_I64, cols)), j)])

            def row(i):
                def col(j):
                    acc = self.alloca_b.alloca(_ll(dt))
                    b.store(ir.Constant(_ll(dt), 0.0), acc)

                    def inner(p):
                        x = b.load(at(pa, ashape[1], ta, i, p))
                        y = b.load(at(pb, bshape[1], tb, p, j))
                        b.store(b.fadd(b.load(acc), b.fmul(x, y, flags=_FAST), flags=_FAST), acc)
                    self._loop(k, inner)
                    b.store(b.load(acc), b.gep(po, [b.add(b.mul(i, ir.Constant(_I64, n)), j)]))
                self._loop(n, col)
            self._loop(m, row)
            b.ret_void()
        finally:
            for key, v in saved.items():
                setattr(self, key, v)
        return fn

    def _shape_arg(self, args, env, scope, mod):
        if len(args) != 1:
            raise Unsupported("shape arguments")
        v = self._expr(args[0], env, scope, mod)
        v = v if isinstance(v, tuple) else (v,)
        shape = []
        for s in v:
            if not (isinstance(s, S) and isinstance(s.v, ir.Constant) and _is_int(s.dt)):
                raise Unsupported("a shape that is not constant")
            shape.append(int(s.v.constant))
        return tuple(shape)

    def _out_array(self, out, dt, shape):
        if out is not None:
            aval = self.out_avals[out]
            if np.dtype(aval.dtype) == dt and tuple(aval.shape) == tuple(shape):
                return A(self.b.bitcast(self.outs[out], _mem_ll(dt).as_pointer()), dt, shape)
            self.out_bind = {k: v for k, v in self.out_bind.items() if v != out}
        return self._alloc(dt, shape)

    def _dtype_arg(self, node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "np":
            try:
                return np.dtype(node.attr if node.attr != "bool_" else "bool")
            except TypeError:
                pass
        raise Unsupported("dtype argument")

    def _np_call(self, name, args, env, scope, mod, out):
        b = self.b
        if name in _CASTS:
            if len(args) != 1:
                raise Unsupported(f"np.{name} arguments")
            v = self._scalar(args[0], env, scope, mod)
            return self.cast(v, np.dtype("bool" if name == "bool_" else name))
        if name in ("empty", "zeros", "full"):
            shape = self._shape_arg(args[:1], env, scope, mod)
            dt = self._dtype_arg(args[-1])
            a = self._out_array(out, dt, shape)
            if name != "empty":
                fill = S(ir.Constant(_I64, 0), I64) if name == "zeros" else \
                    self._scalar(args[1], env, scope, mod)
                fv = self._to_mem(self.cast(fill, dt).v, dt)
                self._loop(a.size, lambda i: b.store(fv, b.gep(a.ptr, [i])))
            return a
        vals = [self._scalar(a, env, scope, mod) for a in args]
        if name in ("isnan", "isinf", "isfinite"):
            x = vals[0]
            if not _is_float(x.dt):
                return S(ir.Constant(_I1, int(name == "isfinite")), BOOL)
            if name == "isnan":
                return S(b.fcmp_unordered("uno", x.v, x.v), BOOL)
            ax = b.call(self._intrinsic("llvm.fabs", x.dt, 1), [x.v])
            inf = ir.Constant(x.v.type, float("inf"))
            return S(b.fcmp_ordered("==", ax, inf) if name == "isinf"
                     else b.fcmp_ordered("<", ax, inf), BOOL)
        if name == "abs" or name == "absolute":
            x = vals[0]
            if _is_float(x.dt):
                return S(b.call(self._intrinsic("llvm.fabs", x.dt, 1), [x.v]), x.dt)
            if x.dt == BOOL or x.dt.kind == "u":
                return x
            neg = b.icmp_signed("<", x.v, ir.Constant(x.v.type, 0))
            return S(b.select(neg, b.neg(x.v), x.v), x.dt)
        if name == "copysign":
            dt = _promote(vals[0].dt, vals[1].dt)
            dt = dt if _is_float(dt) else F64
            return S(b.call(self._intrinsic("llvm.copysign", dt, 2),
                            [self.cast(vals[0], dt).v, self.cast(vals[1], dt).v]), dt)
        float_dt = vals[0].dt if _is_float(vals[0].dt) else F64
        if len(vals) == 2:
            float_dt = _promote(vals[0].dt, vals[1].dt)
            float_dt = float_dt if _is_float(float_dt) else F64
        xs = [self.cast(v, float_dt).v for v in vals]
        if name in _LLVM_UNARY and len(xs) == 1:
            return S(b.call(self._intrinsic(_LLVM_UNARY[name], float_dt, 1), xs), float_dt)
        if name in _LIBM:
            sym = _LIBM[name][0 if float_dt == F64 else 1]
            t = _ll(float_dt)
            fn = self._declare(sym, ir.FunctionType(t, [t] * len(xs)))
            return S(b.call(fn, xs), float_dt)
        raise Unsupported(f"np.{name}")

    def _builtin(self, name, args, env, scope, mod):
        vals = [self._scalar(a, env, scope, mod) for a in args]
        b = self.b
        if name in ("min", "max") and len(vals) == 2:
            x, y = vals
            dt = _promote(x.dt, y.dt)
            xv, yv = self.cast(x, dt).v, self.cast(y, dt).v
            # Python: min(x, y) is y only when y < x (NaN in x stays)
            if _is_float(dt):
                c = b.fcmp_ordered("<" if name == "min" else ">", yv, xv)
            elif dt.kind == "u" or dt == BOOL:
                c = b.icmp_unsigned("<" if name == "min" else ">", yv, xv)
            else:
                c = b.icmp_signed("<" if name == "min" else ">", yv, xv)
            return S(b.select(c, yv, xv), dt)
        if name == "abs" and len(vals) == 1:
            return self._np_call("abs", args, env, scope, mod, None)
        if name in ("float", "int", "bool") and len(vals) == 1:
            return self.cast(vals[0], {"float": F64, "int": I64, "bool": BOOL}[name])
        raise Unsupported(f"builtin {name}")

    def _intrinsic_call(self, name, args, env, scope, mod):
        b = self.b
        if name == "select":
            c, x, y = (self._scalar(a, env, scope, mod) for a in args)
            if x.lit and _is_float(y.dt):
                dt = y.dt
            elif y.lit and _is_float(x.dt):
                dt = x.dt
            else:
                dt = _promote(x.dt, y.dt)
            return S(b.select(self._truth(c), self.cast(x, dt).v, self.cast(y, dt).v), dt)
        vals = [self._scalar(a, env, scope, mod) for a in args]
        bits = {"f64_as_i64": (F64, I64), "i64_as_f64": (I64, F64),
                "f32_as_i32": (F32, np.dtype("int32")), "i32_as_f32": (np.dtype("int32"), F32)}
        if name in bits:
            src, dst = bits[name]
            return S(b.bitcast(self.cast(vals[0], src).v, _ll(dst)), dst)
        dt = vals[0].dt
        for v in vals[1:]:
            dt = _promote(dt, v.dt)
        if not _is_float(dt):
            dt = F64
        xs = [self.cast(v, dt).v for v in vals]
        return S(b.call(self._intrinsic("llvm." + name, dt, len(xs)), xs), dt)

    _STATE = ("fn", "b", "alloca_b", "ws_slot", "ws_size", "loop_depth", "fast", "kind",
              "res_ptr", "res_spec", "loops", "branch_depth", "loop_branch", "loop_continues")

    def _call_sub(self, func, args):
        """A call of a kernel-module function or a shared loop nest: a function of its own
        (``noinline``: LLVM optimizes each once, in time linear in the program), compiled
        once per argument signature. ABI: ``void f(i8* ws, i8* res, args...)``, arrays as
        data pointers, results in 8-byte slots of ``res`` (arrays as pointers into ``ws``,
        the caller's workspace region of the callee's size)."""
        sig = []
        for a in args:
            if isinstance(a, A):
                sig.append(("A", a.dt.str, a.shape))
            elif isinstance(a, S):
                sig.append(("S", a.dt.str))
            else:
                raise Unsupported("a tuple passed to a function")
        key = (func.mod.name, func.node.name, tuple(sig))
        sub = self.subs.get(key)
        if sub is None:
            sub = self.subs[key] = self._compile_sub(func, args, len(self.subs))
        fn, ws_size, spec = sub
        b = self.b
        ws = self._region(ws_size)
        res = self.alloca_b.alloca(ir.ArrayType(_I64, max(len(spec), 1)))
        resp = b.bitcast(res, _VOIDP)
        cargs = [ws, resp]
        for a in args:
            cargs.append(b.bitcast(a.ptr, _VOIDP) if isinstance(a, A) else a.v)
        b.call(fn, cargs)
        out = []
        for k, sp in enumerate(spec):
            slot = b.gep(resp, [ir.Constant(_I64, 8 * k)])
            if sp[0] == "A":
                p = b.load(b.bitcast(slot, _VOIDP.as_pointer()))
                out.append(A(b.bitcast(p, _mem_ll(sp[1]).as_pointer()), sp[1], sp[2]))
            else:
                out.append(S(b.load(b.bitcast(slot, _ll(sp[1]).as_pointer())), sp[1]))
        return out[0] if spec.single else tuple(out)

    def _compile_sub(self, func, args, n):
        node = func.node
        params = [a.arg for a in node.args.args]
        if len(params) != len(args) or node.args.vararg or node.args.defaults:
            raise Unsupported(f"call of {node.name}")
        if not node.body or not isinstance(node.body[-1], ast.Return) or any(
                isinstance(x, ast.Return) for st in node.body[:-1] for x in ast.walk(st)):
            raise Unsupported(f"{node.name}: one return, at its end")
        saved = {k: getattr(self, k, None) for k in self._STATE}
        types = [_VOIDP, _VOIDP] + [_VOIDP if isinstance(a, A) else _ll(a.dt) for a in args]
        fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), types),
                         name=f"{self.symbol}.{node.name}.{n}")
        fn.linkage = "internal"
        fn.attributes.add("noinline")
        fn.attributes.add("nounwind")
        try:
            self.fn = fn
            entry_bb = fn.append_basic_block("entry")
            body_bb = fn.append_basic_block("body")
            self.alloca_b = ir.IRBuilder(entry_bb)
            self.b = ir.IRBuilder(body_bb)
            self.ws_slot = self.alloca_b.alloca(_VOIDP, name="ws")
            self.alloca_b.store(fn.args[0], self.ws_slot)
            self.alloca_b.position_before(self.alloca_b.branch(body_bb))
            self.ws_size, self.loop_depth, self.fast, self.kind = 0, 0, True, "sub"
            self.branch_depth = 0
            self.loops, self.loop_branch, self.loop_continues = [], [], []
            self.res_ptr, self.res_spec = fn.args[1], None
            scope = ("s", n)
            env = {}
            for p, a, arg in zip(params, args, fn.args[2:]):
                if isinstance(a, A):
                    self._bind_array(env, p, A(self.b.bitcast(arg, _mem_ll(a.dt).as_pointer()),
                                               a.dt, a.shape, own=False))
                else:
                    self._store_var(scope + (p,), env, p, S(arg, a.dt))
            try:
                self._block(node.body, env, scope, func.mod)
            except _Return:
                pass
            result = (fn, self.ws_size, self.res_spec)
        finally:
            for k, v in saved.items():
                setattr(self, k, v)
        return result

    def _sub_return(self, st, env, scope, mod):
        v = self._expr(st.value, env, scope, mod) if st.value is not None else ()
        single = not isinstance(v, tuple)
        vals = [v] if single else list(v)
        spec = _Spec()
        spec.single = single
        b = self.b
        for k, x in enumerate(vals):
            slot = b.gep(self.res_ptr, [ir.Constant(_I64, 8 * k)])
            if isinstance(x, A):
                if not x.own:
                    # a parameter (or a view of one) handed back: a copy in this call's
                    # region, so that every result lives where its call site's turn says
                    dst = self._alloc(x.dt, x.shape)
                    self._copy(x, dst)
                    x = dst
                b.store(b.bitcast(x.ptr, _VOIDP), b.bitcast(slot, _VOIDP.as_pointer()))
                spec.append(("A", x.dt, x.shape))
            elif isinstance(x, S):
                b.store(x.v, b.bitcast(slot, _ll(x.dt).as_pointer()))
                spec.append(("S", x.dt))
            else:
                raise Unsupported("a function returning a nested tuple")
        self.res_spec = spec
        b.ret_void()
        raise _Return()

    def _inline(self, func, args):
        """Inline a helper's body: its parameters bound to ``args``; its returns branch to
        one join block. Helpers compute without fast-math flags (see numba_math)."""
        node = func.node
        params = [a.arg for a in node.args.args]
        if len(params) != len(args) or node.args.vararg or node.args.defaults:
            raise Unsupported(f"call of {node.name}")
        self.n_scope += 1
        scope = ("f", node.name, self.n_scope)
        env = {}
        saved = (self.fast, getattr(self, "ret_bb", None), getattr(self, "ret_values", None),
                 self.loop_depth, self.kind, self.loops)
        self.fast = False
        self.kind = "inline"
        self.loops = []
        self.ret_bb = self.fn.append_basic_block(f"ret.{node.name}")
        self.ret_values = []
        try:
            for p, a in zip(params, args):
                if isinstance(a, S):
                    self._store_var(scope + (p,), env, p, a)
                else:
                    env[p] = a
            self._block(node.body, env, scope, func.mod)
            if not self.b.block.is_terminated:
                raise Unsupported(f"{node.name} can end without a return")
            ret_bb, rets = self.ret_bb, self.ret_values
        finally:
            self.fast, self.ret_bb, self.ret_values, self.loop_depth, self.kind, self.loops = saved
        self.b.position_at_end(ret_bb)
        if not rets:
            raise Unsupported(f"{node.name} never returns")
        return self._join(rets)

    def _join(self, rets):
        """The value of a helper's returns, one phi per scalar (common type)."""
        first = rets[0][0]
        if isinstance(first, tuple):
            if any(not isinstance(v, tuple) or len(v) != len(first) for v, _ in rets):
                raise Unsupported("returns of different shapes")
            return tuple(self._join([(v[k], bb) for v, bb in rets]) for k in range(len(first)))
        if not all(isinstance(v, S) for v, _ in rets):
            raise Unsupported("a helper returning an array")
        if len(rets) == 1:
            return first
        dt = first.dt
        for v, _ in rets[1:]:
            dt = _promote(dt, v.dt)
        here = self.b.block
        vals = []
        for v, bb in rets:                 # Numba unifies the return types: cast in place
            if v.dt != dt:
                self.b.position_before(bb.terminator)
                v = self.cast(v, dt)
            vals.append((v.v, bb))
        self.b.position_at_end(here)
        phi = self.b.phi(_ll(dt))
        for v, bb in vals:
            phi.add_incoming(v, bb)
        return S(phi, dt)


# =====================================================================================
# Code generation and the callable
# =====================================================================================

_LLVM_LOCK = threading.RLock()
_JIT = []              # (target machine, the one execution engine every kernel is added to)


def _engine():
    """The process's execution engine (created once: an engine owns its target machine, and
    every kernel module is added to this one, as Numba does with its own)."""
    if not _JIT:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                          features=llvm.get_host_cpu_features().flatten(),
                                          opt=3, reloc="default", codemodel="jitdefault")
        owner = llvm.parse_assembly("")
        _JIT.append((tm, llvm.create_mcjit_compiler(owner, tm)))
    return _JIT[0]


def _array_data_offset():
    """The byte offset of the data pointer in numpy's array object (after the object
    header: 16 in CPython's default builds), checked on a live array; None if unknown."""
    a = np.zeros(3)
    for off in (16, 32):
        if ctypes.c_void_p.from_address(id(a) + off).value == a.ctypes.data:
            b = np.ones(5)
            if ctypes.c_void_p.from_address(id(b) + off).value == b.ctypes.data:
                return off
    return None


_DATA_OFF = _array_data_offset()
_PYAPI = {   # CPython functions the entry calls: name -> (restype, argtypes)
    "PyFloat_AsDouble": (_F64, [_VOIDP]), "PyLong_AsLongLong": (_I64, [_VOIDP]),
    "PyObject_IsTrue": (_I32, [_VOIDP]), "PyEval_SaveThread": (_VOIDP, []),
    "PyEval_RestoreThread": (ir.VoidType(), [_VOIDP]), "Py_IncRef": (ir.VoidType(), [_VOIDP]),
    "PyErr_Occurred": (_VOIDP, []), "PyFloat_FromDouble": (_VOIDP, [_F64]), "PyLong_FromLongLong": (_VOIDP, [_I64]),
    "PyLong_FromUnsignedLongLong": (_VOIDP, [_I64]), "PyBool_FromLong": (_VOIDP, [_I64]),
}


def _scalar_result(aval):
    """Whether the kernel's one result is a scalar the entry returns as a Python number."""
    return not aval.shape and np.dtype(aval.dtype) in _DT


def _add_python_entry(module, kernel_fn, param_avals, out_avals, name):
    """``PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t n)``: a
    ``METH_FASTCALL`` function taking the kernel's parameters (arrays, or Python/numpy
    scalars) and its output arrays; it reads their data pointers, runs the kernel with the
    GIL released (as Numba's ``nogil`` kernels do) and returns None, or the one scalar
    result as a Python number (then no output array is passed)."""
    n_out = len(out_avals)
    scalar_out = n_out == 1 and _scalar_result(out_avals[0])
    fnty = ir.FunctionType(_VOIDP, [_VOIDP, _VOIDP.as_pointer(), _I64])
    fn = ir.Function(module, fnty, name=name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    api = {n: ir.Function(module, ir.FunctionType(r, a), name="autodiff_py_" + n)
           for n, (r, a) in _PYAPI.items()}
    args = []
    for k in range(len(param_avals) + (0 if scalar_out else n_out)):
        obj = b.load(b.gep(fn.args[1], [ir.Constant(_I64, k)]))
        aval = param_avals[k] if k < len(param_avals) else None
        if aval is None or aval.shape:
            field = b.gep(obj, [ir.Constant(_I64, _DATA_OFF)])
            args.append(b.load(b.bitcast(field, _VOIDP.as_pointer())))
            continue
        dt = np.dtype(aval.dtype)
        slot = b.alloca(_mem_ll(dt))
        if _is_float(dt):
            v = b.call(api["PyFloat_AsDouble"], [obj])
            v = v if dt == F64 else b.fptrunc(v, _F32)
        elif dt == BOOL:
            v = b.trunc(b.call(api["PyObject_IsTrue"], [obj]), _I8)
        else:
            v = b.call(api["PyLong_AsLongLong"], [obj])
            v = v if dt.itemsize == 8 else b.trunc(v, _ll(dt))
        b.store(v, slot)
        args.append(b.bitcast(slot, _VOIDP))
        # a conversion that failed (a Python int beyond int64: OverflowError) returns NULL
        # with its exception, which jit turns into a clear error
        err = b.icmp_unsigned("!=", b.call(api["PyErr_Occurred"], []), ir.Constant(_VOIDP, None))
        with b.if_then(err, likely=False):
            b.ret(ir.Constant(_VOIDP, None))
    if scalar_out:
        dt = np.dtype(out_avals[0].dtype)
        res = b.alloca(_mem_ll(dt))
        args.append(b.bitcast(res, _VOIDP))
    state = b.call(api["PyEval_SaveThread"], [])
    b.call(kernel_fn, args)
    b.call(api["PyEval_RestoreThread"], [state])
    if scalar_out:
        v = b.load(res)
        if _is_float(dt):
            b.ret(b.call(api["PyFloat_FromDouble"], [v if dt == F64 else b.fpext(v, _F64)]))
        elif dt == BOOL:
            b.ret(b.call(api["PyBool_FromLong"], [b.zext(v, _I64)]))
        elif dt.kind == "u":
            b.ret(b.call(api["PyLong_FromUnsignedLongLong"], [v if dt.itemsize == 8
                                                              else b.zext(v, _I64)]))
        else:
            b.ret(b.call(api["PyLong_FromLongLong"], [v if dt.itemsize == 8
                                                      else b.sext(v, _I64)]))
        return fn
    # None by a symbol, not its address: the object code may come from another process
    none = module.globals.get("autodiff_py_None")
    if none is None:
        none = ir.GlobalVariable(module, _I8, name="autodiff_py_None")
    none = b.bitcast(none, _VOIDP)
    b.call(api["Py_IncRef"], [none])
    b.ret(none)
    return fn


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x80
_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


class FastKernel:
    """A kernel of this tier: ``entry_point(*params)`` returns the kernel's results as the
    Numba kernel would (one value, or a tuple of them). The call is a builtin function
    (``METH_FASTCALL``) compiled with the kernel: about as cheap as Numba's dispatch."""

    # its first call needs no blas_pool: large products reach the pool through a hook word
    # (attach_gemm_pool) once it has loaded
    gemm_pool = False

    def __init__(self, addr, param_avals, out_avals, key="", py_addr=None):
        # (its code lives in the process's one engine, as long as the process)
        self.key = key
        self.param_avals, self.out_avals = param_avals, out_avals
        outs = [(tuple(a.shape), np.dtype(a.dtype)) for a in out_avals]
        empty = np.empty
        if py_addr is not None:
            self._def = _MethodDef(b"autodiff_kernel", py_addr, _METH_FASTCALL, None)
            call = _new_cfunction(ctypes.addressof(self._def), None, None)
        else:                             # an unknown array layout: through ctypes
            n = len(param_avals) + len(out_avals)
            cfn = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * n))(addr)
            scalars = [None if a.shape else np.dtype(a.dtype) for a in param_avals]

            def call(*args):
                ptrs = [np.asarray(a, sd).ctypes.data if sd is not None else a.ctypes.data
                        for a, sd in zip(args, scalars + [None] * len(outs))]
                cfn(*ptrs)
        self._call = call
        if py_addr is not None and len(outs) == 1 and _scalar_result(out_avals[0]):
            self.entry_point = call         # the builtin returns the number itself
            return
        if len(outs) == 1:
            (shape, dt), = outs
            if shape:
                def entry_point(*args):
                    o = empty(shape, dt)
                    call(*args, o)
                    return o
            else:
                def entry_point(*args):
                    o = empty(shape, dt)
                    call(*args, o)
                    return o[()]
        else:
            def entry_point(*args):
                bufs = [empty(s, d) for s, d in outs]
                call(*args, *bufs)
                return tuple(o if o.ndim else o[()] for o in bufs)
        self.entry_point = entry_point


def compile_source(text, entry, param_avals, out_avals, pieces=()):
    """Compile kernel text to a :class:`FastKernel` (raises :class:`Unsupported`)."""
    symbol, obj = compile_object(text, entry, param_avals, out_avals, pieces)
    return load_object(symbol, obj, param_avals, out_avals)


def _symbol(text, entry, param_avals, out_avals, pieces):
    h = hashlib.sha256()
    for part in (text, entry, repr([(tuple(a.shape), np.dtype(a.dtype).str) for a in
                                    list(param_avals) + list(out_avals)]), repr(list(pieces))):
        h.update(part.encode())
        h.update(b"\0")
    return "autodiff_fast_" + h.hexdigest()[:24]


def compile_object(text, entry, param_avals, out_avals, pieces=()):
    """``(symbol, object code)`` of kernel text, for :func:`load_object` in this process or
    another (the compile worker's): the code names every address it needs by a symbol."""
    with _LLVM_LOCK:
        tm, engine = _engine()
        c = Compiler(text, entry, param_avals, out_avals, pieces)
        c.symbol = _symbol(text, entry, param_avals, out_avals, pieces)
        module = c.build()
        if _DATA_OFF is not None:
            _add_python_entry(module, c.fn, param_avals, out_avals, c.symbol + ".py")
        module.data_layout = str(tm.target_data)
        ir_text = str(module)
        try:
            mod = llvm.parse_assembly(ir_text)
            mod.verify()
        except RuntimeError as err:                  # a bug here: say so, let Numba compile
            raise Unsupported(f"invalid IR ({str(err)[:200]})") from None
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(tm, pto)
        pb.getModulePassManager().run(mod, pb)
        return c.symbol, tm.emit_object(mod)


_LOADED = {}       # symbol -> FastKernel (an object is added to the engine once)


def load_object(symbol, obj, param_avals, out_avals):
    """The :class:`FastKernel` of object code from :func:`compile_object`."""
    with _LLVM_LOCK:
        k = _LOADED.get(symbol)
        if k is not None:
            return k
        tm, engine = _engine()
        _register_symbols()
        _bind_c_entries(obj)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        addr = engine.get_function_address(symbol)
        py_addr = engine.get_function_address(symbol + ".py") if _DATA_OFF is not None \
            else None
        if not addr or (_DATA_OFF is not None and not py_addr):
            raise Unsupported("the object code lacks its kernel")
        k = _LOADED[symbol] = FastKernel(addr, param_avals, out_avals,
                                         "llvm-" + symbol[len("autodiff_fast_"):], py_addr)
    if _HOOK_SYMBOL.encode() in obj:
        attach_gemm_pool()
    return k


_CABI_PREFIX = "autodiff_cabi_"
_CABI_RE = re.compile(rb"autodiff_cabi_([a-z0-9_]+)_(float(?:64|32))\0")
_CABI_BOUND = set()


def _bind_c_entries(obj):
    """Bind the C entry points of ``numba_runtime`` helpers that object code ``obj`` calls
    (``autodiff_cabi_<name>_<dtype>``) to their wrappers in this process: compiled by Numba
    once per machine, then loaded from the disk cache (Numba is imported only here, by
    the first program that calls such a helper)."""
    todo = {(n.decode(), d.decode()) for n, d in _CABI_RE.findall(obj)}
    todo = {(n, d) for n, d in todo if f"{_CABI_PREFIX}{n}_{d}" not in _CABI_BOUND}
    if not todo:
        return
    from .compile_cache import prepare_numba
    prepare_numba()
    from . import numba_runtime
    for name, dtype in todo:
        sym = f"{_CABI_PREFIX}{name}_{dtype}"
        try:
            addr = numba_runtime.c_abi_address(name, dtype)
        except Exception as err:  # noqa: BLE001 - Numba compiles the program instead
            raise Unsupported(f"the C entry point {sym} ({type(err).__name__}: {err})") \
                from None
        llvm.add_symbol(sym, addr)
        _CABI_BOUND.add(sym)


# The hook word large products call through (0: CBLAS as numpy's matmul runs it), and its
# symbol; registered with the engine like the C functions below, so object code from the
# compile worker needs no Numba to load.
_HOOK_SYMBOL = "autodiff_gemm_hook"
_HOOK = np.zeros(1, np.int64)
_ATTACH = []
_ATTACH_LOCK = threading.Lock()


def attach_gemm_pool(wait=False):
    """Route this tier's large products through blas_pool's threads from now on.

    The pool is Numba code (its helpers compile once per machine, then load from the disk
    cache in ~0.4 s), so the first kernel that needs it starts a daemon thread that loads it
    and sets the hook word; the kernel does not wait: until the hook is set its large
    products run on CBLAS with OpenBLAS's own threads, as ``a @ b`` in numpy does. ``wait``
    blocks until the pool is attached (or failed to load) and returns whether it is.

    >>> from autodiff.backends import llvm_cpu
    >>> llvm_cpu.attach_gemm_pool(wait=True)
    True
    """
    with _ATTACH_LOCK:
        if not _ATTACH:
            t = threading.Thread(target=_load_gemm_pool, name="autodiff-gemm-pool",
                                 daemon=True)
            _ATTACH.append(t)
            t.start()
        t = _ATTACH[0]
    if wait:
        t.join()
    return bool(_HOOK[0])


def _load_gemm_pool():
    try:
        from .compile_cache import prepare_numba
        prepare_numba()
        from . import blas_pool
        if not blas_pool.HAVE_CBLAS:
            return
        blas_pool.ensure_started()
        _HOOK[0] = blas_pool.gemm_pool_entry.address
    except Exception as err:  # noqa: BLE001 - the kernels keep calling CBLAS; say why
        import logging
        logging.getLogger("autodiff.jit").warning(
            f"the GEMM pool did not load ({type(err).__name__}: {err}); large products in "
            f"kernels of the LLVM tier run on OpenBLAS's own threads")


_SYMBOLS_DONE = False
# blas_pool.FLOPS_PER_THREAD: from here on a product is worth the pool's threads (Numba's)
_GEMM_POOL_FLOPS = 8_000_000
_CBLAS = []


def _cblas():
    """(int bits, dgemm address, sgemm address) of numpy's OpenBLAS, or None."""
    if not _CBLAS:
        from .openblas import find_numpy_cblas
        try:
            found = find_numpy_cblas()
        except Exception:  # noqa: BLE001 - no usable library: products run as loops
            found = None
        _CBLAS.append(None if found is None else (found[2], found[0], found[1]))
    return _CBLAS[0]


def _register_symbols():
    """The C functions kernels call, by the names blas_pool gives them too."""
    global _SYMBOLS_DONE
    if _SYMBOLS_DONE:
        return
    llvm.add_symbol("autodiff_py_None", id(None))
    llvm.add_symbol(_HOOK_SYMBOL, _HOOK.ctypes.data)
    libc = ctypes.CDLL(None)
    for name in ("malloc", "free"):
        llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
    for name in _PYAPI:
        llvm.add_symbol("autodiff_py_" + name,
                        ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
    found = _cblas()
    if found is not None:
        llvm.add_symbol("autodiff_cblas_dgemm", found[1])
        llvm.add_symbol("autodiff_cblas_sgemm", found[2])
    _SYMBOLS_DONE = True


def supports(prog):
    """Whether ``prog`` is one this tier takes (shape-specialized, serial, no pieces)."""
    return (not len(prog.sizes) and not prog.parallel and "prange(" not in prog.source
            and not any("prange(" in src for _, src in prog.pieces))


def program_avals(prog):
    """The abstract values of a program's kernel parameters: its constants, then inputs."""
    jx = prog.jaxpr.jaxpr
    return [v.aval for v in list(jx.constvars) + list(jx.invars)]


def _checked(prog, avals):
    if not supports(prog):
        raise Unsupported("run-time sizes or parallel loops")
    if any(not a.shape and np.dtype(a.dtype) == np.uint64 for a in avals):
        raise Unsupported("a uint64 scalar parameter (the entry reads scalars as int64)")


def compile_program(prog):
    """A :class:`FastKernel` for a shape-specialized :class:`~.numba_cpu.Program`."""
    avals = program_avals(prog)
    _checked(prog, avals)
    return compile_source(prog.source, prog.entry, avals, prog.out_avals, prog.pieces)


def program_symbol(prog):
    """The symbol :func:`program_object` names the kernel of ``prog`` by (its content hash)."""
    return _symbol(prog.source, prog.entry, program_avals(prog), prog.out_avals, prog.pieces)


def program_object(prog):
    """``(symbol, object code)`` of ``prog`` for :func:`load_object` (raises
    :class:`Unsupported`), as :func:`compile_program` compiles it."""
    avals = program_avals(prog)
    _checked(prog, avals)
    return compile_object(prog.source, prog.entry, avals, prog.out_avals, prog.pieces)
