"""spmv: the matrix is the finite-volume Laplacian, of exactly N rows, and its counts are its own."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from workbench.measure import protocol
from workbench.measure.engine import SweepSpec, run_sweep
from workloads import spmv


def kronecker_laplacian(shape):
    """The same operator built another way: a Kronecker sum of 1-D Dirichlet Laplacians."""
    total = None
    for axis, m in enumerate(shape):
        one_d = sparse.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
        factors = [one_d if k == axis else sparse.identity(mm) for k, mm in enumerate(shape)]
        term = factors[0]
        for f in factors[1:]:
            term = sparse.kron(term, f)
        total = term if total is None else total + term
    a = sparse.csr_array(total)
    a.sort_indices()
    return a


@pytest.mark.parametrize("n,dims,shape", [
    (1024, 2, (32, 32)), (2048, 2, (32, 64)), (1000, 3, (10, 10, 10)), (2 ** 11, 3, (8, 16, 16)),
    (360, 3, (6, 6, 10)), (97, 2, (1, 97)), (1, 3, (1, 1, 1)),
])
def test_the_grid_has_exactly_n_cells_and_is_nearly_square(n, dims, shape):
    assert spmv.grid_shape(n, dims) == shape
    assert math.prod(shape) == n


@pytest.mark.parametrize("n,dims", [(100, 2), (2048, 2), (97, 2), (100, 3), (1000, 3), (360, 3), (2, 3)])
def test_the_matrix_is_the_laplacian(n, dims):
    data, indices, indptr = spmv.laplacian_csr(n, dims, np.dtype(np.float64))
    want = kronecker_laplacian(spmv.grid_shape(n, dims))
    assert indices.dtype == indptr.dtype == np.int32
    assert np.array_equal(indptr, want.indptr)
    assert np.array_equal(indices, want.indices)              # columns sorted within each row
    assert np.array_equal(data, want.data)
    assert data.size == spmv.nonzeros(spmv.grid_shape(n, dims))


@pytest.mark.parametrize("variant,per_row", [("2d", 5), ("3d", 7)])
def test_counts_are_those_of_the_matrix_built(variant, per_row):
    n = 4096
    data, indices, indptr, x = spmv._inputs(n, np.dtype(np.float32), variant, np.random.default_rng(0))
    flops, moved = spmv.W.flops_and_bytes(n, 4, variant)
    assert flops == 2 * data.size
    assert moved == data.nbytes + indices.nbytes + indptr.nbytes + 2 * x.nbytes
    assert (per_row - 1) * n < data.size < per_row * n       # walls have fewer neighbours


def test_the_engine_reports_each_variant_with_its_own_bytes():
    spec = SweepSpec("spmv", ("scipy",), (4096,), "float64", min_repeats=2, budget_s=0.0)
    rows = {r["variant"]: r for r in protocol.rows(run_sweep(spec))}
    assert set(rows) == {"2d", "3d"} and all(r["status"] == "ok" for r in rows.values())
    for variant, row in rows.items():
        moved = spmv.W.flops_and_bytes(4096, 8, variant)[1]
        assert row["gbps"] * row["compute_median_s"] * 1e9 == pytest.approx(moved)
