package llm

import (
	"cmp"
	"os"
	"strings"
)

// The providers' default base URLs.
const (
	AnthropicURL = "https://api.anthropic.com/"
	OpenAIURL    = "https://api.openai.com/v1/"
	OllamaURL    = "http://127.0.0.1:11434/v1/"
	// GeminiURL is Gemini's OpenAI-compatible endpoint: a compat model
	// whose URL starts with it takes GEMINI_API_KEY.
	GeminiURL = "https://generativelanguage.googleapis.com/v1beta/openai/"
)

// Kinds of providers, the part of a spec before the colon.
const (
	KindAnthropic       = "anthropic"
	KindOpenAI          = "openai"
	KindOpenAIResponses = "openai-responses"
	KindOllama          = "ollama"
	KindCompat          = "compat"
)

// Spec is a parsed model spec: "anthropic:claude-sonnet-4-5".
type Spec struct {
	Kind  string
	Model string
}

func (s Spec) String() string { return s.Kind + ":" + s.Model }

// ParseSpec splits a spec into its kind and model, and refuses an unknown
// kind or an empty model.
func ParseSpec(spec string) (Spec, error) {
	kind, model, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok || model == "" {
		return Spec{}, newError("", "", ErrSpec, 0, "model %q: want PROVIDER:MODEL (anthropic:, openai:, openai-responses:, ollama:, compat:)", clipSpec(spec))
	}
	switch kind {
	case KindAnthropic, KindOpenAI, KindOpenAIResponses, KindOllama, KindCompat:
		return Spec{Kind: kind, Model: model}, nil
	}
	return Spec{}, newError("", "", ErrSpec, 0, "model %q: unknown provider %q (anthropic, openai, openai-responses, ollama, compat)", clipSpec(spec), clipSpec(kind))
}

func clipSpec(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Parse makes the Provider a spec names:
//
//	anthropic:MODEL         Anthropic Messages; key ANTHROPIC_API_KEY
//	openai:MODEL            OpenAI Chat Completions; key OPENAI_API_KEY, URL OPENAI_BASE_URL
//	openai-responses:MODEL  OpenAI Responses; same key and URL
//	ollama:MODEL            chat completions at http://127.0.0.1:11434/v1/, no key
//	compat:MODEL            chat completions at o.BaseURL (required); no key, but
//	                        GEMINI_API_KEY for Gemini's URL, or o.APIKey
//
// o.APIKey overrides the variable; o.BaseURL overrides the URL. A missing
// key is an ErrNoKey that names the variable to set.
func Parse(spec string, o Options) (Provider, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key, keyVar, base := o.APIKey, "", o.BaseURL
	needKey := true
	name := s.Kind
	switch s.Kind {
	case KindAnthropic:
		keyVar = "ANTHROPIC_API_KEY"
		base = first(base, AnthropicURL)
	case KindOpenAI, KindOpenAIResponses:
		keyVar = "OPENAI_API_KEY"
		base = first(base, getenv("OPENAI_BASE_URL"), OpenAIURL)
		name = KindOpenAI
	case KindOllama:
		needKey = false
		base = first(base, OllamaURL)
	case KindCompat:
		needKey = false
		if base == "" {
			return nil, newError(KindCompat, redactor(key), ErrSpec, 0, "compat:%s needs the server's base URL (--model-url, for example http://127.0.0.1:8080/v1)", clipSpec(s.Model))
		}
		if strings.HasPrefix(base, strings.TrimSuffix(GeminiURL, "/")) {
			keyVar, needKey, name = "GEMINI_API_KEY", true, "gcp.gemini"
		}
	}
	if o.KeyEnv != "" {
		keyVar, needKey = o.KeyEnv, true
	}
	if key == "" && keyVar != "" {
		key = getenv(keyVar)
	}
	if needKey && key == "" {
		return nil, newError(name, "", ErrNoKey, 0, "%s needs an API key: set %s%s", spec, keyVar, paren(o.KeySource))
	}
	// hint is what an error about the key says to check.
	hint := keyVar + paren(o.KeySource)
	switch {
	case o.APIKey != "":
		hint = cmp.Or(o.KeySource, "the key given")
	case !needKey:
		// A local server gets no key of the environment: only the one
		// given for it.
		hint = ""
	}
	c, err := newConn(name, s.Model, base, key, hint, o)
	if err != nil {
		return nil, err
	}
	switch s.Kind {
	case KindAnthropic:
		return newAnthropic(c), nil
	case KindOpenAIResponses:
		return newResponses(c), nil
	default:
		return newChat(c, s.Kind == KindOpenAI), nil
	}
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
