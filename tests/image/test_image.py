"""mx.image against real MXNet 1.9.1 (tests/data/image_iter/expected.npz, written by
tests/data/make_image_iter_fixtures.py) and against numpy."""
import io
import os
import random

import numpy as np
import pytest

import mxc as mx
import mxc.image as image
from mxc import recordio
from mxc.ops.cpu import _pixel

HERE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "image_iter")


@pytest.fixture(scope="module")
def exp():
    return np.load(os.path.join(HERE, "expected.npz"))


@pytest.fixture(scope="module")
def src(exp):
    return mx.nd.array(exp["src"], dtype=np.uint8)  # 40x36 RGB


def _jpeg_record(i):
    r = recordio.MXIndexedRecordIO(os.path.join(HERE, "tiny_jpg.idx"),
                                   os.path.join(HERE, "tiny_jpg.rec"), "r")
    try:
        return recordio.unpack(r.read_idx(i))[1]
    finally:
        r.close()


def test_imdecode_jpeg_matches_mxnet(exp):
    # Pillow and OpenCV both decode through libjpeg(-turbo) with the same IDCT: measured equal
    jpg = _jpeg_record(1)
    out = image.imdecode(jpg)
    assert out.dtype == np.uint8 and out.shape == (40, 36, 3)
    np.testing.assert_array_equal(out.asnumpy(), exp["imdecode_jpg"])
    np.testing.assert_array_equal(image.imdecode(jpg, flag=0).asnumpy(), exp["imdecode_jpg_gray"])
    bgr = image.imdecode(jpg, to_rgb=False).asnumpy()
    np.testing.assert_array_equal(bgr, exp["imdecode_jpg"][:, :, ::-1])


def _pillow_decode(buf, flag, to_rgb):
    """decode_np through Pillow's Image.open only (the plain-JPEG shortcut switched off)."""
    from mxc.image import image as img_mod
    saved = img_mod._decode_plain_jpeg
    img_mod._decode_plain_jpeg = lambda *a: None
    try:
        return img_mod.decode_np(buf, flag, to_rgb)
    finally:
        img_mod._decode_plain_jpeg = saved


def test_plain_jpeg_shortcut_equals_pillow_open():
    # the shortcut hands the buffer to Pillow's libjpeg decoder itself: pixels must not change
    from PIL import Image
    from mxc.image import image as img_mod
    rng = np.random.RandomState(3)
    bufs = [_jpeg_record(1)]           # written by MXNet's OpenCV
    for h, w in [(32, 32), (17, 45), (1, 1), (70, 9)]:
        for arr in (rng.randint(0, 256, (h, w, 3)).astype(np.uint8),
                    rng.randint(0, 256, (h, w)).astype(np.uint8)):
            for kw in ({}, {"progressive": True}, {"quality": 40, "subsampling": 0},
                       {"optimize": True}, {"comment": b"c"}):
                out = io.BytesIO()
                Image.fromarray(arr).save(out, "JPEG", **kw)
                bufs.append(out.getvalue())
    for buf in bufs:
        assert img_mod._decode_plain_jpeg(Image, buf, 1) is not None
        for flag in (1, 0, -1):
            for to_rgb in (True, False):
                got = img_mod.decode_np(buf, flag, to_rgb)
                want = _pillow_decode(buf, flag, to_rgb)
                assert got.dtype == want.dtype and got.shape == want.shape, (flag, to_rgb)
                np.testing.assert_array_equal(got, want)
    # bytearray / numpy / memoryview inputs take it too
    arr = np.frombuffer(bufs[1], np.uint8)
    np.testing.assert_array_equal(img_mod.decode_np(arr), img_mod.decode_np(bufs[1]))
    np.testing.assert_array_equal(img_mod.decode_np(memoryview(bytearray(bufs[1]))),
                                  img_mod.decode_np(bufs[1]))


def test_non_plain_jpeg_takes_pillow_path():
    from PIL import Image
    from mxc.image import image as img_mod
    rgb = np.zeros((6, 10, 3), np.uint8)
    rgb[:, :5] = 255
    # EXIF orientation 6 (rotate 90 clockwise to display): OpenCV applies it, so must we
    exif = Image.Exif()
    exif[0x0112] = 6
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, "JPEG", exif=exif, quality=95)
    buf = out.getvalue()
    assert img_mod._decode_plain_jpeg(Image, buf, 1) is None
    dec = img_mod.decode_np(buf, 1)
    assert dec.shape == (10, 6, 3)
    np.testing.assert_array_equal(dec, _pillow_decode(buf, 1, True))
    # CMYK (Adobe marker), a truncated file, not a JPEG at all: None, and Pillow decides
    out = io.BytesIO()
    Image.new("CMYK", (4, 4), (10, 20, 30, 40)).save(out, "JPEG")
    assert img_mod._decode_plain_jpeg(Image, out.getvalue(), 1) is None
    plain = io.BytesIO()
    Image.fromarray(rgb).save(plain, "JPEG")
    cut = plain.getvalue()[:len(plain.getvalue()) // 2]
    assert img_mod._decode_plain_jpeg(Image, cut, 1) is None
    with pytest.raises(mx.MXNetError, match="(?i)truncated"):
        img_mod.decode_np(cut, 1)
    assert img_mod._decode_plain_jpeg(Image, b"\xff\xd8\xff", 1) is None


def test_imdecode_png_lossless_and_inputs(tmp_path):
    from PIL import Image
    rgb = np.random.RandomState(0).randint(0, 256, (7, 5, 3)).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "PNG")
    data = buf.getvalue()
    np.testing.assert_array_equal(image.imdecode(data).asnumpy(), rgb)
    np.testing.assert_array_equal(image.imdecode(np.frombuffer(data, np.uint8)).asnumpy(), rgb)
    np.testing.assert_array_equal(
        image.imdecode(mx.nd.array(np.frombuffer(data, np.uint8), dtype=np.uint8)).asnumpy(), rgb)
    p = tmp_path / "x.png"
    p.write_bytes(data)
    np.testing.assert_array_equal(image.imread(str(p)).asnumpy(), rgb)
    with pytest.raises(ValueError, match="cannot decode"):
        image.imdecode(b"not an image")
    # MXNet raises MXNetError for undecodable bytes, a file included, and a bad resize
    with pytest.raises(mx.MXNetError, match="interp method -1"):
        image.imresize(mx.nd.ones((4, 4, 3), dtype=np.uint8), 2, 2, interp=-1)
    with pytest.raises(mx.MXNetError, match="cannot decode"):
        image.imdecode(b"")
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8 not a jpeg")
    with pytest.raises(mx.MXNetError, match="bad.jpg"):
        image.imread(str(tmp_path / "bad.jpg"))
    with pytest.raises(ValueError, match="bytes"):
        image.imdecode("a string")
    with pytest.raises(mx.MXNetError, match="missing.png"):
        image.imread(str(tmp_path / "missing.png"))


@pytest.mark.parametrize("size", [(20, 18), (50, 45), (36, 40), (18, 20), (31, 23), (72, 80)])
def test_imresize_bit_exact_with_opencv(exp, src, size):
    w, h = size
    np.testing.assert_array_equal(image.imresize(src, w, h, interp=1).asnumpy(),
                                  exp["imresize_%dx%d" % size])
    np.testing.assert_array_equal(image.imresize(src, w, h, interp=0).asnumpy(),
                                  exp["imresize_nn_%dx%d" % size])


def test_resize_linear_properties():
    # independent of OpenCV: constant images stay constant; a 1-pixel image fills the output
    const = np.full((9, 13, 3), 77, np.uint8)
    out = np.empty((20, 7, 3), np.uint8)
    _pixel.resize_linear(const, out)
    assert (out == 77).all()
    one = np.array([[[5, 6, 7]]], np.uint8)
    out = np.empty((3, 4, 3), np.uint8)
    _pixel.resize_linear(one, out)
    assert (out == [5, 6, 7]).all()
    with pytest.raises(ValueError):
        _pixel.resize_linear(const, np.empty((4, 4, 1), np.uint8))


def test_crops_match_mxnet(exp, src):
    np.testing.assert_array_equal(image.resize_short(src, 20, interp=1).asnumpy(),
                                  exp["resize_short_20_linear"])
    out, box = image.center_crop(src, (20, 16), interp=1)
    np.testing.assert_array_equal(out.asnumpy(), exp["center_crop_20x16"])
    assert box == tuple(exp["center_crop_20x16_box"])
    np.testing.assert_array_equal(image.center_crop(src, (50, 50), interp=1)[0].asnumpy(),
                                  exp["center_crop_50x50"])
    np.testing.assert_array_equal(image.fixed_crop(src, 3, 5, 20, 10, size=(12, 8),
                                                   interp=1).asnumpy(), exp["fixed_crop"])
    assert image.scale_down((36, 40), (50, 30)) == tuple(exp["scale_down"])


def test_color_normalize_matches_mxnet(exp, src):
    mean = mx.nd.array([123.68, 116.28, 103.53])
    std = mx.nd.array([58.395, 57.12, 57.375])
    out = image.color_normalize(src.astype("float32"), mean, std)
    np.testing.assert_allclose(out.asnumpy(), exp["color_normalize"], rtol=1e-6, atol=1e-6)


def test_random_crop_and_size_crop(src):
    a = src.asnumpy()
    random.seed(3)
    out, (x0, y0, w, h) = image.random_crop(src, (16, 12))
    assert out.shape == (12, 16, 3)
    np.testing.assert_array_equal(out.asnumpy(), a[y0:y0 + 12, x0:x0 + 16])
    random.seed(3)
    assert image.random_crop(src, (16, 12))[1] == (x0, y0, w, h)
    out, (x0, y0, w, h) = image.random_size_crop(src, (10, 10), 0.3, (0.75, 1.33), interp=1)
    assert out.shape == (10, 10, 3)
    ref = image.imresize(mx.nd.array(a[y0:y0 + h, x0:x0 + w], dtype=np.uint8), 10, 10, 1)
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())
    assert 0.3 * 40 * 36 * 0.7 <= w * h <= 40 * 36


def test_augmenters_numpy_reference(src):
    a = src.asnumpy().astype(np.float32)
    f = src.astype("float32")
    random.seed(0)
    alpha = 1.0 + random.Random(0).uniform(-0.5, 0.5)
    np.testing.assert_allclose(image.BrightnessJitterAug(0.5)(f.copy()).asnumpy(), a * alpha,
                               rtol=1e-6)
    random.seed(1)
    alpha = 1.0 + random.Random(1).uniform(-0.4, 0.4)
    gray = (a * [0.299, 0.587, 0.114]).sum(axis=2, keepdims=True)
    np.testing.assert_allclose(image.SaturationJitterAug(0.4)(f.copy()).asnumpy(),
                               a * alpha + gray * (1 - alpha), rtol=1e-5, atol=1e-3)
    random.seed(2)
    alpha = 1.0 + random.Random(2).uniform(-0.3, 0.3)
    g = (a * [0.299, 0.587, 0.114]).mean() * 3 * (1 - alpha)
    np.testing.assert_allclose(image.ContrastJitterAug(0.3)(f.copy()).asnumpy(), a * alpha + g,
                               rtol=1e-5, atol=1e-3)
    random.seed(4)
    r = random.Random(4).uniform(-0.2, 0.2)
    u, w = np.cos(r * np.pi), np.sin(r * np.pi)
    tyiq = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
    ityiq = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
    t = ityiq @ np.array([[1, 0, 0], [0, u, -w], [0, w, u]]) @ tyiq
    np.testing.assert_allclose(image.HueJitterAug(0.2)(f.copy()).asnumpy(), a @ t.T, rtol=1e-4,
                               atol=1e-2)
    # flip with p=1 always flips, p=0 never
    np.testing.assert_array_equal(image.HorizontalFlipAug(1.0)(src).asnumpy(),
                                  src.asnumpy()[:, ::-1])
    np.testing.assert_array_equal(image.HorizontalFlipAug(0.0)(src).asnumpy(), src.asnumpy())
    np.testing.assert_allclose(image.RandomGrayAug(1.0)(f.copy()).asnumpy()[..., 0],
                               a @ [0.21, 0.72, 0.07], rtol=1e-6, atol=1e-4)
    np.random.seed(5)
    al = np.random.RandomState(5).normal(0, 0.1, size=3)
    eigval = np.array([55.46, 4.794, 1.148])
    eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                       [-0.5836, -0.6948, 0.4203]])
    np.testing.assert_allclose(image.LightingAug(0.1, eigval, eigvec)(f.copy()).asnumpy(),
                               a + (eigvec * al) @ eigval, rtol=1e-5, atol=1e-3)
    out = image.ColorNormalizeAug([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])(f.copy())
    np.testing.assert_allclose(out.asnumpy(), (a - [1, 2, 3]) / 2, rtol=1e-6)
    assert image.CastAug()(src).dtype == np.float32
    assert image.ForceResizeAug((10, 7))(src).shape == (7, 10, 3)
    assert image.ResizeAug(18)(src).shape == (20, 18, 3)
    assert image.CenterCropAug((8, 9))(src).shape == (9, 8, 3)
    assert image.RandomCropAug((8, 9))(src).shape == (9, 8, 3)
    assert image.RandomSizedCropAug((8, 9), 0.5, (0.8, 1.2))(src).shape == (9, 8, 3)


def test_create_augmenter_and_determinism(src):
    def make():
        return image.CreateAugmenter((3, 24, 20), resize=30, rand_crop=True, rand_mirror=True,
                                     mean=True, std=True, brightness=0.2, contrast=0.2,
                                     saturation=0.2, hue=0.1, pca_noise=0.1, rand_gray=0.2)
    augs = make()
    names = [type(a).__name__ for a in augs]
    assert names == ["ResizeAug", "RandomCropAug", "HorizontalFlipAug", "CastAug",
                     "ColorJitterAug", "HueJitterAug", "LightingAug", "RandomGrayAug",
                     "ColorNormalizeAug"]

    def run():
        # a fresh list: RandomOrderAug shuffles its list in place, as MXNet's does
        random.seed(11)
        np.random.seed(11)
        x = src
        for a in make():
            x = a(x)
        return x.asnumpy()
    r1, r2 = run(), run()
    assert r1.shape == (24, 20, 3) and r1.dtype == np.float32
    np.testing.assert_array_equal(r1, r2)
    with pytest.raises(ValueError):
        image.CreateAugmenter((3, 24, 20), rand_resize=True)


def test_copy_make_border(src):
    a = src.asnumpy()
    out = image.copyMakeBorder(src, 1, 2, 3, 4, type=0, value=9).asnumpy()
    assert out.shape == (43, 43, 3)
    np.testing.assert_array_equal(out[1:41, 3:39], a)
    assert (out[0] == 9).all() and (out[:, -1] == 9).all()
    np.testing.assert_array_equal(image.copyMakeBorder(src, 2, 0, 0, 0, type=1).asnumpy()[0], a[0])


def test_pixel_crop_to_chw_reference():
    rng = np.random.RandomState(1)
    img = rng.randint(0, 256, (9, 11, 3)).astype(np.uint8)
    out = np.empty((3, 4, 5), np.float32)
    mean = np.array([1, 2, 3], np.float32)
    mult = np.array([0.5, 0.25, 2], np.float32)
    _pixel.crop_normalize_to_chw(img, 2, 3, True, np.array([2, 1, 0], np.int32), mean, mult, out)
    ref = (img[2:6, 3:8, ::-1][:, ::-1].astype(np.float32) - mean) * mult
    np.testing.assert_array_equal(out, ref.transpose(2, 0, 1))
    u8 = np.empty((3, 4, 5), np.uint8)
    _pixel.crop_to_chw(img, 2, 3, False, np.arange(3, dtype=np.int32), None, None, u8)
    np.testing.assert_array_equal(u8, img[2:6, 3:8].transpose(2, 0, 1))
    with pytest.raises(ValueError, match="outside"):
        _pixel.crop_to_chw(img, 6, 3, False, np.arange(3, dtype=np.int32), None, None, u8)



def test_pixel_crop_normalize_batch_reference():
    # the batched kernel against a numpy crop per item, slots out of order, 1 and 3 channels
    rng = np.random.RandomState(3)
    for c in (1, 3):
        cmap = np.arange(c, dtype=np.int32)[::-1].copy()
        mean = rng.uniform(0, 100, c).astype(np.float32)
        mult = rng.uniform(0.01, 2, c).astype(np.float32)
        imgs = [rng.randint(0, 256, (6 + k, 7 + 2 * k, c)).astype(np.uint8) for k in range(4)]
        items = [(im, k, 2 * k, k % 2 == 1, 3 - k) for k, im in enumerate(imgs)]
        out = np.full((4, c, 5, 6), np.nan, np.float32)
        _pixel.crop_normalize_batch(items, cmap, mean, mult, out)
        for im, y0, x0, mirror, slot in items:
            crop = im[y0:y0 + 5, x0:x0 + 6][:, :, cmap].astype(np.float32)
            if mirror:
                crop = crop[:, ::-1]
            ref = ((crop - mean) * mult).transpose(2, 0, 1)
            np.testing.assert_array_equal(out[slot], ref)
    with pytest.raises(ValueError, match="outside"):
        _pixel.crop_normalize_batch([(imgs[0], 2, 0, False, 0)], cmap, mean, mult, out)
    with pytest.raises(ValueError, match="slot"):
        _pixel.crop_normalize_batch([(imgs[0], 0, 0, False, 4)], cmap, mean, mult, out)

def test_image_iter_from_rec_and_lst(tmp_path):
    from PIL import Image
    rng = np.random.RandomState(2)
    imgs = [rng.randint(0, 256, (12, 10, 3)).astype(np.uint8) for _ in range(5)]
    lines = []
    for i, im in enumerate(imgs):
        Image.fromarray(im).save(tmp_path / f"{i}.png")
        lines.append(f"{i}\t{float(i)}\t{i}.png")
    (tmp_path / "a.lst").write_text("\n".join(lines) + "\n")
    it = image.ImageIter(2, (3, 8, 6), path_imglist=str(tmp_path / "a.lst"),
                         path_root=str(tmp_path))
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    d = batches[0].data[0].asnumpy()
    np.testing.assert_array_equal(d[1], imgs[1][2:10, 2:8].transpose(2, 0, 1).astype(np.float32))
    np.testing.assert_array_equal(batches[2].label[0].asnumpy(), [4, 0])
    # same images through a .rec/.idx written by mxc.recordio (PNG records, BGR as OpenCV)
    w = recordio.MXIndexedRecordIO(str(tmp_path / "a.idx"), str(tmp_path / "a.rec"), "w")
    for i, im in enumerate(imgs):
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), im[:, :, ::-1],
                                         img_fmt=".png"))
    w.close()
    it = image.ImageIter(2, (3, 8, 6), path_imgrec=str(tmp_path / "a.rec"),
                         path_imgidx=str(tmp_path / "a.idx"), last_batch_handle="discard")
    b = list(it)
    assert len(b) == 2
    np.testing.assert_array_equal(b[0].data[0].asnumpy()[1],
                                  imgs[1][2:10, 2:8].transpose(2, 0, 1).astype(np.float32))
    with pytest.raises(ValueError, match="3 channels"):
        image.ImageIter(2, (1, 8, 6), path_imgrec=str(tmp_path / "a.rec"))


def test_imresize_float_image_agrees_with_uint8_path():
    # MXNet resizes float images too; the uint8 path rounds (fixed-point weights, as OpenCV)
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (9, 12, 3)).astype(np.uint8)
    u8 = mx.image.imresize(mx.nd.array(img, dtype="uint8"), 5, 4, interp=1).asnumpy()
    f32 = mx.image.imresize(mx.nd.array(img.astype(np.float32)), 5, 4, interp=1)
    assert f32.dtype == np.float32 and f32.shape == (4, 5, 3)
    np.testing.assert_allclose(f32.asnumpy(), u8, atol=1.0)
    assert not np.array_equal(f32.asnumpy(), np.round(f32.asnumpy()))  # not quantised


_ROT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "image_rotate", "imrotate.npz")


def test_imrotate_as_mxnet():
    """imrotate against MXNet 1.9.1's output (tests/data/image_rotate/make_fixture.py), single
    images with each zoom mode and a batch with an angle per image; 180 degrees is a flip."""
    ref = np.load(_ROT)
    img = mx.nd.array(ref["img"])
    for deg in (30, -45, 90):
        for zoom in ("none", "in", "out"):
            got = image.imrotate(img, deg, zoom_in=zoom == "in", zoom_out=zoom == "out")
            np.testing.assert_allclose(got.asnumpy(), ref[f"img_{deg}_{zoom}"], rtol=1e-4,
                                       atol=1e-3, err_msg=f"{deg} {zoom}")
    batch, angles = mx.nd.array(ref["batch"]), mx.nd.array(ref["angles"])
    np.testing.assert_allclose(image.imrotate(batch, angles).asnumpy(), ref["batch_rot"],
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(image.imrotate(batch, angles, zoom_in=True).asnumpy(),
                               ref["batch_rot_in"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(image.imrotate(img, 180).asnumpy(),
                               ref["img"][:, ::-1, ::-1], atol=1e-3)
    with pytest.raises(ValueError, match="both True"):
        image.imrotate(img, 10, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="float32"):
        image.imrotate(img.astype("uint8"), 10)
    with pytest.raises(ValueError, match="number of rotation angles"):
        image.imrotate(batch, mx.nd.array([1.0, 2.0]))


def test_random_rotate_draws_from_numpy():
    batch = mx.nd.array(np.load(_ROT)["batch"])
    np.random.seed(3)
    got = image.random_rotate(batch, (-20, 20)).asnumpy()
    np.random.seed(3)
    want = image.imrotate(batch, mx.nd.array(np.random.uniform(-20, 20, size=3))).asnumpy()
    np.testing.assert_array_equal(got, want)
