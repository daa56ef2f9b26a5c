"""What the three models' training shares (chapter 09's LSTM, chapter 10's translator, chapter
11's GPT), one module per idea; ``charlm``, ``translate`` and ``gpt`` import this package and
the engine, never each other:

    text            characters as ids, the train / held-out split, streams and chunks, the
                    units of a loss (chapter 09 reads it as ``mg.charlm.text``)
    sample          writing text with a language model, one character at a time
    scores          the loss of each predicted character; the lines that report a held-out loss
    step            a step's loss and gradients, by the compiled step (the default) or by
                    the interpreter, the same numbers bit for bit
    run             a run's settings (to a dict and back), a language model's run (its text,
                    held-out scores, samples), the end of a step (clip, update, count)
    files           a run's file, written atomically and checked when read
    command         the loop that stops only between steps and the command line that never
                    loses a run
    language_model  the command of a language model on Tiny Shakespeare (the LSTM's, the GPT's)
"""
