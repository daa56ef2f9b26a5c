"""A progress bar for long loops, in a terminal and in a notebook.

    bar = Progress(total=2000, label="train", rate_unit="chars", rate_per_step=32 * 64)
    for i in range(2000):
        loss = ...
        bar.update(loss=f"{loss:.3f}")
    bar.close()

draws one line that updates in place::

    train  42% |████████▍           | 840/2000  loss 1.932  12,345 chars/s  1:49 elapsed  2:31 left

In a terminal the line is rewritten with a carriage return (``\\r``); in Jupyter it is an HTML
widget whose text is replaced; in a log (CI, a file) ``LogLines`` writes each new text as a
line of its own. ``progress_line`` makes the text and is all the arithmetic: the rest only
decides where it goes and how often (at most ``every`` seconds apart, and always at the end).
``bar.write(text)`` prints a message above the bar without breaking it.
"""

import html
import sys
import time

BLOCKS = " ▏▎▍▌▋▊▉█"


def progress_line(done, total, elapsed, fields=None, width=20, label="", rate_unit="it",
                  rate_per_step=1, start=0):
    """The text of the bar after ``done`` of ``total`` steps, the last ``done - start`` of them
    in ``elapsed`` seconds (a resumed run starts at ``start``)."""
    fraction = min(done / total, 1.0) if total else 1.0
    eighths = int(fraction * width * 8)
    bar = (BLOCKS[-1] * (eighths // 8) + (BLOCKS[eighths % 8] if eighths < width * 8 else "")).ljust(width)
    parts = [f"{label}{' ' if label else ''}{fraction:4.0%} |{bar}| {done}/{total}"]
    parts += [f"{name} {value}" for name, value in (fields or {}).items()]
    if done > start and elapsed > 0:
        per_step = elapsed / (done - start)
        rate = rate_per_step / per_step
        parts.append(f"{rate:,.0f} {rate_unit}/s" if rate >= 10 else f"{rate:.2g} {rate_unit}/s")
        parts.append(f"{duration(elapsed)} elapsed  {duration(per_step * (total - done))} left"
                     if done < total else f"{duration(elapsed)} in all")
    return "  ".join(parts)


def duration(seconds):
    """``2:31`` or ``1:02:31``: seconds as minutes:seconds, with hours when there are any."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def in_notebook():
    """Is this code running in a Jupyter kernel (where a widget can be shown)?"""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class TerminalLine:
    """Draws the bar as one line of a text stream, rewritten in place."""

    def __init__(self, stream=None):
        self.stream, self.width = stream or sys.stderr, 0

    def show(self, text):
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = len(text)

    def write(self, text):
        self.stream.write("\r" + " " * self.width + "\r" + text + "\n")
        self.width = 0

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


class LogLines:
    """Writes each new text of the bar as a line of its own: for a stream that is no terminal
    (a CI log, a file), where lines rewritten with ``\\r`` would pile up into one."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr

    def show(self, text):
        self.write(text)

    def write(self, text):
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self):
        pass


class NotebookLine:
    """Draws the bar as an ipywidgets HTML line under the cell, messages in an Output above it."""

    def __init__(self):
        import ipywidgets
        from IPython.display import display
        self.messages = ipywidgets.Output()
        self.line = ipywidgets.HTML()
        display(ipywidgets.VBox([self.messages, self.line]))

    def show(self, text):
        self.line.value = f"<pre style='margin:0'>{html.escape(text, quote=False)}</pre>"

    def write(self, text):
        self.messages.append_stdout(text + "\n")

    def close(self):
        pass


def stream_display(stream=None):
    """A bar on a stream (stderr unless told): a line rewritten in place in a terminal, one line
    per update anywhere else (a log, a file, CI: ``stream`` is no terminal)."""
    stream = stream or sys.stderr
    return TerminalLine(stream) if stream.isatty() else LogLines(stream)


def default_display(stream=None):
    """Where a bar draws unless told: a widget in Jupyter, else ``stream_display(stream)``."""
    return NotebookLine() if in_notebook() else stream_display(stream)


class Progress:
    """A bar of ``total`` steps: ``update()`` after each step, ``close()`` at the end.

    ``start`` steps are already done (a resumed run); the rate and the time left count only the
    steps done since this bar began. ``display`` is where it draws: a ``TerminalLine``, a
    ``NotebookLine``, ``LogLines`` (``default_display`` picks one), or anything with
    ``show(text)``, ``write(text)`` and ``close()``.
    """

    def __init__(self, total, label="", rate_unit="it", rate_per_step=1, start=0, every=0.2,
                 display=None, clock=time.perf_counter):
        self.total, self.label, self.start, self.done = total, label, start, start
        self.rate_unit, self.rate_per_step, self.every, self.clock = rate_unit, rate_per_step, every, clock
        self.display = display or default_display()
        self.began = self.drawn = clock()
        self.fields, self.shown = {}, None
        self._draw()

    def update(self, steps=1, **fields):
        """``steps`` more steps are done; ``fields`` (name=value) are shown after the count."""
        self.done += steps
        self.fields.update(fields)
        if self.done >= self.total or self.clock() - self.drawn >= self.every:
            self._draw()

    def write(self, text):
        """Print ``text`` (a held-out loss, a sample) above the bar."""
        self.display.write(text)
        self._draw()

    def close(self):
        """Draw the last steps and fields, if they are not on show yet, and end the bar."""
        if self.shown != (self.done, self.fields):
            self._draw()
        self.display.close()

    @property
    def text(self):
        """The bar's current line."""
        return progress_line(self.done, self.total, self.clock() - self.began, self.fields,
                             label=self.label, rate_unit=self.rate_unit,
                             rate_per_step=self.rate_per_step, start=self.start)

    def _draw(self):
        self.display.show(self.text)
        self.drawn, self.shown = self.clock(), (self.done, dict(self.fields))
