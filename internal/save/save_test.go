package save

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExtension(t *testing.T) {
	for mt, want := range map[string]string{
		"application/octet-stream":  ".bin",
		"image/png":                 ".png",
		"image/jpeg":                ".jpg",
		"audio/wav":                 ".wav",
		"audio/mpeg":                ".mp3",
		"text/plain; charset=utf-8": ".txt",
		"application/x-nothing":     ".bin",
		"":                          ".bin",
	} {
		if got := Extension(mt); got != want {
			t.Errorf("Extension(%q) = %q, want %q", mt, got, want)
		}
	}
}

func TestNewNeverWritesOver(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	a, err := New(dir, "x", ".bin", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(dir, "x", ".bin", []byte("2"))
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Base(b) != "x-2.bin" {
		t.Errorf("paths %s and %s", a, b)
	}
	if d, _ := os.ReadFile(a); string(d) != "1" {
		t.Errorf("the first file was written over: %q", d)
	}
}

func TestName(t *testing.T) {
	if got := Name("../../etc/passwd\x1b[2J"); got != "_.._etc_passwd__2J" {
		t.Errorf("Name = %q", got)
	}
}

// TestReplace: the new content all at once, the mode kept, a symbolic
// link followed (the link stays a link), a missing directory made.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := Replace(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the linked file holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v", err)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "a", "b", "c.xml")
	if err := Replace(fresh, []byte("x")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("a temporary file is left: %s", e.Name())
		}
	}
}
