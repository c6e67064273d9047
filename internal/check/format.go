package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for a person: findings grouped by severity,
// each with its rule, source and evidence, then a summary line. w must be
// a sink for human output: the subjects and messages quote the server.
func WriteText(w io.Writer, rep *Report) {
	if rep.ProtocolVersion == "" {
		fmt.Fprint(w, "mcpi check: the handshake did not complete")
	} else {
		fmt.Fprintf(w, "mcpi check: %s %s · %s (%s era)", orDash(rep.Server.Name), rep.Server.Version, rep.ProtocolVersion, rep.Era)
	}
	if rep.Transport != "" {
		fmt.Fprintf(w, " · %s", rep.Transport)
	}
	fmt.Fprintln(w)
	for _, sev := range []Severity{Error, Warning, Info} {
		n := rep.Count(sev)
		if n == 0 {
			continue
		}
		// The groups are named as the summary line counts them: errors,
		// warnings, notes.
		fmt.Fprintf(w, "\n%s (%d)\n", map[Severity]string{Error: "ERRORS", Warning: "WARNINGS", Info: "NOTES"}[sev], n)
		for _, g := range groupFindings(rep.Findings, sev) {
			f := g[0]
			fmt.Fprintf(w, "  %s  %s: %s\n", f.Rule, subjects(g), oneLine(f.Message))
			fmt.Fprintf(w, "      %s\n", f.Source)
			if f.Connection != "" {
				fmt.Fprintf(w, "      found on %s\n", f.Connection)
			}
			if len(f.Evidence) > 0 {
				fmt.Fprintf(w, "      frame: %s\n", oneLine(clipText(string(f.Evidence), 300)))
			}
		}
	}
	writeEnvironment(w, rep.Environment)
	writeHosts(w, rep.Hosts)
	fmt.Fprintf(w, "\n%d error(s), %d warning(s), %d note(s); %d rules checked in %.0f ms\n",
		rep.Count(Error), rep.Count(Warning), rep.Count(Info), len(rep.Rules), rep.Duration)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// WriteSARIF writes the report as SARIF 2.1.0, for code-scanning CI: one
// compact JSON document and a newline, written as it is built, a result
// at a time (a server with 100,000 tools has as many findings: never the
// whole document in memory, nor one write of it). Each Write is whole
// JSON values: runes are never split across two.
func WriteSARIF(w io.Writer, rep *Report, version string) error {
	type message struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string            `json:"id"`
		ShortDescription message           `json:"shortDescription"`
		Properties       map[string]string `json:"properties,omitempty"`
		DefaultConfig    map[string]string `json:"defaultConfiguration"`
	}
	type location struct {
		LogicalLocations []map[string]string `json:"logicalLocations"`
	}
	type result struct {
		RuleID     string         `json:"ruleId"`
		Level      string         `json:"level"`
		Message    message        `json:"message"`
		Locations  []location     `json:"locations"`
		Properties map[string]any `json:"properties,omitempty"`
	}
	level := func(s Severity) string {
		switch s {
		case Error:
			return "error"
		case Warning:
			return "warning"
		}
		return "note"
	}
	var rs []rule
	for _, r := range Rules() {
		rs = append(rs, rule{ID: r.ID, ShortDescription: message{r.Summary}, Properties: map[string]string{"source": r.Source},
			DefaultConfig: map[string]string{"level": level(r.Severity)}})
	}
	driver, err := json.Marshal(map[string]any{"name": "mcpi check", "version": version, "informationUri": "https://modelcontextprotocol.io/specification", "rules": rs})
	if err != nil {
		return err
	}
	sw := &sarifWriter{w: w}
	sw.write(`{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[{"tool":{"driver":`)
	sw.write(string(driver))
	sw.write(`},"results":[`)
	for i, f := range rep.Findings {
		res := result{RuleID: f.Rule, Level: level(f.Severity), Message: message{f.Message + " (" + f.Source + ")"},
			Locations: []location{{LogicalLocations: []map[string]string{{"name": f.Subject, "fullyQualifiedName": orDash(rep.Server.Name) + "/" + f.Subject}}}}}
		if len(f.Evidence) > 0 || f.Connection != "" {
			res.Properties = map[string]any{}
		}
		if len(f.Evidence) > 0 {
			res.Properties["evidence"] = f.Evidence
		}
		if f.Connection != "" {
			res.Properties["connection"] = f.Connection
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if i > 0 {
			sw.write(",")
		}
		sw.write(string(b))
		if sw.err != nil {
			return sw.err
		}
	}
	props, err := json.Marshal(map[string]any{"server": rep.Server, "protocolVersion": rep.ProtocolVersion, "era": rep.Era, "transport": rep.Transport, "hosts": rep.Hosts})
	if err != nil {
		return err
	}
	sw.write(`],"properties":`)
	sw.write(string(props))
	sw.write("}]}\n")
	return sw.err
}

// sarifWriter writes in order and keeps the first error.
type sarifWriter struct {
	w   io.Writer
	err error
}

func (s *sarifWriter) write(text string) {
	if s.err == nil {
		_, s.err = io.WriteString(s.w, text)
	}
}

// writeHosts writes the host matrix: one row per host, with its verdict
// and why; a host --host named is marked *.
func writeHosts(w io.Writer, rows []HostVerdict) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHOSTS\n")
	width := 0
	for _, h := range rows {
		width = max(width, len(h.Name))
	}
	for _, h := range rows {
		mark := " "
		if h.Named {
			mark = "*"
		}
		line := fmt.Sprintf(" %s %-*s  %-13s", mark, width, h.Name, h.Verdict)
		if h.Summary != "" {
			line += "  " + oneLine(h.Summary)
		}
		if h.OptIn && h.Verdict != "accepted" && h.Verdict != "unknown" {
			line += " (a mode a client opts into)"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// groupFindings returns the findings of severity sev in their order, those
// that say the same (rule, message and evidence) of several subjects
// together: five tools without "properties" are one entry naming five.
func groupFindings(fs []Finding, sev Severity) [][]Finding {
	var groups [][]Finding
	at := map[string]int{}
	for _, f := range fs {
		if f.Severity != sev {
			continue
		}
		key := f.Rule + "\x00" + f.Message + "\x00" + string(f.Evidence) + "\x00" + f.Connection
		if i, ok := at[key]; ok {
			groups[i] = append(groups[i], f)
			continue
		}
		at[key] = len(groups)
		groups = append(groups, []Finding{f})
	}
	return groups
}

// subjects names a group's subjects: one, or how many and which.
func subjects(g []Finding) string {
	if len(g) == 1 {
		return oneLine(g[0].Subject)
	}
	names := make([]string, 0, len(g))
	tools := true
	for _, f := range g {
		names = append(names, oneLine(f.Subject))
		tools = tools && strings.HasPrefix(f.Subject, `tool "`)
	}
	if tools {
		for i := range names {
			names[i] = strings.TrimPrefix(names[i], "tool ")
		}
		return fmt.Sprintf("%d tools (%s)", len(g), clipText(strings.Join(names, ", "), 200))
	}
	return fmt.Sprintf("%d subjects (%s)", len(g), clipText(strings.Join(names, ", "), 200))
}

// writeEnvironment writes the failures of the server's environment: what
// the check could not check, and why.
func writeEnvironment(w io.Writer, env []Environment) {
	if len(env) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNOT CHECKED: THE SERVER'S ENVIRONMENT (%d)\n", len(env))
	for _, e := range env {
		fmt.Fprintf(w, "  %s: %s\n      %s: %s\n", oneLine(e.Subject), oneLine(e.Message), e.Why, environmentHint)
	}
}
