"""The batch grader: ``python -m minigraph.grading PATH...`` (flags: ``cli.py``).

``grader.py`` grades one notebook after another: it reads the file safely (``files.py``), scans
its code, runs it in a sandbox (``sandbox.py``) with ``runner.py``, in the grader's own kernel
(``kernel.py``), whose audit hook (``watch.py``) reports what the notebook's code does
(``watched.py``), and whose grading code (``collect.py``) hands back the answers' results; it
judges those with the exercises of ``toolkit``;
``gradebook.py`` writes the reports. No module here imports the engine itself.
"""

import sys

# Every process of the grader reads notebooks with nbformat (the grader, its forkserver, each
# sandbox's runner), which validates them with jsonschema, which imports the optional IRI checker
# rfc3987_syntax when it is installed (Jupyter's own packages install it). That import builds a
# grammar: about two seconds of CPU in every one of those processes, for a format no notebook
# schema uses. Marking it absent here, before any module of this package imports nbformat, skips
# only that checker (jsonschema goes without it, as where it is not installed).
sys.modules.setdefault("rfc3987_syntax", None)
