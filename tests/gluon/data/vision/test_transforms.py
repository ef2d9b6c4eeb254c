"""gluon.data.vision.transforms (mxc/gluon/data/vision/transforms.py) against numpy."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.gluon import nn
from mxc.gluon.data.vision import transforms as T


@pytest.fixture
def img(rng):
    return rng.integers(0, 256, (10, 14, 3), dtype=np.uint8)


def test_to_tensor_normalize_cast(img):
    x = mx.nd.array(img, dtype="uint8")
    t = T.ToTensor()(x)
    np.testing.assert_allclose(t.asnumpy(), img.transpose(2, 0, 1) / np.float32(255), rtol=1e-6)
    batch = T.ToTensor()(mx.nd.array(np.stack([img, img]), dtype="uint8"))
    assert batch.shape == (2, 3, 10, 14)
    mean, std = (0.4, 0.5, 0.6), (0.2, 0.25, 0.5)
    n = T.Normalize(mean, std)(t).asnumpy()
    exp = (img.transpose(2, 0, 1) / np.float32(255) - np.array(mean, np.float32)[:, None, None]) \
        / np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(n, exp, rtol=1e-5, atol=1e-6)
    assert T.Cast("float16")(x).dtype == np.float16
    assert T.Cast()(x).dtype == np.float32
    with pytest.raises(MXNetError):
        T.Normalize((0, 1, 2), (1, 1, 1))(mx.nd.zeros((4, 5, 5)))


def test_compose_groups_hybrid_blocks_and_hybridized_matches(img):
    c = T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25), T.CenterCrop(4), T.Cast("float64")])
    kids = list(c._children.values())
    assert isinstance(kids[0], nn.HybridSequential) and len(kids[0]) == 2
    assert isinstance(kids[1], T.CenterCrop) and isinstance(kids[2], T.Cast)
    pipe = T.Compose([T.ToTensor(), T.Normalize(0.5, 0.25)])
    out = pipe(mx.nd.array(img, dtype="uint8")).asnumpy()
    exp = (img.transpose(2, 0, 1) / np.float32(255) - 0.5) / 0.25
    np.testing.assert_allclose(out, exp, rtol=1e-5, atol=1e-5)
    # the same block imperatively
    blk = nn.HybridSequential()
    blk.add(T.ToTensor(), T.Normalize(0.5, 0.25))
    np.testing.assert_allclose(blk(mx.nd.array(img, dtype="uint8")).asnumpy(), out, rtol=1e-6)


def test_resize_crops(img):
    x = mx.nd.array(img, dtype="uint8")
    assert T.Resize(6)(x).shape == (6, 6, 3)
    assert T.Resize((8, 5))(x).shape == (5, 8, 3)
    assert T.Resize(5, keep_ratio=True)(x).shape == (5, 7, 3)      # short side 10 -> 5
    np.testing.assert_array_equal(T.Resize((7, 5), interpolation=0)(x).asnumpy(),
                                  mx.image.imresize(x, 7, 5, 0).asnumpy())
    np.testing.assert_array_equal(T.Resize(14 // 1)(mx.nd.array(img[:, :10], dtype="uint8")).shape,
                                  (14, 14, 3))
    np.testing.assert_array_equal(T.CenterCrop((6, 4))(x).asnumpy(), img[3:7, 4:10])
    np.testing.assert_array_equal(T.CropResize(2, 1, 5, 4)(x).asnumpy(), img[1:5, 2:7])
    cr = T.CropResize(2, 1, 5, 4, size=(3, 3), interpolation=0)(x).asnumpy()
    np.testing.assert_array_equal(cr, mx.image.imresize(mx.nd.array(img[1:5, 2:7], dtype="uint8"),
                                                        3, 3, 0).asnumpy())
    with pytest.raises(MXNetError):
        T.CropResize(10, 0, 5, 4)(x)
    whole = T.RandomResizedCrop((14, 10), scale=(1.0, 1.0), ratio=(1.4, 1.4))(x)
    np.testing.assert_array_equal(whole.asnumpy(), img)
    assert T.RandomResizedCrop(5)(x).shape == (5, 5, 3)


def test_random_flips_and_enhancements_statistics(img):
    mx.random.seed(5)
    x = mx.nd.array(img, dtype="uint8")
    flips = 0
    for _ in range(100):
        y = T.RandomFlipLeftRight()(x).asnumpy()
        if not np.array_equal(y, img):
            np.testing.assert_array_equal(y, img[:, ::-1])
            flips += 1
    assert 30 < flips < 70
    y = T.RandomFlipTopBottom()(x).asnumpy()
    assert np.array_equal(y, img) or np.array_equal(y, img[::-1])
    f = mx.nd.array(img.astype(np.float32))
    ratios = [T.RandomBrightness(0.3)(f).asnumpy().sum() / img.sum() for _ in range(40)]
    assert 0.7 - 1e-4 <= min(ratios) and max(ratios) <= 1.3 + 1e-4 and np.std(ratios) > 0.05
    g = img.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
    for _ in range(5):      # contrast keeps the mean gray level
        out = T.RandomContrast(0.5)(f).asnumpy()
        assert abs((out @ np.array([0.299, 0.587, 0.114])).mean() - g.mean()) < 1e-2
    for _ in range(5):      # saturation keeps each pixel's gray level
        out = T.RandomSaturation(0.5)(f).asnumpy()
        np.testing.assert_allclose(out @ np.array([0.299, 0.587, 0.114]), g, rtol=1e-4, atol=1e-3)
    assert T.RandomHue(0.1)(x).shape == img.shape
    assert T.RandomColorJitter(0.2, 0.2, 0.2, 0.1)(x).dtype == np.uint8
    zero = T.RandomColorJitter()(x).asnumpy()
    np.testing.assert_array_equal(zero, img)
    lit = T.RandomLighting(0.1)(f).asnumpy() - img.astype(np.float32)
    assert np.allclose(lit, lit[0, 0], atol=1e-3)        # one offset per channel
    np.testing.assert_array_equal(T.RandomLighting(0.0)(x).asnumpy(), img)


def test_rotate_and_random_rotation():
    src = mx.nd.array([[[0., 0., 0.], [0., 0., 1.], [0., 0., 0.]]])
    expect = {90.: [[0, 1, 0], [0, 0, 0], [0, 0, 0]], 180.: [[0, 0, 0], [1, 0, 0], [0, 0, 0]],
              270.: [[0, 0, 0], [0, 0, 0], [0, 1, 0]], 360.: [[0, 0, 0], [0, 0, 1], [0, 0, 0]]}
    for deg, e in expect.items():
        np.testing.assert_allclose(T.Rotate(deg)(src).asnumpy()[0], e, atol=1e-6)
    with pytest.raises(TypeError):
        T.Rotate(10.)(mx.nd.ones((3, 5, 5), dtype="uint8"))
    batch = mx.nd.ones((2, 3, 6, 8))
    assert T.Rotate(30., zoom_in=True)(batch).shape == (2, 3, 6, 8)
    # zoom_in: no padding shows, an all-ones image stays (nearly) all ones inside
    z = T.Rotate(30., zoom_in=True)(mx.nd.ones((1, 20, 20))).asnumpy()
    assert z[0, 2:-2, 2:-2].min() > 0.99
    data = mx.nd.random.normal(shape=(3, 6, 7))
    np.testing.assert_array_equal(T.RandomRotation([-100., 100.], rotate_with_proba=0.0)(data).asnumpy(),
                                  data.asnumpy())
    assert T.RandomRotation([-10, 10])(batch).shape == (2, 3, 6, 8)
    with pytest.raises(ValueError):
        T.RandomRotation([-10, 10], rotate_with_proba=1.1)
    with pytest.raises(ValueError):
        T.RandomRotation([10, -10])


def test_random_apply_probability():
    import random
    random.seed(0)
    ra = T.RandomApply(T.Cast("float64"), 0.3)
    x = mx.nd.ones((2, 2, 3), dtype="uint8")
    n = sum(ra(x).dtype == np.float64 for _ in range(300))
    assert 60 < n < 120
