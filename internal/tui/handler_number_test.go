package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/keymap"
	"github.com/mcpi-dev/mcpi/internal/tui/requestspane"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// Attached to a live session, a server request is shown under the number
// the session's daemon gave it (mcpi pending's, mcpi answer's), not one of
// the TUI's own; a TUI of its own counts for itself, and takes no number
// from a server.
func TestRequestShownUnderTheSessionsNumber(t *testing.T) {
	parked := json.RawMessage(`{"` + mcp.MetaParkedRequest + `":5}`)
	for _, tc := range []struct {
		session string
		meta    json.RawMessage
		want    string
	}{
		{"s", parked, "#5 "},
		{"", parked, "#1 "},
		{"s", nil, "#1 "},
	} {
		in := common.NewInbox()
		h := &handler{inbox: in, now: time.Now, session: tc.session}
		ctx, cancel := context.WithCancel(context.Background())
		go h.Elicit(ctx, &mcp.ElicitParams{Message: "sure?", Meta: tc.meta})
		msg := in.Next(ctx.Done())()
		cancel()
		b, ok := msg.(*common.Batch)
		if !ok || len(b.Requests) != 1 {
			t.Fatalf("the inbox got %T %+v", msg, msg)
		}
		c := &common.Common{Styles: styles.DefaultStyles(false), Keys: keymap.Default(), Now: time.Now, Ctx: context.Background()}
		pane := requestspane.New(c, &b.Requests)
		pane.SetSize(80, 10)
		if view := pane.View(); !strings.Contains(view, tc.want+"elicitation") {
			t.Errorf("session %q, _meta %s: the Requests pane shows %q, want %q", tc.session, tc.meta, view, tc.want)
		}
	}
}
