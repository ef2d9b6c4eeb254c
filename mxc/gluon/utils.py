"""Helpers of Gluon: splitting batches across devices, global-norm clipping, file checks, and the
small formatting/shape utilities the other gluon modules share (as mxnet.gluon.utils)."""
import collections
import hashlib
import os
import warnings
import weakref

import numpy as np

from .. import ndarray
from .._core import atomic_write as _atomic
from ..util import is_np_shape
from ..symbol import Symbol

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file"]


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split `data` into `num_slice` pieces along `batch_axis` (always a list)."""
    size = data.shape[batch_axis]
    if num_slice <= 0:
        raise ValueError(f"split_data: num_slice must be positive, got {num_slice}")
    if even_split and size % num_slice != 0:
        raise ValueError(
            "data with shape %s cannot be evenly split into %d slices along axis %d. "
            "Use a batch size that's multiple of %d or set even_split=False to allow "
            "uneven partitioning of data." % (str(data.shape), num_slice, batch_axis, num_slice))
    if not even_split and size < num_slice:
        raise ValueError(f"split_data: cannot split {size} samples along axis {batch_axis} into "
                         f"{num_slice} non-empty slices")
    step, extra = divmod(size, num_slice)
    bounds = [0]
    for i in range(num_slice):
        bounds.append(bounds[-1] + step + (1 if i < extra else 0))
    if batch_axis == 0:
        return [data[bounds[i]:bounds[i + 1]] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data, ctx_list, batch_axis=0, even_split=True):
    """Split `data` along `batch_axis` into one slice per context and copy each there."""
    if not isinstance(data, ndarray.NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    pieces = split_data(data, len(ctx_list), batch_axis, even_split)
    return [p.as_in_context(c) for p, c in zip(pieces, ctx_list)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale `arrays` in place so that their joint 2-norm is at most `max_norm`; returns the norm
    before scaling (a float, or a shape-(1,) NDArray when ``check_isfinite=False``)."""
    if len(arrays) == 0:
        raise ValueError("clip_global_norm: arrays must not be empty")
    ctx = arrays[0].context

    def sq(arr):
        if arr.stype == "default":
            flat = arr.reshape((-1,))
            return ndarray.dot(flat, flat)
        return ndarray.square(ndarray.norm(arr)).reshape((1,))

    total = ndarray.add_n(*[sq(a).as_in_context(ctx).reshape((1,)) for a in arrays])
    total = ndarray.sqrt(total)
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx), dim=0))
    for arr in arrays:
        arr *= scale.as_in_context(arr.context)
    return total.asscalar() if check_isfinite else total


def _indent(s_, numSpaces):  # noqa: N803  (MXNet's parameter name)
    """Indent every line but the first by `numSpaces` spaces."""
    lines = s_.split("\n")
    if len(lines) == 1:
        return s_
    return "\n".join([lines[0]] + [" " * numSpaces + line for line in lines[1:]])


def check_sha1(filename, sha1_hash):
    """True when the SHA-1 of the file's content equals `sha1_hash` (hex digits)."""
    h = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest() == sha1_hash


def replace_file(src, dst):
    """Atomically move `src` over `dst`."""
    try:
        os.replace(src, dst)
    except OSError as e:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed. "
                      "Please retry the download.") from e


def _body_chunks(url, verify_ssl):
    """The body of a 200 response to `url`, in chunks: through requests (MXNet's own dependency)
    where it is installed, else the standard library's urllib."""
    try:
        import requests
    except ImportError:
        requests = None
    if requests is not None:
        r = requests.get(url, stream=True, verify=verify_ssl)
        if r.status_code != 200:
            raise RuntimeError(f"Failed downloading url {url} (HTTP {r.status_code})")
        return (c for c in r.iter_content(chunk_size=1 << 16) if c)
    import ssl
    import urllib.request
    context = None if verify_ssl else ssl._create_unverified_context()
    resp = urllib.request.urlopen(url, context=context, timeout=60)   # raises on 4xx/5xx
    if resp.status != 200:
        resp.close()
        raise RuntimeError(f"Failed downloading url {url} (HTTP {resp.status})")

    def chunks():
        with resp:
            yield from iter(lambda: resp.read(1 << 16), b"")
    return chunks()


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True):
    """Download `url` to `path` (a file, or a directory to put the URL's file name in; default
    the current directory) and return the file's path, as MXNet's. An existing file is kept
    unless `overwrite`, or `sha1_hash` is given and does not match. The body is written to a
    temporary name beside the target and renamed over it when complete, so readers and other
    processes downloading the same file never see a part. A failed attempt (connection error,
    status other than 200) is retried, `retries` attempts in all; a downloaded file whose SHA-1
    is not `sha1_hash` raises UserWarning (as MXNet)."""
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise ValueError("Can't construct file-name from this URL. "
                             "Please set the `path` option manually.")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise ValueError(f"Number of retries should be at least 0, currently it's {retries}")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). "
                      "Adding certificate verification is strongly advised.")
    if not overwrite and os.path.exists(fname) and (not sha1_hash or check_sha1(fname, sha1_hash)):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    for left in range(max(1, retries) - 1, -1, -1):     # `retries` attempts in all, as MXNet
        try:
            print(f"Downloading {fname} from {url}...")
            _atomic.write_bytes(fname, _body_chunks(url, verify_ssl))
            break
        except Exception as e:      # noqa: BLE001  any failure of an attempt is retried
            if left == 0:
                raise
            print(f"download failed due to {e!r}, retrying, {left} attempt"
                  f"{'s' if left > 1 else ''} left")
    if sha1_hash and not check_sha1(fname, sha1_hash):
        raise UserWarning(f"File {fname} is downloaded but the content hash does not match. The "
                          "repo may be outdated or download may be incomplete. If the "
                          '"repo_url" is overridden, consider switching to the default repo.')
    return fname


def _get_repo_url():
    """Base URL of the Gluon repository (MXNET_GLUON_REPO overrides), ending in '/'."""
    url = os.environ.get("MXNET_GLUON_REPO",
                         "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return url if url.endswith("/") else url + "/"


def _get_repo_file_url(namespace, filename):
    return f"{_get_repo_url()}{namespace}/{filename}"


def _brief_print_list(lst, limit=7):
    """At most `limit` quoted items joined by ', ', eliding the middle with '...'."""
    lst = list(lst)
    if len(lst) > limit:
        return (_brief_print_list(lst[:limit // 2], limit) + ", ..., "
                + _brief_print_list(lst[-limit // 2:], limit))
    return ", ".join(f"'{i}'" for i in lst)


class HookHandle:
    """Detaches a hook registered with register_forward_hook/pre_hook (also a context manager)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        if self._hooks_dict_ref is not None:
            raise AssertionError("The same handle cannot be attached twice.")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self):
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __getstate__(self):
        return (self._hooks_dict_ref() if self._hooks_dict_ref is not None else None, self._id)

    def __setstate__(self, state):
        hooks = state[0] if state[0] is not None else collections.OrderedDict()
        self._keep = hooks if state[0] is None else None
        self._hooks_dict_ref = weakref.ref(hooks)
        self._id = state[1]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


def shape_is_known(shape):
    """True when no dimension of `shape` is unknown (0, or -1 with numpy shape semantics)."""
    if shape is None:
        return False
    unknown = -1 if is_np_shape() else 0
    if len(shape) == 0:
        return unknown == -1
    for d in shape:
        if d == unknown:
            return False
        if d < unknown:
            raise AssertionError(f"shape dimension size cannot be less than {unknown}, while "
                                 f"received {d}")
    return True


def _check_same_symbol_type(symbols):
    """The Symbol class of `symbols` (mxc has one symbol type)."""
    return Symbol


def _check_all_np_ndarrays(out):
    """Numpy-array mode is not part of mxc's 1.x front: nothing to check."""
    return None
