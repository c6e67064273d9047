package roots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/mcp"
	"github.com/mcpi-dev/mcpi/internal/safetext"
)

func TestParse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, "code"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(dir))
	enc := "file://" + strings.ReplaceAll(filepath.ToSlash(dir), " ", "%20")
	for _, tc := range []struct{ entry, uri, name string }{
		{dir, enc, "my project"},
		{"my project", enc, "my project"},
		{"./my project/", enc, "my project"},
		{"  " + dir + "  ", enc, "my project"},
		{enc, enc, "my project"},
		{"FILE://localhost" + strings.TrimPrefix(enc, "file://"), enc, "my project"},
		{"~/code", "file://" + filepath.ToSlash(home) + "/code", "code"},
		{"~", "file://" + filepath.ToSlash(home), filepath.Base(home)},
		{"/", "file:///", ""},
	} {
		r, err := Parse(tc.entry)
		if err != nil || r.URI != tc.uri || r.Name != tc.name {
			t.Errorf("Parse(%q) = %+v, %v; want %s (%s)", tc.entry, r, err, tc.uri, tc.name)
		}
	}
	for _, tc := range []struct{ entry, want string }{
		{"", "an empty root"},
		{"not a uri at all::", `root "not a uri at all::": "` + filepath.Join(filepath.Dir(dir), "not a uri at all::") + `" does not exist`},
		{"/no/such/dir", `root "/no/such/dir": "/no/such/dir" does not exist`},
		{"file:///no/such/dir", `root "file:///no/such/dir": "/no/such/dir" does not exist`},
		{"file:///no%20such", `"/no such" does not exist`},
		{"https://example.com/repo", `root "https://example.com/repo": roots are paths or file:// URIs, not https URIs`},
		{"mailto:x@example.com", `roots are paths or file:// URIs, not mailto URIs`},
		{"file://server/share", `a file URI names a local path (file:///path), not one on host "server"`},
		{"file:relative/path", "a file URI needs an absolute path"},
		{"file:///tmp?x=1", "no user, query or fragment"},
		{"file://%zz/x", `root "file://%zz/x" is not a valid file URI`},
		{"/tmp/\x1b[2Jevil", `root "/tmp/\e[2Jevil"`},
	} {
		_, err := Parse(tc.entry)
		if err == nil {
			t.Errorf("Parse(%q) accepted", tc.entry)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v\nwant it to say %s", tc.entry, err, tc.want)
		}
		if !safetext.Clean(err.Error()) {
			t.Errorf("Parse(%q): unsanitised message %q", tc.entry, err)
		}
	}
}

// Change sets, adds and removes roots by URI or by the path that names
// one; adding one twice, or removing one that is not there, is refused.
func TestChange(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ra, err := ParseIn(a, "")
	if err != nil {
		t.Fatal(err)
	}
	set, err := Change("set", []mcp.Root{{URI: "file:///old"}}, []string{a, b, a}, "")
	if err != nil || len(set) != 2 || set[0].URI != ra.URI {
		t.Fatalf("set: %+v, %v", set, err)
	}
	if _, err := Change("add", set, []string{a}, ""); err == nil {
		t.Error("a root added twice")
	}
	left, err := Change("remove", set, []string{a, set[1].URI}, "")
	if err != nil || len(left) != 0 || len(set) != 2 {
		t.Fatalf("remove: %+v, %v (set now %+v)", left, err, set)
	}
	if _, err := Change("remove", set, []string{"file:///nowhere\x1b[2J"}, ""); err == nil || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("removing what is not there: %v", err)
	}
}
