package command

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"golang.org/x/term"

	"github.com/mcpi-dev/mcpi/internal/answer"
	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// SearchOptions are the usual config locations of this machine.
func SearchOptions() config.SearchOptions {
	home, _ := os.UserHomeDir()
	cfg, _ := os.UserConfigDir()
	wd, _ := os.Getwd()
	return config.SearchOptions{Home: home, ConfigDir: cfg, WorkDir: wd, Env: os.Getenv}
}

// LoadServers reads --config, or searches the usual locations.
func LoadServers(file string, warn func(string)) ([]config.Server, error) {
	if file != "" {
		servers, err := config.Load(file)
		if err != nil {
			return nil, &FlagError{Err: err}
		}
		return servers, nil
	}
	servers, problems := config.Search(SearchOptions())
	for _, p := range problems {
		warn("warning: " + OneLine(p.String()))
	}
	return servers, nil
}

// ResolveServer fills the target from a config entry (--server).
func (r *ConnRun) ResolveServer(ctx context.Context) error {
	t := &r.Target
	if t.Server == "" {
		return nil
	}
	servers, err := LoadServers(t.Config, func(s string) { fmt.Fprintln(r.IO.ErrOut, s) })
	if err != nil {
		return err
	}
	s, err := config.Find(servers, t.Server)
	if err != nil {
		return &FlagError{Err: err}
	}
	if s.Disabled {
		fmt.Fprintf(r.IO.ErrOut, "warning: server %s is disabled in %s; using it anyway\n", Sanitize(s.Name, false), s.Source)
	}
	resolved, err := r.resolveInputs(ctx, s)
	if err != nil {
		return err
	}
	r.SayVerbose("using server %s from %s (%s)", Sanitize(resolved.Name, false), resolved.Source, resolved.Format)
	return t.useServer(resolved)
}

// resolveInputs resolves the entry's variables: ${input:...} from
// --input, or asked on the terminal when there is one, and ${env:...}.
func (o *ConnOptions) resolveInputs(ctx context.Context, s config.Server) (config.Server, error) {
	inputs, err := ParsePairs(o.Target.Inputs, "--input")
	if err != nil {
		return config.Server{}, err
	}
	wd, _ := os.Getwd()
	resolved, err := s.Resolve(inputs, os.LookupEnv, wd)
	var missing *config.MissingInputError
	if errors.As(err, &missing) {
		if !o.IO.StdinTTY || !o.IO.StderrTTY {
			return config.Server{}, FlagErrorf("%v: pass --input %s=VALUE", err, missing.IDs[0])
		}
		for _, in := range missing.Inputs {
			v, err := o.askInput(ctx, in)
			if err != nil {
				return config.Server{}, err
			}
			inputs[in.ID] = v
		}
		resolved, err = s.Resolve(inputs, os.LookupEnv, wd)
	}
	if err != nil {
		return config.Server{}, &FlagError{Err: err}
	}
	return resolved, nil
}

// useServer makes the resolved entry s the target: its URL, transport,
// headers and OAuth settings, or its command and directory; its
// environment, under the -e values, which win; its secrets.
func (t *TargetOptions) useServer(s config.Server) error {
	if s.URL != "" {
		t.URL = s.URL
		if t.Transport == "auto" || t.Transport == "" {
			switch s.Transport {
			case config.TransportHTTP:
				t.Transport = "http"
			case config.TransportSSE:
				t.Transport = "sse"
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			t.Headers = append([]string{k + ": " + s.Headers[k]}, t.Headers...)
		}
		if s.OAuth != nil {
			if err := t.Auth.fromConfig(s.OAuth, t); err != nil {
				return &FlagError{Err: fmt.Errorf("server %s in %s: oauth: %w", Sanitize(s.Name, false), s.Source, err)}
			}
		}
	} else {
		t.Command = append([]string{s.Command}, s.Args...)
		if t.Dir == "" {
			t.Dir = s.Cwd
		}
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	t.Env = append(env, t.Env...) // -e wins
	t.secrets = append(t.secrets, record.ServerSecrets(s)...)
	return nil
}

func (o *ConnOptions) askInput(ctx context.Context, in config.Input) (string, error) {
	label := in.ID
	if in.Description != "" {
		label = in.Description + " (" + in.ID + ")"
	}
	if in.Default != "" && !in.Password {
		label += " [" + in.Default + "]"
	}
	fmt.Fprintf(o.IO.ErrOut, "%s: ", Sanitize(label, false))
	if in.Password {
		if f, ok := o.IO.In.(*os.File); ok {
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(o.IO.ErrOut)
			if err != nil {
				return "", err
			}
			return string(b), nil
		}
	}
	v, err := answer.NewTerminal(o.IO).Ask(ctx, "")
	if err != nil {
		return "", err
	}
	if v == "" {
		v = in.Default
	}
	return v, nil
}
