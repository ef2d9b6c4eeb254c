"""Golden outputs of MXNet 1.9.1's image operators for tests/ops/test_image_ops.py.

Run with the oracle's interpreter (MXNet 1.9.1 installed):
    /work/mxnet-oracle/bin/python tests/data/make_gluon_data_golden.py
Writes tests/data/gluon_data/image_ops_golden.npz. Random operators are pinned by giving them
an empty range (min_factor == max_factor), so their outputs are deterministic."""
import os

import numpy as np
import mxnet as mx

rs = np.random.RandomState(7)
img = rs.randint(0, 256, (7, 9, 3)).astype(np.uint8)
imgf = rs.uniform(0, 255, (7, 9, 3)).astype(np.float32)
batch = rs.randint(0, 256, (2, 7, 9, 3)).astype(np.uint8)
gray = rs.randint(0, 256, (7, 9, 1)).astype(np.uint8)
out = {"img": img, "imgf": imgf, "batch": batch, "gray": gray}
I = mx.nd.image
u8, f32, b8, g8 = (mx.nd.array(a, dtype=a.dtype) for a in (img, imgf, batch, gray))
out["to_tensor"] = I.to_tensor(u8).asnumpy()
out["to_tensor_batch"] = I.to_tensor(b8).asnumpy()
t = I.to_tensor(f32)
out["normalize"] = I.normalize(t, mean=(0.1, 0.2, 0.3), std=(0.5, 1.5, 2.5)).asnumpy()
for interp in (0, 1, 2, 3):
    out[f"resize_f32_{interp}"] = I.resize(f32, size=(5, 4), interp=interp).asnumpy()
    out[f"resize_f32_up_{interp}"] = I.resize(f32, size=(13, 11), interp=interp).asnumpy()
for interp in (0, 1):
    out[f"resize_u8_{interp}"] = I.resize(u8, size=(5, 4), interp=interp).asnumpy()
out["resize_keep"] = I.resize(f32, size=4, keep_ratio=True).asnumpy()
out["crop"] = I.crop(u8, 2, 1, 4, 3).asnumpy()
out["flip_lr"] = I.flip_left_right(u8).asnumpy()
out["flip_tb"] = I.flip_top_bottom(u8).asnumpy()
for name, fn in (("brightness", I.random_brightness), ("contrast", I.random_contrast),
                 ("hue", I.random_hue)):
    for a in (0.3, 0.7, 1.4):
        out[f"{name}_u8_{a}"] = fn(u8, a, a).asnumpy()
        out[f"{name}_f32_{a}"] = fn(f32, a, a).asnumpy()
for a in (0.1, 0.25, 0.9):
    out[f"hue_u8_{a}"] = I.random_hue(u8, a, a).asnumpy()
out["contrast_gray_0.5"] = I.random_contrast(g8, 0.5, 0.5).asnumpy()
out["lighting_u8"] = I.adjust_lighting(u8, alpha=(0.5, -0.3, 0.2)).asnumpy()
out["lighting_f32"] = I.adjust_lighting(f32, alpha=(-1.0, 2.0, 0.7)).asnumpy()

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gluon_data", "image_ops_golden.npz")
os.makedirs(os.path.dirname(path), exist_ok=True)
np.savez_compressed(path, **out)
print("wrote", path, len(out), "arrays")
