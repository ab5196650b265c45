#!/bin/bash
expected='ann@example.com
cy@example.org
di@example.net'
[ "$(cat /app/emails.txt 2>/dev/null)" = "$expected" ] || { echo "wrong emails.txt:"; cat /app/emails.txt; exit 1; }
echo ok
