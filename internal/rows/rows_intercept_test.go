package rows

import (
	"testing"

	"github.com/mcpi-dev/mcpi/internal/query"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// A change mcpi proxy made is a row of kind intercept: its action is the
// method, its rule the name, and kind:intercept finds it.
func TestInterceptRow(t *testing.T) {
	p := NewParser()
	en := p.Event(transport.Event{Kind: transport.KindIntercept, Dir: transport.Outgoing,
		Data: []byte(`{"action":"drop","rule":"no pings","note":"dropped ping id 3","original":{"jsonrpc":"2.0","id":3,"method":"ping"},"sent":[]}`)})
	if en.Kind != KindIntercept || en.Method != "drop" || en.Name != "no pings" || en.Text != "dropped ping id 3" {
		t.Fatalf("row %+v", en)
	}
	for q, want := range map[string]bool{"kind:intercept": true, "kind:frame": false, "method:drop": true, "text:ping": true} {
		pq, err := query.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		r := en.Record()
		if got := pq.Match(&r); got != want {
			t.Errorf("%s matched %v, want %v", q, got, want)
		}
	}
	if bad := p.Event(transport.Event{Kind: transport.KindIntercept, Data: []byte("garbage")}); bad.Err == "" {
		t.Error("a change that is not one has no error")
	}
}
