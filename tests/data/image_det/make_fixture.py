"""Record MXNet 1.9.1's detection augmenters on a small image and label under seeded Python
``random`` (the module they draw from) into det_aug.npz (temporary name, then renamed). Run with
real MXNet:

    /path/to/mxnet-1.9.1/bin/python tests/data/image_det/make_fixture.py
"""
import json
import os
import random

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = range(8)


def augmenters(image):
    return {
        "flip": image.DetHorizontalFlipAug(0.5),
        "crop": image.DetRandomCropAug(min_object_covered=0.3, area_range=(0.1, 1.0)),
        "pad": image.DetRandomPadAug(area_range=(1.0, 2.5), pad_val=(10, 20, 30)),
        "multi": image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9],
                                                    area_range=(0.2, 1.0), skip_prob=0.2),
    }


def create_det(image):
    """CreateDetAugmenter with every step on (its list's dumps and the labels a seeded run
    gives are compared; resizing's pixels differ between OpenCV and Pillow)."""
    return image.CreateDetAugmenter((3, 32, 32), resize=40, rand_crop=0.7, rand_pad=0.5,
                                    rand_gray=0.1, rand_mirror=True, mean=True,
                                    std=np.array([1.0, 2.0, 3.0]), brightness=0.1,
                                    contrast=0.2, saturation=0.3, pca_noise=0.05, hue=0.1)


def inputs():
    rng = np.random.RandomState(0)
    img = rng.randint(0, 256, (30, 40, 3)).astype(np.uint8)
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6], [1, 0.4, 0.1, 0.9, 0.5],
                      [2, 0.05, 0.55, 0.35, 0.95]], np.float32)
    return img, label


def main():
    img, label = inputs()
    out = {}
    for name, aug in augmenters(mx.image).items():
        for seed in SEEDS:
            random.seed(seed)
            src, lab = aug(mx.nd.array(img, dtype=np.uint8), label.copy())
            out[f"{name}_{seed}_img"] = src.asnumpy()
            out[f"{name}_{seed}_label"] = np.asarray(lab)
    augs = create_det(mx.image)
    out["create_dumps"] = np.array(json.dumps([a.dumps() for a in augs]))
    for seed in SEEDS:
        random.seed(seed)
        lab = label.copy()
        for aug in augs[:4]:            # the steps that move boxes
            _, lab = aug(mx.nd.array(img, dtype=np.uint8), lab)
        out[f"create_{seed}_label"] = np.asarray(lab)
    tmp = os.path.join(HERE, "det_aug.tmp.npz")
    np.savez_compressed(tmp, **out)
    os.replace(tmp, os.path.join(HERE, "det_aug.npz"))


if __name__ == "__main__":
    main()
