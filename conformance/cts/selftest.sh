#!/usr/bin/env bash
# Self-test of conformance/cts/run.sh against a fake deqp-vk: a small script that writes the .qpa
# format and passes, fails, crashes (SIGSEGV inside a case, abort between cases, at startup) or
# hangs on chosen cases. Checks that every case gets the right status, that the runner restarts
# after each crash and hang, that shards give the same results, that the progress lines count the
# cases of every process, and the error paths. Needs no driver build and no real deqp-vk; takes a
# few seconds.
#   usage: conformance/cts/selftest.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=$HERE/run.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/cts-selftest.XXXXXX")
trap 'rm -rf "$T"' EXIT
failures=0
check() { # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; failures=$((failures + 1)); fi
}
lacks() { ! grep -qE "$1" "$2"; } # lacks REGEX FILE

# A build folder with a manifest: run.sh only checks that it exists (the fake loads no driver).
mkdir -p "$T/build" && echo '{}' > "$T/build/coopvk_icd.json"

# The fake's cases and the status the runner must give each.
cat > "$T/expected.csv" <<'EOF'
case,status
dEQP-VK.fake.a.pass_1,Pass
dEQP-VK.fake.a.fail_1,Fail
dEQP-VK.fake.a.crash_1,Crash
dEQP-VK.fake.a.ns_1,NotSupported
dEQP-VK.fake.a.ns_2,NotSupported
dEQP-VK.fake.b.ns_3,NotSupported
dEQP-VK.fake.b.hang_1,Timeout
dEQP-VK.fake.b.pass_2,Pass
dEQP-VK.fake.b.abort_after,Pass
dEQP-VK.fake.b.qw_1,QualityWarning
dEQP-VK.fake.b.multiline,Pass
dEQP-VK.fake.b.pass_3,Pass
EOF
tail -n +2 "$T/expected.csv" | cut -d, -f1 > "$T/cases.txt"

# The fake deqp-vk. Behaviour comes from the case name (fail_*, ns_*, crash_*, hang_*, ...), so
# the expected status of each case is known; FAKE_START_CRASH=1 makes it die before any case.
cat > "$T/deqp-vk" <<'EOF'
#!/usr/bin/env bash
ulimit -c 0
mode=execute list= log=TestResults.qpa
for a in "$@"; do
  case $a in
    --deqp-runmode=*) mode=${a#*=} ;;
    --deqp-caselist-file=*) list=${a#*=} ;;
    --deqp-log-filename=*) log=${a#*=} ;;
  esac
done
if [ "$mode" = stdout-caselist ]; then
  echo "GROUP: dEQP-VK"; echo "GROUP: dEQP-VK.fake"
  sed 's/^/TEST: /' "$FAKE_CASES"; exit 0
fi
[ -n "$list" ] || { echo "fake deqp-vk: no --deqp-caselist-file" >&2; exit 3; }
[ -z "${FAKE_START_CRASH:-}" ] || kill -SEGV $$
{ echo '#sessionInfo releaseName fake'; echo; echo '#beginSession'; } > "$log"
# deqp-vk runs a case list in its own tree order, not the file's: imitate that by sorting.
mapfile -t cases < <(sort "$list")
for c in "${cases[@]}"; do
  printf '\n#beginTestCaseResult %s\n<?xml version="1.0" encoding="UTF-8"?>\n<TestCaseResult CasePath="%s" Version="0.3.4" CaseType="SelfValidate">\n' "$c" "$c" >> "$log"
  echo "Test case '$c'.."
  case ${c##*.} in
    crash_*) kill -SEGV $$ ;;
    hang_*) exec sleep 600 ;;
    fail_*) r='<Result StatusCode="Fail">Result &quot;x&quot; &lt; 3</Result>' ;;
    ns_3) r='<Result StatusCode="NotSupported">VK_KHR_other is not supported</Result>' ;;
    ns_*) r='<Result StatusCode="NotSupported">VK_KHR_cooperative_matrix is not supported</Result>' ;;
    qw_*) r='<Result StatusCode="QualityWarning">Imprecise</Result>' ;;
    multiline) r=$'<Result StatusCode="Pass">first line\nsecond line</Result>' ;;
    *) r='<Result StatusCode="Pass">Pass</Result>' ;;
  esac
  printf ' %s\n</TestCaseResult>\n\n#endTestCaseResult\n' "$r" >> "$log"
  [ "${c##*.}" != abort_after ] || exit 134   # dies between two cases
done
echo '#endSession' >> "$log"
EOF
chmod +x "$T/deqp-vk"
# A progress line every half second: the hang (2 s) shows a few.
export FAKE_CASES=$T/cases.txt COOPVK_BUILD_DIR=$T/build CTS_CASE_TIMEOUT=2 CTS_POLL=0.1 COOPVK_PROGRESS_INTERVAL=0.5
unset CTS_PROGRESS

# 1. everything on one process: a crash, an abort between cases and a hang, so four processes.
rc=0; CTS_OUT=$T/one "$RUN" "$T/deqp-vk" 'dEQP-VK.fake.*' > "$T/one.out" 2> "$T/one.err" || rc=$?
check "one process: exit status 1" [ "$rc" = 1 ]
check "one process: every case has its status" cmp -s "$T/expected.csv" "$T/one/results.csv"
check "one process: restarted after the crash, the abort and the hang" [ -f "$T/one/shard-1/run4.log" -a ! -f "$T/one/shard-1/run5.log" ]
check "one process: counts printed" grep -qE '^  Crash +1$' "$T/one.out"
check "one process: Timeout counted" grep -qE '^  Timeout +1$' "$T/one.out"
check "one process: not-supported reasons grouped" grep -qE '^ +2  VK_KHR_cooperative_matrix is not supported$' "$T/one.out"
check "one process: failing cases listed" grep -q 'Crash  dEQP-VK.fake.a.crash_1' "$T/one.out"
check "one process: XML entities decoded in messages" grep -qF 'Result "x" < 3' "$T/one/results.tsv"
check "one process: a multi-line message is kept on one line" grep -qF 'first line second line' "$T/one/results.tsv"
check "one process: the log closes the dead cases" [ "$(grep -c '^#terminateTestCaseResult' "$T/one/TestResults.qpa")" = 2 ]
check "one process: the log holds every case" [ "$(grep -c '^#beginTestCaseResult' "$T/one/TestResults.qpa")" = 12 ]
# The fake runs its list sorted: crash_1 first (1 done), then 5 cases up to abort_after, then
# hang_1 hangs for 2 s with 6 of 12 done, counted over the three processes so far.
check "one process: progress lines while it hangs, 6 of 12 done" \
  grep -qE '^\[cts\] 6/12 cases \(50\.0%\), [0-9]+s elapsed, ~[0-9hms]+ remaining$' "$T/one.err"
check "one process: the last progress line says 12/12" \
  [ "$(grep '^\[cts\]' "$T/one.err" | tail -n 1 | sed 's/, [0-9]*s elapsed$//')" = "[cts] 12/12 cases (100.0%)" ]
check "one process: progress lines on stderr only" lacks '^\[cts\]' "$T/one.out"

# 2. the same over three shards: the same results, in the list's order.
rc=0; CTS_JOBS=3 CTS_OUT=$T/three "$RUN" "$T/deqp-vk" 'dEQP-VK.fake.*' > "$T/three.out" 2> "$T/three.err" || rc=$?
check "three shards: exit status 1" [ "$rc" = 1 ]
check "three shards: same results" cmp -s "$T/expected.csv" "$T/three/results.csv"
# One line for all the shards (not a shard's 4 cases): some while running, 12/12 at the end.
check "three shards: progress lines count all shards' cases" \
  grep -qE '^\[cts\] ([1-9]|1[01])/12 cases \([0-9.]+%\), [0-9]+s elapsed, ~[0-9hms]+ remaining$' "$T/three.err"
check "three shards: the last progress line says 12/12" \
  [ "$(grep '^\[cts\]' "$T/three.err" | tail -n 1 | sed 's/, [0-9]*s elapsed$//')" = "[cts] 12/12 cases (100.0%)" ]

# 2b. --shard I/N on two "machines", then --merge: the whole list's results again.
rc1=0; CTS_OUT=$T/s1 "$RUN" "$T/deqp-vk" --shard 1/2 'dEQP-VK.fake.*' > "$T/s1.out" 2> "$T/s1.err" || rc1=$?
rc2=0; CTS_OUT=$T/s2 "$RUN" "$T/deqp-vk" --shard 2/2 'dEQP-VK.fake.*' > "$T/s2.out" 2> "$T/s2.err" || rc2=$?
check "--shard: each machine runs its half" [ "$(tail -n +2 "$T/s1/results.csv" | wc -l)" = 6 -a "$(tail -n +2 "$T/s2/results.csv" | wc -l)" = 6 ]
check "--shard: the halves do not overlap" [ -z "$(comm -12 <(tail -n +2 "$T/s1/results.csv" | sort) <(tail -n +2 "$T/s2/results.csv" | sort))" ]
rc=0; CTS_OUT=$T/merged "$RUN" --merge "$T/s1" "$T/s2" > "$T/merged.out" 2> "$T/merged.err" || rc=$?
check "--merge: exit status 1 (a case failed)" [ "$rc" = 1 ]
check "--merge: every case with its status" cmp -s <(sort "$T/expected.csv") <(sort "$T/merged/results.csv")
check "--merge: the summary counts both" grep -qE '^  Pass +5$' "$T/merged.out"
rc=0; "$RUN" "$T/deqp-vk" --shard 3/2 'dEQP-VK.fake.*' > /dev/null 2> "$T/err4" || rc=$?
check "--shard 3/2: exit status 2 and a message" [ "$rc" = 2 -a -n "$(grep 'at most N' "$T/err4")" ]

# 3. a case-list file with comments, exact names, a glob, and a name this binary lacks. Its stderr
# goes through a pipe, with a long progress interval: the pipe must close when run.sh ends, not
# when a progress ticker left behind (or its sleep) ends 30 s later.
printf '# comment\n\ndEQP-VK.fake.a.pass_1\r\ndEQP-VK.fake.b.pass_?\ndEQP-VK.fake.nosuch\n' > "$T/list.txt"
start=$SECONDS
rc=0; CTS_OUT=$T/list COOPVK_PROGRESS_INTERVAL=30 "$RUN" "$T/deqp-vk" "@$T/list.txt" 'dEQP-VK.fake.*.ns_*' 2>&1 > "$T/list.out" | cat > "$T/list.err" || rc=$?
check "case list: exit status 0 when nothing fails" [ "$rc" = 0 ]
check "case list: nothing of run.sh outlives it (the pipe closes at once)" [ $((SECONDS - start)) -lt 20 ]
check "case list: the last progress line says 6/6" grep -qE '^\[cts\] 6/6 cases \(100\.0%\), [0-9]+s elapsed$' "$T/list.err"
check "case list: the selection" [ "$(tail -n +2 "$T/list/results.csv" | cut -d, -f1 | tr '\n' ' ')" = \
  "dEQP-VK.fake.a.pass_1 dEQP-VK.fake.a.ns_1 dEQP-VK.fake.a.ns_2 dEQP-VK.fake.b.ns_3 dEQP-VK.fake.b.pass_2 dEQP-VK.fake.b.pass_3 " ]
check "case list: an unknown name is reported" grep -q 'no such case: dEQP-VK.fake.nosuch' "$T/list.err"

# 4. a deqp-vk that dies before its first case every time: two tries, then NotRun, no endless loop.
rc=0; FAKE_START_CRASH=1 CTS_OUT=$T/dead COOPVK_PROGRESS_INTERVAL=0 "$RUN" "$T/deqp-vk" 'dEQP-VK.fake.a.*' > "$T/dead.out" 2> "$T/dead.err" || rc=$?
check "dead at startup: exit status 1" [ "$rc" = 1 ]
check "dead at startup: all NotRun" [ "$(grep -c ',NotRun$' "$T/dead/results.csv")" = 5 ]
check "dead at startup: two tries" [ -f "$T/dead/shard-1/run2.log" -a ! -f "$T/dead/shard-1/run3.log" ]
check "COOPVK_PROGRESS_INTERVAL=0: no progress lines" lacks '^\[cts\]' "$T/dead.err"

# 5. setup errors: exit status 2 and a message that says what is missing.
rc=0; "$RUN" "$T/no-deqp-vk" > /dev/null 2> "$T/err1" || rc=$?
check "missing deqp-vk: exit status 2 and a message" [ "$rc" = 2 -a -n "$(grep 'no deqp-vk at' "$T/err1")" ]
rc=0; COOPVK_BUILD_DIR=$T/nobuild "$RUN" "$T/deqp-vk" > /dev/null 2> "$T/err2" || rc=$?
check "missing build: exit status 2 and a message" [ "$rc" = 2 -a -n "$(grep 'build the driver first' "$T/err2")" ]
rc=0; CTS_OUT=$T/none "$RUN" "$T/deqp-vk" 'dEQP-VK.nothing.*' > /dev/null 2> "$T/err3" || rc=$?
check "empty selection: exit status 2 and a message" [ "$rc" = 2 -a -n "$(grep 'matches no case' "$T/err3")" ]

if [ "$failures" -ne 0 ]; then
  echo "cts selftest: $failures check(s) failed; outputs kept in $T"
  trap - EXIT
  exit 1
fi
echo "cts selftest: all checks passed"
