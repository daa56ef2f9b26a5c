"""Watch what a submission's code does, from inside its kernel, and tell the grader outside.

A reading of a cell's text misses code kept where the reading does not look: in a string handed
to ``exec``, ``timeit`` or ``run_cell``, in a ``.py`` file written and imported, in a pickle, or
reached by a name put together at run time (``getattr(f, "__co" + "de__")``). What runs cannot
hide that way. Python's audit hooks (PEP 578, ``sys.addaudithook``) are called by the
interpreter itself on such actions -- compiling source text, reading a function's code object,
looking at frames, unpickling a global, opening a file -- and a hook, once added, cannot be
removed. The grader's kernel (``kernel.py``) adds ``Watch.hook`` before anything else runs in it.

**Whose action.** The hook reports an action only when the code that asked for it is the
submission's: the frame that called it comes from a file outside the trusted install (Python's
standard library and site-packages, the ``minigraph`` package) -- a cell, a function defined in
a cell, a file the notebook wrote. Python and its libraries do such things all day (IPython
compiles every cell, ``dataclasses`` runs ``exec``, a traceback reads frames): none of that is
reported. Only the tools that run a string the caller gives them (IPython's ``run_cell`` and
magics, ``timeit``, ``code``, ``runpy``: ``RUNS_STRINGS``) are reported when a submission's
frame is anywhere below them, with the text they were given, which the grader reads like a
cell's (``%timeit relu(x)`` is the cell's own text, and not flagged for it).

**The channel.** Reports go, one JSON line each, to a pipe whose other end the grader holds
outside the sandbox; it was open before any submission code ran, and what is written there
cannot be taken back. The runner writes which cell it is about to run to the same pipe, so a
report belongs to the cell before it. When the grading is over the kernel writes ``done``:
a channel that ends without it is itself flagged. A submission can reach its own file
descriptors, though: it could put something else where the pipe was and write a ``done`` of
its own through a copy. So the watch checks, before each line it writes, that its descriptor
is still the pipe it was given (the same device and inode, read with ``os.fstat`` kept from
before any cell ran); if not, nothing it writes can be heard, and it ends the kernel with
status ``EXIT_SILENCED`` instead: the runner tells the grader (a ``silenced`` line), and the
cell that was doing something worth a report does not run again. Lines are written with
Python's C JSON quoting, not ``json.dumps``, whose module a cell could change.
Each kind of report is sent ``MAX_REPORTS`` times at most: a loop that does the same thing a
million times costs one line.
"""

import os
import sys
import sysconfig
from _json import encode_basestring_ascii as _quoted

from .. import __file__ as _grading_init

MAX_REPORTS = 5                     # reports of one kind (event and place) sent at most
EXIT_SILENCED = 86                  # the kernel's exit status when its channel was replaced
MAX_TEXT = 2000                     # characters of compiled source text sent
PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_grading_init))))
# the tools that run a string their caller gives them: a submission's frame below them is reported
RUNS_STRINGS = tuple(os.sep + part for part in (
    os.path.join("IPython", "core", ""), os.path.join("ipykernel", ""), "timeit.py", "code.py",
    "codeop.py", "runpy.py", "pdb.py", "bdb.py"))
# what a frame or function shows of itself: the way to rebuild or unwrap a function (Python
# 3.11 audits __code__, f_code, tb_frame and the generators' frames and code; the others are
# here for the Pythons that audit them)
INTROSPECTION = {"__code__", "__globals__", "__closure__", "__builtins__", "f_code", "f_globals",
                 "f_locals", "f_back", "f_builtins", "tb_frame", "gi_frame", "gi_code", "cr_frame",
                 "cr_code", "ag_frame", "ag_code", "co_code"}
FRAMES = {"sys._getframe", "sys._current_frames", "sys._getframemodulename", "gc.get_objects",
          "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile"}
# globals a pickle may name: data, never a function that runs something
SAFE_PICKLE = ("numpy", "collections", "copyreg", "datetime", "_codecs", "builtins.list",
               "builtins.dict", "builtins.set", "builtins.frozenset", "builtins.tuple",
               "builtins.bytearray", "builtins.complex", "builtins.slice", "builtins.range",
               "builtins.int", "builtins.float", "builtins.str", "builtins.bytes", "builtins.bool",
               "builtins.object")
CODE_FILES = (".py", ".pyc", ".pyw", ".pth", ".so")


def trusted_roots():
    """The folders whose code is trusted: the standard library, site-packages, and minigraph."""
    paths = {PACKAGE}
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix}):
        for kind in ("stdlib", "platstdlib", "purelib", "platlib"):
            paths.add(sysconfig.get_paths(vars=scheme_vars)[kind])
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths)


class Watch:
    """The audit hook of one kernel, writing its reports to the file descriptor ``fd``."""

    def __init__(self, fd):
        self.fd, self.sent, self.busy = fd, {}, False
        self.roots = trusted_roots()
        # kept now, before any cell runs: a cell can replace what the os module holds
        self.getframe, self.fstat, self.write, self.exit = sys._getframe, os.fstat, os.write, os._exit
        self.pipe = self.identity()

    def identity(self):
        """(device, inode) of what ``fd`` is now; None if it is closed."""
        try:
            found = self.fstat(self.fd)
        except OSError:
            return None
        return found.st_dev, found.st_ino

    def install(self):
        """Add the hook (for good: Python has no way to remove one) and say so on the channel."""
        sys.addaudithook(self.hook)
        self.send({"event": "hello", "pid": os.getpid()})
        return self

    def send(self, record):
        """Write ``record`` on the channel, or end the kernel if the channel is no longer the pipe."""
        if self.identity() != self.pipe:
            self.exit(EXIT_SILENCED)
        try:
            self.write(self.fd, line_of(record))
        except OSError:                # the grader stopped reading: the run is over
            pass

    def done(self):
        """Grading is over: the last line the grader expects from this kernel."""
        self.send({"event": "done"})

    def untrusted(self, filename):
        return not (filename.startswith(self.roots) or filename.startswith("<frozen "))

    def hook(self, event, args):
        if self.busy or not (event in WATCHED or event.startswith("ctypes.")):
            return
        self.busy = True                 # what the hook itself does is not reported
        try:
            why = self.judge(event, args, self.getframe(1))
            if why:
                self.report(event, why)
        except Exception:                # a hook that raises would break the submission's code
            pass
        finally:
            self.busy = False

    def judge(self, event, args, caller):
        """Why ``event`` (asked for by frame ``caller``) is reported, with the text it concerns;
        None if it is not."""
        own = caller is not None and self.untrusted(caller.f_code.co_filename)
        if event == "compile":
            source = args[0]
            if isinstance(source, bytes):
                source = source.decode("utf-8", "replace")
            if own:
                return ("compile", source if isinstance(source, str) else "a syntax tree")
            if isinstance(source, str) and self.runs_for_submission(caller):
                return ("run-string", source)
        elif event in ("exec", "code.__new__"):
            if own:
                return (event, getattr(args[0], "co_filename", ""))
        elif event in ("marshal.loads", "marshal.load"):      # code objects from bytes
            if own:
                return ("code.__new__", event)
        elif event == "open":
            path, mode, flags = (list(args) + [None, None])[:3]
            path = os.fsdecode(path) if isinstance(path, (str, bytes)) else ""
            if not path.endswith(CODE_FILES):
                return None
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writes and self.submission_below(caller):     # pathlib's write_text for it included
                return ("writes-code", path)
            if caller is not None and caller.f_code.co_filename.startswith("<frozen importlib") \
                    and self.untrusted(os.path.realpath(path)) and "__pycache__" not in path:
                return ("imports", path)
        elif event == "pickle.find_class":
            name = f"{args[0]}.{args[1]}"
            if not name.startswith(SAFE_PICKLE):
                return ("pickle", name)
        elif event == "object.__getattr__" or event == "object.__setattr__":
            if own and args[1] in INTROSPECTION:
                return ("introspects", args[1])
            if own and event == "object.__setattr__" and isinstance(args[0], type) and str(
                    getattr(args[0], "__module__", "")).startswith("minigraph"):
                return ("patches", f"{args[0].__name__}.{args[1]}")
        elif own:                       # frames, the garbage collector, ctypes
            return ("introspects" if event in FRAMES else "ctypes", event)
        return None

    def runs_for_submission(self, caller):
        """Whether ``caller`` is a tool that runs strings, called by the submission's code."""
        filename = caller.f_code.co_filename
        return (filename.endswith(RUNS_STRINGS) or os.sep + "IPython" + os.sep in filename) \
            and self.submission_below(caller.f_back)

    def submission_below(self, frame):
        """Whether ``frame`` or a frame that called it is the submission's code."""
        while frame is not None:
            if self.untrusted(frame.f_code.co_filename):
                return True
            frame = frame.f_back
        return False

    def report(self, event, why):
        kind, text = why
        place = self.place()
        key = (kind, place)
        self.sent[key] = self.sent.get(key, 0) + 1
        if self.sent[key] <= MAX_REPORTS:
            self.send({"event": kind, "text": str(text)[:MAX_TEXT], **place_dict(place)})

    def place(self):
        """(file, line, that line's text) of the submission's innermost frame, if any."""
        frame = self.getframe(3)
        while frame is not None and not self.untrusted(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is None:
            return ("", 0, "")
        import linecache
        filename = frame.f_code.co_filename
        return (filename, frame.f_lineno, linecache.getline(filename, frame.f_lineno).strip()[:200])


def line_of(record):
    """``record`` (text keys; text or whole-number values) as one line of JSON, in bytes."""
    fields = (f"{_quoted(key)}: {_quoted(value) if value.__class__ is _TEXT else f'{value:d}'}"
              for key, value in record.items())
    return ("{" + ", ".join(fields) + "}\n").encode("ascii")


_TEXT = str                         # kept at import: a cell can rebind the builtin name


def place_dict(place):
    filename, line, code = place
    return {"file": filename, "line": line, "code": code}


WATCHED = {"compile", "exec", "code.__new__", "marshal.loads", "marshal.load", "open", "pickle.find_class", "object.__getattr__",
           "object.__setattr__", *FRAMES}
