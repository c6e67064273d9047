package cli

import (
	"path/filepath"
	"reflect"
	"testing"
)

// ConnOptions are input: flags and what the factory gives. What a run
// makes (the trace, the roots, the sampler, the answers) belongs to the
// connRun that with makes and closes, so no field of the options is a
// run's state copied along with them.
func TestConnOptionsAreInput(t *testing.T) {
	typ := reflect.TypeFor[ConnOptions]()
	for i := range typ.NumField() {
		if f := typ.Field(i); !f.IsExported() {
			t.Errorf("ConnOptions.%s is a run's state: it belongs to connRun", f.Name)
		}
	}
}

// Each run of the same options has its own trace: a run closed leaves
// nothing for the next, and the options are as the flags left them.
func TestRunsOfOneOptionsAreApart(t *testing.T) {
	ios, _, _, _ := Test()
	dir := t.TempDir()
	o := &ConnOptions{IO: ios, Record: filepath.Join(dir, "t.jsonl"), Roots: []string{dir}}
	want := *o
	first, second := o.newRun(), o.newRun()
	for _, r := range []*connRun{first, second} {
		if err := r.prepare(); err != nil {
			t.Fatal(err)
		}
		if err := r.startTrace(); err != nil {
			t.Fatal(err)
		}
	}
	if first.trace.recorder == second.trace.recorder || len(first.roots) != 1 || len(second.roots) != 1 {
		t.Errorf("the runs share what they made: %p %p, roots %v %v", first.trace.recorder, second.trace.recorder, first.roots, second.roots)
	}
	for _, r := range []*connRun{first, second, first} {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("the runs changed the options:\n%+v\nwant\n%+v", *o, want)
	}
}
