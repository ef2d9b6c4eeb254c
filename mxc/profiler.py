"""``mx.profiler``: MXNet 1.9's profiler API over mxc's engine.

The engine (mxc/_core/engine.pyx) times every operation on the thread that runs it and the
storage pools (mxc/_core/storage.pyx) note every allocation and free, while this front tells
them to (``profile_set_ops`` / ``profile_set_memory``). This module takes their records, adds
the user's objects (Domain, Task, Frame, Event, Counter, Marker), and writes:

- a Chrome trace-event file (``dump``; Perfetto and chrome://tracing open it): operations as
  complete events (``X``) on their device's process (``cpu/0``, ``gpu/0``) and the thread that
  ran them, memory in use as counters (``C``) under ``Device Storage``, user objects under their
  domain; every process and thread is named by a metadata event (``M``). The file is written to
  a temporary name and renamed, so it is complete JSON at every moment: with ``continuous_dump``
  a thread rewrites it every ``dump_period`` seconds, and a program that dies keeps what the
  last write held;
- MXNet's aggregate table (``dumps``): count, total, min, max and average per operator and
  per user object, per category, as text or JSON.

Operations run by a custom operator are named ``"<op_type>::<op>"`` (category
``Custom Operator``), as MXNet names them; those autograd runs for an operator's gradient
``"_backward_<op>::<op run>"`` (MXNet's backward operator is ``_backward_<op>``); those a
KVStore push or pull of a key runs are ``"KVStorePush[key]::<op>"`` /
``"KVStorePull[key]::<op>"`` (category ``KVStore``); copies between devices
``CopyCPU2CPU``, ``CopyCPU2GPU``, ``CopyGPU2CPU``, ``CopyGPU2GPU``.

As in MXNet, ``profile_symbolic`` records the operations a bound graph runs (an executor's or
a hybridized block's CachedOp, forward and backward) and ``profile_imperative`` the others
(``mx.nd`` calls, autograd); ``profile_api`` records the calls of mxc's front doors named as the
MXNet C API functions they stand for (``MXImperativeInvokeEx``, ``MXNDArrayWaitAll``, ...; see
mxc/_core/api_calls.py) in the domain ``MXNET_C_API``, with its counters ``MXNet C API Calls``
and ``MXNet C API Concurrency``. Each ``set_config`` call starts from MXNet's defaults (every
kind of record on, ``continuous_dump`` on, ``profile.json``) and changes what it names. A GPU
operation's time is that of its work on the device: events its stream records before and
after it, read when the records are taken (``dump``, ``dumps``), never per operation.

Environment (read at import): ``MXNET_PROFILER_AUTOSTART=1`` starts the profiler at once
(written to ``profile.json`` at exit unless configured otherwise); ``MXNET_PROFILER_MODE`` is
MXNet's bit mask of what to record (1 symbolic, 2 imperative, 4 api, 8 memory; 0 means 1, as
MXNet documents it; unset, 13: symbolic, api and memory, what MXNet's profiler starts with).
"""
import atexit
import json
import os
import struct
import threading
import time
import warnings

from ._core import engine as _engine
from ._core import storage as _storage
from ._core import api_calls as _api_calls
from .ops.custom import PROPS as _CUSTOM_OPS       # the registered custom operators' op_types
from .base import MXNetError, env_int

__all__ = ["set_config", "set_state", "dump", "dumps", "pause", "resume", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker", "profiler_set_config", "profiler_set_state",
           "dump_profile", "set_kvstore_handle"]

# MXNet's names of the device kinds (Context.devtype2str), as its memory counters use them
_DEVICE_NAMES = {1: "cpu", 2: "gpu", 3: "cpu pinned", 5: "cpu shared"}
_OPTIONS = ("filename", "profile_all", "profile_symbolic", "profile_imperative",
            "profile_memory", "profile_api", "continuous_dump", "dump_period",
            "aggregate_stats", "profile_process")
_SORT_KEYS = ("total", "avg", "min", "max", "count")
_INT_MAX = 2 ** 31 - 1       # MXNet starts a minimum there
_MEMORY_CATEGORIES = ("Device Storage", "Pool Memory")
# a set_config call's starting point (MXNet's ProfileConfigParam defaults)
_CONFIG_DEFAULTS = {"filename": "profile.json", "symbolic": True, "imperative": True,
                    "memory": True, "api": True, "continuous": True, "dump_period": 1.0,
                    "aggregate": False}
_API_DOMAIN = "MXNET_C_API"             # MXNet's domain of its C API calls
_API_DEV = -2                           # the engine's device of an API call's record
# Monotonic ns (the engine's clock) + this = ns since the epoch (the trace's time base, as MXNet)
_EPOCH_OFFSET_NS = time.time_ns() - time.monotonic_ns()


def _as_bool(key, value):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("1", "true"):
            return True
        if low in ("0", "false"):
            return False
        raise MXNetError(f"profiler.set_config: {key}={value!r} is not a boolean")
    return bool(value)


class _Stat:
    """One aggregate entry: durations (us) or a counter's values (MXNet's StatData)."""
    __slots__ = ("counter", "count", "total", "min", "max")

    def __init__(self, counter):
        self.counter = counter
        self.count = 0
        self.total = 0
        self.min = None
        self.max = 0

    def add(self, value):
        self.count += 1
        if self.counter:
            self.total = value           # a counter's "total" is its latest value
        else:
            self.total += value
        self.min = value if self.min is None else min(self.min, value)
        self.max = max(self.max, value)

    def avg(self):
        # MXNet reports half the range of a counter as its average
        if self.counter:
            return (self.max - self.min) // 2
        return self.total / self.count


class _Profiler:
    """The process's profiler state; every method runs under self.lock."""

    def __init__(self):
        self.lock = threading.RLock()
        self.filename = "profile.json"
        self.symbolic = True
        self.imperative = False
        self.memory = False
        self.api = False
        self.aggregate = False
        self.continuous = False
        self.dump_period = 1.0
        self.running = False
        self.paused = False
        self.output = False           # the trace file is (still) to be written: run, not finished
        self.child = False            # a forked child writes nothing of its parent's
        self.events = []              # serialized trace events (one JSON object each)
        self.unwritten = False        # events (or a finished dump) the file does not hold yet
        self.pids = {}                # process name -> pid
        self.threads = {}             # (pid, tid) -> thread name, None until named
        self.stats = {}               # category -> name -> _Stat
        self.op_names = {}            # (engine record name, device) -> _op_kind's answer
        self.dropped = 0
        self.api_calls = 0            # MXNet's "MXNet C API Calls" counter
        self.flusher = None
        self.flush_stop = None

    # ---- configuration and state -------------------------------------------------------------

    def configure(self, kwargs):
        """Check every option first, then set them all, those not given to MXNet's defaults
        (a bad one changes nothing)."""
        flags = {"profile_symbolic": "symbolic", "profile_imperative": "imperative",
                 "profile_memory": "memory", "profile_api": "api",
                 "continuous_dump": "continuous", "aggregate_stats": "aggregate"}
        new = dict(_CONFIG_DEFAULTS)
        for key, value in kwargs.items():
            if key not in _OPTIONS:
                raise MXNetError(f"profiler.set_config: unknown option {key!r}; the options are "
                                 f"{', '.join(_OPTIONS)}")
            if key == "filename":
                if not isinstance(value, str) or not value:
                    raise MXNetError(f"profiler.set_config: filename must be a non-empty "
                                     f"string, got {value!r}")
                new["filename"] = value
            elif key == "dump_period":
                try:
                    period = float(value)
                except (TypeError, ValueError):
                    period = float("nan")
                if not period > 0:
                    raise MXNetError(f"profiler.set_config: dump_period must be > 0 seconds, "
                                     f"got {value!r}")
                new["dump_period"] = period
            elif key == "profile_process":
                _check_process(value)
            elif key == "profile_all":
                if _as_bool(key, value):
                    new.update(symbolic=True, imperative=True, memory=True, api=True)
            else:
                new[flags[key]] = _as_bool(key, value)
        with self.lock:
            for attr, value in new.items():
                setattr(self, attr, value)
            self.apply()

    def set_mode(self, mode):
        """MXNet's MXNET_PROFILER_MODE bit mask; 0 is the documented "symbolic operators"."""
        mode = mode or 1
        self.symbolic = bool(mode & 1)
        self.imperative = bool(mode & 2)
        self.api = bool(mode & 4)
        self.memory = bool(mode & 8)

    def recording(self):
        return self.running and not self.paused and not self.child

    def apply(self):
        """Tell the engine and the storage pools what to record now."""
        rec = self.recording()
        _engine.profile_set_ops(
            (_engine.PROFILE_SYMBOLIC if rec and self.symbolic else 0)
            | (_engine.PROFILE_IMPERATIVE if rec and self.imperative else 0))
        _api_calls.set_recording(rec and self.api)
        _storage.profile_set_memory(rec and self.memory)
        want_flusher = self.running and self.continuous and not self.child
        if want_flusher and self.flusher is None:
            self.flush_stop = threading.Event()
            self.flusher = threading.Thread(target=self._flush_loop, args=(self.flush_stop,),
                                            name="mxc profiler dump", daemon=True)
            self.flusher.start()
        elif not want_flusher and self.flusher is not None:
            self.flush_stop.set()
            self.flusher = None

    def _flush_loop(self, stop):
        while not stop.wait(self.dump_period):
            with self.lock:
                if stop.is_set():
                    return
                self.collect()
                if self.unwritten and self.output:
                    try:
                        self.write()
                    except MXNetError as e:      # say so once; dump() raises it to the caller
                        warnings.warn(f"{e}; continuous_dump stops")
                        return

    def set_state(self, state):
        if state not in ("run", "stop"):
            raise ValueError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
        with self.lock:
            self.paused = False        # as MXNet: a change of state ends a pause
            if state == "run":
                self.running = True
                self.output = True
            else:
                self.collect()         # what ran until now belongs to this run
                self.running = False
            self.apply()

    def set_paused(self, paused):
        with self.lock:
            if paused:
                self.collect()
            self.paused = paused
            self.apply()

    # ---- records -> events and statistics ------------------------------------------------------

    def pid(self, process):
        pid = self.pids.get(process)
        if pid is None:
            pid = self.pids[process] = len(self.pids)
        return pid

    def add_event(self, ev):
        self.threads.setdefault((ev["pid"], ev["tid"]), None)
        self.events.append(json.dumps(ev, separators=(",", ":")))
        self.unwritten = True

    def add_stat(self, category, name, value, counter=False):
        if not self.aggregate:
            return
        cat = self.stats.setdefault(category, {})
        st = cat.get(name)
        if st is None:
            st = cat[name] = _Stat(counter)
        if value is not None:
            st.add(value)

    def add_span(self, category, process, name, t0_ns, t1_ns, tid):
        self.add_event({"name": name, "cat": category, "ph": "X", "ts": _us(t0_ns),
                        "dur": (t1_ns - t0_ns) / 1000, "pid": self.pid(process), "tid": tid})
        self.add_stat(category, name, (t1_ns - t0_ns) / 1000)   # us, MXNet's unit

    def add_counter(self, category, name, value, t_ns, tid):
        self.add_event({"name": name, "cat": category, "ph": "C", "ts": _us(t_ns),
                        "pid": self.pid(category), "tid": tid, "args": {name: value}})
        self.add_stat(category, name, value, counter=True)

    def collect(self):
        """Take the engine's and the pools' records into events and statistics."""
        ops, dropped = _engine.profile_take()
        mems, mdropped = _storage.profile_take_memory()
        self.dropped += dropped + mdropped
        if dropped + mdropped:
            warnings.warn(f"profiler: {dropped + mdropped} records were dropped: about 4 million "
                          f"waited to be taken; dump (or dumps) more often, or use "
                          f"continuous_dump")
        if self.child:
            return
        # the hot loop of a big trace (about 5 us a record): names classified once, events
        # formatted directly, statistics updated inline
        names = self.op_names
        threads = self.threads
        events = self.events
        stats = self.stats if self.aggregate else None
        offset = _EPOCH_OFFSET_NS
        api = []
        for name, t0, t1, tid, dev in ops:
            if dev == _API_DEV:
                api.append((t0, t1, tid))
            known = names.get((name, dev))
            if known is None:
                known = names[(name, dev)] = self._op_kind(name, dev)
            shown, literal, category, process = known
            pid = self.pid(process)
            if (pid, tid) not in threads:
                threads[(pid, tid)] = None
            us, ns = divmod(t0 + offset, 1000)
            dus, dns = divmod(t1 - t0, 1000)
            events.append(f'{{"name":{literal},"cat":"{category}","ph":"X","ts":{us}.{ns:03d},'
                          f'"dur":{dus}.{dns:03d},"pid":{pid},"tid":{tid}}}')
            if stats is not None:
                cat = stats.get(category)
                if cat is None:
                    cat = stats[category] = {}
                st = cat.get(shown)
                if st is None:
                    st = cat[shown] = _Stat(False)
                st.add((t1 - t0) / 1000)
        if ops:
            self.unwritten = True
        if api:
            self.api_counters(api)
        for t, dev_type, dev_id, in_use in mems:
            kind = _DEVICE_NAMES.get(dev_type, str(dev_type))
            label = f"Memory: {kind}/{dev_id}" if dev_type == 2 or dev_type == 1 \
                else f"Memory: {kind}/"
            self.add_counter("Device Storage", label, in_use, t, 0)

    def api_counters(self, calls):
        """MXNet's counters of the API calls: calls so far at each call's start, and calls
        under way (a +1 at each start, -1 at each end)."""
        steps = []
        for t0, t1, tid in calls:
            self.api_calls += 1
            self.add_counter(_API_DOMAIN, "MXNet C API Calls", self.api_calls, t0, tid)
            steps.append((t0, 1, tid))
            steps.append((t1, -1, tid))
        steps.sort()
        running = 0
        for t, step, tid in steps:
            running += step
            self.add_counter(_API_DOMAIN, "MXNet C API Concurrency", running, t, tid)

    @staticmethod
    def _op_kind(name, dev):
        """(shown name, its JSON literal, category, process) of an engine record's name."""
        if dev == _API_DEV:                         # a task of MXNet's C API domain
            return name, json.dumps(name), _API_DOMAIN, _API_DOMAIN
        scope, sep, op = name.rpartition("::")
        if dev < 0 and op == "_copyto":
            name = scope + sep + "CopyCPU2CPU"     # MXNet's name for a copy between host arrays
        if sep and (scope in _CUSTOM_OPS or scope.startswith("_backward_")
                    and scope[len("_backward_"):] in _CUSTOM_OPS):
            category = "Custom Operator"           # <op_type>::<op>, _backward_<op_type>::<op>
        elif scope.startswith("KVStore"):
            category = "KVStore"                   # KVStorePush[key]::<op>, KVStorePull[key]::
        else:
            category = "operator"                  # <op>, and _backward_<op>::<op> (autograd)
        return name, json.dumps(name), category, "cpu/0" if dev < 0 else f"gpu/{dev}"

    # ---- output ----------------------------------------------------------------------------------

    def metadata(self):
        names = {}
        for tid, name in _engine.profile_threads().items():
            names[tid] = name
        for th in threading.enumerate():
            if th.native_id is not None:
                names.setdefault(th.native_id, th.name)
        out = []
        for process, pid in self.pids.items():
            out.append({"name": "process_name", "ph": "M", "pid": pid,
                        "args": {"name": process}})
        for (pid, tid), name in self.threads.items():
            if name is None:
                name = names.get(tid) or ("counters" if tid == 0 else f"thread {tid}")
                self.threads[(pid, tid)] = name     # named once: a thread id may be reused
            out.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": name}})
        return [json.dumps(m, separators=(",", ":")) for m in out]

    def write(self):
        """Write every event so far as one complete JSON file (temporary name, then rename)."""
        if self.child:
            return
        body = ",\n".join(self.metadata() + self.events)
        text = ('{"traceEvents":[\n' + body + '\n],\n"displayTimeUnit":"ms",\n'
                '"otherData":{"producer":"mxc.profiler","droppedRecords":'
                + str(self.dropped) + '}}\n')
        tmp = f"{self.filename}.tmp{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, self.filename)
        except OSError as e:
            raise MXNetError(f"profiler: cannot write the trace file {self.filename!r}: "
                             f"{e}") from e
        self.unwritten = False

    def dump(self, finished):
        with self.lock:
            self.collect()
            self.write()
            if finished:
                # this trace is complete: nothing more is written until the profiler runs again,
                # and then a new trace replaces this one
                self.events = []
                self.threads = {}
                self.output = False

    def at_exit(self):
        with self.lock:
            if self.child or not self.output:
                return
            if self.flusher is not None:
                self.flush_stop.set()
                self.flusher = None
        _engine.wait_for_pushed()      # the operations pushed before exit, recorded
        with self.lock:
            self.collect()
            self.write()               # as MXNet's last dump: even a trace with no events

    def after_fork_child(self):
        self.lock = threading.RLock()
        self.child = True
        self.flusher = None
        self.events = []
        self.apply()

    # ---- the aggregate table -------------------------------------------------------------------

    def dumps(self, reset, fmt, sort_by, ascending):
        with self.lock:
            self.collect()
            cats = sorted(self.stats.items())
            text = _table(cats, sort_by, ascending) if fmt == "table" else \
                _json_stats(cats, sort_by, ascending)
            if reset:
                self.stats = {}
            return text


def _us(ns):
    return round((ns + _EPOCH_OFFSET_NS) / 1000, 3)


def _f32(x):
    # MXNet converts its figures to float before printing them
    return struct.unpack("f", struct.pack("f", x))[0]


def _ordered(entries, sort_by, ascending):
    """MXNet's order: a max-heap on (value, name); ascending negates the value."""
    def value(st):
        if sort_by == "total":
            return st.total
        if sort_by == "avg":
            return st.avg()
        if sort_by == "min":
            return st.min
        if sort_by == "max":
            return st.max
        return st.count
    keyed = []
    for name, st in entries.items():
        if st.count == 0:
            continue                  # a category holder (instant markers): no row
        v = float(value(st))
        keyed.append(((-v if ascending else v), name, st))
    keyed.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [(name, st) for _, name, st in keyed]


def _scaled(st, memory):
    """(total, min, max, avg) in the table's units: ms for times (kept in us), kB for bytes;
    a user counter's values print divided by 1000 too, as in MXNet."""
    return st.total / 1000, st.min / 1000, st.max / 1000, st.avg() / 1000


def _table(cats, sort_by, ascending):
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    for category, entries in cats:
        memory = category in _MEMORY_CATEGORIES
        lines.append(category)
        lines.append("=================")
        if memory:
            lines.append(f"{'Name':<25}{'Total Count':>16} {'Min Use  (kB)':>16} "
                         f"{'Max Use  (kB)':>16} {'Avg Use  (kB)':>16}")
            lines.append(f"{'----':<25}{'-----------':>16} {'-------------':>16} "
                         f"{'-------------':>16} {'-------------':>16}")
        else:
            lines.append(f"{'Name':<25}{'Total Count':>16} {'Time (ms)':>16} "
                         f"{'Min Time (ms)':>16} {'Max Time (ms)':>16} {'Avg Time (ms)':>16}")
            lines.append(f"{'----':<25}{'-----------':>16} {'---------':>16} "
                         f"{'-------------':>16} {'-------------':>16} {'-------------':>16}")
        for name, st in _ordered(entries, sort_by, ascending):
            total, lo, hi, avg = (_f32(x) for x in _scaled(st, memory))
            row = f"{name:<25}{st.count:>16} "
            if not memory:
                row += f"{total:>16.4f} "
            row += f"{lo:>16.4f} {hi:>16.4f} {avg:>16.4f}"
            lines.append(row)
        lines.append("")
    return "\n".join(lines) + "\n"


def _g4(x):
    # C++'s default stream format with precision 4 (%g), on a float as MXNet prints it
    return f"{_f32(x):.4g}"


def _json_stats(cats, sort_by, ascending):
    time_parts, mem_parts = [], []
    for category, entries in cats:
        memory = category in _MEMORY_CATEGORIES
        rows = []
        for name, st in _ordered(entries, sort_by, ascending):
            total, lo, hi, avg = _scaled(st, memory)
            fields = [f'                "Count": {st.count}']
            if not memory:
                fields.append(f'                "Total": {_g4(total)}')
            fields += [f'                "Min": {_g4(lo)}', f'                "Max": {_g4(hi)}',
                       f'                "Avg": {_g4(avg)}']
            rows.append(f"            {json.dumps(name)}: {{\n" + ",\n".join(fields)
                        + "\n            }\n")
        block = (f"        {json.dumps(category)}: {{\n" + "            ,\n".join(rows)
                 + "        }\n")
        (mem_parts if memory else time_parts).append(block)
    return ("{\n    \"Time\": {\n" + "        ,\n".join(time_parts) + "    }\n    ,\n"
            "    \"Memory\": {\n" + "        ,\n".join(mem_parts) + "    }\n,\n"
            "    \"Unit\": {\n        \"Time\": \"ms\",\n        \"Memory\": \"kB\"\n    }\n}\n")


_P = _Profiler()


def _check_process(profile_process):
    if profile_process not in ("worker", "server"):
        raise ValueError(f"profiler: profile_process must be 'worker' or 'server', got "
                         f"{profile_process!r}")
    if profile_process == "server":
        raise MXNetError("profiler: profiling the kvstore server process is not supported by "
                         "mxc (its dist kvstore has no separate server processes)")


# ---------------------------------------------------------------------------------------------
# the API


def set_kvstore_handle(handle):
    """Accepted for MXNet compatibility: mxc profiles the worker process only."""
    return None


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only).

    Parameters
    ----------
    filename : str
        The trace file ``dump`` writes (default ``profile.json``).
    profile_all : bool
        Turn every kind of record on.
    profile_symbolic : bool
        Record the operations bound graphs run (executors, hybridized blocks' CachedOps).
    profile_imperative : bool
        Record the other operations (``mx.nd`` calls, autograd's backward).
    profile_memory : bool
        Record the bytes in use of each device after every allocation and free.
    profile_api : bool
        Record the calls of mxc's front doors under the names of MXNet's C API functions.
    continuous_dump : bool
        Rewrite the trace file every ``dump_period`` seconds while the profiler runs.

    Options not given take MXNet's defaults: every kind of record and ``continuous_dump`` on,
    ``aggregate_stats`` off, ``filename='profile.json'``, ``dump_period=1``.
    dump_period : float
        Seconds between those writes (default 1).
    aggregate_stats : bool
        Keep count, total, min and max per name for ``dumps``.
    profile_process : str
        ``'worker'`` (``'server'`` is refused: mxc has no kvstore server process).
    """
    _P.configure(kwargs)


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated MXNet 0.x form of :func:`set_config`."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use "
                  "profiler.set_config() instead")
    set_config(**{"profile_" + mode: True, "filename": filename})


def set_state(state="stop", profile_process="worker"):
    """Start (``'run'``) or stop (``'stop'``) recording."""
    _check_process(profile_process)
    _P.set_state(state)


def profiler_set_state(state="stop"):
    """Deprecated MXNet 0.x form of :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use "
                  "profiler.set_state() instead")
    set_state(state)


def dump(finished=True, profile_process="worker"):
    """Write the trace file with every event recorded so far.

    Parameters
    ----------
    finished : bool
        True: the trace is complete; events recorded later go to a new trace (the next dump
        replaces the file). False: later dumps rewrite the file with these events and the new
        ones (the file only grows).
    """
    _check_process(profile_process)
    _P.dump(bool(finished))


def dump_profile():
    """Deprecated form of ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead")
    dump(True)


def dumps(reset=False, format="table", sort_by="total", ascending=False):  # noqa: A002
    """The aggregate statistics (``aggregate_stats=True``) as MXNet prints them.

    Parameters
    ----------
    reset : bool
        Clear the statistics after reading them.
    format : str
        ``'table'`` (text) or ``'json'``.
    sort_by : str
        ``'total'``, ``'avg'``, ``'min'``, ``'max'`` or ``'count'``: the order within each
        category.
    ascending : bool
        Smallest first.
    """
    if format not in ("table", "json"):
        raise ValueError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise ValueError(f"profiler.dumps: sort_by must be one of {', '.join(_SORT_KEYS)}, got "
                         f"{sort_by!r}")
    if ascending not in (False, True) or reset not in (False, True):
        raise ValueError("profiler.dumps: reset and ascending must be True or False")
    return _P.dumps(bool(reset), format, sort_by, bool(ascending))


def pause(profile_process="worker"):
    """Stop recording until :func:`resume` (the profiler stays in its state)."""
    _check_process(profile_process)
    _P.set_paused(True)


def resume(profile_process="worker"):
    """Record again after :func:`pause`."""
    _check_process(profile_process)
    _P.set_paused(False)


# ---------------------------------------------------------------------------------------------
# user objects


class Domain:
    """A named group of tasks, frames, counters and markers (a category of the trace)."""

    def __init__(self, name):
        self.name = str(name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Duration:
    """A span between start() and stop() on the calling thread, recorded at stop()."""
    _category = None

    def __init__(self, name):
        self.name = str(name)
        self._t0 = None

    def start(self):
        self._t0 = time.monotonic_ns()

    def stop(self):
        t1 = time.monotonic_ns()
        t0, self._t0 = self._t0, None
        if t0 is None:
            raise MXNetError(f"profiler: {type(self).__name__} {self.name!r} stopped without "
                             f"being started")
        with _P.lock:
            if _P.recording():
                _P.add_span(self._category, self._category, self.name, t0, t1,
                            threading.get_native_id())

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Duration):
    """A named span of work within a domain; its passes add up in the statistics."""

    def __init__(self, domain, name):
        super().__init__(name)
        self.domain = domain
        self._category = str(domain)


class Frame(_Duration):
    """A named span within a domain shown on its own track (category ``<domain>,frame``)."""

    def __init__(self, domain, name):
        super().__init__(name)
        self.domain = domain
        self._category = f"{domain},frame"


class Event(_Duration):
    """A named span of the program (category ``event``)."""
    _category = "event"


class Counter:
    """A named integer of a domain whose every value is recorded (``C`` events)."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = str(name)
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _record(self):
        with _P.lock:
            if _P.recording():
                _P.add_counter(str(self.domain), self.name, self.value, time.monotonic_ns(),
                               threading.get_native_id())

    def set_value(self, value):
        self.value = int(value)
        self._record()

    def increment(self, delta=1):
        self.value += int(delta)
        self._record()

    def decrement(self, delta=1):
        self.value -= int(delta)
        self._record()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker:
    """An instant event of a domain (category ``<domain>,instant_marker``)."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = str(name)

    def mark(self, scope="process"):
        """Record the instant; scope is 'global', 'process', 'thread', 'task' or 'marker'."""
        if scope not in _MARKER_SCOPES:
            raise ValueError(f"profiler.Marker.mark: scope must be one of "
                             f"{', '.join(_MARKER_SCOPES)}, got {scope!r}")
        category = f"{self.domain},instant_marker"
        with _P.lock:
            if _P.recording():
                _P.add_event({"name": self.name, "cat": category, "ph": "i",
                              "ts": _us(time.monotonic_ns()), "s": _MARKER_SCOPES[scope],
                              "pid": _P.pid(category), "tid": threading.get_native_id()})
                _P.add_stat(category, self.name, None)

    def __str__(self):
        return self.name


# ---------------------------------------------------------------------------------------------
# environment, exit and fork

# unset: MXNet's Profiler starts with symbolic operators, API calls and memory (mode 13)
_P.set_mode(env_int("MXNET_PROFILER_MODE", 13))
if env_int("MXNET_PROFILER_AUTOSTART", 0):
    _P.set_state("run")
atexit.register(_P.at_exit)
os.register_at_fork(after_in_child=_P.after_fork_child)
