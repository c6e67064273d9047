package mcptext

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// PrintInfo shows what a handshake settled: the server, the revision and
// era and why, the transport, the capabilities as sent, whether MCP Apps
// were declared (appsDeclared), the instructions.
func PrintInfo(w io.Writer, c *session.Client, appsDeclared bool) error {
	init := c.InitializeResult()
	transportName := cmp.Or(transport.Describe(c.Conn()).Transport, "?")
	si := init.ServerInfo
	fmt.Fprintf(w, "Server:     %s %s\n", safetext.OneLine(DisplayName(si.Title, si.Name)), safetext.OneLine(si.Version))
	if si.Description != "" {
		fmt.Fprintf(w, "            %s\n", safetext.OneLine(si.Description))
	}
	if si.WebsiteURL != "" {
		fmt.Fprintf(w, "Website:    %s\n", safetext.OneLine(si.WebsiteURL))
	}
	fmt.Fprintf(w, "Protocol:   %s (%s era; %s)\n", c.ProtocolVersion(), c.Era(), safetext.OneLine(c.EraReason()))
	fmt.Fprintf(w, "Transport:  %s\n", transportName)
	var cache mcp.Cache
	if json.Unmarshal(c.InitializeResultRaw(), &cache) == nil && (cache.TTLMs != nil || cache.CacheScope != "") {
		ttl := "none"
		if cache.TTLMs != nil {
			ttl = (time.Duration(*cache.TTLMs) * time.Millisecond).String()
		}
		fmt.Fprintf(w, "Cache:      ttl %s, scope %s\n", ttl, safetext.Sanitize(cache.CacheScope, false))
	}
	fmt.Fprintf(w, "Capabilities:\n")
	for _, line := range CapabilityLines(c.InitializeResultRaw()) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	// Servers may list their App tools only to a client that declares
	// MCP Apps: say which listing this is.
	if appsDeclared {
		fmt.Fprintf(w, "MCP Apps:   declared (%s): the server lists to mcpi what it lists to an App host\n", apps.Extension)
	} else {
		fmt.Fprintf(w, "MCP Apps:   not declared: a server may list more tools to an App host (--apps declares %s)\n", apps.Extension)
	}
	if init.Instructions != "" {
		fmt.Fprintf(w, "Instructions:\n")
		for _, l := range strings.Split(safetext.Sanitize(init.Instructions, true), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	return nil
}

// CapabilityLines lists the server's capabilities as sent, one per line.
func CapabilityLines(initRaw json.RawMessage) []string {
	var r struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(initRaw, &r)
	names := make([]string, 0, len(r.Capabilities))
	for k := range r.Capabilities {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		v := string(r.Capabilities[k])
		if v == "{}" {
			out = append(out, safetext.Sanitize(k, false))
		} else {
			out = append(out, safetext.Sanitize(k, false)+" "+safetext.OneLine(v))
		}
	}
	if len(out) == 0 {
		out = append(out, "(none)")
	}
	return out
}
