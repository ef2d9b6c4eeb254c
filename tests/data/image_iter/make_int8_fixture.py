"""Record MXNet 1.9.1's ImageRecordInt8Iter batches over tiny.rec (made by
tests/data/make_image_iter_fixtures.py) into int8_expected.npz (temporary name, then renamed):
the default means (0), ImageNet-like means, and a mirrored, resized read. Run with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/image_iter/make_int8_fixture.py
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {
    "plain": dict(data_shape=(3, 24, 24)),
    "mean": dict(data_shape=(3, 24, 24), mean_r=123.68, mean_g=116.5, mean_b=103.53),
    "mirror_resize": dict(data_shape=(3, 20, 20), resize=22, mirror=True, mean_r=200.5,
                          mean_g=10.0, mean_b=-3.5),
}


def main():
    out = {}
    for name, kw in CASES.items():
        it = mx.io.ImageRecordInt8Iter(path_imgrec=os.path.join(HERE, "tiny.rec"), batch_size=4,
                                      preprocess_threads=1, **kw)
        out[name] = np.stack([b.data[0].asnumpy() for b in it])
    tmp = os.path.join(HERE, "int8_expected.tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, os.path.join(HERE, "int8_expected.npz"))


if __name__ == "__main__":
    main()
