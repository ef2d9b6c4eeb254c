"""``mx.nd.image``: the ``_image_<name>`` operators as ``<name>`` (``mx.nd.image.to_tensor``), as
MXNet's generated image namespace."""
from ._prefixed import populate

populate(globals(), "_image_")
