#!/bin/bash
cd /app/repo || exit 1
[ "$(git log -1 --format=%s)" = "Restore notes" ] || { echo "last commit is not 'Restore notes'"; exit 1; }
[ "$(git show HEAD:notes.txt)" = "$(printf 'buy milk\ncall Sam\nv2 notes')" ] || { echo "notes.txt content wrong"; exit 1; }
git log --format=%s | grep -qx "Remove notes" || { echo "history was rewritten"; exit 1; }
[ -z "$(git status --porcelain)" ] || { echo "uncommitted changes"; exit 1; }
echo ok
