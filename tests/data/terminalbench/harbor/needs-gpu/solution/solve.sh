#!/bin/bash
nvidia-smi --query-gpu=name --format=csv,noheader > /app/gpu.txt
