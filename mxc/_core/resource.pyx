"""Runtime resources of operators: the random generator of each device.

Each device has a generator state (key, counter) for a counter-based generator (Philox4x32-10,
csrc/kernels/random.h). An operator that needs random numbers reserves a block of counter
values at push time, in the pushing thread and in push order (``request_random``); its kernel
then generates from (key, reserved counters) on any number of OpenMP threads. So a sequence of
operators gives the same numbers for a given seed and device, whatever the engine's worker or
OpenMP thread counts, and two operators never share numbers.

As in MXNet, all CPU contexts (cpu(i), cpu_pinned, cpu_shared) share one generator, and each GPU
has its own. ``seed(s)`` seeds every device, each from s and its device id (so gpu(0) and gpu(1)
differ); ``seed(s, ctx)`` seeds only that device, from s and the device kind alone (so gpu(0) and
gpu(1) seeded that way give the same numbers, as MXNet documents).

Without a call to ``seed`` the process starts from a seed drawn from ``os.urandom``, so two runs
differ (MXNet users asked for that, apache/mxnet#7410; MXNet itself started from a fixed seed).
Call ``mx.random.seed`` for reproducible numbers.

The kernels' own scratch memory is their business (they allocate it themselves); this module
only deals out random numbers.
"""
import os

from libc.stdint cimport uint64_t, int64_t

__all__ = ["seed", "request_random", "get_state", "set_state", "device_slot"]

cdef enum:
    NSLOTS = 65          # slot 0: every CPU context; 1 + i: gpu(i), i < 64

cdef struct Gen:
    uint64_t key
    uint64_t counter
    bint ready

cdef Gen _gens[NSLOTS]
cdef uint64_t _global_seed = 0


cdef inline uint64_t _splitmix64(uint64_t x) noexcept nogil:
    x += <uint64_t>0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return x ^ (x >> 31)


cdef inline uint64_t _derive(uint64_t seed, int slot) noexcept nogil:
    """The generator key of device `slot` for `seed` (distinct streams per device)."""
    return _splitmix64(_splitmix64(seed) ^ (<uint64_t>slot * <uint64_t>0xD1B54A32D192ED03ULL))


cdef int _slot(int dev_type, int dev_id) except -1:
    if dev_type == 1 or dev_type == 3 or dev_type == 5:
        return 0
    if dev_type == 2 and 0 <= dev_id < NSLOTS - 1:
        return 1 + dev_id
    raise ValueError(f"random: no generator for device type {dev_type} id {dev_id}")


cdef int reserve_random(int dev_type, int dev_id, uint64_t n, uint64_t *key, uint64_t *base) except -1:
    cdef int s = _slot(dev_type, dev_id)
    cdef Gen *g = &_gens[s]
    if not g.ready:
        g.key = _derive(_global_seed, s)
        g.counter = 0
        g.ready = True
    key[0] = g.key
    base[0] = g.counter
    g.counter += n
    return 0


cdef inline int64_t _signed(uint64_t v) noexcept:
    return <int64_t>v


def device_slot(ctx):
    """The generator slot that `ctx` uses (0 for every CPU context, 1 + i for gpu(i))."""
    return _slot(ctx.device_typeid, ctx.device_id)


def request_random(ctx, n):
    """Reserve `n` generator blocks (4 x uint32 each) of `ctx`'s generator.

    Returns ``(key, base)`` as signed 64-bit integers, ready to pass to a kernel as integer
    attributes: the kernel may use blocks ``base .. base + n - 1`` under ``key`` (and any
    sub-stream of them, see csrc/kernels/random.h). Call it when pushing the operation, from the
    pushing thread, so that the numbers follow push order."""
    cdef uint64_t key = 0, base = 0
    if n < 0:
        raise ValueError("request_random: n must be >= 0")
    reserve_random(ctx.device_typeid, ctx.device_id, <uint64_t>n, &key, &base)
    return _signed(key), _signed(base)


def seed(seed_state, ctx="all"):
    """Seed the generator of every device (``ctx='all'``) or of one context."""
    global _global_seed
    cdef int s
    if isinstance(seed_state, bool) or not isinstance(seed_state, int):
        try:
            import numpy as np
            if isinstance(seed_state, np.integer):
                seed_state = int(seed_state)
            else:
                raise TypeError
        except TypeError:
            raise ValueError(f"seed_state must be an integer, got {seed_state!r}") from None
    cdef uint64_t v = <uint64_t>(seed_state & 0xFFFFFFFFFFFFFFFF)
    if isinstance(ctx, str) and ctx == "all":
        _global_seed = v
        for s in range(NSLOTS):
            _gens[s].ready = False
        return
    s = _slot(ctx.device_typeid, ctx.device_id)
    _gens[s].key = _derive(v, 0 if s == 0 else NSLOTS)   # the device kind, not its id
    _gens[s].counter = 0
    _gens[s].ready = True


def get_state(ctx):
    """(key, counter) of `ctx`'s generator, as unsigned ints (for saving and restoring)."""
    cdef uint64_t key = 0, base = 0
    reserve_random(ctx.device_typeid, ctx.device_id, 0, &key, &base)
    return int(key), int(base)


def set_state(ctx, state):
    """Restore a state from ``get_state``."""
    cdef int s = _slot(ctx.device_typeid, ctx.device_id)
    key, counter = state
    _gens[s].key = <uint64_t>(int(key) & 0xFFFFFFFFFFFFFFFF)
    _gens[s].counter = <uint64_t>(int(counter) & 0xFFFFFFFFFFFFFFFF)
    _gens[s].ready = True


_global_seed = <uint64_t>int.from_bytes(os.urandom(8), "little")
