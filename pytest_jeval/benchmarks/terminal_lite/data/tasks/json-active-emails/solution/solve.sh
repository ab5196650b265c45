#!/bin/bash
# Run in /app. Each blank-line-separated block is also run on its own (tests/test_terminal_e2e.py).

python3 -c 'import json; u = json.load(open("users.json")); print("\n".join(sorted({x["email"].lower() for x in u if x.get("active")})))' > emails.txt
