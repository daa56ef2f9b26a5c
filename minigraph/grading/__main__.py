"""``python -m minigraph.grading PATH...``: grade notebooks (flags: ``--help`` or ``batch/cli.py``).
``python -m minigraph.grading report REPORT.json...``: the class report (``classreport/cli.py``).

Exit status: 0 when grading completed, whatever the scores; 2 when grading could not run
(bad arguments, no notebooks found, unknown chapter, no such kernel, unwritable report).
To grade a folder named ``report``, write it ``./report``.
"""

import sys

if sys.argv[1:2] == ["report"]:
    from .classreport.cli import main

    sys.exit(main(sys.argv[2:]))

from .batch.cli import main  # noqa: E402

sys.exit(main())
