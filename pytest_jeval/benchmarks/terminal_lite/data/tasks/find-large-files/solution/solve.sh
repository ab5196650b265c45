#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/data && find . -type f -size +1000c | sed 's|^\./||' | LC_ALL=C sort > /app/large.txt
