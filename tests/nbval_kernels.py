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
"""

import tempfile
import warnings

import nbval.kernel

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


def pytest_configure(config):
    """Put the retrying start in place of the one nbval imported."""
    nbval.kernel.start_new_kernel = start_kernel_again_if_it_dies
