package session

import "github.com/mcpi-dev/mcpi/internal/mcp"

// minRevision is the first revision that has a method.
var minRevision = map[string]string{
	"tasks/get":    mcp.Rev20251125,
	"tasks/result": mcp.Rev20251125,
	"tasks/list":   mcp.Rev20251125,
	"tasks/cancel": mcp.Rev20251125,
	"tasks/update": mcp.Rev20260728,
}

// legacyOnly are the methods 2026-07-28 removed.
var legacyOnly = map[string]bool{
	"initialize": true, "ping": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"tasks/result": true, "tasks/list": true,
}

// Check reports why method would be refused before it is sent: a method
// the server did not declare, or one the revision in force does not have
// (nil: it would be sent; Options.Force sends it anyway).
func (c *Client) Check(method string) error { return c.check(method) }

// check reports a method the server did not declare, or one the revision in
// force does not have.
func (c *Client) check(method string) error {
	c.stateMu.RLock()
	init, rev := c.init, c.revision
	c.stateMu.RUnlock()
	if init == nil {
		return nil // before initialize: nothing is known yet
	}
	if need, ok := minRevision[method]; ok && !mcp.RevisionAtLeast(rev, need) {
		return &VersionError{Method: method, Needs: need, Got: rev}
	}
	if mcp.IsModern(rev) && legacyOnly[method] {
		return &VersionError{Method: method, Got: rev, Removed: true}
	}
	caps := init.Capabilities
	missing := ""
	switch method {
	case "tools/list", "tools/call":
		if caps.Tools == nil {
			missing = "tools"
		}
	case "resources/list", "resources/read", "resources/templates/list":
		if caps.Resources == nil {
			missing = "resources"
		}
	case "resources/subscribe", "resources/unsubscribe":
		if caps.Resources == nil || !caps.Resources.Subscribe {
			missing = "resources.subscribe"
		}
	case "prompts/list", "prompts/get":
		if caps.Prompts == nil {
			missing = "prompts"
		}
	case "logging/setLevel":
		if caps.Logging == nil {
			missing = "logging"
		}
	case "completion/complete":
		// 2024-11-05 had completion without a capability to declare it.
		if caps.Completions == nil && mcp.RevisionAtLeast(rev, mcp.Rev20250326) {
			missing = "completions"
		}
	case "tasks/get", "tasks/cancel", "tasks/update":
		if mcp.IsModern(rev) {
			if _, ok := caps.Extensions[mcp.TasksExtension]; !ok {
				missing = "extensions." + mcp.TasksExtension
			}
			break
		}
		switch {
		case method == "tasks/update":
			// The extension's alone: minRevision refuses it before 2026-07-28.
		case method == "tasks/cancel" && (caps.Tasks == nil || caps.Tasks.Cancel == nil):
			missing = "tasks.cancel"
		case caps.Tasks == nil:
			missing = "tasks"
		}
	case "tasks/result":
		if caps.Tasks == nil {
			missing = "tasks"
		}
	case "tasks/list":
		if caps.Tasks == nil || caps.Tasks.List == nil {
			missing = "tasks.list"
		}
	case "skills/list", "skills/get":
		if _, ok := caps.Extensions[mcp.SkillsExtension]; !ok {
			missing = "extensions." + mcp.SkillsExtension
		}
	case mcp.DirectoryReadMethod:
		// SEP-2640: a client must not call it unless the server declared
		// directoryRead: true.
		if !directoryRead(caps.Extensions) {
			missing = "extensions." + mcp.SkillsExtension + ".directoryRead"
		}
	}
	if missing != "" {
		return &CapabilityError{Method: method, Capability: missing}
	}
	return nil
}
