"""The launch fusion pass of the CUDA backend (backends/cuda_launches.py), on launch records.

The pass is pure (records in, records out) and imports no CUDA, so these run in the main
process. What the fused kernels compute is checked against the interpreter in
tests/test_cuda_backend.py (the simulator); here, which merges the rules allow and refuse.
"""
from autodiff.backends.cuda_launches import (LOOP_MAX, ONE_BLOCK_MAX, Launch, RowLoop,
                                             Section, fuse, render, static_int, subscripts)


def _map(n, body, allocs=()):
    hdr = [f"    for _f in range(cuda.grid(1), {n}, cuda.gridsize(1)):", "        i0 = _f"]
    return Launch([Section("map", [], hdr, ["        " + b for b in body], [], str(n),
                           elems=str(n))], list(allocs))


def _single(body):
    return Launch([Section("single", [], ["    if cuda.grid(1) == 0:"],
                           ["        " + b for b in body], [], "1")])


def _grid(n, src, out):
    pre = ["    _sh1 = cuda.shared.array(_TPB, _T_float64)", "    _tx = cuda.threadIdx.x",
           "    _acc = 0.0"]
    hdr = [f"    for _f in range(cuda.grid(1), {n}, cuda.gridsize(1)):", "        i0 = _f"]
    post = ["    _sh1[_tx] = _acc", "    _last = cuda.shared.array(1, _T_int32)",
            "    if _last[0]:", "        if _tx == 0:", f"            {out}[0] = _sh1[0]"]
    return Launch([Section("grid", pre, hdr, [f"        _acc += {src}[i0]"], post, str(n),
                           elems=str(n))])


def _rows(n, m, body, out):
    """A "rows" reduction as the emitter writes it: a group of lanes per row of an (n, m)
    nest, ``out[i0]`` the row's result."""
    pre = ["    _sh1 = cuda.shared.array(_TPB, _T_float64)", "    _tx = cuda.threadIdx.x",
           "    _g = _tx // _RG", "    _ln = _tx % _RG"]
    hdr = [f"    for _p0 in range(cuda.blockIdx.x * _RPB, {n}, cuda.gridDim.x * _RPB):",
           "        _p = _p0 + _g"]
    inner = ["        _acc = 0.0", f"        if _p < {n}:", "            i0 = _p",
             f"            for _r in range(_ln, {m}, _RG):", "                i1 = _r"]
    inner += ["                " + b for b in body]
    inner += ["        _sh1[_tx] = _acc", f"        if _ln == 0 and _p < {n}:",
              "            i0 = _p", f"            {out}[i0] = _sh1[_tx]",
              "        cuda.syncthreads()"]
    each = [f"        if _p < {n}:", "            i0 = _p",
            f"            for _r in range(_ln, {m}, _RG):", "                i1 = _r"]
    return Launch([Section("rows", pre, hdr, inner, [], str(n),
                           rows=_row_loop(n, m, each, "                ",
                                          f"_ln == 0 and _p < {n}"))])


def _row_loop(n, m, each, depth, first):
    kept = (f"    for _f in range(cuda.grid(1), {n}, cuda.gridsize(1)):", "        i0 = _f")
    full = (f"    for _f in range(cuda.grid(1), {n} * {m}, cuda.gridsize(1)):",
            "        _q = _f", f"        i1 = _q % {m}", f"        _q = _q // {m}",
            "        i0 = _q")
    return RowLoop(((str(n), str(m)), (0,), (1,)), kept, full, tuple(each), depth, first)


def _launches(items):
    return [it for it in items if isinstance(it, Launch)]


def test_subscripts_and_sizes():
    assert subscripts("        B[i0, j] = A[I[k]] + 1") == [("B", "i0, j", True),
                                                           ("A", "I[k]", False),
                                                           ("I", "k", False)]
    assert subscripts("    X[i0] += y") == [("X", "i0", True)]
    assert subscripts("    cuda.atomic.add(O, j0, v)") == [("O", "j0", True)]
    assert static_int("8 * 32") == 256 and static_int("n3 * 2") is None


def test_independent_launches_run_side_by_side():
    big = 10 * ONE_BLOCK_MAX
    out = fuse([_map(big, ["B[i0] = A[i0] * 2.0"]), _map(big // 2, ["D[i0] = C[i0] + 1.0"])])
    (k,) = _launches(out)
    assert len(k.sections) == 2 and not k.one_block
    assert k.grid_text() == f"max(_rt.blocks({big}), _rt.blocks({big // 2}))"


def test_pointwise_dependency_joins_the_loop_and_other_reads_do_not():
    big = 10 * ONE_BLOCK_MAX
    out = fuse([_map(big, ["B[i0] = A[i0] * 2.0"]), _map(big, ["C[i0] = B[i0] + A[i0]"])])
    (k,) = _launches(out)
    assert len(k.sections) == 1 and len(k.sections[0].header) == 2
    # a read at another element (a reversed view) needs every thread's B first: two launches
    out = fuse([_map(big, ["B[i0] = A[i0] * 2.0"]),
                _map(big, [f"C[i0] = B[{big - 1} - i0]"])])
    assert len(_launches(out)) == 2
    # a different loop (other element count) reading B: two launches
    out = fuse([_map(big, ["B[i0] = A[i0] * 2.0"]), _map(big // 2, ["C[i0] = B[i0]"])])
    assert len(_launches(out)) == 2


def test_small_dependent_launches_share_one_block():
    out = fuse([_map(100, ["B[i0] = A[i0] * 2.0"]), _map(100, ["C[i0] = B[99 - i0]"])])
    (k,) = _launches(out)
    assert k.one_block and k.grid_text() == "1"
    assert [s.kind for s in k.sections] == ["map", "sync", "map"]


def test_scalar_after_a_grid_reduction_runs_in_its_last_block():
    big = 10 * ONE_BLOCK_MAX
    out = fuse([_grid(big, "A", "S"), _single(["m = S[0] / 8.0", "M[0] = m"])])
    (k,) = _launches(out)
    assert len(k.sections) == 1 and k.sections[0].post[-1] == "            M[0] = m"


def test_a_scalar_kernel_becomes_the_prologue_of_its_reader():
    big = 10 * ONE_BLOCK_MAX
    out = fuse([_single(["g = -K[0]", "G[0] = g"]), _map(big, ["H[i0] = G[0] * A[i0]"])])
    (k,) = _launches(out)
    assert k.sections[0].kind == "prologue"
    assert k.sections[1].inner == ["        H[i0] = g * A[i0]"]
    assert "        G[0] = g" in k.sections[0].pre     # still stored for later readers


def test_a_prologue_reads_its_own_earlier_values_from_locals():
    """Two scalar kernels chained (the second reads what the first stored) become one
    prologue: every thread runs it and only thread 0 stores, so the second value must
    read the first's local, not its buffer (a race the random-program test caught)."""
    big = 10 * ONE_BLOCK_MAX
    out = fuse([_single(["g = F[0] * 2.0", "G[0] = g"]),
                _single(["h = G[0] + 1.0", "H[0] = h"]),
                _map(big, ["J[i0] = A[i0] / H[0]"])])
    (k,) = _launches(out)
    pro = k.sections[0]
    assert pro.kind == "prologue" and "    h = g + 1.0" in pro.pre
    assert not any("G[0]" in ln for ln in pro.pre if not ln.lstrip().startswith("G[0] ="))
    assert k.sections[1].inner == ["        J[i0] = A[i0] / h"]


def test_launches_move_past_statements_they_do_not_depend_on():
    big = 10 * ONE_BLOCK_MAX
    a = _map(big, ["B[i0] = A[i0] * 2.0"])
    c = _map(big, ["D[i0] = C[i0] + 1.0"])
    mm = "_rt.matmul(X, Y, C, False, False)"          # writes C, which c reads
    out = fuse([a, mm, c])
    assert len(_launches(out)) == 1 and out.index(mm) == 0    # a sank past the product
    host = "s = B[0] + 1.0"                             # reads what a writes
    out = fuse([a, host, _map(big, ["E[i0] = A[i0]"])])
    assert len(_launches(out)) == 1 and out[1] == host          # the later one rose
    out = fuse([a, host, _map(big, ["E[i0] = s * A[i0]"])])     # reads the host's s
    assert len(_launches(out)) == 2 and out.index(host) == 1


def test_render_names_kernels_and_passes_the_free_names():
    big = 10 * ONE_BLOCK_MAX
    lines, named = render(fuse([_map(big, ["B[i0] = A[i0] * c3"],
                                     ["B = _rt.empty((8,), np.float64)"])]),
                          lambda text: "_k7")
    assert lines == ["B = _rt.empty((8,), np.float64)",
                     f"_k7[_rt.blocks({big}), _TPB](B, A, c3)"]
    assert list(named) == ["_k7"]
    assert LOOP_MAX >= ONE_BLOCK_MAX


def test_row_local_work_joins_the_row_loop():
    """A logsumexp's chain: a row maximum, a per-row map on it (the clamp), a row sum
    reading the row's elements and its maximum, the per-row log: one rows loop, the maps
    on each group's first lane after the row's step (issue 32: four launches fewer in an
    MLP's gradient). Reads at another row, or a nest of another shape, keep launches."""
    n = 10 * ONE_BLOCK_MAX
    out = fuse([_rows(n, 10, ["P[i0, i1] = N[i0, i1] + 1.0", "_acc = max(_acc, P[i0, i1])"],
                      "Q"),
                _map(n, ["T[i0] = min(Q[i0], 1e308)"]),
                _rows(n, 10, ["_acc += exp(P[i0, i1] - T[i0])"], "X"),
                _map(n, ["Z[i0] = log(X[i0]) + T[i0]"])])
    (k,) = _launches(out)
    (sec,) = k.sections
    assert sec.kind == "rows" and sec.header[0].startswith("    for _p0 in range(")
    text = "\n".join(sec.lines)
    assert text.count(f"if _ln == 0 and _p < {n}:") == 4 and "_f " not in text
    assert text.index("T[i0] = min") < text.index("_acc += exp") < text.index("Z[i0] =")
    # the next row's maximum, or every row's: launches of their own
    out = fuse([_rows(n, 10, ["_acc = max(_acc, N[i0, i1])"], "Q"),
                _map(n, [f"T[i0] = Q[{n} - 1 - i0]"])])
    assert len(_launches(out)) == 2
    out = fuse([_rows(n, 10, ["_acc = max(_acc, N[i0, i1])"], "Q"),
                _rows(n, 12, ["_acc += M[i0, i1] - Q[i0]"], "X")])
    assert len(_launches(out)) == 2


def _block(n, m, body, out):
    """A "block" reduction as the emitter writes it: a block per row of an (n, m) nest."""
    pre = ["    _sh1 = cuda.shared.array(_TPB, _T_float64)", "    _tx = cuda.threadIdx.x"]
    hdr = [f"    for _p in range(cuda.blockIdx.x, {n}, cuda.gridDim.x):", "        i0 = _p"]
    inner = ["        _acc = 0.0", f"        for _r in range(_tx, {m}, _TPB):",
             "            i1 = _r"] + ["            " + b for b in body]
    inner += ["        _sh1[_tx] = _acc", "        if _tx == 0:",
              f"            {out}[i0] = _sh1[0]", "        cuda.syncthreads()"]
    each = [f"        for _r in range(_tx, {m}, _TPB):", "            i1 = _r"]
    return Launch([Section("block", pre, hdr, inner, [], str(n),
                           rows=_row_loop(n, m, each, "            ", "_tx == 0"))])


def test_a_block_per_row_takes_the_rows_later_steps():
    """A layer norm's mean, the per-row map, its variance: one block loop; the map runs
    on the block's first thread at the row's indices of the loop."""
    n = 10 * ONE_BLOCK_MAX
    out = fuse([_block(n, 300, ["_acc += X[i0, i1]"], "S"),
                _map(n, ["M[i0] = S[i0] / 300.0"]),
                _block(n, 300, ["_acc += (X[i0, i1] - M[i0]) ** 2"], "V")])
    (k,) = _launches(out)
    (sec,) = k.sections
    text = "\n".join(sec.lines)
    assert sec.kind == "block" and text.count("if _tx == 0:") == 3 and "_f " not in text
    assert text.index("M[i0] = S[i0]") < text.index("- M[i0]) ** 2")
    # a softmax's division: a map over the whole nest reading the row's sum joins the
    # loop, each element on the threads that reduced the row (rows too)
    for row in (_block, _rows):
        full = _row_loop(n, 300, (), "", "").full_header
        div = Launch([Section("map", [], list(full), ["        P[i0, i1] = E[i0, i1] / S[i0]"],
                              [], f"{n} * 300")])
        out = fuse([row(n, 300, ["E[i0, i1] = exp(X[i0, i1])", "_acc += E[i0, i1]"], "S"),
                    div])
        (k,) = _launches(out)
        text = "\n".join(k.sections[0].lines)
        assert len(k.sections) == 1 and "_f " not in text, text
        assert text.count("for _r in range(") == 2
    # a map over other elements, a row loop over another nest: launches of their own
    assert len(_launches(fuse([_block(n, 300, ["_acc += X[i0, i1]"], "S"),
                               _map(n + 1, ["M[i0] = S[i0 % 7]"])]))) == 2
    assert len(_launches(fuse([_block(n, 300, ["_acc += X[i0, i1]"], "S"),
                               _rows(n, 10, ["_acc += Y[i0, i1] * S[i0]"], "V")]))) == 2
