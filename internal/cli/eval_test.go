package cli

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/eval"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

const evalKey = "sk-eval-secret-0123456789"

// evalCases is internal/eval's case of add called with a = 2.
const evalCases = "../eval/testdata/adds.yaml"

// evalTurns scripts a fake for runs runs: every run calls add and
// answers, or (half) every other run answers without calling it.
func evalTurns(runs int, half bool) []mcptest.LLMTurn {
	var out []mcptest.LLMTurn
	for i := range runs {
		if half && i%2 == 1 {
			out = append(out, mcptest.LLMTurn{Text: "I think it is 5."})
			continue
		}
		out = append(out, mcptest.LLMTurn{Calls: []mcptest.LLMCall{{ID: "c1", Name: "add", Args: `{"a":2,"b":3}`}}}, mcptest.LLMTurn{Text: "2 + 3 = 5."})
	}
	return out
}

// evalWith runs mcpi eval of the cases with a model on a fake scripted
// by turns, one run at a time (the fake's turns in order).
func evalWith(t *testing.T, cases string, turns []mcptest.LLMTurn, more ...string) (command.ExitCode, string, string) {
	t.Helper()
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, turns...)
	args := append([]string{"eval", cases, "--model", "openai:gpt-test", "--model-url", fake.URL, "--concurrency", "1"}, more...)
	return runCLI(t, "", with(peerArgs("demo"), args...)...)
}

// TestEvalBaseline: a model that always calls the right tool and one that
// does half the time, each eval'd 10 times against the demo server; the
// reports (--json) are each other's baselines: B against A's is a
// regression (exit 1, said on stderr and in the Markdown table), A against
// B's is not. The key is in no report, JUnit file or trace.
func TestEvalBaseline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", evalKey)
	dir := t.TempDir()
	cases := evalCases
	code, outA, errOut := evalWith(t, cases, evalTurns(10, false), "--runs", "10", "--json")
	var a eval.Report
	if code != command.ExitOK || json.Unmarshal([]byte(outA), &a) != nil || a.Results[0].Passed != 10 {
		t.Fatalf("A: exit %d\n%s\n%s", code, outA, errOut)
	}
	code, outB, errOut := evalWith(t, cases, evalTurns(10, true), "--runs", "10", "--json")
	var b eval.Report
	if code != command.ExitOK || json.Unmarshal([]byte(outB), &b) != nil || b.Results[0].Passed != 5 {
		t.Fatalf("B: exit %d\n%s\n%s", code, outB, errOut)
	}
	aPath, bPath := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(aPath, []byte(outA), 0o600)
	os.WriteFile(bPath, []byte(outB), 0o600)

	code, out, errOut := evalWith(t, cases, evalTurns(10, false), "--runs", "10", "--baseline", bPath, "--markdown")
	if code != command.ExitOK || !strings.Contains(out, "| adds | openai:gpt-test | 10/10 (100%) | 72–100% |") || !strings.Contains(out, "no regression (was 5/10") {
		t.Errorf("A against B: exit %d\n%s\n%s", code, out, errOut)
	}
	junit, traces := filepath.Join(dir, "report.xml"), filepath.Join(dir, "traces")
	code, out, errOut = evalWith(t, cases, evalTurns(10, true), "--runs", "10", "--baseline", aPath, "--markdown", "--junit", junit, "--record", traces)
	if code != command.ExitToolError || !strings.Contains(out, "**regression (was 10/10 with openai:gpt-test; fisher test, p = 0.0163)**") ||
		!strings.Contains(errOut, "adds with openai:gpt-test regressed (5/10, was 10/10; p = 0.0163)") {
		t.Errorf("B against A: exit %d\n%s\n%s", code, out, errOut)
	}
	x, _ := os.ReadFile(junit)
	if !strings.Contains(string(x), `<failure message="5/10 runs passed`) {
		t.Errorf("junit:\n%s", x)
	}
	runs, _ := filepath.Glob(filepath.Join(traces, "*.jsonl"))
	if len(runs) != 10 {
		t.Fatalf("%d traces, want one per run", len(runs))
	}
	all := outA + outB + out + errOut + string(x)
	for _, p := range runs {
		tr, _ := os.ReadFile(p)
		all += string(tr)
		if !strings.Contains(string(tr), `"op":"chat"`) {
			t.Errorf("%s has no model turn", p)
		}
	}
	if strings.Contains(all, evalKey) {
		t.Fatal("the key is in mcpi's output")
	}
}

// TestEvalOutcomes: a provider that refuses every run is exit 11, saying
// why; --min-pass-rate fails a case under it; under 5 runs a drop is
// insufficient data, not a failure; a bad case file is a usage error
// with its line; --tools-from shows the model the snapshot's description.
func TestEvalOutcomes(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", evalKey)
	dir := t.TempDir()
	cases := evalCases

	refused := []mcptest.LLMTurn{{Status: http.StatusUnauthorized}, {Status: http.StatusUnauthorized}}
	code, out, errOut := evalWith(t, cases, refused, "--runs", "2")
	if code != command.ExitModel || !strings.Contains(errOut, "failed on every run") || !strings.Contains(errOut, "401") || strings.Contains(out+errOut, evalKey) {
		t.Errorf("refused: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = evalWith(t, cases, evalTurns(2, true), "--runs", "2", "--min-pass-rate", "0.9")
	if code != command.ExitToolError || !strings.Contains(errOut, "adds with openai:gpt-test passed 1/2, under --min-pass-rate 0.9") || !strings.Contains(out, "1× called add: add was not called") {
		t.Errorf("--min-pass-rate: exit %d\n%s\n%s", code, out, errOut)
	}
	base := filepath.Join(dir, "base.json")
	_, outA, _ := evalWith(t, cases, evalTurns(3, false), "--runs", "3", "--json")
	os.WriteFile(base, []byte(outA), 0o600)
	code, out, errOut = evalWith(t, cases, []mcptest.LLMTurn{{Text: "no"}, {Text: "no"}, {Text: "no"}}, "--runs", "3", "--baseline", base)
	if code != command.ExitOK || !strings.Contains(out, "baseline: insufficient data (was 3/3") {
		t.Errorf("3 runs: exit %d\n%s\n%s", code, out, errOut)
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("cases:\n  - name: a\n    prompt: p\n    expect:\n      caled: [add]\n"), 0o600)
	if code, _, errOut = evalWith(t, bad, nil); code != command.ExitUsage || !strings.Contains(errOut, `line 5: unknown key "caled"`) {
		t.Errorf("bad file: exit %d\n%s", code, errOut)
	}

	snap := filepath.Join(dir, "snap.json")
	os.WriteFile(snap, []byte(`{"format":"mcpi.surface/1","serverInfo":{},"capabilities":{},"clientCapabilities":{},
"tools":[{"name":"add","description":"EDITED adds","inputSchema":{"type":"object"}}],"resources":[],"resourceTemplates":[],"prompts":[]}`), 0o600)
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, evalTurns(1, false)...)
	code, out, errOut = runCLI(t, "", with(peerArgs("demo"), "eval", cases, "--model", "openai:gpt-test", "--model-url", fake.URL, "--tools-from", snap)...)
	if code != command.ExitOK || !strings.Contains(errOut, "--tools-from: echo: on the server, not in the snapshot") {
		t.Errorf("--tools-from: exit %d\n%s\n%s", code, out, errOut)
	}
	if body := string(fake.Requests()[0].Body); !strings.Contains(body, "EDITED adds") {
		t.Errorf("the model was not shown the snapshot's tools: %s", body)
	}

	// --seed and --temperature reach the provider.
	fake = mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, evalTurns(1, false)...)
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "eval", cases, "--model", "openai:gpt-test", "--model-url", fake.URL, "--seed", "7", "--temperature", "0.5")...)
	for _, r := range fake.Requests() {
		if m := r.JSON(t); code != command.ExitOK || m["seed"] != 7.0 || m["temperature"] != 0.5 {
			t.Errorf("--seed 7 --temperature 0.5: exit %d, seed %v, temperature %v\n%s", code, m["seed"], m["temperature"], errOut)
		}
	}
}

// TestEvalFlags: the command line as the options read it.
func TestEvalFlags(t *testing.T) {
	o, err := parseArgs(NewCmdEval, []string{"a.yaml", "b.yaml", "--model", "openai:x,anthropic:y", "--model", "ollama:z", "--seed", "7", "--temperature", "0",
		"--record", "traces", "--runs", "5", "--", "./server"})
	if err != nil || strings.Join(o.Files, ",") != "a.yaml,b.yaml" || strings.Join(o.Models, ",") != "openai:x,anthropic:y,ollama:z" ||
		o.Seed == nil || *o.Seed != 7 || o.Temperature == nil || *o.Temperature != 0 || o.RecordDir != "traces" || o.Record != "" || o.Runs != 5 || o.Concurrency != 4 || o.MaxTurns != 10 {
		t.Fatalf("%v %+v", err, o)
	}
	if o, err = parseArgs(NewCmdEval, []string{"a.yaml", "--model", "openai:x", "--", "./server"}); err != nil || o.Seed != nil || o.Temperature != nil {
		t.Errorf("no --seed, no --temperature: %v %+v", err, o)
	}
	t.Setenv("MCPI_MODEL", "")
	for _, argv := range [][]string{
		{"a.yaml", "--", "./server"},
		{"--model", "openai:x", "--", "./server"},
		{"a.yaml", "--model", "gpt-4", "--", "./server"},
		{"a.yaml", "--model", "openai:x", "--runs", "0", "--", "./server"},
		{"a.yaml", "--model", "openai:x", "--min-pass-rate", "2", "--", "./server"},
		{"a.yaml", "--model", "openai:x", "--json", "--markdown", "--", "./server"},
		{"a.yaml", "--model", "openai:x"},
	} {
		if _, err := parseArgs(NewCmdEval, argv); !errors.As(err, new(*command.FlagError)) {
			t.Errorf("%v: %v, want a usage error", argv, err)
		}
	}
}
