package llm_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/llm"
	"github.com/mcpi-dev/mcpi/internal/mcptest"
)

// settingsFile writes a models.yaml with mode and returns its path.
func settingsFile(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "models.yaml")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSettingsNameAModelWithItsURLAndKey(t *testing.T) {
	fk := mcptest.NewFakeLLM(t, mcptest.LLMOpenAIChat, mcptest.LLMTurn{Text: "hello"}, mcptest.LLMTurn{Status: 401, Body: `{"error":{"message":"no"}}`})
	p := settingsFile(t, `
models:
  work:
    model: openai:gpt-5.4
    url: `+fk.URL+`
    keyEnv: WORK_KEY
providers:
  openai:
    url: http://127.0.0.1:1/never/
prices:
  gpt-5.4: {input: 1, output: 2, date: "2026-11-28", source: our contract}
`, 0o644)
	s, err := llm.ReadSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	spec, o, err := s.Resolve("work", llm.Options{HTTPClient: testClient(), Getenv: env(map[string]string{"WORK_KEY": testKey, "OPENAI_API_KEY": "sk-not-this-one-000000000000"})})
	if err != nil || spec != "openai:gpt-5.4" || o.BaseURL != fk.URL || o.KeyEnv != "WORK_KEY" {
		t.Fatalf("Resolve: %q %+v %v", spec, o, err)
	}
	prov, err := llm.Parse(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prov.Stream(ctx(t), ask("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if r := fk.Requests(); len(r) != 1 || r[0].Header.Get("Authorization") != "Bearer "+testKey {
		t.Fatalf("the key of WORK_KEY was not sent: %v", r)
	}
	// A refused key names the variable and the entry that named it.
	_, err = prov.Stream(ctx(t), ask("hi"), nil)
	if !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "check WORK_KEY (models.work in "+p+")") {
		t.Errorf("401: %v", err)
	}
	// The user's price is over the built-in one.
	if c, ok := s.PriceTable().Cost("gpt-5.4", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}); !ok || c != 3 {
		t.Errorf("cost %v %v", c, ok)
	}
	if pr, _ := s.PriceTable().Lookup("gpt-5.4"); pr.Source != "our contract" {
		t.Errorf("price %+v", pr)
	}
	// The missing variable is named, with the entry.
	_, o, _ = s.Resolve("work", llm.Options{HTTPClient: testClient(), Getenv: env(nil)})
	o.Getenv = env(nil)
	if _, err := llm.Parse(spec, o); !errors.Is(err, llm.ErrNoKey) || !strings.Contains(err.Error(), "set WORK_KEY (models.work in") {
		t.Errorf("no key: %v", err)
	}
}

func TestSettingsProviderEntries(t *testing.T) {
	p := settingsFile(t, `
providers:
  openai:
    url: https://gateway.example/v1/
    key: sk-file-key-0123456789
`, 0o600)
	s, err := llm.ReadSettings(p)
	if err != nil {
		t.Fatal(err)
	}
	// openai-responses takes openai's entry; --model-url wins over it.
	spec, o, err := s.Resolve("openai-responses:gpt-5.4", llm.Options{})
	if err != nil || spec != "openai-responses:gpt-5.4" || o.BaseURL != "https://gateway.example/v1/" || o.APIKey != "sk-file-key-0123456789" || !strings.Contains(o.KeySource, "providers.openai") {
		t.Errorf("%q %+v %v", spec, o, err)
	}
	if _, o, _ = s.Resolve("openai:gpt-5.4", llm.Options{BaseURL: "http://127.0.0.1:9/v1/"}); o.BaseURL != "http://127.0.0.1:9/v1/" {
		t.Errorf("--model-url lost: %+v", o)
	}
	// Another provider is untouched.
	if _, o, _ = s.Resolve("anthropic:claude-haiku-4-5", llm.Options{}); o.APIKey != "" || o.BaseURL != "" {
		t.Errorf("anthropic took openai's entry: %+v", o)
	}
	if _, _, err := s.Resolve("nosuch", llm.Options{}); !errors.Is(err, llm.ErrSpec) || !strings.Contains(err.Error(), "names no models") {
		t.Errorf("unknown name: %v", err)
	}
}

func TestSettingsRefused(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"unknown key", "providers:\n  openai:\n    ulr: http://x/\n", `line 3: unknown key "ulr"`},
		{"no value", "models:\n  local:\n    model:\n", "line 3: model: has no value"},
		{"entry with no value", "models:\n  local:\n", "line 2: local: has no value"},
		{"unknown provider", "providers:\n  mistral: {url: http://x/}\n", `unknown provider "mistral"`},
		{"a name with a colon", "models:\n  a:b: {model: ollama:q}\n", "a name has no colon"},
		{"a name that is no spec", "models:\n  x: {model: qwen3}\n", "want PROVIDER:MODEL"},
		{"key and keyEnv", "providers:\n  openai: {key: k, keyEnv: K}\n", "not both"},
		{"a price without output", "prices:\n  m: {input: 1}\n", "give input and output"},
		{"a negative price", "prices:\n  m: {input: -1, output: 1}\n", "0 or more"},
		{"not a mapping", "- a\n", "want a mapping"},
		{"an alias bomb", "prices:\n  a: &a [x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n  f: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n", "(and 3 more)"},
	} {
		_, err := llm.ReadSettings(settingsFile(t, tc.body, 0o600))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestSettingsKeyNeedsAPrivateFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	_, err := llm.ReadSettings(settingsFile(t, "providers:\n  anthropic: {key: sk-ant-0123456789}\n", 0o644))
	if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "sk-ant") {
		t.Errorf("a key readable by others: %v", err)
	}
}

func TestLoadSettings(t *testing.T) {
	// No file where $MCPI_MODELS points is an error; no default file is
	// no settings.
	missing := filepath.Join(t.TempDir(), "none.yaml")
	if _, err := llm.LoadSettings(env(map[string]string{llm.SettingsEnv: missing})); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing $MCPI_MODELS: %v", err)
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	s, err := llm.LoadSettings(env(nil))
	if err != nil || s.Path != "" {
		t.Errorf("no file: %+v %v", s, err)
	}
	p := settingsFile(t, "models:\n  local: {model: 'ollama:qwen3'}\n", 0o644)
	s, err = llm.LoadSettings(env(map[string]string{llm.SettingsEnv: p}))
	if err != nil || s.Models["local"].Model != "ollama:qwen3" {
		t.Errorf("%+v %v", s, err)
	}
	// An empty file is no settings.
	if _, err := llm.ReadSettings(settingsFile(t, "", 0o644)); err != nil {
		t.Errorf("empty: %v", err)
	}
}
