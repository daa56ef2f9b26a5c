# IPython kernel configuration for the course's virtual environment: `make setup` copies this
# file to .venv/etc/ipython/, where every kernel started from .venv reads it (IPython's
# per-environment config folder; a learner's own ~/.ipython configuration still applies).
#
# It keeps one message out of the terminal `make lab` runs in: ipykernel warns, for every kernel
# it starts, that the kernel "is running over TCP without encryption". JupyterLab talks to its
# kernels on the loopback interface, with each message signed with the kernel's own key; the
# warning concerns kernels reached over a network, which this course never starts. (Kernels
# over Unix sockets, which do not warn, fail where Jupyter's runtime folder has a long path:
# a socket's path has at most 107 characters.) Every other kernel message still shows.
import logging


class NoUnencryptedTCPWarning(logging.Filter):
    def filter(self, record):
        return "running over TCP without encryption" not in record.getMessage()


c = get_config()  # noqa: F821 (IPython defines it while it reads this file)
c.IPKernelApp.logging_config = {
    "filters": {"no_tcp_warning": {"()": NoUnencryptedTCPWarning}},
    "handlers": {"console": {"filters": ["no_tcp_warning"]}},
}
