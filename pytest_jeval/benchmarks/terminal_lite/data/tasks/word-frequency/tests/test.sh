#!/bin/bash
expected="$(printf 'cat 5\nthe 5\non 4\na 3\ndog 2')"
[ "$(cat /app/top.txt 2>/dev/null)" = "$expected" ] || { echo "wrong top.txt:"; cat /app/top.txt; exit 1; }
echo ok
