"""Basic layers of Gluon (as mxnet.gluon.nn.basic_layers of MXNet 1.9.1): containers, Dense,
Dropout, the normalization layers, Embedding, Flatten and the Lambda wrappers.

Parameter names, shapes, defaults and ``__repr__`` strings follow MXNet 1.9.1, so parameter
files written by MXNet load here and the other way round."""

__all__ = ['Sequential', 'HybridSequential', 'Dense', 'Dropout', 'Embedding',
           'BatchNorm', 'BatchNormReLU', 'InstanceNorm', 'LayerNorm', 'GroupNorm',
           'Flatten', 'Lambda', 'HybridLambda']

import warnings

import numpy as np

from .activations import Activation
from ..block import Block, HybridBlock
from ... import ndarray as _nd
from ... import symbol as _sym


def _indent(text, spaces):
    """Indent every line but the first by ``spaces`` blanks (nested reprs)."""
    lines = text.split('\n')
    if len(lines) == 1:
        return text
    pad = ' ' * spaces
    return lines[0] + '\n' + '\n'.join(pad + line for line in lines[1:])


def _container_repr(block):
    body = '\n'.join('  ({}): {}'.format(key, _indent(repr(child), 2))
                     for key, child in block._children.items())
    return '{}(\n{}\n)'.format(block.__class__.__name__, body)


def _container_getitem(block, key):
    picked = list(block._children.values())[key]
    if not isinstance(picked, list):
        return picked
    # A slice gives a new container of the same kind holding the same child blocks (their
    # parameters are shared, not copied); it keeps the original prefix.
    net = type(block)(prefix=block.prefix)
    with net.name_scope():
        net.add(*picked)
    return net


class Sequential(Block):
    """Runs its children one after another, each on the previous one's output."""

    def __init__(self, prefix=None, params=None):
        super(Sequential, self).__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks at the end of the stack."""
        for blk in blocks:
            self.register_child(blk)

    def forward(self, x):
        for blk in self._children.values():
            x = blk(x)
        return x

    def __repr__(self):
        return _container_repr(self)

    def __getitem__(self, key):
        return _container_getitem(self, key)

    def __len__(self):
        return len(self._children)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (a Sequential itself stays imperative)."""
        kids = list(self._children.values())
        if kids and all(isinstance(c, HybridBlock) for c in kids):
            warnings.warn(
                "All children of this Sequential layer '%s' are HybridBlocks. Consider "
                "using HybridSequential for the best performance." % self.prefix, stacklevel=2)
        super(Sequential, self).hybridize(active, **kwargs)


class HybridSequential(HybridBlock):
    """Sequential container of HybridBlocks; can itself be hybridized as one graph."""

    def __init__(self, prefix=None, params=None):
        super(HybridSequential, self).__init__(prefix=prefix, params=params)

    def add(self, *blocks):
        """Append blocks at the end of the stack."""
        for blk in blocks:
            self.register_child(blk)

    def hybrid_forward(self, F, x):
        for blk in self._children.values():
            x = blk(x)
        return x

    def __repr__(self):
        return _container_repr(self)

    def __getitem__(self, key):
        return _container_getitem(self, key)

    def __len__(self):
        return len(self._children)


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    ``weight`` has shape ``(units, in_units)``; with ``in_units=0`` its second dimension is
    inferred at the first forward. ``flatten=True`` collapses all axes but the first of the
    input; ``flatten=False`` applies the layer on the last axis only."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True,
                 dtype='float32', weight_initializer=None, bias_initializer='zeros',
                 in_units=0, **kwargs):
        super(Dense, self).__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get('weight', shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(units,),
                                            init=bias_initializer, dtype=dtype,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name='fwd')
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        return '{}({} -> {}, {})'.format(self.__class__.__name__,
                                         shape[1] if shape[1] else None, shape[0],
                                         self.act if self.act else 'linear')


class Dropout(HybridBlock):
    """Zeroes a fraction ``rate`` of the input while training (scaling the rest by
    ``1/(1-rate)``); identity in inference. ``axes`` share one mask along those axes."""

    def __init__(self, rate, axes=(), **kwargs):
        super(Dropout, self).__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name='fwd', cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return '{}(p = {}, axes={})'.format(self.__class__.__name__, self._rate, self._axes)


class _BatchNorm(HybridBlock):
    """Shared implementation of BatchNorm and BatchNormReLU.

    Parameters ``gamma``/``beta`` (learned unless ``scale``/``center`` is False) and the
    auxiliary ``running_mean``/``running_var`` (grad_req 'null', updated by the forward in
    training mode with ``momentum``), all of shape ``(in_channels,)``."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, fuse_relu=False,
                 beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super(_BatchNorm, self).__init__(**kwargs)
        self._kwargs = {'axis': axis, 'eps': epsilon, 'momentum': momentum,
                        'fix_gamma': not scale, 'use_global_stats': use_global_stats}
        self.fuse_relu = fuse_relu
        if in_channels != 0:
            self.in_channels = in_channels
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, differentiable=scale)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, differentiable=center)
        self.running_mean = self.params.get('running_mean', grad_req='null',
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get('running_var', grad_req='null',
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        # Statistics stay in float32 under float16 (as MXNet).
        if np.dtype(dtype).name == 'float16':
            dtype = 'float32'
        super(_BatchNorm, self).cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                          **self._kwargs)
        if self.fuse_relu:
            out = F.relu(out)
        return out

    def __repr__(self):
        content = ', '.join('{}={!r}'.format(k, v) for k, v in self._kwargs.items())
        in_channels = self.gamma.shape[0]
        return '{}({}, in_channels={})'.format(self.__class__.__name__, content,
                                               in_channels if in_channels else None)


class BatchNorm(_BatchNorm):
    """Batch normalization (Ioffe & Szegedy, 2014) over ``axis`` (the channels).

    In training mode the batch's mean/variance normalize the input and update the running
    statistics (``running = momentum * running + (1 - momentum) * batch``); in inference, or
    with ``use_global_stats=True``, the running statistics are used."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False,
                 beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super(BatchNorm, self).__init__(
            axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
            use_global_stats=use_global_stats, fuse_relu=False,
            beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
            running_mean_initializer=running_mean_initializer,
            running_variance_initializer=running_variance_initializer,
            in_channels=in_channels, **kwargs)


class BatchNormReLU(_BatchNorm):
    """BatchNorm followed by ReLU (MXNet's fused ``BatchNormWithReLU``; here the two operators
    in sequence, which computes the same values and gradients)."""

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False,
                 beta_initializer='zeros', gamma_initializer='ones',
                 running_mean_initializer='zeros', running_variance_initializer='ones',
                 in_channels=0, **kwargs):
        super(BatchNormReLU, self).__init__(
            axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
            use_global_stats=use_global_stats, fuse_relu=True,
            beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
            running_mean_initializer=running_mean_initializer,
            running_variance_initializer=running_variance_initializer,
            in_channels=in_channels, **kwargs)


class Embedding(HybridBlock):
    """Maps integer indices in ``[0, input_dim)`` to rows of a ``(input_dim, output_dim)``
    weight; the output has the input's shape plus a last axis of ``output_dim``.
    ``sparse_grad=True`` gives the weight a row_sparse gradient."""

    def __init__(self, input_dim, output_dim, dtype='float32',
                 weight_initializer=None, sparse_grad=False, **kwargs):
        super(Embedding, self).__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim,
                        'dtype': dtype, 'sparse_grad': sparse_grad}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype='row_sparse' if sparse_grad else 'default')

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{}({} -> {}, {})'.format(self.__class__.__name__, self._kwargs['input_dim'],
                                         self._kwargs['output_dim'], self._kwargs['dtype'])


class Flatten(HybridBlock):
    """Reshapes ``(N, x1, ..., xn)`` to ``(N, x1 * ... * xn)``."""

    def __init__(self, **kwargs):
        super(Flatten, self).__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.flatten(x)

    def __repr__(self):
        return self.__class__.__name__


def _norm_repr(block, with_channels):
    content = ', '.join('{}={!r}'.format(k, v) for k, v in block._kwargs.items())
    if with_channels:
        return '{}({}, in_channels={})'.format(block.__class__.__name__, content,
                                               block.gamma.shape[0])
    return '{}({})'.format(block.__class__.__name__, content)


class InstanceNorm(HybridBlock):
    """Instance normalization (Ulyanov et al., 2016): every (sample, channel) slice is
    normalized over its remaining axes, then scaled by ``gamma`` and shifted by ``beta``
    (per channel, ``axis`` being the channel axis). Note ``scale=False`` by default, as MXNet:
    gamma then stays at its initial value (ones) and is not learned."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer='zeros', gamma_initializer='ones',
                 in_channels=0, **kwargs):
        super(InstanceNorm, self).__init__(**kwargs)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        x = F.swapaxes(x, 1, self._axis)
        out = F.InstanceNorm(x, gamma, beta, name='fwd', eps=self._epsilon)
        return F.swapaxes(out, 1, self._axis)

    def __repr__(self):
        return _norm_repr(self, True)


class LayerNorm(HybridBlock):
    """Layer normalization (Ba et al., 2016) over ``axis`` (default the last), with ``gamma``
    and ``beta`` of that axis' size."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones',
                 in_channels=0, prefix=None, params=None):
        super(LayerNorm, self).__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'axis': axis, 'center': center, 'scale': scale}
        self._axis = axis
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)

    def __repr__(self):
        return _norm_repr(self, True)


class GroupNorm(HybridBlock):
    """Group normalization (Wu & He, 2018): the channels of ``(N, C, ...)`` are split into
    ``num_groups`` groups, each normalized over its channels and spatial axes; ``gamma`` and
    ``beta`` have one value per group (shape ``(num_groups,)``, as MXNet 1.9.1)."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer='zeros', gamma_initializer='ones',
                 prefix=None, params=None):
        super(GroupNorm, self).__init__(prefix=prefix, params=params)
        self._kwargs = {'eps': epsilon, 'num_groups': num_groups, 'center': center,
                        'scale': scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._center = center
        self._scale = scale
        self.gamma = self.params.get('gamma', grad_req='write' if scale else 'null',
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get('beta', grad_req='write' if center else 'null',
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return _norm_repr(self, False)


class Lambda(Block):
    """Wraps a function (or the name of an ``mx.nd`` operator) as a Block:
    ``Lambda('tanh')``, ``Lambda(lambda x: nd.LeakyReLU(x, slope=0.1))``."""

    def __init__(self, function, prefix=None):
        super(Lambda, self).__init__(prefix=prefix)
        if isinstance(function, str):
            assert hasattr(_nd, function), \
                "Function name %s is not found in ndarray." % function
            self._func_impl = getattr(_nd, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._func_impl.__name__)


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, *args)`` (or the name of an operator that both ``mx.nd`` and
    ``mx.sym`` have) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super(HybridLambda, self).__init__(prefix=prefix)
        if isinstance(function, str):
            assert hasattr(_nd, function) and hasattr(_sym, function), \
                "Function name %s is not found in symbol/ndarray." % function
            op_name = function
            self._func = lambda F, *args: getattr(F, op_name)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return '{}({})'.format(self.__class__.__name__, self._func_name)
