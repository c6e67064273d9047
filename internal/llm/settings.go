package llm

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/strictyaml"
)

// SettingsEnv names a settings file to read instead of the default one.
const SettingsEnv = "MCPI_MODELS"

// MaxSettingsSize is the size of the largest settings file read.
const MaxSettingsSize = 1 << 20

// Settings are a user's model settings, read from a YAML file (models.yaml
// in mcpi's configuration directory, or the file $MCPI_MODELS names): the
// key and URL of each provider, models by a name of the user's, and prices
// over the built-in table. What a flag or an entry does not say, the
// environment says, as without the file.
type Settings struct {
	// Path is the file read; "" when there was none.
	Path string `yaml:"-"`
	// Providers are keyed by the provider of a spec (anthropic, openai,
	// openai-responses, ollama, compat): every model of that provider
	// takes the entry's key and URL. openai-responses takes openai's entry
	// when it has none of its own.
	Providers map[string]Entry `yaml:"providers"`
	// Models are named models: `--model NAME` stands for the entry's spec,
	// with the entry's key and URL over its provider's.
	Models map[string]Entry `yaml:"models"`
	// Prices are US dollars per million tokens by model name (or the start
	// of one), over DefaultPrices.
	Prices map[string]PriceEntry `yaml:"prices"`
}

// Entry is where a provider or a named model is, and its key.
type Entry struct {
	// Model is the spec a named model stands for ("openai:gpt-5.4");
	// only in models.
	Model string `yaml:"model"`
	// URL is the base URL; --model-url wins over it.
	URL string `yaml:"url"`
	// Key is the API key itself (the file must then be readable by its
	// owner only); KeyEnv, the variable that holds it instead of the
	// provider's usual one.
	Key    string `yaml:"key"`
	KeyEnv string `yaml:"keyEnv"`
}

// PriceEntry is a user's price of a model.
type PriceEntry struct {
	Input      *float64 `yaml:"input"`
	Output     *float64 `yaml:"output"`
	CacheRead  float64  `yaml:"cacheRead"`
	CacheWrite float64  `yaml:"cacheWrite"`
	Date       string   `yaml:"date"`
	Source     string   `yaml:"source"`
}

var kinds = []string{KindAnthropic, KindOpenAI, KindOpenAIResponses, KindOllama, KindCompat}

// DefaultSettingsPath is the file read when $MCPI_MODELS is not set:
// models.yaml in mcpi's configuration directory.
func DefaultSettingsPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpi", "models.yaml")
}

// LoadSettings reads the file $MCPI_MODELS names (it must exist), else
// DefaultSettingsPath's when there is one. No file is no settings, not an
// error.
func LoadSettings(getenv func(string) string) (*Settings, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv(SettingsEnv); p != "" {
		return ReadSettings(p)
	}
	p := DefaultSettingsPath()
	if p == "" {
		return &Settings{}, nil
	}
	s, err := ReadSettings(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Settings{}, nil
	}
	return s, err
}

// ReadSettings reads and checks a settings file: an unknown key, a key
// with no value, a named model that is not a spec, a price without input
// and output, and a key in a file that others may read are refused.
func ReadSettings(path string) (*Settings, error) {
	s, err := readSettings(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("model settings %s: %s", safetext.OneLine(path), safetext.OneLine(err.Error()))
	}
	return s, nil
}

func readSettings(path string) (*Settings, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxSettingsSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSettingsSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxSettingsSize)
	}
	var s Settings
	if _, err := strictyaml.Decode(data, &s); err != nil && !errors.Is(err, strictyaml.ErrEmpty) {
		return nil, err
	}
	s.Path = path
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.holdsKey() && runtime.GOOS != "windows" {
		if fi, err := fh.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("holds a key and others may read it (mode %04o): chmod 600 the file, or name the key's variable with keyEnv", fi.Mode().Perm())
		}
	}
	return &s, nil
}

func (s *Settings) check() error {
	for _, name := range slices.Sorted(maps.Keys(s.Providers)) {
		e := s.Providers[name]
		if !slices.Contains(kinds, name) {
			return fmt.Errorf("providers: unknown provider %q (%s)", name, strings.Join(kinds, ", "))
		}
		if e.Model != "" {
			return fmt.Errorf("providers: %s: model: a provider's entry has no model (name one under models)", name)
		}
		if err := e.check(); err != nil {
			return fmt.Errorf("providers: %s: %w", name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Models)) {
		e := s.Models[name]
		if strings.Contains(name, ":") || strings.TrimSpace(name) == "" {
			return fmt.Errorf("models: %q: a name has no colon (PROVIDER:MODEL is a spec, not a name)", name)
		}
		if _, err := ParseSpec(e.Model); err != nil {
			return fmt.Errorf("models: %s: %w", name, err)
		}
		if err := e.check(); err != nil {
			return fmt.Errorf("models: %s: %w", name, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Prices)) {
		p := s.Prices[name]
		if p.Input == nil || p.Output == nil {
			return fmt.Errorf("prices: %s: give input and output (US dollars per million tokens)", name)
		}
		if *p.Input < 0 || *p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
			return fmt.Errorf("prices: %s: a price is 0 or more", name)
		}
	}
	return nil
}

func (e Entry) check() error {
	if e.Key != "" && e.KeyEnv != "" {
		return errors.New("give key or keyEnv, not both")
	}
	if e.KeyEnv != "" && strings.ContainsAny(e.KeyEnv, "=$ \t") {
		return fmt.Errorf("keyEnv: %q is not a variable's name", e.KeyEnv)
	}
	return nil
}

func (s *Settings) holdsKey() bool {
	for _, e := range s.Providers {
		if e.Key != "" {
			return true
		}
	}
	for _, e := range s.Models {
		if e.Key != "" {
			return true
		}
	}
	return false
}

// Resolve returns the spec that name stands for (name itself when it is a
// spec) and o with the settings' key and URL: a named model's own, else
// its provider's. o.BaseURL, when set (--model-url), wins.
func (s *Settings) Resolve(name string, o Options) (string, Options, error) {
	spec := name
	var entries []Entry
	var where []string
	if !strings.Contains(name, ":") && s != nil {
		e, ok := s.Models[strings.TrimSpace(name)]
		if !ok {
			return "", o, s.unknown(name)
		}
		spec = e.Model
		entries, where = append(entries, e), append(where, "models."+name)
	}
	parsed, err := ParseSpec(spec)
	if err != nil {
		return "", o, err
	}
	if s != nil {
		for _, k := range []string{parsed.Kind, KindOpenAI} {
			if e, ok := s.Providers[k]; ok {
				entries, where = append(entries, e), append(where, "providers."+k)
				break
			}
			if parsed.Kind != KindOpenAIResponses {
				break
			}
		}
	}
	for i, e := range entries {
		if o.BaseURL == "" {
			o.BaseURL = e.URL
		}
		if o.APIKey == "" && o.KeyEnv == "" && (e.Key != "" || e.KeyEnv != "") {
			o.APIKey, o.KeyEnv = e.Key, e.KeyEnv
			o.KeySource = where[i] + " in " + safetext.OneLine(s.Path)
		}
	}
	return spec, o, nil
}

func (s *Settings) unknown(name string) error {
	msg := fmt.Sprintf("model %q: want PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat:)", clipSpec(safetext.OneLine(name)))
	switch {
	case s.Path == "":
		msg += fmt.Sprintf(", or a name of models.yaml (%s, or the file $%s names)", safetext.OneLine(DefaultSettingsPath()), SettingsEnv)
	case len(s.Models) == 0:
		msg += fmt.Sprintf(": %s names no models", safetext.OneLine(s.Path))
	default:
		msg += fmt.Sprintf(", or a name of %s (%s)", safetext.OneLine(s.Path), strings.Join(slices.Sorted(maps.Keys(s.Models)), ", "))
	}
	return newError("", "", ErrSpec, 0, "%s", msg)
}

// PriceTable is DefaultPrices with the settings' prices over it.
func (s *Settings) PriceTable() Prices {
	p := DefaultPrices()
	if s == nil {
		return p
	}
	for name, e := range s.Prices {
		p[name] = Price{
			Input: *e.Input, Output: *e.Output, CacheRead: e.CacheRead, CacheWrite: e.CacheWrite,
			Date: e.Date, Source: cmp.Or(e.Source, s.Path),
		}
	}
	return p
}
