package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/apphost"
	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
)

// appRun is the MCP App the pane hosts (one at a time).
type appRun struct {
	tool   string
	url    string
	bridge *apphost.Bridge
	host   *apphost.Host
	// cancel ends what the App started: its calls, and its questions
	// waiting in the Requests pane.
	cancel context.CancelFunc
}

func (a *appRun) stop() {
	if a == nil {
		return
	}
	a.bridge.Teardown("another App was started in mcpi's TUI", time.Second)
	a.cancel()
	a.host.Close()
}

// consentIDs numbers what Apps ask the person (below zero: not a server
// request's id), across Apps and their goroutines.
var consentIDs atomic.Int64

// appStartedMsg says how starting an App went.
type appStartedMsg struct {
	run *appRun
	err error
}

// runApp hosts the App of call c's tool: it reads the App, serves its
// page, hands it the call's arguments and result, and opens the browser.
// What the App asks the person (a destructive call, a link) queues in the
// Requests pane like a server's request.
func (p *Pane) runApp(c *Call) tea.Cmd {
	tool := c.Tool
	if t, ok := p.toolByName(tool.Name); ok {
		tool = t
	}
	ui := apps.ToolMeta(tool.Meta)
	if !ui.HasApp() {
		return common.Failuref("%s has no MCP App (no _meta.ui.resourceUri)", common.Line(tool.Name))
	}
	if p.client == nil {
		return common.Failuref("not connected (ctrl+r reconnects)")
	}
	client, cc, tools := p.client, p.c, append([]mcp.Tool(nil), p.tools...)
	args, _ := json.Marshal(c.Args)
	raw, callErr := c.Raw, c.Err
	return func() tea.Msg {
		ctx, cancel := context.WithCancel(cc.Ctx)
		fail := func(err error) tea.Msg { cancel(); return appStartedMsg{err: err} }
		b, h, err := apphost.Start(ctx, client, apphost.Options{
			Tool: tool, Args: args, Tools: tools, Version: cc.Version,
			Tap:  cc.Tap,
			Open: cc.OpenURL,
			// What the App does is on the wire (kind app); what mcpi
			// refused it is a warning there too.
			Warn: func(line string) { cc.Inbox.Warn(session.Warning{Time: cc.Now(), Kind: "app", Message: line}) },
			Confirm: func(ctx context.Context, question string) bool {
				r := common.NewRequest(ctx, -int(consentIDs.Add(1)), common.Consent, cc.Now())
				r.Question = question
				cc.Inbox.Ask(r)
				rep, err := r.Wait()
				if err != nil {
					cc.Inbox.Withdraw(r)
					return false
				}
				return rep.Err == nil
			},
		})
		if err != nil {
			return fail(err)
		}
		if raw != nil || callErr != nil {
			b.Result(raw, callErr)
		}
		run := &appRun{tool: tool.Name, url: h.URL(), bridge: b, host: h, cancel: cancel}
		if err := cc.OpenURL(h.URL()); err != nil {
			return appStartedMsg{run: run, err: fmt.Errorf("the browser did not open (%v): open %s yourself", err, h.URL())}
		}
		return appStartedMsg{run: run}
	}
}

// appStarted keeps the App the pane hosts and says where it is.
func (p *Pane) appStarted(msg appStartedMsg) tea.Cmd {
	if msg.run != nil {
		// The App before it is torn down off the UI goroutine: its answer
		// to the teardown still reaches the wire.
		old := p.app
		go old.stop()
		p.app = msg.run
	}
	switch {
	case msg.run == nil:
		return common.Failuref("the App did not start: %v", msg.err)
	case msg.err != nil:
		return common.Failuref("%v", msg.err)
	}
	// The URL first, whole: it is what the person may need to copy.
	return common.Noticef("App at %s (%s; the wire shows its messages as kind app)", msg.run.url, common.Line(msg.run.tool))
}
