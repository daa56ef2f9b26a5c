"""What the three training commands share (chapter 09's LSTM, chapter 10's translator, chapter
11's GPT): ``files``, a run's file, written atomically and checked when read; ``command``, the
loop that stops only between steps and the command line that never loses a run."""
