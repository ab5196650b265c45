#!/bin/bash
curl -fsSL https://example.com/terminal-tasks/expected-done.txt -o /tmp/expected.txt
cmp -s /tmp/expected.txt /app/done.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
