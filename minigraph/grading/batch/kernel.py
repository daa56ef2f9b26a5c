"""The grader's kernel: an IPython kernel whose set-up no submission can reach.

    python -I .../minigraph/grading/batch/kernel.py PACKAGE_ROOT CHAPTER WATCH_FD -f CONNECTION_FILE

The runner starts every kernel of a submission with this one command line (``runner.kernel_argv``),
the first and each after a cell ended its kernel: never a kernelspec (the notebook could write
one in ``~/.local/share/jupyter``) and never the notebook's metadata. In order, before any code
of the submission runs, it

1. runs Python isolated (``-I``): no ``PYTHON*`` variable, no user site-packages, neither the
   working folder nor the script's on ``sys.path``; the package's folder goes first only if it
   is read-only (in the sandbox it is), else last;
2. adds the audit hook (``watch.py``), which reports to the grader on file descriptor ``WATCH_FD``;
3. imports the grading code and the chapter's exercises (``collect.py``), then takes every
   ``minigraph`` module out of ``sys.modules``: the notebook's ``import minigraph`` makes a copy
   of its own, and whatever it patches there, the grading code keeps the modules imported now;
4. starts IPython's kernel with the working folder kept off ``sys.path`` (``ignore_cwd``), no
   history file, and configuration only from folders the grader made empty and read-only
   (``HOME``, ``IPYTHONDIR``, ``JUPYTER_*``: ``runner.kernel_environment``);
5. serves the grading request (``collect.serve``): the runner asks for the answers' results with
   a message of its own on the kernel's shell channel, not with a cell, so no input transformer,
   event hook or name in the notebook's namespace stands between the request and the grading code.
"""

import os
import sys


def main(argv):
    root, chapter, fd, rest = argv[1], argv[2], int(argv[3]), argv[4:]
    sys.dont_write_bytecode = True
    if os.access(root, os.W_OK):                 # a folder the notebook could write: after site-packages
        sys.path.append(root)
    else:
        sys.path.insert(0, root)
    from minigraph.grading.batch import watch
    monitor = watch.Watch(fd).install()
    from minigraph.grading.batch import collect
    collect.prepare(chapter)
    grading = {name: module for name, module in sys.modules.items() if name.split(".")[0] == "minigraph"}
    for name in grading:
        del sys.modules[name]
    from ipykernel.kernelapp import IPKernelApp
    app = IPKernelApp.instance()
    app.initialize([*rest, "--IPKernelApp.ignore_cwd=True", "--HistoryManager.enabled=False"])
    collect.serve(app.kernel, grading, monitor)
    app.start()


if __name__ == "__main__":
    main(sys.argv)
