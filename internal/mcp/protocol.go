package mcp

import (
	"encoding/json"
	"slices"
)

// Protocol revisions mcpi speaks.
const (
	Rev20241105 = "2024-11-05"
	Rev20250326 = "2025-03-26"
	Rev20250618 = "2025-06-18"
	Rev20251125 = "2025-11-25"
	Rev20260728 = "2026-07-28"
)

// LegacyRevisions are the revisions of the stateful era, newest first.
var LegacyRevisions = []string{Rev20251125, Rev20250618, Rev20250326, Rev20241105}

// ModernRevisions are the revisions of the stateless era, newest first.
var ModernRevisions = []string{Rev20260728}

// LatestLegacy is the revision mcpi offers in initialize.
const LatestLegacy = Rev20251125

// IsKnownRevision reports whether mcpi knows rev.
func IsKnownRevision(rev string) bool {
	return slices.Contains(LegacyRevisions, rev) || slices.Contains(ModernRevisions, rev)
}

// IsLegacy reports whether rev belongs to the stateful era.
func IsLegacy(rev string) bool { return slices.Contains(LegacyRevisions, rev) }

// IsModern reports whether rev belongs to the stateless era.
func IsModern(rev string) bool { return slices.Contains(ModernRevisions, rev) }

// LatestModern is the modern revision mcpi prefers.
const LatestModern = Rev20260728

// RevisionAtLeast reports whether rev is rev min or newer. Revisions are
// dates, so they compare as strings.
func RevisionAtLeast(rev, min string) bool { return rev >= min }

// Implementation names a client or a server.
type Implementation struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Version     string `json:"version"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Icon is a sized icon a client may show.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Empty is an empty JSON object, for capabilities that are present or absent:
// a non-nil *Empty marshals as {}.
type Empty struct{}

// ClientCapabilities are what mcpi offers in initialize.
type ClientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability says the client lists roots.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability says the client can sample.
type SamplingCapability struct {
	Context *Empty `json:"context,omitempty"`
	Tools   *Empty `json:"tools,omitempty"`
}

// ElicitationCapability says the client can elicit, and in which modes.
type ElicitationCapability struct {
	Form *Empty `json:"form,omitempty"`
	URL  *Empty `json:"url,omitempty"`
}

// ServerCapabilities are what a server declares. Each field is present when
// the server offers that feature.
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Logging      json.RawMessage            `json:"logging,omitempty"`
	Completions  json.RawMessage            `json:"completions,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Tasks        *TasksCapability           `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability is a feature that may announce changes to its list.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the resources feature.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// TasksCapability is the experimental tasks feature of 2025-11-25.
type TasksCapability struct {
	List     json.RawMessage `json:"list,omitempty"`
	Cancel   json.RawMessage `json:"cancel,omitempty"`
	Requests json.RawMessage `json:"requests,omitempty"`
}

// InitializeParams is the client's half of the handshake.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the server's half of the handshake.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            json.RawMessage    `json:"_meta,omitempty"`
}

// Meta is the _meta object of requests and results.
type Meta map[string]any

// ProgressToken is the _meta key that asks for progress notifications.
const ProgressTokenKey = "progressToken"

// The _meta keys of W3C Trace Context that the specification reserves for
// a request's trace (SEP-414).
const (
	MetaTraceParent = "traceparent"
	MetaTraceState  = "tracestate"
	MetaBaggage     = "baggage"
)

// ProgressParams is the payload of notifications/progress.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// CancelledParams is the payload of notifications/cancelled.
type CancelledParams struct {
	RequestID json.RawMessage `json:"requestId,omitempty"`
	Reason    string          `json:"reason,omitempty"`
}

// LoggingLevel is a syslog severity name.
type LoggingLevel string

// LoggingLevels are the levels in increasing severity.
var LoggingLevels = []LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LoggingMessageParams is the payload of notifications/message.
type LoggingMessageParams struct {
	Level  LoggingLevel    `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// ResourceUpdatedParams is the payload of notifications/resources/updated.
type ResourceUpdatedParams struct {
	URI string `json:"uri"`
}

// ElicitationCompleteParams is the payload of notifications/elicitation/complete.
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
}
