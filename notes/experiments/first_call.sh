#!/usr/bin/env bash
# Issue 39: the next GPU session's first call (no wheels), at branch issue-39-next.
#   run: bash notes/experiments/first_call.sh     (writes under $OUT; about 9 minutes)
# 1. pytest snippets on the GPU (the save argument, the staged kernels' WIDTH);
# 2. where the classes rule's edges are (classes_backward.py's second width set);
# 3. the overread variant (one reduction a row);
# 4. item 3: every forward candidate at all 64 widths, both ops, bf16 (python -m faster.ladder reads it).
export PYTHONPATH=snippets PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/first_call}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider snippets > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"; tail -3 "$OUT/pytest.log"
timeout 120 python3 notes/experiments/classes_backward.py --out "$OUT/classes2.json" --budget-s 90 \
  > "$OUT/classes2.log" 2>&1; tail -2 "$OUT/classes2.log"
timeout 60 python3 notes/experiments/classes_overread.py --out "$OUT/overread.json" \
  > "$OUT/overread.log" 2>&1; tail -2 "$OUT/overread.log"
timeout 150 python3 -m faster.tune --out "$OUT/tune-fwd.json" --budget-s 110 --deadline-s 140 \
  --prior notes/data/tune-10.json,notes/data/tune-11-rmsnorm.json --prior-passes bwd --tables-only \
  > "$OUT/tune.log" 2>&1; tail -2 "$OUT/tune.log"
