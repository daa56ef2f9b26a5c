"""Fixtures shared by the test files."""

import pytest


@pytest.fixture
def ctrl_c_at(monkeypatch):
    """``real_step = ctrl_c_at(Training, n)``: from now on, ``Training.step`` raises
    KeyboardInterrupt once, as iteration ``n`` starts (what Ctrl-C does to a training command),
    and steps as before otherwise; returns the real ``step``."""

    def patch(training, iteration):
        real_step, stops = training.step, [iteration]

        def step_or_ctrl_c(run):
            if run.iteration in stops:
                stops.clear()
                raise KeyboardInterrupt
            return real_step(run)

        monkeypatch.setattr(training, "step", step_or_ctrl_c)
        return real_step

    return patch
