#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

tail -n +2 sales.csv | awk -F, '{s[$2]+=$3} END {for (r in s) printf "%s %.2f\n", r, s[r]}' | sort > totals.txt
