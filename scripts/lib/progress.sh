# shellcheck shell=bash
# Progress lines for long runs, so that a run of an hour does not go silent for minutes. Sourced
# by conformance/cts/run.sh, conformance/clients/llama_backend_ops.sh and scripts/bench.sh.
#
#   progress_start TAG TOTAL UNIT [COUNT_FN]
#       starts a background ticker that prints, every COOPVK_PROGRESS_INTERVAL seconds (default 20;
#       0 turns these lines off, progress_line's too), a line on stderr such as
#           [cts] 1234/15677 cases (7.8%), 2m13s elapsed, ~21m remaining; NOTE
#       The estimate is the rate so far: elapsed * (TOTAL - DONE) / DONE. DONE and NOTE come from
#       COUNT_FN, a shell function that prints "DONE [NOTE]" or "DONE/TOTAL [NOTE]" (a total
#       that changes as the run goes), or without one from the last progress_set. COUNT_FN runs
#       in the ticker, a copy of the shell made at progress_start: it sees later changes only
#       through files (progress_get reads progress_set's; or the script's own logs).
#       Installs `trap progress_stop EXIT` unless the script has an EXIT trap already (then that
#       trap must call progress_stop).
#   progress_set DONE [NOTE]   records the count for the ticker and progress_line
#   progress_get               prints what progress_set recorded last (for a COUNT_FN)
#   progress_line              prints the line now (at the end of a unit of work, say)
#   progress_stop              stops the ticker (a last progress_line goes before it); safe to
#                              call twice, never fails (an EXIT trap that fails under `set -e`
#                              would change the script's exit status)
#
# The ticker checks every time it wakes that the script is still there, so even a script killed
# with SIGKILL leaves it behind for one interval at most. It writes only whole lines, to stderr.

_PROGRESS_PID='' _PROGRESS_STATE='' _PROGRESS_FN='' _PROGRESS_TAG='' _PROGRESS_TOTAL=0
_PROGRESS_UNIT='' _PROGRESS_T0=0 _PROGRESS_OFF=''

# _progress_dur VAR SECONDS [coarse]: 45s, 2m13s, 1h05m; coarse drops the seconds from 10m up.
_progress_dur() {
  local s=$2
  if [ "$s" -lt 60 ]; then printf -v "$1" '%ds' "$s"
  elif [ "$s" -lt 600 ] || { [ "$s" -lt 3600 ] && [ -z "${3:-}" ]; }; then printf -v "$1" '%dm%02ds' $((s / 60)) $((s % 60))
  elif [ "$s" -lt 3600 ]; then printf -v "$1" '%dm' $((s / 60))
  else printf -v "$1" '%dh%02dm' $((s / 3600)) $((s % 3600 / 60))
  fi
}

# _progress_print: one line on stderr; prints nothing when the count is not a number.
_progress_print() {
  local out='' n note now el rem pct line t=$_PROGRESS_TOTAL
  if [ -n "$_PROGRESS_FN" ]; then
    out=$("$_PROGRESS_FN" 2> /dev/null) || true
  else
    out=$(progress_get)
  fi
  n=${out%% *}
  note=''; [ "$n" = "$out" ] || note=${out#* }
  if [[ $n == */* ]]; then t=${n#*/}; n=${n%%/*}; fi
  [[ $n =~ ^[0-9]+$ ]] && [[ $t =~ ^[0-9]+$ ]] || return 0
  [ "$t" -le 0 ] || [ "$n" -le "$t" ] || n=$t   # a file read mid-update can overcount
  printf -v now '%(%s)T' -1
  _progress_dur el $((now - _PROGRESS_T0))
  line="[$_PROGRESS_TAG] $n"
  if [ "$t" -gt 0 ]; then
    pct=$((n * 1000 / t))
    line+="/$t $_PROGRESS_UNIT ($((pct / 10)).$((pct % 10))%), $el elapsed"
    if [ "$n" -ge "$t" ]; then :
    elif [ "$n" -gt 0 ]; then
      _progress_dur rem $(((now - _PROGRESS_T0) * (t - n) / n)) coarse
      line+=", ~$rem remaining"
    else
      line+=", remaining unknown"
    fi
  else
    line+=" $_PROGRESS_UNIT, $el elapsed"
  fi
  printf '%s\n' "$line${note:+; $note}" >&2
}

progress_start() {
  local iv=${COOPVK_PROGRESS_INTERVAL:-20}
  progress_stop
  _PROGRESS_TAG=$1 _PROGRESS_TOTAL=$2 _PROGRESS_UNIT=$3 _PROGRESS_FN=${4:-}
  [[ $_PROGRESS_TOTAL =~ ^[0-9]+$ ]] || _PROGRESS_TOTAL=0
  printf -v _PROGRESS_T0 '%(%s)T' -1
  _PROGRESS_STATE=$(mktemp "${TMPDIR:-/tmp}/progress.XXXXXX") || _PROGRESS_STATE=''
  [ -z "$_PROGRESS_STATE" ] || echo 0 > "$_PROGRESS_STATE"
  if [ -z "$(trap -p EXIT)" ]; then trap progress_stop EXIT; fi
  if ! [[ $iv =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
    echo "progress: COOPVK_PROGRESS_INTERVAL='$iv' is not a number of seconds; using 20" >&2
    iv=20
  fi
  _PROGRESS_OFF=''
  if [[ $iv =~ ^0*(\.0*)?$ ]]; then _PROGRESS_OFF=1; return 0; fi   # 0: no lines
  # The ticker: sleep in a child it can kill, so that stopping it leaves no sleep behind (holding
  # a pipe the script's output goes to open for another interval).
  (
    sp=''
    trap '[ -z "$sp" ] || kill "$sp" 2> /dev/null; exit 0' TERM
    while :; do
      sleep "$iv" > /dev/null 2>&1 &
      sp=$!
      wait "$sp" || true
      sp=''
      kill -0 $$ 2> /dev/null || exit 0   # $$: the script, also in this subshell
      _progress_print || true
    done
  ) > /dev/null &
  _PROGRESS_PID=$!
}

progress_set() {
  [ -n "$_PROGRESS_STATE" ] || return 0
  # a new file renamed over the old one: the ticker never reads a half-written line
  { printf '%s\n' "$*" > "$_PROGRESS_STATE.new" && mv -f "$_PROGRESS_STATE.new" "$_PROGRESS_STATE"; } 2> /dev/null || true
}

progress_get() {
  local out=''
  [ -z "$_PROGRESS_STATE" ] || IFS= read -r out < "$_PROGRESS_STATE" 2> /dev/null || true
  printf '%s\n' "$out"
}

progress_line() {
  [ -n "$_PROGRESS_TAG" ] && [ -z "$_PROGRESS_OFF" ] || return 0
  _progress_print || true
}

progress_stop() {
  if [ -n "$_PROGRESS_PID" ]; then
    kill "$_PROGRESS_PID" 2> /dev/null || true
    wait "$_PROGRESS_PID" 2> /dev/null || true
    _PROGRESS_PID=''
  fi
  if [ -n "$_PROGRESS_STATE" ]; then
    rm -f "$_PROGRESS_STATE" "$_PROGRESS_STATE.new" 2> /dev/null || true
    _PROGRESS_STATE=''
  fi
  return 0
}
