#!/usr/bin/env bash
# Issue 39: one GPU call without wheels, for a session whose device time cannot hold the A/B/C build.
#   run: bash notes/experiments/session_call.sh     (writes under $OUT; about 5 minutes)
# 1. pytest snippets on the GPU at this head (the classes rule by element size);
# 2. the classes at 16384 lanes (bf16 12289 and 16383: 8 warps was not timed there) and fp32 12289;
# 3. item 3: every forward candidate in fp32 at 18 widths, both ops (python -m faster.ladder reads it).
export PYTHONPATH=snippets PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/session_call}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
git log -1 --format=%H > "$OUT/head.txt" 2>/dev/null
timeout 170 python3 -m pytest -q -n 8 -p no:cacheprovider snippets > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?" >> "$OUT/pytest.log"; tail -3 "$OUT/pytest.log"
timeout 70 python3 notes/experiments/classes_backward.py --out "$OUT/classes3.json" --budget-s 40 \
  --widths "bfloat16:12289,16383;float32:12289" > "$OUT/classes3.log" 2>&1; tail -2 "$OUT/classes3.log"
W=256,512,$(seq -s, 1024 1024 16384)
timeout 150 python3 -m faster.tune --out "$OUT/tune-fp32" --dtype float32 --widths "$W" --budget-s 100 \
  --deadline-s 135 --prior notes/data/tune-20-fp32.json --prior-passes bwd --tables-only \
  > "$OUT/tune.log" 2>&1; tail -2 "$OUT/tune.log"
