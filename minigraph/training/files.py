"""A training run's file: written so that no crash loses the last good one, read back only if
it is whole and unedited.

Every training command (chapter 09's LSTM, chapter 10's translator, chapter 11's GPT) keeps
its run in one ``.npz`` file of numpy arrays (``np.load(path, allow_pickle=False)`` reads it):
``param/<name>`` for each Parameter, ``adam/m/<name>`` and ``adam/s/<name>`` for the
optimizer's moments, and ``meta.json``, one string of JSON with everything else (the format,
the config, the iteration, the history, the command and the commit, the wall-clock time and
the machine).

**Written atomically.** ``write`` writes a temporary file next to the target, flushes it to
the disk, and only then renames it over the target (``os.replace``, one step for the file
system). A crash, a SIGKILL or a full disk at any moment leaves either the old file or the new
one, never half of one; a full disk is an error that says so.

**Checked when read.** ``meta.json`` holds a SHA-256 checksum of the settings and every
array (names, dtypes, shapes, bytes). ``read`` refuses, with an error naming the file and what
is wrong, a missing, empty, truncated or corrupt file, a file that is no checkpoint, one of
another kind, and one whose numbers or settings were edited after it was written. Files of
version 1 were written before checksums: the only ones are the models shipped with minigraph,
so a file that says version 1 is read only if its settings and arrays have the checksum of one
of them (``SHIPPED_VERSION_1``); saying "version 1" skips no check.

**Leftovers.** A write killed before its rename (SIGKILL, a power cut) leaves its temporary
file, ``run.npz.<random>.partial``, next to the target; the next command that writes the
target removes such files and says so (``remove_leftovers``).
"""

import errno
import hashlib
import json
import os
import tempfile
import zipfile
import zlib

import numpy as np

from ..errors import CheckpointError

ZIP_MAGIC = b"PK\x03\x04"
PARTIAL = ".partial"                      # the end of a temporary file's name (see ``write``)
# the checksums (``checksum``) of the files of version 1: the models shipped in
# minigraph/checkpoints/, written before files held checksums
SHIPPED_VERSION_1 = {
    "sha256:80c95167ee1fd7f2f6b32d34ab563089d7e3566803e369a1ca1b006128b049cf",   # dates_attention.npz
    "sha256:18f9d203d61f9d50f221927ad515c3f6df78a46d835b3df57a90bba6a90ee07e",   # shakespeare_gpt.npz
    "sha256:aba6be146ccd8b2dee1de3b942965aa3683c44ae8a9b27bfd1840a6fbe69a7a9",   # shakespeare_lstm.npz
}


def write(path, arrays, meta):
    """Write the arrays and ``meta`` (with its checksum, as the string ``meta.json``) to ``path``,
    atomically: the file at ``path`` is the old one or the new one, whatever happens."""
    path = os.fspath(path)
    meta = {**meta, "checksum": checksum(meta, arrays)}
    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=PARTIAL,
                                             dir=folder)
    except OSError as error:
        raise CheckpointError(f"cannot write {path}: {error.strerror} (in the folder {folder}).") from error
    try:
        with os.fdopen(handle, "wb") as file:
            np.savez(file, **arrays, **{"meta.json": np.array(json.dumps(meta))})
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        full = error.errno in (errno.ENOSPC, errno.EDQUOT)
        raise CheckpointError(
            f"cannot write {path}: {'the disk is full' if full else error.strerror}. "
            + (f"The previous {path} is intact (nothing was replaced)" if os.path.exists(path)
               else f"Nothing was written to {path}")
            + (": free some space, then continue with --resume." if full else ".")) from error
    except BaseException:
        os.unlink(temporary)          # Ctrl-C or an error in the middle: the target is untouched
        raise


def remove_leftovers(path):
    """Remove the temporary files that killed writes of ``path`` left behind (``write`` names
    them ``<name>.<random>.partial``, next to it); returns their paths."""
    path = os.fspath(path)
    folder, name = os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    leftovers = [os.path.join(folder, e) for e in sorted(entries)
                 if e.startswith(name + ".") and e.endswith(PARTIAL) and len(e) > len(name) + len(PARTIAL) + 1]
    for leftover in leftovers:
        os.unlink(leftover)
    return leftovers


def checksum(meta, arrays):
    """``sha256:<hex>`` of ``meta`` (without its own checksum) and of each array's name, dtype,
    shape and bytes, in the order of their names."""
    digest = hashlib.sha256(json.dumps({k: v for k, v in meta.items() if k != "checksum"},
                                       sort_keys=True).encode())
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
        digest.update(array.tobytes())
    return "sha256:" + digest.hexdigest()


def read(path, format, kind, command):
    """``(meta, arrays)`` of the checkpoint at ``path``: its JSON as a dict, its arrays by name.

    ``format`` is the format this code writes (``minigraph.gpt/2``); version 1 of it is read
    too, if it is a shipped model (``SHIPPED_VERSION_1``). Anything else is a ``CheckpointError`` that names the file and
    what is wrong with it: not a ``kind`` checkpoint, make it with ``command``."""
    path = os.fspath(path)
    redo = f"Make it again with {command}, or resume from another file."
    if not os.path.isfile(path):
        raise CheckpointError(f"{path} does not exist" + (" (it is a folder)" if os.path.isdir(path) else "")
                              + f": give the file a training command wrote ({command} --out FILE).")
    with open(path, "rb") as file:
        start = file.read(4)
    if not start:
        raise CheckpointError(f"{path} is empty (0 bytes): a write that never finished. {redo}")
    if start != ZIP_MAGIC:
        raise CheckpointError(f"{path} is not a checkpoint: not an .npz file (numpy's zip of "
                              f"arrays) but a file that starts with {start!r}. {redo}")
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {key: saved[key] for key in saved.files}
        meta = json.loads(str(arrays.pop("meta.json")))
    except KeyError:
        raise CheckpointError(f"{path} is an .npz file but no minigraph checkpoint (it has no "
                              f"meta.json). {redo}") from None
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, zlib.error) as error:
        raise CheckpointError(f"{path} is damaged (truncated or corrupt: {error}). {redo}") from None
    written, family = meta.get("format") if isinstance(meta, dict) else None, format.rsplit("/", 1)[0]
    if written not in (format, f"{family}/1"):
        raise CheckpointError(f"{path} is not a {kind} checkpoint of this version (format "
                              f"{written!r}, expected {format!r}): make it again with {command}.")
    if written == f"{family}/1" and checksum(meta, arrays) not in SHIPPED_VERSION_1:
        raise CheckpointError(
            f"{path} says it is of format {written!r}, written before checkpoints had checksums, "
            f"but the only files of that version are the models shipped with minigraph, and its "
            f"settings and arrays are not those of any of them (an edited or an old file). Training "
            f"cannot continue from numbers of unknown origin. {redo}")
    if written != f"{family}/1" and meta.get("checksum") != checksum(meta, arrays):
        raise CheckpointError(
            f"{path} was changed after it was written: its checksum does not match its settings and "
            f"arrays (an edited iteration, learning rate or number, or a damaged file). Training "
            f"cannot continue from numbers of unknown origin. {redo}")
    return meta, arrays


def record(run, format, command, commit, resumable, **extra):
    """``(arrays, meta)`` that the file of any run holds: the Parameters and the record (format,
    config, iteration, history, command, commit, wall clock, machine, ``extra``); if
    ``resumable``, also the optimizer's moments and step counts. A run has ``model.parameters``,
    ``config``, ``iteration``, ``history`` and ``optimizer`` (an ``optim.Scheduled`` Adam)."""
    params, adam = run.model.parameters, run.optimizer.optimizer
    arrays = parameters(run.model)
    meta = {"format": format, **extra, "config": run.config.as_dict(), "iteration": run.iteration,
            "history": run.history, "command": command, "commit": commit, "resumable": resumable,
            "run": getattr(run, "run_id", None), "wall_clock": getattr(run, "wall_clock", None),
            "machine": getattr(run, "machine", None)}
    if resumable:
        for p in params:
            moments = adam.state[p]
            arrays.update({f"adam/{key}/{p.name}": moments[key] for key in ("m", "s") if key in moments})
        meta.update(adam_steps={p.name: adam.state[p].get("t", 0) for p in params},
                    schedule_step=run.optimizer.t)
    return arrays, meta


def restore(run, meta, arrays):
    """Put back into ``run`` (made from the saved config) what ``record`` saved."""
    set_parameters(run.model, arrays)
    adam = run.optimizer.optimizer
    for p in run.model.parameters:
        moments = {key: arrays[f"adam/{key}/{p.name}"] for key in ("m", "s")
                   if f"adam/{key}/{p.name}" in arrays}
        if meta["adam_steps"][p.name]:
            moments["t"] = meta["adam_steps"][p.name]
        adam.state[p].update(moments)         # beside what the optimizer set itself (AdamW: decays)
    run.optimizer.t, run.iteration, run.history = meta["schedule_step"], meta["iteration"], meta["history"]
    run.run_id, run.wall_clock = meta.get("run"), meta.get("wall_clock")


def check_resumable(meta, path):
    """A CheckpointError unless the checkpoint holds a whole run (not the model alone)."""
    if not meta["resumable"]:
        raise CheckpointError(f"{path} holds a model alone (saved with resumable=False: no optimizer "
                              f"state), so training cannot continue from it. Sample from it or score "
                              f"it with load_model; resume from the run's own checkpoint (--out).")


def parameters(model):
    """The values of the model's Parameters by name (``param/<name>``): what ``set_parameters``
    puts back."""
    return {f"param/{p.name}": p.value for p in model.parameters}


def set_parameters(model, arrays):
    """Give each of the model's Parameters its saved value."""
    for p in model.parameters:
        p.value = arrays[f"param/{p.name}"]


def provenance(path, meta):
    """Two lines on where a checkpoint comes from: its iteration and commit, then how long it
    trained on which machine (files written before the wall clock was recorded say so)."""
    machine, seconds = meta.get("machine") or {}, meta.get("wall_clock")
    if seconds is None:
        trained = "wall-clock time not recorded (a file written before it was)"
    else:
        hours, rest = divmod(round(seconds), 3600)
        trained = (f"trained for {hours}:{rest // 60:02d}:{rest % 60:02d} (wall clock) on a machine of "
                   f"{machine.get('cores')} cores, {machine.get('blas_threads')} BLAS thread(s)")
    return f"{path}: iteration {meta['iteration']}, commit {meta['commit']}\n{trained}"
