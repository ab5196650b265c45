#!/bin/bash
cd /app/bin || exit 1
for f in deploy report.py cleanup.sh; do [ -x "$f" ] || { echo "$f is not executable"; exit 1; }; done
for f in README data.txt; do
  case "$(stat -c %A "$f")" in *x*) echo "$f is executable"; exit 1;; esac
done
[ "$(./deploy)" = deploy ] && [ "$(./cleanup.sh)" = clean ] || { echo "scripts do not run"; exit 1; }
echo ok
