"""Samplers: the order in which a DataLoader visits a dataset (MXNet 1.9.1's gluon.data.sampler)."""
import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class: a sampler is an iterable of indices with a length."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices start, start + 1, ..., start + length - 1 in order."""

    def __init__(self, length, start=0):
        self._length = int(length)
        self._start = int(start)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A fresh permutation of range(length) on every pass (numpy's global generator, as MXNet)."""

    def __init__(self, length):
        self._length = int(length)

    def __iter__(self):
        order = np.arange(self._length)
        np.random.shuffle(order)
        return iter(order)

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of `dataset` for which `fn(sample)` is true (decided once)."""

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class IntervalSampler(Sampler):
    """0, k, 2k, ..., then (with rollover) 1, k + 1, ...: every index once, stride `interval`."""

    def __init__(self, length, interval, rollover=True):
        if not 0 < interval <= length:
            raise ValueError(f"IntervalSampler: interval {interval} must be in "
                             f"(0, length={length}]")
        self._length = int(length)
        self._interval = int(interval)
        self._rollover = rollover

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return (self._length + self._interval - 1) // self._interval


def _check_last_batch(last_batch):
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                         f"but got {last_batch}")


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size`.

    last_batch: 'keep' yields a short last batch, 'discard' drops it, 'rollover' carries its
    indices into the first batch of the next pass."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if int(batch_size) <= 0:
            raise ValueError(f"BatchSampler: batch_size must be positive, got {batch_size}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        _check_last_batch(self._last_batch)
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        _check_last_batch(self._last_batch)
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
