package browser

import (
	"testing"
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
