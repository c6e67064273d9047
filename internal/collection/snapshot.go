package collection

import (
	"fmt"
	"strings"

	"github.com/mcpi-dev/mcpi/internal/safetext"
)

// SnapshotFailed says a step failed its snapshot.
func SnapshotFailed(fs []Failure) bool {
	for _, f := range fs {
		if f.Path == "snapshot" {
			return true
		}
	}
	return false
}

// SnapshotDiff shows the lines that went (-) and came (+), at most 20.
func SnapshotDiff(old *string, now string) []string {
	var before []string
	if old != nil {
		before = strings.Split(*old, "\n")
	}
	after := strings.Split(now, "\n")
	common := 0
	for common < len(before) && common < len(after) && before[common] == after[common] {
		common++
	}
	var out []string
	for _, l := range before[common:] {
		out = append(out, "- "+safetext.OneLine(l))
	}
	for _, l := range after[common:] {
		out = append(out, "+ "+safetext.OneLine(l))
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… %d more line(s)", len(out)-20))
	}
	return out
}
