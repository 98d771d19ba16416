"""One bounded program cache, used by every cache in autodiff.

A :class:`ProgramCache` is an LRU table with a capacity read from one ``ad.config``
option (so ``ad.config.update(option, n)`` takes effect at once: the cache evicts down
to ``n``), a lock for its changes, and hit / miss / eviction counters. Every instance
registers itself under a name; ``ad.config.caches()`` lists them and
``ad.config.clear_caches()`` empties them all. Caches that exist once per object (the
graph cache of each jitted function) share one name and are listed together.

==========================  ============================  ==================================
name                        capacity option               holds
==========================  ============================  ==================================
``jit``                     ``cache_size``                per jitted function: signature ->
                                                          compiled or interpreted call
``kernels``                 ``kernel_cache_size``         generated source -> compiled Numba
                                                          kernel (the disk cache's memory)
``linearize``               ``linearize_cache_size``      a trace's structure -> its jvp and
                                                          partial-evaluated programs (grad)
``tape``                    ``tape_cache_size``           a recorded graph's structure -> its
                                                          backward program
``remat``                   ``remat_cache_size``          a checkpointed body -> its jvp,
                                                          partial-eval and transpose bodies
``interpreter``             ``interpreter_cache_size``    a jaxpr -> its evaluation plan
``source``                  ``source_cache_size``         code objects and file names -> is
                                                          it autodiff's own code, global names
``debug.print``             ``debug_print_cache_size``    format string -> its printer
``custom_rules``            ``custom_rule_cache_size``    a custom function's key -> the
                                                          traces of its body and rules
==========================  ============================  ==================================

>>> import autodiff as ad
>>> from autodiff.cache import ProgramCache
>>> c = ProgramCache("example", "cache_size")
>>> c.put("k", 1)
>>> c.get("k"), c.get("other")
(1, None)
>>> c.info()[:4]                     # hits, misses, size, capacity
(1, 1, 1, 1024)
>>> "example" in ad.config.caches()
True
"""
import collections
import os
import threading
import weakref

from .config import config

__all__ = ["ProgramCache", "CacheStats", "caches", "clear_caches", "capacity_options", "declare"]

CacheStats = collections.namedtuple("CacheStats", "hits misses size capacity evictions caches")
CacheStats.__doc__ = """Counters of one named cache (summed over its instances).

``hits``, ``misses``, ``size`` (entries held now), ``capacity`` (the bound of each
instance, from its ``ad.config`` option), ``evictions`` (entries dropped to stay within
capacity), ``caches`` (how many live instances share the name: one per jitted function
for ``jit``)."""

_registry = {}                   # name -> (option, WeakSet of ProgramCache)
_registry_lock = threading.Lock()


class ProgramCache:
    """A bounded LRU cache with statistics, registered under ``name``.

    ``option`` names the ``ad.config`` entry that holds the capacity. :meth:`get` counts
    a hit or a miss and marks the entry most recently used. Changes (:meth:`put`,
    :meth:`pop`, :meth:`clear`, evictions) hold :attr:`lock`, a re-entrant lock the owner
    may also take around a read-modify-write of its own. :attr:`table` is the
    ``OrderedDict`` itself: a hot path may read it without the lock (``table.get`` of a
    key that hashes and compares in C is atomic) and count ``hits`` itself, as jit's
    dispatch does; it never changes the table but through the methods.

    >>> from autodiff.cache import ProgramCache
    >>> import autodiff as ad
    >>> c = ProgramCache("doc example", "cache_size")
    >>> for k in range(3):
    ...     c.put(k, str(k))
    >>> ad.config.update("cache_size", 2)      # takes effect at once: the oldest goes
    >>> list(c.keys()), c.info().evictions
    ([1, 2], 1)
    >>> ad.config.update("cache_size", 1024)
    """

    __slots__ = ("name", "option", "lock", "hits", "misses", "evictions", "table",
                 "__weakref__")

    def __init__(self, name, option):
        if option not in config.values():
            raise AttributeError(f"ProgramCache({name!r}): unknown config option {option!r}")
        self.name = name
        self.option = option
        self.lock = threading.RLock()
        self.hits = self.misses = self.evictions = 0
        self.table = collections.OrderedDict()
        declare(name, option).add(self)

    def __repr__(self):
        return f"<ProgramCache {self.name!r}: {len(self.table)} of {self.capacity}>"

    @property
    def capacity(self):
        """The current bound: ``ad.config``'s value of :attr:`option`."""
        return int(getattr(config, self.option))

    def get(self, key, default=None):
        """The value cached under ``key`` (marked most recently used), else ``default``."""
        with self.lock:            # the counters too: ``+=`` from two threads loses counts
            v = self.table.get(key, _MISSING)
            if v is _MISSING:
                self.misses += 1
                return default
            self.hits += 1
            self.table.move_to_end(key)
            return v

    def touch(self, key):
        """Mark ``key`` most recently used. Another thread may have evicted it since the
        caller's lookup: that lookup was served already, so a missing key is no error."""
        with self.lock:
            try:
                self.table.move_to_end(key)
            except KeyError:
                pass

    def put(self, key, value):
        """Store ``value`` under ``key`` (an existing key keeps its place in the LRU order),
        then evict least recently used entries down to the capacity."""
        with self.lock:
            cap = self.capacity
            if key not in self.table:
                # room first: readers without the lock (len, a hot path's table.get) never
                # see more entries than the capacity
                self._evict(cap - 1)
            self.table[key] = value
            self._evict(cap)

    def pop(self, key, default=None):
        """Remove ``key``'s entry and return it (``default`` when there is none)."""
        with self.lock:
            return self.table.pop(key, default)

    def evict(self):
        """Drop least recently used entries until the capacity holds (after a config change)."""
        with self.lock:
            self._evict(self.capacity)

    def _evict(self, cap):
        data = self.table
        while len(data) > cap:
            data.popitem(last=False)
            self.evictions += 1

    def clear(self, reset_stats=True):
        """Drop every entry (and, by default, zero the counters)."""
        with self.lock:
            self.table.clear()
            if reset_stats:
                self.hits = self.misses = self.evictions = 0

    def info(self):
        """:class:`CacheStats` of this instance."""
        return CacheStats(self.hits, self.misses, len(self.table), self.capacity,
                          self.evictions, 1)

    def keys(self):
        """The keys, least recently used first (a snapshot)."""
        with self.lock:
            return list(self.table)

    def values(self):
        """The values, least recently used first (a snapshot)."""
        with self.lock:
            return list(self.table.values())

    def last_key(self):
        """The most recently used key, or None when empty."""
        with self.lock:
            return next(reversed(self.table)) if self.table else None

    def __len__(self):
        return len(self.table)

    def __contains__(self, key):
        return key in self.table


_MISSING = object()


def declare(name, option):
    """Register the cache name ``name``, bounded by config ``option``, before any instance
    exists (so ``ad.config.caches()`` lists it with size 0); returns its member set.
    Instances of one name must share one option (ValueError otherwise)."""
    with _registry_lock:
        entry = _registry.get(name)
        if entry is None:
            entry = _registry[name] = (option, weakref.WeakSet())
        elif entry[0] != option:
            raise ValueError(f"ProgramCache({name!r}): already registered with capacity "
                             f"option {entry[0]!r}, not {option!r}")
        return entry[1]


def _members(name):
    with _registry_lock:
        entry = _registry.get(name)
        return (entry[0], list(entry[1])) if entry else (None, [])


def caches():
    """``{name: CacheStats}`` of every registered cache, summed over instances of one name
    (``ad.config.caches()`` is this function). A backend's caches register when it
    loads (the CPU backend's ``"kernels"`` at the first ``jit`` call that compiles).

    >>> import autodiff as ad
    >>> info = ad.config.caches()
    >>> {"jit", "linearize", "tape", "remat", "interpreter"} <= set(info)
    True
    """
    with _registry_lock:
        names = sorted(_registry)
    out = {}
    for name in names:
        option, members = _members(name)
        infos = [c.info() for c in members]
        out[name] = CacheStats(sum(i.hits for i in infos), sum(i.misses for i in infos),
                               sum(i.size for i in infos), int(getattr(config, option)),
                               sum(i.evictions for i in infos), len(infos))
    return out


def clear_caches():
    """Empty every registered cache and zero its counters (``ad.config.clear_caches()``).

    Compiled kernels on disk stay (``ad.config.cache_dir``); only memory is freed.
    """
    with _registry_lock:
        groups = [list(e[1]) for e in _registry.values()]
    for members in groups:
        for c in members:
            c.clear()


def capacity_options():
    """``{config option: [cache names]}``: which option bounds which caches."""
    with _registry_lock:
        out = {}
        for name, (option, _) in sorted(_registry.items()):
            out.setdefault(option, []).append(name)
        return out


@config.on_update
def _on_config(name, value):
    # a changed capacity takes effect at once: every cache bounded by it evicts down
    with _registry_lock:
        groups = [list(e[1]) for e in _registry.values() if e[0] == name]
    for members in groups:
        for c in members:
            c.evict()


def _fresh_locks_after_fork():
    # a forked child has one thread: a lock another parent thread held at fork() time would
    # stay locked forever in the child, so every cache gets a fresh one (entries stay)
    global _registry_lock
    _registry_lock = threading.Lock()
    for _, members in _registry.values():
        for c in list(members):
            c.lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_locks_after_fork)
