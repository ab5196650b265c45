#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

sed -i '/^\[server\]/,/^\[/{s/^port = .*/port = 9090/;s/^debug = .*/debug = false/}' app.ini
