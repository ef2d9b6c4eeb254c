"""Checkpoint helpers of MXNet 1.x's ``mx.rnn``: weights are unpacked per gate on save and
packed again on load, so a checkpoint reads the same whichever cells made it."""
import warnings

from .rnn_cell import BaseRNNCell
from ..model import save_checkpoint, load_checkpoint

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _as_list(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated: call ``cell.unroll`` directly."""
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.")
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """mx.model.save_checkpoint after unpacking the weights of `cells` (one or a list)."""
    for cell in _as_list(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """mx.model.load_checkpoint, then pack the weights of `cells` again.
    Returns (symbol, arg_params, aux_params)."""
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_list(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback for Module.fit that saves an RNN checkpoint every `period`
    epochs."""
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
