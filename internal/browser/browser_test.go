package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"https://auth.example.com/verify?x=1", "http://127.0.0.1:8080/cb", "HTTPS://Example.com"} {
		if _, err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{
		"file:///etc/passwd", "javascript:alert(1)", "--help", "-a", "--", "data:text/html,x",
		"/relative", "example.com", "http:/nohost", "http:opaque", "ftp://example.com/", "",
		"https://user:pw@example.com/", "http://exa mple.com/", "http://example.com/\x1b[2J",
	} {
		if u, err := Check(bad); err == nil {
			t.Errorf("Check(%q) = %q, want a refusal", bad, u)
		}
	}
}

// Open hands the opener only what Check allows, as its one argument: a
// $BROWSER script records its arguments.
func TestOpenPassesOnlyHTTPURLs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "args")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> "+log+"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	for _, bad := range []string{"--new-window=file:///etc/passwd", "file:///etc/passwd", "javascript:alert(1)"} {
		if err := Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	if err := Open("https://auth.example.com/device?code=1"); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for range 100 {
		if got, _ = os.ReadFile(log); len(got) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if strings.TrimSpace(string(got)) != "https://auth.example.com/device?code=1" {
		t.Errorf("the opener got %q, want the one URL", got)
	}
}
