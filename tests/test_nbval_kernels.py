"""tests/nbval_kernels.py: a kernel that dies while starting is started again, and one that
keeps dying is reported with what it printed."""

import nbval.kernel
import pytest

import nbval_kernels


def dying(times, message):
    """A stand-in for jupyter_client's start_new_kernel whose kernel dies ``times`` times,
    printing ``message`` to its stderr each time, then starts."""
    calls = []

    def start(startup_timeout, kernel_name, stderr, **kwargs):
        calls.append(kwargs)
        if len(calls) <= times:
            stderr.write(f"{message} {len(calls)}\n")
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"
    return start, calls


@pytest.fixture(autouse=True)
def quiet_devnull(tmp_path):
    return open(tmp_path / "devnull", "w")


def test_a_kernel_that_died_once_is_started_again(monkeypatch, quiet_devnull):
    start, calls = dying(1, "zmq.error.ZMQError: Address already in use")
    monkeypatch.setattr(nbval_kernels, "start_new_kernel", start)
    with pytest.warns(RuntimeWarning, match="Address already in use 1"):
        assert nbval_kernels.start_kernel_again_if_it_dies(kernel_name="python3", stderr=quiet_devnull,
                                                           cwd="exercises") == ("km", "kc")
    assert len(calls) == 2 and calls[1]["cwd"] == "exercises"
    assert quiet_devnull.closed                 # nbval's /dev/null is replaced, not leaked


def test_a_kernel_that_keeps_dying_fails_with_what_it_printed(monkeypatch, quiet_devnull):
    start, calls = dying(nbval_kernels.ATTEMPTS, "ImportError: no module named ipykernel")
    monkeypatch.setattr(nbval_kernels, "start_new_kernel", start)
    with pytest.warns(RuntimeWarning), pytest.raises(RuntimeError) as error:
        nbval_kernels.start_kernel_again_if_it_dies(kernel_name="python3", stderr=quiet_devnull, cwd="chapters")
    assert len(calls) == nbval_kernels.ATTEMPTS
    text = str(error.value)
    assert f"{nbval_kernels.ATTEMPTS} times" in text and "cwd chapters" in text
    for attempt in range(1, nbval_kernels.ATTEMPTS + 1):
        assert f"ImportError: no module named ipykernel {attempt}" in text


def test_a_real_kernel_starts_through_it(quiet_devnull):
    km, kc = nbval_kernels.start_kernel_again_if_it_dies(kernel_name=nbval.kernel.CURRENT_ENV_KERNEL_NAME,
                                                         stderr=quiet_devnull)
    try:
        printed = []
        reply = kc.execute_interactive("print(6 * 7)", timeout=60,
                                       output_hook=lambda msg: printed.append(msg["content"].get("text")))
        assert reply["content"]["status"] == "ok" and "42\n" in printed
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_each_notebooks_kernel_cpu_time_is_recorded_and_a_sleep_does_not_count(tmp_path):
    """``--notebook-cpu-times``: a JSON line per notebook with its kernel's CPU time; a notebook
    that computes for a second records at least that, one that sleeps for a second does not."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    import nbformat

    def notebook(name, source):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
        nbformat.write(nb, tmp_path / name)

    notebook("computes.ipynb", "import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass")
    notebook("sleeps.ipynb", "import time\ntime.sleep(1)")
    record = tmp_path / "cpu.jsonl"
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--nbval-lax", "--nbval-current-env",
                           "-p", "tests.nbval_kernels", f"--notebook-cpu-times={record}", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cpu = {r["notebook"]: r["cpu"] for r in map(json.loads, record.read_text().splitlines())}
    assert set(cpu) == {"computes.ipynb", "sleeps.ipynb"}
    assert cpu["computes.ipynb"] >= 1.0 and cpu["sleeps.ipynb"] < cpu["computes.ipynb"] - 0.5
