#!/bin/bash
expected='big.bin
deep/er/huge.dat
logs/old.log'
[ "$(cat /app/large.txt 2>/dev/null)" = "$expected" ] || { echo "wrong large.txt:"; cat /app/large.txt; exit 1; }
echo ok
