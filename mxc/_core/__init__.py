"""mxc's native core: storage pools, the dependency engine, array handles, the tape, CUDA."""
from types import SimpleNamespace as _NS

from .. import context as _context
from . import cuda as _cuda, storage as _storage

# Context (a layer below) asks these of the storage pools and the CUDA driver
_context.install_device(_NS(release_all=_storage.release_all, device_count=_cuda.device_count,
                            mem_info=_cuda.mem_info, ensure_device=_cuda.ensure_device))
