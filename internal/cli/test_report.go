package cli

import (
	"sort"
	"strconv"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/collection"
	"github.com/mcpi-dev/mcpi/internal/record"
)

// secrets are the values of the environment a collection refers to
// (`${NAME}`) that are secrets (record.IsSecretEnv: a name that says
// credential, or a value long enough to be one): no report, JUnit file or
// trace shows them.
type secrets struct{ values []string }

const redacted = record.Redacted

// secretsOf finds the file's secrets and has the connection's trace and
// -v output hide them too.
func (opts *TestOptions) secretsOf(file *collection.File) secrets {
	s := fileSecrets(file, opts.env)
	opts.Target.secrets = append(opts.Target.secrets, s.values...)
	return s
}

// fileSecrets are the secrets of the environment a collection refers to.
func fileSecrets(file *collection.File, env func(string) (string, bool)) secrets {
	var s secrets
	for _, name := range file.Refs {
		if v, ok := env(name); ok && v != "" && record.IsSecretEnv(name, v) {
			s.values = append(s.values, v)
		}
	}
	return s
}

// forms are the ways a secret may be written in a report: as it is, and
// quoted as JSON and as Go quotes it (a failure shows a string value so).
func (s secrets) forms() []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s.values {
		// JSON escapes it once or twice (a tool's JSON text in a JSON
		// string); a failure then quotes that as Go does.
		for _, f := range record.JSONForms(v) {
			q := strconv.Quote(f)
			for _, g := range []string{f, q[1 : len(q)-1]} {
				if !seen[g] {
					seen[g] = true
					out = append(out, g)
				}
			}
		}
	}
	// The longest first: a form that contains another goes first.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (s secrets) text(t string) string {
	for _, v := range s.forms() {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

func (s secrets) holds(t string) bool {
	for _, v := range s.forms() {
		if strings.Contains(t, v) {
			return true
		}
	}
	return false
}

// step returns the step's report with the secrets hidden.
func (s secrets) step(st collection.StepReport) collection.StepReport {
	if len(s.values) == 0 {
		return st
	}
	st.Name = s.text(st.Name)
	fs := make([]collection.Failure, len(st.Failures))
	for i, f := range st.Failures {
		fs[i] = collection.Failure{Path: s.text(f.Path), Expected: s.text(f.Expected), Actual: s.text(f.Actual), Message: s.text(f.Message)}
	}
	st.Failures = fs
	return st
}
