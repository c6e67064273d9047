// Package eras owns mcpi's memory of the era (legacy or modern) each
// server configuration answered with, as the spec allows, so that its next
// command starts in it without the probe: a JSON file in the user's cache
// directory, keyed by a hash of the configuration (never the configuration
// itself), bounded in entries and in what is read of it, opened without
// following a link or waiting on a FIFO. A memory that cannot be read or
// written costs a probe and never fails a command.
//
// It imports nothing of mcpi.
package eras
