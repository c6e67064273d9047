package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Provider is one model of one provider. Stream sends one request and
// streams the model's turn to onEvent as it arrives; it returns the whole
// turn when the stream ended, or an *Error.
//
// Stream may be called concurrently (each call has its own stream and
// bounds). onEvent runs on the caller's goroutine, in the order of the
// stream; it may be nil. The Request and its messages are only read.
type Provider interface {
	// Name is the provider as the OpenTelemetry GenAI conventions name it
	// (gen_ai.provider.name): "anthropic", "openai", or the compat name.
	Name() string
	// Model is the model asked for (gen_ai.request.model).
	Model() string
	Stream(ctx context.Context, req *Request, onEvent func(Event)) (*Response, error)
}

// Role is who said a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Block is one piece of a message: text, a tool call the model made
// (tool_use: ID, Name, Input), or the result the caller gives back for it
// (tool_result: ID of the call, Text, IsError).
type Block struct {
	Type    BlockType       `json:"type"`
	Text    string          `json:"text,omitempty"`
	ID      string          `json:"id,omitempty"`
	Name    string          `json:"name,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	IsError bool            `json:"isError,omitempty"`
	// Extra is what a provider attached to a tool call and needs back
	// with it, as it came: Gemini's extra_content with the call's thought
	// signature, without which Gemini refuses the next request.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Message is one turn of the conversation. Tool results are sent in a user
// message, as the Anthropic API has them; the OpenAI formats get them as
// their own tool messages.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Text returns the concatenated text blocks of m.
func (m Message) Text() string {
	var sb strings.Builder
	for _, b := range m.Content {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// Tool is a tool offered to the model: its JSON Schema is sent as it is.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolChoice says whether the model must, may or must not call a tool.
type ToolChoice string

const (
	ToolChoiceAuto     ToolChoice = "auto" // the default
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// Request is one turn asked of the model.
type Request struct {
	System        string
	Messages      []Message
	Tools         []Tool
	ToolChoice    ToolChoice // "" is auto
	MaxTokens     int64      // 0 is DefaultMaxTokens
	Temperature   *float64
	StopSequences []string
	// Seed is sent where the API takes one (OpenAI chat completions and
	// compatible servers); elsewhere Response.Warnings says it was not.
	Seed *int64
}

// DefaultMaxTokens is the max_tokens of a request that gives none (the
// Anthropic API requires one).
const DefaultMaxTokens = 4096

// EventKind is the kind of a streamed event.
type EventKind int

const (
	// EventText is a piece of the model's text (Text).
	EventText EventKind = iota + 1
	// EventToolCall is a tool call whose arguments are complete (Call).
	EventToolCall
	// EventUsage is the token usage as the provider reported it (Usage).
	EventUsage
	// EventFinish is why the model stopped (Finish, FinishReasons).
	EventFinish
	// EventFirstToken marks the first text or tool call of the turn
	// (TimeToFirstToken).
	EventFirstToken
)

// Event is one thing a stream said. Text is only the new piece: a caller
// that keeps the whole text appends it.
type Event struct {
	Kind             EventKind
	Text             string
	Call             *ToolCall
	Usage            Usage
	Finish           FinishReason
	FinishReasons    []string
	TimeToFirstToken time.Duration
}

// ToolCall is a tool call of the model. A call is Invalid when its
// arguments are not a JSON object or its tool was not offered: such a call
// must not be run; the caller sends Invalid back to the model as an error
// tool result (Block{Type: BlockToolResult, ID: c.ID, Text: c.Invalid,
// IsError: true}) so that the model can correct itself, as hosts do. The
// turn itself is not an error.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Invalid says why the call cannot be run; "" for a valid call. The
	// arguments as sent are then in Arguments only if they were JSON;
	// otherwise Raw has them (clipped to 4 KiB).
	Invalid string `json:"invalid,omitempty"`
	Raw     string `json:"raw,omitempty"`
}

// Usage is the tokens of one turn.
type Usage struct {
	// InputTokens are all the input tokens, the cached ones included
	// (gen_ai.usage.input_tokens): the Anthropic API's three counts are
	// added up here.
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// CacheReadTokens and CacheWriteTokens are the part of InputTokens
	// read from or written to the provider's prompt cache, when it says.
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens, u.CacheReadTokens + v.CacheReadTokens, u.CacheWriteTokens + v.CacheWriteTokens}
}

// FinishReason is why the model stopped, in one vocabulary for every
// provider (the words of MCP sampling's stopReason).
type FinishReason string

const (
	FinishEndTurn      FinishReason = "endTurn"
	FinishToolUse      FinishReason = "toolUse"
	FinishMaxTokens    FinishReason = "maxTokens"
	FinishStopSequence FinishReason = "stopSequence"
	FinishRefusal      FinishReason = "refusal"
	FinishOther        FinishReason = "other"
)

// Response is a whole turn of the model.
type Response struct {
	// Message is the assistant's turn as it goes back into the next
	// request: text and tool_use blocks (an invalid call's input is {}).
	Message   Message
	ToolCalls []ToolCall
	Usage     Usage
	Finish    FinishReason
	// FinishReasons are the provider's own words
	// (gen_ai.response.finish_reasons).
	FinishReasons []string
	// Model is the model the provider said answered
	// (gen_ai.response.model); ID is its id of the response.
	Model string
	ID    string
	// Timing of the turn, measured from the call to Stream.
	TimeToFirstToken time.Duration
	Duration         time.Duration
	// BytesRead is what the provider sent, every attempt counted.
	BytesRead int64
	// Warnings say what of the request the API could not take (a seed,
	// stop sequences).
	Warnings []string
}

// Options configure a provider. Zero values take the defaults.
type Options struct {
	// HTTPClient sends every request (mcpi's one client, with its egress
	// policy). Required: Parse refuses nil, so that no request leaves
	// through a client of the SDK's own.
	HTTPClient *http.Client
	// APIKey overrides the key read from the environment; KeyEnv names
	// the variable that holds it instead of the provider's usual one (a
	// key is then required, also of a local server). KeySource says where
	// either was given (a settings file's entry), for errors.
	APIKey    string
	KeyEnv    string
	KeySource string
	// BaseURL overrides the provider's URL (--model-url). Required for
	// compat.
	BaseURL string
	// Getenv reads the environment (os.Getenv when nil; tests give a map).
	Getenv func(string) string
	// MaxBytes bounds what one Stream reads from the provider, all
	// attempts together (default DefaultMaxBytes).
	MaxBytes int64
	// IdleTimeout bounds the wait for the provider's next bytes, the
	// response's headers included (default DefaultIdleTimeout).
	IdleTimeout time.Duration
	// MaxRetries is how many times a refused attempt (429, 529, 5xx, a
	// connection error) is tried again (default 2; negative means none).
	MaxRetries int
	// MaxRetryWait bounds the wait before a retry (default
	// DefaultMaxRetryWait): a provider asking for longer is not retried.
	MaxRetryWait time.Duration
}

// The default bounds.
const (
	DefaultMaxBytes     = 16 << 20
	DefaultIdleTimeout  = 2 * time.Minute
	DefaultMaxRetryWait = time.Minute
	DefaultMaxRetries   = 2
)

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	return o
}
