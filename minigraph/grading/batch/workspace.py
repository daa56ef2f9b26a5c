"""A submission's writable space: a folder of bounded size and file count, removed whatever it holds.

A notebook under grading may write files -- its own folder (``home``) and ``/tmp`` are the only
places it can -- and a hostile one writes as much as it can: gigabytes, a million empty files,
a folder 100,000 deep whose modes forbid reading it. None of that may reach the next submission
or outlive the grader. So each submission gets a ``Workspace``:

* as root, one ``tmpfs`` mounted for it alone, holding ``home`` and ``tmp`` (the sandbox's
  ``/tmp``), with a total size (``Limits.disk_mb``) and a number of files and folders
  (``Limits.files``, the file system's inodes): when it is full, writes fail inside the
  notebook (``No space left on device``), the notebook is graded on what ran, and the grader
  notes it (``full``). It lives in memory, so it is removed by unmounting it, in one step,
  whatever tree it holds;
* without root (no mount possible), a folder on the grader's disk: each file is still limited
  in size (``Limits.file_mb``), not the total (the sandbox's ``/tmp`` is then bubblewrap's own
  tmpfs, limited in size only; a bubblewrap too old to limit it, Ubuntu 22.04's, gets the
  space's ``tmp`` folder, limited per file as ``home``). Run the grader as root (``sudo``) to
  bound both;
* what the run hands back (``runner.OUT``: its results and notes) has a small file system of
  its own inside ``home``, so that a notebook that filled its space is still graded on what
  it ran;
* either way, ``remove`` empties the folder with no recursion and no path longer than a name
  (it walks with file descriptors and ``..``), making each folder readable before it looks
  inside: a tree of any depth, width or modes goes.

The grader's own files for the run (the sandbox's stderr) sit next to the space, outside the
sandbox's view. A grader killed outright (SIGKILL) cannot unmount its spaces; each mount is named
after the grader's process (``minigraph-grade-PID``), so the next grader run as root unmounts and
removes those of graders no longer alive (``sweep``), even when several start at once.
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .runner import OUT

MB = 1024 * 1024


class Workspace:
    """``home`` (the sandbox's writable folder) and ``tmp`` (its ``/tmp``) in a fresh folder;
    a quota on both together where the grader can mount one (``quota``). Use it as a context
    manager: everything is removed on the way out."""

    def __init__(self, limits):
        if os.geteuid() == 0:
            sweep()
        self.root = Path(tempfile.mkdtemp(prefix="minigraph-grade-"))
        os.chmod(self.root, 0o711)          # a sandbox's user may pass through, not look inside
        self.limits = limits
        box = self.root / "box"
        box.mkdir()
        self.quota = os.geteuid() == 0 and _mount_tmpfs(box, limits.disk_mb, limits.files)
        self.home, self.tmp = box / "home", box / "tmp"
        self.home.mkdir()
        self.tmp.mkdir()
        os.chmod(self.tmp, 0o1777)
        self.out = self.home / OUT
        self.out.mkdir()
        if self.quota:          # room for the results however full the rest is
            _mount_tmpfs(self.out, limits.file_mb + 16, 64)
        self.stderr = self.root / "stderr"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()

    def full(self):
        """A note if the notebook used up its space (None otherwise, or without a quota)."""
        if not self.quota:
            return None
        space = os.statvfs(self.home)
        if space.f_bavail * space.f_frsize < MB:
            return f"the notebook filled its {self.limits.disk_mb} MB of disk space; later writes failed"
        if space.f_favail < 16:
            return f"the notebook made {self.limits.files} files and folders, its limit; later ones failed"
        return None

    def remove(self):
        """Unmount the quota (if any) and delete everything, whatever tree the notebook made."""
        if self.quota:
            for mounted in (self.out, self.root / "box"):
                subprocess.run(["umount", "--lazy", str(mounted)], capture_output=True, check=False)
            self.quota = False
        remove_tree(self.root)


def _mount_tmpfs(folder, mb, files):
    """Mount a tmpfs of ``mb`` MB and ``files`` inodes on ``folder``; whether it worked (a
    container without the right to mount has none)."""
    if shutil.which("mount") is None:
        return False
    options = f"size={mb * MB},nr_inodes={files},mode=0755,nosuid,nodev"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, f"{MOUNT_NAME}{os.getpid()}",
                           str(folder)], capture_output=True, check=False)
    return done.returncode == 0


MOUNT_NAME = "minigraph-grade-"      # + the pid of the grader that mounted it


def stale_mounts():
    """Mount points of spaces whose grader is no longer alive (it was killed outright), deepest
    first (a results space sits inside its box)."""
    stale = []
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            source, point = line.split()[:2]
            pid = source[len(MOUNT_NAME):]
            if source.startswith(MOUNT_NAME) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                stale.append(point.replace("\\040", " "))
    return sorted(stale, key=len, reverse=True)


def sweep():
    """Unmount and delete the spaces that killed graders left behind.

    Two graders started together may both find the same space: each renames a space's folder
    before deleting it, and only one rename can succeed, so one grader alone deletes it."""
    for point in stale_mounts():
        subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)
        root = Path(point).parent                  # the space's folder, for its box
        if root.name.startswith(MOUNT_NAME):
            claimed = root.with_name(f"{root.name}-swept-by-{os.getpid()}")
            try:
                root.rename(claimed)
            except FileNotFoundError:              # another grader is deleting it
                continue
            remove_tree(claimed)


def remove_tree(path):
    """Delete ``path`` and all below it, however deep, wide or unreadable: no recursion, and
    every call names a single entry relative to an open folder (no path grows with depth).
    Links are removed, never followed. Only for trees nothing else is changing any more."""
    path = Path(path)
    if not path.is_dir() or path.is_symlink():
        path.unlink(missing_ok=True)
        return
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    folder, names = os.open(path, flags), []          # names: the way down from ``path``
    try:
        while True:
            os.fchmod(folder, 0o700)
            child = None
            for entry in list(os.scandir(folder)):
                if entry.is_dir(follow_symlinks=False):
                    child = entry.name
                    break
                os.unlink(entry.name, dir_fd=folder)
            if child is not None:                       # go down into the first subfolder
                os.chmod(child, 0o700, dir_fd=folder)
                inner = os.open(child, flags, dir_fd=folder)
                os.close(folder)
                folder = inner
                names.append(child)
            elif names:                                 # empty: go up and remove it
                outer = os.open("..", flags, dir_fd=folder)
                os.close(folder)
                folder = outer
                os.rmdir(names.pop(), dir_fd=folder)
            else:
                break
    finally:
        os.close(folder)
    os.rmdir(path)
