#!/bin/bash
cd /app/calc || exit 1
make clean >/dev/null 2>&1
make >/tmp/build.log 2>&1 || { echo "make failed"; cat /tmp/build.log; exit 1; }
[ "$(./calc 2 3)" = 5 ] && [ "$(./calc -7 100)" = 93 ] || { echo "calc gives wrong sums"; exit 1; }
grep -q 'return a + b' util.c || { echo "util.c was changed"; exit 1; }
echo ok
