"""``mx.numpy_op_signature``: ``_get_builtin_op``, which maps an operator name of MXNet's numpy
front (``_np_<name>``, ``_np__random_<name>``, ``_np__linalg_<name>``, ``_npx_<name>``,
``_npx__image_<name>``, ``_npx__random_<name>``: MXNet's naming) to the function of ``mx.np`` /
``mx.npx`` (or its submodule) that exposes it, as MXNet's module of that name (its tests
import it)."""
from . import numpy as _mx_np
from . import numpy_extension as _mx_npx

# prefix -> (module, submodule names the operator names may continue with), as MXNet's base
_FRONTS = (("_npx_", _mx_npx, ("_image_", "_random_")),
           ("_np_", _mx_np, ("_random_", "_linalg_")))


def _get_builtin_op(op_name):
    """The front function of operator `op_name`; None for a name of neither front; ValueError
    naming what is missing when the front lacks it."""
    for prefix, root, submodules in _FRONTS:
        if not op_name.startswith(prefix):
            continue
        rest = op_name[len(prefix):]
        sub = next((s for s in submodules if rest.startswith(s)), "")
        module = root
        if sub:
            module = getattr(root, sub[1:-1], None)
            if module is None:
                raise ValueError(f"Cannot find submodule {sub[1:-1]} in module {root.__name__}")
        op = getattr(module, rest[len(sub):], None)
        if op is None:
            raise ValueError(f"Cannot find operator {rest[len(sub):]} in module "
                             f"{module.__name__}")
        return op
    return None
