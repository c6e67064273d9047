// The tests drive the demo through the SDK's own client, including its
// deprecated sampling, roots and logging APIs.
//
//lint:file-ignore SA1019 the tests exercise the deprecated sampling, roots and logging features on purpose.

package demoserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpi-dev/mcpi/internal/demoserver"
)

// waitTimeout bounds every wait for something the server sends. It is
// generous because the race detector and a busy machine slow everything.
const waitTimeout = 30 * time.Second

// stdioEnv makes the test binary serve the demo over stdio (see TestMain).
const stdioEnv = "MCPI_DEMOSERVER_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) != "" {
		if err := demoserver.RunStdio(context.Background(), demoserver.Options{Era: demoserver.EraLegacy}); err != nil {
			fmt.Fprintln(os.Stderr, "demo server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// connect starts a demo server and connects an SDK client to it in memory.
// proto is the revision the client asks for; "" means the SDK's latest.
func connect(t *testing.T, opts demoserver.Options, copts *mcp.ClientOptions, proto string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := demoserver.New(opts).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return connectClient(t, ct, copts, proto)
}

func connectClient(t *testing.T, transport mcp.Transport, copts *mcp.ClientOptions, proto string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "demoserver-test", Version: "0.0.1"}, copts)
	// Not a context with a timeout: the SDK's HTTP+SSE client ties its
	// event stream to the context given to Connect, so the session would
	// die when the timeout's cancel ran.
	cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: proto})
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// clientName names a requested protocol version in test names.
func clientName(version string) string {
	if version == "" {
		return "latest"
	}
	return version
}

// receive waits for the next value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

// text joins the text blocks of content.
func text(content []mcp.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestOptionsValidate(t *testing.T) {
	for _, era := range []string{"", demoserver.EraBoth, demoserver.EraLegacy, demoserver.EraModern} {
		if err := (demoserver.Options{Era: era}).Validate(); err != nil {
			t.Errorf("era %q: %v", era, err)
		}
	}
	if err := (demoserver.Options{Era: "future"}).Validate(); err == nil {
		t.Error("era \"future\" was accepted")
	}
	if err := demoserver.RunStdio(t.Context(), demoserver.Options{Era: "future"}); err == nil {
		t.Error("RunStdio accepted era \"future\"")
	}
}

func TestEraNegotiation(t *testing.T) {
	tests := []struct {
		era, client, want string
	}{
		{demoserver.EraLegacy, "", "2025-11-25"}, // the client tries 2026-07-28 first, then falls back
		{demoserver.EraLegacy, "2024-11-05", "2024-11-05"},
		{demoserver.EraLegacy, "2025-06-18", "2025-06-18"},
		{demoserver.EraBoth, "", "2026-07-28"},
		{demoserver.EraBoth, "2025-03-26", "2025-03-26"},
		{demoserver.EraModern, "", "2026-07-28"},
	}
	for _, tt := range tests {
		t.Run(tt.era+"/"+clientName(tt.client), func(t *testing.T) {
			cs := connect(t, demoserver.Options{Era: tt.era}, nil, tt.client)
			if got := cs.InitializeResult().ProtocolVersion; got != tt.want {
				t.Errorf("negotiated %q, want %q", got, tt.want)
			}
			// Every era must actually serve requests, not just negotiate.
			if got := text(callTool(t, cs, "echo", map[string]any{"text": "hi"}).Content); got != "hi" {
				t.Errorf("echo returned %q", got)
			}
		})
	}
}

func TestInitializeResult(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	res := cs.InitializeResult()
	if res.ServerInfo.Name != "mcpi-demo" || res.ServerInfo.Version != "0.1.0" {
		t.Errorf("server info = %+v", res.ServerInfo)
	}
	if res.Instructions == "" {
		t.Error("no instructions")
	}
	c := res.Capabilities
	switch {
	case c.Tools == nil || !c.Tools.ListChanged:
		t.Errorf("tools capability = %+v", c.Tools)
	case c.Resources == nil || !c.Resources.ListChanged || !c.Resources.Subscribe:
		t.Errorf("resources capability = %+v", c.Resources)
	case c.Prompts == nil || !c.Prompts.ListChanged:
		t.Errorf("prompts capability = %+v", c.Prompts)
	case c.Logging == nil:
		t.Error("no logging capability")
	case c.Completions == nil:
		t.Error("no completions capability")
	}
}

// collect gathers every item of a paginated list, page by page, and
// returns the names and the number of pages.
func collect[R any](t *testing.T, list func(cursor string) (R, error), names func(R) ([]string, string)) ([]string, int) {
	t.Helper()
	var all []string
	pages := 0
	for cursor := ""; ; {
		res, err := list(cursor)
		if err != nil {
			t.Fatalf("listing page %d: %v", pages+1, err)
		}
		pages++
		got, next := names(res)
		all = append(all, got...)
		if next == "" {
			return all, pages
		}
		if pages > 10 {
			t.Fatal("more than 10 pages")
		}
		cursor = next
	}
}

func TestListsPaginate(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	ctx := testContext(t)

	tools, pages := collect(t,
		func(c string) (*mcp.ListToolsResult, error) {
			return cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: c})
		},
		func(r *mcp.ListToolsResult) ([]string, string) {
			var names []string
			for _, x := range r.Tools {
				names = append(names, x.Name)
			}
			return names, r.NextCursor
		})
	wantTools := []string{
		"add", "big_output", "bump_counter", "delete_file", "echo", "elicit", "elicit_url", "fail",
		"get_content_types", "list_roots", "log", "long_running", "nested_args", "read_only_info",
		"sample", "slow", "structured", "toggle_tool",
	}
	if !slices.Equal(tools, wantTools) {
		t.Errorf("tools = %v\nwant %v", tools, wantTools)
	}
	if pages != 2 {
		t.Errorf("tools came in %d pages, want 2", pages)
	}

	resources, pages := collect(t,
		func(c string) (*mcp.ListResourcesResult, error) {
			return cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
		},
		func(r *mcp.ListResourcesResult) ([]string, string) {
			var uris []string
			for _, x := range r.Resources {
				uris = append(uris, x.URI)
			}
			return uris, r.NextCursor
		})
	if len(resources) != 16 || pages != 2 {
		t.Errorf("got %d resources in %d pages, want 16 in 2: %v", len(resources), pages, resources)
	}
	for _, uri := range []string{"demo://text/hello", "demo://json/config", "demo://binary/logo.png", "demo://counter", "demo://items/12"} {
		if !slices.Contains(resources, uri) {
			t.Errorf("resource %s not listed", uri)
		}
	}

	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if want := []string{"demo://greeting/{lang}/{name}", "demo://items/{id}"}; !slices.Equal(templates, want) {
		t.Errorf("templates = %v, want %v", templates, want)
	}

	var prompts []string
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p.Name)
	}
	if want := []string{"code_review", "greet", "showcase"}; !slices.Equal(prompts, want) {
		t.Errorf("prompts = %v, want %v", prompts, want)
	}
}

func TestToolDefinitions(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(testContext(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
		if tool.Title == "" {
			t.Errorf("tool %s has no title", tool.Name)
		}
	}
	if a := tools["delete_file"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete_file annotations = %+v", a)
	}
	if a := tools["read_only_info"].Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("read_only_info annotations = %+v", a)
	}
	for _, name := range []string{"add", "structured", "read_only_info"} {
		if tools[name].OutputSchema == nil {
			t.Errorf("%s has no output schema", name)
		}
	}
	schema, err := json.Marshal(tools["nested_args"].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"required":["name","address"]`, `"default":3`, `["string","null"]`, `"enum":["red","green","blue"]`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("nested_args schema lacks %s: %s", want, schema)
		}
	}
}

func TestTools(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")

	t.Run("echo", func(t *testing.T) {
		if got := text(callTool(t, cs, "echo", map[string]any{"text": "héllo"}).Content); got != "héllo" {
			t.Errorf("got %q", got)
		}
	})

	t.Run("add", func(t *testing.T) {
		res := callTool(t, cs, "add", map[string]any{"a": 2, "b": 3.5})
		got, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != `{"sum":5.5}` {
			t.Errorf("structuredContent = %s", got)
		}
		if text(res.Content) != `{"sum":5.5}` {
			t.Errorf("content = %q, want the JSON of the structured content", text(res.Content))
		}
	})

	t.Run("fail", func(t *testing.T) {
		res := callTool(t, cs, "fail", map[string]any{"message": "boom"})
		if !res.IsError || text(res.Content) != "boom" {
			t.Errorf("got isError=%v %q", res.IsError, text(res.Content))
		}
	})

	t.Run("fail protocol", func(t *testing.T) {
		_, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"kind": "protocol"}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError {
			t.Errorf("got error %v, want a JSON-RPC internal error", err)
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		if res := callTool(t, cs, "add", map[string]any{"a": "two"}); !res.IsError {
			t.Error("add accepted a string")
		}
	})

	t.Run("get_content_types", func(t *testing.T) {
		res := callTool(t, cs, "get_content_types", map[string]any{})
		var kinds []string
		for _, c := range res.Content {
			switch c := c.(type) {
			case *mcp.TextContent:
				kinds = append(kinds, "text")
			case *mcp.ImageContent:
				kinds = append(kinds, "image")
				img, err := png.Decode(bytes.NewReader(c.Data))
				if err != nil || c.MIMEType != "image/png" || img.Bounds().Dx() != 16 {
					t.Errorf("image: %s, %v", c.MIMEType, err)
				}
			case *mcp.AudioContent:
				kinds = append(kinds, "audio")
				if c.MIMEType != "audio/wav" || !bytes.HasPrefix(c.Data, []byte("RIFF")) || !bytes.Equal(c.Data[8:12], []byte("WAVE")) {
					t.Errorf("audio: %s, %q", c.MIMEType, c.Data[:12])
				}
			case *mcp.ResourceLink:
				kinds = append(kinds, "resource_link")
			case *mcp.EmbeddedResource:
				if c.Resource.Blob != nil {
					kinds = append(kinds, "resource_blob")
				} else {
					kinds = append(kinds, "resource_text")
				}
			default:
				t.Errorf("unexpected content %T", c)
			}
		}
		if want := []string{"text", "image", "audio", "resource_link", "resource_text", "resource_blob"}; !slices.Equal(kinds, want) {
			t.Errorf("content types = %v, want %v", kinds, want)
		}
		if only := callTool(t, cs, "get_content_types", map[string]any{"only": "audio"}); len(only.Content) != 1 {
			t.Errorf("only=audio returned %d blocks", len(only.Content))
		}
	})

	t.Run("structured", func(t *testing.T) {
		res := callTool(t, cs, "structured", map[string]any{})
		var w struct {
			City string `json:"city"`
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &w); err != nil || w.City != "Paris" {
			t.Errorf("structuredContent = %s (%v)", raw, err)
		}
	})

	t.Run("nested_args", func(t *testing.T) {
		res := callTool(t, cs, "nested_args", map[string]any{
			"name":    "n",
			"address": map[string]any{"city": "Lyon"},
			"items":   []any{map[string]any{"sku": "a"}},
		})
		if res.IsError || !strings.Contains(text(res.Content), `"count": 3`) {
			t.Errorf("defaults not applied: %q", text(res.Content))
		}
		if res := callTool(t, cs, "nested_args", map[string]any{"name": "n"}); !res.IsError {
			t.Error("missing required address was accepted")
		}
	})

	t.Run("big_output", func(t *testing.T) {
		const size = 1<<20 + 7
		if got := len(text(callTool(t, cs, "big_output", map[string]any{"bytes": size}).Content)); got != size {
			t.Errorf("got %d bytes, want %d", got, size)
		}
	})

	t.Run("annotated", func(t *testing.T) {
		if got := text(callTool(t, cs, "delete_file", map[string]any{"path": "/etc/passwd"}).Content); !strings.Contains(got, "Nothing was deleted") {
			t.Errorf("delete_file said %q", got)
		}
		raw, _ := json.Marshal(callTool(t, cs, "read_only_info", map[string]any{}).StructuredContent)
		for _, want := range []string{`"client":"demoserver-test"`, `"protocolVersion":"2025-11-25"`} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("read_only_info = %s, lacks %s", raw, want)
			}
		}
	})

	t.Run("slow", func(t *testing.T) {
		if got := text(callTool(t, cs, "slow", map[string]any{"ms": 1}).Content); got != "Waited 1ms." {
			t.Errorf("got %q", got)
		}
	})
}

func TestResources(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	tests := []struct {
		uri, mimeType, text string
	}{
		{"demo://text/hello", "text/plain", "Hello from the mcpi demo server!"},
		{"demo://json/config", "application/json", `"name": "mcpi-demo"`},
		{"demo://counter", "text/plain", "0"},
		{"demo://items/3", "text/plain", "This is item 3."},
		{"demo://items/42", "text/plain", "This is item 42."},
		{"demo://greeting/fr/Zo%C3%A9", "text/plain", "Bonjour, Zoé!"},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			res, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: tt.uri})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Contents[0]
			if c.URI != tt.uri || c.MIMEType != tt.mimeType || !strings.Contains(c.Text, tt.text) {
				t.Errorf("got %s %s %q", c.URI, c.MIMEType, c.Text)
			}
		})
	}

	t.Run("blob", func(t *testing.T) {
		res, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: "demo://binary/logo.png"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(res.Contents[0].Blob)); err != nil {
			t.Errorf("logo is not a PNG: %v", err)
		}
	})

	for _, uri := range []string{"demo://nope", "demo://items/0", "demo://greeting/xx/Bob"} {
		t.Run("missing "+uri, func(t *testing.T) {
			if _, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: uri}); err == nil {
				t.Error("no error")
			}
		})
	}
}

func TestPrompts(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	ctx := testContext(t)

	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada", "style": "pirate"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "Greet Ada the way a pirate would." {
		t.Errorf("greet: %q", got)
	}

	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err == nil {
		t.Error("greet without name: no error")
	}

	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "code_review", Arguments: map[string]string{"code": "x := 1", "language": "go"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(got, "```go\nx := 1\n```") {
		t.Errorf("code_review: %q", got)
	}

	res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "showcase"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	roles := map[mcp.Role]bool{}
	for _, m := range res.Messages {
		kinds = append(kinds, fmt.Sprintf("%T", m.Content))
		roles[m.Role] = true
	}
	for _, want := range []string{"*mcp.EmbeddedResource", "*mcp.ImageContent", "*mcp.AudioContent", "*mcp.ResourceLink", "*mcp.TextContent"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("showcase has no %s: %v", want, kinds)
		}
	}
	if !roles["user"] || !roles["assistant"] {
		t.Errorf("showcase roles = %v", roles)
	}
}

func TestCompletion(t *testing.T) {
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, nil, "")
	tests := []struct {
		name        string
		ref         *mcp.CompleteReference
		arg, value  string
		context     map[string]string
		want        []string
		total       int
		wantHasMore bool
	}{
		{"prompt style", &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "style", "f", nil, []string{"formal"}, 1, false},
		{"prompt language", &mcp.CompleteReference{Type: "ref/prompt", Name: "code_review"}, "language", "JA", nil, []string{"java", "javascript"}, 2, false},
		{"template lang", &mcp.CompleteReference{Type: "ref/resource", URI: "demo://greeting/{lang}/{name}"}, "lang", "", nil, []string{"de", "en", "es", "fr", "ja"}, 5, false},
		{"template name in context", &mcp.CompleteReference{Type: "ref/resource", URI: "demo://greeting/{lang}/{name}"}, "name", "", map[string]string{"lang": "fr"}, []string{"Amélie", "Baptiste", "Camille"}, 3, false},
		{"template name filtered", &mcp.CompleteReference{Type: "ref/resource", URI: "demo://greeting/{lang}/{name}"}, "name", "b", nil, []string{"Baptiste", "Benito", "Bernd", "Bob"}, 4, false},
		{"unknown argument", &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, "name", "", nil, []string{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: tt.arg, Value: tt.value}}
			if tt.context != nil {
				params.Context = &mcp.CompleteContext{Arguments: tt.context}
			}
			res, err := cs.Complete(testContext(t), params)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Completion
			if !slices.Equal(c.Values, tt.want) || c.Total != tt.total || c.HasMore != tt.wantHasMore {
				t.Errorf("got %v (total %d, hasMore %v), want %v (total %d)", c.Values, c.Total, c.HasMore, tt.want, tt.total)
			}
		})
	}

	t.Run("more than a page", func(t *testing.T) {
		res, err := cs.Complete(testContext(t), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "demo://items/{id}"},
			Argument: mcp.CompleteParamsArgument{Name: "id"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Completion; len(c.Values) != 100 || c.Total != 500 || !c.HasMore {
			t.Errorf("got %d values, total %d, hasMore %v", len(c.Values), c.Total, c.HasMore)
		}
	})
}

func TestProgressLogsAndCancellation(t *testing.T) {
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	logs := make(chan *mcp.LoggingMessageParams, 100)
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- req.Params
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs <- req.Params
		},
	}, "")
	ctx := testContext(t)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}

	params := &mcp.CallToolParams{Name: "long_running", Arguments: map[string]any{"steps": 3, "interval_ms": 1}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("long_running: %v %v", err, res)
	}
	for step := 1; step <= 3; step++ {
		p := receive(t, progress, "progress")
		if p.ProgressToken != "tok-1" || p.Progress != float64(step) || p.Total != 3 || p.Message == "" {
			t.Errorf("progress %d = %+v", step, p)
		}
		if l := receive(t, logs, "log"); l.Level != "info" || l.Logger != "long_running" {
			t.Errorf("log %d = %+v", step, l)
		}
	}

	t.Run("log levels", func(t *testing.T) {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatal(err)
		}
		callTool(t, cs, "log", map[string]any{"logger": "test-logger"})
		for _, want := range []mcp.LoggingLevel{"warning", "error", "critical", "alert", "emergency"} {
			if l := receive(t, logs, "log "+string(want)); l.Level != want || l.Logger != "test-logger" {
				t.Errorf("got %+v, want level %s", l, want)
			}
		}
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		params := &mcp.CallToolParams{Name: "long_running", Arguments: map[string]any{"steps": 1000, "interval_ms": 1}}
		params.SetProgressToken("tok-2")
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, params)
			done <- err
		}()
		// Cancel once the call is under way.
		for receive(t, progress, "progress").ProgressToken != "tok-2" {
		}
		cancel()
		if err := receive(t, done, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call returned %v", err)
		}
		// The session survives a cancellation.
		callTool(t, cs, "echo", map[string]any{"text": "still here"})
	})
}

// clientHandlers answers the server's requests the way a test user would,
// and records what it was asked.
type clientHandlers struct {
	elicitations chan *mcp.ElicitParams
	completions  chan string
}

func newClientOptions(h *clientHandlers) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			RootsV2: &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{},
				URL:  &mcp.URLElicitationCapabilities{},
			},
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{
				Role:       "assistant",
				Model:      "test-model",
				StopReason: "endTurn",
				Content:    &mcp.TextContent{Text: "you said: " + prompt},
			}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.elicitations <- req.Params
			if req.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace", "age": 42, "size": "l"}}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			h.completions <- req.Params.ElicitationID
		},
	}
}

func newClientHandlers() *clientHandlers {
	return &clientHandlers{elicitations: make(chan *mcp.ElicitParams, 10), completions: make(chan string, 10)}
}

// testServerRequests checks the tools that need something from the client.
// legacy says whether the session speaks a legacy revision, where these are
// server-to-client requests rather than multi round-trip results.
func testServerRequests(t *testing.T, cs *mcp.ClientSession, h *clientHandlers, legacy bool) {
	t.Run("sample", func(t *testing.T) {
		res := callTool(t, cs, "sample", map[string]any{"prompt": "ping"})
		if got := text(res.Content); !strings.HasPrefix(got, "you said: ping") || !strings.Contains(got, "test-model") {
			t.Errorf("sample returned %q", got)
		}
	})

	t.Run("elicit", func(t *testing.T) {
		res := callTool(t, cs, "elicit", map[string]any{})
		asked := receive(t, h.elicitations, "elicitation")
		if asked.Mode != "form" || asked.RequestedSchema == nil {
			t.Errorf("asked %+v", asked)
		}
		got := text(res.Content)
		for _, want := range []string{`"action": "accept"`, `"name": "Grace"`, `"size": "l"`} {
			if !strings.Contains(got, want) {
				t.Errorf("elicit returned %s, lacks %s", got, want)
			}
		}
	})

	t.Run("elicit_url", func(t *testing.T) {
		res := callTool(t, cs, "elicit_url", map[string]any{})
		asked := receive(t, h.elicitations, "elicitation")
		if asked.Mode != "url" || !strings.HasPrefix(asked.URL, "https://") {
			t.Errorf("asked %+v", asked)
		}
		if !strings.Contains(text(res.Content), `"action": "accept"`) {
			t.Errorf("elicit_url returned %q", text(res.Content))
		}
		if legacy {
			if asked.ElicitationID == "" {
				t.Error("no elicitationId")
			}
			if id := receive(t, h.completions, "notifications/elicitation/complete"); id != asked.ElicitationID {
				t.Errorf("completion for %q, want %q", id, asked.ElicitationID)
			}
		}
	})

	t.Run("list_roots", func(t *testing.T) {
		got := text(callTool(t, cs, "list_roots", map[string]any{}).Content)
		if !strings.Contains(got, "file:///work/project (project)") {
			t.Errorf("list_roots returned %q", got)
		}
	})
}

func TestServerRequests(t *testing.T) {
	for _, tt := range []struct {
		era    string
		legacy bool
	}{
		{demoserver.EraLegacy, true},
		{demoserver.EraModern, false},
	} {
		t.Run(tt.era, func(t *testing.T) {
			h := newClientHandlers()
			copts := newClientOptions(h)
			st, ct := mcp.NewInMemoryTransports()
			ss, err := demoserver.New(demoserver.Options{Era: tt.era}).Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ss.Close() })
			client := mcp.NewClient(&mcp.Implementation{Name: "demoserver-test", Version: "0.0.1"}, copts)
			client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
			cs, err := client.Connect(testContext(t), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			testServerRequests(t, cs, h, tt.legacy)
		})
	}

	t.Run("missing capabilities", func(t *testing.T) {
		cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}, "")
		for _, tool := range []string{"sample", "elicit", "elicit_url", "list_roots"} {
			if res := callTool(t, cs, tool, map[string]any{"prompt": "x"}); !res.IsError {
				t.Errorf("%s without the capability: %q", tool, text(res.Content))
			}
		}
	})
}

func TestSubscribeCounter(t *testing.T) {
	for _, era := range []string{demoserver.EraLegacy, demoserver.EraModern} {
		t.Run(era, func(t *testing.T) {
			updated := make(chan string, 100)
			copts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			}}

			// An hour between ticks: only bump_counter moves the counter.
			cs := connect(t, demoserver.Options{Era: era, CounterInterval: time.Hour}, copts, "")
			ctx := testContext(t)
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "demo://counter"}); err != nil {
				t.Fatal(err)
			}
			// In the modern era the SDK client opens its subscriptions/listen
			// stream in the background, so the first bumps may come before
			// the server knows of the subscription: bump until one is seen.
			var uri string
			bumps := 0
			for uri == "" && bumps < 50 {
				bumps++
				want := fmt.Sprintf("is now %d", bumps)
				if got := text(callTool(t, cs, "bump_counter", map[string]any{}).Content); !strings.Contains(got, want) {
					t.Fatalf("bump_counter returned %q, want %q", got, want)
				}
				select {
				case uri = <-updated:
				case <-time.After(200 * time.Millisecond):
				}
			}
			if uri != "demo://counter" {
				t.Fatalf("no resources/updated after %d bumps (got %q)", bumps, uri)
			}
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://counter"})
			if err != nil || res.Contents[0].Text != fmt.Sprint(bumps) {
				t.Errorf("counter reads %v, %v; want %d", res, err, bumps)
			}
		})
	}

	t.Run("ticks", func(t *testing.T) {
		updated := make(chan string, 100)
		copts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			// The counter keeps ticking until the session closes; never
			// block the client on ticks nobody reads.
			select {
			case updated <- req.Params.URI:
			default:
			}
		}}
		cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy, CounterInterval: 5 * time.Millisecond}, copts, "")
		if err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: "demo://counter"}); err != nil {
			t.Fatal(err)
		}
		receive(t, updated, "a first tick")
		receive(t, updated, "a second tick")
	})
}

func TestListChanged(t *testing.T) {
	tools := make(chan struct{}, 10)
	prompts := make(chan struct{}, 10)
	resources := make(chan struct{}, 10)
	cs := connect(t, demoserver.Options{Era: demoserver.EraLegacy}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { prompts <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources <- struct{}{} },
	}, "")
	ctx := testContext(t)

	hasExtraTool := func() bool {
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tool.Name == "extra_tool" {
				return true
			}
		}
		return false
	}

	callTool(t, cs, "toggle_tool", map[string]any{})
	receive(t, tools, "tools/list_changed after adding")
	if !hasExtraTool() {
		t.Error("extra_tool not listed after toggling it on")
	}
	callTool(t, cs, "toggle_tool", map[string]any{})
	receive(t, tools, "tools/list_changed after removing")
	if hasExtraTool() {
		t.Error("extra_tool still listed after toggling it off")
	}

	callTool(t, cs, "toggle_tool", map[string]any{"kind": "prompt"})
	receive(t, prompts, "prompts/list_changed")
	callTool(t, cs, "toggle_tool", map[string]any{"kind": "resource"})
	receive(t, resources, "resources/list_changed")
}

func TestStreamableHTTP(t *testing.T) {
	tests := []struct {
		era, client, want string
		legacy            bool
	}{
		{demoserver.EraLegacy, "", "2025-11-25", true},
		{demoserver.EraBoth, "", "2026-07-28", false},
		// Routed to the stateful handler by its MCP-Protocol-Version header.
		{demoserver.EraBoth, "2025-06-18", "2025-06-18", true},
		{demoserver.EraModern, "", "2026-07-28", false},
	}
	for _, tt := range tests {
		t.Run(tt.era+"/"+clientName(tt.client), func(t *testing.T) {
			srv := httptest.NewServer(demoserver.HTTPHandler(demoserver.Options{Era: tt.era}))
			t.Cleanup(srv.Close)
			h := newClientHandlers()
			copts := newClientOptions(h)
			progress := make(chan *mcp.ProgressNotificationParams, 100)
			copts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				progress <- req.Params
			}
			updated := make(chan string, 100)
			copts.ResourceUpdatedHandler = func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "demoserver-test", Version: "0.0.1"}, copts)
			client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
			cs, err := client.Connect(testContext(t), &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: tt.client})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			if got := cs.InitializeResult().ProtocolVersion; got != tt.want {
				t.Errorf("negotiated %s, want %s", got, tt.want)
			}
			if tt.legacy && cs.ID() == "" {
				t.Error("no Mcp-Session-Id on a legacy session")
			}

			if got := text(callTool(t, cs, "echo", map[string]any{"text": "over http"}).Content); got != "over http" {
				t.Errorf("echo: %q", got)
			}
			params := &mcp.CallToolParams{Name: "long_running", Arguments: map[string]any{"steps": 2, "interval_ms": 1}}
			params.SetProgressToken(7)
			if _, err := cs.CallTool(testContext(t), params); err != nil {
				t.Fatal(err)
			}
			for step := 1; step <= 2; step++ {
				if p := receive(t, progress, "progress"); p.Progress != float64(step) {
					t.Errorf("progress %+v", p)
				}
			}
			testServerRequests(t, cs, h, tt.legacy)

			// Legacy sessions get the notification on their GET stream, modern
			// ones on a subscriptions/listen response stream.
			if err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: "demo://counter"}); err != nil {
				t.Fatal(err)
			}
			callTool(t, cs, "bump_counter", map[string]any{})
			if uri := receive(t, updated, "resources/updated"); uri != "demo://counter" {
				t.Errorf("updated %s", uri)
			}
		})
	}
}

func TestSSE(t *testing.T) {
	srv := httptest.NewServer(demoserver.SSEHandler(demoserver.Options{}))
	t.Cleanup(srv.Close)
	cs := connectClient(t, &mcp.SSEClientTransport{Endpoint: srv.URL}, nil, "")
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %s over HTTP+SSE", got)
	}
	if got := text(callTool(t, cs, "echo", map[string]any{"text": "over sse"}).Content); got != "over sse" {
		t.Errorf("echo: %q", got)
	}
}

func TestStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	cmd.Stderr = os.Stderr
	cs := connectClient(t, &mcp.CommandTransport{Command: cmd}, nil, "")
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		t.Errorf("negotiated %s over stdio", got)
	}

	// A request above the SDK's default 16 MiB line limit, which RunStdio
	// lifts. The SDK client keeps the limit for what it reads, so the big
	// value goes in an argument slow ignores rather than through echo.
	// It takes seconds under the race detector.
	if !testing.Short() {
		padding := strings.Repeat("x", 17<<20)
		if res := callTool(t, cs, "slow", map[string]any{"ms": 0, "padding": padding}); res.IsError {
			t.Errorf("17 MiB request: %q", text(res.Content))
		}
	}

	// Closing stdin is EOF for the server: RunStdio returns nil and the
	// process exits 0 rather than being killed.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Errorf("server process ended with %v", cmd.ProcessState)
	}
}
