package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeResourceNotFound is the legacy resource-not-found code; the modern
	// era uses CodeInvalidParams, and clients accept both.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired tells the client that a URL elicitation must
	// complete before the request can succeed (2025-11-25).
	CodeURLElicitationRequired = -32042
)

// Message is one JSON-RPC 2.0 message of any kind. Which kind it is follows
// from the fields present: a request has a method and an id, a notification a
// method and no id, a response an id and a result or an error.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && hasID(m.ID) }

// IsNotification reports whether m is a notification (a method and no id).
func (m *Message) IsNotification() bool { return m.Method != "" && !hasID(m.ID) }

// IsResponse reports whether m is a response (no method, a result or an error).
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

func hasID(id json.RawMessage) bool {
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	if len(e.Data) > 0 && len(e.Data) < 512 {
		return fmt.Sprintf("%s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// NewRequest encodes a request with a numeric id.
func NewRequest(id int64, method string, params any) ([]byte, error) {
	return NewRequestID(json.RawMessage(strconv.FormatInt(id, 10)), method, params)
}

// NewRequestID encodes a request with an id of the caller's (a string id
// is given with its quotes).
func NewRequestID(id json.RawMessage, method string, params any) ([]byte, error) {
	p, err := encodeParams(params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Message{JSONRPC: "2.0", ID: id, Method: method, Params: p})
}

// NewNotification encodes a notification.
func NewNotification(method string, params any) ([]byte, error) {
	p, err := encodeParams(params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Message{JSONRPC: "2.0", Method: method, Params: p})
}

// NewResult encodes a successful response to the request with the given raw id.
func NewResult(id json.RawMessage, result any) ([]byte, error) {
	r, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(r, []byte("null")) {
		r = json.RawMessage("{}")
	}
	return json.Marshal(Message{JSONRPC: "2.0", ID: id, Result: r})
}

// NewErrorResponse encodes an error response to the request with the given raw id.
func NewErrorResponse(id json.RawMessage, e *RPCError) ([]byte, error) {
	if !hasID(id) {
		id = json.RawMessage("null")
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *RPCError       `json:"error"`
	}{"2.0", id, e})
}

func encodeParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding params: %w", err)
	}
	if bytes.Equal(b, []byte("null")) {
		return nil, nil
	}
	return b, nil
}

// DecodeFrame decodes one frame into its messages: one for a single message,
// several for a batch. An empty batch is an error.
func DecodeFrame(data []byte) ([]*Message, bool, error) {
	return decodeFrame(data, false)
}

// DecodeValidFrame is DecodeFrame for a frame known to be valid JSON, such
// as a transport.Frame without Err: it does not validate the frame again,
// and the raw fields of the messages share data's memory, which must then
// not change. On a large result that saves most of the decoding.
func DecodeValidFrame(data []byte) ([]*Message, bool, error) {
	return decodeFrame(data, true)
}

func decodeFrame(data []byte, valid bool) ([]*Message, bool, error) {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) > 0 && data[0] == '[' {
		var batch []*Message
		if err := json.Unmarshal(data, &batch); err != nil {
			return nil, true, err
		}
		if len(batch) == 0 {
			return nil, true, fmt.Errorf("empty batch")
		}
		for i, m := range batch {
			if m == nil {
				return nil, true, fmt.Errorf("batch element %d is null", i)
			}
		}
		return batch, true, nil
	}
	if valid || json.Valid(data) {
		if m, ok := decodeSplit(data, valid); ok {
			return []*Message{m}, false, nil
		}
	}
	var m Message
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, false, err
	}
	return []*Message{&m}, false, nil
}

// IDKey returns a canonical string for a JSON-RPC id, so that ids can key a
// map: numbers as their decimal text, strings quoted. It reports false for a
// missing or null id and for ids of other JSON types.
func IDKey(id json.RawMessage) (string, bool) {
	id = bytes.TrimSpace(id)
	if !hasID(id) {
		return "", false
	}
	switch id[0] {
	case '"':
		var s string
		if json.Unmarshal(id, &s) != nil {
			return "", false
		}
		return strconv.Quote(s), true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(id, &n) != nil {
			return "", false
		}
		if i, err := n.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
		return n.String(), true
	}
	return "", false
}
