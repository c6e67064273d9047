package auth

import "fmt"

// Step names the part of the flow an Error comes from.
type Step string

// The steps of the flow, in order.
const (
	StepChallenge        Step = "challenge"
	StepResourceMetadata Step = "protected resource metadata"
	StepServerMetadata   Step = "authorization server metadata"
	StepRegistration     Step = "client registration"
	StepAuthorization    Step = "authorization"
	StepToken            Step = "token request"
	StepTokenExchange    Step = "token exchange"
	StepRefresh          Step = "token refresh"
	StepStepUp           Step = "step-up"
	StepRetry            Step = "retry"
)

// The rules a flow checks. An Error quotes the one that failed.
const (
	RuleResourceMetadata = "MCP authorization: servers publish protected resource metadata (RFC 9728), named by WWW-Authenticate resource_metadata or at the well-known URIs"
	RuleAuthServers      = "RFC 9728 §2: protected resource metadata lists at least one authorization server"
	RuleResource         = "RFC 9728 §3.3: the resource in protected resource metadata identifies the server it was fetched for"
	RuleServerMetadata   = "MCP authorization: authorization servers publish RFC 8414 or OpenID Connect discovery metadata"
	RuleIssuer           = "RFC 8414 §3.3: the issuer in authorization server metadata is identical to the issuer used to build its URL"
	RuleEndpoints        = "RFC 8414 §2: authorization server metadata names an authorization_endpoint and a token_endpoint"
	RulePKCE             = "MCP authorization: refuse an authorization server whose code_challenge_methods_supported lacks S256"
	RuleHTTPS            = "OAuth 2.1 §1.5: authorization server endpoints use HTTPS (loopback addresses excepted)"
	RuleRegistration     = "MCP client registration: a pre-registered client, a client ID metadata document, or dynamic client registration"
	RuleState            = "OAuth 2.1 §7.12: the state of the authorization response matches the request's"
	RuleIss              = "RFC 9207 §2.4: the iss of the authorization response is the recorded issuer, compared as plain strings"
	RuleIssMissing       = "RFC 9207 §2.4: a server advertising authorization_response_iss_parameter_supported sends iss in every authorization response"
	RuleAuthResponse     = "OAuth 2.1 §4.1.2: the authorization response carries a code, or an error"
	RuleTokenResponse    = "OAuth 2.1 §3.2.3: the token endpoint answers with an access token"
	RuleStepUpLimit      = "MCP step-up: retry the request with new authorization a bounded number of times, then treat it as a permanent failure"
	RuleIDJAG            = "Enterprise-managed authorization (SEP-990): the identity provider's token exchange issues an ID-JAG (issued_token_type urn:ietf:params:oauth:token-type:id-jag)"
	RuleDPoPNonce        = "RFC 9449 §9: a server asking for a DPoP nonce (use_dpop_nonce) gets the request again with a proof carrying it"
	RuleAccepted         = "RFC 6750 §3.1: a server answers 401 to a token it does not accept"
	RuleCredentialAS     = "a client secret or a workload's JWT goes only to the authorization server it was issued for (a server may name any authorization server in its metadata)"
)

// Error is a failed authorization: the step it failed at, the rule that
// was broken (empty when the failure is not a rule, like a network error)
// and what happened. Its message never holds a token, code or secret.
type Error struct {
	Step Step
	Rule string
	Msg  string
	// Err is the underlying error, if any (context.Canceled, ...). Its text
	// is already in Msg, redacted.
	Err error
}

func (e *Error) Error() string {
	s := "oauth " + string(e.Step) + ": " + e.Msg
	if e.Rule != "" {
		s += " [rule: " + e.Rule + "]"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(step Step, rule, format string, args ...any) *Error {
	return &Error{Step: step, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}
