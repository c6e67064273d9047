// Package skills verifies what a server serves under the skills extension
// (SEP-2640) against what it listed: a file's size and SHA-256 digest
// against its manifest line, and a SKILL.md's YAML frontmatter against the
// entry's frontmatter, field by field. A skill whose files fail is not to
// be used; the front ends show why instead of the content.
//
// It imports internal/mcp and nothing else of mcpi: no session, no
// terminal. Reading the files is the caller's business, so that nothing is
// fetched that the user did not ask for.
package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/mcpi-dev/mcpi/internal/bounds"
	"github.com/mcpi-dev/mcpi/internal/mcp"
)

// Name returns the skill name a SKILL.md URI gives, its segment before
// /SKILL.md, or "" when uri is not a skill's.
func Name(uri string) string {
	root, ok := strings.CutSuffix(uri, "/"+mcp.SkillFile)
	if !ok || !strings.Contains(root, "://") {
		return ""
	}
	return root[strings.LastIndex(root, "/")+1:]
}

// Root returns the directory of a skill, its URI without /SKILL.md.
func Root(uri string) string {
	return strings.TrimSuffix(uri, "/"+mcp.SkillFile)
}

// FileURI resolves the file ref of the skill at uri: a URI stays as it is,
// a path is taken relative to the skill's directory.
func FileURI(uri, ref string) string {
	if strings.Contains(ref, "://") {
		return ref
	}
	return Root(uri) + "/" + strings.TrimPrefix(ref, "/")
}

// Frontmatter decodes an entry's frontmatter (nil when it is not an object).
func Frontmatter(e mcp.SkillEntry) map[string]any {
	var fm map[string]any
	if json.Unmarshal(e.Frontmatter, &fm) != nil {
		return nil
	}
	return fm
}

// DisplayName is the skill's frontmatter name, else the name its URI gives,
// else its URI.
func DisplayName(e mcp.SkillEntry) string {
	if n, _ := Frontmatter(e)["name"].(string); strings.TrimSpace(n) != "" {
		return n
	}
	if n := Name(e.URI); n != "" {
		return n
	}
	return e.URI
}

// Description is the skill's frontmatter description.
func Description(e mcp.SkillEntry) string {
	d, _ := Frontmatter(e)["description"].(string)
	return d
}

// Matches reports whether the user's word names the skill e: its URI, its
// frontmatter name or the name its URI gives.
func Matches(e mcp.SkillEntry, word string) bool {
	if strings.Contains(word, "://") {
		return e.URI == word || Root(e.URI) == strings.TrimSuffix(word, "/")
	}
	n, _ := Frontmatter(e)["name"].(string)
	return n == word || Name(e.URI) == word
}

// Manifest returns the files an entry lists, or dynamic when its resources
// are "dynamic" (generated: nothing to verify against).
func Manifest(e mcp.SkillEntry) (files []mcp.SkillResource, dynamic bool, err error) {
	raw := bytes.TrimSpace(e.Resources)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, errors.New("the entry has no resources")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == mcp.DynamicSkillResources {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("resources is %q, neither a list nor %q", s, mcp.DynamicSkillResources)
	}
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, false, fmt.Errorf("resources is not a list of files: %v", err)
	}
	return files, false, nil
}

// Check is one verification of a file.
type Check struct {
	// Name is size, digest or frontmatter.
	Name   string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Status is a check's outcome.
type Status string

const (
	// Passed: what was served is what was listed.
	Passed Status = "passed"
	// Failed: it is not; the file must not be used.
	Failed Status = "failed"
	// Unchecked: the listing gives nothing to check against (a dynamic
	// skill has no digests); the file is used, and the user told.
	Unchecked Status = "unchecked"
)

// Verification is what was checked of one file of a skill.
type Verification struct {
	// Skill is the URI of the skill's SKILL.md, File the URI of the file.
	Skill  string  `json:"skill"`
	File   string  `json:"uri"`
	Size   int     `json:"size"`
	Digest string  `json:"digest"`
	Checks []Check `json:"checks"`
}

// OK reports whether no check failed.
func (v *Verification) OK() bool {
	for _, c := range v.Checks {
		if c.Status == Failed {
			return false
		}
	}
	return true
}

// Err is nil when no check failed, else an *Error naming each failure.
func (v *Verification) Err() error {
	if v.OK() {
		return nil
	}
	e := &Error{File: v.File}
	for _, c := range v.Checks {
		if c.Status == Failed {
			e.Failed = append(e.Failed, c)
		}
	}
	return e
}

// ErrVerification is what errors.Is finds in an *Error.
var ErrVerification = errors.New("skill verification failed")

// Error says a skill's file is not what the server listed.
type Error struct {
	File   string
	Failed []Check
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Failed))
	for i, c := range e.Failed {
		parts[i] = c.Name + ": " + c.Detail
	}
	return fmt.Sprintf("%s failed verification, not used: %s", e.File, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrVerification) true.
func (e *Error) Is(target error) bool { return target == ErrVerification }

var digestPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

// Digest is the digest the extension gives data: "sha256:" and 64
// lowercase hex digits.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Verify checks data, the bytes served for file, a file of the skill e: its
// size and digest against the manifest, and, when file is the skill's
// SKILL.md, its frontmatter against the entry's.
func Verify(e mcp.SkillEntry, file string, data []byte) *Verification {
	v := &Verification{Skill: e.URI, File: file, Size: len(data), Digest: Digest(data)}
	add := func(name string, st Status, format string, args ...any) {
		v.Checks = append(v.Checks, Check{Name: name, Status: st, Detail: fmt.Sprintf(format, args...)})
	}
	files, dynamic, err := Manifest(e)
	switch {
	case err != nil:
		add("size", Failed, "%v", err)
		add("digest", Failed, "%v", err)
	case dynamic:
		add("size", Unchecked, `resources is "dynamic": no size listed`)
		add("digest", Unchecked, `resources is "dynamic": no digest listed`)
	default:
		var line *mcp.SkillResource
		for i := range files {
			if sameURI(files[i].URI, file) {
				line = &files[i]
				break
			}
		}
		if line == nil {
			add("size", Failed, "the skill's resources do not list %s", file)
			add("digest", Failed, "the skill's resources do not list %s", file)
			break
		}
		switch {
		case line.Size == nil:
			add("size", Failed, "the listing gives no size")
		case *line.Size != int64(len(data)):
			add("size", Failed, "%d bytes served, %d listed", len(data), *line.Size)
		default:
			add("size", Passed, "%d bytes", len(data))
		}
		switch {
		case line.Digest == "":
			add("digest", Failed, "the listing gives no digest")
		case !digestPattern().MatchString(line.Digest):
			add("digest", Failed, "the listed digest %q is not sha256: and 64 lowercase hex digits", bounds.Clip(line.Digest))
		case line.Digest != v.Digest:
			add("digest", Failed, "served %s, listed %s", v.Digest, line.Digest)
		default:
			add("digest", Passed, "%s", v.Digest)
		}
	}
	if sameURI(file, e.URI) {
		if diffs, err := CompareFrontmatter(data, e.Frontmatter); err != nil {
			add("frontmatter", Failed, "%v", err)
		} else if len(diffs) > 0 {
			add("frontmatter", Failed, "%s", bounds.Clip(strings.Join(diffs, "; ")))
		} else {
			add("frontmatter", Passed, "the file's frontmatter is the listing's")
		}
	}
	return v
}

// sameURI compares two URIs, tolerating a difference in percent-encoding
// of unreserved characters.
func sameURI(a, b string) bool {
	if a == b {
		return true
	}
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.String() == ub.String()
}

// SplitFrontmatter returns the YAML between a file's leading "---" lines and
// the body after them; ok is false when the file has no such block.
func SplitFrontmatter(text string) (front, body string, ok bool) {
	text = strings.TrimPrefix(text, "\ufeff")
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimRight(first, " \t\r") != "---" {
		return "", text, false
	}
	var fm []string
	for {
		var line string
		line, rest, found = strings.Cut(rest, "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			return strings.Join(fm, "\n"), rest, true
		}
		if !found {
			return "", text, false
		}
		fm = append(fm, strings.TrimSuffix(line, "\r"))
	}
}

// ParseFrontmatter decodes a frontmatter block into JSON values (strings,
// float64 numbers, booleans, nil, []any, map[string]any), so that it
// compares with what JSON decoding gives.
func ParseFrontmatter(front string) (map[string]any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(front), &v); err != nil {
		return nil, fmt.Errorf("the file's frontmatter is not YAML: %v", err)
	}
	if v == nil {
		return map[string]any{}, nil
	}
	// Through JSON: YAML's integers become float64 as JSON's do, and a
	// mapping with keys JSON cannot have is refused.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the file's frontmatter has no JSON equivalent: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errors.New("the file's frontmatter is not a mapping of fields")
	}
	return m, nil
}

// CompareFrontmatter compares the frontmatter of a SKILL.md with the
// entry's, field by field (an absent field equals null). It returns one
// line per field that differs.
func CompareFrontmatter(skillMD []byte, entry json.RawMessage) ([]string, error) {
	front, _, ok := SplitFrontmatter(string(skillMD))
	if !ok {
		return nil, errors.New("the file has no frontmatter (--- lines at its start)")
	}
	file, err := ParseFrontmatter(front)
	if err != nil {
		return nil, err
	}
	var listed map[string]any
	if err := json.Unmarshal(entry, &listed); err != nil || listed == nil {
		return nil, errors.New("the listing's frontmatter is not an object")
	}
	keys := map[string]bool{}
	for k := range file {
		keys[k] = true
	}
	for k := range listed {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if !reflect.DeepEqual(file[k], listed[k]) {
			diffs = append(diffs, fmt.Sprintf("%s: file %s, listing %s", k, show(file[k]), show(listed[k])))
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// show is a value as JSON, cut to a readable length.
func show(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
