"""The examples' dataset: scikit-learn's bundled digits (1,797 8x8 images, no download), written
as an image folder (one sub-folder per class, as users keep their own images) and packed into
RecordIO files with the ``mxc-im2rec`` command line, exactly as a user would prepare a dataset.

``prepare(workdir)`` returns the paths of ``digits_train.rec`` and ``digits_val.rec`` (80/20
split, fixed by a seed) and builds them only once per work folder.
"""
import os
import shutil
import subprocess
import sys

import numpy as np


def _im2rec_command():
    """The installed ``mxc-im2rec`` script, or the same module run by this interpreter when the
    scripts folder is not on PATH (running from a source checkout)."""
    exe = shutil.which("mxc-im2rec")
    return [exe] if exe else [sys.executable, "-m", "mxc.tools.im2rec"]


def write_image_folder(root):
    """digits/<label>/<index>.png: 8-bit grayscale, the 0..16 intensities scaled to 0..255."""
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    for i, (img, label) in enumerate(zip(digits.images, digits.target)):
        folder = os.path.join(root, str(label))
        os.makedirs(folder, exist_ok=True)
        pixels = np.round(img * (255.0 / 16.0)).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(folder, f"{i:04d}.png"))
    return len(digits.images)


def prepare(workdir):
    prefix = os.path.join(workdir, "digits")
    train, val = prefix + "_train.rec", prefix + "_val.rec"
    if os.path.exists(train) and os.path.exists(val):
        return train, val
    root = os.path.join(workdir, "images")
    n = write_image_folder(root)
    im2rec = _im2rec_command()
    # the list: one label per sub-folder, shuffled with a fixed seed, 80% train / 20% val
    subprocess.run(im2rec + ["--list", "--recursive", "--train-ratio", "0.8", prefix, root],
                   check=True, stdout=subprocess.DEVNULL)
    # the records: PNG kept lossless, one channel
    subprocess.run(im2rec + ["--color", "0", "--encoding", ".png", "--num-thread", "2",
                             prefix, root], check=True, stdout=subprocess.DEVNULL)
    print(f"packed {n} digit images into {train} and {val} with mxc-im2rec")
    return train, val
