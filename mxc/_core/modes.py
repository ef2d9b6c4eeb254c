"""Autograd's recording and training flags, per thread (as MXNet keeps them).

They live below the operator registry so that operators whose forward depends on the mode
(Dropout, BatchNorm) can ask ``is_training()`` without importing autograd; ``mx.autograd``
sets them, and so will the executor around a graph's forward."""
import threading

__all__ = ["is_recording", "is_training", "set_recording", "set_training"]


class _Modes(threading.local):
    recording = False
    training = False


_M = _Modes()


def is_recording():
    return _M.recording


def is_training():
    return _M.training


def set_recording(flag):
    """Set the recording flag; returns the previous value."""
    prev, _M.recording = _M.recording, bool(flag)
    return prev


def set_training(flag):
    """Set the training flag; returns the previous value."""
    prev, _M.training = _M.training, bool(flag)
    return prev
