package auth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Challenge is what a 401 or 403 answer's WWW-Authenticate header asks for
// (RFC 6750 §3, RFC 9728 §5.1).
type Challenge struct {
	// ResourceMetadata is the URL of the protected resource metadata.
	ResourceMetadata string
	// Scopes are the scopes the request needs.
	Scopes []string
	// Error and ErrorDescription are RFC 6750's error and error_description
	// ("invalid_token", "insufficient_scope").
	Error            string
	ErrorDescription string
	// Bearer says the header holds a Bearer challenge, DPoP a DPoP one
	// (RFC 9449 §7.1).
	Bearer, DPoP bool
	// Raw holds the header's values as they came.
	Raw []string
	// ParseErr says why a value could not be parsed; the others still count.
	ParseErr error
}

// ParseChallenge reads the WWW-Authenticate header of an answer. The
// parameters of the Bearer and DPoP challenges win (the first given);
// resource_metadata is taken from any scheme.
func ParseChallenge(h http.Header) Challenge {
	c := Challenge{Raw: h.Values("WWW-Authenticate")}
	var all []oauthex.Challenge
	for _, v := range c.Raw {
		cs, err := oauthex.ParseWWWAuthenticate([]string{v})
		if err != nil {
			if c.ParseErr == nil {
				c.ParseErr = fmt.Errorf("WWW-Authenticate %q: %v", v, err)
			}
			continue
		}
		all = append(all, cs...)
	}
	for _, ch := range all {
		switch ch.Scheme {
		case "bearer":
			c.Bearer = true
		case "dpop":
			c.DPoP = true
		default:
			continue
		}
		if c.ResourceMetadata == "" {
			c.ResourceMetadata = ch.Params["resource_metadata"]
		}
		if c.Scopes == nil && ch.Params["scope"] != "" {
			c.Scopes = strings.Fields(ch.Params["scope"])
		}
		if c.Error == "" {
			c.Error = ch.Params["error"]
			c.ErrorDescription = ch.Params["error_description"]
		}
	}
	for _, ch := range all {
		if c.ResourceMetadata == "" {
			c.ResourceMetadata = ch.Params["resource_metadata"]
		}
	}
	return c
}

// String describes the challenge for a person.
func (c Challenge) String() string {
	var parts []string
	if c.Error != "" {
		s := "error=" + c.Error
		if c.ErrorDescription != "" {
			s += fmt.Sprintf(" (%s)", c.ErrorDescription)
		}
		parts = append(parts, s)
	}
	if len(c.Scopes) > 0 {
		parts = append(parts, fmt.Sprintf("scope=%q", strings.Join(c.Scopes, " ")))
	}
	if c.ResourceMetadata != "" {
		parts = append(parts, "resource_metadata="+c.ResourceMetadata)
	}
	if len(parts) == 0 {
		if len(c.Raw) == 0 {
			return "no WWW-Authenticate header"
		}
		return "WWW-Authenticate without resource_metadata, scope or error"
	}
	return strings.Join(parts, ", ")
}
