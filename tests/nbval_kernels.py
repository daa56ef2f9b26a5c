"""A pytest plugin for the notebook runs of `make test`: a kernel that dies while it starts is
started again, and if it keeps dying, the error says why.

nbval starts one kernel per notebook and sends the kernel's stderr to /dev/null, so a kernel
that dies before it answers leaves only "Kernel died before replying to kernel_info", and
every cell of that notebook fails. With two xdist workers starting kernels at once, this
happens now and then for reasons outside the notebook (a port picked as free and taken before
the kernel binds it is the known one). Nothing of the notebook has run at that point, so
starting the kernel again hides no result of a test.

This plugin keeps each kernel's stderr in a temporary file, starts a kernel that died up to
``ATTEMPTS`` times, reports each death with the last lines the kernel printed, and raises
with them if every attempt died. Loaded with ``-p tests.nbval_kernels`` (the Makefile's
NBVAL flags).

With ``--notebook-cpu-times FILE`` it also appends, as each notebook ends, a JSON line
``{"notebook": "chapters/04_learning.ipynb", "cpu": 7.9}`` to FILE: the CPU time its kernel
(and any process the kernel started) used. ``tools/notebook_times.py`` holds those against each
chapter's budget: CPU time, unlike the time on the wall, does not grow when other programs keep
the machine busy.
"""

import json
import tempfile
import warnings

import nbval.kernel
import nbval.plugin

from minigraph.grading.batch.runner import cpu_seconds

start_new_kernel = nbval.kernel.start_new_kernel      # nbval's own (it knows the current-env kernel)

ATTEMPTS = 3


def last_lines(stream, count=20):
    """The last ``count`` lines written to ``stream`` (an open temporary file)."""
    stream.flush()
    stream.seek(0)
    return "".join(stream.readlines()[-count:]).rstrip() or "(it printed nothing)"


def start_kernel_again_if_it_dies(startup_timeout=60, kernel_name="python", stderr=None, **kwargs):
    """``start_new_kernel`` with the kernel's stderr kept and up to ``ATTEMPTS`` starts.

    The ``stderr`` nbval passes (/dev/null) is closed and replaced by a temporary file, which
    lives as long as the kernel does.
    """
    if stderr is not None:
        stderr.close()
    deaths = []
    for attempt in range(1, ATTEMPTS + 1):
        log = tempfile.TemporaryFile("w+")
        try:
            return start_new_kernel(startup_timeout=startup_timeout, kernel_name=kernel_name,
                                    stderr=log, **kwargs)
        except RuntimeError as error:
            deaths.append(f"attempt {attempt}: {error}\n{last_lines(log)}")
            log.close()
            if attempt < ATTEMPTS:
                warnings.warn(f"a {kernel_name} kernel died while starting; starting it again.\n"
                              f"{deaths[-1]}", RuntimeWarning)
    raise RuntimeError(f"the {kernel_name} kernel died while starting, {ATTEMPTS} times "
                       f"(cwd {kwargs.get('cwd')}). What it printed:\n\n" + "\n\n".join(deaths))


def recording_cpu_time(teardown, path):
    """nbval's ``IPyNbFile.teardown``, which first appends the kernel's CPU time to ``path``."""
    def teardown_and_record(self):
        kernel = self.kernel
        if kernel is not None and kernel.is_alive():
            seconds = cpu_seconds(kernel.km.provisioner.pid)
            notebook = self.path.relative_to(self.config.rootpath).as_posix()
            with open(path, "a", encoding="utf-8") as f:       # one short line: one write
                f.write(json.dumps({"notebook": notebook, "cpu": round(seconds, 2)}) + "\n")
        teardown(self)
    return teardown_and_record


def pytest_addoption(parser):
    parser.addoption("--notebook-cpu-times", metavar="FILE", default=None,
                     help="append each notebook's kernel CPU time to FILE, a JSON line per notebook")


def pytest_configure(config):
    """Put the retrying start in place of the one nbval imported; record CPU times if asked."""
    nbval.kernel.start_new_kernel = start_kernel_again_if_it_dies
    path = config.getoption("--notebook-cpu-times")
    if path:
        nbval.plugin.IPyNbFile.teardown = recording_cpu_time(nbval.plugin.IPyNbFile.teardown, path)
