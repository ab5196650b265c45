#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

awk '$2 == "ERROR" {gsub(/[][]/, "", $3); print $3}' service.log | sort | uniq -c | awk '{print $1, $2}' | sort -k1,1nr -k2,2 > errors.txt
