#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/calc && sed -i 's/^calc: main.o$/calc: main.o util.o/; s/-o calc main.o$/-o calc main.o util.o/' Makefile

cd /app/calc && make && ./calc 2 3
