package rows

import (
	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Record is the entry as the search language (internal/query) sees it.
func (e *Entry) Record() query.Record {
	r := query.Record{
		Kind: e.Kind.queryKind(), Out: e.Dir == transport.Outgoing, In: e.Dir == transport.Incoming,
		Method: e.Method, Answers: e.Answers, Name: e.Name, ID: e.ID,
		Latency: e.Latency, HasLatency: e.HasLatency, Size: e.Size, Data: e.Data,
		Text: e.Text,
	}
	if e.Err != "" {
		if r.Text != "" {
			r.Text += ": "
		}
		r.Text += e.Err
	}
	switch {
	case e.Kind == KindModel && e.Method == "response":
		r.Response, r.Error = true, e.ToolError
	case e.Kind == KindModel:
		r.Request, r.Answered = true, e.Answered
	case e.Kind != KindFrame:
		r.Error = e.Kind == KindBadFrame || e.Err != ""
	case e.Method == "response" || e.Method == "error":
		r.Response = true
		r.Error = e.RPCError || e.ToolError
	case e.ID != "":
		r.Request, r.Answered = true, e.Answered
	}
	return r
}

// queryKind is the kind's name in the search language.
func (k Kind) queryKind() string {
	if k == KindBadFrame {
		return "bad"
	}
	return k.String()
}
