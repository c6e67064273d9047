// Package browser opens URLs a server gave in the user's browser, under
// one rule: only an absolute http or https URL is opened; anything else
// (file:, javascript:, a string that starts with "-") is for the caller to
// show, never to hand to an opener.
package browser

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Check returns the URL to open: raw parsed, required to be an absolute
// http or https URL with a host, and written again by net/url, so that it
// begins with "http://" or "https://" and no opener can take it for an
// option. Otherwise it says why raw is not opened.
func Check(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("not an absolute URL: %v", err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return "", fmt.Errorf("only http and https URLs are opened, not %q ones", u.Scheme)
	}
	if u.Host == "" || u.Opaque != "" || u.User != nil {
		return "", errors.New("only absolute http and https URLs with a host (and no user name) are opened")
	}
	s := u.String()
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return "", errors.New("the URL does not start with http:// or https://")
	}
	return s, nil
}

// Open opens raw in the user's browser ($BROWSER, or the platform's
// opener) when Check allows it, and does not wait for the browser. The URL
// is the opener's one argument after the command itself; it starts with
// "http", so it is never read as an option (xdg-open takes no "--").
func Open(raw string) error {
	u, err := Check(raw)
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	switch b := os.Getenv("BROWSER"); {
	case b != "":
		cmd = exec.Command(b, u)
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", u)
	case runtime.GOOS == "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display (neither DISPLAY nor WAYLAND_DISPLAY is set); open the URL yourself")
		}
		path, err := exec.LookPath("xdg-open")
		if err != nil {
			return errors.New("no browser opener (xdg-open) found; open the URL yourself")
		}
		cmd = exec.Command(path, u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's exit status says nothing useful
	return nil
}
