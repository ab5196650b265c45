#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/bin && for f in *; do if head -c2 "$f" | grep -q '^#!'; then chmod u+x "$f"; else chmod a-x "$f"; fi; done
