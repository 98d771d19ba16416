"""Lower a jaxpr to Numba CPU code: readable Python source over fused loop nests.

The input is a finished jaxpr: ``jit`` runs the IR pass pipeline
(:func:`autodiff.transforms.passes.run_pipeline`: simplification, inlining of call-like
equations, lifting of control-flow body constants, uniform constants, the dot swap, DCE)
before it calls :func:`lower`, which never traces or rewrites the program. Then, one
module each::

    plan.py       the target-neutral planner: dimension classes (which sizes are equal;
                  constants when specialized, run-time ``_sz`` slots when dynamic),
                  fusion of elementwise equations into loop nests, reductions as their
                  accumulators, views as index maps, tiny values in scalars, opaque
                  statements placed as early as their operands allow
    numba_emitter.py          what the CPU and CUDA emitters share (``NumbaFunction``, the
                              contexts a record sees, literal and dtype text)
    numba_cpu_expressions.py  the scalar expression of every elementwise primitive: the
                              default from its lowering facts, records where it differs
    numba_cpu_statements.py   the statements of the opaque primitives, and the planner
                              records of the views, reductions and opaque primitives
    numba_cpu_emitter.py      ``CpuFunction``: one generated function (loop nests,
                              reductions, the function's text)
    numba_cpu.py              this module: the module assembly (shared loop-nest pieces,
                              chunks of long bodies) and :func:`lower`

Every primitive has one :class:`~autodiff.backends.plan.Lowering` record in ``LOWERINGS``
(its kind, its dimension rule and cost for the planner), derived from its lowering facts
where it has them; the CPU text is the default of those facts or the record's own
(docs/design.md, "Lowering records").

:func:`lower` returns a :class:`Program`: the source, the kernel's parameter types, and
the ``_sz`` vector for the traced shapes. With ``dynamic_dims=True`` the source depends
only on the structure of the jaxpr (ranks, dtypes, which broadcast operand dimensions are
1); sizes, size-valued params and, in kernels over arrays, the jaxpr's literals (a mean's
``1/n`` is one) are read from ``_sz``, so a new batch size reuses the compiled kernel.
Specialized (the first compile of a signature) they are constants of the source.

>>> import numpy as np, autodiff as ad, autodiff.numpy as anp
>>> from autodiff.backends.numba_cpu import lower
>>> from autodiff.transforms.passes import run_pipeline
>>> prog = lower(run_pipeline(ad.make_jaxpr(lambda x: anp.sum(anp.exp(x) * 2.0))(np.ones(3))))
>>> print(prog.source.split("def kernel")[1].splitlines()[0])
(A, _sz):
>>> int(prog.sizes[0])                    # n0: the length of x
3
"""
import ast
import builtins
import hashlib
import re

import numpy as np

from ..config import config
from ..core import ClosedJaxpr, Jaxpr
from .numba_cpu_emitter import CpuFunction
from .numba_cpu_expressions import COMPLEX_HELPERS, expression_rule
from .numba_cpu_statements import statement_rule
from .numba_emitter import ModuleBase, SHORT_DTYPES, dtype_name, has_arrays, uses_primitive
from .plan import LOWERINGS, Lowering, register_lowering

__all__ = ["lower", "Program", "Lowering", "LOWERINGS", "lowered_primitives", "KNOWN_GAPS",
           "can_lower", "has_text", "CHUNK_LINES", "OUTLINE_LOOPS"]

# GEMM threads are not part of generated code: matmul_into reads ad.config.jit_blas_threads
# from blas_pool's state at run time, so changing it recompiles nothing.

# prange loops run on Numba's OpenMP pool, whose wait policy compile_cache sets (as a
# default, OMP_WAIT_POLICY=PASSIVE) just before the first kernel compiles: importing
# autodiff changes no environment variable (see compile_cache._openmp_defaults).

# the registration of the modules with records of their own (numba_callback, numba_fft)
_lowering = register_lowering


# =====================================================================================
# Module and function builders
# =====================================================================================

class Program:
    """The result of lowering: generated source plus what is needed to call it.

    ``source``: the module text; ``entry``: the kernel's name; ``params``: one type spec
    per kernel parameter, ``("array", dtype, ndim)``, ``("scalar", dtype)`` or
    ``("sizes",)``; ``sizes``: the int64 ``_sz`` vector for the traced shapes;
    ``consts``: values of the leading constant parameters; ``out_avals``; ``parallel``;
    ``pieces``: ``(module name, source)`` of the shared loop-nest modules it imports;
    ``plan``: the kernel's :class:`~autodiff.backends.kernel_plan.KernelPlan` (None once
    pickled: the compile worker sends programs back without it, which nothing there
    reads).
    """

    plan = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("plan", None)        # as large again as the jaxpr, and not read
        return state

    def __init__(self, source, entry, params, sizes, consts, out_avals, parallel, jaxpr,
                 pieces=()):
        self.pieces = list(pieces)
        self.source = source
        self.entry = entry
        self.params = params
        self.sizes = sizes
        self.consts = consts
        self.out_avals = out_avals
        self.parallel = parallel
        self.jaxpr = jaxpr

    def __repr__(self):
        return f"Program({self.entry}, {len(self.params)} params, {len(self.source)} chars)"


_NAME_RE = re.compile(r"(?<![\w.])([A-Za-z_]\w*)")


def _rename_names(text, rename):
    """``text`` with the names in ``rename`` replaced (attributes such as ``np.empty`` and
    the generated code's comments apart): -> (code lines without comments, comment lines).
    Generated code has no string literals, so a name is any identifier not after a dot."""
    code, comments = [], []
    for ln in text.splitlines():
        if ln.strip().startswith("#"):
            comments.append(ln.strip())
            continue
        ln = ln.split("  #")[0].rstrip()          # a trailing note such as ``# copy x``
        if ln.strip():
            code.append(_NAME_RE.sub(lambda m: rename.get(m.group(1), m.group(1)), ln))
    return "\n".join(code), comments


def _helper_imports(math, runtime):
    """The import lines of a generated module's helpers (numba_complex's names, kept with
    numba_runtime's, get a line of their own)."""
    lines = []
    if math:
        lines.append("from autodiff.backends.numba_math import " + ", ".join(sorted(math)))
    rt = sorted(n for n in runtime if n not in COMPLEX_HELPERS)
    cx = sorted(n for n in runtime if n in COMPLEX_HELPERS)
    if rt:
        lines.append("from autodiff.backends.numba_runtime import " + ", ".join(rt))
    if cx:
        lines.append("from autodiff.backends.numba_complex import " + ", ".join(cx))
    return lines


_NJIT_OPTS = "cache=True, nogil=True, error_model='numpy', fastmath={'reassoc', 'contract'}"


def _piece_module(body, params, outs, rename, consts, math, runtime, parallel):
    """``(module name, source)`` of an outlined loop nest: one function ``loop``.

    The name carries the hash of the text, so equal nests are one module whatever kernel
    they came from (compile_cache loads each once per process and caches it on disk).
    """
    ret = ", ".join(rename[o] for o in outs)
    lines = ["# A loop nest shared between kernels, generated by autodiff.jit "
             "(backends/numba_cpu.py).",
             "import numpy as np", "from numba import njit, prange"]
    lines += _helper_imports(math, runtime)
    lines += [f"{n} = {text}" for n, text in consts]
    lines += ["", "", f"@njit({_NJIT_OPTS}{', parallel=True' if parallel else ''})",
              f"def loop({', '.join(rename[p] for p in params)}):"]
    lines += ["    " + ln for ln in body.splitlines()]
    lines.append(f"    return ({ret}{',' if len(outs) == 1 else ''})")
    src = "\n".join(lines) + "\n"
    return f"_autodiff_piece_{hashlib.sha256(src.encode()).hexdigest()[:32]}", src


# names every generated module defines at its top (imports); never parameters of a function
_MODULE_NAMES = set(dir(builtins)) | {"np", "prange", "njit", "nb"}
# loop nests become shared functions (see _Module.outline)
OUTLINE_LOOPS = True
_OUTLINE_MEMO = {}


class _Module(ModuleBase):
    def __init__(self, parallel_threshold):
        self.functions = []          # source blocks, callees first
        self.sizes = []              # slot -> concrete value (for the traced shapes)
        self.consts = {}             # literal text -> global name
        self.const_lines = []
        self.imports_math = set()
        self.imports_runtime = set()
        self.parallel = False
        self.parallel_threshold = parallel_threshold
        self.n_sub = 0
        self.param_literals = False  # read jaxpr literals from _sz (set when arrays exist)
        self.fast_math_used = 0      # code size of inlined numba_math calls (FAST_MATH_BUDGET)
        self.outlined = {}           # (canonical nest text, constants) -> its function's name
        self.nests = {}              # placeholder line -> the loop nest it stands for
        self.sub_texts = {}          # control-flow body text (name elided) -> its function
        self.pieces = []             # (module name, source) of the outlined loop nests
        self.piece_imports = []
        self.dynamic_dims = True     # see lower()
        self.static = False          # every size a constant
        self.outline_loops = OUTLINE_LOOPS

    def outline(self, nest):
        """Register a loop nest; returns the one placeholder line that stands for it.

        Whether the nest becomes a function of its own is decided when the module's source
        is assembled (:meth:`_place_nests`): a nest whose canonical text occurs at two or
        more places of the module (a gradient through 16 layers repeats the same ``tanh``
        loop and the same derivative loop 16 times, each with the vectorized math inlined)
        is one shared piece, compiled once and called where it was; a nest that occurs
        once stays inline, because a piece of its own costs more to compile than it saves
        (measured: 1.6-1.9x the compile time of the same kernels inline). Nests are the
        same when their text agrees with every name canonicalized (the equation comments
        stay at the call site).
        """
        text = "\n".join(nest)
        consts = {v: k for k, v in self.consts.items()}          # global name -> its text
        memo_key = (text, tuple(sorted(consts.items())), frozenset(self.imports_math),
                    frozenset(self.imports_runtime))
        got = _OUTLINE_MEMO.get(memo_key)     # a new batch size lowers the same nests again
        if got is None:
            got = self._analyse_nest(text, consts)
            if len(_OUTLINE_MEMO) > 4096:
                _OUTLINE_MEMO.clear()
            _OUTLINE_MEMO[memo_key] = got
        body, comments, params, outs, rename, gl, used = got
        marker = f"\u00abNEST:{hashlib.sha1(memo_key[0].encode()).hexdigest()[:20]}\u00bb"
        if marker not in self.nests:
            self.nests[marker] = (nest, got, [(rename[n], consts[n]) for n in gl],
                                  sorted(used & self.imports_math),
                                  sorted(used & self.imports_runtime))
        return [marker]

    _NEST_LINE = re.compile("^( *)(\u00abNEST:\\w+\u00bb)$", re.M)

    def _place_nests(self, texts):
        """The function texts with each nest placeholder replaced: by a call of its shared
        piece when its canonical body occurs more than once among ``texts``, else by the
        nest itself. Fills ``pieces`` and ``piece_imports``."""
        # one piece per canonical body AND the values of the constants it reads: the body
        # names them _c0, _c1, ... (two nests filling 0.0 and 1.0 share a body, not a piece)
        count = {}
        for t in texts:
            for m in self._NEST_LINE.finditer(t):
                key = self._piece_key(m.group(2))
                count[key] = count.get(key, 0) + 1

        def place(m):
            ind, marker = m.group(1), m.group(2)
            nest, got, gconsts, math, runtime = self.nests[marker]
            body, comments, params, outs, rename, gl, used = got
            key = self._piece_key(marker)
            if not OUTLINE_LOOPS or count[key] < 2:
                return "\n".join(ind + ln for ln in nest)
            name = self.outlined.get(key)
            if name is None:
                name = self.outlined[key] = f"_loop{len(self.outlined)}"
                self.pieces.append(_piece_module(body, params, outs, rename, gconsts, math,
                                                 runtime, "prange(" in body))
                self.piece_imports.append(f"from {self.pieces[-1][0]} import loop as {name}")
            tgt = ", ".join(outs) + ("," if len(outs) == 1 else "")
            return "\n".join(ind + ln for ln in comments + [f"{tgt} = {name}({', '.join(params)})"])
        return [self._NEST_LINE.sub(place, t) for t in texts]

    def _piece_key(self, marker):
        """What makes two nests one piece: the canonical body and its constants' values."""
        _, got, gconsts, _, _ = self.nests[marker]
        return got[0], tuple(text for _, text in gconsts)

    def _analyse_nest(self, text, consts):
        """(canonical body, comments, params, outputs, renaming, globals used, names used)."""
        tree = ast.parse(text)
        defined, used, order = set(), set(), {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                order.setdefault(node.id, (node.lineno, node.col_offset))
                (defined if isinstance(node.ctx, ast.Store) else used).add(node.id)
        glob = set(consts) | self.imports_math | self.imports_runtime | _MODULE_NAMES
        params = sorted(used - defined - glob, key=order.get)
        outs = []
        for node in tree.body:          # what the nest hands on: its top-level assignments
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name) and t.id not in outs:
                        outs.append(t.id)
        rename = {n: f"a{i}" for i, n in enumerate(params)}
        gl = sorted((n for n in used if n in consts), key=order.get)
        rename.update({n: f"_c{i}" for i, n in enumerate(gl)})
        for n in sorted(defined, key=order.get):
            rename.setdefault(n, f"v{len(rename)}")
        body, comments = _rename_names(text, rename)
        return body, comments, params, outs, rename, gl, used

    def sub_function(self, jaxpr, hint, donated_params=None):
        """A control-flow body's function; ``donated_params``: the carries (parameter
        position -> result position) it may update in place (``CpuFunction``'s)."""
        self.n_sub += 1
        name = f"_{hint}{self.n_sub}"
        fb = CpuFunction(self, jaxpr, name, top=False)
        if donated_params:
            fb.donated_params = dict(donated_params)
        fb.build()
        return fb

    def source(self, entry_fn):
        opts = _NJIT_OPTS
        functions = self._place_nests(self.functions)
        head = ["# Generated by autodiff.jit (backends/numba_cpu.py). Each statement is preceded",
                "# by the jaxpr equation it computes."]
        if self.sizes:
            head += ["# n<k> are run-time sizes read from the size vector's slot k; c<k> are the",
                     "# jaxpr's literals, read from there too (they may depend on sizes)."]
        else:
            head += ["# Specialized: every size and literal is a constant of this kernel."]
        head += ["import numpy as np",
                "from numba import njit, prange"]
        head += _helper_imports(self.imports_math, self.imports_runtime)
        if self.piece_imports:
            head.append("# shared loop nests: modules of their own, keyed by content "
                        "(Program.pieces)")
            head.extend(self.piece_imports)
        head.append("")
        head.extend(self.const_lines)
        if self.const_lines:
            head.append("")
        body = []
        uses_sz = bool(self.sizes)
        for fsrc in functions:
            fsrc = (fsrc.replace("«SZ»", ", _sz" if uses_sz else "")
                    .replace("«SZ0»", "_sz" if uses_sz else ""))
            for part in _split_long_function(fsrc):
                # only functions with a prange loop of their own (not just a piece's)
                par = ", parallel=True" if "prange(" in part else ""
                body.append("")
                body.append(f"@njit({opts}{par})")
                body.append(part)
        return "\n".join(head + body) + "\n"


# Numba's compile time of one function grows much faster than its length (type inference
# and SSA over every variable and block: measured on straight-line bodies of n array
# statements, 25 -> 0.8 s, 50 -> 1.8 s, 100 -> 6.9 s, 200 -> 18 s, 400 -> 68 s, 800 ->
# 408 s), while up to about 50 such statements it is linear (~35 ms each). A kernel body
# longer than CHUNK_LINES is therefore split into consecutive functions of at most about
# that many lines, called in order by the kernel, each taking the live values it reads
# and returning the ones later chunks read: compile time linear in program size.
CHUNK_LINES = 160


def _split_long_function(fsrc, budget=None):
    """``fsrc`` (one function's source) as a list of function sources: unchanged when its
    body is short, else chunk functions of consecutive top-level statements (each at most
    ``budget`` lines, or one statement) followed by the function itself calling them.

    A body that repeats itself (a Python loop unrolled by tracing: the same statements
    with other names, step after step) is cut at its period (:func:`_periodic_runs`), so
    its chunks are equal up to names: each distinct chunk is one function with canonical
    names (:func:`_canonical_chunk`), compiled once and called at every place it occurs,
    and the compile time of an unrolled loop grows with its distinct code, not with its
    trip count. A chunk that occurs once keeps its names and comments; a shared chunk's
    comments (the jaxpr equations) stay at its call site."""
    budget = CHUNK_LINES if budget is None else budget
    lines = fsrc.split("\n")
    if len(lines) <= budget + 8:
        return [fsrc]
    fn = ast.parse(fsrc).body[0]
    stmts = fn.body
    if len(stmts) < 3 or not isinstance(stmts[-1], ast.Return):
        return [fsrc]
    params = [a.arg for a in fn.args.args]
    # each statement's text (0-based line slices): from the end of the previous statement,
    # so the comments before it, to its own end; the first from the line after the def
    spans, start = [], fn.lineno
    for st in stmts:
        spans.append((start, st.end_lineno))
        start = st.end_lineno

    def names(node):
        """(names it stores, names it reads before any store of its own): loop counters
        are stored by their ``for`` before the body reads them."""
        stored, loaded, targets = set(), set(), set()
        for n in ast.walk(node):
            if isinstance(n, ast.For):
                targets |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                loaded.add(n.target.id)            # x += v reads x (its Name is a Store)
            if isinstance(n, ast.Name):
                (stored if isinstance(n.ctx, ast.Store) else loaded).add(n.id)
        return stored, loaded - targets
    info = [names(st) for st in stmts]
    local = set(params)
    for stored, _ in info:
        local |= stored
    n_body = len(stmts) - 1                      # the return stays in the kernel
    sizes = [spans[i][1] - spans[i][0] for i in range(n_body)]
    code = [_rename_names("\n".join(lines[spans[i][0]:spans[i][1]]), {})[0]
            for i in range(n_body)]
    runs = _periodic_runs([_NAME_RE.sub(lambda m: "_" if m.group(1) in local else m.group(1), c)
                           for c in code])
    # chunks of consecutive statements: a periodic run in chunks of whole periods, the rest
    # in chunks of at most ``budget`` lines
    chunks, cur, size, i = [], [], 0, 0
    while i < n_body:
        if i in runs and sum(sizes[i:i + runs[i][0]]) <= 2 * budget:
            p, reps = runs[i]
            if cur:
                chunks.append(cur)
                cur, size = [], 0
            # periods per chunk: within the budget, and few enough that the chunk recurs
            # (about sqrt(reps) calls of one function: each call costs the kernel a little,
            # each period in the chunk costs its compile a little more)
            per = max(1, min(budget // max(1, sum(sizes[i:i + p])), round(reps ** 0.5)))
            for k in range(0, reps, per):
                chunks.append(list(range(i + k * p, i + min(reps, k + per) * p)))
            i += reps * p
            continue
        if cur and size + sizes[i] > budget:
            chunks.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += sizes[i]
        i += 1
    if cur:
        chunks.append(cur)
    if len(chunks) < 2:
        return [fsrc]
    # read_after[k]: the names chunk k and every later statement (the return too) read
    read_after = [None] * len(chunks) + [info[-1][1]]
    for k in range(len(chunks) - 1, -1, -1):
        read_after[k] = set().union(read_after[k + 1], *(info[i][1] for i in chunks[k]))
    parts, defined = [], set(params)
    for k, idx in enumerate(chunks):
        stored, loaded = set(), set()
        for i in idx:
            stored |= info[i][0]
            loaded |= info[i][1]
        ins = (loaded & local) & defined
        outs = stored & read_after[k + 1]
        text = "\n".join(ln for i in idx for ln in lines[spans[i][0]:spans[i][1]])
        canon = _canonical_chunk("\n".join(code[i] for i in idx), ins, outs, local)
        parts.append((idx, ins, outs, text, canon))
        defined |= stored
    uses = {}
    for part in parts:
        uses[part[4][0]] = uses.get(part[4][0], 0) + 1
    out, calls, shared = [], [], {}
    for k, (idx, ins, outs, text, (ctext, cins, couts)) in enumerate(parts):
        if uses[ctext] > 1:
            cname = shared.get(ctext)
            if cname is None:
                cname = shared[ctext] = f"{fn.name}__shared{len(shared)}"
                out.append(ctext.replace("def «CHUNK»(", f"def {cname}(", 1))
            calls.extend("    " + c for c in _rename_names(text, {})[1])
            ins_o, outs_o = cins, couts
        else:
            cname = f"{fn.name}__part{k}"
            ins_o = sorted(ins, key=lambda n: (n not in params, n))
            outs_o = sorted(outs)
            ret = (f"    return ({', '.join(outs_o)},)" if outs_o else "    return 0")
            out.append("\n".join([f"def {cname}({', '.join(ins_o)}):", text, ret]))
        call = f"{cname}({', '.join(ins_o)})"
        calls.append(f"    {', '.join(outs_o)}, = {call}" if outs_o else f"    {call}")
    ret_text = lines[spans[-1][0]:spans[-1][1]]
    note = (f"    # the body in {len(chunks)} calls of {len(out)} functions of at most about "
            f"{budget} lines (compile time linear in length; a repeated chunk is one function)")
    out.append("\n".join(lines[:fn.lineno] + [note] + calls + ret_text))
    return out


def _periodic_runs(shapes, max_period=64, min_reps=3, min_len=12):
    """``{start: (period, repetitions)}``: the runs of ``shapes`` (one string per statement)
    that repeat with a period of at most ``max_period`` statements, at least ``min_reps``
    times and over at least ``min_len`` statements, found left to right without overlap
    (the longest run starting at a position wins; ties go to the shorter period)."""
    n = len(shapes)
    if n < 2 * min_len:
        return {}
    ids = {}
    seq = np.array([ids.setdefault(s, len(ids)) for s in shapes], np.int64)
    best_len = np.zeros(n, np.int64)           # statements covered by the best run at i
    best_p = np.zeros(n, np.int64)
    for p in range(1, min(max_period, n // min_reps) + 1):
        eq = seq[:-p] == seq[p:]
        # run[i]: how many consecutive positions from i on equal the one p later
        idx = np.arange(n - p)
        mism = np.where(~eq, idx, n - p)
        nxt = np.minimum.accumulate(mism[::-1])[::-1]
        run = nxt - idx                          # matches from i on
        reps = (run + p) // p
        cover = reps * p
        ok = (reps >= min_reps) & (cover >= min_len)
        better = ok & (cover > best_len[:n - p])
        best_len[:n - p][better] = cover[better]
        best_p[:n - p][better] = p
    out, i = {}, 0
    while i < n:
        if best_len[i]:
            p = int(best_p[i])
            out[i] = (p, int(best_len[i]) // p)
            i += int(best_len[i])
        else:
            i += 1
    return out


def _canonical_chunk(code, ins, outs, local):
    """``(source, ins, outs)`` of a chunk (``code``: its statements without comments) as a
    function ``«CHUNK»`` with canonical names: the parameters ``a0, a1, ...`` and the other
    local names ``v<k>``, each in order of first appearance, so two chunks that differ only
    in names have one text. ``ins`` and ``outs`` come back as the caller's names in the order
    of the function's parameters and results."""
    order = []
    seen = set()
    for m in _NAME_RE.finditer(code):
        n = m.group(1)
        if n in local and n not in seen:
            seen.add(n)
            order.append(n)
    cins = [n for n in order if n in ins]
    couts = [n for n in order if n in outs]
    rename = {n: f"a{j}" for j, n in enumerate(cins)}
    for n in order:
        rename.setdefault(n, f"v{len(rename)}")
    body, _ = _rename_names(code, rename)
    ret = (f"    return ({', '.join(rename[o] for o in couts)},)" if couts else "    return 0")
    src = "\n".join([f"def «CHUNK»({', '.join(rename[n] for n in cins)}):", body, ret])
    return src, cins, couts


# records registered by modules of their own, before the derived sets below
from . import numba_callback  # noqa: E402,F401  (pure_callback's lowering)
from . import numba_fft  # noqa: E402,F401  (fft's lowering: rocket-fft)

CONTROL_FLOW = frozenset(n for n, r in LOWERINGS.items() if r.control)

def has_text(name):
    """Whether this backend writes primitive ``name``: it has a planner record and, for an
    elementwise or opaque one, an expression or statement rule (a record's own, or the
    default of the primitive's lowering facts)."""
    low = LOWERINGS.get(name)
    if low is None:
        return False
    if low.kind == "elementwise":
        return expression_rule(name) is not None
    return low.kind != "opaque" or statement_rule(name) is not None


def lowered_primitives():
    """Every primitive name this backend lowers now (call-like primitives that the pass
    pipeline inlines are not here: see can_lower), records registered after this module's
    import included."""
    return frozenset(n for n in LOWERINGS if n != "_copy" and has_text(n))


def __getattr__(name):
    # ``LOWERED_PRIMITIVES``: read live, so a primitive declared after this import counts
    if name == "LOWERED_PRIMITIVES":
        return lowered_primitives()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Registered primitives this backend knows it cannot lower (kept empty on purpose).
KNOWN_GAPS = frozenset()


def can_lower(prim):
    """Whether a program using ``prim`` (a Primitive) lowers: it has a lowering record, or
    the pass pipeline inlines it (an ``inline`` rule, or call-like and not control flow)."""
    return has_text(prim.name) or getattr(prim, "inline", None) is not None or (
        getattr(prim, "call_like", False) and prim.name not in CONTROL_FLOW)


# =====================================================================================
# Entry point
# =====================================================================================

def lower(closed, parallel_threshold=None, dynamic_dims=True):
    """Lower a finished ClosedJaxpr (the output of
    :func:`autodiff.transforms.passes.run_pipeline`) to a :class:`Program`.

    ``dynamic_dims`` says which sizes the kernel reads at run time: ``True`` every size and
    literal (one shape-generic kernel for all sizes); an empty set none (sizes, size-valued
    params and literals are constants of the source, tiny arrays live in scalars); a set
    of ``(input position, axis)`` pairs those input dimensions and everything not tied to
    a fixed-size input dimension (the kernel after a dimension changed size).
    """
    if isinstance(closed, Jaxpr):
        closed = ClosedJaxpr(closed, [])
    if parallel_threshold is None:
        parallel_threshold = config.jit_parallel_threshold
    if uses_primitive(closed.jaxpr, "dot_general"):
        # BLAS runs its own thread pool; OpenMP threads of prange loops next to it spin and
        # compete for the same cores (NUMBA_NOTES: an MLP with prange ran ~10x slower)
        parallel_threshold = float("inf")
    mod = _Module(parallel_threshold)
    mod.dynamic_dims = dynamic_dims if dynamic_dims is True else frozenset(dynamic_dims)
    mod.static = mod.dynamic_dims is not True and not mod.dynamic_dims
    mod.param_literals = has_arrays(closed.jaxpr) and not mod.static
    fb = CpuFunction(mod, closed.jaxpr, "kernel", top=True)
    fb.build()
    source = mod.source(fb)
    params = []
    for v in list(closed.jaxpr.constvars) + list(closed.jaxpr.invars):
        if v.aval.shape:
            params.append(("array", v.aval.dtype, len(v.aval.shape)))
        else:
            params.append(("scalar", v.aval.dtype))
    if mod.sizes:
        params.append(("sizes",))
    # The parameter types are part of the kernel's identity (its cache key is the hash of
    # this text): loop nests live in shared piece modules whose text does not say which
    # dtypes they will be compiled for.
    def short(dt):
        return SHORT_DTYPES.get(dtype_name(dt), dtype_name(dt))
    sig = ", ".join(f"{short(p[1])}[{p[2]}d]" if p[0] == "array" else short(p[1])
                    if p[0] == "scalar" else "sizes" for p in params)
    source = f"# kernel parameters: ({sig})\n" + source
    prog = Program(source, "kernel", params, np.array(mod.sizes, dtype=np.int64),
                   list(closed.consts), [v.aval for v in closed.jaxpr.outvars], mod.parallel,
                   closed, mod.pieces)
    prog.plan = fb.kernel_plan
    return prog

