"""mx.nd.image.* (mxc/ops/image_ops.py) against MXNet 1.9.1's outputs
(tests/data/gluon_data/image_ops_golden.npz, made by tests/data/make_gluon_data_golden.py) and
numpy references."""
import os

import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError
from mxc.ops import image_ops

I = mx.nd.image
GOLDEN = np.load(os.path.join(os.path.dirname(__file__), "..", "data", "gluon_data",
                              "image_ops_golden.npz"))
OPS = ["_image_to_tensor", "_image_normalize", "_image_crop", "_image_resize",
       "_image_flip_left_right", "_image_flip_top_bottom", "_image_random_flip_left_right",
       "_image_random_flip_top_bottom", "_image_random_brightness", "_image_random_contrast",
       "_image_random_saturation", "_image_random_hue", "_image_random_color_jitter",
       "_image_adjust_lighting", "_image_random_lighting"]


def nd(a):
    return mx.nd.array(a, dtype=a.dtype)


@pytest.fixture
def imgs():
    return {k: nd(GOLDEN[k]) for k in ("img", "imgf", "batch", "gray")}


def same(actual, key, tol=0.0):
    exp = GOLDEN[key]
    a = actual.asnumpy()
    assert a.shape == exp.shape and a.dtype == exp.dtype, (key, a.shape, a.dtype)
    np.testing.assert_allclose(a.astype(np.float64), exp.astype(np.float64), rtol=0, atol=tol,
                               err_msg=key)


def test_every_image_op_is_registered_with_its_npx_alias():
    for name in OPS:
        assert getattr(mx.nd, name) is not None
        assert hasattr(I, name[len("_image_"):])
        assert getattr(mx.sym.image, name[len("_image_"):]) is not None
    assert sorted(I.__all__) == sorted(n[len("_image_"):] for n in OPS)


def test_to_tensor_and_normalize_match_mxnet(imgs):
    same(I.to_tensor(imgs["img"]), "to_tensor")
    same(I.to_tensor(imgs["batch"]), "to_tensor_batch")
    t = I.to_tensor(imgs["imgf"])
    same(I.normalize(t, mean=(0.1, 0.2, 0.3), std=(0.5, 1.5, 2.5)), "normalize", 1e-6)
    # numpy reference, batch and scalar mean/std
    x = np.random.default_rng(0).uniform(0, 1, (2, 3, 4, 5)).astype(np.float32)
    out = I.normalize(mx.nd.array(x), mean=0.5, std=2.0).asnumpy()
    np.testing.assert_allclose(out, (x - 0.5) / 2.0, rtol=1e-6)
    with pytest.raises(MXNetError):
        I.to_tensor(mx.nd.zeros((2, 2, 2, 2, 3), dtype="uint8"))
    with pytest.raises(MXNetError):
        I.normalize(mx.nd.zeros((4, 5, 5)), mean=(0, 1, 2), std=(1, 1, 1))
    with pytest.raises(MXNetError):
        I.normalize(mx.nd.zeros((3, 5, 5)), mean=(0, 1), std=1)


def test_to_tensor_and_normalize_differentiate():
    x = mx.nd.array(np.arange(24, dtype=np.float32).reshape(2, 4, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = I.normalize(I.to_tensor(x), mean=(0.0, 0.5, 1.0), std=(1.0, 2.0, 4.0))
    y.backward(mx.nd.ones(y.shape))
    exp = np.broadcast_to(np.array([1.0, 0.5, 0.25], np.float32) / 255, (2, 4, 3))
    np.testing.assert_allclose(x.grad.asnumpy(), exp, rtol=1e-6)


@pytest.mark.parametrize("interp", [0, 1, 2, 3])
def test_resize_float_matches_opencv(imgs, interp):
    same(I.resize(imgs["imgf"], size=(5, 4), interp=interp), f"resize_f32_{interp}", 2e-3)
    same(I.resize(imgs["imgf"], size=(13, 11), interp=interp), f"resize_f32_up_{interp}", 2e-3)


def test_resize_uint8_keep_ratio_batch_and_errors(imgs):
    for interp in (0, 1):
        same(I.resize(imgs["img"], size=(5, 4), interp=interp), f"resize_u8_{interp}")
    same(I.resize(imgs["imgf"], size=4, keep_ratio=True), "resize_keep", 2e-3)
    b = I.resize(imgs["batch"], size=(5, 4))
    assert b.shape == (2, 4, 5, 3)
    for i in range(2):
        np.testing.assert_array_equal(b[i].asnumpy(), I.resize(imgs["batch"][i], size=(5, 4)).asnumpy())
    for bad in (dict(size=-3), dict(size=(1, 2, 3)), dict(size=(4, 0)), dict(size=4, interp=7)):
        with pytest.raises(MXNetError):
            I.resize(imgs["imgf"], **bad)


def test_crop_matches_mxnet_and_its_gradient(imgs):
    same(I.crop(imgs["img"], 2, 1, 4, 3), "crop")
    b = I.crop(imgs["batch"], x=1, y=2, width=3, height=4).asnumpy()
    np.testing.assert_array_equal(b, GOLDEN["batch"][:, 2:6, 1:4])
    for bad in ((0, 0, -1, 2), (7, 0, 3, 2), (0, 5, 2, 3)):
        with pytest.raises(MXNetError):
            I.crop(imgs["img"], *bad)
    x = mx.nd.array(np.arange(60, dtype=np.float32).reshape(5, 4, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = I.crop(x, 1, 2, 2, 3)
    y.backward(y)
    exp = np.zeros((5, 4, 3), np.float32)
    exp[2:5, 1:3] = x.asnumpy()[2:5, 1:3]
    np.testing.assert_array_equal(x.grad.asnumpy(), exp)


def test_flips(imgs):
    a = GOLDEN["img"]
    np.testing.assert_array_equal(I.flip_left_right(imgs["img"]).asnumpy(), a[:, ::-1])
    np.testing.assert_array_equal(I.flip_top_bottom(imgs["img"]).asnumpy(), a[::-1])
    # MXNet agrees except on the middle column / row of odd sizes, which it leaves unwritten
    lr, tb = I.flip_left_right(imgs["img"]).asnumpy(), I.flip_top_bottom(imgs["img"]).asnumpy()
    np.testing.assert_array_equal(np.delete(lr, 4, axis=1), np.delete(GOLDEN["flip_lr"], 4, axis=1))
    np.testing.assert_array_equal(np.delete(tb, 3, axis=0), np.delete(GOLDEN["flip_tb"], 3, axis=0))
    np.testing.assert_array_equal(I.flip_left_right(imgs["batch"]).asnumpy(), GOLDEN["batch"][:, :, ::-1])
    with pytest.raises(MXNetError):
        I.flip_left_right(mx.nd.zeros((4, 4, 2)))


def test_random_flips_are_flips_with_half_probability():
    mx.random.seed(3)
    x = np.arange(2 * 3 * 1, dtype=np.float32).reshape(2, 3, 1)
    seen = {"same": 0, "flipped": 0}
    for _ in range(200):
        y = I.random_flip_left_right(mx.nd.array(x)).asnumpy()
        if np.array_equal(y, x):
            seen["same"] += 1
        else:
            np.testing.assert_array_equal(y, x[:, ::-1])
            seen["flipped"] += 1
    assert 70 < seen["flipped"] < 130, seen
    y = I.random_flip_top_bottom(mx.nd.array(x)).asnumpy()
    assert np.array_equal(y, x) or np.array_equal(y, x[::-1])


@pytest.mark.parametrize("name", ["brightness", "contrast", "hue"])
def test_enhance_ops_match_mxnet_at_fixed_factor(imgs, name):
    fn = getattr(I, "random_" + name)
    for a in (0.3, 0.7, 1.4):
        same(fn(imgs["img"], a, a), f"{name}_u8_{a}")
        same(fn(imgs["imgf"], a, a), f"{name}_f32_{a}", 1e-3)
    if name == "hue":
        for a in (0.1, 0.25, 0.9):
            same(fn(imgs["img"], a, a), f"hue_u8_{a}")
    if name == "contrast":
        same(fn(imgs["gray"], 0.5, 0.5), "contrast_gray_0.5")


def test_saturation_against_numpy(imgs):
    x = GOLDEN["imgf"]
    gray = (x * np.array([0.299, 0.587, 0.114], np.float32)).sum(axis=2, keepdims=True)
    for a in (0.0, 0.5, 1.7):
        out = I.random_saturation(imgs["imgf"], a, a).asnumpy()
        np.testing.assert_allclose(out, gray * (1 - a) + x * a, rtol=1e-5, atol=1e-3)
    out = I.random_saturation(imgs["img"], 2.0, 2.0).asnumpy()
    u = GOLDEN["img"].astype(np.float32)
    g = (u * np.array([0.299, 0.587, 0.114], np.float32)).sum(axis=2, keepdims=True)
    exp = np.clip(g * -1 + u * 2, 0, 255).astype(np.uint8)
    assert np.abs(out.astype(int) - exp).max() <= 1
    np.testing.assert_array_equal(I.random_saturation(imgs["gray"], 0.3, 0.3).asnumpy(), GOLDEN["gray"])


def test_lighting_matches_mxnet(imgs):
    same(I.adjust_lighting(imgs["img"], alpha=(0.5, -0.3, 0.2)), "lighting_u8")
    same(I.adjust_lighting(imgs["imgf"], alpha=(-1.0, 2.0, 0.7)), "lighting_f32", 1e-4)
    np.testing.assert_array_equal(I.random_lighting(imgs["img"], alpha_std=0.0).asnumpy(), GOLDEN["img"])
    with pytest.raises(MXNetError):
        I.adjust_lighting(imgs["img"], alpha=(0.1, 0.2))


def test_random_ops_follow_the_seed_and_their_ranges(imgs):
    def run():
        mx.random.seed(11)
        return [I.random_brightness(imgs["img"], 0.5, 1.5).asnumpy(),
                I.random_color_jitter(imgs["img"], 0.3, 0.3, 0.3, 0.1).asnumpy(),
                I.random_lighting(imgs["imgf"], 0.2).asnumpy(),
                I.random_hue(imgs["img"], 0.0, 0.5).asnumpy()]
    a, b = run(), run()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # brightness factors stay within [min, max]: ratio of means of a float image
    x = GOLDEN["imgf"]
    ratios = [I.random_brightness(imgs["imgf"], 0.5, 0.8).asnumpy().sum() / x.sum()
              for _ in range(30)]
    assert 0.5 - 1e-5 <= min(ratios) and max(ratios) <= 0.8 + 1e-5 and np.std(ratios) > 0.03
    # brightness jitter alone is a brightness change with factor in [0.7, 1.3]
    j = I.random_color_jitter(imgs["imgf"], 0.3, 0, 0, 0).asnumpy()
    r = j.sum() / x.sum()
    assert 0.7 - 1e-5 <= r <= 1.3 + 1e-5
    np.testing.assert_allclose(j, x * np.float32(r), rtol=1e-4)
    # a batch draws one factor per image
    out = I.random_brightness(mx.nd.array(np.ones((8, 2, 2, 3), np.float32)), 0.1, 10.0).asnumpy()
    assert len(set(np.round(out[:, 0, 0, 0], 5))) > 1


def test_enhance_gradient_passes_through_and_hybridized_symbols_work(imgs):
    x = mx.nd.array(GOLDEN["imgf"])
    x.attach_grad()
    with mx.autograd.record():
        y = I.random_brightness(x, 1.5, 1.5)
    y.backward(mx.nd.ones(y.shape) * 2)
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(x.shape, 2, np.float32))
    data = mx.sym.var("data")
    s = mx.sym.image.to_tensor(mx.sym.image.crop(data, 1, 1, 3, 2))
    ex = s.bind(mx.cpu(), {"data": imgs["img"]})
    out = ex.forward()[0].asnumpy()
    exp = np.transpose(GOLDEN["img"][1:3, 1:4].astype(np.float32) / 255, (2, 0, 1))
    np.testing.assert_allclose(out, exp, rtol=1e-6)


def test_resize_float_helper_identity():
    x = np.random.default_rng(1).uniform(0, 1, (6, 5, 2)).astype(np.float32)
    for interp in (0, 1, 2, 3, 4):
        np.testing.assert_allclose(image_ops.resize_float(x, 5, 6, interp), x, atol=1e-5)
