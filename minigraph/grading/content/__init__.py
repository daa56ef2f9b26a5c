"""The course's exercises, one module per chapter: ``ch00.py`` ... ``ch11.py``.

Each chapter is split in two, so that nothing a submission can read helps it:

* ``content/chNN.py`` (this package) is what the learner's side needs: ``TITLE``, ``EXERCISES``,
  each exercise's name, title, points, cases, hints, ``run`` (which calls the answer in the
  learner's kernel), ``describe``, engine rule and hidden-case generator. It is in the grader's
  sandbox and in the student edition.
* ``answers/chNN.py`` is what only judging needs: reference functions, expected values
  (hand-worked ones included), typical-mistake tables (a wrong answer is one knob away from the
  right one) and every ``judge`` that computes or knows the answer. The sandbox mounts an empty
  folder over ``answers/``, and ``make release`` leaves it out.

``content/chNN.py`` names what is in ``answers/chNN.py`` through
``answers = answers_of(__name__)`` (``toolkit/answers.py``): ``answers.relu`` is fetched only
when it is used, so the content module imports, and ``run`` works, where the answers are absent.
``answers/chNN.py`` may import from ``content/chNN.py`` (specs, constants, helpers); never the
other way round. A judge that only measures (trains a recipe, checks an order's properties,
compares with minigraph's own ``Graph.forward``) knows no answer: it stays in ``content/`` or,
when it is long, goes to ``judges/chNN.py`` (named through ``judges = judges_of(__name__)``),
which ships.

Every exercise also says how the student edition, which has no ``answers/``, judges it: its
``public`` field (``toolkit/public.py``; ``AUTHORING.md`` section 7). The builders
(``function_exercise``, ``value_exercise``, ``vjp_exercise``, ``optimizer_exercise``) fill it in.

Converting a chapter module written in one piece (mechanical):

1. Create ``answers/chNN.py`` with a one-line docstring. Move into it, unchanged but for names:
   every reference function (``_relu`` becomes ``relu``, named after the exercise's answer),
   every typical-mistake table (a ``mistakes={...}`` literal becomes ``RELU_MISTAKES = {...}``;
   keep a dict where the toolkit takes one), every expected value (``value_exercise``'s value,
   a ``twin_case``'s or schedule case's hand-worked values with the comments that work them out:
   ``ADAGRAD_TWINS = [...]``, one item per case) and every ``judge`` that computes the reference
   (``_judge_x`` becomes ``judge_x``) with the helpers only they use. Import what they need from
   the toolkit and, by public name, from ``content/chNN.py``.
2. In ``content/chNN.py`` add ``from ..toolkit.answers import answers_of`` and, under ``TITLE``,
   ``answers = answers_of(__name__)``; write ``answers.NAME`` where a moved name was used
   (``function_exercise(..., answers.relu, ..., mistakes=answers.RELU_MISTAKES)``,
   ``judge=answers.judge_x``, ``twin_case(..., answers.ADAGRAD_TWINS[0])``). Never call
   ``dict()``, ``len()`` or anything else on an ``answers.NAME`` at import time: it would need
   the answers. Drop the imports that are no longer used (``pyflakes``).
3. An engine rule that names a moved function names it in ``answers``
   (``"mg.grading.answers.ch08.softplus_graph_vjp"``); where the answers are absent it refuses
   nothing, as there is nothing to call.
4. Give each exercise whose inputs can be drawn at random a hidden-case generator:
   ``hidden=lambda rng: case(x=random_array(rng))`` (``function_exercise``, ``vjp_exercise``;
   ``toolkit.vjp.elementwise_hidden`` for a one-input elementwise rule). It makes inputs only,
   within what the statement allows (a temperature > 0, ids as ints). The grader adds
   ``exercise.HIDDEN_CASES`` of them, drawn from a seed per submission.
5. Run ``tests/grading/test_content_answers.py -k NN.``, ``tests/grading/test_hidden_cases.py
   -k NN.``, ``tests/grading/test_hidden_seeds.py -k NN.`` and ``tests/grading/test_release.py``.

Hidden cases: every exercise whose inputs can be drawn has a generator (arrays of random
shapes that agree, random settings, ints, random graphs: ``graphs.random_spec``), and
``tests/grading/test_hidden_cases.py`` checks that right answers pass its cases and a table of
the public cases' answers does not, ``tests/grading/test_hidden_seeds.py`` that typical wrong
ones fail them. A generator draws the regimes where typical mistakes show, each in its turn,
not only values like the public cases: overflow (a spread above 709, rows far apart, a dominant
masked key), ties, zeros in a divisor, d ≠ d_v, non-integer values, deep graphs and chains
beyond the recursion limit, attributes that change a value. A typical wrong answer must fail a
hidden case for most seeds, and none may pass every hidden case of 50 seeds. No hidden cases,
and why:

* ``00.broadcast_shape``, ``01.predict``, ``03.hand_backprop``: the answer is one value about
  one fixed example (a shape, three numbers, a dict of gradients); there is no input to draw.
* ``04.disk_recipe``, ``05.digits_recipe``: the answer is a training recipe, judged by training
  it on the chapter's data; a drawn case would be another costly training run, not an input.
* ``07.reber_generator``: the answer is a sampler, judged by the statistics of 300 strings it
  draws; its randomness is already the answer's own.
* ``08.framework_words``: the cases are the words of a fixed vocabulary, all of them public.
"""
