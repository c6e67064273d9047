// Package auth is mcpi's OAuth 2.1 client for HTTP MCP servers, as the MCP
// authorization specification (2025-11-25 and 2026-07-28) describes it:
// WWW-Authenticate challenges, protected resource metadata (RFC 9728),
// authorization server metadata (RFC 8414 and OpenID Connect discovery),
// client identity (pre-registration, client ID metadata documents, dynamic
// client registration), the authorization code grant with PKCE S256, the
// grants without a person (client credentials, the JWT bearer grant of
// workload identity, enterprise-managed authorization's ID-JAG), client
// assertions (private_key_jwt), DPoP-bound tokens (RFC 9449),
// resource indicators (RFC 8707), issuer identification (RFC 9207),
// refresh, step-up on insufficient_scope, and a token store.
//
// Its entry point is Transport, an http.RoundTripper that the CLI puts into
// transport.HTTPOptions.Base: it adds the access token to each request to
// the server's own origin (never to another origin a redirect leads to)
// and, on 401 or 403 insufficient_scope, runs the flow and sends the request
// again. Every HTTP exchange of the flow is reported to a transport.Tap with
// tokens, codes and secrets redacted, and each step is described by a
// lifecycle event, so that -v, --record and the TUI show the whole flow.
// Failures are *Error values that name the step and the rule that failed.
//
// The flow uses golang.org/x/oauth2 (PKCE, code exchange, refresh), the
// official Go SDK's oauthex package (metadata types, WWW-Authenticate
// parsing, dynamic client registration) and go-jose (JWT signing, JWK
// thumbprints).
//
// This package imports transport (for the Tap and its event types) and
// record (for its redaction), never session or the front ends.
package auth
