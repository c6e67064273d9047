package mcp

import "encoding/json"

// _meta keys of the modern era (2026-07-28).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// MetaFromSession is mcpi's own _meta key: a live session's daemon sets it
// (to the session's name) on what it says itself to a client attached to
// the session (mcpi connect --session), which is not the server's word.
// The daemon removes it from the server's notifications, so a server
// cannot pass for it.
const MetaFromSession = "dev.mcpi/fromSession"

// MetaParkedRequest is mcpi's own _meta key on a server request a live
// session's daemon puts to an attached client: the number of the parked
// request (the one mcpi pending lists and mcpi answer takes), so that a
// person and a command name it alike. The daemon sets it on every request
// it puts, over whatever the server sent under that key.
const MetaParkedRequest = "dev.mcpi/parkedRequest"

// ParkedNumber returns the number a live session's daemon gave the server
// request whose _meta is meta (MetaParkedRequest), if it gave one.
func ParkedNumber(meta json.RawMessage) (int, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return 0, false
	}
	var id int
	if json.Unmarshal(m[MetaParkedRequest], &id) != nil || id <= 0 {
		return 0, false
	}
	return id, true
}

// Modern-era error codes.
const (
	// CodeHeaderMismatch: HTTP headers do not match the body, or are missing.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability the
	// client did not declare in its _meta.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: data.supported lists what the server speaks.
	CodeUnsupportedProtocolVersion = -32022
)

// IsModernError reports whether a JSON-RPC error code is one only a modern
// server sends: its presence identifies a modern server during era
// detection.
func IsModernError(code int) bool {
	return code == CodeHeaderMismatch || code == CodeMissingClientCapability || code == CodeUnsupportedProtocolVersion
}

// UnsupportedVersionData is the data of an UnsupportedProtocolVersion error.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// Result types.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// DiscoverResult answers server/discover.
type DiscoverResult struct {
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	Meta              json.RawMessage    `json:"_meta,omitempty"`
	Cache
}

// Cache carries the caching hints of a cacheable result (2026-07-28).
type Cache struct {
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// ResultHead is what every modern result shares: its type, its _meta (with
// the server's identity) and, for input_required results, the input
// requests and the opaque request state.
type ResultHead struct {
	ResultType    string                     `json:"resultType,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// RequestState stays raw: it must go back byte for byte.
	RequestState json.RawMessage `json:"requestState,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// InputRequest is one entry of inputRequests: a server->client request
// carried inside a result.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// SubscriptionFilter says which change notifications a subscriptions/listen
// stream carries.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// SubscriptionsListenParams are the params of subscriptions/listen.
type SubscriptionsListenParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsAcknowledgedParams is the payload of
// notifications/subscriptions/acknowledged.
type SubscriptionsAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          json.RawMessage    `json:"_meta,omitempty"`
}
