"""NDArray ``__getitem__`` / ``__setitem__`` with MXNet 1.x semantics.

Basic indexing (ints, slices, None, Ellipsis) returns a view sharing storage when the selected
region is contiguous in memory and a copy (the ``slice`` operator) otherwise; integer indices
drop their axis, but a result with no axes left has shape (1,), as MXNet 1.x has no 0-d arrays.
An integer array (NDArray, numpy array or list) selects rows along axis 0 (``take``, on the
device); a tuple mixing arrays with ints, slices, None and Ellipsis follows numpy's advanced
indexing rules, as MXNet 1.9 does: the flat positions of the selected elements are worked out on
the host, then gathered (``take``) or scattered (``_scatter_set_rows``) on the flattened array."""
import numbers

import numpy as np

from .._core.modes import _M
from .ndarray import NDArray, array, _nd
from ..base import MXNetError




def _is_int(k):
    return isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_))


def _expand_key(arr, key):
    """(per-axis list of int/slice, positions of None in the output) for basic keys, or None."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(not (_is_int(k) or isinstance(k, slice) or k is None or k is Ellipsis) for k in key):
        return None
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > arr.ndim:
        raise IndexError(f"too many indices ({n_real}) for array with {arr.ndim} dimensions")
    full = []
    for k in key:
        if k is Ellipsis:
            full.extend([slice(None)] * (arr.ndim - n_real))
        else:
            full.append(k)
    if Ellipsis not in key:
        full.extend([slice(None)] * (arr.ndim - n_real))
    per_axis, new_axes, out_pos = [], [], 0
    for k in full:
        if k is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        per_axis.append(k)
        if not _is_int(k):
            out_pos += 1
    return per_axis, new_axes


def _plan(arr, per_axis):
    """begin/step/length per axis and the axes indexed by an int."""
    starts, steps, lens, int_axes = [], [], [], []
    for ax, (k, d) in enumerate(zip(per_axis, arr.shape)):
        if _is_int(k):
            if not -d <= k < d:
                raise IndexError(f"index {k} is out of bounds for axis {ax} with size {d}")
            starts.append(int(k) % d); steps.append(1); lens.append(1); int_axes.append(ax)
        else:
            r = range(d)[k]
            starts.append(r.start if len(r) else 0); steps.append(r.step); lens.append(len(r))
    return starts, steps, lens, int_axes


def _contiguous(shape, starts, steps, lens):
    """Whether the selected region is one contiguous run of memory (then a view is possible)."""
    partial = [ax for ax in range(len(shape)) if not (lens[ax] == shape[ax] and starts[ax] == 0
                                                      and (steps[ax] == 1 or shape[ax] <= 1))]
    if not partial:
        return True
    last = partial[-1]
    if lens[last] > 1 and steps[last] != 1:
        return False
    return all(lens[ax] == 1 for ax in range(last))


def _final_shape(lens, int_axes, new_axes):
    shape = [n for ax, n in enumerate(lens) if ax not in int_axes]
    for pos in new_axes:
        shape.insert(pos, 1)
    return tuple(shape) if shape else (1,)


def _ends(starts, steps, lens):
    """Exclusive slice ends; None where a negative step runs past index 0."""
    ends = (s + (n - 1) * st + (1 if st > 0 else -1) if n else s
            for s, st, n in zip(starts, steps, lens))
    return tuple(None if e < 0 else e for e in ends)


def _int_indices(k):
    """A list or numpy index array checked to hold integers (MXNet 1.x has no boolean masks)."""
    a = np.asarray(k)
    if a.dtype == np.bool_:
        raise IndexError("boolean mask indexing is not supported by MXNet 1.x NDArray")
    if not np.issubdtype(a.dtype, np.integer):
        raise IndexError(f"only integers, slices, None, Ellipsis and integer arrays are valid "
                         f"indices, got {k!r}")
    return a


def _index_array(key, arr):
    """Rows to take along axis 0, as an NDArray (NDArray keys stay on the device)."""
    if isinstance(key, NDArray):
        return key
    return array(_int_indices(key), ctx=arr.context, dtype=np.int64)


def _last_writes(positions, n):
    """The entries of a scatter to keep so that the last write to each position wins, as in
    numpy (a GPU scatter has no order between the writers of one position); None when no
    position repeats. `positions` are on the host, negative ones counted from the end of `n`."""
    p = np.asarray(positions, dtype=np.int64).reshape(-1)
    p = np.where(p < 0, p + n, p)
    _, first_from_end = np.unique(p[::-1], return_index=True)
    if len(first_from_end) == len(p):
        return None
    return np.sort(len(p) - 1 - first_from_end)


def _host_index(k):
    """One entry of an advanced key as numpy (NDArray indices are waited for and made ints)."""
    if isinstance(k, NDArray):
        if k.dtype == np.bool_:
            raise IndexError("boolean mask indexing is not supported by MXNet 1.x NDArray")
        return k.asnumpy().astype(np.int64)
    if isinstance(k, (list, np.ndarray)):
        return _int_indices(k)
    return k


def _advanced_flat(arr, key):
    """Flat positions (numpy int64, shaped like the result) of the elements numpy's advanced
    indexing selects. Each axis's coordinates are indexed as a broadcast view, so the memory
    used is the result's size, not the array's."""
    if arr.ndim == 0:
        raise IndexError("too many indices for a 0-d array")
    key = tuple(_host_index(k) for k in (key if isinstance(key, tuple) else (key,)))
    shape = arr.shape
    flat, stride = None, 1
    for ax in range(len(shape) - 1, -1, -1):
        coord = np.arange(shape[ax], dtype=np.int64).reshape((-1,) + (1,) * (len(shape) - 1 - ax))
        c = np.broadcast_to(coord, shape)[key] * stride
        flat = c if flat is None else flat + c
        stride *= shape[ax]
    return np.asarray(flat, dtype=np.int64)


def getitem(arr, key):
    exp = _expand_key(arr, key)
    if exp is None:
        if not isinstance(key, tuple):          # rows along axis 0, gathered on the device
            return _nd().take(arr, _index_array(key, arr), axis=0, mode="raise")
        flat = _advanced_flat(arr, key)
        idx = array(flat.reshape(-1), ctx=arr.context, dtype=np.int64)
        out = _nd().take(arr.reshape((-1,)), idx, axis=0)
        return out.reshape(flat.shape if flat.ndim else (1,))
    per_axis, new_axes = exp
    starts, steps, lens, int_axes = _plan(arr, per_axis)
    shape = _final_shape(lens, int_axes, new_axes)
    if _contiguous(arr.shape, starts, steps, lens) and not (arr._ag is not None and _M.recording):
        begin = 0
        stride = 1
        for ax in range(arr.ndim - 1, -1, -1):
            begin += starts[ax] * stride
            stride *= arr.shape[ax]
        return arr._flat_view(begin, begin + int(np.prod(lens, dtype=np.int64)), shape)
    if 0 in lens:
        # an empty selection is numpy's empty array, as before: the slice operator itself
        # refuses an empty result outside numpy shape semantics (as MXNet's does)
        from ..util import np_shape
        with np_shape(True):
            sliced = _nd().slice(arr, begin=tuple(starts), end=_ends(starts, steps, lens),
                                 step=tuple(steps))
        return sliced.reshape(shape)
    sliced = _nd().slice(arr, begin=tuple(starts), end=_ends(starts, steps, lens), step=tuple(steps))
    return sliced.reshape(shape)


def _value_array(arr, value, shape, squeeze_axes=()):
    """`value` as an NDArray of arr's dtype broadcast to `shape` (MXNet's _prepare_value_nd:
    a value with more axes than `shape` first loses `squeeze_axes`, the positions of the key's
    None entries, then its leading size-1 axes)."""
    if isinstance(value, NDArray):
        v = value if value.dtype == arr.dtype else value.astype(arr.dtype)
    else:
        v = array(np.asarray(value, dtype=arr._dtype), ctx=arr.context, dtype=arr._dtype)
    shape = tuple(shape)
    if squeeze_axes and v.ndim > len(shape):
        drop = [ax for ax in squeeze_axes if ax < v.ndim and v.shape[ax] == 1]
        if drop:
            v = v.reshape(tuple(d for ax, d in enumerate(v.shape) if ax not in drop))
    if v.shape != shape:
        if v.ndim > len(shape):
            # as MXNet: leading size-1 axes of the value are dropped (a[0] = ones((1, 1, 3)))
            lead = 0
            while lead < v.ndim - len(shape) and v.shape[lead] == 1:
                lead += 1
            if lead:
                v = v.reshape(v.shape[lead:])
        if v.shape == shape:
            return v
        cur = (1,) * (len(shape) - v.ndim) + v.shape if v.ndim <= len(shape) else None
        broadcastable = cur is not None and all(c in (1, t) for c, t in zip(cur, shape))
        if v.size == 0 or (not broadcastable and v.size == int(np.prod(shape))):
            v = v.reshape(shape)
        else:
            v = v.broadcast_to(shape)
    return v


_INPLACE_RECORDING = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when "
                      "recording with autograd.")


def _check_recording(value):
    """As MXNet: assigning part of an array from a value that is in the autograd graph, while
    recording, is an in-place operation on the array and raises MXNetError."""
    if _M.recording and isinstance(value, NDArray) and value._ag is not None:
        raise MXNetError(_INPLACE_RECORDING)


def setitem(arr, key, value):
    nd = _nd()
    exp = _expand_key(arr, key)
    if exp is None:
        _check_recording(value)
        if isinstance(key, tuple):               # element positions, scattered into the flat array
            flat = _advanced_flat(arr, key)
            host, dst, shape = flat.reshape(-1), arr.reshape((-1,)), flat.shape
        else:                                    # rows; an NDArray key stays on its device
            host = None if isinstance(key, NDArray) else _int_indices(key)
            dst, shape = arr, (key.shape if host is None else host.shape) + arr.shape[1:]
        if isinstance(value, (numbers.Number, np.generic)):
            v = nd.full(shape, value, ctx=arr.context, dtype=arr._dtype)
        else:
            v = _value_array(arr, value, shape)
        keep = _last_writes(host, dst.shape[0]) if host is not None and dst.size else None
        if keep is None:
            idx = key if host is None else array(host, ctx=arr.context, dtype=np.int64)
            v = v.reshape(idx.shape + dst.shape[1:])
        else:
            idx = array(host.reshape(-1)[keep], ctx=arr.context, dtype=np.int64)
            v = nd.take(v.reshape((-1,) + dst.shape[1:]),
                        array(keep, ctx=arr.context, dtype=np.int64), axis=0)
        nd._scatter_set_rows(dst, idx, v, out=dst)
        return
    per_axis, new_axes = exp
    starts, steps, lens, int_axes = _plan(arr, per_axis)
    if 0 in lens:
        return
    if not (tuple(lens) == arr.shape and all(st > 0 for st in steps)):
        _check_recording(value)
    if _contiguous(arr.shape, starts, steps, lens):
        view = getitem(arr, key) if key is not Ellipsis else arr
        flat_shape = view.shape
        if isinstance(value, (numbers.Number, np.generic)):
            nd._full(shape=flat_shape, value=float(value), dtype=arr._dtype.name, out=view)
        else:
            v = _value_array(arr, value, flat_shape) if not (
                isinstance(value, NDArray) and value.shape != flat_shape and value.size == view.size
            ) else _value_array(arr, value.reshape(flat_shape), flat_shape)
            if v._chunk is view._chunk and v._offset == view._offset:
                return
            nd._copyto(v, out=view)
        return
    ends = _ends(starts, steps, lens)
    if isinstance(value, (numbers.Number, np.generic)):
        nd._slice_assign_scalar(arr, scalar=float(value), begin=tuple(starts), end=ends,
                                step=tuple(steps), out=arr)
    else:
        bcast = tuple(n for ax, n in enumerate(lens) if ax not in int_axes) or (1,)
        v = _value_array(arr, value, bcast, new_axes).reshape(tuple(lens))
        nd._slice_assign(arr, v, begin=tuple(starts), end=ends, step=tuple(steps), out=arr)
