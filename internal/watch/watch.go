package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// MaxDirs is the default bound on the directories one Watcher watches.
const MaxDirs = 4096

// skipped are the directories a tree's walk leaves out.
var skipped = map[string]bool{".git": true, "node_modules": true}

// Options configure a Watcher.
type Options struct {
	// Quiet is the debounce's quiet period (0: Quiet).
	Quiet time.Duration
	// MaxDirs bounds the directories watched (0: MaxDirs).
	MaxDirs int
	// Warn hears of what could not be watched (a directory past MaxDirs,
	// an error of the kernel's queue). It is called from the Watcher's
	// goroutine and must not block.
	Warn func(string)
}

// Watcher watches paths and reports their changes, debounced, on C.
type Watcher struct {
	// C carries each Change; it is closed when the Watcher is.
	C <-chan Change

	fw     *fsnotify.Watcher
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	roots  []string        // directories watched recursively
	files  map[string]bool // files watched through their directory
	dirs   map[string]bool // every directory watched
}

// New watches paths (files or directories; a directory with its tree).
// A path that does not exist, or a tree of more than MaxDirs directories,
// is an error.
func New(paths []string, opts Options) (*Watcher, error) {
	if opts.MaxDirs <= 0 {
		opts.MaxDirs = MaxDirs
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if len(paths) == 0 {
		return nil, errors.New("nothing to watch")
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{fw: fw, opts: opts, files: map[string]bool{}, dirs: map[string]bool{}, done: make(chan struct{})}
	for _, p := range paths {
		if err := w.add(p); err != nil {
			fw.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	in := make(chan string, 1)
	out := make(chan Change, 1)
	w.C = out
	go func() {
		defer close(out)
		Debounce(ctx, in, out, opts.Quiet)
	}()
	go w.loop(ctx, in)
	return w, nil
}

// add watches one path given by the user.
func (w *Watcher) add(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("watch %s: %w", p, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	if !st.IsDir() {
		dir := filepath.Dir(abs)
		w.files[abs] = true
		if !w.dirs[dir] {
			if err := w.fw.Add(dir); err != nil {
				return fmt.Errorf("watch %s: %w", dir, err)
			}
			w.dirs[dir] = true
		}
		return nil
	}
	w.roots = append(w.roots, abs)
	return w.walk(abs)
}

// errTooMany ends a walk past MaxDirs.
var errTooMany = errors.New("too many directories")

// walk watches dir and the directories under it, links not followed.
func (w *Watcher) walk(dir string) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			w.opts.Warn(fmt.Sprintf("watch: %v", err))
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && skipped[d.Name()] {
			return filepath.SkipDir
		}
		if w.dirs[path] {
			return nil
		}
		if len(w.dirs) >= w.opts.MaxDirs {
			return errTooMany
		}
		if err := w.fw.Add(path); err != nil {
			w.opts.Warn(fmt.Sprintf("watch %s: %v", path, err))
			return nil
		}
		w.dirs[path] = true
		return nil
	})
	if errors.Is(err, errTooMany) {
		return fmt.Errorf("watch %s: more than %d directories; give a narrower path", dir, w.opts.MaxDirs)
	}
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

// inTree reports whether path is in a tree watched recursively.
func (w *Watcher) inTree(path string) bool {
	for _, r := range w.roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// loop takes fsnotify's events, keeps the ones watched and adds new
// directories, until ctx ends.
func (w *Watcher) loop(ctx context.Context, in chan<- string) {
	defer close(w.done)
	defer close(in)
	for {
		select {
		case <-ctx.Done():
			return
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.opts.Warn(fmt.Sprintf("watch: %v", err))
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			path := filepath.Clean(ev.Name)
			if !w.files[path] && !w.inTree(path) {
				continue
			}
			if ev.Has(fsnotify.Create) && w.inTree(path) {
				// A new directory (not a link to one) is watched with its
				// tree; past MaxDirs, said once per walk.
				if st, err := os.Lstat(path); err == nil && st.IsDir() {
					if err := w.walk(path); err != nil {
						w.opts.Warn(err.Error())
					}
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(w.dirs, path) // fsnotify drops its watch itself
			}
			select {
			case in <- path:
			case <-ctx.Done():
				return
			}
		}
	}
}

// Close stops watching; C is closed once what it holds is dropped.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		w.cancel()
		err = w.fw.Close()
		<-w.done
	})
	return err
}
