package demoserver

import (
	"encoding/base64"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// demo is one demo server: the SDK server plus the little state its
// features share.
type demo struct {
	server *mcp.Server
	logger *slog.Logger

	logo []byte // a 16x16 PNG, served as image content and as a resource
	tone []byte // a short WAV, served as audio content

	counter *counter

	toggleMu sync.Mutex
	toggled  map[string]bool // toggle_tool kind -> whether its extra feature is present
}

func newDemo(opts Options) *demo {
	if err := opts.Validate(); err != nil {
		panic(err)
	}
	d := &demo{
		logger:  opts.logger(),
		logo:    logoPNG(),
		tone:    toneWAV(),
		toggled: make(map[string]bool),
	}
	interval := opts.CounterInterval
	if interval == 0 {
		interval = defaultCounterInterval
	}
	d.counter = newCounter(interval)

	icons := []mcp.Icon{{
		Source:   "data:image/png;base64," + base64.StdEncoding.EncodeToString(d.logo),
		MIMEType: "image/png",
		Sizes:    []string{"16x16"},
	}}
	d.server = mcp.NewServer(&mcp.Implementation{
		Name:        serverName,
		Title:       "mcpi demo server",
		Description: "Exercises every MCP feature an inspector has to show.",
		Version:     serverVersion,
		WebsiteURL:  "https://github.com/mcpi-dev/mcpi",
		Icons:       icons,
	}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       d.logger,
		PageSize:     pageSize,
		// Spelled out rather than inferred from the registered features, so
		// the advertised capabilities do not depend on registration order
		// or on SDK defaults.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			//lint:ignore SA1019 the demo offers the deprecated logging feature on purpose.
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		CompletionHandler:         complete,
		SubscribeHandler:          d.subscribe,
		UnsubscribeHandler:        d.unsubscribe,
		SupportedProtocolVersions: protocolVersions(opts.Era),
	})

	d.addTools(icons)
	d.addClientTools()
	d.addResources(icons)
	d.addPrompts()
	return d
}
