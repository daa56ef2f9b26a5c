"""A sandbox for one submission: the command line that runs it, and its limits.

The grader runs everything a submission starts -- the notebook runner, its kernel, and any
process those start -- inside Debian's ``bubblewrap`` (``bwrap``), one sandbox per submission:

* its own PID namespace: when the runner ends, every process in it ends too (a child that
  called ``setsid`` or double-forked included), and so does everything if the grader dies
  (``--die-with-parent``);
* its own network namespace (no network, only a private loopback), IPC and UTS namespaces;
* a file system of its own: the system folders (``/usr``, ``/etc``, ...), Python and the
  minigraph package, all read-only; one writable folder (the submission's ``home``) and a
  private ``/tmp``. Nothing else exists in there: not the other submissions, not the
  instructor's files (``solutions/``, the rest of the course repository), not the reports,
  and not the reference answers: an empty read-only folder hides ``minigraph/grading/answers/``
  (wherever the package is installed, and every other copy in what the sandbox shows: one
  that ``pip install .`` put in the venv next to a checkout; ``reference_copies``);
* an empty environment plus the few variables Python and Jupyter need (no tokens);
* an unprivileged user: when the grader runs as root, each sandbox running at the same time
  gets a user of its own with no rights at all (``sandbox_uid``), for real, not only inside
  a namespace; anyone else's sandbox runs as ``nobody`` in a user
  namespace of its own;
* resource limits (``setrlimit``): memory per process, number of processes, CPU time, size of
  a file written.

* a writable space of bounded total size and file count (``workspace.py``): the writable
  folder and ``/tmp`` together.

``unsandboxed_command`` is the same run without bubblewrap (``--no-sandbox``): the same
environment and limits, in a session of its own. As root (a Gradescope container that cannot
make namespaces) it still runs as a user of its own with no rights (``sandbox_uid``), who cannot
write the grader's reports, and ``end_user`` kills every process of that user -- a child that
double-forked and left the session included -- before the grader writes anything. As anyone
else it runs as you, with your files (only for code you trust): the number of processes is then
left alone, as it would count yours.
"""

import functools
import os
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

# When the grader runs as root, the sandboxes that run at the same time get a user each, with
# no name, no files and no rights on this machine (``sandbox_uid``): limits on processes count
# per user, so one sandbox cannot use up those of another, and none can signal or trace
# another's processes -- nor those of another grader's run at the same time. Which users: a
# block of ``SLOTS`` drawn at random when the grader starts (``RUN``), one of about 18 million,
# never derived from the process ID: two graders that are both PID 1 of their own PID namespace
# (two containers on one host) share the host's users, and would otherwise share one block --
# and its process limits. (Where control groups work, ``cgroup.py`` also limits the processes
# of each submission on its own.)
FIRST_UID = 1_900_000_000
SLOTS = 128                      # users per grader process (concurrent notebooks)
BLOCKS = (4_294_000_000 - FIRST_UID) // SLOTS
RUN = secrets.randbelow(BLOCKS)  # this grader process's block of users (and name of its groups)
# What a sandbox sees of the machine, read-only (those that exist here). On merged-/usr
# systems /bin, /lib... are symbolic links into /usr and are recreated as such.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
PACKAGE_ROOT = Path(__file__).resolve().parents[3]        # the folder holding minigraph/
PACKAGE = Path(__file__).resolve().parents[2]             # minigraph/ itself
ANSWERS = PACKAGE / "grading" / "answers"                  # the reference answers: never shown
CONFIG = "config"          # in home: the kernels' home and configuration, read-only (runner.CONFIG)


def make_config(home):
    """The kernels' home and configuration folder in ``home``: IPython's default profile and
    nothing else, all of it read-only to the run (``sandboxed_command`` mounts it so; as root the
    grader keeps it its own)."""
    profile = Path(home) / CONFIG / "profile_default"
    for folder in ("startup", "security", "log", "pid"):
        (profile / folder).mkdir(parents=True)
    for folder, _, _ in os.walk(Path(home) / CONFIG):
        os.chmod(folder, 0o555)


def reference_copies():
    """Every copy of the reference answers this grader can find, as paths: the package's own,
    one that ``pip install .`` put in the venv's site-packages next to a checkout the grader
    runs from, and pip's in-tree ``build/lib``. A sandbox sees each as an empty folder; without
    a sandbox, as root, the grader refuses to run while any of them is readable by others."""
    roots = [PACKAGE.parent, PACKAGE_ROOT / "build" / "lib", *site_folders()]
    found = {ANSWERS, *(Path(root) / "minigraph" / "grading" / "answers" for root in roots)}
    return sorted(str(path) for path in found if path.is_dir())


def python_folders():
    """The folders of Python (its venv, its base) and of the package, which a sandbox shows
    read-only (besides the system's)."""
    return sorted({sys.base_prefix, sys.prefix, str(PACKAGE)} - {"/usr", "/usr/local"})


def site_folders():
    """The folders this Python installs packages into (its venv's and its base's)."""
    bases = [{}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}]
    return sorted({sysconfig.get_paths(vars=v)[kind] for v in bases for kind in ("purelib", "platlib")})


@dataclass(frozen=True)
class Limits:
    """Per-sandbox resource limits (``setrlimit``); memory and files in MB."""

    memory_mb: int = 3072           # address space of each process
    processes: int = 256            # processes and threads of the sandbox's user
    cpu_seconds: int = 900          # CPU time of each process
    file_mb: int = 64               # largest file a process may write
    disk_mb: int = 256              # the writable folder and /tmp together (workspace.py)
    files: int = 20_000             # files and folders in them together

    def apply(self, count_processes=True):
        """Set the limits on the calling process (a child, just before it runs the command).

        The process limit counts every process of the user: without a sandbox (where that
        user is you, with your other programs) it is left alone (``count_processes=False``).
        """
        mb = 1024 * 1024
        limits = [(resource.RLIMIT_AS, self.memory_mb * mb), (resource.RLIMIT_CPU, self.cpu_seconds),
                  (resource.RLIMIT_FSIZE, self.file_mb * mb), (resource.RLIMIT_CORE, 0)]
        if count_processes:
            limits.append((resource.RLIMIT_NPROC, self.processes))
        for kind, value in limits:
            resource.setrlimit(kind, (value, value))


def sandbox_uid(slot):
    """The user of sandbox ``slot`` of this grader process (as root)."""
    return FIRST_UID + RUN * SLOTS + slot % SLOTS


class SandboxUnavailable(Exception):
    """No sandbox can be made on this machine (the message says why and what to do)."""


def environment(home):
    """The only variables a submission's processes get: enough for Python, Jupyter and
    matplotlib to run, all pointing into ``home``. Nothing of the grader's environment."""
    return {
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(home / CONFIG), "JUPYTER_CONFIG_DIR": str(home / CONFIG),
        "JUPYTER_DATA_DIR": str(home / CONFIG), "JUPYTER_PATH": str(home / CONFIG),
        "LANG": "C.UTF-8", "PYTHONPATH": str(PACKAGE_ROOT), "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "IPYTHONDIR": str(home / CONFIG),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "JUPYTER_PLATFORM_DIRS": "1",
        "MPLCONFIGDIR": str(home / "matplotlib"), "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1", "MPLBACKEND": "agg",
    }


@functools.lru_cache(maxsize=None)
def sandbox_reason():
    """None if a bubblewrap sandbox works here, else why not (tried once per process)."""
    if shutil.which("bwrap") is None:
        return ("bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; "
                "Fedora: dnf install bubblewrap)")
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    try:
        proc = subprocess.run(_bwrap_args(Path("/")) + ["--", *_unprivileged(sandbox_uid(0)), sys.executable, "-c", ""],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not start ({error})"
    if proc.returncode != 0:
        return ("bubblewrap cannot create namespaces here (" + proc.stderr.strip()[:200] + "); "
                "in a container, allow user namespaces or run the grader on the host")
    return None


@functools.lru_cache(maxsize=None)
def bwrap_bounds_tmpfs():
    """Whether this bubblewrap can give a tmpfs a size (``--size``; Ubuntu 22.04's 0.6 cannot)."""
    try:
        shown = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in shown.stdout


@functools.lru_cache(maxsize=None)
def unprivileged_reason():
    """None if a user with no rights can run this Python and minigraph (what a run without a
    sandbox needs as root), else why not (tried once per process)."""
    if os.geteuid() != 0:
        return None
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    # started by the user itself, as the runner starts the kernel (setpriv's own start of it
    # may pass where the user cannot, e.g. a Python under /root)
    again = "import os, sys; os.execv(sys.executable, [sys.executable, '-c', 'import minigraph'])"
    proc = subprocess.run([*_unprivileged(sandbox_uid(0)), sys.executable, "-c", again],
                          env={"PYTHONPATH": str(PACKAGE_ROOT)}, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return (f"a user with no rights cannot run {sys.executable} with minigraph "
                f"({proc.stderr.strip()[-200:]}); install Python and the course where every user can read them")
    exposed = readable_references(sandbox_uid(0))
    if exposed:
        return (f"the reference answers in {exposed[0]} can be read by any user, so by the "
                f"submissions: make them root's alone (chmod -R go-rwx {exposed[0]}), as "
                "tools/gradescope/setup.sh does")
    return None


def readable_references(uid):
    """The copies of the reference answers (``reference_copies``) that user ``uid`` can list
    or read a file of (as root)."""
    probe = ('for d do if ls -- "$d" >/dev/null 2>&1 || [ -n "$(find "$d" -name "*.py" -readable '
             '2>/dev/null | head -n 1)" ]; then printf "%s\\n" "$d"; fi; done')
    proc = subprocess.run([*_unprivileged(uid), "/bin/sh", "-c", probe, "sh", *reference_copies()],
                          capture_output=True, text=True, timeout=60, cwd="/", env={"PATH": "/usr/bin:/bin"})
    return proc.stdout.splitlines()


def sandboxed_command(argv, space, env, slot=0):
    """(argv, Popen keyword arguments) to run ``argv`` with environment ``env`` (and nothing
    else) in a sandbox whose writable folder is ``space.home`` and whose ``/tmp`` is
    ``space.tmp`` (a ``workspace.Workspace``). ``slot`` numbers the sandboxes running at the
    same time (0, 1, ...): each gets its own user.

    Raises SandboxUnavailable if no sandbox can be made here.
    """
    reason = sandbox_reason()
    if reason:
        raise SandboxUnavailable(reason)
    uid = sandbox_uid(slot)
    _hand_over(space, uid)
    setenv = [arg for item in env.items() for arg in ("--setenv", *item)]
    # /tmp: the space's folder, under its quota; without a quota, bubblewrap's own tmpfs of a
    # bounded size -- or, where bubblewrap cannot size a tmpfs, the space's folder again, each
    # file bounded as in home (a tmpfs without a size would be RAM without a limit)
    tmp = None if not space.quota and bwrap_bounds_tmpfs() else space.tmp
    args = _bwrap_args(Path(space.home), tmp, space.limits.disk_mb)
    return args + setenv + ["--", *_unprivileged(uid), *argv], dict(cwd=str(space.home), env={})


def unsandboxed_command(argv, space, env, slot=0):
    """The same run without a sandbox (``--no-sandbox``): the same environment, a session of
    its own, and as root a user of its own (``sandbox_uid(slot)``; stop it with ``end_user``)."""
    uid = sandbox_uid(slot)
    _hand_over(space, uid)
    return [*_unprivileged(uid), *argv], dict(cwd=str(space.home), env=env, start_new_session=True)


def counts_processes(sandboxed):
    """Whether the process limit applies: it counts every process of the run's user, which is
    the sandbox's own unless the grader runs without a sandbox and without root (then it is you)."""
    return sandboxed or os.geteuid() == 0


def end_user(slot, patience=5.0):
    """Kill every process of sandbox ``slot``'s user (as root; without root there is no such
    user). ``kill(-1)`` sent *as that user* reaches all its processes at once, so none can fork
    away meanwhile; repeated until ``/proc`` shows none (or ``patience`` seconds pass)."""
    if os.geteuid() != 0:
        return
    uid = sandbox_uid(slot)
    killer = [*_unprivileged(uid), sys.executable, "-c", "import os, signal; os.kill(-1, signal.SIGKILL)"]
    deadline = time.monotonic() + patience
    while _processes_of(uid) and time.monotonic() < deadline:
        subprocess.run(killer, capture_output=True, check=False, env={})
        for pid in _processes_of(uid):      # the one the killer could not reach: itself, gone now
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _processes_of(uid):
    """The process ids whose real user is ``uid``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.stat(entry.path).st_uid == uid:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _hand_over(space, uid):
    """As root: make the space's files the run's user's (the grader wrote them as root)."""
    if os.geteuid() != 0:
        return
    config = os.path.join(space.home, CONFIG)
    for folder, subfolders, files in os.walk(space.home):
        subfolders[:] = [f for f in subfolders if os.path.join(folder, f) != config]    # stays root's
        for path in [folder, *(os.path.join(folder, f) for f in files)]:
            os.chown(path, uid, uid)


def _unprivileged(uid):
    """How the sandbox's command becomes an unprivileged user.

    As root, bubblewrap makes the namespaces and mounts with root's rights (so it can show
    Python even where it is installed under /root), and ``setpriv`` then makes the command
    user ``uid`` -- really, outside the sandbox too -- with no capabilities, and unable to
    gain any (``no_new_privs``: a set-user-id program runs with the user's rights). Anyone
    else needs nothing: bubblewrap runs as them, as ``nobody`` in a user namespace of its own.
    """
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


def _bwrap_args(home, tmp=None, tmp_mb=None):
    """bubblewrap's arguments: ``home`` writable, ``tmp`` as ``/tmp`` (or a tmpfs of its own,
    of ``tmp_mb`` MB if given), the system and Python read-only."""
    if os.geteuid() == 0:
        args = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try"]
    else:
        args = ["bwrap", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534"]
    args += ["--die-with-parent", "--new-session", "--clearenv"]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    # the private /tmp first, then Python and the package on top of it: a checkout that lives
    # under /tmp (a CI clone) stays visible, and nothing else of the real /tmp does
    args += ["--proc", "/proc", "--dev", "/dev"]
    if tmp is not None:
        args += ["--bind", str(tmp), "/tmp"]
    else:
        args += ["--perms", "1777"] + (["--size", str(tmp_mb * 1024 * 1024)] if tmp_mb else []) + ["--tmpfs", "/tmp"]
    python = python_folders()
    for path in python:
        args += ["--ro-bind", path, path]
    shown = [*python, *(p for p in SYSTEM_PATHS if os.path.isdir(p) and not os.path.islink(p))]
    for copy in reference_copies():         # a copy the sandbox would show is shown empty
        if any(copy.startswith(folder.rstrip("/") + "/") for folder in shown):
            args += ["--tmpfs", copy, "--remount-ro", copy]
    bound = python
    if home != Path("/"):
        args += ["--bind", str(home), str(home), "--chdir", str(home)]
        if (home / CONFIG).is_dir():
            args += ["--ro-bind", str(home / CONFIG), str(home / CONFIG)]
        bound = python + [str(home)]
    # bubblewrap makes the folders above a bound path as private as the original's (/root,
    # a private temporary folder): let nobody through them (they hold nothing else). A folder
    # that is itself bound (the venv, when pip installed the package inside it) is read-only:
    # it keeps its own modes.
    above = {str(p) for path in bound for p in Path(path).parents} - {"/", "/tmp", *bound}
    for folder in sorted(above):
        if not folder.startswith(tuple(p + "/" for p in bound)):
            args += ["--chmod", "0755", folder]
    return args
