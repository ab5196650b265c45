#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

awk '{ $0 = tolower($0); gsub(/^[ \t]+|[ \t]+$/, ""); if ($0 != "" && !seen[$0]++) print }' subscribers.txt > unique.txt
