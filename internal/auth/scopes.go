package auth

import "slices"

// ScopeChoice is what decides the scopes of an authorization request.
type ScopeChoice struct {
	// Override is the user's --scope; it wins over what the server says.
	Override []string
	// Challenged is the scope of the WWW-Authenticate challenge.
	Challenged []string
	// ResourceSupported is scopes_supported of the protected resource metadata.
	ResourceSupported []string
	// Previous is the scope requested last time from the same authorization
	// server: re-authorization (step-up) asks for it again, with the new.
	Previous []string
	// ServerSupported is scopes_supported of the authorization server
	// metadata: offline_access is asked for only when it is listed there.
	ServerSupported []string
}

// Scopes returns the scopes to request and where they come from, as the
// spec's scope selection strategy says: the challenge's scope, else the
// resource's scopes_supported, else none (the scope parameter is left out);
// on re-authorization, the union with the scopes requested before; and
// offline_access when the authorization server lists it (and some scope
// is requested at all: asking for offline_access alone would narrow a
// request that otherwise gets the server's default scope).
func (c ScopeChoice) Scopes() (scopes []string, from string) {
	switch {
	case len(c.Override) > 0:
		scopes, from = c.Override, "--scope"
	case len(c.Challenged) > 0:
		scopes, from = c.Challenged, "the WWW-Authenticate scope"
	case len(c.ResourceSupported) > 0:
		scopes, from = c.ResourceSupported, "scopes_supported of the protected resource metadata"
	default:
		from = "none named by the server: scope left out"
	}
	if len(c.Previous) > 0 {
		scopes = union(c.Previous, scopes)
		from += ", with the scopes requested before"
	}
	if len(scopes) > 0 && slices.Contains(c.ServerSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
		from += ", and offline_access (the authorization server lists it)"
	}
	return scopes, from
}

// union returns a's elements, then b's that are not in a.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
