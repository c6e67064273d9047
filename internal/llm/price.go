package llm

import "strings"

// Price is what a model costs, in US dollars per million tokens, with the
// date the figures were read and where.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CacheRead and CacheWrite price the input tokens read from or
	// written to the prompt cache; zero prices them as input (an upper
	// bound for a cache read).
	CacheRead  float64 `json:"cacheRead,omitempty"`
	CacheWrite float64 `json:"cacheWrite,omitempty"`
	Date       string  `json:"date"`
	Source     string  `json:"source"`
}

// Prices maps a model name, or the start of one, to its price: a dated
// model ("claude-sonnet-5-5-20260630") takes the price of the longest
// name it starts with.
type Prices map[string]Price

const (
	anthropicSource = "https://platform.claude.com/docs/en/about-claude/pricing (model pages under platform.claude.com/docs/.../models/)"
	anthropicDate   = "2026-11-28"
	openaiSource    = "https://developers.openai.com/api/docs/pricing (as cited by tokenmix.ai, data verified 2026-06-04)"
	openaiDate      = "2026-06-04"
)

// DefaultPrices returns the built-in table (a copy: the caller may change
// it, add models or override them). Local and compatible servers have no
// price: their cost is unknown, not zero.
func DefaultPrices() Prices {
	a := func(in, out, read, write float64) Price {
		return Price{Input: in, Output: out, CacheRead: read, CacheWrite: write, Date: anthropicDate, Source: anthropicSource}
	}
	o := func(in, out float64) Price {
		return Price{Input: in, Output: out, Date: openaiDate, Source: openaiSource}
	}
	return Prices{
		"claude-fable-5-2":  a(8, 40, 0.80, 10),
		"claude-fable-5-1":  a(10, 50, 1, 12.5),
		"claude-opus-5-5":   a(4, 20, 0.20, 5),
		"claude-opus-5":     a(5, 25, 0.50, 6.25),
		"claude-sonnet-5-5": a(2, 10, 0.20, 2.50),
		"claude-sonnet-5":   a(2, 10, 0.20, 2.50),
		"claude-opus-4-5":   a(5, 25, 0.50, 6.25),
		"claude-haiku-4-5":  a(1, 5, 0.10, 1.25),
		"gpt-5.5":           o(5, 30),
		"gpt-5.5-pro":       o(30, 180),
		"gpt-5.4":           o(2.50, 15),
		"gpt-5.4-mini":      o(0.75, 4.50),
		"gpt-5.4-nano":      o(0.20, 1.25),
		"gpt-5.4-pro":       o(30, 180),
	}
}

// Lookup returns the price of model: its own entry, else the longest
// entry it starts with.
func (p Prices) Lookup(model string) (Price, bool) {
	if pr, ok := p[model]; ok {
		return pr, true
	}
	best, found := "", false
	for name := range p {
		if strings.HasPrefix(model, name) && len(name) > len(best) {
			best, found = name, true
		}
	}
	if !found {
		return Price{}, false
	}
	return p[best], true
}

// Cost returns what u cost with model, in US dollars; false when the
// table has no price for it.
func (p Prices) Cost(model string, u Usage) (float64, bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	read, write := pr.CacheRead, pr.CacheWrite
	if read == 0 {
		read = pr.Input
	}
	if write == 0 {
		write = pr.Input
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	usd := float64(plain)*pr.Input + float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadTokens)*read + float64(u.CacheWriteTokens)*write
	return usd / 1e6, true
}
