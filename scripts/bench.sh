#!/usr/bin/env bash
# Benchmarks coopvk side by side with Mesa lavapipe 26 (Debian sid, run through sid's
# dynamic loader from third_party/sid-bench) on the same machine, in one run, and prints
# a summary table of both and their ratio for every bench shader, SGEMM and the FMA
# chains also as a fraction of the CPU's f32 FMA peak measured in the same process, and
# pipeline creation for every bench shader. Speed is measured here, never asserted in
# tests. Then, unless BENCH_CLIENTS=0, scripts/bench_clients.sh runs the third-party
# benchmarks (vk_cooperative_matrix_perf, llama.cpp's test-backend-ops perf and llama-bench,
# with llama.cpp's CPU backend as a third column) with its own progress lines, summary
# (summary-clients.txt), CSV files and chart, taking the CPU peaks and the bandwidth from this
# run's logs (about 25 minutes more on a 2-core VM); its variables (BENCH_CMP_*, BENCH_OPS_*,
# BENCH_LLAMA_*, LLAMA_DIR) are listed in its header.
#
#   scripts/bench.sh
#   BENCH_GEMM_SIZE=1024 BENCH_REPS=20 scripts/bench.sh
#
# Environment (defaults): COOPVK_BUILD_DIR (build/), BENCH_GEMM_SIZE (512: the tiled and
# blocked SGEMMs), BENCH_GEMM_BIG (1024: the blocked SGEMM once more), BENCH_GEMM_REPS (7),
# BENCH_ELEMENTS (16777216: axpy and the reductions), BENCH_REPS (10: timed dispatches of
# axpy, reductions, softmax), BENCH_SOFTMAX_ROWS (4096 rows of 4096 floats),
# BENCH_PEAK_INVOCATIONS (65536), BENCH_PEAK_ITERS (4096), BENCH_PIPELINE_REPS (7),
# BENCH_COOPMAT_TYPES (f16_f32 f16_f16 bf16_f32 s8_s32 e4m3_f32), BENCH_COOPMAT_SIZES
# (512 1024 2048 4096), BENCH_COOPMAT_REPS (3): the cooperative-matrix GEMM, also written
# to $BUILD/bench-logs/coopmat_gemm.csv and drawn in coopmat_gemm.png (gnuplot),
# BENCH_COOPMAT_SHAPE_TYPES (f16_f32 s8_s32), BENCH_COOPMAT_SHAPE_SIZE (1024): the same GEMM's
# shape variants (staged through workgroup memory, zero-initialized accumulators, an outer
# loop over blocks, column-major B; bench_coopmat_gemm ... all) in one process with the
# baseline shape, each as G(FL)OP/s and as a fraction of the baseline's speed,
# BENCH_COOPVEC_VECTORS (1048576), BENCH_COOPVEC_REPS (5): the cooperative-vector MLP (f16 and
# s8) on coopvk's shader, its kernels and an xsimd loop, BENCH_DISPATCH_N (1000),
# BENCH_DISPATCH_REPS (11), BENCH_DISPATCH_GROUPS (16): small dispatches, microseconds each in
# command buffers of 100 and N of them, of 1 and GROUPS workgroups, and one dispatch's
# submit-to-fence latency, BENCH_CPU_PEAK_MS (150, read by the benches),
# COOPVK_PROGRESS_INTERVAL (20: seconds between progress lines on stderr,
# "[bench] 12/96 runs (12.5%), 1m05s elapsed, ~7m50s remaining; now bench_gemm 512 7 on
# lavapipe", the estimate from the rate so far; 0: none), BENCH_CLIENTS (1; 0: no third-party
# benchmarks). Full outputs go to $BUILD/bench-logs/, the summary also to
# $BUILD/bench-logs/summary.txt. A bench that fails (a wrong result, a crash) is reported and its
# cells read FAIL; the script goes on and exits 1 at the end, as it does when
# scripts/bench_clients.sh reports a failure on coopvk.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR/.. source=scripts/lib/progress.sh
. "$ROOT/scripts/lib/progress.sh"
BUILD=${COOPVK_BUILD_DIR:-$ROOT/build}
GEMM_SIZE=${BENCH_GEMM_SIZE:-512}
GEMM_BIG=${BENCH_GEMM_BIG:-1024}
GEMM_REPS=${BENCH_GEMM_REPS:-7}
ELEMENTS=${BENCH_ELEMENTS:-16777216}
REPS=${BENCH_REPS:-10}
ROWS=${BENCH_SOFTMAX_ROWS:-4096}
PEAK_N=${BENCH_PEAK_INVOCATIONS:-65536}
PEAK_ITERS=${BENCH_PEAK_ITERS:-4096}
PIPE_REPS=${BENCH_PIPELINE_REPS:-7}
COOPMAT_TYPES=${BENCH_COOPMAT_TYPES:-"f16_f32 f16_f16 bf16_f32 s8_s32 e4m3_f32"}
COOPMAT_SIZES=${BENCH_COOPMAT_SIZES:-"512 1024 2048 4096"}
COOPMAT_REPS=${BENCH_COOPMAT_REPS:-3}
COOPMAT_SHAPE_TYPES=${BENCH_COOPMAT_SHAPE_TYPES:-"f16_f32 s8_s32"}
COOPMAT_SHAPE_SIZE=${BENCH_COOPMAT_SHAPE_SIZE:-1024}
COOPMAT_SHAPES="baseline staged zero_init outer_loop b_colmajor"
COOPVEC_VECTORS=${BENCH_COOPVEC_VECTORS:-1048576}
COOPVEC_REPS=${BENCH_COOPVEC_REPS:-5}
DISPATCH_N=${BENCH_DISPATCH_N:-1000}
DISPATCH_REPS=${BENCH_DISPATCH_REPS:-11}
DISPATCH_GROUPS=${BENCH_DISPATCH_GROUPS:-16}
PEAK_VARIANTS="f32 vec2_f32 vec4_f32 f16 vec2_f16 vec4_f16 i32 vec4_i32"
# every shader bench_pipeline_create times
SHADERS="axpy axpy_f16 gemm_tiled gemm_blocked gemm_blocked8 reduce_shared reduce_subgroup softmax"
for v in $PEAK_VARIANTS; do SHADERS="$SHADERS peak_$v"; done

"$ROOT/scripts/setup.sh" --bench
COOPVK_BUILD_DIR=$BUILD "$ROOT/scripts/build.sh"

SB="$ROOT/third_party/sid-bench"
B="$BUILD/bench"
LOGS="$BUILD/bench-logs"
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.failed
START=$(date +%s)

# run_on DRIVER TAG NAME ARGS...: one bench on coopvk or lavapipe; stdout and stderr to the
# terminal and to $LOGS/TAG.DRIVER.log. A failing bench leaves $LOGS/TAG.DRIVER.failed
# (its exit status) and does not stop the script. With COUNT_ONLY set it only counts the run
# (in RUNS_TOTAL), so that the progress lines know the total.
COUNT_ONLY='' RUNS_TOTAL=0 RUNS_DONE=0
run_on() {
  local driver=$1 tag=$2 name=$3 rc=0
  shift 3
  if [ -n "$COUNT_ONLY" ]; then RUNS_TOTAL=$((RUNS_TOTAL + 1)); return 0; fi
  progress_set "$RUNS_DONE" "now $name $* on $driver"
  printf '\n== %s %s on %s ==\n' "$name" "$*" "$driver"
  case $driver in
    coopvk)
      VK_DRIVER_FILES="$BUILD/coopvk_icd.json" VK_ICD_FILENAMES="$BUILD/coopvk_icd.json" \
        VK_LOADER_LAYERS_DISABLE='~all~' "$B/$name" "$@" 2>&1 | tee "$LOGS/$tag.$driver.log" || rc=$? ;;
    lavapipe)
      # no on-disk shader cache, or "cold" is warm from an earlier run
      VK_DRIVER_FILES="$SB/lvp_icd.json" VK_ICD_FILENAMES="$SB/lvp_icd.json" \
        VK_LOADER_LAYERS_DISABLE='~all~' MESA_SHADER_CACHE_DISABLE=true \
        "$SB/bin/sid-run" "$B/$name" "$@" 2>&1 | tee "$LOGS/$tag.$driver.log" || rc=$? ;;
  esac
  if [ "$rc" != 0 ]; then
    echo "$rc" > "$LOGS/$tag.$driver.failed"
    printf '!! %s %s on %s FAILED (exit status %s)\n' "$name" "$*" "$driver" "$rc"
  fi
  RUNS_DONE=$((RUNS_DONE + 1))
  progress_set "$RUNS_DONE"
}

# both TAG NAME ARGS...: the bench on coopvk, then at once on lavapipe, so that the two
# see about the same load from whatever else shares the machine
both() {
  run_on coopvk "$@"
  run_on lavapipe "$@"
}

# every run, in order: once to count them, once to run them
all_runs() {
  for s in $SHADERS; do both "pipeline_$s" bench_pipeline_create "$s" "$PIPE_REPS"; done
  both axpy bench_elementwise "$ELEMENTS" "$REPS"
  both axpy_f16 bench_elementwise "$ELEMENTS" "$REPS" axpy_f16
  both gemm bench_gemm "$GEMM_SIZE" "$GEMM_REPS"
  # the same GLSL through glslang -O (locals already in SSA form)
  both gemm_O bench_gemm "$GEMM_SIZE" "$GEMM_REPS" O/gemm_tiled
  # register-blocked: 4x4 outputs per invocation, 64x64 per workgroup (what production GEMM
  # shaders look like), at the bench size and at the big size
  both gemm_blocked bench_gemm "$GEMM_SIZE" "$GEMM_REPS" gemm_blocked 64
  both gemm_blocked_big bench_gemm "$GEMM_BIG" "$GEMM_REPS" gemm_blocked 64
  # written the GPU way: an 8x8 block of C per invocation, contiguous, vec4 reads of the
  # shared tiles (64 accumulators: more than the registers at any width)
  both gemm_blocked8 bench_gemm "$GEMM_SIZE" "$GEMM_REPS" gemm_blocked8 128
  both peak bench_peak "$PEAK_N" "$PEAK_ITERS" "$GEMM_REPS"
  both reduce bench_reduce "$ELEMENTS" "$REPS"
  # cooperative-matrix GEMM: every combination at every size, identical SPIR-V on both
  for t in $COOPMAT_TYPES; do
    for n in $COOPMAT_SIZES; do both "coopmat_${t}_$n" bench_coopmat_gemm "$t" "$n" "$COOPMAT_REPS"; done
  done
  # the same GEMM in other shapes (gemm_staged_body.glsl), each against the baseline shape in
  # the same process
  for t in $COOPMAT_SHAPE_TYPES; do
    both "coopmat_shapes_$t" bench_coopmat_gemm "$t" "$COOPMAT_SHAPE_SIZE" "$COOPMAT_REPS" all
  done
  both softmax bench_softmax "$ROWS" "$REPS"
  # small dispatches: what each costs in a long command buffer, and one's latency
  both dispatch bench_dispatch "$DISPATCH_N" "$DISPATCH_REPS" "$DISPATCH_GROUPS"
  # cooperative-vector MLP: coopvk only (lavapipe has no VK_NV_cooperative_vector); the run
  # compares its kernels and its shader with a hand-written xsimd loop in the same process
  for t in f16 s8; do run_on coopvk "coopvec_mlp_$t" bench_coopvec_mlp "$t" "$COOPVEC_VECTORS" "$COOPVEC_REPS"; done
}
COUNT_ONLY=1; all_runs; COUNT_ONLY=''
progress_start bench "$RUNS_TOTAL" runs
all_runs
progress_line
progress_stop

# val TAG DRIVER KEY: the number after KEY in that run's log; FAIL if the run failed and
# has no such line, n/a if it did not print one.
val() {
  local v
  v=$(awk -v k="$3" '$1 == k { print $2 }' "$LOGS/$1.$2.log" 2>/dev/null | tail -n 1)
  if [ -n "$v" ]; then echo "$v"; elif [ -f "$LOGS/$1.$2.failed" ]; then echo FAIL; else echo n/a; fi
}
# shape_val TAG DRIVER SHAPE FIELD: field FIELD (3: G(FL)OP/s, 4: the ratio to the baseline)
# of the run's `coopmat_gemm_shape SHAPE` line; FAIL if the shape failed, unsupported if it
# does not fit the size or the tile, else as val.
shape_val() {
  local log="$LOGS/$1.$2.log" v
  v=$(awk -v s="$3" -v f="$4" '$1 == "coopmat_gemm_shape" && $2 == s { print $f }' "$log" 2>/dev/null | tail -n 1)
  if [ -n "$v" ]; then echo "$v"
  elif awk -v s="$3" '$1 == "coopmat_gemm_shape_failed" && $2 == s { f = 1 } END { exit !f }' "$log" 2>/dev/null; then echo FAIL
  elif awk -v s="$3" '$1 == "coopmat_gemm_shape_unsupported" && $2 == s { f = 1 } END { exit !f }' "$log" 2>/dev/null; then echo unsupported
  elif [ "$(val "$1" "$2" coopmat_gemm_unsupported)" = 1 ]; then echo unsupported
  elif [ -f "$LOGS/$1.$2.failed" ]; then echo FAIL
  else echo n/a; fi
}
# ratio A B: A / B, or n/a unless both are positive numbers
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.e+-]+$/ && b ~ /^[0-9.e+-]+$/ && b > 0) printf "%.2f", a / b; else print "n/a" }'
}
# pct F: a fraction as a percentage
pct() { awk -v f="$1" 'BEGIN { if (f ~ /^[0-9.e+-]+$/) printf "%.1f%%", 100 * f; else print f }'; }
# fmt X: at most 4 significant digits, so the columns stay narrow
fmt() { awk -v x="$1" 'BEGIN { if (x ~ /^[0-9.e+-]+$/) printf "%.4g", x; else print x }'; }

ROW='%-46s %10s %10s %7s %9s %9s\n'
# row LABEL TAG KEY [PEAK_KEY]: coopvk, lavapipe, coopvk/lavapipe, and each one's % of peak
row() {
  local c l
  c=$(val "$2" coopvk "$3")
  l=$(val "$2" lavapipe "$3")
  if [ -n "${4:-}" ]; then
    printf "$ROW" "$1" "$(fmt "$c")" "$(fmt "$l")" "$(ratio "$c" "$l")" \
      "$(pct "$(val "$2" coopvk "$4")")" "$(pct "$(val "$2" lavapipe "$4")")"
  else
    printf "$ROW" "$1" "$(fmt "$c")" "$(fmt "$l")" "$(ratio "$c" "$l")" "" ""
  fi
}

summary() {
  printf '\n== summary: %s, %s hardware threads, %s (higher ratio = coopvk faster) ==\n' \
    "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$(date -u +%Y-%m-%d)"
  for d in coopvk lavapipe; do
    printf 'CPU f32 FMA peak in the bench_peak process on %s: %s GFLOP/s 1 thread, %s GFLOP/s %s threads, implied clock %s GHz (2 FMA units assumed)\n' \
      "$d" "$(fmt "$(val peak $d cpu_peak_1t_gflops)")" "$(fmt "$(val peak $d cpu_peak_gflops)")" \
      "$(val peak $d cpu_peak_threads)" "$(fmt "$(val peak $d cpu_peak_clock_ghz)")"
  done
  printf "\n$ROW" "metric" "coopvk" "lavapipe" "ratio" "cvk %peak" "lvp %peak"
  row "tiled SGEMM ${GEMM_SIZE}^3, GFLOP/s" gemm gemm_gflops gemm_peak_fraction
  row "tiled SGEMM ${GEMM_SIZE}^3 (glslang -O), GFLOP/s" gemm_O gemm_gflops gemm_peak_fraction
  row "blocked SGEMM ${GEMM_SIZE}^3, GFLOP/s" gemm_blocked gemm_gflops gemm_peak_fraction
  row "blocked SGEMM ${GEMM_BIG}^3, GFLOP/s" gemm_blocked_big gemm_gflops gemm_peak_fraction
  row "blocked 8x8 SGEMM ${GEMM_SIZE}^3, GFLOP/s" gemm_blocked8 gemm_gflops gemm_peak_fraction
  for v in $PEAK_VARIANTS; do
    case $v in
      *i32) row "FMA chains $v (a*c + b), GOP/s" peak "peak_${v}_gops" ;;
      *) row "FMA chains $v, GOP/s" peak "peak_${v}_gops" "peak_${v}_peak_fraction" ;;
    esac
  done
  row "reduce ${ELEMENTS} floats, shared tree, GB/s" reduce reduce_shared_gbps
  row "reduce ${ELEMENTS} floats, subgroupAdd, GB/s" reduce reduce_subgroup_gbps
  row "softmax ${ROWS}x4096, rows/s" softmax softmax_rows_per_s
  row "softmax ${ROWS}x4096, GB/s" softmax softmax_gbps
  row "axpy fp32 ${ELEMENTS}, GB/s" axpy elementwise_gbps
  row "axpy fp16 ${ELEMENTS}, GB/s" axpy_f16 elementwise_gbps

  printf '\nFMA chains, vector / scalar GOP/s per component (1.00 = vector locals as good as scalars)\n'
  printf '%-46s %10s %10s\n' "variant" "coopvk" "lavapipe"
  for v in vec2_f32 vec4_f32 vec2_f16 vec4_f16 vec4_i32; do
    printf '%-46s %10s %10s\n' "$v" "$(val peak coopvk "peak_${v}_vs_scalar")" "$(val peak lavapipe "peak_${v}_vs_scalar")"
  done

  printf '\npipeline creation, ms, median of %s (fresh device, empty VkPipelineCache; lavapipe compiles at the first dispatch)\n' "$PIPE_REPS"
  local P='%-18s %12s %12s %12s %12s %9s\n'
  printf "$P" "shader" "cvk create" "lvp create" "cvk +1st" "lvp +1st" "lvp/cvk"
  for s in $SHADERS; do
    local cc lc cf lf
    cc=$(val "pipeline_$s" coopvk pipeline_cold_ms)
    lc=$(val "pipeline_$s" lavapipe pipeline_cold_ms)
    cf=$(val "pipeline_$s" coopvk pipeline_cold_first_dispatch_ms)
    lf=$(val "pipeline_$s" lavapipe pipeline_cold_first_dispatch_ms)
    printf "$P" "$s" "$(fmt "$cc")" "$(fmt "$lc")" "$(fmt "$cf")" "$(fmt "$lf")" "$(ratio "$lf" "$cf")"
  done

  printf '\n%-52s %10s %8s\n' "coopvk against itself / the C++ loop" "value" "ratio"
  local cold hit data disk
  cold=$(val pipeline_gemm_tiled coopvk pipeline_cold_ms)
  hit=$(val pipeline_gemm_tiled coopvk pipeline_cached_ms)
  data=$(val pipeline_gemm_tiled coopvk pipeline_from_data_ms)
  printf '%-52s %10s %8s\n' "gemm_tiled pipeline cold / cached (same cache)" "$(fmt "$hit") ms" "$(ratio "$cold" "$hit")"
  printf '%-52s %10s %8s\n' "gemm_tiled pipeline cold / from cache data" "$(fmt "$data") ms" "$(ratio "$cold" "$data")"
  disk=$(val pipeline_gemm_tiled coopvk pipeline_disk_ms)
  printf '%-52s %10s %8s\n' "gemm_tiled pipeline cold / disk cache (new device)" "$(fmt "$disk") ms" "$(ratio "$cold" "$disk")"
  for t in axpy axpy_f16; do
    local g one all
    g=$(val $t coopvk elementwise_gbps)
    one=$(val $t coopvk elementwise_cpu1_gbps)
    all=$(val $t coopvk elementwise_cpuN_gbps)
    printf '%-52s %10s %8s\n' "$t: coopvk / C++ loop 1 thread (loop GB/s)" "$(fmt "$one")" "$(ratio "$g" "$one")"
    printf '%-52s %10s %8s\n' "$t: coopvk / C++ loop $(nproc) threads (loop GB/s)" "$(fmt "$all")" "$(ratio "$g" "$all")"
  done
  printf 'gemm_ratio_coopvk_over_lavapipe %s\n' "$(ratio "$(val gemm coopvk gemm_gflops)" "$(val gemm lavapipe gemm_gflops)")"

  printf '\nsmall dispatches, us per dispatch in one command buffer, median of %s submissions (lower is better; ratio = lavapipe / coopvk)\n' "$DISPATCH_REPS"
  local D='%-44s %10s %10s %7s\n'
  printf "$D" "dispatches x workgroups, kind" "coopvk" "lavapipe" "ratio"
  for k in empty atomic barrier ggml busy; do
    for g in 1 "$DISPATCH_GROUPS"; do
      for n in $(( DISPATCH_N < 100 ? DISPATCH_N : 100 )) "$DISPATCH_N"; do
        local key="dispatch_${k}_g${g}_n${n}_us" c l
        c=$(val dispatch coopvk "$key")
        l=$(val dispatch lavapipe "$key")
        printf "$D" "$n x $g, $k" "$(fmt "$c")" "$(fmt "$l")" "$(ratio "$l" "$c")"
      done
    done
  done
  for key in "dispatch_record_ggml_us:recording $DISPATCH_N x $DISPATCH_GROUPS ggml, us per dispatch" \
             "dispatch_latency_g1_us:one dispatch of 1, submit to fence, us" \
             "dispatch_latency_g${DISPATCH_GROUPS}_us:one dispatch of $DISPATCH_GROUPS, submit to fence, us" \
             "dispatch_latency_idle_g${DISPATCH_GROUPS}_us:... after 5 ms idle, us"; do
    local c l
    c=$(val dispatch coopvk "${key%%:*}")
    l=$(val dispatch lavapipe "${key%%:*}")
    printf "$D" "${key#*:}" "$(fmt "$c")" "$(fmt "$l")" "$(ratio "$l" "$c")"
  done

  printf '\ncooperative-matrix GEMM (tiled, 2x2 tiles per subgroup, 2x2 subgroups), G(FL)OP/s median of %s, %% of the CPU peak for the class\n' "$COOPMAT_REPS"
  local C='%-10s %6s %10s %10s %10s %7s %9s %9s %9s %s\n'
  printf "$C" "types" "size" "tile" "coopvk" "lavapipe" "ratio" "cvk %peak" "lvp %peak" "cvk %conc" "peak class (G(FL)OP/s)"
  for t in $COOPMAT_TYPES; do
    for n in $COOPMAT_SIZES; do
      local tag="coopmat_${t}_$n" cv lv
      cv=$(val "$tag" coopvk coopmat_gemm_gflops)
      lv=$(val "$tag" lavapipe coopmat_gemm_gflops)
      [ "$(val "$tag" lavapipe coopmat_gemm_unsupported)" = 1 ] && lv=unsupported
      printf "$C" "$t" "$n" "$(val "$tag" coopvk coopmat_gemm_tile)" "$(fmt "$cv")" "$(fmt "$lv")" "$(ratio "$cv" "$lv")" \
        "$(pct "$(val "$tag" coopvk coopmat_gemm_peak_fraction)")" "$(pct "$(val "$tag" lavapipe coopmat_gemm_peak_fraction)")" \
        "$(pct "$(val "$tag" coopvk coopmat_gemm_concurrent_peak_fraction)")" \
        "$(awk '$1 == "coopmat_gemm_peak_class" { $1 = ""; print substr($0, 2) }' "$LOGS/$tag.coopvk.log" 2>/dev/null | tail -n 1) ($(fmt "$(val "$tag" coopvk coopmat_gemm_peak_gflops)"))"
    done
  done

  printf '\ncooperative-matrix GEMM shapes at %s^3 (gemm_staged_body.glsl), G(FL)OP/s median of %s and speed / the baseline shape'"'"'s in the same process\n' "$COOPMAT_SHAPE_SIZE" "$COOPMAT_REPS"
  local S='%-10s %-11s %10s %9s %10s %9s\n'
  printf "$S" "types" "shape" "coopvk" "/ base" "lavapipe" "/ base"
  for t in $COOPMAT_SHAPE_TYPES; do
    for s in $COOPMAT_SHAPES; do
      local tag="coopmat_shapes_$t"
      printf "$S" "$t" "$s" "$(fmt "$(shape_val "$tag" coopvk "$s" 3)")" "$(fmt "$(shape_val "$tag" coopvk "$s" 4)")" \
        "$(fmt "$(shape_val "$tag" lavapipe "$s" 3)")" "$(fmt "$(shape_val "$tag" lavapipe "$s" 4)")"
    done
  done

  printf '\ncooperative-vector MLP 64-64-64, %s vectors, M vectors/s median of %s, %% of the CPU peak for the class\n' "$COOPVEC_VECTORS" "$COOPVEC_REPS"
  local V='%-6s %10s %10s %10s %9s %9s %9s %s\n'
  printf "$V" "types" "shader" "kernels" "xsimd" "shader%" "kernels%" "xsimd%" "shader/xsimd, kernels/xsimd"
  for t in f16 s8; do
    local tag="coopvec_mlp_$t" sv
    sv=$(val "$tag" coopvk mlp_shader_vectors_per_s)
    [ "$(val "$tag" coopvk mlp_shader_unsupported)" = 1 ] && sv=unsupported
    printf "$V" "$t" "$(fmt "$(awk -v v="$sv" 'BEGIN { if (v ~ /^[0-9.e+-]+$/) print v / 1e6; else print v }')")" \
      "$(fmt "$(awk -v v="$(val "$tag" coopvk mlp_kernel_vectors_per_s)" 'BEGIN { print v / 1e6 }')")" \
      "$(fmt "$(awk -v v="$(val "$tag" coopvk mlp_xsimd_vectors_per_s)" 'BEGIN { print v / 1e6 }')")" \
      "$(pct "$(val "$tag" coopvk mlp_shader_peak_fraction)")" "$(pct "$(val "$tag" coopvk mlp_kernel_peak_fraction)")" \
      "$(pct "$(val "$tag" coopvk mlp_xsimd_peak_fraction)")" \
      "$(val "$tag" coopvk mlp_shader_over_xsimd), $(val "$tag" coopvk mlp_kernel_over_xsimd) ($(awk '$1 == "mlp_peak_class" { $1 = ""; print substr($0, 2) }' "$LOGS/$tag.coopvk.log" 2>/dev/null | tail -n 1))"
  done

  local failed
  # No failed run is the usual case: ls then fails, and pipefail must not end the script.
  failed=$(cd "$LOGS" && { ls ./*.failed 2>/dev/null || true; } | sed 's|^\./||; s|\.failed$||' | tr '\n' ' ')
  if [ -n "$failed" ]; then
    printf '\nFAILED runs (see %s/<run>.log): %s\n' "$LOGS" "$failed"
    grep -h -E 'WRONG RESULT|PIPELINE FAILED|CRASHED' "$LOGS"/*.log 2>/dev/null | sort -u | sed 's/^/  /' || true
  fi
  printf '\n(bench time %s s)\n' "$(( $(date +%s) - START ))"
}

# coopmat_csv: the cooperative-matrix GEMM runs as CSV (one row per driver, types, size)
coopmat_csv() {
  echo "driver,types,size,tile,gflops_median,gflops_best,gflops_worst,peak_gflops,peak_fraction,concurrent_peak_gflops,concurrent_peak_fraction"
  for d in coopvk lavapipe; do
    for t in $COOPMAT_TYPES; do
      for n in $COOPMAT_SIZES; do
        local tag="coopmat_${t}_$n"
        [ "$(val "$tag" "$d" coopmat_gemm_unsupported)" = 1 ] && continue
        echo "$d,$t,$n,$(val "$tag" "$d" coopmat_gemm_tile),$(val "$tag" "$d" coopmat_gemm_gflops),$(val "$tag" "$d" coopmat_gemm_best_gflops),$(val "$tag" "$d" coopmat_gemm_worst_gflops),$(val "$tag" "$d" coopmat_gemm_peak_gflops),$(val "$tag" "$d" coopmat_gemm_peak_fraction),$(val "$tag" "$d" coopmat_gemm_concurrent_peak_gflops),$(val "$tag" "$d" coopmat_gemm_concurrent_peak_fraction)"
      done
    done
  done
}

summary | tee "$LOGS/summary.txt"
coopmat_csv > "$LOGS/coopmat_gemm.csv"
# One line per driver and combination: G(FL)OP/s against the matrix size, log scale.
{
  printf 'set terminal pngcairo size 1100,650 noenhanced\nset output "%s"\n' "$LOGS/coopmat_gemm.png"
  printf 'set datafile separator ","\nset key outside right\nset logscale x 2\nset logscale y\n'
  printf 'set xlabel "M = N = K"\nset ylabel "G(FL)OP/s (median)"\nset grid\n'
  printf 'set title "cooperative-matrix GEMM, coopvk and lavapipe, %s"\n' "$(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
  printf 'plot '
  sep=""
  for d in coopvk lavapipe; do
    for t in $COOPMAT_TYPES; do
      grep -q "^$d,$t," "$LOGS/coopmat_gemm.csv" || continue
      printf '%s"< grep ^%s,%s, %s" using 3:5 with linespoints title "%s %s"' "$sep" "$d" "$t" "$LOGS/coopmat_gemm.csv" "$d" "$t"
      sep=", "
    done
  done
  printf '\n'
} > "$LOGS/coopmat_gemm.gp"
if command -v gnuplot >/dev/null; then
  gnuplot "$LOGS/coopmat_gemm.gp" && echo "chart: $LOGS/coopmat_gemm.png, data: $LOGS/coopmat_gemm.csv"
else
  echo "no gnuplot (scripts/setup.sh --bench installs it): data in $LOGS/coopmat_gemm.csv"
fi

# The third-party benchmarks last: they are long, and they read this run's peaks and bandwidth
# from its logs (BENCH_CLIENTS_FROM_BENCH). They print their own progress lines and summary.
CLIENTS_RC=0
if [ "${BENCH_CLIENTS:-1}" != 0 ]; then
  BENCH_CLIENTS_FROM_BENCH=1 COOPVK_BUILD_DIR=$BUILD "$ROOT/scripts/bench_clients.sh" || CLIENTS_RC=$?
fi
if ls "$LOGS"/*.failed > /dev/null 2>&1 || [ "$CLIENTS_RC" != 0 ]; then exit 1; fi
