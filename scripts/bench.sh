#!/usr/bin/env bash
# Benchmarks coopvk side by side with Mesa lavapipe 26 (Debian sid, run through sid's
# dynamic loader from third_party/sid-bench) on the same machine, in one run, and prints
# ratios. Speed is measured here, never asserted in tests.
#
#   scripts/bench.sh                       # GEMM 512^3, axpy over 16M floats
#   BENCH_GEMM_SIZE=1024 scripts/bench.sh
#
# Environment: COOPVK_BUILD_DIR (default build/), BENCH_GEMM_SIZE (512), BENCH_GEMM_REPS (5),
# BENCH_ELEMENTS (16777216), BENCH_REPS (10). Full outputs go to $BUILD/bench-logs/.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
GEMM_SIZE=${BENCH_GEMM_SIZE:-512}
GEMM_REPS=${BENCH_GEMM_REPS:-5}
ELEMENTS=${BENCH_ELEMENTS:-16777216}
REPS=${BENCH_REPS:-10}

"$ROOT/scripts/setup.sh" --bench
COOPVK_BUILD_DIR=$BUILD "$ROOT/scripts/build.sh"

SB="$ROOT/third_party/sid-bench"
B="$BUILD/bench"
LOGS="$BUILD/bench-logs"
mkdir -p "$LOGS"

# run_on DRIVER TAG NAME ARGS...: one bench on coopvk or lavapipe; output to the terminal
# and to the log $LOGS/TAG.DRIVER.log.
run_on() {
  local driver=$1 tag=$2 name=$3
  shift 3
  printf '\n== %s %s on %s ==\n' "$name" "$*" "$driver"
  case $driver in
    coopvk)
      VK_DRIVER_FILES="$BUILD/coopvk_icd.json" VK_ICD_FILENAMES="$BUILD/coopvk_icd.json" \
        VK_LOADER_LAYERS_DISABLE='~all~' "$B/$name" "$@" | tee "$LOGS/$tag.$driver.log" ;;
    lavapipe)
      # no on-disk shader cache, or "cold" is warm from an earlier run
      VK_DRIVER_FILES="$SB/lvp_icd.json" VK_ICD_FILENAMES="$SB/lvp_icd.json" \
        VK_LOADER_LAYERS_DISABLE='~all~' MESA_SHADER_CACHE_DISABLE=true \
        "$SB/bin/sid-run" "$B/$name" "$@" | tee "$LOGS/$tag.$driver.log" ;;
  esac
}
# value NAME DRIVER KEY: the number after KEY in that run's log.
value() { awk -v k="$3" '$1 == k { print $2 }' "$LOGS/$1.$2.log"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

for d in coopvk lavapipe; do
  run_on $d pipeline bench_pipeline_create gemm_tiled "$REPS"
  run_on $d elementwise bench_elementwise "$ELEMENTS" "$REPS"
  run_on $d gemm bench_gemm "$GEMM_SIZE" "$GEMM_REPS"
  # the same GLSL through glslang -O (locals already in SSA form)
  run_on $d gemm_O bench_gemm "$GEMM_SIZE" "$GEMM_REPS" O/gemm_tiled
  # register-blocked: 4x4 outputs per invocation, 64x64 per workgroup (what production
  # GEMM shaders look like)
  run_on $d gemm_blocked bench_gemm "$GEMM_SIZE" "$GEMM_REPS" gemm_blocked 64
  run_on $d peak bench_peak 65536 1024 "$GEMM_REPS"
done

c_gemm=$(value gemm coopvk gemm_gflops)
l_gemm=$(value gemm lavapipe gemm_gflops)
c_gemmO=$(value gemm_O coopvk gemm_gflops)
l_gemmO=$(value gemm_O lavapipe gemm_gflops)
c_gemmB=$(value gemm_blocked coopvk gemm_gflops)
l_gemmB=$(value gemm_blocked lavapipe gemm_gflops)
c_ew=$(value elementwise coopvk elementwise_gbps)
l_ew=$(value elementwise lavapipe elementwise_gbps)
cpu1=$(value elementwise coopvk elementwise_cpu1_gbps)
cpuN=$(value elementwise coopvk elementwise_cpuN_gbps)
c_cold=$(value pipeline coopvk pipeline_cold_ms)
c_first=$(value pipeline coopvk pipeline_cold_first_dispatch_ms)
c_hit=$(value pipeline coopvk pipeline_cached_ms)
c_data=$(value pipeline coopvk pipeline_from_data_ms)
l_cold=$(value pipeline lavapipe pipeline_cold_ms)
l_first=$(value pipeline lavapipe pipeline_cold_first_dispatch_ms)

printf '\n== summary (%s cores; higher ratio = coopvk better) ==\n' "$(nproc)"
printf '%-52s %10s %10s %8s\n' "metric" "coopvk" "lavapipe" "ratio"
printf '%-52s %10s %10s %8s\n' "tiled SGEMM ${GEMM_SIZE}^3, GFLOP/s" "$c_gemm" "$l_gemm" "$(ratio "$c_gemm" "$l_gemm")"
printf '%-52s %10s %10s %8s\n' "tiled SGEMM ${GEMM_SIZE}^3 (glslang -O), GFLOP/s" "$c_gemmO" "$l_gemmO" "$(ratio "$c_gemmO" "$l_gemmO")"
printf '%-52s %10s %10s %8s\n' "register-blocked SGEMM ${GEMM_SIZE}^3, GFLOP/s" "$c_gemmB" "$l_gemmB" "$(ratio "$c_gemmB" "$l_gemmB")"
for v in f32 vec4_f32 f16 vec4_f16 i32 vec4_i32; do
  c=$(value peak coopvk "peak_${v}_gops"); l=$(value peak lavapipe "peak_${v}_gops")
  printf '%-52s %10s %10s %8s\n' "peak c = a*c + b, $v, GOP/s" "$c" "$l" "$(ratio "$c" "$l")"
done
printf '%-52s %10s %10s %8s\n' "axpy ${ELEMENTS} floats, GB/s" "$c_ew" "$l_ew" "$(ratio "$c_ew" "$l_ew")"
printf '%-52s %10s %10s %8s\n' "pipeline cold + first dispatch, ms (lavapipe/coopvk)" "$c_first" "$l_first" "$(ratio "$l_first" "$c_first")"
printf '%-52s %10s %10s %8s\n' "vkCreateComputePipelines cold, ms (lavapipe/coopvk)" "$c_cold" "$l_cold" "$(ratio "$l_cold" "$c_cold")"
printf '\n%-52s %10s %8s\n' "coopvk against itself / the C++ loop" "value" "ratio"
printf '%-52s %10s %8s\n' "pipeline cold / cached (same VkPipelineCache)" "$c_hit ms" "$(ratio "$c_cold" "$c_hit")"
printf '%-52s %10s %8s\n' "pipeline cold / from vkGetPipelineCacheData" "$c_data ms" "$(ratio "$c_cold" "$c_data")"
printf '%-52s %10s %8s\n' "axpy: coopvk / C++ loop 1 thread (GB/s)" "$cpu1" "$(ratio "$c_ew" "$cpu1")"
printf '%-52s %10s %8s\n' "axpy: coopvk / C++ loop $(nproc) threads (GB/s)" "$cpuN" "$(ratio "$c_ew" "$cpuN")"
printf 'gemm_ratio_coopvk_over_lavapipe %s\n' "$(ratio "$c_gemm" "$l_gemm")"
