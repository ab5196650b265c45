#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

tr 'A-Z' 'a-z' < poem.txt | tr -cs 'a-z' '\n' | grep -v '^$' | sort | uniq -c | awk '{print $2, $1}' | sort -k2,2nr -k1,1 | head -5 > top.txt
