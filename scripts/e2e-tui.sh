#!/usr/bin/env bash
# End-to-end test of the TUI: drives the real mcpi binary in tmux against
# `mcpi demo`, @modelcontextprotocol/server-everything and a shell script
# server (--watch), and checks what
# the screen shows (capture-pane, polled in a bounded loop).
#
#   scripts/e2e-tui.sh              build ./cmd/mcpi and run every scenario
#   MCPI=/path/to/mcpi scripts/e2e-tui.sh
#   SCREENS=docs/screens scripts/e2e-tui.sh   also save plain-text captures
#
# Without tmux it skips (exit 0) unless CI is set, then it fails.
# Installs nothing. Prints "N passed, M failed" and exits 1 on failure.
set -u

cd "$(dirname "$0")/.."
ROOT=$PWD
EVERYTHING="$ROOT/.cache/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
# The deadlines are for a loaded 2-core machine: a check that passes ends
# its wait at once, so only a failure pays them.
TOTAL_BUDGET=${E2E_BUDGET:-900} # seconds for the whole run
WAIT=${E2E_WAIT:-60}           # seconds for one screen to appear

if ! command -v tmux >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		echo "e2e-tui: tmux is missing and CI is set: failing" >&2
		exit 1
	fi
	echo "e2e-tui: SKIP: tmux is not installed (this script installs nothing)" >&2
	exit 0
fi

TMP=$(mktemp -d)
SOCK="mcpi-e2e-$$"
# The eras mcpi remembers stay in the run's own cache.
export XDG_CACHE_HOME="$TMP/cache"
cleanup() {
	tmux -L "$SOCK" kill-server >/dev/null 2>&1
	[ -f "$TMP/chromium.pid" ] && kill -- -"$(cat "$TMP/chromium.pid")" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

BIN=${MCPI:-}
if [ -z "$BIN" ]; then
	BIN="$TMP/mcpi"
	if ! go build -o "$BIN" ./cmd/mcpi; then
		echo "e2e-tui: building mcpi failed" >&2
		exit 1
	fi
fi

# One session that outlives the others: without it, the tmux server exits
# when a scenario's last session ends, and the next scenario's new-session
# can reach a server on its way out ("server exited unexpectedly").
# cleanup's kill-server ends it.
tmux -L "$SOCK" new-session -d -s keeper -x 20 -y 5 "sleep $((TOTAL_BUDGET + 600))"

START=$SECONDS
PASS=0
FAIL=0
SESSION=""

t() { tmux -L "$SOCK" "$@"; }

screen() { t capture-pane -p -t "$SESSION" 2>/dev/null; }

# open NAME CMD...: a new 100x30 tmux session running CMD.
open() {
	SESSION=$1
	shift
	t kill-session -t "$SESSION" >/dev/null 2>&1
	if ! t new-session -d -s "$SESSION" -x 100 -y 30 -e NO_COLOR=1 -e TERM=xterm-256color "$@"; then
		echo "e2e-tui: tmux could not open the session $SESSION" >&2
	fi
}

keys() { t send-keys -t "$SESSION" "$@"; }
typ() { t send-keys -t "$SESSION" -l "$1"; }

# wait_for TEXT...: poll the screen until it shows every TEXT (fixed
# strings), for at most $WAIT seconds and within the total budget.
wait_for() {
	local deadline=$((SECONDS + WAIT)) s ok
	while :; do
		s=$(screen)
		ok=1
		for want in "$@"; do
			if ! grep -qF -- "$want" <<<"$s"; then
				ok=0
				break
			fi
		done
		[ $ok = 1 ] && return 0
		if [ $SECONDS -ge $deadline ] || [ $((SECONDS - START)) -ge $TOTAL_BUDGET ]; then
			LAST_SCREEN=$s
			return 1
		fi
		sleep 0.1
	done
}

# wait_gone TEXT: poll until the screen no longer shows TEXT (suggestions
# narrowing as the server answers); quiet, bounded like wait_for.
wait_gone() {
	local deadline=$((SECONDS + WAIT))
	while grep -qF -- "$1" <<<"$(screen)"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
}

# check NAME TEXT...: one assertion.
check() {
	local name=$1
	shift
	if wait_for "$@"; then
		PASS=$((PASS + 1))
		echo "ok   $SESSION: $name"
	else
		FAIL=$((FAIL + 1))
		echo "FAIL $SESSION: $name: the screen never showed: $*"
		sed 's/^/     | /' <<<"$LAST_SCREEN"
	fi
}

# absent NAME TEXT: one assertion that the screen, once settled, does not
# show TEXT.
absent() {
	sleep 0.5
	if grep -qF -- "$2" <<<"$(screen)"; then
		FAIL=$((FAIL + 1))
		echo "FAIL $SESSION: $1: the screen shows: $2"
		screen | sed 's/^/     | /'
	else
		PASS=$((PASS + 1))
		echo "ok   $SESSION: $1"
	fi
}

# file_has NAME FILE TEXT: one assertion that FILE comes to hold TEXT
# (what a command in the background printed), bounded like wait_for.
file_has() {
	local deadline=$((SECONDS + WAIT))
	until grep -qF -- "$3" "$2" 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			FAIL=$((FAIL + 1))
			echo "FAIL $SESSION: $1: $2 never held: $3"
			sed 's/^/     | /' "$2"
			return
		fi
		sleep 0.1
	done
	PASS=$((PASS + 1))
	echo "ok   $SESSION: $1"
}

# shot FILE: save the screen, trailing blanks trimmed, when SCREENS is set.
shot() {
	[ -n "${SCREENS:-}" ] || return 0
	mkdir -p "$SCREENS"
	screen | sed 's/[[:space:]]*$//' >"$SCREENS/$1.txt"
}

# --- mcpi demo ---------------------------------------------------------
open demo "$BIN" demo
check "connects and lists the tools" "● connected" "(18/18)"
shot tools

# A tool call through the form.
typ add
keys Enter
check "opens the form of add" "Call add"
typ 2
keys Tab
typ 3.5
keys C-s
check "calls add" "✓ done" '"sum": 5.5'
shot tools-result

# Sampling: answer the server's request in the modal.
keys M-l C-u
typ sample
keys Enter
check "opens the form of sample" "Call sample"
typ "What is 2+2?"
keys C-s
check "shows the sampling request" "sampling/createMessage" "What is 2+2?"
shot sampling
typ "Four."
keys C-s
check "the sampling answer reaches the tool" "✓ done" "Four."

# Elicitation: accept the defaults.
keys M-l C-u
typ elicit
keys Enter C-s
check "shows the elicitation request" "elicitation/create"
shot elicitation
keys C-s
check "the elicitation answer reaches the tool" "✓ done" '"action": "accept"'

# Cancel a long call.
keys M-l C-u
typ long_running
keys Enter
check "opens the form of long_running" "Call long_running"
keys C-s
check "the long call runs" "⟳ running"
keys Escape
check "the long call is cancelled" "⊘ cancelled"

# A resize leaves nothing of the old frames behind: the tools pane's
# details must not show through the resources pane's.
t resize-window -t "$SESSION" -x 80 -y 24
sleep 0.3
t resize-window -t "$SESSION" -x 200 -y 50
sleep 0.3
keys M-1
sleep 0.3
keys M-2
check "the resources pane after a resize" "logo — Demo logo"
absent "no stale text after a resize" "Demo logombers"
t resize-window -t "$SESSION" -x 100 -y 30

# Read a resource.
keys M-2
check "lists every resource page" "16 resources"
keys End Enter
check "reads demo://text/hello" "Hello from the mcpi demo server"
keys Home Down u
check "subscribes to demo://counter" "listening to 1 resource"
shot resources

# A template with completions.
keys M-3
check "lists the templates" "2 templates"
keys Home Enter
check "completes {lang}" "Read demo://greeting/{lang}/{name}" "    fr"
typ f
wait_gone "    de"
keys C-n Enter Tab
check "completes {name} from {lang}" "Amélie"
keys C-n Enter
check "the URI is filled in, percent-encoded" "→ demo://greeting/fr/Am%C3%A9lie"
keys Enter
check "reads the templated resource" "Bonjour"
shot templates

# A prompt with a completion.
keys M-4
check "lists the prompts" "3 prompts"
keys Home Down Enter
check "opens the greet form" "Get greet"
typ Ada
keys Tab
check "suggests styles" "    pirate"
typ p
wait_gone "    formal"
keys C-n Enter Enter
check "gets the prompt" "prompts/get greet" "style=pirate" "message(s)"
shot prompts

# Log, notifications, wire, stderr panes; the raw composer.
keys M-8 L
check "sets the server's log level" "asked the server for debug"
# alt+1 shows the tools' list, not the last result: typing filters it.
keys M-1
check "alt+1 shows the list" "enter call • type filter"
keys C-u
typ log
keys Enter C-s
keys M-8
check "shows log messages" "(alert)" "(debug)"
shot log
keys Enter
check "opens a log row in full" "row in full" '"message": "hello from the demo server"'
keys Escape
check "back to the log" "showing debug and above"
keys M-9
check "counts notifications" "notifications, newest last" "notifications/message"
shot notifications
keys M-7
check "the wire pane shows frames" "tools/call" "LATENCY"
shot wire
keys /
typ "method:add"
keys Enter
check "the wire filter finds a call and its answer" "→ frame     tools/call add" "← frame     response · tools/call add"
keys Enter
check "the detail of the answer" "← recv frame · response · tools/call add"
keys /
typ "sum"
keys Enter
check "searches in the frame" "sum: line 1 of" "with a match (n/N)"
keys Escape
sleep 0.3
keys Escape
sleep 0.3
keys Escape
sleep 0.3
# The timeline: the session's spans in lanes, zoomed in and back, and
# enter on a span goes to its frame in the wire pane.
keys M-m
check "the timeline shows the session's lanes" "[m Timeline]" "▾ Requests" "▾ Server reqs" "(whole session)"
shot timeline
keys End
check "a span is selected" "› "
keys +
check "the timeline zooms in" "/col"
absent "zoomed in, the window is not the whole session" "(whole session)"
keys 0
check "0 shows the whole session again" "(whole session)"
keys Enter
check "enter goes to the span's frame in the wire" "[7 Wire" "LATENCY"
keys M-0
check "the stderr pane opens" "the server's standard error"
shot stderr
keys M-i
check "the info pane" "era chosen" "transport       stdio" "Capabilities"
shot info
keys C-e
typ tools/list
keys Enter
check "the raw composer sends a request" "✓ result" '"resultType"'
shot composer
keys Escape
sleep 0.3
# A new session is told the log level and the subscription again.
keys C-r
check "ctrl+r applies the log level and subscription again" "applied again to the new session: the log level and 1 subscription(s)"
keys M-2
check "the resources pane says so" "subscribed again to 1 resource"
keys C-c

# --- server-everything -------------------------------------------------
if [ ! -f "$EVERYTHING" ] || ! command -v node >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		FAIL=$((FAIL + 1))
		echo "FAIL everything: server-everything or node is missing (scripts/deps.sh installs it)"
	else
		echo "skip everything: server-everything or node is missing (scripts/deps.sh installs it)"
	fi
else
	open everything "$BIN" connect -- node "$EVERYTHING" stdio
	check "connects" "● connected" "echo"
	typ echo
	keys Enter
	check "opens the echo form" "Call echo"
	typ "hello e2e"
	keys C-s
	check "calls echo" "✓ done" "hello e2e"
	keys M-l C-u
	typ trigger-sampling
	keys Enter
	check "opens the sampling tool" "Call trigger-sampling-request"
	typ "Say hi"
	keys C-s
	check "shows the sampling request" "sampling/createMessage"
	typ "Hi"
	keys C-c
	check "ctrl+c in the box asks again" "ctrl+c again quits: 1 server request waiting" "│ Hi"
	keys Escape C-o
	check "the request set aside keeps its reply" "│ Hi"
	typ "."
	keys C-s
	check "the sampling answer reaches the tool" "✓ done"
	# The tabs at 80 columns keep their counts; at 200 they are whole.
	t resize-window -t "$SESSION" -x 80 -y 24
	check "80 columns: short tabs, counts kept" "alt+ [1 Tools] 2" "5Re" "9No(6)" "0St" "iIn" "kCh" "sSk"
	t resize-window -t "$SESSION" -x 200 -y 50
	check "200 columns: whole tabs" "2 Resources   3 Templates   4 Prompts   5 Requests   6 Roots (0)"
	t resize-window -t "$SESSION" -x 100 -y 30
	keys M-2
	check "lists resources" "resources"
	keys Home Enter
	check "reads a resource" "# Everything Server"
	keys M-4
	check "lists the prompts" "completable-prompt"
	keys Home Down Down Enter
	check "opens the completable prompt" "Get completable-prompt"
	check "suggests departments" "    Engineering"
	keys C-n Enter Tab
	check "completes the name from the department" "    Alice"
	keys C-n
	check "highlights a suggestion" "» Alice"
	keys Enter Enter
	check "gets the prompt" "prompts/get completable-prompt" "message(s)"
	keys C-c

	# Over Streamable HTTP: the server dies while mcpi is idle, then comes
	# back having forgotten the session.
	PORT=$((20000 + $$ % 20000))
	t new-session -d -s everything-http -x 100 -y 10 -e PORT=$PORT node "$EVERYTHING" streamableHttp
	SESSION=everything-http
	if wait_for "listening on port $PORT"; then
		open http "$BIN" connect "http://127.0.0.1:$PORT/mcp"
		check "connects over HTTP" "● connected" "streamable-http" "echo"
		t kill-session -t everything-http
		check "a dead server is unreachable" "✗ unreachable"
		t new-session -d -s everything-http -x 100 -y 10 -e PORT=$PORT node "$EVERYTHING" streamableHttp
		# The GET stream's retries, then the keepalive (10 s), notice it.
		WAIT=30 check "a new session when it comes back" "● connected" "the server forgot the session: a new one started"
		typ echo
		keys Enter
		typ "after the restart"
		keys C-s
		check "calls echo in the new session" "✓ done" "after the restart"
		keys C-c
		t kill-session -t everything-http
	else
		FAIL=$((FAIL + 1))
		echo "FAIL everything over HTTP: the server did not start on port $PORT"
	fi
fi

# --- a live session, watched in the TUI ---------------------------------
# Another process's commands show on the attached TUI's wire, and a server
# request no command answers is answered there.
export XDG_RUNTIME_DIR="$TMP/run"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
if "$BIN" session start live --idle 5m -- "$BIN" demo-server >/dev/null 2>"$TMP/live.err"; then
	"$BIN" log-level debug --session live >/dev/null 2>&1
	"$BIN" call log --session live >/dev/null 2>&1
	"$BIN" call add a=2 b=3 --session live >/dev/null 2>&1
	open live env XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" "$BIN" connect --session live
	check "attaches to the session" "● connected" "via session live"
	keys M-7
	check "the wire holds what the session did last" "tools/call add"
	keys Home
	check "the wire holds the session's start" "server/discover"
	keys End
	keys M-8
	check "the log holds what the session logged before" "hello from the demo server (alert)"
	"$BIN" roots add "$TMP" --session live >/dev/null 2>&1
	keys M-6
	check "a roots change from a shell shows" "Roots (1)" "changed elsewhere"
	keys M-7
	check "back on the wire" "[7 Wi"
	"$BIN" call sample prompt=hi --session live >"$TMP/sample.out" 2>&1 &
	SAMPLE=$!
	check "a request parked by another command reaches the TUI" "sampling/createMessage"
	typ "answered in the TUI"
	keys C-s
	for _ in $(seq 50); do kill -0 $SAMPLE 2>/dev/null || break; sleep 0.1; done
	if grep -qF "answered in the TUI" "$TMP/sample.out"; then
		PASS=$((PASS + 1))
		echo "ok   live: the command gets the TUI's answer"
	else
		FAIL=$((FAIL + 1))
		echo "FAIL live: the command did not get the TUI's answer:"
		sed 's/^/     | /' "$TMP/sample.out"
	fi
	check "the command's call shows on the wire" "tools/call sample"
	shot session-wire
	# Answered by mcpi answer: the session withdraws it, as itself.
	"$BIN" call sample prompt=again --session live >/dev/null 2>&1 &
	SAMPLE=$!
	check "a second parked request reaches the TUI" "sampling/createMessage"
	"$BIN" answer 2 --sampling-reply elsewhere --session live >/dev/null 2>&1
	check "the session, not the server, withdraws it" "withdrawn by session live"
	wait $SAMPLE
	"$BIN" session stop live >/dev/null 2>&1
	check "the session's end is told" "has ended (stopped): stopped by mcpi session stop"
	if grep -qF "could not connect" <<<"$(screen)"; then
		FAIL=$((FAIL + 1))
		echo "FAIL live: an ended session is told as a failed connection"
	fi
	keys C-c
else
	FAIL=$((FAIL + 1))
	echo "FAIL live: session start failed:"
	sed 's/^/     | /' "$TMP/live.err"
fi

# --- an MCP App, run from the Tools pane ---------------------------------
# The Tools pane marks App tools; alt+a on a call hosts its App; the
# browser ($BROWSER: Debian's headless Chromium here) renders it, and the
# App's messages, with its own call of an app-only tool, show on the wire.
if ! command -v chromium-headless-shell >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1 ||
	[ ! -d "$ROOT/.cache/npm/node_modules/@modelcontextprotocol/ext-apps" ]; then
	if [ -n "${CI:-}" ]; then
		FAIL=$((FAIL + 1))
		echo "FAIL apps: chromium-headless-shell, node or @modelcontextprotocol/ext-apps is missing (scripts/deps.sh installs them)"
	else
		echo "skip apps: chromium-headless-shell, node or @modelcontextprotocol/ext-apps is missing (scripts/deps.sh installs them)"
	fi
else
	cat >"$TMP/browser.sh" <<BROWSER
#!/bin/sh
setsid chromium-headless-shell --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TMP/chromium" "\$1" >/dev/null 2>&1 &
echo \$! >"$TMP/chromium.pid"
BROWSER
	chmod +x "$TMP/browser.sh"
	open apps env BROWSER="$TMP/browser.sh" "$BIN" connect -- node "$ROOT/testdata/apps-server.mjs"
	check "the Tools pane marks the App tools" "show-chart" "refresh-chart" "app app-only"
	shot apps-tools
	typ show-chart
	keys Enter
	check "opens the App tool's form" "Call show-chart"
	typ a
	keys C-s
	check "calls the App tool" "✓ done" "alt+a run its App"
	keys M-a
	check "hosts its App" "App at http://127.0.0.1:"
	keys M-7
	check "the App's messages and its own call are on the wire" "app" "ui/initialize" "ui/notifications/tool-result" "tools/call refresh-chart"
	shot apps-wire
	keys C-c
fi

# The edit-reload loop: a script server whose tools come from a file the
# test edits (no compiler needed); --watch restarts it and shows the diff.
cat >"$TMP/toolsfile.sh" <<'SERVER'
#!/bin/sh
while IFS= read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	[ -n "$id" ] || continue
	case $line in
	*'"method":"initialize"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"toolsfile","version":"1"}}}\n' "$id" ;;
	*'"method":"tools/list"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}\n' "$id" "$(tr -d '\n' <"$TOOLS")" ;;
	*'"method":"ping"'*)
		printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
	*)
		printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
	esac
done
SERVER
printf '%s\n' '[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},' \
	'{"name":"fetch","inputSchema":{"type":"object","properties":{"url":{"type":"string"}}}}]' >"$TMP/tools.json"
open watch env TOOLS="$TMP/tools.json" "$BIN" connect --watch "$TMP/tools.json" -- sh "$TMP/toolsfile.sh"
check "connects to the script server" "● connected" "fetch"
keys Enter
check "opens the form of echo" "Call echo"
typ "kept across the restart"
check "the value is typed" "kept across the restart"
printf '%s\n' '[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"},' \
	'"loud":{"type":"boolean"}},"required":["loud"]}}]' >"$TMP/tools.json"
check "the server restarted, the diff shown" "Diff · restarted: tools.json changed" "2 changes, 2 breaking" "› ✗ breaking   tool fetch: tool fetch was removed"
shot watch-diff
# The Diff view takes every key: what is typed there never reaches the
# form it covers, and ctrl+s there sends no call.
typ "Zed?"
keys C-s
keys C-s
check "keys typed at the Diff view stay there" "the help is open: esc closes it"
keys Escape
check "esc closes the help over the Diff view" "enter open • esc close diff"
keys Down Enter
check "enter opens a change whole" "change 2 of 2" "pointer   /tools/echo/inputSchema/properties/loud"
keys Escape
check "esc goes back to the list" "› ✗ breaking   tool echo"
keys Escape
check "the typed value is kept" "kept across the restart"
absent "nothing typed at the Diff view reached the form" "Zed"
absent "no call was sent from the Diff view" "call #1"
keys C-c

# --- mcpi proxy --ui: the HTTP proxy between a host (mcpi call) and the
# demo server, a breakpoint on tools/call: the held call edited in $EDITOR
# (its answer, held too, forwarded), another answered in the server's
# place; at 80x24 and 200x50; the changes in the trace.
"$BIN" demo-server --http 127.0.0.1:0 >"$TMP/upstream.out" 2>&1 &
UPSTREAM_PID=$!
for _ in $(seq 100); do grep -q 'http://' "$TMP/upstream.out" && break; sleep 0.1; done
UPSTREAM=$(grep -o 'http://[^ ]*' "$TMP/upstream.out" | head -1)
PPORT=$((21000 + $$ % 20000))
cat >"$TMP/edit.sh" <<'EDIT'
#!/bin/sh
sed -i 's/"a": 2,/"a": 39,/' "$1"
EDIT
chmod +x "$TMP/edit.sh"
open proxy env EDITOR="$TMP/edit.sh" "$BIN" proxy --ui --record "$TMP/proxy.jsonl" --break method:tools/call --listen "127.0.0.1:$PPORT" --url "$UPSTREAM"
check "the proxied conversation" "mcpi proxy" "Nothing on the wire yet"
"$BIN" call add a=2 b=3 "http://127.0.0.1:$PPORT/" >"$TMP/call1.out" 2>&1 &
check "the host's call is held" "⏸ 1/1 → tools/call add" "break method:tools/call" "ctrl+s forward"
keys M-e
check "the edit goes in its place, its answer held" "sent the edit of" "← answer"
keys C-s
file_has "the host gets the edited call's answer" "$TMP/call1.out" '{"sum":42}'
"$BIN" call add a=1 b=1 "http://127.0.0.1:$PPORT/" >"$TMP/call2.out" 2>&1 &
check "the next call is held" "⏸ 1/1 → tools/call add"
keys C-o
check "an answer in the server's place" "in the peer's place" '"result"'
keys C-s
check "answered in the server's place" "intercept answer"
t resize-window -t "$SESSION" -x 80 -y 24
check "the proxy at 80x24" "mcpi proxy" "intercept"
t resize-window -t "$SESSION" -x 200 -y 50
check "the proxy at 200x50" "tools/call add" "intercept answer"
keys C-c
if "$BIN" replay --filter kind:intercept "$TMP/proxy.jsonl" 2>&1 | grep -q "answer"; then
	PASS=$((PASS + 1))
	echo "ok   proxy: the changes are intercept events of the trace"
else
	FAIL=$((FAIL + 1))
	echo "FAIL proxy: replay --filter kind:intercept shows no answer"
fi
kill "$UPSTREAM_PID" 2>/dev/null

# --- the Chat pane, against a fake model provider (the official SDK pointed
# at it): a tool call allowed, one refused, one edited; the turns on the
# wire; at 80x24 and 200x50.
if go build -o "$TMP/fakellm" ./internal/mcptest/cmd/fakellm; then
	cat >"$TMP/turns.json" <<'TURNS'
[{"Text": "Adding.", "Calls": [{"ID": "call_1", "Name": "add", "Args": "{\"a\":2,\"b\":3}"}]},
 {"Text": "It is 5."},
 {"Calls": [{"ID": "call_2", "Name": "delete_file", "Args": "{\"path\":\"/tmp/x\"}"}]},
 {"Text": "Not deleted."},
 {"Calls": [{"ID": "call_3", "Name": "echo", "Args": "{\"text\":\"hello\"}"}]},
 {"Text": "Echoed."}]
TURNS
	"$TMP/fakellm" -format openai -script "$TMP/turns.json" >"$TMP/fakellm.url" 2>"$TMP/fakellm.err" &
	FAKELLM=$!
	for _ in $(seq 100); do [ -s "$TMP/fakellm.url" ] && break; sleep 0.1; done
	MODEL_URL=$(head -1 "$TMP/fakellm.url")
	open chat env OPENAI_API_KEY=sk-e2e-dummy-key-000 "$BIN" connect --model openai:gpt-test --model-url "$MODEL_URL" -- "$BIN" demo-server
	check "connects with a model" "● connected" "Cha"
	keys M-c
	check "the Chat pane" "Chat · openai:gpt-test" "you>"
	typ "add 2 and 3"
	keys Enter
	check "a tool call waits for the person" "the model asks to run a tool that may destroy: add" "ctrl+s runs it"
	keys C-s
	check "the allowed call's result goes back" '← add: {"sum":5}' "model> It is 5."
	typ "delete /tmp/x"
	keys Enter
	check "a destructive call waits" "the model asks to run a tool that may destroy: delete_file"
	keys C-x
	check "a refused call, and the model told" "✗ refused delete_file" "Not deleted."
	typ "echo something"
	keys Enter
	check "the arguments are shown in an editor" "arguments of echo" '"text": "hello"'
	for _ in $(seq 30); do keys BSpace; done
	typ '{"text":"edited"}'
	keys C-s
	check "the edited call runs with the edit" "← echo: edited" "Echoed."
	absent "the key is not on screen" "sk-e2e-dummy"
	t resize-window -t "$SESSION" -x 80 -y 24
	check "the Chat pane at 80x24" "model> Echoed." "you>"
	shot chat-80x24
	t resize-window -t "$SESSION" -x 200 -y 50
	check "the Chat pane at 200x50" "you> add 2 and 3" "model> Echoed."
	shot chat
	keys M-7
	check "the model's turns are on the wire" "model" "chat gpt-test" "execute_tool"
	keys C-c
	kill "$FAKELLM" 2>/dev/null
else
	FAIL=$((FAIL + 1))
	echo "FAIL chat: the fake model provider did not build"
fi


# --- mcpi proxy --ui for a host with no terminal (a desktop app starts its
# servers so): the stdio proxy serves a socket, and mcpi proxy attach
# opens the TUI on it from a terminal; a host (mcpi call, started with no
# terminal by setsid) calls add through it; the held call is edited at
# 80x24 (its answer, held too, forwarded) and answered in the server's
# place at 200x50; quitting the TUI leaves the proxy running.
proxy_attach_e2e() {
	local rt="$TMP/rt" w h
	mkdir -p "$rt" && chmod 700 "$rt"
	cat >"$TMP/attach-edit.sh" <<'EDIT'
#!/bin/sh
sed -i 's/"a": 1,/"a": 40,/' "$1"
EDIT
	chmod +x "$TMP/attach-edit.sh"
	for size in 80x24 200x50; do
		w=${size%x*} h=${size#*x}
		XDG_RUNTIME_DIR="$rt" setsid "$BIN" call add a=1 b=2 -- "$BIN" proxy --ui --name "demo$w" --break method:tools/call \
			-- "$BIN" demo-server </dev/null >"$TMP/attach$w.out" 2>&1 &
		for _ in $(seq 100); do [ -S "$rt/mcpi/proxy/demo$w.sock" ] && break; sleep 0.1; done
		open "attach$w" env XDG_RUNTIME_DIR="$rt" EDITOR="$TMP/attach-edit.sh" "$BIN" proxy attach "demo$w"
		t resize-window -t "$SESSION" -x "$w" -y "$h"
		check "the conversation so far, the call held" "· attached" "tools/list" "⏸ 1/1 → tools/call add #3"
		if [ "$w" = 80 ]; then
			keys M-e
			check "the edit goes in its place, its answer held" "sent the edit of" "← answer #3"
			keys C-s
			file_has "the host gets the edited call's answer" "$TMP/attach$w.out" '{"sum":42}'
		else
			keys C-o
			check "an answer in the server's place" "in the peer's place" '"result"'
			for _ in $(seq 70); do keys BSpace; done
			typ '{"result":{"content":[{"type":"text","text":"answered by hand"}],"structuredContent":{"sum":7}}}'
			keys C-s
			check "answered in the server's place" "answered tools/call add #3 in the peer's place" "intercept answer"
			file_has "the host gets the answer given in the server's place" "$TMP/attach$w.out" "answered by hand"
		fi
		# At 80 columns the line is cut after "the pro".
		check "the proxy's end, said in the panes" "mcpi proxy attach: the pro"
		shot "proxy-attach-$size"
		keys q
	done
	# A TUI that quits leaves the proxy running: attach, quit, attach again.
	XDG_RUNTIME_DIR="$rt" setsid "$BIN" call add a=1 b=2 -- "$BIN" proxy --ui --name again --break method:tools/call \
		--hold-timeout 5m -- "$BIN" demo-server </dev/null >"$TMP/attach-again.out" 2>&1 &
	for _ in $(seq 100); do [ -S "$rt/mcpi/proxy/again.sock" ] && break; sleep 0.1; done
	open attach-again env XDG_RUNTIME_DIR="$rt" "$BIN" proxy attach again
	check "the call held" "⏸ 1/1 → tools/call add #3"
	keys q
	open attach-again env XDG_RUNTIME_DIR="$rt" "$BIN" proxy attach
	check "attached again, the call still held" "attached to again" "⏸ 1/1 → tools/call add #3"
	keys C-k
	check "the connection closed instead" "intercept close"
	keys q
}
if command -v setsid >/dev/null 2>&1; then
	proxy_attach_e2e
elif [ -n "${CI:-}" ]; then
	FAIL=$((FAIL + 1))
	echo "FAIL proxy attach: setsid is not installed"
else
	echo "e2e-tui: SKIP proxy attach: setsid is not installed" >&2
fi

echo "$PASS passed, $FAIL failed ($((SECONDS - START))s)"
[ "$FAIL" = 0 ]
