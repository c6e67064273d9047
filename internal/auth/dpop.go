package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// dpop holds what DPoP (RFC 9449) needs across requests: the key proofs
// are signed with, and the latest nonce each server asked for (§8, §9).
type dpop struct {
	key *Key
	now func() time.Time

	mu     sync.Mutex
	nonces map[string]string // origin -> the latest DPoP-Nonce it sent
}

func newDPoP(key *Key, now func() time.Time) *dpop {
	return &dpop{key: key, now: now, nonces: map[string]string{}}
}

// htu is a request URI as a DPoP proof names it: no query, no fragment
// (RFC 9449 §4.2).
func htu(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment, c.User = "", false, "", "", nil
	return c.String()
}

func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(hostPort(u))
}

// proof signs a proof for a request of method to u, with the nonce u's
// origin asked for last.
func (d *dpop) proof(method string, u *url.URL, accessToken string) (string, error) {
	d.mu.Lock()
	nonce := d.nonces[originOf(u)]
	d.mu.Unlock()
	return d.key.dpopProof(method, htu(u), accessToken, nonce, d.now())
}

// noteNonce keeps the DPoP-Nonce of an answer from u's origin, and
// reports whether it is a new one.
func (d *dpop) noteNonce(u *url.URL, h http.Header) bool {
	n := h.Get("DPoP-Nonce")
	if n == "" {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	o := originOf(u)
	if d.nonces[o] == n {
		return false
	}
	d.nonces[o] = n
	return true
}

// isDPoPToken reports whether a token is DPoP-bound: it is sent with the
// DPoP scheme and a proof, not as a Bearer token.
func isDPoPToken(tok *Token) bool { return tok != nil && strings.EqualFold(tok.TokenType, "DPoP") }

type dpopKey struct{}

// withDPoP makes the token requests sent with ctx carry a DPoP proof.
func withDPoP(ctx context.Context, d *dpop) context.Context {
	if d == nil {
		return ctx
	}
	return context.WithValue(ctx, dpopKey{}, d)
}

// dpopTransport adds a DPoP proof to each POST whose context asks for one
// (token requests at the authorization server) and, when the server
// answers use_dpop_nonce with a DPoP-Nonce (RFC 9449 §8), sends the
// request once more with a proof carrying that nonce. It sits above
// tapTransport, so that both attempts are reported.
type dpopTransport struct {
	next http.RoundTripper
	obs  *observer
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d, _ := req.Context().Value(dpopKey{}).(*dpop)
	if d == nil || req.Method != http.MethodPost {
		return t.next.RoundTrip(req)
	}
	for try := 0; ; try++ {
		r := req.Clone(req.Context())
		if try > 0 {
			if req.GetBody == nil {
				return nil, errorf(StepToken, "", "cannot send the token request again with the DPoP nonce: its body cannot be read twice")
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = b
		}
		p, err := d.proof(r.Method, r.URL, "")
		if err != nil {
			return nil, &Error{Step: StepToken, Msg: "signing the DPoP proof: " + err.Error(), Err: err}
		}
		r.Header.Set("DPoP", p)
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		fresh := d.noteNonce(r.URL, resp.Header)
		if try > 0 || !fresh || resp.StatusCode != http.StatusBadRequest || oauthErrorCode(resp) != "use_dpop_nonce" {
			return resp, nil
		}
		resp.Body.Close()
		t.obs.step("the authorization server asks for a DPoP nonce (use_dpop_nonce): sending the token request again with a proof that carries it")
	}
}

// oauthErrorCode reads the error member of a JSON error answer, leaving
// the body readable again.
func oauthErrorCode(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error
}
