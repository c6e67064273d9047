//go:build !unix

package eras

import (
	"fmt"
	"os"
)

// openFile opens path for reading, refusing a symbolic link (checked
// before the open: there is no O_NOFOLLOW here); readFile then refuses
// anything that is not a regular file.
func openFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link", path)
	}
	return os.Open(path)
}
