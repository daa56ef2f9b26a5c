"""A translation task the course makes itself: dates written many ways, to ISO dates.

    "3rd of March 1997", "Mar 3, 1997", "03/03/97", "Monday, March 3 1997", "3 mar 1997"
        ->  "1997-03-03"

Every date from 1950-01-01 to 2049-12-31 can be written in each of the ``FORMATS`` below.
Two-digit years mean 1950-2049 (97 is 1997, 07 is 2007) and "03/04/97" is day first (3 April).
The target is always the ten characters YYYY-MM-DD.

    task = dates(n_train=20_000, n_held_out=1_000, seed=0)
    task.train[0]                    # ('14 jun 1986', '1986-06-14')
    task.source.encode("3 mar 1997") # ids of the source vocabulary

``dates`` is deterministic: the same arguments give the same examples. The *dates* are split
first (a tenth of them are held out), then each example picks a date of its split and a format,
so the training and held-out sets never share a date, hence never a source string nor a target:
a held-out score measures dates the model has never seen, written in ways it has.
"""

import datetime

import numpy as np

from .. import BadValueError, nn
from ..training.text import Vocabulary

FIRST, LAST = datetime.date(1950, 1, 1), datetime.date(2049, 12, 31)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
HELD_OUT_FRACTION = 0.1
TARGET_LENGTH = len("1997-03-03")


def ordinal(day):
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st, 22nd, 23rd, ..., 31st."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _parts(date):
    """The pieces a format is written from."""
    month, weekday = MONTHS[date.month - 1], DAYS[date.weekday()]
    return dict(d=date.day, dd=f"{date.day:02d}", m=date.month, mm=f"{date.month:02d}",
                yyyy=date.year, yy=f"{date.year % 100:02d}", th=ordinal(date.day),
                Month=month, Mon=month[:3], mon=month[:3].lower(), MONTH=month.upper(),
                Weekday=weekday, Wkd=weekday[:3])


FORMATS = ["{th} of {Month} {yyyy}",          # 3rd of March 1997
           "{Mon} {d}, {yyyy}",               # Mar 3, 1997
           "{dd}/{mm}/{yy}",                  # 03/03/97
           "{Weekday}, {Month} {d} {yyyy}",   # Monday, March 3 1997
           "{d} {mon} {yyyy}",                # 3 mar 1997
           "{Month} {d}, {yyyy}",             # March 3, 1997
           "{d}.{m}.{yyyy}",                  # 3.3.1997
           "{d} {MONTH} {yyyy}",              # 3 MARCH 1997
           "{Wkd} {d} {Mon} {yyyy}",          # Mon 3 Mar 1997
           "{dd}-{Mon}-{yyyy}",               # 03-Mar-1997
           "{Month} {th}, {yyyy}",            # March 3rd, 1997
           "{d} {Month} {yy}"]                # 3 March 97


def write(date, form):
    """``date`` (a ``datetime.date``) written in the format ``form`` (one of ``FORMATS``)."""
    return form.format(**_parts(date))


def iso(date):
    """The target: YYYY-MM-DD."""
    return date.isoformat()


def is_date(text):
    """Is ``text`` a date that exists, written as the model writes them (``1997-03-03``), in the
    years the task covers (1950 to 2049)? The model always writes ten characters of that form,
    a date or not: ``1997-02-31`` and ``1997-13-13`` are no dates."""
    try:
        day = datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        return False
    return len(text) == TARGET_LENGTH and FIRST <= day <= LAST


def all_dates():
    """Every date the task uses, in order: 1950-01-01 .. 2049-12-31 (36,525 days)."""
    return [FIRST + datetime.timedelta(days=k) for k in range((LAST - FIRST).days + 1)]


def source_alphabet():
    """Every character a format can write: what the formats write in one leap year (all the
    months, weekdays, ordinal suffixes and digits) is all they ever write."""
    year = [datetime.date(2000, 1, 1) + datetime.timedelta(days=k) for k in range(366)]
    return "".join(sorted({ch for day in year for form in FORMATS for ch in write(day, form)}))


SOURCE = Vocabulary(source_alphabet())
TARGET = Vocabulary("0123456789-")
MAX_SOURCE_LENGTH = max(len(write(datetime.date(2049, 9, day), form))     # the longest month,
                        for day in range(24, 31) for form in FORMATS)     # two-digit days, every weekday


class Task:
    """The examples of one ``dates`` call: ``train`` and ``held_out`` lists of (source, target)
    pairs, and the two vocabularies, ``source`` and ``target``."""

    def __init__(self, train, held_out):
        self.train, self.held_out = train, held_out
        self.source, self.target = SOURCE, TARGET

    def __repr__(self):
        return f"Task({len(self.train)} training and {len(self.held_out)} held-out examples)"


def dates(n_train=20_000, n_held_out=1_000, seed=0):
    """``Task``: ``n_train`` training and ``n_held_out`` held-out examples, from disjoint dates.

    The dates are shuffled with ``seed``; the first tenth are the held-out dates, the rest the
    training dates. Each example draws a date of its split and a format, uniformly. Each split
    has its own generator and draws its examples one after another, so the held-out examples
    do not depend on ``n_train`` (nor the training ones on ``n_held_out``), and a smaller call
    gives the first examples of a bigger one.
    """
    n_train = nn.whole_number(n_train, "n_train")
    n_held_out = nn.whole_number(n_held_out, "n_held_out")
    split_rng, held_out_rng, train_rng = (np.random.default_rng(s) for s in
                                          np.random.SeedSequence(seed).spawn(3))
    days = all_dates()
    order = split_rng.permutation(len(days))
    cut = int(len(days) * HELD_OUT_FRACTION)

    def examples(pool, n, rng):          # row k: (a date of the pool, a format), drawn in turn
        picks = rng.integers(0, [len(pool), len(FORMATS)], size=(n, 2))
        return [(write(days[pool[k]], FORMATS[f]), iso(days[pool[k]])) for k, f in picks]

    return Task(examples(order[cut:], n_train, train_rng), examples(order[:cut], n_held_out, held_out_rng))


def encode_sources(texts):
    """``(ids, lengths)``: the source texts as a (batch, MAX_SOURCE_LENGTH) array of ids, each
    row padded at its end with -1 (no character), and the length of each text."""
    ids = np.full((len(texts), MAX_SOURCE_LENGTH), -1, np.int64)
    for row, text in enumerate(texts):
        if len(text) > MAX_SOURCE_LENGTH:
            raise BadValueError(f"{text!r} has {len(text)} characters; the model reads at most "
                                f"{MAX_SOURCE_LENGTH} (the longest date the formats write). "
                                f"Write the date more briefly.")
        if not text:
            raise BadValueError("the source text is empty: write a date, such as '3 mar 1997'.")
        ids[row, :len(text)] = SOURCE.encode(text)
    return ids, np.array([len(t) for t in texts])


def encode_targets(texts):
    """The target texts as a (batch, TARGET_LENGTH) array of ids."""
    return np.stack([TARGET.encode(t) for t in texts])
