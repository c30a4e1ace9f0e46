#!/usr/bin/env bash
# Runs llama.cpp's test-backend-ops (a real client: llama.cpp's prebuilt Vulkan backend from npm,
# each op compared with llama.cpp's own CPU backend) against the coopvk driver in BUILD_DIR.
# A tool run by hand; CI never runs it (it needs the npm registry and takes hours in full).
#
#   usage: conformance/clients/llama_backend_ops.sh BUILD_DIR
#   env:   LLAMA_DIR         where llama.cpp is set up (default /tmp/llama); set up by get-llama.sh
#                            when DIR/bin/test-backend-ops is missing (needs npm, git, g++)
#          LLAMA_OPS         comma-separated ops (default: MUL_MAT,MUL_MAT_ID,FLASH_ATTN_EXT,ADD,MUL,
#                            RMS_NORM,SOFT_MAX,ROPE,GET_ROWS,CPY,CONT,SCALE,GLU); MUL_MAT, when listed,
#                            runs a second time with COOPVK_THREADS=3 (an odd split of the workgroups)
#          LLAMA_OP_TIMEOUT  seconds one op's run may take (default 1800)
#          LLAMA_PARAMS      a regex passed as -p: only cases whose parameters match
#          LLAMA_OUT         log folder (default BUILD_DIR/llama): OP.log per run, summary.txt
#          LLAMA_COMPARE_LAVAPIPE=1  rerun the failing and crashing cases on Mesa lavapipe 26, from
#                            $LVP26 (see get-llama.sh) or third_party/sid-bench (scripts/setup.sh
#                            --bench), to tell coopvk bugs (lavapipe passes) from client ones
#          COOPVK_PROGRESS_INTERVAL  seconds between progress lines on stderr (default 20; 0: none),
#                            also one after each run: "[llama] DONE/TOTAL cases (P%), ELAPSED
#                            elapsed, ~LEFT remaining; run 3/14 MUL_MAT_ID: 120/~340 cases", the
#                            estimate from the rate so far (scripts/lib/progress.sh). The case
#                            counts come from a `test-backend-ops support` pass on the CPU backend,
#                            which leaves out the fused cases: estimates, set right as runs end
#                            (without that pass: DONE/TOTAL runs)
# Exit status: 0 when no case fails and no run crashed or timed out, 1 otherwise, 2 for a setup
# error (no build, no llama.cpp and no way to fetch it, no coopvk device seen by ggml-vulkan).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/lib/progress.sh
. "$ROOT/scripts/lib/progress.sh"
die() { echo "llama_backend_ops: $*" >&2; exit 2; }
say() { echo "llama: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR   (the coopvk build folder holding coopvk_icd.json)"
BUILD=$(cd "$1" 2>/dev/null && pwd) || die "no build folder '$1': build the driver first (scripts/build.sh)"
MANIFEST=$BUILD/coopvk_icd.json
[ -f "$MANIFEST" ] || die "no driver manifest $MANIFEST: build the driver first (scripts/build.sh)"

LLAMA_DIR=${LLAMA_DIR:-/tmp/llama}
OPS=${LLAMA_OPS:-MUL_MAT,MUL_MAT_ID,FLASH_ATTN_EXT,ADD,MUL,RMS_NORM,SOFT_MAX,ROPE,GET_ROWS,CPY,CONT,SCALE,GLU}
OP_TIMEOUT=${LLAMA_OP_TIMEOUT:-1800}
PARAMS=${LLAMA_PARAMS:-}
OUT=${LLAMA_OUT:-$BUILD/llama}
[[ $OP_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "LLAMA_OP_TIMEOUT must be a positive number of seconds"
mkdir -p "$OUT" || die "cannot create log folder $OUT"
OUT=$(cd "$OUT" && pwd)

# ---- 1. llama.cpp: reuse a setup, or make one with get-llama.sh --------------------------------
TBO=$LLAMA_DIR/bin/test-backend-ops
if [ ! -x "$TBO" ]; then
  # The workspace's shared copy when there is one (it may be newer), else the project's own copy.
  GET=$ROOT/../shared/clients/get-llama.sh
  [ -f "$GET" ] || GET=$ROOT/conformance/clients/get-llama.sh
  for tool in npm git "${CXX:-g++}"; do
    command -v "$tool" > /dev/null ||
      die "no $LLAMA_DIR/bin/test-backend-ops, and setting it up needs '$tool' (npm: the npm registry; apt-get install npm git g++)"
  done
  say "setting up llama.cpp in $LLAMA_DIR with $GET (about a minute; log $OUT/setup.log)"
  sh "$GET" "$LLAMA_DIR" > "$OUT/setup.log" 2>&1 || { tail -20 "$OUT/setup.log" >&2; die "get-llama.sh failed (log $OUT/setup.log)"; }
  [ -x "$TBO" ] || die "get-llama.sh did not produce $TBO"
fi

# ---- 2. running and parsing ---------------------------------------------------------------------

# parse_log LOG CASES_TSV: writes "STATUS<TAB>case" per case (OK, FAIL, NS, SKIP; RUNNING for a case
# whose result never came: the one running when the process died or was killed) and prints
# "ok fail ns skip summary" where summary is 1 when the final "N/M backends passed" line is there.
# test-backend-ops prints "  OP(params): " and flushes, then the status; stderr goes to the same
# log, so a warning can split a case's line: a status on a later line belongs to the open case.
parse_log() {
  : > "$2"   # awk creates it only at the first case
  awk -v cases="$2" '
    function status(s) {
      if (s ~ /not supported/) return "NS"
      if (s ~ /skipping/) return "SKIP"
      if (s ~ /(^|[^A-Za-z])OK[ \t]*$/) return "OK"
      if (s ~ /FAIL[ \t]*$/) return "FAIL"
      return ""
    }
    function close_case(st) { print st "\t" open > cases; n[st]++; open = "" }
    { gsub(/\033\[[0-9;]*m/, ""); line = $0 }
    /^  [A-Z0-9_]+\(/ && index(line, "): ") {
      if (open != "") close_case("RUNNING")   # a result that never came (should not happen)
      i = index(line, "): "); open = substr(line, 3, i - 2); rest = substr(line, i + 3)
      st = status(rest); if (st != "") close_case(st)
      next
    }
    open != "" { st = status(line); if (st != "") close_case(st) }
    /^[0-9]+\/[0-9]+ backends passed/ { summary = 1 }
    END { if (open != "") close_case("RUNNING"); print n["OK"] + 0, n["FAIL"] + 0, n["NS"] + 0, n["SKIP"] + 0, summary + 0 }
  ' "$1"
}

# run_tbo LOG TIMEOUT ENV... -- ARGS...: test-backend-ops from LLAMA_DIR/bin (ggml loads its
# backends from the executable's folder) with the environment ENV, on the driver chosen by RUNNER
# (coopvk unless set). Prints the exit status; "timeout" when the time limit ended it.
RUNNER=()
run_tbo() {
  local log=$1 limit=$2 envs=() rc=0 start=$SECONDS
  shift 2
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  # COOPVK_THREADS from the caller's environment is dropped: the default run must use the
  # driver's default worker count, and the second MUL_MAT run sets it itself.
  (cd "$LLAMA_DIR/bin" && exec env -u COOPVK_THREADS GGML_VK_VISIBLE_DEVICES=0 \
      VK_DRIVER_FILES="$MANIFEST" VK_ICD_FILENAMES="$MANIFEST" "${envs[@]}" \
      timeout -k 10 "$limit" "${RUNNER[@]}" ./test-backend-ops "$@") > "$log" 2>&1 || rc=$?
  # timeout(1) exits 124 when it stopped the program, 137 when it had to KILL it (an OOM kill
  # is 137 too, hence the clock)
  if [ "$rc" = 124 ] || { [ "$rc" = 137 ] && [ $((SECONDS - start)) -ge "$limit" ]; }; then echo timeout; else echo "$rc"; fi
}

signame() { if [ "$1" -gt 128 ] 2>/dev/null; then echo "signal $(kill -l $(($1 - 128)) 2>/dev/null || echo $(($1 - 128)))"; else echo "exit status $1"; fi; }

RUNS=()   # "label -o-filter threads"
IFS=',' read -r -a op_list <<< "$OPS"
for op in "${op_list[@]}"; do
  op=$(echo "$op" | tr -d '[:space:]')
  [ -n "$op" ] || continue
  # test-backend-ops matches -o against ggml_op_desc(), which names a GLU case by its variant
  # (REGLU, GEGLU, SWIGLU, ...): a plain "GLU" would select nothing.
  filter=$op; [ "$op" != GLU ] || filter='.*GLU.*'
  RUNS+=("$op $filter -")
  [ "$op" != MUL_MAT ] || RUNS+=("MUL_MAT.threads3 MUL_MAT 3")
done
[ ${#RUNS[@]} -gt 0 ] || die "LLAMA_OPS names no op"

# EST[i]: about how many cases run i has, for the progress lines; empty when unknown. One
# `test-backend-ops support` pass lists the selected cases on the CPU backend alone (3 s for the
# default ops: ggml-vulkan opens no device without GGML_VK_VISIBLE_DEVICES). Support mode leaves
# out the fused cases that test mode runs too (ADD: 90 of 101), so these are estimates.
EST=()
count_cases() {
  local run label filter threads filters=()
  for run in "${RUNS[@]}"; do read -r label filter threads <<< "$run"; filters+=("$filter"); done
  local sel args
  sel=$(IFS=,; echo "${filters[*]}")
  args=(support -b CPU -o "$sel"); [ -z "$PARAMS" ] || args+=(-p "$PARAMS")
  (cd "$LLAMA_DIR/bin" && exec env -u GGML_VK_VISIBLE_DEVICES VK_DRIVER_FILES="$MANIFEST" \
      VK_ICD_FILENAMES="$MANIFEST" timeout -k 5 120 ./test-backend-ops "${args[@]}") > "$OUT/support.log" 2>&1 || return 0
  # test-backend-ops matches a plain op name exactly, anything else as a regex found in the name
  mapfile -t EST < <(awk -v f="$(IFS=' '; echo "${filters[*]}")" '
    BEGIN { n = split(f, flt, " ") }
    /^  [A-Z0-9_]+\(/ { name = substr($0, 3, index($0, "(") - 3)
      for (i = 1; i <= n; i++) if (flt[i] ~ /^[A-Z0-9_]+$/ ? name == flt[i] : name ~ flt[i]) c[i]++ }
    END { for (i = 1; i <= n; i++) print c[i] + 0 }' "$OUT/support.log") || EST=()
  [ ${#EST[@]} = ${#RUNS[@]} ] || EST=()
}
count_cases

# llama_progress (the ticker's): progress_set holds "I FINISHED [running]": I runs have ended,
# with FINISHED cases among them, and run I+1 is running (its cases are counted in its log as
# they come) or about to start. The total is what the ended runs did plus the estimates of the
# others (at least what the running one has done).
# shellcheck disable=SC2317  # called by the progress ticker
llama_progress() {
  local i fin running label filter threads cur=0 est=0 total j note
  read -r i fin running <<< "$(progress_get)"
  [[ ${i:-} =~ ^[0-9]+$ && ${fin:-} =~ ^[0-9]+$ ]] || return 0
  if [ "$i" -lt ${#RUNS[@]} ]; then
    read -r label filter threads <<< "${RUNS[$i]}"
    if [ -n "$running" ]; then
      cur=$(LC_ALL=C grep -cE '^  [A-Z0-9_]+\(.*\): ' "$OUT/$label.log" 2>/dev/null) || true
      cur=${cur:-0}
    fi
    [ ${#EST[@]} = 0 ] || est=${EST[$i]}
    [ "$cur" -le "$est" ] || est=$cur
  fi
  if [ -z "$running" ]; then
    note=''; [ "$i" = 0 ] || note="run $i/${#RUNS[@]} ${RUNS[$((i - 1))]%% *} ended"
  elif [ ${#EST[@]} = 0 ]; then
    note="run $((i + 1))/${#RUNS[@]} $label: $cur cases done"
  else
    note="run $((i + 1))/${#RUNS[@]} $label: $cur/~$est cases"
  fi
  if [ ${#EST[@]} = 0 ]; then echo "$i $note"; return 0; fi
  total=$((fin + est))
  for ((j = i + 1; j < ${#RUNS[@]}; j++)); do total=$((total + EST[j])); done
  echo "$((fin + cur))/$total $note"
}

say "test-backend-ops from $LLAMA_DIR on $MANIFEST; ${OP_TIMEOUT}s per op${PARAMS:+; params matching /$PARAMS/}; logs in $OUT"
TABLE=$OUT/table.txt BAD=$OUT/failing.txt
printf '%-18s %7s %6s %8s %8s %6s %8s %7s\n' op OK FAIL not-sup skipped crash timeout seconds > "$TABLE"
: > "$BAD"
any_bad=0
finished=0   # cases in the runs that have ended, for the progress lines
if [ ${#EST[@]} -gt 0 ]; then
  total=0; for e in "${EST[@]}"; do total=$((total + e)); done
  progress_start llama "$total" cases llama_progress
else
  progress_start llama ${#RUNS[@]} runs llama_progress
fi
progress_set "0 0"
for ((r = 0; r < ${#RUNS[@]}; r++)); do
  read -r label filter threads <<< "${RUNS[$r]}"
  envs=(); [ "$threads" = - ] || envs=(COOPVK_THREADS="$threads")
  args=(-b Vulkan0 -o "$filter"); [ -z "$PARAMS" ] || args+=(-p "$PARAMS")
  log=$OUT/$label.log
  : > "$log"   # not an earlier run's cases in the progress lines
  progress_set "$r $finished running"
  say "$label ..."
  start=$SECONDS
  rc=$(run_tbo "$log" "$OP_TIMEOUT" "${envs[@]}" -- "${args[@]}")
  secs=$((SECONDS - start))
  # Without the driver ggml-vulkan finds no device, test-backend-ops skips Vulkan0 and "passes".
  if ! grep -q '^ggml_vulkan: 0 = coopvk' "$log" || ! grep -q '^Backend [0-9]*/[0-9]*: Vulkan0' "$log"; then
    grep -v '^  [A-Z0-9_]*(' "$log" | head -20 >&2
    die "ggml-vulkan did not run on coopvk in $label (log $log): is $MANIFEST loadable? (vulkaninfo with VK_DRIVER_FILES=$MANIFEST)"
  fi
  read -r ok fail ns skip summary < <(parse_log "$log" "$OUT/$label.cases.tsv")
  crash=- timeout=-
  if [ "$rc" = timeout ]; then
    timeout=yes
  elif [ "$summary" = 0 ] || [ "$rc" -gt 128 ]; then
    crash=yes
  fi
  running=$(awk -F'\t' '$1 == "RUNNING" { print $2 }' "$OUT/$label.cases.tsv")
  awk -F'\t' -v l="$label" '$1 == "FAIL" { print "FAIL     " $2 "   [" l "]" }' "$OUT/$label.cases.tsv" >> "$BAD"
  if [ "$crash" = yes ]; then
    echo "CRASH    ${running:-(between cases)}   [$label: $(signame "$rc") without the final summary; the rest of this op did not run]" >> "$BAD"
  fi
  if [ "$timeout" = yes ]; then
    echo "TIMEOUT  ${running:-(between cases)}   [$label: killed in this case at the op's limit of ${OP_TIMEOUT}s, $((ok + fail + ns + skip)) cases done; the rest did not run]" >> "$BAD"
  fi
  if [ "$fail" != 0 ] || [ "$crash" = yes ] || [ "$timeout" = yes ]; then any_bad=1; fi
  printf '%-18s %7d %6d %8d %8d %6s %8s %7d\n' "$label" "$ok" "$fail" "$ns" "$skip" "$crash" "$timeout" "$secs" | tee -a "$TABLE" >&2
  # Nothing selected is no pass: a misspelt op or a LLAMA_PARAMS that filters every case.
  if [ $((ok + fail + ns + skip)) = 0 ] && [ "$crash$timeout" = -- ]; then
    # shellcheck disable=SC2016  # the quotes are text: the message shows the command line
    echo "  (no case of $label ran: -o '$filter'${PARAMS:+ -p '$PARAMS'} selects nothing)" | tee -a "$TABLE" >&2
  fi
  finished=$((finished + $(LC_ALL=C grep -cE '^  [A-Z0-9_]+\(.*\): ' "$log" || true)))
  progress_set "$((r + 1)) $finished"
  progress_line
done
progress_stop

# ---- 3. optional: the failing cases again on lavapipe ------------------------------------------
COMPARE=$OUT/lavapipe.txt
rm -f "$OUT"/lavapipe.*   # an earlier run's chunks would be read again
if [ "${LLAMA_COMPARE_LAVAPIPE:-0}" = 1 ] && [ -s "$BAD" ]; then
  LVP_JSON=
  if [ -n "${LVP26:-}" ] && [ -f "$LVP26/lvp_icd.json" ]; then
    L=$(cd "$LVP26" && pwd)
    LVP_JSON=$L/lvp_icd.json
    # as get-llama.sh's lvp26-run: sid's ld.so, with llama's bin folder on its library path
    RUNNER=("$L/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$L/root/usr/lib/x86_64-linux-gnu:$LLAMA_DIR/bin")
  elif [ -x "$ROOT/third_party/sid-bench/bin/sid-run" ]; then
    LVP_JSON=$ROOT/third_party/sid-bench/lvp_icd.json
    RUNNER=("$ROOT/third_party/sid-bench/bin/sid-run")
  fi
  if [ -z "$LVP_JSON" ]; then
    say "LLAMA_COMPARE_LAVAPIPE=1 but no lavapipe: set LVP26 (see get-llama.sh) or run scripts/setup.sh --bench"
  else
    say "rerunning the failing cases on lavapipe ($LVP_JSON)"
    MANIFEST_COOPVK=$MANIFEST
    MANIFEST=$LVP_JSON
    sed -n 's/^\(FAIL\|CRASH\) *\([A-Z0-9_]\+(.*)\)   \[.*/\2/p' "$BAD" | sort -u > "$OUT/lavapipe.cases"
    : > "$OUT/lavapipe.cases.tsv"
    # full case names go to -o as a comma-separated list; a few dozen a process keeps argv short
    # and a lavapipe crash costs only its chunk
    split -l 40 -d "$OUT/lavapipe.cases" "$OUT/lavapipe.chunk."
    progress_start llama-lavapipe "$(wc -l < "$OUT/lavapipe.cases")" cases
    lvp_done=0
    for chunk in "$OUT"/lavapipe.chunk.*; do
      sel=$(paste -sd, "$chunk")
      run_tbo "$chunk.log" "$OP_TIMEOUT" -- -b Vulkan0 -o "$sel" > /dev/null
      parse_log "$chunk.log" "$chunk.tsv" > /dev/null
      cat "$chunk.tsv" >> "$OUT/lavapipe.cases.tsv"
      lvp_done=$((lvp_done + $(wc -l < "$chunk")))
      progress_set "$lvp_done"
    done
    progress_line
    progress_stop
    MANIFEST=$MANIFEST_COOPVK
    awk -F'\t' 'FILENAME == ARGV[1] { r[$2] = $1; next }
      { v = ($0 in r) ? r[$0] : "none"
        w = v == "OK" ? "passes on lavapipe: a coopvk bug" : v == "FAIL" ? "fails on lavapipe too: look at the client or the test" \
          : v == "NS" ? "not supported on lavapipe" : v == "RUNNING" ? "lavapipe crashed or hung in it" : "no result on lavapipe (see lavapipe.chunk.*.log)"
        print "  " $0 "\n      " w }' "$OUT/lavapipe.cases.tsv" "$OUT/lavapipe.cases" > "$COMPARE"
  fi
fi

# ---- 4. summary ---------------------------------------------------------------------------------
{
  echo "test-backend-ops on coopvk ($MANIFEST), logs in $OUT:"
  cat "$TABLE"
  if [ -s "$BAD" ]; then echo "Failing cases ($(wc -l < "$BAD")):"; sed 's/^/  /' "$BAD"; fi
  if [ -s "$COMPARE" ]; then echo "The same cases on lavapipe:"; cat "$COMPARE"; fi
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$any_bad"
