#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

mkdir -p logs text && mv *.log logs/ && mv *.txt text/
