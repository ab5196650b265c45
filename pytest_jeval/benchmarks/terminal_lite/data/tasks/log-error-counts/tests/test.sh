#!/bin/bash
expected='3 db
2 api
1 auth
1 cache'
[ "$(cat /app/errors.txt 2>/dev/null)" = "$expected" ] || { echo "wrong errors.txt:"; cat /app/errors.txt; exit 1; }
echo ok
