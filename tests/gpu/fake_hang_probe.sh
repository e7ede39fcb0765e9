#!/usr/bin/env bash
# Dry-run stand-in for hang_probe.py (no torch, no GPU): one line, then
# nothing, ever.
echo "spinning (stand-in)"
exec sleep 100000
