#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/repo && git checkout "$(git log --format=%H -1 --diff-filter=D -- notes.txt)~1" -- notes.txt && git commit -q -m "Restore notes"
