package collection

import (
	"fmt"
	"io"

	"github.com/mcpi-dev/mcpi/internal/record"
	"github.com/mcpi-dev/mcpi/internal/safetext"
	"github.com/mcpi-dev/mcpi/internal/save"
)

// ReadWithData reads and parses the collection at path, and returns its
// text too (for UpdateSnapshots); a parse error does not name the file.
func ReadWithData(path string) ([]byte, *File, error) {
	data, err := ReadData(path)
	if err != nil {
		return nil, nil, err
	}
	file, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	return data, file, nil
}

// UpdateSnapshots writes the snapshots of steps that changed into the
// file at path (in place, atomically: data is its text, file what was
// parsed of it) and says on w what changed; it marks those steps passed
// when the snapshot was their only failure, and returns how many it
// wrote. A text that holds a secret red knows is not written: the step
// fails saying so. What it says crosses red.
func UpdateSnapshots(w io.Writer, path string, data []byte, file *File, steps []StepReport, red *record.Redactor) (int, error) {
	texts := map[int]string{}
	for i := range steps {
		s := &steps[i]
		if s.Text == nil || !SnapshotFailed(s.Failures) {
			continue
		}
		if red.Holds(*s.Text) {
			s.Failures = append(s.Failures, Failure{Path: "snapshot",
				Message: "snapshot: the result's text holds a secret of the environment: not written into the file"})
			continue
		}
		texts[i] = *s.Text
	}
	if len(texts) == 0 {
		return 0, nil
	}
	out, err := Update(data, file, texts)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file.Path, err)
	}
	if err := save.Replace(path, out); err != nil {
		return 0, fmt.Errorf("%s: %w", file.Path, err)
	}
	for i := range texts {
		s := &steps[i]
		old := file.Steps[i].Expect.Snapshot
		fmt.Fprintf(w, "%s:%d: snapshot of %s updated\n", red.Clean(file.Path), file.Steps[i].Line, safetext.Sanitize(red.String(s.Name), false))
		for _, l := range SnapshotDiff(old, texts[i]) {
			fmt.Fprintf(w, "    %s\n", red.Clean(l))
		}
		var rest []Failure
		for _, f := range s.Failures {
			if f.Path != "snapshot" {
				rest = append(rest, f)
			}
		}
		s.Failures, s.Updated, s.OK = rest, true, len(rest) == 0
	}
	return len(texts), nil
}
