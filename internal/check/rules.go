package check

import "errors"

var errorsAs = errors.As

// Sources of the rules. Host limits drift: each names the date they were
// checked (../shared/host-limits.md has the evidence).
const (
	srcLifecycle   = "MCP 2025-11-25 basic/lifecycle § Initialization"
	srcCaps        = "MCP 2025-11-25 basic/lifecycle § Capability Negotiation"
	srcJSONRPC     = "MCP 2025-11-25 basic § Messages (JSON-RPC 2.0)"
	srcStdio       = "MCP 2025-11-25 basic/transports § stdio"
	srcPing        = "MCP 2025-11-25 basic/utilities/ping"
	srcLogging     = "MCP 2025-11-25 server/utilities/logging"
	srcCompletion  = "MCP 2025-11-25 server/utilities/completion § Completion Results"
	srcPagination  = "MCP 2025-11-25 server/utilities/pagination"
	srcToolNames   = "MCP 2025-11-25 server/tools § Tool Names"
	srcTool        = "MCP 2025-11-25 server/tools § Tool"
	srcOutput      = "MCP 2025-11-25 server/tools § Output Schema"
	srcToolErrors  = "MCP 2025-11-25 server/tools § Error Handling"
	srcToolResult  = "MCP 2025-11-25 server/tools § Tool Result"
	srcSchemaUsage = "MCP 2025-11-25 basic § JSON Schema Usage"
	srcResources   = "MCP 2025-11-25 server/resources § Reading Resources"
	srcResData     = "MCP 2025-11-25 server/resources § Resource Contents"
	srcResErrors   = "MCP 2025-11-25 server/resources § Error Handling"
	srcTemplates   = "MCP 2025-11-25 server/resources § Resource Templates (RFC 6570)"
	srcPrompts     = "MCP 2025-11-25 server/prompts § Getting a Prompt"
	srcPromptErr   = "MCP 2025-11-25 server/prompts § Error Handling"
	// The security rules' sources: the spec asks for a person who sees
	// which tools a model is given (server/tools § User Interaction
	// Model); what defeats that person is documented outside it.
	srcHiddenText = "MCP 2025-11-25 server/tools § User Interaction Model (a person sees which tools are exposed); Trojan Source, CVE-2021-42574 (bidi controls); Invariant Labs, MCP tool poisoning attacks (2025-04)"
	srcDescSize   = "MCP 2025-11-25 server/tools § User Interaction Model (a person sees which tools are exposed); Invariant Labs, MCP tool poisoning attacks (2025-04)"
	srcShadowing  = "MCP draft server/tools § Tool Names (names are unique per server; aggregating clients SHOULD disambiguate); Invariant Labs, MCP tool shadowing (2025-04)"
	srcHostsDate  = "checked 2026-11-24"
	// MCP Apps: SEP-1865, the io.modelcontextprotocol/ui extension.
	srcApps = "MCP Apps (SEP-1865, io.modelcontextprotocol/ui, 2026-01-26)"
)

// The rules of MCP Apps.
var (
	ruleAppsNegotiated      = &Rule{ID: "apps/negotiated", Severity: Warning, Summary: "A server lists tools with an App (_meta.ui), and App-only tools (a visibility without \"model\"), only to a client that declared io.modelcontextprotocol/ui with text/html;profile=mcp-app; to others it lists what works without Apps.", Source: srcApps + " § Client<>Server Capability Negotiation (Server Behavior: servers SHOULD check client capabilities before registering UI-enabled tools)"}
	ruleAppsResourceURI     = &Rule{ID: "apps/resource-uri", Severity: Error, Summary: "A tool's _meta.ui.resourceUri is a ui:// URI of a resource that exists on the server; the deprecated flat _meta[\"ui/resourceUri\"] is not used alone (beside _meta.ui.resourceUri, as @modelcontextprotocol/ext-apps writes it for older hosts, it is accepted).", Source: srcApps + " § UI Resource Format (URI MUST start with ui://), § Resource Discovery (Resource MUST exist on the server; the flat key is deprecated)"}
	ruleAppsResourceListed  = &Rule{ID: "apps/resource-listed", Severity: Info, Summary: "An App's resource is in resources/list (servers MAY leave UI resources out; a host that prefetches from the listing does not see it then).", Source: srcApps + " § Resource Discovery (Behavior)"}
	ruleAppsResourceContent = &Rule{ID: "apps/resource-content", Severity: Error, Summary: "An App's resource reads as text/html;profile=mcp-app, with text or a base64 blob, at most 4 MiB (mcpi's bound).", Source: srcApps + " § UI Resource Format (Content Requirements)"}
	ruleAppsCSP             = &Rule{ID: "apps/csp", Severity: Warning, Summary: "Each domain an App's CSP (_meta.ui.csp) declares is an origin (scheme://host[:port], a *. wildcard leftmost); `*` and plain http: are called out. No CSP is no fault: hosts apply the restrictive default.", Source: srcApps + " § UI Resource Format (McpUiResourceCsp), § Security Implications (Content Security Policy Enforcement)"}
	ruleAppsVisibility      = &Rule{ID: "apps/visibility", Severity: Error, Summary: "_meta.ui.visibility holds only \"model\" and \"app\" (a tool whose visibility lacks \"model\" is App-only: hosts keep it from the model); an empty visibility makes a tool nobody may call.", Source: srcApps + " § Resource Discovery (Visibility)"}
	ruleAppsStaticLoads     = &Rule{ID: "apps/static-loads", Severity: Warning, Summary: "The scripts and stylesheets an App's HTML loads from its tags come from origins its CSP declares in resourceDomains (a static reading of the tags: what scripts load at run time is not seen).", Source: srcApps + " § UI Resource Format (Host Behavior: No Loosening; hosts MUST NOT allow undeclared domains)"}
)

// The rules: each a handle that its checks pass, so that a rule named
// wrong is a compile error, not a string that matches nothing.
var (
	ruleHandshakeCompletes          = &Rule{ID: "handshake/completes", Severity: Error, Summary: "The handshake completes: initialize (or server/discover) is answered with a revision that exists, which the client offered or the server supports, and a well-formed result.", Source: "MCP 2025-11-25 basic/lifecycle § Initialization, § Version Negotiation; MCP 2026-07-28 basic/versioning"}
	ruleHandshakeUnknownVersion     = &Rule{ID: "handshake/unknown-version", Severity: Error, Summary: "Offered a revision that does not exist, a legacy server answers initialize with one it supports; a modern one refuses with -32022 listing data.supported.", Source: "MCP 2025-11-25 basic/lifecycle § Version Negotiation; MCP 2026-07-28 basic/versioning § Protocol Version Negotiation"}
	ruleDualEraSameTools            = &Rule{ID: "dual-era/same-tools", Severity: Warning, Summary: "A server that speaks both eras lists the same tools in each.", Source: "MCP 2026-07-28 basic/versioning (dual-era implementations)"}
	ruleHandshakeServerInfo         = &Rule{ID: "handshake/server-info", Severity: Warning, Summary: `serverInfo names the server and its version; in 2026-07-28 it is in the server/discover result's _meta["io.modelcontextprotocol/serverInfo"] (one at the top level is used, and reported where it was found).`, Source: srcLifecycle + "; MCP 2026-07-28 server/discover § DiscoverResult"}
	ruleHandshakeInstructionsSize   = &Rule{ID: "handshake/instructions-size", Severity: Warning, Summary: "instructions stay short enough for a client to put in a model's context (at most 8 KiB).", Source: srcLifecycle}
	ruleCapabilitiesDeclaredWorks   = &Rule{ID: "capabilities/declared-works", Severity: Error, Summary: "A declared capability's list method answers.", Source: srcCaps}
	ruleCapabilitiesUndeclaredWorks = &Rule{ID: "capabilities/undeclared-works", Severity: Warning, Summary: "A capability that works is declared; clients will not use what is not declared.", Source: srcCaps}
	ruleWireFrames                  = &Rule{ID: "wire/frames", Severity: Error, Summary: "Every frame is one JSON-RPC message (stdio: nothing else on stdout).", Source: srcStdio}
	ruleWireJsonrpc                 = &Rule{ID: "wire/jsonrpc", Severity: Error, Summary: "Responses carry the id of their request, as the request typed it, with jsonrpc \"2.0\".", Source: srcJSONRPC}
	ruleWireStderr                  = &Rule{ID: "wire/stderr", Severity: Info, Summary: "What the server writes to stderr is shown by clients as logs, not read as protocol.", Source: srcStdio}
	ruleResultsSchema               = &Rule{ID: "results/schema", Severity: Error, Summary: "Every result conforms to the JSON Schema the specification publishes for its revision.", Source: "MCP schema of the negotiated revision (schema/<revision>/schema.json)"}
	rulePingAnswers                 = &Rule{ID: "ping/answers", Severity: Error, Summary: "ping is answered promptly with an empty result.", Source: srcPing}
	ruleLoggingSetLevel             = &Rule{ID: "logging/set-level", Severity: Error, Summary: "A server that declares logging accepts logging/setLevel.", Source: srcLogging}
	ruleCompletionAnswers           = &Rule{ID: "completion/answers", Severity: Error, Summary: "A server that declares completions answers completion/complete with at most 100 values.", Source: srcCompletion}
	rulePaginationCursor            = &Rule{ID: "pagination/cursor", Severity: Error, Summary: "A list's cursors lead to its end: no cursor is given twice.", Source: srcPagination}
	rulePaginationDuplicates        = &Rule{ID: "pagination/duplicates", Severity: Warning, Summary: "An item appears once across a list's pages.", Source: srcPagination}
	ruleErrorsNoAnswer              = &Rule{ID: "errors/no-answer", Severity: Error, Summary: "Every request gets a response, a result or a JSON-RPC error, within the check's --timeout; a probe left unanswered checks nothing, and the rule it was for is not listed as checked.", Source: srcJSONRPC}
	ruleErrorsUnknownMethod         = &Rule{ID: "errors/unknown-method", Severity: Warning, Summary: "An unknown method gets JSON-RPC error -32601.", Source: srcJSONRPC}
	ruleErrorsUnknownTool           = &Rule{ID: "errors/unknown-tool", Severity: Warning, Summary: "tools/call of an unknown tool is a JSON-RPC error (-32602), not a result.", Source: srcToolErrors}
	ruleErrorsUnknownResource       = &Rule{ID: "errors/unknown-resource", Severity: Warning, Summary: "resources/read of an unknown URI gets JSON-RPC error -32002 (-32602 from 2026-07-28 on).", Source: srcResErrors}
	ruleErrorsMissingCapability     = &Rule{ID: "errors/missing-capability", Severity: Error, Summary: "A modern request that needs a client capability the request did not declare is refused with -32021 (MissingRequiredClientCapability) listing data.requiredCapabilities, never answered with input requests for it.", Source: "MCP 2026-07-28 basic § _meta (Per-request protocol fields); basic/patterns/mrtr § Server Requirements (Basic Workflow)"}
	ruleSubscriptionsListChanged    = &Rule{ID: "subscriptions/list-changed", Severity: Warning, Summary: "A modern server that declares listChanged (tools, prompts, resources) takes a subscriptions/listen asking for those changes and keeps each in the filter it acknowledges: clients of 2026-07-28 learn of list changes only on such a stream.", Source: "MCP 2026-07-28 basic/patterns/subscriptions § Acknowledgment (the acknowledged filter is the subset the server agreed to honor); the official conformance suite's SEP-2575 checks (list-changed-capable servers notify listen streams: SHOULD)"}
	ruleErrorsUnknownPrompt         = &Rule{ID: "errors/unknown-prompt", Severity: Warning, Summary: "prompts/get of an unknown prompt gets JSON-RPC error -32602.", Source: srcPromptErr}
	ruleToolsName                   = &Rule{ID: "tools/name", Severity: Warning, Summary: "A tool name has 1 to 128 characters of A-Z, a-z, 0-9, _, - and . only.", Source: srcToolNames}
	ruleToolsNameUnique             = &Rule{ID: "tools/name-unique", Severity: Error, Summary: "Tool names are unique within a server.", Source: srcToolNames}
	ruleToolsDescription            = &Rule{ID: "tools/description", Severity: Warning, Summary: "A tool has a description: it is all a model knows of when to call it.", Source: srcTool}
	ruleToolsInputSchema            = &Rule{ID: "tools/input-schema", Severity: Error, Summary: "inputSchema is a JSON Schema object whose root type is \"object\".", Source: srcTool}
	ruleToolsSchemaValid            = &Rule{ID: "tools/schema-valid", Severity: Error, Summary: "inputSchema and outputSchema are valid JSON Schema (2020-12 unless $schema says otherwise).", Source: srcSchemaUsage}
	ruleToolsSchemaDialect          = &Rule{ID: "tools/schema-dialect", Severity: Warning, Summary: "A $schema names a JSON Schema dialect clients know (draft-04 to 2020-12).", Source: srcSchemaUsage}
	ruleToolsOutputSchema           = &Rule{ID: "tools/output-schema", Severity: Error, Summary: "outputSchema, when given, has root type \"object\" (up to 2025-11-25; 2026-07-28 allows any schema).", Source: srcOutput}
	ruleToolsAnnotations            = &Rule{ID: "tools/annotations", Severity: Warning, Summary: "Annotations agree: a tool that is read-only (readOnlyHint) is not also destructive (destructiveHint means something only when readOnlyHint is false).", Source: srcTool}
	ruleToolsXMcpHeader             = &Rule{ID: "tools/x-mcp-header", Severity: Error, Summary: "x-mcp-header annotations are non-empty HTTP tokens, unique, on string, integer or boolean properties reached through properties alone; otherwise a Streamable HTTP client drops the tool.", Source: "MCP 2026-07-28 server/tools § x-mcp-header"}
	ruleIconsValid                  = &Rule{ID: "icons/valid", Severity: Warning, Summary: "An icon's src is an https URL or a base64 data: URI of an image; its sizes are WxH or \"any\"; its theme light or dark.", Source: "MCP 2025-11-25 schema, Icon (SEP-973)"}
	ruleToolsCallResult             = &Rule{ID: "tools/call-result", Severity: Error, Summary: "A tool's result has content, and structuredContent matching its outputSchema.", Source: srcToolResult}
	ruleResourcesReadable           = &Rule{ID: "resources/readable", Severity: Error, Summary: "Every listed resource can be read, and its contents are text or base64 blob.", Source: srcResources}
	ruleResourcesMimeType           = &Rule{ID: "resources/mime-type", Severity: Warning, Summary: "A resource's contents carry the mime type its listing announced.", Source: srcResData}
	ruleResourcesTemplate           = &Rule{ID: "resources/template", Severity: Error, Summary: "A resource template is a valid RFC 6570 URI template.", Source: srcTemplates}
	rulePromptsGet                  = &Rule{ID: "prompts/get", Severity: Error, Summary: "Every listed prompt without required arguments can be got, and a prompt's messages have a role and content.", Source: srcPrompts}
	rulePromptsGetWithArguments     = &Rule{ID: "prompts/get-with-arguments", Severity: Warning, Summary: "A prompt with required arguments can be got with values its completions offer (or made-up ones); when it cannot, the error is -32602.", Source: srcPromptErr}
	ruleSecurityHiddenText          = &Rule{ID: "security/hidden-text", Severity: Error, Summary: "What a model reads (names, descriptions, schemas, prompts, instructions) holds no escape sequences, bidi controls, zero-width or Unicode tag characters: they hide instructions from the person approving the tool.", Source: srcHiddenText}
	ruleSecurityDescriptionSize     = &Rule{ID: "security/description-size", Severity: Warning, Summary: "A description stays under 4,096 characters: long ones crowd the model's context and hide instructions.", Source: srcDescSize}
	ruleSecurityShadowing           = &Rule{ID: "security/shadowing", Severity: Info, Summary: "A tool does not take the name of a host's built-in tool: hosts rename one of the two, and a model may still take one for the other.", Source: srcShadowing}
	ruleHttpDnsRebinding            = &Rule{ID: "http/dns-rebinding", Severity: Error, Summary: "A request as a DNS-rebinding page sends it (Host and Origin naming another site) is refused with 403 Forbidden.", Source: srcHTTP + " (Security Warning); basic/security_best_practices § Local MCP Server Compromise"}
	ruleHttpOrigin                  = &Rule{ID: "http/origin", Severity: Error, Summary: "A request whose Origin header names another site is refused with 403 Forbidden, even when its Host is the server's.", Source: srcHTTP + " (Security Warning: servers MUST validate the Origin header)"}
	ruleHttpUnknownSession          = &Rule{ID: "http/unknown-session", Severity: Error, Summary: "A request with a session id the server does not know is answered 404 Not Found, so that the client starts a new session.", Source: srcHTTP + " § Session Management (a server MUST respond to requests containing a session ID it ended with HTTP 404 Not Found)"}
	ruleHttpSessionEnd              = &Rule{ID: "http/session-end", Severity: Error, Summary: "A session a client ends with DELETE is gone (a request in it gets 404), or the server refuses DELETE with 405.", Source: srcHTTP + " § Session Management (after a session ends the server MUST respond to requests containing its ID with HTTP 404 Not Found; it MAY refuse DELETE with 405)"}
	ruleHttpContentType             = &Rule{ID: "http/content-type", Severity: Error, Summary: "A POST that carries a request is answered with Content-Type application/json or text/event-stream.", Source: srcHTTP + " § Sending Messages to the Server"}
	ruleHttpHeaderValidation        = &Rule{ID: "http/header-validation", Severity: Error, Summary: "A modern request whose Mcp-Method header is missing or differs from its body is refused with 400 and -32020 (HeaderMismatch).", Source: "MCP 2026-07-28 basic/transports/streamable-http § Server Validation"}
	ruleHttpNameHeader              = &Rule{ID: "http/name-header", Severity: Error, Summary: "A modern tools/call, resources/read or prompts/get whose Mcp-Name header is missing or differs from the body's name or uri is refused with 400 and -32020 (HeaderMismatch).", Source: srcServerValidation + "; § Standard Request Headers"}
	ruleHttpParamHeader             = &Rule{ID: "http/param-header", Severity: Error, Summary: "A modern tools/call whose Mcp-Param-* header (from an x-mcp-header parameter) differs from the argument, or is missing while the argument is given, is refused with 400 and -32020 (probed with --call, on a read-only tool).", Source: "MCP 2026-07-28 basic/transports/streamable-http § Server Behavior for Custom Headers"}
	ruleHttpSSEPriming              = &Rule{ID: "http/sse-priming", Severity: Warning, Summary: "An SSE stream that answers a POST begins with a priming event, an event id and empty data, so that a client whose stream breaks resumes it with Last-Event-ID (2025-11-25; modern streams are not resumable).", Source: srcHTTP + " § Sending Messages to the Server (the server SHOULD immediately send an SSE event with an event ID and an empty data field to prime the client to reconnect)"}
	ruleSseEndpoint                 = &Rule{ID: "sse/endpoint", Severity: Error, Summary: "A GET of an HTTP+SSE server's URL opens an event stream whose first event is \"endpoint\", with the URI to POST messages to as its data.", Source: srcSSE}
	ruleSseEndpointOrigin           = &Rule{ID: "sse/endpoint-origin", Severity: Error, Summary: "The endpoint event names a URI on the stream's own origin: clients refuse to send messages, with their credentials, anywhere else.", Source: srcSSE + "; the TypeScript SDK's and mcpi's clients refuse another origin"}
	ruleSsePostAccepted             = &Rule{ID: "sse/post-accepted", Severity: Error, Summary: "A message POSTed to the endpoint is answered 2xx (202 Accepted), and the answer to a request comes on the event stream, not in the POST's body.", Source: srcSSE}
	ruleSseMessageEvents            = &Rule{ID: "sse/message-events", Severity: Error, Summary: "Every server message comes as a \"message\" event whose data is one JSON-RPC message.", Source: srcSSE}
)

// protocolRules are the rules of the protocol and its transports; the
// hosts' rules follow them in ruleList.
var protocolRules = []*Rule{
	ruleHandshakeCompletes,
	ruleHandshakeUnknownVersion,
	ruleDualEraSameTools,
	ruleHandshakeServerInfo,
	ruleHandshakeInstructionsSize,
	ruleCapabilitiesDeclaredWorks,
	ruleCapabilitiesUndeclaredWorks,
	ruleWireFrames,
	ruleWireJsonrpc,
	ruleWireStderr,
	ruleResultsSchema,
	rulePingAnswers,
	ruleLoggingSetLevel,
	ruleCompletionAnswers,
	rulePaginationCursor,
	rulePaginationDuplicates,
	ruleErrorsNoAnswer,
	ruleErrorsUnknownMethod,
	ruleErrorsUnknownTool,
	ruleErrorsUnknownResource,
	ruleErrorsMissingCapability,
	ruleErrorsUnknownPrompt,
	ruleSubscriptionsListChanged,
	ruleToolsName,
	ruleToolsNameUnique,
	ruleToolsDescription,
	ruleToolsInputSchema,
	ruleToolsSchemaValid,
	ruleToolsSchemaDialect,
	ruleToolsOutputSchema,
	ruleToolsAnnotations,
	ruleToolsXMcpHeader,
	ruleIconsValid,
	ruleToolsCallResult,
	ruleResourcesReadable,
	ruleResourcesMimeType,
	ruleResourcesTemplate,
	rulePromptsGet,
	rulePromptsGetWithArguments,
	ruleSecurityHiddenText,
	ruleSecurityDescriptionSize,
	ruleSecurityShadowing,
	ruleHttpDnsRebinding,
	ruleHttpOrigin,
	ruleHttpUnknownSession,
	ruleHttpSessionEnd,
	ruleHttpContentType,
	ruleHttpHeaderValidation,
	ruleHttpNameHeader,
	ruleHttpParamHeader,
	ruleHttpSSEPriming,
	ruleSseEndpoint,
	ruleSseEndpointOrigin,
	ruleSsePostAccepted,
	ruleSseMessageEvents,
	ruleAppsNegotiated,
	ruleAppsResourceURI,
	ruleAppsResourceListed,
	ruleAppsResourceContent,
	ruleAppsCSP,
	ruleAppsVisibility,
	ruleAppsStaticLoads,
}

// rules indexes ruleList by id.
var rules = func() map[string]*Rule {
	m := map[string]*Rule{}
	for _, r := range ruleList {
		if m[r.ID] != nil {
			panic("check: rule " + r.ID + " twice")
		}
		m[r.ID] = r
	}
	return m
}()

// Rules returns every rule check knows, in a stable order.
func Rules() []Rule {
	out := make([]Rule, len(ruleList))
	for i, r := range ruleList {
		out[i] = *r
	}
	return out
}
