package check

import (
	"strings"

	"github.com/mcpi-dev/mcpi/internal/bounds"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// listen asks a modern server that declares listChanged for a
// subscriptions/listen stream of those changes: the server should take
// it, acknowledge it, and keep each declared type in the acknowledged
// filter (what it agreed to honour); a type left out is a change the
// server will not send to the stream.
func (r *run) listen() {
	if !mcp.IsModern(r.rev) {
		return
	}
	caps := r.c.ServerCapabilities()
	var filter mcp.SubscriptionFilter
	var asked []string
	if caps.Tools != nil && caps.Tools.ListChanged {
		filter.ToolsListChanged = true
		asked = append(asked, "toolsListChanged")
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		filter.PromptsListChanged = true
		asked = append(asked, "promptsListChanged")
	}
	if caps.Resources != nil && caps.Resources.ListChanged {
		filter.ResourcesListChanged = true
		asked = append(asked, "resourcesListChanged")
	}
	if len(asked) == 0 {
		return
	}
	subject := "subscriptions/listen " + strings.Join(asked, ", ")
	ctx, cancel := bounds.Clock{Name: "subscriptions/listen probe", D: r.opts.Timeout}.Context(r.ctx)
	defer cancel()
	sub, err := r.c.Listen(ctx, filter)
	if err != nil {
		if r.ctx.Err() == nil {
			r.report(ruleSubscriptionsListChanged, subject, nil, "the server declares listChanged, but a subscriptions/listen asking for those changes failed: %v; clients of 2026-07-28 learn of list changes only on such a stream", err)
		}
		return
	}
	defer sub.Close()
	r.check(ruleSubscriptionsListChanged)
	kept := map[string]bool{"toolsListChanged": sub.Acknowledged.ToolsListChanged, "promptsListChanged": sub.Acknowledged.PromptsListChanged,
		"resourcesListChanged": sub.Acknowledged.ResourcesListChanged}
	var dropped []string
	for _, a := range asked {
		if !kept[a] {
			dropped = append(dropped, a)
		}
	}
	if len(dropped) > 0 {
		r.report(ruleSubscriptionsListChanged, subject, sub.Acknowledged, "the server declares listChanged, but acknowledged the stream without %s: it will not notify the stream of those changes", strings.Join(dropped, ", "))
	}
}
