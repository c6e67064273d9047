package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TargetOptions say which server to talk to and how. Every command that
// talks to a server embeds them.
type TargetOptions struct {
	// Command is everything after "--": a stdio server to spawn.
	Command []string
	// URL is a Streamable HTTP or HTTP+SSE endpoint.
	URL       string
	Transport string
	Headers   []string
	Env       []string
	Dir       string
	Timeout   time.Duration
	Protocol  string
	Era       string
	Force     bool

	// Server names an entry of a configuration file (--server), read from
	// Config or the usual locations; Inputs answer its ${input:...} variables.
	Server string
	Config string
	Inputs []string

	secrets []string // values that must not reach a trace
}

func addTargetFlags(cmd *cobra.Command, o *TargetOptions) {
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", "", "URL of an HTTP server (Streamable HTTP, or HTTP+SSE)")
	f.StringVar(&o.Transport, "transport", "auto", "HTTP transport: auto, http (Streamable HTTP) or sse (HTTP+SSE, 2024-11-05)")
	f.StringArrayVarP(&o.Headers, "header", "H", nil, "extra HTTP header \"Name: value\" (repeatable)")
	f.StringArrayVarP(&o.Env, "env", "e", nil, "environment variable KEY=VALUE for a stdio server (repeatable)")
	f.StringVar(&o.Dir, "cwd", "", "working directory of a stdio server")
	f.DurationVar(&o.Timeout, "timeout", session.DefaultTimeout, "bound on each request without an answer or progress (e.g. 30s)")
	f.StringVar(&o.Protocol, "protocol-version", "", "protocol revision to use (forces its era; default: the newest of the era in force)")
	f.StringVar(&o.Era, "era", "auto", "protocol era: auto (detect), legacy (initialize, 2024-11-05..2025-11-25) or modern (stateless, 2026-07-28)")
	f.BoolVar(&o.Force, "force", false, "send requests even when the server did not declare the capability")
	f.StringVar(&o.Server, "server", "", "a server of a configuration file (see mcpi servers)")
	f.StringVar(&o.Config, "config", "", "with --server: the configuration file to read instead of the usual locations")
	f.StringArrayVar(&o.Inputs, "input", nil, "with --server: the value of a VS Code ${input:ID}, ID=VALUE (repeatable)")
}

// parseTarget fills o.Command and o.URL from the positional arguments:
// everything after "--" is a command, and a first argument that is an http
// or https URL is the server's URL. It returns the other arguments.
func (o *TargetOptions) parseTarget(cmd *cobra.Command, args []string) ([]string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		o.Command = args[dash:]
		args = args[:dash]
		if len(o.Command) == 0 {
			return nil, flagErrorf("nothing after \"--\": give the server command to run")
		}
	}
	// The TARGET comes last: when several arguments look like URLs (a
	// resource URI may be one), the last is the server's.
	serverAt := -1
	if o.URL == "" && o.Command == nil {
		for i, a := range args {
			if strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "https://") {
				serverAt = i
			}
		}
	}
	var rest []string
	for i, a := range args {
		if i == serverAt {
			o.URL = a
			continue
		}
		rest = append(rest, a)
	}
	switch {
	case o.Server != "" && (o.URL != "" || o.Command != nil):
		return nil, flagErrorf("give either --server or a URL or a command after \"--\", not several")
	case o.URL != "" && o.Command != nil:
		return nil, flagErrorf("give either a URL or a command after \"--\", not both")
	case o.URL == "" && o.Command == nil && o.Server == "":
		return nil, flagErrorf("no server given: add \"-- COMMAND [ARGS...]\" for a stdio server, a URL for an HTTP server, or --server NAME")
	case o.Config != "" && o.Server == "":
		return nil, flagErrorf("--config needs --server NAME")
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, flagErrorf("invalid server URL %q", o.URL)
		}
	}
	switch o.Transport {
	case "auto", "http", "sse":
	default:
		return nil, flagErrorf("invalid --transport %q: want auto, http or sse", o.Transport)
	}
	if o.Protocol != "" && !mcp.IsKnownRevision(o.Protocol) {
		return nil, flagErrorf("unknown --protocol-version %q: mcpi speaks %s and %s", o.Protocol, strings.Join(mcp.LegacyRevisions, ", "), strings.Join(mcp.ModernRevisions, ", "))
	}
	switch o.Era {
	case "", session.EraAuto, session.EraLegacy, session.EraModern:
	default:
		return nil, flagErrorf("invalid --era %q: want auto, legacy or modern", o.Era)
	}
	if o.Protocol != "" && o.Era != "" && o.Era != session.EraAuto && (o.Era == session.EraModern) != mcp.IsModern(o.Protocol) {
		return nil, flagErrorf("--protocol-version %s is not of the %s era", o.Protocol, o.Era)
	}
	for _, e := range o.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return nil, flagErrorf("invalid --env %q: want KEY=VALUE", e)
		}
	}
	if _, err := o.header(); err != nil {
		return nil, err
	}
	return rest, nil
}

func (o *TargetOptions) header() (http.Header, error) {
	h := http.Header{}
	for _, line := range o.Headers {
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, flagErrorf("invalid --header %q: want \"Name: value\"", line)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// dial opens the transport connection to the target.
func (o *TargetOptions) dial(ctx context.Context, tap transport.Tap) (transport.Conn, error) {
	if o.Command != nil {
		c, err := transport.Spawn(transport.StdioOptions{
			Command: o.Command[0], Args: o.Command[1:], Env: o.Env, Dir: o.Dir, Tap: tap,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errConnect, err)
		}
		return c, nil
	}
	h, _ := o.header()
	c, err := transport.DialHTTP(ctx, transport.HTTPMode(o.Transport), transport.HTTPOptions{URL: o.URL, Header: h, Tap: tap})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConnect, err)
	}
	return c, nil
}

// connect dials the target and initializes a session.
func (o *TargetOptions) connect(ctx context.Context, sopts session.Options, tap transport.Tap) (*session.Client, error) {
	conn, err := o.dial(ctx, tap)
	if err != nil {
		return nil, err
	}
	sopts.Timeout = o.Timeout
	sopts.Force = o.Force
	sopts.Era = o.Era
	if o.Protocol != "" {
		sopts.ProtocolVersion = o.Protocol
	}
	if sopts.ClientInfo.Name == "" {
		sopts.ClientInfo = mcp.Implementation{Name: "mcpi", Version: Version}
	}
	return session.Connect(ctx, conn, sopts)
}
