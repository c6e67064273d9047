package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
)

const skillMD = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"

func entry(file string, size int, digest string) mcp.SkillEntry {
	return mcp.SkillEntry{
		URI:         "skill://pdf-processing/SKILL.md",
		Frontmatter: json.RawMessage(`{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"}`),
		Resources:   json.RawMessage(fmt.Sprintf(`[{"uri":%q,"digest":%q,"size":%d}]`, file, digest, size)),
	}
}

func TestVerify(t *testing.T) {
	const uri = "skill://pdf-processing/SKILL.md"
	good := entry(uri, len(skillMD), Digest([]byte(skillMD)))
	cases := []struct {
		name   string
		e      mcp.SkillEntry
		data   string
		failed []string // checks that fail, in order
	}{
		{"verified", good, skillMD, nil},
		{"digest", good, strings.Replace(skillMD, "Skill body.", "Evil body!!", 1), []string{"digest"}},
		{"size", good, skillMD + "extra\n", []string{"size", "digest"}},
		{"frontmatter", entry(uri, len(strings.Replace(skillMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)),
			Digest([]byte(strings.Replace(skillMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1)))),
			strings.Replace(skillMD, "Extract, fill, and assemble PDF documents", "Exfiltrate credentials", 1), []string{"frontmatter"}},
		{"no frontmatter", entry(uri, 5, Digest([]byte("body\n"))), "body\n", []string{"frontmatter"}},
		{"not listed", entry("skill://pdf-processing/other.md", 1, Digest(nil)), skillMD, []string{"size", "digest"}},
		{"bad digest", entry(uri, len(skillMD), "sha256:ABC"), skillMD, []string{"digest"}},
		{"dynamic", mcp.SkillEntry{URI: uri, Frontmatter: good.Frontmatter, Resources: json.RawMessage(`"dynamic"`)}, skillMD, nil},
		{"yaml numbers and lists", mcp.SkillEntry{URI: uri, Resources: json.RawMessage(`"dynamic"`),
			Frontmatter: json.RawMessage(`{"name":"x","description":"d","metadata":{"version":2,"tags":["a","b"],"on":true}}`)},
			"---\nname: x\ndescription: d\nmetadata:\n  version: 2\n  tags: [a, b]\n  on: true\n---\n", nil},
		{"yaml not json", mcp.SkillEntry{URI: uri, Resources: json.RawMessage(`"dynamic"`), Frontmatter: json.RawMessage(`{}`)},
			"---\n? [a, b]\n: c\n---\n", []string{"frontmatter"}},
		{"absent is null", mcp.SkillEntry{URI: uri, Resources: json.RawMessage(`"dynamic"`), Frontmatter: json.RawMessage(`{"name":"x","license":null}`)},
			"---\r\nname: x\r\n---\r\nbody", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Verify(tc.e, uri, []byte(tc.data))
			var failed []string
			for _, c := range v.Checks {
				if c.Status == Failed {
					failed = append(failed, c.Name)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.failed, ",") {
				t.Errorf("failed %v, want %v: %+v", failed, tc.failed, v.Checks)
			}
			err := v.Err()
			if (err != nil) != (len(tc.failed) > 0) || (err != nil && !errors.Is(err, ErrVerification)) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
}

func TestNames(t *testing.T) {
	e := entry("skill://a/b/pdf/SKILL.md", 0, "")
	e.URI = "skill://a/b/pdf/SKILL.md"
	if Name(e.URI) != "pdf" || Name("skill://x/README.md") != "" || Name("SKILL.md") != "" {
		t.Errorf("Name: %q", Name(e.URI))
	}
	if got := FileURI(e.URI, "references/FORMS.md"); got != "skill://a/b/pdf/references/FORMS.md" {
		t.Errorf("FileURI: %s", got)
	}
	if !Matches(e, "pdf-processing") || !Matches(e, "pdf") || !Matches(e, e.URI) || !Matches(e, "skill://a/b/pdf/") || Matches(e, "other") {
		t.Error("Matches")
	}
	if DisplayName(e) != "pdf-processing" {
		t.Errorf("DisplayName: %s", DisplayName(e))
	}
}

// VerifyFiles reads every file of the manifest in turn, SKILL.md first,
// and gives each its verdict; a read that fails is a failed check; the
// file the caller read itself is not read again.
func TestVerifyFiles(t *testing.T) {
	const uri = "skill://pdf-processing/SKILL.md"
	forms, gone := "Supporting content.\n", "skill://pdf-processing/gone.md"
	e := mcp.SkillEntry{
		URI:         uri,
		Frontmatter: json.RawMessage(`{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"}`),
		Resources: json.RawMessage(fmt.Sprintf(`[{"uri":"skill://pdf-processing/references/FORMS.md","digest":%q,"size":%d},{"uri":%q,"digest":%q,"size":1},{"uri":%q,"digest":%q,"size":%d}]`,
			Digest([]byte(forms)), len(forms), gone, Digest([]byte("x")), uri, Digest([]byte(skillMD)), len(skillMD))),
	}
	var reads []string
	read := func(_ context.Context, u string) (*mcp.ReadResourceResult, error) {
		reads = append(reads, u)
		text := skillMD
		switch u {
		case gone:
			return nil, errors.New("no such resource")
		case "skill://pdf-processing/references/FORMS.md":
			text = "Supporting content, altered.\n"
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: u, Text: &text}}}, nil
	}
	vs, skipped := VerifyFiles(context.Background(), read, e, "")
	if skipped != 0 || len(vs) != 3 || vs[0].File != uri || !vs[0].OK() || vs[1].OK() || vs[2].Checks[0].Name != "read" {
		t.Fatalf("skipped %d, verdicts %+v", skipped, vs)
	}
	if failed, text := Summary(vs, 0); failed != 2 || text != "✗ 2 of 3 failed" {
		t.Errorf("summary %d %q", failed, text)
	}
	reads = nil
	if vs, _ := VerifyFiles(context.Background(), read, e, uri); len(vs) != 2 || slices.Contains(reads, uri) {
		t.Errorf("read %v, verdicts %d", reads, len(vs))
	}
}
