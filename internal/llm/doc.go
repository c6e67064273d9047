// Package llm is mcpi's client of language models: one Provider interface
// with one streaming call, and its implementations on the providers'
// official SDKs (github.com/anthropics/anthropic-sdk-go/v2 for the
// Anthropic Messages API, github.com/openai/openai-go/v3 for OpenAI Chat
// Completions, the Responses API and any OpenAI-compatible server by base
// URL). Parse makes a Provider from a model spec ("anthropic:MODEL",
// "openai:MODEL", "openai-responses:MODEL", "ollama:MODEL",
// "compat:MODEL"); Prices and Cost say what a turn cost. It owns no
// conversation: chat, sampling and evals hold theirs and send it whole.
//
// What this package adds to the SDKs, and nothing more:
//
//   - Every request goes through the caller's *http.Client (mcpi's one
//     client and its egress policy), and no redirect leaves the provider's
//     origin, whatever that policy says: the key is on every request. The
//     SDKs' clients are not used (they read the environment: base URLs,
//     keys, profiles), only their services with explicit options.
//   - Bounds: a Stream reads at most Options.MaxBytes (16 MiB) over all its
//     attempts; a silence longer than Options.IdleTimeout (2 minutes), the
//     wait for the headers included, ends it; the caller's context is the
//     overall deadline.
//   - Retries are the SDKs' own (WithMaxRetries: Options.MaxRetries, 2 by
//     default; 408, 409, 429, 5xx and connection errors), because they
//     already read Retry-After-Ms and Retry-After and resend the body. The
//     wait is bounded here: an attempt refused with a Retry-After longer
//     than Options.MaxRetryWait (1 minute), or past the caller's deadline,
//     is marked not to be retried (x-should-retry: false, which both SDKs
//     obey), so the call ends at once with an ErrRateLimited or
//     ErrOverloaded error that says what was asked, rather than sleeping
//     into the deadline (the Anthropic SDK has no cap of its own).
//   - Errors: every error is an *Error of one Kind (errors.Is: ErrAuth,
//     ErrRateLimited, ErrTooLarge, ErrIdle...), its text cleaned of the key
//     (whatever the provider echoed) and of terminal controls; it does not
//     wrap the SDK's error, whose text may quote the request. A 401 or 403
//     names the variable that holds the key.
//   - Tool calls: a call whose arguments are not a JSON object, or whose
//     tool was not offered, is not an error of the turn: it is a ToolCall
//     with Invalid set, which the caller must not run and sends back to
//     the model as an error result, so that the model can correct itself
//     (as hosts do).
//   - Streaming text is kept in one builder per turn; the Anthropic SDK's
//     Message.Accumulate is used for everything but text deltas, which it
//     appends to a string (a copy of the whole text per delta).
//
// It imports of mcpi only bounds, safetext, strictyaml and transport; no terminal
// library, no command line.
package llm
