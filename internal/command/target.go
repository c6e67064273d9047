package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/apps"
	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/eras"
	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// TargetOptions say which server to talk to and how. Every command that
// talks to a server embeds them.
type TargetOptions struct {
	// Session names a live session to run the command in instead of
	// connecting (--session, $MCPI_SESSION; see session.go).
	Session string
	// InDaemon says the command runs inside a session's daemon;
	// StderrTTY that its stderr is a terminal (OAuth may ask there).
	InDaemon  bool
	StderrTTY bool

	// Command is everything after "--": a stdio server to spawn.
	Command []string
	// URL is a Streamable HTTP or HTTP+SSE endpoint.
	URL       string
	Transport string
	Headers   []string
	Env       []string
	Dir       string
	Timeout   time.Duration
	// MaxTime bounds each request however much progress it reports
	// (--max-time; 0 means no bound).
	MaxTime  time.Duration
	Protocol string
	Era      string
	Force    bool
	// Apps declares MCP Apps (--apps; the TUI, app and app-info always).
	Apps bool
	// AllowCrossOriginRedirect follows an HTTP server's redirect to another
	// origin, without credentials (--allow-cross-origin-redirect).
	AllowCrossOriginRedirect bool

	// Server names an entry of a configuration file (--server), read from
	// Config or the usual locations; Inputs answer its ${input:...} variables.
	Server string
	Config string
	Inputs []string

	Auth AuthOptions

	secrets []string // values that must not reach a trace
	// HTTPTransport sends an HTTP target's requests (nil: the network);
	// it is the Factory's HTTPTransport.
	HTTPTransport http.RoundTripper
	// shutdownGrace is how long a stdio server has to exit, after its stdin
	// is closed and again after SIGTERM (0: the transport's default).
	shutdownGrace time.Duration
}

// AuthOptions are the flags of authorization to HTTP servers: a static
// bearer token, or OAuth 2.1 (internal/auth), which is on by default.
type AuthOptions struct {
	Bearer            string
	ClientID          string
	ClientSecret      string
	ClientMetadataURL string
	Headless          bool
	RedirectPort      int
	Scopes            []string
	NoBrowser         bool

	// Grant is the OAuth grant (auth.Grants); the secrets and keys each
	// needs come from files or the environment, never from argv.
	Grant              string
	ClientSecretFile   string
	ClientAssertionKey string
	AssertionFile      string
	IDTokenFile        string
	IDPIssuer          string
	// Issuer pins the authorization server a client secret or workload
	// JWT may go to (--oauth-issuer).
	Issuer              string
	IDPTokenEndpoint    string
	IDPClientID         string
	IDPClientSecretFile string
	DPoP                bool
	DPoPKey             string

	// out is where an interactive flow talks to the user (stderr), and
	// interactive says a person is there.
	out         io.Writer
	interactive bool
	// What validate read and made: the secret at the identity provider,
	// the keys, and the readers of the grant's assertion.
	idpSecret string
	clientKey *auth.Key
	dpopKey   *auth.Key
	assertion func() (string, error)
	idToken   func() (string, error)
}

func addTargetFlags(cmd *cobra.Command, o *TargetOptions) {
	defer FlagGroup(cmd, GroupConnection)()
	f := cmd.Flags()
	f.StringVar(&o.URL, "url", "", "URL of an HTTP server (Streamable HTTP, or HTTP+SSE)")
	f.StringVar(&o.Transport, "transport", "auto", "HTTP transport: auto, http (Streamable HTTP) or sse (HTTP+SSE, 2024-11-05)")
	f.StringArrayVarP(&o.Headers, "header", "H", nil, "extra HTTP header \"Name: value\" (repeatable)")
	f.StringArrayVarP(&o.Env, "env", "e", nil, "environment variable KEY=VALUE for a stdio server (repeatable)")
	f.StringVar(&o.Dir, "cwd", "", "working directory of a stdio server")
	f.DurationVar(&o.Timeout, "timeout", session.DefaultTimeout, "bound on each request without an answer or progress (e.g. 30s)")
	f.DurationVar(&o.MaxTime, "max-time", session.DefaultMaxTime, "bound on each operation's total time (a request, a call with its task polls and input rounds, a listing with its pages), progress or not (0: none)")
	f.BoolVar(&o.AllowCrossOriginRedirect, "allow-cross-origin-redirect", false, "follow an HTTP server's redirect to another origin (without credentials: Authorization, cookies, -H headers and the session id stay behind)")
	f.StringVar(&o.Protocol, "protocol-version", "", "protocol revision to use (forces its era; default: the newest of the era in force)")
	f.StringVar(&o.Era, "era", "", "protocol era: auto (detect, and remember), legacy (initialize, 2024-11-05..2025-11-25) or modern (stateless, 2026-07-28); default: $MCPI_ERA, else the era this server spoke last time, else auto")
	f.BoolVar(&o.Force, "force", false, "send requests even when the server did not declare the capability")
	f.BoolVar(&o.Apps, "apps", false, "declare MCP Apps (the io.modelcontextprotocol/ui extension): servers may list their App tools only to a client that does (the TUI, app and app-info always declare it)")
	f.StringVar(&o.Server, "server", "", "a server of a configuration file (see mcpi servers)")
	f.StringVar(&o.Config, "config", "", "with --server: the configuration file to read instead of the usual locations")
	f.StringArrayVar(&o.Inputs, "input", nil, "with --server: the value of a VS Code ${input:ID}, ID=VALUE (repeatable)")
	addAuthFlags(cmd, &o.Auth)
}

func addAuthFlags(cmd *cobra.Command, a *AuthOptions) {
	defer FlagGroup(cmd, GroupAuth)()
	f := cmd.Flags()
	f.StringVar(&a.Bearer, "bearer", "", "send this access token (Authorization: Bearer) instead of running OAuth")
	f.StringVar(&a.ClientID, "client-id", "", "OAuth: the client ID registered with the authorization server (pre-registration)")
	f.StringVar(&a.ClientSecret, "client-secret", "", "OAuth: the secret of --client-id")
	f.StringVar(&a.ClientMetadataURL, "client-metadata-url", "", "OAuth: the HTTPS URL of mcpi's client ID metadata document, used when the authorization server supports them")
	f.BoolVar(&a.Headless, "oauth-headless", false, "OAuth: authorize without a browser, reading the code from the authorization server's redirect (CI, test servers)")
	f.IntVar(&a.RedirectPort, "oauth-redirect-port", 0, "OAuth: the loopback port of the redirect URI (default: the one of a kept registration, else any free port)")
	f.StringArrayVar(&a.Scopes, "scope", nil, "OAuth: request these scopes instead of the ones the server names (space-separated or repeated)")
	f.BoolVar(&a.NoBrowser, "no-browser", false, "OAuth: print the authorization URL instead of opening a browser")
	addGrantFlags(cmd, a)
}

// validate checks the authorization flags against the target.
func (a *AuthOptions) validate(o *TargetOptions, cmd *cobra.Command) error {
	a.out = cmd.ErrOrStderr()
	a.interactive = o.StderrTTY
	var scopes []string
	for _, s := range a.Scopes {
		scopes = append(scopes, strings.Fields(s)...)
	}
	a.Scopes = scopes
	oauth := a.ClientID != "" || a.ClientSecret != "" || a.ClientMetadataURL != "" || a.Headless || a.RedirectPort != 0 || len(a.Scopes) > 0 || a.NoBrowser ||
		a.grantFlagsSet()
	switch {
	case o.Command != nil && (a.Bearer != "" || oauth):
		return FlagErrorf("--bearer and the OAuth flags apply to HTTP servers, not to a command")
	case a.Bearer != "" && oauth:
		return FlagErrorf("--bearer sends a token of your own: it does not go with the OAuth flags")
	case a.ClientSecret != "" && a.ClientSecretFile != "":
		return FlagErrorf("give --client-secret or --client-secret-file, not both")
	case a.RedirectPort < 0 || a.RedirectPort > 65535:
		return FlagErrorf("invalid --oauth-redirect-port %d", a.RedirectPort)
	case a.Headless && a.NoBrowser:
		return FlagErrorf("--oauth-headless uses no browser already: drop --no-browser")
	}
	if o.Command == nil && a.Bearer == "" {
		if err := a.validateGrant(); err != nil {
			return err
		}
	}
	if a.ClientSecret != "" && a.ClientID == "" {
		return FlagErrorf("--client-secret needs --client-id")
	}
	if a.ClientMetadataURL != "" {
		if err := auth.ValidClientMetadataURL(a.ClientMetadataURL); err != nil {
			return FlagErrorf("invalid --client-metadata-url: %v", err)
		}
	}
	if a.Bearer != "" {
		for _, line := range o.Headers {
			if k, _, _ := strings.Cut(line, ":"); strings.EqualFold(strings.TrimSpace(k), "Authorization") {
				return FlagErrorf("give either --bearer or an Authorization header, not both")
			}
		}
	}
	if cmd.Flags().Changed("client-secret") && a.out != nil {
		fmt.Fprintf(a.out, "warning: --client-secret is in the command line, which every user of this machine can read (ps): --client-secret-file or $%s keeps it out\n", EnvClientSecret)
	}
	o.secrets = append(o.secrets, a.Bearer, a.ClientSecret, a.idpSecret)
	o.secrets = append(o.secrets, a.currentAssertions()...)
	return nil
}

// roundTripper returns what sends the requests of an HTTP target: base
// (nil: the transport's own) when the user authorizes with --bearer or an
// Authorization header, else one that runs OAuth over base when the server
// asks for it. The transport wraps it in its egress policy.
func (a *AuthOptions) roundTripper(serverURL string, h http.Header, tap transport.Tap, base http.RoundTripper) http.RoundTripper {
	if a.Bearer != "" {
		h.Set("Authorization", "Bearer "+a.Bearer)
		return base
	}
	if h.Get("Authorization") != "" {
		return base
	}
	opts := auth.Options{
		ServerURL: serverURL, Base: base, Tap: tap, Out: a.out, Interactive: a.interactive,
		Headless: a.Headless, NoBrowser: a.NoBrowser, RedirectPort: a.RedirectPort, Scopes: a.Scopes,
		ClientID: a.ClientID, ClientSecret: a.ClientSecret, ClientMetadataURL: a.ClientMetadataURL, Issuer: a.Issuer,
		ClientName: "mcpi", ClientVersion: Version,
		Grant: a.Grant, ClientKey: a.clientKey, DPoP: a.dpopKey, Assertion: a.assertion, IDToken: a.idToken,
		IDP: auth.IDP{Issuer: a.IDPIssuer, TokenEndpoint: a.IDPTokenEndpoint, ClientID: a.IDPClientID, ClientSecret: a.idpSecret},
	}
	if dir, err := auth.DefaultDir(); err == nil {
		opts.Store = auth.OpenStore(dir)
	}
	return auth.NewTransport(opts)
}

// What a word is, as a server's URL.
const (
	urlNot      = iota
	URLHTTP     // an http or https URL with a host
	urlMisspelt // a URL whose scheme is nearly http or https (htp://, htps://)
)

// HTTPLike says whether a is a server's URL, or one misspelt.
func HTTPLike(a string) int {
	scheme, rest, ok := strings.Cut(a, "://")
	if !ok || scheme == "" {
		return urlNot
	}
	lower := strings.ToLower(scheme)
	if lower == "http" || lower == "https" {
		if u, err := url.Parse(a); err == nil && u.Host != "" {
			return URLHTTP
		}
		return urlMisspelt
	}
	if rest != "" && (editDistance(lower, "http") <= 1 || editDistance(lower, "https") <= 1) {
		return urlMisspelt
	}
	return urlNot
}

func badServerURL(a string) error {
	return FlagErrorf("invalid server URL %q: give an http:// or https:// URL with a host", a)
}

// editDistance is the Levenshtein distance of two short words.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// TargetArgs is the Args of a command that talks to a server: the TARGET
// taken out of the positional arguments into t (ParseTarget), the rest
// given to take, which checks them and keeps what the command needs. RunE
// then only hands the options on (RunE).
func TargetArgs(t *TargetOptions, take func(rest []string) error) cobra.PositionalArgs {
	return CheckedArgs(func(cmd *cobra.Command, args []string) error {
		rest, err := t.ParseTarget(cmd, args)
		if err != nil {
			return err
		}
		return take(rest)
	})
}

// CheckedArgs is the Args of a command whose arguments check does not fit
// TargetArgs (a TARGET that may be a session, a picker, a file's): its
// errors that are not usage errors (a file an argument names, a
// configuration) keep their own exit code and message.
func CheckedArgs(check func(cmd *cobra.Command, args []string) error) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err != nil && !errors.As(err, new(*FlagError)) {
			// markUsageErrors leaves it as it is.
			return NotUsage{err}
		}
		return err
	}
}

// NotUsage is an error of a command's Args that is no usage error: it
// keeps its own exit code and message.
type NotUsage struct{ error }

func (e NotUsage) Unwrap() error { return e.error }

// None takes no argument but the TARGET.
var None = Exactly(0, "")

// One takes one argument but the TARGET, what, into *into.
func One(what string, into *string) func([]string) error {
	return func(rest []string) error {
		if err := Exactly(1, what)(rest); err != nil {
			return err
		}
		*into = rest[0]
		return nil
	}
}

// ParseTarget fills o.Command and o.URL from the positional arguments:
// everything after "--" is a command, and a first argument that is an http
// or https URL is the server's URL. It returns the other arguments.
func (o *TargetOptions) ParseTarget(cmd *cobra.Command, args []string) ([]string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		o.Command = args[dash:]
		args = args[:dash]
		if len(o.Command) == 0 {
			return nil, FlagErrorf("nothing after \"--\": give the server command to run")
		}
	}
	if o.UseSession(cmd, args) {
		return args, o.CheckSession(cmd)
	}
	rest, misspelt := o.takeServerURL(args)
	if err := o.checkTarget(misspelt); err != nil {
		return nil, err
	}
	if err := o.checkFlags(); err != nil {
		return nil, err
	}
	if err := o.Auth.validate(o, cmd); err != nil {
		return nil, err
	}
	return rest, nil
}

// takeServerURL takes the server's URL out of args, unless the target is
// given otherwise, and returns the other arguments, and a word that looks
// like a misspelt server URL. The TARGET comes last: when several
// arguments look like URLs (a resource URI may be one), the last is the
// server's.
func (o *TargetOptions) takeServerURL(args []string) (rest []string, misspelt string) {
	serverAt := -1
	if o.URL == "" && o.Command == nil {
		for i, a := range args {
			switch HTTPLike(a) {
			case URLHTTP:
				serverAt = i
			case urlMisspelt:
				misspelt = a
			}
		}
	}
	for i, a := range args {
		if i == serverAt {
			o.URL = a
			continue
		}
		rest = append(rest, a)
	}
	return rest, misspelt
}

// checkTarget checks that one target is given: a URL, a command or
// --server.
func (o *TargetOptions) checkTarget(misspelt string) error {
	switch {
	case o.Server != "" && (o.URL != "" || o.Command != nil):
		return FlagErrorf("give either --server or a URL or a command after \"--\", not several")
	case o.URL != "" && o.Command != nil:
		return FlagErrorf("give either a URL or a command after \"--\", not both")
	case o.URL == "" && o.Command == nil && o.Server == "" && misspelt != "":
		return badServerURL(misspelt)
	case o.URL == "" && o.Command == nil && o.Server == "":
		return FlagErrorf("no server given: add \"-- COMMAND [ARGS...]\" for a stdio server, a URL for an HTTP server, or --server NAME")
	case o.Config != "" && o.Server == "":
		return FlagErrorf("--config needs --server NAME")
	}
	if o.URL != "" && HTTPLike(o.URL) != URLHTTP {
		return badServerURL(o.URL)
	}
	return nil
}

// checkFlags checks the connection's flags (and $MCPI_ERA) but the
// authorization's.
func (o *TargetOptions) checkFlags() error {
	switch o.Transport {
	case "auto", "http", "sse":
	default:
		return FlagErrorf("invalid --transport %q: want auto, http or sse", o.Transport)
	}
	if o.Protocol != "" && !mcp.IsKnownRevision(o.Protocol) {
		return FlagErrorf("unknown --protocol-version %q: mcpi speaks %s and %s", o.Protocol, strings.Join(mcp.LegacyRevisions, ", "), strings.Join(mcp.ModernRevisions, ", "))
	}
	switch e := os.Getenv("MCPI_ERA"); e {
	case "", session.EraAuto, session.EraLegacy, session.EraModern:
	default:
		return FlagErrorf("invalid MCPI_ERA %q: want auto, legacy or modern", e)
	}
	switch o.Era {
	case "", session.EraAuto, session.EraLegacy, session.EraModern:
	default:
		return FlagErrorf("invalid --era %q: want auto, legacy or modern", o.Era)
	}
	if o.Protocol != "" && o.Era != "" && o.Era != session.EraAuto && (o.Era == session.EraModern) != mcp.IsModern(o.Protocol) {
		return FlagErrorf("--protocol-version %s is not of the %s era", o.Protocol, o.Era)
	}
	for _, e := range o.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return FlagErrorf("invalid --env %q: want KEY=VALUE", e)
		}
	}
	_, err := o.Header()
	return err
}

func (o *TargetOptions) Header() (http.Header, error) {
	h := http.Header{}
	for _, line := range o.Headers {
		k, v, ok := strings.Cut(line, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, FlagErrorf("invalid --header %q: want \"Name: value\"", line)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// Dial opens the transport connection to the target.
func (o *TargetOptions) Dial(ctx context.Context, tap transport.Tap) (transport.Conn, error) {
	if o.Command != nil {
		c, err := transport.Spawn(transport.StdioOptions{
			Command: o.Command[0], Args: o.Command[1:], Env: o.Env, Dir: o.Dir, Tap: tap, ShutdownGrace: o.shutdownGrace,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConnect, err)
		}
		return c, nil
	}
	h, _ := o.Header()
	rt := o.Auth.roundTripper(o.URL, h, tap, o.HTTPTransport)
	c, err := transport.DialHTTP(ctx, transport.HTTPMode(o.Transport), transport.HTTPOptions{URL: o.URL, Header: h, Tap: tap, Base: rt,
		AllowCrossOriginRedirect: o.AllowCrossOriginRedirect, RedirectHint: "--allow-cross-origin-redirect follows it, without credentials"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConnect, err)
	}
	return c, nil
}

// Connect dials the target and initializes a session.
func (o *TargetOptions) Connect(ctx context.Context, sopts session.Options, tap transport.Tap) (*session.Client, error) {
	conn, err := o.Dial(ctx, tap)
	if err != nil {
		return nil, err
	}
	sopts.Timeout = o.Timeout
	sopts.MaxTime = o.MaxTime
	if o.MaxTime == 0 {
		sopts.MaxTime = -1 // --max-time 0: no bound
	}
	sopts.Force = o.Force
	if o.Apps {
		sopts.Extensions = map[string]json.RawMessage{apps.Extension: apps.Declaration()}
	}
	if o.Protocol != "" {
		sopts.ProtocolVersion = o.Protocol
	}
	if sopts.ClientInfo.Name == "" {
		sopts.ClientInfo = mcp.Implementation{Name: "mcpi", Version: Version}
	}
	era, reason, remembered := o.chooseEra(func(why string) {
		if tap != nil {
			tap.Observe(transport.Event{Time: time.Now(), Kind: transport.KindLifecycle, Text: why})
		}
	})
	if era == session.EraAuto && !remembered {
		reason = "" // detection says why
	}
	if remembered && era == session.EraModern {
		// A remembered modern era is confirmed by the probe itself: it is
		// server/discover, and a server that stopped answering it falls
		// back to initialize within the probe's share of the start clock.
		era = session.EraAuto
	}
	sopts.Era, sopts.EraReason = era, reason
	// --timeout bounds the whole start: a remembered era that fails leaves
	// the detection after it only what remains of the one start clock.
	sctx := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = bounds.Clock{Name: "start", D: o.Timeout}.Context(ctx)
		defer cancel()
	}
	c, err := session.Connect(sctx, conn, sopts)
	if err != nil && remembered && ctx.Err() == nil && !errors.As(err, new(*auth.Error)) {
		// The server may have changed: forget, and detect, if any of the
		// start clock remains.
		eras.Forget(o.EraKey())
		if sctx.Err() == nil {
			if conn, derr := o.Dial(ctx, tap); derr == nil {
				sopts.Era, sopts.EraReason = session.EraAuto, ""
				c, err = session.Connect(sctx, conn, sopts)
			}
		}
	}
	if err != nil && ctx.Err() == nil && sctx.Err() != nil && !errors.Is(err, session.ErrTimeout) {
		err = &session.TimeoutError{Method: "start (server/discover, initialize)", After: o.Timeout}
	}
	if err == nil && sopts.Era == session.EraAuto && o.Protocol == "" {
		if c.EraGuessed() {
			// An era taken for legacy because the probe timed out is a
			// guess (a server still starting is silent too): not
			// remembered, and a remembered modern one it did not confirm
			// is forgotten.
			if remembered {
				eras.Forget(o.EraKey())
			}
		} else {
			eras.Remember(o.EraKey(), c.Era())
		}
	}
	var ae *auth.Error
	if errors.As(err, &ae) {
		// The failed authorization says all there is to say; the request
		// and the HTTP client that carried it would only repeat the URL.
		return nil, ae
	}
	return c, err
}

func Exactly(n int, what string) func([]string) error {
	return func(rest []string) error {
		switch {
		case len(rest) < n:
			return FlagErrorf("missing %s", what)
		case len(rest) > n:
			return FlagErrorf("unexpected argument %q", rest[n])
		}
		return nil
	}
}

// ParsePairs parses KEY=VALUE arguments into a map.
func ParsePairs(pairs []string, what string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, FlagErrorf("invalid %s %q: want KEY=VALUE", what, p)
		}
		out[k] = v
	}
	return out, nil
}
