"""The background compiler's worker process (``jit_compile_process``, on by default).

``_jit_runtime._Compiler`` sends it one kernel at a time; it compiles the kernel with
``compile_cache.get_kernel`` into the disk cache and answers, and the jitting process then
loads the machine code from there (a disk load: no type inference, no LLVM passes). So
Numba's front end never shares the GIL with the interpreter tier, and an exiting process
never waits for it: it closes the pipe and ends; the worker finishes the kernel in flight
(the disk cache's writes are atomic renames, so nothing half-written is ever read), giving
up after ``GRACE_S`` seconds, and exits. The next run of the script loads that kernel.

Protocol: length-prefixed pickles on stdin/stdout. A job is ``(source, entry, params,
pieces, cache_dir)``; the answer ``("ok", None)`` or ``("error", "Type: message")``. The
worker reads only what its parent writes (a pipe of the same user), so unpickling it
trusts nothing the parent would not run itself.
"""
import os
import pickle
import signal
import struct
import sys
import threading

GRACE_S = 60.0          # seconds a kernel in flight may still take once the parent is gone


def read_message(stream):
    """One length-prefixed pickle from ``stream``, or None at end of file."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    body = stream.read(n)
    if len(body) < n:
        return None
    return pickle.loads(body)


def write_message(stream, obj):
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(body)) + body)
    stream.flush()


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


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the user's Ctrl-C is for the parent
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr                          # stray prints must not break the protocol
    busy = threading.Event()
    threading.Thread(target=_watch_parent, args=(os.getppid(), busy), daemon=True).start()
    from autodiff.config import config
    from autodiff.backends import compile_cache
    while True:
        job = read_message(inp)
        if job is None:
            return
        source, entry, params, pieces, cache_dir = job
        busy.set()
        try:
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
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    main()
