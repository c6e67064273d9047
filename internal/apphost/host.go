package apphost

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpi-dev/mcpi/internal/browser"
	"github.com/mcpi-dev/mcpi/internal/transport"
)

// Host serves an App's page on a loopback port: GET /TOKEN/ is the page,
// POST /TOKEN/app takes a message of the App (relayed by the page), GET
// /TOKEN/events streams the host's messages to the page. The token is
// random; every request must name this machine in its Host and, when it
// has one, in its Origin, which must be the page's own: the App's frame
// is sandboxed without allow-same-origin, so what it sends says Origin:
// null and is refused.
type Host struct {
	b      *Bridge
	ln     net.Listener
	srv    *http.Server
	token  string
	origin string
	ctx    context.Context
	// streaming says a page reads the events.
	streaming atomic.Bool
}

// Listen starts the host of the bridge's App on a loopback port.
func Listen(ctx context.Context, b *Bridge) (*Host, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var tok [16]byte
	rand.Read(tok[:])
	h := &Host{b: b, ln: ln, token: hex.EncodeToString(tok[:]), origin: "http://" + ln.Addr().String(), ctx: ctx}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /"+h.token+"/{$}", h.page)
	mux.HandleFunc("POST /"+h.token+"/app", h.app)
	mux.HandleFunc("GET /"+h.token+"/events", h.events)
	h.srv = &http.Server{Handler: transport.GuardLoopback(h.sameOrigin(mux)), ReadHeaderTimeout: 10 * time.Second}
	go h.srv.Serve(ln)
	return h, nil
}

// URL is the page's address.
func (h *Host) URL() string { return h.origin + "/" + h.token + "/" }

// Close stops serving: what is under way gets a second (the page's last
// events), then every connection is closed, the event stream's too.
func (h *Host) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	h.srv.Close()
	return err
}

// sameOrigin refuses a request whose Origin is not the page's own, or
// that the browser says came from another site (Sec-Fetch-Site: a
// script tag or a frame elsewhere that learnt the token).
func (h *Host) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		site := r.Header.Get("Sec-Fetch-Site")
		if (o != "" && o != h.origin) || (site != "" && site != "same-origin" && site != "none") {
			http.Error(w, "mcpi: forbidden: only the App's host page may use this", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// page serves the host page: the App's HTML in a sandboxed iframe by
// srcdoc, with the CSP its resource declares, and the relay.
func (h *Host) page(w http.ResponseWriter, r *http.Request) {
	info := h.b.o.Info
	policy := info.CSP.Policy()
	hd := w.Header()
	// The page's own policy holds the App's (a srcdoc frame inherits it,
	// and is held to both) and lets the page reach its own endpoints.
	hd.Set("Content-Security-Policy", pagePolicy(policy))
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	doc := withPolicy(info.HTML, policy)
	border := "1px solid #999"
	if info.PrefersBorder != nil && !*info.PrefersBorder {
		border = "none"
	}
	fmt.Fprintf(w, pageHTML, html.EscapeString(h.b.o.Tool.Name), html.EscapeString(info.ResourceURI), border,
		html.EscapeString(allowAttr(info.Permissions)), html.EscapeString(doc))
}

// pagePolicy is the App's policy with 'self' added where the page needs
// it: its script, and its requests to the host.
func pagePolicy(app string) string {
	var parts []string
	for _, d := range strings.Split(app, ";") {
		d = strings.TrimSpace(d)
		name, _, _ := strings.Cut(d, " ")
		switch name {
		case "connect-src":
			d = strings.Replace(d, "'none'", "", 1) + " 'self'"
		case "frame-src":
			// The App's frame is a srcdoc document.
		}
		parts = append(parts, strings.TrimSpace(strings.Join(strings.Fields(d), " ")))
	}
	return strings.Join(parts, "; ")
}

var headTag = regexp.MustCompile(`(?i)<head(\s[^>]*)?>`)

// withPolicy puts the App's policy in its document, first thing in its
// head.
func withPolicy(doc, policy string) string {
	meta := `<meta http-equiv="Content-Security-Policy" content="` + html.EscapeString(policy) + `">`
	if loc := headTag.FindStringIndex(doc); loc != nil {
		return doc[:loc[1]] + meta + doc[loc[1]:]
	}
	return meta + doc
}

// allowAttr is the frame's allow attribute for the permissions asked.
func allowAttr(perms []string) string {
	var out []string
	for _, p := range perms {
		switch p {
		case "camera", "microphone", "geolocation", "clipboard-write":
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// app takes a message the page relays from the App.
func (h *Host) app(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		http.Error(w, "want application/json", http.StatusUnsupportedMediaType)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessage+1))
	if err != nil && !errors.As(err, new(*http.MaxBytesError)) {
		return
	}
	h.b.FromApp(h.ctx, data)
	w.WriteHeader(http.StatusNoContent)
}

// events streams the host's messages to the page (server-sent events):
// to one page at a time, since the App is one (a second tab, or a reload,
// would start an App that never gets its input and result).
func (h *Host) events(w http.ResponseWriter, r *http.Request) {
	if !h.streaming.CompareAndSwap(false, true) {
		http.Error(w, "mcpi: the App is open in another page already: one page hosts it", http.StatusConflict)
		return
	}
	defer h.streaming.Store(false)
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for {
		msg, err := h.b.out.Pop(r.Context())
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", msg); err != nil {
			return
		}
		fl.Flush()
	}
}

// checkLink allows only what mcpi's opener opens: absolute http and https
// URLs.
func checkLink(raw string) error {
	if _, err := browser.Check(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}

// pageHTML is the host page: a header, the App's frame (sandboxed, no
// same origin: the App cannot reach the page or mcpi), and the relay.
const pageHTML = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>mcpi: %[1]s</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;background:#f4f4f4;color:#222}
header{padding:6px 12px;background:#222;color:#eee;font-size:13px}
header b{color:#fff}
#status{float:right;color:#9c9}
main{padding:12px}
iframe{display:block;width:100%%;max-width:1600px;height:400px;border:%[3]s;background:#fff}
</style></head>
<body><header><b>mcpi</b> · App of <b>%[1]s</b> · %[2]s · sandboxed <span id="status">connecting</span></header>
<main><iframe id="app" title="MCP App" sandbox="allow-scripts allow-forms" allow="%[4]s" referrerpolicy="no-referrer" srcdoc="%[5]s"></iframe></main>
<script>
(function () {
  var frame = document.getElementById("app");
  var status = document.getElementById("status");
  var events = new EventSource("events");
  events.onopen = function () { status.textContent = "connected"; };
  events.onerror = function () { status.textContent = "mcpi is gone"; };
  events.onmessage = function (e) {
    var m = JSON.parse(e.data);
    if (m.to === "app") { frame.contentWindow.postMessage(m.msg, "*"); return; }
    if (m.resize) { if (m.resize.height > 0) frame.style.height = m.resize.height + "px"; return; }
    if (m.end) { status.textContent = "ended: " + m.end; events.close(); }
  };
  // The App's frame loads its document once; a second load is the App
  // navigating away, out of its CSP: the relay stops.
  var loads = 0;
  frame.addEventListener("load", function () {
    loads++;
    if (loads > 1) { status.textContent = "ended: the App navigated its frame away"; events.close(); }
  });
  window.addEventListener("message", function (e) {
    if (e.source !== frame.contentWindow || loads > 1) return;
    fetch("app", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(e.data)});
  });
})();
</script></body></html>`
