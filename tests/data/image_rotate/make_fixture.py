"""Record MXNet 1.9.1's mx.image.imrotate on a small image and batch into imrotate.npz
(temporary name, then renamed). Run with real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/image_rotate/make_fixture.py
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.RandomState(7)
    img = rng.uniform(0, 255, (3, 6, 9)).astype(np.float32)
    batch = rng.uniform(0, 1, (3, 2, 5, 4)).astype(np.float32)
    angles = np.array([30.0, -75.0, 200.0], np.float32)
    out = {"img": img, "batch": batch, "angles": angles}
    for deg in (30, -45, 90):
        for zoom in ("none", "in", "out"):
            r = mx.image.imrotate(mx.nd.array(img), deg, zoom_in=zoom == "in",
                                  zoom_out=zoom == "out")
            out[f"img_{deg}_{zoom}"] = r.asnumpy()
    out["batch_rot"] = mx.image.imrotate(mx.nd.array(batch), mx.nd.array(angles)).asnumpy()
    out["batch_rot_in"] = mx.image.imrotate(mx.nd.array(batch), mx.nd.array(angles),
                                            zoom_in=True).asnumpy()
    tmp = os.path.join(HERE, "imrotate.tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, os.path.join(HERE, "imrotate.npz"))


if __name__ == "__main__":
    main()
