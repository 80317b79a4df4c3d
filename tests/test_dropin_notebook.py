"""The drop-ins from a real Jupyter kernel (issue 36): a lambda, a function defined in a cell and a
pandas function travel to the engine from a notebook run by nbclient, as a user's notebook runs."""
from __future__ import annotations

import json

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (pip install 'gpu-workbench[test]')")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install 'gpu-workbench[test]')")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install 'gpu-workbench[test]')")

CELLS = [
    "import json\nimport numpy as np\nimport pandas as pd\nimport workbench",
    "def smooth(inputs):\n    (x,) = inputs\n    return 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:]",
    "def means(inputs):\n    (frame,) = inputs\n    return frame.groupby('key')['value'].mean().to_numpy()",
    "vector = lambda n: (np.random.default_rng(0).random(n),)\n"
    "table = lambda n: (pd.DataFrame({'key': np.arange(n) % 8, 'value': np.random.default_rng(0).random(n)}),)\n"
    "options = dict(sizes=[256], dtype='float64', progress=False, budget=0.02)",
    "found = {}\n"
    "for name, df in (('cell', workbench.try_on_gpu(smooth, setup=vector, **options)),\n"
    "                 ('lambda', workbench.try_on_gpu(lambda inputs: 2.0 * inputs[0] + 1.0, setup=vector, **options)),\n"
    "                 ('pandas', workbench.sweep('means', setup=table, kernels={'numpy': means}, drop_in=True, **options))):\n"
    "    found[name] = df[['backend', 'status', 'answer']].to_dict('records')\n"
    "print('FOUND' + json.dumps(found))",
]


def test_the_drop_ins_run_from_a_notebook_with_a_cells_function_a_lambda_and_a_pandas_function(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")          # Jupyter's own folders, without its warning
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    found = json.loads(text[text.index("FOUND") + 5:].splitlines()[0])
    for name in ("cell", "lambda"):
        status = {r["backend"]: r["status"] for r in found[name]}
        assert status["numpy"] == "ok" and status["numba.njit (drop-in)"] == "ok", found[name]
    cell = {r["backend"]: r["answer"] for r in found["cell"]}
    assert cell["numba.njit (drop-in)"].startswith("smooth runs unchanged as numba.njit (drop-in): ")
    pandas_ = {r["backend"]: r for r in found["pandas"]}
    assert pandas_["numpy"]["status"] == "ok"
    assert pandas_["numba.njit (drop-in)"]["status"] == "error"
    assert "does not compile under Numba: non-precise type pyobject" in pandas_["numba.njit (drop-in)"]["answer"]
