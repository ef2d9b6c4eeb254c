"""ImageRecordIter and ImageRecordUInt8Iter: MXNet 1.9.1's image RecordIO iterators.

Pipeline: a producer thread reads records (sequentially, or by offset for shuffling and
sharding), hands each image to ``preprocess_threads`` worker threads that decode it (Pillow,
which releases the GIL) and augment it and write it straight into its slot of a preallocated
batch (Cython kernels without the GIL: resize, crop + mirror + normalise + HWC -> CHW in one
pass), and queues finished batches, up to ``prefetch_buffer`` ahead of the consumer.

Semantics follow ``src/io/iter_image_recordio_2.cc`` and ``image_aug_default.cc``:

- without augmentation, a batch equals MXNet's bit for bit: images smaller than ``data_shape``
  are resized up, larger ones are centre-cropped, and ``(pixel - mean) * (scale / std)`` is
  evaluated in float32 in MXNet's order; ``resize`` (shorter edge) uses OpenCV-exact bilinear
  interpolation (``inter_method=1``, the default);
- ``round_batch=True`` fills the last batch from the start of the data, reports ``pad`` and
  resumes the next epoch after the samples used (MXNet's roll-over); with ``round_batch=False``
  the padding samples are zeros (MXNet leaves stale memory and reports pad 0 there; mxc reports
  the true pad);
- ``shuffle`` reshuffles every epoch; ``num_parts``/``part_index`` give every worker a
  contiguous shard of the records (every record in exactly one part), the shards MXNet's
  InputSplit makes (by byte range of the file, or by record count with ``path_imgidx``).
  Orders and random augmentation derive from ``seed`` (and ``seed_aug``), per sample rather
  than per thread, so they do not depend on thread scheduling: the same seed gives the same
  batches.  They are not MXNet's random streams.

Random geometric augmentation (``max_rotate_angle``, ``max_shear_ratio``, random scale and
aspect ratio) warps with Pillow's affine transform; OpenCV's warpAffine may differ by a grey
level at some pixels.  ``random_h/s/l``, ``mean_img`` and ``path_imglist`` are not supported
and are refused with a ValueError.
"""
import math
import os
import queue
import random
import sys
import threading
import weakref

import numpy as np

from .. import recordio
from ..base import MXNetError, OperatorInputError as _ParamError  # bad parameter: both
from ..io.io import DataBatch, DataDesc, DataIter
from ..ndarray import ndarray as _nd
from ..ops.cpu import _pixel
from . import image as _img

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

# accepted for compatibility, no effect here
_IGNORED = {"verbose", "shuffle_chunk_size", "shuffle_chunk_seed", "device_id", "ctx",
            "prefetch_buffer_keep", "dtype_label"}
_UNSUPPORTED = {"random_h", "random_s", "random_l", "mean_img", "path_imglist", "rotate",
                "rotate_list"}

# MXNet's PCA lighting eigenvectors scaled by the eigenvalues (image_aug_default.cc)
_EIGVEC = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                    [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                    [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], dtype=np.float32)


class _Pool:
    """A few daemon worker threads (daemon: a consumer that stops early never blocks exit)."""

    def __init__(self, n, name):
        self._q = queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._run, daemon=True, name=f"{name}-{i}")
                         for i in range(n)]
        for t in self._threads:
            t.start()

    def _run(self):
        while True:
            job = self._q.get()
            if job is None:
                return
            job()
            del job  # a finished job must not keep its iterator alive while the queue is empty

    def submit(self, job):
        self._q.put(job)

    def close(self):
        for _ in self._threads:
            self._q.put(None)


class _Batch:
    """A batch being filled by the workers; ``done`` is set when every slot is written."""

    def __init__(self, n_tasks, data, label, index, pad, stop):
        self.stop = stop  # set when the epoch is abandoned (reset / close): skip the work
        self.data = data
        self.label = label
        self.index = index
        self.pad = pad
        self.error = None
        self._left = n_tasks
        self._lock = threading.Lock()
        self.done = threading.Event()
        if n_tasks == 0:
            self.done.set()

    def finish_one(self, error=None):
        with self._lock:
            if error is not None and self.error is None:
                self.error = error
            self._left -= 1
            if self._left == 0:
                self.done.set()


def _interp(method, ow, oh, nw, nh, rng):
    """MXNet's GetInterMethod: 9 = auto, 10 = random."""
    if method == 9:
        if nw > ow and nh > oh:
            return 2
        if nw < ow and nh < oh:
            return 3
        return 1
    if method == 10:
        return rng.randint(0, 4)
    return method


class ImageRecordIter(DataIter):
    """Iterate over images packed in a RecordIO file, with MXNet's parameters.

    Parameters
    ----------
    path_imgrec : str
        The ``.rec`` file.
    data_shape : tuple of 3 ints
        (channels, height, width); channels 1 (grey), 3 (RGB) or 4 (RGBA).
    batch_size : int
    path_imgidx : str, optional
        The ``.idx`` file (record order; without it the records are located by scanning).
    label_width : int, default 1
    shuffle : bool, default False
    seed : int, default 0
        Seed of the shuffling (and of augmentation unless ``seed_aug``).
    round_batch : bool, default True
    preprocess_threads : int, default 4
    prefetch_buffer : int, default 4
        Batches prepared ahead of the consumer.
    num_parts, part_index : int
        Shard the records for distributed workers.
    resize : int, default -1
        Resize the shorter edge to this before cropping.
    rand_crop, random_resized_crop, rand_mirror, mirror : bool
    max_rotate_angle : int; max_shear_ratio, max_aspect_ratio, min_aspect_ratio,
    max_random_scale, min_random_scale, max_img_size, min_img_size : float
        Random affine warp (rotation, shear, scale, aspect ratio).
    max_random_area, min_random_area : float
        Area range of ``random_resized_crop``.
    max_crop_size, min_crop_size : int
        Random square crop size, resized to ``data_shape``.
    pad : int; fill_value : int
        Constant border added before cropping.
    inter_method : int, default 1
        0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos, 9 auto, 10 random.
    brightness, contrast, saturation, pca_noise : float
        Colour jitter on the uint8 image (MXNet's formulas).
    max_random_contrast, max_random_illumination : float
        Random contrast factor / offset at normalisation.
    mean_r, mean_g, mean_b, mean_a, std_r, std_g, std_b, std_a, scale : float
        ``out = (pixel - mean) * scale / std``.
    dtype : str, default 'float32'
        'float32', 'uint8' (no normalisation) or 'int8' (pixel - mean, saturated).
    data_name, label_name : str
    seed_aug : int, optional
        Separate seed for augmentation.
    """

    _default_dtype = "float32"
    _plain = False  # set by __init__: crop + mirror only, the batched per-job path

    def __init__(self, path_imgrec=None, data_shape=None, batch_size=None, path_imgidx="",
                 label_width=1, shuffle=False, seed=0, round_batch=True, preprocess_threads=4,
                 prefetch_buffer=4, num_parts=1, part_index=0, resize=-1, rand_crop=False,
                 random_resized_crop=False, rand_mirror=False, mirror=False, max_rotate_angle=0,
                 max_shear_ratio=0.0, max_aspect_ratio=0.0, min_aspect_ratio=None,
                 max_random_scale=1.0, min_random_scale=1.0, max_random_area=1.0,
                 min_random_area=1.0, max_img_size=1e10, min_img_size=0.0, max_crop_size=-1,
                 min_crop_size=-1, pad=0, fill_value=255, inter_method=1, brightness=0.0,
                 contrast=0.0, saturation=0.0, pca_noise=0.0, max_random_contrast=0.0,
                 max_random_illumination=0.0, mean_r=0.0, mean_g=0.0, mean_b=0.0, mean_a=0.0,
                 std_r=1.0, std_g=1.0, std_b=1.0, std_a=1.0, scale=1.0, dtype=None,
                 data_name="data", label_name="softmax_label", seed_aug=None, **kwargs):
        name = type(self).__name__
        unknown = set(kwargs) - _IGNORED - _UNSUPPORTED
        if unknown:
            raise _ParamError(f"{name}: unknown parameter(s) {sorted(unknown)}")
        unsupported = {k for k in set(kwargs) & _UNSUPPORTED if kwargs[k] not in (None, "", 0)}
        if unsupported:
            raise _ParamError(f"{name}: parameter(s) {sorted(unsupported)} are not supported by "
                             f"mxc")
        if not path_imgrec:
            raise _ParamError(f"{name}: path_imgrec is required")
        if not os.path.isfile(path_imgrec):
            raise MXNetError(f"{name}: path_imgrec {path_imgrec} does not exist")
        if path_imgidx and not os.path.isfile(path_imgidx):
            raise MXNetError(f"{name}: path_imgidx {path_imgidx} does not exist")
        try:
            data_shape = tuple(int(d) for d in data_shape)
        except TypeError:
            raise _ParamError(f"{name}: data_shape must be (channels, height, width), got "
                             f"{data_shape!r}") from None
        if len(data_shape) != 3:
            raise _ParamError(f"{name}: data_shape must have 3 dimensions (channels, height, "
                             f"width), got {data_shape}")
        if data_shape[0] not in (1, 3, 4) or data_shape[1] <= 0 or data_shape[2] <= 0:
            raise _ParamError(f"{name}: data_shape {data_shape} needs 1, 3 or 4 channels and a "
                             f"positive height and width")
        if batch_size is None or int(batch_size) <= 0:
            raise _ParamError(f"{name}: batch_size must be a positive int, got {batch_size!r}")
        if int(label_width) < 1:
            raise _ParamError(f"{name}: label_width must be >= 1, got {label_width}")
        if int(preprocess_threads) < 1:
            raise _ParamError(f"{name}: preprocess_threads must be >= 1, got "
                             f"{preprocess_threads}")
        if int(prefetch_buffer) < 1:
            raise _ParamError(f"{name}: prefetch_buffer must be >= 1, got {prefetch_buffer}")
        if not 0 <= int(part_index) < int(num_parts):
            raise _ParamError(f"{name}: part_index {part_index} must be in [0, num_parts="
                             f"{num_parts})")
        if inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise _ParamError(f"{name}: invalid inter_method {inter_method}: valid values are "
                             f"0, 1, 2, 3, 4, 9, 10")
        dtype = dtype or self._default_dtype
        if dtype not in ("float32", "uint8", "int8"):
            raise _ParamError(f"{name}: dtype must be 'float32', 'uint8' or 'int8', got {dtype!r}")
        if random_resized_crop and (min_random_scale != 1.0 or max_random_scale != 1.0 or
                                    min_crop_size != -1 or max_crop_size != -1 or rand_crop):
            raise _ParamError(f"{name}: random_resized_crop conflicts with min_random_scale, "
                             f"max_random_scale, min_crop_size, max_crop_size and rand_crop")
        if (max_crop_size != -1 or min_crop_size != -1) and max_crop_size < min_crop_size:
            raise _ParamError(f"{name}: max_crop_size {max_crop_size} < min_crop_size "
                             f"{min_crop_size}")
        if min_aspect_ratio is not None:
            self._ar = (float(min_aspect_ratio), float(max_aspect_ratio))
        else:
            self._ar = (1.0 - float(max_aspect_ratio), 1.0 + float(max_aspect_ratio))
        if random_resized_crop and (self._ar[0] <= 0 or self._ar[0] > self._ar[1]
                                    or min_random_area > max_random_area):
            raise _ParamError(f"{name}: need 0 < min_aspect_ratio <= max_aspect_ratio and "
                             f"min_random_area <= max_random_area")
        self.path_imgrec = str(path_imgrec)
        self.data_shape = data_shape
        self.batch_size = int(batch_size)
        self.label_width = int(label_width)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.seed_aug = None if seed_aug is None else int(seed_aug)
        self.round_batch = bool(round_batch)
        self.preprocess_threads = int(preprocess_threads)
        self.prefetch_buffer = int(prefetch_buffer)
        self.dtype = np.dtype(dtype)
        p = dict(resize=int(resize), rand_crop=bool(rand_crop),
                 random_resized_crop=bool(random_resized_crop), rand_mirror=bool(rand_mirror),
                 mirror=bool(mirror), max_rotate_angle=int(max_rotate_angle),
                 max_shear_ratio=float(max_shear_ratio), max_random_scale=float(max_random_scale),
                 min_random_scale=float(min_random_scale), max_random_area=float(max_random_area),
                 min_random_area=float(min_random_area), max_img_size=float(max_img_size),
                 min_img_size=float(min_img_size), max_crop_size=int(max_crop_size),
                 min_crop_size=int(min_crop_size), pad=int(pad), fill_value=int(fill_value),
                 inter_method=int(inter_method), brightness=float(brightness),
                 contrast=float(contrast), saturation=float(saturation),
                 pca_noise=float(pca_noise), max_random_contrast=float(max_random_contrast),
                 max_random_illumination=float(max_random_illumination))
        self._p = p
        ar_lo, ar_hi = self._ar
        # decided once, not per image: does any image get the random affine warp?
        self._warps = (p["max_rotate_angle"] > 0 or p["max_shear_ratio"] > 0
                       or p["max_random_scale"] != 1.0 or p["min_random_scale"] != 1.0
                       or (not p["random_resized_crop"] and (ar_lo != 1.0 or ar_hi != 1.0))
                       or p["max_img_size"] != 1e10 or p["min_img_size"] != 0.0)
        # crop + mirror into float32 and nothing else: the per-job batched path (_process_plain)
        # (a subclass with its own _process, the detection iterator, keeps that)
        self._plain = (type(self)._process is ImageRecordIter._process
                       and self.dtype == np.float32 and p["resize"] == -1 and not self._warps
                       and p["pad"] == 0 and not p["random_resized_crop"]
                       and p["max_crop_size"] == -1 and p["min_crop_size"] == -1
                       and p["inter_method"] != 10  # auto-random draws even without a resize
                       and p["brightness"] == 0 and p["contrast"] == 0
                       and p["saturation"] == 0 and p["pca_noise"] == 0
                       and p["max_random_contrast"] == 0 and p["max_random_illumination"] == 0)
        c = data_shape[0]
        means = np.array([mean_r, mean_g, mean_b, mean_a][:c] if c > 1 else [mean_r], np.float32)
        stds = np.array([std_r, std_g, std_b, std_a][:c] if c > 1 else [std_r], np.float32)
        if np.any(stds == 0):
            raise _ParamError(f"{name}: std_r/g/b/a must be non-zero")
        self._mean = means
        # int8 batches: pixel - mean rounded half away from zero (std::round), saturated
        self._mean_int = (np.sign(means) * np.floor(np.abs(means) + 0.5)).astype(np.int16)
        self._std = stds
        self._scale = np.float32(scale)
        # the normalisation multiplier when contrast is not jittered: contrast 1 times scale
        self._mult = (np.float32(1.0 * self._scale) / self._std).astype(np.float32)
        self._cmap = np.arange(c, dtype=np.int32)
        self._decode_flag = {1: 0, 3: 1, 4: -1}[c]

        label_shape = (self.batch_size,) if self.label_width == 1 else \
            (self.batch_size, self.label_width)
        self._open_records(path_imgidx, num_parts, part_index, label_shape, data_name,
                           label_name)

    def _open_records(self, path_imgidx, num_parts, part_index, label_shape, data_name,
                      label_name):
        """Locate this part's records, declare the batch shapes, start the first epoch."""
        name = type(self).__name__
        # record table: byte offsets of this part's records, in file / index order
        self._rec = recordio.MXRecordIO(self.path_imgrec, "r")
        if path_imgidx:
            idx = recordio.MXIndexedRecordIO(path_imgidx, self.path_imgrec, "r")
            offsets = np.array([idx.idx[k] for k in idx.keys], np.int64)
            idx.close()
        else:
            offsets = np.asarray(recordio.scan_offsets(self.path_imgrec), np.int64)
        self._offsets = self._part(offsets, int(num_parts), int(part_index), bool(path_imgidx))
        self.num_image = len(self._offsets)
        if self.num_image == 0:
            raise MXNetError(f"{name}: no records in {self.path_imgrec} for part {part_index} of "
                             f"{num_parts}")
        if self.round_batch and self.num_image < self.batch_size:
            raise MXNetError(f"{name}: number of input images ({self.num_image}) must be bigger "
                             f"than the batch size ({self.batch_size}) with round_batch")

        self.provide_data = [DataDesc(data_name, (self.batch_size,) + self.data_shape,
                                      self.dtype.type)]
        self.provide_label = [DataDesc(label_name, label_shape, np.float32)]
        self._label_shape = label_shape

        self._epoch = 0           # epoch number of the next reset / start
        self._resume = 0          # samples of the current epoch already used by a wrapped batch
        self._orders = {}         # epoch -> sample order (shared by the wrap of the previous one)
        self._bufpool = []
        self._pool = _Pool(self.preprocess_threads, f"mxc-{name}-worker")
        self._producer = None
        self._stop = None
        self._out = None
        self._state_lock = threading.Lock()
        self._stop_box = [None]  # the running epoch's stop event, for the finalizer
        self._finalizer = weakref.finalize(self, ImageRecordIter._shutdown_resources, self._pool,
                                           self._rec, self._stop_box)
        self._start_epoch()

    def _part(self, offsets, num_parts, part_index, indexed):
        """This part's records, as dmlc's InputSplit gives them to MXNet: with an index, parts
        of ceil(n / num_parts) records; without, the records that start in the part's byte
        range (the file cut in num_parts equal ranges, rounded up to 4 bytes)."""
        if indexed:
            step = (len(offsets) + num_parts - 1) // num_parts
            return offsets[step * part_index:step * (part_index + 1)]
        size = os.path.getsize(self.path_imgrec)
        step = ((size + num_parts - 1) // num_parts + 3) // 4 * 4
        lo, hi = min(step * part_index, size), min(step * (part_index + 1), size)
        return offsets[(offsets >= lo) & (offsets < hi)]

    # ---- lifecycle -------------------------------------------------------------------------
    @staticmethod
    def _shutdown_resources(pool, rec, stop_box):
        if stop_box[0] is not None:
            stop_box[0].set()
        pool.close()
        rec.close()

    def close(self):
        """Stop the producer and worker threads and close the file."""
        self._stop_producer()
        self._finalizer()

    def _stop_producer(self):
        if self._producer is None:
            return
        self._stop.set()
        # unblock a producer waiting on a full queue
        while self._producer.is_alive():
            try:
                self._out.get(timeout=0.05)
            except queue.Empty:
                pass
        self._producer.join()
        self._producer = None

    def _order(self, epoch):
        order = self._orders.get(epoch)
        if order is None:
            if self.shuffle:
                order = np.random.RandomState([self.seed & 0xFFFFFFFF, epoch]).permutation(
                    self.num_image)
            else:
                order = np.arange(self.num_image)
            self._orders = {e: o for e, o in self._orders.items() if e >= epoch - 1}
            self._orders[epoch] = order
        return order

    def _start_epoch(self):
        epoch = self._epoch
        order = self._order(epoch)
        wrap = self._order(epoch + 1) if self.round_batch else None
        plan = []
        pos = self._resume
        bs = self.batch_size
        resume_next = 0
        while pos < self.num_image:
            take = order[pos:pos + bs]
            pos += len(take)
            npad = bs - len(take)
            epochs = [epoch] * len(take)
            if npad and self.round_batch:
                take = np.concatenate([take, wrap[:npad]])
                epochs += [epoch + 1] * npad
                resume_next = npad
            plan.append((take, epochs, npad))
        self._next_resume = resume_next
        self._stop = threading.Event()
        self._stop_box[0] = self._stop
        self._out = queue.Queue(maxsize=self.prefetch_buffer)
        # the thread holds only a weak reference, so an iterator dropped mid-epoch is collected
        # (its finalizer stops the thread) instead of being kept alive by its own producer
        self._producer = threading.Thread(target=ImageRecordIter._produce,
                                          args=(weakref.ref(self), plan, self._stop, self._out),
                                          daemon=True, name=f"mxc-{type(self).__name__}-producer")
        self._producer.start()

    def reset(self):
        """Start the next epoch (resuming after the samples a wrapped last batch used)."""
        self._stop_producer()
        self._epoch += 1
        self._resume = self._next_resume
        self._start_epoch()

    # ---- producer ----------------------------------------------------------------------------
    @staticmethod
    def _produce(ref, plan, stop, out):
        inflight = []
        max_inflight = 2  # one batch being decoded while the previous completes keeps workers busy
        put = ImageRecordIter._put
        emit = ImageRecordIter._emit
        try:
            for take, epochs, npad in plan:
                it = ref()
                if it is None or stop.is_set():
                    return
                inflight.append(it._submit(take, epochs, npad, stop))
                del it
                if len(inflight) >= max_inflight:
                    if not emit(inflight.pop(0), stop, out):
                        return
            while inflight:
                if not emit(inflight.pop(0), stop, out):
                    return
            put(out, stop, None)
        except BaseException as exc:  # reported to the consumer by next()
            put(out, stop, exc)

    @staticmethod
    def _put(out, stop, item):
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    @staticmethod
    def _emit(batch, stop, out):
        while not batch.done.wait(0.1):
            if stop.is_set():
                return False
        return ImageRecordIter._put(out, stop, batch)

    def _submit(self, take, epochs, npad, stop):
        bs = self.batch_size
        n_real = len(take)
        data, label, index = self._buffers()
        if n_real < bs:  # round_batch=False: padding samples are zeros
            data[n_real:] = 0
            label[n_real:] = 0
            index[n_real:] = 0
        # a job is a run of consecutive slots (two per worker thread, so that a slow image
        # does not hold up the batch): a queue hand-off, a lock round and a thread wake-up per
        # run instead of per image. Records are read here, by the producer: the workers never
        # touch the file, which close() may then close as soon as the producer stopped
        njobs = min(n_real, 2 * self.preprocess_threads)
        batch = _Batch(njobs, data, label, index, npad, stop)
        # the whole batch's records in one call (copied out of the file's mapping without the GIL)
        raws = self._rec.handle.read_many(self._offsets[take[:n_real]])
        for j in range(njobs):
            lo, hi = j * n_real // njobs, (j + 1) * n_real // njobs
            samples = [int(k) for k in take[lo:hi]]
            self._pool.submit(_Job(self, batch, lo, samples, raws[lo:hi], epochs[lo:hi]))
        return batch

    def _buffers(self):
        # Reuse the arrays of a batch the consumer has dropped: only this pool still refers to
        # them (refcount 2 = the pool's tuple + getrefcount's argument; an NDArray or view made
        # from them holds a reference).  Saves faulting in fresh pages for every batch.
        for bufs in self._bufpool:
            if all(sys.getrefcount(a) == 2 for a in bufs):
                return bufs
        bufs = (np.empty((self.batch_size,) + self.data_shape, self.dtype),
                np.empty(self._label_shape, np.float32), np.zeros(self.batch_size, np.uint64))
        if len(self._bufpool) < self.prefetch_buffer + 4:
            self._bufpool.append(bufs)
        return bufs

    # ---- per image (worker threads) ----------------------------------------------------------
    def _rng(self, epoch, sample):
        base = self.seed if self.seed_aug is None else self.seed_aug
        return random.Random((base * 1000003 + epoch) * 1000003 + sample)

    def _decode(self, payload, where):
        """The record's image as HxWxC RGB uint8, with the channels data_shape asks for."""
        try:
            img = _img.decode_np(payload, self._decode_flag, True)
        except ValueError as exc:
            raise MXNetError(f"{where}: {exc}") from None
        if img.shape[2] != self.data_shape[0]:
            raise MXNetError(f"{where}: decoded {img.shape[2]} channels, data_shape wants "
                             f"{self.data_shape[0]}")
        return img

    def _process(self, batch, slot, sample, epoch, raw):
        self._augment_slot(batch, slot, sample, epoch, self._read(batch, slot, sample, raw))

    def _process_plain(self, batch, slot, sample, epoch, raw, items):
        """``_process`` without augmentation other than crop and mirror, into float32: the
        crop is queued on ``items`` for one ``crop_normalize_batch`` call per job.  The same
        random draws, in the same order, as ``_process``; an image smaller than ``data_shape``
        takes the general path (it needs a resize)."""
        img = self._read(batch, slot, sample, raw)
        h, w = img.shape[:2]
        c, oh, ow = self.data_shape
        if h < oh or w < ow:
            self._augment_slot(batch, slot, sample, epoch, img)
            return
        p = self._p
        y0, x0 = h - oh, w - ow
        rng = None
        if p["rand_crop"]:
            rng = self._rng(epoch, sample)
            y0, x0 = rng.randint(0, y0), rng.randint(0, x0)
        else:
            y0, x0 = y0 // 2, x0 // 2
        mirror = p["mirror"]
        if p["rand_mirror"]:
            if rng is None:
                rng = self._rng(epoch, sample)
            mirror = rng.random() < 0.5 or mirror
        items.append((np.ascontiguousarray(img), y0, x0, mirror, slot))

    def _read(self, batch, slot, sample, raw):
        """Write the record's label and id into the batch; return its decoded image."""
        header, payload = recordio.unpack(raw)
        # label
        if header.flag > 0:
            lab = np.asarray(header.label, np.float32)
            if lab.size != self.label_width:
                raise MXNetError(f"record {sample} of {self.path_imgrec} has {lab.size} labels "
                                 f"but label_width is {self.label_width}")
        elif self.label_width != 1:
            raise MXNetError(f"record {sample} of {self.path_imgrec} has one label but "
                             f"label_width is {self.label_width}")
        else:
            lab = np.float32(header.label)
        batch.label[slot] = lab
        batch.index[slot] = header.id
        return self._decode(payload, f"record {sample} of {self.path_imgrec}")

    def _augment_slot(self, batch, slot, sample, epoch, img):
        """Augment a decoded image and write it into ``batch.data[slot]``."""
        p = self._p
        rng = self._rng(epoch, sample)
        c, oh, ow = self.data_shape
        resize = _img.resize_np

        if p["resize"] != -1:
            h, w = img.shape[:2]
            if h > w:
                nh, nw = p["resize"] * h // w, p["resize"]
            else:
                nh, nw = p["resize"], p["resize"] * w // h
            img = resize(img, nw, nh, _interp(p["inter_method"], w, h, nw, nh, rng))

        ar_lo, ar_hi = self._ar
        if self._warps:
            img = self._affine(img, rng)

        if p["pad"] > 0:
            k = p["pad"]
            img = np.pad(img, ((k, k), (k, k), (0, 0)), mode="constant",
                         constant_values=p["fill_value"])

        cropped = None
        if p["random_resized_crop"]:
            if (p["max_random_area"] != 1.0 or p["min_random_area"] != 1.0
                    or ar_lo != 1.0 or ar_hi != 1.0):
                h, w = img.shape[:2]
                area = h * w
                for _ in range(10):
                    target = area * rng.uniform(p["min_random_area"], p["max_random_area"])
                    ratio = rng.uniform(ar_lo, ar_hi)
                    ya = int(round(math.sqrt(target / ratio)))
                    xa = int(round(math.sqrt(target * ratio)))
                    if rng.random() > 0.5:
                        ya, xa = xa, ya
                    if ya <= h and xa <= w:
                        y = rng.randint(0, h - ya)
                        x = rng.randint(0, w - xa)
                        roi = np.ascontiguousarray(img[y:y + ya, x:x + xa])
                        cropped = resize(roi, ow, oh, _interp(p["inter_method"], xa, ya, ow, oh,
                                                              rng))
                        break
        elif p["max_crop_size"] != -1 or p["min_crop_size"] != -1:
            h, w = img.shape[:2]
            if w < p["max_crop_size"] or h < p["max_crop_size"]:
                raise MXNetError(f"record {sample}: image {w}x{h} smaller than max_crop_size "
                                 f"{p['max_crop_size']}")
            size = rng.randint(p["min_crop_size"], p["max_crop_size"])
            y, x = h - size, w - size
            if p["rand_crop"]:
                y, x = rng.randint(0, y), rng.randint(0, x)
            else:
                y, x = y // 2, x // 2
            roi = np.ascontiguousarray(img[y:y + size, x:x + size])
            cropped = resize(roi, ow, oh, _interp(p["inter_method"], size, size, ow, oh, rng))

        if cropped is not None:
            img, y0, x0 = cropped, 0, 0
        else:
            h, w = img.shape[:2]
            method = _interp(p["inter_method"], w, h, ow, oh, rng)
            if h < oh:
                nw = int(np.float32(oh) / np.float32(h) * np.float32(w))
                img = resize(img, nw, oh, method)
                h, w = img.shape[:2]
            if w < ow:
                nh = int(np.float32(ow) / np.float32(w) * np.float32(h))
                img = resize(img, ow, nh, method)
                h, w = img.shape[:2]
            if h < oh or w < ow:
                raise MXNetError(f"record {sample}: image size smaller than input shape")
            y0, x0 = h - oh, w - ow
            if p["rand_crop"]:
                y0, x0 = rng.randint(0, y0), rng.randint(0, x0)
            else:
                y0, x0 = y0 // 2, x0 // 2

        if (p["brightness"] > 0 or p["contrast"] > 0 or p["saturation"] > 0
                or p["pca_noise"] > 0):
            img = self._color(np.ascontiguousarray(img[y0:y0 + oh, x0:x0 + ow]), rng)
            y0 = x0 = 0

        is_mirrored = (p["rand_mirror"] and rng.random() < 0.5) or p["mirror"]
        img = np.ascontiguousarray(img)
        out = batch.data[slot]
        if self.dtype == np.uint8:
            _pixel.crop_to_chw(img, y0, x0, is_mirrored, self._cmap, None, None, out)
        elif self.dtype == np.int8:
            # MXNet's int8 iterator: saturate(pixel - round(mean)); no std, scale or jitter
            pixels = np.empty(out.shape, np.uint8)
            _pixel.crop_to_chw(img, y0, x0, is_mirrored, self._cmap, None, None, pixels)
            out[...] = np.clip(pixels.astype(np.int16) - self._mean_int[:, None, None], -128, 127)
        else:
            mc, mi = p["max_random_contrast"], p["max_random_illumination"]
            if mc == 0 and mi == 0:
                # MXNet draws both factors even when their ranges are 0 (contrast 1, offset 0);
                # the draws are this sample's last, so skipping them changes nothing
                mult = self._mult
                illum = 0
            else:
                contrast = np.float32((rng.random() * mc * 2 - mc + 1) * self._scale)
                illum = np.float32((rng.random() * mi * 2 - mi) * self._scale)
                mult = (contrast / self._std).astype(np.float32)
            _pixel.crop_normalize_to_chw(img, y0, x0, is_mirrored, self._cmap, self._mean, mult,
                                         out)
            if illum != 0:
                out += (illum / self._std).astype(np.float32)[:, None, None]

    def _affine(self, img, rng):
        """Random rotation / shear / scale / aspect warp (image_aug_default.cc's matrix)."""
        from PIL import Image
        p = self._p
        s = rng.random() * p["max_shear_ratio"] * 2 - p["max_shear_ratio"]
        angle = rng.randint(-p["max_rotate_angle"], p["max_rotate_angle"])
        a = math.cos(angle / 180.0 * math.pi)
        b = math.sin(angle / 180.0 * math.pi)
        scale = 1.0
        ratio = 1.0
        if not p["random_resized_crop"]:
            scale = rng.random() * (p["max_random_scale"] - p["min_random_scale"]) \
                + p["min_random_scale"]
            ratio = rng.random() * (self._ar[1] - self._ar[0]) + self._ar[0]
        hs = 2 * scale / (1 + ratio)
        ws = ratio * hs
        h, w = img.shape[:2]
        new_w = int(max(p["min_img_size"], min(p["max_img_size"], scale * w)))
        new_h = int(max(p["min_img_size"], min(p["max_img_size"], scale * h)))
        m = np.array([[hs * a - s * b * ws, hs * b + s * a * ws, 0.0],
                      [-b * ws, a * ws, 0.0]])
        m[0, 2] = (new_w - (m[0, 0] * w + m[0, 1] * h)) / 2
        m[1, 2] = (new_h - (m[1, 0] * w + m[1, 1] * h)) / 2
        # Pillow wants the inverse map (output -> input)
        inv = np.linalg.inv(np.vstack([m, [0.0, 0.0, 1.0]]))[:2].ravel()
        fill = (p["fill_value"],) * img.shape[2]
        bands = []
        for ch in range(img.shape[2]):
            im = Image.fromarray(np.ascontiguousarray(img[:, :, ch]))
            bands.append(np.asarray(im.transform((max(new_w, 1), max(new_h, 1)), Image.AFFINE,
                                                  tuple(inv), resample=Image.BILINEAR,
                                                  fillcolor=fill[ch])))
        return np.stack(bands, axis=2)

    def _color(self, img, rng):
        """Brightness / contrast / saturation in random order, then PCA noise (uint8, MXNet's
        formulas; its grey conversion reads the channels in the opposite order, kept here)."""
        p = self._p
        x = img.astype(np.float32)
        if p["brightness"] > 0 or p["contrast"] > 0 or p["saturation"] > 0:
            ab = 1.0 + rng.uniform(-p["brightness"], p["brightness"])
            ac = 1.0 + rng.uniform(-p["contrast"], p["contrast"])
            as_ = 1.0 + rng.uniform(-p["saturation"], p["saturation"])
            order = [0, 1, 2]
            rng.shuffle(order)
            for i in order:
                if i == 0:
                    x = np.clip(np.rint(x * ab), 0, 255)
                elif i == 1 and x.shape[2] >= 3:
                    gray = 0.114 * x[..., 0] + 0.587 * x[..., 1] + 0.299 * x[..., 2]
                    gm = float(np.rint(gray).mean())
                    x = np.clip(np.rint(x * ac + (1 - ac) * gm), 0, 255)
                elif i == 2 and x.shape[2] >= 3:
                    gray = np.rint(0.114 * x[..., 0] + 0.587 * x[..., 1] + 0.299 * x[..., 2])
                    x = np.clip(np.rint(x * as_ + gray[..., None] * (1 - as_)), 0, 255)
        if p["pca_noise"] > 0 and x.shape[2] >= 3:
            alpha = np.array([rng.gauss(0, p["pca_noise"]) for _ in range(3)], np.float32)
            pca = _EIGVEC @ alpha  # (r, g, b) offsets
            x[..., :3] = np.clip(np.trunc(x[..., :3] + pca), 0, 255)
        return x.astype(np.uint8)

    # ---- consumer ----------------------------------------------------------------------------
    def next(self):
        """The next DataBatch; StopIteration at the end of the epoch."""
        if self._producer is None:
            raise StopIteration
        item = self._out.get()
        if item is None:
            self._out.put(None)  # stay exhausted until reset
            raise StopIteration
        if isinstance(item, BaseException):
            self._out.put(None)
            raise item
        if item.error is not None:
            raise item.error
        return DataBatch([_nd.from_numpy(item.data)], [_nd.from_numpy(item.label)],
                         pad=item.pad, index=item.index,
                         provide_data=self.provide_data, provide_label=self.provide_label)

    def iter_next(self):
        try:
            self._current = self.next()
            return True
        except StopIteration:
            return False

    def getdata(self):
        return self._current.data

    def getlabel(self):
        return self._current.label

    def getpad(self):
        return self._current.pad

    def getindex(self):
        return self._current.index


class _Job:
    """A run of consecutive images of a batch (slots first, first + 1, ...) with their records,
    processed on a worker thread."""

    __slots__ = ("it", "batch", "first", "samples", "raws", "epochs")

    def __init__(self, it, batch, first, samples, raws, epochs):
        self.it, self.batch, self.first = it, batch, first
        self.samples, self.raws, self.epochs = samples, raws, epochs

    def __call__(self):
        it, batch = self.it, self.batch
        error = None
        items = [] if it._plain else None  # crops queued by _process_plain
        sample = None
        for k, sample in enumerate(self.samples):
            if batch.stop.is_set():
                break
            try:
                if items is None:
                    it._process(batch, self.first + k, sample, self.epochs[k], self.raws[k])
                else:
                    it._process_plain(batch, self.first + k, sample, self.epochs[k],
                                      self.raws[k], items)
            except MXNetError as exc:
                error = exc
            except Exception as exc:  # keep the worker alive; the consumer sees the error
                error = MXNetError(f"{type(it).__name__}: record {sample} of {it.path_imgrec}: "
                                   f"{exc!r}")
            if error is not None:
                break
        if items and error is None and not batch.stop.is_set():
            try:
                _pixel.crop_normalize_batch(items, it._cmap, it._mean, it._mult, batch.data)
            except Exception as exc:
                error = MXNetError(f"{type(it).__name__}: records {self.samples[0]}..{sample} "
                                   f"of {it.path_imgrec}: {exc!r}")
        self.raws = None
        batch.finish_one(error)


class ImageRecordUInt8Iter(ImageRecordIter):
    """ImageRecordIter producing uint8 batches (no mean/std normalisation)."""

    _default_dtype = "uint8"


class ImageRecordInt8Iter(ImageRecordIter):
    """ImageRecordIter producing int8 batches: each pixel minus its channel's mean (rounded),
    saturated to [-128, 127], as MXNet's (ImageRecordIter(dtype='int8') does the same)."""

    _default_dtype = "int8"
