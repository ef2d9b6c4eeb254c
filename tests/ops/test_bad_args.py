"""Operators refuse bad arguments where MXNet 1.9.1 does, through ``mx.nd`` and through a bound
symbol: out-of-range axes, negative sizes, inputs whose shapes disagree (channels, num_hidden),
a wrong ``out=``. Each case's expected outcome per path is real MXNet's, recorded by
tests/data/make_bad_args_cases.py (which reads the inputs below and prints this table again):
the output shapes, or "error". A case where MXNet's process crashed ("crash") must be a clean
MXNetError here."""
import numpy as np
import pytest

import mxc as mx
from mxc.base import MXNetError

# (case, operator, input shapes, keyword arguments (out: the shape of out=), MXNet's outcome
# through mx.nd, through simple_bind + forward (None: not a bind case))
CASES = [
    ('sum axis=2 on 2-D', 'sum', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('sum axis=-3 on 2-D', 'sum', [(2, 3)], {'axis': -3}, 'error', 'error'),
    ('mean axis=(0, 5)', 'mean', [(2, 3)], {'axis': (0, 5)}, 'error', 'error'),
    ('max axis=3', 'max', [(2, 3)], {'axis': 3}, 'error', 'error'),
    ('prod axis=2', 'prod', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('norm axis=2', 'norm', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('argmax axis=2', 'argmax', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('argmin axis=-3', 'argmin', [(2, 3)], {'axis': -3}, 'error', 'error'),
    ('softmax axis=2', 'softmax', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('log_softmax axis=-3', 'log_softmax', [(2, 3)], {'axis': -3}, 'error', 'error'),
    ('softmin axis=4', 'softmin', [(2, 3)], {'axis': 4}, 'error', 'error'),
    ('concat dim=2 of 2-D', 'concat', [(2, 3), (2, 3)], {'dim': 2}, 'error', 'error'),
    ('stack axis=4', 'stack', [(2, 3), (2, 3)], {'axis': 4}, 'error', 'error'),
    ('stack axis=2 (last)', 'stack', [(2, 3), (2, 3)], {'axis': 2}, [(2, 3, 2)], [(2, 3, 2)]),
    ('split axis=2', 'split', [(2, 4)], {'axis': 2, 'num_outputs': 2}, 'error', 'error'),
    ('split uneven', 'split', [(2, 3)], {'axis': 1, 'num_outputs': 2}, 'error', 'error'),
    ('expand_dims axis=4', 'expand_dims', [(2, 3)], {'axis': 4}, 'error', 'error'),
    ('expand_dims axis=2', 'expand_dims', [(2, 3)], {'axis': 2}, [(2, 3, 1)], [(2, 3, 1)]),
    ('expand_dims axis=-4', 'expand_dims', [(2, 3)], {'axis': -4}, 'error', 'error'),
    ('squeeze axis=2', 'squeeze', [(2, 1)], {'axis': 2}, 'error', 'error'),
    ('squeeze a non-1 axis', 'squeeze', [(2, 1)], {'axis': 0}, 'error', 'error'),
    ('flip axis=2', 'flip', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('reverse axis=-3', 'reverse', [(2, 3)], {'axis': -3}, 'error', 'error'),
    ('transpose axes too short', 'transpose', [(2, 3, 4)], {'axes': (1, 0)}, 'error', 'error'),
    ('transpose axes repeated', 'transpose', [(2, 3)], {'axes': (0, 0)}, [(2, 2)], [(2, 2)]),
    ('transpose axes out of range', 'transpose', [(2, 3)], {'axes': (0, 2)}, 'error', 'error'),
    ('repeat axis=2', 'repeat', [(2, 3)], {'repeats': 2, 'axis': 2}, 'error', 'error'),
    ('topk axis=2', 'topk', [(2, 3)], {'axis': 2, 'k': 1}, 'error', 'error'),
    ('topk k past the axis', 'topk', [(2, 3)], {'axis': 1, 'k': 4}, 'error', 'error'),
    ('sort axis=2', 'sort', [(2, 3)], {'axis': 2}, 'error', 'error'),
    ('argsort axis=-3', 'argsort', [(2, 3)], {'axis': -3}, 'error', 'error'),
    ('take axis=2', 'take', [(2, 3), (2,)], {'axis': 2}, 'error', 'error'),
    ('pick axis=2', 'pick', [(2, 3), (2,)], {'axis': 2}, 'error', 'error'),
    ('broadcast_axis axis=2', 'broadcast_axis', [(2, 1)], {'axis': 2, 'size': 3}, 'error', 'error'),
    ('broadcast_axis a non-1 axis', 'broadcast_axis', [(2, 1)], {'axis': 0, 'size': 3}, 'error', 'error'),
    ('slice_axis axis=3', 'slice_axis', [(2, 3)], {'axis': 3, 'begin': 0, 'end': 1}, 'error', 'error'),
    ('slice_axis axis=-3', 'slice_axis', [(2, 3)], {'axis': -3, 'begin': 0, 'end': 1}, 'error', 'error'),
    ('slice_axis end past', 'slice_axis', [(2, 3)], {'axis': 1, 'begin': 0, 'end': 4}, 'error', 'error'),
    ('slice_axis begin past', 'slice_axis', [(2, 3)], {'axis': 1, 'begin': 3, 'end': None}, 'error', 'error'),
    ('slice_axis begin=end', 'slice_axis', [(2, 3)], {'axis': 1, 'begin': 1, 'end': 1}, 'error', 'error'),
    ('slice_axis begin before', 'slice_axis', [(2, 3)], {'axis': 1, 'begin': -4, 'end': 2}, 'error', 'error'),
    ('slice_axis negatives', 'slice_axis', [(2, 3)], {'axis': -1, 'begin': -2, 'end': -1}, [(2, 1)], [(2, 1)]),
    ('swapaxes dim2=5', 'swapaxes', [(2, 3)], {'dim1': 0, 'dim2': 5}, 'error', 'error'),
    ('swapaxes dim1=-3', 'swapaxes', [(2, 3)], {'dim1': -3, 'dim2': 0}, 'error', 'error'),
    ('swapaxes dim1=-1', 'swapaxes', [(2, 3)], {'dim1': -1, 'dim2': 0}, [(3, 2)], [(3, 2)]),
    ('slice begin past', 'slice', [(2, 3)], {'begin': (0, 5), 'end': (2, 6)}, 'error', 'error'),
    ('slice begin=end', 'slice', [(2, 3)], {'begin': (0, 1), 'end': (2, 1)}, 'error', 'error'),
    ('slice begin after end', 'slice', [(2, 3)], {'begin': (0, 2), 'end': (2, 1)}, 'error', 'error'),
    ('slice end past (clipped)', 'slice', [(2, 3)], {'begin': (0, 0), 'end': (2, 6)}, [(2, 3)], [(2, 3)]),
    ('slice too many axes', 'slice', [(2, 3)], {'begin': (0, 0, 0), 'end': (1, 1, 1)}, 'error', 'error'),
    ('slice step 0', 'slice', [(2, 3)], {'begin': (0, 0), 'end': (2, 3), 'step': (1, 0)}, 'error', 'error'),
    ('slice negative step', 'slice', [(2, 3)], {'begin': (0, 2), 'end': (2, 0), 'step': (1, -1)}, [(2, 2)], [(2, 2)]),
    ('LayerNorm axis=2', 'LayerNorm', [(2, 3), (3,), (3,)], {'axis': 2}, 'error', 'error'),
    ('BatchNorm axis=4', 'BatchNorm', [(2, 3, 2, 2), (3,), (3,), (3,), (3,)], {'axis': 4}, 'error', 'error'),
    ('SequenceMask axis=2', 'SequenceMask', [(3, 2, 4), (2,)], {'axis': 2, 'use_sequence_length': True}, 'error', 'error'),
    ('cumsum-like: L2Normalization mode', 'L2Normalization', [(2, 3)], {'mode': 'spatial'}, 'error', 'error'),
    ('tile negative reps', 'tile', [(2, 3)], {'reps': (2, -1)}, 'error', 'error'),
    ('repeat negative repeats', 'repeat', [(2, 3)], {'repeats': -1, 'axis': 1}, 'error', 'error'),
    ('one_hot depth=-1', 'one_hot', [(3,)], {'depth': -1}, 'error', 'error'),
    ('one_hot depth=0', 'one_hot', [(3,)], {'depth': 0}, [(3, 0)], [(3, 0)]),
    ('reshape to a negative size', 'reshape', [(2, 3)], {'shape': (-2, -5)}, 'error', 'error'),
    ('reshape to the wrong size', 'reshape', [(2, 3)], {'shape': (4, 2)}, [(4, 2)], [(4, 2)]),
    ('reshape two -1', 'reshape', [(2, 3)], {'shape': (-1, -1)}, 'error', 'error'),
    ('broadcast_to negative', 'broadcast_to', [(1, 3)], {'shape': (-2, 3)}, 'error', 'error'),
    ('broadcast_to incompatible', 'broadcast_to', [(2, 3)], {'shape': (4, 3)}, 'error', 'error'),
    ('Pooling kernel larger than input', 'Pooling', [(1, 1, 2, 2)], {'kernel': (3, 3), 'pool_type': 'max'}, 'error', 'error'),
    ('Pooling stride 0', 'Pooling', [(1, 1, 4, 4)], {'kernel': (2, 2), 'stride': (0, 0), 'pool_type': 'max'}, 'error', 'error'),
    ('Convolution kernel larger than input', 'Convolution', [(1, 1, 2, 2), (1, 1, 3, 3), (1,)], {'kernel': (3, 3), 'num_filter': 1}, 'error', 'error'),
    ('Convolution num_filter=0', 'Convolution', [(1, 1, 4, 4), (0, 1, 3, 3), (0,)], {'kernel': (3, 3), 'num_filter': 0}, 'error', 'error'),
    ('Convolution stride 0', 'Convolution', [(1, 1, 4, 4), (1, 1, 3, 3), (1,)], {'kernel': (3, 3), 'num_filter': 1, 'stride': (0, 0)}, 'error', 'error'),
    ('Convolution 1-D kernel on 4-D data', 'Convolution', [(1, 1, 4, 4), (1, 1, 3), (1,)], {'kernel': (3,), 'num_filter': 1}, 'error', 'error'),
    ('Convolution num_group not dividing', 'Convolution', [(1, 3, 4, 4), (2, 1, 3, 3), (2,)], {'kernel': (3, 3), 'num_filter': 2, 'num_group': 2}, 'error', 'error'),
    ('Deconvolution kernel 0', 'Deconvolution', [(1, 1, 4, 4), (1, 1, 3, 3)], {'kernel': (0, 0), 'num_filter': 1, 'no_bias': True}, 'error', 'error'),
    ('UpSampling scale 0', 'UpSampling', [(1, 1, 2, 2)], {'scale': 0, 'sample_type': 'nearest'}, 'error', 'error'),
    ('Embedding index past input_dim (values)', 'Embedding', [(3,), (2, 4)], {'input_dim': 2, 'output_dim': 4}, [(3, 4)], [(3, 4)]),
    ('Embedding weight of the wrong shape', 'Embedding', [(3,), (5, 4)], {'input_dim': 2, 'output_dim': 4}, 'error', 'error'),
    ('arange step 0', 'arange', [], {'start': 0, 'stop': 3, 'step': 0}, 'error', 'error'),
    ('zeros (-1,)', 'zeros', [], {'shape': (-1,)}, 'error', 'error'),
    ('ones (2, -3)', 'ones', [], {'shape': (2, -3)}, 'error', 'error'),
    ('random_uniform negative shape', 'random_uniform', [], {'shape': (-2,)}, 'error', 'error'),
    ('random_uniform low > high', 'random_uniform', [], {'shape': (2,), 'low': 1.0, 'high': 0.0}, 'error', 'error'),
    ('random_normal negative scale', 'random_normal', [], {'shape': (2,), 'scale': -1.0}, 'error', 'error'),
    ('Dropout p=1.5', 'Dropout', [(2, 3)], {'p': 1.5}, 'error', 'error'),
    ('clip a_min > a_max', 'clip', [(2, 3)], {'a_min': 2.0, 'a_max': 1.0}, [(2, 3)], [(2, 3)]),
    ('pad negative width', 'pad', [(1, 1, 2, 2)], {'mode': 'constant', 'pad_width': (0, 0, 0, 0, -1, 1, 1, 1)}, [(1, 1, 2, 4)], [(1, 1, 2, 4)]),
    ('pad on 2-D data', 'pad', [(2, 2)], {'mode': 'constant', 'pad_width': (1, 1, 1, 1)}, 'error', 'error'),
    ('diag k past the matrix', 'diag', [(2, 3)], {'k': 5}, 'error', 'error'),
    ('Convolution weight channels', 'Convolution', [(1, 2, 4, 4), (1, 3, 3, 3), (1,)], {'kernel': (3, 3), 'num_filter': 1}, 'error', 'error'),
    ('Convolution weight filters', 'Convolution', [(1, 2, 4, 4), (3, 2, 3, 3), (1,)], {'kernel': (3, 3), 'num_filter': 1}, 'error', 'error'),
    ('Convolution bias size', 'Convolution', [(1, 2, 4, 4), (1, 2, 3, 3), (2,)], {'kernel': (3, 3), 'num_filter': 1}, 'error', 'error'),
    ('Deconvolution weight channels', 'Deconvolution', [(1, 2, 4, 4), (3, 1, 3, 3)], {'kernel': (3, 3), 'num_filter': 1, 'no_bias': True}, 'error', 'error'),
    ('BatchNorm gamma size', 'BatchNorm', [(2, 3, 2, 2), (4,), (3,), (3,), (3,)], {}, [(2, 3, 2, 2)], 'error'),
    ('BatchNorm moving_var size', 'BatchNorm', [(2, 3, 2, 2), (3,), (3,), (3,), (2,)], {}, [(2, 3, 2, 2)], 'error'),
    ('LayerNorm beta size', 'LayerNorm', [(2, 3), (3,), (2,)], {}, 'error', 'error'),
    ('InstanceNorm gamma size', 'InstanceNorm', [(2, 3, 4), (2,), (3,)], {}, 'error', 'error'),
    ('GroupNorm groups not dividing', 'GroupNorm', [(2, 3, 4), (3,), (3,)], {'num_groups': 2}, 'error', 'error'),
    ('FullyConnected num_hidden != weight rows', 'FullyConnected', [(2, 4), (3, 4), (3,)], {'num_hidden': 5}, 'error', 'error'),
    ('FullyConnected weight columns', 'FullyConnected', [(2, 4), (3, 5), (3,)], {'num_hidden': 3}, 'error', 'error'),
    ('FullyConnected bias size', 'FullyConnected', [(2, 4), (3, 4), (2,)], {'num_hidden': 3}, 'error', 'error'),
    ('FullyConnected num_hidden=0', 'FullyConnected', [(2, 4), (0, 4)], {'num_hidden': 0, 'no_bias': True}, 'error', 'error'),
    ('FullyConnected flatten=False weight', 'FullyConnected', [(2, 3, 4), (3, 3), (3,)], {'num_hidden': 3, 'flatten': False}, 'error', 'error'),
    ('dot inner sizes', 'dot', [(2, 3), (4, 2)], {}, 'error', 'error'),
    ('dot transpose_b inner sizes', 'dot', [(2, 3), (2, 4)], {'transpose_b': True}, 'error', 'error'),
    ('batch_dot batch sizes', 'batch_dot', [(2, 3, 4), (3, 4, 5)], {}, 'error', 'error'),
    ('batch_dot 2-D', 'batch_dot', [(3, 4), (4, 5)], {}, 'error', 'error'),
    ('elemwise_add shapes', 'elemwise_add', [(2, 3), (3, 2)], {}, 'error', 'error'),
    ('broadcast_add incompatible', 'broadcast_add', [(2, 3), (4, 3)], {}, 'error', 'error'),
    ('broadcast_like incompatible', 'broadcast_like', [(2, 3), (4, 5)], {}, 'error', 'error'),
    ('concat other axis differs', 'concat', [(2, 3), (3, 4)], {'dim': 1}, 'error', 'error'),
    ('stack shapes differ', 'stack', [(2, 3), (3, 2)], {'axis': 0}, [(2, 2, 3)], [(2, 2, 3)]),
    ('where shapes', 'where', [(2, 3), (2, 3), (3, 2)], {}, 'error', 'error'),
    ('SoftmaxOutput label size', 'SoftmaxOutput', [(2, 3), (3,)], {}, 'error', 'error'),
    ('LinearRegressionOutput label shape', 'LinearRegressionOutput', [(2, 3), (2, 4)], {}, 'error', 'error'),
    ('linalg_gemm2 inner sizes', 'linalg_gemm2', [(2, 3), (4, 2)], {}, 'error', 'error'),
    ('linalg_inverse non-square', 'linalg_inverse', [(2, 3)], {}, 'error', 'error'),
    ('linalg_potrf non-square', 'linalg_potrf', [(2, 3)], {}, 'error', 'error'),
    ('gather_nd indices too deep', 'gather_nd', [(2, 3), (3, 1)], {}, 'error', 'error'),
    ('Crop larger than input', 'Crop', [(1, 1, 2, 2)], {'h_w': (3, 3), 'num_args': 1}, 'error', 'error'),
    ('RNN parameter size', 'RNN', [(3, 2, 4), (10,), (1, 2, 5)], {'state_size': 5, 'num_layers': 1, 'mode': 'rnn_tanh'}, 'error', 'error'),
    ('relu out= shape', 'relu', [(2, 3)], {'out': (3, 2)}, 'error', None),
    ('dot out= shape', 'dot', [(2, 3), (3, 4)], {'out': (2, 3)}, 'error', None),
    ('broadcast_add out= shape', 'broadcast_add', [(2, 3), (1, 3)], {'out': (1, 3)}, 'error', None),
    ('FullyConnected out= shape', 'FullyConnected', [(2, 4), (3, 4), (3,)], {'num_hidden': 3, 'out': (2, 4)}, 'error', None),
    ('sum out= shape', 'sum', [(2, 3)], {'axis': 1, 'out': (3,)}, 'error', None),
    ('relu out= right shape', 'relu', [(2, 3)], {'out': (2, 3)}, [(2, 3)], None),
]


# mxc refuses these where MXNet 1.9.1 returns an array: MXNet's result is read from memory the
# arguments do not describe, or MXNet itself refuses the same call on its other path
STRICTER = {     # case: (the paths, why)
    "transpose axes repeated": ("nd bind", "MXNet returns a (2, 2) array from a (2, 3) one"),
    "reshape to the wrong size": ("nd bind", "MXNet returns 8 elements viewed over 6"),
    "stack shapes differ": ("nd bind", "MXNet stacks a (2, 3) and a (3, 2) array into (2, 2, 3)"),
    "pad negative width": ("nd bind", "MXNet pads by -1 and returns a (1, 1, 2, 4) array"),
    "BatchNorm gamma size": ("nd", "MXNet's bind refuses it, its mx.nd reads past gamma"),
    "BatchNorm moving_var size": ("nd", "MXNet's bind refuses it, its mx.nd reads past moving_var"),
    # not a nonsense argument: a zero-size output of a bound graph, where mxc's shape inference
    # (MXNet's legacy semantics) reads 0 as an unknown dimension; mx.nd gives (3, 0) as MXNet
    "one_hot depth=0": ("bind", "a bound graph's zero-size output reads as unknown in mxc"),
}


def _arrays(shapes):
    return [mx.nd.array(np.arange(int(np.prod(s)), dtype=np.float32).reshape(s) % 7)
            for s in shapes]


def _nd(op, shapes, kwargs):
    kwargs = dict(kwargs)
    if "out" in kwargs:
        kwargs["out"] = mx.nd.zeros(kwargs["out"])
    res = getattr(mx.nd, op)(*_arrays(shapes), **kwargs)
    res = res if isinstance(res, (list, tuple)) else [res]
    return [tuple(r.asnumpy().shape) for r in res]


def _bind(op, shapes, kwargs):
    names = [f"in{i}" for i in range(len(shapes))]
    sym = getattr(mx.sym, op)(*[mx.sym.Variable(n) for n in names], **kwargs)
    ex = sym.simple_bind(mx.cpu(), grad_req="null", **dict(zip(names, shapes)))
    for n, a in zip(names, _arrays(shapes)):
        ex.arg_dict[n][:] = a
    ex.forward(is_train=False)
    return [tuple(o.asnumpy().shape) for o in ex.outputs]


def _check(case, path, op, shapes, kwargs, want):
    shapes = [tuple(x) for x in shapes]
    run = _nd if path == "nd" else _bind
    if want in ("error", "crash") or path in STRICTER.get(case, ("",))[0].split():
        with pytest.raises(MXNetError):
            run(op, shapes, kwargs)
    else:
        assert run(op, shapes, kwargs) == [tuple(x) for x in want]


@pytest.mark.parametrize("case,op,shapes,kwargs,want_nd,want_bind", CASES, ids=[c[0] for c in CASES])
def test_through_nd(case, op, shapes, kwargs, want_nd, want_bind):
    _check(case, "nd", op, shapes, kwargs, want_nd)


BIND = [c for c in CASES if c[5] is not None]


@pytest.mark.parametrize("case,op,shapes,kwargs,want_nd,want_bind", BIND, ids=[c[0] for c in BIND])
def test_through_bind(case, op, shapes, kwargs, want_nd, want_bind):
    _check(case, "bind", op, shapes, kwargs, want_bind)


# ---- the cases the fuzzing campaign found, with their values (MXNet 1.9.1's answer beside each)
def test_inverse_of_a_singular_matrix_raises():
    # MXNet: "Check failed: ret == 0 (2 vs. 0) : the input matrix is non-convertible"
    for a, batch in [([[1., 2.], [2., 4.]], 0), ([[0., 0.], [0., 0.]], 0),
                     ([[[1., 0.], [0., 1.]], [[1., 2.], [2., 4.]]], 1)]:
        with pytest.raises(MXNetError, match=f"matrix at batch index {batch} is singular"):
            mx.nd.linalg_inverse(mx.nd.array(a)).asnumpy()
    x = mx.sym.Variable("x")
    ex = mx.sym.linalg_inverse(x).simple_bind(mx.cpu(), x=(2, 2))
    ex.arg_dict["x"][:] = mx.nd.array([[1., 2.], [2., 4.]])
    with pytest.raises(MXNetError, match="singular"):
        ex.forward()[0].asnumpy()
    a = np.array([[2., 1.], [1., 3.]], np.float32)
    ex.arg_dict["x"][:] = a
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.linalg.inv(a), rtol=1e-6)


@pytest.mark.parametrize("make", [lambda: mx.nd.zeros((-1,)), lambda: mx.nd.ones((2, -3)),
                                  lambda: mx.nd.full((-1,), 3), lambda: mx.nd.empty((-1,)),
                                  lambda: mx.nd.zeros(-2)])
def test_new_array_of_negative_size_raises(make):
    # MXNet: "Operator _zeros inferring shapes failed"; full/empty: OverflowError
    with pytest.raises(MXNetError, match="negative dimension"):
        make()


def test_empty_slice_is_an_array_with_numpy_shape_semantics():
    """MXNet refuses an empty slice only where 0 means unknown; under mx.np_shape() it is (3, 0)."""
    x = mx.nd.ones((3, 4))
    with pytest.raises(MXNetError, match="is empty"):
        mx.nd.slice(x, begin=(0, 5), end=(3, 6))
    with mx.util.np_shape(True):
        assert mx.nd.slice(x, begin=(0, 5), end=(3, 6)).shape == (3, 0)
        assert mx.nd.slice(x, begin=(0, 1), end=(3, 1)).shape == (3, 0)


def test_swapaxes_and_slice_axis_in_range_give_numpy_values():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(mx.nd.swapaxes(mx.nd.array(x), dim1=-1, dim2=0).asnumpy(), x.T)
    np.testing.assert_array_equal(
        mx.nd.slice_axis(mx.nd.array(x), axis=-1, begin=-2, end=None).asnumpy(), x[:, -2:])
