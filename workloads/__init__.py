"""One module per workload; each declares itself to :data:`workbench.catalog.workloads.REGISTRY`.

Modules import only NumPy at the top; Numba, CuPy, pandas and cuDF are imported
inside the implementation that needs them, when a point runs.
"""
