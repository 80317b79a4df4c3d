"""Two backends in eight lines (docs/API.md): NumPy's expression against the same sum through BLAS."""
import numpy as np
from workbench.api import Workload, backend, register

backend("numpy-blas", like="numpy")
axpy = register(Workload("axpy", make_inputs=lambda n, dtype, variant, rng: rng.random((2, n)).astype(dtype)))
axpy.kernel("numpy")(lambda xy: 2 * xy[0] + xy[1])
axpy.kernel("numpy-blas")(lambda xy: np.array([2, 1], xy.dtype) @ xy)
