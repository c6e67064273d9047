// Package save writes what a server sent (an image, audio, a blob) to a
// file: one table of file extensions, one way of naming a file that is
// never written over, and a name made safe from what the server said.
// The CLI's --save, the Tools pane and the Resources pane all save
// through it.
package save

import (
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
)

// extensions are the extensions of the types a server sends most, chosen
// here rather than by the system's MIME table, whose order varies (it
// gave application/octet-stream .bin on one machine and .exe on another).
var extensions = map[string]string{
	"application/octet-stream": ".bin",
	"application/json":         ".json",
	"application/pdf":          ".pdf",
	"application/zip":          ".zip",
	"application/gzip":         ".gz",
	"text/plain":               ".txt",
	"text/markdown":            ".md",
	"text/html":                ".html",
	"text/csv":                 ".csv",
	"image/png":                ".png",
	"image/jpeg":               ".jpg",
	"image/gif":                ".gif",
	"image/webp":               ".webp",
	"image/svg+xml":            ".svg",
	"audio/wav":                ".wav",
	"audio/x-wav":              ".wav",
	"audio/wave":               ".wav",
	"audio/mpeg":               ".mp3",
	"audio/ogg":                ".ogg",
	"video/mp4":                ".mp4",
}

// Extension returns the file extension for a MIME type: the table's, else
// the system's first (sorted, so that it does not change from run to
// run), else .bin.
func Extension(mimeType string) string {
	t, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		t = strings.ToLower(strings.TrimSpace(mimeType))
	}
	if e, ok := extensions[t]; ok {
		return e
	}
	if exts, _ := mime.ExtensionsByType(t); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// Name makes s safe as part of a file name: letters, digits, '-', '_' and
// '.' stay, anything else (a path separator, a control character) becomes
// '_'; at most 100 bytes.
func Name(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, s)
	s = strings.TrimLeft(s, ".")
	if len(s) > 100 {
		s = s[:100]
	}
	return s
}

// New writes data to dir/base+ext, or base-2+ext and so on when the name
// is taken (no file is written over), creating dir, and returns the path.
func New(dir, base, ext string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for n := 1; n <= 10000; n++ {
		name := base + ext
		if n > 1 {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		p := filepath.Join(dir, name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return p, err
	}
	return "", fmt.Errorf("%s: 10,000 files of that name already", filepath.Join(dir, base+ext))
}

// Replace writes data as the new content of the file at path, all at once
// (a file beside it, renamed over it): a reader sees the old content or
// the new, never half. The file keeps its mode (0644 for a new one); a
// symbolic link is followed, so that the file it names is replaced and
// the link stays. The directory is made when missing.
func Replace(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
