"""Make the fixtures of tests/data/image_iter/ with real MXNet 1.9.1 (the oracle).

Run with the oracle's python:  /work/mxnet-oracle/bin/python tests/data/make_image_iter_fixtures.py

Writes
- tiny.rec / tiny.idx: 6 PNG-encoded colour records (lossless, so Pillow and OpenCV decode the
  same pixels) of sizes between 28x28 and 40x36, labels 0..5, written by MXNet's recordio.
- tiny_jpg.rec / tiny_jpg.idx: the same images JPEG q95 (to measure decoder differences).
- multi.rec: 5 PNG records carrying 2 float labels each (IRHeader flag=2).
- expected.npz: what MXNet's ImageRecordIter / ImageRecordUInt8Iter / mx.image produce on them.
"""
import os
import sys

import cv2
import numpy as np
import mxnet as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_iter")
os.makedirs(HERE, exist_ok=True)
SIZES = [(32, 32), (40, 36), (28, 30), (36, 40), (30, 28), (33, 37)]  # (h, w)


def images():
    rng = np.random.RandomState(7)
    out = []
    for h, w in SIZES:
        # smooth gradients plus noise: JPEG-realistic content, every pixel distinct-ish
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([xx * 255.0 / w, yy * 255.0 / h, (xx + yy) * 127.0 / (h + w)], axis=2)
        img = np.clip(base + rng.randint(-40, 40, size=(h, w, 3)), 0, 255).astype(np.uint8)
        out.append(img)  # BGR as OpenCV sees it
    return out


def write_rec(name, fmt, quality, imgs, labels):
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, name + ".idx"),
                                        os.path.join(HERE, name + ".rec"), "w")
    for i, (img, lab) in enumerate(zip(imgs, labels)):
        hdr = mx.recordio.IRHeader(0, lab, i, 0)
        rec.write_idx(i, mx.recordio.pack_img(hdr, img, quality=quality, img_fmt=fmt))
    rec.close()


def run_iter(cls, epochs=2, **kw):
    it = cls(**kw)
    datas, labels, pads = [], [], []
    for ep in range(epochs):
        # NOTE: no reset() before the first epoch: MXNet's reset right after construction races
        # with its prefetch thread (the first batch may be dropped and pads mismatched).
        if ep:
            it.reset()
        for b in it:
            datas.append(b.data[0].asnumpy())
            labels.append(b.label[0].asnumpy())
            pads.append(b.pad)
    return np.stack(datas), np.stack(labels), np.array(pads)


def main():
    imgs = images()
    write_rec("tiny", ".png", 3, imgs, [float(i) for i in range(6)])
    write_rec("tiny_jpg", ".jpg", 95, imgs, [float(i) for i in range(6)])
    write_rec("multi", ".png", 3, imgs[:5], [np.array([i, 10.0 + i], np.float32) for i in range(5)])
    rec = os.path.join(HERE, "tiny.rec")
    exp = {}
    common = dict(path_imgrec=rec, batch_size=4, preprocess_threads=1)
    d, l, p = run_iter(mx.io.ImageRecordIter, data_shape=(3, 24, 24), mean_r=123.68,
                       mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12, std_b=57.375,
                       **common)
    exp.update(plain_data=d, plain_label=l, plain_pad=p)
    d, l, p = run_iter(mx.io.ImageRecordIter, data_shape=(3, 24, 24), resize=26, scale=1 / 255.0,
                       **common)
    exp.update(resize_data=d, resize_label=l, resize_pad=p)
    d, l, p = run_iter(mx.io.ImageRecordIter, data_shape=(3, 28, 28), round_batch=False,
                       mirror=True, **common)
    exp.update(noround_data=d, noround_label=l, noround_pad=p)
    d, l, p = run_iter(mx.io.ImageRecordUInt8Iter, data_shape=(3, 24, 24), **common)
    exp.update(uint8_data=d, uint8_label=l, uint8_pad=p)
    d, l, p = run_iter(mx.io.ImageRecordIter, data_shape=(1, 24, 24), **common)
    exp.update(gray_data=d, gray_label=l, gray_pad=p)
    d, l, p = run_iter(mx.io.ImageRecordIter, epochs=1, data_shape=(3, 24, 24), label_width=2,
                       path_imgrec=os.path.join(HERE, "multi.rec"), batch_size=5,
                       preprocess_threads=1)
    exp.update(multi_data=d, multi_label=l)
    it = mx.io.ImageRecordIter(data_shape=(3, 24, 24), **common)
    exp["provide_label_shape"] = np.array(it.provide_label[0][1])
    exp["provide_data_shape"] = np.array(it.provide_data[0][1])

    # mx.image on the JPEG and PNG bytes of image 1 (40x36)
    rj = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "tiny_jpg.idx"),
                                       os.path.join(HERE, "tiny_jpg.rec"), "r")
    jpg = mx.recordio.unpack(rj.read_idx(1))[1]
    exp["imdecode_jpg"] = mx.image.imdecode(jpg).asnumpy()
    exp["imdecode_jpg_gray"] = mx.image.imdecode(jpg, flag=0).asnumpy()
    src = mx.nd.array(imgs[1][:, :, ::-1].copy(), dtype=np.uint8)  # RGB 40x36
    exp["src"] = src.asnumpy()
    for (w, h) in [(20, 18), (50, 45), (36, 40), (18, 20), (31, 23), (72, 80)]:
        exp["imresize_%dx%d" % (w, h)] = mx.image.imresize(src, w, h, interp=1).asnumpy()
        exp["imresize_nn_%dx%d" % (w, h)] = mx.image.imresize(src, w, h, interp=0).asnumpy()
    exp["resize_short_20_linear"] = mx.image.resize_short(src, 20, interp=1).asnumpy()
    exp["center_crop_20x16"] = mx.image.center_crop(src, (20, 16), interp=1)[0].asnumpy()
    exp["center_crop_20x16_box"] = np.array(mx.image.center_crop(src, (20, 16))[1])
    exp["center_crop_50x50"] = mx.image.center_crop(src, (50, 50), interp=1)[0].asnumpy()
    exp["fixed_crop"] = mx.image.fixed_crop(src, 3, 5, 20, 10, size=(12, 8), interp=1).asnumpy()
    mean = mx.nd.array([123.68, 116.28, 103.53])
    std = mx.nd.array([58.395, 57.12, 57.375])
    exp["color_normalize"] = mx.image.color_normalize(src.astype("float32"), mean, std).asnumpy()
    exp["scale_down"] = np.array(mx.image.scale_down((36, 40), (50, 30)))
    np.savez_compressed(os.path.join(HERE, "expected.npz"), **exp)
    print("wrote", sorted(exp), file=sys.stderr)


if __name__ == "__main__":
    main()
