package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/auth"
	"github.com/mcpi-dev/mcpi/internal/command"
	"github.com/mcpi-dev/mcpi/internal/iostreams"
	"github.com/mcpi-dev/mcpi/internal/mcptext"
)

// NewCmdAuth returns `mcpi auth`: the credentials OAuth left in the token
// store.
func NewCmdAuth(f *command.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "List or remove the OAuth credentials mcpi keeps",
		Long: "mcpi keeps the OAuth tokens and client registrations it obtains for HTTP servers in " +
			"a file of mode 0600 in its configuration directory ($" + auth.ConfigDirEnv + ", or mcpi under the user's configuration directory), " +
			"one entry per authorization server and resource.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdAuthList(f, nil), NewCmdAuthLogout(f, nil))
	return cmd
}

// AuthListOptions are the flags of `mcpi auth list`.
type AuthListOptions struct {
	IO   *command.IOStreams
	JSON bool
	Now  func() time.Time
}

// NewCmdAuthList returns `mcpi auth list`.
func NewCmdAuthList(f *command.Factory, runF func(context.Context, *AuthListOptions) error) *cobra.Command {
	opts := &AuthListOptions{IO: f.IO, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored OAuth credentials (never their secrets)",
		Args:  cobra.NoArgs,
		RunE:  command.RunE(opts, runF, authListRun),
	}
	command.AddJSONFlag(cmd, &opts.JSON, "print JSON")
	return cmd
}

// storedCredential is what `mcpi auth list` shows of an entry: no token,
// no secret.
type storedCredential struct {
	Issuer       string    `json:"issuer"`
	Resource     string    `json:"resource"`
	ServerURL    string    `json:"serverUrl"`
	ClientID     string    `json:"clientId,omitempty"`
	Registration string    `json:"registration,omitempty"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Refreshable  bool      `json:"refreshable"`
	Updated      time.Time `json:"updated"`
}

func authStore() (*auth.Store, error) {
	dir, err := auth.DefaultDir()
	if err != nil {
		return nil, fmt.Errorf("finding mcpi's configuration directory: %w", err)
	}
	return auth.OpenStore(dir), nil
}

func authListRun(_ context.Context, opts *AuthListOptions) error {
	store, err := authStore()
	if err != nil {
		return err
	}
	entries, err := store.List()
	if err != nil {
		return err
	}
	list := make([]storedCredential, 0, len(entries))
	for _, e := range entries {
		c := storedCredential{Issuer: e.Issuer, Resource: e.Resource, ServerURL: e.ServerURL, Updated: e.Updated}
		if e.Client != nil {
			c.ClientID, c.Registration = e.Client.ID, e.Client.Method
		}
		if e.Token != nil {
			c.Scope, c.Expiry, c.Refreshable = e.Token.Scope, e.Token.Expiry, e.Token.RefreshToken != ""
		}
		list = append(list, c)
	}
	if opts.JSON {
		return iostreams.WriteJSON(opts.IO, list)
	}
	if len(list) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no OAuth credentials stored (%s)\n", store.Path())
		return nil
	}
	tw := mcptext.Table(opts.IO.Out, "AUTHORIZATION SERVER", "RESOURCE", "CLIENT", "SCOPE", "TOKEN")
	for _, c := range list {
		client := c.ClientID
		if c.Registration != "" {
			client += " (" + c.Registration + ")"
		}
		mcptext.Row(tw, c.Issuer, c.Resource, client, c.Scope, tokenState(c, opts.Now()))
	}
	return tw.Flush()
}

func tokenState(c storedCredential, now time.Time) string {
	var s string
	switch {
	case c.Expiry.IsZero():
		s = "no expiry"
	case now.Before(c.Expiry):
		s = "expires in " + c.Expiry.Sub(now).Round(time.Minute).String()
	default:
		s = "expired"
	}
	if c.Refreshable {
		s += ", refreshable"
	}
	return s
}

// AuthLogoutOptions are the flags of `mcpi auth logout`.
type AuthLogoutOptions struct {
	IO       *command.IOStreams
	Issuer   string
	Resource string
	All      bool
}

// NewCmdAuthLogout returns `mcpi auth logout`.
func NewCmdAuthLogout(f *command.Factory, runF func(context.Context, *AuthLogoutOptions) error) *cobra.Command {
	opts := &AuthLogoutOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "logout (--issuer URL | --resource URL | --all)",
		Short: "Remove stored OAuth credentials: tokens and client registrations",
		Args:  cobra.NoArgs,
		RunE: command.CheckedRunE(func(*cobra.Command, []string) error {
			switch {
			case opts.All && (opts.Issuer != "" || opts.Resource != ""):
				return command.FlagErrorf("--all removes everything: it does not go with --issuer or --resource")
			case !opts.All && opts.Issuer == "" && opts.Resource == "":
				return command.FlagErrorf("say what to remove: --issuer URL, --resource URL (an MCP server's URL also matches), or --all")
			}
			return nil
		}, opts, runF, authLogoutRun),
	}
	f2 := cmd.Flags()
	end := command.FlagGroup(cmd, command.GroupArgs)
	f2.StringVar(&opts.Issuer, "issuer", "", "remove the credentials of this authorization server")
	f2.StringVar(&opts.Resource, "resource", "", "remove the credentials for this resource (or MCP server URL)")
	f2.BoolVar(&opts.All, "all", false, "remove every stored credential")
	end()
	return cmd
}

func authLogoutRun(_ context.Context, opts *AuthLogoutOptions) error {
	store, err := authStore()
	if err != nil {
		return err
	}
	same := func(a, b string) bool { return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/") }
	removed, err := store.Remove(func(e auth.Entry) bool {
		return opts.All ||
			((opts.Issuer == "" || same(e.Issuer, opts.Issuer)) &&
				(opts.Resource == "" || same(e.Resource, opts.Resource) || same(e.ServerURL, opts.Resource)))
	})
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no stored credentials match: nothing removed")
		return nil
	}
	for _, e := range removed {
		fmt.Fprintf(opts.IO.ErrOut, "removed the credentials of %s for %s\n", command.Sanitize(e.Issuer, false), command.Sanitize(e.Resource, false))
	}
	return nil
}
