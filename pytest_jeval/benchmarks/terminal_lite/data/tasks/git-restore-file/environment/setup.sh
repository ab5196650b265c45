set -e
git init -q -b main repo
cd repo
printf 'buy milk\n' > notes.txt && git add notes.txt && git commit -q -m "Add notes"
printf 'buy milk\ncall Sam\nv2 notes\n' > notes.txt && git commit -q -am "Update notes"
printf 'x = 1\n' > main.py && git add main.py && git commit -q -m "Add main"
git rm -q notes.txt && git commit -q -m "Remove notes"
printf 'x = 2\n' > main.py && git commit -q -am "Bump x"
