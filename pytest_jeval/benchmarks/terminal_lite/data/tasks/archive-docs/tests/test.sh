#!/bin/bash
[ -f /app/docs.tar.gz ] || { echo "no archive"; exit 1; }
gzip -t /app/docs.tar.gz || { echo "not gzip"; exit 1; }
expected='docs/guide/install.md
docs/img/logo.txt
docs/index.md'
got="$(tar -tzf /app/docs.tar.gz | grep -v '/$' | sed 's|^\./||' | LC_ALL=C sort)"
[ "$got" = "$expected" ] || { echo "archive holds:"; echo "$got"; exit 1; }
[ -f /app/docs/notes.tmp ] && [ -f /app/docs/guide/draft.tmp ] || { echo "files were deleted"; exit 1; }
mkdir -p /tmp/x && tar -xzf /app/docs.tar.gz -C /tmp/x && [ "$(cat /tmp/x/docs/guide/install.md)" = "Install it." ] || { echo "bad content"; exit 1; }
echo ok
