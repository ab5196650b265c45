#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/repo && git checkout -q -b feature/version main && echo 1.2.0 > VERSION && git add VERSION && git commit -q -m "Add VERSION file"
