"""``mx.monitor.Monitor``: statistics of the arrays an executor computes, every `interval` batches
(MXNet 1.9.1's API: install, tic, toc, toc_print)."""
import logging
import re
from math import sqrt

from . import ndarray
from .ndarray import NDArray

__all__ = ["Monitor"]


def _default_stat(x):
    """norm(x) / sqrt(x.size): the root mean square of the entries."""
    return ndarray.norm(x) / sqrt(x.size)


class Monitor:
    """Collects ``stat_func(array)`` for every array whose name matches `pattern`.

    Parameters
    ----------
    interval : int
        Collect on every `interval`-th batch (``tic`` counts batches).
    stat_func : callable NDArray -> NDArray or list of NDArray, default RMS (norm / sqrt(size))
    pattern : str, default '.*'
        Regular expression (``re.match``) on the array names.
    sort : bool, default False
        Sort the results by name.
    monitor_all : bool, default False
        Also report the inputs of every operator, not only its outputs.
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.stat_func = _default_stat if stat_func is None else stat_func
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

        def stat_helper(name, array):
            if not self.activated:
                return
            if isinstance(name, bytes):
                name = name.decode()
            if not self.re_prog.match(name):
                return
            self.queue.append((self.step, name, self.stat_func(array)))
        self.stat_helper = stat_helper

    def install(self, exe):
        """Attach to an executor (``exe.set_monitor_callback``)."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def _wait(self):
        for exe in self.exes:
            for array in exe.arg_arrays:
                array.wait_to_read()
            for array in exe.aux_arrays:
                array.wait_to_read()

    def tic(self):
        """Start collecting for this batch if it is an `interval`-th one."""
        if self.step % self.interval == 0:
            self._wait()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """Stop collecting; add the arguments' and auxiliary states' statistics and return a list
        of (step, name, text of the statistic)."""
        if not self.activated:
            return []
        self._wait()
        for exe in self.exes:
            sym = exe._symbol
            for name, array in zip(sym.list_arguments(), exe.arg_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(sym.list_auxiliary_states(), exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, values in self.queue:
            if isinstance(values, NDArray):
                values = [values]
            if not isinstance(values, list):
                raise TypeError(f"Monitor: stat_func must return an NDArray or a list of "
                                f"NDArrays, got {type(values).__name__} for {k!r}")
            text = ""
            for v in values:
                if not isinstance(v, NDArray):
                    raise TypeError(f"Monitor: stat_func returned {type(v).__name__} for {k!r}, "
                                    "not an NDArray")
                text += (str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
            res.append((n, k, text))
        self.queue = []
        return res

    def toc_print(self):
        """``toc`` and log each result."""
        for n, k, v in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(n, k, v))
