#!/bin/bash
expected='east 10.30
north 12.75
south 104.25
west 0.10'
[ -f /app/totals.txt ] || { echo "totals.txt missing"; exit 1; }
[ "$(cat /app/totals.txt)" = "$expected" ] || { echo "got:"; cat /app/totals.txt; exit 1; }
echo ok
