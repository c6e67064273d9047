package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// ConnOptions are the flags every command that talks to a server shares:
// the target, the answers to server requests, recording and verbosity.
type ConnOptions struct {
	IO     *IOStreams
	Target TargetOptions

	Roots         []string
	SamplingReply string
	Elicit        string
	ElicitFields  []string
	JSON          bool
	Verbose       bool

	mu      sync.Mutex
	roots   []mcp.Root
	verbose func(format string, args ...any)
}

func addConnFlags(cmd *cobra.Command, o *ConnOptions) {
	addTargetFlags(cmd, &o.Target)
	f := cmd.Flags()
	f.StringArrayVar(&o.Roots, "root", nil, "a root to offer the server (a directory path or a URI; repeatable)")
	f.StringVar(&o.SamplingReply, "sampling-reply", "", "answer sampling requests with this text, or @FILE holding a CreateMessageResult")
	f.StringVar(&o.Elicit, "elicit", "", "answer elicitation requests: accept, decline or cancel")
	f.StringArrayVar(&o.ElicitFields, "elicit-field", nil, "a field of an accepted elicitation, KEY=VALUE (repeatable)")
	f.BoolVar(&o.JSON, "json", false, "print JSON")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "show server stderr, notifications and transport events on stderr")
}

// validate checks the flags that do not depend on the server.
func (o *ConnOptions) validate() error {
	switch o.Elicit {
	case "", mcp.ElicitAccept, mcp.ElicitDecline, mcp.ElicitCancel:
	default:
		return flagErrorf("invalid --elicit %q: want accept, decline or cancel", o.Elicit)
	}
	for _, f := range o.ElicitFields {
		if k, _, ok := strings.Cut(f, "="); !ok || k == "" {
			return flagErrorf("invalid --elicit-field %q: want KEY=VALUE", f)
		}
	}
	if len(o.ElicitFields) > 0 && o.Elicit == "" {
		o.Elicit = mcp.ElicitAccept
	}
	for _, r := range o.Roots {
		root, err := rootFor(r)
		if err != nil {
			return &FlagError{Err: err}
		}
		o.roots = append(o.roots, root)
	}
	return nil
}

// rootFor turns a --root value into a root: a URI is kept, a path becomes
// a file:// URI of its absolute form.
func rootFor(s string) (mcp.Root, error) {
	if strings.Contains(s, "://") {
		return mcp.Root{URI: s}, nil
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return mcp.Root{}, fmt.Errorf("invalid --root %q: %v", s, err)
	}
	return mcp.Root{URI: "file://" + filepath.ToSlash(abs), Name: filepath.Base(abs)}, nil
}

// open connects to the target with the CLI's handler, warnings and taps.
func (o *ConnOptions) open(ctx context.Context) (*session.Client, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	errOut := o.IO.ErrOut
	var printMu sync.Mutex
	say := func(format string, args ...any) {
		printMu.Lock()
		defer printMu.Unlock()
		fmt.Fprintf(errOut, format+"\n", args...)
	}
	o.verbose = func(format string, args ...any) {
		if o.Verbose {
			say(format, args...)
		}
	}
	if err := o.resolveServer(ctx); err != nil {
		return nil, err
	}
	var taps []transport.Tap
	taps = append(taps, transport.TapFunc(func(e transport.Event) {
		switch e.Kind {
		case transport.KindStderr:
			o.verbose("server stderr: %s", sanitize(string(e.Data), false))
		case transport.KindLifecycle:
			msg := e.Text
			if e.Err != "" {
				msg += ": " + e.Err
			}
			o.verbose("transport: %s", oneLine(msg))
		case transport.KindHTTP:
			if e.HTTP != nil {
				o.verbose("http: %s %s -> %s", e.HTTP.Method, sanitize(e.HTTP.URL, false), oneLine(e.Text+" "+e.Err))
			}
		}
	}))
	sopts := session.Options{
		Handler: &cliHandler{o: o, say: say},
		OnWarning: func(w session.Warning) {
			say("warning: %s: %s", oneLine(w.Message), quoteData(w.Data))
		},
		OnNotification: func(n session.Notification) {
			if n.Method == "notifications/progress" {
				return // the waiting command shows it
			}
			if n.Method == "notifications/message" {
				o.verbose("server log: %s", oneLine(string(n.Params)))
				return
			}
			o.verbose("notification %s %s", sanitize(n.Method, false), oneLine(string(n.Params)))
		},
	}
	return o.Target.connect(ctx, sopts, transport.MultiTap(taps...))
}

// quoteData shows the start of what a server sent, made safe to print.
func quoteData(b []byte) string {
	const max = 200
	s := string(b)
	if len(s) > max {
		s = s[:max] + "…"
	}
	return "«" + sanitize(s, false) + "»"
}
