package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testQuiet = 50 * time.Millisecond

// next waits for a change that names want (a path's base name), skipping
// others.
func next(t *testing.T, w *Watcher, want string) Change {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case c, ok := <-w.C:
			if !ok {
				t.Fatalf("the watcher closed, waiting for %s", want)
			}
			for _, p := range c.Paths {
				if filepath.Base(p) == want {
					return c
				}
			}
		case <-deadline:
			t.Fatalf("no change naming %s", want)
		}
	}
}

// quiet checks that no change arrives for a while.
func quiet(t *testing.T, w *Watcher) {
	t.Helper()
	select {
	case c := <-w.C:
		t.Errorf("unexpected change %+v", c)
	case <-time.After(6 * testQuiet):
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWatchTree(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, ".git", "objects"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "node_modules", "x"), 0o755))
	// A symbolic-link loop, and a link to the tree's root: neither is
	// followed.
	must(os.Symlink("..", filepath.Join(dir, "src", "pkg", "up")))
	must(os.Symlink(dir, filepath.Join(dir, "src", "root")))
	write(t, filepath.Join(dir, "src", "pkg", "tools.json"), "[]")

	var mu sync.Mutex
	var warnings []string
	w, err := New([]string{dir}, Options{Quiet: testQuiet, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if n := len(w.dirs); n != 3 {
		t.Errorf("%d directories watched (%v), want 3: the root, src, src/pkg", n, w.dirs)
	}

	write(t, filepath.Join(dir, "src", "pkg", "tools.json"), `[{"name":"a"}]`)
	next(t, w, "tools.json")

	// Skipped trees say nothing.
	write(t, filepath.Join(dir, ".git", "objects", "ab"), "x")
	write(t, filepath.Join(dir, "node_modules", "x", "index.js"), "x")
	quiet(t, w)

	// Deleted, then created again: both seen.
	must(os.Remove(filepath.Join(dir, "src", "pkg", "tools.json")))
	next(t, w, "tools.json")
	write(t, filepath.Join(dir, "src", "pkg", "tools.json"), "[]")
	next(t, w, "tools.json")

	// A new directory is watched as it appears.
	must(os.Mkdir(filepath.Join(dir, "src", "new"), 0o755))
	next(t, w, "new")
	write(t, filepath.Join(dir, "src", "new", "server.py"), "print()")
	next(t, w, "server.py")

	mu.Lock()
	defer mu.Unlock()
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
}

func TestWatchFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "tools.json")
	write(t, f, "[]")
	w, err := New([]string{f}, Options{Quiet: testQuiet})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Another file of the directory is not watched.
	write(t, filepath.Join(dir, "other"), "x")
	quiet(t, w)
	// An editor's save: written elsewhere, renamed over the file.
	tmp := filepath.Join(dir, ".tools.json.swp")
	write(t, tmp, `[{"name":"b"}]`)
	if err := os.Rename(tmp, f); err != nil {
		t.Fatal(err)
	}
	c := next(t, w, "tools.json")
	if slices.Contains(c.Paths, tmp) {
		t.Errorf("the change names the editor's file: %v", c.Paths)
	}
	// Deleted and created again.
	if err := os.Remove(f); err != nil {
		t.Fatal(err)
	}
	write(t, f, "[]")
	next(t, w, "tools.json")
}

func TestWatchBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		if err := os.Mkdir(filepath.Join(dir, fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err := New([]string{dir}, Options{MaxDirs: 5})
	if err == nil || !strings.Contains(err.Error(), "more than 5 directories") {
		t.Fatalf("err = %v, want the bound named", err)
	}
	if _, err := New([]string{filepath.Join(dir, "missing")}, Options{}); err == nil {
		t.Error("a missing path was watched")
	}
}

func TestWatchCloseEndsC(t *testing.T) {
	w, err := New([]string{t.TempDir()}, Options{Quiet: testQuiet})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	w.Close()
	select {
	case _, ok := <-w.C:
		if ok {
			t.Error("a change after Close")
		}
	case <-time.After(5 * time.Second):
		t.Error("C not closed")
	}
}
