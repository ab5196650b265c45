#!/bin/bash
expected='zoe@example.com
adam@example.com
bea@example.org
carl@example.net'
[ "$(cat /app/unique.txt 2>/dev/null)" = "$expected" ] || { echo "wrong unique.txt:"; cat /app/unique.txt; exit 1; }
echo ok
