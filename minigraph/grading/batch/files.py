"""Files the grader cannot trust: reading them safely, naming them safely, writing reports.

A folder of submissions comes from the people being graded, and a sandbox's folder from the
code being graded. Either may hold anything where a notebook or a results file should be: a
folder called ``x.ipynb``, a symbolic link (to ``/dev/zero``, to ``/etc/shadow``, to
nowhere), a FIFO that never answers, a file of gigabytes, a file name with a newline or
bytes that are not UTF-8. So:

* ``read_untrusted`` opens without following a symbolic link and without blocking, reads
  only a regular file, and at most ``limit`` bytes (anything else is an ``Unreadable`` with a
  message); the grader also gives it a time limit (a file system may hang);
* ``display_name`` writes a path so that it is one printable line, whatever its bytes;
* ``write_atomically`` replaces a report in one step: a reader sees the old file or the new
  one, never half of one.
"""

import os
import stat
import tempfile
from pathlib import Path


class Unreadable(Exception):
    """A file the grader will not read (the message says why, for the report)."""


def read_untrusted(path, limit):
    """The bytes of ``path`` if it is a regular file (not a link) of at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if os.path.islink(path):
            raise Unreadable("not a regular file (a symbolic link)") from None
        raise Unreadable(f"cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"not a regular file (a {_kind(info.st_mode)})")
        if info.st_size > limit:
            raise Unreadable(f"too large ({info.st_size / 1e6:.1f} MB; at most {limit / 1e6:g} MB)")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:                        # it grew while being read
        raise Unreadable(f"too large (more than {limit / 1e6:g} MB)")
    return data


def _kind(mode):
    kinds = {stat.S_ISDIR: "folder", stat.S_ISFIFO: "FIFO", stat.S_ISCHR: "character device",
             stat.S_ISBLK: "block device", stat.S_ISSOCK: "socket"}
    return next((name for test, name in kinds.items() if test(mode)), "special file")


def display_name(path):
    """``path`` as one printable line: control characters and bytes that are not UTF-8 are
    written as escapes (``\\n``, ``\\xff``), so a name cannot forge a line of a report."""
    text = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:             # an undecodable byte (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char == "\\":
            out.append("\\\\")
        elif not char.isprintable():
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)


def write_atomically(path, text):
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder. The
    report gets the permissions any new file gets (a temporary file is private to its owner)."""
    path = Path(path)
    fd, part = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(part, path)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise


def _umask():
    """The process's umask (reading it means setting it: set it straight back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask
