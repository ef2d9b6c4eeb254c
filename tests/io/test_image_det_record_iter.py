"""mx.io.ImageDetRecordIter against real MXNet 1.9.1 (tests/data/make_image_det_rec_golden.py:
batches of 2 epochs for deterministic parameter sets), and its random augmentations by their
properties (labels follow the pixels)."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

HERE = os.path.join(os.path.dirname(__file__), "..", "data", "image_det_rec")
REC = os.path.join(HERE, "det.rec")
GOLD = np.load(os.path.join(HERE, "golden.npz"))

# the cases of make_image_det_rec_golden.py
CASES = {
    "plain": dict(data_shape=(3, 20, 24)),
    "normalized": dict(data_shape=(3, 16, 16), mean_r=123.0, mean_g=117.0, mean_b=104.0,
                       std_r=58.0, std_g=57.0, std_b=57.5, scale=0.5),
    "padded_labels": dict(data_shape=(3, 20, 24), label_pad_width=30, label_pad_value=-2.0),
    "resize_shorter": dict(data_shape=(3, 18, 22), resize=26),
    "shrink": dict(data_shape=(3, 28, 36), resize_mode="shrink"),
    "fit": dict(data_shape=(3, 36, 44), resize_mode="fit", mean_r=1.0),
    "imglist": dict(data_shape=(3, 20, 24), path_imglist=os.path.join(HERE, "det.lst")),
    "grey": dict(data_shape=(1, 12, 12)),
    "no_round": dict(data_shape=(3, 20, 24), round_batch=False),
    "partitioned": dict(data_shape=(3, 20, 24), num_parts=2, part_index=1),
    "nearest": dict(data_shape=(3, 30, 20), inter_method=0),
    "mirror": dict(data_shape=(3, 20, 24), rand_mirror_prob=1.0),
}


def _epochs(it, n=2):
    out = []
    for epoch in range(n):
        if epoch:
            it.reset()
        out.append([(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad) for b in it])
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_batches_match_mxnet(case):
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, batch_size=2, preprocess_threads=2,
                                  **CASES[case])
    assert it.provide_data[0].shape == tuple(GOLD[case + "/provide_data"])
    assert it.provide_label[0].shape == tuple(GOLD[case + "/provide_label"])
    assert it.provide_label[0].name == "softmax_label"
    # grey: OpenCV's and Pillow's colour-to-grey conversions round differently (<= 2 levels)
    atol = 2 if case == "grey" else 0
    for epoch, batches in enumerate(_epochs(it)):
        keys = sorted({k.rsplit("/", 1)[0] for k in GOLD.files
                       if k.startswith("%s/e%d/" % (case, epoch))})
        assert len(batches) == len(keys), (epoch, len(batches), keys)
        for i, (data, label, pad) in enumerate(batches):
            key = "%s/e%d/b%d" % (case, epoch, i)
            assert pad == int(GOLD[key + "/pad"])
            real = len(data) - pad          # MXNet leaves stale memory in padding slots
            np.testing.assert_allclose(data[:real], GOLD[key + "/data"][:real], rtol=0,
                                       atol=atol)
            np.testing.assert_array_equal(label[:real], GOLD[key + "/label"][:real])


def _one_batch(**kw):
    kw.setdefault("data_shape", (3, 20, 24))
    it = mx.io.ImageDetRecordIter(path_imgrec=REC, batch_size=5, round_batch=False,
                                  preprocess_threads=1, **kw)
    b = it.next()
    return b.data[0].asnumpy(), b.label[0].asnumpy()


def _objects(row):
    n = int(row[3])
    lab = row[4:4 + n]
    hw, ow = int(lab[0]), int(lab[1])
    return lab[:hw], lab[hw:].reshape(-1, ow)


def test_mirror_flips_pixels_and_boxes():
    plain_d, plain_l = _one_batch()
    d, lab = _one_batch(rand_mirror_prob=1.0)
    np.testing.assert_array_equal(d, plain_d[:, :, :, ::-1])
    for r0, r1 in zip(plain_l, lab):
        (h0, o0), (h1, o1) = _objects(r0), _objects(r1)
        np.testing.assert_array_equal(h0, h1)
        np.testing.assert_allclose(o1[:, 1], 1 - o0[:, 3], rtol=1e-6)
        np.testing.assert_allclose(o1[:, 3], 1 - o0[:, 1], rtol=1e-6)
        np.testing.assert_array_equal(o1[:, [0, 2, 4]], o0[:, [0, 2, 4]])


def test_random_crop_keeps_valid_boxes_and_follows_the_seed():
    kw = dict(rand_crop_prob=1.0, num_crop_sampler=2, min_crop_scales=(0.3, 0.5),
              max_crop_scales=(0.9, 1.0), min_crop_aspect_ratios=0.5,
              max_crop_aspect_ratios=2.0, min_crop_overlaps=(0.1, 0.0), max_crop_trials=50,
              seed=4)
    d1, l1 = _one_batch(**kw)
    d2, l2 = _one_batch(**kw)
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_array_equal(l1, l2)
    d3, _ = _one_batch(**dict(kw, seed=5))
    assert not np.array_equal(d1, d3)
    _, plain = _one_batch()
    changed = 0
    for r, r0 in zip(l1, plain):
        _, objs = _objects(r)
        assert len(objs) >= 1
        box = objs[:, 1:5]
        assert (box >= 0).all() and (box <= 1).all()
        assert (box[:, 2] > box[:, 0]).all() and (box[:, 3] > box[:, 1]).all()
        changed += not np.array_equal(r, r0)
    assert changed >= 3


def test_random_pad_shrinks_boxes_and_fills():
    d, lab = _one_batch(rand_pad_prob=1.0, max_pad_scale=3.0, fill_value=200, seed=1,
                        data_shape=(3, 40, 40))
    _, plain = _one_batch(data_shape=(3, 40, 40))
    padded = 0
    for r, r0 in zip(lab, plain):
        (_, o), (_, o0) = _objects(r), _objects(r0)
        w, w0 = o[:, 3] - o[:, 1], o0[:, 3] - o0[:, 1]
        assert (w <= w0 + 1e-6).all()
        padded += bool((w < w0 - 1e-3).any())
    assert padded >= 3 and (d == 200).any()


def test_colour_jitter_changes_pixels_not_labels():
    d0, l0 = _one_batch()
    d, lab = _one_batch(max_random_contrast=0.5, random_contrast_prob=1.0,
                        max_random_hue=20, random_hue_prob=1.0, seed=2)
    np.testing.assert_array_equal(lab, l0)
    assert not np.array_equal(d, d0) and d.min() >= 0 and d.max() <= 255


def test_errors():
    with pytest.raises(MXNetError, match="does not exist"):
        mx.io.ImageDetRecordIter(path_imgrec=REC + ".nope", data_shape=(3, 8, 8), batch_size=1)
    with pytest.raises(MXNetError, match="label_pad_width 5"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                                 label_pad_width=5)
    with pytest.raises(MXNetError, match="label_width is 7"):
        mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1,
                                 label_width=7)
    for bad in (dict(resize_mode="stretch"), dict(crop_emit_mode="edge"), dict(nope=1),
                dict(num_crop_sampler=2, min_crop_scales=(0.1, 0.2, 0.3)),
                dict(min_crop_scales=0.9, max_crop_scales=0.5)):
        with pytest.raises(MXNetError) as info:
            mx.io.ImageDetRecordIter(path_imgrec=REC, data_shape=(3, 8, 8), batch_size=1, **bad)
        assert isinstance(info.value, ValueError)
