package skills

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// ReadFunc reads a resource (resources/read); a session's ReadResource.
type ReadFunc func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)

// Loaded is one file of a skill as the server served it, with what was
// verified of it.
type Loaded struct {
	*Verification
	// MimeType is the contents' type, as served.
	MimeType string
	// Text is set when the server sent text, Data always; both only when
	// the file passed verification: unverified content is not handed on.
	Text *string
	Data []byte
}

// Load reads the file at uri of the skill e (one resources/read, nothing
// else) and verifies it. The error is the read's, or an *Error when the
// file failed verification; the Verification says what was checked either
// way (nil when the read failed).
func Load(ctx context.Context, read ReadFunc, e mcp.SkillEntry, uri string) (*Loaded, error) {
	r, err := read(ctx, uri)
	if err != nil {
		return nil, err
	}
	var rc *mcp.ResourceContents
	for i := range r.Contents {
		if sameURI(r.Contents[i].URI, uri) {
			rc = &r.Contents[i]
			break
		}
	}
	if rc == nil && len(r.Contents) == 1 {
		rc = &r.Contents[0]
	}
	var data []byte
	switch {
	case rc == nil:
		v := &Verification{Skill: e.URI, File: uri, Checks: []Check{{Name: "contents", Status: Failed,
			Detail: fmt.Sprintf("resources/read returned %d contents, none for this URI", len(r.Contents))}}}
		return &Loaded{Verification: v}, v.Err()
	case rc.Text != nil:
		data = []byte(*rc.Text)
	case rc.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*rc.Blob)
		if err != nil {
			v := &Verification{Skill: e.URI, File: uri, Checks: []Check{{Name: "contents", Status: Failed,
				Detail: "the blob is not base64: " + err.Error()}}}
			return &Loaded{Verification: v}, v.Err()
		}
		data = b
	}
	v := Verify(e, uri, data)
	l := &Loaded{Verification: v, MimeType: rc.MimeType}
	if err := v.Err(); err != nil {
		return l, err
	}
	l.Text, l.Data = rc.Text, data
	return l, nil
}

// MaxFiles is the most files of one skill VerifyFiles reads: a manifest
// may list more, and the rest are counted, not read.
const MaxFiles = 512

// VerifyFiles reads every file the manifest of e lists, one at a time and
// in its order, SKILL.md first (listed or not), and verifies each; a file
// that cannot be read has a failed read check. Nothing read is kept but
// the verdicts. except names a file not to read (one the caller read
// itself); skipped counts the files past MaxFiles. A dynamic skill has no
// manifest: only its SKILL.md is read. A read that fails because ctx ended
// ends the walk.
func VerifyFiles(ctx context.Context, read ReadFunc, e mcp.SkillEntry, except string) (vs []*Verification, skipped int) {
	uris := []string{e.URI}
	files, _, _ := Manifest(e)
	for _, f := range files {
		if !sameURI(f.URI, e.URI) {
			uris = append(uris, f.URI)
		}
	}
	if len(uris) > MaxFiles {
		uris, skipped = uris[:MaxFiles], len(uris)-MaxFiles
	}
	for _, u := range uris {
		if except != "" && sameURI(u, except) {
			continue
		}
		if ctx.Err() != nil {
			skipped++
			continue
		}
		l, err := Load(ctx, read, e, u)
		if l == nil {
			detail := "resources/read failed"
			if err != nil {
				detail = bounds.Clip(err.Error())
			}
			vs = append(vs, &Verification{Skill: e.URI, File: u, Checks: []Check{{Name: "read", Status: Failed, Detail: detail}}})
			continue
		}
		vs = append(vs, l.Verification)
	}
	return vs, skipped
}

// Summary says in a few words what the checks of every file verified.
func Summary(vs []*Verification, skipped int) (failed int, text string) {
	for _, v := range vs {
		if !v.OK() {
			failed++
		}
	}
	switch {
	case failed > 0:
		text = fmt.Sprintf("✗ %d of %d failed", failed, len(vs))
	case len(vs) == 1:
		text = "✓ 1 file"
	default:
		text = fmt.Sprintf("✓ %d files", len(vs))
	}
	if skipped > 0 {
		text += fmt.Sprintf(", %d not read", skipped)
	}
	return failed, text
}
