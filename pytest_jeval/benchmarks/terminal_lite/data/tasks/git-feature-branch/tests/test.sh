#!/bin/bash
cd /app/repo || exit 1
git rev-parse --verify -q feature/version >/dev/null || { echo "no branch feature/version"; exit 1; }
[ "$(git log -1 --format=%s feature/version)" = "Add VERSION file" ] || { echo "wrong commit message"; exit 1; }
[ "$(git show feature/version:VERSION)" = "1.2.0" ] || { echo "VERSION wrong on the branch"; exit 1; }
[ "$(git log -1 --format=%s main)" = "Add app" ] || { echo "main moved"; exit 1; }
[ "$(git rev-parse feature/version~1)" = "$(git rev-parse main)" ] || { echo "the branch does not start at main"; exit 1; }
echo ok
