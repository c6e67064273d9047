package attach

import (
	"fmt"
	"time"

	"github.com/mcpi-dev/mcpi/internal/intercept"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ProtocolVersion is the version of the attach protocol. A proxy refuses
// a client of another version, and a client a proxy of another.
const ProtocolVersion = 1

// The hello's operations.
const (
	OpAttach = "attach" // the proxy's events and held frames, and decisions
	OpStatus = "status" // the proxy's Info, then the end
)

// The decisions' operations, one for each of intercept.Decider's.
const (
	opForward = "forward"
	opEdit    = "edit"
	opDrop    = "drop"
	opAnswer  = "answer"
	opClose   = "close"
	opRelease = "release"
)

// Info says what a proxy is.
type Info struct {
	Name string `json:"name"`
	// Title is the proxied server (its command, or its URL).
	Title string `json:"title"`
	PID   int    `json:"pid"`
	// Record is the trace the proxy writes ("" for none).
	Record string   `json:"record,omitempty"`
	Breaks []string `json:"breaks,omitempty"`
	// HoldTimeout is a held frame's deadline ("60s"), with Breaks.
	HoldTimeout string    `json:"holdTimeout,omitempty"`
	Started     time.Time `json:"started"`
	// Clients is how many TUIs are attached; Held how many frames are
	// held (at the time of the answer).
	Clients int `json:"clients"`
	Held    int `json:"held"`
}

// hello is a client's first line.
type hello struct {
	Proto int    `json:"proto"`
	Op    string `json:"op"`
}

// message is one line from the proxy: its hello (Info, or Error), an
// event, the frames held, the answer to a decision, or its goodbye.
type message struct {
	Proto int               `json:"proto,omitempty"`
	Info  *Info             `json:"info,omitempty"`
	Error string            `json:"error,omitempty"`
	Event *transport.Event  `json:"event,omitempty"`
	Held  *[]intercept.Held `json:"held,omitempty"`
	// Reply numbers the decision answered; Error says why it failed.
	Reply uint64 `json:"reply,omitempty"`
	Bye   string `json:"bye,omitempty"`
}

// decision is one line from an attached client.
type decision struct {
	Req uint64 `json:"req"`
	Op  string `json:"op"`
	ID  uint64 `json:"id"`
	// Data is an edit; Result, or Code and Message, an answer. Both as
	// the person wrote them: the gate refuses what is not JSON.
	Data    []byte `json:"data,omitempty"`
	Result  []byte `json:"result,omitempty"`
	Code    int64  `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// VersionError is a refusal between a client and a proxy of two versions
// of the protocol.
type VersionError struct{ Proxy, Client int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("the proxy speaks the attach protocol %d and this mcpi %d: attach with the mcpi the proxy runs, or restart the proxy with this one",
		e.Proxy, e.Client)
}
