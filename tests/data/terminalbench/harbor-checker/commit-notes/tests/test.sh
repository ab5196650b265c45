#!/bin/bash
# The verifier runs the image's git and python3 (as many Terminal-Bench verifiers do), from the agent's /app,
# and its exit status means something: 0 only when both checks pass.
cd /app || exit 1
git status --short > /dev/null
subject=$(git log -1 --format=%s)
echo "last commit: $subject"
python3 /tests/check_notes.py
notes=$?
if [ "$subject" = "add notes" ] && [ "$notes" -eq 0 ] && git diff --quiet HEAD -- notes.txt; then
  echo 1 > /logs/verifier/reward.txt
  exit 0
fi
echo 0 > /logs/verifier/reward.txt
exit 1
