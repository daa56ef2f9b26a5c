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
