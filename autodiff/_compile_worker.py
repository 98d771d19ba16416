"""The background compiler's worker process (``jit_compile_process``, on by default).

``jit_runtime.Compiler`` sends it one kernel at a time; it compiles the kernel with
``compile_cache.get_kernel`` into the disk cache and answers, and the jitting process then
loads the machine code from there (a disk load: no type inference, no LLVM passes). So
Numba's front end never shares the GIL with the interpreter tier, and an exiting process
never waits for it: it just ends; the worker finishes the kernel in flight (the disk
cache's writes are atomic renames, so nothing half-written is ever read), giving up after
``GRACE_S`` seconds, and exits. The next run of the script loads that kernel.

Protocol: length-prefixed pickles on raw pipes (file descriptors 0 and 1 of the worker; no
buffered file objects, whose locks a thread blocked at interpreter exit would hold). A job
is ``(source, entry, params, pieces, cache_dir)`` (a Numba kernel into the disk cache) or
``("llvm", source, entry, param avals, out avals, pieces)`` (the direct LLVM tier's object
code, sent back) or ``("lower", pickled closed jaxpr, dynamic dims, config values)`` (the
program lowered here too: :func:`_lower_job`); the answer ``("ok", None | (symbol, object
code))``, ``("lowered", pickled Program, None | (symbol, object code))``,
``("unsupported", why)`` or ``("error", "Type: message")``. The worker reads only what its parent writes (a pipe of
the same user), so unpickling it trusts nothing the parent would not run itself.

The parent starts this file with ``runpy`` (not as ``autodiff._compile_worker``), so the
first job is read before the ``autodiff`` package and Numba are imported: the parent's
write of a job never waits for the worker's imports.
"""
import os
import pickle
import signal
import struct
import sys
import threading

GRACE_S = 60.0          # seconds a kernel in flight may still take once the parent is gone


def read_message(fd):
    """One length-prefixed pickle from file descriptor ``fd``, or None at end of file."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    body = _read_exactly(fd, n)
    return None if body is None else pickle.loads(body)


def write_message(fd, obj):
    """Write ``obj`` to file descriptor ``fd`` as a length-prefixed pickle."""
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = memoryview(struct.pack("<Q", len(body)) + body)
    while data:
        data = data[os.write(fd, data):]


def _read_exactly(fd, n):
    parts, left = [], n
    while left:
        b = os.read(fd, min(left, 1 << 20))
        if not b:
            return None
        parts.append(b)
        left -= len(b)
    return b"".join(parts)


def _watch_parent(ppid, busy):
    """Exit once the parent is gone and no kernel is in flight, or ``GRACE_S`` after it went
    while one still is (the disk cache stays sound: every write is an atomic rename)."""
    import time
    gone_at = None
    while True:
        time.sleep(0.2)
        if os.getppid() == ppid:
            continue
        if gone_at is None:
            gone_at = time.monotonic()
        if not busy.is_set() or time.monotonic() - gone_at > GRACE_S:
            os._exit(0)


class _Aval:
    """What the LLVM tier reads of an abstract value: its shape and dtype."""

    def __init__(self, shape, dtype):
        import numpy as np
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def _llvm_job(job):
    """``("llvm", source, entry, param avals, out avals, pieces)``: the direct LLVM tier's
    object code, ``("ok", (symbol, bytes))``, which the parent loads into its own engine (no
    disk involved), or ``("unsupported", why)`` when that tier declines the program."""
    _, source, entry, params, outs, pieces = job
    from autodiff.backends import llvm_cpu
    try:
        return ("ok", llvm_cpu.compile_object(source, entry, [_Aval(*a) for a in params],
                                              [_Aval(*a) for a in outs], pieces))
    except llvm_cpu.Unsupported as e:
        return ("unsupported", str(e))


_OBJECTS = {}                 # symbol -> object code this worker compiled (a repeat is free)
_OBJECT_BYTES_MAX = 64 << 20


def _llvm_object(prog):
    """``(symbol, object code)`` of a lowered program by the LLVM tier, or None where it
    declines it; the same program asked for again (by another jitted function, or after
    its entry was evicted) is not compiled again."""
    from autodiff.backends import llvm_cpu
    if not llvm_cpu.supports(prog):
        return None
    symbol = llvm_cpu.program_symbol(prog)
    got = _OBJECTS.get(symbol)
    if got is None:
        try:
            got = llvm_cpu.program_object(prog)
        except llvm_cpu.Unsupported:
            return None
        if sum(len(o) for _, o in _OBJECTS.values()) + len(got[1]) > _OBJECT_BYTES_MAX:
            _OBJECTS.clear()
        _OBJECTS[symbol] = got
    return got


def _lower_job(job):
    """``("lower", pickled closed jaxpr, dynamic dims, the parent's config values)``: the
    program lowered here (the IR passes and the Numba CPU lowering, as the parent would run
    them under the same options), then compiled: by the LLVM tier, whose object code comes
    back, else by Numba into the disk cache (when it is usable; the parent then loads it, or
    compiles the kernel itself and reports an error). Answers ``("lowered", pickled
    Program, (symbol, object code) or None)``."""
    _, blob, dynamic, options = job
    from autodiff.config import config
    now = config.values()
    for name, value in options.items():
        if name in now and now[name] != value:
            config.update(name, value)
    closed = pickle.loads(blob)       # a primitive this process lacks raises: parent lowers
    from autodiff.jit_runtime import lower_program
    prog = lower_program(closed, dynamic)
    obj = _llvm_object(prog) if config.jit_llvm_tier else None
    if obj is None and config.disk_cache:
        from autodiff.backends import compile_cache
        if compile_cache.disk_cache_writable():
            try:
                compile_cache.get_kernel(prog.source, prog.entry, prog.params, prog.pieces)
            except Exception:  # noqa: BLE001 - the parent compiles it and reports the error
                pass
    return ("lowered", pickle.dumps(prog, protocol=pickle.HIGHEST_PROTOCOL), obj)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the user's Ctrl-C is for the parent
    inp, out = 0, os.dup(1)
    os.dup2(2, 1)                                    # stray prints must not break the protocol
    busy = threading.Event()
    threading.Thread(target=_watch_parent, args=(os.getppid(), busy), daemon=True).start()
    job = read_message(inp)                          # before the heavy imports below
    busy.set()
    from autodiff.config import config
    while job is not None:
        busy.set()
        try:
            if job[0] == "llvm":
                reply = _llvm_job(job)
            elif job[0] == "lower":
                reply = _lower_job(job)
            else:
                source, entry, params, pieces, cache_dir = job
                from autodiff.backends import compile_cache
                if config.cache_dir != cache_dir:
                    config.update("cache_dir", cache_dir)
                compile_cache.get_kernel(source, entry, params, pieces)
                reply = ("ok", None)
        except BaseException as e:  # noqa: BLE001 - reported; the parent compiles itself
            reply = ("error", f"{type(e).__name__}: {e}")
        finally:
            busy.clear()
        try:
            write_message(out, reply)
        except OSError:                              # the parent is gone
            return
        job = read_message(inp)


if __name__ == "__main__":
    main()
