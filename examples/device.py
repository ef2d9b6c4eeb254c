"""The examples' ``--gpu`` flag: train on gpu(0) when one is there, else say why not and fall
back to the CPU (the examples run everywhere)."""
import sys

import mxc as mx


def add_gpu_flag(parser):
    parser.add_argument("--gpu", action="store_true",
                        help="train on gpu(0) (falls back to the CPU, with a message, when "
                             "there is no GPU)")


def pick_context(want_gpu, out=sys.stderr):
    """mx.gpu(0) when asked for and usable, else mx.cpu(); a fallback is explained on `out`."""
    if not want_gpu:
        return mx.cpu()
    try:
        mx.context.check_available(mx.gpu(0))
    except mx.MXNetError as e:
        print(f"--gpu: no usable GPU ({e}); training on the CPU instead", file=out)
        return mx.cpu()
    return mx.gpu(0)
