// Command mcpibench is the comparison program of scripts/bench.sh.
//
//	mcpibench oneshot -bin DIR [-n 30] [-heavy-n 5] [-node NODE -inspector LAUNCHER_JS -mcpdo MCPDO_JS] [-other-mcpi LABEL=PATH] [-summary FILE]
//	mcpibench summarize [-baseline gosdk] < go-test-bench-output
//	mcpibench machine
//
// oneshot runs one-shot tool calls as separate processes against the same
// stdio server, the contenders taking turns round after round (the first
// contender of each round rotates), and prints medians, p90s and ratios as
// Markdown. The contenders are the floor (DIR/floor), `mcpi call`
// (DIR/mcpi), a Go SDK client (DIR/sdkcall) and, when -inspector is given,
// the official Inspector CLI. Wall time runs from the start of the process
// to its exit; peak RSS is the client process's own high-water mark
// (VmHWM), read when it exits (Linux: the runner traces the client to stop
// it at exit), so that the server it spawned is not counted.
//
// The session scenarios time one call, a process each, against a
// connection held open in the background: mcpi's live session (`mcpi call
// --session`), the Inspector's mcpdo (`mcpdo tools/call` on a connection
// made by `mcpdo connect`), with a one-shot `mcpi call` and the start of
// `mcpi --help` (what any process costs) beside them; over stdio (the
// Go SDK demo server) and Streamable HTTP (mcpi's demo server). Connecting
// is done once, before the rounds, and not timed.
//
// The start-up scenarios (version, complete, complete-flag,
// complete-session; not run unless named in -scenarios) time what every
// mcpi process and every shell TAB pays, against another build given with
// -other-mcpi (scripts/bench-startup.sh).
//
// summarize reads the output of rounds of `go test -bench` (each round
// running every benchmark once) and prints, per benchmark, the median of
// each metric per contender and the median over rounds of its ratio to the
// baseline contender in the same round.
//
// machine prints what the numbers ran on.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "oneshot":
		err = oneshot(os.Args[2:])
	case "summarize":
		err = summarize(os.Args[2:], os.Stdin, os.Stdout)
	case "machine":
		err = machine(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpibench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: mcpibench oneshot|summarize|machine [flags]")
	os.Exit(2)
}

// --- oneshot ------------------------------------------------------------------

type contender struct {
	name   string
	argv   []string
	env    []string               // added to the environment
	expect func(out []byte) error // the scenario's when nil
}

type scenario struct {
	name    string
	what    string
	rounds  int
	base    string // the contender ratios are taken against
	expect  func(out []byte) error
	players []contender
	// setup runs before the first round (the held connections); its
	// teardown after the last.
	setup func() (teardown func(), err error)
}

// sample is one run of one contender.
type sample struct {
	wall  time.Duration
	rssKB int64 // the client's own peak RSS; 0 if unknown
}

func oneshot(args []string) error {
	fs := flag.NewFlagSet("oneshot", flag.ExitOnError)
	bin := fs.String("bin", "", "directory holding mcpi, floor, sdkcall and benchserver")
	n := fs.Int("n", 30, "rounds of the echo scenario")
	heavyN := fs.Int("heavy-n", 5, "rounds of the flood and huge scenarios")
	node := fs.String("node", "", "Node.js 22 to run the Inspector with")
	inspector := fs.String("inspector", "", "the Inspector's launcher (clients/launcher/build/index.js); empty leaves it out")
	mcpdo := fs.String("mcpdo", "", "the Inspector's mcpdo (its JS file); empty leaves it out of the session scenarios")
	only := fs.String("scenarios", "startup,echo,flood,huge,session,session-http", "scenarios to run, comma-separated")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on one run")
	other := fs.String("other-mcpi", "", "LABEL=PATH: another mcpi build to run as one more contender (a before/after comparison)")
	summary := fs.String("summary", "", "append each contender's medians and ratios to this file, a JSON object a line")
	fs.Parse(args)
	if *bin == "" {
		return fmt.Errorf("oneshot: -bin is required")
	}
	tmp, err := os.MkdirTemp("", "mcpibench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	k := &oneshotKit{bin: *bin, node: *node, inspector: *inspector}
	// mcpis are the mcpi builds under test: label and binary.
	k.mcpis = [][2]string{{"mcpi", k.p("mcpi")}}
	if *other != "" {
		label, path, ok := strings.Cut(*other, "=")
		if !ok {
			return fmt.Errorf("-other-mcpi: want LABEL=PATH")
		}
		k.mcpis = append(k.mcpis, [2]string{label, path})
	}
	all := k.scenarios(*n, *heavyN, filepath.Join(tmp, "trace.jsonl"))
	all = append(all, sessionScenarios(k.p, *node, *mcpdo, tmp, *n)...)
	all = append(all, k.startupScenarios(*n, tmp)...)
	// Ptrace requests must come from the thread that started the tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, sc := range all {
		if !slices.Contains(strings.Split(*only, ","), sc.name) {
			continue
		}
		if err := runScenario(sc, tmp, *timeout, os.Stdout, *summary); err != nil {
			return err
		}
	}
	return nil
}

// oneshotKit makes the command lines of the one-shot scenarios.
type oneshotKit struct {
	bin, node, inspector string
	mcpis                [][2]string // the mcpi builds under test: label and binary
}

// p is the program name of the -bin directory.
func (k *oneshotKit) p(name string) string { return filepath.Join(k.bin, name) }

// withServer is argv followed by the bench server in mode.
func (k *oneshotKit) withServer(argv []string, mode string) []string {
	return append(append(argv, "--"), k.p("benchserver"), "-mode", mode)
}

// inspect is the Inspector calling echo, or nil without one.
func (k *oneshotKit) inspect(mode string, toolArgs ...string) *contender {
	if k.inspector == "" {
		return nil
	}
	argv := []string{k.node, k.inspector, "--cli", "--method", "tools/call", "--tool-name", "echo"}
	if len(toolArgs) > 0 {
		argv = append(append(argv, "--tool-arg"), toolArgs...)
	}
	return &contender{name: "inspector", argv: k.withServer(argv, mode)}
}

// mcpi is one contender per mcpi build, named with suffix, running argv
// (against the bench server in mode, unless mode is "").
func (k *oneshotKit) mcpi(suffix string, argv func(bin string) []string, mode string) []*contender {
	var cs []*contender
	for _, m := range k.mcpis {
		a := argv(m[1])
		if mode != "" {
			a = k.withServer(a, mode)
		}
		cs = append(cs, &contender{name: m[0] + suffix, argv: a})
	}
	return cs
}

// contains checks that a contender's output holds want and is at least
// minLen bytes long.
func contains(want string, minLen int) func([]byte) error {
	return func(out []byte) error {
		if !bytes.Contains(out, []byte(want)) || len(out) < minLen {
			return fmt.Errorf("output (%d bytes) lacks %q: %.200q", len(out), want, out)
		}
		return nil
	}
}

// scenarios are the one-shot scenarios: startup, echo, flood and huge.
func (k *oneshotKit) scenarios(n, heavyN int, trace string) []scenario {
	p, withServer, inspect, mcpi := k.p, k.withServer, k.inspect, k.mcpi
	return []scenario{
		{
			name: "startup", what: "each program started with its help flag and nothing else to do: what starting it costs",
			rounds: n, base: "floor", expect: func([]byte) error { return nil },
			players: compact(slices.Concat(
				[]*contender{{name: "floor", argv: []string{p("floor"), "-h"}}},
				mcpi("", func(bin string) []string { return []string{bin, "--help"} }, ""),
				[]*contender{{name: "gosdk", argv: []string{p("sdkcall"), "-h"}}},
			)...),
		},
		{
			name: "echo", what: "one `tools/call` of echo against the demo server (official Go SDK), from process start to exit",
			rounds: n, base: "floor", expect: contains("hi", 0),
			players: compact(slices.Concat(
				[]*contender{{name: "floor", argv: withServer([]string{p("floor"), "-args", `{"text":"hi"}`}, "demo")}},
				mcpi("", func(bin string) []string { return []string{bin, "call", "echo", "text=hi"} }, "demo"),
				[]*contender{
					{name: "gosdk", argv: withServer([]string{p("sdkcall"), "-args", `{"text":"hi"}`}, "demo")},
					{name: "gosdk -list", argv: withServer([]string{p("sdkcall"), "-list", "-args", `{"text":"hi"}`}, "demo")},
					inspect("demo", "text=hi"),
				},
			)...),
		},
		{
			name: "flood", what: "one `tools/call` answered after 100,000 notifications/message",
			rounds: heavyN, base: "gosdk", expect: contains("ok", 0),
			players: compact(slices.Concat(
				[]*contender{{name: "floor", argv: withServer([]string{p("floor")}, "flood")}},
				mcpi("", func(bin string) []string { return []string{bin, "call", "echo"} }, "flood"),
				mcpi(" --record", func(bin string) []string { return []string{bin, "call", "echo", "--record", trace} }, "flood"),
				[]*contender{{name: "gosdk", argv: withServer([]string{p("sdkcall")}, "flood")}, inspect("flood")},
			)...),
		},
		{
			name: "huge", what: "one `tools/call` answered with a 50 MB text on one line, printed to /dev/null",
			rounds: heavyN, base: "gosdk", expect: contains("xxxxxxxx", 50<<20),
			players: compact(slices.Concat(
				[]*contender{{name: "floor", argv: withServer([]string{p("floor")}, "huge")}},
				mcpi("", func(bin string) []string { return []string{bin, "call", "echo"} }, "huge"),
				[]*contender{{name: "gosdk", argv: withServer([]string{p("sdkcall"), "-unlimited"}, "huge")}, inspect("huge")},
			)...),
		},
	}
}

func compact(cs ...*contender) []contender {
	var out []contender
	for _, c := range cs {
		if c != nil {
			out = append(out, *c)
		}
	}
	return out
}

func runScenario(sc scenario, tmp string, timeout time.Duration, w io.Writer, summary string) error {
	fmt.Fprintf(os.Stderr, "scenario %s: %d rounds of %d contenders\n", sc.name, sc.rounds, len(sc.players))
	// A first round checks every contender's output and warms the caches;
	// it is not counted. A contender that fails is left out, with why.
	var players []contender
	var failed []string
	if sc.setup != nil {
		teardown, err := sc.setup()
		if teardown != nil {
			defer teardown()
		}
		if err != nil {
			fmt.Fprintf(w, "\n### %s: %s\n\nNot run: %v\n", sc.name, sc.what, err)
			return nil
		}
	}
	for _, c := range sc.players {
		outPath := filepath.Join(tmp, "out")
		_, err := runOnce(c, outPath, filepath.Join(tmp, "err"), timeout)
		if err == nil {
			var out []byte
			if out, err = os.ReadFile(outPath); err == nil {
				expect := sc.expect
				if c.expect != nil {
					expect = c.expect
				}
				err = expect(out)
			}
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c.name, err))
			fmt.Fprintf(os.Stderr, "  %s left out: %v\n", c.name, err)
			continue
		}
		players = append(players, c)
	}
	samples := make(map[string][]sample)
	for r := range sc.rounds {
		for i := range players {
			c := players[(r+i)%len(players)]
			s, err := runOnce(c, os.DevNull, filepath.Join(tmp, "err"), timeout)
			if err != nil {
				return fmt.Errorf("%s, %s, round %d: %w", sc.name, c.name, r+1, err)
			}
			samples[c.name] = append(samples[c.name], s)
		}
		fmt.Fprintf(os.Stderr, "  round %d/%d\n", r+1, sc.rounds)
	}
	return appendSummary(summary, report(w, sc, players, samples, failed))
}

// runOnce runs c with stdout to outPath and stderr to errPath.
func runOnce(c contender, outPath, errPath string, timeout time.Duration) (sample, error) {
	argv := c.argv
	out, err := os.Create(outPath)
	if err != nil {
		return sample{}, err
	}
	defer out.Close()
	errf, err := os.Create(errPath)
	if err != nil {
		return sample{}, err
	}
	defer errf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, errf
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...)
	}
	s, err := runTraced(cmd, timeout)
	if err != nil {
		if b, rerr := os.ReadFile(errPath); rerr == nil && len(b) > 0 {
			if len(b) > 2000 {
				b = b[len(b)-2000:]
			}
			err = fmt.Errorf("%w; stderr: %s", err, bytes.TrimSpace(b))
		}
	}
	return s, err
}

func report(w io.Writer, sc scenario, players []contender, samples map[string][]sample, failed []string) []summaryLine {
	var lines []summaryLine
	fmt.Fprintf(w, "\n### %s: %s\n\n", sc.name, sc.what)
	fmt.Fprintf(w, "%d rounds, contenders in turn. Ratios are medians of the per-round ratio to %s.\n\n", sc.rounds, sc.base)
	fmt.Fprintf(w, "| contender | median | p90 | ratio to %s | median − %s | peak RSS (client) | RSS ratio |\n", sc.base, sc.base)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	base := samples[sc.base]
	for _, c := range players {
		ss := samples[c.name]
		walls := make([]float64, len(ss))
		rss := make([]float64, len(ss))
		var ratios, rssRatios []float64
		for i, s := range ss {
			walls[i] = s.wall.Seconds() * 1000
			rss[i] = float64(s.rssKB) / 1024
			if i < len(base) && base[i].wall > 0 {
				ratios = append(ratios, s.wall.Seconds()/base[i].wall.Seconds())
				if base[i].rssKB > 0 {
					rssRatios = append(rssRatios, float64(s.rssKB)/float64(base[i].rssKB))
				}
			}
		}
		diff := "—"
		if len(base) > 0 && c.name != sc.base {
			bw := make([]float64, len(base))
			for i, s := range base {
				bw[i] = s.wall.Seconds() * 1000
			}
			diff = fmt.Sprintf("%+.1f ms", quantile(walls, 0.5)-quantile(bw, 0.5))
		}
		fmt.Fprintf(w, "| %s | %s ms | %s ms | %s | %s | %s MiB | %s |\n", c.name,
			num(quantile(walls, 0.5)), num(quantile(walls, 0.9)), ratio(ratios), diff, num(quantile(rss, 0.5)), ratio(rssRatios))
		lines = append(lines, summaryLine{Scenario: sc.name, Contender: c.name, Base: sc.base, MedianMs: orZero(quantile(walls, 0.5)),
			RSSMiB: orZero(quantile(rss, 0.5)), Ratio: orZero(quantile(ratios, 0.5)), RSSRatio: orZero(quantile(rssRatios, 0.5))})
	}
	for _, f := range failed {
		fmt.Fprintf(w, "\nLeft out: %s\n", f)
	}
	return lines
}

// orZero is v, or 0 for NaN (none), which JSON cannot hold.
func orZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func ratio(rs []float64) string {
	if len(rs) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", quantile(rs, 0.5))
}

// quantile returns the q-quantile of vs by linear interpolation (NaN for none).
func quantile(vs []float64, q float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// --- summarize ----------------------------------------------------------------

// benchLine is one result line of `go test -bench`.
type benchLine struct {
	group, contender string
	metrics          map[string]float64
}

func parseBench(r io.Reader) ([]benchLine, error) {
	var out []benchLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			continue
		}
		bl := benchLine{group: name[:i], contender: name[i+1:], metrics: map[string]float64{}}
		for j := 2; j+1 < len(f); j += 2 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			bl.metrics[f[j+1]] = v
		}
		out = append(out, bl)
	}
	return out, sc.Err()
}

// The metrics summarize shows, in order; time/op's ratio is the one that counts.
var shown = []struct{ unit, title string }{
	{"ns/op", "time/op"},
	{"calls/s", "calls/s"},
	{"notifications/s", "notifications/s"},
	{"MB/s", "MB/s"},
	{"peak-heap-MiB", "peak heap"},
	{"B/op", "B/op"},
	{"allocs/op", "allocs/op"},
}

func summarize(args []string, in io.Reader, w io.Writer) error {
	fs := flag.NewFlagSet("summarize", flag.ExitOnError)
	baseline := fs.String("baseline", "gosdk", "the contender ratios are taken against")
	fs.Parse(args)
	lines, err := parseBench(in)
	if err != nil {
		return err
	}
	// samples[group][contender] is one line per round, in the order of the rounds.
	samples := map[string]map[string][]map[string]float64{}
	var groups []string
	order := map[string][]string{}
	for _, l := range lines {
		g := samples[l.group]
		if g == nil {
			g = map[string][]map[string]float64{}
			samples[l.group] = g
			groups = append(groups, l.group)
		}
		if _, ok := g[l.contender]; !ok {
			order[l.group] = append(order[l.group], l.contender)
		}
		g[l.contender] = append(g[l.contender], l.metrics)
	}
	for _, g := range groups {
		cs := order[g]
		slices.SortStableFunc(cs, func(a, b string) int { return contenderRank(a, *baseline) - contenderRank(b, *baseline) })
		var units []string
		for _, s := range shown {
			for _, c := range cs {
				if _, ok := samples[g][c][0][s.unit]; ok {
					units = append(units, s.unit)
					break
				}
			}
		}
		rounds := len(samples[g][cs[0]])
		fmt.Fprintf(w, "\n#### %s (%d rounds)\n\n| contender |", g, rounds)
		for _, u := range units {
			fmt.Fprintf(w, " %s |", title(u))
		}
		fmt.Fprintf(w, " time ratio to %s |\n|---|", *baseline)
		for range units {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w, "---:|")
		base := samples[g][*baseline]
		for _, c := range cs {
			ss := samples[g][c]
			fmt.Fprintf(w, "| %s |", c)
			for _, u := range units {
				var vs []float64
				for _, m := range ss {
					if v, ok := m[u]; ok {
						vs = append(vs, v)
					}
				}
				fmt.Fprintf(w, " %s |", formatMetric(u, quantile(vs, 0.5)))
			}
			var rs []float64
			for i, m := range ss {
				if i < len(base) && base[i]["ns/op"] > 0 {
					rs = append(rs, m["ns/op"]/base[i]["ns/op"])
				}
			}
			fmt.Fprintf(w, " %s |\n", ratio(rs))
		}
	}
	return nil
}

// contenderRank puts mcpi's contenders first and the baseline after them.
func contenderRank(c, baseline string) int {
	switch {
	case strings.HasPrefix(c, "mcpi"):
		return 0
	case c == baseline:
		return 1
	}
	return 2
}

func title(unit string) string {
	for _, s := range shown {
		if s.unit == unit {
			return s.title
		}
	}
	return unit
}

func formatMetric(unit string, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch unit {
	case "ns/op":
		d := time.Duration(v)
		switch {
		case d >= time.Second:
			return fmt.Sprintf("%.2f s", d.Seconds())
		case d >= time.Millisecond:
			return fmt.Sprintf("%.1f ms", float64(d)/1e6)
		}
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case "B/op":
		switch {
		case v >= 1<<20:
			return fmt.Sprintf("%.1f MiB", v/(1<<20))
		case v >= 1<<10:
			return fmt.Sprintf("%.1f KiB", v/(1<<10))
		}
		return fmt.Sprintf("%.0f B", v)
	case "peak-heap-MiB":
		return fmt.Sprintf("%.1f MiB", v)
	}
	return num(v)
}

// --- machine ----------------------------------------------------------------

// machine prints what the benchmarks ran on.
func machine(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("machine", flag.ExitOnError)
	node := fs.String("node", "", "the Node.js that runs the Inspector")
	inspector := fs.String("inspector", "", "the Inspector's launcher (clients/launcher/build/index.js)")
	fs.String("mcpdo", "", "the Inspector's mcpdo (named with the Inspector)")
	fs.Parse(args)
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
					mem = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	fmt.Fprintf(w, "- CPU: %s, %d logical CPUs (GOMAXPROCS %d)\n", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "- RAM: %s; kernel %s; %s/%s\n", mem, kernel, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "- Go: %s\n", runtime.Version())
	if *node != "" {
		v, err := exec.Command(*node, "--version").Output()
		if err != nil {
			return fmt.Errorf("%s --version: %w", *node, err)
		}
		line := "- Node.js: " + strings.TrimSpace(string(v))
		if *inspector != "" {
			// The launcher is clients/launcher/build/index.js in the package.
			pkg := filepath.Join(filepath.Dir(*inspector), "..", "..", "..", "package.json")
			if b, err := os.ReadFile(pkg); err == nil {
				var p struct{ Name, Version string }
				if json.Unmarshal(b, &p) == nil {
					line += fmt.Sprintf("; %s %s", p.Name, p.Version)
				}
			}
		}
		fmt.Fprintln(w, line)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(w, "- load average at the start: %s\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
	return nil
}
