package record

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Redacted replaces a secret in a trace.
const Redacted = "[REDACTED]"

// MinSecretLen is the length under which a secret value is not looked for:
// a value of one to three bytes ("1", "on", "dev") cannot be told apart
// from ordinary text, and replacing it everywhere would wreck the trace.
const MinSecretLen = 4

// A Redactor removes secrets from what goes into a trace: the values of
// credential headers, credential query parameters and userinfo passwords in
// URLs, and any occurrence of the secret values it was given (the user's
// -e values). It is safe for concurrent use.
//
// Redaction keeps what helps debugging: the auth scheme ("Bearer
// [REDACTED]"), cookie names, query parameter names, and the structure of a
// frame. A frame stays valid JSON: secret values are replaced inside its
// JSON strings, decoded, so that a secret written with escapes
// ("p\u00e4ss") is found too.
type Redactor struct {
	// secrets are every spelling of every secret (Spellings), longest
	// first, so that a spelling containing another goes first.
	secrets [][]byte
}

// JSONForms returns s and the forms it takes inside JSON strings: escaped
// once, and twice (JSON text inside a JSON string); each form once.
func JSONForms(s string) []string {
	out := []string{s}
	for f := s; len(out) < 3; {
		b, _ := json.Marshal(f)
		next := string(b[1 : len(b)-1])
		if next == f {
			break
		}
		out = append(out, next)
		f = next
	}
	return out
}

// NewRedactor returns a Redactor that also replaces each of secrets
// (values shorter than MinSecretLen are ignored), in every spelling a
// report or a trace may give it (Spellings).
func NewRedactor(secrets []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < MinSecretLen || seen[s] {
			continue
		}
		for _, f := range Spellings(s) {
			if !seen[f] {
				seen[f] = true
				r.secrets = append(r.secrets, []byte(f))
			}
		}
	}
	slices.SortFunc(r.secrets, func(a, b []byte) int { return cmp.Compare(len(b), len(a)) })
	return r
}

// Spellings are the ways s may be written in what mcpi writes: as it is;
// escaped in a JSON string, once or twice (JSON text inside a JSON
// string); quoted as Go quotes it (a failure, a command line), also after
// JSON; escaped in XML (JUnit) and in HTML's way; inside single quotes in
// a shell (both ways of writing a quote there); and escaped in a URL's
// query or path. A secret cut in two by a report's bound is caught by
// String, not listed here.
func Spellings(s string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, f := range JSONForms(s) {
		add(f)
		q := strconv.Quote(f)
		add(q[1 : len(q)-1])
		q = strconv.QuoteToASCII(f)
		add(q[1 : len(q)-1])
	}
	var x strings.Builder
	_ = xml.EscapeText(&x, []byte(s))
	add(x.String())
	add(html.EscapeString(s))
	add(xmlEntities.Replace(s))
	add(strings.ReplaceAll(s, "'", `'\''`))
	add(strings.ReplaceAll(s, "'", `'"'"'`))
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	return out
}

// xmlEntities escapes as XML's named entities do.
var xmlEntities = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// Holds reports whether s holds a secret, in any of its spellings.
func (r *Redactor) Holds(s string) bool {
	if r == nil {
		return false
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, string(sec)) {
			return true
		}
	}
	return r.cutHalves(s) != s
}

// secretWords mark a header or query parameter as a credential when
// its name contains one of them.
var secretWords = []string{"token", "secret", "key", "auth", "password", "passwd", "credential", "signature"}

// IsSecretHeader reports whether the value of header name is redacted.
// WWW-Authenticate and Proxy-Authenticate are challenges, not credentials,
// and are kept: they are what one reads to debug an OAuth failure.
func IsSecretHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "www-authenticate", "proxy-authenticate":
		return false
	case "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
		"dpop": // a DPoP proof (RFC 9449): signed by the client's key, bound to a token
		return true
	}
	return containsAny(n, secretWords)
}

// IsSecretEnv reports whether an environment variable given to a server
// (-e, or a config entry's env) must be kept out of traces: its name says
// it holds a credential, or its value is long enough to be one. Short,
// plainly named values ("MODE=demo") stay, or a trace would lose every
// occurrence of an ordinary word.
func IsSecretEnv(name, value string) bool {
	return IsSecretName(name) || len(value) >= minSecretEnvLen
}

// ServerSecrets are the values a configured server's entry holds secret:
// its environment's values that look secret (IsSecretEnv) and its
// headers' values; a credential header's ("Authorization: Bearer TOKEN",
// IsSecretHeader) also without its scheme, as a failure may quote the
// token alone. Another header's words are not secret each ("Accept:
// application/json, text/event-stream").
func ServerSecrets(s config.Server) []string {
	var out []string
	for k, v := range s.Env {
		if IsSecretEnv(k, v) {
			out = append(out, v)
		}
	}
	for k, v := range s.Headers {
		out = append(out, v)
		if !IsSecretHeader(k) {
			continue
		}
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	return out
}

// IsSecretName reports whether the name of an environment variable says
// that it holds a credential (API_KEY, GITHUB_TOKEN, DB_PASSWORD...),
// whatever its value.
func IsSecretName(name string) bool {
	return containsAny(strings.ToLower(name), secretWords)
}

// Clean is text that crossed a Redactor: only Redactor.Clean makes one,
// so that a report written of Clean values cannot hold a byte the
// redactor did not see. Its zero value is the empty text.
type Clean struct{ s string }

// Clean redacts s as Text does.
func (r *Redactor) Clean(s string) Clean { return Clean{s: r.Text(s)} }

// String is the redacted text.
func (c Clean) String() string { return c.s }

// IsZero reports whether c is empty (json's omitzero).
func (c Clean) IsZero() bool { return c.s == "" }

// MarshalText writes the redacted text (JSON, XML).
func (c Clean) MarshalText() ([]byte, error) { return []byte(c.s), nil }

// minSecretEnvLen is the length from which any env value counts as secret.
const minSecretEnvLen = 12

// isSecretParam reports whether a URL query parameter holds a credential.
func isSecretParam(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "code", "sig", "pwd", "pass", "apikey":
		return true
	}
	return containsAny(n, secretWords)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// HeaderValue returns the value of header name as it goes into a trace.
func (r *Redactor) HeaderValue(name, value string) string {
	if value != "" && IsSecretHeader(name) {
		value = redactHeaderValue(strings.ToLower(name), value)
	}
	return r.String(value)
}

// Header returns a redacted copy of h.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for name, vs := range h {
		rv := make([]string, len(vs))
		for i, v := range vs {
			rv[i] = r.HeaderValue(name, v)
		}
		out[name] = rv
	}
	return out
}

func redactHeaderValue(lname, v string) string {
	switch {
	case lname == "cookie":
		// name=value; name2=value2: keep the names.
		parts := strings.Split(v, ";")
		for i, p := range parts {
			parts[i] = redactPair(p)
		}
		return strings.Join(parts, ";")
	case lname == "set-cookie":
		// name=value; Path=/; HttpOnly: the attributes are not secret.
		first, rest, _ := strings.Cut(v, ";")
		if rest != "" {
			return redactPair(first) + ";" + rest
		}
		return redactPair(first)
	}
	// Keep a known auth scheme: "Bearer [REDACTED]", "Basic [REDACTED]".
	// An unknown first word may be part of the secret ("user pass").
	if scheme, rest, ok := strings.Cut(v, " "); ok && authSchemes[strings.ToLower(scheme)] && strings.TrimSpace(rest) != "" {
		return scheme + " " + Redacted
	}
	return Redacted
}

// authSchemes are the HTTP authentication schemes whose name is kept.
var authSchemes = map[string]bool{
	"basic": true, "bearer": true, "digest": true, "dpop": true, "negotiate": true, "ntlm": true,
	"token": true, "mac": true, "hoba": true, "mutual": true, "vapid": true, "apikey": true,
	"scram-sha-1": true, "scram-sha-256": true, "aws4-hmac-sha256": true, "gnap": true, "privatetoken": true,
}

// redactPair turns " name=value" into " name=[REDACTED]".
func redactPair(p string) string {
	name, _, ok := strings.Cut(p, "=")
	if !ok {
		return Redacted
	}
	return name + "=" + Redacted
}

// URL returns u with the password of its userinfo and the values of
// credential query parameters (in the query and in a query-like fragment)
// redacted, and secret values replaced. The rest of u is kept byte for byte,
// parameter order included.
func (r *Redactor) URL(u string) string {
	return r.String(redactURL(u))
}

func redactURL(u string) string {
	frag, hasFrag := "", false
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u, frag, hasFrag = u[:i], u[i+1:], true
	}
	query, hasQuery := "", false
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u, query, hasQuery = u[:i], u[i+1:], true
	}
	if i := strings.Index(u, "://"); i >= 0 {
		authEnd := len(u)
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			authEnd = i + 3 + j
		}
		authority := u[i+3 : authEnd]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			// user:password@ keeps the user; a lone user@ is often a token.
			userinfo := Redacted
			if user, _, ok := strings.Cut(authority[:at], ":"); ok {
				userinfo = user + ":" + Redacted
			}
			u = u[:i+3] + userinfo + u[i+3+at:]
		}
	}
	var b strings.Builder
	b.WriteString(u)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(query))
	}
	if hasFrag {
		b.WriteByte('#')
		if strings.Contains(frag, "=") {
			frag = redactQuery(frag)
		}
		b.WriteString(frag)
	}
	return b.String()
}

func redactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	changed := false
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || value == "" {
			continue
		}
		n, err := url.QueryUnescape(name)
		if err != nil {
			n = name
		}
		if isSecretParam(n) {
			parts[i] = name + "=" + Redacted
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// Text redacts free text (a lifecycle message, an error, a stderr line):
// URLs in it are redacted as by URL, and secret values are replaced.
func (r *Redactor) Text(s string) string {
	return r.String(redactURLsIn(s))
}

// redactURLsIn redacts each http(s) URL found in s. A URL ends at white
// space or at a quote or bracket, as it does in Go's error messages
// (Post "https://host/mcp?token=x": dial tcp ...).
func redactURLsIn(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := indexURL(rest)
		if i < 0 {
			break
		}
		end := i + strings.IndexFunc(rest[i:], func(c rune) bool {
			return c <= ' ' || strings.ContainsRune("\"'<>`()[]{}", c)
		})
		if end < i {
			end = len(rest)
		}
		// Punctuation that ends a sentence or a clause is the text's,
		// not the URL's ("POST http://h/mcp?key=K: dial tcp").
		for end > i && strings.IndexByte(".,:;!?", rest[end-1]) >= 0 {
			end--
		}
		b.WriteString(rest[:i])
		b.WriteString(redactURL(rest[i:end]))
		rest = rest[end:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

func indexURL(s string) int {
	i := strings.Index(s, "http://")
	if j := strings.Index(s, "https://"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	return i
}

// String replaces every secret value in s, in each of its spellings, and
// what a cut left of one beside the "…" that marks the cut.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, string(sec)) {
			s = strings.ReplaceAll(s, string(sec), Redacted)
		}
	}
	return r.cutHalves(s)
}

// cutMark is how mcpi marks a cut (bounds.ClipTo and the reports).
const cutMark = "…"

// cutHalves replaces, beside each cut mark of s, the part of a secret (in
// any spelling) the cut left: its beginning before the mark, its end
// after it (at least MinSecretLen bytes of it).
func (r *Redactor) cutHalves(s string) string {
	if !strings.Contains(s, cutMark) || len(r.secrets) == 0 {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, cutMark)
		if i < 0 {
			break
		}
		before := rest[:i]
		for _, sec := range r.secrets {
			if n := longestSuffixPrefix(before, string(sec)); n >= MinSecretLen {
				before = before[:len(before)-n] + Redacted
				break
			}
		}
		b.WriteString(before)
		b.WriteString(cutMark)
		rest = rest[i+len(cutMark):]
		for _, sec := range r.secrets {
			if n := longestPrefixSuffix(rest, string(sec)); n >= MinSecretLen {
				b.WriteString(Redacted)
				rest = rest[n:]
				break
			}
		}
	}
	b.WriteString(rest)
	return b.String()
}

// longestSuffixPrefix is the length of the longest end of s that begins
// sec (shorter than sec: a whole one is already out).
func longestSuffixPrefix(s, sec string) int {
	for n := min(len(s), len(sec)-1); n > 0; n-- {
		if strings.HasSuffix(s, sec[:n]) {
			return n
		}
	}
	return 0
}

// longestPrefixSuffix is the length of the longest beginning of s that
// ends sec.
func longestPrefixSuffix(s, sec string) int {
	for n := min(len(s), len(sec)-1); n > 0; n-- {
		if strings.HasPrefix(s, sec[len(sec)-n:]) {
			return n
		}
	}
	return 0
}

// Bytes replaces every secret value in b, which may be anything (a bad
// frame, a stderr line). It returns b itself when no secret occurs in it.
func (r *Redactor) Bytes(b []byte) ([]byte, bool) {
	if r == nil {
		return b, false
	}
	changed := false
	for _, sec := range r.secrets {
		if bytes.Contains(b, sec) {
			b = bytes.ReplaceAll(b, sec, []byte(Redacted))
			changed = true
		}
	}
	return b, changed
}

// JSON replaces every secret value inside the strings (keys included) of
// the JSON text data. The result is valid JSON if data was; only the
// strings that held a secret are re-encoded, every other byte is kept. It
// returns data itself when no secret occurs in it.
func (r *Redactor) JSON(data []byte) ([]byte, bool) {
	if r == nil || len(r.secrets) == 0 {
		return data, false
	}
	if bytes.IndexByte(data, '\\') < 0 {
		// No escapes: a secret occurs in a string only as its own bytes.
		found := false
		for _, sec := range r.secrets {
			if bytes.Contains(data, sec) {
				found = true
				break
			}
		}
		if !found {
			return data, false
		}
	}
	var out, scratch []byte
	last := 0 // data[last:] is not yet in out
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			break
		}
		open := i + j
		end, esc := open+1, false
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' {
				esc = true
				end++
			}
			end++
		}
		if end >= len(data) {
			break // unterminated: not JSON, leave it alone
		}
		body := data[open+1 : end]
		i = end + 1
		if len(body) < MinSecretLen {
			continue
		}
		var repl []byte
		if !esc {
			// The body is the string itself, and Redacted needs no escape.
			if b, hit := r.Bytes(body); hit {
				repl = b
			}
		} else {
			if cap(scratch) < len(body) {
				scratch = make([]byte, 0, len(body)) // never longer decoded
			}
			scratch = unescape(scratch[:0], body)
			if dec, hit := r.Bytes(scratch); hit {
				repl = appendEscaped(nil, dec)
			}
		}
		if repl == nil {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data))
		}
		out = append(out, data[last:open+1]...)
		out = append(out, repl...)
		last = end
	}
	if out == nil {
		return data, false
	}
	return append(out, data[last:]...), true
}

// Args redacts a command line: the values of -H/--header options (as
// headers), of -e/--env options and NAME=VALUE arguments whose name looks
// secret, of options whose name looks secret (--api-key X, --token=X), the
// URLs among the arguments, and every secret value. It returns a copy.
func (r *Redactor) Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		flag, _, hasVal := strings.Cut(a, "=")
		lflag := strings.ToLower(strings.TrimLeft(flag, "-"))
		switch {
		case a == "-H" || a == "--header":
			if i+1 < len(out) {
				i++
				out[i] = redactHeaderLine(out[i])
			}
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redactHeaderLine(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			out[i] = "-H" + redactHeaderLine(a[2:])
		case a == "-e" || a == "--env":
			if i+1 < len(out) {
				i++
				out[i] = redactEnv(out[i])
			}
		case strings.HasPrefix(a, "--env="):
			out[i] = "--env=" + redactEnv(strings.TrimPrefix(a, "--env="))
		case strings.HasPrefix(a, "-e") && len(a) > 2 && !strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			out[i] = "-e" + redactEnv(a[2:])
		case strings.HasPrefix(a, "-") && containsAny(lflag, secretWords):
			if hasVal {
				out[i] = flag + "=" + Redacted
			} else if i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") && !strings.Contains(out[i+1], "://") {
				i++
				out[i] = Redacted
			}
		case !strings.HasPrefix(a, "-") && strings.Contains(a, "=") && !strings.Contains(a, "://"):
			// NAME=VALUE, as given to env(1) or docker -e.
			if name, _, _ := strings.Cut(a, "="); isSecretParam(name) {
				out[i] = name + "=" + Redacted
			}
		case strings.Contains(a, "://"):
			out[i] = redactURLsIn(a)
		}
	}
	for i := range out {
		out[i] = r.String(out[i])
	}
	return out
}

// SpawnPrefix starts the lifecycle event of a spawned stdio server
// ("spawned pid 42: CMD ARGS...", transport.Spawn); the command line after
// ": " is redacted as Args redacts one.
const SpawnPrefix = "spawned pid "

// spawnText redacts the command line of a spawn event's text.
func (r *Redactor) spawnText(s string) string {
	head, line, ok := strings.Cut(s, ": ")
	if !ok || !strings.HasPrefix(head, SpawnPrefix) {
		return s
	}
	return head + ": " + joinCommandLine(r.Args(splitCommandLine(line)))
}

// splitCommandLine splits a command line as transport.Spawn writes it:
// words separated by spaces, a word with spaces, quotes, backslashes or
// dollars (or an empty one) written as a Go quoted string.
func splitCommandLine(s string) []string {
	var out []string
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		if s[0] == '"' {
			if q, err := strconv.QuotedPrefix(s); err == nil {
				if w, err := strconv.Unquote(q); err == nil {
					out = append(out, w)
					s = s[len(q):]
					continue
				}
			}
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
	return out
}

// joinCommandLine is the inverse of splitCommandLine.
func joinCommandLine(words []string) string {
	parts := make([]string, len(words))
	for i, p := range words {
		if p == "" || strings.ContainsAny(p, " \t\"'\\$") {
			p = strconv.Quote(p)
		}
		parts[i] = p
	}
	return strings.Join(parts, " ")
}

// redactHeaderLine redacts "Name: value" as a header.
func redactHeaderLine(s string) string {
	name, value, ok := strings.Cut(s, ":")
	if !ok || !IsSecretHeader(strings.TrimSpace(name)) {
		return s
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return s
	}
	return name + ": " + redactHeaderValue(strings.ToLower(strings.TrimSpace(name)), v)
}

// redactEnv redacts NAME=VALUE: every -e value is the user's to keep
// private, whatever its name.
func redactEnv(s string) string {
	name, _, ok := strings.Cut(s, "=")
	if !ok {
		return s
	}
	return name + "=" + Redacted
}

// Event returns e with its secrets redacted as a trace would hold them:
// the text, the error, the payload (a frame's JSON strings, a stderr line)
// and the HTTP side (the URL and the credential headers). e is not
// modified; the result shares nothing with it that was redacted.
func (r *Redactor) Event(e transport.Event) transport.Event {
	if e.Kind == transport.KindLifecycle && strings.HasPrefix(e.Text, SpawnPrefix) {
		e.Text = r.spawnText(e.Text)
	}
	e.Text, e.Err = r.Text(e.Text), r.Text(e.Err)
	switch e.Kind {
	case transport.KindFrame:
		if transport.ValidJSON(e.Data) {
			e.Data, _ = r.JSON(e.Data)
		} else {
			e.Data, _ = r.Bytes(e.Data)
		}
	case transport.KindStderr:
		e.Data = []byte(r.Text(string(e.Data)))
	default:
		e.Data, _ = r.Bytes(e.Data)
	}
	if e.HTTP != nil {
		m := *e.HTTP
		m.URL = r.URL(m.URL)
		m.RequestHeader = r.Header(m.RequestHeader)
		m.ResponseHeader = r.Header(m.ResponseHeader)
		e.HTTP = &m
	}
	return e
}
