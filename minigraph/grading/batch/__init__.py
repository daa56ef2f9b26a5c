"""The batch grader: ``python -m minigraph.grading PATH...`` (flags: ``cli.py``).

``grader.py`` grades one notebook after another: it reads the file safely (``files.py``), scans
its code, runs it in a sandbox (``sandbox.py``) with ``runner.py``, whose last cell is the
collector (``collect.py``), and judges what came back with the exercises of ``toolkit``;
``gradebook.py`` writes the reports. No module here imports the engine itself.
"""
