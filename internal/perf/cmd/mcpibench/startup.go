package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// startupScenarios are what every mcpi process pays before its work: the
// start of `mcpi --version`, and the shell's TAB, a process each
// (`mcpi __complete`): of a static word (the first word, from the whole
// command tree), of a flag's closed set of values, and of the tools a live
// session's server lists. With -other-mcpi the ratios are to that build
// (a before/after comparison).
func (k *oneshotKit) startupScenarios(n int, tmp string) []scenario {
	base := "mcpi"
	if len(k.mcpis) > 1 {
		base = k.mcpis[1][0]
	}
	run := func(args ...string) func(bin string) []string {
		return func(bin string) []string { return append([]string{bin}, args...) }
	}
	b := &sessionBench{mcpi: k.p("mcpi"), rounds: n, runtimeDir: filepath.Join(tmp, "run-complete"),
		mcpiEnv: []string{"XDG_RUNTIME_DIR=" + filepath.Join(tmp, "run-complete")}}
	stdio := []string{"--", k.p("benchserver"), "-mode", "demo"}
	return []scenario{
		{
			name: "version", what: "`mcpi --version`: the start of a process that does nothing else",
			rounds: n, base: base, expect: outputHas("mcpi version"),
			players: compact(k.mcpi("", run("--version"), "")...),
		},
		{
			name: "complete", what: "a TAB on the first word, `mcpi __complete ca`: the whole command tree, a static answer",
			rounds: n, base: base, expect: outputHas("call"),
			players: compact(k.mcpi("", run("__complete", "ca"), "")...),
		},
		{
			name: "complete-flag", what: "a TAB on a command's flag, `mcpi __complete call --js`: one command's flags",
			rounds: n, base: base, expect: outputHas("--json"),
			players: compact(k.mcpi("", run("__complete", "call", "--js"), "")...),
		},
		{
			name: "complete-session", what: "a TAB on a tool's name in a live session, `mcpi __complete call --session bench ''`: the session's daemon asked for its server's tools",
			rounds: n, base: "mcpi --version", expect: outputHas("echo"),
			players: []contender{
				{name: "mcpi --version", argv: []string{b.mcpi, "--version"}, expect: outputHas("mcpi version")},
				{name: "mcpi __complete (session)", argv: []string{b.mcpi, "__complete", "call", "--session", "bench", ""}, env: b.mcpiEnv},
			},
			setup: func() (func(), error) { return b.setup(stdio, nil) },
		},
	}
}

// summaryLine is one contender of one scenario in the -summary file, for
// the scripts that check the goals (docs/performance.md).
type summaryLine struct {
	Scenario  string  `json:"scenario"`
	Contender string  `json:"contender"`
	Base      string  `json:"base"`
	MedianMs  float64 `json:"medianMs"`
	RSSMiB    float64 `json:"rssMiB"`
	Ratio     float64 `json:"ratio"`
	RSSRatio  float64 `json:"rssRatio"`
}

// appendSummary appends the lines of one scenario to path ("" for none).
func appendSummary(path string, lines []summaryLine) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
