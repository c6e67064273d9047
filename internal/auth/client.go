package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Token endpoint authentication methods mcpi speaks.
const (
	AuthNone   = "none"
	AuthBasic  = "client_secret_basic"
	AuthPost   = "client_secret_post"
	appNative  = "native"
	grantCode  = "authorization_code"
	grantRenew = "refresh_token"
)

// authMethodFor chooses how a client with (or without) a secret
// authenticates at a token endpoint that supports the given methods
// (RFC 8414 §2: client_secret_basic when the server lists none).
func authMethodFor(hasSecret bool, supported []string) string {
	switch {
	case !hasSecret:
		return AuthNone
	case len(supported) == 0, slices.Contains(supported, AuthBasic):
		return AuthBasic
	case slices.Contains(supported, AuthPost):
		return AuthPost
	}
	return AuthBasic
}

func authStyle(method string) oauth2.AuthStyle {
	if method == AuthBasic {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams // client_secret_post, and none (client_id only)
}

// identity chooses mcpi's client identity at the authorization server, in
// the spec's order: pre-registered credentials (--client-id), a client ID
// metadata document (--client-metadata-url) when the server supports them,
// a dynamic registration kept from before (with this same server: it is
// keyed by issuer), a new dynamic client registration.
func (t *Transport) identity(ctx context.Context, d *discovery, redirectURI string, stored *Entry) (*Client, error) {
	asm := d.asm
	if id := t.opts.ClientID; id != "" {
		c := &Client{ID: id, Secret: t.opts.ClientSecret, Method: MethodPreRegistered,
			AuthMethod: authMethodFor(t.opts.ClientSecret != "", asm.TokenEndpointAuthMethodsSupported)}
		if t.opts.ClientKey != nil {
			c.AuthMethod = AuthPrivateKeyJWT
		}
		t.obs.step("client: pre-registered client %q, token endpoint authentication %s", id, c.AuthMethod)
		return c, nil
	}
	if u := t.opts.ClientMetadataURL; u != "" && asm.ClientIDMetadataDocumentSupported {
		t.obs.step("client: client ID metadata document %s (the authorization server supports them)", u)
		return &Client{ID: u, Method: MethodMetadataDocument, AuthMethod: AuthNone}, nil
	}
	if stored != nil && stored.Client != nil && stored.Client.Method == MethodDynamic && stored.Issuer == d.issuer {
		c := stored.Client
		switch {
		case !slices.Contains(c.RedirectURIs, redirectURI):
			t.obs.step("client: the stored registration %q is for redirect URI %q, not %q: registering again", c.ID, c.RedirectURIs, redirectURI)
		case !c.SecretExpiresAt.IsZero() && !t.now().Before(c.SecretExpiresAt):
			t.obs.step("client: the secret of the stored registration %q expired at %s: registering again", c.ID, c.SecretExpiresAt.Format(time.RFC3339))
		default:
			t.obs.step("client: the registration %q kept from before (token endpoint authentication %s)", c.ID, c.AuthMethod)
			return c, nil
		}
	}
	if asm.RegistrationEndpoint == "" {
		hint := "give --client-id (and --client-secret) of a client registered with " + d.issuer
		if asm.ClientIDMetadataDocumentSupported {
			hint += ", or --client-metadata-url with the HTTPS URL of mcpi's client metadata document"
		}
		return nil, errorf(StepRegistration, RuleRegistration, "authorization server %s offers no dynamic client registration (no registration_endpoint)%s: %s",
			d.issuer, cimdNote(asm, t.opts.ClientMetadataURL), hint)
	}
	return t.register(ctx, d, redirectURI)
}

func cimdNote(asm *oauthex.AuthServerMeta, cimdURL string) string {
	if cimdURL != "" && !asm.ClientIDMetadataDocumentSupported {
		return " and does not support client ID metadata documents"
	}
	return ""
}

// register performs dynamic client registration (RFC 7591) as a native
// application with a loopback redirect URI.
func (t *Transport) register(ctx context.Context, d *discovery, redirectURI string) (*Client, error) {
	asm := d.asm
	method := AuthNone
	if s := asm.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, AuthNone) {
		method = authMethodFor(true, s)
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{redirectURI},
		TokenEndpointAuthMethod: method,
		GrantTypes:              []string{grantCode, grantRenew},
		ResponseTypes:           []string{"code"},
		ClientName:              t.opts.ClientName,
		SoftwareID:              t.opts.ClientName,
		SoftwareVersion:         t.opts.ClientVersion,
		ApplicationType:         appNative,
	}
	t.obs.step("client: registering at %s (dynamic client registration, application_type native, token endpoint authentication %s)", asm.RegistrationEndpoint, method)
	resp, err := oauthex.RegisterClient(withLabel(ctx, string(StepRegistration)), asm.RegistrationEndpoint, meta, t.asClient)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &Error{Step: StepRegistration, Msg: ctx.Err().Error(), Err: ctx.Err()}
		}
		note := ""
		if d.fallback {
			note = " (mcpi found no metadata for this server, and tried the default endpoint of 2025-03-26; give --client-id of a client registered with " + d.issuer + ", or --bearer)"
		}
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) {
			return nil, errorf(StepRegistration, "", "%s refused the registration: %s%s", asm.RegistrationEndpoint, describeOAuthError(re.ErrorCode, re.ErrorDescription), note)
		}
		return nil, &Error{Step: StepRegistration, Msg: t.obs.redact(err.Error()) + note, Err: err}
	}
	t.obs.learn(resp.ClientSecret)
	c := &Client{ID: resp.ClientID, Secret: resp.ClientSecret, Method: MethodDynamic, AuthMethod: resp.TokenEndpointAuthMethod,
		RedirectURIs: resp.RedirectURIs, IssuedAt: resp.ClientIDIssuedAt, SecretExpiresAt: resp.ClientSecretExpiresAt}
	if len(c.RedirectURIs) == 0 {
		c.RedirectURIs = meta.RedirectURIs
	}
	switch {
	case c.Secret == "":
		c.AuthMethod = AuthNone
	case c.AuthMethod == "":
		c.AuthMethod = authMethodFor(true, asm.TokenEndpointAuthMethodsSupported)
	}
	secret := "no secret"
	if c.Secret != "" {
		secret = "a secret"
	}
	t.obs.step("client: registered client %q with %s, token endpoint authentication %s", c.ID, secret, c.AuthMethod)
	return c, nil
}

func describeOAuthError(code, desc string) string {
	s := code
	if s == "" {
		s = "no error code"
	}
	if desc != "" {
		s += fmt.Sprintf(" (%s)", desc)
	}
	return s
}

// ValidClientMetadataURL checks a --client-metadata-url: the client ID
// metadata document draft wants an HTTPS URL with a path.
func ValidClientMetadataURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" {
		return fmt.Errorf("%q is not an HTTPS URL with a path (a client ID metadata document is named by one)", raw)
	}
	return nil
}
