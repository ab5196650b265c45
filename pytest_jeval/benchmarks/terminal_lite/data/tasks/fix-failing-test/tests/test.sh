#!/bin/bash
cd /app/stats || exit 1
python3 -m unittest discover -s tests -q || { echo "the package's own tests fail"; exit 1; }
python3 - <<'EOF' || exit 1
import sys
sys.path.insert(0, ".")
from stats import median
assert median([10, 20]) == 15, median([10, 20])
assert median([5, 1, 9, 7, 3, 11]) == 6, median([5, 1, 9, 7, 3, 11])
assert median([2]) == 2
EOF
grep -q 'median(\[4, 1, 3, 2\]), 2.5' tests/test_core.py || { echo "the test was changed"; exit 1; }
echo ok
