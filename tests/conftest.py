"""Fixtures shared by the test files."""

import os
import signal

import pytest


@pytest.fixture
def ctrl_c_at(monkeypatch):
    """``real_step = ctrl_c_at(Training, n)``: from now on, a Ctrl-C (a real SIGINT) reaches
    the process once, as iteration ``n`` starts, and ``Training.step`` steps as before; returns
    the real ``step``. A training command finishes that step, saves and stops."""

    def patch(training, iteration):
        real_step, stops = training.step, [iteration]

        def step_or_ctrl_c(run):
            if run.iteration in stops:
                stops.clear()
                os.kill(os.getpid(), signal.SIGINT)
            return real_step(run)

        monkeypatch.setattr(training, "step", step_or_ctrl_c)
        return real_step

    return patch
