"""ImageRecordIter / ImageRecordUInt8Iter against batches written by real MXNet 1.9.1.

tests/data/image_iter/ was made by tests/data/make_image_iter_fixtures.py with the oracle: the
records are PNG-encoded, so Pillow and OpenCV decode identical colour pixels and the batches
must be bit-identical.  Only greyscale decoding of colour PNGs differs: OpenCV converts inside
libpng, mxc with OpenCV's cvtColor formula; measured difference at most 1 grey level.
"""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

from mxc import recordio
from mxc.base import MXNetError
from mxc.io import ImageRecordIter, ImageRecordUInt8Iter

HERE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "image_iter")
REC = os.path.join(HERE, "tiny.rec")
IDX = os.path.join(HERE, "tiny.idx")
NORM = dict(mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12,
            std_b=57.375)


@pytest.fixture(scope="module")
def exp():
    return np.load(os.path.join(HERE, "expected.npz"))


def run(cls, epochs=2, **kw):
    kw.setdefault("path_imgrec", REC)
    kw.setdefault("batch_size", 4)
    kw.setdefault("preprocess_threads", 2)
    it = cls(**kw)
    d, lab, pad, idx = [], [], [], []
    try:
        for ep in range(epochs):
            if ep:
                it.reset()
            for b in it:
                d.append(b.data[0].asnumpy())
                lab.append(b.label[0].asnumpy())
                pad.append(b.pad)
                idx.append(b.index)
    finally:
        it.close()
    return np.stack(d), np.stack(lab), pad, idx


def test_plain_equals_mxnet(exp):
    d, lab, pad, idx = run(ImageRecordIter, data_shape=(3, 24, 24), **NORM)
    np.testing.assert_array_equal(d, exp["plain_data"])
    np.testing.assert_array_equal(lab, exp["plain_label"])
    # MXNet's round_batch: the wrapped last batch, then the next epoch resumes after it
    assert pad == exp["plain_pad"].tolist() == [0, 2, 0]
    assert idx[1].tolist() == [4, 5, 0, 1]  # record ids from the IRHeader


def test_resize_scale_equals_mxnet(exp):
    d, lab, pad, _ = run(ImageRecordIter, data_shape=(3, 24, 24), resize=26, scale=1 / 255.0)
    np.testing.assert_array_equal(d, exp["resize_data"])
    np.testing.assert_array_equal(lab, exp["resize_label"])


def test_no_round_batch_mirror_equals_mxnet(exp):
    d, lab, pad, _ = run(ImageRecordIter, data_shape=(3, 28, 28), round_batch=False, mirror=True)
    # MXNet leaves stale memory in the two padding slots and reports pad 0; mxc zeros them and
    # reports the true pad.  The real samples must be identical.
    np.testing.assert_array_equal(d[[0, 2]], exp["noround_data"][[0, 2]])
    np.testing.assert_array_equal(d[[1, 3], :2], exp["noround_data"][[1, 3], :2])
    assert pad == [0, 2, 0, 2]
    assert (d[[1, 3], 2:] == 0).all() and (lab[[1, 3], 2:] == 0).all()


def test_uint8_iter_equals_mxnet(exp):
    d, lab, pad, _ = run(ImageRecordUInt8Iter, data_shape=(3, 24, 24))
    assert d.dtype == np.uint8
    np.testing.assert_array_equal(d, exp["uint8_data"])
    np.testing.assert_array_equal(lab, exp["uint8_label"])


def test_gray_close_to_mxnet(exp):
    d, lab, pad, _ = run(ImageRecordIter, data_shape=(1, 24, 24))
    assert d.shape == exp["gray_data"].shape
    assert np.abs(d - exp["gray_data"]).max() <= 1.0
    np.testing.assert_array_equal(lab, exp["gray_label"])


def test_multi_label_equals_mxnet(exp):
    d, lab, pad, _ = run(ImageRecordIter, epochs=1, data_shape=(3, 24, 24), label_width=2,
                         path_imgrec=os.path.join(HERE, "multi.rec"), batch_size=5)
    np.testing.assert_array_equal(d, exp["multi_data"])
    np.testing.assert_array_equal(lab, exp["multi_label"])
    with pytest.raises(MXNetError, match="label_width"):
        run(ImageRecordIter, epochs=1, data_shape=(3, 24, 24),
            path_imgrec=os.path.join(HERE, "multi.rec"), batch_size=5)


def test_provide_shapes(exp):
    it = ImageRecordIter(path_imgrec=REC, data_shape=(3, 24, 24), batch_size=4)
    assert it.provide_data[0].shape == tuple(exp["provide_data_shape"])
    assert it.provide_label[0].shape == tuple(exp["provide_label_shape"])
    assert it.provide_data[0].name == "data" and it.provide_label[0].name == "softmax_label"
    it.close()


def _decoded():
    from PIL import Image
    r = recordio.MXIndexedRecordIO(IDX, REC, "r")
    out = {}
    for k in r.keys:
        h, b = recordio.unpack(r.read_idx(k))
        out[int(h.label)] = np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))
    r.close()
    return out


def test_random_crop_mirror_are_crops_of_the_image():
    imgs = _decoded()
    d, lab, _, _ = run(ImageRecordUInt8Iter, epochs=2, data_shape=(3, 20, 22), rand_crop=True,
                       rand_mirror=True, seed=5)
    seen_mirror = set()
    for batch, labels in zip(d, lab):
        for x, y in zip(batch, labels):
            src = imgs[int(y)]
            hwc = x.transpose(1, 2, 0)
            found = False
            for mir in (False, True):
                cand = hwc[:, ::-1] if mir else hwc
                for y0 in range(src.shape[0] - 20 + 1):
                    for x0 in range(src.shape[1] - 22 + 1):
                        if np.array_equal(src[y0:y0 + 20, x0:x0 + 22], cand):
                            found = True
                            seen_mirror.add(mir)
            assert found
    assert seen_mirror == {False, True}


AUG = dict(data_shape=(3, 20, 20), rand_crop=True, rand_mirror=True, brightness=0.3,
           contrast=0.3, saturation=0.3, pca_noise=0.1, max_rotate_angle=10, resize=30,
           shuffle=True, path_imgidx=IDX, **NORM)


def test_determinism_across_seeds_and_threads():
    a = run(ImageRecordIter, seed=3, preprocess_threads=1, **AUG)
    b = run(ImageRecordIter, seed=3, preprocess_threads=3, **AUG)
    c = run(ImageRecordIter, seed=4, preprocess_threads=2, **AUG)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
    # shuffling: every epoch a permutation of all six records
    lab = run(ImageRecordIter, epochs=3, round_batch=False, batch_size=6, seed=3, **{
        k: v for k, v in AUG.items() if k not in ("brightness", "contrast", "saturation")})[1]
    assert all(sorted(row.tolist()) == list(range(6)) for row in lab)
    assert len({tuple(row) for row in lab.tolist()}) > 1


@pytest.mark.parametrize("use_idx", [True, False])
def test_sharding_sees_every_record_once(use_idx):
    seen = []
    for part in range(3):
        kw = dict(path_imgidx=IDX) if use_idx else {}
        _, lab, pad, _ = run(ImageRecordIter, epochs=1, data_shape=(3, 24, 24), batch_size=1,
                             round_batch=False, num_parts=3, part_index=part, **kw)
        seen += lab.ravel().tolist()
    assert sorted(seen) == list(range(6))


def test_bad_parameters(tmp_path):
    with pytest.raises(ValueError, match="data_shape"):
        ImageRecordIter(path_imgrec=REC, data_shape=(24, 24), batch_size=2)
    with pytest.raises(ValueError, match="data_shape"):
        ImageRecordIter(path_imgrec=REC, data_shape=(2, 24, 24), batch_size=2)
    with pytest.raises(MXNetError, match="path_imgrec.*missing.rec"):
        ImageRecordIter(path_imgrec=str(tmp_path / "missing.rec"), data_shape=(3, 8, 8),
                        batch_size=2)
    with pytest.raises(MXNetError, match="path_imgidx"):
        ImageRecordIter(path_imgrec=REC, path_imgidx=str(tmp_path / "x.idx"),
                        data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=0)
    with pytest.raises(ValueError, match="part_index"):
        ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2, num_parts=2,
                        part_index=2)
    with pytest.raises(ValueError, match="unknown parameter"):
        ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2, rand_crap=True)
    with pytest.raises(ValueError, match="random_resized_crop"):
        ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=2,
                        random_resized_crop=True, rand_crop=True)
    with pytest.raises(MXNetError, match="bigger than the batch size"):
        ImageRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=7)


def test_broken_image_raises_at_next(tmp_path):
    rec = str(tmp_path / "bad.rec")
    w = recordio.MXRecordIO(rec, "w")
    w.write(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), b"\x89PNG garbage"))
    w.write(recordio.pack(recordio.IRHeader(0, 2.0, 1, 0), b"junk"))
    w.close()
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(MXNetError, match="record 0 of .*bad.rec"):
        next(it)
    it.close()


def test_random_resized_crop_and_crop_size_shapes():
    d, _, _, _ = run(ImageRecordIter, epochs=1, data_shape=(3, 16, 16), random_resized_crop=True,
                     min_random_area=0.3, max_random_area=1.0, min_aspect_ratio=0.75,
                     max_aspect_ratio=1.33, seed=1)
    assert d.shape == (2, 4, 3, 16, 16)
    d2, _, _, _ = run(ImageRecordUInt8Iter, epochs=1, data_shape=(3, 16, 16), max_crop_size=24,
                      min_crop_size=20, pad=2)
    assert d2.shape == (2, 4, 3, 16, 16)


def test_early_stop_does_not_hang_at_exit():
    code = ("from mxc.io import ImageRecordIter\n"
            f"it = ImageRecordIter(path_imgrec={REC!r}, data_shape=(3, 24, 24), batch_size=2,\n"
            "                     preprocess_threads=2, prefetch_buffer=1)\n"
            "b = next(it)\nprint(b.data[0].shape)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "(2, 3, 24, 24)"


def test_dropped_iterator_stops_its_threads():
    import gc
    import threading
    import time
    before = {t.ident for t in threading.enumerate()}
    it = ImageRecordIter(path_imgrec=REC, data_shape=(3, 24, 24), batch_size=2,
                         preprocess_threads=2, prefetch_buffer=1)
    next(it)
    del it
    gc.collect()
    deadline = time.time() + 10
    while time.time() < deadline:
        extra = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
        if not extra:
            break
        time.sleep(0.05)
    assert not extra, [t.name for t in extra]


@pytest.mark.parametrize("case,kw", [
    ("plain", dict(data_shape=(3, 24, 24))),
    ("mean", dict(data_shape=(3, 24, 24), mean_r=123.68, mean_g=116.5, mean_b=103.53)),
    ("mirror_resize", dict(data_shape=(3, 20, 20), resize=22, mirror=True, mean_r=200.5,
                           mean_g=10.0, mean_b=-3.5)),
])
def test_int8_iter_equals_mxnet(case, kw):
    """ImageRecordInt8Iter: saturate(pixel - round(mean)) as MXNet's int8 iterator writes it
    (tests/data/image_iter/make_int8_fixture.py)."""
    from mxc.io import ImageRecordInt8Iter
    want = np.load(os.path.join(HERE, "int8_expected.npz"))[case]
    d, _, _, _ = run(ImageRecordInt8Iter, epochs=1, **kw)
    assert d.dtype == np.int8
    np.testing.assert_array_equal(d, want)


@pytest.mark.parametrize("indexed", [False, True])
@pytest.mark.parametrize("num_parts", [2, 3])
def test_parts_are_mxnets_input_splits(indexed, num_parts):
    # records made and read by MXNet 1.9.1 (tests/data/make_image_det_rec_golden.py): byte
    # ranges of the file without an index, ceil(n / num_parts) records with one
    here = os.path.join(os.path.dirname(__file__), "..", "data", "image_det_rec")
    gold = np.load(os.path.join(here, "golden.npz"))
    for part in range(num_parts):
        it = ImageRecordIter(
            path_imgrec=os.path.join(here, "parts.rec"), data_shape=(3, 8, 8), batch_size=1,
            path_imgidx=os.path.join(here, "parts.idx") if indexed else "",
            num_parts=num_parts, part_index=part, round_batch=False, preprocess_threads=1)
        got = [float(b.label[0].asnumpy()[0]) for b in it]
        assert got == gold["parts/%d/%d/%d" % (indexed, num_parts, part)].tolist()
