package browser

import (
	"os"
	"os/exec"
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
// $BROWSER script writes its arguments into a named pipe, which the test
// reads once the script is done with it.
func TestOpenPassesOnlyHTTPURLs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "args")
	if err := exec.Command("mkfifo", log).Run(); err != nil {
		t.Skipf("no named pipe (mkfifo) here: %v", err)
	}
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	for _, bad := range []string{"--new-window=file:///etc/passwd", "file:///etc/passwd", "javascript:alert(1)"} {
		if err := Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
	read := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(log) // until the script closes the pipe
		read <- b
	}()
	if err := Open("https://auth.example.com/device?code=1"); err != nil {
		t.Fatal(err)
	}
	var got []byte
	select {
	case got = <-read:
	case <-time.After(30 * time.Second):
		t.Fatal("the opener never ran")
	}
	if strings.TrimSpace(string(got)) != "https://auth.example.com/device?code=1" {
		t.Errorf("the opener got %q, want the one URL", got)
	}
}
