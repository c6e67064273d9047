package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/config"
	"github.com/mcpi-dev/mcpi/internal/record/redacttest"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

func TestRedactURL(t *testing.T) {
	r := NewRedactor([]string{"my-secret-path"})
	for in, want := range map[string]string{
		"https://example.com/mcp":                                   "https://example.com/mcp",
		"https://example.com/mcp?":                                  "https://example.com/mcp?",
		"https://example.com/mcp?session=1&x":                       "https://example.com/mcp?session=1&x",
		"https://example.com/mcp?access_token=a&b=2":                "https://example.com/mcp?access_token=[REDACTED]&b=2",
		"https://example.com/cb?code=xyz&state=s1":                  "https://example.com/cb?code=[REDACTED]&state=s1",
		"https://example.com/?API_KEY=1&apikey=2&key=3&token=4":     "https://example.com/?API_KEY=[REDACTED]&apikey=[REDACTED]&key=[REDACTED]&token=[REDACTED]",
		"https://example.com/?client%5Fsecret=1&client_id=c":        "https://example.com/?client%5Fsecret=[REDACTED]&client_id=c",
		"https://example.com/?token=":                               "https://example.com/?token=",
		"https://user:pass@example.com/mcp":                         "https://user:[REDACTED]@example.com/mcp",
		"https://ghp_tok@example.com/mcp":                           "https://[REDACTED]@example.com/mcp",
		"https://example.com/a@b":                                   "https://example.com/a@b",
		"https://example.com/cb#access_token=t&token_type=bearer":   "https://example.com/cb#access_token=[REDACTED]&token_type=[REDACTED]",
		"https://example.com/page#section":                          "https://example.com/page#section",
		"https://example.com/my-secret-path/mcp":                    "https://example.com/[REDACTED]/mcp",
		"https://example.com/?q=my-secret-path":                     "https://example.com/?q=[REDACTED]",
		"not a url ?token=1":                                        "not a url ?token=[REDACTED]",
		"http://127.0.0.1:8080/sse?sessionId=abc&signature=zz#frag": "http://127.0.0.1:8080/sse?sessionId=abc&signature=[REDACTED]#frag",
	} {
		if got := r.URL(in); got != want {
			t.Errorf("URL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRedactHeaderValue(t *testing.T) {
	r := NewRedactor([]string{"s3cret-value"})
	for _, tc := range []struct{ name, in, want string }{
		{"Authorization", "Bearer abc.def.ghi", "Bearer [REDACTED]"},
		{"authorization", "Basic dXNlcjpwYXNz", "Basic [REDACTED]"},
		{"Authorization", "rawtoken", Redacted},
		{"Authorization", "user pass", Redacted},
		{"Authorization", "token ghp_x", "token [REDACTED]"},
		{"Authorization", "", ""},
		{"Proxy-Authorization", "Digest username=\"u\", response=\"r\"", "Digest [REDACTED]"},
		{"Cookie", "a=1; b=2", "a=[REDACTED]; b=[REDACTED]"},
		{"Set-Cookie", "sid=1; Path=/; Secure", "sid=[REDACTED]; Path=/; Secure"},
		{"Set-Cookie", "sid=1", "sid=[REDACTED]"},
		{"X-Api-Key", "k", Redacted},
		{"X-Goog-Api-Key", "k", Redacted},
		{"X-Auth-Token", "Bearer t", "Bearer [REDACTED]"},
		{"X-Client-Secret", "cs", Redacted},
		{"Authorization", "DPoP eyJhbGciOi.e30.sig", "DPoP [REDACTED]"},
		{"DPoP", "eyJ0eXAiOiJkcG9wK2p3dCJ9.e30.sig", Redacted},
		{"DPoP-Nonce", "n-1", "n-1"},
		{"WWW-Authenticate", `Bearer error="invalid_token"`, `Bearer error="invalid_token"`},
		{"Proxy-Authenticate", "Basic realm=x", "Basic realm=x"},
		{"Mcp-Session-Id", "abc", "abc"},
		{"Content-Type", "application/json", "application/json"},
		{"X-Debug", "value s3cret-value here", "value [REDACTED] here"},
	} {
		if got := r.HeaderValue(tc.name, tc.in); got != tc.want {
			t.Errorf("HeaderValue(%q, %q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	r := NewRedactor([]string{"pa55word"})
	in := []string{
		"call", "echo", "text=pa55word",
		"-H", "Authorization: Bearer t1", "--header=X-Api-Key: k1", "-HCookie: c=1", "-H", "Accept: text/plain",
		"-e", "GITHUB_TOKEN=g1", "--env=DEBUG=1", "-eFOO=bar",
		"--record", "trace.jsonl",
		"--", "npx", "server", "--api-key", "k2", "--token=t2", "--no-auth", "--auth-url", "https://a.example/?code=c1",
		"env", "OPENAI_API_KEY=o1", "PORT=80", "https://x.example/?access_token=a1",
	}
	want := []string{
		"call", "echo", "text=[REDACTED]",
		"-H", "Authorization: Bearer [REDACTED]", "--header=X-Api-Key: [REDACTED]", "-HCookie: c=[REDACTED]", "-H", "Accept: text/plain",
		"-e", "GITHUB_TOKEN=[REDACTED]", "--env=DEBUG=[REDACTED]", "-eFOO=[REDACTED]",
		"--record", "trace.jsonl",
		"--", "npx", "server", "--api-key", "[REDACTED]", "--token=[REDACTED]", "--no-auth", "--auth-url", "https://a.example/?code=[REDACTED]",
		"env", "OPENAI_API_KEY=[REDACTED]", "PORT=80", "https://x.example/?access_token=[REDACTED]",
	}
	got := r.Args(in)
	if !reflect.DeepEqual(got, want) {
		for i := range want {
			if i < len(got) && got[i] != want[i] {
				t.Errorf("arg %d: %q, want %q", i, got[i], want[i])
			}
		}
		t.Fatalf("Args:\n got %q\nwant %q", got, want)
	}
	if in[2] != "text=pa55word" {
		t.Errorf("Args modified its input")
	}
}

func TestRedactJSON(t *testing.T) {
	r := NewRedactor([]string{"hunter2!", "hunter2!xyz", `q"uote`, "tab\there", "short"})
	for _, tc := range []struct{ in, want string }{
		{`{"a":"b"}`, `{"a":"b"}`},
		{`{"pw":"hunter2!"}`, `{"pw":"[REDACTED]"}`},
		{`{"pw":"xhunter2!xyzx"}`, `{"pw":"x[REDACTED]x"}`},
		{`{"hunter2!":1}`, `{"[REDACTED]":1}`},
		{`["q\"uote", "tab\there", "tab\u0009here"]`, `["[REDACTED]", "[REDACTED]", "[REDACTED]"]`},
		{`{"pw":"hunter2\u0021","n":"\u00e9\n"}`, `{"pw":"[REDACTED]","n":"\u00e9\n"}`},
		{`{"pw":"h\u0075nter2! and \"more\" \u2028"}`, "{\"pw\":\"[REDACTED] and \\\"more\\\" \u2028\"}"},
		{`{"n":12345,"s":"shor"}`, `{"n":12345,"s":"shor"}`},
		{`{"s":"\ud83d\ude00 hunter2!"}`, `{"s":"😀 [REDACTED]"}`},
		{`{"s":"\"hunter2!\""}`, `{"s":"\"[REDACTED]\""}`},
	} {
		got, changed := r.JSON([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("JSON(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if changed != (tc.in != tc.want) {
			t.Errorf("JSON(%s): changed = %v", tc.in, changed)
		}
		if !json.Valid(got) {
			t.Errorf("JSON(%s) = %s: not valid JSON", tc.in, got)
		}
	}
	in := []byte(`{"untouched":"x"}`)
	if out, _ := r.JSON(in); &out[0] != &in[0] {
		t.Errorf("JSON copied a frame with nothing to redact")
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:              "plain",
		`a\"b\\c\/d`:         `a"b\c/d`,
		`\b\f\n\r\t`:         "\b\f\n\r\t",
		`\u00e9\u20AC`:       "é€",
		`\ud83d\ude00`:       "😀",
		`\ud83d`:             "\uFFFD",
		`\ud83dx`:            "\uFFFDx",
		`\ude00\ud83d\u0041`: "\uFFFD\uFFFDA",
		`\uzzzz`:             `\uzzzz`,
		`\u12`:               `\u12`,
		`\x`:                 `\x`,
		`end\`:               `end\`,
	} {
		if got := string(unescape(nil, []byte(in))); got != want {
			t.Errorf("unescape(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedactJSON checks that redaction keeps JSON valid and leaves no
// secret in any string.
func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"a":"secret1"}`, "secret1")
	f.Add(`["x\"secret\\2\"", {"k\u0065y":"v"}]`, `secret\2`)
	f.Add(`{"s":"\u00e9t\u00e9 s\u00e9cr\u00e8t"}`, "sécrèt")
	f.Add(`"\ud83d\ude00😀"`, "😀😀")
	f.Fuzz(func(t *testing.T, doc, secret string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		r := NewRedactor([]string{secret})
		out, _ := r.JSON([]byte(doc))
		if !json.Valid(out) {
			t.Fatalf("JSON(%s) = %s: not valid", doc, out)
		}
		if len(secret) < MinSecretLen || strings.Contains(Redacted, secret) {
			return
		}
		// UseNumber: a valid document may hold a number no float64 holds.
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				// encoding/json turns invalid UTF-8 into U+FFFD, which the
				// redactor, working on the bytes, did not see.
				if strings.Contains(v, secret) && !strings.Contains(v, "\uFFFD") && !bytes.Contains([]byte(v), []byte(Redacted)) {
					t.Fatalf("secret %q left in %q (from %s)", secret, v, doc)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					walk(k)
					walk(e)
				}
			}
		}
		walk(v)
	})
}

// TestSecretInJSONTextInJSON: a secret with a quote and a backslash is
// redacted where JSON escapes it once (a frame's string) and twice (JSON
// text a tool returns inside a frame's string).
func TestSecretInJSONTextInJSON(t *testing.T) {
	const secret = `hunter2"very\secret`
	r := NewRedactor([]string{secret})
	inner, _ := json.Marshal(map[string]string{"SECRET_TOKEN": secret})
	frame, _ := json.Marshal(map[string]any{"result": map[string]any{"content": []any{map[string]string{"type": "text", "text": string(inner)}}}, "raw": secret})
	out, changed := r.JSON(frame)
	if !changed || bytes.Contains(out, []byte("hunter2")) || !json.Valid(out) {
		t.Errorf("changed %v: %s", changed, out)
	}
	if got := r.String("stderr: " + string(inner)); strings.Contains(got, "hunter2") {
		t.Errorf("a stderr line keeps it: %s", got)
	}
}

// TestEverySpellingIsRedacted: each spelling of a secret a report may
// give it, and what a cut leaves of one, is redacted by every method a
// writer calls, and by a trace's events.
func TestEverySpellingIsRedacted(t *testing.T) {
	r := NewRedactor(redacttest.Secrets)
	for _, secret := range redacttest.Secrets {
		texts := append(redacttest.Spellings(secret), redacttest.Cuts(secret)...)
		for _, text := range texts {
			in := "before " + text + " after"
			frame, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]string{"text": in}})
			ev := r.Event(transport.Event{Kind: transport.KindLifecycle, Text: SpawnPrefix + "1: server " + strconv.Quote("--x="+in), Err: in})
			stderr := r.Event(transport.Event{Kind: transport.KindStderr, Data: []byte(in)})
			fr := r.Event(transport.Event{Kind: transport.KindFrame, Data: frame})
			bs, _ := r.Bytes([]byte(in))
			for what, got := range map[string]string{
				"String": r.String(in), "Text": r.Text(in), "Clean": r.Clean(in).String(), "Bytes": string(bs),
				"lifecycle": ev.Text + ev.Err, "stderr": string(stderr.Data), "frame": string(fr.Data),
			} {
				if what == "Bytes" || what == "frame" {
					if strings.Contains(text, "…") {
						continue // a cut is a report's, not a frame's
					}
				}
				for _, leak := range redacttest.Leaks(secret) {
					if strings.Contains(got, leak) {
						t.Errorf("%s(%q) = %q: holds %q", what, in, got, leak)
						break
					}
				}
			}
		}
		if !r.Holds(secret) || r.Holds("nothing secret here") {
			t.Errorf("Holds(%q) is wrong", secret)
		}
	}
	// The words around a secret stay.
	if got := r.String("a tok-Hb5vN8cJ3qLw b"); got != "a "+Redacted+" b" {
		t.Errorf("String = %q", got)
	}
}

// TestRedactURLKeepsTheTextAround: the punctuation after a URL in a
// message stays the message's.
func TestRedactURLKeepsTheTextAround(t *testing.T) {
	r := NewRedactor(nil)
	in := `initialize: POST http://127.0.0.1:9/mcp?key=tok-Hb5vN8cJ3qLw: dial tcp: refused. See https://h/x?token=abc, then`
	want := `initialize: POST http://127.0.0.1:9/mcp?key=[REDACTED]: dial tcp: refused. See https://h/x?token=[REDACTED], then`
	if got := r.Text(in); got != want {
		t.Errorf("Text = %q\nwant %q", got, want)
	}
}

// TestSecretNames: a name that says credential marks its value secret; a
// long value is not one for its length alone.
func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{"API_KEY": true, "GITHUB_TOKEN": true, "DB_PASSWORD": true, "client_secret": true, "T4_DIR": false, "HOME": false} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%s) = %v", name, got)
		}
	}
}

// A configured server's secrets: its secret-looking environment values
// and its headers' values, with and without their scheme.
func TestServerSecrets(t *testing.T) {
	s := config.Server{Env: map[string]string{"API_KEY": "k-123456", "DEBUG": "1"},
		Headers: map[string]string{"Authorization": "Bearer tok-abcdef", "X-Team": "blue", "Accept": "application/json, text/event-stream"}}
	got := ServerSecrets(s)
	slices.Sort(got)
	// Not text/event-stream alone: it would hide every SSE answer's
	// Content-Type in a trace.
	want := []string{"Bearer tok-abcdef", "application/json, text/event-stream", "blue", "k-123456", "tok-abcdef"}
	if !slices.Equal(got, want) {
		t.Errorf("ServerSecrets = %q, want %q", got, want)
	}
}
