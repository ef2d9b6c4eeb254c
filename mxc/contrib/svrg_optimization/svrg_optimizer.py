"""The optimizers behind SVRGModule: the kvstore keys ``<param>_full`` carry full gradients and
are assigned, the others are updated by the wrapped ("default") optimizer."""
from ... import optimizer as opt

# the keyword arguments the Optimizer base class takes (the rest belong to the default optimizer)
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Sets the weight to the pushed value (the kvstore then holds the summed full gradient)."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Dispatches by parameter name: names containing "full" to the assignment, others to
    `default_optimizer` (a name, built with all of `kwargs`, or an Optimizer)."""

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The subset of `kwargs` the Optimizer base class accepts."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index):
        """The parameter name of `index` (an index, or already a name)."""
        if index in self.idx2name.values():
            return index
        return self.idx2name[index]

    def _target(self, index):
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def update(self, index, weight, grad, state):
        self._target(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        return self._target(index).create_state(index, weight)
