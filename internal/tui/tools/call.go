package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/schema"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// CallState is where a call is.
type CallState int

// Call states.
const (
	Running   CallState = iota
	Done                // a result arrived (isError or not)
	Failed              // no result: a protocol error, a timeout, a disconnect
	Cancelled           // the user cancelled it
)

func (s CallState) String() string {
	return [...]string{"running", "done", "failed", "cancelled"}[s]
}

// maxTextDisplay bounds the text of one content block shown on screen; the
// rest is still in the result (and saved with s).
const maxTextDisplay = 256 << 10

// Call is one tools/call made from the TUI.
type Call struct {
	ID   int
	Tool mcp.Tool
	Args map[string]any
	// AsTask runs the call as a task (tools/call with params.task, then
	// tasks/get until it ends, then tasks/result).
	AsTask   bool
	Start    time.Time
	End      time.Time
	State    CallState
	Progress *mcp.ProgressParams
	Result   *mcp.CallToolResult
	Raw      json.RawMessage
	Err      error
	// OutputProblems are how the structuredContent fails the tool's
	// outputSchema.
	OutputProblems []string
	// Saved lists the files written by the save key.
	Saved   []string
	SaveErr error

	cancel  context.CancelFunc
	blocks  []block           // prepared off the UI goroutine
	links   map[int]*linkRead // by block index
	lines   []string
	linesW  int
	offset  int
	structd string // pretty structuredContent
}

// block is one content block made ready for the screen.
type block struct {
	head   string
	body   string
	binary bool
	// ann describes the block's annotations (audience, priority,
	// lastModified), "" when it has none.
	ann string
	// link is the URI of a resource_link block: o reads it in place.
	link string
}

// linkRead is a linked resource read in place, under its link.
type linkRead struct {
	running bool
	err     error
	blocks  []block
}

// Duration is how long the call took (so far).
func (c *Call) Duration(now time.Time) time.Duration {
	if c.State == Running {
		return now.Sub(c.Start)
	}
	return c.End.Sub(c.Start)
}

// callDoneMsg reports the end of a call.
type callDoneMsg struct {
	id             int
	end            time.Time
	raw            json.RawMessage
	result         *mcp.CallToolResult
	err            error
	blocks         []block
	structd        string
	outputProblems []string
}

// callCmd runs a call; the result is decoded, checked and made ready for
// display on the Cmd's goroutine.
func callCmd(ctx context.Context, c *common.Common, client *session.Client, call *Call) tea.Cmd {
	tool := call.Tool
	id := call.ID
	args, _ := json.Marshal(call.Args)
	inbox := c.Inbox
	return func() tea.Msg {
		opts := &session.CallOptions{OnProgress: func(p mcp.ProgressParams) { inbox.Progress(id, p) }}
		params := mcp.CallToolParams{Name: tool.Name, Arguments: args}
		var raw json.RawMessage
		var err error
		onStatus := func(t mcp.Task) {
			msg := "task " + t.TaskID + ": " + t.Status
			if t.StatusMessage != "" {
				msg += " — " + t.StatusMessage
			}
			inbox.Progress(id, mcp.ProgressParams{Message: msg})
		}
		if call.AsTask {
			raw, err = client.CallToolAsTask(ctx, params, opts, onStatus)
		} else {
			// A 2026-07-28 server may answer with a task unasked (the
			// tasks extension): it is followed, its states shown alike.
			raw, err = client.CallToolFollow(ctx, params, opts, onStatus)
		}
		msg := callDoneMsg{id: id, end: c.Now(), raw: raw, err: err}
		if err != nil {
			return msg
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			msg.err = fmt.Errorf("the result is not a CallToolResult: %w", err)
			return msg
		}
		msg.result = &res
		msg.blocks = prepareBlocks(res.Content, c.Styles)
		if len(res.StructuredContent) > 0 {
			msg.structd = common.PrettyJSON(res.StructuredContent, c.Styles)
		}
		msg.outputProblems = checkOutput(tool.OutputSchema, &res)
		return msg
	}
}

// checkOutput checks structuredContent against the tool's outputSchema.
func checkOutput(outputSchema json.RawMessage, res *mcp.CallToolResult) []string {
	if len(outputSchema) == 0 || res.IsError {
		return nil
	}
	if len(res.StructuredContent) == 0 {
		return []string{"no structuredContent, though the tool declares an outputSchema"}
	}
	s, err := schema.Compile(outputSchema)
	if err != nil {
		return []string{"the outputSchema does not compile: " + err.Error()}
	}
	var out []string
	for _, p := range s.Validate(res.StructuredContent) {
		out = append(out, p.String())
	}
	return out
}

func prepareBlocks(content []mcp.Content, st *styles.Styles) []block {
	out := make([]block, 0, len(content))
	for _, c := range content {
		out = append(out, prepareBlock(c, st))
	}
	return out
}

func clipText(s string) string {
	if len(s) <= maxTextDisplay {
		return common.Block(s)
	}
	return common.Block(s[:maxTextDisplay]) + fmt.Sprintf("\n… (%s more not shown)", common.ByteSize(len(s)-maxTextDisplay))
}

func decodedSize(b64 string) (int, error) {
	n, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return base64.StdEncoding.DecodedLen(len(b64)), err
	}
	return len(n), nil
}

func prepareBlock(c mcp.Content, st *styles.Styles) block {
	b := prepareBody(c, st)
	b.ann = common.Annotations(c.Annotations)
	if c.Type == "resource_link" {
		b.link = c.URI
	}
	return b
}

func prepareBody(c mcp.Content, st *styles.Styles) block {
	switch c.Type {
	case "text":
		return block{head: "text", body: clipText(c.Text)}
	case "image", "audio":
		n, err := decodedSize(c.Data)
		h := fmt.Sprintf("[%s %s %s]", c.Type, common.Line(c.MimeType), common.ByteSize(n))
		if err != nil {
			h += " (invalid base64: " + err.Error() + ")"
		}
		return block{head: h, binary: err == nil}
	case "resource_link":
		h := "[resource link] " + common.Line(c.URI)
		var details []string
		if c.Name != "" {
			details = append(details, common.Line(c.Name))
		}
		if c.Title != "" {
			details = append(details, strconv.Quote(common.Line(c.Title)))
		}
		if c.MimeType != "" {
			details = append(details, common.Line(c.MimeType))
		}
		if c.Size != nil {
			details = append(details, common.ByteSize(int(*c.Size)))
		}
		if len(details) > 0 {
			h += " (" + strings.Join(details, ", ") + ")"
		}
		return block{head: h, body: common.Block(c.Description)}
	case "resource":
		r := c.Resource
		if r == nil {
			return block{head: "[resource] (no contents)"}
		}
		h := "[resource] " + common.Line(r.URI)
		if r.MimeType != "" {
			h += " (" + common.Line(r.MimeType) + ")"
		}
		switch {
		case r.Text != nil:
			body := clipText(*r.Text)
			if strings.Contains(r.MimeType, "json") && json.Valid([]byte(*r.Text)) && len(*r.Text) <= maxTextDisplay {
				body = common.PrettyJSON([]byte(*r.Text), st)
			}
			return block{head: h + " text", body: body}
		case r.Blob != nil:
			n, err := decodedSize(*r.Blob)
			h += " blob " + common.ByteSize(n)
			if err != nil {
				h += " (invalid base64: " + err.Error() + ")"
			}
			return block{head: h, binary: err == nil}
		}
		return block{head: h + " (neither text nor blob)"}
	}
	b, _ := json.Marshal(c)
	return block{head: "[" + common.Line(c.Type) + " content]", body: common.PrettyJSON(b, st)}
}

// savedMsg reports files written by the save key.
type savedMsg struct {
	id    int
	paths []string
	err   error
}

// saveCmd writes the binary content of a result (images, audio, blobs)
// into dir, one file each, never overwriting.
func saveCmd(dir string, call *Call) tea.Cmd {
	id, tool := call.ID, call.Tool.Name
	var content []mcp.Content
	if call.Result != nil {
		content = call.Result.Content
	}
	return func() tea.Msg {
		if dir == "" {
			dir = "."
		}
		var paths []string
		for i, c := range content {
			var data, mimeType, kind string
			switch {
			case c.Type == "image" || c.Type == "audio":
				data, mimeType, kind = c.Data, c.MimeType, c.Type
			case c.Type == "resource" && c.Resource != nil && c.Resource.Blob != nil:
				data, mimeType, kind = *c.Resource.Blob, c.Resource.MimeType, "blob"
			default:
				continue
			}
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil {
				continue
			}
			p, err := save.New(dir, fmt.Sprintf("%s-%d-%d-%s", save.Name(tool), id, i+1, kind), save.Extension(mimeType), b)
			if err != nil {
				return savedMsg{id: id, paths: paths, err: err}
			}
			paths = append(paths, p)
		}
		if len(paths) == 0 {
			return savedMsg{id: id, err: errors.New("nothing to save: the result has no image, audio or blob")}
		}
		return savedMsg{id: id, paths: paths}
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// RenderContent makes one content block ready for the screen: a heading, a
// safe body (text, pretty JSON) and whether it holds binary data that the
// save key can write. Other panes (prompts, resources) show content with it.
func RenderContent(c mcp.Content, st *styles.Styles) (head, body string, binary bool) {
	b := prepareBlock(c, st)
	if b.ann != "" {
		b.head += "  " + st.Dim.Render(b.ann)
	}
	return b.head, b.body, b.binary
}

func (c *Call) hasLinks() bool {
	for _, b := range c.blocks {
		if b.link != "" {
			return true
		}
	}
	return false
}

// linkReadMsg carries a linked resource read in place.
type linkReadMsg struct {
	call, block int
	blocks      []block
	err         error
}

// maxLinkReads bounds the links one key reads.
const maxLinkReads = 20

// readLinks reads the resources the call's result links to, each under its
// link, at most maxLinkReads of them; links read already are left alone.
func readLinks(ctx context.Context, c *common.Common, client *session.Client, call *Call) (tea.Cmd, int) {
	if call.links == nil {
		call.links = map[int]*linkRead{}
	}
	var cmds []tea.Cmd
	for i, b := range call.blocks {
		if b.link == "" || len(cmds) == maxLinkReads {
			continue
		}
		if lr := call.links[i]; lr != nil && (lr.running || lr.err == nil) {
			continue
		}
		call.links[i] = &linkRead{running: true}
		id, idx, uri, st := call.ID, i, b.link, c.Styles
		cmds = append(cmds, func() tea.Msg {
			res, err := client.ReadResource(ctx, uri, nil)
			msg := linkReadMsg{call: id, block: idx, err: err}
			if err == nil {
				for _, rc := range res.Contents {
					rc := rc
					msg.blocks = append(msg.blocks, prepareBlock(mcp.Content{Type: "resource", Resource: &rc}, st))
				}
			}
			return msg
		})
	}
	return tea.Batch(cmds...), len(cmds)
}
