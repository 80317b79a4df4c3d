"""A lab's scheduler that only holders of its certificates can reach: ``dask scheduler`` and
``dask worker`` started with TLS as processes (docs/CLUSTER.md), and the command line pointed at it
with ``--cluster tls://... --tls-ca-file --tls-cert --tls-key``. Certificates are made here with
the ``openssl`` command, a CA of the lab's and one of a stranger's."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the cluster extra is not installed (pip install -e '.[cluster]')")
if shutil.which("openssl") is None:
    pytest.skip("the openssl command makes this test's certificates, and it is not installed", allow_module_level=True)

from test_cluster import DASK, READY_S, ROOT, cli, free_port  # noqa: E402

from workbench.results.files import open_results  # noqa: E402


def _ssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(folder: Path, name: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    _ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
         "-subj", f"/CN={name}", cwd=folder)
    return folder / "ca.pem", folder / "ca.key"


def make_cert(folder: Path, ca: tuple[Path, Path], name: str) -> tuple[Path, Path]:
    """A key and a certificate for 127.0.0.1 signed by ``ca``: what the lab gives a member."""
    (folder / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
         "-subj", f"/CN={name}", cwd=folder)
    _ssl("x509", "-req", "-in", f"{name}.csr", "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
         "-out", f"{name}.pem", "-days", "2", "-extfile", "san.cnf", cwd=folder)
    return folder / f"{name}.pem", folder / f"{name}.key"


@pytest.fixture(scope="module")
def tls_lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("tls")
    ca = make_ca(root / "lab", "lab-ca")
    server = make_cert(root / "lab", ca, "node")
    member = make_cert(root / "lab", ca, "member")
    stranger_ca = make_ca(root / "stranger", "stranger-ca")
    stranger = make_cert(root / "stranger", stranger_ca, "stranger")
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    files = ["--tls-ca-file", str(ca[0]), "--tls-cert", str(server[0]), "--tls-key", str(server[1])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "GPU_WORKBENCH_LOCK_DIR": str(root / "locks")}
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=str(ROOT))
    procs = [subprocess.Popen([DASK, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard", *files], **quiet)]
    procs.append(subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--host", "127.0.0.1",
                                   "--no-dashboard", *files], **quiet))
    try:
        _wait(address, ca[0], member, procs[0])
        yield dict(address=address, ca=ca[0], member=member, stranger=stranger, stranger_ca=stranger_ca[0])
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def _wait(address: str, ca: Path, member: tuple[Path, Path], scheduler) -> None:
    """Until the scheduler answers a member and has its worker: polled, no fixed sleep."""
    from distributed import Client
    from distributed.security import Security
    sec = Security(tls_ca_file=str(ca), tls_client_cert=str(member[0]), tls_client_key=str(member[1]),
                   require_encryption=True)
    deadline = time.monotonic() + READY_S
    while True:
        try:
            with Client(address, security=sec, timeout=2, set_as_default=False) as client:
                client.wait_for_workers(1, timeout=max(1.0, deadline - time.monotonic()))
                return
        except (OSError, TimeoutError):
            if time.monotonic() > deadline or scheduler.poll() is not None:
                raise


def test_a_member_with_the_labs_certificates_runs_a_sweep_over_tls(tls_lab, tmp_path):
    out = tmp_path / "r.json"
    run = cli("run", "-w", "source_terms", "-b", "numpy", "-s", "1024,4096", "--budget", "0.02", "-q",
              "--cluster", tls_lab["address"], "--tls-ca-file", str(tls_lab["ca"]),
              "--tls-cert", str(tls_lab["member"][0]), "--tls-key", str(tls_lab["member"][1]), "--out", str(out))
    assert run.returncode == 0, run.stderr
    frame = open_results(out).frame
    assert (frame["status"] == "ok").all() and len(frame) == 2
    assert frame["worker"].str.startswith("tls://127.0.0.1:").all(), frame["worker"].tolist()


def test_a_certificate_of_another_ca_is_refused_in_one_line(tls_lab):
    run = cli("run", "-w", "source_terms", "-b", "numpy", "-s", "1024", "--budget", "0.02", "-q",
              "--cluster", tls_lab["address"], "--tls-ca-file", str(tls_lab["stranger_ca"]),
              "--tls-cert", str(tls_lab["stranger"][0]), "--tls-key", str(tls_lab["stranger"][1]),
              "--cluster-timeout", "5", timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and tls_lab["address"] in lines[0], run.stderr


def test_plain_tcp_to_a_tls_scheduler_is_refused_in_one_line(tls_lab):
    plain = tls_lab["address"].replace("tls://", "tcp://")
    run = cli("run", "-w", "source_terms", "-b", "numpy", "-s", "1024", "--budget", "0.02", "-q",
              "--cluster", plain, "--cluster-timeout", "5", timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
