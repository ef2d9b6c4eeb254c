"""``mxc-alias install|remove|status``: make ``import mxnet`` resolve to mxc, or undo it.

``install`` writes a two-line ``mxnet`` package into site-packages (this Python's purelib, or
``--target DIR``) whose ``__init__`` hands its namespace to :mod:`mxc.mxnet_alias`. It refuses
when a real MXNet is importable or already in the target directory: the alias never hides one.
``remove`` deletes only a package the alias wrote. ``status`` says what ``import mxnet`` gives.
"""
import argparse
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile

from ..mxnet_alias import MARKER, is_alias_package, other_mxnet_packages

SHIM = MARKER + """ (written by `mxc-alias install`; `mxc-alias remove` deletes it)
from mxc.mxnet_alias import populate as _populate
_populate(globals())
"""


class AliasError(Exception):
    """install/remove refused; the message says why."""


def _default_target():
    return sysconfig.get_paths()["purelib"]


def _importable_mxnet():
    """The directory of the ``mxnet`` package this Python imports, or None."""
    spec = importlib.util.find_spec("mxnet") if "mxnet" not in sys.modules else \
        sys.modules["mxnet"].__spec__
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def install(target=None):
    """Write the alias package into target (default: site-packages); returns its directory."""
    target = os.path.abspath(target or _default_target())
    pkg = os.path.join(target, "mxnet")
    if os.path.exists(pkg):
        if is_alias_package(os.path.join(pkg, "__init__.py")):
            _write_shim(pkg)            # refresh: same two lines, from this mxc
            return pkg
        raise AliasError(f"{pkg} exists and is not the mxc alias (a real MXNet?): not touched. "
                         "Uninstall it first (pip uninstall mxnet) if mxc should answer "
                         "`import mxnet`.")
    real = [p for p in other_mxnet_packages() if os.path.realpath(p) != os.path.realpath(pkg)]
    if real:
        raise AliasError(f"a real MXNet is installed ({', '.join(real)}): the alias would shadow "
                         "it or be shadowed by it. Uninstall it first (pip uninstall mxnet) if "
                         "mxc should answer `import mxnet`.")
    os.makedirs(target, exist_ok=True)
    # written beside the target under a temporary name, then renamed into place
    tmp = tempfile.mkdtemp(prefix=".mxnet-alias-", dir=target)
    try:
        _write_shim(tmp)
        os.rename(tmp, pkg)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return pkg


def _write_shim(pkg):
    init = os.path.join(pkg, "__init__.py")
    with open(init + ".tmp", "w", encoding="utf-8") as f:
        f.write(SHIM)
    os.replace(init + ".tmp", init)


def remove(target=None):
    """Delete the alias package from target (default: site-packages); returns its directory."""
    target = os.path.abspath(target or _default_target())
    pkg = os.path.join(target, "mxnet")
    if not os.path.exists(pkg):
        raise AliasError(f"no mxc alias in {target} (nothing named mxnet there)")
    if not is_alias_package(os.path.join(pkg, "__init__.py")):
        raise AliasError(f"{pkg} is not the mxc alias (a real MXNet?): not removed")
    extra = set(os.listdir(pkg)) - {"__init__.py", "__pycache__"}
    if extra:
        raise AliasError(f"{pkg} holds files the alias did not write ({', '.join(sorted(extra))}):"
                         " not removed")
    shutil.rmtree(pkg)
    return pkg


def status():
    """One line: what ``import mxnet`` gives this Python."""
    where = _importable_mxnet()
    if where is None:
        return "import mxnet: no mxnet package (`mxc-alias install` makes it mxc)"
    if is_alias_package(os.path.join(where, "__init__.py")):
        return f"import mxnet: mxc, through the alias at {where}"
    return f"import mxnet: a real MXNet at {where}"


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="mxc-alias", description="Make `import mxnet` resolve to mxc (install), undo it "
        "(remove), or show what `import mxnet` gives (status).")
    parser.add_argument("action", choices=["install", "remove", "status"])
    parser.add_argument("--target", help="directory the mxnet package goes to (default: this "
                        f"Python's site-packages, {_default_target()})")
    args = parser.parse_args(argv)
    try:
        if args.action == "install":
            print(f"installed: `import mxnet` now gives mxc ({install(args.target)})")
        elif args.action == "remove":
            print(f"removed the mxc alias {remove(args.target)}")
        else:
            print(status())
    except AliasError as err:
        print(f"mxc-alias: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
