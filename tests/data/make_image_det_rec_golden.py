"""A small detection RecordIO file and what real MXNet 1.9.1's mx.io.ImageDetRecordIter makes
of it, for tests/io/test_image_det_record_iter.py.

Run with the oracle's interpreter (MXNet 1.9.1, numpy 1.23, OpenCV):
    /work/mxnet-oracle/bin/python tests/data/make_image_det_rec_golden.py
Writes tests/data/image_det_rec/:
  parts.rec, .idx    7 PNG images with scalar labels 0..6 and "parts/<indexed>/<num_parts>/
                     <part_index>" in golden.npz: the labels ImageRecordIter reads in that part
  det.lst            an image list with other labels (the iterator takes those)
  det.rec, det.idx   5 PNG images (sizes 24x32 .. 50x30, 3 channels; one grey-ish) packed with
                     mx.recordio.pack_img; labels [header_width, object_width, (extra header),
                     objects...] with 1-3 objects, one record with header width 4 and objects
                     of width 6, one object with xmax < xmin (dropped by MXNet)
  golden.npz         "<case>/e<epoch>/b<i>/data|label|pad" for every batch of 2 epochs of the
                     cases below (batch_size 2, deterministic parameters only), and
                     "<case>/provide_data|provide_label" shapes
"""
import os

import numpy as np
import mxnet as mx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_det_rec")
os.makedirs(HERE, exist_ok=True)
rng = np.random.RandomState(3)

SIZES = [(24, 32), (40, 30), (16, 16), (30, 50), (20, 28)]        # (h, w)
LABELS = [
    [2, 5, 0, 0.1, 0.2, 0.5, 0.6],
    [2, 5, 1, 0.0, 0.0, 0.3, 0.4, 2, 0.5, 0.5, 0.9, 0.95],
    [4, 6, 0.25, 0.5, 3, 0.2, 0.1, 0.8, 0.7, 0.33],
    [2, 5, 0, 0.6, 0.1, 0.2, 0.3, 1, 0.1, 0.1, 0.4, 0.4, 2, 0.3, 0.3, 0.9, 0.8],
    [2, 5, 4, 0.05, 0.05, 0.95, 0.5],
]


def write_rec():
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "det.idx"),
                                        os.path.join(HERE, "det.rec"), "w")
    for i, ((h, w), lab) in enumerate(zip(SIZES, LABELS)):
        img = rng.randint(0, 256, (h, w, 3)).astype(np.uint8)
        if i == 2:
            img[:] = img[:, :, :1]          # grey pixels in a colour image
        header = mx.recordio.IRHeader(len(lab), np.array(lab, np.float32), i, 0)
        rec.write_idx(i, mx.recordio.pack_img(header, img, quality=3, img_fmt=".png"))
    rec.close()
    # a list whose labels differ from the records' (the list wins)
    with open(os.path.join(HERE, "det.lst"), "w") as f:
        for i, lab in enumerate(LABELS):
            lab = [lab[0], lab[1]] + [v if k % 5 == 0 else v / 2
                                      for k, v in enumerate(lab[2:])]
            f.write("%d\t%s\timg%d.png\n" % (i, "\t".join("%g" % v for v in lab), i))


CASES = {
    "plain": dict(data_shape=(3, 20, 24)),
    "normalized": dict(data_shape=(3, 16, 16), mean_r=123.0, mean_g=117.0, mean_b=104.0,
                       std_r=58.0, std_g=57.0, std_b=57.5, scale=0.5),
    "padded_labels": dict(data_shape=(3, 20, 24), label_pad_width=30, label_pad_value=-2.0),
    "resize_shorter": dict(data_shape=(3, 18, 22), resize=26),
    "shrink": dict(data_shape=(3, 28, 36), resize_mode="shrink"),
    "fit": dict(data_shape=(3, 36, 44), resize_mode="fit", mean_r=1.0),
    "imglist": dict(data_shape=(3, 20, 24), path_imglist="det.lst"),
    "grey": dict(data_shape=(1, 12, 12)),
    "no_round": dict(data_shape=(3, 20, 24), round_batch=False),
    "partitioned": dict(data_shape=(3, 20, 24), num_parts=2, part_index=1),
    "nearest": dict(data_shape=(3, 30, 20), inter_method=0),
    "mirror": dict(data_shape=(3, 20, 24), rand_mirror_prob=1.0),
}


def image_record_parts(gold):
    """ImageRecordIter's shards: by byte range without an index, by record count with one."""
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(HERE, "parts.idx"),
                                        os.path.join(HERE, "parts.rec"), "w")
    for i, (h, w) in enumerate([(24, 32), (40, 30), (16, 16), (30, 50), (20, 28), (8, 8),
                                (9, 9)]):
        img = rng.randint(0, 256, (h, w, 3)).astype(np.uint8)
        header = mx.recordio.IRHeader(0, float(i), i, 0)
        rec.write_idx(i, mx.recordio.pack_img(header, img, img_fmt=".png"))
    rec.close()
    for indexed in (False, True):
        for parts in (2, 3):
            for part in range(parts):
                it = mx.io.ImageRecordIter(
                    path_imgrec=os.path.join(HERE, "parts.rec"), data_shape=(3, 8, 8),
                    path_imgidx=os.path.join(HERE, "parts.idx") if indexed else "",
                    batch_size=1, num_parts=parts, part_index=part, round_batch=False)
                gold["parts/%d/%d/%d" % (indexed, parts, part)] = np.array(
                    [b.label[0].asnumpy()[0] for b in it])


def main():
    write_rec()
    gold = {}
    image_record_parts(gold)
    for case, kw in CASES.items():
        kw = dict(kw)
        if "path_imglist" in kw:
            kw["path_imglist"] = os.path.join(HERE, kw["path_imglist"])
        it = mx.io.ImageDetRecordIter(path_imgrec=os.path.join(HERE, "det.rec"), batch_size=2,
                                      **kw)
        gold[case + "/provide_data"] = np.array(it.provide_data[0].shape)
        gold[case + "/provide_label"] = np.array(it.provide_label[0].shape)
        for epoch in range(2):      # the second resumes after the wrapped batch
            if epoch:
                it.reset()
            for i, batch in enumerate(it):
                key = "%s/e%d/b%d" % (case, epoch, i)
                data = batch.data[0].asnumpy()
                if (data == np.clip(np.round(data), 0, 255)).all():
                    data = data.astype(np.uint8)        # whole pixel values: stored compactly
                gold[key + "/data"] = data
                gold[key + "/label"] = batch.label[0].asnumpy()
                gold[key + "/pad"] = np.array(batch.pad)
    np.savez_compressed(os.path.join(HERE, "golden.npz"), **gold)
    print("wrote", len(gold), "arrays")


if __name__ == "__main__":
    main()
