// Package resources holds the resources pane (the paged list of the
// server's resources, reading them, subscribing to their updates) and the
// templates pane (filling a URI template's variables with completions, then
// reading the URI). Both show what they read with the same viewer.
package resources

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/save"
	"github.com/mcpi-dev/mcpi/internal/session"
	"github.com/mcpi-dev/mcpi/internal/tui/common"
	"github.com/mcpi-dev/mcpi/internal/tui/styles"
)

// maxText bounds the text of one content shown on screen.
const maxText = 256 << 10

// reading is one resources/read and what it returned, laid out once.
type reading struct {
	uri    string
	result *mcp.ReadResourceResult
	err    error
	lines  []string
	offset int
	saved  []string
	saveE  error
}

// readMsg carries the result of a read.
type readMsg struct {
	pane  string
	uri   string
	res   *mcp.ReadResourceResult
	err   error
	lines []string
}

func readCmd(ctx context.Context, client *session.Client, pane, uri string, st *styles.Styles, width int) tea.Cmd {
	return func() tea.Msg {
		res, err := client.ReadResource(ctx, uri, nil)
		msg := readMsg{pane: pane, uri: uri, res: res, err: err}
		if err == nil {
			msg.lines = layoutContents(res, st, width)
		}
		return msg
	}
}

// layoutContents formats every content of a read: text as text, JSON
// pretty, binary as a summary (the save key writes it).
func layoutContents(res *mcp.ReadResourceResult, st *styles.Styles, width int) []string {
	w := max(10, width)
	var lines []string
	add := func(s string) { lines = append(lines, common.Wrap(s, w)...) }
	if len(res.Contents) == 0 {
		add(st.Dim.Render("(no contents)"))
	}
	for i, c := range res.Contents {
		head := fmt.Sprintf("── %d %s", i+1, common.Line(c.URI))
		if c.MimeType != "" {
			head += " (" + common.Line(c.MimeType) + ")"
		}
		switch {
		case c.Text != nil:
			head += fmt.Sprintf(" text %s", common.ByteSize(len(*c.Text)))
			lines = append(lines, st.Title.Render(common.Truncate(head, w)))
			t := *c.Text
			switch {
			case len(t) <= maxText && (strings.Contains(c.MimeType, "json") || looksJSON(t)) && json.Valid([]byte(t)):
				add(common.PrettyJSON([]byte(t), st))
			case len(t) > maxText:
				add(common.Block(t[:maxText]))
				add(st.Dim.Render(fmt.Sprintf("… (%s more not shown)", common.ByteSize(len(t)-maxText))))
			default:
				add(common.Block(t))
			}
		case c.Blob != nil:
			n, err := base64.StdEncoding.DecodeString(*c.Blob)
			head += " blob " + common.ByteSize(len(n))
			lines = append(lines, st.Title.Render(common.Truncate(head, w)))
			if err != nil {
				add(st.Error.Render("invalid base64: ") + common.Line(err.Error()))
			} else {
				add(st.Dim.Render(fmt.Sprintf("binary data, %s (s saves it)", common.ByteSize(len(n)))))
			}
		default:
			lines = append(lines, st.Title.Render(common.Truncate(head, w)))
			add(st.Warning.Render("neither text nor blob"))
		}
	}
	return lines
}

func looksJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// savedMsg reports the files written by the save key.
type savedMsg struct {
	pane  string
	uri   string
	paths []string
	err   error
}

// saveCmd writes the blobs of a read into dir, never overwriting.
func saveCmd(dir, pane string, r *reading) tea.Cmd {
	uri := r.uri
	var contents []mcp.ResourceContents
	if r.result != nil {
		contents = r.result.Contents
	}
	return func() tea.Msg {
		if dir == "" {
			dir = "."
		}
		var paths []string
		for i, c := range contents {
			if c.Blob == nil {
				continue
			}
			data, err := base64.StdEncoding.DecodeString(*c.Blob)
			if err != nil {
				return savedMsg{pane: pane, uri: uri, paths: paths, err: err}
			}
			base := safeName(c.URI)
			if base == "" {
				base = "resource"
			}
			path, err := save.New(dir, fmt.Sprintf("%s-%d", base, i+1), save.Extension(c.MimeType), data)
			if err != nil {
				return savedMsg{pane: pane, uri: uri, paths: paths, err: err}
			}
			paths = append(paths, path)
		}
		if len(paths) == 0 {
			return savedMsg{pane: pane, uri: uri, err: fmt.Errorf("nothing binary to save")}
		}
		return savedMsg{pane: pane, uri: uri, paths: paths}
	}
}

// safeName makes a file name of a URI's last segment, without its
// extension (the content's type gives one).
func safeName(uri string) string {
	if i := strings.LastIndexAny(uri, "/:"); i >= 0 {
		uri = uri[i+1:]
	}
	return save.Name(strings.TrimSuffix(uri, filepath.Ext(uri)))
}

// viewReading renders a reading in h rows: a status line, then the lines.
func viewReading(st *styles.Styles, r *reading, w, h int, running bool) []string {
	if r == nil {
		return []string{st.Dim.Render("Nothing read yet: enter reads the selected item.")}
	}
	var out []string
	head := st.Title.Render("read ") + common.Line(r.uri)
	switch {
	case running:
		head += " " + st.Running.Render("⟳ reading…")
	case r.err != nil:
		head += " " + st.Error.Render("✗")
	case r.result != nil:
		head += " " + st.OK.Render("✓ "+common.Plural(len(r.result.Contents), "content"))
	}
	out = append(out, common.Truncate(head, w))
	if len(r.saved) > 0 {
		names := make([]string, len(r.saved))
		for i, s := range r.saved {
			names[i] = filepath.Base(s)
		}
		out = append(out, common.Truncate(st.OK.Render("saved in "+common.Line(filepath.Dir(r.saved[0]))+": ")+strings.Join(names, ", "), w))
	}
	if r.saveE != nil {
		out = append(out, common.Truncate(st.Error.Render("save: ")+common.Line(r.saveE.Error()), w))
	}
	if r.err != nil {
		out = append(out, common.Wrap(st.Error.Render("✗ ")+common.Line(r.err.Error()), w)...)
	}
	body := max(1, h-len(out))
	r.offset = max(0, min(r.offset, len(r.lines)-body))
	end := min(len(r.lines), r.offset+body)
	out = append(out, r.lines[r.offset:end]...)
	return out
}
