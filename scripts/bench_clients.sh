#!/usr/bin/env bash
# Benchmarks that nobody on this project wrote, on coopvk, on Mesa lavapipe 26 and (for llama.cpp)
# on llama.cpp's own CPU backend, in one run; a summary of ratios and of fractions of this CPU's
# peak or memory bandwidth, CSV files and a chart. Speed is measured here, never asserted. About
# 25 minutes with the defaults on a quiet 2-core VM (vk_cooperative_matrix_perf 9, test-backend-ops
# 14, of which lavapipe 9).
#
#   scripts/bench_clients.sh                                   # set up, build, run all three parts
#   BENCH_CMP_TYPES="fp16_fp32 s8_s32" BENCH_CMP_DIM=2048 scripts/bench_clients.sh
#   BENCH_CLIENTS_PARTS=ops BENCH_OPS_CASES='^mm_' scripts/bench_clients.sh
#
# The parts (BENCH_CLIENTS_PARTS, default "cmp ops llama-bench"):
#   cmp          NVIDIA's vk_cooperative_matrix_perf (../shared/benchmarks): every configuration of
#                each type, on coopvk and lavapipe: first --correctness (its own 256^3 check,
#                pass/fail per configuration), then the timed run at --dim=BENCH_CMP_DIM. lavapipe
#                26 lists VK_NV_cooperative_matrix2 and the program's vkCreateDevice then fails
#                (VK_ERROR_FEATURE_NOT_PRESENT): after the first such failure its runs are skipped
#   ops          llama.cpp's `test-backend-ops perf` for chosen MUL_MAT, FLASH_ATTN_EXT, SOFT_MAX,
#                RMS_NORM and ADD cases, one process per case and driver (perf mode does not check
#                results; a crash or a timeout is reported). Its CPU backend gets half the hardware
#                threads, and it has no option for more
#   llama-bench  `llama-bench -p 512 -n 16 -fa 1` on a 52M-parameter F16 model
# Each llama.cpp program runs on coopvk and lavapipe (GGML_VK_VISIBLE_DEVICES=0, the driver's
# manifest in VK_DRIVER_FILES) and on llama.cpp's CPU backend with no Vulkan driver visible (with
# the device visible, even -ngl 0 offloads large batches to it). lavapipe runs through sid's
# dynamic loader (third_party/sid-bench, scripts/setup.sh --bench), as in scripts/bench.sh.
#
# Fractions of peak are against the CPU's peak for the instruction class of the types (f16, fp8:
# f32 FMA, or vfmadd231ph where the CPU has it; bf16: vdpbf16ps; s8, u8 and llama.cpp's q4_0 and
# q8_0: vpdpbusd) as bench_coopmat_gemm measures it in its own process (bench/cpu_peak.h: clock x
# issue rate x ops per instruction x hardware threads); fractions of bandwidth are against the
# better of bench_elementwise's C++ loops (z = a*x + y over 16M floats in mapped buffers, 12 bytes
# an element, on one and on all threads). Both come from scripts/bench.sh's logs when it calls
# this script (the bandwidth only when its axpy streamed 16M floats or more), else from short runs
# of those two programs on coopvk here.
#
# Environment (defaults):
#   COOPVK_BUILD_DIR (build/)      the driver build; logs go to BUILD/bench-logs
#   BENCH_CLIENTS_PARTS ("cmp ops llama-bench"), BENCH_CLIENTS_DRIVERS ("coopvk lavapipe cpu")
#   BENCH_CLIENTS_BUILD (1)        0: do not run scripts/setup.sh --bench and scripts/build.sh first
#   BENCH_CLIENTS_FROM_BENCH ()    set by scripts/bench.sh: it has set up and built, and its logs
#                                  hold the peaks (coopmat_*.coopvk.log) and bandwidth (axpy.coopvk.log)
#   BENCH_CMP_DIR (../shared/benchmarks/vk_cooperative_matrix_perf)
#   BENCH_CMP_DIM (1024)           M = N = K of the timed run; at 2048 all configurations take
#                                  about 8 times as long (over an hour on coopvk on a 2-core VM)
#   BENCH_CMP_TYPES (all)          types to run, by shader name: fp16_fp16 fp16_fp32 bf16_fp32 s8_s32
#                                  u8_u32 e4m3_fp16 e4m3_fp32 e5m2_fp16 e5m2_fp32
#   BENCH_CMP_TIMEOUT (1800)       seconds for one type's timed run on one driver
#   LLAMA_DIR (/tmp/llama)         llama.cpp as conformance/clients/get-llama.sh sets it up (run
#                                  here when missing and npm, git and g++ are there)
#   BENCH_OPS_CASES (all)          a regex over the case names (mm_f16_n1, fa_hs72_kv5776, ...;
#                                  the list is OPS_CASES below)
#   BENCH_OPS_TIMEOUT (240)        seconds for one case on one driver
#   BENCH_LLAMA_MODEL ()           a GGUF model; default: make_tiny_gguf.py's 52M F16 model
#                                  (1024 4 2816 16 16 1), made once into BUILD/bench-models/
#   BENCH_LLAMA_PROMPT (512), BENCH_LLAMA_GEN (16), BENCH_LLAMA_REPS (3), BENCH_LLAMA_TIMEOUT (900)
#   BENCH_CLIENTS_REPORT_ONLY ()   1: no runs; the summary, CSV files and chart again from the logs
#                                  of the last run (with the same BENCH_* settings)
#   COOPVK_PROGRESS_INTERVAL (20)  seconds between progress lines on stderr ("[clients] 12/60 runs
#                                  (20.0%), 3m10s elapsed, ~12m remaining; now ..."); 0: none
#
# Output in BUILD/bench-logs: summary-clients.txt (what is printed at the end), clients_cmp.csv,
# clients_ops.csv, clients_llama_bench.csv, clients.gp and the chart clients.png (coopvk and
# lavapipe against the CPU backend per case), and one log per run in clients/. Exit status 1 when
# a run on coopvk crashed, exited non-zero, computed a wrong result or ran on another device (a
# timeout is reported, not counted); failures on lavapipe or the CPU backend are reported only; 2
# when there is no driver build.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR/.. source=scripts/lib/progress.sh
. "$ROOT/scripts/lib/progress.sh"
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
PARTS=${BENCH_CLIENTS_PARTS:-"cmp ops llama-bench"}
DRIVERS=${BENCH_CLIENTS_DRIVERS:-"coopvk lavapipe cpu"}
CMP_DIR=${BENCH_CMP_DIR:-$ROOT/../shared/benchmarks/vk_cooperative_matrix_perf}
CMP_DIM=${BENCH_CMP_DIM:-1024}
CMP_TYPES=${BENCH_CMP_TYPES:-}
CMP_TIMEOUT=${BENCH_CMP_TIMEOUT:-1800}
LLAMA_DIR=${LLAMA_DIR:-/tmp/llama}
OPS_SELECT=${BENCH_OPS_CASES:-}
OPS_TIMEOUT=${BENCH_OPS_TIMEOUT:-240}
LB_MODEL=${BENCH_LLAMA_MODEL:-}
LB_PROMPT=${BENCH_LLAMA_PROMPT:-512}
LB_GEN=${BENCH_LLAMA_GEN:-16}
LB_REPS=${BENCH_LLAMA_REPS:-3}
LB_TIMEOUT=${BENCH_LLAMA_TIMEOUT:-900}

die() { echo "bench_clients: $*" >&2; exit 2; }
say() { echo "bench_clients: $*" >&2; }
has_part() { [[ " $PARTS " == *" $1 "* ]]; }
has_driver() { [[ " $DRIVERS " == *" $1 "* ]]; }

# The llama.cpp cases: NAME|OP|SELECT|MEASURE|LABEL. SELECT is test-backend-ops' -p regex over the
# perf-mode case parameters, or "file:NE0 NE1" for an f32 op that perf mode has no case of (given
# to --test-file). MEASURE says what the result is held against: peak:TYPES (GFLOP/s against the
# peak of bench_coopmat_gemm TYPES), bytes:N (N bytes a run, as GB/s against the bandwidth), gbps
# (test-backend-ops' own GB/s against the bandwidth), us (microseconds a run, nothing to hold it
# against: an op too small to be anything but overhead). Matrix sizes: m=4096 k=14336 (a 7B
# model's FFN down projection); attention: a Qwen3-VL prompt (hsk=72, 5776 tokens) and a decode
# step over a 4096-token cache. test-backend-ops sizes each timed graph for a GPU (about 100 GFLOP
# or 32 GiB of traffic), so on coopvk and lavapipe every case takes tens of seconds or more;
# memory-bound cases cost the same whatever their size, hence one or two a kind.
MM_W=$((4096 * 14336))
MM_IO=$(((4096 + 14336) * 4))
OPS_CASES=(
  "mm_f16_n1|MUL_MAT|^type_a=f16,type_b=f32,m=4096,n=1,k=14336,|bytes:$((MM_W * 2 + MM_IO))|MUL_MAT f16 n=1"
  "mm_q4_0_n1|MUL_MAT|^type_a=q4_0,type_b=f32,m=4096,n=1,k=14336,|bytes:$((MM_W * 18 / 32 + MM_IO))|MUL_MAT q4_0 n=1"
  "mm_q8_0_n1|MUL_MAT|^type_a=q8_0,type_b=f32,m=4096,n=1,k=14336,|bytes:$((MM_W * 34 / 32 + MM_IO))|MUL_MAT q8_0 n=1"
  "mm_f16_n512|MUL_MAT|^type_a=f16,type_b=f32,m=4096,n=512,k=14336,|peak:f16_f32|MUL_MAT f16 n=512"
  "mm_q4_0_n512|MUL_MAT|^type_a=q4_0,type_b=f32,m=4096,n=512,k=14336,|peak:s8_s32|MUL_MAT q4_0 n=512"
  "mm_q8_0_n512|MUL_MAT|^type_a=q8_0,type_b=f32,m=4096,n=512,k=14336,|peak:s8_s32|MUL_MAT q8_0 n=512"
  "fa_hs128_kv4096_nb1|FLASH_ATTN_EXT|^hsk=128,hsv=128,nh=8,nr23=\[1,1\],kv=4096,nb=1,|bytes:$((2 * 4096 * 128 * 8 * 2))|FLASH_ATTN hs128 kv4096 nb=1"
  "fa_hs72_kv5776|FLASH_ATTN_EXT|^hsk=72,hsv=72,nh=16,nr23=\[1,1\],kv=5776,nb=5776,|peak:f16_f32|FLASH_ATTN hs72 kv=nb=5776"
  "softmax_4096x4096x5|SOFT_MAX|^type=f32,ne=\[4096,4096,5,1\],mask=0,|gbps|SOFT_MAX 4096x4096x5"
  "rms_norm_4096x4096|RMS_NORM|file:4096 4096|gbps|RMS_NORM 4096x4096"
  "add_4096x512|ADD|^type=f32,ne=\[4096,1,1,1\],nr=\[1,512,1,1\],|gbps|ADD 4096x512"
  "add_4096|ADD|^type=f32,ne=\[4096,1,1,1\],nr=\[1,1,1,1\],|us|ADD 4096 (cost of an op)"
)
# the bench_coopmat_gemm type whose peak a vk_cooperative_matrix_perf shader type is held against
cmp_peak_type() {
  case $1 in
    fp16_fp16) echo f16_f16 ;;
    fp16_fp32) echo f16_f32 ;;
    bf16_*) echo bf16_f32 ;;
    s8_* | u8_*) echo s8_s32 ;;
    *) echo e4m3_f32 ;;   # fp8 in f32 arithmetic, as bench_coopmat_gemm holds e4m3
  esac
}

for v in CMP_DIM CMP_TIMEOUT OPS_TIMEOUT LB_PROMPT LB_GEN LB_REPS LB_TIMEOUT; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive whole number (got '${!v}')"
done

REPORT_ONLY=${BENCH_CLIENTS_REPORT_ONLY:-}
[ "$REPORT_ONLY" != 0 ] || REPORT_ONLY=''
if [ -z "$REPORT_ONLY" ] && [ -z "${BENCH_CLIENTS_FROM_BENCH:-}" ] && [ "${BENCH_CLIENTS_BUILD:-1}" != 0 ]; then
  "$ROOT/scripts/setup.sh" --bench
  COOPVK_BUILD_DIR=$BUILD "$ROOT/scripts/build.sh"
fi
[ -f "$BUILD/coopvk_icd.json" ] || die "no $BUILD/coopvk_icd.json: build the driver first (scripts/build.sh)"
SB=$ROOT/third_party/sid-bench
LOGS=$BUILD/bench-logs
CL=$LOGS/clients
mkdir -p "$CL"
if [ -z "$REPORT_ONLY" ]; then
  rm -rf "${CL:?}"/*
  rm -f "$LOGS"/clients_*.csv "$LOGS"/summary-clients.txt "$LOGS"/clients.gp "$LOGS"/clients.png
  # the machine's load when the run starts and ends: on a shared machine, part of the numbers
  cut -d ' ' -f 1-3 /proc/loadavg > "$CL/loadavg.start"
fi
START=$(date +%s)
NOTES=()   # lines for the summary: parts or drivers left out, and why

if has_driver lavapipe && [ ! -x "$SB/bin/sid-run" ]; then
  NOTES+=("lavapipe left out: no $SB (scripts/setup.sh --bench)")
  DRIVERS=${DRIVERS//lavapipe/}
fi

# ---- running ----------------------------------------------------------------------------------

# run DRIVER TAG LIMIT DIR CMD...: CMD in DIR on DRIVER (coopvk, lavapipe or cpu: no Vulkan driver
# at all) within LIMIT seconds; output to $CL/TAG.DRIVER.log, the outcome (ok, timeout, "exit N",
# "signal NAME") to $CL/TAG.DRIVER.status. With COUNT_ONLY set it only counts the run.
COUNT_ONLY='' RUNS_TOTAL=0 RUNS_DONE=0
run() {
  local driver=$1 tag=$2 limit=$3 dir=$4 rc=0 t0=$SECONDS status
  shift 4
  if [ -n "$COUNT_ONLY" ]; then RUNS_TOTAL=$((RUNS_TOTAL + 1)); return 0; fi
  progress_set "$RUNS_DONE" "now $tag on $driver"
  local env=(VK_LOADER_LAYERS_DISABLE='~all~') runner=()
  case $driver in
    coopvk) env+=(GGML_VK_VISIBLE_DEVICES=0 VK_DRIVER_FILES="$BUILD/coopvk_icd.json" VK_ICD_FILENAMES="$BUILD/coopvk_icd.json") ;;
    lavapipe)
      env+=(GGML_VK_VISIBLE_DEVICES=0 VK_DRIVER_FILES="$SB/lvp_icd.json" VK_ICD_FILENAMES="$SB/lvp_icd.json" MESA_SHADER_CACHE_DISABLE=true)
      runner=("$SB/bin/sid-run") ;;
    cpu) env=(-u GGML_VK_VISIBLE_DEVICES "${env[@]}" VK_DRIVER_FILES="$CL/no-driver.json" VK_ICD_FILENAMES="$CL/no-driver.json") ;;
  esac
  printf '== %s on %s: %s\n' "$tag" "$driver" "$*" > "$CL/$tag.$driver.log"
  # stdbuf before the runner: sid's loader keeps the LD_PRELOAD, so the program's stdout is line
  # buffered and a run cut short by the timeout still leaves all the lines it printed. The outer
  # braces keep bash's own "Aborted" line for a crashed run off the terminal (the status says it).
  { (cd "$dir" && exec env "${env[@]}" timeout -k 10 "$limit" stdbuf -oL "${runner[@]}" "$@") \
      >> "$CL/$tag.$driver.log" 2>&1 || rc=$?; } 2> /dev/null
  # timeout(1) exits 124 when it stopped the program, 137 when it had to kill it (so does an OOM
  # kill, hence the clock)
  if [ "$rc" = 0 ]; then status=ok
  elif [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ $((SECONDS - t0)) -ge "$limit" ]; }; then status=timeout
  elif [ "$rc" -gt 128 ]; then status="signal $(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
  else status="exit $rc"
  fi
  echo "$status $((SECONDS - t0))" > "$CL/$tag.$driver.status"
  [ "$status" = ok ] || printf '!! %s on %s: %s after %ss (log %s)\n' "$tag" "$driver" "$status" $((SECONDS - t0)) "$CL/$tag.$driver.log"
  RUNS_DONE=$((RUNS_DONE + 1))
  progress_set "$RUNS_DONE"
}
# wrong_device LOG DRIVER: nothing when the log shows the driver's device (ggml-vulkan's "ggml_vulkan:
# 0 = NAME", vk_cooperative_matrix_perf's "using physical device 0: NAME"), else the device it shows
wrong_device() {
  local want seen
  seen=$(sed -n 's/^ggml_vulkan: 0 = \(.*\)/\1/p; s/^using physical device [0-9]*: \(.*\)/\1/p' "$1" 2>/dev/null | head -n 1)
  case $2 in
    coopvk) want=coopvk ;;
    lavapipe) want=llvmpipe ;;
    *) [ -z "$seen" ] || echo "$seen"; return 0 ;;   # the CPU rows must see no Vulkan device
  esac
  [[ $seen == *"$want"* ]] || echo "${seen:-no Vulkan device}"
}
# skip DRIVER TAG WHY: a counted run not made, recorded as "skipped: WHY"
skip() {
  if [ -n "$COUNT_ONLY" ]; then RUNS_TOTAL=$((RUNS_TOTAL + 1)); return 0; fi
  echo "skipped: $3 0" > "$CL/$2.$1.status"
  RUNS_DONE=$((RUNS_DONE + 1))
  progress_set "$RUNS_DONE"
}
# status TAG DRIVER: the run's outcome (ok, timeout, exit N, signal NAME), or "not run"
status() { if [ -f "$CL/$1.$2.status" ]; then sed 's/ [0-9]*$//' "$CL/$1.$2.status"; else echo "not run"; fi; }
seconds() { if [ -f "$CL/$1.$2.status" ]; then awk '{ print $NF }' "$CL/$1.$2.status"; else echo 0; fi; }

# ---- the CPU's peaks and bandwidth ------------------------------------------------------------

# PEAK_TYPES: the bench_coopmat_gemm types whose peak the selected work is held against
PEAK_TYPES=''
need_peak() { [[ " $PEAK_TYPES " == *" $1 "* ]] || PEAK_TYPES="$PEAK_TYPES $1"; }
# key FILE KEY: the number after KEY in FILE (last such line), or nothing
key() { [ -n "$1" ] && [ -f "$1" ] && awk -v k="$2" '$1 == k { v = $2 } END { if (v != "") print v }' "$1"; }
# bench_log KEY LOGS...: the newest of bench.sh's LOGS that has KEY (only when bench.sh called us)
bench_log() {
  [ -n "${BENCH_CLIENTS_FROM_BENCH:-}" ] || return 0
  local k=$1 f best=''
  shift
  for f in "$@"; do
    [ -n "$(key "$f" "$k")" ] || continue
    if [ -z "$best" ] || [ "$f" -nt "$best" ]; then best=$f; fi
  done
  [ -z "$best" ] || echo "$best"
}
# peak_log TYPES: the log holding bench_coopmat_gemm's peak for TYPES: bench.sh's, else our own
peak_log() {
  local f
  f=$(bench_log coopmat_gemm_peak_gflops "$LOGS"/coopmat_"$1"_*.coopvk.log)
  echo "${f:-$CL/peak_$1.coopvk.log}"
}
# bw_log: the log holding bench_elementwise's C++ loops: bench.sh's axpy run when it streamed at
# least 16M floats (fewer may fit in the cache), else our own run
BW_ELEMENTS=16777216
bw_log() {
  local f
  f=$(bench_log elementwise_cpuN_gbps "$LOGS/axpy.coopvk.log")
  if [ -n "$f" ] && ! awk -v n="$BW_ELEMENTS" '/^z = a\*x \+ y over [0-9]+ / { if ($7 >= n) ok = 1 } END { exit !ok }' "$f"; then f=''; fi
  echo "${f:-$CL/bandwidth.coopvk.log}"
}
# peak_runs: the peaks and the bandwidth that bench.sh's logs do not have, measured on coopvk by
# bench_coopmat_gemm (a 64^3 GEMM after the peak probes) and bench_elementwise
peak_runs() {
  local t
  for t in $PEAK_TYPES; do
    [ "$(peak_log "$t")" = "$CL/peak_$t.coopvk.log" ] || continue
    run coopvk "peak_$t" 300 "$ROOT" "$BUILD/bench/bench_coopmat_gemm" "$t" 64 1
  done
  if [ -n "$NEED_BW" ] && [ "$(bw_log)" = "$CL/bandwidth.coopvk.log" ]; then
    run coopvk bandwidth 300 "$ROOT" "$BUILD/bench/bench_elementwise" "$BW_ELEMENTS" 10
  fi
}
peak_gflops() { key "$(peak_log "$1")" coopmat_gemm_peak_gflops || true; }
peak_class() {
  local f
  f=$(peak_log "$1")
  [ -n "$f" ] && [ -f "$f" ] && awk '$1 == "coopmat_gemm_peak_class" { $1 = ""; v = substr($0, 2) } END { print v }' "$f"
}
# bandwidth: the best of bench_elementwise's one-thread and all-thread C++ loops, GB/s
bandwidth() {
  local f
  f=$(bw_log)
  awk '$1 == "elementwise_cpu1_gbps" || $1 == "elementwise_cpuN_gbps" { if ($2 > v) v = $2 } END { if (v > 0) print v }' "$f" 2>/dev/null || true
}

# ---- part 1: vk_cooperative_matrix_perf -------------------------------------------------------

CMP_BIN=$CMP_DIR/vk_cooperative_matrix_perf
if has_part cmp; then
  if [ ! -x "$CMP_BIN" ]; then
    NOTES+=("vk_cooperative_matrix_perf left out: no $CMP_BIN")
    PARTS=${PARTS//cmp/}
  elif [ -z "$CMP_TYPES" ]; then
    # every type it has a shared-memory shader for: shaders/shmemTYPES.spv, TYPES = A_D
    for f in "$CMP_DIR"/shaders/shmem*_*.spv; do f=${f##*/shmem}; CMP_TYPES+="${f%.spv} "; done
  fi
fi
# cmp_dir TYPES: a folder whose shaders/ holds only that type's shaders, for the program to run in
# (it opens shaders/*.spv relative to its working directory and skips the types it finds none of)
cmp_dir() {
  local d=$CL/cmp-$1
  if [ ! -d "$d/shaders" ]; then
    mkdir -p "$d/shaders"
    ln -s "$CMP_DIR/shaders/shmem$1.spv" "$d/shaders/"
    [ ! -f "$CMP_DIR/shaders/workgroup$1.spv" ] || ln -s "$CMP_DIR/shaders/workgroup$1.spv" "$d/shaders/"
  fi
  echo "$d"
}
# cmp_no_device DRIVER: the tag of an earlier run on DRIVER that failed before its first shader
# (vkCreateDevice and the like: lavapipe 26 lists VK_NV_cooperative_matrix2, and the program asks
# for features of it that lavapipe does not have), else nothing
CMP_NO_DEVICE=()
cmp_no_device() {
  local f
  for f in "${CMP_NO_DEVICE[@]}"; do [[ $f != *".$1" ]] || { echo "${f%.*}"; return 0; }; done
}
# cmp_error LOG: what the program said when it gave up ("CHECK_RESULT failed: VkResult -8 at
# FILE:LINE" and the like), or nothing
cmp_error() { grep -m 1 -E 'CHECK_RESULT failed|^error|what\(\)' "$1" 2>/dev/null | sed 's/ at [^ ]*$//' || true; }
# cmp_failed_run TAG DRIVER: the run whose log tells why TAG has no results (TAG itself, or the
# earlier run it was skipped for)
cmp_failed_run() {
  local st
  st=$(status "$1" "$2")
  if [[ $st == "skipped: as "* ]]; then echo "${st#skipped: as }"; else echo "$1"; fi
}
cmp_run() {
  local d=$1 tag=$2 first
  shift 2
  first=$(cmp_no_device "$d")
  if [ -n "$first" ]; then skip "$d" "$tag" "as $first"; return 0; fi
  run "$d" "$tag" "$@"
  [ -z "$COUNT_ONLY" ] || return 0
  if [ "$(status "$tag" "$d")" != ok ] && ! grep -q '^shader: ' "$CL/$tag.$d.log"; then CMP_NO_DEVICE+=("$tag.$d"); fi
}
cmp_runs() {
  local t d dir
  for t in $CMP_TYPES; do
    if [ ! -f "$CMP_DIR/shaders/shmem$t.spv" ]; then
      [ -n "$COUNT_ONLY" ] || NOTES+=("vk_cooperative_matrix_perf type $t left out: no shaders/shmem$t.spv")
      continue
    fi
    need_peak "$(cmp_peak_type "$t")"
    dir=$CL; [ -n "$COUNT_ONLY" ] || dir=$(cmp_dir "$t")
    for d in coopvk lavapipe; do
      has_driver "$d" || continue
      cmp_run "$d" "cmp_check_$t" "$CMP_TIMEOUT" "$dir" "$CMP_BIN" --correctness
      cmp_run "$d" "cmp_$t" "$CMP_TIMEOUT" "$dir" "$CMP_BIN" "--dim=$CMP_DIM"
    done
  done
}
# cmp_parse LOG: one line per configuration, tab-separated: shader, shape MxNxK, A, D, tile
# TMxTNxTK, B layout, result (TFLOPS, or pass/fail in a --correctness log)
cmp_parse() {
  awk '
    /^shader: / { shader = $2; sub(/.*\//, "", shader); sub(/\.spv$/, "", shader) }
    /^cooperativeMatrixProps = / { shape = $3; a = $6; d = $15; sub(/_t$/, "", a); sub(/_t$/, "", d) }
    /^TILE_M=/ {
      if (open) print key "\t?"   # a configuration that never printed a result
      tm = $1; tn = $2; tk = $3; bc = $4; sub(/.*=/, "", tm); sub(/.*=/, "", tn); sub(/,$/, "", tn); sub(/.*=/, "", tk); sub(/.*=/, "", bc)
      key = shader "\t" shape "\t" a "\t" d "\t" tm "x" tn "x" tk "\t" (bc == 1 ? "col" : "row"); open = 1
    }
    open && / TFlops$/ { print key "\t" $(NF - 1); open = 0; next }
    open && /(pass|fail)$/ { print key "\t" $NF; open = 0; next }
    END { if (open) print key "\t?" }' "$1"
}
# cmp_csv: every configuration and driver: the timed result joined with its --correctness result
cmp_csv() {
  echo "driver,shader,a_type,d_type,coopmat_shape,tile,b_layout,dim,gflops,check,run_status"
  local d t
  for d in coopvk lavapipe; do
    has_driver "$d" || continue
    for t in $CMP_TYPES; do
      [ -f "$CL/cmp_$t.$d.log" ] || continue
      cmp_parse "$CL/cmp_check_$t.$d.log" > "$CL/cmp_check_$t.$d.tsv"
      cmp_parse "$CL/cmp_$t.$d.log" |
        awk -F'\t' -v OFS=, -v drv="$d" -v dim="$CMP_DIM" -v st="$(status "cmp_$t" "$d")" '
          FILENAME == ARGV[1] { chk[$1 FS $2 FS $3 FS $4 FS $5 FS $6] = $7; next }
          { k = $1 FS $2 FS $3 FS $4 FS $5 FS $6; c = (k in chk) ? chk[k] : "none"
            g = ($7 ~ /^[0-9.]+$/) ? sprintf("%.2f", $7 * 1000) : "n/a"
            print drv, $1, $3, $4, $2, $5, $6, dim, g, c, st }' "$CL/cmp_check_$t.$d.tsv" -
      # configurations that the check ran and the timed run never reached (a timeout)
      awk -F'\t' -v OFS=, -v drv="$d" -v dim="$CMP_DIM" -v st="$(status "cmp_$t" "$d")" '
        FILENAME == ARGV[1] { seen[$1 FS $2 FS $3 FS $4 FS $5 FS $6] = 1; next }
        !(($1 FS $2 FS $3 FS $4 FS $5 FS $6) in seen) { print drv, $1, $3, $4, $2, $5, $6, dim, "n/a", $7, st }' \
        <(cmp_parse "$CL/cmp_$t.$d.log") "$CL/cmp_check_$t.$d.tsv"
    done
  done
}

# ---- part 2: test-backend-ops perf ------------------------------------------------------------

TBO=$LLAMA_DIR/bin/test-backend-ops
LLAMA_BENCH=$LLAMA_DIR/bin/llama-bench
# llama_setup: make $LLAMA_DIR with get-llama.sh when it lacks the tools (the workspace's shared
# copy first, as conformance/clients/llama_backend_ops.sh does); on failure the llama parts are left out
llama_setup() {
  { [ -x "$TBO" ] && [ -x "$LLAMA_BENCH" ]; } && return 0
  local get=$ROOT/../shared/clients/get-llama.sh tool
  [ -f "$get" ] || get=$ROOT/conformance/clients/get-llama.sh
  for tool in npm git "${CXX:-g++}"; do
    command -v "$tool" > /dev/null || { NOTES+=("llama.cpp left out: no $TBO, and get-llama.sh needs $tool"); return 1; }
  done
  say "setting up llama.cpp in $LLAMA_DIR with $get (about a minute; log $CL/llama-setup.log)"
  sh "$get" "$LLAMA_DIR" > "$CL/llama-setup.log" 2>&1 || { NOTES+=("llama.cpp left out: get-llama.sh failed (log $CL/llama-setup.log)"); return 1; }
  { [ -x "$TBO" ] && [ -x "$LLAMA_BENCH" ]; } || { NOTES+=("llama.cpp left out: get-llama.sh made no $TBO"); return 1; }
}
if [ -z "$REPORT_ONLY" ] && { has_part ops || has_part llama-bench; }; then
  llama_setup || PARTS=${PARTS//ops/}
  [ -x "$TBO" ] || PARTS=${PARTS//llama-bench/}
fi

# ggml_op_number OP: OP's number in ggml's enum ggml_op, from the llama.cpp source's ggml.h (what
# --test-file wants); nothing when the source is not there
ggml_op_number() {
  local h=$LLAMA_DIR/src/ggml/include/ggml.h
  [ -f "$h" ] || return 0
  awk -v op="GGML_OP_$1" '/enum ggml_op \{/ { on = 1; n = 0; next }
    on && /GGML_OP_COUNT *,/ { exit }
    on && match($0, /^[ \t]*GGML_OP_[A-Z0-9_]+/) { name = substr($0, RSTART, RLENGTH); gsub(/[ \t]/, "", name)
      if (name == op) { print n; exit } n++ }' "$h"
}
# ops_file NAME OP NE0 NE1: writes $CL/NAME.ops, a --test-file line for OP on a contiguous f32
# NE0 x NE1 tensor (RMS_NORM: eps 1e-6 in op_params); prints its path, or nothing
ops_file() {
  local n f=$CL/$1.ops
  n=$(ggml_op_number "$2")
  [ -n "$n" ] || return 0
  # op type ne0..3 n_params params... n_src [type ne0..3 nb0..3]... name; 897988541 = 1e-6f
  echo "$n 0 $3 $4 1 1 1 897988541 1 0 $3 $4 1 1 4 $((4 * $3)) $((4 * $3 * $4)) $((4 * $3 * $4)) -" > "$f"
  echo "$f"
}
ops_selected() { [ -z "$OPS_SELECT" ] || [[ $1 =~ $OPS_SELECT ]]; }
ops_runs() {
  local c name op sel measure label d be args f
  for c in "${OPS_CASES[@]}"; do
    IFS='|' read -r name op sel measure label <<< "$c"
    ops_selected "$name" || continue
    case $measure in peak:*) need_peak "${measure#peak:}" ;; bytes:* | gbps) NEED_BW=1 ;; esac
    args=(-o "$op" -p "$sel")
    if [[ $sel == file:* ]]; then
      # shellcheck disable=SC2086  # "NE0 NE1": two arguments
      f=$(ops_file "$name" "$op" ${sel#file:})
      if [ -z "$f" ]; then
        [ -n "$COUNT_ONLY" ] || NOTES+=("$name left out: no ggml.h under $LLAMA_DIR/src to number $op")
        continue
      fi
      args=(-o "$op" --test-file "$f")
    fi
    for d in coopvk lavapipe cpu; do
      has_driver "$d" || continue
      be=Vulkan0; [ "$d" != cpu ] || be=CPU
      run "$d" "ops_$name" "$OPS_TIMEOUT" "$LLAMA_DIR/bin" ./test-backend-ops perf -b "$be" "${args[@]}"
    done
  done
}
# ops_parse LOG: "us_per_run rate unit" of the case's line (unit GFLOPS or GB/s; rate normalised
# from MFLOPS/TFLOPS), "unsupported", or nothing
ops_parse() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
    /^  [A-Z0-9_]+\(.*\): +not supported/ { print "unsupported"; exit }
    / us\/run - / { for (i = 1; i <= NF; i++) if ($i == "us/run") us = $(i - 1)
      r = $(NF - 1); u = $NF
      if (u == "TFLOPS") { r *= 1000; u = "GFLOPS" } else if (u == "MFLOPS") { r /= 1000; u = "GFLOPS" } else if (u == "kFLOPS") { r /= 1e6; u = "GFLOPS" }
      print us, r, u; exit }'
}
# ops_result NAME DRIVER: "state us rate unit": state ok, unsupported, timeout, wrong-device, or the
# failure; the numbers n/a where there are none
ops_result() {
  local log=$CL/ops_$1.$2.log st p dev
  [ -f "$log" ] || { echo "not-run n/a n/a n/a"; return; }
  st=$(status "ops_$1" "$2")
  p=$(ops_parse "$log")
  dev=$(wrong_device "$log" "$2")
  if [ -n "$dev" ]; then echo "wrong-device n/a n/a n/a"
  elif [ "$p" = unsupported ]; then echo "unsupported n/a n/a n/a"
  elif [ -n "$p" ] && [ "$st" = ok ]; then echo "ok $p"
  elif [ -n "$p" ]; then echo "${st// /-} $p"
  else echo "${st// /-} n/a n/a n/a"
  fi
}
ops_csv() {
  echo "case,op,params,driver,state,us_per_run,gflops,gbps,measure,fraction,fraction_of"
  local c name op sel measure label d st us r u gf gb frac of pk bw
  bw=$(bandwidth)
  for c in "${OPS_CASES[@]}"; do
    IFS='|' read -r name op sel measure label <<< "$c"
    for d in coopvk lavapipe cpu; do
      [ -f "$CL/ops_$name.$d.log" ] || continue
      read -r st us r u <<< "$(ops_result "$name" "$d")"
      gf=n/a gb=n/a frac=n/a of=n/a
      case $u in GFLOPS) gf=$r ;; GB/s) gb=$r ;; esac
      case $measure in
        bytes:*) [ "$us" = n/a ] || gb=$(awk -v b="${measure#bytes:}" -v us="$us" 'BEGIN { printf "%.2f", b / us / 1e3 }') ;;
      esac
      if [ "$measure" = us ]; then
        gb=n/a
      elif [[ $measure == peak:* ]]; then
        pk=$(peak_gflops "${measure#peak:}")
        of="peak ${measure#peak:} $(peak_class "${measure#peak:}") ${pk:-n/a} GFLOP/s"
        [ "$gf" = n/a ] || [ -z "$pk" ] || frac=$(awk -v a="$gf" -v b="$pk" 'BEGIN { printf "%.4f", a / b }')
      else
        of="bandwidth ${bw:-n/a} GB/s"
        [ "$gb" = n/a ] || [ -z "$bw" ] || frac=$(awk -v a="$gb" -v b="$bw" 'BEGIN { printf "%.4f", a / b }')
      fi
      echo "$name,$op,\"$sel\",$d,$st,$us,$gf,$gb,$measure,$frac,$of"
    done
  done
}

# ---- part 3: llama-bench ----------------------------------------------------------------------

# lb_model: the model to run, made with make_tiny_gguf.py once and kept in the build folder
lb_model() {
  if [ -n "$LB_MODEL" ]; then
    [ -f "$LB_MODEL" ] || { NOTES+=("llama-bench left out: no model $LB_MODEL"); return 1; }
    return 0
  fi
  LB_MODEL=$BUILD/bench-models/tiny-1024-4-2816-16-16-1.gguf
  [ -f "$LB_MODEL" ] && return 0
  local mk=$ROOT/../shared/clients/make_tiny_gguf.py
  [ -f "$mk" ] || { NOTES+=("llama-bench left out: no $mk to make the model"); return 1; }
  mkdir -p "$BUILD/bench-models"
  say "making the 52M-parameter F16 model $LB_MODEL"
  if ! python3 "$mk" "$LB_MODEL.tmp" 1024 4 2816 16 16 1 > /dev/null; then
    NOTES+=("llama-bench left out: make_tiny_gguf.py failed")
    return 1
  fi
  mv "$LB_MODEL.tmp" "$LB_MODEL"
}
if [ -n "$REPORT_ONLY" ]; then LB_MODEL=${LB_MODEL:-$BUILD/bench-models/tiny-1024-4-2816-16-16-1.gguf}
elif has_part llama-bench; then lb_model || PARTS=${PARTS//llama-bench/}
fi
lb_runs() {
  local d ngl
  for d in coopvk lavapipe cpu; do
    has_driver "$d" || continue
    ngl=99; [ "$d" != cpu ] || ngl=0
    run "$d" llama_bench "$LB_TIMEOUT" "$LLAMA_DIR/bin" ./llama-bench -m "$LB_MODEL" -p "$LB_PROMPT" -n "$LB_GEN" \
      -fa 1 -r "$LB_REPS" -t "$(nproc)" -ngl "$ngl" -o jsonl
  done
}
# lb_csv: llama-bench's JSON lines as CSV: driver, test, tokens/s (mean and deviation), threads
lb_csv() {
  echo "driver,test,tokens_per_s,stddev,n_threads,backends,state"
  local d
  for d in coopvk lavapipe cpu; do
    [ -f "$CL/llama_bench.$d.log" ] || continue
    local st
    st=$(status llama_bench "$d")
    [ -z "$(wrong_device "$CL/llama_bench.$d.log" "$d")" ] || st=wrong-device
    awk -v drv="$d" -v st="${st// /-}" '
      function num(k,   m) { if (match($0, "\"" k "\": [0-9.e+-]+")) { m = substr($0, RSTART, RLENGTH); sub(/.*: /, "", m); return m } return "" }
      function str(k,   m) { if (match($0, "\"" k "\": \"[^\"]*\"")) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: "/, "", m); sub(/"$/, "", m); return m } return "" }
      /^\{"build_commit"/ { p = num("n_prompt"); g = num("n_gen"); t = (p > 0 ? "pp" p : "tg" g)
        print drv "," t "," num("avg_ts") "," num("stddev_ts") "," num("n_threads") "," str("backends") "," st; n++ }
      END { if (!n) print drv ",n/a,n/a,n/a,n/a,n/a," st }' "$CL/llama_bench.$d.log"
  done
}

# ---- the run ----------------------------------------------------------------------------------

NEED_BW=''
all_runs() {
  if has_part cmp; then cmp_runs; fi
  if has_part ops; then ops_runs; fi
  if has_part llama-bench; then lb_runs; fi
  # last in the list, first in time would be nicer; but what is needed is known only now, and
  # the peaks are measured on an idle CPU either way
  peak_runs
}
COUNT_ONLY=1; all_runs; COUNT_ONLY=''
if [ -z "$REPORT_ONLY" ]; then
  # shellcheck disable=SC2086  # the lists on one line
  say "$RUNS_TOTAL runs; parts: $(printf '%s ' $PARTS); drivers: $(printf '%s ' $DRIVERS)"
  progress_start clients "$RUNS_TOTAL" runs
  all_runs
  progress_line
  progress_stop
  cut -d ' ' -f 1-3 /proc/loadavg > "$CL/loadavg.end"
fi

# ---- the summary ------------------------------------------------------------------------------

# ratio A B: A / B to 3 significant digits (the ratios here span 1/1000 to 10), or n/a unless both
# are positive numbers
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.e+-]+$/ && b ~ /^[0-9.e+-]+$/ && b > 0 && a > 0) printf "%.3g", a / b; else print "n/a" }'
}
pct() { awk -v f="$1" 'BEGIN { if (f ~ /^[0-9.e+-]+$/) printf "%.1f%%", 100 * f; else print f }'; }
fmt() { awk -v x="$1" 'BEGIN { if (x ~ /^[0-9.e+-]+$/) printf "%.4g", x; else print x }'; }
# ops_field NAME DRIVER COL: a field of clients_ops.csv's row for case NAME on DRIVER, counted
# after the quoted params (which hold commas): 2 driver, 3 state, 4 us_per_run, 5 gflops, 6 gbps,
# 7 measure, 8 fraction, 9 fraction_of
ops_field() {
  awk -F'"' -v n="$1" -v d="$2" -v c="$3" '{ split($1, a, ","); if (a[1] != n) next; split($3, b, ","); if (b[2] != d) next; print b[c]; exit }' "$LOGS/clients_ops.csv"
}
# cell VALUE STATE: a value as the summary shows it: "-" for a run that did not happen, the state
# instead of a missing value, the state beside a value from a run that did not end well
cell() {
  case $2 in
    '') echo - ;;
    ok) fmt "$1" ;;
    *) if [ "${1:-n/a}" = n/a ]; then echo "$2"; else echo "$(fmt "$1")($2)"; fi ;;
  esac
}

summary_cmp() {
  printf '\nvk_cooperative_matrix_perf --dim=%s (G(FL)OP/s; configurations: coopmat shape, tile TILE_MxTILE_NxTILE_K, B layout), %% of the CPU peak for the class\n' "$CMP_DIM"
  local F='%-10s %-9s %6s %5s %9s %-28s %9s %-28s %7s %7s\n'
  printf "$F" "types" "driver" "check" "runs" "best" "best configuration" "worst" "worst configuration" "%peak" "cvk/lvp"
  local t d pk
  for t in $CMP_TYPES; do
    pk=$(peak_gflops "$(cmp_peak_type "$t")")
    local cbest=''
    for d in coopvk lavapipe; do
      has_driver "$d" || continue
      awk -F, -v d="$d" -v s="shmem$t" -v pk="${pk:-0}" -v F="$F" -v t="$t" -v st="$(status "cmp_$t" "$d")" -v cb="$cbest" \
        -v err="$(cmp_error "$CL/$(cmp_failed_run "cmp_$t" "$d").$d.log")" '
        $1 == d && $2 == s { n++; if ($10 == "pass") ok++; if ($10 == "fail") bad++
          if ($9 != "n/a") { g = $9 + 0; m++; cfg = $5 " " $6 " " $7
            if (!m1 || g > best) { best = g; bc = cfg } if (!m1 || g < worst) { worst = g; wc = cfg } m1 = 1 } }
        END {
          if (!n) { printf "%-10s %-9s %s\n", t, d, (st == "ok" ? "the device lists no such type" : st (err == "" ? "" : ": " err)); exit }
          chk = (bad ? bad " FAIL" : ok "/" n)
          if (!m) { printf F, t, d, chk, m + 0, st, "", "", "", "", ""; exit }
          r = (d == "lavapipe" && cb > 0 && best > 0) ? sprintf("%.2f", cb / best) : ""
          printf F, t, d, chk, m (st == "ok" ? "" : "!"), sprintf("%.2f", best), bc, sprintf("%.2f", worst), wc, (pk > 0 ? sprintf("%.1f%%", 100 * best / pk) : "n/a"), r }' "$LOGS/clients_cmp.csv"
      [ "$d" != coopvk ] || cbest=$(awk -F, -v s="shmem$t" '$1 == "coopvk" && $2 == s && $9 != "n/a" && $9 + 0 > b { b = $9 + 0 } END { print b + 0 }' "$LOGS/clients_cmp.csv")
    done
  done
  printf '(check: configurations passing --correctness at 256^3 / configurations; runs: timed configurations, "!" when the run did not finish; cvk/lvp: best against best)\n'
}

summary_ops() {
  printf '\nllama.cpp test-backend-ops perf: GFLOP/s for compute-bound cases, GB/s for memory-bound ones, us per op for the smallest; ratios of speed (above 1: coopvk faster); %% of the CPU peak or the memory bandwidth\n'
  printf '(the CPU backend runs on %s thread(s): test-backend-ops gives it half the hardware threads and has no option for more)\n' $(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))
  local F='%-30s %-6s %10s %10s %10s %8s %8s %7s %7s %7s  %s\n'
  printf "$F" "case" "unit" "coopvk" "lavapipe" "CPU" "cvk/lvp" "cvk/CPU" "cvk %" "lvp %" "CPU %" "of"
  local c name op sel measure label d unit st cu lu pu of
  for c in "${OPS_CASES[@]}"; do
    IFS='|' read -r name op sel measure label <<< "$c"
    grep -q "^$name," "$LOGS/clients_ops.csv" || continue
    local col=6 vals=() fracs=()
    case $measure in peak:*) unit=GFLOP/s col=5 ;; us) unit=us col=4 ;; *) unit=GB/s ;; esac
    for d in coopvk lavapipe cpu; do
      st=$(ops_field "$name" "$d" 3)
      vals+=("$(cell "$(ops_field "$name" "$d" "$col")" "$st")")
      if [ -z "$st" ]; then fracs+=(-); else fracs+=("$(pct "$(ops_field "$name" "$d" 8)")"); fi
    done
    cu=$(ops_field "$name" coopvk 4); lu=$(ops_field "$name" lavapipe 4); pu=$(ops_field "$name" cpu 4)
    of=$(awk -F, -v n="$name" '$1 == n { print $NF; exit }' "$LOGS/clients_ops.csv")
    printf "$F" "$label" "$unit" "${vals[0]}" "${vals[1]}" "${vals[2]}" \
      "$(ratio "$lu" "$cu")" "$(ratio "$pu" "$cu")" "${fracs[0]}" "${fracs[1]}" "${fracs[2]}" "$of"
  done
  printf '(bytes for MUL_MAT n=1: the weights plus the two vectors; for the attention decode: the K and V caches; the rest: test-backend-ops'"'"' own count, every source and the result; above 100%%: the data fit in the cache)\n'
}

summary_lb() {
  printf '\nllama-bench, %s, -fa 1, %s repetitions: tokens/s (above 1: coopvk faster)\n' "$(basename "$LB_MODEL")" "$LB_REPS"
  local F='%-8s %12s %12s %12s %8s %8s\n'
  printf "$F" "test" "coopvk" "lavapipe" "CPU" "cvk/lvp" "cvk/CPU"
  local t c l p
  for t in "pp$LB_PROMPT" "tg$LB_GEN"; do
    c=$(awk -F, -v t="$t" '$1 == "coopvk" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
    l=$(awk -F, -v t="$t" '$1 == "lavapipe" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
    p=$(awk -F, -v t="$t" '$1 == "cpu" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
    printf "$F" "$t" "$(fmt "${c:-n/a}")" "$(fmt "${l:-n/a}")" "$(fmt "${p:-n/a}")" "$(ratio "$c" "$l")" "$(ratio "$c" "$p")"
  done
  awk -F, 'NR > 1 && $7 != "ok" { printf "(%s: %s)\n", $1, $7 }' "$LOGS/clients_llama_bench.csv"
}

# failures: one line per run that did not end well; sets FAILED when one of them is on coopvk
# (a crash, a non-zero exit, a wrong result, the wrong device; not a timeout)
FAILED=''
failures() {
  local f tag drv st dev
  for f in "$CL"/*.status; do
    [ -e "$f" ] || continue
    tag=$(basename "$f" .status); drv=${tag##*.}; tag=${tag%.*}
    st=$(status "$tag" "$drv")
    if [ "$st" = ok ] && [[ $tag != peak_* ]] && [ "$tag" != bandwidth ]; then
      dev=$(wrong_device "$CL/$tag.$drv.log" "$drv")
      [ -z "$dev" ] || st="ran on the wrong device ($dev)"
    fi
    [ "$st" = ok ] || [[ $st == skipped* ]] && continue
    printf '  %s on %s: %s after %ss (%s)\n' "$tag" "$drv" "$st" "$(seconds "$tag" "$drv")" "$CL/$tag.$drv.log"
    [ "$drv" != coopvk ] || [ "$st" = timeout ] || FAILED=1
  done
  if [ -f "$LOGS/clients_cmp.csv" ]; then
    awk -F, 'NR > 1 && $10 == "fail" { printf "  WRONG RESULT: vk_cooperative_matrix_perf --correctness on %s: %s %s tile %s B %s\n", $1, $2, $5, $6, $7 }' "$LOGS/clients_cmp.csv"
    ! awk -F, '$1 == "coopvk" && $10 == "fail" { f = 1 } END { exit !f }' "$LOGS/clients_cmp.csv" || FAILED=1
  fi
}

summary() {
  printf '\n== third-party benchmarks: %s, %s hardware threads, %s ==\n' \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$(date -u +%Y-%m-%d)"
  local t pk
  if [ -n "$PEAK_TYPES" ]; then
    printf 'CPU peaks, G(FL)OP/s on all threads (bench_coopmat_gemm):'
    for t in $PEAK_TYPES; do
      pk=$(peak_gflops "$t")
      printf ' %s %s (%s)' "$t" "$(fmt "${pk:-n/a}")" "$(peak_class "$t")"
    done
    printf '\n'
  fi
  [ -z "$NEED_BW" ] || printf 'memory bandwidth (bench_elementwise, the best of its C++ loops): %s GB/s\n' "$(fmt "$(bandwidth)")"
  printf 'load average (1, 5, 15 min) at the start: %s, at the end: %s\n' \
    "$(cat "$CL/loadavg.start" 2>/dev/null || echo n/a)" "$(cat "$CL/loadavg.end" 2>/dev/null || echo n/a)"
  local n
  for n in "${NOTES[@]}"; do printf '%s\n' "$n"; done
  if has_part cmp; then summary_cmp; fi
  if has_part ops; then summary_ops; fi
  if has_part llama-bench; then summary_lb; fi
  local fl
  fl=$(failures)
  if [ -n "$fl" ]; then printf '\nruns that did not end well:\n%s\n' "$fl"; fi
  printf '\n(%s runs, %s s in all' "$(find "$CL" -name '*.status' | wc -l)" \
    "$(cat "$CL"/*.status 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')"
  [ -n "$REPORT_ONLY" ] || printf '; third-party bench time %s s' "$(( $(date +%s) - START ))"
  printf ')\n'
}

# chart: coopvk and lavapipe against llama.cpp's CPU backend, speed ratio per case (log scale)
chart() {
  local dat=$LOGS/clients_ratios.dat c name op sel measure label cu lu pu
  {
    echo "# case coopvk/CPU lavapipe/CPU (speed ratios; ? = no value)"
    if has_part ops; then
      for c in "${OPS_CASES[@]}"; do
        IFS='|' read -r name op sel measure label <<< "$c"
        grep -q "^$name," "$LOGS/clients_ops.csv" || continue
        cu=$(ops_field "$name" coopvk 4); lu=$(ops_field "$name" lavapipe 4); pu=$(ops_field "$name" cpu 4)
        printf '"%s" %s %s\n' "$label" "$(ratio "$pu" "$cu")" "$(ratio "$pu" "$lu")"
      done
    fi
    if has_part llama-bench; then
      for t in "pp$LB_PROMPT" "tg$LB_GEN"; do
        cu=$(awk -F, -v t="$t" '$1 == "coopvk" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
        lu=$(awk -F, -v t="$t" '$1 == "lavapipe" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
        pu=$(awk -F, -v t="$t" '$1 == "cpu" && $2 == t { print $3 }' "$LOGS/clients_llama_bench.csv")
        printf '"llama-bench %s" %s %s\n' "$t" "$(ratio "$cu" "$pu")" "$(ratio "$lu" "$pu")"
      done
    fi
  } | sed 's/ n\/a/ ?/g' > "$dat"
  # a chart needs a case with a CPU row and a Vulkan row
  awk 'NR > 1 && ($(NF - 1) != "?" || $NF != "?") { f = 1 } END { exit !f }' "$dat" || return 0
  local ymax
  # from 1/1000 to 10, or above the highest bar
  ymax=$(awk 'NR > 1 { for (i = NF - 1; i <= NF; i++) if ($i != "?" && $i + 0 > m) m = $i + 0 } END { print (2 * m > 10 ? 2 * m : 10) }' "$dat")
  {
    printf 'set terminal pngcairo size 1100,700 noenhanced\nset output "%s"\n' "$LOGS/clients.png"
    printf 'set title "llama.cpp on coopvk and lavapipe against its CPU backend, %s"\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
    printf 'set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n'
    printf 'set datafile missing "?"\nset logscale y\nset yrange [0.001:%s]\nset grid ytics\nset key top right\n' "$ymax"
    printf 'set ylabel "speed / CPU backend speed (log; 1 = as fast)"\nset xtics rotate by -40 scale 0\nset bmargin 12\nset rmargin 12\n'
    printf 'set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2\n'
    printf 'plot "%s" using 2:xtic(1) title "coopvk / CPU", "" using 3 title "lavapipe / CPU"\n' "$dat"
  } > "$LOGS/clients.gp"
  if command -v gnuplot > /dev/null; then
    gnuplot "$LOGS/clients.gp" && echo "chart: $LOGS/clients.png"
  else
    echo "no gnuplot (scripts/setup.sh --bench installs it): data in $dat"
  fi
}

if has_part cmp; then cmp_csv > "$LOGS/clients_cmp.csv"; fi
if has_part ops; then ops_csv > "$LOGS/clients_ops.csv"; fi
if has_part llama-bench; then lb_csv > "$LOGS/clients_llama_bench.csv"; fi
summary | tee "$LOGS/summary-clients.txt"
chart
FAILED=''
failures > /dev/null
[ -z "$FAILED" ] || exit 1
