#!/usr/bin/env bash
# check_binaries.sh MAX_GLIBC BINARY...
# Fails when a binary needs a shared library beyond glibc and libgcc_s, or a
# GLIBC_ symbol version newer than MAX_GLIBC (what objdump -T lists).
set -euo pipefail
max=$1
shift
status=0
for binary in "$@"; do
  needed=$(objdump -p "$binary" | awk '/NEEDED/ {print $2}')
  extra=$(echo "$needed" | grep -Ev '^(libc|libm|libdl|libpthread|librt|libgcc_s)\.so\.|^ld-linux' || true)
  newest=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
  echo "$(basename "$binary"): needs $(echo $needed), newest glibc symbol $newest, $(stat -c %s "$binary") bytes"
  if [ -n "$extra" ]; then
    echo "FAIL: $binary needs libraries a fresh host lacks: $(echo $extra)"
    status=1
  fi
  if [ "$(printf '%s\n%s\n' "$newest" "$max" | sort -V | tail -n 1)" != "$max" ]; then
    echo "FAIL: $binary needs GLIBC_$newest, newer than $max"
    objdump -T "$binary" | grep "GLIBC_$newest" | head
    status=1
  fi
done
exit $status
