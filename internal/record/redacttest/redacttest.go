// Package redacttest gives the tests of every report format the same
// secrets, and every spelling a report may give them: a test feeds them
// to its format and asserts that none survives. It is for tests only.
package redacttest

import (
	"encoding/json"
	"encoding/xml"
	"net/url"
	"strconv"
	"strings"
)

// Secrets are values that need each kind of escape: plain, a JSON and Go
// quote and backslash, XML's and the shell's specials, a URL's, and
// non-ASCII.
var Secrets = []string{
	"tok-Hb5vN8cJ3qLw",
	`s3cr"t&pass`,
	`pa"ss\word-0123456789`,
	`it's <b>&amp; co`,
	"k3y with spaces/and?query=1",
	"pässwörd-ünïcode",
}

// Spellings are the ways a report may write secret, made with the
// encoders the writers use: as it is; JSON-escaped once and twice; Go
// quoted (%q), also after JSON; XML-escaped as encoding/xml writes text
// and as named entities; single-quoted for a shell, both ways; URL-encoded
// as a query and as a path; and what a cut leaves of it, its beginning
// before "…" and its end after it.
func Spellings(secret string) []string {
	var out []string
	add := func(s string) {
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	add(secret)
	once := jsonInner(secret)
	add(once)
	add(jsonInner(once))
	for _, s := range []string{secret, once} {
		q := strconv.Quote(s)
		add(q[1 : len(q)-1])
	}
	var x strings.Builder
	_ = xml.EscapeText(&x, []byte(secret))
	add(x.String())
	add(strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(secret))
	add(strings.ReplaceAll(secret, "'", `'\''`))
	add(strings.ReplaceAll(secret, "'", `'"'"'`))
	add(url.QueryEscape(secret))
	add(url.PathEscape(secret))
	return out
}

// Cuts are texts in which a cut left part of secret: its beginning
// before the cut's "…", its end after one.
func Cuts(secret string) []string {
	half := len(secret) / 2
	return []string{"left: " + secret[:half] + "… (12 bytes)", "…" + secret[half:]}
}

// Leaks are the parts of secret a redacted text must not hold: the
// beginning and the end of each spelling, at least 5 bytes each, so that
// what a cut left is found too.
func Leaks(secret string) []string {
	var out []string
	for _, s := range Spellings(secret) {
		n := max(5, len(s)/2)
		out = append(out, s[:min(n, len(s))], s[len(s)-min(n, len(s)):])
	}
	return out
}

func jsonInner(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
