#!/bin/sh
# weft-top against a running program (examples/live_view), three ways:
#   tooling_top.sh tmux  <weft-top> <live_view>   the screen under tmux moves between two captures
#   tooling_top.sh plain <weft-top> <live_view>   frames on a pipe: rates from two refreshes
#   tooling_top.sh stale <weft-top> <live_view>   a file left by a killed process is flagged
# Exit 77 (skipped) when a tool the mode needs is missing.
mode=$1 top=$2 prog=$3
dir=$(mktemp -d /tmp/weft-top-XXXXXX) || exit 1
pid=
sock="weft-top-test-$$"
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    [ "$mode" = tmux ] && tmux -L "$sock" kill-server 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.txt; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

if [ "$mode" = tmux ] && ! command -v tmux >/dev/null 2>&1; then
    echo "SKIP weft_top_figures_move_under_tmux: tmux is not installed"; exit 77
fi

# The program: runs 8 s, publishing $dir/live.stats; wait for the file.
"$prog" 8 "$dir/live.stats" 2>/dev/null &
pid=$!
i=0
while [ ! -s "$dir/live.stats" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "live_view never published $dir/live.stats"
    sleep 0.05
done

# The first number after "refresh #" and after "total tasks/s" in a screen.
refresh() { sed -n 's/.*refresh #\([0-9]*\).*/\1/p' "$1" | head -n 1; }
tasks_per_s() { sed -n 's/.*total tasks\/s *\([0-9.]*\).*/\1/p' "$1" | tail -n 1; }
nonzero() { awk -v x="$1" 'BEGIN { exit !(x + 0 > 0) }'; }

case $mode in
tmux)
    tmux -L "$sock" new-session -d -x 132 -y 40 "$top -d 0.3 $pid" || fail "tmux new-session"
    sleep 1.2
    tmux -L "$sock" capture-pane -p > "$dir/first.txt"
    sleep 1.0
    tmux -L "$sock" capture-pane -p > "$dir/second.txt"
    grep -q "executor 1 of pid $pid" "$dir/second.txt" || fail "no executor line for pid $pid"
    grep -q "running\|searching\|parked" "$dir/second.txt" || fail "no worker rows"
    r1=$(refresh "$dir/first.txt") r2=$(refresh "$dir/second.txt")
    [ -n "$r1" ] && [ -n "$r2" ] && [ "$r2" -gt "$r1" ] || fail "refresh count did not move ($r1 -> $r2)"
    nonzero "$(tasks_per_s "$dir/second.txt")" || fail "tasks/s is zero while the program runs"
    cmp -s "$dir/first.txt" "$dir/second.txt" && fail "the screen did not change"
    ;;
plain)
    "$top" -n 2 -d 0.3 "$pid" > "$dir/frames.txt" || fail "weft-top exited with an error"
    [ "$(grep -c '^weft-top  frame' "$dir/frames.txt")" = 2 ] || fail "not two frames"
    grep -q "$(printf '\033')" "$dir/frames.txt" && fail "escape codes on a pipe"
    nonzero "$(tasks_per_s "$dir/frames.txt")" || fail "tasks/s is zero while the program runs"
    grep -q '#' "$dir/frames.txt" || fail "no busy bar"
    ;;
stale)
    cp "$dir/live.stats" "$dir/keep.stats" 2>/dev/null
    kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
    # killed: nothing removed the file
    [ -f "$dir/live.stats" ] || fail "the file went with the process"
    "$top" -n 1 -d 0.1 "$dir/live.stats" > "$dir/stale.txt" || fail "weft-top failed on a stale file"
    grep -q "STALE: process" "$dir/stale.txt" || fail "a dead process's file not flagged stale"
    echo "not a block" > "$dir/junk.stats"
    "$top" -n 1 -d 0.1 "$dir/junk.stats" > "$dir/junk.txt" 2>&1 && fail "weft-top accepted a file that is not a block"
    grep -q "not a weft statistics file" "$dir/junk.txt" || fail "no reason given for a bad file"
    # A delay that is not a number of seconds from 1 ms to a day is refused
    # (atof took nan and 1e30: frames with no pause).
    for d in nan 1e30 0 -1 abc ""; do
        timeout 5 "$top" -n 1 -d "$d" "$dir/live.stats" > "$dir/delay.txt" 2>&1
        [ $? -eq 2 ] || fail "weft-top -d '$d' was not refused with status 2"
        grep -q "want seconds" "$dir/delay.txt" || [ -z "$d" ] || fail "no reason given for -d '$d'"
    done
    # A frame count that is not a number from 1 is refused too (atol read
    # "abc" as no frame at all, exit 0, and "-3" as frames forever).
    for n in abc -3 0 2x ""; do
        timeout 5 "$top" -n "$n" -d 0.01 "$dir/live.stats" > "$dir/frames.txt" 2>&1
        [ $? -eq 2 ] || fail "weft-top -n '$n' was not refused with status 2"
        grep -q "want a number of frames" "$dir/frames.txt" || [ -z "$n" ] || fail "no reason given for -n '$n'"
    done
    # A directory or a device is no block, and is not called "too short".
    for d in "$dir" /dev/null; do
        "$top" -n 1 -d 0.01 "$d" > "$dir/notfile.txt" 2>&1 && fail "weft-top accepted $d"
        grep -q "not a regular file" "$dir/notfile.txt" || fail "no clear reason for $d"
    done
    # A pid with no process says so (not "cannot read /proc/N/maps").
    timeout 5 "$top" -n 1 -d 0.01 2147483646 > "$dir/nopid.txt" 2>&1 && fail "weft-top accepted a pid with no process"
    grep -q "no process 2147483646" "$dir/nopid.txt" || fail "a pid with no process not named as such"
    ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
echo "ok: weft-top $mode"
