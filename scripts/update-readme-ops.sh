#!/usr/bin/env bash
# Regenerates the op table of README.md from the op schema: the output of
# `pixflow info --markdown` replaces what stands between <!-- ops:begin --> and <!-- ops:end -->.
#   scripts/update-readme-ops.sh [PIXFLOW_BINARY]   (default: build/pixflow)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/pixflow}"
table="$("$bin" info --markdown)"
python3 - "$root/README.md" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
s = open(path).read()
a, b = "<!-- ops:begin -->\n", "<!-- ops:end -->"
i, j = s.index(a) + len(a), s.index(b)
open(path, "w").write(s[:i] + table.rstrip("\n") + "\n" + s[j:])
PY
echo "README.md: op table updated from $bin info --markdown"
