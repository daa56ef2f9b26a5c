"""The instructor's view of a class, from the grader's JSON reports alone (no re-grading):

    python -P -m minigraph.grading report grades.json [more.json ...] --out class-report.html \\
        --csv exercises.csv --json class.json --feedback feedback/

* ``load.py`` reads and merges the reports (several runs, machines, Classroom artifacts);
* ``tally.py`` counts: points per exercise, named mistakes, hidden cases failed, gradebooks;
* ``similarity.py`` flags answers to review for copying (copydetect, MOSS's winnowing);
* ``page.py`` and ``plots.py`` lay the class report out as one self-contained HTML page;
* ``feedback.py`` writes a page per student, to send back;
* ``cli.py`` is the command (``report``), also run by ``--class-report`` when grading.
"""
