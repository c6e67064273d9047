package save

import (
	"os"
	"path/filepath"
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
