package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcpi-dev/mcpi/internal/transport"
)

// The spawn event of a stdio server whose command line holds secrets
// (--api-key X, --token=X, FOO_API_KEY=X...) reaches the trace with those
// values redacted, by the rule Args applies to the header's command line;
// plain arguments stay. The server is a real process.
func TestSpawnEventRedacted(t *testing.T) {
	secrets := []string{"sk-live-abcdef", "tok-secret-1", "hunter22x", "envsecret1", "s3cr3t val"}
	args := []string{"-c", "exit 0", "sh", "--api-key", secrets[0], "--token=" + secrets[1], "--password", secrets[2],
		"FOO_API_KEY=" + secrets[3], "--secret", secrets[4], "plain-arg", "MODE=demo"}
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{}, Options{FlushInterval: time.Millisecond})
	s, err := transport.Spawn(transport.StdioOptions{Command: "/bin/sh", Args: args, Tap: w, ShutdownGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	trace := buf.String()
	if !strings.Contains(trace, "spawned pid") {
		t.Fatalf("no spawn event in\n%s", trace)
	}
	for _, sec := range secrets {
		if strings.Contains(trace, sec) || strings.Contains(trace, strings.ReplaceAll(sec, " ", `\" `)) {
			t.Errorf("the trace holds %q:\n%s", sec, trace)
		}
	}
	for _, keep := range []string{"plain-arg", "MODE=demo", "--api-key " + Redacted, "--token=" + Redacted, "FOO_API_KEY=" + Redacted} {
		if !strings.Contains(trace, keep) {
			t.Errorf("the trace lacks %q:\n%s", keep, trace)
		}
	}
}

func TestSplitCommandLine(t *testing.T) {
	words := []string{"npx", "-y", "a b", "", `q"uote`, "$HOME", "x=y"}
	line := joinCommandLine(words)
	got := splitCommandLine(line)
	if strings.Join(got, "|") != strings.Join(words, "|") || len(got) != len(words) {
		t.Errorf("split(join(%q)) = %q (line %s)", words, got, line)
	}
}
