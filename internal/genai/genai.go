// Package genai is what a trace keeps of a model in the loop: each request
// mcpi makes of a model provider and its answer, and each tool the model
// asked for that mcpi ran, as tap events of kind transport.KindModel. The
// Wire pane, the Timeline's model lane, --record, replay and the
// OpenTelemetry export (GenAI "chat" and "execute_tool" spans) all read
// these events; the chat, sampling and eval runners write them.
//
// An event's data is a Turn in JSON. A request and its answer share an ID:
// Outgoing is the request (a chat turn sent, a tool call started),
// Incoming its answer (the model's reply, the tool's result). Nothing of a
// provider's key is in a Turn.
package genai

import (
	"encoding/json"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Operations of a Turn, as the OpenTelemetry GenAI conventions name them.
const (
	// OpChat is a request to a model and its answer.
	OpChat = "chat"
	// OpExecuteTool is a tool the model asked for, run by mcpi over MCP:
	// the tools/call frames between its start and its end are its own.
	OpExecuteTool = "execute_tool"
)

// Turn is one model event's data.
type Turn struct {
	Op string `json:"op"`
	// ID pairs a request with its answer ("chat-3", or the tool call's id).
	ID string `json:"id"`
	// Purpose says what asked for the turn: chat, sampling, eval, judge.
	Purpose string `json:"purpose,omitempty"`
	// Provider is the provider's name (anthropic, openai, ollama, compat);
	// Model the model asked for, or on an answer the model that answered.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`

	// A chat request: how many messages and tools it sent.
	Messages int `json:"messages,omitempty"`
	Tools    int `json:"tools,omitempty"`
	// A sampling request: the server's model hints (advisory: the model
	// is the one the person chose) and its includeContext.
	Hints          []string `json:"hints,omitempty"`
	IncludeContext string   `json:"includeContext,omitempty"`

	// A chat answer: its text, the tools it asked for, why it stopped, its
	// tokens, its time to first token and duration, its cost.
	Text          string     `json:"text,omitempty"`
	ToolCalls     []ToolCall `json:"toolCalls,omitempty"`
	FinishReasons []string   `json:"finishReasons,omitempty"`
	Usage         *Usage     `json:"usage,omitempty"`
	TTFTMs        float64    `json:"ttftMs,omitempty"`
	DurationMs    float64    `json:"durationMs,omitempty"`
	CostUSD       float64    `json:"costUsd,omitempty"`

	// An execute_tool turn: the tool and its arguments; on its end, the
	// result was an error (isError, refused, failed).
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Denied    bool            `json:"denied,omitempty"`

	// Error says the turn failed, and why.
	Error string `json:"error,omitempty"`
}

// ToolCall is a tool the model asked for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a turn's tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Failed reports whether the turn ended in an error (a failed request, a
// tool that failed or was refused).
func (t *Turn) Failed() bool { return t.Error != "" || t.Denied }

// Event makes the tap event of a turn: Outgoing for a request or a tool's
// start, Incoming for an answer or a tool's end.
func Event(at time.Time, dir transport.Direction, t Turn) transport.Event {
	data, _ := json.Marshal(t)
	return transport.Event{Time: at, Kind: transport.KindModel, Dir: dir, Data: data}
}

// Decode reads a model event's data; ok is false for data that is not a
// Turn.
func Decode(data []byte) (t Turn, ok bool) {
	if json.Unmarshal(data, &t) != nil || t.Op == "" {
		return Turn{}, false
	}
	return t, true
}
