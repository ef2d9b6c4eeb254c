"""Detection augmenters against MXNet 1.9.1: the same seeds of Python's ``random`` give the
same flips, crops, pads and selections, images and labels alike
(tests/data/image_det/make_fixture.py recorded MXNet's); plus what each must keep true."""
import os
import random

import numpy as np
import pytest

import mxc as mx
from mxc import image

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "image_det")


def _fixture_module():
    """make_fixture.py's inputs and augmenter table, without importing mxnet (its first
    import line)."""
    src = open(os.path.join(HERE, "make_fixture.py")).read().replace("import mxnet as mx\n", "")
    ns = {"__name__": "_det_fixture", "__file__": os.path.join(HERE, "make_fixture.py")}
    exec(compile(src, "make_fixture.py", "exec"), ns)
    return ns


_FX = _fixture_module()
EXPECTED = np.load(os.path.join(HERE, "det_aug.npz"))


@pytest.mark.parametrize("name", ["flip", "crop", "pad", "multi"])
def test_as_mxnet(name):
    img, label = _FX["inputs"]()
    aug = _FX["augmenters"](image)[name]
    for seed in _FX["SEEDS"]:
        random.seed(seed)
        src, lab = aug(mx.nd.array(img, dtype=np.uint8), label.copy())
        np.testing.assert_array_equal(src.asnumpy(), EXPECTED[f"{name}_{seed}_img"],
                                      err_msg=f"{name} seed {seed}")
        np.testing.assert_allclose(np.asarray(lab), EXPECTED[f"{name}_{seed}_label"],
                                   rtol=1e-6, atol=1e-7, err_msg=f"{name} seed {seed}")


def test_invariants():
    img, label = _FX["inputs"]()
    crop = image.DetRandomCropAug(min_object_covered=0.5, area_range=(0.3, 0.9))
    pad = image.DetRandomPadAug(area_range=(1.5, 2.0))
    for seed in range(10):
        random.seed(seed)
        src, lab = crop(mx.nd.array(img, dtype=np.uint8), label.copy())
        assert (lab[:, 1:5] >= 0).all() and (lab[:, 1:5] <= 1).all()
        assert src.shape[0] * src.shape[1] <= img.shape[0] * img.shape[1]
        src, lab = pad(mx.nd.array(img, dtype=np.uint8), label.copy())
        h, w = src.shape[:2]
        area = h * w / (img.shape[0] * img.shape[1])
        assert src.shape[:2] == img.shape[:2] or 1.4 < area < 2.1
        # the original pixels sit inside the canvas where the boxes moved to
        x0 = int(round((lab[0, 1] * w) - label[0, 1] * img.shape[1]))
        y0 = int(round((lab[0, 2] * h) - label[0, 2] * img.shape[0]))
        np.testing.assert_array_equal(
            src.asnumpy()[y0:y0 + img.shape[0], x0:x0 + img.shape[1]], img)
    with pytest.raises(ValueError, match="DetAugmenter"):
        image.DetRandomSelectAug([image.HorizontalFlipAug(0.5)])
    with pytest.raises(TypeError, match="Borrowing"):
        image.DetBorrowAug(image.DetHorizontalFlipAug(0.5))
    borrowed = image.DetBorrowAug(image.CastAug())
    src, lab = borrowed(mx.nd.array(img, dtype=np.uint8), label)
    assert src.dtype == np.float32 and lab is label


def test_create_det_augmenter_as_mxnet():
    """CreateDetAugmenter builds MXNet's list (equal dumps), and its box-moving steps give
    MXNet's labels under the same seeds."""
    import json
    img, label = _FX["inputs"]()
    augs = _FX["create_det"](image)
    assert [a.dumps() for a in augs] == json.loads(str(EXPECTED["create_dumps"]))
    for seed in _FX["SEEDS"]:
        random.seed(seed)
        lab = label.copy()
        for aug in augs[:4]:
            _, lab = aug(mx.nd.array(img, dtype=np.uint8), lab)
        np.testing.assert_allclose(lab, EXPECTED[f"create_{seed}_label"], rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="CreateDetAugmenter: mean"):
        image.CreateDetAugmenter((3, 8, 8), mean=[1, 2, 3])


def _iter_fixture():
    src = open(os.path.join(HERE, "make_iter_fixture.py")).read().replace(
        "import mxnet as mx\n", "")
    ns = {"__name__": "_det_iter_fixture", "__file__": os.path.join(HERE, "make_iter_fixture.py")}
    exec(compile(src, "make_iter_fixture.py", "exec"), ns)
    return ns


@pytest.mark.parametrize("handle", ["pad", "discard", "roll_over"])
def test_image_det_iter_as_mxnet(handle):
    """ImageDetIter over det.rec (make_iter_fixture.py): label shape, batches' data, labels
    (objects then -1 rows) and pads over two epochs equal MXNet's, seeded flips included."""
    want = np.load(os.path.join(HERE, "det_iter.npz"))
    got = _iter_fixture()["run"](image, os.path.join(HERE, "det"), handle)
    prefix = handle + "_"
    keys = sorted(k[len(prefix):] for k in want.files if k.startswith(prefix))
    assert sorted(got) == keys
    for k in keys:
        np.testing.assert_allclose(np.asarray(got[k]), want[prefix + k], rtol=1e-6, atol=1e-7,
                                   err_msg=f"{handle} {k}")


def test_image_det_iter_label_shapes():
    it = image.ImageDetIter(2, (3, 16, 16), path_imgrec=os.path.join(HERE, "det.rec"),
                            aug_list=[])
    other = image.ImageDetIter(2, (3, 16, 16), path_imgrec=os.path.join(HERE, "det.rec"),
                               aug_list=[])
    assert it.label_shape == (3, 5) and it.provide_label[0].shape == (2, 3, 5)
    other.reshape(label_shape=(6, 5))
    assert it.sync_label_shape(other) is other and it.label_shape == (6, 5)
    assert next(iter(it)).label[0].shape == (2, 6, 5)
    with pytest.raises(ValueError, match="reduce label count"):
        it.reshape(label_shape=(2, 5))
    with pytest.raises(ValueError, match="object width"):
        it.reshape(label_shape=(6, 4))
