"""Static graphs as CUDA graphs (MXNet 1.9's ``MXNET_ENABLE_CUDA_GRAPHS``).

A plan's resolved steps that run again and again on one GPU (a block hybridized with
``static_alloc=True, static_shape=True``, a bound executor) are captured from the device's
stream once and then replayed with one ``cuGraphLaunch`` per run, instead of one launch per
kernel. As MXNet's CudaGraphsExec: per training flag, the first run is conventional (the warm-up:
kernels compile, the storage pool and cuBLAS set up what they keep); the second captures and
launches; later runs replay. The steps keep their arrays (static_alloc), so the addresses baked
into the graph stay valid; every array the captured operations use beyond them (a workspace,
an operator's own scratch) is kept with the graph (``mxc.ops._gpu`` collects them), so its
block never goes back to the pool, to be handed to another array, while the graph exists.

Steps that cannot be in a graph run conventionally between graphs of the steps around them
(MXNet's sub-segments), the reason logged once per operator and reason:
- a step that draws random numbers (Dropout, random_*): its seed and counter are launch
  arguments taken when it is queued, so a replay would repeat the same numbers;
- a step with an array on another device (group2ctx, copies between devices);
- a step whose queueing waits on the host (a host copy, an index check read back, a sync):
  found while capturing (``cuda.CaptureUnsafe``), which abandons that capture; nothing captured
  ran, so the whole run goes conventionally and the next run captures around the step.
A driver without the graph API, or a capture the driver refuses, leaves the steps conventional
(logged once).

Environment (read when a plan is made, as MXNet reads it per executor):
``MXNET_ENABLE_CUDA_GRAPHS`` (0), ``MXNET_CUDA_GRAPHS_VERBOSE`` (0: log captures and
launches), ``MXNET_CUDA_GRAPHS_MAX_LOG_ENTRIES`` (0: how many graph creations to log).
"""
import logging
import os

from .._core import cuda
from ..base import MXNetError
from . import graph as _g

_log = logging.getLogger("mxc.cuda_graphs")
_LOGGED = set()          # (operator or plan, reason) pairs already logged
_created = 0             # graphs created in this process (MXNET_CUDA_GRAPHS_MAX_LOG_ENTRIES)


def _env_flag(name):
    return os.environ.get(name, "0").strip().lower() in ("1", "true", "yes", "on")


def enabled():
    return _env_flag("MXNET_ENABLE_CUDA_GRAPHS")


def _log_once(who, reason):
    if (who, reason) in _LOGGED:
        return
    _LOGGED.add((who, reason))
    _log.warning("CUDA graphs: %s runs outside graphs: %s", who, reason)


def attach(steps, ctx, label):
    """Make `steps` (resolved ``graph.Steps`` run again and again on `ctx`) run as CUDA graphs
    when MXNET_ENABLE_CUDA_GRAPHS is set and ctx is a GPU; nothing otherwise."""
    if steps is None or getattr(ctx, "device_type", None) != "gpu" or not enabled():
        return
    steps.graphs = Graphed(ctx.device_id, label)


def _step_reason(st, dev):
    """Why step st cannot be captured on gpu(dev), or None."""
    op = st[5]
    if "random" in op.resources:
        return (f"{op.name} draws random numbers (its seed is a launch argument fixed at "
                f"capture; a replay would repeat them)")
    for a in list(st[2]) + list(st[3]):
        c = a.context
        if c.device_type != "gpu" or c.device_id != dev:
            return f"{op.name} has an array on {c} (the graph runs on gpu({dev})'s stream)"
    return None


def _arrays(steps, kept):
    """(reads, writes): every array the steps touch, one per storage chunk, for the engine to
    order the graph's launch by; an array both read and written is a write, and an array the
    operators used beyond the steps' own (a workspace, an operator's scratch) is a write."""
    writes, reads = {}, {}
    for st in steps:
        for a in st[3]:
            writes.setdefault(id(a._chunk), a)
    for st in steps:
        for a in st[2]:
            if id(a._chunk) not in writes:
                reads.setdefault(id(a._chunk), a)
    for a in kept:
        if id(a._chunk) not in reads:
            writes.setdefault(id(a._chunk), a)
    return list(reads.values()), list(writes.values())


class _Segment:
    """Steps run as one CUDA graph (graph set) or conventionally (graph None)."""
    __slots__ = ("steps", "graph", "reads", "writes", "keep")

    def __init__(self, steps):
        self.steps = steps
        self.graph = None
        self.reads = self.writes = self.keep = ()


class Graphed:
    """The CUDA graphs of one resolved step list, per training flag."""

    def __init__(self, dev, label):
        self.dev = dev
        self.label = label
        self.verbose = _env_flag("MXNET_CUDA_GRAPHS_VERBOSE")
        self.warm = set()          # training flags run conventionally once
        self.segs = {}             # training flag -> [_Segment]
        self.unsafe = {}           # step index -> reason (found while capturing)
        self.off = None            # why graphs are off for these steps (driver, capture)

    def run(self, steps, training):
        segs = self.segs.get(training)
        if segs is None:
            if self.off is not None or training not in self.warm:
                self.warm.add(training)
                _g.run_steps(list(steps), training)
                return
            segs = self._capture(steps, training)
            if segs is None:                 # nothing captured ran: run conventionally
                _g.run_steps(list(steps), training)
                return
            self.segs[training] = segs
        for s in segs:
            if s.graph is None:
                _g.run_steps(s.steps, training)
            else:
                cuda.push_graph(s.graph, s.reads, s.writes, self.label)
        if self.verbose:
            _log.info("CUDA graphs: launched %d graph(s) of %s (%d step(s) outside)",
                      sum(s.graph is not None for s in segs), self.label,
                      sum(len(s.steps) for s in segs if s.graph is None))

    def _split(self, steps):
        """[(steps, capture?)]: runs of capturable steps, and each other step on its own."""
        segs, cur = [], []
        for i, st in enumerate(steps):
            why = self.unsafe.get(i) or _step_reason(st, self.dev)
            if why is None:
                cur.append(st)
                continue
            _log_once(f"{st[4]} ({st[5].name})", why)
            if cur:
                segs.append((cur, True))
                cur = []
            segs.append(([st], False))
        if cur:
            segs.append((cur, True))
        return segs

    def _capture(self, steps, training):
        """The segments with their graphs captured, or None when a capture was abandoned or
        the driver refused (then nothing captured ran)."""
        global _created
        from ..ops import _gpu
        why = cuda.graphs_status()
        if why:
            return self._off(why)
        index = {id(st): i for i, st in enumerate(steps)}
        segs = []
        for part, capture in self._split(steps):
            s = _Segment(part)
            segs.append(s)
            if not capture:
                continue
            try:
                g = cuda.begin_capture(self.dev)
            except MXNetError as e:
                return self._off(str(e))
            kept = _gpu.collect_workspaces()
            failed = None
            try:
                _g.run_steps(part, training)
            except MXNetError as e:
                failed = e
            finally:
                _gpu.collect_workspaces(False)
                ok = g.end(keep=failed is None)
            if failed is not None:
                cause = failed if isinstance(failed, cuda.CaptureUnsafe) else failed.__cause__
                st = self._culprit(part, failed)
                # a wait on the host inside a step: the engine's sync refuses while capturing
                if not isinstance(cause, cuda.CaptureUnsafe) and \
                        "while a CUDA graph is being captured" not in str(failed):
                    raise failed             # a real error: as the conventional run raises it
                cause = cause or failed
                if st is None:
                    return self._off(str(cause))
                self.unsafe[index[id(st)]] = str(cause)
                _log_once(f"{st[4]} ({st[5].name})", str(cause))
                return None
            if not ok:
                return self._off(g.reason)
            s.graph = g
            s.keep = tuple(kept)
            s.reads, s.writes = _arrays(part, kept)
            _created += 1
            if self.verbose or _created <= int(os.environ.get(
                    "MXNET_CUDA_GRAPHS_MAX_LOG_ENTRIES", "0") or 0):
                _log.info("CUDA graphs: created graph %d of %s: %d step(s), %d node(s)",
                          _created, self.label, len(part), g.nodes)
        return segs

    def _off(self, why):
        self.off = why
        _log_once(self.label, why)
        return None

    @staticmethod
    def _culprit(steps, err):
        """The step whose queueing raised err (run_steps names it as 'Error in operator
        <label> (<op>)'), or None."""
        text = str(err)
        for st in steps:
            if f"Error in operator {st[4]} ({st[5].name})" in text:
                return st
        return None
