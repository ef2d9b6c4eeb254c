"""Operator definitions: importing this package registers every family.

Every module here other than the registry's own is a family file; adding an operator family is
adding a file (its kernels at the same stem under ops/cpu/)."""
import importlib as _importlib
import pkgutil as _pkgutil

_CORE = ("registry", "params")
# the first families in a fixed order (later ones build on their helpers); then the rest by name
_FIRST = ("elemwise", "reduce", "shape", "indexing", "init")

for _name in _FIRST + tuple(sorted(m.name for m in _pkgutil.iter_modules(__path__)
                                   if m.name not in _FIRST + _CORE and not m.name.startswith("_")
                                   and not m.ispkg)):
    _importlib.import_module(f"{__name__}.{_name}")

# GPU arrays on the C fast path (mxc._core.handle): its plans come from the GPU front end
_importlib.import_module(f"{__name__}._gpu").install()
# fusion of pointwise chains in bulk operations: which kernels are pointwise
_importlib.import_module(f"{__name__}._fusion").install()
