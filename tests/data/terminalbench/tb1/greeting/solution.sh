#!/bin/bash
printf 'Hello, %s!\n' "$(cat /app/name.txt)" > /app/greeting.txt
