#!/bin/bash
cd /app || exit 1
[ "$(cat text/alpha.txt)" = "first note" ] && [ "$(cat text/gamma.txt)" = "second note" ] || { echo "text files wrong"; exit 1; }
[ "$(cat logs/beta.log)" = "2024-01-01 boot" ] || { echo "logs/beta.log wrong"; exit 1; }
[ "$(cat logs/delta.log)" = "2024-01-02 shutdown" ] || { echo "logs/delta.log wrong"; exit 1; }
[ -f logs/epsilon.log ] || { echo "logs/epsilon.log missing"; exit 1; }
[ -f inventory.csv ] || { echo "inventory.csv moved"; exit 1; }
[ -z "$(ls *.txt *.log 2>/dev/null)" ] || { echo "loose files left"; exit 1; }
[ "$(ls logs | wc -l)" = 3 ] && [ "$(ls text | wc -l)" = 2 ] || { echo "wrong folder contents"; exit 1; }
echo ok
