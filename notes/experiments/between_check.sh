#!/bin/bash
# The first device call after the seventh session (notes/fast-kernels.md, "The next session's
# device calls"): on branch issue-21-between, carrying nothing, from the repository root. The
# tables' own configurations at cliff-1's 118 widths in bf16 and fp32 (the halves' boundary and
# the forwards from aligned windows are what changed), each run against cliff-1, then the
# prototype backward's edge variants. Writes five files under $OUT; about 4 minutes.
set -u
export PYTHONPATH=snippets TRITON_INTERPRET=0 PYTHONUNBUFFERED=1
W=$(python3 -c "import json; print(','.join(str(n) for n in sorted({r['N'] for r in
    json.load(open('notes/data/cliff-1-bfloat16.json'))['tuned']})))")
for d in bfloat16 float32; do
  python3 -m faster.tune --check --dtype $d --widths "$W" --budget-s 400 --deadline-s 500 \
    --out "$OUT/$d" > "$OUT/$d.log" 2>&1
  echo "== $d rc=$? (changes against cliff-1 beyond the spread)"
  python3 notes/experiments/cliff.py "$OUT/$d/tune.json" "notes/data/cliff-1-$d.json" | tail -80
done
timeout 240 python3 notes/experiments/aligned_rows.py --bwd-only --out "$OUT/aligned-bwd.json" | tail -12
