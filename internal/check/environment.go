package check

import (
	"regexp"
	"strings"
	"sync"
)

// A failure that looks environmental (the server's database is not
// running, its API key is missing or refused) says nothing of the server's
// protocol: it is an outcome of its own, neither a finding nor a pass.

// Environment is a failure of the server's environment, not its protocol.
type Environment struct {
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Why is what in the message looks environmental.
	Why string `json:"why"`
}

// environmental are the signs of a failure that lies in what the server
// needs around it, each with what it means; compiled on first use, not at
// every start of mcpi.
var environmental = sync.OnceValue(func() []envSign {
	return []envSign{
		{regexp.MustCompile(`(?i)\b(ECONNREFUSED|connection refused|connect: refused)\b`), "a service the server connects to refused the connection (is it running?)"},
		{regexp.MustCompile(`(?i)\b(ENOTFOUND|EAI_AGAIN|getaddrinfo|no such host|name resolution)\b`), "a host the server needs could not be resolved"},
		{regexp.MustCompile(`(?i)\b(ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH|network is unreachable|fetch failed)\b`), "the network the server needs is unreachable"},
		{regexp.MustCompile(`(?i)\b(credentials?|config(uration)?|keys?|tokens?)\b[^\n]{0,40}\b(ENOENT|no such file)`), "a file the server needs (its credentials or configuration) is not there"},
		{regexp.MustCompile(`(?i)\b(cannot|could not|unable to) find (a |the )?config(uration)? file\b`), "a file the server needs (its credentials or configuration) is not there"},
		{regexp.MustCompile(`(?i)\b(api[ _-]?key|access[ _-]?token|credentials?|secret)\b[^.]{0,40}[^.\w](missing|not set|not provided|required|invalid|expired|incorrect|rejected|unauthori[sz]ed)\b`), "a credential the server needs is missing or was refused"},
		{regexp.MustCompile(`(?i)(^|[^.\w])(missing|invalid|incorrect|expired)\b.{0,20}\b(api[ _-]?key|access[ _-]?token|credentials?)\b`), "a credential the server needs is missing or was refused"},
		{regexp.MustCompile(`(?i)\b(401 unauthorized|403 forbidden|status code 40[13]|invalid_api_key|authentication failed)\b`), "a service the server calls refused its credentials"},
		{regexp.MustCompile(`(?i)environment variable\b.{0,60}\b(not set|missing|required|undefined)\b|\b(is not set|must be set)\b`), "an environment variable the server needs is not set"},
		{regexp.MustCompile(`(?i)\b(database|db|redis|postgres|mysql|mongo\w*)\b.{0,40}\b(not running|unavailable|refused|failed to connect|could not connect|does not exist)\b`), "a database the server needs is not available"},
	}
})

type envSign struct {
	re  *regexp.Regexp
	why string
}

// Environmental reports whether text (an error, a result's text, stderr)
// looks like a failure of the server's environment, and why.
func Environmental(text string) (string, bool) {
	for _, e := range environmental() {
		if e.re.MatchString(text) {
			return e.why, true
		}
	}
	return "", false
}

// environmentHint is what a report of an environment failure says to do.
const environmentHint = "check the server's configuration: its environment variables, credentials and the services it needs"

// serverFailures are the rules whose findings carry what the server said
// when a request it should have answered failed: only there can the
// failure be its environment's. (Rules on the transport, the framing or
// the shapes of answers never are.)
var serverFailures = map[string]bool{
	ruleCapabilitiesDeclaredWorks.ID: true, ruleResourcesReadable.ID: true, rulePromptsGet.ID: true,
	ruleToolsCallResult.ID: true, ruleCompletionAnswers.ID: true,
}

// divertEnvironment takes a finding that is an error of the server's
// environment out of the findings: an internal error that says a service
// refused, a credential is missing… is no protocol defect.
func (r *run) divertEnvironment(f Finding) bool {
	if f.Severity != Error || !serverFailures[f.Rule] {
		return false
	}
	why, ok := Environmental(f.Message)
	if !ok {
		return false
	}
	r.env = append(r.env, Environment{Subject: f.Subject, Message: strings.TrimSpace(f.Message), Why: why})
	return true
}
