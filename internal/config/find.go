package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// NotFoundError is returned by Find when no server has the name.
type NotFoundError struct {
	Name      string
	Available []string // the names there are, sorted, without repeats
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("config: no server named %q", e.Name)
	if len(e.Available) == 0 {
		return msg + " (no servers configured)"
	}
	for _, n := range e.Available {
		if strings.EqualFold(n, e.Name) {
			msg += fmt.Sprintf(" (did you mean %q?)", n)
			break
		}
	}
	return msg + "; available: " + strings.Join(e.Available, ", ")
}

// AmbiguousError is returned by Find when several files define the name
// differently.
type AmbiguousError struct {
	Name    string
	Sources []string // one per definition: the file, and the project for ~/.claude.json entries
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("config: server %q is defined differently in %s; choose a file with --config",
		e.Name, strings.Join(e.Sources, " and "))
}

// Find returns the server with exactly this name. When several files define
// it the same way (the same server copied into two hosts' files) the first is
// returned; when they differ, the error is an *AmbiguousError naming the
// files. A missing name gives a *NotFoundError listing the names there are.
// An unusable entry is returned together with its Err.
func Find(servers []Server, name string) (Server, error) {
	var matches []Server
	for _, s := range servers {
		if s.Name == name {
			matches = append(matches, s)
		}
	}
	if len(matches) == 0 {
		var names []string
		for _, s := range servers {
			names = append(names, s.Name)
		}
		slices.Sort(names)
		return Server{}, &NotFoundError{Name: name, Available: slices.Compact(names)}
	}
	first := matches[0]
	for _, m := range matches[1:] {
		if !reflect.DeepEqual(definition(first), definition(m)) {
			e := &AmbiguousError{Name: name}
			for _, m := range matches {
				src := m.Source
				if m.Project != "" {
					src += " (project " + m.Project + ")"
				}
				e.Sources = append(e.Sources, src)
			}
			return Server{}, e
		}
	}
	return first, first.Err
}

// definition is what makes two entries start the same server.
func definition(s Server) any {
	type def struct {
		Transport, Command string
		Args               []string
		Env                map[string]string
		EnvFile, Cwd, URL  string
		Headers            map[string]string
		Expand             expandMode
		Disabled, Unusable bool
	}
	d := def{s.Transport, s.Command, s.Args, s.Env, s.EnvFile, s.Cwd, s.URL, s.Headers,
		expandMode{}, s.Disabled, s.Err != nil}
	// The same text means the same server only if it is expanded the same way.
	for _, v := range s.strings() {
		if strings.Contains(v, "${") {
			d.Expand = modeFor(s.Format)
			break
		}
	}
	if len(d.Args) == 0 {
		d.Args = nil
	}
	if len(d.Env) == 0 {
		d.Env = nil
	}
	if len(d.Headers) == 0 {
		d.Headers = nil
	}
	return d
}
