package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/chat/term"
	"github.com/mcpi-dev/mcpi/internal/command"

	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// TestChatModelSettings: a model named in models.yaml ($MCPI_MODELS) is
// its spec at its URL with the key of the variable its entry names, and
// the file's price is the one a turn costs; a name the file does not know
// is exit 2 with the file's names; a missing variable names the entry.
func TestChatModelSettings(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "Hello."})
	settings := filepath.Join(t.TempDir(), "models.yaml")
	body := "models:\n  work:\n    model: openai:gpt-4.1\n    url: " + fake.URL + "\n    keyEnv: WORK_KEY\n" +
		"prices:\n  gpt-4.1: {input: 1000, output: 2000, source: our contract}\n"
	if err := os.WriteFile(settings, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPI_MODELS", settings)
	t.Setenv("OPENAI_API_KEY", "sk-not-this-one-0000000000")
	t.Setenv("WORK_KEY", chatKey)
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "work", "--prompt", "hi", "--json")...)
	var rep term.Report
	if code != command.ExitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.Text != "Hello." || !rep.Priced || rep.CostUSD != 0.02 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if h := fake.Requests()[0].Header.Get("Authorization"); h != "Bearer "+chatKey {
		t.Errorf("the provider got Authorization %q", h)
	}
	if strings.Contains(out+errOut, chatKey) {
		t.Error("the key is in mcpi's output")
	}
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "home", "--prompt", "hi")...)
	if code == command.ExitOK || !strings.Contains(errOut, "or a name of "+settings+" (work)") {
		t.Errorf("an unknown name: exit %d %s", code, errOut)
	}
	t.Setenv("WORK_KEY", "")
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "chat", "--model", "work", "--prompt", "hi")...)
	if code == command.ExitOK || !strings.Contains(errOut, "set WORK_KEY (models.work in "+settings+")") {
		t.Errorf("no key: exit %d %s", code, errOut)
	}
	// A broken file is said, with its line, by every model flag.
	if err := os.WriteFile(settings, []byte("models:\n  work:\n    modle: openai:gpt-4.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"chat", "--model", "openai:gpt-4.1", "--prompt", "hi"},
		{"call", "sample", "prompt=hi", "--sampling-model", "openai:gpt-4.1"},
	} {
		code, _, errOut = runCLI(t, "", with(peerArgs("demo"), args...)...)
		if code != command.ExitUsage || !strings.Contains(errOut, `line 3: unknown key "modle"`) {
			t.Errorf("%s with a broken file: exit %d %s", args[0], code, errOut)
		}
	}
}

// TestEvalModelSettings: eval's --model and a case file's judge take names
// of models.yaml; a name it does not have is refused before the server.
func TestEvalModelSettings(t *testing.T) {
	fake := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "Hello."})
	dir := t.TempDir()
	settings := filepath.Join(dir, "models.yaml")
	if err := os.WriteFile(settings, []byte("models:\n  work: {model: 'openai:gpt-4.1', url: "+fake.URL+", keyEnv: WORK_KEY}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := filepath.Join(dir, "cases.yaml")
	if err := os.WriteFile(cases, []byte("cases:\n  - name: greets\n    prompt: hi\n    expect: {text: {contains: Hello}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPI_MODELS", settings)
	t.Setenv("WORK_KEY", chatKey)
	code, out, errOut := runCLI(t, "", with(peerArgs("demo"), "eval", cases, "--model", "work", "--json")...)
	if code != command.ExitOK || !strings.Contains(out, `"work"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("the named model got %d requests", len(fake.Requests()))
	}
	code, _, errOut = runCLI(t, "", with(peerArgs("demo"), "eval", cases, "--model", "work,home")...)
	if code != command.ExitUsage || !strings.Contains(errOut, `"home"`) {
		t.Errorf("an unknown name: exit %d %s", code, errOut)
	}
}
