package command

import (
	"path/filepath"
	"reflect"
	"testing"
)

// ConnOptions are input: flags and what the factory gives. What a run
// makes (the trace, the roots, the sampler, the answers) belongs to the
// ConnRun that with makes and closes, so no field of the options is a
// run's state copied along with them.
func TestConnOptionsAreInput(t *testing.T) {
	typ := reflect.TypeFor[ConnOptions]()
	for i := range typ.NumField() {
		if f := typ.Field(i); !f.IsExported() {
			t.Errorf("ConnOptions.%s is a run's state: it belongs to ConnRun", f.Name)
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
	first, second := o.NewRun(), o.NewRun()
	for _, r := range []*ConnRun{first, second} {
		if err := r.Prepare(); err != nil {
			t.Fatal(err)
		}
		if err := r.StartTrace(); err != nil {
			t.Fatal(err)
		}
	}
	if first.Trace.Recorder == second.Trace.Recorder || len(first.MadeRoots) != 1 || len(second.MadeRoots) != 1 {
		t.Errorf("the runs share what they made: %p %p, roots %v %v", first.Trace.Recorder, second.Trace.Recorder, first.MadeRoots, second.MadeRoots)
	}
	for _, r := range []*ConnRun{first, second, first} {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("the runs changed the options:\n%+v\nwant\n%+v", *o, want)
	}
}
