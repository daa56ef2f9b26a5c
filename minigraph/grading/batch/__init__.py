"""The batch grader: ``python -m minigraph.grading PATH...`` (flags: ``cli.py``).

``grader.py`` grades one notebook after another: it reads the file safely (``files.py``), scans
its code, runs it in a sandbox (``sandbox.py``) with ``runner.py``, in the grader's own kernel
(``kernel.py``), whose audit hook (``watch.py``) reports what the notebook's code does
(``watched.py``), and whose grading code (``collect.py``) hands back the answers' results; it
judges those with the exercises of ``toolkit``;
``gradebook.py`` writes the reports. No module here imports the engine itself.
"""
