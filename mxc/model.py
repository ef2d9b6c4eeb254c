"""``mx.model``: checkpoints (``prefix-symbol.json`` + ``prefix-NNNN.params``) and the helpers the
Module API shares with it (kvstore creation, parameter updates), as in MXNet 1.9.1.

The deprecated ``FeedForward`` estimator lives in mxc/feedforward.py: it trains through
``mx.mod.Module``, which builds on this module, so the package face (mxc/__init__) sets
``mx.model.FeedForward``.
"""
import logging
import os
from collections import namedtuple

import numpy as np

from . import ndarray as nd
from .context import cpu

__all__ = ["BatchEndParam", "FeedForward", "save_checkpoint", "load_checkpoint", "load_params"]

# what batch_end_callback / score_end_callback receive
BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def _kvs():
    from . import kvstore as kvs  # lazily: the kvstore package imports this module's users
    return kvs


def _kv_can_optimize(kv):
    return bool(kv.is_capable(_kvs().KVStoreBase.OPTIMIZER))


def _create_sparse_kvstore(kvstore):
    """A kvstore that can run the optimizer (needed for row_sparse weights)."""
    kvs = _kvs()
    if isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = kvs.create(kvstore)
    else:
        raise TypeError(f"Cannot create '{kvstore}' KVStore with row_sparse parameters. "
                        "The type must be KVStore or str.")
    if not _kv_can_optimize(kv):
        raise AssertionError("KVStore with sparse weight requires optimizer support. However, "
                             f"{type(kv).__name__} does not support optimizer.")
    return kv, True


def _create_kvstore(kvstore, num_device, arg_params):
    """(kvstore or None, update_on_kvstore) for `num_device` devices, as MXNet 1.9.1 decides
    (for the Module API and the Gluon Trainer alike)."""
    kvs = _kvs()
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        kind = kvs.base.store_class(kvstore)
        if num_device == 1 and not (kind is not None and kind.is_distributed):
            kv = None  # one device in one process: nothing to reduce, the updater runs locally
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local" and arg_params:
                biggest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if biggest > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError(f"kvstore must be KVStore, str or None, got {type(kvstore).__name__}")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore = update_on_kvstore and _kv_can_optimize(kv)
    return kv, update_on_kvstore


def _initialize_kvstore(kvstore, param_arrays, arg_params, param_names, update_on_kvstore):
    for idx, on_devs in enumerate(param_arrays):
        name = param_names[idx]
        if not update_on_kvstore or arg_params[name].stype != "default":
            kvstore.init(name, arg_params[name])
        else:
            kvstore.broadcast(name, arg_params[name], out=on_devs)


def _update_params_on_kvstore(param_arrays, grad_arrays, kvstore, param_names):
    """Push the gradients; the store runs the optimizer and the weights are pulled back. The
    dense keys go to the store together (``_pushpull_updates``, as a Gluon Trainer's): its
    optimizer updates them in fused operators, and a distributed store sends them in buckets."""
    dense = []
    for index, (args, grads) in enumerate(zip(param_arrays, grad_arrays)):
        if grads[0] is None:
            continue
        name = param_names[index]
        if grads[0].stype == "default" and args[0].stype == "default":
            dense.append((name, grads, args, -index))
        else:
            kvstore.push(name, grads, priority=-index)
            kvstore.pull(name, out=args, priority=-index)
    if dense:
        kvstore._pushpull_updates(dense)


_update_params_on_kvstore_nccl = _update_params_on_kvstore


def _update_params(param_arrays, grad_arrays, updater, num_device, kvstore=None,
                   param_names=None):
    """Aggregate the gradients through `kvstore` (when given) and run `updater` per device.
    The updater index of parameter i on device k is ``i * num_device + k`` (MXNet's)."""
    sums = []
    for index, (args, grads) in enumerate(zip(param_arrays, grad_arrays)):
        if grads[0] is None:
            continue
        if kvstore:
            name = param_names[index]
            if grads[0].stype == "default" and args[0].stype == "default":
                sums.append((name, grads, -index))
            else:
                kvstore.push(name, grads, priority=-index)
                kvstore.pull(name, out=grads, priority=-index)
    if sums:        # (together: a distributed store sums them in buckets)
        kvstore._pushpull_sums(sums)
    for k in range(num_device):
        for index, (args, grads) in enumerate(zip(param_arrays, grad_arrays)):
            if grads[0] is None:
                continue
            updater(index * num_device + k, grads[k], args[k])


def _multiple_callbacks(callbacks, *args, **kwargs):
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
        return
    if callbacks:
        callbacks(*args, **kwargs)


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (when `symbol` is given) and ``prefix-%04d.params`` whose keys
    are ``arg:<name>`` and ``aux:<name>``, the files ``load_checkpoint`` and MXNet read."""
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    save_dict = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = "%s-%04d.params" % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    fname = "%s-%04d.params" % (prefix, epoch)
    if not os.path.exists(fname):
        raise FileNotFoundError(f"load_params: no parameter file {fname!r} "
                                f"(prefix {prefix!r}, epoch {epoch})")
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError(f"load_params: {fname!r} holds an unnamed list of arrays, not a "
                         "checkpoint (keys arg:<name> / aux:<name>)")
    for k, v in save_dict.items():
        kind, _, name = k.partition(":")
        if kind == "arg":
            arg_params[name] = v
        elif kind == "aux":
            aux_params[name] = v
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) saved by ``save_checkpoint``."""
    from . import symbol as sym
    symbol = sym.load(f"{prefix}-symbol.json")
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


# an eval_end_callback (mx.callback re-exports it: callback sits above model, whose
# save_checkpoint do_checkpoint calls)
class LogValidationMetricsCallback:
    """Eval-end callback logging ``Epoch[e] Validation-<name>=<value>``."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
