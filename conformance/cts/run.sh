#!/usr/bin/env bash
# Runs the Vulkan CTS (an existing deqp-vk binary) against the built coopvk driver and
# summarises the results. A tool run by hand; CI never runs it (it needs a deqp-vk build).
#
#   usage: conformance/cts/run.sh DEQP_VK [--shard I/N] [GROUP_GLOB | @CASELIST_FILE ...]
#          conformance/cts/run.sh --merge OUT_DIR...
#          default selection: dEQP-VK.compute.pipeline.cooperative_matrix.*
#          --shard I/N: run only shard I (1..N) of the selection, cases I, I+N, I+2N, ... of it, so
#          that N machines share a list; --merge then sums their output folders (results.tsv)
#          into one summary in CTS_OUT (default: the first folder's parent, merged-<timestamp>).
#   env:   COOPVK_BUILD_DIR  the driver build (default: the repo's build/); uses its coopvk_icd.json
#          CTS_OUT           output folder (default: $COOPVK_BUILD_DIR/cts/<timestamp>)
#          CTS_CASE_TIMEOUT  seconds one case may run before it is declared a hang (default 300)
#          CTS_JOBS          deqp-vk processes run in parallel, each on its own shard (default 1)
#          CTS_ARCHIVE_DIR   deqp-vk's --deqp-archive-dir (default: the folder holding DEQP_VK)
#          CTS_LIST_MAX      at most this many failing cases are printed (default 200; all are in
#                            results.csv)
#          CTS_POLL          watchdog poll interval in seconds (default 1)
#          COOPVK_PROGRESS_INTERVAL  seconds between progress lines on stderr (default 20; 0: none):
#                            "[cts] DONE/TOTAL cases (P%), ELAPSED elapsed, ~LEFT remaining",
#                            counted over every process, the estimate from the rate so far
#                            (scripts/lib/progress.sh); CTS_PROGRESS is an older name for it
#
# A crash or a hang ends a deqp-vk process and with it the rest of its list. So the runner reads the
# .qpa log after each process: the case that has `#beginTestCaseResult` but no `#endTestCaseResult`
# was running when it died; it is recorded as Crash (or Timeout when the watchdog killed it) and
# deqp-vk is started again on the cases that have no result yet.
#
# Output (in CTS_OUT): cases.txt (the expanded list), TestResults.qpa (every process's log, in the
# order they ran, each dead case closed with `#terminateTestCaseResult Crash|Timeout` as deqp's own
# crash handler would), results.csv (case,status), results.tsv (case, status, the result message),
# summary.txt (what is printed), shard-N/ (each shard's lists and per-process logs).
# Exit status: 0 when every case is Pass, NotSupported, QualityWarning, CompatibilityWarning or
# Waiver; 1 when any is Fail, Crash, Timeout, InternalError or anything else (NotRun: deqp-vk could
# not be made to run it); 2 for a usage or setup error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=scripts/lib/progress.sh
. "$ROOT/scripts/lib/progress.sh"
DEFAULT_GLOB='dEQP-VK.compute.pipeline.cooperative_matrix.*'

die() { echo "cts/run.sh: $*" >&2; exit 2; }
say() { echo "cts: $*" >&2; }

# summarise RESULTS_TSV TOTAL SECONDS OUT: the summary (printed and in OUT/summary.txt); the
# exit status is 1 when a case failed.
summarise() {
  awk -F'\t' -v max="$LIST_MAX" -v total="$2" -v out="$4" -v secs="$3" '
    function ok(s) { return s == "Pass" || s == "NotSupported" || s == "QualityWarning" || s == "CompatibilityWarning" || s == "Waiver" }
    {
      n[$2]++
      if ($2 == "NotSupported") { r = ($3 == "" ? "(no reason given)" : $3); if (!(r in ns)) nso[++nr] = r; ns[r]++ }
      if (!ok($2)) bad[++nb] = $2 "  " $1 ($3 == "" ? "" : "  -- " substr($3, 1, 200))
    }
    END {
      split("Pass Fail NotSupported QualityWarning CompatibilityWarning InternalError Crash Timeout", order, " ")
      printf "CTS results: %d cases in %d s (%s)\n", total, secs, out
      for (i = 1; i <= 8; i++) { printf "  %-21s %d\n", order[i], n[order[i]] + 0; shown[order[i]] = 1 }
      for (s in n) if (!(s in shown)) printf "  %-21s %d\n", s, n[s]
      if (nr) {
        # most frequent reason first (a selection sort: nr is small)
        print "Not supported, by reason:"
        for (i = 1; i <= nr; i++) { b = i; for (j = i + 1; j <= nr; j++) if (ns[nso[j]] > ns[nso[b]]) b = j; t = nso[i]; nso[i] = nso[b]; nso[b] = t }
        for (i = 1; i <= nr; i++) printf "  %6d  %s\n", ns[nso[i]], nso[i]
      }
      if (nb) {
        printf "Failing cases (%d):\n", nb
        for (i = 1; i <= nb && i <= max; i++) print "  " bad[i]
        if (nb > max) printf "  ... and %d more (results.csv has them all)\n", nb - max
      }
      exit nb ? 1 : 0
    }' "$1" > "$4/summary.txt"
  local rc=$?
  cat "$4/summary.txt"
  return $rc
}

LIST_MAX=${CTS_LIST_MAX:-200}
[ $# -ge 1 ] || die "usage: $0 DEQP_VK [--shard I/N] [GROUP_GLOB | @CASELIST_FILE ...] | $0 --merge OUT_DIR..."

# ---- --merge: the shards' output folders summed into one -------------------------------------
if [ "$1" = --merge ]; then
  shift
  [ $# -ge 1 ] || die "--merge needs the output folders of the shard runs"
  for d in "$@"; do [ -s "$d/results.tsv" ] || die "no results.tsv in '$d' (the output folder of a run)"; done
  OUT=${CTS_OUT:-$(cd "$(dirname "$1")" && pwd)/merged-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$OUT" || die "cannot create output folder $OUT"
  # A case in several folders (overlapping shards) counts once: its first result.
  awk -F'\t' '!($1 in seen) { seen[$1]; print }' "${@/%//results.tsv}" > "$OUT/results.tsv"
  { echo "case,status"; awk -F'\t' '{ print $1 "," $2 }' "$OUT/results.tsv"; } > "$OUT/results.csv"
  rc=0
  summarise "$OUT/results.tsv" "$(wc -l < "$OUT/results.tsv")" 0 "$OUT" || rc=$?
  exit "$rc"
fi

DEQP=$1; shift
SHARD_I=1 SHARD_N=1
if [ "${1:-}" = --shard ]; then
  [[ ${2:-} =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || die "--shard takes I/N, 1 <= I <= N"
  SHARD_I=${BASH_REMATCH[1]} SHARD_N=${BASH_REMATCH[2]}
  [ "$SHARD_I" -le "$SHARD_N" ] || die "--shard $2: I must be at most N"
  shift 2
fi
[ -e "$DEQP" ] || die "no deqp-vk at '$DEQP' (give the path of a built deqp-vk binary)"
{ [ -f "$DEQP" ] && [ -x "$DEQP" ]; } || die "'$DEQP' is not an executable file"
DEQP=$(cd "$(dirname "$DEQP")" && pwd)/$(basename "$DEQP")
ARCHIVE=${CTS_ARCHIVE_DIR:-$(dirname "$DEQP")}

BUILD=$(cd "${COOPVK_BUILD_DIR:-$ROOT/build}" 2>/dev/null && pwd) ||
  die "no build folder '${COOPVK_BUILD_DIR:-$ROOT/build}': build the driver first (scripts/build.sh)"
MANIFEST=$BUILD/coopvk_icd.json
[ -f "$MANIFEST" ] || die "no driver manifest $MANIFEST: build the driver first (scripts/build.sh)"

TIMEOUT=${CTS_CASE_TIMEOUT:-300}
JOBS=${CTS_JOBS:-1}
POLL=${CTS_POLL:-1}
# shellcheck disable=SC2034  # read by progress_start
[ -z "${CTS_PROGRESS:-}" ] || COOPVK_PROGRESS_INTERVAL=$CTS_PROGRESS
[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "CTS_CASE_TIMEOUT must be a positive number of seconds"
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "CTS_JOBS must be a positive number"

OUT=${CTS_OUT:-$BUILD/cts/$(date +%Y%m%d-%H%M%S)}
if [ -z "${CTS_OUT:-}" ] && [ -e "$OUT" ]; then OUT=$OUT-$$; fi
mkdir -p "$OUT" || die "cannot create output folder $OUT"
OUT=$(cd "$OUT" && pwd)

# The loader reads VK_DRIVER_FILES; older loaders only VK_ICD_FILENAMES. Both name only coopvk, so
# no other driver on the machine can be picked up instead.
export VK_DRIVER_FILES=$MANIFEST VK_ICD_FILENAMES=$MANIFEST

# ---- 1. the selection: patterns (globs or exact names) from the arguments and @files ----------
PATTERNS=$OUT/patterns.txt
: > "$PATTERNS"
[ $# -gt 0 ] || set -- "$DEFAULT_GLOB"
for arg in "$@"; do
  if [[ $arg == @* ]]; then
    f=${arg#@}
    [ -r "$f" ] || die "cannot read case list '$f'"
    # One name or glob a line; blank lines and # comments are skipped; CRLF files are fine.
    sed -e 's/\r$//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' "$f" >> "$PATTERNS"
  else
    printf '%s\n' "$arg" >> "$PATTERNS"
  fi
done

# Every case name the binary has. `--deqp-runmode=stdout-caselist` is txt-caselist written to
# stdout: txt-caselist would write a file with millions of GROUP lines (hundreds of MB) first.
# Listing takes seconds, so the names are kept per binary (path, size, time) in the build folder.
key=$(stat -c '%n %s %Y' "$DEQP" | cksum | cut -d' ' -f1)
ALL=$BUILD/cts/caselist-$key.txt
if [ ! -s "$ALL" ]; then
  say "listing the cases of $DEQP"
  mkdir -p "$BUILD/cts"
  tmp=$(mktemp -d "$BUILD/cts/list.XXXXXX")
  if ! (cd "$tmp" && "$DEQP" --deqp-archive-dir="$ARCHIVE" --deqp-runmode=stdout-caselist \
          --deqp-log-filename="$tmp/list.qpa" 2>"$tmp/stderr.txt" |
        sed -n 's/^TEST: //p' > "$tmp/cases.txt") || [ ! -s "$tmp/cases.txt" ]; then
    cat "$tmp/stderr.txt" >&2 || true
    rm -rf "$tmp"
    die "'$DEQP --deqp-runmode=stdout-caselist' listed no cases"
  fi
  mv "$tmp/cases.txt" "$ALL"
  rm -rf "$tmp"
fi

# Filter the binary's list (keeping its order) by the patterns: exact names through a hash,
# globs as anchored regular expressions (`*` matches any run of characters, dots included,
# `?` one character, as in --deqp-case). A pattern that matches nothing is reported: it is
# usually a typo or a case this deqp-vk was built without.
CASES=$OUT/cases.txt
awk -v patfile="$PATTERNS" '
  function glob2re(p,   re, i, c) {
    re = "^"
    for (i = 1; i <= length(p); i++) {
      c = substr(p, i, 1)
      if (c == "*") re = re ".*"
      else if (c == "?") re = re "."
      else if (c == "[" || c == "]") re = re c
      else if (index("\\^$.|+(){}", c)) re = re "\\" c
      else re = re c
    }
    return re "$"
  }
  BEGIN {
    while ((getline p < patfile) > 0) {
      if (p ~ /[*?[]/) { if (!(p in seen)) { ng++; g[ng] = glob2re(p); gp[ng] = p; seen[p] = 1 } }
      else exact[p] = 0
    }
  }
  {
    hit = 0
    if ($0 in exact) { exact[$0]++; hit = 1 }
    for (i = 1; i <= ng; i++) if ($0 ~ g[i]) { gn[i]++; hit = 1 }
    if (hit) print
  }
  END {
    for (p in exact) if (exact[p] == 0) { printf "cts: no such case: %s\n", p > "/dev/stderr"; miss++ }
    for (i = 1; i <= ng; i++) if (!gn[i]) printf "cts: no case matches %s\n", gp[i] > "/dev/stderr"
    if (miss) printf "cts: %d listed names are not in this deqp-vk (skipped)\n", miss > "/dev/stderr"
  }' "$ALL" > "$CASES"
if [ "$SHARD_N" -gt 1 ]; then
  awk -v n="$SHARD_N" -v k="$SHARD_I" '(NR - 1) % n == k - 1' "$CASES" > "$CASES.shard" && mv "$CASES.shard" "$CASES"
  say "shard $SHARD_I of $SHARD_N"
fi
TOTAL=$(wc -l < "$CASES")
[ "$TOTAL" -gt 0 ] || die "the selection matches no case of $DEQP"
[ "$JOBS" -le "$TOTAL" ] || JOBS=$TOTAL
START=$SECONDS
say "$TOTAL cases, $JOBS process(es), ${TIMEOUT}s per case; driver $MANIFEST; output $OUT"

# ---- 2. running deqp-vk, surviving crashes and hangs -------------------------------------------

# parse_qpa LOG STATUS REASON: one line "case<TAB>status<TAB>message" per case of LOG. A case that
# began but never ended gets STATUS and REASON (the process died in it).
parse_qpa() {
  awk -v ustat="$2" -v ureason="$3" '
    function unxml(s) {
      gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s)
      gsub(/&amp;/, "\\&", s); gsub(/[\t\r]+/, " ", s); return s
    }
    function emit(s, r) { print cur "\t" s "\t" unxml(r); cur = "" }
    /^#beginTestCaseResult / { if (cur != "") emit(ustat, ureason); cur = substr($0, 22); st = ""; rs = ""; inres = 0; next }
    cur == "" { next }
    inres { rs = rs " " $0; if (rs ~ /<\/Result>/) { sub(/<\/Result>.*/, "", rs); inres = 0 }; next }
    /<Result StatusCode="/ {
      st = $0; sub(/.*<Result StatusCode="/, "", st); rs = st; sub(/".*/, "", st)
      if (rs ~ /^[^>]*\/>/) rs = ""                      # <Result StatusCode="X"/>
      else { sub(/^[^>]*>/, "", rs); if (rs ~ /<\/Result>/) sub(/<\/Result>.*/, "", rs); else inres = 1 }
      next
    }
    /^#endTestCaseResult/ { if (st == "") emit("InternalError", "no <Result> in the log"); else emit(st, rs); next }
    /^#terminateTestCaseResult/ { emit($2, "terminated by deqp-vk: " $2); next }
    END { if (cur != "") emit(ustat, ureason) }' "$1"
}

# current_case LOG: the case LOG shows running now (empty between cases). Read from the end: the
# log grows to many MB and the watchdog asks every poll.
current_case() {
  local last
  last=$(tac "$1" 2>/dev/null | grep -m1 -E '^#(begin|end|terminate)TestCaseResult' || true)
  [[ $last == '#beginTestCaseResult '* ]] && printf '%s' "${last#\#beginTestCaseResult }"
  return 0
}

# run_shard N: runs deqp-vk over shard-N/cases.txt until every case has a result, one process
# after another. Results accumulate in shard-N/results.tsv, logs in shard-N/TestResults.qpa.
run_shard() {
  local n=$1 dir=$OUT/shard-$1 attempt=0 idle=0 pid=
  # Background jobs ignore SIGINT, so the main script forwards an interrupt as TERM; take deqp-vk
  # down with us rather than leave it running.
  trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; exit 143' TERM
  : > "$dir/results.tsv"
  : > "$dir/TestResults.qpa"
  cp "$dir/cases.txt" "$dir/todo.txt"
  local left
  left=$(wc -l < "$dir/todo.txt")
  while [ "$left" -gt 0 ]; do
    attempt=$((attempt + 1))
    local log=$dir/run$attempt.qpa
    (cd "$dir" && exec "$DEQP" --deqp-archive-dir="$ARCHIVE" --deqp-caselist-file="$dir/todo.txt" \
        --deqp-log-filename="$log" --deqp-shadercache-filename="$dir/shadercache.bin" \
        --deqp-shadercache-truncate=disable --deqp-log-flush=enable \
        --deqp-crashhandler=disable --deqp-watchdog=disable) > "$dir/run$attempt.log" 2>&1 &
    pid=$!

    # Watchdog: the log names the case running; when that stays the same (also "between cases"
    # or "before the first case") for TIMEOUT seconds, the process is hung: kill it.
    local cur='' since=$SECONDS size='' last_size=-1 hung=''
    while kill -0 "$pid" 2>/dev/null; do
      sleep "$POLL"
      size=$(stat -c %s "$log" 2>/dev/null || echo 0)
      if [ "$size" != "$last_size" ]; then
        last_size=$size
        local now
        now=$(current_case "$log")
        if [ "$now" != "$cur" ]; then cur=$now; since=$SECONDS; fi
      fi
      if [ $((SECONDS - since)) -ge "$TIMEOUT" ]; then
        hung=1
        kill -TERM "$pid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL "$pid" 2>/dev/null || true
        break
      fi
    done 2>/dev/null   # also bash's own "Segmentation fault (command line)" note: we report it
    local rc=0
    wait "$pid" 2>/dev/null || rc=$?
    pid=

    local how="exit status $rc"
    [ "$rc" -gt 128 ] && how="signal $(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))"
    local ustat=Crash ureason="deqp-vk died in this case ($how; see shard-$n/run$attempt.log)"
    [ -n "$hung" ] && ustat=Timeout ureason="still running after ${TIMEOUT}s; killed"
    parse_qpa "$log" "$ustat" "$ureason" > "$dir/run$attempt.tsv" 2>/dev/null || : > "$dir/run$attempt.tsv"
    if [ -f "$log" ]; then
      cat "$log" >> "$dir/TestResults.qpa"
      [ -n "$(current_case "$log")" ] && printf '\n#terminateTestCaseResult %s\n\n' "$ustat" >> "$dir/TestResults.qpa"
      rm -f "$log"   # one copy of the log is enough: it is in TestResults.qpa now
    fi
    # after the log is gone: cts_done counts both, and should not count a case twice
    cat "$dir/run$attempt.tsv" >> "$dir/results.tsv"

    # What is left: the shard's cases without a result (deqp-vk runs a list in its own order).
    awk -F'\t' 'FILENAME == ARGV[1] { done[$1]; next } !($0 in done)' "$dir/results.tsv" "$dir/todo.txt" > "$dir/todo.new"
    mv "$dir/todo.new" "$dir/todo.txt"
    left=$(wc -l < "$dir/todo.txt")
    local dead
    dead=$(awk -F'\t' -v s="$ustat" '$2 == s && $3 ~ /^(deqp-vk died|still running)/ { print $1 }' "$dir/run$attempt.tsv")
    if [ -n "$dead" ]; then
      say "shard $n: $ustat: $dead ($how); $left case(s) left"
    elif [ "$left" -gt 0 ]; then
      say "shard $n: deqp-vk stopped outside any case (${hung:+hung, }$how) with $left case(s) left"
    fi

    # A process that produced no result at all (it died or hung before its first case, or between
    # cases every time) would loop for ever: give it one more try, then give up on the rest.
    if [ -s "$dir/run$attempt.tsv" ]; then idle=0; else idle=$((idle + 1)); fi
    if [ "$left" -gt 0 ] && [ "$idle" -ge 2 ]; then
      say "shard $n: deqp-vk ran no case twice in a row; $left case(s) recorded as NotRun (see $dir/run$attempt.log)"
      awk -v r="deqp-vk ran no case ($how; see shard-$n/run$attempt.log)" '{ print $0 "\tNotRun\t" r }' \
        "$dir/todo.txt" >> "$dir/results.tsv"
      left=0
    fi
  done
  rm -f "$dir/shadercache.bin"   # only useful to the restarts of this run; can be large
}

# cts_done: the cases finished so far, over all shards: the results of the processes that have
# ended, and the cases the running ones have closed in their logs. For the progress ticker.
# shellcheck disable=SC2317  # called by the progress ticker
cts_done() {
  local k r=() q=()
  for ((k = 1; k <= JOBS; k++)); do r+=("$OUT/shard-$k/results.tsv"); q+=("$OUT/shard-$k"/run*.qpa); done
  local nr nq
  nr=$(cat "${r[@]}" 2>/dev/null | wc -l) || true
  nq=$(cat "${q[@]}" 2>/dev/null | LC_ALL=C grep -c -E '^#(end|terminate)TestCaseResult') || true
  echo $((${nr:-0} + ${nq:-0}))
}

# Shards interleave the list (case i goes to shard i mod JOBS) so that slow groups spread out.
SHARD_PIDS=()
# shellcheck disable=SC2317  # called from the trap
stop_all() {
  trap - INT TERM
  progress_stop
  say "interrupted; stopping deqp-vk"
  local p
  for p in "${SHARD_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${SHARD_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  exit 130
}
trap stop_all INT TERM
progress_start cts "$TOTAL" cases cts_done
for ((k = 1; k <= JOBS; k++)); do
  mkdir -p "$OUT/shard-$k"
  rm -f "$OUT/shard-$k/results.tsv" "$OUT/shard-$k"/run*.qpa   # an earlier run's in a reused CTS_OUT
  awk -v n="$JOBS" -v k="$k" '(NR - 1) % n == k - 1' "$CASES" > "$OUT/shard-$k/cases.txt"
  run_shard "$k" &
  SHARD_PIDS+=($!)
done
for p in "${SHARD_PIDS[@]}"; do wait "$p" || true; done
trap - INT TERM
progress_line   # the last one: every case done, and how long it took
progress_stop

# ---- 3. merging and summarising -----------------------------------------------------------------
: > "$OUT/TestResults.qpa"
: > "$OUT/results.tsv.unsorted"
for ((k = 1; k <= JOBS; k++)); do
  cat "$OUT/shard-$k/TestResults.qpa" >> "$OUT/TestResults.qpa" && rm "$OUT/shard-$k/TestResults.qpa"
  cat "$OUT/shard-$k/results.tsv" >> "$OUT/results.tsv.unsorted"
done
# In the order of cases.txt; a case without any result (only if a shard itself was killed) is NotRun.
awk -F'\t' 'FILENAME == ARGV[1] { if (!($1 in r)) r[$1] = $0; next }
            { print ($0 in r) ? r[$0] : $0 "\tNotRun\tno result recorded" }' \
  "$OUT/results.tsv.unsorted" "$CASES" > "$OUT/results.tsv"
rm -f "$OUT/results.tsv.unsorted"
{ echo "case,status"; awk -F'\t' '{ print $1 "," $2 }' "$OUT/results.tsv"; } > "$OUT/results.csv"

rc=0
summarise "$OUT/results.tsv" "$TOTAL" $((SECONDS - START)) "$OUT" || rc=$?
exit "$rc"
