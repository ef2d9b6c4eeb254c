"""``import mxnet`` as mxc: what the ``mxnet`` package written by ``mxc-alias install`` runs.

That package's ``__init__`` is two lines calling :func:`populate` with its own namespace. The
``mxnet`` module then holds mxc's public names (and reaches every later or lazy one, ``mx.np``,
through a module ``__getattr__``), reports ``__version__ = "1.9.1"`` (the MXNet API level mxc
implements: client libraries such as GluonCV refuse older MXNets) while ``mxc.__version__``
stays mxc's own, and an import finder resolves every ``mxnet.A.B`` to the module ``mxc.A.B``
itself (one module under two names, so ``mxnet.nd.NDArray is mxc.nd.NDArray``).

When another ``mxnet`` package also lies on ``sys.path`` (a real MXNet installed after the
alias), the alias warns that it shadows it rather than hiding it.
"""
import importlib
import importlib.abc
import importlib.util
import os
import sys
import warnings

MXNET_API_VERSION = "1.9.1"
# First line of the alias package's __init__.py: how install/remove tell the alias from a
# real MXNet
MARKER = "# mxc-alias: this mxnet package is mxc under MXNet's name"


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported mxc module, and gives it back its own
    ``__spec__`` (the import system sets the alias's spec on the module it is given)."""

    def __init__(self, module):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        module.__spec__ = self._spec


class MxncFinder(importlib.abc.MetaPathFinder):
    """Resolves ``mxnet.A.B`` to mxc's module ``mxc.A.B``; a name mxc does not have is left to
    the other finders (and so fails as ``No module named 'mxnet.A.B'``)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("mxnet."):
            return None
        real = "mxc." + fullname[len("mxnet."):]
        module = sys.modules.get(real)
        if module is None:
            if importlib.util.find_spec(real) is None:
                return None
            module = importlib.import_module(real)   # its own import errors propagate
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=hasattr(module, "__path__"))


def is_alias_package(init_file):
    """Whether init_file (an ``mxnet/__init__.py``) is the alias this module writes."""
    try:
        with open(init_file, encoding="utf-8") as f:
            return f.readline().startswith(MARKER)
    except OSError:
        return False


def other_mxnet_packages(own_dir=None):
    """``mxnet`` package directories on sys.path that are not the alias (a real MXNet)."""
    found = []
    for entry in sys.path:
        pkg = os.path.join(entry or os.getcwd(), "mxnet")
        init = os.path.join(pkg, "__init__.py")
        if not os.path.isfile(init) or is_alias_package(init):
            continue
        if own_dir is not None and os.path.realpath(pkg) == os.path.realpath(own_dir):
            continue
        found.append(pkg)
    return found


def populate(namespace):
    """Make the module whose globals are ``namespace`` the ``mxnet`` face of mxc."""
    import mxc
    namespace.update({k: v for k, v in vars(mxc).items() if not k.startswith("_")})
    namespace["__version__"] = MXNET_API_VERSION

    def __getattr__(name):
        try:
            return getattr(mxc, name)
        except AttributeError:
            raise AttributeError(f"module 'mxnet' (the mxc alias) has no attribute "
                                 f"{name!r}") from None

    def __dir__():
        return sorted(set(namespace) | set(dir(mxc)))

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    if not any(isinstance(f, MxncFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MxncFinder())
    shadowed = other_mxnet_packages(os.path.dirname(namespace.get("__file__") or ""))
    if shadowed:
        warnings.warn(f"`import mxnet` gives mxc (the alias at "
                      f"{os.path.dirname(namespace.get('__file__') or '?')}), and this shadows "
                      f"another mxnet package at {', '.join(shadowed)}; `mxc-alias remove` "
                      "takes the alias away", RuntimeWarning, stacklevel=3)
