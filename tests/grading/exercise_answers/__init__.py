"""Answers a learner writes, one module per chapter with exercises: ``chNN.py``.

Each module holds two dicts keyed by exercise id (every exercise of the chapter must appear in
both; ``tests/grading/test_content_answers.py`` holds every chapter of ``registry.CHAPTERS`` to it):

``WRONG = {"00.relu": {"abs instead of max": wrong(np.abs, "flip the sign"), ...}, ...}``
    at least 5 typical wrong answers per exercise, each under a name that says the mistake,
    made with ``wrong(answer, *words)``: the answer must fail (in ``check()`` and in the
    grader's run/judge), and every word must appear (case-insensitively) in the messages of its
    failing cases -- the words that name the mistake for the learner.

``RIGHT = {"00.relu": {"np.maximum": answer, "np.where": answer, ...}, ...}``
    at least 2 right answers per exercise, written *differently* (another algorithm, another
    numpy idiom), each of which must earn full marks.

An answer is whatever the notebook would define under the exercise's name: a function, a
class, a value. Write them as a learner would (the mistake in the code, not in a flag).
"""


def wrong(answer, *words):
    """A typical wrong answer and the words its feedback must contain."""
    return answer, words
