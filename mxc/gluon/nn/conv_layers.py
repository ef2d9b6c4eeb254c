"""Convolution, transposed convolution, pooling and padding layers of Gluon (as
mxnet.gluon.nn.conv_layers of MXNet 1.9.1)."""

__all__ = ['Conv1D', 'Conv2D', 'Conv3D',
           'Conv1DTranspose', 'Conv2DTranspose', 'Conv3DTranspose',
           'MaxPool1D', 'MaxPool2D', 'MaxPool3D',
           'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D',
           'ReflectionPad2D']

from ..block import HybridBlock
from ...base import numeric_types
from .activations import Activation


def _as_tuple(value, n, what):
    """An int becomes an n-tuple; a list/tuple must have n entries."""
    if isinstance(value, numeric_types):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError('%s must be a number or a list of %d ints, got %r' % (what, n, value))
    return value


def _conv_weight_shape(transposed, layout, kernel, channels, in_channels, groups):
    """Weight shape of (De)Convolution for a layout, 0 where in_channels is still unknown.

    Convolution: (channels, in_channels/groups, *kernel) for NC..., (channels, *kernel,
    in_channels/groups) for N...C. Deconvolution swaps the roles: (in_channels,
    channels/groups, ...)."""
    if transposed:
        first, per_group = in_channels, channels // groups
    else:
        first, per_group = channels, in_channels // groups
    if layout.find('C') == 1:
        return (first, per_group) + tuple(kernel)
    return (first,) + tuple(kernel) + (per_group,)


class _Conv(HybridBlock):
    """Shared implementation of the convolution layers.

    ``weight`` and (with ``use_bias``) ``bias`` of shape ``(channels,)``; the forward runs the
    ``op_name`` operator ('Convolution' or 'Deconvolution') then the optional activation."""

    def __init__(self, channels, kernel_size, strides, padding, dilation,
                 groups, layout, in_channels=0, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 op_name='Convolution', adj=None, prefix=None, params=None):
        super(_Conv, self).__init__(prefix=prefix, params=params)
        nsp = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            strides = _as_tuple(strides, nsp, 'strides')
            padding = _as_tuple(padding, nsp, 'padding')
            dilation = _as_tuple(dilation, nsp, 'dilation')
            self._op_name = op_name
            self._kwargs = {
                'kernel': kernel_size, 'stride': strides, 'dilate': dilation,
                'pad': padding, 'num_filter': channels, 'num_group': groups,
                'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            if groups <= 0:
                raise ValueError('%s: groups must be positive, got %d'
                                 % (self.__class__.__name__, groups))
            transposed = 'Deconvolution' in op_name or 'deconvolution' in op_name
            if transposed and channels % groups != 0:
                raise ValueError('%s: channels (%d) must be a multiple of groups (%d)'
                                 % (self.__class__.__name__, channels, groups))
            if not transposed and in_channels % groups != 0:
                raise ValueError('%s: in_channels (%d) must be a multiple of groups (%d)'
                                 % (self.__class__.__name__, in_channels, groups))
            wshape = _conv_weight_shape(transposed, layout, kernel_size, channels,
                                        in_channels, groups)
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') \
                if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        return 'conv'

    def __repr__(self):
        kw = self._kwargs
        n = len(kw['kernel'])
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        if kw['pad'] != (0,) * n:
            s += ', padding={pad}'
        if kw['dilate'] != (1,) * n:
            s += ', dilation={dilate}'
        if hasattr(self, 'out_pad') and self.out_pad != (0,) * n:
            s += ', output_padding={}'.format(self.out_pad)
        if kw['num_group'] != 1:
            s += ', groups={num_group}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += ', {}'.format(self.act)
        s += ')'
        shape = self.weight.shape
        mapping = '{} -> {}'.format(shape[1] if shape[1] else None, shape[0])
        return s.format(name=self.__class__.__name__, mapping=mapping, **kw)


class Conv1D(_Conv):
    """1-D convolution over ``(N, C, W)`` input; weight ``(channels, in_channels/groups, k)``.
    Output width ``floor((W + 2*padding - dilation*(k-1) - 1) / stride) + 1``."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1,
                 groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        assert layout == 'NCW', "Only supports 'NCW' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,)
        assert len(kernel_size) == 1, "kernel_size must be a number or a list of 1 ints"
        op_name = kwargs.pop('op_name', 'Convolution')
        super(Conv1D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


class Conv2D(_Conv):
    """2-D convolution over ``(N, C, H, W)`` input ('NHWC' is accepted as in MXNet, where only
    GPU operators support it); weight ``(channels, in_channels/groups, kh, kw)``."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only supports 'NCHW' and 'NHWC' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,) * 2
        assert len(kernel_size) == 2, "kernel_size must be a number or a list of 2 ints"
        op_name = kwargs.pop('op_name', 'Convolution')
        super(Conv2D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


class Conv3D(_Conv):
    """3-D convolution over ``(N, C, D, H, W)`` input; weight
    ``(channels, in_channels/groups, kd, kh, kw)``."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), "Only supports 'NCDHW' and 'NDHWC' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,) * 3
        assert len(kernel_size) == 3, "kernel_size must be a number or a list of 3 ints"
        op_name = kwargs.pop('op_name', 'Convolution')
        super(Conv3D, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer, bias_initializer,
            op_name, **kwargs)


class Conv1DTranspose(_Conv):
    """Transposed 1-D convolution; weight ``(in_channels, channels/groups, k)``. Output width
    ``(W-1)*stride - 2*padding + dilation*(k-1) + 1 + output_padding``."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        assert layout == 'NCW', "Only supports 'NCW' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,)
        if isinstance(output_padding, numeric_types):
            output_padding = (output_padding,)
        assert len(kernel_size) == 1, "kernel_size must be a number or a list of 1 ints"
        assert len(output_padding) == 1, "output_padding must be a number or a list of 1 ints"
        op_name = kwargs.pop('op_name', 'Deconvolution')
        super(Conv1DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution; weight ``(in_channels, channels/groups, kh, kw)``."""

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only supports 'NCHW' and 'NHWC' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,) * 2
        if isinstance(output_padding, numeric_types):
            output_padding = (output_padding,) * 2
        assert len(kernel_size) == 2, "kernel_size must be a number or a list of 2 ints"
        assert len(output_padding) == 2, "output_padding must be a number or a list of 2 ints"
        op_name = kwargs.pop('op_name', 'Deconvolution')
        super(Conv2DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv3DTranspose(_Conv):
    """Transposed 3-D convolution; weight ``(in_channels, channels/groups, kd, kh, kw)``."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), "Only supports 'NCDHW' and 'NDHWC' layout for now"
        if isinstance(kernel_size, numeric_types):
            kernel_size = (kernel_size,) * 3
        if isinstance(output_padding, numeric_types):
            output_padding = (output_padding,) * 3
        assert len(kernel_size) == 3, "kernel_size must be a number or a list of 3 ints"
        assert len(output_padding) == 3, "output_padding must be a number or a list of 3 ints"
        op_name = kwargs.pop('op_name', 'Deconvolution')
        super(Conv3DTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout,
            in_channels, activation, use_bias, weight_initializer,
            bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class _Pooling(HybridBlock):
    """Shared implementation of the pooling layers (one ``Pooling`` operator)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool,
                 pool_type, layout, count_include_pad=None, **kwargs):
        super(_Pooling, self).__init__(**kwargs)
        n = len(pool_size)
        strides = pool_size if strides is None else _as_tuple(strides, n, 'strides')
        padding = _as_tuple(padding, n, 'padding')
        self._kwargs = {
            'kernel': pool_size, 'stride': strides, 'pad': padding,
            'global_pool': global_pool, 'pool_type': pool_type, 'layout': layout,
            'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        s = ('{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}'
             ', global_pool={global_pool}, pool_type={pool_type}, layout={layout})')
        return s.format(name=self.__class__.__name__,
                        ceil_mode=self._kwargs['pooling_convention'] == 'full',
                        **self._kwargs)


def _pool_size(pool_size, n):
    if isinstance(pool_size, numeric_types):
        pool_size = (pool_size,) * n
    assert len(pool_size) == n, "pool_size must be a number or a list of %d ints" % n
    return tuple(pool_size)


class MaxPool1D(_Pooling):
    """Max pooling over W of ``(N, C, W)`` ('NCW' or 'NWC'); ``strides`` default to
    ``pool_size``; ``ceil_mode`` rounds the output size up."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW',
                 ceil_mode=False, **kwargs):
        assert layout in ('NCW', 'NWC'), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(MaxPool1D, self).__init__(
            _pool_size(pool_size, 1), strides, padding, ceil_mode, False, 'max', layout,
            **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over H, W ('NCHW' or 'NHWC')."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(MaxPool2D, self).__init__(
            _pool_size(pool_size, 2), strides, padding, ceil_mode, False, 'max', layout,
            **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over D, H, W ('NCDHW' or 'NDHWC')."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCDHW', **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(MaxPool3D, self).__init__(
            _pool_size(pool_size, 3), strides, padding, ceil_mode, False, 'max', layout,
            **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over W; ``count_include_pad=False`` leaves padding out of the
    divisor."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW',
                 ceil_mode=False, count_include_pad=True, **kwargs):
        assert layout in ('NCW', 'NWC'), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(AvgPool1D, self).__init__(
            _pool_size(pool_size, 1), strides, padding, ceil_mode, False, 'avg', layout,
            count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over H, W."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCHW', count_include_pad=True, **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(AvgPool2D, self).__init__(
            _pool_size(pool_size, 2), strides, padding, ceil_mode, False, 'avg', layout,
            count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over D, H, W."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0,
                 ceil_mode=False, layout='NCDHW', count_include_pad=True, **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(AvgPool3D, self).__init__(
            _pool_size(pool_size, 3), strides, padding, ceil_mode, False, 'avg', layout,
            count_include_pad, **kwargs)


class GlobalMaxPool1D(_Pooling):
    """Max over the whole W axis: ``(N, C, W) -> (N, C, 1)``."""

    def __init__(self, layout='NCW', **kwargs):
        assert layout in ('NCW', 'NWC'), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(GlobalMaxPool1D, self).__init__((1,), None, 0, True, True, 'max', layout,
                                              **kwargs)


class GlobalMaxPool2D(_Pooling):
    """Max over H and W: ``(N, C, H, W) -> (N, C, 1, 1)``."""

    def __init__(self, layout='NCHW', **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(GlobalMaxPool2D, self).__init__((1, 1), None, 0, True, True, 'max', layout,
                                              **kwargs)


class GlobalMaxPool3D(_Pooling):
    """Max over D, H and W: ``(N, C, D, H, W) -> (N, C, 1, 1, 1)``."""

    def __init__(self, layout='NCDHW', **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(GlobalMaxPool3D, self).__init__((1, 1, 1), None, 0, True, True, 'max', layout,
                                              **kwargs)


class GlobalAvgPool1D(_Pooling):
    """Mean over the whole W axis: ``(N, C, W) -> (N, C, 1)``."""

    def __init__(self, layout='NCW', **kwargs):
        assert layout in ('NCW', 'NWC'), "Only NCW and NWC layouts are valid for 1D Pooling"
        super(GlobalAvgPool1D, self).__init__((1,), None, 0, True, True, 'avg', layout,
                                              **kwargs)


class GlobalAvgPool2D(_Pooling):
    """Mean over H and W: ``(N, C, H, W) -> (N, C, 1, 1)``."""

    def __init__(self, layout='NCHW', **kwargs):
        assert layout in ('NCHW', 'NHWC'), "Only NCHW and NHWC layouts are valid for 2D Pooling"
        super(GlobalAvgPool2D, self).__init__((1, 1), None, 0, True, True, 'avg', layout,
                                              **kwargs)


class GlobalAvgPool3D(_Pooling):
    """Mean over D, H and W: ``(N, C, D, H, W) -> (N, C, 1, 1, 1)``."""

    def __init__(self, layout='NCDHW', **kwargs):
        assert layout in ('NCDHW', 'NDHWC'), \
            "Only NCDHW and NDHWC layouts are valid for 3D Pooling"
        super(GlobalAvgPool3D, self).__init__((1, 1, 1), None, 0, True, True, 'avg', layout,
                                              **kwargs)


class ReflectionPad2D(HybridBlock):
    """Pads H and W of ``(N, C, H, W)`` by reflecting the border: ``padding`` is an int (the
    same on all four sides) or MXNet's 8-entry ``pad_width``."""

    def __init__(self, padding=0, **kwargs):
        super(ReflectionPad2D, self).__init__(**kwargs)
        if isinstance(padding, numeric_types):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)
