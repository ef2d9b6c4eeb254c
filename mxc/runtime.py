"""``mx.runtime``: what this build of mxc can do, under MXNet's feature names."""
import collections

__all__ = ["Feature", "Features", "feature_list"]


class Feature:
    """A named capability and whether this build has it."""

    __slots__ = ("name", "enabled")

    def __init__(self, name, enabled):
        self.name, self.enabled = name, bool(enabled)

    def __repr__(self):
        return ("✔ " if self.enabled else "✖ ") + self.name



def feature_list():
    """Every feature MXNet 1.9.1 lists, with this build's answer."""
    have = {"CPU_SSE": True, "CPU_SSE2": True, "CPU_SSE3": True, "CPU_SSE4_1": True,
            "CPU_SSE4_2": True, "CPU_AVX": True, "CPU_AVX2": True, "F16C": True, "BLAS_OPEN": True,
            "LAPACK": True, "OPENMP": True, "SIGNAL_HANDLER": True, "INT64_TENSOR_SIZE": True,
            "PROFILER": True}
    names = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
             "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
             "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
             "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
             "SIGNAL_HANDLER", "DEBUG", "TVM_OP")
    return [Feature(n, have.get(n, False)) for n in names]


class Features(collections.OrderedDict):
    """Name -> Feature for this build (one instance, as MXNet)."""

    instance = None

    def __new__(cls):
        if cls.instance is None:
            cls.instance = super().__new__(cls)
            collections.OrderedDict.__init__(cls.instance, [(f.name, f) for f in feature_list()])
        return cls.instance

    def __init__(self):
        pass

    def __repr__(self):
        return str(list(self.values()))

    def is_enabled(self, feature_name):
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature '{name}' is unknown, known features are: {list(self.keys())}")
        return self[name].enabled
