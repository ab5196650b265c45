#!/bin/bash
echo ok > /app/done.txt
