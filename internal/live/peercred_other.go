//go:build !linux && !darwin

package live

import "errors"

// peerUID is not implemented here: without it no connection is accepted.
func peerUID(uintptr) (int, error) {
	return -1, errors.New("peer credentials are not supported on this system")
}
