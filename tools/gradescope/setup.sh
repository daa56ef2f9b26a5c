#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu).
# It installs Python, bubblewrap (the grader's sandbox) and graphviz, then the course's
# package (minigraph, from course/ in this zip) into /autograder/venv.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq python3 python3-venv python3-pip bubblewrap graphviz >/dev/null
python3 -m venv /autograder/venv
cd /
/autograder/venv/bin/python -m pip install -q /autograder/source/course
# The reference answers are root's alone, in every copy: the grader (root) judges with them; a
# notebook graded without a sandbox runs as a user of its own, who must read none of them (a
# sandbox hides them anyway). The zip's own copy of the course (/autograder/source, where the
# grader's command line shows it) and pip's in-tree build/ go too: root's alone, build/ removed.
rm -rf /autograder/source/course/build
chmod -R go-rwx /autograder/source
answers="$(/autograder/venv/bin/python -I -c 'import minigraph.grading.answers as a; print(a.__path__[0])')"
chmod -R go-rwx "$answers"
