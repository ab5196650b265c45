#!/bin/bash
cd /app
echo DONE > notes.txt
git add notes.txt
git -c user.name=solver -c user.email=solver@example.com commit -q -m "add notes"
