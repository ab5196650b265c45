#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

cd /app/stats && python3 - <<'EOF'
import re
p = "stats/core.py"
s = open(p).read()
s = s.replace("        return ordered[mid]\n    return ordered[mid]\n", "        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n")
open(p, "w").write(s)
EOF

cd /app/stats && python3 -m unittest discover -s tests
