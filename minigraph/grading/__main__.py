"""``python -m minigraph.grading PATH...``: grade notebooks (flags: ``--help`` or ``batch/cli.py``).

Exit status: 0 when grading completed, whatever the scores; 2 when grading could not run
(bad arguments, no notebooks found, unknown chapter, no such kernel, unwritable report).
"""

import sys

from .batch.cli import main

sys.exit(main())
