"""The step's code writer: a compiled step written out as straight-line Python, one line per op.

``function.py`` hands it the rewritten program (``rewrites.py``) and its memory plan
(``memory.py``); it writes ``_run(arrays)``, which ``print(train.source)`` shows. It names values
as the backward fast path does (``codegen.identifiers``: ``x_`` is the value of ``x``), and calls
an op with ``codegen.arguments``, so the two writers read alike.
"""

import numpy as np

from ..codegen import arguments, identifiers


def step_source(program, inputs, value_of, memory=None, header=(), write=None, subtract=None):
    """The source of ``_run(arrays)`` for ``mg.function`` and the names it uses: one line per op
    term of ``program`` (a ``rewrites.Program``), named as in the backward's code (``x_`` is the
    value of ``x``, ``f_h`` the forward of op ``h``); ``arrays`` are the values of the Input
    nodes ``inputs``, in order; Parameters are read with ``value_of``, constants are names of
    the code. With a ``memory`` plan (``memory.py``), an op that has a buffer writes into it
    (``into_h(..., out=out_h)``, ``out_h`` a view of its buffer), an output the plan returns
    new is written into a new array (``out=_empty(...)``), what the plan says is copied,
    is, and an update the plan writes early is written with ``write(parameter, value)``, or,
    for an update ``W - change`` the plan says is subtracted, ``subtract(parameter, change)``
    (its result is then None). It returns the values of ``program.results``, in a list;
    ``header`` lines open the source, as comments."""
    terms = program.terms
    name = identifiers(terms)
    value = {t: f"{name[t]}_" for t in terms}
    into = memory.into if memory else {}
    copied = memory.copied if memory else set()
    fresh = memory.fresh if memory else set()
    transposed = memory.transposed if memory else set()
    returned_new = memory.returned_new if memory else {}
    env = {"_value": value_of, "_empty": np.empty}
    lines = [f"# {line}" for line in header] + ["def _run(_arrays):"]
    buffers = [np.empty(size, np.uint8) for size in (memory.buffers if memory else [])]
    views = {}
    slot = {node: k for k, node in enumerate(inputs)}
    writes = memory.writes if memory else {}
    subtracted = memory.subtracted if memory else {}
    skipped = {program.results[k] for k in subtracted}          # computed by the subtraction
    env["_write"], env["_subtract"] = write, subtract
    for i, t in enumerate(terms):
        lines += _writes(writes.get(i - 1, []), program, name, subtracted)
        me = name[t]
        if t in skipped:
            continue
        if t.kind == "constant":
            env[value[t]] = t.value
            continue
        if t.kind == "input":
            read = f"_arrays[{slot[t.node]}]" + (".copy()" if t in fresh else "")
            lines.append(f"    {f'{value[t]} = {read}':<40} # input {t.name}")
            continue
        if t.kind == "parameter":
            env[me] = t.node
            lines.append(f"    {f'{value[t]} = _value({me})':<40} # parameter {t.name}")
            continue
        args = arguments(t, value, f"attrs_{me}")
        env[f"attrs_{me}"] = t.attrs
        if t in transposed:
            call, where = f"{value[t]} = {value[t.args[0]]}.T", ""
        elif t in returned_new:
            form, shape, dtype = returned_new[t]
            env[f"into_{me}"], env[f"new_{me}"] = form, (shape, dtype)
            call, where = f"{value[t]} = into_{me}({args}, out=_empty(*new_{me}))", "  -> a new array, returned"
        elif t in into:
            form, b, shape, dtype = into[t]
            if (b, shape, dtype) not in views:          # one view object per buffer and shape:
                views[b, shape, dtype] = _view(buffers[b], shape, dtype)   # numpy's out= is
            env[f"into_{me}"], env[f"out_{me}"] = form, views[b, shape, dtype]   # quickest on
            # the very array it reads (np.tanh(z, out=z)), slower on another view of its memory
            call = f"{value[t]} = into_{me}({args}, out=out_{me})"
            where = f"  -> buffer {b}"
        else:
            env[f"f_{me}"] = t.op.forward
            call, where = f"{value[t]} = f_{me}({args})", ""
        lines.append(f"    {call:<40} # {t.name} = {t.op.name}"
                     f"({', '.join(a.name for a in t.args)}){where}")
    lines += _writes(writes.get(len(terms) - 1, []), program, name, subtracted)
    written = {k for pairs in writes.values() for _, k in pairs}
    returned = ["None" if k in written else value[t] + (".copy()" if k in copied else "")
                for k, t in enumerate(program.results)]
    lines.append(f"    return [{', '.join(returned)}]")
    return "\n".join(lines) + "\n", env


def _view(buffer, shape, dtype):
    """The start of ``buffer`` (bytes) seen as an array of ``shape`` and ``dtype``, in C order."""
    return buffer[:int(np.prod(shape, dtype=int)) * dtype.itemsize].view(dtype).reshape(shape)


def _writes(pairs, program, name, subtracted):
    """The lines that write updates into their Parameters: (Parameter's term, result number);
    ``subtracted``: result number -> ``change``, for those written as ``W -= change``."""
    lines = []
    for p, k in pairs:
        new = program.results[k]
        if k in subtracted:
            change = subtracted[k]
            lines.append(f"    {f'_subtract({name[p]}, {name[change]}_)':<40} # {p.name} <- {new.name} = "
                         f"{p.name} - {change.name}, subtracted in place")
        else:
            lines.append(f"    {f'_write({name[p]}, {name[new]}_)':<40} # {p.name} <- {new.name}, in place")
    return lines
