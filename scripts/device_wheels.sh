#!/usr/bin/env bash
# Packs what the GPU build needs beyond the device's own torch, triton and transformers: QuACK
# and Liger-Kernel, the faster chapter's other providers, with QuACK's CuTe DSL. The device
# reaches no package registry, and one call carries at most 64 MiB with the tree (34 MB), so the
# wheels travel in four ignored folders, one a call, each under 33 MB:
#   .qw/a  part 1 of the CuTe DSL's cu13 libraries (unpacked, xz, split in three)
#   .qw/b  part 2, cuda-bindings
#   .qw/d  the notebook stack (nbclient, nbformat, jupytext, ipykernel as requirements.txt pins
#          them, and what they need): scripts/gpu_build.py checks for it before any step
#   .qw/c  part 3, the other wheels, build.sh (installs all of it into /tmp/qsite)
# Device calls, each within the 30 s a warm machine waits (notes/gpu-build.md):
#   A (carry .qw/a): mkdir -p /tmp/qstash && cp .qw/a/* /tmp/qstash/
#   B (carry .qw/b): cp .qw/b/* /tmp/qstash/
#   D (carry .qw/d): cp .qw/d/* /tmp/qstash/
#   C (carry .qw/c): bash .qw/c/build.sh, then PYTHONPATH=snippets:$(cat /tmp/qsite/PATHS)
# Usage: bash scripts/device_wheels.sh [cache folder, default /tmp/wh]
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${1:-/tmp/wh}
wheels=(quack-kernels==0.6.5 liger-kernel==0.8.5 nvidia-cutlass-dsl==4.8.1
        nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
        nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2
        torch-c-dlpack-ext==0.1.5 einops==0.8.2 cuda-bindings==13.5.0
        cuda-pathfinder==1.9.1 protobuf==7.36.2)
# the device's Python: 3.12 on x86-64 Linux
platform=(--python-version 3.12 --only-binary=:all: --platform manylinux_2_28_x86_64
          --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64)
mkdir -p "$cache"
pip download --quiet --progress-bar off --no-deps -d "$cache" "${platform[@]}" "${wheels[@]}"

rm -rf .qw && mkdir -p .qw/a .qw/b .qw/c .qw/d
grep -E '^(nbclient|nbformat|jupytext|ipykernel)==' requirements.txt | sed 's/ *#.*//' > .qw/notebooks.txt
pip download --quiet --progress-bar off -d .qw/d "${platform[@]}" -r .qw/notebooks.txt
rm .qw/notebooks.txt
unpacked=$(mktemp -d)
python3 -m zipfile -e "$cache"/nvidia_cutlass_dsl_libs_cu13-4.8.1-*.whl "$unpacked"
tar cf - -C "$unpacked" . | xz -9e -T2 > .qw/cu13.tar.xz
split -n 3 -d .qw/cu13.tar.xz .qw/cu13.part
rm -rf "$unpacked" .qw/cu13.tar.xz
mv .qw/cu13.part00 .qw/a/ && mv .qw/cu13.part01 .qw/b/ && mv .qw/cu13.part02 .qw/c/
cp "$cache"/cuda_bindings-13.5.0-*.whl .qw/b/
# the pinned versions alone: a cache that holds older ones sends only these
for pin in "${wheels[@]}"; do
  name=${pin%%==*}; version=${pin##*==}
  case "$name" in cuda-bindings|nvidia-cutlass-dsl-libs-cu13) continue ;; esac
  cp "$cache/${name//-/_}-$version"-*.whl .qw/c/
done
cat > .qw/c/build.sh <<'EOF'
#!/usr/bin/env bash
# On the device, after calls A, B and D: everything into /tmp/qsite; its PATHS line is for PYTHONPATH.
set -euo pipefail
here=$(dirname "$0")
site=/tmp/qsite
rm -rf "$site" && mkdir -p "$site"
cp "$here"/cu13.part02 /tmp/qstash/
cat /tmp/qstash/cu13.part0* | xz -d | tar x -C "$site"
# the CuTe DSL wheels share their top-level folder, which `pip install --target` would skip
for w in "$here"/nvidia_cutlass_dsl*.whl; do python3 -m zipfile -e "$w" "$site"; done
rest=$(ls "$here"/*.whl /tmp/qstash/*.whl | grep -v nvidia_cutlass_dsl)
python3 -m pip install --quiet --no-deps --no-index --target "$site" $rest
# the wheels' .pth file is not read from PYTHONPATH: name its folder there too
echo "$site:$site/nvidia_cutlass_dsl/dsl_packages" > "$site/PATHS"
PYTHONPATH="$(cat "$site/PATHS")" python3 -c "import quack.rmsnorm, liger_kernel; print('quack and liger import')"
EOF
du -sh .qw/*
