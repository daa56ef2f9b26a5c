"""Limits that hold across all of a submission's processes: a control group per submission.

``setrlimit`` (``sandbox.Limits.apply``) limits each process on its own: three processes of
3 GB each hold 9 GB, and 24 spinning processes take 24 shares of the machine's CPUs, slowing
every other submission graded at the same time. A control group (Linux cgroups, v1 as mounted
under ``/sys/fs/cgroup/<controller>``; it needs root) counts all the processes of one
submission together:

* ``cpu``: at most one CPU's worth of time (``cpu.cfs_quota_us``) for the whole submission,
  however many processes it starts, so a hog slows only itself;
* ``memory``: ``Limits.memory_mb`` for all its processes together (and the files they write
  in their memory-backed space);
* ``pids``: ``Limits.processes`` processes and threads in all.

``Group.create`` returns None where no control group can be made (not root, no cgroup v1
controllers, a container that forbids it; ``available``): the grader then says so in its
summary and its JSON report, and each process keeps only its own limits.
"""

import os
import time
from pathlib import Path

from .sandbox import RUN

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("cpu", "memory", "pids")
PERIOD_US = 100_000                 # the CPU quota's period; the quota is one such period: one CPU


def available():
    """Whether control groups can be made here (root, and the controllers mounted)."""
    return os.geteuid() == 0 and all((ROOT / c / "cgroup.procs").is_file() for c in CONTROLLERS)


class Group:
    """One submission's control group, in every controller of ``CONTROLLERS``."""

    def __init__(self, folders):
        self.folders = folders

    @classmethod
    def create(cls, name, limits):
        """A new group ``name`` with ``limits`` (``sandbox.Limits``), or None if none can be made."""
        if not available():
            return None
        folders = {c: ROOT / c / name for c in CONTROLLERS}
        try:
            for folder in folders.values():
                folder.mkdir(exist_ok=True)
            settings = {("cpu", "cpu.cfs_period_us"): PERIOD_US, ("cpu", "cpu.cfs_quota_us"): PERIOD_US,
                        ("memory", "memory.limit_in_bytes"): limits.memory_mb * 1024 * 1024,
                        ("pids", "pids.max"): limits.processes}
            for (controller, setting), value in settings.items():
                (folders[controller] / setting).write_text(str(value))
        except OSError:
            cls(folders).remove()
            return None
        return cls(folders)

    def join(self):
        """Move the calling process into the group (a child, before it runs the command)."""
        for folder in self.folders.values():
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self, patience=5.0):
        """Remove the group, once its processes are gone (their sandbox ended them)."""
        deadline = time.monotonic() + patience
        for folder in self.folders.values():
            while folder.exists():
                try:
                    folder.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.05)


def name_of(slot):
    """The group of sandbox ``slot`` of this grader process (named by its block of users, drawn
    at random: another grader, PID 1 of another container, has another)."""
    return f"minigraph-grade-{RUN}-{slot}"
