// The glue between the commands that run collections (mcpi test, mcpi
// bench, the TUI's saved calls) and internal/collection: which server a
// file names, who answers the server, what is secret.

package command

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// fileSecrets are the values of the environment a collection refers to
// (`${NAME}`) that are secrets: those its `secrets:` key names, and those
// whose name says credential (record.IsSecretName). A value is not a
// secret for its length: a path stays readable.
func fileSecrets(file *collection.File, env func(string) (string, bool)) []string {
	var out []string
	for _, name := range file.Refs {
		if v, ok := env(name); ok && v != "" && (record.IsSecretName(name) || file.MarksSecret(name)) {
			out = append(out, v)
		}
	}
	return out
}

// RedactorOf has the connection's trace and -v output hide the file's
// secrets too, and returns the redactor of every report: the target's
// secrets and the file's.
func (o *ConnOptions) RedactorOf(file *collection.File, env func(string) (string, bool)) *record.Redactor {
	o.Target.secrets = append(o.Target.secrets, fileSecrets(file, env)...)
	return record.NewRedactor(o.SecretValues())
}

// CollectionServer is the server a collection saved from the TUI names:
// the command line, URL or configured server the session connects to.
// None when one of them holds a secret (a -e value, a token in the URL,
// a secret-looking option): it would be written into the file in clear.
func (o *ConnOptions) CollectionServer() *collection.Server {
	t := o.Target
	red := record.NewRedactor(o.SecretValues())
	switch {
	case len(t.Command) > 0:
		if slices.Equal(red.Args(t.Command), t.Command) {
			return &collection.Server{Command: slices.Clone(t.Command)}
		}
	case t.URL != "":
		if red.URL(t.URL) == t.URL {
			return &collection.Server{URL: t.URL}
		}
	case t.Server != "" && t.Config == "":
		// A name in the default configuration files: mcpi test finds it.
		return &collection.Server{Config: t.Server}
	}
	return nil
}

// RedactErr returns err with its message through red, what errors.Is and
// errors.As find in it kept (its exit code, its kind).
func RedactErr(red *record.Redactor, err error) error {
	if err == nil {
		return nil
	}
	msg := red.Text(err.Error())
	if msg == err.Error() {
		return err
	}
	return redactedError{err: err, msg: msg}
}

type redactedError struct {
	err error
	msg string
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// ParseCollectionTarget parses the arguments of a command that takes
// collection files and, optionally, a TARGET that overrides the server
// each file names: it returns the other arguments and whether a TARGET
// was given.
func (t *TargetOptions) ParseCollectionTarget(cmd *cobra.Command, args []string) (rest []string, cliTarget bool, err error) {
	rest = args
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		rest = args[:dash]
	}
	cliTarget = cmd.ArgsLenAtDash() >= 0 || t.Server != "" || t.URL != ""
	for _, a := range rest {
		if HTTPLike(a) != urlNot {
			cliTarget = true
		}
	}
	if cliTarget {
		if rest, err = t.ParseTarget(cmd, args); err != nil {
			return nil, false, err
		}
	}
	return rest, cliTarget, nil
}

// FromCollection sets the target to the server a collection file names.
func (t *TargetOptions) FromCollection(file *collection.File, env func(string) (string, bool)) error {
	if file.Server == nil {
		return FlagErrorf("%s names no server (server:) and no TARGET was given", file.Path)
	}
	s, err := file.Server.Expand(collection.Vars{Env: env})
	if err != nil {
		return &FlagError{Err: fmt.Errorf("%s: %w", file.Path, err)}
	}
	t.Command, t.URL, t.Server = s.Command, s.URL, s.Config
	if err := t.checkTarget(""); err != nil {
		return err
	}
	return t.checkFlags()
}

// CollectionHandler answers the server's requests with a step's answers,
// and otherwise as the command's flags say.
func (r *ConnRun) CollectionHandler() *collection.Handler {
	return &collection.Handler{Fallback: r.Handler(r.Sayer()), WorkDir: r.IO.WorkDir()}
}
