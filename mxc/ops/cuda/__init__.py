"""CUDA C kernels of mxc's GPU operators, compiled at run time through CuPy (see loader.py);
launch specs per operator in specs.py."""
