package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
)

// apps checks the server's MCP Apps: which tools it lists to a client
// that declares the extension and to one that does not, and for each App
// tool its resource, content, CSP, visibility and what its HTML loads.
func (r *run) apps() {
	declared, c, done := r.appsView()
	defer done()
	if declared == nil {
		return
	}
	if r.appsSecond {
		prev := r.via
		r.via = appsDeclared
		defer func() { r.via = prev }()
	}
	var appTools []mcp.Tool
	for _, t := range declared {
		ui := apps.ToolMeta(t.Meta)
		if ui.HasApp() || ui.Visibility != nil || len(ui.Problems) > 0 {
			appTools = append(appTools, t)
		}
	}
	if len(appTools) == 0 {
		return
	}
	r.negotiated()
	var listed map[string]*mcp.Resource
	read := map[string]*apps.Info{}
	for _, t := range appTools {
		subject := fmt.Sprintf("tool %q", t.Name)
		ui := apps.ToolMeta(t.Meta)
		r.visibility(subject, ui)
		if !ui.HasApp() || c == nil {
			continue
		}
		// apps/resource-uri counts as checked once the resource read, or
		// by a finding: a read left unanswered checked nothing.
		if ui.Legacy {
			r.report(ruleAppsResourceURI, subject, t.Meta, `names its App with the deprecated _meta["ui/resourceUri"]: use _meta.ui.resourceUri (the flat key goes before the extension's GA)`)
		}
		if !strings.HasPrefix(ui.ResourceURI, apps.Scheme) {
			r.report(ruleAppsResourceURI, subject, t.Meta, "its App's resource %q is not a ui:// URI", ui.ResourceURI)
			continue
		}
		if _, seen := read[ui.ResourceURI]; seen {
			continue
		}
		if listed == nil {
			listed = r.listedResources(c)
		}
		read[ui.ResourceURI] = r.appResource(c, subject, &t, listed[ui.ResourceURI])
	}
}

// appsOnOwn says the Apps rules list the tools on a connection of their
// own that declares the extension (the session did not).
func (r *run) appsOnOwn() bool {
	return !r.opts.Apps && r.opts.Dial != nil && r.c.ServerCapabilities().Tools != nil
}

// appsDeclared says what the Apps rules' own connection declared.
const appsDeclared = "a second connection, which declared " + apps.Extension

// appsView returns the tools an App host is listed, and the client to
// read their resources with: the session's when it declared Apps, else a
// connection of the check's own that does. done closes that connection.
// c is nil when there is none to read with: the session was closed for a
// connection of the check's own that could not be made.
func (r *run) appsView() (tools []mcp.Tool, c *session.Client, done func()) {
	done = func() {}
	fallback := r.c
	if r.released {
		fallback = nil
	}
	if !r.appsOnOwn() {
		// Without a second connection the App tools are those listed to
		// a client that did not declare Apps: checked all the same.
		return r.toolList, r.c, done
	}
	ctx, cancel := context.WithTimeout(r.ctx, 3*r.opts.Timeout)
	conn, release, err := r.dial(ctx)
	if err != nil {
		cancel()
		return r.toolList, fallback, done
	}
	ac, err := session.Connect(ctx, conn, session.Options{Era: r.c.Era(), Timeout: r.opts.Timeout, ProbeTimeout: r.opts.Timeout,
		ClientInfo: mcp.Implementation{Name: "mcpi-check", Version: "1"}, Extensions: map[string]json.RawMessage{apps.Extension: apps.Declaration()}})
	if err != nil {
		release()
		cancel()
		return r.toolList, fallback, done
	}
	list, err := ac.AllTools(ctx)
	if err != nil {
		ac.Close()
		release()
		cancel()
		return r.toolList, fallback, done
	}
	r.appsSecond = true
	return list, ac, func() { ac.Close(); release(); cancel() }
}

// negotiated: App tools listed to the session that did not declare the
// extension.
func (r *run) negotiated() {
	if r.opts.Apps || !r.appsSecond {
		return
	}
	r.check(ruleAppsNegotiated)
	var shown, appOnly []string
	for _, t := range r.toolList {
		switch ui := apps.ToolMeta(t.Meta); {
		case ui.HasApp():
			shown = append(shown, t.Name)
		case ui.Visibility != nil && ui.AppOnly():
			appOnly = append(appOnly, t.Name)
		}
	}
	if len(shown) > 0 {
		r.report(ruleAppsNegotiated, "tools/list", shown,
			"lists %d tool(s) with an App to a client that did not declare %s (%s): a host without Apps is given tools whose results are meant for a UI it cannot show; check the client's capabilities (ext-apps: getUiCapability) and register text-only variants", len(shown), apps.Extension, strings.Join(shown, ", "))
	}
	if len(appOnly) > 0 {
		r.report(ruleAppsNegotiated, "tools/list", appOnly,
			"lists %d App-only tool(s) (_meta.ui.visibility without \"model\") to a client that did not declare %s (%s): a host without Apps does not read visibility, and gives them to the model; list them only to clients that declared the extension", len(appOnly), apps.Extension, strings.Join(appOnly, ", "))
	}
}

// visibility checks a tool's _meta.ui.visibility.
func (r *run) visibility(subject string, ui apps.Tool) {
	r.check(ruleAppsVisibility)
	for _, p := range ui.Problems {
		r.report(ruleAppsVisibility, subject, nil, "%s", p)
	}
}

// listedResources are the resources the server lists, by URI.
func (r *run) listedResources(c *session.Client) map[string]*mcp.Resource {
	out := map[string]*mcp.Resource{}
	if c.ServerCapabilities().Resources == nil {
		return out
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	all, err := c.AllResources(ctx)
	if err != nil {
		return out
	}
	for i := range all {
		out[all[i].URI] = &all[i]
	}
	return out
}

// appResource reads an App's resource and checks it.
func (r *run) appResource(c *session.Client, subject string, t *mcp.Tool, listed *mcp.Resource) *apps.Info {
	ui := apps.ToolMeta(t.Meta)
	ctx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	defer cancel()
	var res mcp.ReadResourceResult
	err := c.Call(ctx, "resources/read", mcp.ReadResourceParams{URI: ui.ResourceURI}, &res, nil)
	if r.noAnswer(err, subject, ruleAppsResourceURI) {
		return nil
	}
	if err != nil {
		r.report(ruleAppsResourceURI, subject, nil, "its App's resource %s cannot be read: %v", ui.ResourceURI, err)
		return nil
	}
	r.check(ruleAppsResourceURI)
	// A resource that exists may still be left out of the listing.
	r.check(ruleAppsResourceListed)
	if listed == nil {
		r.report(ruleAppsResourceListed, subject, nil, "its App's resource %s is not in resources/list: a host that prefetches App templates from the listing does not see it (allowed: servers MAY leave UI resources out)", ui.ResourceURI)
	}
	r.check(ruleAppsResourceContent)
	in, err := apps.Describe(t, &res, listed)
	if err != nil {
		r.report(ruleAppsResourceContent, subject, nil, "%v", err)
		return nil
	}
	if in.MIMEType != apps.MIMEType {
		r.report(ruleAppsResourceContent, subject, nil, "its App's resource %s reads as %q: an App's MUST be %q", ui.ResourceURI, in.MIMEType, apps.MIMEType)
	}
	// No CSP is no fault: hosts apply the restrictive default (SEP-1865);
	// what the App then loads from elsewhere is apps/static-loads'.
	r.check(ruleAppsCSP)
	for _, d := range in.Domains {
		r.report(ruleAppsCSP, subject, d, "csp.%s %q: %s", d.Field, d.Domain, d.Why)
	}
	r.check(ruleAppsStaticLoads)
	for _, l := range in.Undeclared {
		r.report(ruleAppsStaticLoads, subject, l, "the HTML of %s loads a %s from %s, which csp.resourceDomains does not declare: a host blocks it (read from the HTML's tags, not from running it)", ui.ResourceURI, l.Kind, l.Origin)
	}
	return in
}
