package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/schema"
)

// Parked is one server request waiting for an answer.
type Parked struct {
	ID       int
	Method   string // sampling/createMessage or elicitation/create
	Sampling *mcp.CreateMessageParams
	Elicit   *mcp.ElicitParams
	Command  string // the command it belongs to, when known
	// owner is the command's slot, when known; told the slots of the
	// commands that may be waiting on it.
	owner *Slot
	told  []*Slot
	Since time.Time

	// params are the request's params, encoded once: what the board's
	// budget accounts, what mcpi pending --json prints and the attached
	// clients are sent.
	params json.RawMessage

	// ctx ends when the request does (answered, withdrawn, or the
	// session ended): the attached clients asked stop waiting.
	ctx context.Context

	answer chan parkAnswer // one answer, buffered
}

type parkAnswer struct {
	result any
	err    error
}

// Board holds a session's parked requests, within its budget in count
// and in bytes of params (bounds.ParkedCount, bounds.ParkedBytes): a
// request past it is refused, and said so once until the board has room
// again.
type Board struct {
	mu     sync.Mutex
	next   int
	byID   map[int]*Parked
	budget *bounds.Budget
	// full is set by the first refusal and cleared when a request leaves:
	// one warning per time the board fills.
	full bool
}

// NewBoard returns a board within maxCount requests and maxBytes of
// params.
func NewBoard(maxCount int, maxBytes int64) *Board {
	return &Board{budget: bounds.NewBudget("parked requests", maxCount, maxBytes)}
}

// add parks p, or refuses it with the budget's *bounds.ExceededError;
// first reports whether this refusal is the first since the board had
// room.
func (b *Board) add(p *Parked) (first bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.budget.Take(int64(len(p.params))); err != nil {
		first = !b.full
		b.full = true
		return first, err
	}
	if b.byID == nil {
		b.byID = map[int]*Parked{}
	}
	b.next++
	p.ID = b.next
	p.Since = time.Now()
	p.answer = make(chan parkAnswer, 1)
	b.byID[p.ID] = p
	return false, nil
}

// Get returns the parked request id, or nil.
func (b *Board) Get(id int) *Parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byID[id]
}

// Answer gives the parked request id its answer (a result, or err),
// unless it was answered or withdrawn meanwhile: false then.
func (b *Board) Answer(id int, result any, err error) bool {
	p := b.Take(id)
	if p == nil {
		return false
	}
	p.answer <- parkAnswer{result: result, err: err}
	return true
}

// ParkedFor returns the parked requests the command of slot s may be
// waiting on: its own, and those of a legacy server that several commands
// under way, s among them, were told of.
func (b *Board) ParkedFor(s *Slot) []*Parked {
	var out []*Parked
	for _, p := range b.List() {
		if p.owner == s || p.owner == nil && slices.Contains(p.told, s) {
			out = append(out, p)
		}
	}
	return out
}

// owners returns the commands that own a parked request, which wait for
// its answer.
func (b *Board) owners() map[*Slot]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[*Slot]bool{}
	for _, p := range b.byID {
		if p.owner != nil {
			out[p.owner] = true
		}
	}
	return out
}

// Params are the request's params, as the server sent them.
func (p *Parked) Params() json.RawMessage { return p.params }

// Take removes a parked request; only its taker may answer it.
func (b *Board) Take(id int) *Parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.byID[id]
	if p != nil {
		delete(b.byID, id)
		b.budget.Give(int64(len(p.params)))
		b.full = false
	}
	return p
}

// List returns the parked requests, oldest first.
func (b *Board) List() []*Parked {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*Parked, 0, len(b.byID))
	for _, p := range b.byID {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Pending is one parked request as mcpi pending --json shows it.
type Pending struct {
	ID        int             `json:"id"`
	Kind      string          `json:"kind"`
	Mode      string          `json:"mode,omitempty"`
	Command   string          `json:"command,omitempty"`
	Since     time.Time       `json:"since"`
	AgeMs     int64           `json:"ageMs"`
	Summary   string          `json:"summary"`
	Message   string          `json:"message,omitempty"`
	URL       string          `json:"url,omitempty"`
	Fields    []PendingField  `json:"fields,omitempty"`
	LastText  string          `json:"lastText,omitempty"`
	MaxTokens int             `json:"maxTokens,omitempty"`
	Params    json.RawMessage `json:"params"`
}

type PendingField struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Types       []string `json:"types,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Enum        []any    `json:"enum,omitempty"`
	Default     any      `json:"default,omitempty"`
}

// describe says what a parked request is; its params are the ones held,
// not a copy. The summary is clipped (bounds.Clip): message, lastText and
// params are the server's in full.
func (p *Parked) Describe(now time.Time) Pending {
	j := Pending{ID: p.ID, Kind: p.Method, Command: p.Command, Since: p.Since, AgeMs: now.Sub(p.Since).Milliseconds(), Params: p.params}
	switch {
	case p.Sampling != nil:
		j.MaxTokens = p.Sampling.MaxTokens
		if n := len(p.Sampling.Messages); n > 0 {
			j.LastText = SamplingText(p.Sampling.Messages[n-1].Content)
		}
		j.Summary = fmt.Sprintf("%d message(s), max %d tokens: %s", len(p.Sampling.Messages), p.Sampling.MaxTokens, j.LastText)
	case p.Elicit != nil:
		j.Message = p.Elicit.Message
		j.Mode = "form"
		if p.Elicit.Mode == "url" {
			j.Mode, j.URL = "url", p.Elicit.URL
			j.Summary = fmt.Sprintf("open %s: %s", p.Elicit.URL, p.Elicit.Message)
			break
		}
		var names []string
		if s, err := schema.Compile(p.Elicit.RequestedSchema); err == nil {
			for _, f := range s.Properties() {
				j.Fields = append(j.Fields, PendingField{Name: f.Name, Title: f.Title, Description: f.Description, Types: f.Types, Required: f.Required, Enum: f.Enum, Default: f.Default})
				n := f.Name
				if len(f.Types) > 0 {
					n += " " + strings.Join(f.Types, "|")
				}
				if f.Required {
					n += ", required"
				}
				names = append(names, n)
			}
		}
		j.Summary = p.Elicit.Message
		if len(names) > 0 {
			j.Summary += " [" + strings.Join(names, "; ") + "]"
		}
	}
	j.Summary = bounds.Clip(j.Summary)
	return j
}

// Usage is the board's budget and what it holds.
func (b *Board) Usage() bounds.Usage { return b.budget.Usage() }
