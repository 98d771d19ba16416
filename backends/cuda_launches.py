"""Kernel launches of a generated CUDA host function as records, and the pass that fuses
them into fewer launches.

The CUDA emitter (``numba_cuda_emitter``) writes a host function as a list of items: host
statements (text) and :class:`Launch` records. A launch is one kernel: a list of
:class:`Section` s, each a piece of kernel body (a grid-stride loop over a loop nest of the
plan, a block-per-element reduction, or a few statements one thread runs) with the
host lines it needs first (``allocs``: its buffers and counters). :func:`fuse` then merges
launches, every merge justified by what the sections read and write:

* **side by side** (horizontal): a launch that neither reads nor writes what another
  writes runs in the same kernel, one section after the other. Every section is written
  for any grid (grid-stride loops; a block loop strides by ``gridDim``; a grid reduction's
  partials are sized for the largest grid), so the merged kernel takes the larger grid;
* **one loop** (vertical): a launch whose loop has the same header as the last section of
  an earlier one (the same elements, the same thread per element), and which reads what
  that section wrote only at the index it was written, joins that loop: each thread first
  computes the earlier values of its element, then the later ones. A grid reduction over
  the same elements joins the same way (its accumulators around the loop);
* **row by row**: a row reduction run by a block or a group of lanes per row (``block``,
  ``rows``) takes the later work that reads its results only for the row it is at: a
  map over the rows' results on the row's first thread after the row's step, a map
  over the rows' elements on the threads that reduced the row, a further reduction of
  the same nest as the row's next step (:func:`_row_local`);
* **after the last block**: a one-thread section that reads the results of a grid
  reduction runs at the end of the reduction's last block (the block that took the last
  ticket, after every block's partials and stores are fenced), where those results are
  known: a mean's division, a loss's scalar chain;
* **as a prologue**: a one-thread launch computing rank-0 values (``G[0] = -k``) is
  recomputed by every thread of the launch that reads them, which reads the locals instead
  (thread 0 still stores the buffers for later launches);
* **in one block**: launches of at most :data:`ONE_BLOCK_MAX` elements each, dependent or
  not, run in order in one block with a barrier between (a device loop, which runs as one
  block, takes its small neighbours this way).

A launch moves earlier or later past statements and launches it does not depend on (nor
they on it), so a column sum can wait for the next column sum past two library calls.
The pass is pure: items in, items out; :func:`render` writes the kernels and the launch
lines. ``docs/cuda.md`` ("Launches") has the rules with an example.

>>> s = Section("map", [], ["    for _f in range(cuda.grid(1), 8, cuda.gridsize(1)):",
...                         "        i0 = _f"], ["        B[i0] = A[i0] * 2.0"], [], "8")
>>> sorted(s.writes), sorted(s.uses)
(['B'], ['A', 'B'])
"""
import ast
import re
from dataclasses import dataclass, field, replace

__all__ = ["Section", "RowLoop", "Launch", "fuse", "merge", "render", "kernel_text", "subscripts",
           "free_names_of", "static_int", "shared_units", "ONE_BLOCK_MAX", "LOOP_MAX",
           "MAX_SHARED", "MAX_PARAMS"]

#: names generated code uses that are never data (globals and builtins of the module)
_GLOBALS = frozenset({"np", "cuda", "_dm", "_hc", "_rt", "_TPB", "_RG", "_RPB", "range",
                      "min", "max", "int", "float", "bool", "complex", "abs", "len", "slot_i64", "slot_f64",
                      "True", "False", "None", "_sz", "_E", "_TK", "del", "return", "for", "in",
                      "if", "else", "elif", "while", "not", "and", "or", "is", "break"})
_IDENT = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)")
_INDEX_TOKENS = re.compile(r"^[\sij0-9,]*$")


def subscripts(line):
    """``(name, index text, is_store)`` of every ``NAME[...]`` in a line of kernel code
    (array names are upper case), brackets matched; a store is an assignment target (``=``,
    ``+=``, ...) or the first argument of a ``cuda.atomic`` call."""
    out = []
    code = line.split("#", 1)[0]
    for m in re.finditer(r"(?<![\w.])([A-Z_][A-Z0-9_]*)\[", code):
        depth, k = 1, m.end()
        while k < len(code) and depth:
            depth += {"[": 1, "]": -1}.get(code[k], 0)
            k += 1
        rest = code[k:].lstrip()
        store = bool(re.match(r"([+\-*/|&^]|//|\*\*)?=(?!=)", rest))
        out.append((m.group(1), code[m.end():k - 1].strip(), store))
    for m in re.finditer(r"cuda\.atomic\.\w+\(\s*([A-Z_][A-Z0-9_]*)\s*,\s*([^,]*),", code):
        out.append((m.group(1), m.group(2).strip(), True))
    return out


def free_names_of(lines):
    """Names kernel lines read and never assign (their parameters), in order of first use."""
    text = "\n".join(lines or ["    pass"]).replace("«M»", "_dm").replace("«C»", "_dm")
    tree = ast.parse("def _f():\n" + text)
    defined, order = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            else:
                order.setdefault(node.id, (node.lineno, node.col_offset))
    return [n for n in sorted(order, key=order.get)
            if n not in defined and n not in _GLOBALS and not n.startswith(("_T_", "_lit"))
            and not re.fullmatch(r"_[dk]\d+", n)]


@dataclass
class Section:
    """A piece of kernel body: ``pre`` lines, a loop ``header`` (its ``for`` line and the
    index unravelling; for ``single``, the ``if`` choosing one thread), the ``inner`` lines
    of the loop, and ``post`` lines after it (a reduction's tree and last block). ``kind``:
    ``map``, ``serial``, ``grid``, ``block``, ``rows``, ``single`` or ``prologue``;
    ``work``: how many elements its loop covers (text), which sets the launch's grid."""

    kind: str
    pre: list
    header: list
    inner: list
    post: list
    work: str
    elems: str = None             # elements the section computes (default: work)
    also_writes: frozenset = frozenset()   # written inside device functions it calls
    shared: int = 0               # block-sized shared arrays of device functions it calls
    grid: str = None              # the launch's blocks, where not derived from ``work``
    rows: "RowLoop" = None        # a ``block`` or ``rows`` section's loop (_row_local)

    @property
    def lines(self):
        return self.pre + self.header + self.inner + self.post

    @property
    def writes(self):
        return self.also_writes | frozenset(
            n for ln in self.lines for n, _, st in subscripts(ln) if st)

    def size(self):
        """Elements the section computes when that is a number in the text, else None."""
        return static_int(self.elems or self.work)

    @property
    def uses(self):
        return frozenset(free_names_of(self.lines))

    def stored_at(self, name):
        """The index texts ``name`` is stored at."""
        return {ix for ln in self.lines for n, ix, st in subscripts(ln) if st and n == name}

    def grid_text(self):
        if self.grid is not None:
            return self.grid
        if self.kind in ("single", "prologue", "sync", "loop"):
            return "1"
        if self.kind == "block":
            return f"_rt.row_blocks({self.work})"
        if self.kind == "rows":
            return f"_rt.group_blocks({self.work})"
        return f"_rt.blocks({self.work})"


@dataclass(frozen=True)
class RowLoop:
    """What the loop of a ``block`` or ``rows`` section (a block, or a group of lanes,
    per kept element of its nest) offers later work on the same rows (:func:`_row_local`):
    ``nest``, the nest's (sizes, kept axes, reduced axes); ``kept_header``, the header a
    ``map`` over the kept elements has (None unless the kept axes lead); ``full_header``,
    the header a ``map`` over the whole nest has; ``each``, the lines that run a body once
    per element of the row at hand on the threads that reduced it, a body's lines indented
    by ``depth``; ``first``, the condition choosing the row's first thread."""

    nest: tuple
    kept_header: tuple
    full_header: tuple
    each: tuple
    depth: str
    first: str


@dataclass
class Launch:
    """One kernel launch: its sections and the host lines before it (``allocs``)."""

    sections: list
    allocs: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    one_block: bool = False       # runs as one block: sections in order, synced between

    @property
    def writes(self):
        return frozenset().union(*[s.writes for s in self.sections])

    @property
    def uses(self):
        """Names the kernel reads or writes, and those its allocations read."""
        alloc = frozenset(n for a in self.allocs for n in _IDENT.findall(a.split("=", 1)[-1])
                          if n not in _GLOBALS)
        return alloc.union(*[s.uses for s in self.sections])

    @property
    def lines(self):
        return [ln for s in self.sections for ln in s.lines]

    def shared_arrays(self):
        """Block-sized shared arrays the kernel declares (its own and its device loops'),
        a static one counted by its bytes (:func:`shared_units`)."""
        return sum(s.shared for s in self.sections) + sum(
            shared_units(ln) for ln in self.lines)

    def small(self, limit):
        """Whether every section computes at most ``limit`` elements (known sizes)."""
        return all(s.kind in ("sync", "prologue", "single") or
                   (s.size() is not None and s.size() <= limit) for s in self.sections)

    def grid_text(self):
        if self.one_block:
            return "1"
        texts = []
        for s in self.sections:
            t = s.grid_text()
            if t not in texts:
                texts.append(t)
        if len(texts) > 1 and "1" in texts:
            texts.remove("1")
        return texts[0] if len(texts) == 1 else f"max({', '.join(texts)})"


# =====================================================================================
# Dependencies
# =====================================================================================

def _stmt_sets(text):
    """(writes, uses) of a host statement: a one-line assignment writes its targets; any
    other statement (a loop, a call) is taken to write every name it mentions."""
    names = frozenset(n for n in _IDENT.findall(text.split("#", 1)[0] if "\n" not in text
                                                 else text) if n not in _GLOBALS)
    m = re.match(r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*,?\s*=(?!=)", text)
    if m and "\n" not in text:
        return frozenset(re.split(r"\s*,\s*", m.group(1))), names
    return names, names


def _sets(item):
    if isinstance(item, Launch):
        return item.writes, item.uses
    return _stmt_sets(item)


def _independent(a, b):
    wa, ua = _sets(a)
    wb, ub = _sets(b)
    return not (wa & ub) and not (wb & ua)


# =====================================================================================
# Merges
# =====================================================================================

def _pointwise(first, second):
    """Whether ``second`` (same loop header) reads what ``first`` stores only where it was
    stored, at plain loop indices."""
    for name in first.writes & second.uses:
        at = first.stored_at(name)
        if not at or not all(_INDEX_TOKENS.match(ix) and re.search(r"[ij]\d", ix) for ix in at):
            return False
        for ln in second.lines:
            code = ln.split("#", 1)[0]
            hits = [ix for n, ix, _ in subscripts(code) if n == name]
            if len(re.findall(rf"(?<![\w.]){re.escape(name)}(?!\w)", code)) != len(hits):
                return False                       # the whole array used, not an element
            if any(ix not in at for ix in hits):
                return False
    return True


_SIMPLE = re.compile(r"^\s*([a-z_]\w*)\s*=(?!=)\s*(.+)$")
_STORE0 = re.compile(r"^\s*([A-Z_][A-Z0-9_]*)\[0\]\s*=(?!=)\s*([a-z_]\w*)\s*$")


def _as_prologue(x, later):
    """A one-thread launch recomputed by every thread of ``later``: a prologue section
    and ``later``'s sections reading its locals; None where it does not apply."""
    if len(x.sections) != 1 or x.sections[0].kind != "single":
        return None
    body = [ln for ln in x.sections[0].inner if not ln.strip().startswith("#")]
    stores = {}
    pre = []
    for ln in body:
        m = _STORE0.match(ln)
        if m:
            stores[m.group(1)] = m.group(2)
            continue
        if not _SIMPLE.match(ln):
            return None
        # every thread runs the prologue, and only thread 0 stores: a value it stored
        # earlier is read from its local, never from the buffer
        for n, v in stores.items():
            ln = re.sub(rf"(?<![\w.]){re.escape(n)}\[0\]", v, ln)
        pre.append("    " + ln.strip())
    if not stores:
        return None
    for s in later.sections:
        for ln in s.lines:
            for n, ix, st in subscripts(ln):
                if n in stores and (ix != "0" or st):
                    return None
    pre.append("    if cuda.grid(1) == 0:")
    pre += [f"        {n}[0] = {v}" for n, v in stores.items()]
    pat = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, stores)) + r")\[0\]")

    def sub(lines):
        return [pat.sub(lambda m: stores[m.group(1)], ln) for ln in lines]
    secs = [Section("prologue", pre, [], [], [], "1")]
    secs += [Section(s.kind, sub(s.pre), sub(s.header), sub(s.inner), sub(s.post), s.work)
             for s in later.sections]
    return secs


#: a section of at most this many elements may run on one block of ``_TPB`` threads
#: (a few elements a thread) where that saves a launch
ONE_BLOCK_MAX = 4096

_SYNC = Section("sync", ["    cuda.syncthreads()"], [], [], [], "1")


def static_int(text):
    """The value of a size expression of literals (``"8 * 32"``), else None."""
    if text is None or not re.fullmatch(r"[\d\s*+()-]+", text):
        return None
    return int(eval(text))          # noqa: S307 - digits and operators only


_SHARED_DECL = re.compile(r"cuda\.shared\.array\(\s*(_TPB|\((?:\d+,\s*)*\d+,?\)|\d+)\s*,"
                          r"\s*_T_([a-z]+)(\d+)?")


def shared_units(text):
    """The block-sized shared arrays (``_TPB`` elements of at most 16 bytes: 4 kB on a
    GPU) the ``cuda.shared.array`` declarations in ``text`` amount to: one for each
    ``_TPB`` array, a static one's bytes in 4 kB units (rounded up; a few bytes, a flag
    or a ticket's answer, count nothing).

    >>> shared_units("_la3 = cuda.shared.array((32, 32), _T_float64)")
    2
    >>> shared_units("_sh1 = cuda.shared.array(_TPB, _T_float32)"), shared_units(
    ...     "_last = cuda.shared.array(1, _T_int32)")
    (1, 0)
    """
    units = 0
    for m in _SHARED_DECL.finditer(text):
        if m.group(1) == "_TPB":
            units += 1
            continue
        count = 1
        for d in re.findall(r"\d+", m.group(1)):
            count *= int(d)
        size = int(m.group(3) or 8) // 8 if m.group(2) != "boolean" else 1
        nbytes = count * size
        units += 0 if nbytes <= 64 else -(-nbytes // 4096)
    return units


#: at most this many block-sized shared arrays in one kernel (8 x 256 x 16 bytes: 32 kB of
#: the 48 kB a block may declare statically)
MAX_SHARED = 8


#: at most this many parameters in one kernel: Numba passes an array as 7 + 2 x rank
#: words, and a kernel's parameters have 4 kB (before CUDA 12.1)
MAX_PARAMS = 40


def merge(x, y):
    """``x`` and the later launch ``y`` as one launch, or None (the rules of the module
    docstring)."""
    m = _merge(x, y)
    if m is not None and (m.shared_arrays() > MAX_SHARED
                          or len(free_names_of(m.lines)) > MAX_PARAMS):
        return None
    return m


def _merge(x, y):
    wx, ux, wy, uy = x.writes, x.uses, y.writes, y.uses
    allocs = x.allocs + y.allocs
    comments = x.comments + y.comments
    if x.one_block or y.one_block:
        # one block runs both in order, a barrier between: any dependency is kept
        if not (x.small(ONE_BLOCK_MAX if not x.one_block else LOOP_MAX)
                and y.small(ONE_BLOCK_MAX if not y.one_block else LOOP_MAX)):
            return None
        if not (x.one_block and y.one_block) and not (
                (x.one_block and y.small(ONE_BLOCK_MAX)) or (y.one_block and x.small(ONE_BLOCK_MAX))):
            return None
        return Launch(x.sections + [_SYNC] + y.sections, allocs, comments, one_block=True)
    if wy & ux:
        return None                                   # y overwrites what x reads or writes
    if not (wx & uy):
        return Launch(x.sections + y.sections, allocs, comments)
    last = x.sections[-1]
    ys = y.sections[0]
    if len(y.sections) == 1 and ys.kind == "single":
        if last.kind == "grid":
            post = last.post + ["    " + ln for ln in ys.inner]
            return Launch(x.sections[:-1] + [Section("grid", last.pre, last.header, last.inner,
                                                     post, last.work)], allocs, comments)
    earlier = frozenset().union(*[s.writes for s in x.sections[:-1]])
    if not (earlier & uy):
        if len(y.sections) == 1 and last.kind == "single" and ys.kind == "single":
            return Launch(x.sections[:-1] + [Section("single", [], last.header,
                                                     last.inner + ys.inner, [], "1")],
                          allocs, comments)
        if (len(y.sections) == 1 and last.kind in ("map", "serial")
                and ys.kind in ("map", "serial", "grid") and last.header == ys.header
                and not last.pre and not last.post and _pointwise(last, ys)):
            kind = ys.kind if ys.kind != "map" else last.kind
            sec = Section(kind, ys.pre, last.header, last.inner + ys.inner, ys.post, ys.work)
            return Launch(x.sections[:-1] + [sec], allocs, comments)
        sec = _row_local(last, y)
        if sec is not None:
            return Launch(x.sections[:-1] + [sec], allocs, comments)
    secs = _as_prologue(x, y)
    if secs is not None:
        return Launch(secs, allocs, comments)
    if x.small(ONE_BLOCK_MAX) and y.small(ONE_BLOCK_MAX):
        return Launch(x.sections + [_SYNC] + y.sections, allocs, comments, one_block=True)
    return None


def _row_local(last, y):
    """A ``rows`` or ``block`` section ``last`` (a group of lanes, or a block, per kept
    element, its threads striding over the element's row, in a block-uniform loop over
    rows) extended by ``y``, which reads what ``last`` wrote only for the row it is at:
    a ``map`` over the kept elements runs at the end of each row's step on the row's
    first thread (a row's epilogue: the ``log`` of a logsumexp's sum), a section of the
    same kind over the same nest as a further step of the same row (its threads read
    the row's elements where the same threads wrote them, and the row's results after
    the barrier that ends the earlier step: a layer norm's mean, then its variance).
    None where neither applies."""
    rl = last.rows
    if len(y.sections) != 1 or rl is None or last.post:
        return None
    ys = y.sections[0]
    if ys.post or not _pointwise(last, ys):
        return None
    if ys.kind == "map" and not ys.pre and tuple(ys.header) in (rl.kept_header,
                                                                rl.full_header):
        if tuple(ys.header) == rl.kept_header:   # the row's first thread, at its indices
            tail = [f"        if {rl.first}:"]
            tail += ["    " + re.sub(r"(?<!\w)_f(?!\w)", "_p", ln) for ln in ys.header[1:]]
            depth = "            "
        else:                                    # each element, on the row's threads
            tail, depth = list(rl.each), rl.depth
        # (a map's body lines are indented by 8: inside its grid-stride loop)
        tail += [depth + ln[8:] for ln in ys.inner] + ["        cuda.syncthreads()"]
        return replace(last, inner=last.inner + tail)
    if ys.kind == last.kind and ys.rows is not None and ys.rows.nest == rl.nest \
            and ys.header == last.header:
        return replace(last, pre=last.pre + ys.pre, inner=last.inner + ys.inner)
    return None


#: a scan body whose every loop nest has at most this many elements runs all its steps in
#: one kernel of one block (numba_cuda_statements' device loop)
LOOP_MAX = 65536


WINDOW = 16          # how far back a launch looks for one to join


def fuse(items):
    """The items (host statements and :class:`Launch` records, in program order) with
    launches merged where :func:`merge` allows and the moves keep every dependency."""
    out = []
    for it in items:
        if not isinstance(it, Launch) or not _place(out, it):
            out.append(it)
    return out


def _place(out, y):
    lo = max(0, len(out) - WINDOW)
    for j in range(len(out) - 1, lo - 1, -1):
        x = out[j]
        if not isinstance(x, Launch):
            continue
        m = merge(x, y)
        if m is None:
            continue
        between = out[j + 1:]
        s = next((k for k, it in enumerate(between) if not _independent(x, it)), len(between))
        if all(_independent(y, it) for it in between[s:]):
            # x sinks past between[:s], y rises past between[s:]; y's buffers are
            # allocated before the merged launch (allocations depend on nothing)
            out[j:] = between[:s] + [m] + between[s:]
            return True
    return False


# =====================================================================================
# Text
# =====================================================================================

def render(items, kernel):
    """Host lines of the items: each launch's comments and allocations, then
    ``kernel(text)`` (the module registers the kernel and names it) launched over the
    launch's grid. Returns the lines and ``{kernel name: Launch}``."""
    lines, named = [], {}
    for it in items:
        if not isinstance(it, Launch):
            lines.append(it)
            continue
        text, params = kernel_text(it)
        name = kernel(text)
        named[name] = it
        lines.extend(it.comments)
        lines.extend(it.allocs)
        lines.append(f"{name}[{it.grid_text()}, _TPB]({', '.join(params)})")
    return lines, named


def kernel_text(launch, name="«K»"):
    """``def name(params):`` and the launch's sections; returns the text and params."""
    body = launch.lines
    params = free_names_of(body)
    return "\n".join([f"def {name}({', '.join(params)}):"] + body), params
