"""Write det.rec/det.idx (5 PNG images with detection labels, made here) and record MXNet
1.9.1's ImageDetIter batches over them into det_iter.npz (temporary names, then renamed). Run
with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/image_det/make_iter_fixture.py
"""
import os
import random

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# header [header_width=4, object_width=5, 16, 16], then [class, xmin, ymin, xmax, ymax] rows;
# sample 3's second object has no area (dropped)
LABELS = [
    [4, 5, 16, 16, 0, 0.1, 0.1, 0.5, 0.6],
    [4, 5, 16, 16, 1, 0.2, 0.3, 0.9, 0.8, 2, 0.0, 0.0, 0.3, 0.4],
    [4, 5, 16, 16, 0, 0.5, 0.5, 1.0, 1.0, 1, 0.1, 0.2, 0.4, 0.5, 2, 0.6, 0.0, 0.9, 0.3],
    [4, 5, 16, 16, 1, 0.3, 0.3, 0.7, 0.9, 0, 0.5, 0.5, 0.5, 0.8],
    [4, 5, 16, 16, 2, 0.0, 0.1, 0.6, 0.7],
]


def write_rec():
    rng = np.random.RandomState(5)
    tmp_rec, tmp_idx = (os.path.join(HERE, "det.tmp." + e) for e in ("rec", "idx"))
    rec = mx.recordio.MXIndexedRecordIO(tmp_idx, tmp_rec, "w")
    for i, label in enumerate(LABELS):
        img = rng.randint(0, 256, (16, 16, 3)).astype(np.uint8)
        header = mx.recordio.IRHeader(0, np.array(label, np.float32), i, 0)
        rec.write_idx(i, mx.recordio.pack_img(header, img, img_fmt=".png"))
    rec.close()
    os.replace(tmp_rec, os.path.join(HERE, "det.rec"))
    os.replace(tmp_idx, os.path.join(HERE, "det.idx"))


def run(image, path, last_batch_handle):
    it = image.ImageDetIter(2, (3, 16, 16), path_imgrec=path + ".rec", path_imgidx=path + ".idx",
                            aug_list=[image.DetHorizontalFlipAug(0.5),
                                      image.DetBorrowAug(image.CastAug())],
                            last_batch_handle=last_batch_handle)
    random.seed(11)
    out = {"label_shape": np.array(it.label_shape),
           "provide_label": np.array(it.provide_label[0][1])}
    for ep in range(2):
        if ep:
            it.reset()
        for k, b in enumerate(it):
            out[f"{ep}_{k}_data"] = b.data[0].asnumpy()
            out[f"{ep}_{k}_label"] = b.label[0].asnumpy()
            out[f"{ep}_{k}_pad"] = np.array(b.pad)
    return out


def main():
    write_rec()
    out = {}
    for handle in ("pad", "discard", "roll_over"):
        for k, v in run(mx.image, os.path.join(HERE, "det"), handle).items():
            out[f"{handle}_{k}"] = v
    tmp = os.path.join(HERE, "det_iter.tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, os.path.join(HERE, "det_iter.npz"))


if __name__ == "__main__":
    main()
