"""pip install, with a short line of progress instead of pip's page of output or its silence.

    python tools/pip_progress.py LOG PIP-ARGS...     (the Makefile: `make lab`'s first run)

Runs ``python -m pip install PIP-ARGS`` with this Python, writes pip's whole output to LOG, and
prints a line every 10 packages pip finds, one when it starts installing them, one every 20 s
in which pip says nothing (installing JupyterLab's hundred packages takes a while) and one at
the end. If pip fails, the last 30 lines of its output follow, with the log's path.
"""

import subprocess
import sys
import threading
import time
from pathlib import Path

EVERY = 10                 # packages between two "found" lines
QUIET_SECONDS = 20         # silence after which a "still installing" line is printed


def say(text):
    print(f"  {text}", flush=True)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    log_path, pip_args = Path(argv[0]), argv[1:]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    last_line = [start]
    found = 0
    done = threading.Event()

    def heartbeat():
        while not done.wait(5):
            if time.monotonic() - last_line[0] >= QUIET_SECONDS:
                say(f"still installing... ({time.monotonic() - start:.0f} s)")
                last_line[0] = time.monotonic()

    threading.Thread(target=heartbeat, daemon=True).start()
    # -u: pip writes into a pipe here, which Python would otherwise buffer until the end
    command = [sys.executable, "-u", "-m", "pip", "install", "--progress-bar", "off", *pip_args]
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            log.write(line)
            if line.startswith("Collecting "):
                found += 1
                if found % EVERY == 0:
                    say(f"{found} packages found ({line.split()[1]})")
                    last_line[0] = time.monotonic()
            elif line.startswith("Installing collected packages"):
                count = line.count(",") + 1
                say(f"installing {count} package{'s' if count > 1 else ''}...")
                last_line[0] = time.monotonic()
        code = proc.wait()
    done.set()
    if code != 0:
        lines = log_path.read_text(encoding="utf-8").splitlines()
        print("\n".join(lines[-30:]), file=sys.stderr)
        print(f"pip failed (exit {code}); its whole output is in {log_path}", file=sys.stderr)
        return code
    say(f"done in {time.monotonic() - start:.0f} s (pip's output: {log_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
