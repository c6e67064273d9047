// Package deps holds no code: its test keeps the import rules of
// docs/architecture.md, and that every package is in its table.
package deps
