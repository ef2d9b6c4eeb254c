"""Concurrent/HybridConcurrent (every child sees the same input, outputs concatenated),
Identity, SparseEmbedding (row_sparse weight and gradient, for very large vocabularies),
PixelShuffle1D/2D/3D (channels folded into space: (N, C*f, W) -> (N, C, W*f)),
and SyncBatchNorm (batch statistics over the whole batch split across ``num_devices`` devices),
as MXNet 1.9.1's gluon.contrib.nn has them."""
import warnings

from .... import context, ndarray as nd
from ... import nn
from ...block import Block, HybridBlock

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "PixelShuffle1D",
           "PixelShuffle2D", "PixelShuffle3D", "SyncBatchNorm"]


class Concurrent(nn.Sequential):
    """Runs every child on the same input and concatenates the outputs along `axis`."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(nn.HybridSequential):
    """Concurrent for HybridBlocks: hybridizable."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input (a pass-through branch of a Concurrent)."""

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding whose weight and weight gradient are RowSparseNDArrays: each forward pulls only
    the rows that `x` names (``Parameter.row_sparse_data``), so a trainer with a sparse
    optimizer (SGD, AdaGrad, Adam: lazy updates) touches only those rows.

    Parameters
    ----------
    input_dim : int
        Vocabulary size (largest index + 1).
    output_dim : int
    dtype : str or numpy dtype, default 'float32'
    weight_initializer : Initializer, optional
    """

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype='row_sparse', stype='row_sparse')

    def forward(self, x):
        return nd.Embedding(x, self.weight.row_sparse_data(x), name='fwd', **self._kwargs)

    def __repr__(self):
        return '{}({} -> {}, {})'.format(self.__class__.__name__, self._kwargs['input_dim'],
                                         self._kwargs['output_dim'], self._kwargs['dtype'])


def _factors(value, n, name):
    try:
        factors = (int(value),) * n if isinstance(value, int) else tuple(int(f) for f in value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: factor must be an int or {n} ints, got {value!r}") from None
    if len(factors) != n or any(f < 1 for f in factors):
        raise ValueError(f"{name}: factor must be {n} positive ints, got {value!r}")
    return factors


class PixelShuffle1D(HybridBlock):
    """(N, C*f, W) -> (N, C, W*f): out[n, c, w*f + i] = x[n, c*f + i, w]."""

    def __init__(self, factor):
        super().__init__()
        self._factor = _factors(factor, 1, "PixelShuffle1D")[0]

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))          # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))             # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))              # (N, C, W*f)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """(N, C*f1*f2, H, W) -> (N, C, H*f1, W*f2)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2, "PixelShuffle2D")

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))     # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))       # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))           # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))              # (N, C, H*f1, W*f2)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """(N, C*f1*f2*f3, D, H, W) -> (N, C, D*f1, H*f2, W*f3)."""

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3, "PixelShuffle3D")

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))   # (N, C, f1*f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2 * f3, 0, 0, 0))     # (N, C, f1, f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f2, f3, 0, 0, 0))       # (N, C, f1, f2, f3, D, H, W)
        x = F.transpose(x, (0, 1, 5, 2, 6, 3, 7, 4))           # (N, C, D, f1, H, f2, W, f3)
        return F.reshape(x, (0, 0, -3, -3, -3))                # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return f"{self.__class__.__name__}({self._factors})"


class SyncBatchNorm(nn.BatchNorm):
    """BatchNorm whose batch statistics cover the whole mini-batch when it is split over
    ``num_devices`` devices (the ``_contrib_SyncBatchNorm`` operator; the devices' parts meet
    under this block's prefix as key). On one device it is BatchNorm. ``num_devices`` defaults
    to the number of GPUs (at least 1), with a warning, as in MXNet."""

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer='zeros',
                 gamma_initializer='ones', running_mean_initializer='zeros',
                 running_variance_initializer='ones', **kwargs):
        super(SyncBatchNorm, self).__init__(
            axis=1, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
            use_global_stats=use_global_stats, beta_initializer=beta_initializer,
            gamma_initializer=gamma_initializer,
            running_mean_initializer=running_mean_initializer,
            running_variance_initializer=running_variance_initializer,
            in_channels=in_channels, **kwargs)
        if num_devices is None:
            warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                          "set num_devices", UserWarning)
            num_devices = max(1, context.num_gpus())
        self._kwargs = {'eps': epsilon, 'momentum': momentum, 'fix_gamma': not scale,
                        'use_global_stats': use_global_stats, 'ndev': num_devices,
                        'key': self.prefix}

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var, name='fwd',
                                       **self._kwargs)
