package iostreams

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/save"
)

// ContentPrinter prints content blocks for a person: text as text, binary
// content summarised (and saved under dir when set).
type ContentPrinter struct {
	Out  io.Writer
	Errw io.Writer
	// Dir is where binary content is saved; none is when it is empty.
	Dir string
	// Saved counts the files saved.
	Saved int
}

// Blocks prints content blocks.
func (p *ContentPrinter) Blocks(blocks []mcp.Content) error {
	for i, c := range blocks {
		if err := p.Block(i, c); err != nil {
			return err
		}
	}
	return nil
}

// Block prints the i-th content block.
func (p *ContentPrinter) Block(i int, c mcp.Content) error {
	switch c.Type {
	case "text":
		text := safetext.Sanitize(c.Text, true)
		fmt.Fprint(p.Out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(p.Out)
		}
	case "image", "audio":
		n := base64.StdEncoding.DecodedLen(len(c.Data))
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err == nil {
			n = len(data)
		}
		line := fmt.Sprintf("[%s %s, %s]", c.Type, safetext.Sanitize(c.MimeType, false), ByteSize(n))
		if err != nil {
			line += " (invalid base64: " + err.Error() + ")"
		}
		fmt.Fprintln(p.Out, line)
		if err == nil {
			return p.save(i, c.Type, c.MimeType, data)
		}
	case "resource_link":
		line := fmt.Sprintf("[resource link] %s", safetext.Sanitize(c.URI, false))
		var details []string
		if c.Name != "" {
			details = append(details, safetext.Sanitize(c.Name, false))
		}
		if c.MimeType != "" {
			details = append(details, safetext.Sanitize(c.MimeType, false))
		}
		if c.Description != "" {
			details = append(details, safetext.OneLine(c.Description))
		}
		if len(details) > 0 {
			line += " (" + strings.Join(details, ", ") + ")"
		}
		fmt.Fprintln(p.Out, line)
	case "resource":
		if c.Resource == nil {
			fmt.Fprintln(p.Out, "[resource] (no contents)")
			return nil
		}
		return p.Resource(i, *c.Resource, "[resource]")
	default:
		b, _ := json.Marshal(c)
		fmt.Fprintf(p.Out, "[%s content] %s\n", safetext.Sanitize(c.Type, false), safetext.Sanitize(string(b), false))
	}
	return nil
}

// Resource prints one resource's contents.
func (p *ContentPrinter) Resource(i int, r mcp.ResourceContents, label string) error {
	head := fmt.Sprintf("%s %s", label, safetext.Sanitize(r.URI, false))
	if r.MimeType != "" {
		head += " (" + safetext.Sanitize(r.MimeType, false) + ")"
	}
	switch {
	case r.Text != nil:
		fmt.Fprintln(p.Out, head)
		text := safetext.Sanitize(*r.Text, true)
		fmt.Fprint(p.Out, text)
		if !strings.HasSuffix(text, "\n") {
			fmt.Fprintln(p.Out)
		}
	case r.Blob != nil:
		data, err := base64.StdEncoding.DecodeString(*r.Blob)
		if err != nil {
			fmt.Fprintf(p.Out, "%s: blob with invalid base64: %v\n", head, err)
			return nil
		}
		fmt.Fprintf(p.Out, "%s: blob, %s\n", head, ByteSize(len(data)))
		return p.save(i, "blob", r.MimeType, data)
	default:
		fmt.Fprintf(p.Out, "%s: neither text nor blob\n", head)
	}
	return nil
}

func (p *ContentPrinter) save(i int, kind, mimeType string, data []byte) error {
	if p.Dir == "" {
		return nil
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	name, err := save.New(p.Dir, fmt.Sprintf("%d-%s", i+1, kind), save.Extension(mimeType), data)
	if err != nil {
		return fmt.Errorf("--save: %w", err)
	}
	p.Saved++
	fmt.Fprintf(p.Errw, "saved %s\n", name)
	return nil
}
