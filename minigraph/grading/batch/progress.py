"""A progress bar for grading a class, on the terminal (stderr): notebooks done of the total,
time elapsed, and an estimate of the time left.

    [##########..........]  12/24 notebooks  1m 40s elapsed  about 1m 40s left

On a terminal the bar is redrawn in place; in a log (CI) each result adds one line. The
estimate assumes the notebooks still to grade take as long, on average, as those graded.
"""

import sys
import time

WIDTH = 20


def duration(seconds):
    """``seconds`` as ``1h 02m``, ``3m 07s`` or ``42s``."""
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"


class ProgressBar:
    """``advance()`` once per graded notebook; ``done()`` at the end."""

    def __init__(self, total, stream=None, clock=time.monotonic):
        self.total, self.count, self.clock = total, 0, clock
        self.stream = stream or sys.stderr
        self.start = clock()
        self.live = getattr(self.stream, "isatty", lambda: False)()

    def line(self):
        elapsed = self.clock() - self.start
        filled = WIDTH * self.count // max(self.total, 1)
        text = (f"[{'#' * filled}{'.' * (WIDTH - filled)}]  {self.count}/{self.total} notebooks  "
                f"{duration(elapsed)} elapsed")
        if 0 < self.count < self.total:
            text += f"  about {duration(elapsed / self.count * (self.total - self.count))} left"
        return text

    def advance(self):
        self.count += 1
        self.stream.write(("\r" + self.line() + "\x1b[K") if self.live else self.line() + "\n")
        self.stream.flush()

    def done(self):
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
